"""An error sent in a reply (a 200's body, a stream's event) waits as long as it asks.

Gemini says how long to wait in the error itself (``google.rpc.RetryInfo``'s ``retryDelay``), and
a 429 answered as a status was retried after that wait, or given up at once when the wait passes
the policy's ``max_wait``. The same error in a body sent with 200 (a gateway passing it on) or as
a stream's event was asked again after the policy's short backoff, each try before the wait the
server asked for, so each failed the same way and the last said nothing of the wait.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_core.retry import RetryPolicy
from openmolt_providers.gemini import GeminiProvider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

REPLY = {"candidates": [{"content": {"parts": [{"text": "{}"}]}, "finishReason": "STOP"}]}


def _error(delay: str) -> dict[str, Any]:
	info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
	return {
		"error": {
			"code": 429,
			"status": "RESOURCE_EXHAUSTED",
			"message": "quota",
			"details": [info],
		}
	}


def _answer(body: dict[str, Any], streamed: bool) -> httpx.Response:
	if streamed:
		return httpx.Response(
			200,
			content=f"data: {json.dumps(body)}\n\n".encode(),
			headers={"content-type": "text/event-stream"},
		)
	return httpx.Response(200, json=body)


async def _call(answers: list[dict[str, Any]], streamed: bool) -> tuple[list[float], int, Any]:
	sleeps: list[float] = []
	asked = 0

	async def sleep(seconds: float) -> None:
		sleeps.append(seconds)

	def handler(request: httpx.Request) -> httpx.Response:
		nonlocal asked
		asked += 1
		return _answer(answers[min(asked, len(answers)) - 1], streamed)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	policy = RetryPolicy(attempts=4, max_wait=30.0, sleep=sleep)
	provider = GeminiProvider({"api_key": "AIza-test"}, lambda: client, retry=policy)
	request = make_request("gemini-2.5-flash")
	try:
		if streamed:
			result: Any = [chunk async for chunk in provider.stream(request)][-1]
		else:
			result = await provider.generate(request)
	except ProviderError as exc:
		result = exc
	return sleeps, asked, result


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_wait_an_error_in_a_reply_asks_for_is_kept(streamed: bool) -> None:
	"""retryDelay 7s: the next try comes 7 s later, and it answers."""
	sleeps, asked, result = await _call([_error("7s"), REPLY], streamed)
	assert sleeps == [7.0] and asked == 2
	assert not isinstance(result, ProviderError) and result.text == "{}"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_wait_past_max_wait_gives_up_at_once_and_says_it(streamed: bool) -> None:
	"""retryDelay 120s, max_wait 30 s: no try before the wait, and the error says why."""
	sleeps, asked, result = await _call([_error("120s"), REPLY], streamed)
	assert asked == 1 and sleeps == []
	assert isinstance(result, ProviderError) and result.retryable
	assert "gave up after 1 attempt" in str(result) and "asked to wait 120 s" in str(result)
