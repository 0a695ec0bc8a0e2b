"""StreamMask masks every spelling family `mask` knows, however the text is cut into pieces.

The families are read off `mask` (`openmolt_core._support.masking`): the fixed spellings
(`spellings`, enumerated, so a new one is tested here at once), a percent-encoded run another
encoder wrote, a run of ``\\u``/``\\x`` escapes, and the ones behind a cheap check
(`_masked_other_spellings`: hex in any case, UTF-16 raw or escaped, HTML character references,
base64 wrapped in lines), and a short secret masked where it stands alone. Each is put amid
other text, cut at every point into two pieces (and at a sample of pairs of points into three),
streamed, and the joined output must be what `mask` makes of the whole text.
"""

from __future__ import annotations

import base64
import json
import random
import textwrap
from urllib.parse import quote

import pytest

from openmolt_core._support import masking
from openmolt_core._support.masking import StreamMask, mask, spellings

SECRETS = ("sk-live-Abc123Def456Ghi789", "sk-Abc/def+gh\u00e9:jkl")


def _every_byte(secret: str) -> str:
	return "".join(f"%{b:02X}" for b in secret.encode())


def _wrapped(secret: str, width: int, newline: str) -> str:
	"""A base64 body wrapped at ``width`` whose line break falls inside the secret's part."""
	data = b"x" * (width * 3 // 4 - 5) + secret.encode() + b" and more text after it"
	return newline.join(textwrap.wrap(base64.b64encode(data).decode(), width))


def families(secret: str) -> dict[str, str]:
	"""Each spelling `mask` masks, by family, inside a text that is not only the spelling."""
	fixed = {f"spelling {i}: {s!r}": s for i, s in enumerate(sorted(spellings(secret)))}
	hexed = secret.encode().hex()
	every_u = "".join(f"\\u{ord(c):04x}" for c in secret)
	upper_u = every_u.upper().replace("\\U", "\\u")
	utf8_x = "".join(f"\\x{b:02x}" for b in secret.encode())
	twice = quote(quote(secret, safe=""), safe="")
	refs = "".join(f"&#X{ord(c):X};" for c in secret)
	out = {
		**{name: f'before "{s}" after, more words' for name, s in fixed.items()},
		# a percent-encoded run (`_masked_run`)
		"percent, every byte": f"see <{_every_byte(secret)}> ok",
		"percent, every byte, lower": f"see <{_every_byte(secret).lower()}> ok",
		"percent, another safe set": f"see <{quote(secret, safe='/+:')}> ok",
		"percent, twice": f"see <https://x.example/cb?next={twice}> ok",
		# a run of escapes (`_masked_escapes`)
		"escapes, every character": f'{{"a": "{every_u}", "b": 1}}',
		"escapes, upper-case hex": f'{{"a": "{upper_u}"}}',
		"escapes, utf-8 bytes": f'x "{utf8_x}" y',
		"escapes, twice": f'{{"a": {json.dumps(every_u)}}}',
		# behind a cheap check (`_masked_other_spellings`)
		"hex, mixed case": f"dump: {hexed[:9] + hexed[9:].upper()} end",
		"hex, upper first": f"dump: {hexed[:7].upper() + hexed[7:]} end",
		"html, first character": f"<p>key: &#{ord(secret[0])};{secret[1:]} ok</p>",
		"html, hex reference": f"<p>key: &#x{ord(secret[0]):x};{secret[1:]} ok</p>",
		"html, every character": f"<p>{refs} ok</p>",
		"html, encoded twice": f"<p>key: &amp;#{ord(secret[0])};{secret[1:]}</p>",
		"html, in the middle": f"<p>key: {secret[:5]}&#{ord(secret[5])};{secret[6:]}</p>",
		# cut short by another program (`_masked_cuts`): its first two thirds or more
		"cut, raw": f"echo: Bearer {secret[: len(secret) * 3 // 4]}') end",
		"cut, base64": f"Basic {base64.b64encode(f'u:{secret}'.encode()).decode()[:-5]}') end",
		# the middle cut out around an ellipsis (`_masked_elided`), as pydantic shows a value
		"elided, three dots": f"input_value='{secret[:6]}...{secret[-12:]}', input_type=str",
		"elided, the character": f"value {secret[:9]}\u2026{secret[-9:]} end",
		"elided, in JSON": f'{{"v": "{secret[:9]}\\u2026{secret[-9:]}"}}',
		# cut in two by a line break (`_masked_split`), a wrapped line's indentation too
		"split, early": f"Bearer {secret[:2]}\n{secret[2:]} ok",
		"split, middle, CRLF": f"Bearer {secret[:10]}\r\n{secret[10:]} ok",
		"split, late, indented": f"Bearer {secret[:-3]}\n    {secret[-3:]} ok",
	}
	for codec in ("utf-16-le", "utf-16-be"):
		raw = secret.encode(codec).decode("latin-1")
		out[f"{codec}, raw"] = f"the key {raw} here"
		data = b"\xff\xfe" + f"key {secret}".encode(codec)
		out[f"{codec}, bytes"] = f'{{"data": "{repr(data)[2:-1]}"}}'  # a byte string shown
		escaped = raw.replace("\x00", "\\u0000")
		out[f"{codec}, escaped"] = f'"{escaped}" ok'
	for width in (76, 64):
		for newline in ("\n", "\r\n"):
			body = _wrapped(secret, width, newline)
			message = f"Content-Type: text/plain{newline}{newline}{body}{newline}--b--"
			out[f"wrapped at {width}, {newline!r}"] = message
			out[f"wrapped at {width}, {newline!r}, in JSON"] = json.dumps({"raw": message})
			out[f"wrapped at {width}, {newline!r}, after a word"] = f"Hello{newline}{body}"
	return out


def _streamed(pieces: list[str], secrets: frozenset[str]) -> str:
	stream = StreamMask(lambda: secrets)
	return "".join(stream.feed(p) for p in pieces) + stream.flush()


CASES = [(s, name) for s in SECRETS for name in families(s)]


@pytest.mark.parametrize(("secret", "name"), CASES)
def test_every_family_cut_anywhere_is_masked_like_the_whole_text(secret: str, name: str) -> None:
	text = families(secret)[name]
	secrets = frozenset({secret})
	whole = mask(text, secrets)
	assert whole != text, f"{name}: mask does not know this spelling (the case is wrong)"
	for cut in range(len(text) + 1):
		out = _streamed([text[:cut], text[cut:]], secrets)
		assert out == whole, (name, cut, text[:cut], out)
	rng = random.Random(name)
	for _ in range(60):
		a, b = sorted(rng.sample(range(len(text) + 1), 2))
		out = _streamed([text[:a], text[a:b], text[b:]], secrets)
		assert out == whole, (name, a, b, out)


@pytest.mark.parametrize(
	"text", ["use s3cr now", "(s3cr)", "s3cr", "xs3cr and s3crx stay", "a s3cr_b"]
)
def test_a_short_secret_cut_anywhere_is_masked_like_the_whole_text(text: str) -> None:
	"""A secret under `MIN_ENCODED` characters is masked where it stands alone, not in a word."""
	secrets = frozenset({"s3cr"})
	whole = mask(text, secrets)
	for cut in range(len(text) + 1):
		assert _streamed([text[:cut], text[cut:]], secrets) == whole, (text, cut)
	for a in range(len(text) + 1):
		for b in range(a, len(text) + 1):
			assert _streamed([text[:a], text[a:b], text[b:]], secrets) == whole, (text, a, b)


@pytest.mark.parametrize(
	"others", [("lla",), ("lla", "re"), ("s", "ella"), ("sk-live-7f3a9c2e11",), ("rains", "xu")]
)
def test_short_secrets_beside_each_other_stream_as_the_whole_text_is_masked(
	others: tuple[str, ...],
) -> None:
	"""Another secret held at a word's end never makes the part sent before it read as a
	word's end: ``umbre`` sent while ``lla`` is held stays inside ``umbrella``."""
	text = "Take xumbre rest and umbrella, it rains; umbre."
	secrets = frozenset({"umbre", *others})
	whole = mask(text, secrets)
	for size in range(1, 6):
		pieces = [text[i : i + size] for i in range(0, len(text), size)]
		assert _streamed(pieces, secrets) == whole, (others, size)
	for a in range(len(text) + 1):
		for b in range(a, len(text) + 1, 3):
			assert _streamed([text[:a], text[a:b], text[b:]], secrets) == whole, (others, a, b)


def test_the_families_are_the_ones_mask_knows() -> None:
	"""A family `mask` gains is a function this test names; one it does not name fails here,
	so it gets a case above (and StreamMask a hold for it)."""
	known = {
		"_masked_run",
		"_masked_escapes",
		"_masked_other_spellings",
		"_masked_html",
		"_masked_wrapped",
		"_wide_and_hex",
		"_masked_cuts",
		"_masked_elided",
		"_masked_split",
	}
	found = {n for n in vars(masking) if n.startswith(("_masked_", "_wide"))}
	assert found - {"_masked_object", "_masked_extra"} == known


def test_ordinary_text_is_held_back_by_a_word_at_most() -> None:
	"""Prose streamed in 20-character pieces lags by no more than its last word."""
	text = ("The model writes a reply, with numbers 42 and a Line\nthat starts anew. " * 30)[:2048]
	stream = StreamMask(lambda: frozenset(SECRETS))
	sent = ""
	for start in range(0, len(text), 20):
		sent += stream.feed(text[start : start + 20])
		assert len(text[: start + 20]) - len(sent) <= len("anew."), sent[-30:]
	assert sent + stream.flush() == text
