"""A secret with accented letters is masked composed or decomposed (NFC or NFD), in every spelling.

``é`` is one character (NFC) or ``e`` and a combining accent (NFD): macOS writes file names
decomposed, and a server may normalise what it echoes. Either form, given or shown, is the same
secret: as is, JSON-escaped, percent-encoded and in base64, whole and streamed.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from urllib.parse import quote

import pytest

from openmolt_core._support.masking import MASK, StreamMask, mask

SECRET = "t\u00f6k\u00e9n-\u00dcnicode-123"


def _streamed(text: str, secrets: frozenset[str], size: int) -> str:
	stream = StreamMask(lambda: secrets)
	out = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
	return "".join(out) + stream.flush()


@pytest.mark.parametrize("given", ["NFC", "NFD"])
@pytest.mark.parametrize("shown", ["NFC", "NFD"])
def test_a_secret_is_masked_in_either_normal_form(given: str, shown: str) -> None:
	secrets = frozenset({unicodedata.normalize(given, SECRET)})
	value = unicodedata.normalize(shown, SECRET)
	for text in (
		f"token {value} refused",
		json.dumps({"token": value}),
		f"https://x.example/cb?token={quote(value, safe='')}&a=1",
		f"b64 {base64.b64encode(value.encode()).decode()} end",
	):
		whole = mask(text, secrets)
		assert MASK in whole and value not in whole, whole
		assert unicodedata.normalize("NFC", whole).count(unicodedata.normalize("NFC", SECRET)) == 0
		for size in (1, 3):
			assert _streamed(text, secrets, size) == whole, (text, size)
