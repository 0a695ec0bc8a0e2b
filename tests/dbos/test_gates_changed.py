"""A run is not recovered by a definition of its agent whose tools' gates differ.

`Agent.fingerprint()` covers the name, model, instructions and tool schemas, not whether a tool's
call waits for a person (its approval rule), may run twice after a crash (its in-doubt policy) or
sends data out (its labels); it is pinned by the goldens, so it stays as it is. The durable engine
names a definition by the fingerprint and those gates together: a worker restarted under its id
with an approval rule removed took over a run parked on a question, and the call the run's
definition kept for a person ran unasked once the question was answered.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from dbos import DBOS

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool
from openmolt_dbos._engine import reset_engine
from tests.dbos._segments import PAID, pay

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


# The same tool but for its in-doubt policy (a crash in its call: ask a person, or run it again).
PAY_ASK = tool(in_doubt="ask")(pay)
PAY_RETRY = tool(in_doubt="retry")(pay)

CHANGES = {
	"approval rule removed": ({"requires_approval": ["local.pay"]}, {}),
	"in-doubt ask to retry": ({"tools": [PAY_ASK]}, {"tools": [PAY_RETRY]}),
}


def _process(url: str, model: ScriptedModel, options: dict[str, Any], *, late: bool) -> Any:
	# One process's life under worker id w1; the payer known at launch, or created after the
	# first durable run (then only the run's recorded definition tells the two apart).
	om = OpenMolt(durability={"url": url, "worker_id": "w1"}, entry_points=False)
	greeter = om.create_agent(name="Greeter", model=ScriptedModel([finish("hi")]))
	options = {"tools": [pay], **options}

	def payer() -> Any:
		return om.create_agent(name="Payer", model=model, on_human_input_request=park, **options)

	agent = None if late else payer()
	return om, greeter, agent, payer


async def _restart(url: str, change: str, *, late: bool) -> tuple[OpenMolt, Any, str, str]:
	before, after = CHANGES[change]
	PAID.clear()
	first = ScriptedModel([ask_human("Which?"), call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, payer, make = _process(url, first, before, late=late)
	await greeter.run("hello")
	payer = payer or make()
	parked = await payer.run("pay")
	assert parked.status == "human_input_required"
	version = om.durability.engine.app_version  # type: ignore[union-attr]
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, payer, make = _process(url, later, after, late=late)
	await greeter.run("hello")  # launched: a run this version serves is recovered here
	if late:
		make()
	return om, later, parked.state.run_id, version


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_worker_whose_tools_gates_differ_strands_the_run(url: str, change: str) -> None:
	"""Known at launch: another version, the run stranded (listed so), its call never made."""
	om, later, run_id, version = await _restart(url, change, late=False)
	try:
		backend: Any = om.durability
		assert backend.engine.app_version != version
		rows = {row["run_id"]: row for row in await backend.runs()}
		assert rows[run_id]["status"] == "stranded"
		assert later.requests == [] and PAID == []
	finally:
		await om.aclose()


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_run_recovered_by_an_agent_whose_gates_differ_is_refused(
	url: str, change: str
) -> None:
	"""Created after launch (same version): the recovery names the run, and nothing is paid."""
	om, later, run_id, _ = await _restart(url, change, late=True)
	try:
		with pytest.raises(ConfigurationError, match=f"durable run {run_id}: agent 'Payer'"):
			await om.answer(run_id, "A")
			await om.result(run_id)
		assert later.requests == [] and PAID == []
	finally:
		await om.aclose()


def test_the_definition_follows_each_gate_and_nothing_else() -> None:
	"""Each gate changes it; rules reordered, or another rule selecting the same calls, do not."""
	from openmolt_dbos._engine import definition

	om = OpenMolt(entry_points=False)

	def payer(name: str, **options: Any) -> str:
		options = {"tools": [pay], **options}
		return definition(om.create_agent(name=name, model=ScriptedModel([]), **options))

	base = payer("A", requires_approval=["local.pay"])
	assert payer("A", requires_approval=["local.*", "local.pay"]) == base  # which rule: no matter
	assert payer("A", requires_approval=["*"]) == base
	assert payer("A") != base
	assert payer("A", requires_approval=["local.pay"], tools=[PAY_ASK]) != base
	assert (
		payer("A", requires_approval=["local.pay"], tools=[tool(labels=["private"])(pay)]) != base
	)
	assert len({payer("A", tools=[PAY_ASK]), payer("A", tools=[PAY_RETRY])}) == 2


async def test_a_run_recorded_with_the_bare_fingerprint_goes_on_as_before(url: str) -> None:
	"""Recorded before the gates were (its attribute the fingerprint alone): recovered, paid once."""
	from openmolt_dbos._runs import FINGERPRINT

	PAID.clear()
	first = ScriptedModel([ask_human("Which?"), call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, _, make = _process(url, first, {}, late=True)
	await greeter.run("hello")
	payer = make()
	parked = await payer.run("pay")
	run_id = parked.state.run_id
	backend: Any = om.durability
	await backend.engine.client().update_workflow_attributes_async(
		run_id, {FINGERPRINT: payer.fingerprint()}, merge=True
	)
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, _, make = _process(url, later, {}, late=True)
	try:
		await greeter.run("hello")
		make()
		await om.answer(run_id, "A")
		assert (await om.result(run_id)).output == "A" and PAID == ["A"]
	finally:
		await om.aclose()


def test_the_definition_follows_the_guardrails_and_the_taint_policy() -> None:
	"""A guardrail removed or renamed, or outbound calls of a tainted run no longer asked about."""
	from openmolt_core.guardrails import Guardrail
	from openmolt_core.taint import TaintPolicy
	from openmolt_dbos._engine import definition

	def no_refunds(check: Any) -> None:
		return None

	def no_payments(check: Any) -> None:
		return None

	om = OpenMolt(entry_points=False)

	def payer(**options: Any) -> str:
		agent = om.create_agent(name="A", model=ScriptedModel([]), tools=[pay], **options)
		return definition(agent)

	guarded = payer(guardrails=[Guardrail(no_refunds, on="tool_call")])
	assert payer() != guarded
	assert payer(guardrails=[Guardrail(no_payments, on="tool_call")]) != guarded
	assert payer(guardrails=[Guardrail(no_refunds, on="tool_call")]) == guarded
	asked = payer(taint_policy=TaintPolicy(on_outbound="approve", only_trifecta=False))
	assert payer(taint_policy=TaintPolicy(on_outbound="allow", only_trifecta=False)) != asked


def test_the_definition_follows_the_rules_over_a_capability_s_built_in_tools() -> None:
	"""``requires_approval="openmolt"`` holds only ``openmolt.post``: a worker without it differs.

	A run parked for a decision on a built-in tool's call, recovered by a worker whose rules no
	longer hold it, would post unasked; the definition followed the agent's own tools only.
	"""
	from openmolt_dbos._engine import definition
	from tests._postbox import Postbox

	om = OpenMolt(entry_points=False)

	def poster(**options: Any) -> str:
		agent = om.create_agent(
			name="A", model=ScriptedModel([]), tools=[pay], capabilities=[Postbox(labels=[])],
			**options,
		)  # fmt: skip
		return definition(agent)

	assert poster(requires_approval="openmolt") != poster()
	assert poster(requires_approval="openmolt") == poster(requires_approval="openmolt.post")


def test_the_definition_follows_the_agents_it_calls() -> None:
	"""A sub-agent's approval rule or in-doubt policy changes its caller's definition too: the
	caller's run goes on in the sub-agent's runs, which a worker would run under the new gates."""
	from openmolt_dbos._engine import definition

	om = OpenMolt(entry_points=False)

	def caller(**options: Any) -> str:
		child = om.create_agent(name="Child", model=ScriptedModel([]), **options)
		return definition(om.create_agent(name="Boss", model=ScriptedModel([]), tools=[child]))

	held = caller(tools=[PAY_ASK], requires_approval=["local.pay"])
	assert caller(tools=[PAY_ASK]) != held
	assert caller(tools=[PAY_RETRY], requires_approval=["local.pay"]) != held
	assert caller(tools=[PAY_ASK], requires_approval=["local.*"]) == held


def test_the_definition_follows_the_gates_of_tools_listed_at_run_time() -> None:
	"""An MCP server's tools are listed at run time, after the definition is made: its config's
	inDoubt, labels, scopes and trust, and the approval rules, change the definition (a laxer
	inDoubt would make a call in doubt again, a rule removed a held call run unasked), and the
	command it starts does not."""
	from openmolt_dbos._engine import definition
	from openmolt_mcp import MCP

	def shop(command: str = "shop-server", rules: tuple[str, ...] = (), **options: Any) -> str:
		om = OpenMolt(entry_points=False)
		om.register_integration("shop", MCP.stdio(command, [], **options))
		agent = om.create_agent(
			name="A", model=ScriptedModel([]), integrations=["shop"], requires_approval=list(rules)
		)
		return definition(agent)

	base = shop(in_doubt={"pay": "ask"})
	assert shop(in_doubt={"pay": "retry"}) != base
	assert shop(in_doubt={"pay": "ask"}, trust_descriptions=True) != base
	assert shop(in_doubt={"pay": "ask"}, labels={"pay": ["private"]}) != base
	assert shop(in_doubt={"pay": "ask"}, scopes={"read": ["pay"]}) != base
	assert shop("another-shop-server", in_doubt={"pay": "ask"}) == base
	# Which listed tools wait is known once they are listed: the rules as written count.
	held = shop(rules=("shop.pay", "shop.refund"))
	assert shop(rules=("shop.refund",)) != held and shop() != held
	assert shop(rules=("shop.refund", "shop.pay")) == held


def test_the_definition_follows_its_guardrail_agents() -> None:
	"""A guardrail agent's tools run in the run's steps: their in-doubt policy counts too."""
	from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
	from openmolt_dbos._engine import definition

	om = OpenMolt(entry_points=False)

	def guarded(judge_tool: Any) -> str:
		judge = om.create_agent(
			name="Judge", model=ScriptedModel([]), tools=[judge_tool], output_schema=VERDICT_SCHEMA
		)
		guard = Guardrail(judge, on="tool_call")
		agent = om.create_agent(name="A", model=ScriptedModel([]), tools=[pay], guardrails=[guard])
		return definition(agent)

	assert guarded(PAY_ASK) != guarded(PAY_RETRY)
	assert guarded(PAY_ASK) == guarded(PAY_ASK)


class _PaySource:
	"""A tool source listing one tool, ``pay`` (its tools known only at run time, as an MCP
	server's are)."""

	def __init__(self) -> None:
		from openmolt_core.integrations import FunctionTool

		def paid(input: dict[str, Any], context: Any) -> str:
			PAID.append(str(input.get("invoice")))
			return "paid"

		self.tools = (
			FunctionTool(
				handle="pay",
				description="Pay an invoice.",
				function=paid,
				input_schema={"type": "object", "properties": {"invoice": {"type": "string"}}},
			),
		)
		self.secrets: frozenset[str] = frozenset()

	async def list_tools(self) -> Any:
		return self.tools

	async def aclose(self) -> None:
		return None


async def test_a_run_recovered_where_a_listed_tool_s_rule_was_removed_is_refused(url: str) -> None:
	"""A tool listed at run time held by a rule; the rule removed (agent created after launch,
	same version): the recovery names the run, and nothing is paid."""
	from openmolt_core.integrations import Integration

	def process() -> tuple[OpenMolt, Any]:
		om = OpenMolt(durability={"url": url, "worker_id": "w1"}, entry_points=False)
		om.register_integration("srv", Integration(name="Server", source=_PaySource()))
		greeter = om.create_agent(name="Greeter", model=ScriptedModel([finish("hi")]))
		return om, greeter

	PAID.clear()
	script = [ask_human("Which?"), call_tool("srv.pay", invoice="A"), finish("A")]
	om, greeter = process()
	await greeter.run("hello")
	payer = om.create_agent(
		name="Payer",
		model=ScriptedModel(script),
		integrations=["srv"],
		requires_approval=["srv.pay"],
		on_human_input_request=park,
	)
	parked = await payer.run("pay")
	assert parked.status == "human_input_required"
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("srv.pay", invoice="A"), finish("A")])
	om, greeter = process()
	try:
		await greeter.run("hello")
		om.create_agent(
			name="Payer", model=later, integrations=["srv"], on_human_input_request=park
		)
		with pytest.raises(ConfigurationError, match=f"durable run {parked.state.run_id}"):
			await om.answer(parked.state.run_id, "A")
			await om.result(parked.state.run_id)
		assert later.requests == [] and PAID == []
	finally:
		await om.aclose()


async def test_a_run_recovered_before_its_agent_is_created_waits_for_it(url: str) -> None:
	"""Recovered at launch, before the process creates its agent: it waits, then goes on.

	The agent is not in the version (created after the first durable run), so the process that
	recovers the run may not define it yet; the run ended in an error ("agent 'Payer' is not
	defined in worker w1") whenever the recovery came before the agent, and was lost.
	"""
	PAID.clear()
	first = ScriptedModel([ask_human("Which?"), call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, _, make = _process(url, first, {}, late=True)
	await greeter.run("hello")
	run_id = (await make().run("pay")).state.run_id
	await om.aclose()
	DBOS.destroy()
	reset_engine()
	later = ScriptedModel([call_tool("local.pay", invoice="A"), finish("A")])
	om, greeter, _, make = _process(url, later, {}, late=True)
	try:
		await greeter.run("hello")
		engine: Any = om.durability.engine
		with anyio.fail_after(60):
			while "Payer" not in engine.awaited:  # noqa: ASYNC110  # set by the recovered run
				await anyio.sleep(0.02)
		make()
		await om.answer(run_id, "A")
		assert (await om.result(run_id)).output == "A" and PAID == ["A"]
		assert "Payer" not in engine.awaited
	finally:
		await om.aclose()
