"""What a durable run journals (its input, steps, output, events) holds no spelling of a secret."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

from .test_journal_secrets import _stored

KEY = "sk-live-journal-spelled-0042"


@pytest.mark.anyio
async def test_no_spelling_of_a_secret_is_journaled(url: str) -> None:
	async def leak(i: dict[str, Any], ctx: Any) -> Any:
		return {"hex": KEY.encode().hex(), "b64": base64.b64encode(KEY.encode()).decode()}

	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY])
	tool = FunctionTool(handle="leak", description="d", function=leak)
	model = ScriptedModel([call_tool("local.leak"), finish(result=f"done {KEY}")])
	agent = om.create_agent(name="Spelled", model=model, tools=[tool])
	result = await agent.run(f"use {KEY} and {KEY.encode().hex().upper()}")
	stored = _stored(url, result.state.run_id)
	assert "local.leak" in stored
	for spelling in (KEY, KEY.encode().hex(), KEY.encode().hex().upper()):
		assert spelling not in stored, spelling
	await om.aclose()
