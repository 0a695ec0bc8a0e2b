"""No secret the instance knows reaches a model in what the agent itself writes to it.

The first turn (the instructions, the tools' descriptions and input schemas, the memory, the
input), the system prompt, and the reply schema sent as structured output hold what the
application wrote: a key pasted into one, or a listed tool whose description echoes its token,
went to the model unmasked. Every spelling is checked (`openmolt_core._support.masking`), on a
scripted model (no structured output: the first turn lists the input schemas) and on OpenAI's
Responses API over a fake server (the schemas travel in the reply schema).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from pydantic import Field

from openmolt import OpenMolt
from openmolt_core._support.masking import spellings
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio

KEY = "sk-CANARY/provider+key=0001"
"""The provider's key, which the instance's secret set holds."""


def _leaky_tool() -> Any:
	b64 = base64.b64encode(KEY.encode()).decode()

	@tool(name="look", description=f"Look things up (it uses {KEY}, or {b64}).")
	def look(q: str = Field(description=f"A query; e.g. 'key={json.dumps(KEY)}'")) -> str:
		return "x"

	return look


def _agent(model: Any, http: httpx.AsyncClient | None = None) -> Any:
	om = OpenMolt({"openai": {"api_key": KEY}}, entry_points=http is not None, http_client=http)
	return om.create_agent(
		name="Leaky",
		model=model,
		tools=[_leaky_tool()],
		instructions=f"Call with the key {KEY}.",
		memory={"long_term": f"the key is {KEY}"},
	)


def _clean(text: str) -> None:
	found = [s for s in spellings(KEY) if s in text]
	assert not found, found


async def test_nothing_the_agent_writes_holds_a_secret() -> None:
	"""System prompt, first turn (tools with input schemas, memory, input): all masked."""
	model = ScriptedModel([finish("done")])
	agent = _agent(model)
	result = await agent.run({"note": f"key {KEY}"})
	assert result.status == "success"
	request = model.requests[0]
	first = request.messages[0].content
	assert '"inputSchema"' in first and '"memory"' in first and "[redacted]" in first
	json.loads(first)  # still JSON
	_clean(request.system + first + json.dumps(request.response_schema))


async def test_the_reply_schema_sent_holds_no_secret() -> None:
	"""On a provider with structured output, the body sent (reply schema included) is masked."""
	bodies: list[bytes] = []
	text = json.dumps({"commands": [finish("done")]})

	def handle(request: httpx.Request) -> httpx.Response:
		bodies.append(request.content)
		content = [{"type": "output_text", "text": text, "annotations": []}]
		message = {"type": "message", "role": "assistant", "content": content}
		return httpx.Response(200, json={"status": "completed", "output": [message]})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	agent = _agent("openai:gpt-5-mini", client)
	result = await agent.run("go")
	assert result.status == "success"
	body = bodies[0].decode()
	fmt = json.loads(body)["text"]["format"]
	assert fmt["strict"] is True
	assert "[redacted]" in json.dumps(fmt["schema"])
	_clean(body)
	# the same schema object goes out at every step: masked once, not at each step
	schema = agent.structured_output().schema
	assert schema is not None
	assert agent.redact.json_object(schema) is agent.redact.json_object(schema)
