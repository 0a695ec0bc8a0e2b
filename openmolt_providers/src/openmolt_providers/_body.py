"""Small helpers to build request bodies from the standard model_config without copying much."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["data_url", "encode", "last_key", "merge_options"]


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode(body: dict[str, Any]) -> bytes:
	"""Serialize a request body: UTF-8 JSON without the spaces after ``,`` and ``:``.

	`json.dumps`' default separators add two bytes per key and one per list item: about
	170 bytes on an agent's first request, sent again with every step. A lone surrogate (from a
	message a caller built by hand: the loop's own state never holds one) is sent as U+FFFD, so a
	body always encodes.
	"""
	text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
	try:
		return text.encode()
	except UnicodeEncodeError:
		return _SURROGATE.sub("\ufffd", text).encode()


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
