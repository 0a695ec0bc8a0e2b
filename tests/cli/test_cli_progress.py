"""The progress line: step k of N, elapsed time, tokens and cost, and no stale event."""

import io
import json

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._progress import Progress
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.testing import finish
from openmolt_core.tools import FunctionTool

pytestmark = pytest.mark.anyio


class Watching:
	"""A model that notes what the spinner says while it is being called."""

	def __init__(self, progress: Progress, replies: list) -> None:
		self.name = "watching"
		self.model = "watching"
		self.progress = progress
		self.replies = replies
		self.seen: list[str] = []

	async def generate(self, request) -> ModelResponse:
		self.seen.append(self.progress._text())
		reply = self.replies[len(self.seen) - 1]
		return ModelResponse(
			text=json.dumps({"commands": reply}),
			usage=Usage(input_tokens=100, output_tokens=20, cost_usd=0.0015, calls=1),
		)


async def test_the_spinner_shows_the_step_the_budget_time_tokens_and_cost() -> None:
	"""During the second model call the line says step 2/5 and what the first one cost."""
	stream = io.StringIO()
	progress = Progress("spinner", stream)
	shout = FunctionTool(
		handle="shout",
		description="Shout.",
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
		function=lambda input, ctx: input["text"].upper(),
	)
	model = Watching(
		progress,
		[
			[{"type": "callTool", "tool": "local.shout", "input": {"text": "hi"}}],
			[finish(done=True)],
		],
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Shouter", model=model, tools=[shout], max_steps=5)
	progress.attach(agent)
	progress.start(agent.name, agent.max_steps)
	result = await agent.run("x")
	assert result.status == "success"
	first, second = model.seen
	assert first.startswith("Shouter step 1/5 · ") and first.endswith(": asking the model")
	assert second.startswith("Shouter step 2/5 · ")
	assert "120 tokens · $0.0015: asking the model" in second
	assert " s · " in second
	out = stream.getvalue()
	assert "calling local.shout" in out
	assert "Shouter finished: success after 2 steps, 240 tokens, $0.0030" in out


async def test_verbose_keeps_one_line_per_event() -> None:
	"""--verbose lines: each model reply, command list and tool result once."""
	stream = io.StringIO()
	progress = Progress("plain", stream, verbose=True)
	model = Watching(progress, [[finish(done=True)]])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=model)
	progress.attach(agent)
	progress.start(agent.name, agent.max_steps)
	await agent.run("x")
	lines = stream.getvalue().splitlines()
	assert sum("the model replied (100 in, 20 out, 0 cached tokens)" in line for line in lines) == 1
	assert sum("commands: finish" in line for line in lines) == 1


@pytest.mark.parametrize("mode", ["plain", "spinner", "json"])
async def test_an_output_guardrail_that_refuses_says_why_each_time(mode) -> None:
	"""A max_size output guardrail with no action refuses the finish: the model tries again
	until max_steps; each refusal is a line saying why (an event in --json), and the end line
	counts in the singular for one."""
	from openmolt_core.guardrails import max_size

	stream = io.StringIO()
	progress = Progress(mode, stream)
	model = Watching(progress, [[finish("x" * 50)]] * 2)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A", model=model, max_steps=2, guardrails=[max_size(10, on="output")]
	)
	progress.attach(agent)
	progress.start(agent.name, agent.max_steps)
	result = await agent.run("x")
	assert result.status == "limit_reached"
	text = stream.getvalue()
	if mode == "json":
		events = [json.loads(line) for line in text.splitlines()]
		refused = [e for e in events if e["event"] == "guardrail"]
		assert [(e["guardrail"], e["stage"], e["action"]) for e in refused] == [
			("max_size", "output", "refuse")
		] * 2
		assert "more than the 10 allowed" in refused[0]["reason"]
		return
	lines = [line for line in text.splitlines() if "guardrail 'max_size'" in line]
	assert len(lines) == 2, text
	assert lines[0].endswith(
		"A step 1: guardrail 'max_size' refused the answer (the output is 50 characters, more "
		"than the 10 allowed); the model is asked to fix it"
	), lines[0]
	assert "after 2 steps" in text


def test_an_error_event_of_many_lines_is_a_bounded_readable_line() -> None:
	"""A tool error of 2,000 lines is said in its first lines, escaped, with a note; --json's
	event keeps it whole."""
	from openmolt_core.events import ErrorEvent

	message = "\x1b[2Jthe API said:\n" + "\n".join(f"row {n}" for n in range(2000))
	for mode in ("plain", "json"):
		stream = io.StringIO()
		progress = Progress(mode, stream)
		progress.event(ErrorEvent(agent="A", step=1, run_id="r", kind="tool", message=message))
		text = stream.getvalue()
		if mode == "json":
			assert json.loads(text)["message"] == message
			continue
		assert text.startswith("openmolt: step 1: tool: \\u001b[2Jthe API said:\n  row 0\n")
		assert len(text.splitlines()) <= 25 and "more lines" in text and "\x1b" not in text


def test_a_long_one_line_error_with_its_fix_is_said_whole() -> None:
	"""A provider's one-line error of a few hundred characters keeps its hint and link whole."""
	from openmolt_core.events import ErrorEvent

	message = (
		"ollama:llama3.2: nothing listens at http://localhost:11434/v1 (the connection failed): "
		"start the server, e.g. `ollama serve` (Ollama), `vllm serve MODEL` (vLLM) or "
		"`llama-server -m MODEL.gguf` (llama.cpp), or fix llmProviders.ollama.baseUrl in the "
		"agent file (or OPENMOLT_OLLAMA_BASE_URL) "
		"(https://github.com/openmolt/openmolt/blob/main/docs/guides/local-models.md)"
	)
	stream = io.StringIO()
	Progress("plain", stream).event(
		ErrorEvent(agent="A", step=1, run_id="r", kind="provider", message=message)
	)
	text = stream.getvalue()
	assert message in text and "cut" not in text, text


async def test_a_tool_result_line_names_the_step_that_called_it() -> None:
	"""--verbose: the result of a tool step 1 called is on a 'step 1/5' line, not the next step's;
	token counts are written with thousands separators."""
	stream = io.StringIO()
	progress = Progress("plain", stream, verbose=True)
	shout = FunctionTool(
		handle="shout",
		description="Shout.",
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
		function=lambda input, ctx: input["text"].upper(),
	)

	class Big(Watching):
		async def generate(self, request) -> ModelResponse:
			reply = await super().generate(request)
			reply.usage = Usage(input_tokens=12345, output_tokens=20, calls=1)
			return reply

	model = Big(
		progress,
		[
			[{"type": "callTool", "tool": "local.shout", "input": {"text": "hi"}}],
			[finish(done=True)],
		],
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Shouter", model=model, tools=[shout], max_steps=5)
	progress.attach(agent)
	progress.start(agent.name, agent.max_steps)
	await agent.run("x")
	lines = stream.getvalue().splitlines()
	(called,) = [line for line in lines if "local.shout ok" in line]
	assert "Shouter step 1/5 · " in called
	assert any("the model replied (12,345 in, 20 out, 0 cached tokens)" in line for line in lines)
