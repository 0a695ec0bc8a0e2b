"""A secret the model writes (decoded from a spelling no mask knows, or seen before it was known)
reaches no event, tool input or result: the reply is read masked, as a durable journal keeps it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.events import EVENT_NAMES
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

KEY = "sk-live-ModelEcho-0042"


async def test_a_secret_in_the_model_s_reply_shows_nowhere() -> None:
	got: list[Any] = []

	async def echo(i: dict[str, Any], ctx: Any) -> Any:
		got.append(i)
		return {"ok": True}

	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=False)
	model = ScriptedModel([call_tool("local.echo", v=KEY), finish(done=KEY)])
	tool = FunctionTool(handle="echo", description="d", function=echo)
	agent = om.create_agent(name="A", model=model, tools=[tool])
	seen: list[str] = []
	for name in EVENT_NAMES:
		if name != "schedule":
			agent.on(name, lambda e: seen.append(repr(e)))
	result = await agent.run("go")
	assert got == [{"v": "[redacted]"}]  # the tool never gets what the model should not have
	assert result.output == {"done": "[redacted]"}
	texts = [*seen, repr(result), json.dumps(result.to_dict()), json.dumps(result.state.to_dict())]
	assert any("llmOutput" in t or "LLMOutput" in t for t in seen)
	for text in texts:
		assert KEY not in text, text


def _escaped(text: str, every: int) -> str:
	"""``text`` as a JSON string's content with every ``every``-th letter or digit ``\\u``-escaped."""
	out, n = [], 0
	for char in json.dumps(text)[1:-1]:
		n += char.isalnum()
		out.append(f"\\u{ord(char):04x}" if char.isalnum() and n % every == 0 else char)
	return "".join(out)


def _spelled(secret: str) -> dict[str, str]:
	import base64
	from urllib.parse import quote

	return {
		"raw": secret,
		"percent": quote(secret, safe=""),
		"base64": base64.b64encode(secret.encode()).decode(),
		"hex": secret.encode().hex(),
	}


SLASHED = "sk-live-Mod/el+Echo:0042"  # a secret whose percent-encoding differs from it


@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("spelling", ["raw", "percent", "base64", "hex"])
async def test_a_spelling_behind_json_escapes_in_the_reply_shows_nowhere(
	spelling: str, every: int
) -> None:
	"""A spelling of a secret the reply writes with some characters as JSON ``\\u`` escapes is
	masked: the reply text was masked as written, then decoded by the parser (the base64,
	percent-encoded or hex secret reached the tool, the events, the result and the state)."""
	from tests._leaks import leaks

	got: list[Any] = []

	async def echo(i: dict[str, Any], ctx: Any) -> Any:
		got.append(i)
		return {"ok": True}

	said = _spelled(SLASHED)[spelling]
	call = json.dumps({"commands": [call_tool("local.echo", v="@")]}).replace(
		'"@"', f'"see {_escaped(said, every)} now"'
	)
	end = json.dumps({"commands": [finish("ok", human_message="@")]}).replace(
		'"@"', f'"the key: {_escaped(said, every)}."'
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(SLASHED)
	tool = FunctionTool(handle="echo", description="d", function=echo)
	agent = om.create_agent(name="A", model=ScriptedModel([call, end]), tools=[tool])
	seen: list[str] = []
	for name in EVENT_NAMES:
		agent.on(name, lambda e: seen.append(repr(e)))
	result = await agent.run("go")
	texts = [
		json.dumps(got),
		*seen,
		json.dumps(result.to_dict()),
		json.dumps(result.state.to_dict()),
	]
	for text in texts:  # read as a JSON reader reads it: the escapes decoded, at each depth
		for _ in range(3):
			text = text.encode().decode("unicode_escape", "ignore")
			assert not leaks(text, SLASHED), (spelling, text)
	assert got == [{"v": "see [redacted] now"}]
	assert result.human_message == "the key: [redacted]."


class _Streams:
	"""A provider that streams its replies' text a few characters at a time."""

	name = "streams"
	model = "s1"

	def __init__(self, *texts: str, size: int = 3) -> None:
		self.texts = list(texts)
		self.size = size

	async def generate(self, request: Any) -> Any:
		raise AssertionError("a run that streams asks stream()")

	async def stream(self, request: Any) -> Any:
		from openmolt_core.llm import ModelResponse, Usage
		from openmolt_core.streaming import TextDelta

		text = self.texts.pop(0)
		for i in range(0, len(text), self.size):
			yield TextDelta(text[i : i + self.size])
		yield ModelResponse(text=text, usage=Usage(input_tokens=1, output_tokens=1))


@pytest.mark.parametrize("size", [1, 4, 7])
@pytest.mark.parametrize("spelling", ["raw", "percent", "base64", "hex"])
async def test_a_streamed_message_with_an_escaped_spelling_is_the_result_s_message(
	spelling: str, size: int
) -> None:
	"""The streamed text (decoded, then masked) and the run's message (masked, then decoded)
	are the same words: an escaped secret made the whole message ``[redacted]`` in the result."""
	said = _spelled(SLASHED)[spelling]
	end = json.dumps({"commands": [finish("ok", human_message="@")]}).replace(
		'"@"', f'"the key: {_escaped(said, 3)}, kept."'
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(SLASHED)
	agent = om.create_agent(name="A", model=_Streams(end, size=size))
	async with agent.stream("go") as run:
		deltas = [
			getattr(e, "text", "") async for e in run if getattr(e, "field", "") == "humanMessage"
		]
		result = await run.result()
	assert "".join(deltas) == result.human_message == "the key: [redacted], kept."
