"""A refusal sent as a stream's event, for a request without structured output, is not asked again.

A server other than OpenAI's that refuses a request with structured output may be refusing the
format (`openmolt_providers.openai._fallback`): the request is sent once more, whole and plain.
A stream's error event with such a status (a gateway's 400 after its 200) was sent again whole
even when the request carried no format: the same request, refused the same way, asked twice.
"""

from __future__ import annotations

import json

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


async def test_a_refused_stream_without_a_format_is_asked_once() -> None:
	"""A 400 event: the provider's error after one request."""
	asked: list[bool] = []

	def handler(request: httpx.Request) -> httpx.Response:
		asked.append(json.loads(request.content).get("stream", False))
		event = {"error": {"code": 400, "message": "Upstream refused the request"}}
		body = f"data: {json.dumps(event)}\n\n".encode()
		return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

	chat = provider("chat", handler, base_url="https://openrouter.ai/api/v1")
	with pytest.raises(ProviderError) as caught:
		[c async for c in chat.stream(make_request("openai/gpt-5-mini"))]
	assert caught.value.status_code == 400
	assert asked == [True]


async def test_with_a_format_it_is_still_asked_whole() -> None:
	"""The same event for a request with structured output: asked once more, whole (where a
	refused format is then left out, `_fallback.post`)."""
	sent: list[dict[str, object]] = []

	def handler(request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		sent.append(body)
		if body.get("stream"):
			event = {"error": {"code": 400, "message": "response_format is not supported"}}
			text = f"data: {json.dumps(event)}\n\n".encode()
			return httpx.Response(200, content=text, headers={"content-type": "text/event-stream"})
		message = {"role": "assistant", "content": '{"a": "x"}'}
		return httpx.Response(
			200, json={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
		)

	chat = provider("chat", handler, base_url="https://openrouter.ai/api/v1")
	request = make_request("openai/gpt-5-mini", schema=SCHEMA)
	last = [c async for c in chat.stream(request)][-1]
	assert last.text == '{"a": "x"}'
	assert [("response_format" in b, bool(b.get("stream"))) for b in sent] == [
		(True, True),
		(True, False),
	]
