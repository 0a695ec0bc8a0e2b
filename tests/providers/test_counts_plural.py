"""Counts are printed with the noun they count: ``1 attempt``, ``2 attempts``."""

from __future__ import annotations

import httpx
import pytest

from openmolt_core._support.words import quantity
from openmolt_core.errors import ProviderError
from openmolt_providers.openai import OpenAIProvider


@pytest.mark.parametrize(
	("n", "noun", "plural", "text"),
	[
		(1, "attempt", None, "1 attempt"),
		(0, "step", None, "0 steps"),
		(2, "reply", "replies", "2 replies"),
		(12345, "token", None, "12,345 tokens"),
	],
)
def test_quantity(n, noun, plural, text) -> None:
	"""Singular for one, plural otherwise, thousands separated."""
	assert quantity(n, noun, plural) == text


@pytest.mark.anyio
async def test_a_provider_that_gave_up_after_one_attempt_says_attempt(server, req) -> None:
	"""A Retry-After beyond the policy gives up after one attempt: ``1 attempt``, not ``1 attempts``."""
	server.reply(httpx.Response(429, headers={"retry-after": "3600"}))
	provider = OpenAIProvider({"api_key": "sk-test-abcdef"}, server.http, sleep=server.sleep)
	with pytest.raises(ProviderError) as info:
		await provider.generate(req("gpt-4.1"))
	assert "gave up after 1 attempt)" in str(info.value)
