"""A local stand-in for the model APIs, for the docs' examples: it finishes every run at once.

The examples are written as a reader would write them (``model="openai:gpt-5-mini"``,
``"anthropic:claude-sonnet-4-5"``); the test points ``OPENMOLT_OPENAI_BASE_URL``,
``OPENMOLT_ANTHROPIC_BASE_URL`` and ``OPENMOLT_GOOGLE_BASE_URL`` at this server on 127.0.0.1. It
answers OpenAI's Responses and Chat Completions APIs, Anthropic's Messages API and Gemini's
generateContent with one ``finish`` command whose output it builds from the output schema the
request carries, so whatever the example's ``output_schema``, the run succeeds with a valid result.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def example_of(schema: Any, defs: dict[str, Any]) -> Any:
	"""A small value that matches a JSON Schema (what a model would fill in)."""
	if not isinstance(schema, dict):
		return None
	if "$ref" in schema:
		return example_of(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
	if "const" in schema:
		return schema["const"]
	if schema.get("enum"):
		return schema["enum"][0]
	for key in ("anyOf", "oneOf"):
		if key in schema:
			options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
			return example_of(options[0], defs)
	if "allOf" in schema:
		merged: dict[str, Any] = {}
		for part in schema["allOf"]:
			merged.update(part)
		return example_of(merged, defs)
	kind = schema.get("type")
	if isinstance(kind, list):
		kind = next((k for k in kind if k != "null"), "null")
	if kind == "object" or "properties" in schema:
		props = schema.get("properties", {})
		return {name: example_of(sub, defs) for name, sub in props.items()}
	if kind == "array":
		return [example_of(schema.get("items", {}), defs) for _ in range(schema.get("minItems", 0))]
	return {"string": "example", "integer": 1, "number": 1.0, "boolean": True, "null": None}.get(
		kind, "example"
	)


def _finish_schema(envelope: Any) -> dict[str, Any] | None:
	"""The ``finish`` command's schema inside the reply envelope, wherever it sits."""
	if isinstance(envelope, dict):
		kind = envelope.get("properties", {}).get("type", {})
		if kind.get("const") == "finish" or kind.get("enum") == ["finish"]:
			return envelope
		for value in envelope.values():
			found = _finish_schema(value)
			if found is not None:
				return found
	elif isinstance(envelope, list):
		for value in envelope:
			found = _finish_schema(value)
			if found is not None:
				return found
	return None


def _defs(value: Any, out: dict[str, Any]) -> dict[str, Any]:
	"""Every ``$defs`` / ``definitions`` entry anywhere in the request, for ``$ref`` lookups."""
	if isinstance(value, dict):
		for key in ("$defs", "definitions"):
			if isinstance(value.get(key), dict):
				out.update(value[key])
		for sub in value.values():
			_defs(sub, out)
	elif isinstance(value, list):
		for sub in value:
			_defs(sub, out)
	return out


def reply_for(body: dict[str, Any]) -> str:
	"""The model's reply: finish, with an output that fits the request's output schema."""
	finish = _finish_schema(body) or {}  # wherever the provider put the reply schema
	command = example_of(finish, _defs(body, {})) if finish else {}
	command = command if isinstance(command, dict) else {}
	command.update(type="finish", status="success")
	command.setdefault("output", None)
	return json.dumps({"commands": [command]})


class FakeOpenAI:
	"""OpenAI's two APIs on 127.0.0.1, answered by `reply_for`; requests are kept."""

	def __init__(self) -> None:
		self.requests: list[dict[str, Any]] = []
		owner = self

		class Handler(BaseHTTPRequestHandler):
			def do_POST(self) -> None:
				body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
				owner.requests.append({"path": self.path, "body": body})
				text = reply_for(body)
				usage = {"input_tokens": 50, "output_tokens": 10}
				if self.path.endswith("/messages"):  # Anthropic
					data: dict[str, Any] = {
						"type": "message",
						"role": "assistant",
						"content": [{"type": "text", "text": text}],
						"stop_reason": "end_turn",
						"usage": usage,
					}
				elif self.path.endswith(":generateContent"):  # Gemini
					data = {
						"candidates": [
							{
								"content": {"role": "model", "parts": [{"text": text}]},
								"finishReason": "STOP",
							}
						],
						"usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10},
					}
				elif self.path.endswith("/chat/completions"):
					data = {
						"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
						"usage": {"prompt_tokens": 50, "completion_tokens": 10},
					}
				else:
					data = {
						"output": [
							{"type": "message", "content": [{"type": "output_text", "text": text}]}
						],
						"usage": usage,
					}
				raw = json.dumps(data).encode()
				self.send_response(200)
				self.send_header("Content-Type", "application/json")
				self.send_header("Content-Length", str(len(raw)))
				self.end_headers()
				self.wfile.write(raw)

			def log_message(self, *args: Any) -> None:
				pass

		self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
		self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture(scope="session")
def fake_openai():
	server = FakeOpenAI()
	thread = threading.Thread(target=server.httpd.serve_forever, args=(0.02,), daemon=True)
	thread.start()
	yield server
	server.httpd.shutdown()
	server.httpd.server_close()
