"""A secret that spans lines (a PEM private key) is masked whatever its lines end with.

Private keys come in lines: a GitHub App's key, a service account's. The environment often
holds one with ``\\n`` written out (``PRIVATE_KEY="-----BEGIN...\\nMIIE..."``, as ``.env`` files
and CI settings keep it) and a program shows it with real line breaks, or with CRLF (a file
from Windows, an HTTP body), or indented (YAML, a log's continuation lines), or only its body
(a library that strips the armour). Each of its key lines is a part of the secret that must not
show: every spelling masks them, and the armour lines (``-----BEGIN PRIVATE KEY-----``, words
and spaces) stay readable.
"""

from __future__ import annotations

import base64
import json

import pytest

from openmolt_core._support.masking import MASK, mask

BODY = base64.b64encode(bytes(range(256)) + b"an RSA key's body, more or less").decode()
LINES = [BODY[i : i + 64] for i in range(0, len(BODY), 64)]
PEM = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(LINES) + "\n-----END PRIVATE KEY-----\n"
ESCAPED = PEM.replace("\n", "\\n")  # as the environment holds it


def shown(text: str) -> list[str]:
	"""The key lines a text still shows (a line shorter than 16 characters, the last, aside)."""
	return [line for line in LINES if len(line) >= 16 and line in text]


@pytest.mark.parametrize("held", [PEM, ESCAPED], ids=["real", "escaped"])
@pytest.mark.parametrize(
	"spell",
	[
		lambda k: k,
		lambda k: k.replace("\n", "\r\n"),
		lambda k: k.replace("\n", "\\n"),
		lambda k: "\n".join("    " + line for line in k.splitlines()),
		lambda k: "".join(LINES),
		lambda k: f"line 3 of the key: {LINES[2]}",
		lambda k: json.dumps({"key": k.replace("\n", "\r\n")}),
	],
	ids=["lf", "crlf", "escaped", "indented", "body", "one-line", "json-crlf"],
)
def test_each_line_of_a_multiline_secret_is_masked(held: str, spell: object) -> None:
	text = "before " + spell(PEM) + " after"  # type: ignore[operator]
	masked = mask(text, frozenset({held}))
	assert shown(masked) == [], masked
	assert MASK in masked
	assert masked.startswith("before ") and masked.endswith(" after")


def test_the_armour_and_words_stay_readable() -> None:
	"""``-----BEGIN PRIVATE KEY-----`` alone is no secret; a one-line secret masks no lines."""
	text = "paste it between -----BEGIN PRIVATE KEY----- and -----END PRIVATE KEY-----"
	assert mask(text, frozenset({PEM})) == text
	assert mask("a\nb c", frozenset({"s3cr3t-value-123456"})) == "a\nb c"


KEY = "sk-live-Ab3dE5f9Qx7yZ2wV8u"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\n    ", "\r\n\t"])
def test_a_secret_split_by_a_line_break_anywhere_is_masked(newline: str) -> None:
	"""A tool that wraps its output at a width breaks a key where the width falls."""
	for at in range(1, len(KEY)):
		text = f"Authorization: Bearer {KEY[:at]}{newline}{KEY[at:]} (expires soon)\nnext line"
		masked = mask(text, frozenset({KEY}))
		assert masked == f"Authorization: Bearer {MASK} (expires soon)\nnext line", at


def test_lines_that_only_look_alike_are_left_as_they_are() -> None:
	"""Text around a break that does not spell the secret is untouched."""
	text = f"{KEY[:10]}\nsomething else\n{KEY[10:]}x"
	assert mask(text, frozenset({KEY})) == text
