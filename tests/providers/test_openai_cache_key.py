"""prompt_cache_key stays within the 64 characters the OpenAI API takes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from openmolt_providers.openai import OpenAIProvider
from openmolt_providers.openai._models import CACHE_KEY_LIMIT, cache_key

from .conftest import make_request

pytestmark = pytest.mark.anyio

LONG = "openmolt:Quarterly revenue reconciliation assistant for the finance team (EMEA)"


@pytest.mark.parametrize("mode", ["responses", "chat"])
async def test_a_long_agent_name_gives_a_key_the_api_takes(server, load, mode) -> None:
	"""An agent named with 70 characters: the key sent is at most 64, stable, and its own."""
	server.reply(load("openai_text" if mode == "responses" else "openai_chat"))
	p = OpenAIProvider({"api_key": "sk-test-123456", "api_mode": mode}, server.http)
	request = replace(make_request("gpt-4.1"), cache_key=LONG)
	await p.generate(request)
	await p.generate(request)
	first, second = (r.content for r in server.requests)
	assert first == second  # the same key at every call: the cache routing holds
	sent = server.body["prompt_cache_key"]
	assert len(sent) <= CACHE_KEY_LIMIT
	assert sent.startswith("openmolt:Quarterly revenue")
	assert cache_key(LONG + "2") != sent  # names that share their start stay apart


def test_a_short_key_is_sent_as_it_is() -> None:
	"""A key within the limit is unchanged (the prefix caches of existing agents keep hitting)."""
	assert cache_key("openmolt:Finder") == "openmolt:Finder"
	exact = "k" * CACHE_KEY_LIMIT
	assert cache_key(exact) == exact
