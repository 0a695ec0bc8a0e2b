"""Every "install X" hint names the command that works where OpenMolt runs, not always pip.

The README's environment is a uv project without pip; a uv tool, pipx and uvx have their own
commands (`openmolt_core._hints.install_command`). Hints that hard-coded ``pip install`` were
wrong there: the phone-number guardrail, YAML OpenAPI documents, the credential store, SQLAlchemy
sessions, S3's signing and presigning, fal, the A2A and AG-UI triggers, moved modules.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from openmolt_core import _hints
from openmolt_core.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]


def _docstrings(tree: ast.AST) -> set[int]:
	found = set()
	for node in ast.walk(tree):
		kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
		body = getattr(node, "body", None) if isinstance(node, kinds) else None
		if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
			found.add(id(body[0].value))
	return found


def test_no_message_in_the_source_hard_codes_pip_install() -> None:
	"""Only `install_command` spells pip; docs text (an integration's how-to) may name it."""
	wrong = []
	for source in sorted(ROOT.glob("openmolt_*/src/**/*.py")):
		if source.name == "_hints.py":
			continue
		tree = ast.parse(source.read_text(encoding="utf-8"))
		docs = _docstrings(tree)
		for node in ast.walk(tree):
			if (
				isinstance(node, ast.Constant)
				and isinstance(node.value, str)
				and id(node) not in docs
				and "pip install" in node.value
				and not node.value.startswith("## ")  # an integration's how-to page
			):
				wrong.append(f"{source.relative_to(ROOT)}:{node.lineno}")
	assert wrong == []


@pytest.fixture
def marked(monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setattr(_hints, "install_command", lambda requirement: f"INSTALL {requirement}")


def test_the_phone_guardrail_names_the_environment_s_command(
	marked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
	from openmolt_core.guardrails import pii_redaction

	monkeypatch.setitem(sys.modules, "phonenumbers", None)
	with pytest.raises(ConfigurationError, match=r"INSTALL openmolt-core\[pii\]"):
		pii_redaction(kinds=["phone"])


def test_a_yaml_document_names_the_environment_s_command(
	marked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
	from openmolt_core.integrations._openapi_load import _yaml

	monkeypatch.setitem(sys.modules, "yaml", None)
	with pytest.raises(ConfigurationError, match="INSTALL pyyaml"):
		_yaml("openapi: 3.1.0", Path("api.yaml"))


@pytest.mark.parametrize(("kind", "module"), [("a2a", "a2a"), ("agui", "ag_ui")])
def test_a_protocol_trigger_names_the_environment_s_command(
	marked: None, monkeypatch: pytest.MonkeyPatch, kind: str, module: str
) -> None:
	from openmolt_serve.server import _needs

	monkeypatch.setitem(sys.modules, module, None)
	with pytest.raises(ConfigurationError, match=rf"INSTALL openmolt\[{kind}\]"):
		_needs(kind)


def test_in_a_uv_project_the_hint_is_uv_add(
	monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
	"""End to end, unpatched: the README's kind of environment gets `uv add`, no pip."""
	from openmolt_core.guardrails import pii_redaction

	(tmp_path / "pyproject.toml").write_text('[project]\nname = "my-app"\n')
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("UV", "/usr/bin/uv")
	monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))
	monkeypatch.setitem(sys.modules, "phonenumbers", None)
	with pytest.raises(ConfigurationError) as caught:
		pii_redaction(kinds=["phone"])
	assert "uv add 'openmolt-core[pii]'" in str(caught.value)
	assert "pip install" not in str(caught.value)


@pytest.mark.parametrize(
	("prose", "requirement"),
	[
		("Install it with `pip install 'openmolt[fal]'` first.", "openmolt[fal]"),
		('Run `python -m pip install "pyyaml"` once.', "pyyaml"),
		("Run `python3 -m pip install pyyaml` once.", "pyyaml"),
		("Run `uv pip install botocore` once.", "botocore"),
		("Run `/opt/venv/bin/python -m pip install 'openmolt[s3]'`.", "openmolt[s3]"),
	],
)
def test_prose_names_the_whole_command_of_this_environment(
	marked: None, prose: str, requirement: str
) -> None:
	"""The whole ``pip install`` command is replaced, whatever prefix it was written with."""
	shown = _hints.install_commands_in(prose)
	assert f"`INSTALL {requirement}`" in shown
	assert "pip" not in shown
