"""Every agent file the docs show, as a ```json block, is one `openmolt` accepts as written.

A block is taken for an agent file when it is a JSON object with a ``name`` and a ``model``, or
a part of one: an object whose every key is an agent file's (``{"triggers": {"agui": ...}}``,
getting started's ``{"model": ..., "llmProviders": ...}`` and ``{"schedules": [...]}``), given a
name and a model here; other fragments, such as one ``mcpServers`` entry, are not. It is loaded as the command loads a file
(`openmolt_core.cli._agentfile.load_json_file`): a misspelt or moved key fails here with the
command's own message, as a reader pasting it would see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._agentfile import load_json_file

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^\s*```(\w*)\s*$")
KEYS = frozenset(
	json.loads((ROOT / "examples" / "agent-file.schema.json").read_text(encoding="utf-8"))[
		"properties"
	]
)
"""Every top-level key of an agent file, as `openmolt schema` lists them."""


def agent_files(page: Path) -> list[tuple[str, str]]:
	"""The page's agent files: (where, text) for each ```json block that is one."""
	lines = page.read_text(encoding="utf-8").splitlines()
	found: list[tuple[str, str]] = []
	i = 0
	while i < len(lines):
		fence = _FENCE.match(lines[i])
		if not fence:
			i += 1
			continue
		end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
		text = "\n".join(lines[i + 1 : end])
		if fence.group(1) == "json":
			try:
				data = json.loads(text)
			except ValueError:
				data = None
			if not isinstance(data, dict) or not data:
				data = None
			elif not ("name" in data and "model" in data):
				if set(data) <= KEYS:  # a part of one, shown to add to a file
					text = json.dumps({"name": "Agent", "model": "openai:gpt-5-mini", **data})
				else:
					data = None
			if data is not None:
				found.append((f"{page.relative_to(ROOT)}:{i + 2}", text))
		i = end + 1
	return found


ALL = [found for page in PAGES for found in agent_files(page)]


def test_the_docs_show_agent_files() -> None:
	"""The collector finds the agent files of the MCP, trigger and AG-UI pages, and the trust
	settings' examples (it is not silently empty)."""
	pages = {where.split(":")[0] for where, _ in ALL}
	assert {"docs/guides/mcp.md", "docs/guides/triggers.md", "docs/guides/agui.md"} <= pages
	parts = [json.loads(text) for where, text in ALL if where.startswith("docs/getting-started")]
	assert any("llmProviders" in part for part in parts)  # the parts getting started adds
	assert any("schedules" in part for part in parts)
	shown = "".join(text for _, text in ALL)
	for key in ("trustPayload", "trustInput", "previousSecretTokenEnv", "previousSecretEnv"):
		assert f'"{key}"' in shown, key


@pytest.mark.parametrize(("where", "text"), ALL, ids=[where for where, _ in ALL])
def test_the_agent_file_loads(where: str, text: str, tmp_path: Path) -> None:
	"""The agent file loads as `openmolt` loads it: no unknown, misplaced or mistyped key, its
	providers' settings (``llmProviders``, checked as the command builds each provider) included."""
	path = tmp_path / "agent.json"
	path.write_text(text, encoding="utf-8")
	loaded = load_json_file(path)
	om = OpenMolt(llm_providers=loaded.llm_providers)
	for name in loaded.llm_providers:
		om.provider(name)
