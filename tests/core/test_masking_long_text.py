"""Masking secrets in long text: the percent-encoded and HTML-reference runs in linear time."""

from collections.abc import Callable

import pytest

from openmolt_core._support.masking import mask
from tests._scaling import assert_scales_linearly

SECRET = "sk_live_abcdef1234567890"


@pytest.mark.parametrize(
	"build",
	[
		lambda n: "a" * n + " %41",
		lambda n: "a" * n + " &#65;",
		lambda n: "a%" * (n // 2),
		lambda n: "a&#" * (n * 7 // 20),
	],
	ids=["percent", "html", "percent-signs", "html-starts"],
)
def test_a_long_run_with_an_encoded_character_is_masked_in_linear_time(
	build: Callable[[int], str],
) -> None:
	"""A 200,000-character tool result with one '%41' or '&#65;': masked in linear time."""
	text = build(200_000)
	assert assert_scales_linearly(build, lambda t: mask(t, frozenset({SECRET})), 200_000) == text


def test_encoded_spellings_in_a_long_text_are_still_masked() -> None:
	"""The secret percent-encoded or as HTML references, after a long run, is still masked."""
	encoded = "".join(f"%{ord(c):02X}" for c in SECRET)
	html = "".join(f"&#{ord(c)};" for c in SECRET)
	text = "a" * 50_000 + f" key={encoded} and x{html}y"
	assert SECRET not in mask(text, frozenset({SECRET}))
	assert encoded not in mask(text, frozenset({SECRET}))
	assert html not in mask(text, frozenset({SECRET}))
