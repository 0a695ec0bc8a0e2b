"""Spellings the first round left: base64 wrapped in lines (MIME at 76, PEM at 64, CRLF, inside
JSON), hex in mixed case, HTML character references, UTF-16 (LE/BE, with a BOM) bytes."""

from __future__ import annotations

import base64
import json
import textwrap

import pytest

from openmolt_core._support.masking import MASK, mask, mask_deep

SECRET = "sk-live-Abc123Def456Ghi789"
SECRETS = frozenset({SECRET})


def wrapped(data: bytes, width: int, newline: str = "\n") -> str:
	return newline.join(textwrap.wrap(base64.b64encode(data).decode(), width))


def straddled(width: int) -> bytes:
	"""Bytes whose base64 has a line break inside the secret's part, at every alignment."""
	return b"x" * (width * 3 // 4 - 5) + SECRET.encode() + b" and more text after it"


@pytest.mark.parametrize("width", [76, 64])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_base64_wrapped_in_lines_is_masked(width: int, newline: str) -> None:
	body = wrapped(straddled(width), width, newline)
	message = f"Content-Type: application/octet-stream{newline}{newline}{body}{newline}--b--"
	for text in (message, json.dumps({"raw": message})):
		masked = mask(text, SECRETS)
		assert MASK in masked, text
		assert SECRET.encode() not in _decoded_lines(masked)
	assert masked.endswith('--b--"}')  # what is around the block is kept


def _decoded_lines(text: str) -> bytes:
	joined = "".join(
		line for line in text.replace("\\r\\n", "\n").replace("\\n", "\n").splitlines()
	)
	pieces = [p for p in joined.replace(MASK, " ").split() if len(p) >= 8]
	out = b""
	for piece in pieces:
		try:
			out += base64.b64decode(piece + "==", validate=False)
		except ValueError:
			continue
	return out


def test_hex_in_mixed_case_is_masked() -> None:
	hexed = SECRET.encode().hex()
	mixed = hexed[:10] + hexed[10:].upper()
	assert MASK in mask(f"dump: {mixed}.", SECRETS) and mixed not in mask(mixed, SECRETS)


def test_html_character_references_are_masked() -> None:
	texts = [
		"&#115;" + SECRET[1:],
		"&#x73;" + SECRET[1:],
		"".join(f"&#{ord(c)};" for c in SECRET),
		"".join(f"&#X{ord(c):X};" for c in SECRET),
		"<p>key: &amp;#115;" + SECRET[1:] + "</p>",
	]
	for text in texts:
		masked = mask(text, SECRETS)
		assert MASK in masked and "&#" not in masked.replace("&amp;", ""), masked


def test_utf16_bytes_are_masked_raw_and_escaped() -> None:
	for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
		data = bom + f"the key {SECRET}".encode(codec)
		assert MASK in mask(repr(data), SECRETS)  # a trace shows the bytes
		shown = mask_deep({"attachment": data}, SECRETS)["attachment"]
		assert MASK in shown
		assert SECRET not in shown.replace("\x00", "")


def test_plain_text_is_left_as_it_is() -> None:
	text = "a line\nanother line with words\n" + "x" * 50 + "\n" + "y" * 50 + "\n&amp; &#169; 00\\"
	assert mask(text, SECRETS) == text


def test_base32_is_masked_in_either_case() -> None:
	"""The secret whole in base32 (RFC 4648, as TOTP and case-insensitive transports write it)."""
	encoded = base64.b32encode(SECRET.encode()).decode()
	for spelling in (encoded, encoded.rstrip("="), encoded.lower(), encoded.lower().rstrip("=")):
		assert mask(f"otp: {spelling}.", SECRETS) == f"otp: {MASK}.", spelling


def test_bytes_are_masked_in_every_spelling_whatever_surrounds_them() -> None:
	"""mask_bytes finds a secret in bytes that are not text, as its UTF-8 when it is not ASCII."""
	from openmolt_core.secrets import mask_bytes

	accented = "pässwörd-Geheim42"
	secrets = frozenset({SECRET, accented})
	cases = [
		b"\x89PNG\r\n\x1a\n\x00\xff" + SECRET.encode() + b"\x00\xfe",
		b"\xff\xfe" + SECRET.encode("utf-16-le") + b"\xd8\x00",
		b"\x00\x01" + base64.b64encode(b"user:" + SECRET.encode()) + b"\x80",
		b"\xc0" + SECRET.encode().hex().encode() + b"\xc1",
		b"PK\x03\x04" + accented.encode() + b"\x00",
	]
	for data in cases:
		masked = mask_bytes(data, secrets)
		assert MASK.encode() in masked, data
		assert SECRET.encode() not in masked and accented.encode() not in masked
		assert masked[:1] == data[:1] and masked[-1:] == data[-1:]  # the bytes around it are kept
	clean = bytes(range(256)) * 4
	assert mask_bytes(clean, secrets) is clean
