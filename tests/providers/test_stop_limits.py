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


AZURE = [
	"https://my-res.openai.azure.com/openai/v1",
	"https://my-res.openai.azure.com/openai/deployments/gpt-4o",
	"https://my-res.cognitiveservices.azure.com/openai/v1",
	"https://MY-RES.OPENAI.AZURE.COM/openai/v1",
]


@pytest.mark.parametrize("base_url", AZURE)
def test_azure_openai_sends_at_most_four_stop_sequences(req, base_url: str) -> None:
	"""Azure OpenAI's Chat Completions takes "up to 4 sequences" as well (its REST reference):
	the limit held at api.openai.com only, so an Azure deployment got all six and a 400."""
	azure = OpenAIProvider({"api_key": "k", "api_mode": "chat", "base_url": base_url}, _never)
	with pytest.warns(ModelConfigWarning, match="4 stop sequences"):
		body = azure.build(req("gpt-4o", stop=STOPS))
	assert body["stop"] == STOPS[:4]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
	"base_url",
	[
		# Azure AI Foundry's other models (its /models route) and a host only named like Azure's.
		"https://my-res.services.ai.azure.com/models",
		"https://openai.azure.com.example.org/v1",
		"https://example.org/openai.azure.com/v1",
	],
)
def test_a_server_only_like_azure_openai_gets_them_all(req, base_url: str) -> None:
	other = OpenAIProvider({"api_key": "k", "api_mode": "chat", "base_url": base_url}, _never)
	assert other.build(req("gpt-4o", stop=STOPS))["stop"] == STOPS
