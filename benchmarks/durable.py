"""Figure 8: durable runs on DBOS (openmolt-dbos): overhead per step, and the time to take over.

    uv run python benchmarks/durable.py                 # SQLite; PostgreSQL when a URL is set
    uv run python benchmarks/durable.py --postgres postgresql://postgres@127.0.0.1:5432/postgres
    uv run python benchmarks/durable.py --quick         # 5 repetitions, no takeover

The per-step figures come from one process per store, in which durable runs, the same runs in
process and bare workflows are taken in turn, each repetition measuring every kind once; every
figure is the median of the estimates each repetition gives on its own (paired, so that drift of
the machine or the store falls on all kinds alike):

- **bare DBOS step**: a workflow of as many steps as a durable run journals, steps that do
  nothing (``DBOS.run_step_async``): each step timed inside it, and the whole workflow (its start
  and end included) per step: what one journaled step costs on this store, the floor for
  anything durable.
- **durable step as the loop makes it**: each DBOS step of a durable run, timed around the port's
  call, less its body (the model or tool call, which the run in process makes as well): what
  the port adds to a bare step (its step key, the JSON codec, event numbering).
- **durable loop per journaled step, whole run**: agent runs of N tool calls (N+1 model calls and
  N tool calls: 2N+1 journaled steps) with a model and a tool that answer at once; the durable
  run's extra wall time over the same run in process, divided by its journaled steps. It holds
  everything durability adds, starting and ending the workflow included, so it is set against
  the bare workflow's time per step, which holds its start and end too (and, for reference,
  against the bare step timed alone). The target is the bare step plus 1 ms. The quartiles of
  the repetitions' estimates show how far the machine moves the figure; the fastest run of each
  kind gives one more estimate (interference only ever adds time). The process's CPU time
  (all threads) is shown too: on a loaded machine the wall time mostly measures waiting for a
  CPU.
- **takeover**: a worker is killed (SIGKILL) while a run's tool call is in flight; a live worker
  (default heartbeat 2 s, lapse 10 s, and the test settings 0.3 s / 1.5 s) notices, takes the
  run over and calls the tool again: the seconds from the kill to that call.

PostgreSQL comes from ``--postgres`` or ``OPENMOLT_TEST_POSTGRES_URL`` (each measurement gets a
database of its own); without one, its rows say so.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# measurements (each in its own process) -----------------------------------------------------


def _cpu() -> float:
	import resource

	usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
	return usage.ru_utime + usage.ru_stime


def _steal_counters() -> tuple[int, int]:
	"""The host's steal time and all CPU time so far (``/proc/stat`` jiffies; zeros elsewhere).

	A virtual machine's CPUs are taken away by its host now and then; what it took during a
	measurement says how far to trust its wall-clock figures.
	"""
	try:
		with open("/proc/stat", encoding="ascii") as stat:
			fields = [int(x) for x in stat.readline().split()[1:]]
	except OSError:
		return (0, 0)
	return (fields[7] if len(fields) > 7 else 0, sum(fields))


def _stolen_since(before: tuple[int, int]) -> float:
	"""The share of the CPU time the host stole since ``before`` (`_steal_counters`), 0-1."""
	now = _steal_counters()
	return (now[0] - before[0]) / max(now[1] - before[1], 1)


def _agent(om: Any, steps: int) -> Any:
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	replies = [call_tool("local.add", a=k, b=1) for k in range(steps)] + [finish(result="done")]
	return om.create_agent(
		name=f"Bench{steps}",
		model=ScriptedModel(replies * 100),
		tools=[add],
		max_steps=steps + 5,
	)


def _interleaved(url: str, steps: int, repeat: int) -> dict[str, list[float]]:
	"""Durable runs, the same runs in process, and bare workflows, taken in turn.

	One process and one store for all of them, each repetition measuring every kind once, so
	that the machine's and the store's drift (a growing file, a busy disk) falls on all alike.
	Each DBOS step the durable run makes is timed as the loop sees it, less its body (the model
	or tool call, which the run in process makes too); each bare step inside its workflow.
	"""
	import anyio
	from dbos import DBOS

	from openmolt import OpenMolt

	async def noop() -> None:
		return None

	bare_steps: list[float] = []

	@DBOS.workflow(name="bench.bare")
	async def bare(n: int) -> None:
		for _ in range(n):
			began = time.perf_counter()
			await DBOS.run_step_async(None, noop)
			bare_steps.append(time.perf_counter() - began)

	port_steps: list[float] = []
	run_step = DBOS.run_step_async

	async def timed(options: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
		if options is None:  # a bare step
			return await run_step(options, fn, *args, **kwargs)
		body = 0.0

		async def measured() -> Any:
			nonlocal body
			began = time.perf_counter()
			try:
				return await fn()
			finally:
				body = time.perf_counter() - began

		began = time.perf_counter()
		value = await run_step(options, measured)
		port_steps.append(time.perf_counter() - began - body)
		return value

	DBOS.run_step_async = timed  # type: ignore[method-assign,assignment]  # the port's steps, timed

	async def main() -> dict[str, list[float]]:
		durable = OpenMolt(durability=url, entry_points=False)
		local = OpenMolt(entry_points=False)
		agents = {"durable": _agent(durable, steps), "local": _agent(local, steps)}

		async def run(kind: str) -> None:
			if kind == "bare":
				await (await DBOS.start_workflow_async(bare, 2 * steps + 1)).get_result()
			else:
				result = await agents[kind].run("measure")
				assert result.ok, result

		# Durable first: its run launches the engine the bare workflows run on.
		kinds = ("durable", "local", "bare")
		for kind in kinds:  # warm up: the engine launches, imports and caches are made
			await run(kind)
		out: dict[str, list[float]] = {}
		for rep in range(repeat):
			bare_steps.clear()
			port_steps.clear()
			stolen = _steal_counters()
			for kind in kinds if rep % 2 == 0 else kinds[::-1]:  # neither goes first always
				cpu, began = _cpu(), time.perf_counter()
				await run(kind)
				out.setdefault(f"{kind}_ms", []).append((time.perf_counter() - began) * 1000)
				out.setdefault(f"{kind}_cpu_ms", []).append((_cpu() - cpu) * 1000)
			out.setdefault("bare_step_ms", []).append(statistics.median(bare_steps) * 1000)
			out.setdefault("port_step_ms", []).append(statistics.median(port_steps) * 1000)
			out.setdefault("steal", []).append(_stolen_since(stolen))
		await durable.aclose()
		await local.aclose()
		return out

	return anyio.run(main)


def _takeover_agent(om: Any, marker: str) -> Any:
	import anyio

	async def hold(label: str) -> str:
		"""Record the call, then wait (the crash comes meanwhile).

		Args:
			label: A label.
		"""
		with open(marker, "a", encoding="utf-8") as out:  # noqa: ASYNC230  # a benchmark marker
			out.write(f"{os.getpid()} {time.time()}\n")
		await anyio.sleep(float(os.environ.get("BENCH_HOLD", "3600")))
		return label

	from openmolt_core.testing import ScriptedModel, call_tool, finish

	return om.create_agent(
		name="Takeover",
		model=ScriptedModel([call_tool("local.hold", label="x"), finish(result="ok")] * 2),
		tools=[hold],
	)


def _takeover_role(url: str, role: str, marker: str, heartbeat: float, lapse: float) -> None:
	import anyio

	from openmolt import OpenMolt

	async def main() -> None:
		om = OpenMolt(
			durability={"url": url, "worker_id": role, "heartbeat": heartbeat, "lapse": lapse},
			entry_points=False,
		)
		agent = _takeover_agent(om, marker)
		await om.durability.start()  # type: ignore[union-attr]
		print("ready", flush=True)
		if role == "crash":
			os.environ["BENCH_HOLD"] = "3600"
			await agent.run("go")
		await anyio.sleep_forever()

	anyio.run(main)


# orchestration --------------------------------------------------------------------------------


def _fresh_postgres(base: str) -> tuple[str, Any]:
	import psycopg

	name = f"bench_{uuid.uuid4().hex[:10]}"
	with psycopg.connect(base, autocommit=True) as conn:
		conn.execute(f'CREATE DATABASE "{name}"')

	def drop() -> None:
		with psycopg.connect(base, autocommit=True) as conn:
			conn.execute(
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
				(name,),
			)
			conn.execute(f'DROP DATABASE IF EXISTS "{name}"')

	return f"{base.rpartition('/')[0]}/{name}", drop


def _store(kind: str, postgres: str | None, tmp: Path) -> tuple[str, Any]:
	if kind == "sqlite":
		path = tmp / f"{uuid.uuid4().hex[:8]}.sqlite"
		return f"sqlite:///{path}", lambda: None
	assert postgres
	return _fresh_postgres(postgres)


def _child(*args: str) -> dict[str, Any]:
	done = subprocess.run(
		[sys.executable, str(Path(__file__)), "--child", *args],
		capture_output=True,
		text=True,
		timeout=600,
	)
	lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
	if done.returncode != 0 or not lines:
		raise SystemExit(f"durable.py --child {' '.join(args)} failed:\n{done.stderr[-3000:]}")
	return dict(json.loads(lines[-1]))


def _takeover(url: str, heartbeat: float, lapse: float, tmp: Path) -> float:
	marker = tmp / f"marker-{uuid.uuid4().hex[:6]}"
	marker.touch()

	def start(role: str) -> subprocess.Popen[str]:
		args = ["--child", "takeover", url, role, str(marker), str(heartbeat), str(lapse)]
		return subprocess.Popen(
			[sys.executable, str(Path(__file__)), *args], stdout=subprocess.PIPE, text=True
		)

	crash = start("crash")
	assert crash.stdout is not None and crash.stdout.readline().strip() == "ready"
	live = start("live")
	assert live.stdout is not None and live.stdout.readline().strip() == "ready"
	try:
		while not marker.read_text().strip():
			time.sleep(0.01)
		killed = time.time()
		crash.send_signal(signal.SIGKILL)
		crash.wait()
		deadline = time.time() + 120
		while time.time() < deadline:
			lines = marker.read_text().splitlines()
			if len(lines) >= 2:
				return float(lines[1].split()[1]) - killed
			time.sleep(0.01)
		raise SystemExit("the live worker did not take the run over in 120 s")
	finally:
		for proc in (crash, live):
			if proc.poll() is None:
				proc.kill()
				proc.wait()


STEAL_LIMIT = 0.05
"""Repetitions during which the host took more of the CPU than this are left out (see `_paired`)."""


def _paired(m: dict[str, list[float]], journaled: int) -> dict[str, float]:
	"""The figures of one store: medians of the estimates each repetition gives on its own.

	Every kind was measured in each repetition, close in time, so its estimates pair them.
	Repetitions during which the host stole more than `STEAL_LIMIT` of the CPU time are left out
	(a stolen millisecond lands on whichever kind ran then); when fewer than a third are left,
	all are used, and the row says how much was stolen.
	"""
	steal = m.get("steal") or [0.0] * len(m["bare_step_ms"])
	kept = [i for i, share in enumerate(steal) if share <= STEAL_LIMIT]
	if len(kept) < max(3, len(steal) // 3):
		kept = list(range(len(steal)))

	def median(of: Callable[[int], float]) -> float:
		return statistics.median(of(i) for i in kept)

	def beyond_local(unit: str, i: int) -> float:
		return (m[f"durable_{unit}"][i] - m[f"local_{unit}"][i]) / journaled

	def quartiles(of: Callable[[int], float]) -> tuple[float, float]:
		values = [of(i) for i in kept]
		if len(values) < 2:
			return values[0], values[0]
		q = statistics.quantiles(values, n=4, method="inclusive")
		return q[0], q[2]

	def beyond_run(i: int) -> float:
		return beyond_local("ms", i) - m["bare_ms"][i] / journaled

	low, high = quartiles(beyond_run)
	return {
		"bare": median(lambda i: m["bare_step_ms"][i]),
		"bare_run": median(lambda i: m["bare_ms"][i] / journaled),
		"over_run": median(beyond_run),
		"over_run_low": low,
		"over_run_high": high,
		"over_fastest": (min(m["durable_ms"]) - min(m["local_ms"]) - min(m["bare_ms"])) / journaled,
		"kept": len(kept),
		"repetitions": len(steal),
		"steal": statistics.median(steal[i] for i in kept),
		"bare_cpu": median(lambda i: m["bare_cpu_ms"][i] / journaled),
		"port": median(lambda i: m["port_step_ms"][i]),
		"port_over": median(lambda i: m["port_step_ms"][i] - m["bare_step_ms"][i]),
		"wall": median(lambda i: beyond_local("ms", i)),
		"over": median(lambda i: beyond_local("ms", i) - m["bare_step_ms"][i]),
		"cpu": median(lambda i: beyond_local("cpu_ms", i)),
		"over_cpu": median(lambda i: beyond_local("cpu_ms", i) - m["bare_cpu_ms"][i] / journaled),
	}


def rows(
	*, repeat: int = 15, steps: int = 40, postgres: str | None = None, quick: bool = False
) -> list[tuple[str, str, str]]:
	"""The table rows of figure 8 (``run.py`` prints them with the other figures)."""
	postgres = postgres or os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
	out: list[tuple[str, str, str]] = []
	with tempfile.TemporaryDirectory(prefix="openmolt-durable-") as name:
		tmp = Path(name)
		journaled = 2 * steps + 1  # steps + 1 model calls and steps tool calls
		for kind in ("sqlite", "postgres"):
			label = "SQLite" if kind == "sqlite" else "PostgreSQL"
			if kind == "postgres" and not postgres:
				out.append((f"8 durable, {label}", "not measured (no PostgreSQL URL)", ""))
				continue
			url, drop = _store(kind, postgres, tmp)
			try:
				m = _child("interleaved", url, str(steps), str(repeat))
			finally:
				drop()

			f = _paired(m, journaled)
			b, b_run, b_cpu = f["bare"], f["bare_run"], f["bare_cpu"]
			port, port_over = f["port"], f["port_over"]
			wall, over, cpu, over_cpu = f["wall"], f["over"], f["cpu"], f["over_cpu"]
			over_run, low, high = f["over_run"], f["over_run_low"], f["over_run_high"]
			out.append(
				(
					f"8 bare DBOS step, {label}",
					f"{b:.2f} ms wall timed alone; the whole bare workflow of {journaled} steps: "
					f"{b_run:.2f} ms wall, {b_cpu:.2f} ms CPU per step",
					"",
				)
			)
			out.append(
				(
					f"8 durable step as the loop makes it, body left out, {label}",
					f"{port:.2f} ms wall ({port_over:+.2f} beyond the bare step)",
					"",
				)
			)
			out.append(
				(
					f"8 durable loop per journaled step, whole run, {label}",
					f"{wall:.2f} ms wall; paired with the bare workflow's step "
					f"{over_run:+.2f} ms (quartiles {low:+.2f} to {high:+.2f}), with the bare "
					f"step alone {over:+.2f} ms, the fastest run of each kind "
					f"{f['over_fastest']:+.2f} ms; {cpu:.2f} ms CPU ({over_cpu:+.2f}); "
					f"{f['kept']:.0f} of {f['repetitions']:.0f} repetitions (the host stole "
					f"{f['steal']:.0%} of the CPU time in the median one)",
					"≤ bare + 1 ms (+1.00)",
				)
			)
			if not quick:
				for heartbeat, lapse in ((2.0, 10.0), (0.3, 1.5)):
					url, drop = _store(kind, postgres, tmp)
					try:
						seconds = _takeover(url, heartbeat, lapse, tmp)
					finally:
						drop()
					out.append(
						(
							f"8 takeover of a dead worker's run, {label} (heartbeat {heartbeat:g} s, lapse {lapse:g} s)",
							f"{seconds:.2f} s",
							"≈ lapse + heartbeat + 1 s",
						)
					)
	return out


def main() -> None:
	if len(sys.argv) > 1 and sys.argv[1] == "--child":
		what, *given = sys.argv[2:]
		if what == "interleaved":
			print(json.dumps(_interleaved(given[0], int(given[1]), int(given[2]))))
		else:
			_takeover_role(given[0], given[1], given[2], float(given[3]), float(given[4]))
		return
	parser = argparse.ArgumentParser(description="Figure 8: durable runs on DBOS")
	parser.add_argument(
		"--postgres", help="a PostgreSQL URL (default: $OPENMOLT_TEST_POSTGRES_URL)"
	)
	parser.add_argument("--quick", action="store_true", help="5 repetitions, no takeover")
	parser.add_argument("--steps", type=int, default=40)
	args = parser.parse_args()
	table = rows(
		repeat=5 if args.quick else 15, steps=args.steps, postgres=args.postgres, quick=args.quick
	)
	width = max(len(r[0]) for r in table)
	print(f"\n| {'figure':<{width}} | measured | goal |")
	print(f"| {'-' * width} | --- | --- |")
	for name, value, goal in table:
		print(f"| {name:<{width}} | {value} | {goal} |")


if __name__ == "__main__":
	main()
