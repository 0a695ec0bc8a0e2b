"""A word of an id mixing Latin with a script whose letters pass for Latin ones is refused.

The rule (`openmolt_core._support.userids.key_problem`) judged Latin mixed with Cyrillic or
Greek only: ``bօb`` (an Armenian ``օ``), ``Ꭺlice`` (a Cherokee ``Ꭺ``), ``paypaӏ`` (a Cyrillic
palochka), ``ꓮlice`` (a Lisu ``ꓮ``) passed, as user and session ids both. What a word mixes is
now refused unless it is Latin with the Chinese, Japanese and Korean scripts (which pass for no
Latin letter) or those among themselves (kanji with kana): an unknown mix is taken as unsafe. A
word in one script whose every letter passes for a Latin one (``аӏісе``, all Cyrillic) is
refused too: it mixes nothing, and reads as ``alice``.
"""

from __future__ import annotations

import pytest

from openmolt_core._support.userids import key_problem, refused_session_id, refused_user_id

MIXED = {
	"Armenian o": "b\u0585b",
	"Armenian s in a prefixed word": "slack:T1:\u057d\u0561m",
	"Cherokee A": "\u13aalice",
	"Lisu A": "\ua4eelice",
	"Coptic o": "b\u2c9fb",
	"Cyrillic with Greek": "\u0438\u0432\u03b1\u043d",
	"Cyrillic palochka": "paypa\u04cf",
	"Latin with Arabic": "ali\u0628ce",
	# A whole word of letters that each pass for a Latin one: no script is mixed, yet it reads
	# as another id (UTS #39's whole-script confusables).
	"all-Cyrillic alice": "\u0430\u04cf\u0456\u0441\u0435",
	"all-Cyrillic copy": "\u0441\u043e\u0440\u0443",
	"all-Greek ok in a prefixed id": "slack:T1:\u03bf\u03ba",
	"all-Cherokee SHE": "\u13da\u13bb\u13ac",
}

KEPT = [
	"\u7530\u4e2d\u305f\u308d\u3046",  # kanji and hiragana
	"\u4f50\u3005\u6728",  # 佐々木: an iteration mark
	"\u30bf\u30ed\u30fc",  # katakana with its long-vowel mark
	"\ud55c\uad6d\uc5b4",  # Hangul
	"Tokyo\u6771\u4eac",  # Latin with kanji: no look-alike
	"slack:T1:\u0438\u0432\u0430\u043d",
	"\u03bd\u03af\u03ba\u03bf\u03c2 papadopoulos",
	"\u0645\u062d\u0645\u062f@example.com",  # Arabic alone
	"Ren\u00e9e O'Brien",
	"\u0438\u0432\u0430\u043d",  # иван: letters with no Latin twin among them
	"\u0441\u0430\u0448\u0430",  # саша
	"\u03bd\u03af\u03ba\u03bf\u03c2",  # νίκος
]


@pytest.mark.parametrize("name", sorted(MIXED))
def test_a_word_mixing_latin_with_a_look_alike_script_is_refused(name: str) -> None:
	given = MIXED[name]
	assert key_problem(given) is not None, given
	assert refused_user_id(given) is not None and refused_session_id(given) is not None


@pytest.mark.parametrize("given", KEPT)
def test_ids_in_one_script_or_with_cjk_are_kept(given: str) -> None:
	assert key_problem(given) is None, key_problem(given)
