"""Masking secrets in long text: the percent-encoded and HTML-reference runs in linear time."""

import time

import pytest

from openmolt_core._support.masking import mask

SECRET = "sk_live_abcdef1234567890"


@pytest.mark.parametrize(
	"text",
	["a" * 200_000 + " %41", "a" * 200_000 + " &#65;", "a%" * 100_000, "a&#" * 70_000],
	ids=["percent", "html", "percent-signs", "html-starts"],
)
def test_a_long_run_with_an_encoded_character_is_masked_in_linear_time(text: str) -> None:
	"""A 200,000-character tool result with one '%41' or '&#65;' is masked in well under seconds."""
	started = time.perf_counter()
	assert mask(text, frozenset({SECRET})) == text
	assert time.perf_counter() - started < 5


def test_encoded_spellings_in_a_long_text_are_still_masked() -> None:
	"""The secret percent-encoded or as HTML references, after a long run, is still masked."""
	encoded = "".join(f"%{ord(c):02X}" for c in SECRET)
	html = "".join(f"&#{ord(c)};" for c in SECRET)
	text = "a" * 50_000 + f" key={encoded} and x{html}y"
	assert SECRET not in mask(text, frozenset({SECRET}))
	assert encoded not in mask(text, frozenset({SECRET}))
	assert html not in mask(text, frozenset({SECRET}))
