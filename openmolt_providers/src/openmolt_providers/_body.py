"""Small helpers to build request bodies from the standard model_config without copying much."""

from __future__ import annotations

import json
from typing import Any

from openmolt_core._support import LazyPattern

__all__ = ["EMPTY_TURN", "data_url", "encode", "keep", "last_key", "merge_options", "turn_text"]


_SURROGATE = LazyPattern("[\ud800-\udfff]")

_KEPT: dict[int, tuple[Any, str | None]] = {}
"""``id(value)`` -> (the value, its JSON once written): the values `keep` was given."""

_KEPT_SIZE = 32  # values kept at most (a reply schema per tool set and dialect); then cleared

_KEPT_DEPTH = 3  # how deep in a body a kept value may sit: body.text.format.schema


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_dumps = _ENCODER.encode
_string = json.encoder.encode_basestring  # what the encoder writes for a str (ensure_ascii off)


def keep(value: Any) -> Any:
	"""Mark a JSON value that every request of a run sends unchanged: `encode` writes it once.

	The reply schema is the same dict at every step (the loop fits it once per tool set, as
	`openmolt_providers._schema.SchemaCache` relies on too) and the largest part of a body that
	does not grow: written once, it is not encoded again at each step (a 2 KB schema of one tool
	cost about as much as the rest of a 20-step body). The value must not change afterwards; it
	is recognised by identity, and at most `_KEPT_SIZE` values are kept.

	Args:
		value: A JSON value that a body holds at most `_KEPT_DEPTH` dicts deep.

	Returns:
		The value itself.
	"""
	if id(value) not in _KEPT:
		if len(_KEPT) >= _KEPT_SIZE:
			_KEPT.clear()
		_KEPT[id(value)] = (value, None)
	return value


def _text(value: Any, depth: int) -> str:
	"""The JSON of ``value``, byte for byte `_dumps`', with kept values written once."""
	kept = _KEPT.get(id(value))
	if kept is not None and kept[0] is value:
		text = kept[1]
		if text is None:
			text = _dumps(value)
			_KEPT[id(value)] = (value, text)
		return text
	kind = type(value)
	if kind is str:
		return _string(value)
	if depth < _KEPT_DEPTH and kind is dict:
		try:
			items = [f"{_string(k)}:{_text(v, depth + 1)}" for k, v in value.items()]
		except TypeError:  # a key that is no str (JSON writes it as one) or a value that is no JSON
			return _dumps(value)
		return "{" + ",".join(items) + "}"
	return _dumps(value)


def encode(body: dict[str, Any]) -> bytes:
	"""Serialize a request body: UTF-8 JSON without the spaces after ``,`` and ``:``.

	`json.dumps`' default separators add two bytes per key and one per list item: about
	170 bytes on an agent's first request, sent again with every step. A lone surrogate (from a
	message a caller built by hand: the loop's own state never holds one) is sent as U+FFFD, so a
	body always encodes. The values given to `keep` (the reply schema) are written once and
	reused, in the same bytes.
	"""
	text = _text(body, 0) if _KEPT else _dumps(body)
	try:
		return text.encode()
	except UnicodeEncodeError:
		return _SURROGATE().sub("\ufffd", text).encode()


def merge_options(body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
	"""Merge ``provider_options`` into a body: top-level keys win, nested dicts merge one level.

	So ``{"reasoning": {"summary": "auto"}}`` keeps the effort that ``thinking`` set, and
	``{"temperature": 0.1}`` replaces the mapped value.
	"""
	for key, value in options.items():
		current = body.get(key)
		if isinstance(value, dict) and isinstance(current, dict):
			body[key] = {**current, **value}
		else:
			body[key] = value
	return body


EMPTY_TURN = "(empty answer)"
"""What a turn without text is sent as where the API refuses an empty one (Anthropic, Gemini)."""


def turn_text(text: str) -> str:
	"""A turn's text as sent where an empty one is refused: `EMPTY_TURN` for no text.

	A reply with no text (refused, blocked, only a native call) is kept in the history as it
	came, empty; Anthropic answers the next request 400 ("all messages must have non-empty
	content") and Gemini too (an empty text part has no data), so every later step failed.

	Args:
		text: The turn's text.
	"""
	return text if text.strip() else EMPTY_TURN


def data_url(media_type: str, data: str) -> str:
	"""A ``data:`` URL for base64 content."""
	return f"data:{media_type};base64,{data}"


def last_key(body: dict[str, Any], key: str) -> dict[str, Any]:
	"""Move the growing conversation to the end of the body, after every fixed field.

	JSON keeps dict order, so the reply schema, tools and settings then sit in the byte-identical
	prefix that the next request repeats, and only the end of the body changes between steps.
	"""
	if key in body:
		body[key] = body.pop(key)
	return body
