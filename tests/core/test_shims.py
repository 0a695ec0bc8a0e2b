"""Every old module path of openmolt_core keeps importing, as a one-line re-export of its new home.

`SHIMS` names each old path and its home. The tests check that each old path gives its home's
own objects (identity, not copies) under the same ``__all__``, that every module written as a
re-export (``from <home> import *``) is listed, and that every re-export importlinter.toml's
comments name is listed: a shim added or moved without its identity test fails here.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import openmolt_core

CORE = Path(openmolt_core.__file__).parent
ROOT = CORE.parents[2]

SHIMS = {
	# the HTTP engine's helpers and the OpenAPI importer (integrations/)
	"openmolt_core.openapi": "openmolt_core.integrations.openapi",
	"openmolt_core._openapi_load": "openmolt_core.integrations._openapi_load",
	"openmolt_core._openapi_schemas": "openmolt_core.integrations._openapi_schemas",
	"openmolt_core._openapi_urls": "openmolt_core.integrations._openapi_urls",
	"openmolt_core._openapi_write": "openmolt_core.integrations._openapi_write",
	"openmolt_core._http": "openmolt_core.integrations._client",
	"openmolt_core._aiohttp": "openmolt_core.integrations._aiohttp",
	"openmolt_core._preflight": "openmolt_core.integrations.preflight",
	# capabilities
	"openmolt_core._livereply": "openmolt_core.capabilities.streaming",
	"openmolt_core._replystream": "openmolt_core.capabilities._replydecoder",
	"openmolt_core.offload": "openmolt_core.capabilities.offload",
	"openmolt_core.sources": "openmolt_core.capabilities.sources",
	"openmolt_core._listed": "openmolt_core.capabilities._listed",
	"openmolt_core.structured": "openmolt_core.capabilities.structured",
	# the support libraries (_support/)
	"openmolt_core._jsonschema": "openmolt_core._support.jsonschema",
	"openmolt_core._schemacheck": "openmolt_core._support.metaschema",
	"openmolt_core._fit": "openmolt_core._support.schemafit",
	"openmolt_core._repair": "openmolt_core._support.schemafit",
	"openmolt_core._jsonsafe": "openmolt_core._support.jsonsafe",
	"openmolt_core._sync": "openmolt_core._support.sync",
	"openmolt_core._lazy": "openmolt_core._support",
	"openmolt_core._suggest": "openmolt_core._support.suggest",
	"openmolt_core._private": "openmolt_core._support.private",
	# the redactors, beside the secrets
	"openmolt_core._redact": "openmolt_core.secrets",
	# other distributions
	"openmolt_core.signatures": "openmolt_serve.signatures",
	"openmolt_core.evals": "openmolt_evals",
	"openmolt_core.evals.evaluators": "openmolt_evals.evaluators",
}
"""Each old module path, and the module whose objects it re-exports."""

PARTIAL = {"openmolt_core.sources"}
"""Old paths that re-export some of their home's names (the rest were never theirs)."""


@pytest.mark.parametrize(("old", "home"), sorted(SHIMS.items()))
def test_an_old_path_gives_its_homes_own_objects(old: str, home: str) -> None:
	old_module, new_module = importlib.import_module(old), importlib.import_module(home)
	names = list(old_module.__all__)
	assert names, old
	if old in PARTIAL:
		assert set(names) <= set(new_module.__all__), old
	else:
		assert sorted(names) == sorted(new_module.__all__), old
	for name in names:
		assert getattr(old_module, name) is getattr(new_module, name), (old, name)
	namespace: dict[str, object] = {}
	exec(f"from {old} import *", namespace)  # a star import gives the same names
	assert {n: namespace[n] for n in names} == {n: getattr(new_module, n) for n in names}


def _module(path: Path) -> str:
	parts = path.relative_to(CORE.parent).with_suffix("").parts
	return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _star_home(path: Path) -> str | None:
	"""The module a file re-exports whole (``from <home> import *``), or None."""
	for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
		if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]:
			return node.module
	return None


def test_every_module_written_as_a_re_export_is_listed() -> None:
	found = {_module(p): _star_home(p) for p in CORE.rglob("*.py") if _star_home(p)}
	assert found == {old: home for old, home in SHIMS.items() if old in found}
	assert set(found) <= set(SHIMS)


def test_every_re_export_the_layers_contract_names_is_listed() -> None:
	"""importlinter.toml's comments say which of its modules are re-exports of old paths."""
	comments = "\n".join(
		line.lstrip(" #")
		for line in (ROOT / "importlinter.toml").read_text(encoding="utf-8").splitlines()
		if line.lstrip().startswith("#")
	)
	named: set[str] = set()
	for sentence in re.split(r"(?<=[.;])\s", comments.replace("\n", " ")):
		if "re-export" not in sentence:
			continue
		for word in re.findall(r"`([A-Za-z_*]+)`", sentence):
			if word.endswith("*"):  # `_openapi_*`
				named |= {m for m in SHIMS if m.split(".")[-1].startswith(word[:-1])}
			elif (CORE / f"{word}.py").is_file() or (CORE / word / "__init__.py").is_file():
				named.add(f"openmolt_core.{word}")
	assert len(named) >= 20  # the contract names the support libraries' and the engine's paths
	assert named - set(SHIMS) == set()


MOVED_NAMES = {
	# the durability backend's contract, above the loop (the kernel keeps the port and RunDriver)
	("openmolt_core.durability", "DurabilityBackend"): "openmolt_core._durable",
	("openmolt_core.durability", "DurabilityConfig"): "openmolt_core._durable",
	("openmolt_core.durability", "PendingRun"): "openmolt_core._durable",
	("openmolt_core.durability", "load_backend"): "openmolt_core._durable",
	# what a tool call's nested runs spent, read and kept on a durable port (the spend feature's)
	("openmolt_core.durability", "spent_before"): "openmolt_core.capabilities",
	("openmolt_core.durability", "record_spent"): "openmolt_core.capabilities",
	# the taint policy's reading of what runs nested in a run do (the kernel reads no labels)
	("openmolt_core.tools", "nested_labels"): "openmolt_core.taint",
	("openmolt_core.tools", "nested_in_doubt"): "openmolt_core.taint",
	("openmolt_core.tools", "nested_agents"): "openmolt_core.taint",
	("openmolt_core.tools", "guard_agents"): "openmolt_core.taint",
	# the file store's work: a run's input files kept, a saved state's files screened
	("openmolt_core.files", "keep_attachments"): "openmolt_core.filestore",
	("openmolt_core.files", "masked_state"): "openmolt_core.filestore",
	("openmolt_core.files", "MAX_ATTACHMENT_BYTES"): "openmolt_core.filestore",
}
"""Names that left a module for another, each still importable from its old module."""


@pytest.mark.parametrize(("old", "home"), sorted(MOVED_NAMES.items()))
def test_a_moved_name_keeps_its_old_path(old: tuple[str, str], home: str) -> None:
	module, name = old
	namespace: dict[str, object] = {}
	exec(f"from {module} import {name}", namespace)
	assert namespace[name] is getattr(importlib.import_module(home), name)
	assert name in importlib.import_module(home).__all__
