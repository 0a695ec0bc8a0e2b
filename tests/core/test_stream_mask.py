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


def _encoded(secret: str) -> list[str]:
	"""Every spelling the redactor knows, and percent-encodings with other encoders' safe sets
	(every byte encoded; a path that keeps ``+`` and ``:``), which `mask` decodes whole."""
	from urllib.parse import quote

	from openmolt_core.secrets import spellings

	every = "".join(f"%{byte:02X}" for byte in secret.encode())
	return [*sorted(spellings(secret)), every, every.lower(), quote(secret, safe="/+:")]


@given(
	which=st.integers(min_value=0, max_value=100),
	cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=6),
)
def test_every_spelling_split_anywhere_is_masked_like_the_whole_text(
	which: int, cuts: list[int]
) -> None:
	"""A percent-encoded run is decoded whole by `mask`: the stream holds it back until it ends,
	else its parts, none of which decodes to the secret, went out unmasked."""
	secret = "sk-Abc/def+ghi:jkl@mno!pq"
	spellings = _encoded(secret)
	text = f"see <{spellings[which % len(spellings)]}> ok"
	points = sorted({min(c, len(text)) for c in cuts})
	pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
	stream = StreamMask(lambda: [secret])
	out = "".join(stream.feed(p) for p in pieces) + stream.flush()
	assert out == mask(text, frozenset({secret})) == f"see <{MASK}> ok"


def test_a_held_back_tail_never_splits_a_secret() -> None:
	"""A cut that goes through a secret sent its first part now and the rest later, neither
	masked: a secret whose last character starts one of its spellings (``sk-...-s`` ends with the
	``s`` it starts with) was held back by that character and sent whole; a secret followed by a
	percent-encoded run (held from the secret's ``=``) too."""
	ending = "sk-live-abcdef-s"
	stream = StreamMask(lambda: [ending])
	assert stream.feed(f"the key is {ending}") + stream.flush() == f"the key is {MASK}"
	for after in ("%", "%41", "%2F and more"):
		stream = StreamMask(lambda: [SECRET])
		out = stream.feed(SECRET + after) + stream.flush()
		assert SECRET not in out and out == mask(SECRET + after, frozenset({SECRET}))


def _long_runs(secret: str) -> list[tuple[str, str, object]]:
	"""Runs `mask` decodes whole, longer than a stream holds, with the secret near the bound:
	(filler, the secret so spelled, what decodes the run)."""
	import html
	from urllib.parse import unquote

	every = "".join(f"%{byte:02X}" for byte in secret.encode())
	escaped = "".join(f"\\u{ord(c):04x}" for c in secret)
	refs = "".join(f"&#{ord(c)};" for c in secret)
	return [
		("%41", every, unquote),
		("\\u0041", escaped, lambda t: t.encode().decode("unicode_escape")),
		("&#65;", refs, html.unescape),
	]


def test_a_run_too_long_to_hold_never_sends_a_secret_in_two_parts() -> None:
	"""A percent-encoded, escaped or HTML run longer than a stream holds back goes out in parts;
	the cut never falls inside the secret it holds (each part alone decoded to no secret, the
	two together to the whole of it: a 4 KB URL with a key in it leaked so)."""
	from openmolt_core._support.masking import _MAX_HELD_RUN

	secret = "sk-live-7f3a9c2e11abcdef"
	for filler, spelled, decode in _long_runs(secret):
		size = len(filler)
		# the secret's spelling across the point where the stream stops holding the run
		for back in range(0, len(spelled) + size, max(size, len(spelled) // 5)):
			n = (_MAX_HELD_RUN - back) // size
			text = "x " + filler * n + spelled + filler * 3 + " end"
			for piece in (7, 64):
				stream = StreamMask(lambda: [secret])
				parts = [stream.feed(text[i : i + piece]) for i in range(0, len(text), piece)]
				out = "".join([*parts, stream.flush()])
				shown = decode(out)  # type: ignore[operator]
				assert secret[:8] not in shown and secret[-8:] not in shown, (filler, back, piece)
				assert MASK in out and out.endswith(" end")


def test_base64_lines_too_long_to_hold_never_send_a_secret_in_two_parts() -> None:
	"""A base64 body wrapped in lines, longer than a stream holds back, goes out in parts; the
	cut never falls inside the secret's base64 (its lines before the cut went out, the rest
	later, and joined and decoded they held it)."""
	import base64
	import textwrap

	secret = "sk-live-7f3a9c2e11abcdef"
	for before in range(2990, 3140, 7):
		data = b"x" * before + secret.encode() + b" and more" * 3
		for newline in ("\n", "\\n"):
			body = newline.join(textwrap.wrap(base64.b64encode(data).decode(), 76))
			text = f"see:{newline}{body}{newline}end"
			stream = StreamMask(lambda: [secret])
			parts = [stream.feed(text[i : i + 64]) for i in range(0, len(text), 64)]
			out = "".join([*parts, stream.flush()])
			assert MASK in out, (before, newline)
