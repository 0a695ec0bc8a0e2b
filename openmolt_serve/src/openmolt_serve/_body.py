"""Read a request's body up to a cap and a time, and turn a payload into a run's input.

Every body parser of the trigger routes (webhook payloads, Slack's events and forms, Telegram's
updates, and the Bot and Web APIs' answers) goes through `parse_json`: a value nested deeper than
`MAX_DEPTH` levels (the cap on model replies) is refused with `TooDeep` (the routes answer
``422``), never a ``RecursionError``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from openmolt_core._parse import DEFAULT_MAX_DEPTH

__all__ = [
	"BODY_TIMEOUT",
	"MAX_DEPTH",
	"SlowBody",
	"TooDeep",
	"TooLarge",
	"parse_json",
	"payload",
	"read_body",
	"too_slow",
]

MAX_DEPTH: int = DEFAULT_MAX_DEPTH
"""The most levels of nesting a JSON body may have: the same cap as a model's reply."""

BODY_TIMEOUT = 10.0
"""Seconds a request's body may take to arrive, in all (slower: ``408``)."""


class TooLarge(Exception):
	"""The body is larger than the cap."""


class SlowBody(Exception):
	"""The body did not arrive in time."""


class TooDeep(ValueError):
	"""A JSON body nests deeper than `MAX_DEPTH` levels.

	Args:
		what: What was parsed (``the body``, ``the update``), for the message.
	"""

	def __init__(self, what: str = "the body") -> None:
		super().__init__(
			f"{what} is nested deeper than {MAX_DEPTH} levels of objects and arrays; send a "
			"flatter payload"
		)


async def read_body(request: Request, cap: int, *, within: float = BODY_TIMEOUT) -> bytes:
	"""The raw body, refusing one larger than ``cap`` bytes before reading it all.

	Args:
		request: The request.
		cap: The most bytes accepted.
		within: Seconds the whole body may take to arrive.

	Raises:
		TooLarge: ``Content-Length`` says more than the cap, or the stream goes past it.
		SlowBody: The body did not arrive within ``within`` seconds (a half-sent request).
	"""
	declared = request.headers.get("content-length")
	if declared is not None and declared.isdigit() and int(declared) > cap:
		raise TooLarge
	chunks: list[bytes] = []
	size = 0
	with anyio.move_on_after(within) as scope:
		async for chunk in request.stream():
			size += len(chunk)
			if size > cap:
				raise TooLarge
			chunks.append(chunk)
	if scope.cancelled_caught:
		raise SlowBody
	return b"".join(chunks)


def too_slow(what: str = "the body") -> JSONResponse:
	"""The ``408`` for a body that did not arrive in time; the connection closes after it.

	Args:
		what: What was late, for the message.
	"""
	return JSONResponse(
		{"error": f"{what} did not arrive in time; send the request again, all at once"},
		status_code=408,
		headers={"connection": "close"},  # the rest of the body may never come: do not wait
	)


def _nested_at_most(value: Any, limit: int) -> bool:
	stack: list[tuple[Any, int]] = [(value, 1)]
	while stack:
		item, level = stack.pop()
		children = item.values() if isinstance(item, dict) else item
		if level > limit:
			return False
		stack.extend((c, level + 1) for c in children if isinstance(c, dict | list))
	return True


def parse_json(data: bytes | str, *, what: str = "the body") -> Any:
	"""Parse JSON, refusing a value nested deeper than `MAX_DEPTH`.

	Args:
		data: The JSON text.
		what: What it is, for the error.

	Raises:
		TooDeep: It nests too deeply (never a ``RecursionError``).
		ValueError: It is not JSON.
	"""
	try:
		value = json.loads(data)
	except RecursionError:
		raise TooDeep(what) from None
	if isinstance(value, dict | list) and not _nested_at_most(value, MAX_DEPTH):
		raise TooDeep(what)
	return value


def payload(body: bytes, content_type: str) -> Any:
	"""The run's input: parsed JSON, a form's fields, or the text.

	A form (``application/x-www-form-urlencoded``: Slack's slash commands) becomes a dict of
	its fields (a field given twice: a list; Slack's interactive ``payload`` field, which holds
	JSON, is checked like a JSON body); a JSON body its value; anything else its text.

	Raises:
		TooDeep: The JSON (or a form's ``payload`` field) nests deeper than `MAX_DEPTH`.
	"""
	kind = content_type.split(";", 1)[0].strip().lower()
	text = body.decode("utf-8", errors="replace")
	if kind == "application/x-www-form-urlencoded":
		fields = parse_qs(text, keep_blank_values=True)
		form = {k: v[0] if len(v) == 1 else v for k, v in fields.items()}
		inner = form.get("payload")
		if isinstance(inner, str) and inner.lstrip()[:1] in ("{", "["):
			try:
				parse_json(inner, what="the form's payload field")
			except TooDeep:
				raise
			except ValueError:
				pass  # not JSON: kept as the text it is
		return form
	if kind == "application/json" or kind.endswith("+json") or text.lstrip()[:1] in ("{", "["):
		try:
			return parse_json(text)
		except TooDeep:
			raise
		except ValueError:
			return text
	return text
