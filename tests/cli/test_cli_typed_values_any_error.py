"""No error of the command says back a typed word that reads as a value, whoever wrote it.

`openmolt auth sk-...` printed the plugin registry's "integrations:sk-...: no such integration";
`tools`, `tools slack TOOL`, `models`, `logs`, `sessions show`, `schedules`, `auth revoke`,
`-m`, an unknown command and an option's value did the same, each from its own module (some
printed straight to stderr). `cli/_said.py`'s rule held for `keys` and `auth --set` only. Now
the command's stderr masks every typed piece that does not read as a name, a number, a model's
name or a path (`unsaid`), for the whole command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openmolt_core.cli import main as openmolt_main
from openmolt_core.cli._said import unsaid

VALUES = [
	"sk-proj-abcDEF1234567890xyz",
	"xoxb-1234-5678-AbCdEfGh",
	"ghp_abcdefABCDEF0123456789",
	"AKIAIOSFODNN7EXAMPLE",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
	"Pw-7f3a9e21c4d8",
]


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("HOME", str(tmp_path / "home"))
	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
	monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize(
	"args",
	[
		["auth", "{v}"],
		["auth", "revoke", "{v}"],
		["tools", "{v}"],
		["integrations", "{v}"],
		["tools", "slack", "{v}"],
		["models", "{v}"],
		["logs", "{v}"],
		["logs", "--prune", "{v}"],
		["sessions", "show", "{v}"],
		["schedules", "{v}"],
		["-m", "{v}", "hi"],
		["-m", "openai", "--bogus={v}", "hi"],
		["{v}"],
		["ui", "--port", "{v}"],
	],
)
def test_no_error_says_a_typed_value_back(
	args: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
	try:
		code = openmolt_main([a.replace("{v}", value) for a in args])
	except SystemExit as exc:  # argparse's own exit
		code = exc.code
	out, err = capsys.readouterr()
	assert code not in (0, None), (out, err)
	assert err.strip(), out
	assert value not in err and value not in out, err


def test_names_numbers_models_and_paths_are_still_said(capsys: pytest.CaptureFixture[str]) -> None:
	"""A typo of a name, a model, a path, a number: named, so the user can see what is wrong."""
	words = [
		"slak",
		"googleDrive",
		"openai:gpt-5-mini",
		"anthropic:claude-sonnet-4-5-20250929",
		"google:gemini-2.5-pro",
		"ollama:llama3.1:8b",
		"./agents/support.json",
		"/tmp/pytest-of-me/test_x0/agent.json",
		"/dev/shm/pytest-of-root/pytest-1018/test_keys0/agent.json",
		"runs/2026/12/07/agent.json",
		"7d4f2cb",  # a run id's prefix (`openmolt answer`, `logs`): any of them, digits first too
		"1234567",
		"0123456789abcde",
		"99999",
		"1.5",
		"30d",
		"shop=acme",
		"my report (final).json",
	]
	assert unsaid(words) == frozenset()
	assert openmolt_main(["tools", "slak"]) == 2
	assert "integrations:slak" in capsys.readouterr().err


def test_stderr_is_given_back_after_the_command() -> None:
	import sys

	before = sys.stderr
	openmolt_main(["auth", VALUES[0]])
	assert sys.stderr is before


def test_a_run_ids_prefix_is_said_and_a_whole_hex_key_is_not() -> None:
	"""`openmolt answer 1234567 ...`: a run id's prefix of digits only was masked in "answered run
	<id>" (a test failed when the random id began with seven digits); a hex word of a key's
	length (a whole run id, a 32-hex API key) is still read as a value."""
	assert unsaid(["answer", "1234567", "yes"]) == frozenset()
	whole = "7d4f2cbc5872449cba7315b2ab5c49e8"
	assert unsaid(["logs", whole]) == {whole}
	assert unsaid(["0123456789abcdef"]) == {"0123456789abcdef"}
