"""A chat's reply while the model writes it: one message, edited as it grows (``stream: true``).

When a channel streams, the first text of a run's ``humanMessage`` is sent as a message; later
text edits that message (Telegram ``editMessageText``, Slack ``chat.update``), at most once per
``interval`` seconds per run, since both services rate-limit edits. When the run ends, what it
ends with (its reply, or a question) replaces the message's text, so the chat ends as it would
without streaming, in one message instead of two; a reply too long for one message puts its
first part there and the rest follows as new messages, so the chat reads the reply once, from
its start (never the text of a call that failed midway, nor the same start twice). A step whose
reply was refused, or a model that fell back, starts the text over; a call that fails midway
says so at once (`CUT_OFF` ends the text shown), since the next text may be long in coming. A failed send or edit is logged and the run's text is not
shown live any more; the end still replies.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openmolt_core._support.loginholds import MAX_HELD, URL_SIGNS
from openmolt_core._support.masking import mask_url_logins

if TYPE_CHECKING:
	from openmolt_serve.chats import Incoming

__all__ = ["CUT_OFF", "MAX_HELD", "Edit", "LiveReplies", "Post", "fits", "settled"]

log: logging.Logger = logging.getLogger("openmolt")

CUT_OFF = " [cut off]"
"""What ends a live message whose model call failed midway (its text is not the reply)."""


def settled(text: str) -> str:
	"""Text shown while it grows: a URL's login masked, and a last word that may be a URL held.

	What follows the last space is held back while it may be a URL whose login has not ended
	(a ``:``, a slash, ``@``, ``%`` or ``&`` in it): its password, cut, is no URL's yet, and no
	mask would find it. The rest is masked as text for a person (`mask_url_logins`).

	Args:
		text: The text so far.
	"""
	cut = text.rfind(" ") + 1
	tail = text[cut:]
	if tail and len(tail) <= MAX_HELD and not URL_SIGNS.isdisjoint(tail):
		text = text[:cut]
	return mask_url_logins(text)


Post = Callable[["Incoming", str], Awaitable[str]]
"""Sends a text to a message's chat; returns the sent message's id (Telegram) or ts (Slack)."""
Edit = Callable[["Incoming", str, str], Awaitable[None]]
"""Replaces the text of a sent message (the chat's message, the sent id, the new text)."""


@dataclass(slots=True)
class _Live:
	message: Incoming
	attempt: tuple[int, str, int] = (0, "", 0)  # the step, model and attempt whose text is shown
	text: str = ""
	shown: str = ""
	sent: str | None = None  # the live message's id
	last: float = float("-inf")
	broken: bool = False
	pieces: list[str] = field(default_factory=list)


class LiveReplies:
	"""The live messages of one channel's runs.

	Args:
		post: Sends a new message.
		edit: Edits a sent message.
		limit: The most characters one message holds (longer text shows its start).
		interval: The least seconds between two edits of one message.
		clock: Tells the time (tests pass a fake one).
		size: How many characters a text takes in a message (Slack's escapes take more than
			one: `openmolt_serve.slack.shown_as_text`); default: its length.
	"""

	def __init__(
		self,
		post: Post,
		edit: Edit,
		*,
		limit: int,
		interval: float = 1.0,
		clock: Callable[[], float] = time.monotonic,
		size: Callable[[str], int] = len,
	) -> None:
		self.post = post
		self.edit = edit
		self.limit = limit
		self.size = size
		self.interval = interval
		self.clock = clock
		self._runs: dict[str, _Live] = {}

	def watch(self, run_id: str, message: Incoming) -> None:
		"""Show the text of a run about to start (or resume) in the chat of ``message``."""
		self._runs[run_id] = _Live(message)

	def forget(self, run_id: str) -> None:
		"""Stop watching a run (it could not start: it will not finish)."""
		self._runs.pop(run_id, None)

	async def on_delta(self, event: Any) -> None:
		"""The ``text:delta`` handler: grow the run's text; send or edit when it is time."""
		live = self._runs.get(event.run_id)
		if live is None or live.broken or event.field != "humanMessage" or event.parent_run_id:
			return
		attempt = (event.step, event.model, event.attempt)  # a retry writes the reply anew
		if getattr(event, "cut", False):  # the call writing it failed: the text is no reply
			if attempt == live.attempt and live.text:
				room = self.limit - self.size(CUT_OFF)
				head = live.text[: fits(live.text, room, self.size)]
				live.pieces, live.text = [], ""
				await self._show(live, settled(head) + CUT_OFF)  # at once: it may stay long
			return
		if attempt != live.attempt:
			live.attempt, live.pieces = attempt, []
		live.pieces.append(event.text)
		live.text = "".join(live.pieces)
		if self.clock() - live.last >= self.interval:
			await self._show(live, settled(live.text))

	async def finish(self, run_id: str, text: str) -> str | None:
		"""The run ended with ``text``: put it in the live message, if the run has one.

		The live message may show text that is not the reply's (a call that failed midway, a
		reply refused once whole) or only part of it: it becomes the reply's start, as much as
		one message holds.

		Returns:
			None when the run has no live message (the caller sends ``text`` as usual); else
			what is left to send after it: empty when it holds the whole text.
		"""
		live = self._runs.pop(run_id, None)
		if live is None or live.sent is None or live.broken:
			return None
		at = fits(text, self.limit, self.size)
		await self._show(live, text[:at])
		return None if live.broken else text[at:]

	async def _show(self, live: _Live, text: str) -> None:
		text = text[: self.limit]
		if not text.strip() or text == live.shown:
			return
		live.last = self.clock()
		try:
			if live.sent is None:
				live.sent = await self.post(live.message, text)
			else:
				await self.edit(live.message, live.sent, text)
			live.shown = text
		except Exception as exc:
			live.broken = True
			log.warning(
				"%s: the live reply in %s stopped: %s",
				live.message.channel,
				live.message.chat,
				exc,
			)


def fits(text: str, most: int, size: Callable[[str], int] = len) -> int:
	"""How many characters of ``text`` one message of ``most`` holds, as ``size`` counts.

	Args:
		text: The text.
		most: The most one message holds.
		size: How much room a text takes (a character takes one place at least): its length,
			its UTF-16 code units (Telegram's count), its length once escaped (Slack's).
	"""
	if size(text) <= most:
		return len(text)
	low, high = 0, min(len(text), most)
	while low < high:  # the longest start whose size fits
		mid = (low + high + 1) // 2
		if size(text[:mid]) <= most:
			low = mid
		else:
			high = mid - 1
	return low
