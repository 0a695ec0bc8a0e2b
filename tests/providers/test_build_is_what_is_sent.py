"""A provider's public ``build`` is the body its calls send, a subclass's own ``build`` included.

``generate`` and ``stream`` called each API's module builder directly, so a subclass that
overrode ``build`` (to add a vendor field its gateway needs) saw its change in ``build``'s
answer and in none of the requests sent. The contract now: what ``build`` returns is what goes
out, in every call path; the built-in ``build`` costs the calls no copy (they send the builder's
body, which only ``build``'s caller gets a copy of).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers._replies import MODELS
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

CLASSES: dict[str, type[Any]] = {
	"openai": OpenAIProvider,
	"chat": OpenAIProvider,
	"anthropic": AnthropicProvider,
	"google": GeminiProvider,
}

SETTINGS = {
	"openai": {"api_key": "sk-test"},
	"chat": {"api_key": "sk-test", "api_mode": "chat"},
	"anthropic": {"api_key": "sk-ant-test"},
	"google": {"api_key": "AIza-test"},
}


def _tagged(cls: type[Any]) -> type[Any]:
	class Tagged(cls):  # type: ignore[misc, valid-type]
		def build(self, request: Any) -> dict[str, Any]:
			body: dict[str, Any] = super().build(request)
			body["metadata"] = {"gateway": "tagged"}
			return body

	return Tagged


async def _sent(cls: type[Any], vendor: str, how: str) -> list[dict[str, Any]]:
	"""The bodies one call sends (the server refuses it: only the request matters here)."""
	seen: list[dict[str, Any]] = []

	def handle(request: httpx.Request) -> httpx.Response:
		seen.append(json.loads(request.content))
		return httpx.Response(400, json={"error": {"message": "refused by the test"}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))

	async def sleep(_: float) -> None:
		return None

	provider = cls(SETTINGS[vendor], lambda: client, sleep=sleep)
	request = make_request(MODELS[vendor], history=True)
	with pytest.raises(ProviderError):
		if how == "generate":
			await provider.generate(request)
		else:
			async for _ in provider.stream(request):
				pass
	await client.aclose()
	assert seen
	return seen


@pytest.mark.parametrize("how", ["generate", "stream"])
@pytest.mark.parametrize("vendor", CLASSES)
async def test_a_subclass_s_build_is_the_body_sent(vendor: str, how: str) -> None:
	for body in await _sent(_tagged(CLASSES[vendor]), vendor, how):
		assert body["metadata"] == {"gateway": "tagged"}


@pytest.mark.parametrize("how", ["generate", "stream"])
@pytest.mark.parametrize("vendor", CLASSES)
async def test_the_body_sent_is_what_build_returns(vendor: str, how: str) -> None:
	provider = CLASSES[vendor](SETTINGS[vendor], lambda: httpx.AsyncClient())
	built = provider.build(make_request(MODELS[vendor], history=True))
	for body in await _sent(CLASSES[vendor], vendor, how):
		body.pop("stream", None)  # what a stream adds to the body of a call
		body.pop("stream_options", None)
		assert body == built
