"""A value typed where a name goes is never said back by the command, nor stored as a name.

`openmolt keys set sk-...` (the value where the provider goes) answered "'sk-...' is neither a
provider nor an installed integration", `keys set sk-... apiKey` stored the value as the name of
a variable (`keys list` showed it), `keys set OPENMOLT_sk-...` did too, `auth ID --set sk-...`
said "--set 'sk-...': write KEY=VALUE", and a word left over (`keys set openai x sk-...`) was
said back as "unexpected 'sk-...'". A terminal's scrollback, a CI log and a shell's history of
errors keep what is printed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from openmolt_core.cli import _keystore
from openmolt_core.cli import main as openmolt_main

VALUES = [
	"sk-proj-abcDEF1234567890xyz",
	"xoxb-1234-5678-AbCdEfGh",
	"ghp_abcdefABCDEF0123456789",
	"AKIA1234567890ABCDEF",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
	"Pw-7f3a9e21c4d8",
]


@pytest.fixture(autouse=True)
def _store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("HOME", str(tmp_path / "home"))
	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def _stored() -> dict[str, str]:
	file = _keystore.path()
	return json.loads(file.read_text()) if file.exists() else {}


def _parts(value: str) -> list[str]:
	"""The value and its longer pieces, upper-cased too (a variable's name upper-cases it)."""
	pieces = [p for p in value.replace("_", "-").replace(".", "-").split("-") if len(p) >= 6]
	return [value, *pieces, *(p.upper() for p in pieces)]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize(
	"args",
	[
		["keys", "set", "{v}", "--value", "v-123456"],
		["keys", "set", "{v}", "apiKey", "--value", "v-123456"],
		["keys", "set", "{v}", "token", "--value", "v-123456"],
		["keys", "remove", "{v}"],
		["keys", "remove", "{v}", "apiKey"],
		["keys", "set", "OPENMOLT_{v}", "--value", "v-123456"],
		["keys", "remove", "OPENMOLT_{v}"],
		["keys", "set", "openai", "apiKey", "{v}", "--value", "v-123456"],
		["keys", "set", "openai", "apiKey", "--value", "v-123456", "{v}"],
	],
)
def test_keys_never_says_or_stores_a_value_given_as_a_name(
	args: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Refused (usage error), the value in no message, nothing stored under it."""
	try:
		code = openmolt_main([a.replace("{v}", value) for a in args])
	except SystemExit as exc:  # argparse's own exit
		code = exc.code
	out, err = capsys.readouterr()
	assert code == 2, (out, err)
	assert err.strip()
	for part in _parts(value):
		assert part not in out and part not in err, (part, err)
	assert not any(part in name for name in _stored() for part in _parts(value))


@pytest.mark.parametrize("value", VALUES)
def test_auth_set_without_a_key_does_not_say_the_value(
	value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`auth ID --set VALUE` (no ``KEY=``): refused without saying what was given."""
	from cryptography.fernet import Fernet

	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "credentials.enc"))
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_KEY", Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	assert openmolt_main(["auth", "github", "--set", value]) == 2
	out, err = capsys.readouterr()
	assert "--set" in err and "KEY=VALUE" in err, err
	for part in _parts(value):
		assert part not in out and part not in err, (part, err)


def test_names_are_still_said_back() -> None:
	"""A name (a typo, a leftover word) is still named: only what reads as a value is not."""
	from openmolt_core.cli._said import said

	for word in ("slak", "google-drive", "s3", "novalue", "hello", "OPENMOLT_SLAK_TOKEN"):
		assert said(word) == repr(word)
	for value in VALUES:
		assert value not in said(value)


def test_product_names_with_a_number_read_as_names() -> None:
	"""An id or key with a short number in a word (``route53``, ``office365``) is a name: its
	key can be stored with `keys set` (two digits in a row refused it); a token's numbers are
	longer, more, or start a word."""
	from openmolt_core.cli._said import reads_as_name

	for word in ("route53", "office365", "OPENMOLT_OFFICE365_TOKEN", "OPENMOLT_ROUTE53_ACCESS_KEY"):
		assert reads_as_name(word), word
	for value in ("sk_live_51Habc", "abc1def2ghi3", "key-2024-05-01", "a1b2c3"):
		assert not reads_as_name(value), value


def test_keys_set_stores_a_product_name_with_a_number(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`keys set OPENMOLT_ROUTE53_ACCESS_KEY --value V` stores it under that name."""
	code = openmolt_main(["keys", "set", "OPENMOLT_ROUTE53_ACCESS_KEY", "--value", "v-secret-1"])
	assert code == 0, capsys.readouterr().err
	assert _stored().get("OPENMOLT_ROUTE53_ACCESS_KEY") == "v-secret-1"
