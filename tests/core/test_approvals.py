"""Approvals: which calls wait, what the handler sees and answers, parking, resume, the audit."""

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from openmolt import ConfigurationError, OpenMolt, RunState
from openmolt_core.approvals import (
	ApprovalDecision,
	ApprovalRequest,
	ApprovalUnavailable,
	digest,
)
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_plan

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Shop:
	"""Two tools, one dangerous; records what really ran."""

	def __init__(self) -> None:
		self.ran: list[tuple[str, dict[str, Any]]] = []

		def refund(customer: str, amount: int) -> dict[str, Any]:
			"""Refund a customer (money leaves the account).

			Args:
				customer: The customer id.
				amount: Cents, at most 10000.
			"""
			self.ran.append(("refund", {"customer": customer, "amount": amount}))
			return {"refunded": amount}

		def lookup(customer: str) -> dict[str, Any]:
			"""Look a customer up.

			Args:
				customer: The customer id.
			"""
			self.ran.append(("lookup", {"customer": customer}))
			return {"customer": customer, "paid": 500}

		self.tools = [refund, lookup]

	def agent(self, om: OpenMolt, model: ScriptedModel, **options: Any) -> Any:
		options.setdefault("requires_approval", ["local.refund"])
		return om.create_agent(name="Pay", model=model, tools=self.tools, **options)


def refund_call(amount: int = 500, reason: str = "customer asked") -> dict[str, Any]:
	return {**call_tool("local.refund", customer="cus_1", amount=amount), "reason": reason}


def roundtrip(state: RunState) -> dict[str, Any]:
	"""The state as another process would read it."""
	data: dict[str, Any] = json.loads(json.dumps(state.to_dict()))
	return data


# the handler ------------------------------------------------------------------------------


async def test_an_approved_call_runs_and_the_decision_is_in_the_history() -> None:
	"""The handler sees tool, input and reason; the call runs; its result records the decision."""
	seen: list[ApprovalRequest] = []

	def approve(request: ApprovalRequest) -> ApprovalDecision:
		seen.append(request)
		return request.approve(reason="ok by Ada")

	shop = Shop()
	model = ScriptedModel([refund_call(), finish("refunded")])
	om = OpenMolt(entry_points=False)
	agent = shop.agent(om, model, on_approval_request=approve)
	events: list[Any] = []
	agent.on("approval:request", events.append)
	agent.on("approval:decision", events.append)
	result = await agent.run("refund cus_1")
	assert result.status == "success"
	assert shop.ran == [("refund", {"customer": "cus_1", "amount": 500})]
	[request] = seen
	assert (request.tool, request.input, request.reason) == (
		"local.refund",
		{"customer": "cus_1", "amount": 500},
		"customer asked",
	)
	assert request.call == "tool:1:0:local.refund" and request.run_id == result.state.run_id
	assert request.rule == "local.refund"
	assert request.digest == digest("local.refund", {"customer": "cus_1", "amount": 500})
	[entry] = model.last_turn()["results"]
	assert entry["ok"] is True and entry["result"] == {"refunded": 500}
	audit = entry["approval"]
	assert audit["decision"] == "approved" and audit["reason"] == "ok by Ada"
	assert audit["digest"] == request.digest and audit["rule"] == "local.refund"
	assert len(audit["id"]) == 16
	assert [e.name for e in events] == ["approval:request", "approval:decision"]
	assert events[1].action == "approved" and events[1].decision_id == audit["id"]
	assert events[1].call == request.call and events[1].run_id == result.state.run_id


async def test_the_model_is_told_which_tools_wait_and_may_give_a_reason() -> None:
	"""The tool listing marks gated tools, the prompt says so once, the schema takes a reason."""
	shop = Shop()
	model = ScriptedModel([finish("x")])
	om = OpenMolt(entry_points=False)
	agent = shop.agent(om, model)
	await agent.run("go")
	listed = {t["tool"]: t for t in json.loads(model.requests[0].messages[0].content)["tools"]}
	assert listed["local.refund"]["approval"] is True
	assert "approval" not in listed["local.lookup"]
	assert '"approval":true wait for a person' in model.requests[0].system
	variants = agent.envelope.schema()["properties"]["commands"]["items"]["anyOf"]
	calls = [v for v in variants if v["properties"]["type"] == {"const": "callTool"}]
	assert all(v["properties"]["reason"] == {"type": "string", "default": ""} for v in calls)
	plain = om.create_agent(name="P", model=ScriptedModel([]), tools=shop.tools)
	assert "approval" not in plain.system_prompt()
	plain_calls = plain.envelope.schema()["properties"]["commands"]["items"]["anyOf"][:2]
	assert all("reason" not in v["properties"] for v in plain_calls)


async def test_a_reason_is_refused_where_no_tool_waits_for_approval() -> None:
	"""The parser follows the schema: without approvals, callTool has no reason field."""
	shop = Shop()
	model = ScriptedModel([{**call_tool("local.lookup", customer="c"), "reason": "x"}, finish()])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="P", model=model, tools=shop.tools)
	await agent.run("go")
	[error] = [r["error"] for r in model.last_turn()["results"]]
	assert "no tool of this agent waits for approval" in error and shop.ran == []


async def test_a_denial_becomes_a_result_the_model_reads() -> None:
	"""The tool does not run; the model reads the approver's reason."""
	shop = Shop()
	model = ScriptedModel([[refund_call(), call_tool("local.lookup", customer="cus_1")], finish()])
	om = OpenMolt(entry_points=False)
	agent = shop.agent(om, model, on_approval_request=lambda r: r.deny("refunds need a ticket"))
	decisions: list[Any] = []
	agent.on("approval:decision", decisions.append)
	await agent.run("go")
	refund, lookup = model.last_turn()["results"]
	assert refund["ok"] is False
	assert refund["error"] == "denied by the approver: refunds need a ticket"
	assert refund["approval"]["decision"] == "denied"
	assert lookup["ok"] is True
	assert shop.ran == [("lookup", {"customer": "cus_1"})]
	assert decisions[0].action == "denied" and decisions[0].reason == "refunds need a ticket"


async def test_an_edited_input_runs_instead_and_the_model_sees_it() -> None:
	"""approve(input=...) runs the edited input (validated) and reports what ran."""
	shop = Shop()
	model = ScriptedModel([refund_call(amount=9000), finish()])
	om = OpenMolt(entry_points=False)

	async def halve(request: ApprovalRequest) -> ApprovalDecision:
		await anyio.lowlevel.checkpoint()
		return request.approve(input={**request.input, "amount": 4500})

	agent = shop.agent(om, model, on_approval_request=halve)
	await agent.run("go")
	assert shop.ran == [("refund", {"customer": "cus_1", "amount": 4500})]
	[entry] = model.last_turn()["results"]
	assert entry["approval"]["decision"] == "edited"
	assert entry["input"] == {"customer": "cus_1", "amount": 4500}


async def test_an_edited_input_that_breaks_the_schema_does_not_run() -> None:
	"""The edit is checked against the tool's input schema; the model hears the call did not run."""
	shop = Shop()
	model = ScriptedModel([refund_call(), finish()])
	om = OpenMolt(entry_points=False)
	agent = shop.agent(
		om, model, on_approval_request=lambda r: r.approve(input={"customer": 5, "amount": "x"})
	)
	errors: list[Any] = []
	agent.on("error", errors.append)
	await agent.run("go")
	assert shop.ran == []
	[entry] = model.last_turn()["results"]
	assert entry == {
		"tool": "local.refund",
		"ok": False,
		"error": "not run: its decision was refused (invalid)",
	}
	assert "does not match the input schema of local.refund" in errors[0].message


@pytest.mark.parametrize(
	("handler", "why"),
	[
		(lambda r: True, "returned bool"),
		(
			lambda r: (_ for _ in ()).throw(RuntimeError("down")),
			"could not be asked (RuntimeError)",
		),
	],
)
async def test_a_handler_that_fails_or_answers_nonsense_runs_nothing(
	handler: Any, why: str
) -> None:
	"""The call does not run, the model hears why, the run goes on."""
	shop = Shop()
	model = ScriptedModel([refund_call(), finish("gave up")])
	om = OpenMolt(entry_points=False)
	result = await shop.agent(om, model, on_approval_request=handler).run("go")
	assert result.status == "success" and shop.ran == []
	assert why in model.last_turn()["results"][0]["error"]


async def test_the_handler_waits_inside_the_time_budget() -> None:
	"""A person who never answers: the run ends at its timeout with a valid state."""

	async def forever(request: ApprovalRequest) -> ApprovalDecision:
		await anyio.sleep(30)
		raise AssertionError("unreachable")

	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent = shop.agent(om, ScriptedModel([refund_call()]), on_approval_request=forever, timeout=0.2)
	with anyio.fail_after(10):
		result = await agent.run("go")
	assert result.status == "limit_reached" and shop.ran == []
	assert json.loads(result.state.messages[-1].content)["results"][0]["error"].startswith(
		"interrupted"
	)


# parking and resuming ---------------------------------------------------------------------


async def test_without_a_handler_the_run_parks_with_the_call_in_its_state() -> None:
	"""approval_required; the pending call is plain JSON; requests come back from the state."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([[update_plan("refund"), refund_call(), finish("done")]])
	agent = shop.agent(om, model)
	requests: list[Any] = []
	agent.on("approval:request", requests.append)
	parked = await agent.run("go")
	assert parked.status == "approval_required" and shop.ran == []
	assert "local.refund waits for approval" in (parked.error or "")
	pending = roundtrip(parked.state)["pending"]
	assert pending["kind"] == "approval" and pending["step"] == 1
	assert pending["calls"] == [
		{
			"index": 1,
			"call": "tool:1:1:local.refund",
			"tool": "local.refund",
			"reason": "customer asked",
			"rule": "local.refund",
			"digest": digest("local.refund", {"customer": "cus_1", "amount": 500}),
		}
	]
	assert [c["type"] for c in pending["commands"]] == ["updatePlan", "callTool", "finish"]
	assert pending["results"] == [{"command": "updatePlan", "ok": True}, None, None]
	assert parked.state.messages[-1].role == "assistant"  # the result turn comes on resume
	[request] = agent.approval_requests(roundtrip(parked.state))
	assert request.to_dict() == {**requests[0].request.to_dict()}


async def test_resume_with_an_approval_runs_the_call_and_the_rest_of_the_step() -> None:
	"""In another agent object (another process), the decision runs the call, then finish."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	parked = await shop.agent(om, ScriptedModel([[refund_call(), finish("done")]])).run("go")
	later = shop.agent(om, ScriptedModel([]))
	saved = roundtrip(parked.state)
	[request] = later.approval_requests(saved)
	result = await later.resume(saved, decision=request.approve())
	assert result.status == "success" and result.output == "done"
	assert shop.ran == [("refund", {"customer": "cus_1", "amount": 500})]
	turn = json.loads(result.state.messages[-1].content)["results"]
	assert turn[0]["approval"]["decision"] == "approved"
	assert turn[1] == {"command": "finish", "ok": True}
	assert result.state.pending is None and result.steps == 1


async def test_decisions_travel_as_json() -> None:
	"""A decision's dict (from a web page or a queue) is accepted like the object."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([refund_call(), finish("denied")])
	agent = shop.agent(om, model)
	parked = await agent.run("go")
	[request] = agent.approval_requests(parked.state)
	decision = json.loads(json.dumps(request.deny("no").to_dict()))
	result = await agent.resume(parked.state, decision=decision)
	assert result.output == "denied" and shop.ran == []
	assert model.last_turn()["results"][0]["error"] == "denied by the approver: no"


async def test_parallel_calls_park_together_and_resume_one_decision_at_a_time() -> None:
	"""Calls of one group: the free one runs, the gated ones wait; undecided ones park again."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	group = [
		call_tool("local.lookup", customer="cus_1"),
		refund_call(100),
		refund_call(200),
	]
	model = ScriptedModel([group, finish("both")])
	agent = shop.agent(om, model)
	parked = await agent.run("go")
	assert [c["index"] for c in parked.state.pending["calls"]] == [1, 2]
	assert shop.ran == [("lookup", {"customer": "cus_1"})]
	first, second = agent.approval_requests(parked.state)
	again = await agent.resume(parked.state, decision=first.approve())
	assert again.status == "approval_required"
	assert [c["index"] for c in again.state.pending["calls"]] == [2]
	assert again.state.pending["results"][1]["approval"]["decision"] == "approved"
	[left] = agent.approval_requests(again.state)
	assert left.call == second.call
	done = await agent.resume(again.state, decision=left.deny("one is enough"))
	assert done.status == "success" and model.calls == 2
	lookup, one, two = model.last_turn()["results"]
	assert lookup["ok"] and one["result"] == {"refunded": 100}
	assert two["error"] == "denied by the approver: one is enough"
	assert [r for r in shop.ran if r[0] == "refund"] == [
		("refund", {"customer": "cus_1", "amount": 100})
	]


async def test_a_handler_can_park_the_run_too() -> None:
	"""ApprovalUnavailable from the handler parks the run with its message."""

	def later(request: ApprovalRequest) -> ApprovalDecision:
		raise ApprovalUnavailable("the approver is offline")

	shop = Shop()
	om = OpenMolt(entry_points=False)
	parked = await shop.agent(om, ScriptedModel([refund_call()]), on_approval_request=later).run(
		"go"
	)
	assert parked.status == "approval_required"
	assert "the approver is offline" in (parked.error or "")


async def test_a_parked_call_never_runs_without_a_decision() -> None:
	"""An agent without the policy still needs a decision for a call that parked."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	parked = await shop.agent(om, ScriptedModel([refund_call()])).run("go")
	lax = shop.agent(om, ScriptedModel([finish()]), requires_approval=None)
	with pytest.raises(ConfigurationError, match="waits for approval decisions"):
		await lax.resume(parked.state)
	again = await lax.run(history=parked.state)
	assert again.status == "approval_required" and shop.ran == []
	asked: list[ApprovalRequest] = []
	deciding = shop.agent(
		om,
		ScriptedModel([finish()]),
		requires_approval=None,
		on_approval_request=lambda r: asked.append(r) or r.deny("not today"),
	)
	done = await deciding.resume(parked.state)
	assert done.status == "success" and shop.ran == []
	assert asked[0].rule == "local.refund" and asked[0].reason == "customer asked"


async def test_resume_refuses_what_does_not_fit_the_parked_run() -> None:
	"""An answer for approvals, a decision for a question: clear errors, nothing runs."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent = shop.agent(om, ScriptedModel([refund_call()]))
	parked = await agent.run("go")
	with pytest.raises(ConfigurationError, match="not an answer"):
		await agent.resume(parked.state, answer="yes")
	with pytest.raises(ConfigurationError, match="waits for approval decisions"):
		await agent.run("yes", history=parked.state)
	with pytest.raises(ConfigurationError, match="is not a decision"):
		await agent.resume(parked.state, decision=[42])
	assert parked.state.pending is not None and shop.ran == []


# configuration ----------------------------------------------------------------------------


def test_rules_are_checked_against_the_agents_tools() -> None:
	"""A malformed rule, an unknown integration, scope or tool: errors that name it."""
	shop = Shop()
	om = OpenMolt(entry_points=False)

	def make(rules: Any) -> Any:
		return om.create_agent(
			name="A", model=ScriptedModel([]), tools=shop.tools, requires_approval=rules
		)

	with pytest.raises(ConfigurationError, match=r"requires_approval\[0\] 'lokal.refund'.*'local'"):
		make(["lokal.refund"])
	with pytest.raises(ConfigurationError, match="did you mean 'refund'"):
		make("local.refnd")
	# A tool named alone: its handle (a bare word reads as an integration).
	with pytest.raises(
		ConfigurationError, match=r"'refund' is a tool: did you mean 'local.refund'\?"
	):
		make(["refund"])
	with pytest.raises(ConfigurationError, match="defines no scope 'write'"):
		make(["local:write"])
	with pytest.raises(ConfigurationError, match="is not a rule"):
		make(["local refund"])
	with pytest.raises(ConfigurationError, match="must be True, a rule"):
		make(42)
	make(["local.ref*", "!local.lookup", "local:writes"])
	# An instance's defaults may name integrations this agent does not use, but a bare tool
	# name of this agent is a mistake there too (it would leave the tool it meant unguarded).
	with pytest.raises(
		ConfigurationError, match=r"OpenMolt: requires_approval\[0\] 'refund': 'refund' is a tool"
	):
		OpenMolt(entry_points=False, requires_approval=["refund"]).create_agent(
			name="C", model=ScriptedModel([]), tools=shop.tools
		)
	# Unless the word is an integration's id (registered or installed): the instance means it.
	stripe = OpenMolt(entry_points=False, requires_approval=["stripe"])
	from openmolt_core.integrations.model import HttpTool, Integration
	from openmolt_core.tools import FunctionTool

	get = HttpTool(handle="get", description="Get.", method="GET", endpoint="/x")
	stripe.register_integration("stripe", Integration(id="stripe", name="Stripe", tools=[get]))
	named = FunctionTool("stripe", "A local tool named like one.", lambda i, c: 1)
	stripe.create_agent(name="D", model=ScriptedModel([]), tools=[*shop.tools, named])
	shared = OpenMolt(entry_points=False, requires_approval=["stripe:writes", "local.refund"])
	agent = shared.create_agent(name="B", model=ScriptedModel([]), tools=shop.tools)
	assert "approval" in agent.system_prompt()


def test_exemptions_win_and_every_rule_form_selects_what_it_says() -> None:
	"""'*', an integration, patterns, writes and '!' exemptions, on bound tools."""
	shop = Shop()
	om = OpenMolt(entry_points=False)

	def gated(rules: Any) -> list[str]:
		agent = om.create_agent(
			name="A", model=ScriptedModel([]), tools=shop.tools, requires_approval=rules
		)
		return sorted(h for h, t in agent._tools.items() if t.approval)

	assert gated(True) == ["local.lookup", "local.refund"]
	assert gated("local") == ["local.lookup", "local.refund"]
	assert gated(["*", "!local.look*"]) == ["local.refund"]
	assert gated(["!local.refund", "local.refund"]) == []
	assert gated("*:writes") == ["local.lookup", "local.refund"]  # no scopes: may write


def test_a_pattern_in_the_integration_part_selects_like_the_tool_part() -> None:
	"""'loc*.refund' and 'lo?al' gate the tools they spell, on an instance as on an agent."""
	shop = Shop()
	for rules in (["loc*.refund"], ["lo?al:writes", "!*.lookup"]):
		om = OpenMolt(entry_points=False, requires_approval=rules)
		agent = om.create_agent(name="A", model=ScriptedModel([]), tools=shop.tools)
		assert sorted(h for h, t in agent._tools.items() if t.approval) == ["local.refund"]
		mine = OpenMolt(entry_points=False).create_agent(
			name="B", model=ScriptedModel([]), tools=shop.tools, requires_approval=rules
		)
		assert sorted(h for h, t in mine._tools.items() if t.approval) == ["local.refund"]
	with pytest.raises(ConfigurationError, match="no tool of loc\\* matches 'refnd'"):
		OpenMolt(entry_points=False).create_agent(
			name="C", model=ScriptedModel([]), tools=shop.tools, requires_approval="loc*.refnd"
		)


# sub-runs and the timeout -----------------------------------------------------------------


async def test_instance_defaults_apply_to_every_agent() -> None:
	"""OpenMolt(requires_approval=...) gates the calls of agents created from it."""
	shop = Shop()
	om = OpenMolt(entry_points=False, requires_approval=["local.refund"])
	agent = om.create_agent(name="A", model=ScriptedModel([refund_call()]), tools=shop.tools)
	parked = await agent.run("go")
	assert parked.status == "approval_required"


async def test_the_approver_never_sees_a_secret() -> None:
	"""The request's input and the events are redacted with the agent's secrets."""
	from openmolt_core.integrations.model import Integration
	from openmolt_core.tools import FunctionTool

	secret = "sk_live_abcdef123456"
	send = FunctionTool(
		handle="send",
		description="Send.",
		function=lambda i, c: "sent",
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
		scopes=["write"],
	)
	om = OpenMolt(entry_points=False, integrations={"mail": {"apiKey": secret}})
	om.register_integration(
		"mail", Integration(name="Mail", scopes={"write": "Send."}, tools=[send])
	)
	seen: list[ApprovalRequest] = []
	model = ScriptedModel(
		[{**call_tool("mail.send", text=f"key {secret}"), "reason": f"it is {secret}"}, finish()]
	)
	agent = om.create_agent(
		name="M",
		model=model,
		integrations=["mail"],
		requires_approval="mail:writes",
		on_approval_request=lambda r: seen.append(r) or r.deny(f"no {secret}"),
	)
	events: list[Any] = []
	agent.on("approval:request", events.append)
	agent.on("approval:decision", events.append)
	await agent.run("go")
	assert seen[0].input == {"text": "key [redacted]"}
	assert seen[0].reason == "it is [redacted]"
	assert events[1].reason == "no [redacted]"
	assert secret not in json.dumps(model.last_turn())
	# The digest is of the exact arguments, so the decision still binds to what would run: the
	# reply is read masked, so the call the person approves is the call that runs (no secret).
	assert seen[0].digest == digest("mail.send", {"text": "key [redacted]"})


def test_local_tools_name_their_own_scopes() -> None:
	"""create_agent(tools=...) tools have no integration: rules use the scopes they declare."""
	from openmolt_core.tools import FunctionTool

	read = FunctionTool(handle="peek", description="", function=lambda i, c: 1, scopes=["read"])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([]),
		tools=[read, *Shop().tools],
		requires_approval=["local:writes"],
	)
	assert {h for h, t in agent._tools.items() if t.approval} == {"local.refund", "local.lookup"}
	om.create_agent(
		name="B", model=ScriptedModel([]), tools=[read], requires_approval=["local:read"]
	)


async def test_events_are_numbered_in_the_order_they_are_emitted_across_a_resume() -> None:
	"""Parked, then resumed with a decision: the decision, then the call's events, each numbered
	after the one before (the call's numbers are taken once its gate has spoken)."""
	from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS

	shop = Shop()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([refund_call(), finish("refunded")])
	agent = shop.agent(om, model)
	seen: list[tuple[str, int]] = []
	for name in EVENT_NAMES - STREAM_EVENTS:  # the numbered ones (previews take no seq)
		agent.on(name, lambda e: seen.append((e.name, e.seq)))
	parked = await agent.run("go")
	[request] = agent.approval_requests(parked.state)
	result = await agent.resume(roundtrip(parked.state), decision=request.approve())
	assert result.output == "refunded"
	names = [name for name, _ in seen]
	at = names.index("approval:decision")
	assert names[at : at + 3] == ["approval:decision", "tool:call", "tool:response"]
	seqs = [seq for _, seq in seen]
	assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seen


async def test_a_decision_given_by_the_handler_comes_before_the_call_s_events() -> None:
	"""Decided at once by the handler: request, decision, call, response, in numbering order."""
	from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS

	shop = Shop()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([refund_call(), finish("refunded")])
	agent = shop.agent(om, model, on_approval_request=lambda request: request.approve())
	seen: list[tuple[str, int]] = []
	for name in EVENT_NAMES - STREAM_EVENTS:  # the numbered ones (previews take no seq)
		agent.on(name, lambda e: seen.append((e.name, e.seq)))
	await agent.run("go")
	order = [n for n, _ in seen if n.startswith(("approval", "tool"))]
	assert order == ["approval:request", "approval:decision", "tool:call", "tool:response"]
	seqs = [seq for _, seq in seen]
	assert seqs == sorted(seqs), seen
