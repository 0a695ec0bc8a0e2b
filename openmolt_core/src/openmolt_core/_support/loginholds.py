r"""Streamed text held back while it may be a URL whose login has not ended (``text:delta``).

A reply streams in pieces, and a piece ends where the provider's chunk does: ``https://app:Pa``
then ``ss@db.example``. Each piece masked alone shows no URL login (the first has no ``@`` yet,
the second no scheme), so a listener would get the password in halves. `LoginHolds` keeps, per
streamed field, the last word of what came while it may still be or become one: a word holding
``:``, ``/``, ``\``, ``@``, ``%`` or ``&`` (a URL started, in some spelling) whole, else its
trailing letters, digits, ``+``, ``.`` and ``-`` (a scheme to be: ``ht`` of ``https:``). A
space ends a word (a tab or a line break does not: a parser reads ``https://u:PASSWORD`` and
``@host`` on two lines as one URL). The rest goes on at once, so ordinary prose is held by the
word being written, and a word that ended (``Hello,``) not at all. A field's end (a delta with
no text, which `openmolt_core.capabilities.streaming` sends when the command is whole) sends
what is held; a cut delta drops it, as the stream's own masks drop theirs.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["MAX_HELD", "MAX_HELD_FIELDS", "URL_SIGNS", "LoginHolds", "held_from"]

MAX_HELD = 4096
"""The longest word held (characters): a longer one is sent, masked as a whole text would be
(here, and in a chat's live message: `openmolt_serve._live.settled`)."""

MAX_HELD_FIELDS = 256
"""The most fields held at once: past it the oldest one's held word is dropped, never sent (a run
cancelled midway never ends its field)."""

URL_SIGNS = frozenset(":/\\@%&")
"""A word holding one of these may be a URL whose login has not ended (``postgresql://app:Pw``)."""

_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
"""What a URL's scheme is made of: a word ending in them may end in a scheme's start."""

_BREAKS = "\t\n\r"
"""Whitespace a URL parser takes out (WHATWG): no end of a word here."""


def held_from(text: str) -> int:
	"""Where the part of ``text`` that may still grow into a URL's login starts (its length: none).

	Args:
		text: What is held and the new piece, joined.
	"""
	start = len(text)
	while start and (not text[start - 1].isspace() or text[start - 1] in _BREAKS):
		start -= 1
	word = text[start:]
	if not word or not URL_SIGNS.isdisjoint(word):
		return start if len(word) <= MAX_HELD else len(text)
	scheme = len(text)
	while scheme > start and text[scheme - 1] in _SCHEME:
		scheme -= 1
	return scheme


class LoginHolds:
	"""The words held back of the ``text:delta`` events an emitter hands its listeners."""

	__slots__ = ("_held",)

	def __init__(self) -> None:
		self._held: dict[tuple[Any, ...], str] = {}

	def release(self, event: Any) -> Any | None:
		"""The delta to hand on now (a copy holding what may go), or None when all of it waits.

		The event itself is never changed: it goes on up to the runs that called this one,
		whose emitters hold its text their own way.

		Args:
			event: A ``text:delta`` event (`openmolt_core.capabilities.streaming.TextDeltaEvent`).
		"""
		key = tuple(
			getattr(event, name, None)
			for name in ("run_id", "step", "attempt", "index", "field", "raw")
		)
		before = self._held.pop(key, "")
		if getattr(event, "cut", False):
			return event  # the attempt failed: what was held is not the reply's
		text = before + event.text
		cut = held_from(text) if event.text else len(text)  # no text: the field is whole
		if cut < len(text):
			self._held[key] = text[cut:]
			while len(self._held) > MAX_HELD_FIELDS:
				del self._held[next(iter(self._held))]
		if not text[:cut]:
			return None
		return event if not before and cut == len(text) else _with_text(event, text[:cut])


def _with_text(event: Any, text: str) -> Any:
	"""A copy of a delta with other text."""
	copied = copy.copy(event)
	copied.text = text
	return copied
