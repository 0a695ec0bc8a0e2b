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
