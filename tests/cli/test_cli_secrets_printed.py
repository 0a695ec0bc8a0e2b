"""What the command prints itself (an error's lines, a traceback, a warning) shows no secret."""

from __future__ import annotations

import warnings

import pytest

from openmolt_core import cli
from openmolt_core.errors import ConfigurationError

KEY = "sk-cli-Printed/Key+0042"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", KEY)


@pytest.mark.parametrize("verbose", [False, True])
def test_an_unexpected_error_and_its_traceback_show_no_secret(
	verbose: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""The message, its cause and its notes, as the --verbose traceback prints them."""

	def dispatch(args: list[str]) -> int:
		try:
			raise ValueError(f"inner {KEY}")
		except ValueError as inner:
			error = RuntimeError("outer", {"token": KEY})
			error.add_note(f"note {KEY.encode().hex()}")
			raise error from inner

	monkeypatch.setattr(cli, "_dispatch", dispatch)
	code = cli.main(["run", "x.json", *(["--verbose"] if verbose else [])])
	err = capsys.readouterr().err
	assert code == 70 and "openmolt: unexpected error: RuntimeError" in err
	if verbose:
		assert "Traceback" in err and "inner [redacted]" in err and "note [redacted]" in err
	assert KEY not in err and KEY.encode().hex() not in err and "[redacted]" in err


def test_an_error_and_a_warning_the_command_prints_show_no_secret(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	def dispatch(args: list[str]) -> int:
		with warnings.catch_warnings():
			warnings.simplefilter("always")  # (the tests make warnings errors)
			warnings.warn(f"odd setting {KEY}", UserWarning, stacklevel=1)
		raise ConfigurationError(f"llmProviders.openai: bad value {KEY!r}")

	monkeypatch.setattr(cli, "_dispatch", dispatch)
	assert cli.main(["run", "x.json"]) == 2
	err = capsys.readouterr().err
	assert "openmolt: warning: odd setting [redacted]" in err
	assert "openmolt: llmProviders.openai: bad value '[redacted]'" in err
	assert KEY not in err


SHORT = "pw-Short/Cred+1"


@pytest.mark.parametrize(
	"entry",
	[
		{"integration": "slack", "credential": SHORT},
		{"integration": "slack", "credential": {"config": [SHORT]}},
		{"integration": "slack", "credential": {"type": "bearer", "config": SHORT}},
	],
	ids=["the credential", "its config in a list", "its config as text"],
)
def test_an_agent_file_s_credential_in_the_wrong_shape_is_not_repeated(
	entry: dict[str, object],
	tmp_path: pytest.TempPathFactory,
	monkeypatch: pytest.MonkeyPatch,
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""The file's error line names the key and what it must be, not the password given there."""
	import json
	from pathlib import Path

	folder = Path(str(tmp_path))
	(folder / "agent.json").write_text(
		json.dumps({"name": "A", "model": "openai:gpt-5-mini", "integrations": [entry]})
	)
	monkeypatch.chdir(folder)
	code = cli.main(["run", "agent.json", "--input", "hi", "--dry-run"])
	err = capsys.readouterr().err
	assert code != 0 and "credential" in err and SHORT not in err, err


URL_PASSWORD = "Passw0rd-xyz9Q"
URL_KEY = "AK-12345678Zq"
URL = f"https://bob:{URL_PASSWORD}@api.example.com/v1/items?api_key={URL_KEY}&q=1"


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("kind", ["unexpected", "openmolt", "warning"])
def test_a_urls_password_and_key_never_show_in_what_the_command_prints(
	kind: str, verbose: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An error quoting a URL (httpx names the URL it failed for) is masked as a log masks it.

	No source knows the URL's password or its ``?api_key=``: a log record shows neither
	(`openmolt_core._support.masking.urls_secrets`), and neither may the command's own lines.
	"""
	import httpx

	def dispatch(args: list[str]) -> int:
		if kind == "warning":
			with warnings.catch_warnings():
				warnings.simplefilter("always")
				warnings.warn(f"retrying {URL}", UserWarning, stacklevel=1)
			return 0
		request = httpx.Request("GET", URL)
		said = f"Client error '401 Unauthorized' for url '{request.url}'"
		if kind == "openmolt":
			raise ConfigurationError(said)
		raise httpx.HTTPStatusError(said, request=request, response=httpx.Response(401))

	monkeypatch.setattr(cli, "_dispatch", dispatch)
	cli.main(["run", "x.json", *(["--verbose"] if verbose else [])])
	err = capsys.readouterr().err
	assert "https://bob:[redacted]@api.example.com" in err, err
	assert URL_PASSWORD not in err and URL_KEY not in err, err


def test_the_commands_hooks_mask_a_urls_password(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""An uncaught exception naming a URL, printed by the hooks the command installs."""
	import sys

	monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)  # Python's, not pytest's

	def dispatch(args: list[str]) -> int:
		try:
			raise RuntimeError(f"failed for url '{URL}'")
		except RuntimeError as exc:
			sys.excepthook(type(exc), exc, exc.__traceback__)
		return 0

	monkeypatch.setattr(cli, "_dispatch", dispatch)
	cli.main(["run", "x.json"])
	err = capsys.readouterr().err
	assert "https://bob:[redacted]@api.example.com" in err, err
	assert URL_PASSWORD not in err and URL_KEY not in err, err
