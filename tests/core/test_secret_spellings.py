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
