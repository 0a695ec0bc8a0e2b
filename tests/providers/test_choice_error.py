"""An error a Chat Completions choice carries (``finish_reason: "error"``) is the provider's error.

OpenRouter's choices carry ``error`` (``{"code": 502, "message": ...}``) beside ``finish_reason:
"error"`` when the upstream model fails while it writes, whole or streamed. Only an ``error`` in
place of the reply was read: this one read as a reply that stopped early, so the model was told to
send its answer again (a step paid for, and the upstream still down) and neither a retry nor a
fallback model was tried.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from tests.providers._replies import provider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

DOWN = {"code": 502, "message": "Upstream provider returned an invalid response"}
BAD = {"code": 400, "message": "Upstream refused the request"}
CMD = '{"commands":[{"type":"finish","status":"success","output":"Oslo"}]}'


def _whole(error: dict[str, Any]) -> dict[str, Any]:
	message = {"role": "assistant", "content": ""}
	choice = {"index": 0, "message": message, "finish_reason": "error", "error": error}
	return {"id": "gen-1", "choices": [choice]}


def _events(error: dict[str, Any]) -> bytes:
	head = {"id": "gen-1", "object": "chat.completion.chunk"}
	chunks = [
		{**head, "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}]},
		{
			**head,
			"choices": [
				{"index": 0, "delta": {"content": ""}, "finish_reason": "error", "error": error}
			],
		},
	]
	return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


async def _call(error: dict[str, Any], streamed: bool) -> tuple[Any, int]:
	asked = 0

	def handler(request: httpx.Request) -> httpx.Response:
		nonlocal asked
		asked += 1
		if asked > 1:
			reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": CMD}}]}
			reply["choices"][0]["finish_reason"] = "stop"
			if streamed:
				delta = {"index": 0, "delta": {"content": CMD}, "finish_reason": "stop"}
				body = f"data: {json.dumps({'choices': [delta]})}\n\ndata: [DONE]\n\n"
				return httpx.Response(
					200, content=body.encode(), headers={"content-type": "text/event-stream"}
				)
			return httpx.Response(200, json=reply)
		if streamed:
			return httpx.Response(
				200, content=_events(error), headers={"content-type": "text/event-stream"}
			)
		return httpx.Response(200, json=_whole(error))

	chat = provider("chat", handler, base_url="https://openrouter.ai/api/v1")
	request = make_request("openai/gpt-5-mini")
	try:
		if streamed:
			return [c async for c in chat.stream(request)][-1], asked
		return await chat.generate(request), asked
	except ProviderError as exc:
		return exc, asked


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_choice_that_failed_upstream_is_asked_again(streamed: bool) -> None:
	"""A 502 in the choice: retried as a 502 would be, and the next answer is used."""
	result, asked = await _call(DOWN, streamed)
	assert not isinstance(result, ProviderError), result
	assert asked == 2 and result.text == CMD and result.finish_reason == "stop"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_choice_refused_upstream_is_the_providers_error(streamed: bool) -> None:
	"""A 400 in the choice: the provider's error, with its status and message, not retried."""
	result, asked = await _call(BAD, streamed)
	assert isinstance(result, ProviderError) and asked == 1
	assert result.status_code == 400 and not result.retryable
	assert "Upstream refused the request" in str(result)
