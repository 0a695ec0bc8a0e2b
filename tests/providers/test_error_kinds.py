"""Documented errors of each API, mapped to retryable or not, and named with their fix.

A prompt past the context window is named as such on every API (not "check model_config"), an
account out of credit is not retried, and Gemini's wait for a 429, sent in the body's
``RetryInfo`` rather than a ``Retry-After`` header, is waited for.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

OK = {
	"candidates": [{"content": {"parts": [{"text": "{}"}]}, "finishReason": "STOP"}],
}

TOO_LONG = [
	(
		"openai",
		{
			"error": {
				"message": "Your input exceeds the context window of this model. Please adjust "
				"your input and try again.",
				"type": "invalid_request_error",
				"param": "input",
				"code": "context_length_exceeded",
			}
		},
	),
	(
		"chat",
		{
			"error": {
				"message": "This model's maximum context length is 128000 tokens. However, your "
				"messages resulted in 130512 tokens.",
				"type": "invalid_request_error",
				"param": "messages",
				"code": "context_length_exceeded",
			}
		},
	),
	(
		"anthropic",
		{
			"type": "error",
			"error": {
				"type": "invalid_request_error",
				"message": "prompt is too long: 215312 tokens > 200000 maximum",
			},
		},
	),
	(
		"anthropic",
		{
			"type": "error",
			"error": {
				"type": "invalid_request_error",
				"message": "input length and `max_tokens` exceed context limit: 195000 + 16384 "
				"> 200000, decrease input length or `max_tokens` and try again",
			},
		},
	),
	(
		"google",
		{
			"error": {
				"code": 400,
				"message": "The input token count (1572865) exceeds the maximum number of tokens "
				"allowed (1048576).",
				"status": "INVALID_ARGUMENT",
			}
		},
	),
]


async def _fail(vendor: str, *replies: httpx.Response) -> tuple[ProviderError, list[float], int]:
	sleeps: list[float] = []
	calls: list[httpx.Request] = []
	queue = list(replies)

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return queue.pop(0) if len(queue) > 1 else queue[0]

	p = provider(vendor, handle)

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	p.retry = dataclasses.replace(p.retry, sleep=sleep)
	with pytest.raises(ProviderError) as info:
		await p.generate(make_request(MODELS[vendor]))
	return info.value, sleeps, len(calls)


@pytest.mark.parametrize(("vendor", "body"), TOO_LONG)
async def test_a_prompt_past_the_context_window_is_named_with_its_fix(vendor, body) -> None:
	"""Each API's context-length error says what happened and how to fix it; not retried."""
	error, sleeps, calls = await _fail(vendor, httpx.Response(400, json=body))
	text = str(error)
	assert "longer than the model's context window" in text
	assert "compaction" in text and "larger context window" in text and "max_output" in text
	assert "check model_config" not in text
	assert not error.retryable and error.status_code == 400 and calls == 1 and sleeps == []
	assert error.context_exceeded  # a run that compacts summarises and asks again


@pytest.mark.parametrize("vendor", ["openai", "chat", "anthropic", "google"])
async def test_other_refusals_are_not_taken_for_a_long_prompt(vendor) -> None:
	"""A 400 about something else (a bad setting) is not marked ``context_exceeded``."""
	body = {
		"error": {"message": "Unsupported value: 'temperature'", "type": "invalid_request_error"}
	}
	error, _, _ = await _fail(vendor, httpx.Response(400, json=body))
	assert error.status_code == 400 and not error.context_exceeded


async def test_an_account_out_of_credit_is_not_retried() -> None:
	"""OpenAI's 429 ``insufficient_quota`` is not a rate limit: retrying cannot succeed."""
	body = {
		"error": {
			"message": "You exceeded your current quota, please check your plan and billing "
			"details.",
			"type": "insufficient_quota",
			"param": None,
			"code": "insufficient_quota",
		}
	}
	error, sleeps, calls = await _fail("openai", httpx.Response(429, json=body))
	assert calls == 1 and sleeps == [] and not error.retryable
	assert "out of quota" in str(error) and "billing" in str(error)


async def test_a_rate_limit_is_still_retried() -> None:
	"""A 429 that is a rate limit (``rate_limit_exceeded``) is retried as before."""
	body = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
	error, sleeps, calls = await _fail("openai", httpx.Response(429, json=body))
	assert error.retryable and calls > 1 and len(sleeps) == calls - 1


async def test_gemini_retry_delay_in_the_body_is_waited_for() -> None:
	"""Gemini's 429 carries its wait as a ``google.rpc.RetryInfo`` detail: that wait is used."""
	body = {
		"error": {
			"code": 429,
			"message": "You exceeded your current quota, please check your plan and billing "
			"details.",
			"status": "RESOURCE_EXHAUSTED",
			"details": [
				{
					"@type": "type.googleapis.com/google.rpc.QuotaFailure",
					"violations": [{"quotaMetric": "generate_content_free_tier_requests"}],
				},
				{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7.5s"},
			],
		}
	}
	sleeps: list[float] = []
	replies = [httpx.Response(429, json=body), httpx.Response(200, json=OK)]

	def handle(request: httpx.Request) -> httpx.Response:
		return replies.pop(0)

	p = provider("google", handle)

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	p.retry = dataclasses.replace(p.retry, sleep=sleep)
	response = await p.generate(make_request(MODELS["google"]))
	assert response.text == "{}" and sleeps == [7.5]


async def test_gemini_error_as_a_one_item_list_is_read() -> None:
	"""Google may send its error as a list of one ``google.rpc.Status`` (python-genai's
	``APIError`` unwraps it): its ``RetryInfo`` wait is used as the object's is."""
	status = {
		"code": 429,
		"message": "Resource has been exhausted (e.g. check quota).",
		"status": "RESOURCE_EXHAUSTED",
		"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7.5s"}],
	}
	sleeps: list[float] = []
	replies = [httpx.Response(429, json=[{"error": status}]), httpx.Response(200, json=OK)]
	p = provider("google", lambda request: replies.pop(0))

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	p.retry = dataclasses.replace(p.retry, sleep=sleep)
	response = await p.generate(make_request(MODELS["google"]))
	assert response.text == "{}" and sleeps == [7.5]


async def test_a_header_wait_wins_over_the_body() -> None:
	"""``Retry-After`` is the server's word when both are given."""
	body = {"error": {"code": 503, "details": [{"retryDelay": "30s"}]}}
	error, sleeps, _ = await _fail(
		"google", httpx.Response(503, headers={"retry-after": "2"}, json=body)
	)
	assert error.retryable and sleeps[0] == 2.0


async def test_a_billing_problem_says_so() -> None:
	"""Anthropic's 402 ``billing_error`` names billing, not model_config; not retried."""
	body = {"type": "error", "error": {"type": "billing_error", "message": "credit too low"}}
	error, sleeps, calls = await _fail("anthropic", httpx.Response(402, json=body))
	assert "billing" in str(error) and "model_config" not in str(error)
	assert calls == 1 and sleeps == [] and not error.retryable


@pytest.mark.parametrize(
	("kind", "status", "retryable"),
	[
		("billing_error", 402, False),
		("conflict_error", 409, True),
		("overloaded_error", 529, True),
		("timeout_error", 504, True),
	],
)
async def test_anthropic_stream_error_types(kind, status, retryable) -> None:
	"""An ``error`` event inside a stream is the error its type stands for over plain HTTP."""
	event = {"type": "error", "error": {"type": kind, "message": "went wrong"}}
	body = f"event: error\ndata: {json.dumps(event)}\n\n".encode()

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	p = provider("anthropic", handle)
	with pytest.raises(ProviderError) as info:
		async for _ in p.stream(make_request(MODELS["anthropic"])):
			pass
	assert info.value.status_code == status and info.value.retryable is retryable


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_an_error_event_in_a_stream_is_not_a_server_that_does_not_stream(vendor) -> None:
	"""A 400 sent as an event of the stream is that error: streaming stays on, nothing is asked
	again (it was read as a server refusing ``stream``: asked whole, and never streamed again)."""
	if vendor == "anthropic":
		event = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
	else:
		event = {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}
	body = f"data: {json.dumps(event)}\n\n".encode()
	calls: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	p = provider(vendor, handle)
	with warnings.catch_warnings(record=True) as warned, pytest.raises(ProviderError) as info:
		warnings.simplefilter("always")
		async for _ in p.stream(make_request(MODELS[vendor])):
			pass
	assert info.value.status_code == 400 and not info.value.retryable
	assert "bad" in str(info.value) and len(calls) == 1 and p.streams
	assert not [w for w in warned if "does not stream" in str(w.message)]


@pytest.mark.parametrize(
	("code", "retryable"),
	[("server_error", True), ("rate_limit_exceeded", True), ("invalid_prompt", False)],
)
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_failed_response_is_retryable_when_its_code_says_the_server_failed(
	code, retryable, streamed
) -> None:
	"""A Responses reply with ``status: failed`` (or a stream's ``response.failed``) whose code
	is the server's trouble may succeed on another try, as the stream's ``error`` event may."""
	failed = {
		"id": "resp_1",
		"status": "failed",
		"output": [],
		"error": {"code": code, "message": "it failed"},
	}
	if streamed:
		event = {"type": "response.failed", "sequence_number": 1, "response": failed}
		body = f"data: {json.dumps(event)}\n\n".encode()
		reply = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
	else:
		reply = httpx.Response(200, json=failed)
	p = provider("openai", lambda request: reply)
	with pytest.raises(ProviderError, match="it failed") as info:
		if streamed:
			async for _ in p.stream(make_request(MODELS["openai"])):
				pass
		else:
			await p.generate(make_request(MODELS["openai"]))
	assert info.value.retryable is retryable


async def test_not_implemented_is_not_retried_and_a_local_server_falls_back_at_once() -> None:
	"""501 says the server lacks the endpoint: the OpenAI provider tries Chat Completions at once
	(it waited through every retry of /responses first)."""
	chat = {"choices": [{"index": 0, "message": {"content": "{}"}, "finish_reason": "stop"}]}
	calls: list[str] = []
	sleeps: list[float] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request.url.path)
		if request.url.path.endswith("/responses"):
			return httpx.Response(501, text="Unsupported method ('POST')")
		return httpx.Response(200, json=chat)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	from openmolt_providers.openai import OpenAIProvider

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	p = OpenAIProvider({"base_url": "http://localhost:8000/v1"}, lambda: client, sleep=sleep)
	response = await p.generate(make_request("llama3.2"))
	assert response.text == "{}" and sleeps == []
	assert calls == ["/v1/responses", "/v1/chat/completions"]


@pytest.mark.parametrize(
	("error", "status", "retryable"),
	[
		({"code": 502, "message": "upstream failed"}, 502, True),
		({"code": 429, "message": "rate limited"}, 429, True),
		({"code": "400", "message": "bad request"}, 400, False),
		({"message": "no code", "type": "BadRequestError"}, None, False),
	],
)
async def test_a_chat_stream_error_event_keeps_its_status(error, status, retryable) -> None:
	"""An OpenAI-compatible server's error event inside a stream (OpenRouter's upstream 502, a
	429) names its status and is retryable when the status is; it was never retryable."""
	start = {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
	body = f"data: {json.dumps(start)}\n\ndata: {json.dumps({'error': error})}\n\n".encode()

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

	p = provider("chat", handle)
	with pytest.raises(ProviderError) as info:
		async for _ in p.stream(make_request(MODELS["chat"])):
			pass
	assert info.value.status_code == status and info.value.retryable is retryable


async def test_a_refusal_is_a_plain_provider_error_that_pickles() -> None:
	"""The refusal's type is ProviderError in ``to_dict`` (events, stored runs), and a pickled
	one still says whether the server answered it."""
	import pickle

	from openmolt_providers._common import refuses_stream

	body = {"error": {"message": "'stream' is not supported", "code": "unsupported"}}
	error, _, _ = await _fail("chat", httpx.Response(400, json=body))
	assert type(error) is ProviderError and error.to_dict()["type"] == "ProviderError"
	assert "_answered" not in error.to_dict()
	again = pickle.loads(pickle.dumps(error))
	assert refuses_stream(again) and refuses_stream(error)


FLAGGED = [
	# OpenAI: a prompt its moderation flags (reasoning models' "invalid_prompt").
	(
		"openai",
		{
			"error": {
				"message": "Invalid prompt: your prompt was flagged as potentially violating our "
				"usage policy. Please try again with a different prompt.",
				"type": "invalid_request_error",
				"param": None,
				"code": "invalid_prompt",
			}
		},
	),
	# Azure OpenAI's content filter on the prompt (its documented error body).
	(
		"chat",
		{
			"error": {
				"message": "The response was filtered due to the prompt triggering Azure OpenAI's "
				"content management policy. Please modify your prompt and retry.",
				"type": None,
				"param": "prompt",
				"code": "content_filter",
				"status": 400,
				"innererror": {"code": "ResponsibleAIPolicyViolation"},
			}
		},
	),
]


@pytest.mark.parametrize(("vendor", "body"), FLAGGED)
async def test_a_prompt_a_content_filter_refused_is_named_so(vendor, body) -> None:
	"""Not "check model_config": the prompt was flagged; what to change is named; not retried."""
	error, sleeps, calls = await _fail(vendor, httpx.Response(400, json=body))
	text = str(error)
	assert "content filter refused the prompt" in text
	assert "a tool's result" in text and "another model" in text
	assert "check model_config" not in text
	assert not error.retryable and error.status_code == 400 and calls == 1 and sleeps == []


async def test_x_should_retry_false_is_not_retried() -> None:
	"""``x-should-retry: false`` on a 500 (obeyed by the anthropic and openai SDKs before the
	status): one call, not retryable, and the message does not say to try again."""
	body = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
	answer = httpx.Response(500, headers={"x-should-retry": "false"}, json=body)
	error, sleeps, calls = await _fail("anthropic", answer)
	assert calls == 1 and sleeps == [] and not error.retryable
	assert "Internal server error" in str(error) and "try again later" not in str(error)


async def test_x_should_retry_true_is_retried() -> None:
	"""``x-should-retry: true`` on a status not retried by itself (a 400): tried again."""
	body = {"error": {"message": "Please retry your request.", "type": "invalid_request_error"}}
	ok = {"status": "completed", "output": [], "usage": {"input_tokens": 1, "output_tokens": 1}}
	replies = [
		httpx.Response(400, headers={"x-should-retry": "true"}, json=body),
		httpx.Response(200, json=ok),
	]
	p = provider("openai", lambda request: replies.pop(0))

	async def sleep(seconds: float) -> None:
		return None

	p.retry = dataclasses.replace(p.retry, sleep=sleep)
	response = await p.generate(make_request(MODELS["openai"]))
	assert response.finish_reason == "stop" and replies == []


@pytest.mark.parametrize("code", ["invalid_prompt", "bio_policy", "image_content_policy_violation"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_response_failed_on_a_usage_policy_names_the_fix(code, streamed) -> None:
	"""A failed Responses reply whose code is a usage policy (openai-openapi ``ResponseErrorCode``)
	says what a 400 from the content filter says: the same input is refused again, change it."""
	failed = {
		"id": "resp_1",
		"status": "failed",
		"output": [],
		"error": {"code": code, "message": "Invalid prompt: flagged as potentially violating"},
	}
	if streamed:
		event = {"type": "response.failed", "sequence_number": 1, "response": failed}
		body = f"data: {json.dumps(event)}\n\n".encode()
		reply = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
	else:
		reply = httpx.Response(200, json=failed)
	p = provider("openai", lambda request: reply)
	with pytest.raises(ProviderError) as info:
		if streamed:
			async for _ in p.stream(make_request(MODELS["openai"])):
				pass
		else:
			await p.generate(make_request(MODELS["openai"]))
	message = str(info.value)
	assert "flagged as potentially violating" in message and "change it" in message
	assert not info.value.retryable


@pytest.mark.parametrize(
	("vendor", "body"),
	[
		(
			"anthropic",
			{
				"type": "error",
				"error": {
					"type": "invalid_request_error",
					"message": "Your credit balance is too low to access the Anthropic API. Please "
					"go to Plans & Billing to upgrade or purchase credits.",
				},
				"request_id": "req_011CbrFTcXhtiMzr3s6EocF7",
			},
		),
		(
			"google",
			{
				"error": {
					"code": 400,
					"message": "Gemini API free tier is not available in your country. Please "
					"enable billing on your project in Google AI Studio.",
					"status": "FAILED_PRECONDITION",
				}
			},
		),
	],
)
async def test_a_400_about_billing_names_billing_not_model_config(vendor, body) -> None:
	"""Anthropic answers an account out of credit with a 400 ``invalid_request_error`` (not its
	402 ``billing_error``), Gemini a region without a free tier with a 400: the fix is billing."""
	error, sleeps, calls = await _fail(vendor, httpx.Response(400, json=body))
	assert "billing" in str(error) and "model_config" not in str(error)
	assert calls == 1 and sleeps == [] and not error.retryable
