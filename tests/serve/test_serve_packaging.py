"""openmolt-serve is an extra of its own; the core never imports it, Starlette or uvicorn."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _toml(path: str) -> dict:
	return tomllib.loads((ROOT / path).read_text())


def test_the_serve_extra_installs_openmolt_serve_found_by_its_entry_point() -> None:
	"""openmolt[serve] (and all) pull openmolt-serve, which the CLI finds as the extension 'serve'."""
	extras = _toml("pyproject.toml")["project"]["optional-dependencies"]
	assert extras["serve"] == ["openmolt-serve==0.1.0"]
	assert "openmolt-serve[a2a,agui]==0.1.0" in extras["all"]
	assert extras["a2a"] == ["openmolt-serve[a2a]==0.1.0"]
	assert extras["agui"] == ["openmolt-serve[agui]==0.1.0"]
	serve = _toml("openmolt_serve/pyproject.toml")["project"]
	assert serve["entry-points"]["openmolt.extensions"] == {"serve": "openmolt_serve"}
	core = _toml("openmolt_core/pyproject.toml")["project"]["dependencies"]
	assert not any(d.startswith(("starlette", "uvicorn")) for d in core)


def test_no_core_module_imports_openmolt_serve() -> None:
	"""The core's sources never name openmolt_serve; a run with triggers' settings loads no web stack.

	The old home of the signatures (a shim) names the module they moved to as a string, and
	imports it only when one of its names is used.
	"""
	import openmolt_core

	for path in Path(openmolt_core.__file__).parent.rglob("*.py"):
		text = path.read_text(encoding="utf-8")
		assert "import openmolt_serve" not in text and "from openmolt_serve" not in text, path
	code = (
		"import json, sys\n"
		"from openmolt_core.cli._agentfile import AgentFile\n"
		"import openmolt_core.signatures\n"
		"AgentFile.model_validate({'name': 'a', 'model': 'x:y', 'triggers': {'webhook': {}}})\n"
		"print(json.dumps(sorted(sys.modules)))\n"
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	loaded = {m.split(".")[0] for m in json.loads(out.stdout)}
	assert not loaded & {"starlette", "uvicorn", "openmolt_serve", "openmolt_ui"}


def test_the_old_home_of_the_signatures_re_exports_the_same_objects() -> None:
	"""``openmolt_core.signatures`` (documented before the move) gives serve's own objects."""
	import openmolt_core.signatures as old
	from openmolt_core import triggers
	from openmolt_serve import signatures

	for name in signatures.__all__:
		assert getattr(old, name) is getattr(signatures, name), name
	assert old.__all__ is signatures.__all__
	assert signatures.Scheme is triggers.Scheme
	assert triggers.WebhookTrigger().tolerance == signatures.DEFAULT_TOLERANCE
	namespace: dict[str, object] = {}
	exec("from openmolt_core.signatures import *", namespace)
	assert namespace["verify"] is signatures.verify
	with pytest.raises(AttributeError):
		old.nothing_of_that_name  # noqa: B018


@pytest.mark.parametrize(
	"name",
	[
		"openmolt_serve",
		"openmolt_serve.chats",
		"openmolt_serve.cli",
		"openmolt_serve.server",
		"openmolt_serve.slack",
		"openmolt_serve.telegram",
		"openmolt_serve.webhooks",
		"openmolt_serve.signatures",
		"openmolt_serve.a2a",
		"openmolt_serve.agui",
		"openmolt_serve._agui_events",
		"openmolt_serve._agui_threads",
		"openmolt_serve._parks",
		"openmolt_serve._rows",
		"openmolt_serve._a2a_remote",
		"openmolt_serve._token",
	],
)
def test_the_modules_export_a_sorted_documented_all(name: str) -> None:
	"""__all__ is sorted (constants, classes, functions), and every class and function has a docstring."""
	module = importlib.import_module(name)
	exported = list(module.__all__)
	assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
	for item in exported:
		obj = getattr(module, item)
		assert hasattr(module, item)
		if inspect.isclass(obj) or inspect.isfunction(obj):
			assert inspect.getdoc(obj), f"{name}.{item} has no docstring"


def test_the_protocol_sdks_load_only_for_agents_that_use_them() -> None:
	"""openmolt serve without an a2a or agui trigger imports neither SDK (they are extras)."""
	code = (
		"import json, sys\n"
		"from openmolt_serve import TriggerServer\n"
		"import openmolt_serve.cli\n"
		"print(json.dumps(sorted(sys.modules)))\n"
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	loaded = {m.split(".")[0] for m in json.loads(out.stdout)}
	assert not loaded & {"a2a", "ag_ui"}


@pytest.mark.parametrize(("kind", "extra"), [("a2a", "openmolt[a2a]"), ("agui", "openmolt[agui]")])
def test_a_missing_protocol_sdk_names_the_extra(
	kind: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A trigger whose SDK is not installed fails at start with the command that fixes it.

	The command is the environment's (`openmolt_core._hints.install_command`): pip here.
	"""
	from openmolt import OpenMolt
	from openmolt_core import _hints
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import Triggers
	from openmolt_serve import TriggerServer, server

	def missing(name: str) -> None:
		raise ImportError(f"No module named {name!r}")

	monkeypatch.setattr(server.importlib, "import_module", missing)
	monkeypatch.setattr(_hints, "install_command", lambda r: f"pip install '{r}'")
	agent = OpenMolt(entry_points=False).create_agent(name="Helper", model=ScriptedModel([]))
	triggers = Triggers.model_validate({kind: {"token": "t0ken-for-tests"}})
	with pytest.raises(ConfigurationError, match=rf"pip install '{re.escape(extra)}'"):
		TriggerServer([(agent, triggers)], port=0)
