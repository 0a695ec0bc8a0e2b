"""A one-shot run from a fresh process: import, configure, one tool call, finish (figure 7).

    python benchmarks/oneshot.py openmolt --port P      # OpenMolt, OpenAI Chat Completions
    python benchmarks/oneshot.py openmolt-responses --port P
    python benchmarks/oneshot.py agno --port P          # the same run with Agno (benchmark group)

This is the library's one-shot (``import openmolt``, ``anyio.run``): what a script pays that runs
one agent once. The ``openmolt`` command's one-shot, which parses its arguments, reads its keys,
records the run and owns its process's collector, is timed beside it by ``run.py`` (the
command's row of figure 7, and its time to the first model request). The clock starts before
anything else is imported (``time`` is built in), so the figure includes every import the run
needs; the driver (``run.py``) also times the whole process from spawn to exit. Prints one JSON
line: the in-process milliseconds, the peak RSS of this process (``VmHWM``: the peak since
``exec``, so not the driver's), and the modules loaded.
"""

import time

T0 = time.perf_counter()

import sys  # noqa: E402  # after the clock starts, on purpose

MODULES0 = len(sys.modules)


def add(a: float, b: float) -> float:
	"""Add two numbers."""
	return a + b


def peak_rss_kib() -> int:
	with open("/proc/self/status") as f:
		for line in f:
			if line.startswith("VmHWM:"):
				return int(line.split()[1])
	return 0


def run_openmolt(port: int, api_mode: str) -> str:
	import anyio

	from openmolt import FunctionTool, OpenMolt

	schema = {
		"type": "object",
		"properties": {"a": {"type": "number"}, "b": {"type": "number"}},
		"required": ["a", "b"],
	}

	async def main() -> str:
		settings = {
			"openai": {
				"api_key": "sk-bench",
				"base_url": f"http://127.0.0.1:{port}/v1",
				"api_mode": api_mode,
			}
		}
		async with OpenMolt(llm_providers=settings) as om:
			tool = FunctionTool(
				"add", "Add two numbers.", lambda i, c: add(i["a"], i["b"]), input_schema=schema
			)
			agent = om.create_agent(
				name="bench",
				model="openai:gpt-5-mini-steps1",
				instructions="Add the numbers, one tool call, then finish.",
				tools=[tool],
			)
			result = await agent.run("add 0 and 1")
			if result.status != "success" or result.steps != 2:
				raise SystemExit(f"unexpected run: {result.status} {result.error}")
			return str(result.status)

	return anyio.run(main)


def run_agno(port: int) -> str:
	from agno.agent import Agent
	from agno.models.openai import OpenAIChat

	agent = Agent(
		model=OpenAIChat(
			id="gpt-5-mini-native-steps1",
			api_key="sk-bench",
			base_url=f"http://127.0.0.1:{port}/v1",
		),
		tools=[add],
		instructions="Add the numbers, one tool call, then finish.",
		telemetry=False,
	)
	result = agent.run("add 0 and 1")
	content = str(result.content)
	if "1" not in content:
		raise SystemExit(f"unexpected run: {content!r}")
	return "success"


def main() -> None:
	framework = sys.argv[1]
	port = int(sys.argv[sys.argv.index("--port") + 1])
	if framework == "openmolt":
		status = run_openmolt(port, "chat")
	elif framework == "openmolt-responses":
		status = run_openmolt(port, "responses")
	elif framework == "agno":
		status = run_agno(port)
	else:
		raise SystemExit(f"unknown framework {framework!r}")
	t1 = time.perf_counter()
	import json

	print(
		json.dumps(
			{
				"ms": (t1 - T0) * 1000,
				"peak_rss_kib": peak_rss_kib(),
				"modules": len(sys.modules) - MODULES0,
				"status": status,
			}
		),
		flush=True,
	)


if __name__ == "__main__":
	main()
