"""A reply with no text does not make the next request invalid (Anthropic, Gemini).

The loop keeps an empty reply (or one a safety filter stopped) in the history as it came: empty. Anthropic
answers a request holding an empty message with 400 ("all messages must have non-empty content
except for the optional final assistant message") and Gemini one holding an empty text part (no
data), so every later step of the run failed. Such a turn is now sent as ``(empty answer)``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.llm import Message
from openmolt_core.testing import finish
from openmolt_providers._body import EMPTY_TURN
from tests.providers._replies import make_request, provider

pytestmark = pytest.mark.anyio

TEXT = json.dumps({"commands": [finish("done")]})

CASES = {
	"anthropic": (
		"anthropic:claude-sonnet-4-5",
		{"type": "message", "stop_reason": "end_turn", "content": []},
		{"type": "message", "stop_reason": "end_turn", "content": [{"type": "text", "text": TEXT}]},
	),
	"google": (
		"google:gemini-2.5-flash",
		{"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]},
		{"candidates": [{"content": {"parts": [{"text": TEXT}]}, "finishReason": "STOP"}]},
	),
}
KEYS = {"anthropic": "sk-ant-test", "google": "AIza-test"}


def _texts(vendor: str, body: dict[str, Any]) -> list[str]:
	if vendor == "anthropic":
		out = []
		for m in body["messages"]:
			content = m["content"]
			out += [content] if isinstance(content, str) else [b["text"] for b in content]
		return out
	return [p["text"] for c in body["contents"] for p in c["parts"]]


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_the_step_after_an_empty_reply_sends_no_empty_turn(vendor) -> None:
	"""The empty reply is told to the model; the turn it left is not empty in the next body."""
	model, empty, ok = CASES[vendor]
	bodies: list[dict[str, Any]] = []

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=empty if len(bodies) == 1 else ok)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	om = OpenMolt({vendor: {"api_key": KEYS[vendor]}}, http_client=client)
	result = await om.create_agent(name="Empty", model=model).run("go")
	assert result.status == "success"
	texts = _texts(vendor, bodies[1])
	assert all(t.strip() for t in texts), texts
	assert texts[1] == EMPTY_TURN
	assert result.state.messages[1].content == ""  # the history keeps the reply as it came


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
@pytest.mark.parametrize("content", ["", "  \n"])
def test_an_empty_turn_is_never_built(vendor, content) -> None:
	"""Whether the turn is cached (the last message) or not, and whitespace alone too."""
	request = make_request(CASES[vendor][0].split(":")[1])
	request.messages += [Message("assistant", content), Message("user", '{"results":[]}')]
	request.messages.append(Message("assistant", content))
	body = provider(vendor, lambda r: httpx.Response(500)).build(request)
	texts = _texts(vendor, body)
	assert texts[1] == texts[3] == EMPTY_TURN
