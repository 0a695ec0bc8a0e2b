"""StreamMask: secrets masked in text that arrives in pieces (streamed replies)."""

from hypothesis import given
from hypothesis import strategies as st

from openmolt_core.secrets import MASK, StreamMask, held_back, mask

SECRET = "tok_9Qv/+x=Z8k"


@given(
	before=st.text(max_size=20),
	after=st.text(max_size=20),
	cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
def test_any_split_masks_like_the_whole_text(before: str, after: str, cuts: list[int]) -> None:
	text = before + SECRET + after
	points = sorted({min(c, len(text)) for c in cuts})
	pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
	stream = StreamMask(lambda: [SECRET])
	out = "".join(stream.feed(p) for p in pieces) + stream.flush()
	secrets = frozenset({SECRET})
	assert out == mask(text, secrets)
	assert SECRET not in out and MASK in out


def test_only_what_may_start_a_secret_is_held_back() -> None:
	secrets = frozenset({SECRET})
	assert held_back("hello tok_9Q", secrets) == len("tok_9Q")
	assert held_back("hello !!", secrets) == 0  # (a letter may start a base64 spelling)
	assert held_back("anything", frozenset()) == 0
	stream = StreamMask(lambda: [SECRET])
	assert stream.feed("hello tok_") == "hello "
	assert stream.feed("zzz") == "tok_zzz"  # not a secret after all: sent whole
	assert stream.flush() == ""
