r"""Read a request's body up to a cap and a time, and turn a payload into a run's input.

Every body parser of the trigger routes (webhook payloads, Slack's events and forms, Telegram's
updates, the A2A and AG-UI bodies, and the Bot and Web APIs' answers) goes through `parse_json`,
which refuses what Python's ``json`` reads but a run cannot hold (the routes answer ``422``):

- a value nested deeper than `MAX_DEPTH` levels (the cap on model replies): `TooDeep`, never a
  ``RecursionError``;
- a lone surrogate (``"\ud83d"``, half of an emoji a sender cut, or its raw bytes), which is no
  text: a run store, a session or the model's request would fail to encode it; and ``NaN``,
  ``Infinity`` or a number too large for a float (``1e999``), which are no JSON numbers:
  `UnsafeJson`, naming where it is;
- a key an object gives twice (``{"approved": false, "approved": true}``): Python's ``json``
  and pydantic keep the last value, another reader (a proxy's log, a client's check) the
  first, so what counts would depend on who reads: `UnsafeJson`, naming the key.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from openmolt_core._parse import DEFAULT_MAX_DEPTH
from openmolt_core._support.jsonsafe import problem

__all__ = [
	"BODY_TIMEOUT",
	"MAX_DEPTH",
	"BadJson",
	"SlowBody",
	"TooDeep",
	"TooLarge",
	"UnsafeJson",
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


class BadJson(ValueError):
	"""JSON that parses but that a run cannot take (the routes answer ``422`` with `reason`)."""

	reason = "invalid"
	"""The ``reason`` of the refusal."""


class TooDeep(BadJson):
	"""A JSON body nests deeper than `MAX_DEPTH` levels.

	Args:
		what: What was parsed (``the body``, ``the update``), for the message.
	"""

	reason = "too_deep"

	def __init__(self, what: str = "the body") -> None:
		super().__init__(
			f"{what} is nested deeper than {MAX_DEPTH} levels of objects and arrays; send a "
			"flatter payload"
		)


class UnsafeJson(BadJson):
	"""A JSON body holds a lone surrogate, ``NaN``, a too large number, or a key given twice.

	Args:
		message: What is wrong, where, and what to send instead.
	"""

	reason = "unsafe_json"


class _NotNumber(ValueError):
	"""Raised by the decoder at ``NaN``, ``Infinity`` or ``1e999`` (its text in the message)."""


def _constant(name: str) -> Any:
	raise _NotNumber(f"{name} is not a JSON number")


def _float(text: str) -> float:
	value = float(text)
	if not math.isfinite(value):
		raise _NotNumber(f"{text[:40]} is too large for a JSON number")
	return value


class _Twice(ValueError):
	"""Raised by the decoder at a key an object gives twice (the key in the message)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
	out: dict[str, Any] = {}
	for key, value in pairs:
		if key in out:
			shown = json.dumps(_SURROGATES.sub("?", key[:40]), ensure_ascii=False)
			raise _Twice(f"the key {shown} is given twice in one object")
		out[key] = value
	return out


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float, object_pairs_hook=_pairs)

_SURROGATES = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
"""A surrogate escape, or one decoded from the bytes: only a text holding one needs a walk."""

_LONGEST_PATH = 120
"""The most characters of where a problem is shown (a payload's keys are the sender's)."""


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
		UnsafeJson: It holds a lone surrogate, ``NaN``, ``Infinity`` or a number too large for a
			float.
		ValueError: It is not JSON.
	"""
	# As json.loads reads bytes: a surrogate's raw bytes decode to it (surrogatepass).
	text = (
		data if isinstance(data, str) else data.decode(json.detect_encoding(data), "surrogatepass")
	)
	try:
		value = _DECODER.decode(text)
	except RecursionError:
		raise TooDeep(what) from None
	except _NotNumber as exc:
		raise UnsafeJson(f"{what}: {exc}; send a number, null or a string") from None
	except _Twice as exc:  # readers differ on which value counts (an approval's answer)
		raise UnsafeJson(f"{what}: {exc}; give each key once") from None
	if isinstance(value, dict | list) and not _nested_at_most(value, MAX_DEPTH):
		raise TooDeep(what)
	if _SURROGATES.search(text):
		found = problem(value)
		if found is not None:
			where, _, why = found.rpartition(": ")
			if len(where) > _LONGEST_PATH:
				where = where[: _LONGEST_PATH - 3] + "..."
			at = f", at {where}," if where and where != "(root)" else ""
			raise UnsafeJson(f"{what}{at} {why}")
	return value


def payload(body: bytes, content_type: str) -> Any:
	"""The run's input: parsed JSON, a form's fields, or the text.

	A form (``application/x-www-form-urlencoded``: Slack's slash commands) becomes a dict of
	its fields (a field given twice: a list; Slack's interactive ``payload`` field, which holds
	JSON, is checked like a JSON body); a JSON body its value; anything else its text.

	Raises:
		BadJson: The JSON (or a form's ``payload`` field) nests deeper than `MAX_DEPTH`, or
			holds what a run cannot (`UnsafeJson`).
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
			except BadJson:
				raise
			except ValueError:
				pass  # not JSON: kept as the text it is
		return form
	if kind == "application/json" or kind.endswith("+json") or text.lstrip()[:1] in ("{", "["):
		try:
			return parse_json(text)
		except BadJson:
			raise
		except ValueError:
			return text
	return text
