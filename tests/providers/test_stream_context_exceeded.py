"""A prompt past the context window is marked ``context_exceeded`` however the API says it.

Over plain HTTP a 400 naming the window was marked, so a run that compacts summarised and asked
again; the same refusal inside a reply (a failed Responses reply, asked for whole or streamed)
or as a stream's error event was not, and a streaming run ended on it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, Chunks, generate, make_request, provider

pytestmark = pytest.mark.anyio

WINDOW = (
	"Your input exceeds the context window of this model. Please adjust your input and try again."
)


def _sse(events: list[dict[str, Any]]) -> httpx.Response:
	text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
	kind = {"content-type": "text/event-stream"}
	return httpx.Response(200, headers=kind, stream=Chunks(text.encode(), 16))


async def _streamed(vendor: str, events: list[dict[str, Any]]) -> ProviderError:
	p = provider(vendor, lambda request: _sse(events))
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	return caught.value


FAILED = {"status": "failed", "error": {"code": "context_length_exceeded", "message": WINDOW}}

STREAMS = {
	"responses error event": (
		"openai",
		[{"type": "error", "code": "context_length_exceeded", "message": WINDOW}],
	),
	"responses failed": ("openai", [{"type": "response.failed", "response": FAILED}]),
	"chat error event": (
		"chat",
		[{"error": {"message": "This model's maximum context length is 8192 tokens", "code": 400}}],
	),
	"anthropic error event": (
		"anthropic",
		[
			{
				"type": "error",
				"error": {
					"type": "invalid_request_error",
					"message": "prompt is too long: 210000 tokens > 200000 maximum",
				},
			}
		],
	),
	"gemini error": (
		"google",
		[
			{
				"error": {
					"code": 400,
					"message": "The input token count (1200000) exceeds the maximum number of "
					"tokens allowed (1048576).",
					"status": "INVALID_ARGUMENT",
				}
			}
		],
	),
}


@pytest.mark.parametrize("case", sorted(STREAMS))
async def test_a_streamed_refusal_of_a_long_prompt_is_marked(case) -> None:
	"""A stream's error event or failed reply naming the window: the run compacts and asks again."""
	vendor, events = STREAMS[case]
	error = await _streamed(vendor, events)
	assert error.context_exceeded and not error.retryable
	assert "compaction" in str(error)  # the fix named, as over plain HTTP


async def test_a_failed_whole_reply_naming_the_window_is_marked() -> None:
	"""``status: failed`` with ``context_length_exceeded``, asked for without streaming."""
	with pytest.raises(ProviderError) as caught:
		await generate("openai", FAILED)
	assert caught.value.context_exceeded and "compaction" in str(caught.value)


@pytest.mark.parametrize(
	("vendor", "events"),
	[
		("openai", [{"type": "error", "code": "server_error", "message": "try again"}]),
		("chat", [{"error": {"message": "Unsupported value: 'temperature'", "code": 400}}]),
		("anthropic", [{"type": "error", "error": {"type": "overloaded_error", "message": "x"}}]),
	],
)
async def test_other_stream_errors_are_not_taken_for_a_long_prompt(vendor, events) -> None:
	"""An error event about something else is not marked."""
	assert not (await _streamed(vendor, events)).context_exceeded


@pytest.mark.parametrize("api_mode", ["chat", "responses"])
async def test_a_local_servers_context_refusal_is_not_taken_for_a_format_refusal(
	api_mode: str,
) -> None:
	"""vLLM's 400 "maximum context length" on a request with structured output: the window
	error at once. It was taken for a refusal of ``response_format`` (any 400 from another
	server is), so the request went again without it, to the same refusal."""
	from openmolt_providers.openai import OpenAIProvider
	from tests.providers.conftest import SCHEMA

	bodies: list[dict[str, Any]] = []

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		message = "This model's maximum context length is 8192 tokens. However, you requested 9000"
		return httpx.Response(400, json={"error": {"message": message, "code": 400}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	settings = {"base_url": "http://localhost:8000/v1", "api_mode": api_mode}
	provider = OpenAIProvider(settings, lambda: client)
	request = make_request("qwen", schema=json.loads(json.dumps(SCHEMA)))
	request.response_mode = "strict"
	with pytest.raises(ProviderError) as caught:
		await provider.generate(request)
	assert caught.value.context_exceeded
	assert len(bodies) == 1 and not provider.plain_json
