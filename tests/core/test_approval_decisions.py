"""Decisions cannot be forged, replayed or applied to changed arguments; refusals keep the state."""

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.approvals import (
	ApprovalDecision,
	ApprovalRequest,
	Approvals,
	MemoryLedger,
	SQLiteLedger,
)
from openmolt_core.errors import ApprovalError, ConfigurationError
from openmolt_core.testing import ScriptedModel, finish

from .test_approvals import Shop, refund_call, roundtrip

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


KEY = "k" * 32


async def parked_run(
	shop: Shop, om: OpenMolt, *, amount: int = 500
) -> tuple[Any, dict[str, Any], ApprovalRequest]:
	agent = shop.agent(om, ScriptedModel([refund_call(amount), finish("done")]))
	result = await agent.run("go")
	saved = roundtrip(result.state)
	[request] = agent.approval_requests(saved)
	return agent, saved, request


async def refused(agent: Any, saved: dict[str, Any], decision: Any, problem: str) -> str:
	"""Resume must refuse the decision, leave the state as it was and run nothing."""
	before = copy.deepcopy(saved)
	with pytest.raises(ApprovalError) as caught:
		await agent.resume(saved, decision=decision)
	assert caught.value.problem == problem, caught.value
	assert saved == before
	return str(caught.value)


# forged -----------------------------------------------------------------------------------


async def test_a_decision_made_up_by_hand_is_forged() -> None:
	"""Right run, call and digest copied from the state, but no valid signature."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	made_up = ApprovalDecision(
		run_id=request.run_id, call=request.call, digest=request.digest, approved=True, id="x"
	)
	message = await refused(agent, saved, made_up, "forged")
	assert "not signed by this instance's approval key" in message
	assert shop.ran == []


@pytest.mark.parametrize(
	"change",
	[
		{"approved": True},  # a denial turned into an approval
		{"input": {"customer": "cus_1", "amount": 99_999}},  # an edit slipped in
		{"call": "tool:1:1:local.refund"},
		{"digest": "sha256:" + "0" * 64},
		{"signature": ""},
	],
)
async def test_an_altered_decision_is_forged(change: dict[str, Any]) -> None:
	"""Changing any field of a signed decision breaks its signature."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	data = {**request.deny("no").to_dict(), **change}
	await refused(agent, saved, data, "forged")
	assert shop.ran == []


async def test_a_decision_signed_with_another_key_is_forged() -> None:
	"""Another instance (another key) cannot decide for this one."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	elsewhere = ApprovalRequest.from_dict(request.to_dict(), approvals=Approvals(key="o" * 32))
	message = await refused(agent, saved, elsewhere.approve(), "forged")
	assert "OPENMOLT_APPROVAL_KEY" in message


async def test_instances_with_the_same_key_accept_each_others_decisions() -> None:
	"""A web page's process and a worker share Approvals(key=...)."""
	shop = Shop()
	worker = OpenMolt(entry_points=False, approvals=Approvals(key=KEY))
	agent, saved, request = await parked_run(shop, worker)
	page = Approvals(key=KEY)
	decision = ApprovalRequest.from_dict(request.to_dict(), approvals=page).approve()
	result = await agent.resume(saved, decision=decision.to_dict())
	assert result.status == "success" and len(shop.ran) == 1


async def test_the_key_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
	"""OPENMOLT_APPROVAL_KEY gives every instance of every process the same key."""
	monkeypatch.setenv("OPENMOLT_APPROVAL_KEY", KEY)
	shop = Shop()
	agent, saved, request = await parked_run(shop, OpenMolt(entry_points=False))
	other = ApprovalRequest.from_dict(request.to_dict(), approvals=Approvals())
	result = await agent.resume(saved, decision=other.approve())
	assert result.status == "success"


def test_a_short_key_is_refused() -> None:
	"""A key under 16 bytes is no secret."""
	with pytest.raises(ConfigurationError, match="at least 16 bytes"):
		Approvals(key="short")


async def test_something_that_is_no_decision_is_refused() -> None:
	"""A dict without the decision's fields."""
	shop = Shop()
	agent, saved, _ = await parked_run(shop, OpenMolt(entry_points=False))
	await refused(agent, saved, {"approved": True}, "forged")
	await refused(
		agent, saved, {"run_id": "r", "call": "c", "digest": "d", "approved": "yes"}, "forged"
	)


def malformed_signatures(good: str) -> dict[str, Any]:
	"""Every shape of signature that is not 64 lowercase hex digits, from a valid one."""
	return {
		"non-ASCII": "\u00e9" * 64,
		"one non-ASCII digit": good[:-1] + "\u00e9",
		"full-width digits": "\uff10" * 64,
		"a NUL": good[:-1] + "\x00",
		"a lone surrogate": good[:-1] + "\ud800",
		"too short": good[:-1],
		"too long": good + "0",
		"non-hex": "g" * 64,
		"upper case": good.upper(),
		"spaces around": f" {good} ",
		"empty": "",
		"None": None,
		"bytes": good.encode(),
		"very long": good * 20_000,
		"a number": 7,
		"a list": [good],
	}


MALFORMED = list(malformed_signatures("0" * 64))


@pytest.mark.parametrize("kind", MALFORMED)
@pytest.mark.parametrize("form", ["object", "dict"])
async def test_a_malformed_signature_is_refused_as_forged(kind: str, form: str) -> None:
	"""Non-ASCII, wrong length, non-hex, empty, None, bytes, very long: forged, state kept."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	good = request.approve()
	signature = malformed_signatures(good.signature)[kind]
	if form == "object":
		decision: Any = dataclasses.replace(good, signature=signature)
	else:
		decision = {**good.to_dict(), "signature": signature}
	message = await refused(agent, saved, decision, "forged")
	assert message == (
		f"decision {good.id} for {good.call} is not signed by this instance's approval key: it "
		"was forged or altered, or made by a process with another key (give both the same "
		"Approvals(key=...) or OPENMOLT_APPROVAL_KEY)"
	)
	assert shop.ran == []
	# The good decision still works: the refused one consumed nothing.
	result = await agent.resume(saved, decision=good)
	assert result.status == "success" and len(shop.ran) == 1


@pytest.mark.parametrize(
	"change",
	[
		{"run_id": None},
		{"run_id": 5},
		{"call": ["tool:1:0:local.refund"]},  # unhashable: it must not reach a dict lookup
		{"digest": b"sha256:0"},
		{"id": {"x": 1}},
		{"reason": ["no"]},
		{"input": {"amount": {1, 2}}},  # no JSON: it cannot have been signed
		{"input": ["a"]},
	],
)
async def test_a_decision_with_a_field_of_the_wrong_type_is_forged(change: dict[str, Any]) -> None:
	"""A decision made in code with odd fields is refused as forged, never with a crash."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	decision = dataclasses.replace(request.approve(), **change)
	await refused(agent, saved, decision, "forged")
	assert shop.ran == []


@pytest.mark.parametrize("kind", MALFORMED)
async def test_a_handler_returning_a_malformed_signature_runs_nothing(kind: str) -> None:
	"""In process, the call is refused as forged; the run goes on and ends normally."""
	shop = Shop()
	om = OpenMolt(entry_points=False)

	def handler(request: ApprovalRequest) -> ApprovalDecision:
		good = request.approve()
		return dataclasses.replace(good, signature=malformed_signatures(good.signature)[kind])

	model = ScriptedModel([refund_call(), finish("x")])
	agent = shop.agent(om, model, on_approval_request=handler)
	result = await agent.run("go")
	assert result.status == "success"
	assert shop.ran == []
	assert model.last_turn()["results"][0]["error"] == (
		"not run: its decision was refused (forged)"
	)


@pytest.mark.parametrize("kind", MALFORMED)
def test_check_signature_refuses_every_malformed_signature(kind: str) -> None:
	"""The Python API: Approvals.check_signature and verify raise ApprovalError, nothing else."""
	approvals = Approvals(key=KEY)
	request = ApprovalRequest(
		run_id="r",
		call="tool:1:0:x.y",
		agent="a",
		tool="x.y",
		input={},
		reason="",
		rule="",
		digest="sha256:0",
		_approvals=approvals,
	)
	good = request.deny("no")
	approvals.check_signature(good)
	bad = dataclasses.replace(good, signature=malformed_signatures(good.signature)[kind])
	with pytest.raises(ApprovalError) as caught:
		approvals.check_signature(bad)
	assert caught.value.problem == "forged"
	with pytest.raises(ApprovalError) as caught:
		approvals.verify(bad, run_id="r", call="tool:1:0:x.y", digest="sha256:0")
	assert caught.value.problem == "forged"


async def test_a_non_ascii_digest_is_stale_not_a_crash() -> None:
	"""A request rebuilt with an odd digest signs; the check against the call says stale."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	odd = ApprovalRequest.from_dict(
		{**request.to_dict(), "digest": "sha256:\u00e9"}, approvals=om.approvals
	)
	await refused(agent, saved, odd.approve(), "stale")


async def test_something_that_is_no_mapping_is_refused() -> None:
	"""from_dict on a list or a string refuses it as forged; resume on bytes says what to give."""
	with pytest.raises(ApprovalError) as caught:
		ApprovalDecision.from_dict(["run_id"])  # type: ignore[arg-type]
	assert caught.value.problem == "forged"
	shop = Shop()
	agent, saved, _ = await parked_run(shop, OpenMolt(entry_points=False))
	with pytest.raises(ConfigurationError, match="decision must be a decision"):
		await agent.resume(saved, decision=b"0" * 64)  # type: ignore[arg-type]


# replayed ---------------------------------------------------------------------------------


async def test_a_decision_is_used_once_even_on_a_copy_of_the_state() -> None:
	"""Resuming the same saved state twice with the same decision runs the refund once."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	decision = request.approve()
	copy_of_saved = copy.deepcopy(saved)
	result = await agent.resume(saved, decision=decision)
	assert result.status == "success"
	message = await refused(agent, copy_of_saved, decision, "replayed")
	assert f"was already decided (decision {decision.id})" in message
	assert len(shop.ran) == 1


async def test_a_call_is_decided_once_whatever_the_decision() -> None:
	"""A second, fresh decision for a call already decided is refused too."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	spare = copy.deepcopy(saved)
	await agent.resume(saved, decision=request.deny("no"))
	[again] = agent.approval_requests(spare)
	await refused(agent, spare, again.approve(), "replayed")
	assert shop.ran == []


async def test_a_decision_for_another_run_is_refused() -> None:
	"""Two parked runs with the same call key: one's decision does not open the other."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, _, request = await parked_run(shop, om)
	_, other_saved, other_request = await parked_run(shop, om)
	assert other_request.call == request.call and other_request.run_id != request.run_id
	message = await refused(agent, other_saved, request.approve(), "replayed")
	assert "a decision serves only its own call" in message


async def test_a_handler_that_answers_for_another_call_runs_nothing() -> None:
	"""In process too, a decision must be for the call being decided."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	_, _, old = await parked_run(shop, om)
	model = ScriptedModel([refund_call(), finish("x")])
	agent = shop.agent(om, model, on_approval_request=lambda request: old.approve())
	errors: list[Any] = []
	agent.on("error", errors.append)
	await agent.run("go")
	assert shop.ran == []
	assert model.last_turn()["results"][0]["error"] == (
		"not run: its decision was refused (replayed)"
	)
	assert errors[0].kind == "approval"


async def test_the_sqlite_ledger_keeps_single_use_across_instances(tmp_path: Path) -> None:
	"""Two processes (two instances) share a ledger file: the second resume is refused."""
	shop = Shop()
	ledger_file = tmp_path / "approvals.db"
	first = OpenMolt(
		entry_points=False, approvals=Approvals(key=KEY, ledger=SQLiteLedger(ledger_file))
	)
	agent, saved, request = await parked_run(shop, first)
	decision = request.approve().to_dict()
	spare = copy.deepcopy(saved)
	await agent.resume(saved, decision=decision)
	second = OpenMolt(
		entry_points=False, approvals=Approvals(key=KEY, ledger=SQLiteLedger(ledger_file))
	)
	other = shop.agent(second, ScriptedModel([]))
	await refused(other, spare, decision, "replayed")
	assert len(shop.ran) == 1
	# Without the shared file, the copy would run again: that is what the ledger is for.
	fresh = OpenMolt(entry_points=False, approvals=Approvals(key=KEY, ledger=MemoryLedger()))
	result = await shop.agent(fresh, ScriptedModel([finish()])).resume(spare, decision=decision)
	assert result.status == "success" and len(shop.ran) == 2


# stale ------------------------------------------------------------------------------------


async def test_arguments_changed_after_approval_are_refused() -> None:
	"""The saved call's amount is raised after the decision: its digest no longer matches."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	decision = request.approve()
	saved["pending"]["commands"][0]["input"]["amount"] = 99_999
	message = await refused(agent, saved, decision, "stale")
	assert "the arguments changed after approval" in message
	assert shop.ran == []


async def test_a_decision_for_a_call_that_no_longer_waits_is_stale() -> None:
	"""A decision kept from an earlier park of the run, once the run has moved on."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	model = ScriptedModel([refund_call(100), refund_call(200), finish()])
	agent = shop.agent(om, model)
	first = await agent.run("go")
	[request] = agent.approval_requests(first.state)
	kept = request.approve()
	second = await agent.resume(first.state, decision=kept)
	assert second.status == "approval_required"
	saved = roundtrip(second.state)
	message = await refused(agent, saved, kept, "stale")
	assert "tool:1:0:local.refund, which does not wait" in message
	assert "tool:2:0:local.refund" in message


async def test_an_edit_that_breaks_the_schema_is_refused_before_anything_runs() -> None:
	"""resume checks edited inputs against the tool's schema first."""
	shop = Shop()
	om = OpenMolt(entry_points=False)
	agent, saved, request = await parked_run(shop, om)
	decision = request.approve(input={"customer": "cus_1"})
	message = await refused(agent, saved, decision, "invalid")
	assert "does not match the input schema" in message
	good = request.approve(input={"customer": "cus_1", "amount": 1})
	result = await agent.resume(saved, decision=good)
	assert result.status == "success" and shop.ran == [
		("refund", {"customer": "cus_1", "amount": 1})
	]


async def test_two_decisions_for_one_call_are_refused() -> None:
	"""One decision per call."""
	shop = Shop()
	agent, saved, request = await parked_run(shop, OpenMolt(entry_points=False))
	await refused(agent, saved, [request.approve(), request.deny("no")], "replayed")


async def test_the_decision_is_audited_in_the_history() -> None:
	"""The result turn keeps the decision's id and the digest of what it approved."""
	shop = Shop()
	agent, saved, request = await parked_run(shop, OpenMolt(entry_points=False))
	decision = request.approve(reason="ticket 42")
	result = await agent.resume(saved, decision=decision)
	turn = json.loads(result.state.messages[2].content)["results"]  # step 1's result turn
	assert turn[0]["approval"] == {
		"decision": "approved",
		"id": decision.id,
		"digest": request.digest,
		"rule": "local.refund",
		"reason": "ticket 42",
	}


async def test_a_tampered_pending_step_is_refused() -> None:
	"""A parked call whose key no longer matches its command (or the step) cannot be resumed."""
	shop = Shop()
	agent, saved, request = await parked_run(shop, OpenMolt(entry_points=False))
	moved = copy.deepcopy(saved)
	moved["steps"] = 7  # the call key says step 1: the gate must not lose track of it
	with pytest.raises(ConfigurationError, match="pending step is damaged"):
		await agent.resume(moved, decision=request.approve())
	swapped = copy.deepcopy(saved)
	swapped["pending"]["commands"][0]["tool"] = "local.lookup"
	swapped["pending"]["commands"][0]["input"] = {"customer": "cus_1"}
	with pytest.raises(ConfigurationError, match="pending step is damaged"):
		await agent.resume(swapped, decision=request.approve())
	assert shop.ran == []


class JournalPort:
	"""A stand-in for a durable engine: journals each step's JSON value; a replay reads it back."""

	def __init__(self) -> None:
		self.journal: dict[str, Any] = {}
		self.keys: list[str] = []

	def now(self) -> float:
		return 0.0

	async def sleep(self, seconds: float) -> None:
		return None

	async def step(self, key: str, fn: Any, *, encode: Any = None, decode: Any = None) -> Any:
		self.keys.append(key)
		if key in self.journal:
			stored = json.loads(self.journal[key])
			return decode(stored) if decode else stored
		value = await fn()
		self.journal[key] = json.dumps(encode(value) if encode else value)
		return value


async def test_a_replayed_run_neither_asks_again_nor_applies_twice() -> None:
	"""After a restart the journal answers the decision and the call: no new ask, no new claim."""
	from openmolt_core.llm import Message

	shop = Shop()
	om = OpenMolt(entry_points=False)
	asked: list[str] = []

	def approve(request: ApprovalRequest) -> ApprovalDecision:
		asked.append(request.call)
		return request.approve()

	port = JournalPort()

	async def one_run() -> Any:
		agent = shop.agent(
			om, ScriptedModel([refund_call(), finish("done")]), on_approval_request=approve
		)
		from openmolt import RunState

		state = RunState(run_id="run-1")
		state.messages.append(Message("user", agent.first_message("go", state)))
		return await agent._loop(agent._context(state, port), None)

	first = await one_run()
	assert "approval:1:0:local.refund" in port.keys
	assert port.keys.index("approval:1:0:local.refund") < port.keys.index("tool:1:0:local.refund")
	replayed = await one_run()  # the process restarted: same run id, same journal
	assert asked == ["tool:1:0:local.refund"]
	assert len(shop.ran) == 1
	assert first.state.messages[2].content == replayed.state.messages[2].content
	assert json.loads(replayed.state.messages[2].content)["results"][0]["ok"] is True


@pytest.mark.parametrize(
	"change",
	[{"digest": None}, {"call": 5}, {"run_id": b"r"}, {"input": ["x"]}, {"tool": None}],
)
def test_a_malformed_request_is_refused_when_rebuilt(change: dict[str, Any]) -> None:
	"""ApprovalRequest.from_dict names the bad field instead of signing odd decisions."""
	data = {
		"run_id": "r",
		"call": "tool:1:0:x.y",
		"agent": "a",
		"tool": "x.y",
		"input": {},
		"digest": "sha256:0",
		**change,
	}
	with pytest.raises(ConfigurationError, match="not an approval request"):
		ApprovalRequest.from_dict(data, approvals=Approvals(key=KEY))
