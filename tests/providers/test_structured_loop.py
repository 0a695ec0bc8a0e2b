"""Strict structured output end to end: an agent on each real provider, over a fake API.

The agent has a strict tool (a pydantic model parameter) and one whose input has no strict form
(a free-form dict): the request carries the fitted schema in the provider's own field, the reply
sends the second tool's input as JSON text, and both tools get the objects they expect.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from openmolt import OpenMolt, RunState
from openmolt_core.testing import call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio

SETTINGS = {
	"openai": {"api_key": "sk-a"},
	"anthropic": {"api_key": "sk-ant-b"},
	"google": {"api_key": "AIza-c"},
}
OUTPUT = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class Address(BaseModel):
	city: str
	zip: str | None = None


def wire(host: str, text: str) -> dict[str, Any]:
	if host == "api.openai.com":
		content = [{"type": "output_text", "text": text, "annotations": []}]
		return {"status": "completed", "output": [{"type": "message", "content": content}]}
	if host == "api.anthropic.com":
		return {"stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}
	return {"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]}


def schema_sent(host: str, body: dict[str, Any]) -> dict[str, Any]:
	if host == "api.openai.com":
		fmt = body["text"]["format"]
		assert fmt["strict"] is True
		return fmt["schema"]  # type: ignore[no-any-return]
	if host == "api.anthropic.com":
		return body["output_config"]["format"]["schema"]  # type: ignore[no-any-return]
	return body["generationConfig"]["responseJsonSchema"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
	("model", "host"),
	[
		("openai:gpt-5-mini", "api.openai.com"),
		("anthropic:claude-sonnet-4-5", "api.anthropic.com"),
		("google:gemini-2.5-flash", "generativelanguage.googleapis.com"),
	],
)
async def test_tool_inputs_are_constrained_and_fallbacks_decoded(model, host) -> None:
	"""The fitted schema goes out; an input sent as JSON text reaches its tool as an object."""
	calls: list[tuple[str, Any]] = []

	@tool(name="ship", description="Ship a parcel.")
	def ship(to: Address, express: bool = False) -> str:
		calls.append(("ship", (to, express)))
		return "shipped"

	@tool(name="note", description="Store a note.")
	def note(data: dict[str, Any]) -> str:
		calls.append(("note", data))
		return "stored"

	first = {
		"commands": [
			call_tool("local.ship", to={"city": "Oslo", "zip": None}, express=True),
			{
				"type": "callTool",
				"tool": "local.note",
				"input": json.dumps({"data": {"k": [1, 2]}}),
			},
		]
	}
	script = [first, {"commands": [finish({"answer": "done"}, human_message="Done.")]}]
	bodies: list[dict[str, Any]] = []

	def api(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=wire(host, json.dumps(script[len(bodies) - 1])))

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)
	agent = om.create_agent(name="Clerk", model=model, tools=[ship, note], output_schema=OUTPUT)
	modes: list[str | None] = []
	agent.on("llmOutput", lambda e: modes.append(e.structured))
	notes: list[tuple[str, ...]] = []
	agent.on("llmOutput", lambda e: notes.append(e.notes))
	fitted = agent.structured_output()
	# A dict of anything has no strict form in any dialect (closing it would allow only {}).
	assert fitted.mode == "partial"
	assert fitted.encoded == {"local.note"}
	result = await agent.run("Ship to Oslo and note it.")
	assert result.status == "success", result
	assert result.output == {"answer": "done"}
	# The two calls of one reply may run in either order.
	assert sorted(calls, key=lambda c: c[0]) == [
		("note", {"k": [1, 2]}),
		("ship", (Address(city="Oslo"), True)),
	]
	assert modes == [fitted.mode, fitted.mode]
	# The event says why a part fell back, as --dry-run does.
	assert notes == [fitted.notes, fitted.notes]
	assert any(n.startswith("local.note: input sent as JSON text") for n in notes[0])
	sent = schema_sent(host, bodies[0])
	assert sent == fitted.schema
	variants = {
		json.dumps(v["properties"]["tool"]): v["properties"]["input"]
		for v in sent["properties"]["commands"]["items"]["anyOf"]
		if "tool" in v["properties"]
	}
	inputs = list(variants.values())
	assert inputs[0]["properties"]["to"]["properties"]["city"] == {"type": "string"}
	assert inputs[1]["type"] == "string"
	await om.aclose()


async def test_a_server_refusing_structured_output_gets_the_plain_prompt_at_once() -> None:
	"""The retry without response_format carries the command shapes and every input schema."""

	@tool(name="ship", description="Ship a parcel.")
	def ship(to: Address, express: bool = False) -> str:
		return "shipped"

	reply = json.dumps({"commands": [finish({"answer": "done"})]})
	bodies: list[dict[str, Any]] = []

	def api(request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		bodies.append(body)
		if "response_format" in body:
			return httpx.Response(400, json={"error": {"message": "response_format unsupported"}})
		message = {"role": "assistant", "content": reply}
		return httpx.Response(
			200, json={"choices": [{"message": message, "finish_reason": "stop"}]}
		)

	settings = {
		"openai": {"api_key": "k", "base_url": "http://localhost:8000/v1", "api_mode": "chat"}
	}
	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=settings, http_client=http)
	agent = om.create_agent(
		name="Clerk", model="openai:llama3.2", tools=[ship], output_schema=OUTPUT
	)
	assert agent.structured_output().mode == "strict"
	with pytest.warns(Warning, match="rejected response_format"):
		result = await agent.run("Ship to Oslo.")
	assert result.status == "success"
	strict, plain = bodies
	strict_system = strict["messages"][0]["content"]
	plain_system = plain["messages"][0]["content"]
	assert "Examples:" not in strict_system and "Examples:" in plain_system
	schemas = plain_system.split("Input schemas of your tools: ", 1)[1]
	assert '"local.ship"' in schemas and '"city"' in schemas
	assert plain["messages"][1:] == strict["messages"][1:]
	await om.aclose()


@pytest.mark.parametrize(
	("model", "host"),
	[
		("openai:gpt-5-mini", "api.openai.com"),
		("anthropic:claude-sonnet-4-5", "api.anthropic.com"),
		("google:gemini-2.5-flash", "generativelanguage.googleapis.com"),
	],
)
@pytest.mark.parametrize(
	"text",
	["a\\ud800b", "\\udfff", "x\ud800"],
	ids=["escaped-by-the-model", "low-half", "decoded-by-the-transport"],
)
async def test_a_lone_surrogate_never_poisons_the_state(model: str, host: str, text: str) -> None:
	"""On every provider: refused (or replaced, from the transport); the run and its state go on."""
	calls: list[str] = []

	@tool(name="say", description="Say something.")
	def say(words: str) -> str:
		calls.append(words)
		return "said"

	first = '{"commands":[{"type":"callTool","tool":"local.say","input":{"words":"' + text + '"}}]}'
	script = [first, json.dumps({"commands": [finish({"answer": "done"})]})]
	bodies: list[bytes] = []

	def api(request: httpx.Request) -> httpx.Response:
		bodies.append(request.content)
		# ASCII JSON, as APIs send it: a surrogate in the text arrives as a "\ud800" escape.
		body = json.dumps(wire(host, script[len(bodies) - 1])).encode()
		return httpx.Response(200, content=body, headers={"content-type": "application/json"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)
	agent = om.create_agent(name="Clerk", model=model, tools=[say], output_schema=OUTPUT)
	result = await agent.run("Say it.")
	assert result.status == "success", result
	assert all("\ud800" not in c and "\udfff" not in c for c in calls)
	if "\\" in text:
		assert calls == [] and b"lone surrogate" in bodies[1]
	else:
		assert calls == ["x\ufffd"]
	saved = json.dumps(result.state.to_dict(), ensure_ascii=False).encode("utf-8")
	assert RunState.from_dict(json.loads(saved)).to_dict() == result.state.to_dict()
	await om.aclose()
