from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import finish

pytestmark = pytest.mark.anyio

REPLY = json.dumps({"commands": [finish({"answer": "Tromsø"}, human_message="Tromsø.")]})

SETTINGS = {
	"openai": {"api_key": "sk-a"},
	"anthropic": {"api_key": "sk-ant-b"},
	"google": {"api_key": "AIza-c"},
}


def wire(path: str) -> dict[str, Any]:
	"""The reply in the wire format of the API at path."""
	if path.endswith("/responses"):
		return {
			"status": "completed",
			"output": [
				{
					"type": "message",
					"role": "assistant",
					"content": [{"type": "output_text", "text": REPLY, "annotations": []}],
				}
			],
		}
	if path.endswith("/chat/completions"):
		return {
			"choices": [
				{"message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
			]
		}
	if path.endswith("/messages"):
		return {
			"type": "message",
			"role": "assistant",
			"stop_reason": "end_turn",
			"content": [{"type": "text", "text": REPLY}],
		}
	return {
		"candidates": [
			{"content": {"role": "model", "parts": [{"text": REPLY}]}, "finishReason": "STOP"}
		]
	}


@pytest.mark.parametrize(
	("model", "settings"),
	[
		("openai:gpt-5-mini", SETTINGS),
		("openai:gpt-5-mini", {**SETTINGS, "openai": {"api_key": "sk-a", "api_mode": "chat"}}),
		("anthropic:claude-sonnet-4-5", SETTINGS),
		("google:gemini-2.5-flash", SETTINGS),
	],
	ids=["responses", "chat", "anthropic", "gemini"],
)
async def test_request_bodies_are_compact_utf8_json(model: str, settings: Any) -> None:
	"""Every provider sends its body without spaces after separators, and non-ASCII as UTF-8."""
	bodies: list[bytes] = []

	def api(request: httpx.Request) -> httpx.Response:
		bodies.append(request.content)
		return httpx.Response(200, json=wire(request.url.path))

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=settings, http_client=http)
	tool = FunctionTool(
		"lookup",
		"Look a city up.",
		lambda i, c: i,
		input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
	)
	agent = om.create_agent(
		name="Finder", model=model, instructions="Find the city: Tromsø.", tools=[tool]
	)
	result = await agent.run("Which city?")
	assert result.status == "success"
	assert len(bodies) == 1
	body = bodies[0]
	compact = json.dumps(json.loads(body), ensure_ascii=False, separators=(",", ":")).encode()
	assert body == compact
	assert "Tromsø".encode() in body


def test_a_lone_surrogate_in_a_body_is_sent_as_the_replacement_character() -> None:
	"""A message built by hand with a lone surrogate still encodes (as U+FFFD), never crashes."""
	from openmolt_providers._body import encode

	data = encode({"messages": [{"content": "a\ud800b", "k\udc00": 1}]})
	assert json.loads(data) == {"messages": [{"content": "a\ufffdb", "k\ufffd": 1}]}
