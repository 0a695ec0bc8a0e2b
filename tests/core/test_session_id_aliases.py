"""``run``/``stream``/``resume`` with ``session=`` refuse a session id that can alias another's.

A session id is a key as a user id is (the conversation's turns, notes and waiting runs; an
AG-UI thread, an A2A context): ``"t-1\\u200b"``, a full-width ``ｔ-1`` or ``"t-1 "`` read as
``t-1`` somewhere, or pass for it to a person. The rule is the user id's, one function
(`openmolt_core._support.userids.key_problem`). It is said at the door, where a new id comes
in; a store keeps opening the rows an older version wrote under such an id (and clears them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openmolt import HumanInputUnavailable
from openmolt_core import OpenMolt
from openmolt_core._support import userids
from openmolt_core.errors import ConfigurationError
from openmolt_core.sessions import InMemorySession, SQLiteSession
from openmolt_core.testing import ScriptedModel, ask_human, finish
from tests.core.test_user_id_aliases import ACCEPTED, REFUSED

pytestmark = pytest.mark.anyio

SESSION_REFUSED = {name: given for name, given in REFUSED.items() if "\x00" not in given}
"""The user ids refused, as session ids (a NUL no store keeps: its own error, at the store)."""

SESSION_ACCEPTED = [
	*ACCEPTED,
	"agui:Helper:t-1",
	"hook:Bot:issue%00%0A7",  # a payload's control characters, escaped by the server
	"slack:Bot:C123/1700000000.0001",
	"a2a:openai%3Agpt-5-mini:crm:7f9c2b0e-1d2c-4a8e-9b1a-2f0c3d4e5f60",
	"\u00e9lodie:\U0001f642",
]


def _later(question: str) -> str:
	raise HumanInputUnavailable(question)  # nobody is there now: the run parks


def _agent(model: ScriptedModel | None = None) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="Helper", model=model or ScriptedModel([finish("ok")] * 3))


def _session(given: str) -> InMemorySession:
	session = InMemorySession("placeholder")  # the store refuses controls and length itself
	session.session_id = given  # (an application's own store may not)
	return session


@pytest.mark.parametrize("name", sorted(SESSION_REFUSED))
async def test_a_session_id_that_can_alias_another_is_refused_by_run(name: str) -> None:
	model = ScriptedModel([finish("ok")])
	agent = _agent(model)
	session = _session(SESSION_REFUSED[name])
	with pytest.raises(ConfigurationError) as caught:
		await agent.run("hi", session=session)
	said = str(caught.value)
	assert "session=" in said and "session id" in said, said
	assert model.requests == []
	assert await session.get_items() == []


@pytest.mark.parametrize("name", ["zero-width space", "full-width", "trailing space"])
async def test_stream_and_resume_refuse_it_too(name: str) -> None:
	model = ScriptedModel([[ask_human("which?")], finish("ok")])
	agent = _agent(model)
	agent.on_human_input_request = _later
	bad = _session(SESSION_REFUSED[name])
	with pytest.raises(BaseException) as caught:
		async with agent.stream("hi", session=bad) as run:
			async for _ in run:
				pass
			await run.result()
	error = caught.value
	while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
		error = error.exceptions[0]
	assert isinstance(error, ConfigurationError) and "session id" in str(error), repr(error)
	parked = await agent.run("hi")  # of no session yet: resume names the one it joins
	assert parked.status == "human_input_required"
	with pytest.raises(ConfigurationError, match="session id"):
		await agent.resume(parked.state, answer="that", session=bad)
	assert len(model.requests) == 1


async def test_ids_surfaces_send_are_taken() -> None:
	for given in SESSION_ACCEPTED:
		assert userids.key_problem(given) is None, given
		session = InMemorySession(given)
		done = await _agent().run("hi", session=session)
		assert done.status == "success", (given, done.error)


def test_one_rule_for_user_and_session_ids() -> None:
	"""Not a copy: the session id's refusal reads the rule the user id's reads."""
	assert userids.user_id_problem is userids.key_problem
	for given in [*REFUSED.values(), *SESSION_ACCEPTED]:
		assert (userids.refused_session_id(given) is None) == (
			userids.refused_user_id(given) is None
		), given


@pytest.mark.parametrize("name", ["zero-width space", "full-width", "Cyrillic a among Latin"])
async def test_a_session_an_older_version_kept_under_such_an_id_still_opens(
	name: str, tmp_path: Path
) -> None:
	"""Rows written before the rule stay readable and can be cleared: the store takes the id."""
	given = SESSION_REFUSED[name]
	path = tmp_path / "sessions.db"
	old = SQLiteSession(given, path)
	await old.add_items([{"role": "user", "content": "kept", "run_id": "r1"}])
	again = SQLiteSession(given, path)
	assert [i["content"] for i in await again.get_items()] == ["kept"]
	await again.clear()
	assert await SQLiteSession(given, path).get_items() == []


async def test_a_run_parked_in_such_a_session_before_the_rule_resumes(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Its state names the session: it was let in, and goes on; a new run there is refused."""
	model = ScriptedModel([[ask_human("which?")], finish("ok"), finish("never")])
	agent = _agent(model)
	agent.on_human_input_request = _later
	session = _session(SESSION_REFUSED["zero-width space"])
	with monkeypatch.context() as before:  # as a version without the rule ran it
		before.setattr(userids, "key_problem", lambda key: None)
		parked = await agent.run("hi", session=session)
	assert parked.status == "human_input_required"
	done = await agent.resume(parked.state, answer="that", session=session)
	assert done.status == "success"
	with pytest.raises(ConfigurationError, match="session id"):
		await agent.run("again", session=session)
	assert len(model.requests) == 2
