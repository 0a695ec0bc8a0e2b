"""A Tab after ``-m`` asks ``openmolt completion --models``: fast, and a prefix takes no space."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openmolt_core.cli import main

ASK = """
import json, sys
from openmolt_core.cli import main
main(["completion", "--models"])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("openmolt_providers", "dbos", "openmolt_serve", "openmolt_ui"))
print(json.dumps(loaded), file=sys.stderr)
"""


def _ask(cache: Path, **env: str) -> tuple[list[str], list[str]]:
	"""The models offered, and the provider and plugin modules the asking process loaded."""
	done = subprocess.run(
		[sys.executable, "-c", ASK],
		capture_output=True,
		text=True,
		env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
		timeout=120,
	)
	assert done.returncode == 0, done.stderr
	return done.stdout.split(), json.loads(done.stderr.strip().splitlines()[-1])


def test_the_models_are_listed_once_then_read_without_loading_a_provider(tmp_path: Path) -> None:
	"""The first Tab loads the providers (not the plugins' commands); the next ones read a cache."""
	first, loaded = _ask(tmp_path)
	assert "openai:gpt-5-mini" in first and "ollama:" in first
	assert loaded and not [m for m in loaded if m.split(".")[0] != "openmolt_providers"]
	again, loaded = _ask(tmp_path)
	assert again == first and loaded == []
	moved, _ = _ask(tmp_path, OPENMOLT_OPENAI_BASE_URL="http://u:pw@127.0.0.1:9/v1")
	assert "openai:" in moved and not [m for m in moved if m.startswith("openai:gpt")]
	kept = (tmp_path / "openmolt" / "completion-models.json").read_text()
	assert "pw" not in kept and "127.0.0.1" not in kept


def test_an_old_list_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""A list older than MODELS_FOR, or another install's, is not offered."""
	from openmolt_core.cli import _completion

	monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
	kept = tmp_path / "openmolt" / "completion-models.json"
	kept.parent.mkdir()
	kept.write_text(json.dumps({"key": _completion._models_key(), "models": ["stale:one"]}))
	assert _completion.models() == ["stale:one"]
	os.utime(kept, (0, 0))
	assert "stale:one" not in _completion.models()
	kept.write_text(json.dumps({"key": "another", "models": ["stale:one"]}))
	assert "stale:one" not in _completion.models()


def test_zsh_and_fish_add_no_space_after_a_provider_prefix(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""zsh adds `ollama:` with no suffix (-S ''); fish adds none after a ':' of its own accord."""
	assert main(["completion", "zsh"]) == 0
	zsh = capsys.readouterr().out
	assert "compadd -S '' -- ${(M)_models:#*:}; compadd -- ${_models:#*:}" in zsh
	assert "compadd -- ${(f)" not in zsh  # no list of models added with a space after each
	assert main(["completion", "fish"]) == 0
	fish = capsys.readouterr().out
	assert "-l model -xa '(openmolt completion --models 2>/dev/null)'" in fish
