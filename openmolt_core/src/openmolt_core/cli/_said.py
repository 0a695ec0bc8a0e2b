"""What an error says of a word typed on the command line: the word, unless it reads as a value.

A word typed where a name goes (a provider, an integration, a config key, a variable, ``KEY`` of
``KEY=VALUE``, an action) may be the secret itself (``openmolt keys set sk-...``, the value
where the provider goes). A terminal's scrollback, a CI log and a shell's history of errors keep
what is printed, so an error says a word back only when it reads as a name (`reads_as_name`), and
the command stores nothing under a name that does not.
"""

from __future__ import annotations

import re

__all__ = ["NOT_SAID", "reads_as_name", "said"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*")
"""Words joined by ``.``, ``_`` or ``-`` (``apiKey``, ``secret_access_key``, ``google-drive``,
``OPENMOLT_SLACK_TOKEN``)."""
_WORD = re.compile(r"[A-Za-z]+(?:[0-9]{1,3}[A-Za-z]*)?")
"""One word of a name: letters, and at most one number of up to three digits after some
(``s3``, ``oauth2``, ``route53``, ``office365``, ``s3Bucket``)."""
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
	(``sk-proj-...``, ``xoxb-1234-...``, ``AKIA...``, a JWT); a name has few (``s3``, ``oauth2``,
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
	)


def said(word: str) -> str:
	"""A typed word as an error says it: quoted, or `NOT_SAID` when it reads as a value.

	Args:
		word: The word as typed.
	"""
	return repr(word) if reads_as_name(word) else NOT_SAID
