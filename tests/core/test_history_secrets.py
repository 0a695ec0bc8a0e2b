"""A saved state resumed where more secrets are known is masked: its turns go to the model again
and into the result (a state saved by a process that did not know the secret, or before it was
one)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_memory

pytestmark = pytest.mark.anyio

KEY = "sk-live-History-0042"


async def test_a_resumed_state_is_masked_with_the_secrets_known_now() -> None:
	async def noop(i: dict[str, Any], ctx: Any) -> Any:
		return "ok"

	tool = FunctionTool(handle="noop", description="d", function=noop)
	before = OpenMolt(entry_points=False, max_steps=1)  # knows nothing of the key
	first = await before.create_agent(
		name="A", model=ScriptedModel([call_tool("local.noop")]), tools=[tool]
	).run(f"remember {KEY}")
	assert first.status == "limit_reached" and KEY in json.dumps(first.state.to_dict())
	saved = first.state.to_dict()
	saved["memory"]["shortTerm"] = f"the key is {KEY}"

	now = OpenMolt(entry_points=False, secrets=[KEY])
	model = ScriptedModel([update_memory("noted"), finish(done=True)])
	result = await now.create_agent(name="A", model=model, tools=[tool]).run(history=saved)
	sent = json.dumps([[m.role, m.content] for r in model.requests for m in r.messages])
	assert "[redacted]" in sent and KEY not in sent
	assert KEY not in json.dumps(result.state.to_dict()) and KEY not in repr(result)
