"""`mask` reads an ordinary text once for whole spellings and their cuts, and masks each as before.

Every spelling of a secret (but hex, read apart) starts with its cut: a text that holds no cut
holds no whole spelling either, so the cut families cost no second read of every text; the
families behind a cheap check (an ellipsis, a hex dump, an escaped line break) are still found.
"""

from __future__ import annotations

import base64
import json
import random
from unittest.mock import patch

from hypothesis import example, given, settings
from hypothesis import strategies as st

from openmolt_core._support import masking
from openmolt_core._support.masking import MASK, MIN_KEY, mask, spellings

_RANDOM = random.Random(7)
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
SECRETS = frozenset(f"sk-{n}{''.join(_RANDOM.choices(_ALPHABET, k=32))}" for n in range(10))
_WORDS = "the quick brown fox jumps over the lazy dog and then some more text follows".split()
PROSE = " ".join(_RANDOM.choice(_WORDS) for _ in range(400))[:2000]


class _Counted(str):
	"""A text that counts the searches made in it."""

	searches = 0

	def __contains__(self, part: object) -> bool:
		_Counted.searches += 1
		return str.__contains__(self, part)  # type: ignore[operator]


def _cut(spelling: str) -> str:
	return spelling[: max(MIN_KEY, -(-2 * len(spelling) // 3))]


def _hex(secret: str) -> set[str]:
	data = secret.encode()
	return {data.hex(), data.hex().upper()}


def test_an_ordinary_text_is_read_once_for_whole_spellings_and_cuts() -> None:
	"""2 KB of prose and ten secrets: a few searches per secret, not one per spelling and cut."""
	text = _Counted(PROSE)
	assert mask(text, SECRETS) == PROSE
	_Counted.searches = 0
	assert mask(text, SECRETS) == PROSE
	# As is, base64 at three alignments, base32 in two cases; and each family's cheap check.
	assert _Counted.searches <= 6 * len(SECRETS) + 20, _Counted.searches


def test_every_spelling_whole_or_cut_is_masked_among_ten_secrets() -> None:
	"""Each secret's every spelling, whole or cut to two thirds, in prose: masked."""
	for secret in SECRETS:
		for spelling in spellings(secret) - _hex(secret):
			for shown in {spelling, _cut(spelling)}:
				masked = mask(f"{PROSE[:300]} {shown} {PROSE[300:600]}", SECRETS)
				assert shown not in masked and MASK in masked, spelling
				assert masked.startswith(PROSE[:300]) and masked.endswith(PROSE[300:600])


def test_a_short_value_holding_a_short_secret_or_a_cut_is_masked() -> None:
	"""A 9-character value holding an 8-character secret, or a 9-character one's cut."""
	assert mask("abcd1234.", frozenset({"abcd1234"})) == f"{MASK}."
	assert mask("(abcd1234", frozenset({"abcd12345"})) == f"({MASK}"
	short = "pw-12345"  # too short to cut: its spellings are looked for whole
	encoded = base64.b64encode(short.encode()).decode()
	assert mask(f"the value {encoded} was sent", frozenset({short})) == f"the value {MASK} was sent"


def test_a_hex_dump_with_no_digit_in_mixed_case_is_masked() -> None:
	"""A secret whose UTF-8 bytes' hex has no digit ('\\uaaaa'): found in a text with no digit."""
	secret = "\uaaaa" * 6
	hexed = secret.encode().hex()
	assert not any(c.isdigit() for c in hexed)
	mixed = hexed[:9] + hexed[9:].upper()
	assert mask(f"dump: {mixed} end", frozenset({secret})) == f"dump: {MASK} end"


def test_an_elided_secret_is_masked_with_no_other_dot_or_backslash() -> None:
	"""start...end, start\u2026end and JSON's start\\u2026end: the mark alone found."""
	secret = sorted(SECRETS)[0]
	for mark in ("...", "\u2026"):
		text = f"got {secret[:16]}{mark}{secret[-16:]} then"
		assert mask(text, SECRETS) == f"got {MASK} then"
		escaped = json.dumps(text)
		assert mask(escaped, SECRETS) == json.dumps(f"got {MASK} then")


# Secrets with brackets: masking one spelling may show another that runs into the mask.
_POOL = (
	*sorted(SECRETS)[:3],
	"ed]-tail-Bx12345",
	"[pw]-0123456789ab",
	"p@ss word/+\u00e9-98765",
	"pa55wd",
	"xy",
)
_PIECES = sorted({w for s in _POOL for w in spellings(s)})


def _every_one(secrets: frozenset[str]) -> masking._Scan:
	"""A scan that finds something in every text and tells nothing: every loop reads it all."""
	probes, cuts = masking._patterns(secrets)[0], masking._cuts(secrets)
	every = (("",), 0, probes, {"": ()}, cuts, {"": ()}, False)
	return masking._Scan(*every)


_TEXTS = st.lists(
	st.one_of(
		st.sampled_from([*_WORDS, " ", MASK, "[", "]", "ed", "...", "%2F", "\\u0041", "\n"]),
		st.tuples(st.sampled_from(_PIECES), st.integers(1, 80)).map(lambda p: p[0][: p[1]]),
		st.tuples(st.sampled_from(_PIECES), st.integers(1, 80)).map(lambda p: p[0][-p[1] :]),
	),
	max_size=12,
).map("".join)


@settings(max_examples=400)
@example(text="zz pa55wd-tail-Bx12345 zz", chosen={"pa55wd", "ed]-tail-Bx12345"})  # shown by a mask
@example(
	text="x=%70a55wd;tail-Bx12345", chosen={"pa55wd", "ed];tail-Bx12345"}
)  # by another family's
@given(text=_TEXTS, chosen=st.sets(st.sampled_from(_POOL), min_size=1))
def test_the_scan_masks_what_reading_every_spelling_and_cut_masks(
	text: str, chosen: set[str]
) -> None:
	"""Whole spellings, cuts, masks and brackets mixed: the same text as every loop read whole."""
	secrets = frozenset(chosen)
	with patch.object(masking, "_scan", _every_one):
		expected = mask(text, secrets)
	assert mask(text, secrets) == expected
