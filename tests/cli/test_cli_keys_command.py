"""`openmolt keys`: names it does not know, values from a pipe, and the store's file modes."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from openmolt_core.cli import _keystore
from openmolt_core.cli import main as openmolt_main


@pytest.fixture(autouse=True)
def _store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
	monkeypatch.setenv("HOME", str(tmp_path / "home"))
	monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def _stored() -> dict[str, str]:
	file = _keystore.path()
	return json.loads(file.read_text()) if file.exists() else {}


@pytest.mark.parametrize(
	("args", "said"),
	[
		(["slak"], "did you mean 'slack'?"),
		(["slak", "token"], "did you mean 'slack'?"),
		(["googledrive"], "did you mean 'googleDrive'?"),
		(["opnai"], "did you mean 'openai'?"),
		(["slack", "tokn"], "did you mean 'token'?"),
		(["slack.tokn"], "did you mean 'token'?"),
		(["s3", "secretKey"], "did you mean 'secretAccessKey'?"),
		(["OPENMOLT_SLAK_TOKEN"], "did you mean OPENMOLT_SLACK_TOKEN?"),
		(["OPENMOLT_SLACK_TOKN"], "did you mean OPENMOLT_SLACK_TOKEN?"),
		(["OPENMOLT_OPENAI_API_KY"], "did you mean OPENMOLT_OPENAI_API_KEY?"),
		(["openai", "baseUrl"], "its one key is its API key"),
	],
)
def test_a_name_or_key_it_does_not_know_is_refused_with_the_nearest(
	args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Nothing is stored under a misspelt name; the message offers the one meant.

	`openmolt keys set slak token` stored OPENMOLT_SLAK_TOKEN, which nothing reads, and an
	unknown id or key was refused without the name it was close to.
	"""
	assert openmolt_main(["keys", "set", *args, "--value", "v-123456"]) == 2
	assert said in capsys.readouterr().err
	assert _stored() == {}


@pytest.mark.parametrize(
	("args", "extra", "near"),
	[
		(["set", "acmeCrm"], "acme-crm", None),
		(["set", "acme-crm", "apiKey"], "acme-crm", None),
		(["remove", "acme-crm"], "acme-crm", None),
		(["set", "acme-cmr"], "acme-crm", "did you mean 'acme-crm'? "),
		(["set", "google-maps"], "google-maps", None),  # not a typo of the provider google
	],
)
def test_a_built_in_integration_that_is_not_installed_is_named_with_its_install_command(
	args: list[str],
	extra: str,
	near: str | None,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""`openmolt keys set slack` without openmolt[slack] said 'neither a provider nor an installed
	integration', as for a typo; `openmolt tools slack` and `auth slack` named the install command."""
	from openmolt_core import _hints

	monkeypatch.setattr(_hints, "known_extras", lambda: frozenset({"acme-crm", "google-maps"}))
	value = ["--value", "v-123456"] if args[0] == "set" else []
	assert openmolt_main(["keys", *args, *value]) == 2
	err = capsys.readouterr().err
	assert f"{near or ''}run: {_hints.install_command(f'openmolt[{extra}]')}" in err, err
	assert "not installed" in err and "neither a provider" not in err, err
	assert _stored() == {}


def test_an_integration_and_its_key_may_be_dotted(capsys: pytest.CaptureFixture[str]) -> None:
	"""``keys set s3.secretAccessKey`` is ``keys set s3 secretAccessKey``, as ``tools slack.postMessage`` is."""
	assert openmolt_main(["keys", "set", "s3.secretAccessKey", "--value", "v-123456"]) == 0
	assert _stored() == {"OPENMOLT_S3_SECRET_ACCESS_KEY": "v-123456"}


def test_a_variable_nothing_installed_reads_is_stored_with_a_note(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""For an integration installed later: kept, and said."""
	assert openmolt_main(["keys", "set", "OPENMOLT_ACME_TOKEN", "--value", "v-123456"]) == 0
	assert "no installed provider or integration reads OPENMOLT_ACME_TOKEN" in (
		capsys.readouterr().err
	)
	assert _stored() == {"OPENMOLT_ACME_TOKEN": "v-123456"}
	# Removed, it is not said to be stored for later (the note was printed on remove too).
	assert openmolt_main(["keys", "remove", "OPENMOLT_ACME_TOKEN"]) == 0
	assert "stored" not in capsys.readouterr().err
	assert _stored() == {}


def test_a_value_from_a_pipe_and_an_empty_pipe(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Not a terminal: one line is read (its line end dropped); nothing read stores nothing."""
	monkeypatch.setattr("sys.stdin", io.StringIO(""))
	assert openmolt_main(["keys", "set", "slack"]) == 2
	assert "no value was given; nothing stored" in capsys.readouterr().err
	assert _stored() == {}
	monkeypatch.setattr("sys.stdin", io.StringIO("  xoxb-piped-123\n"))
	assert openmolt_main(["keys", "set", "slack"]) == 0
	out = capsys.readouterr()
	assert _stored() == {"OPENMOLT_SLACK_TOKEN": "xoxb-piped-123"}
	assert "xoxb-piped-123" not in out.out + out.err


def test_the_store_is_private_whatever_the_umask() -> None:
	"""Made under umask 0, the file is 0600 and its folder 0700."""
	old = os.umask(0)
	try:
		assert openmolt_main(["keys", "set", "slack", "--value", "xoxb-1"]) == 0
	finally:
		os.umask(old)
	file = _keystore.path()
	assert stat.S_IMODE(file.stat().st_mode) == 0o600
	assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700


def test_a_store_readable_by_others_is_narrowed_when_read(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""A store an older version (or a copy) left 0644 in a 0755 folder is 0600/0700 once read.

	It stayed readable by every local user until the next `keys set` rewrote it.
	"""
	file = _keystore.path()
	file.parent.mkdir(parents=True)
	file.write_text(json.dumps({"OPENMOLT_SLACK_TOKEN": "xoxb-old"}))
	os.chmod(file, 0o644)
	os.chmod(file.parent, 0o755)
	assert openmolt_main(["keys", "list"]) == 0
	assert capsys.readouterr().out.split() == ["OPENMOLT_SLACK_TOKEN"]
	assert stat.S_IMODE(file.stat().st_mode) == 0o600
	assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700


def test_keys_list_json_names_the_variables_never_the_values(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""`openmolt keys list --json` is a JSON list of the stored variables (`[]` when none)."""
	assert openmolt_main(["keys", "list", "--json"]) == 0
	captured = capsys.readouterr()
	assert json.loads(captured.out) == [] and captured.err == ""
	_keystore.save("OPENMOLT_SLACK_TOKEN", "xoxb-hidden")
	assert openmolt_main(["keys", "list", "--json"]) == 0
	out = capsys.readouterr().out
	assert json.loads(out) == ["OPENMOLT_SLACK_TOKEN"] and "xoxb-hidden" not in out


@pytest.mark.parametrize(
	("word", "said"),
	[
		("get", "no action 'get': stored values are never printed; `openmolt keys list` names"),
		("show", "no action 'show': stored values are never printed"),
		("add", "no action 'add'; did you mean 'set'?"),
		("delete", "no action 'delete'; did you mean 'remove'?"),
		("rm", "no action 'rm'; did you mean 'remove'?"),
		("ls", "no action 'ls'; did you mean 'list'?"),
	],
)
def test_other_tools_words_for_the_actions_are_answered(
	word: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt keys get openai` (llm's words) is not offered `set`, which would overwrite it."""
	with pytest.raises(SystemExit) as exit:
		openmolt_main(["keys", word, "openai"])
	assert exit.value.code == 2
	err = capsys.readouterr().err
	assert err.startswith(f"openmolt keys: {said}"), err
	assert "did you mean 'set'" not in err or word == "add"
	assert _stored() == {}


def test_ctrl_c_at_the_hidden_prompt_ends_the_line_first(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Ctrl-C at `keys set`'s prompt: "openmolt: interrupted" on a line of its own, exit 130.

	getpass echoes nothing, not even the ^C: the message followed the prompt on its line.
	"""
	import getpass

	class Terminal(io.StringIO):
		def isatty(self) -> bool:
			return True

	def interrupted(prompt: str = "") -> str:
		raise KeyboardInterrupt

	monkeypatch.setattr(sys, "stdin", Terminal())
	monkeypatch.setattr(getpass, "getpass", interrupted)
	assert openmolt_main(["keys", "set", "notion"]) == 130
	assert capsys.readouterr().err == "\nopenmolt: interrupted\n"
	assert _stored() == {}


def test_the_keys_set_a_run_names_for_an_agent_file_s_own_integration_works(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run of an agent file whose `openapi` adds 'petstore' said "set OPENMOLT_PETSTORE_API_KEY
	(... or `openmolt keys set petstore apiKey`)", and that command refused: 'petstore' is
	neither a provider nor an installed integration."""
	import re
	import shutil

	root = Path(__file__).resolve().parents[2]
	shutil.copy(root / "docs" / "guides" / "petstore.json", tmp_path / "petstore.json")
	agent = tmp_path / "shop.json"
	agent.write_text(
		json.dumps(
			{"name": "Shop", "model": "openai:gpt-5-mini", "openapi": {"petstore": "petstore.json"}}
		)
	)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test-0000000000")
	monkeypatch.chdir(tmp_path)
	assert openmolt_main([str(agent), "--input", "hi"]) == 2
	(said,) = re.findall(r"`openmolt (keys set [^`]*)`", capsys.readouterr().err)
	assert said == "keys set petstore apiKey"
	assert openmolt_main([*said.split(), "--value", "v-123456"]) == 0
	assert "OPENMOLT_PETSTORE_API_KEY" in capsys.readouterr().err  # the note names the variable
	assert _stored() == {"OPENMOLT_PETSTORE_API_KEY": "v-123456"}
	assert openmolt_main(["keys", "remove", "petstore", "apiKey"]) == 0
	assert _stored() == {}
	# A name no integration could have is still refused, not made a variable.
	assert openmolt_main(["keys", "set", "pet store", "apiKey", "--value", "v-123456"]) == 2
	assert "neither a provider" in capsys.readouterr().err


@pytest.mark.parametrize(
	("args", "said"),
	[
		# s3's own secret, under a name no integration has: it was stored (and removed) as
		# 'the variable an agent file's own integration of that id reads'.
		(["set", "s3_secret", "accessKey"], "is s3's secretAccessKey (`openmolt keys set s3 "),
		(["set", "s3Secret", "access-key"], "is s3's secretAccessKey"),
		(["remove", "s3_secret", "accessKey"], "is s3's secretAccessKey"),
		(["set", "petstore", "_"], "KEY is the name of the config key"),  # OPENMOLT_PETSTORE_
		(["set", "petstore", "-"], "KEY is the name of the config key"),
		# a value where the key's name goes: it was printed in the note, and stored as the
		# variable's name (OPENMOLT_PETSTORE_SK_LIVE_0123456789ABCDEF, shown by `keys list`)
		(["set", "petstore", "sk-live-0123456789abcdef"], "KEY is the name of the config key"),
		(["set", "petstore", "sk_live_51HxAbCdEf"], "not its value"),
		(["remove", "petstore", "xoxb-1234-5678-AbCdEf"], "not its value"),
		# so for a provider's and an installed integration's: it was said back in the refusal
		(["set", "openai", "sk-proj-0123456789abcdef"], "not its value"),
		(["set", "slack", "xoxb-1234-5678-AbCdEf"], "not its value"),
		(["set", "s3.AKIA1234567890ABCD"], "not its value"),
		# ids no integration may take (the core's built-ins, create_agent's tools): stored as
		# 'the variable an agent file's own integration of that id reads', which none can
		(["set", "local", "token"], "integration id 'local' is reserved"),
		(["set", "openmolt", "apiKey"], "integration id 'openmolt' is reserved"),
	],
)
def test_keys_set_for_an_agent_file_s_integration_never_takes_another_s_variable(
	args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`keys set NAME KEY` for a name nothing installed has stores OPENMOLT_<NAME>_<KEY>: never a
	variable an installed integration reads (its key overwritten, or removed), nor one whose KEY
	is no key's name (none at all, or a value given in its place, which is not said back)."""
	from openmolt_core.cli import _keystore as store

	store.save("OPENMOLT_S3_SECRET_ACCESS_KEY", "v-kept-123456")
	value = ["--value", "v-123456"] if args[0] == "set" else []
	assert openmolt_main(["keys", *args, *value]) == 2
	err = capsys.readouterr().err
	assert said in err, err
	assert "v-123456" not in err and "v-kept" not in err
	assert not any(secret in err for secret in ("live", "xoxb", "0123", "AKIA"))
	assert _stored() == {"OPENMOLT_S3_SECRET_ACCESS_KEY": "v-kept-123456"}


@pytest.mark.parametrize("action", ["set", "remove"])
@pytest.mark.parametrize(
	"args", [["sk-live-0123456789abcdef"], ["openai", "sk-live-0123456789abcdef"]]
)
def test_a_value_where_the_name_goes_is_refused_in_the_words_of_the_command_given(
	action: str, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt keys remove sk-...` was told of `openmolt keys set NAME` and that the value
	is asked for: the command named is the one given, and the value is never printed."""
	value = ["--value", "v-123456"] if action == "set" else []
	assert openmolt_main(["keys", action, *args, *value]) == 2
	err = capsys.readouterr().err
	assert f"openmolt keys {action} " in err, err
	assert ("asked for" in err) is (action == "set"), err
	assert "sk-live" not in err
	assert _stored() == {}
