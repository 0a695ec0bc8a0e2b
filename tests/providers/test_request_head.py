from __future__ import annotations

from typing import Any

import httpx
import pytest

from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

PROVIDERS = [
	(OpenAIProvider, {"api_key": "sk-a"}),
	(OpenAIProvider, {"api_key": "sk-a", "organization": "org-1", "base_url": "http://x:8/v1"}),
	(AnthropicProvider, {"api_key": "sk-ant-b", "headers": {"anthropic-beta": "b1"}}),
	(GeminiProvider, {"api_key": "AIza-c"}),
	(OpenAIProvider, {"api_key": "sk-a", "headers": {"Host": "proxy.example"}}),
	(OpenAIProvider, {"api_key": "sk-a", "headers": {"Content-Length": "7"}}),
]
IDS = ["openai", "base url", "anthropic", "gemini", "own host", "own length"]


def httpx_own(
	provider: Any, client: httpx.AsyncClient, url: str, body: bytes, stream: bool
) -> httpx.Request:
	"""The request httpx itself builds from the same URL, headers and body."""
	headers = {**client.headers, **provider.headers()}
	if stream:
		headers["accept"] = "text/event-stream"
	timeout = client.timeout if provider.timeout is None else httpx.Timeout(provider.timeout)
	return httpx.Request(
		"POST", url, headers=headers, content=body, extensions={"timeout": timeout.as_dict()}
	)


@pytest.mark.parametrize(("cls", "settings"), PROVIDERS, ids=IDS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("body", [b'{"a":"\xc3\xb8"}', b""], ids=["body", "empty"])
def test_a_request_is_what_httpx_builds(
	cls: Any, settings: dict[str, Any], stream: bool, body: bytes
) -> None:
	"""The request a provider builds once its head is known has httpx's own headers, in
	httpx's order, its body read, and the same URL and timeout, call after call."""
	client = httpx.AsyncClient(headers={"User-Agent": "openmolt"}, timeout=12.0)
	provider = cls(settings, lambda: client)
	url = provider.base_url + "/endpoint?alt=1"
	expected = httpx_own(provider, client, url, body, stream)
	for _ in range(2):  # the head is made on the first call, reused on the second
		request = provider._request(client, url, body, stream=stream)
		assert request.method == expected.method
		assert request.url == expected.url
		assert request.headers.raw == expected.headers.raw
		assert request.content == expected.content == body
		assert isinstance(request.stream, httpx.ByteStream)
		assert request.extensions == expected.extensions


async def test_requests_go_out_with_their_own_length(server: Any, req: Any) -> None:
	"""Each call's Content-Length is its own body's, on a head shared by every call."""
	ok = {"output": [{"type": "message", "content": [{"type": "output_text", "text": "{}"}]}]}
	server.reply(ok)
	provider = OpenAIProvider({"api_key": "sk-a"}, server.http)
	await provider.generate(req("gpt-4.1"))
	longer = req("gpt-4.1")
	longer.system += " and more"
	await provider.generate(longer)
	first, second = server.requests
	for request in (first, second):
		assert request.headers["content-length"] == str(len(request.content))
		assert request.headers["host"] == "api.openai.com"
	assert len(second.content) > len(first.content)
