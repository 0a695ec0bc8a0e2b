"""The client side of the benchmarks: one measurement per process, printed as one JSON line.

``benchmarks/run.py`` starts this file in fresh processes (``python benchmarks/client.py FIGURE
--port P ...``) while the fake server runs in another process; run it by hand the same way to look
at one figure. Everything is imported lazily so that figure 1 measures ``import openmolt`` alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any

MODELS = {
	"openai": "openai:gpt-5-mini",
	"openai-chat": "openai:gpt-5-mini",
	"anthropic": "anthropic:claude-sonnet-4-5",
	"google": "google:gemini-2.5-flash",
}
"""Real model names, so the providers take their normal code paths; ``-stepsN`` tells the server N."""

ADD_SCHEMA = {
	"type": "object",
	"properties": {"a": {"type": "number"}, "b": {"type": "number"}},
	"required": ["a", "b"],
	"additionalProperties": False,
}


def add(input: dict[str, Any], context: Any) -> float:
	return input["a"] + input["b"]


async def async_add(input: dict[str, Any], context: Any) -> float:
	"""`add` as an ``async def``: awaited on the loop, where a sync function goes to a worker thread."""
	return add(input, context)


def rss_kib() -> int:
	"""The current resident set size in KiB (Linux)."""
	with open("/proc/self/statm") as f:
		pages = int(f.read().split()[1])
	return pages * resource.getpagesize() // 1024


def peak_rss_kib() -> int:
	"""This process's peak RSS since ``exec`` (``VmHWM``), in KiB.

	Not ``getrusage().ru_maxrss``: on Linux that counts the forked copy of the parent before
	``exec``, so a child of a 150 MiB driver never reads below 150 MiB.
	"""
	with open("/proc/self/status") as f:
		for line in f:
			if line.startswith("VmHWM:"):
				return int(line.split()[1])
	raise SystemExit("no VmHWM in /proc/self/status (Linux only)")


def cpu_s() -> float:
	r = resource.getrusage(resource.RUSAGE_SELF)
	return r.ru_utime + r.ru_stime


def settings(provider: str, port: int) -> dict[str, dict[str, Any]]:
	base = f"http://127.0.0.1:{port}"
	if provider == "openai":
		return {"openai": {"api_key": "sk-bench", "base_url": f"{base}/v1"}}
	if provider == "openai-chat":
		return {"openai": {"api_key": "sk-bench", "base_url": f"{base}/v1", "api_mode": "chat"}}
	if provider == "anthropic":
		return {"anthropic": {"api_key": "sk-ant-bench", "base_url": f"{base}/v1"}}
	if provider == "google":
		return {"google": {"api_key": "bench", "base_url": f"{base}/v1beta"}}
	raise SystemExit(f"unknown provider {provider!r}")


def http_client(transport: str) -> Any:
	"""The shared client to hand OpenMolt; ``default`` lets OpenMolt build its own."""
	if transport == "default":
		return None
	import httpx
	from transports import build

	return httpx.AsyncClient(
		transport=build(transport),
		timeout=httpx.Timeout(60.0, connect=10.0),
		follow_redirects=False,
		headers={"User-Agent": "openmolt"},
	)


class Bench:
	"""An OpenMolt instance and the client the benchmark gave it (closed together)."""

	def __init__(self, om: Any, client: Any) -> None:
		self.om = om
		self.client = client

	def __getattr__(self, name: str) -> Any:
		return getattr(self.om, name)

	async def aclose(self) -> None:
		await self.om.aclose()
		if self.client is not None:  # OpenMolt closes only the clients it made
			await self.client.aclose()


def make(args: argparse.Namespace, *, integrations: tuple[str, ...] = ()) -> tuple[Any, Any]:
	from tool_search import CREDENTIALS  # after the import is timed: it imports openmolt

	from openmolt import FunctionTool, OpenMolt

	client = http_client(args.transport)
	om = OpenMolt(
		llm_providers=settings(args.provider, args.port),
		integrations={i: CREDENTIALS[i] for i in integrations},
		max_steps=args.steps + 5,
		http_client=client,
	)
	tool = FunctionTool(
		"add", "Add two numbers.", async_add if args.async_tool else add, input_schema=ADD_SCHEMA
	)
	return Bench(om, client), tool


def agent(om: Any, tool: Any, args: argparse.Namespace, name: str = "bench", **kw: Any) -> Any:
	return om.create_agent(
		name=name,
		model=f"{MODELS[args.provider]}-steps{args.steps}",
		instructions="Add the numbers the user gives, one tool call at a time, then finish.",
		tools=[tool],
		**kw,
	)


def _check(result: Any, steps: int) -> None:
	if result.status != "success" or result.steps != steps + 1:
		raise SystemExit(
			f"unexpected run: status={result.status} steps={result.steps} {result.error}"
		)


# figure 1 -----------------------------------------------------------------------------------


def fig_import(args: argparse.Namespace) -> dict[str, Any]:
	# The import alone is timed by run.py in a fresh interpreter (IMPORT_CODE there): here
	# argparse, json and typing are already loaded. This figure is the import plus a first run.
	before = set(sys.modules)
	t0 = time.perf_counter()
	import openmolt  # noqa: F401

	t1 = time.perf_counter()
	out: dict[str, Any] = {
		"import_ms": (t1 - t0) * 1000,
		"import_peak_rss_kib": peak_rss_kib(),
		"import_modules": len(set(sys.modules) - before),
	}
	if args.first_run:
		import anyio

		async def main() -> Any:
			om, tool = make(args, integrations=("github", "slack"))
			a = agent(om, tool, args, integrations=["github", "slack"])
			result = await a.run("add 0 and 1")
			await om.aclose()
			return result

		result = anyio.run(main)
		_check(result, args.steps)
		t2 = time.perf_counter()
		out["first_run_ms"] = (t2 - t0) * 1000
		out["first_run_peak_rss_kib"] = peak_rss_kib()
		out["first_run_modules"] = len(set(sys.modules) - before)
	return out


def fig_baseline(args: argparse.Namespace) -> dict[str, Any]:
	return {"peak_rss_kib": peak_rss_kib(), "modules": len(sys.modules)}


# figure 2 -----------------------------------------------------------------------------------


def fig_create(args: argparse.Namespace) -> dict[str, Any]:
	import gc
	import tracemalloc

	bench, tool = make(args)
	om = bench.om  # the instance itself: `Bench.__getattr__` would add about 0.6 µs a call
	count = args.count
	for i in range(20):  # warm caches: plugin discovery, pydantic validators
		agent(om, tool, args, name=f"warm{i}")
	names = [f"agent{i}" for i in range(count)]
	gc.collect()
	if args.profile:
		import cProfile

		profiler = cProfile.Profile()
		profiler.enable()
	# The thread's CPU time is the figure: on a shared machine the wall time also counts the
	# time other processes hold the core (it is kept too).
	c0, t0 = time.thread_time(), time.perf_counter()
	agents = [agent(om, tool, args, name=n) for n in names]
	c1, t1 = time.thread_time(), time.perf_counter()
	if args.profile:
		profiler.disable()
		profiler.dump_stats(args.profile)
	del agents
	gc.collect()
	tracemalloc.start()
	before = tracemalloc.get_traced_memory()[0]
	agents = [agent(om, tool, args, name=n) for n in names]
	gc.collect()
	after = tracemalloc.get_traced_memory()[0]
	tracemalloc.stop()
	return {
		"us_per_agent": (c1 - c0) * 1e6 / count,
		"wall_us_per_agent": (t1 - t0) * 1e6 / count,
		"kib_per_agent": (after - before) / 1024 / count,
		"agents": len(agents),
	}


def fig_instance(args: argparse.Namespace) -> dict[str, Any]:
	"""A new OpenMolt instance per agent (one per tenant or request), after one warm instance."""
	from openmolt import FunctionTool, OpenMolt

	tool = FunctionTool("add", "Add two numbers.", add, input_schema=ADD_SCHEMA)
	model = "openai:gpt-5-mini"
	llm = settings("openai", args.port)
	for _ in range(20):  # the first instance reads the entry points and imports the provider
		OpenMolt(llm_providers=llm).create_agent(name="warm", model=model, tools=[tool])
	count = args.count
	t0 = time.perf_counter()
	for _ in range(count):
		OpenMolt(llm_providers=llm)
	t1 = time.perf_counter()
	for _ in range(count):
		OpenMolt(llm_providers=llm).create_agent(name="a", model=model, tools=[tool])
	t2 = time.perf_counter()
	shared = OpenMolt(llm_providers=llm)
	for _ in range(count):
		shared.create_agent(name="a", model=model, tools=[tool])
	t3 = time.perf_counter()
	per = 1e6 / count
	return {
		"us_constructor": (t1 - t0) * per,
		"us_instance_and_agent": (t2 - t1) * per,
		"us_agent_on_shared_instance": (t3 - t2) * per,
		"us_per_instance": ((t2 - t1) - (t3 - t2)) * per,
	}


async def settle(a: Any, steps: int) -> None:
	"""Run until the shared client has moved to its steady-state pool (a one-time import).

	A loop starts on httpx's pool and builds aiohttp's in a worker thread after
	``openmolt_core.integrations._client._WARM`` requests; the figures below measure the steady
	state after it.
	"""
	import anyio

	from openmolt_core.integrations import _client

	for _ in range(_client._WARM // (steps + 1) + 1):
		_check(await a.run("warm up"), steps)
	await anyio.sleep(1.0)  # the background build
	_check(await a.run("warm up"), steps)


# figure 3 -----------------------------------------------------------------------------------


def fig_cpu(args: argparse.Namespace) -> dict[str, Any]:
	import anyio

	profiler = None
	if args.profile:
		import cProfile

		profiler = cProfile.Profile()

	async def main() -> dict[str, Any]:
		om, tool = make(args)
		a = agent(om, tool, args)
		c0, w0 = cpu_s(), time.perf_counter()
		cold = await a.run("add")
		c1, w1 = cpu_s(), time.perf_counter()
		_check(cold, args.steps)
		cold_cpu, cold_wall = c1 - c0, w1 - w0
		await settle(a, args.steps)
		c1, w1 = cpu_s(), time.perf_counter()
		runs = args.repeat
		if profiler is not None:
			profiler.enable()
		for _ in range(runs):
			warm = await a.run("add")
			_check(warm, args.steps)
		if profiler is not None:
			profiler.disable()
		c2, w2 = cpu_s(), time.perf_counter()
		await om.aclose()
		calls = args.steps + 1
		return {
			"cold_cpu_ms_per_step": cold_cpu * 1000 / calls,
			"cpu_ms_per_step": (c2 - c1) * 1000 / calls / runs,
			"wall_ms_per_step": (w2 - w1) * 1000 / calls / runs,
			"cold_wall_ms": cold_wall * 1000,
		}

	out = anyio.run(main)
	if profiler is not None:
		profiler.dump_stats(args.profile)
	return out


CONVERSATION = {
	"openai": "input",
	"openai-chat": "messages",
	"anthropic": "messages",
	"google": "contents",
}
"""The request field that holds the conversation, per provider (the rest of a body is fixed)."""


def bare_endpoint(provider: str, port: int, model: str) -> tuple[str, dict[str, str]]:
	"""The URL and headers a hand-written client would use against the fake server."""
	base = f"http://127.0.0.1:{port}"
	json_type = {"Content-Type": "application/json"}
	if provider == "openai":
		return f"{base}/v1/responses", {"Authorization": "Bearer sk-bench", **json_type}
	if provider == "openai-chat":
		return f"{base}/v1/chat/completions", {"Authorization": "Bearer sk-bench", **json_type}
	if provider == "anthropic":
		headers = {"x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01", **json_type}
		return f"{base}/v1/messages", headers
	return f"{base}/v1beta/models/{model}:generateContent", {"x-goog-api-key": "bench", **json_type}


def reply_text(provider: str, reply: dict[str, Any]) -> str:
	"""The model's text in one API's reply."""
	if provider == "openai":
		return reply["output"][0]["content"][0]["text"]
	if provider == "openai-chat":
		return reply["choices"][0]["message"]["content"]
	if provider == "anthropic":
		return reply["content"][0]["text"]
	return reply["candidates"][0]["content"]["parts"][0]["text"]


def fig_bare(args: argparse.Namespace) -> dict[str, Any]:
	"""Figure 3's floor: a hand-written agent loop on a bare ``httpx.AsyncClient``.

	It sends the bodies OpenMolt sent in one recorded run (``--bodies``, same provider and N),
	byte for byte: it starts from the first body as a dict, and each step encodes the whole body
	(compact JSON, as the providers do), posts it, parses the reply JSON and the model's command,
	runs ``add``, and appends that turn to the conversation (the assistant message and the tool
	result message OpenMolt recorded, plus the markers OpenMolt moved, e.g. Anthropic's
	``cache_control``), so the next body is the next recorded one. The first run checks each
	body against the recording.
	"""
	import asyncio
	import copy
	import itertools
	from pathlib import Path

	import httpx

	bodies: list[str] = json.loads(Path(args.bodies).read_text())
	payloads = [json.loads(b) for b in bodies]
	key = CONVERSATION[args.provider]
	turns: list[tuple[list[tuple[int, Any]], list[Any]]] = []
	for before, after in itertools.pairwise(payloads):
		old, new = before[key], after[key]
		moved = [(i, new[i]) for i in range(len(old)) if old[i] != new[i]]
		turns.append((moved, new[len(old) :]))
	model = f"{MODELS[args.provider].split(':', 1)[1]}-steps{args.steps}"
	url, headers = bare_endpoint(args.provider, args.port, model)

	async def run(client: httpx.AsyncClient, check: bool) -> int:
		payload = copy.deepcopy(payloads[0])
		conversation = payload[key]
		for step, turn in enumerate([*turns, None]):
			body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
			if check and body != bodies[step].encode():
				raise SystemExit(f"bare loop: body {step} differs from OpenMolt's")
			response = await client.post(url, content=body, headers=headers)
			response.raise_for_status()
			command = json.loads(reply_text(args.provider, response.json()))["commands"][0]
			if command["type"] == "finish":
				return step + 1
			add(command["input"], None)
			if turn is None:
				raise SystemExit("bare loop: the server asked for more steps than recorded")
			moved, appended = turn
			for i, item in moved:
				conversation[i] = item
			conversation.extend(appended)
		raise SystemExit("bare loop: the server never finished")

	async def main() -> dict[str, Any]:
		async with httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0)) as client:
			c0 = cpu_s()
			calls = await run(client, check=True)
			c1 = cpu_s()
			if calls != len(bodies):
				raise SystemExit(f"bare loop: {calls} calls, {len(bodies)} recorded")
			await run(client, check=False)
			c2 = cpu_s()
			for _ in range(args.repeat):
				await run(client, check=False)
			c3 = cpu_s()
		return {
			"cold_cpu_ms_per_step": (c1 - c0) * 1000 / calls,
			"cpu_ms_per_step": (c3 - c2) * 1000 / calls / args.repeat,
			"body_bytes": sum(len(b.encode()) for b in bodies),
		}

	return asyncio.run(main())


# figure 4 -----------------------------------------------------------------------------------


def fig_concurrent(args: argparse.Namespace) -> dict[str, Any]:
	import anyio

	async def main() -> dict[str, Any]:
		om, tool = make(args)
		agents = [agent(om, tool, args, name=f"agent{i}") for i in range(args.count)]
		# Warm up with a few concurrent runs: imports, the client, and the move of the busy
		# loop to aiohttp's pool (a one-time import, like the others) are not counted.
		async with anyio.create_task_group() as warm:
			for a in agents[:8]:
				warm.start_soon(a.run, "warm up")
		_check(await agents[0].run("warm up"), args.steps)
		failures = 0
		errors: list[str] = []

		async def one(a: Any) -> None:
			nonlocal failures
			try:
				result = await a.run("add")
				if result.status != "success" or result.steps != args.steps + 1:
					failures += 1
					errors.append(f"{result.status}: {result.error}")
			except Exception as exc:
				failures += 1
				errors.append(f"{type(exc).__name__}: {exc}")

		rss0 = rss_kib()
		peak0 = peak_rss_kib()
		c0, w0 = cpu_s(), time.perf_counter()
		async with anyio.create_task_group() as tg:
			for a in agents:
				tg.start_soon(one, a)
		c1, w1 = cpu_s(), time.perf_counter()
		peak = peak_rss_kib()
		await om.aclose()
		calls = args.count * (args.steps + 1)
		return {
			"wall_s": w1 - w0,
			"cpu_ms_per_call": (c1 - c0) * 1000 / calls,
			"peak_rss_mib": peak / 1024,
			"rss_before_mib": rss0 / 1024,
			"peak_before_mib": peak0 / 1024,
			"rss_kib_per_run": (peak - rss0) / args.count,
			"failures": failures,
			"first_error": errors[0] if errors else "",
		}

	return anyio.run(main)


# figure 5 -----------------------------------------------------------------------------------


def fig_bytes(args: argparse.Namespace) -> dict[str, Any]:
	import anyio

	async def main() -> dict[str, Any]:
		om, tool = make(args)
		result = await agent(om, tool, args).run("add")
		_check(result, args.steps)
		await om.aclose()
		return {"steps": result.steps}

	return anyio.run(main)


# figure 6 -----------------------------------------------------------------------------------


def fig_lag(args: argparse.Namespace) -> dict[str, Any]:
	import anyio

	async def main() -> dict[str, Any]:
		om, tool = make(args)
		a = agent(om, tool, args)
		worst = [0.0]
		period = 0.0005

		async def probe() -> None:
			while True:
				t = time.perf_counter()
				await anyio.sleep(period)
				worst[0] = max(worst[0], time.perf_counter() - t - period)

		out: dict[str, Any] = {}
		async with anyio.create_task_group() as tg:
			tg.start_soon(probe)
			await anyio.sleep(0.01)
			worst[0] = 0.0
			_check(await a.run("add"), args.steps)
			out["cold_max_block_ms"] = worst[0] * 1000
			worst[0] = 0.0
			_check(await a.run("add"), args.steps)
			out["warm_max_block_ms"] = worst[0] * 1000
			tg.cancel_scope.cancel()
		await om.aclose()
		return out

	return anyio.run(main)


def fig_transport_import(args: argparse.Namespace) -> dict[str, Any]:
	import httpx  # noqa: F401  # already paid by OpenMolt; measure what the transport adds

	modules = len(sys.modules)
	rss = rss_kib()
	t0 = time.perf_counter()
	if args.transport == "aiohttp":
		import httpx_aiohttp  # noqa: F401
	elif args.transport in ("httpx", "sharded", "httpx-1000"):
		import httpcore  # noqa: F401
	t1 = time.perf_counter()
	return {
		"import_ms": (t1 - t0) * 1000,
		"modules": len(sys.modules) - modules,
		"rss_kib": rss_kib() - rss,
	}


FIGURES = {
	"transport_import": fig_transport_import,
	"baseline": fig_baseline,
	"import": fig_import,
	"create": fig_create,
	"instance": fig_instance,
	"cpu": fig_cpu,
	"bare": fig_bare,
	"concurrent": fig_concurrent,
	"bytes": fig_bytes,
	"lag": fig_lag,
}


def main() -> None:
	parser = argparse.ArgumentParser(description="one benchmark measurement")
	parser.add_argument("figure", choices=sorted(FIGURES))
	parser.add_argument("--port", type=int, default=0)
	parser.add_argument("--provider", default="openai", choices=sorted(MODELS))
	parser.add_argument("--transport", default="default")
	parser.add_argument("--steps", type=int, default=20)
	parser.add_argument("--count", type=int, default=1000)
	parser.add_argument("--repeat", type=int, default=3)
	parser.add_argument("--first-run", action="store_true")
	parser.add_argument("--profile", default="")
	parser.add_argument(
		"--async-tool",
		action="store_true",
		help="figure 3: the tool as an async def (no worker-thread handoff per call)",
	)
	parser.add_argument("--bodies", default="", help="figure 3's bare loop: recorded bodies (JSON)")
	args = parser.parse_args()
	out = FIGURES[args.figure](args)
	print(json.dumps(out), flush=True)


if __name__ == "__main__":
	main()
