"""Anthropic reads every text file as a ``document`` with a ``text`` source.

The Messages API takes a plain-text document as ``{"type": "text", "media_type": "text/plain",
"data": <the text>}`` (the anthropic SDK's ``PlainTextSourceParam``: ``text/plain`` is its only
media type). Only ``text/plain`` went that way, so a CSV, Markdown or JSON file was refused
before sending though its text is as readable; ``text/plain; charset=utf-8`` was refused too.
Every text file now goes as its text, decoded as UTF-8; one that is not UTF-8 is refused before
anything is sent, naming the file.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from openmolt_core.errors import ProviderError
from openmolt_core.llm import Attachment
from openmolt_providers.anthropic import AnthropicProvider
from tests.providers.conftest import make_request
from tests.providers.test_sdk_conformance import materialize, strict_adapter

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("sdk-types")]

REPLY = {"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}


@pytest.fixture(scope="module")
def params() -> TypeAdapter[Any]:
	from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

	return strict_adapter(MessageCreateParamsNonStreaming)


def _b64(data: bytes) -> str:
	return base64.b64encode(data).decode()


async def _send(attachment: Attachment) -> tuple[list[httpx.Request], Any]:
	sent: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json=REPLY)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	p = AnthropicProvider({"api_key": "sk-ant-test"}, lambda: client)
	request = make_request("claude-sonnet-4-5", attachments=[attachment])
	try:
		return sent, await p.generate(request)
	except ProviderError as exc:
		return sent, exc


@pytest.mark.parametrize(
	("kind", "text"),
	[
		("text/csv", "city,zip\nOslo,0150\n"),
		("text/markdown", "# Zoë's notes\n\n- one"),
		("text/plain; charset=utf-8", "Zoë's notes"),
		("application/json", '{"city": "Oslo"}'),
		("text/html", "<p>Zoë</p>"),
		("application/x-yaml", "city: Oslo\n"),
	],
)
async def test_a_text_file_goes_as_a_text_document(params, kind: str, text: str) -> None:
	"""Its text, decoded, in a ``text`` source of media type ``text/plain``."""
	sent, reply = await _send(Attachment(kind, _b64(text.encode()), "data"))
	assert not isinstance(reply, ProviderError), reply
	body = json.loads(sent[0].content)
	block = body["messages"][0]["content"][0]
	assert block == {
		"type": "document",
		"source": {"type": "text", "media_type": "text/plain", "data": text},
	}
	materialize(params.validate_python(body))


async def test_a_byte_order_mark_is_not_part_of_the_text() -> None:
	"""A UTF-8 file that starts with a BOM: the text after it."""
	sent, _ = await _send(Attachment("text/csv", _b64(b"\xef\xbb\xbfa,b\n"), "bom.csv"))
	source = json.loads(sent[0].content)["messages"][0]["content"][0]["source"]
	assert source["data"] == "a,b\n"


@pytest.mark.parametrize(
	"data",
	[
		_b64("café".encode("latin-1")),  # not UTF-8
		"not base64!",
	],
)
async def test_a_text_file_that_is_not_utf8_is_refused_before_sending(data: str) -> None:
	"""Named, with the fix; no request goes out, and it is not retried."""
	sent, error = await _send(Attachment("text/csv", data, "prices.csv"))
	assert sent == [] and isinstance(error, ProviderError) and not error.retryable
	message = str(error)
	assert "'prices.csv'" in message and "UTF-8" in message and "text/csv" in message
