"""A capability that refuses what a resume delivers: a clear error naming it, the state kept parked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.hooks import Park, Proceed, Run
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_capabilities import Till
from tests.core.test_capability_hooks import Pure, Tickets

pytestmark = pytest.mark.anyio

SECRET = "sk-hold-desk-12345"


class Desk(Capability):
	"""Parks each payment until given "yes"; anything else is refused by raising (with a secret)."""

	name: ClassVar[str] = "desk"

	async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
		if run.state.ext.get("desk", {}).get("ok"):
			return Proceed()
		return Park("the desk decides", {"ticket": 7})

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		if given != "yes":
			raise ValueError(f"ticket {parked['ticket']} needs 'yes', not {given!r} ({SECRET})")
		run.state.ext["desk"] = {"ok": True}


def _refused(caught: pytest.ExceptionInfo[RunError], hook: str, capability: str) -> str:
	message = str(caught.value)
	assert f"capability {capability!r} refused what was delivered" in message
	assert f"its {hook} hook raised" in message and "failed unexpectedly" not in message
	assert "resume it again" in message and SECRET not in message
	assert caught.value.result.state.pending is not None  # still parked: resume it again
	return message


async def test_a_resume_the_capability_refuses_names_it_and_keeps_the_state() -> None:
	"""Its resume raises: RunError naming the capability and why; the kept state resumes again."""
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")])
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)
	agent = om.create_agent(name="A", model=model, tools=till.tools, capabilities=[Desk()])
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	with pytest.raises(RunError) as caught:
		await agent.resume(parked.state.to_dict(), given="maybe")
	assert "ticket 7 needs 'yes', not 'maybe'" in _refused(caught, "resume", "desk")
	assert till.ran == []
	kept = RunState.from_dict(caught.value.result.state.to_dict())
	done = await agent.resume(kept, given="yes")
	assert done.status == "success" and till.ran == [{"amount": 5}]


class Brittle(Tickets):
	"""A gate whose receive, resume and requests raise what is not an OpenMoltError."""

	name: ClassVar[str] = "brittle"

	def receive(self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None) -> Any:
		if given == "bad":
			raise KeyError("no such ticket")
		return super().receive(run, parked, given, answer)

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		if given == "LATE":
			raise TimeoutError("the ticket office closed")
		await super().resume(run, parked, given)

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[Any]:
		raise LookupError("the ticket office is unreachable")


async def test_every_hook_a_resume_calls_refuses_with_the_same_clear_error() -> None:
	"""receive, resume and requests of a gate's own kind: each names the capability and the hook."""
	from openmolt_core.hooks import Approve

	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=model,
		tools=till.tools,
		capabilities=[Brittle(), Pure(Approve("r"))],
		on_approval_request=lambda request: request.approve(),
	)
	parked = await agent.run("pay")
	saved = parked.state.to_dict()
	assert saved["pending"]["kind"] == "ticket"
	with pytest.raises(RunError) as caught:
		await agent.resume(RunState.from_dict(saved), decision="bad")
	assert "no such ticket" in _refused(caught, "receive", "brittle")
	with pytest.raises(RunError) as caught:
		await agent.resume(RunState.from_dict(saved), decision="late")
	assert "the ticket office closed" in _refused(caught, "resume", "brittle")
	with pytest.raises(RunError) as caught:
		agent.approval_requests(saved)
	assert "unreachable" in _refused(caught, "requests", "brittle")
	assert till.ran == []
	done = await agent.resume(RunState.from_dict(saved), decision="t-1")
	assert done.status == "success" and till.ran == [{"amount": 5}]


class Recording(Capability):
	"""Parks each payment until given "yes", and notes every state its resume was handed."""

	name: ClassVar[str] = "recording"

	def __init__(self) -> None:
		self.handed: list[RunState] = []

	async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
		if run.state.ext.get("recording", {}).get("ok"):
			return Proceed()
		return Park("the desk decides", {"ticket": 7})

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		self.handed.append(run.state)
		run.state.ext["recording"] = {"ok": given == "yes"}


async def test_resume_is_asked_twice_per_delivery_first_on_a_copy_of_the_state() -> None:
	"""As `Capability.resume` says: a delivery is checked on a copy of the parked state first
	(before the run store or a durable engine takes the run), then the step goes on and resume
	is asked again, on the run's own state; the first call's changes are not the run's."""
	desk = Recording()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")])
	till = Till()
	agent = OpenMolt(entry_points=False).create_agent(
		name="Payer", model=model, tools=till.tools, capabilities=[desk]
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	done = await agent.resume(parked.state, given="yes")
	assert done.ok
	copy, real = desk.handed
	assert copy is not real and real is agent.last_state
	assert copy.run_id == real.run_id and till.ran == [{"amount": 5}]
