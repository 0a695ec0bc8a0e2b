"""Sub-agents where they meet other features: in-doubt calls, direct resumes, budgets, taint.

A sub-agent runs inside one of its caller's tool calls, with what its caller hands down: the
caller's message guardrails (`CallerWords`), what its budget has left, its taint. These tests
pin what holds at each seam:

- a caller's guardrail agents that judge a sub-agent's words run inside the call of that
  sub-agent: found in doubt after a crash, the call would run them again, so they count in
  the call's in-doubt policy as the sub-agent's own tools and guardrail agents do;
- a sub-agent's run (or a guardrail agent's) that parked cannot be resumed on its own: its
  caller's call already ended, and resumed alone it would run without its caller's guardrails,
  budget, taint and handlers;
- the last-step estimate of a cost budget prices the coming call at the dearest model that may
  answer it (a fallback model serves a step its first model fails).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests.core.test_durability import _DoubtPort

pytestmark = pytest.mark.anyio


def _judge(om: OpenMolt, ran: list[str], labels: list[str], rounds: int = 3) -> Any:
	"""A guardrail agent that alerts someone (a tool labelled ``labels``), then allows."""

	@tool(labels=labels)
	def alert(text: str) -> str:
		"""Tell the security team.

		Args:
			text: What happened.
		"""
		ran.append(text)
		return "done"

	model = ScriptedModel(
		[call_tool("local.alert", text="look"), finish(action="allow", reason="fine")] * rounds
	)
	return om.create_agent(name="Judge", model=model, tools=[alert], output_schema=VERDICT_SCHEMA)


@tool(labels=[])
def look(q: str) -> str:
	"""Look something up.

	Args:
		q: The query.
	"""
	return "found"


def _nobody(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody can answer now: the run parks


def _asking_helper(om: OpenMolt) -> Any:
	"""A sub-agent with a read tool that asks a question (answered by its own handler)."""
	return om.create_agent(
		name="helper",
		model=ScriptedModel([ask_human("Which account?"), finish()]),
		tools=[look],
		on_human_input_request=lambda question: "the first",
	)


# in doubt: the caller's guardrails on words run inside the call ------------------------------


@pytest.mark.parametrize(
	("labels", "message", "policy"),
	[
		(["outbound"], True, "ask"),  # it judges the sub-agent's words, and may send
		([], True, "retry"),  # it judges them, but repeating it is safe
		(["outbound"], False, "retry"),  # it judges the caller's own finish only
	],
)
async def test_a_callers_message_guardrail_agent_counts_in_its_sub_agent_calls_policy(
	labels: list[str], message: bool, policy: str
) -> None:
	"""A caller's guardrail agent on words for people sets its sub-agent calls' in-doubt policy."""
	om = OpenMolt()
	guard = Guardrail(_judge(om, [], labels), on="output", message=message)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([finish()]),
		tools=[_asking_helper(om), look],
		guardrails=[guard],
	)
	assert boss.in_doubt == {"local.helper": policy, "local.look": "retry"}
	await om.aclose()


async def test_a_sub_agent_call_judged_by_a_callers_sending_guardrail_agent_is_not_run_again() -> (
	None
):
	"""In doubt after a crash, the call is asked about: the caller's judge does not alert twice."""
	om = OpenMolt()
	ran: list[str] = []
	guard = Guardrail(_judge(om, ran, ["outbound"]), on="output", message=True)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="find it"), finish()]),
		tools=[_asking_helper(om)],
		guardrails=[guard],
		on_human_input_request=_nobody,
	)
	port = _DoubtPort()
	result = await boss.execute(boss.new_state("go"), port=port)  # type: ignore[attr-defined]
	assert "tool:1:0:local.helper" in port.starts  # its start was recorded before it ran
	assert ran == []  # neither the sub-agent nor the caller's judge of its question ran again
	assert result.status == "human_input_required"
	assert "In doubt" in (result.state.pending or {}).get("message", "")
	await om.aclose()


# the last-step estimate: the model that may answer --------------------------------------------

CHEAP = (0.001, 0.0, 1.0, None)
DEAR = (0.001, 0.0, 12000.0, None)  # 5 output tokens (ScriptedModel's usage): $0.06 a call
SMALL = {"max_output_tokens": 5}


class Down:
	"""A cheap first model that is always overloaded: every step falls back."""

	name = "down"
	model = "m"

	def price(self, model: str) -> Any:
		return CHEAP

	async def generate(self, request: Any) -> Any:
		from openmolt import ProviderError

		raise ProviderError("overloaded (529)", provider="down", status_code=529, retryable=True)


def _notices(model: ScriptedModel) -> list[str | None]:
	"""The notice each request's last user turn carries, if any."""
	out = []
	for request in model.requests:
		last = json.loads(request.messages[-1].content)
		out.append(last.get("notice") if isinstance(last, dict) else None)
	return out


async def test_the_last_step_estimate_prices_the_dearest_model_that_may_answer() -> None:
	"""A dear fallback may answer: the call expected to cross max_cost at its price is the last."""
	from openmolt_core.testing import update_plan

	backup = ScriptedModel([update_plan("a")] * 3 + [finish("x")], price=DEAR)
	agent = OpenMolt(entry_points=False).create_agent(
		name="F", model=[Down(), backup], max_cost=0.1, model_config=SMALL
	)
	await agent.run()
	told = _notices(backup)
	assert told[0] is None  # $0 + $0.06 < $0.10
	assert "last step (the $0.1 cost budget)" in (told[1] or "")  # $0.06 + $0.06 >= $0.10


async def test_a_single_models_estimate_is_its_own_price() -> None:
	"""Without fallbacks the estimate is the one model's: a cheap one is not told too early."""
	from openmolt_core.testing import update_plan

	model = ScriptedModel([update_plan("a"), finish("x")], price=CHEAP)
	agent = OpenMolt(entry_points=False).create_agent(
		name="S", model=model, max_cost=0.1, model_config=SMALL
	)
	await agent.run()
	assert _notices(model) == [None, None]


# a nested run that parked goes on only with its caller -----------------------------------------


def refund(customer: str, amount: int) -> dict[str, Any]:
	"""Refund a customer.

	Args:
		customer: The customer id.
		amount: Cents.
	"""
	REFUNDED.append(amount)
	return {"refunded": amount}


REFUNDED: list[int] = []


def _parking_pair(om: OpenMolt, sub_replies: list[Any], **sub: Any) -> tuple[Any, Any]:
	"""A caller (``boss``) and its sub-agent (``helper``), whose refunds wait for approval."""
	helper = om.create_agent(
		name="helper",
		model=ScriptedModel(sub_replies),
		tools=[refund],
		requires_approval=["local.refund"],
		**sub,
	)
	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="refund ada"), finish("gave up")]),
		tools=[helper],
	)
	return boss, helper


async def test_a_sub_agents_run_parked_for_approval_is_not_resumed_on_its_own() -> None:
	"""Resuming the parked sub-run directly is refused, naming its caller's run: nothing runs."""
	REFUNDED.clear()
	om = OpenMolt(entry_points=False)
	boss, helper = _parking_pair(
		om, [call_tool("local.refund", customer="c", amount=500), finish("done")]
	)
	result = await boss.run("go")
	assert result.status == "success"  # its model read that the sub-agent parked, and finished
	parked = helper.last_state
	assert parked.pending["kind"] == "approval"
	assert parked.caller == {
		"run_id": result.state.run_id,
		"call": "tool:1:0:local.helper",
		"agent": "boss",
	}
	[request] = helper.approval_requests(parked)  # what waits can still be read
	with pytest.raises(ConfigurationError) as refused:
		await helper.resume(parked, decision=request.approve())
	said = str(refused.value)
	assert f"nested in run {result.state.run_id} (agent 'boss'" in said
	assert "resume it if it waits, or run agent 'boss' again" in said
	assert REFUNDED == []
	# A state saved and loaded elsewhere (a run store's) is refused the same way.
	again = RunState.from_dict(json.loads(json.dumps(parked.to_dict())))
	with pytest.raises(ConfigurationError, match="nested in run"):
		await helper.resume(again, decision=request.approve())
	with pytest.raises(ConfigurationError, match=r"^run: .*nested in run"):
		await helper.run(history=again)
	assert REFUNDED == []
	assert "caller" not in result.state.to_dict()  # a top-level run's state is as it was
	await om.aclose()


async def test_a_sub_agents_run_parked_on_a_question_is_not_answered_on_its_own() -> None:
	"""A sub-run parked on a question is refused an answer given to it directly."""
	om = OpenMolt(entry_points=False)
	boss, helper = _parking_pair(
		om, [ask_human("Which customer?"), finish("done")], on_human_input_request=_nobody
	)
	await boss.run("go")
	parked = helper.last_state
	assert parked.pending["kind"] == "human_input"
	with pytest.raises(ConfigurationError, match="of agent 'helper' is nested in run"):
		await helper.resume(parked, answer="ada")
	await om.aclose()


async def test_a_guardrail_agents_parked_run_is_not_resumed_on_its_own() -> None:
	"""A guardrail agent's run that parked (its verdict failed closed) is not resumed alone."""
	om = OpenMolt(entry_points=False)
	judge = om.create_agent(
		name="Judge",
		model=ScriptedModel([ask_human("Is this fine?"), finish(action="allow", reason="ok")]),
		output_schema=VERDICT_SCHEMA,
		on_human_input_request=_nobody,
	)
	agent = om.create_agent(
		name="A", model=ScriptedModel([finish("hi")]), guardrails=[Guardrail(judge, on="input")]
	)
	result = await agent.run("go")
	assert result.status == "guardrail_tripped"
	parked = judge.last_state
	assert parked.pending["kind"] == "human_input"
	assert parked.caller is not None and parked.caller["agent"] == "A"
	with pytest.raises(ConfigurationError, match="of agent 'Judge' is nested in run"):
		await judge.resume(parked, answer="yes")
	await om.aclose()


async def test_a_tool_going_on_with_a_nested_runs_history_keeps_its_caller() -> None:
	"""``run(answer, history=saved, parent=context.run)`` goes on nested: the caller hears it."""
	om = OpenMolt(entry_points=False)
	reviewer = om.create_agent(
		name="reviewer",
		model=ScriptedModel([ask_human("Which draft?"), finish("reviewed")]),
		on_human_input_request=_nobody,
	)
	saved: list[Any] = []

	@tool(labels=[])
	async def review(draft: str, context: ToolContext) -> str:
		"""Review a draft, asking which one when unsure.

		Args:
			draft: The draft, or the answer to the reviewer's question.
		"""
		if not saved:
			result = await reviewer.run(draft, parent=context.run)
		else:
			result = await reviewer.run(draft, history=saved.pop(), parent=context.run)
		if result.state.pending is not None:
			saved.append(result.state)
			return "the reviewer asks: which draft?"
		return str(result.output)

	boss = om.create_agent(
		name="boss",
		model=ScriptedModel(
			[
				call_tool("local.review", draft="d"),
				call_tool("local.review", draft="the 2nd"),
				finish(),
			]
		),
		tools=[review],
	)
	heard: list[Any] = []
	boss.on("finish", heard.append)
	result = await boss.run("go")
	assert result.status == "success", result.error
	nested = [e for e in heard if e.parent_run_id == result.state.run_id]
	assert [e.agent for e in nested] == ["reviewer", "reviewer"]  # parked, then went on
	await om.aclose()


# streaming: a sub-agent's preview hides its callers' secrets -----------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
async def test_a_callers_secret_split_across_a_sub_agents_deltas_never_streams(size: int) -> None:
	"""A sub-agent of another instance does not know the caller's secret: its halves are held too."""
	from tests.core.test_streaming import Streamer

	secret = "sk-live-7f3a9c2e11"
	reply = {"commands": [finish({"n": 1}, human_message=f"the key is {secret}, keep it")]}
	helper = OpenMolt(entry_points=False).create_agent(
		name="helper", instructions="Helps.", model=Streamer([reply], size=size)
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)
	main = om.create_agent(
		name="main",
		model=Streamer(
			[
				{"commands": [call_tool("local.helper", task="x")]},
				{"commands": [finish({"n": 2}, human_message="done")]},
			],
			size=size,
		),
		tools=[helper],
	)
	async with main.stream("go") as run:
		events = [e async for e in run]
		await run.result()
	streamed = "".join(
		e.text for e in events if e.name == "text:delta" and e.parent_run_id == run.run_id
	)
	assert secret not in streamed
	assert streamed.startswith('{"n": 1}the key is ') and streamed.endswith(", keep it")


# budgets: every agent whose calls the budget counts has a price ---------------------------------

PRICED = (1.0, 1.0, 1.0, None)


@pytest.mark.parametrize("where", ["own", "sub_agents", "callers_words"])
def test_max_cost_with_an_unpriced_guardrail_agent_is_refused_at_creation(where: str) -> None:
	"""A guardrail agent's calls spend the judged run's budget: an unknown price would count $0."""
	om = OpenMolt(entry_points=False)
	judge = om.create_agent(
		name="Judge", model=ScriptedModel([]), output_schema=VERDICT_SCHEMA
	)  # no price
	options: dict[str, Any] = {"model": ScriptedModel([], price=PRICED), "max_cost": 1.0}
	if where == "own":
		options["guardrails"] = [Guardrail(judge, on="input")]
	elif where == "sub_agents":
		helper = om.create_agent(
			name="helper",
			model=ScriptedModel([], price=PRICED),
			guardrails=[Guardrail(judge, on="input")],
		)
		options["tools"] = [helper]
	else:
		options["guardrails"] = [Guardrail(judge, on="output", message=True)]
	with pytest.raises(
		ConfigurationError, match=r"max_cost \(guardrail agent 'Judge'\): the price of .* unknown"
	):
		om.create_agent(name="A", **options)


# approvals: a sub-agent's call approved through its caller, after a restart ---------------------


async def test_a_sub_agents_call_approved_again_after_a_crash_runs() -> None:
	"""Run again after a crash, the sub-agent's call its caller's approver approves again runs."""
	# The call of the sub-agent is retried (its tools may repeat): its run starts over, under
	# the same run id, and asks the caller's approver again. That new decision was refused as a
	# replay of the first one (the ledger had the call decided), so the call did not run.
	from tests.core.test_durability import JournalPort

	done: list[str] = []

	@tool(labels=[])
	def repeatable(customer: str) -> str:
		"""Refund a customer (an idempotent service).

		Args:
			customer: The customer id.
		"""
		done.append(customer)
		return "ok"

	class Crash(Exception):
		pass

	class CrashingPort(JournalPort):
		async def step(self, key: str, fn: Any, **kw: Any) -> Any:
			if key == "tool:1:0:local.helper":  # the process dies before the result is journaled
				await fn()
				raise Crash
			return await super().step(key, fn, **kw)

	om = OpenMolt(entry_points=False)
	helper = om.create_agent(
		name="helper",
		model=ScriptedModel([call_tool("local.repeatable", customer="c"), finish("refunded")] * 2),
		tools=[repeatable],
		requires_approval=["local.repeatable"],
	)
	asked: list[str] = []

	def approve(request: Any) -> Any:
		asked.append(request.call)
		return request.approve()

	boss = om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="refund c"), finish("x")]),
		tools=[helper],
		on_approval_request=approve,
	)
	assert boss.in_doubt == {"local.helper": "retry"}
	saved = boss.new_state("go").to_dict()
	crashing = CrashingPort()
	with pytest.raises(Exception):  # noqa: B017  # the crash, as the run reports it
		await boss.execute(RunState.from_dict(saved), port=crashing)  # type: ignore[attr-defined]
	replay = JournalPort(journal=crashing.recorded)
	result = await boss.execute(RunState.from_dict(saved), port=replay)  # type: ignore[attr-defined]
	assert result.status == "success", result.error
	assert asked == ["tool:1:0:local.repeatable"] * 2
	assert done == ["c", "c"]  # approved again, it ran again (its tool may repeat)
	sub = helper.last_state.messages
	assert "replayed" not in sub[2].content and '"ok":true' in sub[2].content
