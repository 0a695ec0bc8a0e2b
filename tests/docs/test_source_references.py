"""A name a docstring, a comment or a page gives in full
(``openmolt_core.capabilities.ObservedOutside``) is one that exists: a class moved or renamed
leaves no stale name behind in the sources or the docs."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_REF = re.compile(r"`(openmolt_[a-z]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def _resolves(ref: str) -> bool:
	"""Whether the dotted name is a module, or an attribute of the longest module it starts with."""
	parts = ref.split(".")
	for i in range(len(parts), 0, -1):
		try:
			obj: object = importlib.import_module(".".join(parts[:i]))
		except ModuleNotFoundError:
			continue
		for name in parts[i:]:
			if not hasattr(obj, name):
				return False
			obj = getattr(obj, name)
		return True
	return False


def test_every_full_name_in_the_sources_exists() -> None:
	stale = sorted(
		f"{path.relative_to(ROOT)}: {ref}"
		for path in [
			*ROOT.glob("openmolt_*/src/**/*.py"),
			*ROOT.glob("docs/**/*.md"),
			ROOT / "Architecture.md",
			ROOT / "README.md",
		]
		for ref in set(_REF.findall(path.read_text("utf-8")))
		if not _resolves(ref)
	)
	assert not stale, "names that no longer exist:\n" + "\n".join(stale)


def _message_strings(path: Path) -> list[tuple[int, str]]:
	"""The string constants of a module that are not docstrings (what a message or help says)."""
	import ast

	tree = ast.parse(path.read_text("utf-8"))
	quiet = {
		id(node.value)
		for node in ast.walk(tree)
		if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
	}
	return [
		(node.lineno, node.value)
		for node in ast.walk(tree)
		if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in quiet
	]


def test_a_message_names_a_page_by_its_address_and_the_page_exists() -> None:
	"""What a user reads names a page on the web, not ``docs/guides/x.md`` of a source tree.

	Someone who installed OpenMolt with pip has no ``docs/`` folder: every error, warning and
	help text names a page through `openmolt_core._support.docs.docs_url`, and every page named
	exists. Docstrings and comments, read in the source tree, may give the path.
	"""
	from openmolt_core._support.docs import DOCS, docs_url

	bare = re.compile(r"(?<![/\w])docs/[\w/-]+\.md")
	paths = [
		f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}"
		for path in ROOT.glob("openmolt_*/src/**/*.py")
		for line, text in _message_strings(path)
		if bare.search(text) and "e.g. docs/" not in text  # a tool's example of a repository path
	]
	assert not paths, "messages that name a path a pip user does not have:\n" + "\n".join(paths)
	pages = {
		page
		for path in ROOT.glob("openmolt_*/src/**/*.py")
		for page in re.findall(r"docs_url\(['\"]([^'\"]+)['\"]\)", path.read_text("utf-8"))
	}
	assert len(pages) >= 7
	missing = sorted(page for page in pages if not (ROOT / "docs" / page).is_file())
	assert not missing, f"pages named that do not exist: {missing}"
	assert docs_url("cli.md") == DOCS + "cli.md" and DOCS.startswith("https://")
