"""What an error says of a word typed on the command line: the word, unless it reads as a value.

A word typed where a name goes (a provider, an integration, a config key, a variable, ``KEY`` of
``KEY=VALUE``, an action) may be the secret itself (``openmolt keys set sk-...``, the value
where the provider goes). A terminal's scrollback, a CI log and a shell's history of errors keep
what is printed, so an error says a word back only when it reads as a name (`reads_as_name`), and
the command stores nothing under a name that does not.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

__all__ = ["NOT_SAID", "Unsaid", "reads_as_name", "said", "unsaid"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*")
"""Words joined by ``.``, ``_`` or ``-`` (``apiKey``, ``secret_access_key``, ``google-drive``,
``OPENMOLT_SLACK_TOKEN``)."""
_WORD = re.compile(r"[A-Za-z]+(?:[0-9]{1,3}[A-Za-z]*)?")
"""One word of a name: letters, and at most one number of up to three digits after some
(``s3``, ``oauth2``, ``route53``, ``office365``, ``s3Bucket``)."""
_VERSION = re.compile(r"[0-9]{1,3}[a-z]?|20[0-9]{6}")
"""A part of a model's or a version's name: ``5`` of ``gpt-5-mini``, ``4o``, ``8b``, a snapshot's
date (``20250929``)."""
_NUMBER = re.compile(r"-?[0-9]{1,6}(?:\.[0-9]{1,6})?[a-z]{0,2}")
"""A number as an option takes it: ``30``, ``1.5``, ``30d``, ``-3``."""
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_SHORT_HEX = re.compile(r"[0-9a-f]{1,15}")
"""A run id's prefix as the commands take it (``7d4f2cb``): shorter than any key of hex digits
(`_KEY_LIKE`'s 16); a whole run id (32) is read as a value."""
_PATH_NUMBER = re.compile(r"[0-9]{1,12}")
"""A folder's or a file's number in a path (``runs/2026/12``, pytest's ``pytest-1018``): said."""
_SUFFIX = re.compile(r"\.[A-Za-z]{2,5}\Z")
"""A file's suffix (``.json``, ``.py``, ``.yaml``): the word is a path."""
_SHORTEST = 6
"""A piece shorter than this is said back (no key is that short; masking it would mangle words)."""
_KEY_LIKE = re.compile(r"(?=.{16})(?:[A-Z0-9]+|.*[0-9].*)")
"""One word of 16 characters or more in capitals and digits, or with a digit in it: an access
key id (``AKIAIOSFODNN7EXAMPLE``), not a name's word (``googleCalendar``, ``OPENMOLT``)."""
_LONGEST = 64
_MOST_DIGITS = 4
_MOST_NUMBERS = 2

NOT_SAID = "the word given (not repeated: it reads as a value, not a name)"
"""What an error says in place of a word that reads as a value."""


def reads_as_name(word: str) -> bool:
	"""Whether a typed word reads as a name, not as a key's value.

	Words joined by ``.``, ``_`` or ``-``, at most 64 characters; each word starts with letters
	and holds at most one number of up to three digits, and the whole at most two numbers and
	four digits: a token has more, or longer ones, or a word that starts with one
	(``sk-proj-...``, ``xoxb-1234-...``, a JWT), or a long word in capitals or with a digit
	(``AKIAIOSFODNN7EXAMPLE``); a name has few (``s3``, ``oauth2``,
	``route53``, ``OPENMOLT_OFFICE365_TOKEN``). What is not known to be a name is a value.

	Args:
		word: The word as typed.
	"""
	return (
		len(word) <= _LONGEST
		and _NAME.fullmatch(word) is not None
		and all(_WORD.fullmatch(part) for part in re.split(r"[._-]", word))
		and sum(c.isdigit() for c in word) <= _MOST_DIGITS
		and len(re.findall(r"[0-9]+", word)) <= _MOST_NUMBERS
		and not any(_KEY_LIKE.fullmatch(part) for part in re.split(r"[._-]", word))
	)


def said(word: str) -> str:
	"""A typed word as an error says it: quoted, or `NOT_SAID` when it reads as a value.

	Args:
		word: The word as typed.
	"""
	return repr(word) if reads_as_name(word) else NOT_SAID


def _sayable(piece: str) -> bool:
	"""Whether an error may repeat a piece of a typed word.

	A name, a number, a run id's prefix (`_SHORT_HEX`), a model's name (``gpt-5-mini``,
	``claude-sonnet-4-5-20250929``), or a path (``agents/support.json``, ``my report (final).json``): a path's words are read between
	any two characters that are not letters or digits, a model's between ``.``, ``_`` and
	``-``; each must read as a word of a name (`_WORD`, not `_KEY_LIKE`) or a version, and a
	path's as a number too (`_PATH_NUMBER`: ``runs/2026/agent.json``).
	"""
	if len(piece) < _SHORTEST or reads_as_name(piece) or _NUMBER.fullmatch(piece):
		return True
	if _SHORT_HEX.fullmatch(piece):  # a run id's prefix (`openmolt answer 7d4f2cb`)
		return True
	path = "/" in piece or "\\" in piece or _SUFFIX.search(piece) is not None
	parts = re.split(r"[^A-Za-z0-9]+" if path else r"[._-]", piece)
	return all(
		part == ""
		or (_WORD.fullmatch(part) and not _KEY_LIKE.fullmatch(part))
		or _VERSION.fullmatch(part)
		or (path and _PATH_NUMBER.fullmatch(part))
		for part in parts
	)


def unsaid(argv: list[str]) -> frozenset[str]:
	"""The pieces of the typed words an error must not repeat: those that may be a value.

	Any word may be a key pasted in the wrong place (``openmolt auth sk-...``, a run id, a
	model, a tool's name, a file): an error that repeats what was typed (``no such integration
	'sk-...'``) would keep it in a terminal's scrollback and a CI log. A word is read in pieces
	(split at ``=``, ``:``, ``,`` and white space, its leading dashes off; a URL in it is read by the
	URL rule, `url_secrets`: its password and secret query values); a piece that reads as a
	name, a number, a model's name or a path of those is said, any other is masked wherever
	the command's error shows it. What is not known to be a name is a value.

	Args:
		argv: The command's arguments.
	"""
	out: set[str] = set()
	for word in argv:
		for url in _URL.findall(word):  # a store's or a server's URL: its secrets only
			from openmolt_core._support.masking import url_secrets

			out |= url_secrets(url)
		rest = _URL.sub(" ", word).lstrip("-")
		out.update(p for p in re.split(r"[=:,\s]+", rest) if not _sayable(p))
	return frozenset(out)


class Unsaid:
	"""The command's stderr with the typed words that may be values masked (`unsaid`).

	Installed for the whole command when a word reads as a value: every error and warning the
	command prints (its own, a plugin registry's, argparse's, a traceback) goes through it,
	whichever module wrote it. Everything else is the stream's own (``isatty``, ``fileno``).

	Args:
		stream: The stream written to (``sys.stderr``).
		typed: The pieces to mask (`unsaid`).
	"""

	def __init__(self, stream: TextIO, typed: frozenset[str]) -> None:
		self.stream = stream
		self.typed = typed

	def write(self, text: str) -> int:
		"""Write text with the typed values masked.

		Args:
			text: What is written.
		"""
		from openmolt_core._support.masking import mask

		self.stream.write(mask(text, self.typed))
		return len(text)

	def __getattr__(self, name: str) -> Any:
		"""What the stream has (``isatty``, ``fileno``, ``flush``, ``encoding``)."""
		return getattr(self.stream, name)
