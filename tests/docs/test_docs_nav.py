"""The site's navigation: grouped as a reader looks for things (mkdocs.yml's nav)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sections(indent: int) -> list[str]:
	"""The nav's section names at one indent (no yaml parser: the test group may lack one)."""
	text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
	nav = text[text.index("\nnav:\n") :]
	pattern = rf"(?m)^ {{{indent}}}- \"?([^\":\n]+(?::[^\":\n]+)?)\"?:\s*$"
	return re.findall(pattern, nav)


def test_the_nav_is_getting_started_guides_by_task_reference_and_contributing() -> None:
	"""Top level: a start, guides grouped by task, the reference and contributing."""
	top = _sections(2)
	assert top == ["Guides by task", "Reference", "Contributing"]
	text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
	assert "\n  - Getting started: getting-started.md\n" in text
	assert _sections(6) == [
		"Agents",
		"Tools and integrations",
		"Running in production",
		"Operating and observing",
		"Safety",
	]


def test_every_page_is_in_the_nav() -> None:
	"""A page left out of the nav is unreachable from the site's menu."""
	text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
	listed = set(re.findall(r":\s*\"?([\w/.-]+\.md)\"?\s*$", text, re.MULTILINE))
	pages = {
		str(p.relative_to(ROOT / "docs"))
		for p in (ROOT / "docs").rglob("*.md")
		if "hooks" not in p.parts
	}
	assert pages - listed == set()


def test_each_integration_page_names_every_key_s_variable() -> None:
	"""The generated pages said only apiKey came from the environment; every key does.

	Slack's page named no variable at all (its key is token), nor WhatsApp's its phoneNumberId.
	"""
	import importlib.util

	pytest.importorskip("mkdocs")
	spec = importlib.util.spec_from_file_location(
		"integration_pages", ROOT / "docs" / "hooks" / "integration_pages.py"
	)
	assert spec is not None and spec.loader is not None
	pages = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(pages)
	from openmolt_core.integrations.connect import credential_needs

	for iid, integration in pages._load():
		text = "\n".join(pages._credentials(iid, integration))
		for need in credential_needs(integration, iid):
			for key in need.keys:
				assert f"`{key.env_var}`" in text, (iid, key.name)
