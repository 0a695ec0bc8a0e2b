"""A whole reply that holds no answer at all (no choice, no candidate) is asked again.

Streamed, a Chat Completions or Gemini reply without a choice or candidate never ends (no finish
reason): the stream is cut off, asked again under the retry policy, and no step is spent. Asked
for whole, the same reply (``{"choices": []}``, ``{"candidates": []}`` without a blocked prompt)
read as an empty answer: the model was told it answered nothing, and a step was paid for to ask it
again. An answer that is there but empty is still the model's (tests/providers/test_reply_empty.py),
and a blocked prompt still ends the run.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import CMD, MODELS, provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

ANSWERS = {
	"chat": {
		"choices": [
			{"index": 0, "message": {"role": "assistant", "content": CMD}, "finish_reason": "stop"}
		]
	},
	"google": {"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": "STOP"}]},
}


@pytest.mark.parametrize(
	("vendor", "empty"),
	[
		("chat", {"id": "c1", "choices": []}),
		("chat", {"id": "c1"}),
		("google", {"candidates": []}),
		("google", {"usageMetadata": {"promptTokenCount": 5}}),
	],
)
async def test_no_answer_is_asked_again_and_the_next_is_used(
	vendor: str, empty: dict[str, Any]
) -> None:
	"""The provider asks again; the answer that follows is the reply."""
	replies = [empty, ANSWERS[vendor]]

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json=replies.pop(0) if len(replies) > 1 else replies[0])

	response = await provider(vendor, handler).generate(make_request(MODELS[vendor]))
	assert response.text == CMD and response.finish_reason == "stop"


@pytest.mark.parametrize("vendor", ["chat", "google"])
async def test_no_answer_every_time_is_the_providers_error(vendor: str) -> None:
	"""Never an answer: a retryable provider error that says so, after the retries."""
	empty = {"choices": []} if vendor == "chat" else {"candidates": []}
	p = provider(vendor, lambda request: httpx.Response(200, json=empty))
	with pytest.raises(ProviderError) as caught:
		await p.generate(make_request(MODELS[vendor]))
	assert caught.value.retryable and "held no answer" in str(caught.value)
	assert "gave up after" in str(caught.value)
