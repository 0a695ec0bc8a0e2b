"""Messages in the command's voice: Python advice said as an agent file (or ``-m``) takes it.

The engine and the providers speak to Python code: ``TaintPolicy(warn=False)``,
``llm_providers['ollama']['base_url']``, ``max_output_tokens``. Said to a person running
``openmolt agent.json``, each becomes what that person writes: ``"taintPolicy": {"warn": false}``,
``llmProviders.ollama.baseUrl``, ``maxOutputTokens``; with ``-m``, which has no agent file, the
environment variable where there is one. An ``agent.py`` is Python: its messages stay as they are.

`for_the_command` rewrites errors, progress lines and warnings alike; `show_warning` is the
command's ``warnings.showwarning``: one line, ``openmolt: warning: ...``, no path or source line.
"""

from __future__ import annotations

import re
import sys
from functools import cache

from openmolt_core._support.docs import docs_url

__all__ = ["FILE_ADVICE", "for_the_command", "show_warning"]

FILE_ADVICE = {
	"TaintPolicy(warn=False) silences this": (
		'"taintPolicy": {"warn": false} in the agent file silences this'
	),
	"(taint_policy on_outbound='allow')": '("taintPolicy": {"onOutbound": "allow"})',
	", or pick one with OpenMolt(plugins=[...], entry_points=False))": ")",
	"or add it with om.register_integration(": (
		"or add it in a Python agent file (agent.py) with om.register_integration("
	),
}
"""Python advice, and what an agent file says instead (a test finds each in the core's messages)."""

_LABELS = (
	"(@tool(labels=[...]), FunctionTool(labels=...), a tool's labels attribute, "
	"Integration(labels={...}), an MCP server's 'labels'; labels=[] for none)"
)
"""How Python code declares a tool's taint labels (the lethal-trifecta warning's advice)."""

_LABELS_IN_A_FILE = (
	'(an mcpServers entry\'s "labels": {"TOOL": ["private", "untrusted", "outbound"]}; [] for none)'
)
_LABELS_WITH_M = "(a --tool function: @tool(labels=[...]) from openmolt; labels=[] for none)"

_CHOOSE = re.compile(r"'credential': \{'type': '([^']*)'\}")
_INSTANCE = re.compile(r"llm_providers=\{'([^']*)': \{'provider': 'openai', 'base_url': \.\.\.\}\}")
_PROVIDER_SETTING = re.compile(
	r"llm_providers\[(['\"])([^'\"\]]+)\1\](?:\[(['\"])(\w+)\3\])?(?: = (['\"])([^'\"]*)\5)?"
)
_SETTINGS_ERROR = re.compile(r"(llm_providers\[(['\"])[^'\"\]]+\2\]: )([^\n]*)")
"""A provider's settings refused (``llm_providers['openai']: max_retries: ...``): each name in it
is a setting, which the command's loader spelled in snake_case from the file's camelCase."""
_VARIABLES = ("api_key", "base_url")
"""The provider settings that have an environment variable (``OPENMOLT_<NAME>_BASE_URL``)."""
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_TWICE = re.compile(r"\b(OPENMOLT_\w+) (?:or \1\b|\(or \1\))")


@cache
def _model_config_aliases() -> dict[str, str]:
	from openmolt_core.llm import ModelConfig

	return {n: f.alias for n, f in ModelConfig.model_fields.items() if f.alias}


def _setting_aliases() -> dict[str, str]:
	"""The snake_case name of every setting an agent file spells in camelCase.

	The agent's ``modelConfig`` keys, and the fields of every option model loaded (the
	providers' settings among them, which only a loaded provider can have warned about).
	"""
	from openmolt_core.options import Options

	names = dict(_model_config_aliases())
	pending = list(Options.__subclasses__())
	while pending:
		model = pending.pop()
		pending += model.__subclasses__()
		for name, field in model.model_fields.items():
			if field.alias and field.alias != name:
				names.setdefault(name, field.alias)
	return names


def _camel(name: str) -> str:
	head, *rest = name.split("_")
	return head + "".join(part.title() for part in rest)


def _provider_setting(match: re.Match[str], prompt: bool) -> str:
	"""``llm_providers['ollama']['base_url']`` (``= 'value'``) as the command's user sets it."""
	name, key, value = match[2], match[4], match[6]
	if key is None:
		return f"llmProviders.{name}"
	if prompt and key in _VARIABLES:  # no agent file: the setting's variable
		from openmolt_core._envvars import env_var

		variable = env_var(name, _camel(key))
		return variable if value is None else f"{variable}={value}"
	where = "in an agent file (a -m run has none: write one)" if prompt else "in the agent file"
	said = f' to "{value}"' if value is not None else ""
	return f"llmProviders.{name}.{_camel(key)}{said} {where}"


def for_the_command(text: str, *, prompt: bool = False, settings: bool = False) -> str:
	"""A message written for Python code, with the advice an agent file or ``-m`` takes.

	Args:
		text: The message.
		prompt: A ``-m`` run, which has no agent file: a provider setting is named by its
			environment variable, and "the agent file" is said to be one to write.
		settings: The message is about settings (a `ModelConfigWarning`): their snake_case names
			are said as an agent file spells them (``max_output_tokens`` → ``maxOutputTokens``,
			``False`` → ``false``). A provider's refused settings always are
			(``llm_providers['openai']: max_retries: ...`` is ``llmProviders.openai: maxRetries``).
	"""
	for python, agent_file in FILE_ADVICE.items():
		text = text.replace(python, agent_file)
	text = text.replace(_LABELS, _LABELS_WITH_M if prompt else _LABELS_IN_A_FILE)
	text = _CHOOSE.sub(lambda m: f'"credential": {{"type": "{m[1]}"}}', text)
	text = _INSTANCE.sub(
		lambda m: (
			f'"llmProviders": {{"{m[1]}": {{"provider": "openai", "baseUrl": ...}}}} in '
			"the agent file (with -m: OPENMOLT_OPENAI_BASE_URL=... and -m openai:MODEL)"
		),
		text,
	)
	text = _SETTINGS_ERROR.sub(lambda m: m[1] + _SNAKE.sub(lambda w: _camel(w[0]), m[3]), text)
	text = _PROVIDER_SETTING.sub(lambda m: _provider_setting(m, prompt), text)
	if settings:
		aliases = _setting_aliases()
		text = _SNAKE.sub(lambda m: aliases.get(m[0], m[0]), text)
		text = re.sub(r"\bFalse\b", "false", re.sub(r"\bTrue\b", "true", text))
	if prompt:
		text = _TWICE.sub(r"\1", text)
		text = text.replace(
			"in the agent file silences this",
			f"in an agent file silences this (a -m run has none: write one, {docs_url('cli.md')})",
		)
	return text


def show_warning(
	message: Warning | str,
	category: type[Warning],
	filename: str,
	lineno: int,
	file: object = None,
	line: str | None = None,
	*,
	verbose: bool = False,
	prompt: bool = False,
	python: bool = False,
) -> None:
	"""A Python warning as one line in the command's voice, with advice for agent files.

	Args:
		message: What `warnings.showwarning` is given.
		category: The warning's class.
		filename: Where it was raised (not shown: it is OpenMolt's code, not the user's).
		lineno: Its line (not shown).
		file: Where Python would write it (the command writes to stderr).
		line: The source line (not shown).
		verbose: ``--verbose``: a `NotStreamingWarning` is said too.
		prompt: A ``-m`` run (see `for_the_command`).
		python: An ``agent.py``, whose advice stays Python's, which is what that file is.
	"""
	kinds = {c.__name__ for c in category.__mro__}
	said = {"ScheduleHeldWarning", "ScheduleStoreWarning"}  # what the command's own schedules do
	if "ScheduleWarning" in kinds and not kinds & said:
		return  # about Python code that never served its schedules; the command serves them
	if "NotStreamingWarning" in kinds and not verbose:
		return  # the run goes on as it would have without a terminal: said with --verbose
	from openmolt_core._support.masking import mask_printed

	text = " ".join(mask_printed(str(message)).split())
	if not python:
		text = for_the_command(text, prompt=prompt, settings="ModelConfigWarning" in kinds)
	print(f"openmolt: warning: {text}", file=sys.stderr)
