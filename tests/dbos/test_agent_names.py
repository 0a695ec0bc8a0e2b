"""A stored durable run is driven only by the agent it was started with, by its exact name.

A run id names its agent only by a slug (serve's ``run_id_for``), so "Helper" and "helper" look
alike there; the run's workflow records the exact name. Every way of going on with a stored run
(decisions, an answer, a resume after authorization, a state read back with ``om.result``,
``run(history=...)``, a new run given a taken run id) refuses an agent of another name: a
`ConfigurationError` naming both, nothing run, the run left as it was for its own agent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.credstore import KEY_VARIABLE
from openmolt_core.errors import ConfigurationError
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "core" / "integrations"))
from _fake_oauth import FakeAuthServer  # noqa: E402

pytestmark = pytest.mark.anyio

REFUSED = r"run \S+ is a run of agent 'Helper', not of agent 'helper'"


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


def _workflows(store: str, run_id: str) -> list[str]:
	"""The ids of the run's workflows in the store (its first, then its segments)."""
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		found = client.list_workflows(workflow_id_prefix=run_id, load_input=False)
		return sorted(s.workflow_id for s in found)
	finally:
		client.destroy()


def _pair(om: OpenMolt, paid: list[str], **options: Any) -> tuple[Any, Any]:
	"""Two agents whose names differ only in case: "Helper" (whose runs these are), "helper"."""

	@tool
	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		paid.append(invoice)
		return f"paid {invoice}"

	def script(who: str) -> ScriptedModel:
		first = options.get("first", call_tool("local.pay", invoice=f"{who}-1"))
		return ScriptedModel(
			[first, call_tool("local.pay", invoice=f"{who}-2"), finish(result=who)]
		)

	extra = {k: v for k, v in options.items() if k != "first"}
	own = om.create_agent(name="Helper", model=script("own"), tools=[pay], **extra)
	other = om.create_agent(name="helper", model=script("other"), tools=[pay], **extra)
	return own, other


@pytest.mark.parametrize("read_back", [False, True], ids=["state", "om.result"])
async def test_decisions_for_another_agent_s_parked_calls_are_refused(
	url: str, read_back: bool
) -> None:
	"""Approval decisions through "helper" for a run of "Helper" run nothing; "Helper" goes on."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	own, other = _pair(om, paid, requires_approval=["local.pay"])
	try:
		parked = await own.run("pay")
		assert parked.status == "approval_required" and paid == []
		run_id = parked.state.run_id
		state = parked.state
		if read_back:  # as serve's chats do: the state read from the store
			stored = await om.result(run_id)  # the run's segment has ended: it waits for nothing
			assert stored is not None and stored.status == "approval_required"
			state = stored.state
		[request] = other.approval_requests(state)
		with pytest.raises(ConfigurationError, match=REFUSED) as caught:
			await other.resume(state, decision=request.approve())
		assert "'Helper'" in str(caught.value) and "'helper'" in str(caught.value)
		assert paid == [] and _workflows(url, run_id) == [run_id]  # no segment began
		with pytest.raises(ConfigurationError, match=REFUSED):  # nor from the state as history
			await other.run(history=state)
		assert paid == [] and _workflows(url, run_id) == [run_id]
		[request] = own.approval_requests(state)
		going = await own.resume(state, decision=request.approve())
		assert going.status == "approval_required" and paid == ["own-1"]  # its own next call
	finally:
		await om.aclose()


async def test_an_answer_through_another_agent_is_refused_and_the_question_still_waits(
	url: str,
) -> None:
	"""An answer through "helper" to a question "Helper"'s run waits on is not delivered."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	own, other = _pair(om, paid, first=ask_human("Pay which?"), on_human_input_request=park)
	try:
		parked = await own.run("pay")
		assert parked.status == "human_input_required"
		run_id = parked.state.run_id
		with pytest.raises(ConfigurationError, match=REFUSED):
			await other.resume(parked.state, answer="all of them")
		[waiting] = await om.pending()
		assert (waiting.run_id, waiting.agent, waiting.question) == (run_id, "Helper", "Pay which?")
		stored = await om.result(run_id, wait=False)  # read back, as serve's chats do
		assert stored is not None and stored.status == "human_input_required"
		with pytest.raises(ConfigurationError, match=REFUSED):
			await other.resume(stored.state, answer="all of them")
		assert paid == [] and _workflows(url, run_id) == [run_id]
		going = await own.resume(parked.state, answer="the first")
		assert going.ok and going.output == {"result": "own"}
		assert paid == ["own-2"]  # "own-1" is the question the script asked instead
	finally:
		await om.aclose()


async def test_a_new_run_given_another_agent_s_run_id_is_not_attached_to_it(url: str) -> None:
	"""A run id taken by "Helper"'s run, given to "helper": refused, not that run's result."""
	paid: list[str] = []
	om = OpenMolt(durability=url, entry_points=False)
	own, other = _pair(om, paid)
	try:
		done = await own.run("pay", history=RunState(run_id="taken-run"))
		assert done.ok and paid == ["own-1", "own-2"]
		with pytest.raises(ConfigurationError, match=REFUSED):
			await other.run("pay", history=RunState(run_id="taken-run"))
		with pytest.raises(ConfigurationError, match=REFUSED):
			await other.start("pay", run_id="taken-run")
		assert paid == ["own-1", "own-2"] and _workflows(url, "taken-run") == ["taken-run"]
		again = await own.run("pay", history=RunState(run_id="taken-run"))  # its own: attached
		assert again.output == {"result": "own"} and paid == ["own-1", "own-2"]
	finally:
		await om.aclose()


@pytest.fixture
def auth_server() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


async def test_a_resume_after_authorization_through_another_agent_is_refused(
	url: str, tmp_path: Path, auth_server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run of "Mailer" parked on an account, connected, resumed by "mailer": refused."""
	from accounts_agent import build

	from openmolt_core.accounts import authorization_requests

	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	seen: list[str] = []
	om, own = build(
		url,
		str(tmp_path / "credentials.enc"),
		auth_server.url,
		ScriptedModel([call_tool("mail.me"), finish(result="own")]),
		seen,
	)
	other = om.create_agent(
		name="mailer",
		model=ScriptedModel([finish(result="other")]),
		integrations=[{"integration": "mail", "account": "user"}],
	)
	try:
		parked = await own.run("who am I?", user="alice")
		assert parked.status == "authorization_required"
		run_id = parked.state.run_id
		[request] = authorization_requests(parked.state)
		async with httpx.AsyncClient(trust_env=False) as browser:
			location = (await browser.get(request["url"])).headers["location"]
		connected = await om.accounts.complete(location)
		assert connected.run_id == run_id
		stored = await om.result(run_id)
		assert stored is not None and stored.status == "authorization_required"
		for state in (parked.state, stored.state):
			with pytest.raises(
				ConfigurationError, match=r"run of agent 'Mailer', not of agent 'mailer'"
			):
				await other.resume(state)
		assert seen == [] and _workflows(url, run_id) == [run_id]
		done = await own.resume(parked.state)
		assert done.ok and done.output == {"result": "own"} and len(seen) == 1
	finally:
		await om.aclose()
