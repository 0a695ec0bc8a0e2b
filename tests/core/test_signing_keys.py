"""The keys that sign approvals and consent states and encrypt the credential store are secrets."""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core.secrets import environment_secrets

KEYS = {
	"OPENMOLT_APPROVAL_KEY": "approval-signing-key-0001",
	"OPENMOLT_AUTH_KEY": "consent-signing-key-0002",
	"OPENMOLT_CREDENTIALS_KEY": "fernet-store-key-0003",
	"STRIPE_WEBHOOK_SIGNING_KEY": "whsec-signing-key-0004",
}


def test_every_key_variable_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
	for name, value in KEYS.items():
		monkeypatch.setenv(name, value)
	assert set(KEYS.values()) <= environment_secrets()
	assert (
		environment_secrets({"SOME_KEY_FILE": "/path/to/key.pem", "KEYBOARD": "us-intl"}) == set()
	)
	om = OpenMolt(entry_points=False)
	assert set(KEYS.values()) <= om.secrets.values()


def test_the_accounts_key_given_in_code_is_a_secret() -> None:
	om = OpenMolt(entry_points=False, accounts={"key": "consent-key-in-code-0005"})
	assert "consent-key-in-code-0005" in om.secrets.values()
