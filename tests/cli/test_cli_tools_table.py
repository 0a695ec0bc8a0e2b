"""`openmolt tools ID`: a table that fits the terminal, one row per tool."""

from __future__ import annotations

import io

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._info import list_tools


class _Terminal(io.StringIO):
	def isatty(self) -> bool:
		return True


def _table(text: str) -> list[str]:
	lines = text.split("\ntools (")[1].split("\n\n")[0].splitlines()
	return lines[1:]  # the header row and one row per tool


@pytest.mark.parametrize("columns", [100, 140])
def test_on_a_terminal_each_tool_is_one_row_as_wide_as_the_terminal(
	columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Slack's tools on a 100-column terminal: no row wraps, each description is cut to fit."""
	monkeypatch.setenv("COLUMNS", str(columns))
	out = _Terminal()
	om = OpenMolt()
	list_tools(om, "slack", out, as_json=False)
	rows = _table(out.getvalue())
	assert len(rows) == 1 + len(om.plugins.integration("slack").tools)  # the header, a row each
	assert max(len(r) for r in rows) <= columns, max(rows, key=len)


def test_off_a_terminal_the_table_keeps_its_width() -> None:
	"""Piped, the descriptions keep 60 characters whatever the terminal."""
	out = io.StringIO()
	list_tools(OpenMolt(), "slack", out, as_json=False)
	rows = _table(out.getvalue())
	assert any(r.endswith("…") and len(r.split("  ")[-1].strip()) == 60 for r in rows)


def test_a_narrow_terminal_still_gets_a_useful_description(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Too narrow for the columns: the description keeps 24 characters rather than none."""
	monkeypatch.setenv("COLUMNS", "60")
	out = _Terminal()
	list_tools(OpenMolt(), "slack", out, as_json=False)
	cut = [r.split("  ")[-1].strip() for r in _table(out.getvalue()) if r.endswith("…")]
	assert cut and all(20 <= len(d) <= 24 for d in cut), cut


@pytest.mark.parametrize(
	("integration", "word", "meant"),
	[
		# a word of the tools' names: every tool it names (Slack's two ways to post)
		("slack", "post", ["slack.postMessage", "slack.postEphemeral"]),
		("gmail", "send", ["gmail.sendMessage", "gmail.sendDraft"]),
		("github", "issue", ["github.listIssues", "github.createIssue", "github.getIssue"]),
		# a name spelt another way, or mistyped: the one meant
		("slack", "post_message", ["slack.postMessage"]),
		("notion", "serch", ["notion.search"]),
	],
)
def test_a_tool_not_found_names_the_tools_the_word_was_for(
	integration: str, word: str, meant: list[str]
) -> None:
	"""`openmolt tools slack post` (the docs' completion example) said "no tool 'post'" with no
	hint, and `tools gmail send` offered only sendDraft, not sendMessage: a word of the tools'
	names lists them."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError) as raised:
		list_tools(OpenMolt(), integration, io.StringIO(), as_json=False, handle=word)
	said = str(raised.value)
	for tool in meant:
		assert repr(tool) in said, said
	assert f"`openmolt tools {integration}` lists them" in said


def test_a_word_of_many_tools_names_a_few_and_counts_the_rest() -> None:
	"""GitHub's six issue tools: four named, the others counted, on one line."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError) as raised:
		list_tools(OpenMolt(), "github", io.StringIO(), as_json=False, handle="issue")
	said = str(raised.value)
	assert said.count("'github.") == 4 and "and 2 more" in said, said


def test_an_agent_file_s_tool_not_found_names_them_the_same_way() -> None:
	"""`openmolt tools agent.json post` gives the same hint as `openmolt tools slack post`."""
	from openmolt_core.cli._agenttools import _chosen
	from openmolt_core.errors import ConfigurationError

	tools = [{"tool": t} for t in ("slack.postMessage", "slack.postEphemeral", "lookup_order")]
	with pytest.raises(ConfigurationError) as raised:
		_chosen(tools, "post", "agent.json")
	assert "did you mean 'slack.postMessage' or 'slack.postEphemeral'?" in str(raised.value)
	with pytest.raises(ConfigurationError) as raised:
		_chosen(tools, "lookup-ordr", "agent.json")
	assert "did you mean 'lookup_order'?" in str(raised.value)
	assert _chosen(tools, "postMessage", "agent.json")["tool"] == "slack.postMessage"
