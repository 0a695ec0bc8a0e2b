"""``openmolt tools ID``'s how-to-connect text gives its keys as the command takes them.

The integrations' docs give their keys in Python (``OpenMolt(integrations={...})``); the command
shows each such sample as the variables to set and the agent file's ``"integrations"`` value.
What it says must work: each value, written into an agent file, loads and passes the check
before a run, and so do the variables alone.
"""

from __future__ import annotations

import io
import json
import os
import re
from importlib import metadata
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._howto import for_agent_files
from openmolt_core.cli._info import list_tools
from openmolt_core.cli._run import check_ready, load
from openmolt_core.errors import ConfigurationError

BUILT_INS = sorted(
	ep.name
	for ep in metadata.entry_points(group="openmolt.integrations")
	if ep.value.startswith("openmolt_integrations")
)


def _howto(integration: str) -> str:
	out = io.StringIO()
	list_tools(OpenMolt(), integration, out, as_json=False)
	return out.getvalue().split("how to connect:", 1)[1].split("\nscopes:", 1)[0]


def _blocks(text: str, kind: str) -> list[list[str]]:
	found = re.findall(rf"```{kind}\n(.*?)\n *```", text, re.S)
	return [[line.strip() for line in block.splitlines()] for block in found]


def _problems(tmp_path: Path, integrations: object) -> list[str]:
	# What stops the run (strict: a key some tools read is only a warning, as the command says).
	path = tmp_path / "agent.json"
	agent = {"name": "a", "model": "openai:gpt-5-mini", "instructions": "x"}
	path.write_text(json.dumps({**agent, "integrations": integrations}))
	try:
		check_ready(load(str(path), env_file=None, verbose=False), strict=True)
	except ConfigurationError as exc:
		return str(exc).splitlines()
	return []


@pytest.mark.parametrize("integration", BUILT_INS)
def test_every_sample_is_said_for_agent_files_and_what_it_says_works(
	integration: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test")
	for name in [n for n in os.environ if n.startswith("OPENMOLT_") and "OPENAI" not in n]:
		monkeypatch.delenv(name)
	text = _howto(integration)
	assert "```python" not in text, text  # no Python sample left to a command's user
	for block in _blocks(text, "json"):
		for line in block:
			if line == "or":
				continue
			name, value = line.split(": ", 1)
			assert name == '"integrations"'
			assert _problems(tmp_path, json.loads(value)) == [], line
	for block in _blocks(text, "sh"):  # a later block names only what no earlier one did
		for line in block:
			variable, value = line.split("=", 1)
			assert variable.startswith(f"OPENMOLT_{integration.upper()}"[:11])
			monkeypatch.setenv(variable, value)
		# the variables alone give the integration its keys: an agent file that only names it
		assert _problems(tmp_path, [integration]) == [], block


def test_a_sample_built_from_variables_or_another_call_stays_as_written() -> None:
	lines = [
		"```python",
		'om = OpenMolt(integrations={"slack": {"token": os.environ["T"]}})',
		"```",
		"```python",
		"print('hello')",
		"```",
	]
	assert for_agent_files(lines, "slack") == lines


def test_a_sample_of_another_credential_type_is_said_as_the_agent_files_entry_only() -> None:
	lines = [
		"```python",
		'om.create_agent(..., integrations=[{"integration": "x", "credential": {',
		'    "type": "bearer", "config": {"bearerToken": "AAAA..."}}}])',
		"```",
	]
	said = for_agent_files(lines, "x", "oauth2")
	assert said == [
		"in the agent file:",
		"```json",
		'"integrations": [{"integration": "x", "credential": {"type": "bearer", '
		'"config": {"bearerToken": "AAAA..."}}}]',
		"```",
	]
	assert "OPENMOLT_X_BEARER_TOKEN=AAAA..." in for_agent_files(lines, "x", "bearer")


@pytest.mark.parametrize("integration", BUILT_INS)
def test_where_the_prose_gives_python_s_refresh_callback_the_command_s_way_is_said(
	integration: str,
) -> None:
	"""`onTokenRefresh` is Python's: a how-to naming it also says what the command keeps."""
	text = _howto(integration)
	kept = f"a refresh token from `openmolt keys set` or `openmolt auth {integration}` is kept"
	assert (kept in " ".join(text.split())) == ("`onTokenRefresh`" in text)


def test_the_note_never_lands_inside_an_unclosed_block() -> None:
	lines = ["Pass `onTokenRefresh`:", "```python", "x = 1"]
	assert for_agent_files(lines, "x") == lines
	closed = [*lines, "```"]
	said = for_agent_files(closed, "x")
	assert said[: len(closed)] == closed and "openmolt auth x" in " ".join(said[len(closed) :])


def test_a_key_only_some_tools_read_says_it_is_read_by_them() -> None:
	"""`openmolt tools s3`: forcePathStyle's line says "read by tools listObjects, ...", not a
	bare "tools listObjects, ..." that reads like a list of the key's tools."""
	from openmolt_core.integrations.connect import credential_needs

	spec = OpenMolt().plugins.integration("s3")
	keys = {k.name: k for need in credential_needs(spec, "s3") for k in need.keys}
	used = keys["forcePathStyle"].used_for
	assert used.startswith("read by tools listObjects, "), used
	assert used.endswith(" more")


ALL_BUILT_INS = sorted(
	ep.name
	for ep in metadata.entry_points(group="openmolt.integrations")
	if ep.value.startswith(("openmolt_integrations", "openmolt_core"))
)
"""The 30 integrations OpenMolt ships: `BUILT_INS` and the core's httpRequest."""


def test_the_built_ins_are_all_thirty() -> None:
	assert len(ALL_BUILT_INS) == 30 and "httpRequest" in ALL_BUILT_INS


@pytest.mark.parametrize("integration", ALL_BUILT_INS)
def test_every_how_to_names_each_variable_once(integration: str) -> None:
	# Slack's prose said "Or set `OPENMOLT_SLACK_TOKEN` ..." right under the block the command
	# makes of its Python sample, which already gives OPENMOLT_SLACK_TOKEN=...: twice.
	out = io.StringIO()
	list_tools(OpenMolt(), integration, out, as_json=False)
	howto = out.getvalue().partition("how to connect:")[2].split("\nscopes:", 1)[0]
	named = re.findall(r"\bOPENMOLT_[A-Z0-9_]+", howto)
	assert [v for v in dict.fromkeys(named) if named.count(v) > 1] == [], howto


def test_a_later_sample_names_only_the_variables_no_earlier_one_gave() -> None:
	sample = ["```python", 'om = OpenMolt(integrations={"slack": {"token": "xoxb-..."}})', "```"]
	more = '{"slack": {"token": "xoxb-...", "botToken": "xoxb-2"}}'
	lines = [*sample, "", *sample, "", "```python", f"om = OpenMolt(integrations={more})", "```"]
	text = "\n".join(for_agent_files(lines, "slack"))
	assert text.count("OPENMOLT_SLACK_TOKEN") == 1
	assert "in the environment: the variables above; or in the agent file:" in text
	assert "with the variables above" in text and "OPENMOLT_SLACK_BOT_TOKEN=xoxb-2" in text
	assert text.count('"integrations": ') == 3  # every agent-file entry is still said whole
