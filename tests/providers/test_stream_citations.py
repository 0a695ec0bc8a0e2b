"""An Anthropic stream whose text cites web search results reads as the same reply sent whole.

The API opens a text block with ``"citations": null`` (the SDK's ``TextBlock`` has it optional and
its stream accumulator reads ``if not content.citations``) and sends each citation as a
``citations_delta``. The reader appended to the field it found, so ``null`` failed the whole
stream as a reply "not of the shape of the Messages API": a streamed call with ``search`` on
failed whenever the answer cited what it found.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.providers._replies import Chunks, make_request, provider

pytestmark = pytest.mark.anyio

CITE = {
	"type": "web_search_result_location",
	"url": "https://example.com/oslo",
	"title": "Oslo",
	"encrypted_index": "Eo8BCioIAhgB",
	"cited_text": "Oslo is the capital of Norway.",
}
TEXT = '{"commands":[{"type":"finish","status":"success","output":"Oslo"}]}'
EVENTS: list[dict[str, Any]] = [
	{"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 9}}},
	{
		"type": "content_block_start",
		"index": 0,
		"content_block": {"type": "text", "text": "", "citations": None},
	},
	{
		"type": "content_block_delta",
		"index": 0,
		"delta": {"type": "citations_delta", "citation": CITE},
	},
	{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TEXT}},
	{"type": "content_block_stop", "index": 0},
	{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
	{"type": "message_stop"},
]


@pytest.mark.parametrize("size", [1, 7, 10_000])
async def test_a_cited_text_block_that_opens_with_null_citations_streams(size: int) -> None:
	"""The text streams, the reply runs, and the block keeps its citation as the whole reply has it."""
	body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in EVENTS).encode()
	sse = {"content-type": "text/event-stream"}
	p = provider(
		"anthropic", lambda request: httpx.Response(200, headers=sse, stream=Chunks(body, size))
	)
	p.max_retries = 0
	deltas, finals = [], []
	async for chunk in p.stream(make_request("claude-sonnet-4-5")):
		(finals if hasattr(chunk, "finish_reason") else deltas).append(chunk)
	[final] = finals
	assert "".join(d.text for d in deltas) == final.text == TEXT
	assert final.finish_reason == "stop"
	assert final.raw["content"][0]["citations"] == [CITE]
