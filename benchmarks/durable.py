"""Figure 8: durable runs on DBOS (openmolt-dbos): overhead per step, and the time to take over.

    uv run python benchmarks/durable.py                 # SQLite; PostgreSQL when a URL is set
    uv run python benchmarks/durable.py --postgres postgresql://postgres@127.0.0.1:5432/postgres
    uv run python benchmarks/durable.py --quick         # fewer repetitions, no takeover

Each figure is measured in fresh processes (median of the repetitions):

- **bare DBOS step**: a workflow of N steps that do nothing (``DBOS.run_step_async``): what one
  journaled step costs on this store, the floor for anything durable.
- **durable loop, per journaled step**: agent runs of N/4 and N tool calls (N+1 model calls and N
  tool calls: 2N+1 journaled steps), with a model and a tool that answer at once; the durable
  run's extra time over the same run in process, per journaled step, from the difference between
  the two lengths (so the per-run cost of starting and ending the workflow is left out; it is
  shown on its own row). The target is the bare step plus 1 ms. Wall time and the process's CPU
  time (all threads) are both shown: on a loaded machine the wall time mostly measures waiting
  for a CPU.
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# measurements (each in its own process) -----------------------------------------------------


def _cpu() -> float:
	import resource

	usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
	return usage.ru_utime + usage.ru_stime


def _bare(url: str, steps: int) -> dict[str, Any]:
	import asyncio

	from dbos import DBOS

	DBOS(config={"name": "bench", "system_database_url": url, "log_level": "ERROR"})

	async def noop() -> None:
		return None

	@DBOS.workflow(name="bench.bare")
	async def workflow(n: int) -> float:
		began = time.perf_counter()
		for _ in range(n):
			await DBOS.run_step_async(None, noop)
		return time.perf_counter() - began

	async def main() -> dict[str, Any]:
		DBOS.launch()
		await (await DBOS.start_workflow_async(workflow, 5)).get_result()  # warm up
		cpu = _cpu()
		seconds = await (await DBOS.start_workflow_async(workflow, steps)).get_result()
		return {
			"bare_ms_per_step": seconds / steps * 1000,
			"bare_cpu_ms_per_step": (_cpu() - cpu) / steps * 1000,
		}

	try:
		return asyncio.run(main())
	finally:
		DBOS.destroy()


def _agent(om: Any, steps: int) -> Any:
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	replies = [call_tool("local.add", a=k, b=1) for k in range(steps)] + [finish(result="done")]
	return om.create_agent(
		name="Bench", model=ScriptedModel(replies * 6), tools=[add], max_steps=steps + 5
	)


def _loop(url: str | None, steps: int) -> dict[str, Any]:
	import anyio

	from openmolt import OpenMolt

	async def main() -> dict[str, Any]:
		om = OpenMolt(durability=url, entry_points=False) if url else OpenMolt(entry_points=False)
		agent = _agent(om, steps)
		await agent.run("warm up")  # the engine launches, imports and caches are made
		cpu = _cpu()
		began = time.perf_counter()
		result = await agent.run("measure")
		seconds = time.perf_counter() - began
		cpu = _cpu() - cpu
		assert result.ok, result
		await om.aclose()
		return {"run_ms": seconds * 1000, "cpu_ms": cpu * 1000, "journaled_steps": 2 * steps + 1}

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


def rows(
	*, repeat: int = 3, steps: int = 20, postgres: str | None = None, quick: bool = False
) -> list[tuple[str, str, str]]:
	"""The table rows of figure 8 (``run.py`` prints them with the other figures)."""
	postgres = postgres or os.environ.get("OPENMOLT_TEST_POSTGRES_URL")
	out: list[tuple[str, str, str]] = []
	with tempfile.TemporaryDirectory(prefix="openmolt-durable-") as name:
		tmp = Path(name)
		# Two run lengths: the difference is what the steps cost, without the per-run cost
		# (starting and ending the workflow) that the longer run shares with the shorter.
		short, long = max(steps // 4, 2), steps
		extra = 2 * (long - short)  # journaled steps the long run has more

		def median_of(kind: str, url_of: Any, n: int) -> dict[str, float]:
			runs = []
			for _ in range(repeat):
				url, drop = url_of()
				try:
					runs.append(_child(kind, url, str(n)))
				finally:
					drop()
			return {k: statistics.median(r[k] for r in runs) for k in runs[0]}

		def nothing() -> tuple[str, Any]:
			return "-", lambda: None

		local = {n: median_of("loop", nothing, n) for n in (short, long)}
		for kind in ("sqlite", "postgres"):
			label = "SQLite" if kind == "sqlite" else "PostgreSQL"
			if kind == "postgres" and not postgres:
				out.append((f"8 durable, {label}", "not measured (no PostgreSQL URL)", ""))
				continue

			def fresh(kind: str = kind) -> tuple[str, Any]:
				return _store(kind, postgres, tmp)

			bare = median_of("bare", fresh, long)
			durable = {n: median_of("loop", fresh, n) for n in (short, long)}

			def slope(key: str, durable: dict[int, dict[str, float]] = durable) -> float:
				added = durable[long][key] - durable[short][key]
				return (added - (local[long][key] - local[short][key])) / extra

			def fixed(key: str, durable: dict[int, dict[str, float]] = durable) -> float:
				per_step = slope(key, durable)
				return durable[long][key] - local[long][key] - per_step * (2 * long + 1)

			b, b_cpu = bare["bare_ms_per_step"], bare["bare_cpu_ms_per_step"]
			wall, cpu = slope("run_ms"), slope("cpu_ms")
			out.append((f"8 bare DBOS step, {label}", f"{b:.2f} ms wall, {b_cpu:.2f} ms CPU", ""))
			out.append(
				(
					f"8 durable loop per journaled step, {label}",
					f"{wall:.2f} ms wall ({wall - b:+.2f} beyond the bare step), "
					f"{cpu:.2f} ms CPU ({cpu - b_cpu:+.2f})",
					f"≤ bare + 1 ms ({b + 1:.2f} ms)",
				)
			)
			out.append(
				(
					f"8 durable run, fixed cost, {label}",
					f"{fixed('run_ms'):.0f} ms wall, {fixed('cpu_ms'):.0f} ms CPU per run",
					"",
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
		what, *args = sys.argv[2:]
		if what == "bare":
			print(json.dumps(_bare(args[0], int(args[1]))))
		elif what == "loop":
			print(json.dumps(_loop(None if args[0] == "-" else args[0], int(args[1]))))
		else:
			_takeover_role(args[0], args[1], args[2], float(args[3]), float(args[4]))
		return
	parser = argparse.ArgumentParser(description="Figure 8: durable runs on DBOS")
	parser.add_argument(
		"--postgres", help="a PostgreSQL URL (default: $OPENMOLT_TEST_POSTGRES_URL)"
	)
	parser.add_argument("--quick", action="store_true", help="one repetition, no takeover")
	parser.add_argument("--steps", type=int, default=20)
	args = parser.parse_args()
	table = rows(
		repeat=1 if args.quick else 3, steps=args.steps, postgres=args.postgres, quick=args.quick
	)
	width = max(len(r[0]) for r in table)
	print(f"\n| {'figure':<{width}} | measured | goal |")
	print(f"| {'-' * width} | --- | --- |")
	for name, value, goal in table:
		print(f"| {name:<{width}} | {value} | {goal} |")


if __name__ == "__main__":
	main()
