from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt_core.llm import Attachment, Message, ModelConfig, ModelRequest

DATA = Path(__file__).parent / "data"

SCHEMA = {
	"type": "object",
	"properties": {
		"commands": {
			"type": "array",
			"minItems": 1,
			"items": {
				"anyOf": [
					{
						"type": "object",
						"properties": {
							"type": {"const": "finish"},
							"answer": {"type": "string"},
						},
						"required": ["type", "answer"],
					}
				]
			},
		}
	},
	"required": ["commands"],
}
"""A reply schema with a strict form (no free-form object)."""


class Server:
	"""A fake provider endpoint: records requests and answers from a queue (the last one repeats)."""

	def __init__(self) -> None:
		self.requests: list[httpx.Request] = []
		self.replies: list[httpx.Response | Callable[[httpx.Request], httpx.Response]] = []
		self.client = httpx.AsyncClient(transport=httpx.MockTransport(self._handle))
		self.sleeps: list[float] = []

	def reply(self, *replies: Any) -> Server:
		for r in replies:
			self.replies.append(
				r if isinstance(r, httpx.Response) or callable(r) else httpx.Response(200, json=r)
			)
		return self

	def _handle(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		index = min(len(self.requests) - 1, len(self.replies) - 1)
		reply = self.replies[index]
		return reply(request) if callable(reply) else reply

	def http(self) -> httpx.AsyncClient:
		return self.client

	async def sleep(self, seconds: float) -> None:
		self.sleeps.append(seconds)

	@property
	def body(self) -> dict[str, Any]:
		return json.loads(self.requests[-1].content)


@pytest.fixture
def server() -> Server:
	return Server()


@pytest.fixture
def load() -> Callable[[str], dict[str, Any]]:
	def _load(name: str) -> dict[str, Any]:
		return json.loads((DATA / f"{name}.json").read_text())

	return _load


def make_request(
	model: str,
	*,
	schema: dict[str, Any] | None = None,
	attachments: list[Attachment] | None = None,
	history: bool = False,
	**config: Any,
) -> ModelRequest:
	messages = [Message("user", '{"input": "Capital of Norway?"}', attachments=attachments or [])]
	if history:
		messages += [
			Message("assistant", '{"commands": []}'),
			Message("user", '{"results": []}'),
		]
	return ModelRequest(
		model=model,
		system="You are Finder.",
		messages=messages,
		response_schema=schema,
		config=ModelConfig(**config),
		cache_key="openmolt:Finder" if model else None,
	)


@pytest.fixture
def req() -> Callable[..., ModelRequest]:
	return make_request


@pytest.fixture
def schema() -> dict[str, Any]:
	return json.loads(json.dumps(SCHEMA))
