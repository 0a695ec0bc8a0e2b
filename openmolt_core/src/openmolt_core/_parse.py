"""Turn a model's reply text into validated commands, or into a precise error for the model."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from openmolt_core._jsonschema import format_errors
from openmolt_core.commands import (
	CallTool,
	Finish,
	RequestHumanInput,
	UpdateMemory,
	UpdatePlan,
	Wait,
)

__all__ = ["ParsedReply", "parse_reply"]

_CLASSES: dict[str, Any] = {
	"callTool": CallTool,
	"wait": Wait,
	"updatePlan": UpdatePlan,
	"updateMemory": UpdateMemory,
	"requestHumanInput": RequestHumanInput,
	"finish": Finish,
}
_KNOWN = tuple(_CLASSES)


@dataclass(slots=True)
class ParsedReply:
	"""A parsed reply: the commands, or the errors, plus the cleaned text for the history.

	Args:
		commands: The validated commands, in order (empty when there are errors).
		errors: One message per problem, for the model.
		cleaned: What goes into the history as the model's turn.
	"""

	commands: list[Any]
	errors: list[str]
	cleaned: str


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_DECODER = json.JSONDecoder()


def _extract(text: str) -> str:
	"""The JSON of a reply, found the way models actually send it.

	Reasoning blocks (``<think>...</think>``, which local reasoning models emit) are dropped; JSON
	in Markdown fences or surrounded by prose is cut out. When the text is not JSON as a whole,
	the first object that decodes and looks like commands is taken.
	"""
	s = _THINK.sub("", text).strip()
	if s.startswith("```"):
		s = s.split("\n", 1)[1] if "\n" in s else ""
		end = s.rfind("```")
		if end >= 0:
			s = s[:end]
		s = s.strip()
	if not s or s[0] in "[{":
		try:
			_DECODER.decode(s)
			return s
		except ValueError:
			pass
	start = s.find("{")
	while start >= 0:
		try:
			value, end = _DECODER.raw_decode(s, start)
		except ValueError:
			start = s.find("{", start + 1)
			continue
		if isinstance(value, dict) and ("commands" in value or "type" in value):
			return s[start:end]
		start = s.find("{", end)
	return s


def parse_reply(text: str, *, dumps: Any) -> ParsedReply:
	"""Parse and validate a reply.

	Accepts ``{"commands": [...]}``; also a bare list of commands or a single command object,
	and JSON wrapped in Markdown fences or surrounded by prose, which models sometimes send.

	Args:
		text: The model's reply text.
		dumps: The JSON serializer used for the cleaned form.
	"""
	raw = _extract(text)
	try:
		data = json.loads(raw)
	except json.JSONDecodeError as exc:
		snippet = text.strip()[:1000]
		return ParsedReply(
			[],
			[
				f"your answer was not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
				'answer with exactly one JSON object {"commands": [...]} and nothing else'
			],
			snippet,
		)
	if isinstance(data, list):
		data = {"commands": data}
	elif isinstance(data, dict) and "commands" not in data and "type" in data:
		data = {"commands": [data]}
	if not isinstance(data, dict) or not isinstance(data.get("commands"), list):
		return ParsedReply(
			[],
			['your answer must be a JSON object with a "commands" array: {"commands": [...]}'],
			dumps(data),
		)
	items = data["commands"]
	if not items:
		return ParsedReply([], ['"commands" is empty; give at least one command'], dumps(data))
	commands: list[Any] = []
	errors: list[str] = []
	for index, item in enumerate(items):
		if not isinstance(item, dict):
			errors.append(
				f'command {index}: must be an object with a "type", got {type(item).__name__}'
			)
			continue
		kind = item.get("type")
		if kind not in _KNOWN:
			errors.append(
				f"command {index}: unknown command type {kind!r}; use one of: {', '.join(_KNOWN)}"
			)
			continue
		try:
			commands.append(_CLASSES[kind].model_validate(item))
		except ValidationError as exc:
			errors.append(f"command {index} ({kind}): {format_errors(exc)}")
	if errors:
		return ParsedReply([], errors, dumps(data))
	cleaned = dumps(
		{
			"commands": [
				c.model_dump(mode="json", by_alias=True, exclude_defaults=False) for c in commands
			]
		}
	)
	return ParsedReply(commands, [], cleaned)
