"""A secret inside a base64 text is masked at each of the three byte offsets, whatever precedes it.

Base64 writes 3 bytes as 4 characters: a secret that starts 0, 1 or 2 bytes into the encoded value
(``user:secret`` for HTTP Basic, a JSON document, a token in a cookie) shows as one of three
texts, and the character before it mixes its first bits with its neighbour's
(`openmolt_core._support.masking._b64_cores`). For each offset and each kind of character before
it (a letter, Basic's colon, a NUL, a byte of a non-ASCII character, padding's ``=``, a space),
in standard and URL-safe base64, padded or not, at the end of the value or followed by more: no
character made only of the secret's bits is shown, whole or streamed in pieces.
"""

from __future__ import annotations

import base64

import pytest

from openmolt_core._support.masking import MASK, StreamMask, mask, spellings

SECRETS = ("s3cr3tValue123", "s3cr3tValue1234", "s3cr3tValue12345")  # each length modulo 3
BEFORE = {"letter": b"u", "colon": b":", "nul": b"\x00", "non-ascii": "\u00e9".encode(), "=": b"="}
BEFORE["space"] = b" "
AFTER = {"nothing": b"", "one byte": b"!", "more": b'","exp":1700000000}'}
CODECS = {"standard": base64.b64encode, "url-safe": base64.urlsafe_b64encode}


def _bits_only(secret: bytes, offset: int, encode: object) -> str:
	"""The characters made of the secret's bits only, at ``offset`` bytes (mod 3) into the value."""
	encoded = encode(b"\0" * offset + secret).decode()  # type: ignore[operator]
	start = -(-8 * offset // 6)
	return encoded[start : 8 * (offset + len(secret)) // 6]


def _streamed(text: str, secrets: frozenset[str], size: int) -> str:
	stream = StreamMask(lambda: secrets)
	out = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
	return "".join(out) + stream.flush()


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("after", list(AFTER))
@pytest.mark.parametrize("before", list(BEFORE))
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_a_secret_in_base64_is_masked_at_each_offset(
	offset: int, before: str, after: str, codec: str
) -> None:
	encode = CODECS[codec]
	for secret in SECRETS:
		head = (BEFORE[before] * 6)[: 3 + offset]  # a non-ASCII character may be cut: bytes
		data = head + secret.encode() + AFTER[after]
		core = _bits_only(secret.encode(), offset, encode)
		for blob in {encode(data).decode(), encode(data).decode().rstrip("=")}:
			text = f"Authorization: Basic {blob} (echoed)"
			secrets = frozenset({secret})
			whole = mask(text, secrets)
			assert MASK in whole and core not in whole, (blob, whole)
			for size in (1, 3, 7):
				assert _streamed(text, secrets, size) == whole, (blob, size)


SLASHED = "sk-live/???/key123"  # its base64 holds a ``/`` at every offset


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_base64_with_its_slashes_escaped_as_json_may_write_them_is_masked(offset: int) -> None:
	r"""``\/`` for ``/``: PHP's ``json_encode`` writes every slash so, an API echoing a header too.

	The padded tail had this spelling; the cores, and the whole value's base64, did not.
	"""
	secrets = frozenset({SLASHED})
	for after in AFTER.values():
		data = b"cid:"[: 3 + offset] + SLASHED.encode() + after
		core = _bits_only(SLASHED.encode(), offset, base64.b64encode)
		assert "/" in core
		blob = base64.b64encode(data).decode().replace("/", "\\/")
		text = f'{{"error": "bad client", "header": "Basic {blob}"}}'
		whole = mask(text, secrets)
		assert core.replace("/", "\\/") not in whole, whole
		for size in (1, 4):
			assert _streamed(text, secrets, size) == whole


def test_every_spelling_holding_a_slash_is_masked_with_it_escaped() -> None:
	for spelt in sorted(s for s in spellings(SLASHED) if "/" in s and "\\/" not in s):
		escaped = spelt.replace("/", "\\/")
		shown = mask(f'{{"v": "{escaped}"}}', frozenset({SLASHED}))
		assert escaped not in shown and MASK in shown, (spelt, shown)
