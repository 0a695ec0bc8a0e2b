"""OpenMolt's performance benchmark: one command, one table.

    uv run python benchmarks/run.py            # full: 5 fresh processes per figure (3 for figure 4)
    uv run python benchmarks/run.py --quick    # fewer repetitions, figure 4 on the default client only
    uv run python benchmarks/run.py --only 3,5 # some figures
    uv run python benchmarks/run.py --only 7   # one-shot cold start against Agno (own envs)
    uv run python benchmarks/run.py --profile  # cProfile of figures 2 and 3, top functions

It starts ``benchmarks/fake_server.py`` in its own process, then runs each measurement of
``benchmarks/client.py`` in fresh processes and prints the median. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENVS = HERE / ".envs"  # figure 7's environments, built from uv.lock (git-ignored)
PROVIDERS = ["openai", "openai-chat", "anthropic", "google"]
TRANSPORTS = ["openmolt", "httpx", "httpx-1000", "sharded", "aiohttp"]


class Server:
	def __init__(self) -> None:
		self.proc = subprocess.Popen(
			[sys.executable, str(HERE / "fake_server.py"), "--port", "0"],
			stdout=subprocess.PIPE,
			text=True,
		)
		line = self.proc.stdout.readline() if self.proc.stdout else ""
		if not line.startswith("listening"):
			raise SystemExit(f"the fake server did not start: {line!r}")
		self.port = int(line.rsplit(":", 1)[1])

	def control(self, path: str, body: dict[str, Any] | None = None) -> Any:
		data = json.dumps(body).encode() if body is not None else None
		url = f"http://127.0.0.1:{self.port}{path}"
		with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as r:
			return json.loads(r.read())

	def reset(self, latency_ms: float = 0.0, record: bool = False) -> None:
		self.control("/_reset", {"latency_ms": latency_ms, "record": record})

	def close(self) -> None:
		self.proc.terminate()
		self.proc.wait(timeout=10)


def worker(figure: str, port: int, *extra: str) -> dict[str, Any]:
	cmd = [sys.executable, str(HERE / "client.py"), figure, "--port", str(port), *extra]
	done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=os.environ.copy())
	lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
	if done.returncode != 0 or not lines:
		raise SystemExit(f"{' '.join(cmd[1:])} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
	return json.loads(lines[-1])


def median(runs: list[dict[str, Any]]) -> dict[str, Any]:
	out: dict[str, Any] = {}
	for key, value in runs[0].items():
		values = [r[key] for r in runs]
		out[key] = statistics.median(values) if isinstance(value, int | float) else values[0]
	return out


def repeat(n: int, figure: str, port: int, *extra: str) -> dict[str, Any]:
	return median([worker(figure, port, *extra) for _ in range(n)])


# figures 1 and 7: fresh processes --------------------------------------------------------------

IMPORT_CODE = """\
import time
t0 = time.perf_counter()
import sys
before = len(sys.modules)
import openmolt
t1 = time.perf_counter()
with open("/proc/self/status") as f:
	hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print('{"import_ms": %f, "modules": %d, "peak_rss_kib": %d}' % ((t1 - t0) * 1000, len(sys.modules) - before, hwm))
"""
"""``import openmolt`` timed in a fresh interpreter: nothing but ``time`` (built in) before it."""

BARE_CODE = """\
with open("/proc/self/status") as f:
	hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print('{"peak_rss_kib": %d}' % hwm)
"""


def spawn(
	cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[str, float, float, float]:
	"""Run a fresh process to its exit: its stdout, start time, wall ms and CPU ms.

	The start is ``time.monotonic()`` just before the spawn (the clock the fake server's
	``first_request_at`` reads); CPU time is user + system, from ``wait4``.
	"""
	t0 = time.monotonic()
	proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
	assert proc.stdout is not None and proc.stderr is not None
	out = proc.stdout.read().decode()
	err = proc.stderr.read().decode()
	_, status, usage = os.wait4(proc.pid, 0)
	proc.returncode = os.waitstatus_to_exitcode(status)
	wall = (time.monotonic() - t0) * 1000
	if proc.returncode != 0:
		raise SystemExit(f"{' '.join(cmd)} failed:\n{out}\n{err[-3000:]}")
	return out, t0, wall, (usage.ru_utime + usage.ru_stime) * 1000


def spawn_cpu(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
	"""Run a fresh process: its JSON line, plus wall and CPU time (user + system, from wait4)."""
	out, _, wall, cpu = spawn(cmd, env)
	lines = [line for line in out.splitlines() if line.startswith("{")]
	data: dict[str, Any] = json.loads(lines[-1]) if lines else {}
	data["process_wall_ms"] = wall
	data["process_cpu_ms"] = cpu
	return data


def build_env(name: str, export: list[str]) -> Path:
	"""A virtual environment from ``uv export`` of the lock, rebuilt when uv.lock changes."""
	env = ENVS / name
	python = env / "bin" / "python"
	stamp = env / "uv.lock.sha256"
	digest = hashlib.sha256((ROOT / "uv.lock").read_bytes()).hexdigest()
	if python.exists() and stamp.exists() and stamp.read_text() == digest:
		return python
	uv = shutil.which("uv")
	if uv is None:
		raise SystemExit("figure 7 needs uv on PATH to build its environments")
	requirements = subprocess.run(
		[uv, "export", "--frozen", "--no-hashes", "--quiet", *export],
		cwd=ROOT,
		check=True,
		capture_output=True,
		text=True,
	).stdout
	shutil.rmtree(env, ignore_errors=True)
	subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], check=True)
	(env / "requirements.txt").write_text(requirements)
	subprocess.run(
		[
			uv,
			"pip",
			"install",
			"--quiet",
			"--python",
			str(python),
			"-r",
			str(env / "requirements.txt"),
		],
		cwd=ROOT,
		check=True,
	)
	clean = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
	subprocess.run(
		[str(python), "-m", "compileall", "-q", "-j", "1", str(env / "lib")],
		env=clean,
		check=False,
		stdout=subprocess.DEVNULL,
	)
	stamp.write_text(digest)
	return python


BENCH_TOOLS = '''def add(a: float, b: float) -> float:
	"""Add two numbers."""
	return a + b
'''
"""The ``--tool`` module of figure 7's command one-shot (``bench_tools:add``): the same tool."""


def command_env(home: Path, port: int) -> dict[str, str]:
	"""The environment of figure 7's ``openmolt`` runs: a home of their own, the fake's URL."""
	env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
	env.update(
		HOME=str(home),
		XDG_DATA_HOME=str(home / "data"),
		XDG_CONFIG_HOME=str(home / "config"),
		XDG_STATE_HOME=str(home / "state"),
		OPENMOLT_OPENAI_API_KEY="sk-bench",
		OPENMOLT_OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
	)
	return env


def one_shot(server: Server, repeats: int) -> dict[str, Any]:
	"""Figure 7: the one-shot run of oneshot.py, OpenMolt against Agno, interleaved, each in its own env.

	Also the same run through the command (``openmolt -m MODEL --tool bench_tools:add "..."``,
	the same tool, one tool call, Chat Completions' or Responses' default: the command's own
	choice), from a home and working directory of its own (an empty run store, no key store).
	"""
	openmolt = build_env("openmolt", ["--no-dev"])  # what `pip install openmolt` installs
	agno = build_env("agno", ["--only-group", "bench", "--no-emit-project"])
	script = str(HERE / "oneshot.py")
	runs: dict[str, list[dict[str, Any]]] = {}
	server.reset(0)
	with tempfile.TemporaryDirectory() as tmp:
		home = Path(tmp)
		(home / "bench_tools.py").write_text(BENCH_TOOLS)
		command = [
			str(openmolt.parent / "openmolt"),
			"-m",
			"openai:gpt-5-mini-steps1",
			"--tool",
			"bench_tools:add",
			"add 0 and 1",
		]
		for _ in range(repeats):
			for name, python, args in (
				("openmolt", openmolt, ["openmolt"]),
				("openmolt-responses", openmolt, ["openmolt-responses"]),
				("agno", agno, ["agno"]),
			):
				runs.setdefault(name, []).append(
					spawn_cpu([str(python), script, *args, "--port", str(server.port)])
				)
			_, _, wall, cpu = spawn(command, command_env(home, server.port), home)
			runs.setdefault("command", []).append({"process_wall_ms": wall, "process_cpu_ms": cpu})
			runs.setdefault("bare", []).append(spawn_cpu([str(openmolt), "-c", BARE_CODE]))
	out = {name: median(values) for name, values in runs.items()}
	out["cli"] = cli_first_request(server, openmolt, repeats)
	for name in ("openmolt", "openmolt-responses", "command"):
		for key in ("process_wall_ms", "process_cpu_ms"):
			out[name][f"{key}_ratio"] = out[name][key] / out["agno"][key]
	return out


# figure 3 ----------------------------------------------------------------------------------


def client_cpu(
	server: Server, provider: str, repeats: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
	"""Figure 3 for one provider: OpenMolt's CPU per step and a bare httpx loop's, interleaved.

	The bare loop (``client.py bare``) sends the bodies OpenMolt sent in a recorded run of the
	same task, byte for byte, so both pay for the same JSON. It calls ``add`` inline; OpenMolt
	calls a sync tool function in a worker thread (so a time budget or a tool timeout can stop
	waiting for it): the loop thread waits up to ``QUICK`` (0.2 ms) for the result, so a quick
	function costs two thread wake-ups and no turn of the event loop. The third figure is
	OpenMolt with the tool as an ``async def``, which is awaited on the loop: the loop's own cost.
	"""
	with tempfile.TemporaryDirectory() as tmp:
		recorded = Path(tmp) / "bodies.json"
		recorded.write_text(json.dumps(record_bodies(server, provider, 20), ensure_ascii=False))
		server.reset(0)
		ours: list[dict[str, Any]] = []
		bare: list[dict[str, Any]] = []
		awaited: list[dict[str, Any]] = []
		common = ("--provider", provider, "--steps", "20")
		for _ in range(repeats):
			ours.append(worker("cpu", server.port, *common))
			bare.append(worker("bare", server.port, *common, "--bodies", str(recorded)))
			awaited.append(worker("cpu", server.port, *common, "--async-tool"))
	return median(ours), median(bare), median(awaited)


CLI_AGENT = {
	"name": "bench",
	"model": "openai:gpt-5-mini-steps0",
	"instructions": "Answer in one step.",
}
"""Figure 7's agent file for the command: no tool, so the model's first reply finishes the run."""


def cli_first_request(server: Server, python: Path, repeats: int) -> dict[str, Any]:
	"""Figure 7: ``openmolt agent.json`` from a fresh process to its first model request.

	The command of the environment ``pip install openmolt`` makes, run as a user runs it, with a
	home directory and working directory of its own (no key store, no ``.env``, an empty run
	store). The clock is ``time.monotonic()`` (one clock for every process of the machine): from
	just before the spawn to the fake server's receipt of the first model request
	(``first_request_at``), and to the process's exit; CPU time (user + system) from ``wait4``.
	"""
	command = python.parent / "openmolt"
	runs: list[dict[str, Any]] = []
	with tempfile.TemporaryDirectory() as tmp:
		home = Path(tmp)
		agent = home / "agent.json"
		settings = {"apiKey": "sk-bench", "baseUrl": f"http://127.0.0.1:{server.port}/v1"}
		agent.write_text(json.dumps({**CLI_AGENT, "llmProviders": {"openai": settings}}))
		env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
		env.update(
			HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config")
		)
		for _ in range(repeats):
			server.reset(0)
			_, t0, wall, cpu = spawn([str(command), str(agent), "--input", "hi"], env, home)
			first = server.control("/_stats")["first_request_at"]
			if first is None:
				raise SystemExit("openmolt agent.json exited without a model request")
			runs.append(
				{
					"first_request_ms": (first - t0) * 1000,
					"process_wall_ms": wall,
					"process_cpu_ms": cpu,
				}
			)
	return median(runs)


# figure 5 ----------------------------------------------------------------------------------


def _common(a: str, b: str) -> int:
	n = min(len(a), len(b))
	lo, hi = 0, n
	while lo < hi:  # binary search on prefix equality: slices compare in C
		mid = (lo + hi + 1) // 2
		if a[:mid] == b[:mid]:
			lo = mid
		else:
			hi = mid - 1
	return lo


def record_bodies(server: Server, provider: str, steps: int) -> list[str]:
	"""The request bodies of one OpenMolt run of ``steps`` tool calls, in order, as text."""
	server.reset(record=True)
	worker("bytes", server.port, "--provider", provider, "--steps", str(steps))
	bodies: list[str] = server.control("/_bodies")
	server.reset()
	return bodies


def request_bytes(server: Server, provider: str, steps: int) -> dict[str, Any]:
	bodies = [b.encode() for b in record_bodies(server, provider, steps)]
	sizes = [len(b) for b in bodies]
	growth = [b - a for a, b in itertools.pairwise(sizes)]
	shares = [
		_common(a.decode("latin-1"), b.decode("latin-1")) / len(a)
		for a, b in itertools.pairwise(bodies)
	]
	# The tool result itself: the sum the tool returned, as JSON (1 or 2 bytes here).
	result_bytes = statistics.mean(len(str(k + 1)) for k in range(steps))
	spaced = len(json.dumps(json.loads(bodies[0]), ensure_ascii=False).encode())
	return {
		"requests": len(bodies),
		"first": sizes[0],
		"first_spaced": spaced,
		"last": sizes[-1],
		"growth": statistics.mean(growth),
		"beyond_result": statistics.mean(growth) - result_bytes,
		"prefix_min": min(shares),
		"prefix_median": statistics.median(shares),
		"prefix_worst_step": shares.index(min(shares)) + 1,
	}


# dependency weight --------------------------------------------------------------------------


def dependency_weight(dist: str, exclude: set[str]) -> tuple[int, float]:
	"""Distributions ``dist`` pulls in beyond ``exclude``, and their installed size in MiB."""
	seen: set[str] = set()
	todo = [dist]
	while todo:
		name = todo.pop().lower().replace("_", "-")
		if name in seen or name in exclude:
			continue
		try:
			d = metadata.distribution(name)
		except metadata.PackageNotFoundError:
			continue
		seen.add(name)
		for req in d.requires or ():
			if "extra ==" in req:
				continue
			todo.append(
				req.split(";")[0]
				.split("[")[0]
				.split("<")[0]
				.split(">")[0]
				.split("=")[0]
				.split("!")[0]
				.split("~")[0]
				.strip()
			)
	size = 0
	for name in seen:
		for f in metadata.distribution(name).files or ():
			try:
				size += f.locate().stat().st_size
			except OSError:
				pass
	return len(seen), size / 2**20


# the table ----------------------------------------------------------------------------------


def fmt(v: float, digits: int = 1) -> str:
	return f"{v:,.{digits}f}"


def compile_bytecode() -> None:
	"""Write .pyc files for our sources and site-packages (PYTHONDONTWRITEBYTECODE may be set).

	Without them every fresh process compiles from source and figure 1 measures the compiler.
	The folders on ``PYTHONPATH`` too: another tree's sources measured with this harness (an A/B
	against a detached worktree of main) have no .pyc files of their own, and its figures 1 and 7
	read half as slow again.
	"""
	import compileall
	import sysconfig

	root = HERE.parent
	trees = [
		root / d / "src" for d in ("openmolt_core", "openmolt_providers", "openmolt_integrations")
	]
	trees.append(Path(sysconfig.get_paths()["purelib"]))
	trees += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
	for tree in trees:
		if tree.is_dir():
			compileall.compile_dir(tree, quiet=2, workers=1)


def main() -> None:
	parser = argparse.ArgumentParser(description="OpenMolt's benchmark table")
	parser.add_argument("--quick", action="store_true", help="fewer repetitions")
	parser.add_argument("--only", default="1,2,3,4,5,6,7,8", help="comma-separated figure numbers")
	parser.add_argument("--profile", action="store_true", help="profile figures 2 and 3 instead")
	parser.add_argument("--json", default="", help="also write the raw figures to this file")
	args = parser.parse_args()
	only = {int(x) for x in args.only.split(",") if x}
	n = 3 if args.quick else 5
	heavy = 1 if args.quick else 3
	transports = ["openmolt"] if args.quick else TRANSPORTS
	compile_bytecode()
	server = Server()
	rows: list[tuple[str, str, str]] = []
	raw: dict[str, Any] = {}
	started = time.perf_counter()
	try:
		if args.profile:
			profile(server)
			return
		if 1 in only:
			base = median([spawn_cpu([sys.executable, "-c", BARE_CODE]) for _ in range(n)])
			imp = median([spawn_cpu([sys.executable, "-c", IMPORT_CODE]) for _ in range(n)])
			first = repeat(n, "import", server.port, "--first-run", "--steps", "1")
			raw["1"] = {"baseline": base, "import": imp, "first_run": first}
			rows += [
				(
					"1 import openmolt, wall (fresh interpreter)",
					f"{fmt(imp['import_ms'])} ms ({imp['modules']:.0f} modules); process {fmt(imp['process_wall_ms'])} ms vs bare {fmt(base['process_wall_ms'])} ms",
					"≤ 200 ms",
				),
				(
					"1 import openmolt, peak RSS",
					f"{fmt(imp['peak_rss_kib'] / 1024)} MiB (bare python {fmt(base['peak_rss_kib'] / 1024)})",
					"",
				),
				(
					"1 import + first run (2 integrations), wall",
					f"{fmt(first['first_run_ms'])} ms ({first['first_run_modules']:.0f} modules)",
					"",
				),
				(
					"1 import + first run, peak RSS",
					f"{fmt(first['first_run_peak_rss_kib'] / 1024)} MiB",
					"",
				),
			]
		if 2 in only:
			c = repeat(n, "create", server.port, "--count", "1000")
			raw["2"] = c
			rows.append(
				(
					"2 create one agent (of 1,000, one tool)",
					f"{fmt(c['us_per_agent'])} µs CPU (wall {fmt(c['wall_us_per_agent'])} µs), {fmt(c['kib_per_agent'], 2)} KiB retained",
					"≤ 10 µs (issue 9), ≤ 15 µs (issue 31); ≤ 3 KiB",
				)
			)
			inst = repeat(n, "instance", server.port, "--count", "1000")
			raw["2"] = {"create": c, "instance": inst}
			rows.append(
				(
					"2 a new OpenMolt instance (+ its first agent, less that agent)",
					f"{fmt(inst['us_per_instance'])} µs ({fmt(inst['us_instance_and_agent'])} µs with the agent; constructor alone {fmt(inst['us_constructor'], 2)} µs)",
					"≤ 100 µs",
				)
			)
		if 3 in only:
			raw["3"] = {}
			for p in PROVIDERS:
				c, bare, awaited = client_cpu(server, p, n)
				raw["3"][p] = {"openmolt": c, "bare": bare, "async_tool": awaited}
				rows.append(
					(
						f"3 client CPU per step, {p} (N=20, 0 ms)",
						f"{fmt(c['cpu_ms_per_step'], 2)} ms (first run {fmt(c['cold_cpu_ms_per_step'], 1)} ms)",
						"≤ 1.5 ms",
					)
				)
				rows.append(
					(
						f"3 bare httpx loop, {p} (same bodies)",
						f"{fmt(bare['cpu_ms_per_step'], 2)} ms (first run {fmt(bare['cold_cpu_ms_per_step'], 1)} ms); OpenMolt / bare {fmt(c['cpu_ms_per_step'] / bare['cpu_ms_per_step'], 2)}",
						"OpenMolt ≤ bare (issue 31)",
					)
				)
				rows.append(
					(
						f"3 client CPU per step, {p}, the tool an async def",
						f"{fmt(awaited['cpu_ms_per_step'], 2)} ms; / bare {fmt(awaited['cpu_ms_per_step'] / bare['cpu_ms_per_step'], 2)} (no worker thread per call)",
						"≤ bare",
					)
				)
		if 4 in only:
			server.reset(100)
			raw["4"] = {}
			for t in transports:
				c = repeat(
					heavy,
					"concurrent",
					server.port,
					"--transport",
					t,
					"--steps",
					"5",
					"--count",
					"200",
				)
				raw["4"][t] = c
				name = "openmolt new_client()" if t == "openmolt" else t
				rows.append(
					(
						f"4 200 runs × 6 calls @100 ms, {name}",
						f"{fmt(c['wall_s'], 2)} s wall (ideal 0.6), {fmt(c['cpu_ms_per_call'], 2)} ms CPU/call, {fmt(c['peak_rss_mib'])} MiB, {c['failures']:.0f} failed",
						"≤ 2.0 s, ≤ 80 MiB",
					)
				)
			c = repeat(
				heavy,
				"concurrent",
				server.port,
				"--transport",
				"openmolt",
				"--steps",
				"5",
				"--count",
				"1000",
			)
			raw["4"]["1000"] = c
			rows.append(
				(
					"4 1,000 runs × 6 calls @100 ms, new_client()",
					f"{fmt(c['wall_s'], 2)} s wall (ideal 0.6), {fmt(c['cpu_ms_per_call'], 2)} ms CPU/call, {fmt(c['peak_rss_mib'])} MiB peak ({fmt(c['rss_kib_per_run'])} KiB per run), {c['failures']:.0f} failed",
					"≤ 1.2 s, ≤ 150 MiB",
				)
			)
			server.reset(0)
			if not args.quick:
				for t in ("httpx", "aiohttp"):
					imp = repeat(n, "transport_import", server.port, "--transport", t)
					raw["4"][f"import-{t}"] = imp
					dist = "httpcore" if t == "httpx" else "httpx-aiohttp"
					count, mib = dependency_weight(
						dist,
						{"httpx", "anyio", "idna", "certifi", "sniffio", "h11", "typing-extensions"}
						if t != "httpx"
						else {"httpx", "anyio", "idna", "certifi", "sniffio", "typing-extensions"},
					)
					rows.append(
						(
							f"4 transport cost, {t}",
							f"import {fmt(imp['import_ms'])} ms (+{imp['modules']:.0f} modules, +{fmt(imp['rss_kib'] / 1024)} MiB), {count} dists {fmt(mib)} MiB on disk beyond httpx",
							"",
						)
					)
		if 5 in only:
			raw["5"] = {}
			for p in PROVIDERS:
				b = request_bytes(server, p, 20)
				raw["5"][p] = b
				rows.append(
					(
						f"5 request bytes per step, {p}",
						f"+{fmt(b['growth'], 0)} B/step ({fmt(b['beyond_result'], 0)} beyond the result), {b['first']}→{b['last']} B",
						"≤ 250 B",
					)
				)
				rows.append(
					(
						f"5 first request (one small tool), {p}",
						f"{b['first']:,} B (spaced separators: {b['first_spaced']:,} B)",
						"≤ 3,500 B (issue 12)",
					)
				)
				rows.append(
					(
						f"5 prefix share of next request, {p}",
						f"min {fmt(b['prefix_min'] * 100)} % (step {b['prefix_worst_step']}), median {fmt(b['prefix_median'] * 100)} %",
						"≥ 90 %",
					)
				)
		if 6 in only:
			server.reset(0)
			lag = repeat(n, "lag", server.port, "--steps", "20")
			raw["6"] = lag
			rows.append(
				(
					"6 longest event-loop block, warm run",
					f"{fmt(lag['warm_max_block_ms'], 2)} ms",
					"≤ 5 ms",
				)
			)
			rows.append(
				(
					"6 longest event-loop block, first run",
					f"{fmt(lag['cold_max_block_ms'], 1)} ms (lazy imports, client)",
					"≤ 5 ms",
				)
			)
		if 7 in only:
			shot = one_shot(server, n)
			raw["7"] = shot
			bare = shot["bare"]
			for name in ("openmolt", "openmolt-responses"):
				o = shot[name]
				rows.append(
					(
						f"7 one-shot run, {name} / Agno (fresh process, own env)",
						f"wall {fmt(o['process_wall_ms_ratio'], 2)}, CPU {fmt(o['process_cpu_ms_ratio'], 2)}",
						"≤ 0.3",
					)
				)
			o = shot["command"]
			rows.append(
				(
					"7 one-shot run, the command (`openmolt -m MODEL --tool`) / Agno",
					f"wall {fmt(o['process_wall_ms_ratio'], 2)}, CPU {fmt(o['process_cpu_ms_ratio'], 2)}; {fmt(o['process_wall_ms'])} ms wall, {fmt(o['process_cpu_ms'])} ms CPU",
					"≤ 0.3",
				)
			)
			for name in ("openmolt", "openmolt-responses", "agno"):
				o = shot[name]
				rows.append(
					(
						f"7 one-shot run, {name}",
						f"{fmt(o['process_wall_ms'])} ms wall, {fmt(o['process_cpu_ms'])} ms CPU (in process {fmt(o['ms'])} ms), {fmt(o['peak_rss_kib'] / 1024)} MiB, {o['modules']:.0f} modules",
						"",
					)
				)
			cli = shot["cli"]
			rows.append(
				(
					"7 CLI to first model request (`openmolt agent.json`, fresh process)",
					f"{fmt(cli['first_request_ms'])} ms; to exit {fmt(cli['process_wall_ms'])} ms wall, {fmt(cli['process_cpu_ms'])} ms CPU",
					"≤ 500 ms (issue 32)",
				)
			)
			rows.append(
				(
					"7 bare python (same env), for scale",
					f"{fmt(bare['process_wall_ms'])} ms wall, {fmt(bare['process_cpu_ms'])} ms CPU, {fmt(bare['peak_rss_kib'] / 1024)} MiB",
					"",
				)
			)
		if 8 in only:  # durable runs on DBOS (benchmarks/durable.py)
			from durable import rows as durable_rows

			rows += durable_rows(repeat=5 if args.quick else 15, quick=args.quick)
	finally:
		server.close()
	load = os.getloadavg()
	width = max(len(r[0]) for r in rows)
	print(
		f"\nOpenMolt benchmark ({'quick' if args.quick else 'full'}; medians; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs; {time.perf_counter() - started:.0f} s)\n"
	)
	print(f"| {'figure':<{width}} | measured | goal |")
	print(f"| {'-' * width} | --- | --- |")
	for name, value, goal in rows:
		print(f"| {name:<{width}} | {value} | {goal} |")
	if args.json:
		Path(args.json).write_text(json.dumps(raw, indent=2))


def profile(server: Server) -> None:
	import pstats

	server.reset(0)
	for figure, extra in (
		("cpu", ["--steps", "20", "--repeat", "5"]),
		("create", ["--count", "1000"]),
	):
		path = f"/tmp/openmolt-bench-{figure}.prof"
		worker(figure, server.port, "--profile", path, *extra)
		print(
			f"\n== figure {'3' if figure == 'cpu' else '2'} ({figure}): top functions by cumulative time =="
		)
		pstats.Stats(path).sort_stats("cumulative").print_stats(30)
		print(
			f"== figure {'3' if figure == 'cpu' else '2'} ({figure}): top functions by own time =="
		)
		pstats.Stats(path).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
	main()
