"""A run's result as a person reads it on a terminal: status, message, output, what it cost.

JSON stays the output for pipes and ``--json``; on a TTY the command prints this instead, so the
answer and the human message are the first things a person sees.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core._support.words import money, quantity
from openmolt_core.cli._terminal import excerpt

if TYPE_CHECKING:
	from pathlib import Path

	from openmolt_core.result import RunResult

__all__ = ["error_for_the_command", "summary"]

_GLOSS = {"error": "the model provider failed", "limit_reached": "stopped at a limit"}
"""What a status that does not say itself means (the status is printed as ``--json`` has it)."""


def _scalar(value: Any) -> str:
	if isinstance(value, str):
		return value
	return json.dumps(value, ensure_ascii=False, default=str)


def _render(value: Any, indent: str = "  ") -> list[str]:
	"""A JSON value as indented ``key: value`` lines (strings as they are, no escapes)."""
	if isinstance(value, Mapping):
		lines: list[str] = []
		for key, item in value.items():
			if isinstance(item, (Mapping, list)) and item:
				lines.append(f"{indent}{key}:")
				lines += _render(item, indent + "  ")
			else:
				text = _scalar(item)
				if "\n" in text:
					lines.append(f"{indent}{key}: |")
					lines += [f"{indent}  {line}" for line in text.splitlines()]
				else:
					lines.append(f"{indent}{key}: {text}")
		return lines
	if isinstance(value, list):
		lines = []
		for item in value:
			if isinstance(item, (Mapping, list)) and item:
				lines.append(f"{indent}-")
				lines += _render(item, indent + "  ")
			else:
				lines.append(f"{indent}- {_scalar(item)}")
		return lines
	return [f"{indent}{line}" for line in _scalar(value).splitlines() or [""]]


_CONNECT = re.compile(r" waits for (?P<user>.+?) to connect (?P<integration>\S+): ")


def error_for_the_command(error: str, file: Path | None) -> str:
	"""A parked run's error as the command says it: the agent file named, no Python advice.

	A run parked on an approval or on an end user's account ends with what Python code does
	next (``agent.resume(state, ...)``); the command says what its user does instead.

	Args:
		error: The result's error.
		file: The agent file (None, or not a file, for ``-m``).
	"""
	from openmolt_core._approve import DECIDE_IN_PYTHON
	from openmolt_core.capabilities.accounts import RESUME_IN_PYTHON

	text = error.replace(f"; {DECIDE_IN_PYTHON}", "")
	if file is not None and file.is_file():
		text = text.replace("`openmolt ui AGENT_FILE`", f"`openmolt ui {file}`")
	found = _CONNECT.search(text) if RESUME_IN_PYTHON in text else None
	if found is not None:
		connect = f"openmolt auth {found['integration']} --user {found['user']}"
		text = text.replace(
			RESUME_IN_PYTHON,
			f"once connected (`{connect}` connects on this machine), run the command again",
		)
	return text


def summary(
	result: RunResult, *, store: Path | None = None, message: bool = True, error: bool = True
) -> str:
	"""The result in a few readable lines.

	Args:
		result: The run's result.
		store: Where the run is recorded (``openmolt logs`` and ``openmolt ui`` read it).
		message: Show the human message (not when it was streamed to the terminal already).
		error: Show the error (not when a progress line said it on the terminal already).
	"""
	data = result.to_dict()
	usage = result.usage
	tokens = usage.input_tokens + usage.output_tokens
	parts = [
		f"{result.status} ({_GLOSS[result.status]})" if result.status in _GLOSS else result.status,
		quantity(result.steps, "step"),
		quantity(tokens, "token"),
	]
	cost = money(usage.cost_usd, usage.unpriced_calls)
	if cost is not None:
		parts.append(cost)
	elif tokens:  # no list price (a local server, a model the table lacks): said, not left out
		parts.append("cost unknown")
	lines = [" · ".join(parts)]
	if result.error and error:  # bounded: an error may be a service's page, thousands of lines
		lines.append(f"error: {excerpt(result.error, whole='--json prints it whole')}")
	if result.human_message and message:
		lines.append("")
		lines.append("message:")
		lines += [f"  {line}" for line in result.human_message.splitlines()]
	output = data["output"]
	if output not in (None, "", {}):
		lines.append("")
		lines.append("output:")
		lines += _render(output)
	if result.state.run_id:
		# `openmolt logs` needs no extra (`openmolt ui` needs openmolt[ui]).
		shows = f"`openmolt logs {result.state.run_id}` shows it"
		where = f" (recorded in {store}; {shows})" if store else ""
		lines.append("")
		lines.append(f"run {result.state.run_id}{where}; --json prints the whole result")
	return "\n".join(lines) + "\n"
