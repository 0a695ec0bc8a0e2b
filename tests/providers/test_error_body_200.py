"""A reply body that is an error, sent with status 200, is the provider's error, not an answer.

OpenRouter's error docs: once the model has started, an error "will be emitted in the response
body" with status 200 (``{"error": {"code": 502, "message": ...}}``); vLLM and LiteLLM do the same.
Asked for whole, the body read as an empty answer: the model was told it answered nothing, a step
was spent, and neither a retry nor a fallback model was tried. The stream path already raised.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import generate

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("vendor", ["openai", "chat"])
@pytest.mark.parametrize(
	("error", "status", "retryable"),
	[
		({"code": 502, "message": "Upstream provider returned an invalid response"}, 502, True),
		({"code": "429", "message": "Rate limited upstream"}, 429, True),
		# Digits that str.isdigit() accepts and int() cannot read: no status, not a ValueError.
		({"code": "\u00b2\u00b2\u00b2", "message": "odd"}, None, False),
		({"code": "\u2463\u2460\u2460", "message": "odd"}, None, False),
		({"code": 400, "message": "Bad schema"}, 400, False),
		({"message": "something broke"}, None, False),
		("plain text error", None, False),
	],
)
async def test_an_error_body_with_status_200_is_a_provider_error(
	vendor: str, error: Any, status: int | None, retryable: bool
) -> None:
	with pytest.raises(ProviderError) as caught:
		await generate(vendor, {"id": "gen-1", "error": error})
	assert caught.value.status_code == status
	assert caught.value.retryable is retryable
	assert "the reply failed" in str(caught.value)


async def test_a_context_error_in_a_200_body_is_the_window_error() -> None:
	"""The body says the input is too long: the error the loop compacts on, as for a 400."""
	with pytest.raises(ProviderError) as caught:
		await generate(
			"chat",
			{"error": {"code": "context_length_exceeded", "message": "maximum context length"}},
		)
	assert "context" in str(caught.value).lower()


async def test_a_reply_that_carries_an_error_field_beside_its_choices_is_read() -> None:
	"""Only an error in place of a reply is one: a reply with choices is read as it is."""
	reply = {
		"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
		"error": None,
	}
	assert (await generate("chat", reply)).text == "hi"


@pytest.mark.parametrize(
	("vendor", "body", "status", "retryable"),
	[
		# The Messages API's error shape (docs: errors), as a gateway passes it on with 200.
		(
			"anthropic",
			{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
			529,
			True,
		),
		(
			"anthropic",
			{"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
			400,
			False,
		),
		# Google's error shape (google.rpc.Status in JSON).
		(
			"google",
			{
				"error": {
					"code": 503,
					"message": "The model is overloaded.",
					"status": "UNAVAILABLE",
				}
			},
			503,
			True,
		),
		(
			"google",
			{"error": {"code": 400, "message": "Invalid value", "status": "INVALID_ARGUMENT"}},
			400,
			False,
		),
	],
)
async def test_an_error_body_is_an_error_on_every_api(
	vendor: str, body: Any, status: int, retryable: bool
) -> None:
	"""Anthropic's and Gemini's error bodies too: not an empty answer that spends a step."""
	with pytest.raises(ProviderError) as caught:
		await generate(vendor, body)
	assert caught.value.status_code == status
	assert caught.value.retryable is retryable
	assert "the reply failed" in str(caught.value)


@pytest.mark.parametrize(
	("vendor", "body"),
	[
		(
			"anthropic",
			{
				"type": "error",
				"error": {
					"type": "invalid_request_error",
					"message": "prompt is too long: 250000 tokens > 200000 maximum",
				},
			},
		),
		(
			"google",
			{
				"error": {
					"code": 400,
					"message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
				}
			},
		),
	],
)
async def test_a_context_error_body_is_the_window_error_on_every_api(
	vendor: str, body: Any
) -> None:
	"""The loop compacts on it, as on the same error sent with its status."""
	with pytest.raises(ProviderError) as caught:
		await generate(vendor, body)
	assert caught.value.context_exceeded


@pytest.mark.parametrize(
	("vendor", "body"),
	[
		(
			"chat",
			{"error": {"code": 502, "message": "Upstream provider returned an invalid response"}},
		),
		("openai", {"status": "failed", "error": {"code": "server_error", "message": "oops"}}),
		("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}}),
		("google", {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}),
	],
)
async def test_a_retryable_error_body_is_asked_again_as_its_status_would_be(
	vendor: str, body: Any
) -> None:
	"""A 529 or 502 sent as a body with 200 is retried under the policy, as the status is: it was
	raised at once (a run without a fallback model failed on one overloaded moment)."""
	import httpx

	from tests.providers._replies import MODELS, provider
	from tests.providers.conftest import make_request

	good = {
		"chat": {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]},
		"openai": {
			"status": "completed",
			"output": [{"type": "message", "content": [{"type": "output_text", "text": "hi"}]}],
		},
		"anthropic": {"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"},
		"google": {
			"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]
		},
	}[vendor]
	replies = [body, good]
	asked: list[int] = []

	def handle(request: httpx.Request) -> httpx.Response:
		asked.append(1)
		return httpx.Response(200, json=replies[min(len(asked), 2) - 1])

	response = await provider(vendor, handle).generate(make_request(MODELS[vendor]))
	assert response.text == "hi" and len(asked) == 2


@pytest.mark.parametrize("vendor", ["openai", "chat"])
@pytest.mark.parametrize(
	("body", "status", "retryable"),
	[
		# vLLM's ErrorResponse: the error is the body itself, marked "object": "error".
		(
			{
				"object": "error",
				"message": "The model `x` does not exist.",
				"type": "NotFoundError",
				"param": None,
				"code": 404,
			},
			404,
			False,
		),
		(
			{"object": "error", "message": "boom", "type": "InternalServerError", "code": 500},
			500,
			True,
		),
		# OpenAI's error object, a server error or rate limit named in words, no number: retried.
		({"error": {"message": "overloaded", "type": "server_error", "code": None}}, 500, True),
		(
			{"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
			429,
			True,
		),
		# A request's own fault names no status in words: it fails as it is, not retried.
		({"error": {"message": "bad", "type": "invalid_request_error", "code": None}}, None, False),
	],
)
async def test_every_shape_of_an_error_body_is_the_status_it_names(
	vendor: str, body: Any, status: int, retryable: bool
) -> None:
	"""A body that is the error itself (vLLM) or names its kind in words (OpenAI's ``type``,
	``code``) is that error: an empty answer (Responses) or "no answer, try again" (Chat) before,
	and a server error was not retried."""
	with pytest.raises(ProviderError) as caught:
		await generate(vendor, body)
	assert "the reply failed" in str(caught.value)
	assert caught.value.status_code == status
	assert caught.value.retryable is retryable
