"""Compaction keeps long runs inside the window, with a byte-stable prefix between compactions."""

import itertools
import json
from dataclasses import replace
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt, RunState
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import CompactionConfig, estimate_tokens
from openmolt_core.testing import call_tool, finish, update_memory, update_plan

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Counting:
	"""A model that counts its prompt's tokens like a provider and follows a script by step."""

	name = "counting"

	def __init__(self, reply: Any) -> None:
		self.reply = reply
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		tokens = estimate_tokens(request.messages, request.system)
		text = self.reply(len(self.requests), request)
		return ModelResponse(text=json.dumps({"commands": text}), usage=Usage(tokens, 20, calls=1))


class Summariser:
	name = "summariser"

	def __init__(self) -> None:
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(request)
		steps = json.loads(request.messages[0].content)["steps"]
		return ModelResponse(
			text=f"summary of {len(steps) // 2} steps", usage=Usage(100, 10, calls=1)
		)


def echo(i: int, pad: str) -> dict[str, Any]:
	"""Echo a step."""
	return {"i": i, "file": f"openmolt-file:step{i}.bin" if i == 7 else None, "pad": pad}


def script(steps: int) -> Any:
	def reply(call: int, request: ModelRequest) -> list[dict[str, Any]]:
		if call == 1:
			return [update_plan("collect", "report"), update_memory("customer cus_42")]
		if call >= steps:
			return [finish("done")]
		return [call_tool("local.echo", i=call, pad="x" * 300)]

	return reply


def agent_for(model: Any, **options: Any) -> Any:
	om = OpenMolt(entry_points=False, max_steps=1000)
	return om.create_agent(name="Long", model=model, tools=[echo], **options)


async def test_a_300_step_run_stays_under_its_window() -> None:
	"""Every request of a 300-step run stays under the threshold; compaction happens in chunks."""
	model = Counting(script(300))
	summariser = Summariser()
	agent = agent_for(model, compaction=CompactionConfig(threshold_tokens=6000, keep_steps=4))
	agent.compactor = lambda: (summariser, "cheap")
	events: list[Any] = []
	agent.on("compaction", events.append)
	result = await agent.run("work long")
	assert result.status == "success" and result.steps == 300
	sizes = [estimate_tokens(r.messages, r.system) for r in model.requests]
	assert max(sizes) <= 6000 + 300  # one step's growth past the check at most
	assert 5 <= len(events) <= 40 and len(summariser.requests) == len(events)
	assert all(e.tokens_after < e.tokens_before for e in events)
	# chunks are large: at least a dozen steps between compactions
	steps = [e.step for e in events]
	assert min(b - a for a, b in itertools.pairwise(steps)) >= 12


async def test_the_prefix_is_byte_stable_between_compactions() -> None:
	"""Between compactions each request extends the previous one; after one, the static start stays."""
	model = Counting(script(120))
	agent = agent_for(model, compaction={"threshold_tokens": 5000, "keep_steps": 3})
	agent.compactor = lambda: (Summariser(), "cheap")
	compacted: list[int] = []
	agent.on("compaction", lambda e: compacted.append(e.step))
	await agent.run("go")
	assert compacted
	static = model.requests[0].messages[0].content[:-60]
	for number, (before, after) in enumerate(
		zip(model.requests, model.requests[1:], strict=False), 2
	):
		assert after.system == before.system
		assert after.messages[0].content.startswith(static)
		if number in compacted:
			assert '"compacted":' in after.messages[0].content
			continue
		assert [m.content for m in after.messages[: len(before.messages)]] == [
			m.content for m in before.messages
		]


async def test_plan_memory_and_file_references_are_kept_verbatim() -> None:
	"""The compacted block holds the plan, the memory and every file reference of the old steps."""
	model = Counting(script(40))
	agent = agent_for(model, compaction={"thresholdTokens": 3000, "keepSteps": 2})
	agent.compactor = lambda: (Summariser(), "cheap")
	result = await agent.run("go")
	block = json.loads(result.state.messages[0].content)["compacted"]
	assert block["plan"][0]["name"] == "collect"
	assert block["memory"]["shortTerm"] == "customer cus_42"
	assert "openmolt-file:step7.bin" in block["files"]
	assert block["summary"].startswith("summary of")
	assert result.state.compaction is not None and result.state.compaction["count"] >= 1
	assert json.loads(result.state.compaction["first"])["input"] == "go"


async def test_a_compacted_run_resumes_with_the_same_history() -> None:
	"""The compacted history is the state's: a resume from JSON continues it unchanged."""
	model = Counting(script(1000))
	agent = agent_for(model, compaction={"threshold_tokens": 3000, "keep_steps": 2}, max_steps=60)
	agent.compactor = lambda: (Summariser(), "cheap")
	first = await agent.run("go")
	assert first.status == "limit_reached" and first.state.compaction is not None
	saved = json.loads(json.dumps(first.state.to_dict()))
	again_model = Counting(lambda call, request: [finish("ok")])
	again = agent_for(again_model, compaction={"threshold_tokens": 3000, "keep_steps": 2})
	again.compactor = lambda: (Summariser(), "cheap")
	await again.run(history=RunState.from_dict(saved))
	assert [m.content for m in again_model.requests[0].messages[:-1]] == [
		m.content for m in first.state.messages[:-1]
	]


async def test_no_compaction_when_turned_off_and_bad_options_are_refused() -> None:
	"""compaction=False never summarises; unknown keys name the allowed ones."""
	model = Counting(script(30))
	agent = agent_for(model, compaction=False)
	result = await agent.run("go")
	assert result.state.compaction is None
	with pytest.raises(ConfigurationError, match="unknown key"):
		agent_for(model, compaction={"treshold": 5})


def test_the_threshold_follows_the_providers_context_window() -> None:
	"""Built-in providers know their models' windows; a setting overrides it (local models)."""
	om = OpenMolt(
		llm_providers={"openai": {"api_key": "k"}, "anthropic": {"context_window": 32_000}}
	)
	assert om.provider("openai").context_window("gpt-5-mini") == 400_000  # type: ignore[attr-defined]
	assert om.provider("google").context_window("gemini-2.5-pro") == 1_048_576  # type: ignore[attr-defined]
	assert om.provider("anthropic").context_window("claude-sonnet-4-5") == 32_000  # type: ignore[attr-defined]
	assert om.provider("openai").context_window("llama3") is None  # type: ignore[attr-defined]
