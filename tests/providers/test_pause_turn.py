"""Anthropic's ``pause_turn``: the provider goes on with a turn the API paused, as the docs say.

With server tools (``model_config={"search": True}``: web search), the Messages API may pause a
long turn and answer ``stop_reason: "pause_turn"`` ("The server-side loop and pause_turn",
platform.claude.com, server tools): the response goes back as it is, as the assistant's turn,
and the API goes on with it. Read as an incomplete reply, the loop told the model to send the
whole answer again, which searched again from the start. The provider now sends it back (every
paused reply's blocks, in order; the container, if any), once per pause up to a bound, and the
call's reply is the whole turn: its text, the last stop reason, every request's tokens.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.testing import finish
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.anthropic._convert import MAX_PAUSES
from tests.providers._replies import CMD, events
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

SEARCH = [
	{
		"type": "server_tool_use",
		"id": "srvtoolu_01",
		"name": "web_search",
		"input": {"query": "capital of Norway"},
	},
	{
		"type": "web_search_tool_result",
		"tool_use_id": "srvtoolu_01",
		"content": [{"type": "web_search_result", "url": "https://example.org", "title": "Oslo"}],
	},
]


def _reply(content: list[dict[str, Any]], stop: str, inp: int, out: int) -> dict[str, Any]:
	return {
		"type": "message",
		"role": "assistant",
		"content": content,
		"stop_reason": stop,
		"usage": {"input_tokens": inp, "output_tokens": out},
	}


PAUSED = _reply([{"type": "text", "text": ""}, *SEARCH], "pause_turn", 1000, 40)
DONE = _reply([{"type": "text", "text": CMD}], "end_turn", 1300, 20)


class Api:
	"""Answers the calls in turn (the last answer again after them), streamed or not; keeps bodies."""

	def __init__(self, *replies: dict[str, Any]) -> None:
		self.replies = replies
		self.bodies: list[dict[str, Any]] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		self.bodies.append(body)
		reply = self.replies[min(len(self.bodies), len(self.replies)) - 1]
		if not body.get("stream"):
			return httpx.Response(200, json=reply)
		sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events("anthropic", reply))
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=sse)


def _provider(api: Api) -> AnthropicProvider:
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))

	async def sleep(_: float) -> None:
		return None

	return AnthropicProvider({"api_key": "sk-ant-test"}, lambda: client, sleep=sleep)


async def _ask(api: Api, streamed: bool) -> Any:
	provider = _provider(api)
	request = make_request("claude-sonnet-4-5", search=True)
	if not streamed:
		return await provider.generate(request)
	deltas, final = [], None
	async for chunk in provider.stream(request):
		if hasattr(chunk, "finish_reason"):
			final = chunk
		else:
			deltas.append(chunk.text)
	assert final is not None and "".join(deltas) == final.text
	return final


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_paused_turn_goes_on_and_is_one_reply(streamed: bool) -> None:
	"""The paused reply goes back as the assistant's turn; the call's reply is the whole turn."""
	api = Api(PAUSED, DONE)
	response = await _ask(api, streamed)
	assert len(api.bodies) == 2
	first, second = api.bodies
	assert first["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]
	# The same request, with the paused turn's blocks sent back as they came, at the end.
	assert second["messages"][:-1] == first["messages"]
	assert second["messages"][-1] == {"role": "assistant", "content": PAUSED["content"]}
	assert {k: v for k, v in second.items() if k != "messages"} == {
		k: v for k, v in first.items() if k != "messages"
	}
	assert list(second)[-1] == "messages" or (
		streamed and list(second)[-2:] == ["messages", "stream"]
	)
	assert response.text == CMD and response.finish_reason == "stop"
	assert (response.usage.input_tokens, response.usage.output_tokens) == (2300, 60)
	assert response.usage.calls == 2
	assert response.prompt_tokens == 1300  # the prompt's size: the last request's, not the sum
	alone = _provider(Api(DONE)).cost("claude-sonnet-4-5", input_tokens=2300, output_tokens=60)
	assert response.usage.cost_usd == pytest.approx(alone)


@pytest.mark.parametrize("streamed", [False, True])
async def test_every_pause_goes_back_in_order_with_its_container(streamed: bool) -> None:
	"""Two pauses: the second request sends both paused replies' blocks, in order, and the
	container the last one named."""
	second_pause = {**PAUSED, "content": [*SEARCH[::-1]], "container": {"id": "container_7"}}
	api = Api(PAUSED, second_pause, DONE)
	response = await _ask(api, streamed)
	assert len(api.bodies) == 3
	assert api.bodies[1]["messages"][-1]["content"] == PAUSED["content"]
	assert "container" not in api.bodies[1]
	assert api.bodies[2]["messages"][-1]["content"] == PAUSED["content"] + second_pause["content"]
	assert api.bodies[2]["container"] == "container_7"
	assert response.finish_reason == "stop" and response.usage.calls == 3


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_turn_that_never_ends_is_incomplete_after_the_bound(streamed: bool) -> None:
	"""Paused again and again: at most ``MAX_PAUSES`` more requests, then ``incomplete``."""
	api = Api(PAUSED)
	response = await _ask(api, streamed)
	assert len(api.bodies) == MAX_PAUSES + 1
	assert response.finish_reason == "incomplete" and response.usage.calls == MAX_PAUSES + 1


async def test_an_agent_run_with_search_takes_one_step() -> None:
	"""Through the loop: the paused turn is one model step of the run, which succeeds."""
	done = _reply(
		[{"type": "text", "text": json.dumps({"commands": [finish("Oslo")]})}], "end_turn", 1300, 20
	)
	api = Api(PAUSED, done)
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt({"anthropic": {"api_key": "sk-ant-test"}}, http_client=client)
	agent = om.create_agent(
		name="Searcher", model="anthropic:claude-sonnet-4-5", model_config={"search": True}
	)
	result = await agent.run("Capital of Norway?")
	assert result.status == "success" and result.output == "Oslo"
	assert result.steps == 1 and len(api.bodies) == 2
	assert result.usage.calls == 2 and result.usage.input_tokens == 2300
	await om.aclose()


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_paused_turn_that_fills_the_window_carries_every_requests_tokens(
	streamed: bool,
) -> None:
	"""The turn goes on and then fills the context window: the window error bills both requests."""
	full = _reply([{"type": "text", "text": "{"}], "model_context_window_exceeded", 199_000, 1000)
	api = Api(PAUSED, full)
	with pytest.raises(ProviderError) as caught:
		await _ask(api, streamed)
	assert caught.value.context_exceeded and caught.value.usage is not None
	assert caught.value.usage.calls == 2
	assert caught.value.usage.input_tokens == 200_000
