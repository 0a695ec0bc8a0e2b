"""A provider's error message is masked whole before it is cut: no prefix of a secret survives.

A gateway that echoes the headers it got put a secret across the 500th character; cut first,
the secret's start stayed in the error, where no redactor could match it any more.
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_providers._common import MAX_ERROR_CHARS
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers._replies import MODELS, make_request

pytestmark = pytest.mark.anyio

PROXY = "PROXYSECRETabcdefghijklmnopqrstuvwxyz0123456789"
KEY = "key-0123456789abcdefghijklmnop"
CLASSES: dict[str, Any] = {
	"openai": OpenAIProvider,
	"anthropic": AnthropicProvider,
	"google": GeminiProvider,
}


def _echo(secret: str, at: int) -> Any:
	"""A server whose error message holds ``secret`` from character ``at`` of the message."""

	def handle(request: httpx.Request) -> httpx.Response:
		message = "x" * at + secret + " and more"
		return httpx.Response(400, json={"error": {"message": message}})

	return handle


def _provider(vendor: str, handler: Any, **settings: Any) -> Any:
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return CLASSES[vendor]({"api_key": KEY, **settings}, lambda: client)


def _prefixes(secret: str) -> list[str]:
	"""Every spelling's first 8 characters: what a cut would leave."""
	return [secret[:8], base64.b64encode(secret.encode()).decode()[:8]]


@pytest.mark.parametrize("vendor", sorted(CLASSES))
@pytest.mark.parametrize("spelling", ["raw", "base64"])
async def test_an_extra_header_straddling_the_cut_leaves_no_prefix(vendor, spelling) -> None:
	"""A header's value that crosses the cut is masked before the message is cut."""
	shown = PROXY if spelling == "raw" else base64.b64encode(PROXY.encode()).decode()
	for at in (MAX_ERROR_CHARS - 12, MAX_ERROR_CHARS - 30):
		p = _provider(vendor, _echo(shown, at), headers={"X-Proxy-Auth": PROXY})
		with pytest.raises(ProviderError) as caught:
			await p.generate(make_request(MODELS[vendor]))
		text = str(caught.value)
		assert "xxxxx" in text
		assert not any(prefix in text for prefix in _prefixes(PROXY)), text[-80:]


@pytest.mark.parametrize("vendor", sorted(CLASSES))
async def test_the_key_straddling_the_cut_leaves_no_prefix(vendor) -> None:
	"""The provider's own key, echoed across the cut, leaves nothing of itself."""
	p = _provider(vendor, _echo(KEY, MAX_ERROR_CHARS - 10))
	with pytest.raises(ProviderError) as caught:
		await p.generate(make_request(MODELS[vendor]))
	assert KEY[:8] not in str(caught.value)


async def test_a_secret_the_instance_knows_is_masked_before_the_cut() -> None:
	"""A secret of the instance's set (not the provider's) is masked before the cut as well."""
	other = "INSTANCESECRET-zyxwvutsrqponm-987654321"
	client = httpx.AsyncClient(transport=httpx.MockTransport(_echo(other, MAX_ERROR_CHARS - 12)))
	om = OpenMolt({"openai": {"api_key": KEY}}, http_client=client)
	om.secrets.add(other)
	p = om.provider("openai")
	with pytest.raises(ProviderError) as caught:
		await p.generate(make_request(MODELS["openai"]))
	assert other[:8] not in str(caught.value)
	await om.aclose()


def test_scrub_masks_then_cuts() -> None:
	"""``scrub`` of a long message is at most the cap, and masked."""
	p = _provider("openai", _echo("", 0), headers={"X-Proxy-Auth": PROXY})
	text = p.scrub("y" * (MAX_ERROR_CHARS - 5) + PROXY)
	assert len(text) <= MAX_ERROR_CHARS and PROXY[:5] not in text
