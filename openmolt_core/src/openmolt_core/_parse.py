"""Turn a model's reply text into commands to run, or into precise errors for the model.

The rules are docs/guides/replies.md's (the maestro prompt states them); finding the one JSON value
in the text is `openmolt_core._support.jsonsafe.json_in_text`'s, the commands and what the model is
told are here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from openmolt_core._support.jsonsafe import (
	NoJsonValue,
	UnsafeJson,
	encodable_text,
	json_in_text,
	within_depth,
)
from openmolt_core._support.jsonschema import format_errors
from openmolt_core._support.masking import masked_excerpt
from openmolt_core.commands import COMMAND_TYPES, ENDS_REPLY, Command, command_class
from openmolt_core.envelope import command_schema

__all__ = [
	"DEFAULT_MAX_DEPTH",
	"DEFAULT_MAX_REPLY_CHARS",
	"Check",
	"ParsedReply",
	"parse_reply",
]

DEFAULT_MAX_REPLY_CHARS = 1_000_000
"""Replies longer than this run nothing (``create_agent(config={"max_reply_chars": ...})``)."""

DEFAULT_MAX_DEPTH = 64
"""Replies nested deeper than this (objects and arrays) run nothing."""

Check = Callable[[int, Command], "Command | str"]
"""Checks one command in the agent's context: returns it (possibly normalized) or an error."""

_STOP_REASONS = {
	"max_tokens": (
		"your answer was cut off at the output token limit, so none of it was run: send fewer "
		"commands per answer, or shorter inputs"
	),
	"refusal": (
		"you refused to answer, so nothing was run; if the task cannot be done, finish with "
		"status 'failure'"
	),
	"safety": (
		"the provider's safety filter blocked your answer, so nothing was run; rephrase, or "
		"finish with status 'failure' and explain why"
	),
	"tool_calls": (
		"you called a tool natively (a function call), which this agent does not take, so "
		"nothing was run; call tools with callTool commands in your one JSON object"
	),
	"incomplete": (
		"your answer stopped before it was complete, so none of it was run; send the whole "
		"answer again"
	),
	# The loop ends the run on it before parsing (`openmolt_core.llm.ModelResponse`); a reader
	# of replies that does not still runs none of it.
	"blocked": "the provider blocked this conversation, so nothing was run",
}
FINISHES = frozenset({"stop", *_STOP_REASONS})
"""The finish reasons the loop knows (`openmolt_core.llm.ModelResponse.finish_reason`)."""


def finish_read(reason: str | None) -> str | None:
	"""A reply's finish reason as the loop reads it: unknown is unsafe.

	None (the provider did not say) and the reasons the loop knows (`FINISHES`) as they are;
	any other (an API's own ``length``, ``content_filter``, ``SAFETY``, ``error``, passed on by
	a provider of a plugin) is ``incomplete``: the reply may be cut or filtered, none of it runs.

	Args:
		reason: `openmolt_core.llm.ModelResponse.finish_reason`.
	"""
	return reason if reason is None or reason in FINISHES else "incomplete"


_SHAPE = 'answer with exactly one JSON object {"commands": [...]} and nothing else'


@dataclass(slots=True, eq=False)  # never compared: no __eq__ to generate
class ParsedReply:
	"""A parsed reply: the commands to run, or the errors, plus the text for the history.

	Args:
		commands: The validated commands to run, in order (empty when there are errors).
		errors: One message per problem, for the model (empty when the reply is valid).
		ignored: Commands that are valid or not but do not run (after ``finish``), with why.
		cleaned: What goes into the history as the model's turn.
	"""

	commands: list[Command]
	errors: list[str]
	cleaned: str
	ignored: list[str] = field(default_factory=list)


def _commands(value: Any) -> bool:
	"""Whether a JSON value found in prose is a reply: an envelope, a command or a list of them."""
	if isinstance(value, dict):
		return "commands" in value or "type" in value
	return (
		isinstance(value, list)
		and bool(value)
		and all(isinstance(item, dict) and "type" in item for item in value)
	)


class _Invalid(Exception):
	def __init__(self, message: str) -> None:
		self.message = message


def _decode(text: str, max_depth: int) -> Any:
	"""The reply's one JSON value, found the way models send it, or `_Invalid`."""
	try:
		return json_in_text(text, max_depth, _commands)
	except UnsafeJson as unsafe:
		raise _Invalid(_unsafe(unsafe)) from None
	except NoJsonValue as missing:
		raise _Invalid(_missing(missing, max_depth)) from None


def _missing(missing: NoJsonValue, max_depth: int) -> str:
	"""What the model is told when its reply holds no one value (`json_in_text`)."""
	if missing.reason == "deep":
		return f"your answer is nested too deeply (the most is {max_depth} levels)"
	if missing.reason == "several":
		return f"your answer held {missing.count} JSON objects, so none was run; {_SHAPE}"
	if missing.reason == "empty":
		return f"your answer was empty, so nothing was run; {_SHAPE}"
	error = missing.error
	where = f" ({error.msg} at line {error.lineno} column {error.colno})" if error else ""
	return f"your answer was not valid JSON{where}; {_SHAPE}"


def _unsafe(error: UnsafeJson) -> str:
	return f"nothing was run: {error}"


def _items(data: Any) -> list[Any]:
	if isinstance(data, list):
		if not data:  # as {"commands": []}: a step without a command, told to the model
			raise _Invalid("your answer is an empty list; give at least one command")
		return data
	if isinstance(data, dict) and "commands" not in data and "type" in data:
		return [data]
	if isinstance(data, dict) and isinstance(data.get("commands"), list):
		extra = sorted(set(data) - {"commands"})
		if extra:
			raise _Invalid(
				f'your answer has key(s) {extra} besides "commands", so nothing was run; {_SHAPE}'
			)
		items: list[Any] = data["commands"]
		if not items:
			raise _Invalid('"commands" is empty; give at least one command')
		return items
	raise _Invalid(f'your answer must be a JSON object with a "commands" array; {_SHAPE}')


def _validate(index: int, item: Any) -> Command | str:
	if not isinstance(item, dict):
		return f'command {index}: must be an object with a "type", got {type(item).__name__}'
	kind = item.get("type")
	cls = command_class(kind) if isinstance(kind, str) else None
	if cls is None:
		from openmolt_core._support.suggest import suggestion  # only a reply that went wrong

		hint = suggestion(str(kind), COMMAND_TYPES, noun="commands")
		return f"command {index}: unknown command type {kind!r}; {hint}"
	try:
		return cast("Command", cls.model_validate(item))
	except ValidationError as exc:
		return f"command {index} ({kind}): {_field_errors(exc, cls)}"


def _field_errors(exc: ValidationError, cls: type[BaseModel]) -> str:
	"""Validation errors of a command, with the nearest field name for unknown ones."""
	from openmolt_core._support.suggest import suggestion

	fields = [f for f in command_schema(cls).get("properties", {}) if f != "type"]
	hints = [
		f"{item['loc'][0]!r}: {suggestion(str(item['loc'][0]), fields, noun='fields')}"
		for item in exc.errors(include_url=False)
		if item["type"] == "extra_forbidden" and len(item["loc"]) == 1
	]
	return format_errors(exc) + ("; " + "; ".join(hints) if hints else "")


def parse_reply(
	text: str,
	*,
	dumps: Callable[[Any], str],
	check: Check | None = None,
	restore: Callable[[Any], Any] | None = None,
	finish_reason: str | None = None,
	max_chars: int = DEFAULT_MAX_REPLY_CHARS,
	max_depth: int = DEFAULT_MAX_DEPTH,
) -> ParsedReply:
	"""Parse and validate a reply by the reply rules (docs/guides/replies.md).

	Args:
		text: The model's reply text.
		dumps: The JSON serializer for the cleaned form.
		check: Checks each command in the agent's context (tools, scopes, output schema).
		restore: Undoes a provider dialect's changes on the decoded reply (JSON-string inputs,
			nulls for optional fields) before validation.
		finish_reason: Why the model stopped, when the provider said.
		max_chars: The size cap.
		max_depth: The nesting cap.
	"""
	if len(text) > max_chars:
		return ParsedReply(
			[],
			[
				f"your answer was {len(text)} characters, more than the {max_chars} allowed, so "
				"none of it was run: send fewer or smaller commands"
			],
			encodable_text(masked_excerpt(text, 1000)),
		)
	why = _STOP_REASONS.get(finish_read(finish_reason) or "")
	try:
		data = _decode(text, max_depth)
	except _Invalid as invalid:
		shown = masked_excerpt(text.strip(), 1000)
		return ParsedReply([], [why or invalid.message], encodable_text(shown))
	if why:
		return ParsedReply([], [why], dumps(data))
	try:
		# JSON text the repair decoded (an output or a tool input sent as text) is held to the
		# same depth cap as the reply: the cap was checked before it was decoded.
		items = _items(within_depth(restore(data), max_depth) if restore is not None else data)
	except UnsafeJson as unsafe:  # in JSON text the repair decoded
		return ParsedReply([], [_unsafe(unsafe)], dumps(data))
	except NoJsonValue as missing:
		return ParsedReply([], [_missing(missing, max_depth)], dumps(data))
	except _Invalid as invalid:
		return ParsedReply([], [invalid.message], dumps(data))
	commands: list[Command] = []
	errors: list[str] = []
	ignored: list[str] = []
	valid: list[int] = []
	end: str | None = None
	for index, item in enumerate(items):
		command: Command | str = _validate(index, item)
		if not isinstance(command, str) and check is not None:
			command = check(index, command)
		if isinstance(command, str):
			errors.append(command)
			continue
		if end is not None:
			ignored.append(f"command {index} ({command.type}) did not run: it came after {end}")
			continue
		valid.append(index)
		commands.append(command)
		if type(command) in ENDS_REPLY:
			end = command.type
	cleaned = dumps({"commands": items})
	if errors:
		if valid:
			listed = ", ".join(str(i) for i in valid)
			errors.append(
				f"command(s) {listed} were valid but did not run, because nothing runs when a "
				"command is invalid: send the whole answer again, corrected"
			)
		return ParsedReply([], errors, cleaned, ignored)
	return ParsedReply(commands, [], cleaned, ignored)
