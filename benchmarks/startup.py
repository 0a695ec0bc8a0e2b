"""Where figure 7's one-shot run spends its CPU: start, imports by package, the rest, the exit.

    benchmarks/.envs/openmolt/bin/python benchmarks/startup.py openmolt --port P [--runs 7]
    benchmarks/.envs/agno/bin/python benchmarks/startup.py agno --port P

Run it with the interpreter of the environment ``run.py --only 7`` built (``benchmarks/.envs``),
against ``fake_server.py``. Each run is ``oneshot.py`` in a fresh process, with the import system
timed from inside: the CPU time of each module's own body (``time.thread_time``, its imports'
excluded: module-level work such as class, dataclass and pydantic-model creation counts here), the
cyclic collector's passes (``gc.callbacks``), and the CPU of the process as the kernel counts it
(``wait4``), whose part after the run returned is the interpreter's exit. Prints the medians:

- ``start``: the interpreter until ``oneshot.py`` runs (``site``, ``.pth`` files);
- ``imports``: module bodies, by top-level package (OpenMolt's own, then the largest others);
- ``gc``: the collector during the run (part of the imports' time as well);
- ``run``: the rest of the run (configuration, the requests, the tool call);
- ``exit``: from the run's end to the process's (the collector's last passes, module teardown).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

HOOK = r"""
import time
T0 = time.process_time()
import gc, json, sys
import importlib._bootstrap as bootstrap

own = {}
stack = []
passes = [0.0, 0]
started = [0.0]
load = bootstrap._load_unlocked


def timed(spec):
	begin = time.thread_time()
	stack.append(0.0)
	try:
		return load(spec)
	finally:
		spent = time.thread_time() - begin
		children = stack.pop()
		own[spec.name] = own.get(spec.name, 0.0) + spent - children
		if stack:
			stack[-1] += spent


def collecting(phase, info):
	if phase == "start":
		started[0] = time.process_time()
	else:
		passes[0] += time.process_time() - started[0]
		passes[1] += 1


bootstrap._load_unlocked = timed
gc.callbacks.append(collecting)
sys.argv = ["oneshot.py", *ARGS]
sys.path.insert(0, HERE)
import oneshot

oneshot.main()
end = time.process_time()
gc.callbacks.remove(collecting)
sys.stdout.write("STARTUP " + json.dumps({"start": T0, "end": end, "own": own, "gc": list(passes)}) + "\n")
sys.stdout.flush()
"""
"""The child: oneshot.py's run with its imports and the collector timed; one JSON line at the end."""


def one(framework: str, port: int) -> dict[str, Any]:
	"""One fresh process: its figures in seconds (``total`` from ``wait4``)."""
	code = HOOK.replace("ARGS", repr([framework, "--port", str(port)])).replace(
		"HERE", repr(str(HERE))
	)
	proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
	assert proc.stdout is not None
	out = proc.stdout.read().decode()
	_, status, usage = os.wait4(proc.pid, 0)
	if os.waitstatus_to_exitcode(status) != 0:
		raise SystemExit(f"oneshot.py {framework} failed:\n{out}")
	line = next(x for x in out.splitlines() if x.startswith("STARTUP "))
	data: dict[str, Any] = json.loads(line.removeprefix("STARTUP "))
	data["total"] = usage.ru_utime + usage.ru_stime
	return data


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("framework", choices=["openmolt", "openmolt-responses", "agno"])
	parser.add_argument("--port", type=int, required=True)
	parser.add_argument("--runs", type=int, default=7)
	parser.add_argument("--top", type=int, default=12, help="packages listed besides OpenMolt's")
	args = parser.parse_args()
	runs = [one(args.framework, args.port) for _ in range(args.runs)]

	def ms(values: list[float]) -> float:
		return statistics.median(values) * 1000

	per_run: list[dict[str, float]] = []
	for run in runs:
		totals: dict[str, float] = collections.defaultdict(float)
		for name, seconds in run["own"].items():
			totals[name.split(".")[0]] += seconds
		per_run.append(totals)
	names = {name for totals in per_run for name in totals}
	packages = {name: [totals.get(name, 0.0) for totals in per_run] for name in names}
	imports = [sum(r["own"].values()) for r in runs]
	figures = {
		"process (wait4)": ms([r["total"] for r in runs]),
		"start": ms([r["start"] for r in runs]),
		"imports": ms(imports),
		"gc during the run": ms([r["gc"][0] for r in runs]),
		"run (besides imports)": ms(
			[r["end"] - r["start"] - i for r, i in zip(runs, imports, strict=True)]
		),
		"exit": ms([r["total"] - r["end"] for r in runs]),
	}
	print(f"{args.framework}: CPU ms, medians of {args.runs} fresh processes")
	for name, value in figures.items():
		print(f"  {name:24} {value:7.1f}")
	medians = {name: ms(values) for name, values in packages.items()}
	ours = {n: v for n, v in medians.items() if n.startswith("openmolt")}
	others = sorted((v, n) for n, v in medians.items() if n not in ours)[::-1][: args.top]
	print("  imports by package (module bodies):")
	for name, value in sorted(ours.items(), key=lambda kv: -kv[1]):
		print(f"    {name:22} {value:7.1f}")
	for value, name in others:
		print(f"    {name:22} {value:7.1f}")


if __name__ == "__main__":
	main()
