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


def _compact(body: Any) -> bytes:
	return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


SCHEMA = {
	"type": "object",
	"properties": {"commands": {"type": "array", "items": {"const": "Tromsø", "maximum": 1.5}}},
	"required": ["commands"],
}


@pytest.mark.parametrize(
	"body",
	[
		{"model": "m", "text": {"format": {"type": "json_schema", "schema": SCHEMA}}, "input": []},
		{"response_format": {"json_schema": {"schema": SCHEMA, "strict": True}}, "messages": [1]},
		{"generationConfig": {"responseJsonSchema": SCHEMA}, "contents": [{"role": "user"}]},
		{"schema": SCHEMA, "other": {"schema": SCHEMA}, "n": None, "f": 0.1, "t": True},
		{"deep": {"a": {"b": {"c": SCHEMA}}}, "e": {}, "l": [SCHEMA, {"x": SCHEMA}]},
		{1: SCHEMA, "k": {2.5: "v", None: SCHEMA, True: [SCHEMA]}},
		{"s": "a\ud800b", "x": {"schema": SCHEMA}},
	],
	ids=["responses", "chat", "gemini", "twice", "deep", "non-str keys", "surrogate"],
)
def test_a_kept_schema_is_sent_in_the_same_bytes(body: dict[Any, Any]) -> None:
	"""A kept value, anywhere and at any depth, changes no byte of a body (nor does keeping)."""
	from openmolt_providers._body import _SURROGATE, encode, keep

	expected = encode(body)
	assert keep(SCHEMA) is SCHEMA
	assert encode(body) == expected
	assert encode(body) == expected  # its text written, then reused
	if "s" not in body:
		assert expected == _compact(body)
	else:
		text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
		assert expected == _SURROGATE().sub("\ufffd", text).encode()


def test_a_kept_schema_is_written_once(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Steps that send the same schema object write it once; another schema is written anew."""
	from openmolt_providers import _body

	written: list[Any] = []
	dumps = _body._dumps

	def spy(value: Any) -> str:
		written.append(value)
		return dumps(value)

	monkeypatch.setattr(_body, "_dumps", spy)
	schema = {"type": "object", "properties": {"a": {"type": "number"}}}
	_body.keep(schema)
	for step in range(3):
		body = {"text": {"format": {"schema": schema}}, "input": [{"step": step}]}
		assert _body.encode(body) == _compact(body)
	assert sum(v is schema for v in written) == 1
	other = dict(schema)  # equal, but not the kept object: written as usual
	body = {"text": {"format": {"schema": other}}, "input": []}
	assert _body.encode(body) == _compact(body)
	assert sum(v is other for v in written) == 1


def test_the_kept_values_are_bounded() -> None:
	"""Past the bound the kept values are dropped, so a process with many tool sets holds few."""
	from openmolt_providers import _body

	schemas = [{"n": n} for n in range(_body._KEPT_SIZE + 1)]
	for schema in schemas:
		_body.keep(schema)
	assert len(_body._KEPT) <= _body._KEPT_SIZE
	assert any(v[0] is schemas[-1] for v in _body._KEPT.values())


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
async def test_each_provider_keeps_the_reply_schema_it_sends(
	model: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The reply schema of a run's requests is written once, whatever the provider."""
	from openmolt_providers import _body

	sent: list[Any] = []
	keep = _body.keep

	def spy(value: Any) -> Any:
		sent.append(value)
		return keep(value)

	monkeypatch.setattr("openmolt_providers._schema.keep", spy)

	def api(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json=wire(request.url.path))

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers=settings, http_client=http)
	agent = om.create_agent(name="Finder", model=model, instructions="Find the city.")
	assert (await agent.run("Which city?")).status == "success"
	assert (await agent.run("And again?")).status == "success"
	assert len(sent) == 2
	assert sent[0] is sent[1]
	assert any(v[0] is sent[0] and v[1] is not None for v in _body._KEPT.values())
	await om.aclose()
