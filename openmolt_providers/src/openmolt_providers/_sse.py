r"""Server-sent events, read from a byte stream as the WHATWG HTML standard describes them.

All three providers stream this way (``text/event-stream``). The framing is small, so it is
written here rather than adding a dependency to every install of the providers (``httpx-sse``
does the same job, but reached this workspace only through the MCP distribution): lines end in
``\r\n``, ``\n`` or ``\r``; ``event:`` names the event, ``data:`` lines (joined by ``\n``) carry
it, a line starting with ``:`` is a comment, and a blank line dispatches the event. Bytes are
decoded incrementally, so a chunk cut inside a multi-byte character waits for its end; an event
the stream ends in the middle of is dropped, as the standard says.

A text streamed in JSON events may also be cut between the two halves of a surrogate pair
(``"\ud83d"`` ending one delta, ``"\ude00"`` starting the next): each half decodes alone as a
lone surrogate, which Python does not join. `Deltas` holds a trailing high half back until its
pair arrives, and `paired` joins the pairs of a text put back together from pieces, so the
streamed text equals the text of the same reply asked for whole.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["Deltas", "SSEvent", "paired", "sse_events"]


@dataclass(frozen=True, slots=True)
class SSEvent:
	"""One server-sent event.

	Args:
		event: The event's name (``message`` when the server gave none).
		data: Its data lines, joined by newlines.
	"""

	event: str
	data: str


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[SSEvent]:
	"""The events of a byte stream, each as soon as its blank line arrived.

	Args:
		chunks: The response body, in chunks of any size.
	"""
	decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
	pending = ""
	name = ""
	data: list[str] = []
	first = True
	async for chunk in chunks:
		text = pending + decoder.decode(chunk)
		if first and text:
			text = text.removeprefix("\ufeff")
			first = False
		lines = _LINE.split(text)
		pending = lines.pop()  # incomplete (or empty)
		if pending == "" and text.endswith("\r"):
			# A lone CR may be the first half of a CRLF: read that line with the next chunk.
			pending = lines.pop() + "\r"
		for line in lines:
			if not line:
				if data:
					yield SSEvent(name or "message", "\n".join(data))
				name, data = "", []
				continue
			if line.startswith(":"):
				continue
			field, _, value = line.partition(":")
			value = value.removeprefix(" ")
			if field == "event":
				name = value
			elif field == "data":
				data.append(value)
	if pending.endswith("\r") and pending.rstrip("\r") == "" and data:
		yield SSEvent(name or "message", "\n".join(data))  # a last blank line ended by CR


_LINE = re.compile(r"\r\n|\r|\n")

_SURROGATE = re.compile("[\ud800-\udfff]")


def paired(text: str) -> str:
	"""``text`` with every valid surrogate pair joined into its character (lone halves stay).

	Args:
		text: Text put back together from streamed pieces.
	"""
	if _SURROGATE.search(text) is None:
		return text
	return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


class Deltas:
	"""The pieces of one streamed text, each reported with no surrogate pair split across two.

	Call it with each piece as it arrives; it returns the text to report now. A piece ending
	in the high half of a pair keeps that half back, for the next piece; `rest` returns what is
	still held when the stream ends (a half whose pair never came).
	"""

	__slots__ = ("_held",)

	def __init__(self) -> None:
		self._held = ""

	def __call__(self, piece: str) -> str:
		"""The text of ``piece`` to report now."""
		if self._held:
			piece, self._held = paired(self._held + piece), ""
		if piece and "\ud800" <= piece[-1] <= "\udbff":
			piece, self._held = piece[:-1], piece[-1]
		return piece

	def rest(self) -> str:
		"""What is still held back (empty unless the stream ended inside a pair)."""
		held, self._held = self._held, ""
		return held
