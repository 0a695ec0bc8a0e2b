"""The one rule for a user id: a key of its own, which no other user's can alias.

A run's user id (``agent.run(input, user=...)``) is the key of that user's connected accounts,
sessions, memory and runs in the store. Two ids that differ in text but read alike somewhere
would share what one of them owns, or pass for the other to a person: a NUL (a C library or a
file name stops there), another control character or a line break (a log line forged), a
character no one sees (a zero-width space, a bidirectional override, a soft hyphen), spaces at
an end (a form or a store trims them), a form NFKC folds (full-width letters, a ligature) or
NFC composes (``e`` and a combining accent), and Latin letters mixed with Cyrillic or Greek ones
in a word (``а`` for ``a``). `user_id_problem` says which, for the caller's error; ids real sign-ins give
(an e-mail address, ``slack:T1:alice``, a name in one script, Japanese kanji with kana) pass.
"""

from __future__ import annotations

import unicodedata

from openmolt_core._support import LazyPattern

__all__ = ["MAX_USER_ID", "refused_user_id", "user_id_problem"]

MAX_USER_ID = 1024
"""The longest user id, in characters (a key, a file name's source, a column)."""

_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories no id holds: controls, format characters (zero-width, bidirectional
marks, the soft hyphen), surrogates, private use, unassigned, line and paragraph separators."""

_CONFUSABLE = ("LATIN", "CYRILLIC", "GREEK")
"""Scripts whose letters pass for one another's: a word of an id mixing two of them is refused
(``аlice`` with a Cyrillic ``а``); words apart may differ (``slack:T1:иван``, ``иван@mail.ru``)."""

_WORDS = LazyPattern(r"[^\W_]+")
"""A word of an id: letters and digits, between its separators (``:``, ``@``, ``.``, a space)."""


def user_id_problem(user: str) -> str | None:
	"""What makes a user id able to alias another's, or None when it is a key of its own.

	Args:
		user: The id, a non-empty text.
	"""
	if len(user) > MAX_USER_ID:
		return f"it is {len(user)} characters long, more than {MAX_USER_ID}"
	for at, char in enumerate(user):
		kind = unicodedata.category(char)
		if kind in _INVISIBLE or (kind == "Zs" and char != " "):
			return f"it holds {_named(char)} at index {at}, which reads as nothing or ends the id"
	if user != user.strip():
		return "it starts or ends with a space, which forms and stores trim"
	if unicodedata.normalize("NFKC", user) != user:
		folded = unicodedata.normalize("NFKC", user)
		return f"its normal form (NFKC) is {folded!a}, which is another id"
	for word in _WORDS().findall(user):  # a word each: ``slack:T1:иван`` mixes nothing
		scripts = {_script(char) for char in word if char.isalpha()} & set(_CONFUSABLE)
		if len(scripts) > 1:
			mixed = " and ".join(sorted(s.title() for s in scripts))
			return f"its word {word!a} mixes {mixed} letters, which look alike"
	return None


def refused_user_id(user: str) -> str | None:
	"""Why a user id is refused and the fix, for the caller's error; None when it is a key of its own.

	Args:
		user: The id, a non-empty text.
	"""
	problem = user_id_problem(user)
	if problem is None:
		return None
	return (
		f"user={user[:64]!a} is refused as a user id: {problem}; give the id the user's sign-in "
		"gives, NFKC-normalised and stripped, with no control or invisible character (it keys "
		"that user's accounts, sessions and runs)"
	)


def _named(char: str) -> str:
	"""A character as an error shows it: its code point and name (never the character itself)."""
	name = unicodedata.name(char, "")
	return f"U+{ord(char):04X}{f' {name}' if name else ''}"


def _script(char: str) -> str:
	"""The script a letter belongs to, as its Unicode name starts (``LATIN``, ``CYRILLIC``...)."""
	return unicodedata.name(char, "").partition(" ")[0]
