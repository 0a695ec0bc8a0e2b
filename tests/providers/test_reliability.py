from __future__ import annotations

import httpx
import pytest

from openmolt_core.errors import ConfigurationError, ProviderError
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

OK = {
	"output": [{"type": "message", "content": [{"type": "output_text", "text": "{}"}]}],
	"status": "completed",
}


def openai(server, **settings):
	return OpenAIProvider(
		{"api_key": "sk-secret-abcdef", **settings}, server.http, sleep=server.sleep
	)


async def test_retry_on_429_honours_retry_after(server, req) -> None:
	"""A 429 with Retry-After waits that long (no real sleep) and the retry succeeds."""
	server.reply(
		httpx.Response(
			429, headers={"retry-after": "2.5"}, json={"error": {"message": "slow down"}}
		),
		httpx.Response(503, headers={"retry-after-ms": "150"}),
		OK,
	)
	response = await openai(server).generate(req("gpt-4.1"))
	assert response.text == "{}"
	assert len(server.requests) == 3
	assert server.sleeps == [2.5, 0.15]
	assert server.requests[0].content == server.requests[2].content


async def test_retries_are_bounded(server, req) -> None:
	"""After max_retries the error names the status, the attempts and what to do."""
	server.reply(httpx.Response(500, json={"error": {"message": "internal"}}))
	with pytest.raises(ProviderError) as info:
		await openai(server, max_retries=2).generate(req("gpt-4.1"))
	assert len(server.requests) == 3 and len(server.sleeps) == 2
	assert info.value.status_code == 500 and info.value.retryable
	assert "openai:gpt-4.1" in str(info.value) and "3 attempts" in str(info.value)


async def test_a_retry_after_beyond_the_policy_is_not_waited_for(server, req) -> None:
	"""A Retry-After longer than the policy's max_wait fails at once, saying so (one policy
	with the HTTP tools); a shorter one is waited for exactly."""
	server.reply(httpx.Response(429, headers={"retry-after": "3600"}))
	with pytest.raises(ProviderError, match=r"asked to wait 3600 s, longer than .*max_wait"):
		await openai(server).generate(req("gpt-4.1"))
	assert server.sleeps == [] and len(server.requests) == 1
	server.reply(httpx.Response(429, headers={"retry-after": "12"}), OK)
	await openai(server).generate(req("gpt-4.1"))
	assert server.sleeps == [12.0]


async def test_connection_errors_are_retried(server, req) -> None:
	"""A connection error is retried, then reported without a traceback-only message."""

	def refuse(request: httpx.Request) -> httpx.Response:
		raise httpx.ConnectError("refused", request=request)

	server.reply(refuse)
	with pytest.raises(ProviderError, match=r"could not reach https://api\.openai\.com/v1"):
		await openai(server, max_retries=1).generate(req("gpt-4.1"))
	assert len(server.requests) == 2


@pytest.mark.parametrize(
	"base_url",
	[
		"http://localhost:11434/v1",
		"http://127.0.0.1:8000/v1",
		"http://[::1]:8080/v1",
		"http://0.0.0.0:8080/v1",  # as llama.cpp's and vLLM's logs print the address
		"http://[::]:8000/v1",
	],
)
async def test_a_local_server_that_is_down_is_said_once_without_retries(
	server, req, base_url
) -> None:
	"""A failed connect on this machine means nothing listens: one attempt, and the hint."""

	def refuse(request: httpx.Request) -> httpx.Response:
		raise httpx.ConnectError("All connection attempts failed", request=request)

	server.reply(refuse)
	with pytest.raises(ProviderError) as info:
		await openai(server, base_url=base_url).generate(req("llama3.2"))
	assert len(server.requests) == 1 and server.sleeps == []
	text = str(info.value)
	assert f"nothing listens at {base_url}" in text
	assert "ollama serve" in text and "vllm serve" in text and "llama-server" in text
	assert info.value.retryable  # a fallback model may still answer


@pytest.mark.parametrize(
	("cls", "model", "says", "not_said"),
	[
		(AnthropicProvider, "claude-sonnet-4-5", ("ollama serve", "litellm"), "vllm serve"),
		(GeminiProvider, "gemini-2.5-flash", ("litellm", "Gemini API"), "ollama serve"),
	],
)
async def test_the_local_server_hint_names_servers_of_that_api(
	server, req, cls, model, says, not_said
) -> None:
	"""Nothing listening at a local Anthropic or Gemini base_url: the hint names servers that
	speak that API, not the OpenAI-compatible ones (vLLM, llama.cpp)."""

	def refuse(request: httpx.Request) -> httpx.Response:
		raise httpx.ConnectError("All connection attempts failed", request=request)

	server.reply(refuse)
	provider = cls({"api_key": "k-test", "base_url": "http://localhost:4000/v1"}, server.http)
	with pytest.raises(ProviderError) as info:
		await provider.generate(req(model))
	text = str(info.value)
	assert "nothing listens at http://localhost:4000/v1" in text
	assert all(s in text for s in says) and not_said not in text and "llama-server" not in text


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_not_retried(server, req, status) -> None:
	"""4xx errors fail at once with provider, model and fix, and never the key."""
	server.reply(
		httpx.Response(
			status, json={"error": {"message": "Incorrect API key provided: sk-secret-abcdef"}}
		)
	)
	with pytest.raises(ProviderError) as info:
		await openai(server).generate(req("gpt-5-mini"))
	text = str(info.value)
	assert len(server.requests) == 1 and not server.sleeps
	assert text.startswith("openai:gpt-5-mini: ")
	assert "sk-secret" not in text
	assert info.value.status_code == status and not info.value.retryable


async def test_401_names_the_variable(server, req) -> None:
	"""A rejected key says which variable to set."""
	server.reply(
		httpx.Response(
			401,
			json={
				"type": "error",
				"error": {"type": "authentication_error", "message": "invalid x-api-key"},
			},
		)
	)
	p = AnthropicProvider({"api_key": "k"}, server.http, sleep=server.sleep)
	with pytest.raises(ProviderError, match="OPENMOLT_ANTHROPIC_API_KEY"):
		await p.generate(req("claude-sonnet-4-5"))


async def test_400_carries_the_provider_message(server, req) -> None:
	"""A 400 shows the provider's reason and points at model_config."""
	server.reply(
		httpx.Response(
			400,
			json={
				"error": {
					"code": 400,
					"message": "Invalid JSON payload",
					"status": "INVALID_ARGUMENT",
				}
			},
		)
	)
	p = GeminiProvider({"api_key": "AIzaSyTestKey0000000000"}, server.http, sleep=server.sleep)
	with pytest.raises(ProviderError, match=r"Invalid JSON payload.*model_config"):
		await p.generate(req("gemini-2.5-flash"))


async def test_gemini_invalid_key_400(server, req) -> None:
	"""Gemini's 400 for a bad key is reported as a key problem, key redacted."""
	server.reply(
		httpx.Response(
			400,
			json={
				"error": {
					"code": 400,
					"message": "API key not valid. Please pass a valid API key.",
					"status": "INVALID_ARGUMENT",
				}
			},
		)
	)
	p = GeminiProvider({"api_key": "AIzaSyTestKey0000000000"}, server.http, sleep=server.sleep)
	with pytest.raises(ProviderError, match="OPENMOLT_GOOGLE_API_KEY"):
		await p.generate(req("gemini-2.5-flash"))


@pytest.mark.parametrize(
	("cls", "var", "model"),
	[
		(OpenAIProvider, "OPENMOLT_OPENAI_API_KEY", "gpt-5-mini"),
		(AnthropicProvider, "OPENMOLT_ANTHROPIC_API_KEY", "claude-sonnet-4-5"),
		(GeminiProvider, "OPENMOLT_GOOGLE_API_KEY", "gemini-2.5-flash"),
	],
)
async def test_missing_key_is_one_line_before_any_request(
	server, req, monkeypatch, cls, var, model
) -> None:
	"""Without a key, generate raises one line naming the variable, and nothing is sent."""
	monkeypatch.delenv(var, raising=False)
	p = cls({}, server.http)  # creating the provider needs no key
	with pytest.raises(ConfigurationError) as info:
		await p.generate(req(model))
	message = str(info.value)
	assert var in message and "\n" not in message
	assert server.requests == []


async def test_key_from_environment(server, req, monkeypatch) -> None:
	"""The key defaults to the environment variable, read at the first call."""
	p = GeminiProvider({}, server.http)
	monkeypatch.setenv("OPENMOLT_GOOGLE_API_KEY", "AIzaFromEnv000000000")
	server.reply({"candidates": [{"content": {"parts": [{"text": "{}"}]}, "finishReason": "STOP"}]})
	await p.generate(req("gemini-2.5-flash"))
	assert server.requests[0].headers["x-goog-api-key"] == "AIzaFromEnv000000000"


async def test_timeout_setting_reaches_the_request(server, req) -> None:
	"""The timeout setting is applied to each request."""
	seen = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request.extensions["timeout"])
		return httpx.Response(200, json=OK)

	server.reply(handler)
	await openai(server, timeout=7).generate(req("gpt-4.1"))
	assert seen[0]["read"] == 7.0


def test_bad_settings_are_configuration_errors(server) -> None:
	"""A wrong api_mode or max_retries fails when the provider is created."""
	with pytest.raises(ConfigurationError, match="api_mode"):
		OpenAIProvider({"api_mode": "completions"}, server.http)
	with pytest.raises(ConfigurationError, match="max_retries"):
		OpenAIProvider({"max_retries": -1}, server.http)


async def test_non_json_reply_is_a_clear_error(server, req) -> None:
	"""An HTML page from a wrong base_url gives a clear error."""
	server.reply(httpx.Response(200, text="<html>proxy</html>"))
	with pytest.raises(ProviderError, match="base_url"):
		await openai(server).generate(req("gpt-4.1"))


@pytest.mark.parametrize("name", ["openai", "anthropic", "google"])
def test_every_provider_takes_the_instances_retry_policy(name: str) -> None:
	"""OpenMolt(retry=...) reaches each built-in provider (it was lost for Anthropic and Gemini)."""
	from openmolt import OpenMolt

	om = OpenMolt(
		retry={"attempts": 2, "max_wait": 7.0},
		llm_providers={name: {"api_key": "k-test-123456"}},
	)
	provider = om.provider(name)
	assert provider.retry is om.retry  # type: ignore[attr-defined]


@pytest.mark.parametrize(
	"response",
	[
		httpx.Response(529, headers={"retry-after": "nan"}),
		httpx.Response(429, headers={"retry-after-ms": "NaN"}),
		httpx.Response(
			429,
			json={
				"error": {
					"code": 429,
					"status": "RESOURCE_EXHAUSTED",
					"details": [
						{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "nans"}
					],
				}
			},
		),
	],
)
async def test_a_wait_asked_for_as_no_number_is_backed_off_instead(server, req, response) -> None:
	"""'Retry-After: nan' (float reads it) was slept as NaN seconds: anyio raised ValueError."""
	server.reply(response, OK)
	answer = await openai(server).generate(req("gpt-4.1"))
	assert answer.text == "{}" and len(server.requests) == 2
	assert len(server.sleeps) == 1 and 0 <= server.sleeps[0] < 60
