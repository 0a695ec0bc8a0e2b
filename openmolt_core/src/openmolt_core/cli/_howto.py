"""An integration's how-to-connect text as the command's user reads it: no Python samples.

The docs an integration ships are written for Python code (``OpenMolt(integrations={...})``,
``om.create_agent(..., integrations=[...])``); ``openmolt tools ID`` shows them to someone who
writes agent files and sets environment variables. Each Python block that gives an integration
its keys becomes the variables that give them (``OPENMOLT_SLACK_TOKEN=xoxb-...``) and the agent
file's ``"integrations"`` entry; a block it cannot read as such stays as written. Each variable is
named once: a later sample's block gives only the variables no earlier one gave.
"""

from __future__ import annotations

import ast
import json
import textwrap
from typing import Any

from openmolt_core._envvars import env_var

__all__ = ["for_agent_files"]

_CALLS = ("OpenMolt", "create_agent")
"""The calls whose ``integrations=`` a sample gives: the instance's and an agent's."""


def for_agent_files(
	lines: list[str], integration: str, default_type: str | None = None
) -> list[str]:
	"""The how-to lines with each Python block that configures integrations said for the command.

	Args:
		lines: The how-to text, line by line (Markdown, fenced code blocks).
		integration: The integration's id (a sample that is only ``"config": {...}`` is its).
		default_type: The integration's default credential type: a sample that picks another one
			is given as the agent file's entry only (the variables alone give the default type).
	"""
	out: list[str] = []
	block: list[str] | None = None
	given: set[str] = set()  # the variables an earlier block gave
	for line in lines:
		if block is None:
			if line.strip() == "```python":
				block = []
			else:
				out.append(line)
			continue
		if line.strip() != "```":
			block.append(line)
			continue
		said = _said(block, integration, default_type, given)
		out.extend(said if said is not None else ["```python", *block, "```"])
		block = None
	if block is not None:  # an unclosed block: as written (a note after it would be inside it)
		return [*out, "```python", *block]
	if any(_CALLBACK in line for line in out):
		out += ["", *textwrap.wrap(_KEPT.format(integration=integration), 96)]
	return out


_CALLBACK = "`onTokenRefresh`"
_KEPT = (
	"For the command: a refresh token from `openmolt keys set` or `openmolt auth {integration}` is "
	"kept current by every refresh (what `onTokenRefresh` does in Python code); one from the "
	"environment, a .env file or the agent file cannot be rewritten, and a run that gets a new one "
	"says so."
)
"""What the command does with refreshed tokens, said where the prose gives Python's callback."""


def _said(
	block: list[str], integration: str, default_type: str | None, said_before: set[str]
) -> list[str] | None:
	# The variables and the agent file's entries of one block; None when it is no such sample.
	# The variables in ``said_before`` (an earlier block's) are not named again; this block's are
	# added to it.
	given = _given(textwrap.dedent("\n".join(block)), integration)
	if not given:
		return None
	variables: dict[str, str] = {}
	for value in given:
		for iid, config in _configs(value, default_type):
			for key, example in config.items():
				variables.setdefault(env_var(iid, key), str(example))
	out: list[str] = []
	new = {name: example for name, example in variables.items() if name not in said_before}
	said_before.update(new)
	above = " with the variables above" if len(new) < len(variables) else ""
	if new:
		out += [f"in the environment{above} (or a .env file, or `openmolt keys set`):", "```sh"]
		out += [f"{name}={example}" for name, example in new.items()]
		out += ["```", "or in the agent file:"]
	elif variables:
		out.append("in the environment: the variables above; or in the agent file:")
	else:
		out.append("in the agent file:")
	out.append("```json")
	for index, value in enumerate(_in_a_file(given)):
		if index:
			out.append("or")
		out.append(f'"integrations": {json.dumps(value, ensure_ascii=False)}')
	out.append("```")
	return out


def _given(code: str, integration: str) -> list[Any] | None:
	# Each ``integrations=`` value of the sample's calls, or of a ``"config": {...}`` fragment
	# (the integration's own credential); None when a value is not a literal.
	try:
		tree = ast.parse(code)
	except SyntaxError:
		try:
			fragment = ast.literal_eval("{" + code + "}")
		except (SyntaxError, ValueError):
			return None
		if set(fragment) != {"config"} or not isinstance(fragment["config"], dict):
			return None
		return [[{"integration": integration, "credential": fragment}]]
	given: list[Any] = []
	for node in ast.walk(tree):
		if not isinstance(node, ast.Call) or _name(node.func) not in _CALLS:
			continue
		for keyword in node.keywords:
			if keyword.arg != "integrations":
				continue
			try:
				given.append(ast.literal_eval(_literals(keyword.value)))
			except ValueError:  # built from variables: no literal to say
				return None
	return given


def _in_a_file(given: list[Any]) -> list[Any]:
	# The agent file's "integrations" values: one per alternative the sample shows. Python gives
	# the keys to the instance and picks tools or scopes per agent; one agent file does both.
	configs = [v for v in given if isinstance(v, dict)]
	entries = [e for v in given if isinstance(v, list) for e in v]
	if not any(isinstance(e, dict) and set(e) - {"integration"} for e in entries):
		# Only ids (or nothing) per agent: the {id: config} form says it all, or the list as is.
		return configs or [entries]
	keys: dict[str, Any] = {}
	for given_keys in configs:
		keys.update(given_keys)
	merged = []
	for entry in entries:
		entry = {"integration": entry} if isinstance(entry, str) else dict(entry)
		config = keys.get(str(entry.get("integration")))
		if "credential" not in entry and isinstance(config, dict):
			entry["credential"] = {"config": config}
		merged.append(entry)
	return [merged]


def _literals(node: ast.expr) -> ast.expr:
	# The sample without what only Python gives (``"onTokenRefresh": save_tokens``): a dict's
	# entries whose values are names, calls or lambdas. The command keeps refreshed tokens itself.
	for found in ast.walk(node):
		if isinstance(found, ast.Dict):
			kept = [
				(k, v)
				for k, v in zip(found.keys, found.values, strict=True)
				if not isinstance(v, ast.Name | ast.Call | ast.Lambda | ast.Attribute)
			]
			found.keys = [k for k, _ in kept]
			found.values = [v for _, v in kept]
	return node


def _name(func: ast.expr) -> str:
	if isinstance(func, ast.Name):
		return func.id
	return func.attr if isinstance(func, ast.Attribute) else ""


def _configs(value: Any, default_type: str | None) -> list[tuple[str, dict[str, Any]]]:
	# (integration id, config) of the keys a sample gives for the default credential type.
	if isinstance(value, dict):  # the {id: config} form
		return [(str(i), c) for i, c in value.items() if isinstance(c, dict)]
	found = []
	for entry in value if isinstance(value, list) else ():
		if not isinstance(entry, dict) or not isinstance(entry.get("credential"), dict):
			continue
		credential = entry["credential"]
		kind = credential.get("type")
		config = credential.get("config")
		if isinstance(config, dict) and (kind is None or kind == default_type):
			found.append((str(entry.get("integration")), config))
	return found
