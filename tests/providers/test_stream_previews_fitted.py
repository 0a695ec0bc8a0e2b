"""Streamed previews show the reply the loop reads, not the provider's structured-output encoding.

Under strict structured output the model writes what the fitted schema allows (`openmolt_core.
structured`): a finish ``output`` of an agent without an output schema as JSON text, the input of
a tool with no strict form as JSON text, and, on OpenAI, ``null`` for an optional property it
leaves out. The loop undoes that (``FittedSchema.restore``) before it validates the reply. The
previews did not: ``text:delta`` of the output said the output was the string ``'"Paris"'``
(quotes and all, ``raw`` False) while the run's output was ``'Paris'``, breaking "the deltas of
one field concatenate to its final value" (docs/guides/streaming.md) on every real provider; a
``command:ready`` tool call showed its input as a string of JSON, or with the nulls.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.functiontools import FunctionTool
from tests.providers._replies import events

pytestmark = pytest.mark.anyio

SETTINGS = {
	"openai": {"api_key": "sk-a"},
	"anthropic": {"api_key": "sk-ant-b"},
	"google": {"api_key": "AIza-c"},
}
VENDORS = {
	"openai:gpt-5-mini": "openai",
	"anthropic:claude-sonnet-4-5": "anthropic",
	"google:gemini-2.5-flash": "google",
}
SHIP = {
	"type": "object",
	"properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
	"required": ["city"],
	"additionalProperties": False,
}
NOTE = {"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]}


def _wire(vendor: str, text: str) -> dict[str, Any]:
	if vendor == "openai":
		content = [{"type": "output_text", "text": text, "annotations": []}]
		usage = {"input_tokens": 10, "output_tokens": 5}
		return {
			"status": "completed",
			"output": [{"type": "message", "content": content}],
			**{"usage": usage},
		}
	if vendor == "anthropic":
		return {
			"stop_reason": "end_turn",
			"content": [{"type": "text", "text": text}],
			"usage": {"input_tokens": 10, "output_tokens": 5},
		}
	return {"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]}


def _api(vendor: str, script: list[dict[str, Any]]) -> Any:
	calls: list[int] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(1)
		reply = _wire(vendor, json.dumps(script[len(calls) - 1]))
		body = json.loads(request.content)
		if not (body.get("stream") or ":streamGenerateContent" in str(request.url)):
			return httpx.Response(200, json=reply)
		sse = "".join(f"data: {json.dumps(e)}\n\n" for e in events(vendor, reply))
		return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=sse)

	return handle


@pytest.mark.parametrize("model", list(VENDORS))
async def test_previews_show_what_the_loop_reads(model: str) -> None:
	"""The output's deltas add up to the run's output; a ready call's input is the tool's object."""
	vendor = VENDORS[model]
	ran: dict[str, Any] = {}

	def keep(name: str) -> Any:
		return lambda given, context: ran.setdefault(name, given) and "ok"

	tools = [
		FunctionTool(handle="ship", description="Ship.", function=keep("ship"), input_schema=SHIP),
		FunctionTool(handle="note", description="Note.", function=keep("note"), input_schema=NOTE),
	]
	ship: dict[str, Any] = {"type": "callTool", "tool": "local.ship", "input": {"city": "Oslo"}}
	if vendor == "openai":  # every property required: the one left out is null
		ship["input"] = {"city": "Oslo", "zip": None}
	note: dict[str, Any] = {
		"type": "callTool",
		"tool": "local.note",
		"input": json.dumps({"data": {"k": [1]}}),
	}
	done: dict[str, Any] = {
		"type": "finish",
		"status": "success",
		"humanMessage": "Shipped.",
		"output": json.dumps("Paris"),
	}
	script = [{"commands": [ship, note]}, {"commands": [done]}]
	http = httpx.AsyncClient(transport=httpx.MockTransport(_api(vendor, script)))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)
	agent = om.create_agent(name="Clerk", model=model, tools=tools)
	fitted = agent.structured_output()
	assert fitted.output_encoded and fitted.encoded == {"local.note"}
	deltas: list[tuple[str, str, bool]] = []
	ready: list[dict[str, Any]] = []
	agent.on("text:delta", lambda e: deltas.append((e.field, e.text, e.raw)))
	agent.on("command:ready", lambda e: ready.append(e.command))
	result = await agent.run("Ship to Oslo.")
	assert result.status == "success", result
	assert result.output == "Paris"
	output = [(text, raw) for field, text, raw in deltas if field == "output"]
	assert "".join(text for text, _ in output) == result.output
	assert not any(raw for _, raw in output)  # a string output comes decoded
	calls = {c["tool"]: c["input"] for c in ready if c["type"] == "callTool"}
	assert calls == {"local.ship": {"city": "Oslo"}, "local.note": {"data": {"k": [1]}}}
	assert calls["local.ship"] == ran["ship"] and calls["local.note"] == ran["note"]
	[finished] = [c for c in ready if c["type"] == "finish"]
	assert finished["output"] == result.output
	await om.aclose()


async def test_an_object_output_sent_as_text_previews_as_its_json_source() -> None:
	"""An output that is not a string, sent as JSON text, streams as its JSON source (raw)."""
	done = {"type": "finish", "status": "success", "output": json.dumps({"city": "Oslo"})}
	http = httpx.AsyncClient(transport=httpx.MockTransport(_api("openai", [{"commands": [done]}])))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)
	agent = om.create_agent(name="Clerk", model="openai:gpt-5-mini")
	deltas: list[tuple[str, str, bool]] = []
	agent.on("text:delta", lambda e: deltas.append((e.field, e.text, e.raw)))
	result = await agent.run("Where?")
	assert result.output == {"city": "Oslo"}
	output = [(text, raw) for field, text, raw in deltas if field == "output"]
	assert all(raw for _, raw in output)
	assert json.loads("".join(text for text, _ in output)) == result.output
	await om.aclose()


PLACE = {
	"type": "object",
	"properties": {
		"city": {"type": "string"},
		"zip": {"type": "string"},
		"tags": {
			"type": "array",
			"items": {
				"type": "object",
				"properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
				"required": ["k"],
				"additionalProperties": False,
			},
		},
	},
	"required": ["city"],
	"additionalProperties": False,
}


async def test_an_object_output_previews_without_the_nulls_of_properties_left_out() -> None:
	"""OpenAI's strict mode sends each optional property the model left out as null; the loop
	drops them, and so do the previews: the output's deltas add up to the run's output."""
	out = {"city": "Oslo", "zip": None, "tags": [{"k": "a", "v": None}, {"k": "b", "v": 2}]}
	done = {"type": "finish", "status": "success", "humanMessage": "Done.", "output": out}
	sent: list[dict[str, Any]] = []
	handle = _api("openai", [{"commands": [done]}])

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(json.loads(request.content))
		return handle(request)

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)
	agent = om.create_agent(name="Clerk", model="openai:gpt-5-mini", output_schema=PLACE)
	deltas: list[tuple[str, str, bool]] = []
	agent.on("text:delta", lambda e: deltas.append((e.field, e.text, e.raw)))
	result = await agent.run("Where?")
	assert result.output == {"city": "Oslo", "tags": [{"k": "a"}, {"k": "b", "v": 2}]}
	output = [(text, raw) for field, text, raw in deltas if field == "output"]
	assert output and all(raw for _, raw in output)
	joined = "".join(text for text, _ in output)
	assert json.loads(joined) == result.output and "null" not in joined
	# What was asked: strict output, every property required, the optional ones nullable.
	fmt = sent[0]["text"]["format"]
	assert sent[0]["stream"] is True and fmt["strict"] is True
	await om.aclose()
