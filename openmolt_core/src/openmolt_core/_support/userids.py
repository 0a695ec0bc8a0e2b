"""The one rule for an id that keys what it owns: a user id, a session id.

A run's user id (``agent.run(input, user=...)``) is the key of that user's connected accounts,
sessions, memory and runs in the store; a session id (``run(session=...)``: an AG-UI thread, an
A2A context, a webhook's conversation) is the key of that conversation's turns, notes and waiting
runs. Two ids that differ in text but read alike somewhere
would share what one of them owns, or pass for the other to a person: a NUL (a C library or a
file name stops there), another control character or a line break (a log line forged), a
character no one sees (a zero-width space, a bidirectional override, a soft hyphen), spaces at
an end (a form or a store trims them), a form NFKC folds (full-width letters, a ligature) or
NFC composes (``e`` and a combining accent), and letters of two scripts in a word (a Cyrillic
``а`` for ``a``; only Latin with Chinese, Japanese or Korean, or those together, may mix).
`key_problem` says which, for the caller's error; ids real sign-ins and surfaces give (an e-mail
address, ``slack:T1:alice``, ``agui:Helper:t-1``, a name in one script, Japanese kanji with kana)
pass. `refused_user_id` and `refused_session_id` say it with the keyword and the fix.
"""

from __future__ import annotations

import unicodedata

from openmolt_core._support import LazyPattern

__all__ = [
	"MAX_USER_ID",
	"key_problem",
	"refused_session_id",
	"refused_user_id",
	"user_id_problem",
]

MAX_USER_ID = 1024
"""The longest user or session id, in characters (a key, a file name's source, a column)."""

_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories no id holds: controls, format characters (zero-width, bidirectional
marks, the soft hyphen), surrogates, private use, unassigned, line and paragraph separators."""

_APART = frozenset(
	{"LATIN", "CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "IDEOGRAPHIC"}
)
"""The scripts a word of an id may mix: Latin with the Chinese, Japanese and Korean ones (which
pass for no Latin letter: ``Tokyo東京``), and those among themselves (kanji with kana, ``佐々木``).
Any other mix is refused, known look-alikes (``аlice`` with a Cyrillic ``а``, ``bօb`` with an
Armenian ``օ``, ``Ꭺlice`` with a Cherokee ``Ꭺ``) and the mixes no one listed alike; words apart
may differ (``slack:T1:иван``, ``иван@mail.ru``)."""

_LATIN_TWINS = frozenset("аАВсСеЕһНіІјЈКӏМоОрРԛѕЅТԝхХуҮԁαΑΒΕΖΗιΙκΚΜνΝοΟρΡΤυΥχΧօսհոզᎪᏴᏟᎬᎻᎫᏦᎷᏢᏚᏙᏔᏃᎢ")
"""Letters of other scripts that each pass for a Latin one (Cyrillic ``а`` ``с`` ``е`` ``о`` ``р``
``х`` ``у`` ``ӏ``..., Greek ``ο`` ``κ`` ``ν``..., Armenian ``օ`` ``ս``, Cherokee ``Ꭺ`` ``Ꮪ``...): a
word made of them alone reads as a Latin one (``аӏісе``, all Cyrillic, is ``alice``)."""

_WORDS = LazyPattern(r"[^\W_]+")
"""A word of an id: letters and digits, between its separators (``:``, ``@``, ``.``, a space)."""


def key_problem(key: str) -> str | None:
	"""What makes an id able to alias another's, or None when it is a key of its own.

	Args:
		key: The id (a user's, a session's).
	"""
	if len(key) > MAX_USER_ID:
		return f"it is {len(key)} characters long, more than {MAX_USER_ID}"
	for at, char in enumerate(key):
		kind = unicodedata.category(char)
		if kind in _INVISIBLE or (kind == "Zs" and char != " "):
			return f"it holds {_named(char)} at index {at}, which reads as nothing or ends the id"
	if key != key.strip():
		return "it starts or ends with a space, which forms and stores trim"
	if unicodedata.normalize("NFKC", key) != key:
		folded = unicodedata.normalize("NFKC", key)
		return f"its normal form (NFKC) is {folded!a}, which is another id"
	for word in _WORDS().findall(key):  # a word each: ``slack:T1:иван`` mixes nothing
		scripts = {_script(char) for char in word if char.isalpha()}
		if len(scripts) > 1 and not scripts <= _APART:
			mixed = " and ".join(sorted(s.title() for s in scripts))
			return f"its word {word!a} mixes {mixed} letters, which may pass for one another"
		if (
			scripts
			and "LATIN" not in scripts
			and all(c in _LATIN_TWINS for c in word if c.isalpha())
		):
			return f"its word {word!a} is written in letters that each pass for a Latin one"
	return None


user_id_problem = key_problem
"""The rule as the user id's callers name it (`key_problem`)."""


def refused_user_id(user: str) -> str | None:
	"""Why a user id is refused and the fix, for the caller's error; None when it is a key of its own.

	Args:
		user: The id, a non-empty text.
	"""
	return _refused(
		"user", user, "the user's sign-in gives", "that user's accounts, sessions and runs"
	)


def refused_session_id(session_id: str) -> str | None:
	"""Why a session id is refused and the fix, for the caller's error; None when it is a key of its own.

	Args:
		session_id: The session's id (``Session.session_id``).
	"""
	return _refused(
		"session", session_id, "the chat or thread gives", "that conversation's turns and notes"
	)


def _refused(keyword: str, key: str, source: str, keys: str) -> str | None:
	"""The refusal of an id ``key_problem`` finds a problem in, said for ``keyword=``."""
	problem = key_problem(key)
	if problem is None:
		return None
	return (
		f"{keyword}={key[:64]!a} is refused as a {keyword} id: {problem}; give the id {source}, "
		f"NFKC-normalised and stripped, with no control or invisible character (it keys {keys})"
	)


def _named(char: str) -> str:
	"""A character as an error shows it: its code point and name (never the character itself)."""
	name = unicodedata.name(char, "")
	return f"U+{ord(char):04X}{f' {name}' if name else ''}"


def _script(char: str) -> str:
	"""The script a letter belongs to, as its Unicode name starts (``LATIN``, ``CYRILLIC``...)."""
	return unicodedata.name(char, "").partition(" ")[0]
