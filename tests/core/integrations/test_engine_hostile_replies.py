"""The HTTP engine against hostile replies and hostile file references (review r9e)."""

import time
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ToolError
from tests.core.integrations.test_engine_security import context, http_request_tool

pytestmark = pytest.mark.anyio


async def fetch(handler: Any, **extra: Any) -> Any:
	return await http_request_tool().function(
		{"url": "https://api.example.com/x", **extra}, context(handler)
	)


@pytest.mark.parametrize(
	"charset", ["bogus-xx", "base64", "zlib", "rot13", "idna", "punycode", "x-user-defined"]
)
@pytest.mark.parametrize("status", [200, 500])
async def test_a_charset_the_service_names_never_breaks_or_stalls_decoding(
	charset: str, status: int
) -> None:
	"""An unknown, non-text or pathological charset reads as UTF-8: the text, or a ToolError.

	Before, an unknown charset raised LookupError (not a tool error, unredacted), idna raised
	UnicodeError, and punycode decodes in quadratic time: a reply of a few megabytes held the
	event loop (every agent of the process) for hours.
	"""
	body = b"a-" + b"9" * 400_000

	def handler(request: httpx.Request) -> httpx.Response:
		ctype = f"text/plain; charset={charset}"
		return httpx.Response(status, headers={"content-type": ctype}, content=body)

	began = time.perf_counter()
	if status == 200:
		out = await fetch(handler)
		assert out["body"] == body.decode()
	else:
		with pytest.raises(ToolError, match="answered 500"):
			await fetch(handler)
	assert time.perf_counter() - began < 2


async def test_a_known_charset_is_still_honoured() -> None:
	"""latin-1 and UTF-16 replies decode in their charset."""

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			200,
			headers={"content-type": "text/plain; charset=latin-1"},
			content="café".encode("latin-1"),
		)

	assert (await fetch(handler))["body"] == "café"
