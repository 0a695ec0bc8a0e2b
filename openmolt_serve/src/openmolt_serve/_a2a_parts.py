"""What an A2A task's parts may show: a text masked as text, a file's bytes screened as bytes.

A part is text, data (JSON), a file's address or a file's bytes, which A2A's JSON writes as base64
(``raw`` in 1.0, ``file.bytes`` in 0.3). Masking that base64 as text (a secret's base64 spelling
replaced by ``[redacted]``) leaves no base64 at all, and the official client cannot read the task.
So a file's bytes are screened as bytes (`openmolt_core.files.screened_base64`, as the run store
screens a saved state's files): kept as they are, kept masked (a text file, encoded again), or the
part replaced by a text part that says a file was withheld here and why. Every other string is masked as text.

Where a part goes out or is kept, it passes here: each response of an agent's A2A app (a JSON-RPC
answer: a task, a message, a list of tasks; each event of a stream: a status or an artifact
update), in both protocol versions (`ScreenedResponses`), and each task the task store keeps, its
history, status message and artifacts (`screened_task`, `openmolt_serve._a2a_store`). The server's
own masking of every response (`openmolt_ui._shown.MaskedResponses`) then passes these responses
as they are: masking them again as text would break what was screened.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from google.protobuf.json_format import (  # type: ignore[import-untyped]  # a2a-sdk's
	MessageToDict,
	ParseDict,
	ParseError,
)

from openmolt_core._support.masking import free_key, known_secrets, mask, mask_deep
from openmolt_core.files import WITHHELD, screened_base64
from openmolt_ui._shown import SCREENED, SCREENED_TOKEN

if TYPE_CHECKING:
	from a2a.types import Task
	from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ScreenedResponses", "screened", "screened_task", "withheld_note"]


def withheld_note(name: str, media_type: str, size: int, secrets: frozenset[str]) -> str:
	"""The text that stands where a file's bytes were withheld.

	Args:
		name: The file's name (masked here), or empty.
		media_type: Its media type.
		size: Its size in bytes.
		secrets: The secrets to mask the name and type with.
	"""
	what = f"{name!r}, " if name else ""
	return mask(
		f"[a file ({what}{media_type or 'no media type'}, {size} bytes) {WITHHELD}]", secrets
	)


def _file(
	encoded: Any, media_type: Any, name: Any, secrets: frozenset[str]
) -> tuple[str | None, str]:
	"""A part's base64 as it may go out (None: withheld), and the note that would replace it."""
	media = media_type if isinstance(media_type, str) else ""
	label = name if isinstance(name, str) else ""
	kept = screened_base64(encoded, media, secrets)
	size = len(encoded.rstrip("=")) * 3 // 4 if isinstance(encoded, str) else 0
	return kept, withheld_note(label, media, size, secrets)


def _part(part: Any, secrets: frozenset[str]) -> Any:
	"""One part: a file's bytes screened as bytes, anything else masked as text."""
	if not isinstance(part, dict):
		return mask_deep(part, secrets)
	if isinstance(part.get("raw"), str):  # A2A 1.0
		raw, note = _file(part["raw"], part.get("mediaType"), part.get("filename"), secrets)
		if raw is None:
			return {"text": note}
		rest = {k: v for k, v in part.items() if k != "raw"}
		return {**mask_deep(rest, secrets), "raw": raw}
	file = part.get("file")
	if isinstance(file, dict) and isinstance(file.get("bytes"), str):  # A2A 0.3
		raw, note = _file(file["bytes"], file.get("mimeType"), file.get("name"), secrets)
		if raw is None:
			return {"kind": "text", "text": note}
		rest = {k: v for k, v in file.items() if k != "bytes"}
		others = {k: v for k, v in part.items() if k != "file"}
		return {**mask_deep(others, secrets), "file": {**mask_deep(rest, secrets), "bytes": raw}}
	return mask_deep(part, secrets)


_OPAQUE = frozenset({"data", "metadata"})
"""Keys whose values are the application's JSON (a data part's, metadata): masked as text whole,
never read as parts."""


def screened(value: Any, secrets: frozenset[str]) -> Any:
	"""An A2A JSON value (an answer, an event, a task) with its parts screened (see the module).

	Every ``parts`` list is read as parts; a file's bytes are screened as bytes, every other
	string masked as text (`openmolt_core._support.masking.mask`).

	Args:
		value: The JSON value (a JSON-RPC answer, or a task as `MessageToDict` gives it).
		secrets: The secrets to mask.
	"""
	if not secrets:
		return value
	if isinstance(value, dict):
		out: dict[Any, Any] = {}
		for key, item in value.items():
			name = free_key(mask(key, secrets), out) if isinstance(key, str) else key
			if key == "parts" and isinstance(item, list):
				out[name] = [_part(p, secrets) for p in item]
			elif key in _OPAQUE:
				out[name] = mask_deep(item, secrets)
			else:
				out[name] = screened(item, secrets)
		return out
	if isinstance(value, list):
		return [screened(v, secrets) for v in value]
	return mask_deep(value, secrets)


def screened_task(task: Task, secrets: frozenset[str] | None = None) -> Task:
	"""A task as the task store may keep it: its parts screened (see `screened`).

	Args:
		task: The task (not changed).
		secrets: The secrets (default: every secret the process knows now).

	Returns:
		``task`` itself when nothing needed masking, else a screened copy.
	"""
	known = known_secrets() if secrets is None else secrets
	if not known:
		return task
	given = MessageToDict(task)
	kept = screened(given, known)
	if kept == given:
		return task
	copy = type(task)()
	try:
		ParseDict(kept, copy)
	except ParseError:  # pragma: no cover - screening keeps every value of its type
		return type(task)(id=task.id, context_id=task.context_id)
	return copy


_EVENT_END = re.compile(r"\r\n\r\n|\n\n|\r\r")


class ScreenedResponses:
	"""ASGI middleware: an A2A app's responses with their parts screened (see the module).

	A JSON answer is read whole, screened and sent with its length set again; a stream of
	server-sent events is screened one event at a time (each event's ``data`` is a JSON-RPC
	answer), and sent as each ends. Any other body is masked as text. Each response says it was
	screened (`SCREENED`), so the server's own masking passes it as it is.

	Args:
		app: The A2A app.
	"""

	def __init__(self, app: ASGIApp) -> None:
		self.app = app

	async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
		"""Pass the request on; screen what comes back."""
		if scope["type"] != "http" or scope.get("method") == "HEAD":
			await self.app(scope, receive, send)
			return
		start: list[Message] = []
		body: list[bytes] = []
		mode = ""  # "json", "stream" or "text", once the response starts
		decoder = codecs.getincrementaldecoder("utf-8")("replace")
		pending = ""  # a stream's text after its last complete event

		async def screening(message: Message) -> None:
			nonlocal mode, pending
			if message["type"] == "http.response.start":
				headers = [(k, v) for k, v in message.get("headers", []) if k != SCREENED]
				kind = dict(headers).get(b"content-type", b"")
				mode = (
					"stream"
					if kind.startswith(b"text/event-stream")
					else "json"
					if kind.startswith(b"application/json")
					else "text"
				)
				headers.append((SCREENED, SCREENED_TOKEN))
				message = {**message, "headers": headers}
				if mode == "stream":
					await send(message)
				else:
					start.append(message)
				return
			if message["type"] != "http.response.body":
				await send(message)
				return
			chunk, more = message.get("body", b""), message.get("more_body", False)
			if mode == "stream":
				pending += decoder.decode(chunk, final=not more)
				events = _EVENT_END.split(pending)
				pending = events.pop()
				text = ""
				for event in events:
					text += await _screened_event(event) + "\r\n\r\n"
				if not more and pending:
					text += await _screened_event(pending)
					pending = ""
				await send({**message, "body": text.encode("utf-8")})
				return
			body.append(chunk)
			if more:
				return
			data = await anyio.to_thread.run_sync(_screened_body, b"".join(body), mode)
			head = start[0]
			headers = [(k, v) for k, v in head.get("headers", []) if k != b"content-length"]
			headers.append((b"content-length", str(len(data)).encode("ascii")))
			await send({**head, "headers": headers})
			await send({"type": "http.response.body", "body": data, "more_body": False})

		await self.app(scope, receive, screening)


def _screened_body(data: bytes, mode: str) -> bytes:
	"""A whole body screened: JSON part by part, anything else masked as text."""
	secrets = known_secrets()
	if not secrets or not data:
		return data
	try:
		text = data.decode("utf-8")
	except UnicodeDecodeError:  # not text: nothing a text mask could break, or read
		return data
	if mode == "json":
		try:
			value = json.loads(text)
		except ValueError:
			return mask(text, secrets).encode("utf-8")
		return json.dumps(screened(value, secrets), ensure_ascii=False).encode("utf-8")
	return mask(text, secrets).encode("utf-8")


async def _screened_event(event: str) -> str:
	"""One server-sent event screened: its ``data`` as JSON, its other lines masked as text."""
	return await anyio.to_thread.run_sync(_screen_event, event)


def _screen_event(event: str) -> str:
	secrets = known_secrets()
	if not secrets:
		return event
	lines = re.split(r"\r\n|\n|\r", event)
	data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
	others = [mask(line, secrets) for line in lines if not line.startswith("data:")]
	if not data:
		return "\r\n".join(others)
	try:
		value = json.loads("\n".join(data))
	except ValueError:
		return "\r\n".join([*others, *(f"data: {mask(d, secrets)}" for d in data)])
	shown = json.dumps(screened(value, secrets), ensure_ascii=False)
	return "\r\n".join([*others, f"data: {shown}"])
