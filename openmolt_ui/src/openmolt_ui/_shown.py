"""What a served surface sends, masked again with the secrets known now: the one seam.

The viewer (`openmolt_ui.app`) and the trigger server (`openmolt_serve.server`) serve text built
from runs, refusals, exceptions and what a caller or a service sent: a run recorded before a
secret was known, a service's refusal that echoes a client secret, an error naming a value. All of
it is masked with `openmolt_core._support.masking.known_secrets` (every live instance's secrets,
the keys given in code, the environment's) before it leaves: JSON and pages by `shown`, and every
response of the trigger server by `MaskedResponses`, streamed ones (server-sent events) through a
`StreamMask`, so a secret split across two chunks is masked whole. A response that says it was
masked part by part already (`SCREENED`: an A2A answer, whose files' bytes are screened as bytes by
`openmolt_serve._a2a_parts`) is sent as it is: masked again as text, a file's base64 would break.
"""

from __future__ import annotations

import codecs
import secrets as _secrets
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openmolt_core._support.masking import StreamMask, known_secrets, mask_deep, mask_known

__all__ = ["SCREENED", "SCREENED_TOKEN", "MaskedResponses", "shown", "shown_text"]

SCREENED = b"x-openmolt-screened"
"""The header of a response masked part by part already (taken off before it is sent); its value
must be `SCREENED_TOKEN`."""

SCREENED_TOKEN = _secrets.token_hex(16).encode("ascii")
"""This process's value of `SCREENED`: a route that copies another server's headers (or its
caller's) cannot say its response was screened, which would send it unmasked."""


def shown(data: Any) -> Any:
	"""A JSON-like value masked with the secrets known now (`mask_deep`).

	Args:
		data: What is about to be served.
	"""
	return mask_deep(data, known_secrets())


def shown_text(text: str) -> str:
	"""A text masked with the secrets known now (`mask_known`).

	Args:
		text: What is about to be served.
	"""
	return mask_known(text)


class MaskedResponses:
	"""ASGI middleware: every text response masked with the secrets known now.

	A server-sent event stream is masked as it goes (`StreamMask`: what may start a secret
	waits for the next chunk, an event's end never does); a response that says it was screened
	already (`SCREENED`) is sent as it is; any other body is read whole and, when it is UTF-8
	text, masked and sent with its length set again, whatever type it names (JSON, a ``+json``
	type, HTML, NDJSON, a type in capitals, or none: what is unknown here is taken for text that
	may show a secret). A body that is no UTF-8 text (a file's bytes) is sent as it is.

	Args:
		app: The application whose responses are masked.
	"""

	def __init__(self, app: ASGIApp) -> None:
		self.app = app

	async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
		"""Pass the request on; mask what comes back."""
		if scope["type"] != "http" or scope.get("method") == "HEAD":  # HEAD: a length, no body
			await self.app(scope, receive, send)
			return
		start: list[Message] = []
		body: list[bytes] = []
		mode = ""  # "whole", "stream" or "as is", once the response starts
		decoder = codecs.getincrementaldecoder("utf-8")("replace")
		stream = StreamMask(known_secrets)

		async def masked(message: Message) -> None:
			nonlocal mode
			if message["type"] == "http.response.start":
				headers = message.get("headers", [])
				kind = dict(headers).get(b"content-type", b"").strip().lower()
				screened = any(k == SCREENED and v == SCREENED_TOKEN for k, v in headers)
				headers = [(k, v) for k, v in headers if k != SCREENED]  # never sent on
				message = {**message, "headers": headers}
				if screened:
					mode = "as is"
					await send(message)
				elif kind.startswith(b"text/event-stream"):
					mode = "stream"
					await send(message)
				else:  # any other type, or none: text unless it does not decode
					mode = "whole"
					start.append(message)
				return
			if message["type"] != "http.response.body" or mode == "as is":
				await send(message)
				return
			chunk, more = message.get("body", b""), message.get("more_body", False)
			if mode == "stream":
				text = stream.feed(decoder.decode(chunk, final=not more))
				if not more:
					text += stream.flush()
				await send({**message, "body": text.encode("utf-8")})
				return
			body.append(chunk)
			if more:
				return
			head, data = start[0], b"".join(body)
			try:
				data = shown_text(data.decode("utf-8")).encode("utf-8")
			except UnicodeDecodeError:  # not the text it says it is: sent as it is
				pass
			headers = [(k, v) for k, v in head.get("headers", []) if k != b"content-length"]
			headers.append((b"content-length", str(len(data)).encode("ascii")))
			await send({**head, "headers": headers})
			await send({"type": "http.response.body", "body": data, "more_body": False})

		await self.app(scope, receive, masked)
