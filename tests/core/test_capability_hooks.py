"""The hooks the safety capability needed: pure decisions, exact entries, stops after a call,
rewritten finishes, checks before and alongside the first model call, the tool set at build, and
a hand-off to the approvals gate."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest

from openmolt import Capability, OpenMolt, Proceed, Refuse, Stop
from openmolt_core.commands import CallTool, Finish
from openmolt_core.errors import ConfigurationError
from openmolt_core.events import Event
from openmolt_core.hooks import (
	AgentInfo,
	Alongside,
	Approve,
	Hooks,
	Park,
	Run,
	ToolRecord,
	ToolSpec,
	decision_from_dict,
	decision_to_dict,
	first_answer,
)
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_capabilities import Till, results_of
from tests.core.test_durability import JournalPort

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


class Decides(Capability):
	"""Answers every call with ``decision``."""

	name: ClassVar[str] = "decides"

	def __init__(self, decision: Any) -> None:
		self.decision = decision
		self.asked = 0

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		self.asked += 1
		return self.decision


class Pure(Decides):
	name: ClassVar[str] = "pure"
	journal_decisions: ClassVar[bool] = False


def test_decisions_with_their_entries_round_trip_through_the_journal() -> None:
	for decision in (
		Refuse("no", {"tool": "t", "ok": False, "error": "mine", "policy": {}}),
		Stop("stop", "guardrail_tripped", {"tool": "t", "ok": False, "error": "x"}),
		Approve("a rule", {"amount": 2}),
		Proceed({"amount": 3}, {"kept": True}),
		Refuse("plain"),
	):
		assert decision_from_dict(decision_to_dict(decision)) == decision
	assert decision_to_dict(Refuse("plain")) == {"refuse": "plain"}  # journals as before


async def test_a_pure_capability_decides_outside_the_journal() -> None:
	async def run_with(cap: Capability) -> set[str]:
		till = Till()
		model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
		agent = OpenMolt(entry_points=False).create_agent(
			name="A", model=model, tools=till.tools, capabilities=[cap]
		)
		port = JournalPort()
		result = await agent.execute(None, port=port, input="pay")
		assert result.status == "success" and till.ran == []
		return {key for key, _ in port.recorded.values()}

	journaled = await run_with(Decides(Refuse("closed")))
	pure = Pure(Refuse("closed"))
	unjournaled = await run_with(pure)
	assert any(k.startswith("hook:") for k in journaled)
	assert not any(k.startswith("hook:") for k in unjournaled) and pure.asked == 1


async def test_a_refusal_with_its_entry_is_read_as_given_and_emits_no_error() -> None:
	till = Till()
	entry = {"tool": "local.pay", "ok": False, "error": "refused by policy: x", "policy": {}}
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[Pure(Refuse("x", entry))]
	)
	errors: list[Event] = []
	agent.on("error", errors.append)
	await agent.run("pay")
	assert results_of(model, 1) == [entry] and errors == []


async def test_a_stop_with_its_entry_ends_the_run_and_the_state_keeps_the_entry() -> None:
	till = Till()
	entry = {"tool": "local.pay", "ok": False, "error": "not run: tripped", "guardrail": "g"}
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[Pure(Stop("tripped", entry=entry))]
	)
	result = await agent.run("pay")
	assert (result.status, result.error, till.ran) == ("guardrail_tripped", "tripped", [])
	assert entry in str_results(result.state)


def str_results(state: RunState) -> list[dict[str, Any]]:
	import json

	out: list[dict[str, Any]] = json.loads(state.messages[-1].content)["results"]
	return out


class Withholds(Capability):
	name: ClassVar[str] = "withholds"

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any] | Stop:
		return Stop("the result was hostile")


class Sees(Capability):
	name: ClassVar[str] = "sees"

	def __init__(self) -> None:
		self.seen: list[dict[str, Any]] = []

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any]:
		self.seen.append(entry)
		return {**entry, "seen": True}


async def test_after_tool_may_stop_the_run_and_runs_last_capability_first() -> None:
	till = Till()
	sees = Sees()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[sees, Withholds()]
	)
	result = await agent.run("pay")
	assert (result.status, result.error, model.calls) == (
		"guardrail_tripped",
		"the result was hostile",
		1,
	)
	withheld = {"tool": "local.pay", "ok": False, "error": "result withheld: the run stopped"}
	assert sees.seen == [withheld]  # the withholding capability came last: it answered first
	assert str_results(result.state) == [{**withheld, "seen": True}]


class Rewrites(Capability):
	name: ClassVar[str] = "rewrites"

	def __init__(self, output: Any) -> None:
		self.output = output

	async def before_finish(self, run: Run, finish: Finish) -> Finish:
		return finish.model_copy(update={"output": self.output})


async def test_before_finish_may_rewrite_the_output_which_is_checked() -> None:
	schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
	om = OpenMolt(entry_points=False)
	good = om.create_agent(
		name="A",
		model=ScriptedModel([finish({"n": 1})]),
		output_schema=schema,
		capabilities=[Rewrites({"n": 2})],
	)
	assert (await good.run("x")).output == {"n": 2}
	bad = om.create_agent(
		name="B",
		model=ScriptedModel([finish({"n": 1})]),
		output_schema=schema,
		capabilities=[Rewrites({"n": "two"})],
	)
	result = await bad.run("x")
	assert result.status == "guardrail_tripped" and "does not match" in (result.error or "")


class First(Capability):
	name: ClassVar[str] = "first"

	def __init__(self, answer: str) -> None:
		self.answer = answer
		self.asked = 0

	async def before_first_model(self, run: Run) -> Stop | Alongside | None:
		self.asked += 1
		if self.answer == "stop":
			return Stop("not this input")

		async def check() -> Stop | None:
			if self.answer == "pass":
				return None
			await anyio.lowlevel.checkpoint()
			return Stop("tripped alongside")

		return Alongside(check)


class SlowModel(ScriptedModel):
	async def generate(self, request: Any) -> Any:
		await anyio.sleep(5)
		return await super().generate(request)


async def test_before_first_model_stops_the_run_or_checks_alongside_the_call() -> None:
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([finish("ok"), finish("ok")])
	first = First("stop")
	stopped = await om.create_agent(name="A", model=model, capabilities=[first]).run("x")
	assert (stopped.status, stopped.error, model.calls) == (
		"guardrail_tripped",
		"not this input",
		0,
	)
	passing = First("pass")
	done = await om.create_agent(name="B", model=model, capabilities=[passing]).run("x")
	assert done.status == "success" and model.calls == 1
	with anyio.fail_after(3):  # the check cancels the slow model call
		slow = SlowModel([finish("ok")])
		tripped = await om.create_agent(name="C", model=slow, capabilities=[First("trip")]).run("x")
	assert (tripped.status, tripped.error) == ("guardrail_tripped", "tripped alongside")


class Sends(Capability):
	"""Sends the step's model calls itself (through ``generate``), noting each; ``idle``: never."""

	name: ClassVar[str] = "sends"

	def __init__(self, log: list[Any], *, idle: bool = False) -> None:
		self.log = log
		self.idle = idle

	def send_model(self, run: Run) -> Any:
		self.log.append(("asked", self.name, run.step))
		if self.idle:
			return None

		async def send(provider: Any, request: Any, model: str) -> Any:
			self.log.append(("sent", self.name, model))
			return await provider.generate(request)

		return send


class Idle(Sends):
	name: ClassVar[str] = "idle"


class Later(Sends):
	name: ClassVar[str] = "later"


class Around(Capability):
	name: ClassVar[str] = "around"

	def __init__(self, log: list[Any]) -> None:
		self.log = log

	async def wrap_model(self, run: Run, request: Any, call: Any) -> Any:
		self.log.append("wrap")
		response = await call(request)
		self.log.append("unwrap")
		return response


async def test_send_model_sends_the_step_inside_every_wrap_and_the_first_answer_wins() -> None:
	log: list[Any] = []
	caps = [Idle(log, idle=True), Around(log), Sends(log), Later(log)]  # Later: never asked
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([finish("ok")]), capabilities=caps
	)
	models: list[str] = []
	agent.on("llmOutput", lambda e: models.append(e.model))  # type: ignore[attr-defined]
	assert (await agent.run("x")).output == "ok"
	assert log == [
		("asked", "idle", 1),
		("asked", "sends", 1),
		"wrap",
		("sent", "sends", models[0]),
		"unwrap",
	]
	# nobody answers: the provider's generate, and an agent without senders asks none
	quiet: list[Any] = []
	idle = OpenMolt(entry_points=False).create_agent(
		name="B", model=ScriptedModel([finish("ok")]), capabilities=[Idle(quiet, idle=True)]
	)
	assert (await idle.run("x")).status == "success" and quiet == [("asked", "idle", 1)]
	assert Hooks().send_model == () and first_answer(Hooks([Around(log)]).send_model, None) is None  # type: ignore[arg-type]


class Labels(Capability):
	name: ClassVar[str] = "labels"

	def __init__(self) -> None:
		self.seen: list[tuple[str, tuple[str, ...], list[str]]] = []

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		self.seen.append((agent.name, agent.tools, [t.handle for t in tools]))


async def test_describe_tools_sees_the_whole_tool_set_at_build() -> None:
	till = Till()
	labels = Labels()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([]), tools=till.tools, capabilities=[labels]
	)
	assert labels.seen == [("A", ("local.pay",), ["local.pay"])]
	# the safety capability, after it, labelled the tool (no labels declared: fail closed)
	assert agent.labels["local.pay"] == frozenset({"untrusted", "outbound"})


async def test_approve_hands_the_call_to_the_approvals_gate_under_its_rule() -> None:
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=model,
		tools=till.tools,
		capabilities=[Pure(Approve("ask first", {"amount": 4}))],
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required" and till.ran == []
	(request,) = agent.approval_requests(parked.state)
	assert (request.rule, request.input) == ("ask first", {"amount": 4})
	done = await agent.resume(parked.state, decision=request.approve())
	assert done.status == "success" and till.ran == [{"amount": 4}]
	assert results_of(model, 1)[0]["input"] == {"amount": 4}  # what ran


class Keeper(Capability):
	"""Parks calls under a kind of its own, so it decides the calls an `Approve` holds: answers
	every call with ``answer``, and notes what it saw (``run.held``: the rules that hold it)."""

	name: ClassVar[str] = "keeper"
	parks: ClassVar[str] = "keep"

	def __init__(self, answer: Any) -> None:
		self.answer = answer
		self.seen: list[tuple[int, str, str | None]] = []

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		ctx: Any = run  # the loop's run context
		self.seen.append((ctx.command_index, call.tool, ctx.held))
		return self.answer


async def test_a_capability_after_an_approve_sees_the_rules_that_hold_the_call() -> None:
	till = Till()
	kept = {"tool": "local.pay", "ok": False, "error": "kept back"}
	keeper = Keeper(Refuse("kept back", kept))
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[Decides(Approve("r")), keeper]
	)
	done = await agent.run("pay")
	assert done.status == "success" and till.ran == []  # kept back: not run
	assert keeper.seen == [(0, "local.pay", "r")]
	assert results_of(model, 1) == [kept]
	keeper.seen.clear()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[keeper, Decides(Approve("r"))]
	)
	await agent.run("pay")
	assert keeper.seen == [(0, "local.pay", None)]  # before the Approve: nothing holds it yet


async def test_what_a_capability_lets_through_runs_noted_and_the_approvals_gate_sees_it() -> None:
	till = Till()
	keeper = Keeper(Proceed({"amount": 2}, note={"kept": True}))
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=model,
		tools=till.tools,
		capabilities=[Pure(Approve("r")), keeper],
		on_approval_request=lambda request: request.approve(),
	)
	assert (await agent.run("pay")).status == "success"
	assert till.ran == [{"amount": 2}]  # the approvals gate, last, approved the edited call
	(entry,) = results_of(model, 1)
	assert entry["kept"] is True and entry["input"] == {"amount": 2}
	assert entry["approval"]["decision"] == "approved" and entry["approval"]["rule"] == "r"


class Holds(Keeper):
	"""Journals a ``ticket`` step of its own for each call of ``local.pay``."""

	name: ClassVar[str] = "holds"

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		ctx: Any = run  # the loop's run context
		return (
			[f"ticket:{run.step}:{ctx.command_index}:{call.tool}"]
			if call.tool == "local.pay"
			else []
		)


async def test_a_capability_names_the_steps_it_takes_in_a_batch() -> None:
	till = Till()
	keeper = Holds(Refuse("kept back", {"tool": "local.pay", "ok": False, "error": "kept back"}))
	pays = [call_tool("local.pay", amount=5), call_tool("local.pay", amount=6)]
	model = ScriptedModel([pays, finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[keeper]
	)
	port = JournalPort()
	assert (await agent.execute(None, port=port, input="pay")).status == "success"
	assert till.ran == [] and keeper.seen == [(0, "local.pay", None), (1, "local.pay", None)]
	assert [e["error"] for e in results_of(model, 1)] == ["kept back", "kept back"]
	# The batch reserves each call's steps in command order, the capability's (reserve_steps) too.
	assert port.reserved[0][:3] == [
		"hook:1:0:local.pay",
		"tool:1:0:local.pay",
		"ticket:1:0:local.pay",
	]
	assert port.reserved[0][3:] == [
		"hook:1:1:local.pay",
		"tool:1:1:local.pay",
		"ticket:1:1:local.pay",
	]


async def test_a_call_an_approve_holds_does_not_run_without_a_capability_that_parks() -> None:
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(name="A", model=model, tools=till.tools)
	agent._hooks = Hooks([Pure(Approve("r"))])  # nobody can decide the call
	assert (await agent.run("pay")).status == "success" and till.ran == []
	assert results_of(model, 1)[0]["error"] == (
		"not run: it waits for a decision, and this agent has no gate to ask"
	)


async def test_a_rewritten_input_is_what_runs_and_what_the_result_shows() -> None:
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[Pure(Proceed({"amount": 3}))]
	)
	await agent.run("pay")
	assert till.ran == [{"amount": 3}]
	assert results_of(model, 1)[0]["input"] == {"amount": 3}


class Tickets(Capability):
	"""Parks a step under a kind of its own (`Capability.parks`) until given a ticket."""

	name: ClassVar[str] = "tickets"
	parks: ClassVar[str] = "ticket"

	def __init__(self) -> None:
		self.resumed: list[tuple[int, Any]] = []

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Proceed | Park:
		ticket = run.state.ext.get("tickets", {}).get("ticket")
		if ticket is not None:
			return Proceed(note={"ticket": ticket})
		return Park(f"{call.tool} waits for a ticket", {"tool": call.tool})

	def receive(self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None) -> Any:
		if not isinstance(given, str) or answer is not None:
			raise ConfigurationError("give a ticket: resume(state, decision='...')")
		return given.upper()

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		self.resumed.append((run.step, given))
		if given == "NONE":
			raise ConfigurationError("no such ticket")
		run.state.ext["tickets"] = {"ticket": given}

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[Any]:
		return [c["tool"] for c in parked["calls"]]


async def test_a_gate_parks_under_its_own_kind_and_the_resume_is_handed_to_it() -> None:
	till = Till()
	tickets = Tickets()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=model,
		tools=till.tools,
		capabilities=[tickets, Pure(Approve("r"))],
		on_approval_request=lambda request: request.approve(),  # the approvals gate, after it
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required" and till.ran == []
	pending = parked.state.pending
	assert pending is not None
	assert (pending["kind"], pending["step"], pending["calls"], pending["results"]) == (
		"ticket",
		1,
		[{"index": 0, "tool": "local.pay"}],
		[None],
	)
	assert agent.approval_requests(parked.state) == ["local.pay"]
	saved = parked.state.to_dict()
	for wrong in ({}, {"answer": "yes"}, {"decision": "none"}):  # refused: nothing runs
		with pytest.raises(ConfigurationError):
			await agent.resume(RunState.from_dict(saved), **wrong)
	assert till.ran == [] and tickets.resumed == [(1, "NONE")]
	without = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([]), tools=till.tools
	)
	for go_on in (
		without.resume(RunState.from_dict(saved), decision="t-1"),
		without.run(history=RunState.from_dict(saved)),
	):
		with pytest.raises(ConfigurationError, match="no capability that parks so"):
			await go_on
	with pytest.raises(ConfigurationError, match="no capability that parks so"):
		without.approval_requests(saved)
	done = await agent.resume(RunState.from_dict(saved), decision="t-1")
	assert done.status == "success" and till.ran == [{"amount": 5}]
	assert tickets.resumed[-1] == (1, "T-1")
	(entry,) = results_of(model, 1)
	assert entry["ticket"] == "T-1" and entry["approval"]["decision"] == "approved"


class ParksOne(Capability):
	"""Parks the call at ``index`` with a `Park` of its own (the kernel's ``capability`` kind)."""

	name: ClassVar[str] = "parks-one"

	def __init__(self, index: int) -> None:
		self.index = index

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		ctx: Any = run  # the loop's run context
		return Park("later", {"why": "mine"}) if ctx.command_index == self.index else Proceed()


@pytest.mark.parametrize("index", [0, 1])
async def test_a_park_in_a_step_parked_under_a_kind_reads_that_it_waits_for_that_kind(
	index: int,
) -> None:
	"""Whichever call parks first, the step parks under the kind (``ticket``), and the call a
	`Park` parked reads that it waits for that kind, as an approval's reads ``approval``."""
	till = Till()
	pays = [call_tool("local.pay", amount=5), call_tool("local.pay", amount=6)]
	model = ScriptedModel([pays, finish("done")])
	tickets = Tickets()
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[ParksOne(index), tickets]
	)
	parked = await agent.run("pay")
	pending = parked.state.pending
	assert pending is not None and pending["kind"] == "ticket" and till.ran == []
	assert [c["index"] for c in pending["calls"]] == [1 - index]
	assert pending["results"][index] == {
		"tool": "local.pay",
		"ok": False,
		"error": (
			"not run: another call of this step waits for ticket; call it again once that is "
			"decided"
		),
	}


def test_a_kind_of_parked_step_names_one_capability() -> None:
	class Twin(Tickets):
		name: ClassVar[str] = "twin"

	class Asks(Tickets):
		name: ClassVar[str] = "asks"
		parks: ClassVar[str] = "human_input"  # the loop's own kind

	hooks = Hooks([Tickets()])
	assert hooks.by_kind == {"ticket": hooks.by_name["tickets"]}
	assert Hooks().by_kind == {} and hooks.adding(Pure(Proceed())).by_kind == hooks.by_kind
	with pytest.raises(ConfigurationError, match="capability 'tickets' already uses"):
		hooks.adding(Twin())
	with pytest.raises(ConfigurationError, match="the loop already uses"):
		Hooks([Asks()])
	assert hooks.by_kind == {"ticket": hooks.by_name["tickets"]}  # adding left it as it was


async def test_a_batch_reserves_the_gate_step_of_calls_the_taint_policy_may_send_there() -> None:
	"""A tainted run's outbound calls in one batch: each may go to the approvals gate (an
	`Approve` from safety), so each call's ``approval`` step is reserved in command order."""
	from openmolt_core.tools import tool

	@tool(labels=["untrusted"])
	def fetch() -> str:
		"""Fetch a page."""
		return "page"

	@tool(labels=["private"])
	def vault() -> str:
		"""Read the vault."""
		return "secret"

	sent: list[str] = []

	@tool(labels=["outbound"])
	def send(to: str) -> str:
		"""Send.

		Args:
			to: Whom.
		"""
		sent.append(to)
		return "sent"

	sends = [call_tool("local.send", to="a"), call_tool("local.send", to="b")]
	model = ScriptedModel([call_tool("local.fetch"), sends, finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A",
		model=model,
		tools=[fetch, vault, send],
		on_approval_request=lambda request: (asked.append(request.tool), request.approve())[1],
	)
	asked: list[str] = []
	port = JournalPort()
	assert (await agent.execute(None, port=port, input="go")).status == "success"
	assert sorted(sent) == ["a", "b"] and asked == ["local.send", "local.send"]  # both gated
	assert port.reserved == [
		[
			"approval:2:0:local.send",
			"tool:2:0:local.send",
			"approval:2:1:local.send",
			"tool:2:1:local.send",
		]
	]


class Audits(Capability):
	"""Journals an audit verdict of its own for each result (a remote service, in real life)."""

	name: ClassVar[str] = "acme-audit"

	def __init__(self, *, reserves: bool) -> None:
		self.reserves = reserves

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		if not self.reserves:
			return ()
		return [f"acme-audit:{run.step}:{run.command_index}"]

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any]:
		async def verdict() -> str:
			return f"fine: {call.input['n']}"

		seen = await run.port.step(f"acme-audit:{run.step}:{run.command_index}", verdict)
		return {**entry, "audit": seen}


@pytest.mark.parametrize("reserves", [True, False])
async def test_steps_a_capability_journals_in_a_batch_replay_where_they_were(
	reserves: bool,
) -> None:
	"""Steps named by reserve_steps keep command order: a replay whose calls end in another
	order finds each where it was; unreserved, they take the order the calls ended in."""

	async def slow(n: int) -> int:
		"""Return n after a delay that shrinks with n.

		Args:
			n: A number.
		"""
		await anyio.sleep(0.06 - n * 0.03)
		return n

	def agent(model: ScriptedModel) -> Any:
		return OpenMolt(entry_points=False).create_agent(
			name="A", model=model, tools=[slow], capabilities=[Audits(reserves=reserves)]
		)

	script = [[call_tool("local.slow", n=0), call_tool("local.slow", n=1)], finish("ok")]
	first = JournalPort()
	assert (await agent(ScriptedModel(script)).execute(None, port=first, input="go")).ok
	audits = [k for k in first.keys() if k.startswith("acme-audit")]
	assert audits == (
		["acme-audit:1:0", "acme-audit:1:1"] if reserves else ["acme-audit:1:1", "acme-audit:1:0"]
	)
	if not reserves:
		return
	# the replay answers both calls from the journal at once: they end in command order
	replay = JournalPort(first.recorded)
	done = await agent(ScriptedModel(script)).execute(None, port=replay, input="go")
	assert done.ok and replay.keys() == first.keys()


class NotesThenParks(Capability):
	"""Lets the first call run with a note holding ``secret``; parks the others."""

	name: ClassVar[str] = "notes"

	def __init__(self, secret: str) -> None:
		self.secret = secret

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Proceed | Park:
		if call.input["amount"] == 5:
			return Proceed(note={"seen": f"key {self.secret}"})
		return Park("wait")


async def test_a_decision_note_is_masked_in_the_result_and_the_saved_step() -> None:
	"""A note joins the call's result entry, which a parked step saves as it is: masked first."""
	secret = "sk-note-0123456789abcdef"
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	till = Till()
	pays = [call_tool("local.pay", amount=5), call_tool("local.pay", amount=6)]
	agent = om.create_agent(
		name="A",
		model=ScriptedModel([pays]),
		tools=till.tools,
		capabilities=[NotesThenParks(secret)],
	)
	parked = await agent.run("pay")
	assert parked.status == "approval_required" and till.ran == [{"amount": 5}]
	saved = parked.state.to_dict()
	assert saved["pending"]["results"][0]["seen"].startswith("key ")
	assert secret not in json.dumps(saved)


async def test_a_journal_that_held_a_call_with_its_approve_replays_it_held() -> None:
	"""A journal written when the Approve was the decision (``{"approve": ...}``) holds the
	call on replay, as it did: the approvals gate parks it, nothing runs."""
	till = Till()

	def agent() -> Any:
		model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
		return OpenMolt(entry_points=False).create_agent(
			name="A", model=model, tools=till.tools, capabilities=[Decides(Approve("r"))]
		)

	port = JournalPort()
	assert (await agent().execute(None, port=port, input="pay")).status == "approval_required"
	journal = dict(port.recorded)
	(slot,) = [s for s, (k, _) in journal.items() if k.startswith("hook:")]
	key, value = journal[slot]
	assert value == {"by": "decides", "proceed": None, "held": "r"}
	journal[slot] = (key, {"by": "decides", "approve": {"rule": "r", "input": None}})
	replayed = await agent().execute(None, port=JournalPort(journal), input="pay")
	assert replayed.status == "approval_required" and till.ran == []
	assert replayed.state.pending is not None and replayed.state.pending["calls"][0]["rule"] == "r"


@dataclass(slots=True, kw_only=True)
class SaidEvent(Event):
	"""A capability said something about a call (the tests' event)."""

	name: str = "acme-say:said"
	hook: str = ""


class Says(Capability):
	"""Emits ``acme-say:said`` from the hook named ``hook``, for every call."""

	name: ClassVar[str] = "acme-say"
	events: ClassVar[Mapping[str, type[Event]]] = {"acme-say:said": SaidEvent}

	def __init__(self, hook: str) -> None:
		self.hook = hook

	async def _say(self, run: Run, hook: str) -> None:
		if hook == self.hook:
			await run.emit(SaidEvent(agent=run.agent, step=run.step, hook=hook))

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Proceed:
		await self._say(run, "before_tool")
		return Proceed()

	async def replace_result(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		await self._say(run, "replace_result")
		return value

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any]:
		await self._say(run, "after_tool")
		return entry


@pytest.mark.parametrize("hook", ["before_tool", "replace_result", "after_tool"])
async def test_events_a_hook_emits_inside_a_journaled_step_keep_later_numbers_on_replay(
	hook: str,
) -> None:
	"""A journaled decision (before_tool) or result (replace_result) is not asked again on a
	replay, so its hook's events are not emitted again: the journal counts them, and the replay
	takes as many numbers. Before, every later event of a recovered run was numbered lower (two
	events could share a number with those delivered before the crash)."""

	script = [call_tool("local.pay", amount=5), call_tool("local.pay", amount=6), finish("ok")]

	def agent(replies: list[Any]) -> tuple[Any, list[tuple[str, int]]]:
		built = OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel(replies), tools=Till().tools, capabilities=[Says(hook)]
		)
		seen: list[tuple[str, int]] = []
		for name in ("acme-say:said", "tool:response", "finish"):
			built.on(name, lambda e: seen.append((e.name, e.seq)))
		return built, seen

	first, live = agent(script)
	port = JournalPort()
	done = await first.execute(None, port=port, input="go")
	assert done.ok and len([n for n, _ in live if n == "acme-say:said"]) == 2
	# A crash after the first call's steps: the rest of the run goes on live.
	cut = port.keys().index("model:2")
	partial = {slot: port.recorded[slot] for slot in sorted(port.recorded)[:cut]}
	second, recovered = agent(script[1:])  # the model is asked from step 2 on
	again = await second.execute(None, port=JournalPort(partial), input="go")
	assert again.ok and recovered and set(recovered) <= set(live)
	assert recovered[-1] == live[-1] == ("finish", done.state.seq)
	assert again.state.seq == done.state.seq
	# A replay of the whole journal numbers its run the same.
	third, _ = agent([])
	replayed = await third.execute(None, port=JournalPort(port.recorded), input="go")
	assert replayed.state.seq == done.state.seq
