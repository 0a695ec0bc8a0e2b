"""Stop sequences within what each API takes.

Chat Completions takes "up to 4 sequences" (the openai SDK's ``stop``) and the Gemini API "up to
5" (``GenerationConfig.stopSequences``): more were sent and refused with a 400 at every step. The
first ones are sent, with a warning naming the limit; another server decides for itself.
"""

from __future__ import annotations

import httpx
import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

STOPS = ["END", "STOP", "DONE", "###", "---", "==="]


def _never() -> httpx.AsyncClient:
	raise AssertionError("nothing is sent")


def test_chat_sends_at_most_four_stop_sequences(req) -> None:
	openai = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _never)
	with pytest.warns(ModelConfigWarning, match="4 stop sequences"):
		body = openai.build(req("gpt-4o", stop=STOPS))
	assert body["stop"] == STOPS[:4]


def test_gemini_sends_at_most_five_stop_sequences(req) -> None:
	gemini = GeminiProvider({"api_key": "k"}, _never)
	with pytest.warns(ModelConfigWarning, match="5 stop sequences"):
		body = gemini.build(req("gemini-2.5-flash", stop=STOPS))
	assert body["generationConfig"]["stopSequences"] == STOPS[:5]


@pytest.mark.filterwarnings("error")
def test_within_the_limit_all_are_sent(req) -> None:
	openai = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _never)
	assert openai.build(req("gpt-4o", stop=STOPS[:4]))["stop"] == STOPS[:4]
	gemini = GeminiProvider({"api_key": "k"}, _never)
	body = gemini.build(req("gemini-2.5-flash", stop=STOPS[:5]))
	assert body["generationConfig"]["stopSequences"] == STOPS[:5]


@pytest.mark.filterwarnings("error")
def test_another_server_gets_them_all(req) -> None:
	local = OpenAIProvider(
		{"api_key": "k", "api_mode": "chat", "base_url": "http://localhost:8000/v1"}, _never
	)
	assert local.build(req("qwen3", stop=STOPS))["stop"] == STOPS
