"""The credential store refuses a user id that can alias another user's.

``agent.run(user=...)`` checks the user id (tests/core/test_user_id_aliases.py); the store it
keys is reached without a run too (`Accounts.complete` saves a user's tokens, `openmolt auth`,
an application's own code). It took ``alice\\u200b``, a full-width ``alice``, or a C1 control,
and kept them apart from ``alice`` in its rows while a page or a person read them alike; the
credential store's lock named ``(integration, user)`` joined by a NUL, so ``("x", "y\\x00z")``
and ``("x\\x00y", "z")`` shared one. The rule is the user id's (`_support.userids`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.errors import ConfigurationError

ALIASES = [
	"alice\x00",
	"alice\u200b",
	"\uff41\uff4c\uff49\uff43\uff45",
	"\u0430lice",
	"alice\x85",
	"alice ",
	"al\u202eice",
]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EncryptedFileStore:
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	return EncryptedFileStore(tmp_path / "credentials.enc")


@pytest.mark.parametrize("user", ALIASES)
def test_the_credential_store_refuses_an_alias_of_a_user(
	store: EncryptedFileStore, user: str
) -> None:
	store.save("github", {"accessToken": "gho_0123456789abcdef"}, user="alice")
	for call in (
		lambda: store.save("github", {"accessToken": "gho_fedcba9876543210"}, user=user),
		lambda: store.load("github", user=user),
	):
		with pytest.raises(ConfigurationError, match="user"):
			call()
	assert store.delete("github", user=user) is False  # an exact match: never alice's row
	assert store.entries() == [("github", "alice")]


@pytest.mark.parametrize("user", ALIASES)
def test_an_entry_an_older_version_kept_under_an_alias_can_be_forgotten(
	store: EncryptedFileStore, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""``entries()`` lists a row saved before the rule (its id refused now): ``delete`` of that
	exact id forgets it, and only it."""
	from openmolt_core._support import userids

	store.save("github", {"accessToken": "gho_0123456789abcdef"}, user="alice")
	with monkeypatch.context() as before:  # as a version without the rule saved it
		before.setattr(userids, "key_problem", lambda user: None)
		store.save("github", {"accessToken": "gho_fedcba9876543210"}, user=user)
	assert ("github", user) in store.entries()
	with pytest.raises(ConfigurationError, match="user"):
		store.load("github", user=user)
	assert store.delete("github", user=user) is True
	assert store.entries() == [("github", "alice")]


def test_the_credential_store_keeps_ordinary_users(store: EncryptedFileStore) -> None:
	for user in ("alice", "alice@example.com", "slack:T1:alice", "\u7530\u4e2d"):
		store.save("github", {"accessToken": f"gho_{len(user):016d}"}, user=user)
		assert store.load("github", user=user) == {"accessToken": f"gho_{len(user):016d}"}
