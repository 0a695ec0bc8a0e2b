"""A resumed run's state is masked whole: every field a saved state brings from before.

A state saved before a secret was known (one the run learned, a key added to the instance
later) holds it raw: in its turns, and in what else it carries (the files sent with its input
under ``ext["inputFiles"]``, a capability's ``ext``, its plan, its audit). Resumed where the secret
is known, the state the run goes on with, and saves again, shows it in no spelling.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from openmolt import Attachment, HumanInputUnavailable, OpenMolt
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, ask_human, finish
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

LATER = "learned-during-the-run-0123456789"


async def test_a_secret_learned_mid_run_is_masked_in_every_field_of_the_state_resumed() -> None:
	"""ext["inputFiles"], plan, audit and taint are masked on resume."""
	om = OpenMolt(entry_points=False)

	def learn(_: Any) -> dict[str, Any]:
		om.secrets.add(LATER)  # a token the run obtained: known from now on
		return ask_human("Which one?")

	agent = om.create_agent(name="A", model=ScriptedModel([learn, finish("ok")]))

	def later(question: str) -> str:
		raise HumanInputUnavailable(question)  # nobody there now: the run parks

	agent.on_human_input_request = later
	text = base64.b64encode(b"a receipt").decode()
	parked = await agent.run("Look", attachments=[Attachment("text/plain", text, f"{LATER}.txt")])
	assert parked.status == "human_input_required"
	saved = parked.state.to_dict()
	assert leaks(json.dumps(saved["ext"]["inputFiles"]), LATER)  # kept before it was known
	# What else a state saved so may carry from before.
	saved["ext"]["custom"] = {"note": f"key {LATER}", "nested": [{"deep": LATER}]}
	saved["plan"] = [{"step": f"use {LATER}", "status": "pending"}]
	saved["audit"] = [{"by": "policy", "what": f"saw {LATER}"}]
	saved["taint"] = [{"call": "c1", "tool": f"fetch {LATER}", "step": 1}]

	resumed = await agent.resume(RunState.from_dict(saved), answer="the first")
	assert resumed.status == "success"
	shown = resumed.state.to_dict()
	del shown["ext"]["custom"]
	assert leaks(json.dumps(shown), LATER) == []
	files = resumed.state.ext["inputFiles"]
	assert files[0]["name"] == "[redacted].txt" or LATER not in json.dumps(files)
	# A capability's own ext is its working state, as it kept it (the stores mask it).
	assert resumed.state.ext["custom"]["nested"][0]["deep"] == LATER
	await om.aclose()


async def test_a_parked_call_runs_with_its_arguments_when_a_secret_in_them_became_known() -> None:
	"""An approved call whose input holds a secret learned after the park runs as approved."""
	from openmolt import FunctionTool
	from openmolt_core.testing import call_tool

	om = OpenMolt(entry_points=False)
	sent: list[str] = []
	send = FunctionTool(
		"send",
		"Send.",
		lambda i, c: sent.append(i["text"]) or "sent",
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
		labels=[],
	)
	model = ScriptedModel([call_tool("local.send", text=f"key {LATER}"), finish("ok")])
	agent = om.create_agent(name="A", model=model, tools=[send], requires_approval=["local.send"])
	parked = await agent.run("go")
	assert parked.status == "approval_required"
	om.secrets.add(LATER)  # known from now on: the request shows it masked
	(request,) = agent.approval_requests(parked.state)
	assert LATER not in json.dumps(request.input)
	resumed = await agent.resume(parked.state, decision=request.approve())
	assert resumed.status == "success"
	assert sent == [f"key {LATER}"]  # the tool got the argument, not [redacted]
	await om.aclose()
