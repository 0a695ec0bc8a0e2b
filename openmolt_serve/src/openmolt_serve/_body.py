"""Read a request's body up to a cap, and turn a payload into a run's input."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request

__all__ = ["TooLarge", "payload", "read_body"]


class TooLarge(Exception):
	"""The body is larger than the cap."""


async def read_body(request: Request, cap: int) -> bytes:
	"""The raw body, refusing one larger than ``cap`` bytes before reading it all.

	Raises:
		TooLarge: ``Content-Length`` says more than the cap, or the stream goes past it.
	"""
	declared = request.headers.get("content-length")
	if declared is not None and declared.isdigit() and int(declared) > cap:
		raise TooLarge
	chunks: list[bytes] = []
	size = 0
	async for chunk in request.stream():
		size += len(chunk)
		if size > cap:
			raise TooLarge
		chunks.append(chunk)
	return b"".join(chunks)


def payload(body: bytes, content_type: str) -> Any:
	"""The run's input: parsed JSON, a form's fields, or the text.

	A form (``application/x-www-form-urlencoded``: Slack's slash commands) becomes a dict of
	its fields (a field given twice: a list); a JSON body its value; anything else its text.
	"""
	kind = content_type.split(";", 1)[0].strip().lower()
	text = body.decode("utf-8", errors="replace")
	if kind == "application/json" or kind.endswith("+json"):
		try:
			return json.loads(text)
		except ValueError:
			return text
	if kind == "application/x-www-form-urlencoded":
		fields = parse_qs(text, keep_blank_values=True)
		return {k: v[0] if len(v) == 1 else v for k, v in fields.items()}
	try:
		return json.loads(text) if text.lstrip()[:1] in ("{", "[") else text
	except ValueError:
		return text
