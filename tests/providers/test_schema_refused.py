"""A reply schema the vendor's API refuses past its unpublished limits: the run goes on in plain JSON.

The dialects check the limits Anthropic and Google document; past internal ones the API answers
400 ("Schema is too complex for compilation", "too many states for serving") and every step of
every run failed. Now the request goes once more without structured output, with the prompt the
loop writes for that, the model is remembered (its dialect is None: the loop fits mode ``off``),
and a warning says so once. A 400 that does not name the schema is raised as before.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse
from openmolt_core.testing import finish
from openmolt_providers._common import ModelConfigWarning
from tests.providers._replies import Chunks, events, make_request, provider
from tests.providers.conftest import SCHEMA

pytestmark = pytest.mark.anyio

TEXT = json.dumps({"commands": [finish("done")]})
MESSAGES = {
	"anthropic": "output_config.format.schema: Schema is too complex for compilation",
	"google": "The specified schema produces a constraint that has too many states for serving.",
}


def _has_schema(vendor: str, body: dict[str, Any]) -> bool:
	if vendor == "anthropic":
		return "format" in body.get("output_config", {})
	return "responseJsonSchema" in body.get("generationConfig", {})


def _reply(vendor: str) -> dict[str, Any]:
	if vendor == "anthropic":
		return {
			"type": "message",
			"stop_reason": "end_turn",
			"content": [{"type": "text", "text": TEXT}],
		}
	return {"candidates": [{"content": {"parts": [{"text": TEXT}]}, "finishReason": "STOP"}]}


class Api:
	"""Refuses every request that carries a reply schema, with ``message``."""

	def __init__(self, vendor: str, message: str, *, stream: bool = False) -> None:
		self.vendor, self.message, self.stream = vendor, message, stream
		self.bodies: list[dict[str, Any]] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		body = json.loads(request.content)
		self.bodies.append(body)
		if _has_schema(self.vendor, body):
			return httpx.Response(400, json={"error": {"message": self.message}})
		if self.stream:
			sent = events(self.vendor, _reply(self.vendor))
			text = "".join(f"data: {json.dumps(e)}\n\n" for e in sent)
			kind = {"content-type": "text/event-stream"}
			return httpx.Response(200, headers=kind, stream=Chunks(text.encode(), 64))
		return httpx.Response(200, json=_reply(self.vendor))


MODELS = {"anthropic": "anthropic:claude-sonnet-4-5", "google": "google:gemini-2.5-flash"}
KEYS = {"anthropic": {"api_key": "sk-ant-test"}, "google": {"api_key": "AIza-test"}}


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_the_run_goes_on_in_plain_json(vendor) -> None:
	"""The step is asked again without the schema, with the plain prompt; later runs fit ``off``."""
	api = Api(vendor, MESSAGES[vendor])
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt({vendor: KEYS[vendor]}, http_client=client)
	agent = om.create_agent(name="Big", model=MODELS[vendor], tools=[])
	assert agent.structured_output().mode == "strict"
	with pytest.warns(ModelConfigWarning, match="refused the reply schema"):
		result = await agent.run("go")
	assert result.status == "success"
	assert [_has_schema(vendor, b) for b in api.bodies] == [True, False]
	first, plain = api.bodies
	system = json.dumps(plain.get("system") or plain.get("systemInstruction"))
	assert system != json.dumps(first.get("system") or first.get("systemInstruction"))
	assert agent.structured_output().mode == "off"
	result = await agent.run("again")  # no refused request any more, no second warning
	assert result.status == "success"
	assert [_has_schema(vendor, b) for b in api.bodies] == [True, False, False]


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_streamed_too(vendor) -> None:
	"""A stream refused for its schema before anything streamed is asked again the same way."""
	api = Api(vendor, MESSAGES[vendor], stream=True)
	p = provider(vendor, api)
	request = make_request(MODELS[vendor].split(":")[1], schema=_schema())
	final = None
	with pytest.warns(ModelConfigWarning):
		async for chunk in p.stream(request):
			if isinstance(chunk, ModelResponse):
				final = chunk
	assert final is not None and final.text == TEXT
	assert [_has_schema(vendor, b) for b in api.bodies] == [True, False]


@pytest.mark.parametrize("vendor", ["anthropic", "google"])
async def test_another_400_is_raised_and_nothing_remembered(vendor) -> None:
	"""A 400 that does not name the schema is the caller's: one request, the dialect kept."""
	api = Api(vendor, "max_tokens: must be at most 64000")
	p = provider(vendor, api)
	model = MODELS[vendor].split(":")[1]
	with pytest.raises(ProviderError, match="400"):
		await p.generate(make_request(model, schema=_schema()))
	assert len(api.bodies) == 1
	assert p.schema_dialect(model) is not None


async def test_a_plain_request_refused_too_is_raised() -> None:
	"""Refused again without the schema (the 400 names it anyway): raised, not asked a third time."""

	def refuse(request: httpx.Request) -> httpx.Response:
		return httpx.Response(400, json={"error": {"message": MESSAGES["anthropic"]}})

	p = provider("anthropic", refuse)
	with pytest.warns(ModelConfigWarning), pytest.raises(ProviderError, match="too complex"):
		await p.generate(make_request("claude-sonnet-4-5", schema=_schema()))


def _schema() -> dict[str, Any]:
	return json.loads(json.dumps(SCHEMA))
