"""An error body sent with 200 in answer to a stream is that request's error, not a server that
does not stream.

Gateways (OpenRouter, LiteLLM, vLLM) answer with the API's error object and status 200; asked
for a stream, some send it as one JSON body. It was taken for a server that does not stream: the
provider stopped streaming for good (a `NotStreamingWarning`), and asked again without streaming
(a second request).
"""

from __future__ import annotations

import warnings
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, make_request, provider

pytestmark = pytest.mark.anyio

BODIES: dict[str, tuple[dict[str, Any], bool]] = {
	"anthropic": (
		{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
		True,
	),
	"chat": ({"error": {"code": 502, "message": "Upstream error from provider"}}, True),
	"openai": ({"error": {"code": 400, "message": "Invalid value for 'input'"}}, False),
	"google": (
		{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
		True,
	),
}


@pytest.mark.parametrize("vendor", sorted(BODIES))
async def test_an_error_body_to_a_stream_is_raised_and_streaming_stays_on(vendor) -> None:
	"""The body's error, retryable as its status says; one request; the provider still streams."""
	body, retryable = BODIES[vendor]
	calls: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return httpx.Response(200, json=body)

	p = provider(vendor, handle)
	if vendor == "openai":
		p.may_fall_back = False
	with warnings.catch_warnings(record=True) as warned:
		warnings.simplefilter("always")
		with pytest.raises(ProviderError) as caught:
			async for _ in p.stream(make_request(MODELS[vendor])):
				pass
	assert caught.value.retryable is retryable
	assert len(calls) == 1 and p.streams
	assert not [w for w in warned if "does not stream" in str(w.message)]


@pytest.mark.parametrize("vendor", ["openai", "chat"])
@pytest.mark.parametrize(
	("error", "status", "retryable"),
	[
		({"error": {"code": 400, "message": "Invalid value for 'input'"}}, 400, False),
		({"error": {"message": "overloaded", "type": "server_error"}}, 500, True),
		({"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}, 400, False),
	],
)
async def test_an_error_event_of_a_gateway_is_the_error_it_names(
	vendor, error, status, retryable
) -> None:
	"""A gateway's error sent as a stream's event, without the Responses API's ``type`` (as
	OpenRouter and vLLM send it, and as the Chat stream already read it): on Responses it was an
	unknown event, and the stream "ended before the reply was complete", retried even for a 400."""
	import json

	body = f"data: {json.dumps(error)}\n\n"

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)

	p = provider(vendor, handle)
	with pytest.raises(ProviderError) as caught:
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	assert "the stream failed" in str(caught.value)
	assert caught.value.status_code == status
	assert caught.value.retryable is retryable
