"""The site's navigation: grouped as a reader looks for things (mkdocs.yml's nav)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


def test_every_page_is_in_the_nav_once() -> None:
	"""A page listed twice is two menu entries with one highlighted: each is listed once."""
	text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
	nav = text[text.index("\nnav:\n") :]
	listed = re.findall(r":\s*\"?([\w/.-]+\.md)\"?\s*$", nav, re.MULTILINE)
	assert sorted(p for p in set(listed) if listed.count(p) > 1) == []


def test_contributing_holds_the_contributors_pages() -> None:
	"""The pages for people who change OpenMolt sit under Contributing, after the reference."""
	text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
	section = text[text.index("\n  - Contributing:\n") :]
	for page in ("integration-authoring.md", "contributing-docs.md", "guides/capabilities.md"):
		assert f": {page}\n" in section, page


def _hook() -> Any:
	import importlib.util

	pytest.importorskip("mkdocs")
	spec = importlib.util.spec_from_file_location(
		"integration_pages", ROOT / "docs" / "hooks" / "integration_pages.py"
	)
	assert spec is not None and spec.loader is not None
	pages = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(pages)
	return pages


def test_each_generated_integration_page_is_in_the_nav() -> None:
	"""The built site listed the 30 integration pages as 'not included in the nav'."""
	pages = _hook()
	nav = [{"Guides": [{"Tools": [{"Integrations": "integrations/index.md"}]}]}]
	config = pages.on_config({"nav": nav})
	(section,) = config["nav"][0]["Guides"][0]["Tools"]
	entries = section["Integrations"]
	assert entries[0] == {"All integrations": "integrations/index.md"}
	found = {f"integrations/{iid}.md" for iid, _ in pages._load()}
	assert {page for entry in entries[1:] for page in entry.values()} == found
	assert "integrations/slack.md" in found


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


def test_the_readme_lists_every_package_and_every_nox_session() -> None:
	"""The layout table names each workspace member; the development list each nox session."""
	readme = (ROOT / "README.md").read_text(encoding="utf-8")
	root = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
	members = re.findall(r'"(openmolt_\w+)"', root[root.index("members = [") :].split("]")[0])
	assert len(members) == 9
	layout = readme[readme.index("## Layout") : readme.index("## Development")]
	assert [m for m in members if f"| `{m}/` | `{m.replace('_', '-')}` |" not in layout] == []
	sessions = re.findall(
		r"@nox\.session[^\n]*\ndef (\w+)\(", (ROOT / "noxfile.py").read_text(encoding="utf-8")
	)
	assert "verifytypes" in sessions
	development = readme[readme.index("## Development") :]
	assert [s for s in sessions if f"uv run nox -s {s} " not in development] == []


def test_the_readme_counts_the_wheels_nox_s_build_makes() -> None:
	"""The README said 'the nine wheels'; the build makes one per workspace member and the root's."""
	readme = (ROOT / "README.md").read_text(encoding="utf-8")
	noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
	wheels = noxfile[noxfile.index("WHEEL_PACKAGES = {") :].split("\n}")[0]
	count = len(re.findall(r'^\t"openmolt\w*": ', wheels, re.MULTILINE))
	words = ["eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen"]
	(line,) = [ln for ln in readme.splitlines() if ln.startswith("uv run nox -s build ")]
	assert f"the {words[count - 8]} wheels" in line, (count, line)
