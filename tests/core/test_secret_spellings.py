"""Spellings of a secret other encoders write: hex, ``\\u``/``\\x`` escapes, short secrets in Basic
auth, a URL percent-encoded twice; masked in whole texts and in streamed pieces."""

import base64
import json
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openmolt_core.secrets import MASK, StreamMask, mask

SECRET = "sk-Abc/def+gh\u00e9:jkl"


def _masked(spelling: str, secret: str = SECRET) -> str:
	return mask(f"before {spelling} after", frozenset({secret}))


@pytest.mark.parametrize("case", ["lower", "upper"])
def test_a_hex_dump_of_a_secret_is_masked_in_either_case(case: str) -> None:
	"""``secret.encode().hex()`` (a digest-like dump, a byte trace) in lower or upper case."""
	spelling = SECRET.encode().hex()
	spelling = spelling.upper() if case == "upper" else spelling
	assert _masked(spelling) == f"before {MASK} after"


def _escaped() -> dict[str, str]:
	every = "".join(f"\\u{ord(c):04x}" for c in SECRET)
	return {
		"every character": every,
		"every character, upper-case hex": every.upper().replace("\\U", "\\u"),
		"upper-case hex": json.dumps(SECRET)[1:-1].replace("\\u00e9", "\\u00E9"),
		"/ and + escaped": json.dumps(SECRET)[1:-1].replace("/", "\\u002f").replace("+", "\\u002b"),
		"utf-8 bytes": "".join(f"\\x{b:02x}" for b in SECRET.encode()),
		"escaped twice": json.dumps("".join(f"\\u{ord(c):04x}" for c in SECRET))[1:-1],
	}


@pytest.mark.parametrize("name", list(_escaped()))
def test_a_secret_escaped_by_another_encoder_is_masked(name: str) -> None:
	"""A run of ``\\u``/``\\x`` escapes is decoded whole and masked when it holds the secret."""
	spelling = _escaped()[name]
	masked = mask(f'{{"a": "ordinary \\u00e9 text", "b": "{spelling}"}}', frozenset({SECRET}))
	assert masked == f'{{"a": "ordinary \\u00e9 text", "b": "{MASK}"}}', name


def test_escaped_text_holding_no_secret_is_left_alone() -> None:
	text = '{"a": "caf\\u00e9 \\x41 \\u12", "b": "\\U0010FFFF \\UFFFFFFFF"} C:\\x\\users'
	assert mask(text, frozenset({SECRET})) == text


@given(
	which=st.integers(min_value=0, max_value=100),
	cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_an_escaped_secret_split_anywhere_is_masked_like_the_whole_text(
	which: int, cuts: list[int]
) -> None:
	"""The stream holds an escaped run back until it ends, as it does a percent-encoded one."""
	spellings = [*_escaped().values(), SECRET.encode().hex()]
	text = f'see "{spellings[which % len(spellings)]}" ok'
	points = sorted({min(c, len(text)) for c in cuts})
	pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
	stream = StreamMask(lambda: [SECRET])
	out = "".join(stream.feed(p) for p in pieces) + stream.flush()
	assert out == mask(text, frozenset({SECRET})) == f'see "{MASK}" ok'


def test_a_backslash_that_starts_no_escape_is_not_held_back() -> None:
	"""LaTeX or a Windows path in a streamed reply goes out at once."""
	stream = StreamMask(lambda: [SECRET])
	assert stream.feed("see \\frac{a}{b} and C:\\temp") == "see \\frac{a}{b} and C:\\temp"
	assert stream.feed(" then \\u00") == ""  # an escape starts: held to the end of the line
	assert stream.feed("e9 done") == ""
	# (a word that starts a line waits for its end: a line of base64 may start a wrapped block)
	assert stream.feed("\nnext.") == " then \\u00e9 done\nnext."


@pytest.mark.parametrize("user", ["", "a", "ab", "abc", "user"])
@pytest.mark.parametrize("secret", ["s3cr3t", "hunter2", SECRET])
def test_a_short_password_in_basic_auth_is_masked_at_every_alignment(
	user: str, secret: str
) -> None:
	"""A 6-character password inside ``user:password`` (HTTP Basic) at each of the 3 offsets."""
	for encode in (base64.b64encode, base64.urlsafe_b64encode):
		header = encode(f"{user}:{secret}".encode()).decode()
		masked = mask(f"Authorization: Basic {header}", frozenset({secret}))
		assert header not in masked and MASK in masked, (user, secret, masked)


def test_a_secret_percent_encoded_twice_is_masked() -> None:
	"""A URL in another URL's query (an OAuth2 redirect) encodes the secret twice: ``%252F``."""
	inner = f"https://app.example/cb?token={quote(SECRET, safe='')}"
	outer = f"https://auth.example/login?next={quote(inner, safe='')}&x=1"
	masked = mask(f"GET {outer}", frozenset({SECRET}))
	assert "%25" not in masked and MASK in masked and masked.endswith("&x=1")


def test_an_escape_the_codec_does_not_know_is_decoded_without_a_warning() -> None:
	"""``\\[``, octal ``\\0``, a lone trailing backslash: decoded by hand (the tests make warnings
	errors; the command would print one)."""
	every = "".join(f"\\u{ord(c):04x}" for c in SECRET)
	# the run goes on to its end: what it decodes to is masked, then escaped again as JSON
	for odd, left in (("\\[", "["), ("\\0", "\\u0000"), ("\\9", "9"), ("\\", "\\")):
		text = f'x "{every} {odd}'
		assert mask(text, frozenset({SECRET})) == f'x "{MASK} {left}'
	assert mask("a \\[ \\u00e9 b", frozenset({SECRET})) == "a \\[ \\u00e9 b"
