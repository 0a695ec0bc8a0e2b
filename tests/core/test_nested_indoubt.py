"""Agents run inside one journaled step of a durable run, found under way after a crash.

A guardrail agent's run, like a sub-agent's, is not journaled step by step: in doubt, it would
start again from its first step and make its tool calls again. It follows the strictest in-doubt
policy of its tools (``ask`` at least when it may send data out), and a guardrail's verdict fails
closed instead of running again when that policy is not ``retry``.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests.core.test_durability import JournalPort, _DoubtPort

pytestmark = pytest.mark.anyio


def _judge(
	om: OpenMolt, ran: list[str], labels: list[str], model: ScriptedModel | None = None
) -> Any:
	@tool(labels=labels)
	def alert(text: str) -> str:
		"""Tell the security team.

		Args:
			text: What happened.
		"""
		ran.append(text)
		return "done"

	model = model or ScriptedModel(
		[call_tool("local.alert", text="look"), finish(action="allow", reason="fine")]
	)
	return om.create_agent(name="Judge", model=model, tools=[alert], output_schema=VERDICT_SCHEMA)


@pytest.mark.parametrize("on", ["input", "tool_call", "output"])
async def test_a_guardrail_agent_that_sends_is_not_run_again_in_doubt_and_fails_closed(
	on: str,
) -> None:
	"""A guardrail agent with an outbound tool, under way at a crash, fails closed unrun."""
	om = OpenMolt()
	ran: list[str] = []
	sent: list[str] = []

	@tool
	def send(text: str) -> str:
		"""Send.

		Args:
			text: The text.
		"""
		sent.append(text)
		return "ok"

	guard = Guardrail(_judge(om, ran, ["outbound"]), on=on)  # type: ignore[arg-type]
	model = ScriptedModel([call_tool("local.send", text="hi"), finish(), finish()])
	agent = om.create_agent(name="A", model=model, tools=[send], guardrails=[guard])
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert ran == []  # the guardrail agent's alert did not go out a second time
	assert any(k.startswith("guard:") for k in port.starts)
	if on == "tool_call":
		assert sent == []  # the call it guards is refused, not let through
		assert result.status == "success"
	else:
		assert result.status == "guardrail_tripped"
		assert "in doubt" in (result.error or "")
	await om.aclose()


async def test_a_guardrail_agent_whose_tools_may_repeat_runs_again() -> None:
	"""A guardrail agent with only retry-safe tools is judged again; no start is recorded."""
	om = OpenMolt()
	ran: list[str] = []
	guard = Guardrail(_judge(om, ran, []), on="input")
	model = ScriptedModel([finish()])
	agent = om.create_agent(name="A", model=model, guardrails=[guard])
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert result.status == "success", result.error
	assert ran == ["look"]
	assert not any(k.startswith("guard:") for k in port.starts)
	await om.aclose()


class _StartsPort(JournalPort):
	"""A fresh journal each execution, with the run's recorded starts kept across them."""

	def __init__(self, starts: set[str]) -> None:
		super().__init__()
		self.starts = starts

	async def call_started(self, key: str) -> bool:
		before = key in self.starts
		self.starts.add(key)
		return before


async def test_a_guardrail_agent_checks_a_call_again_when_its_run_resumes_after_approval() -> None:
	"""A call parked for approval is judged again on resume: not in doubt, the call runs."""
	om = OpenMolt()
	ran: list[str] = []
	sent: list[str] = []

	@tool(labels=["outbound"])
	def send(text: str) -> str:
		"""Send.

		Args:
			text: The text.
		"""
		sent.append(text)
		return "ok"

	judge_model = ScriptedModel(
		[
			call_tool("local.alert", text="look"),
			finish(action="allow", reason="fine"),
			call_tool("local.alert", text="again"),
			finish(action="allow", reason="fine"),
		]
	)
	judge = _judge(om, ran, ["outbound"], judge_model)
	model = ScriptedModel([call_tool("local.send", text="hi"), finish()])
	agent = om.create_agent(
		name="A",
		model=model,
		tools=[send],
		guardrails=[Guardrail(judge, on="tool_call")],
		requires_approval=["local.send"],
	)
	starts: set[str] = set()
	parked = await agent.execute(agent.new_state("go"), port=_StartsPort(starts))  # type: ignore[attr-defined]
	assert parked.status == "approval_required", parked.error
	[request] = agent.approval_requests(parked.state)
	result = await agent.execute(  # type: ignore[attr-defined]
		parked.state, port=_StartsPort(starts), decisions=[request.approve()]
	)
	assert result.status == "success", result.error
	assert sent == ["hi"]
	assert ran == ["look", "again"]
	await om.aclose()


async def test_a_sub_agent_whose_guardrail_agent_sends_is_asked_about_in_doubt() -> None:
	"""A sub-agent with read tools only, guarded by an agent that sends: its call asks in doubt."""
	from openmolt_core.agent import HumanInputUnavailable

	om = OpenMolt()
	ran: list[str] = []

	@tool(labels=[])
	def look(q: str) -> str:
		"""Look something up.

		Args:
			q: The query.
		"""
		return "found"

	def nobody(question: str) -> str:
		raise HumanInputUnavailable(question)

	guard = Guardrail(_judge(om, ran, ["outbound"]), on="input")
	clerk = om.create_agent(
		name="Clerk", model=ScriptedModel([finish()]), tools=[look], guardrails=[guard]
	)
	plain = om.create_agent(name="Plain", model=ScriptedModel([finish()]), tools=[look])
	model = ScriptedModel([call_tool("local.Clerk", task="do it"), finish()])
	agent = om.create_agent(
		name="A", model=model, tools=[clerk, plain], on_human_input_request=nobody
	)
	assert agent.in_doubt == {"local.Clerk": "ask", "local.Plain": "retry"}
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert ran == []  # neither the sub-agent nor its guardrail agent ran again
	assert result.status == "human_input_required"
	await om.aclose()


class _FreshPort(JournalPort):
	"""A durable-like port on which no call had started before (a first execution)."""

	def __init__(self) -> None:
		super().__init__()
		self.starts: list[str] = []

	async def call_started(self, key: str) -> bool:
		self.starts.append(key)
		return False


def _nesting_tool(om: OpenMolt, paid: list[int], labels: list[str], runs: int = 1) -> Any:
	@tool(labels=labels)
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	payer = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=7), finish("paid")] * runs),
		tools=[pay],
	)

	async def settle(invoice: str, context: ToolContext) -> str:
		"""Settle an invoice with runs of Payer nested in this call.

		Args:
			invoice: The invoice.
			context: The call's context.
		"""
		for _ in range(runs):
			await payer.run(f"pay {invoice}", parent=context.run)
		return "settled"

	return settle


async def test_a_run_a_tool_nests_is_in_doubt_when_an_earlier_execution_began_it() -> None:
	"""A tool's own nested run (``parent=context.run``) of an agent that may send is recorded as
	it starts; found begun by an earlier execution, it does not start again and the call is in
	doubt (``ask``: the run asks). Before, the retried tool ran it again and it paid again."""
	om = OpenMolt()
	paid: list[int] = []
	model = ScriptedModel([call_tool("local.settle", invoice="I-1"), finish()])
	agent = om.create_agent(
		name="Clerk", model=model, tools=[_nesting_tool(om, paid, ["outbound"])]
	)
	port = _DoubtPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert paid == []
	assert port.starts == ["tool:1:0:local.settle#nested:1"]
	assert result.status == "human_input_required"
	assert "local.settle" in str((result.state.pending or {}).get("message"))
	await om.aclose()


async def test_runs_a_tool_nests_are_recorded_each_under_its_number_and_run() -> None:
	"""A first execution records each nested run that may send as it starts, and runs them."""
	om = OpenMolt()
	paid: list[int] = []
	model = ScriptedModel([call_tool("local.settle", invoice="I-1"), finish()])
	tool_ = _nesting_tool(om, paid, ["outbound"], runs=2)
	agent = om.create_agent(name="Clerk", model=model, tools=[tool_])
	port = _FreshPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert result.status == "success", result.error
	assert paid == [7, 7]
	assert port.starts == ["tool:1:0:local.settle#nested:1", "tool:1:0:local.settle#nested:2"]
	await om.aclose()


async def test_a_nested_run_whose_tools_may_repeat_or_a_sub_agent_call_records_nothing_more() -> (
	None
):
	"""A nested run of an agent whose tools may all run again records nothing; a sub-agent's
	call (an agent as a tool) is covered by its own start, not recorded again as it nests."""
	om = OpenMolt()
	paid: list[int] = []
	model = ScriptedModel([call_tool("local.settle", invoice="I-1"), finish()])
	agent = om.create_agent(name="Clerk", model=model, tools=[_nesting_tool(om, paid, [])])
	port = _FreshPort()
	result = await agent.execute(agent.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert result.status == "success" and paid == [7] and port.starts == []
	await om.aclose()

	om = OpenMolt()
	sent: list[int] = []

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		sent.append(amount)
		return "paid"

	sub = om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=7), finish("paid")]),
		tools=[pay],
	)
	boss = om.create_agent(
		name="Boss",
		model=ScriptedModel([call_tool("local.Payer", task="pay"), finish()]),
		tools=[sub],
	)
	port = _FreshPort()
	result = await boss.execute(boss.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert result.status == "success" and sent == [7]
	assert port.starts == ["tool:1:0:local.Payer"]
	await om.aclose()
