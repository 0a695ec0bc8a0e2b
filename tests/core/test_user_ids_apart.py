"""One end user's credentials, outputs and notes never reach a run for a user whose id looks alike.

A user id is whatever a surface makes it (``telegram:42``, ``hook:<agent>:<value>``, an
application's own): it may hold ``/``, ``..``, ``:``, another case. Every store reads a user's
data by the id as given, never a normalised or path-like form of it: the credential store, a
session's outputs and short-term notes. An id that can alias another (a look-alike letter:
Cyrillic ``а`` for ``a``, a full-width ``ａ``; a zero-width space, a trailing space) is refused
where it is given (`openmolt_core._support.userids`: tests/core/test_user_id_aliases.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core._support.userids import user_id_problem
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.errors import ConfigurationError
from openmolt_core.sessions import InMemorySession
from openmolt_core.testing import ScriptedModel, finish, update_memory

pytestmark = pytest.mark.anyio

OWNER = "alice/team:1"
LOOK_ALIKES = [
	"alice",
	"alice/team",
	"alice/team:1/..",
	"alice/team:1/../team:1",
	"alice/./team:1",
	"alice//team:1",
	"alice\\team:1",
	"alice/team%3A1",
	"alice/team:1 ",
	" alice/team:1",
	"alice/team:1\u200b",
	"\u0430lice/team:1",  # Cyrillic a
	"\uff41lice/team:1",  # full-width a
	"ALICE/TEAM:1",
	"alice/team\uff1a1",  # full-width colon
	"alice/team:\u0661",  # Arabic-Indic one
	"..",
	"/",
	":",
]
KEPT = [other for other in LOOK_ALIKES if user_id_problem(other) is None]
REFUSED = [other for other in LOOK_ALIKES if user_id_problem(other) is not None]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EncryptedFileStore:
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	return EncryptedFileStore(tmp_path / "credentials.enc")


def test_a_users_credentials_are_read_by_that_exact_id_only(store: EncryptedFileStore) -> None:
	store.save("mail", {"accessToken": "tok-alice-0001"}, user=OWNER)
	store.save("mail", {"accessToken": "tok-operator-0002"})
	assert len(KEPT) >= 10 and len(REFUSED) >= 6
	for other in KEPT:
		assert store.load("mail", user=other) is None, other
		assert not store.delete("mail", user=other), other
	for other in REFUSED:  # an alias of another id: refused, never read as hers
		with pytest.raises(ConfigurationError, match="user"):
			store.load("mail", user=other)
	assert store.load("mail", user=OWNER) == {"accessToken": "tok-alice-0001"}
	assert store.load("mail") == {"accessToken": "tok-operator-0002"}
	for other in KEPT:  # each a user of its own: saved apart, read apart
		store.save("mail", {"accessToken": f"tok-{other!r}"}, user=other)
	assert store.load("mail", user=OWNER) == {"accessToken": "tok-alice-0001"}
	for other in KEPT:
		assert store.load("mail", user=other) == {"accessToken": f"tok-{other!r}"}


@pytest.mark.parametrize("other", LOOK_ALIKES)
async def test_a_users_output_and_notes_in_a_session_never_reach_a_look_alikes_run(
	other: str,
) -> None:
	"""In a shared session (a group chat), what was said is everyone's; the output and short-term
	notes of a run for one user are read by runs for that very id only."""
	owner_model = ScriptedModel(
		[
			{"commands": [update_memory("note: overdraft-7731")]},
			{"commands": [finish({"balance": "overdraft-7731"})]},  # an output only: hers
		]
	)
	other_model = ScriptedModel([{"commands": [finish({"n": 1}, human_message="Hi.")]}])
	om = OpenMolt(entry_points=False)
	memory = {"short_term": {"data": ""}}
	owner = om.create_agent(name="Chat", model=owner_model, memory=memory)
	look_alike = om.create_agent(name="Chat", model=other_model, memory=memory)
	group = InMemorySession("group")
	await owner.run("my balance?", session=group, user=OWNER)
	kept = await group.get_items()
	assert [i["role"] for i in kept if "overdraft-7731" in json.dumps(i)] == ["agent", "memory"]
	if other in REFUSED:  # an alias of another id runs for no one
		with pytest.raises(ConfigurationError, match="user="):
			await look_alike.run("hello", session=group, user=other)
		assert await group.get_items() == kept
		return
	await look_alike.run("hello", session=group, user=other)
	seen = json.dumps([m.content for r in other_model.requests for m in r.messages])
	assert "my balance?" in seen  # what was said in the chat is everyone's
	assert "overdraft-7731" not in seen
	# the owner's next run reads both: the test would see them had they reached the look-alike
	again = ScriptedModel([{"commands": [finish({"n": 2}, human_message="Again.")]}])
	owners = om.create_agent(name="Chat", model=again, memory=memory)
	await owners.run("and now?", session=group, user=OWNER)
	mine = json.dumps([m.content for r in again.requests for m in r.messages])
	assert mine.count("overdraft-7731") >= 2, mine
