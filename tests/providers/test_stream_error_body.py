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
