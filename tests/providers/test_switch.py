from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import finish, update_memory

pytestmark = pytest.mark.anyio

SCRIPT = [
	{"commands": [update_memory("Norway's capital is Oslo.")]},
	{"commands": [finish({"answer": "Oslo"}, human_message="Oslo.")]},
]
CONFIG = {"thinking": "low", "max_output_tokens": 8000, "stop": None}
SETTINGS = {
	"openai": {"api_key": "sk-a"},
	"anthropic": {"api_key": "sk-ant-b"},
	"google": {"api_key": "AIza-c"},
}


def wire(host: str, text: str) -> dict[str, Any]:
	"""The reply text in the wire format of the provider at host."""
	if host == "api.openai.com":
		return {
			"status": "completed",
			"output": [
				{
					"type": "message",
					"role": "assistant",
					"content": [{"type": "output_text", "text": text, "annotations": []}],
				}
			],
			"usage": {
				"input_tokens": 100,
				"output_tokens": 10,
				"input_tokens_details": {"cached_tokens": 0},
				"output_tokens_details": {"reasoning_tokens": 4},
			},
		}
	if host == "api.anthropic.com":
		return {
			"type": "message",
			"role": "assistant",
			"stop_reason": "end_turn",
			"content": [
				{"type": "thinking", "thinking": "...", "signature": "s"},
				{"type": "text", "text": text},
			],
			"usage": {"input_tokens": 100, "output_tokens": 10},
		}
	return {
		"candidates": [
			{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
		],
		"usageMetadata": {
			"promptTokenCount": 100,
			"candidatesTokenCount": 6,
			"thoughtsTokenCount": 4,
		},
	}


class ScriptedServers:
	"""Three fake provider APIs that answer the same scripted conversation in their own formats."""

	def __init__(self) -> None:
		self.calls: dict[str, list[dict[str, Any]]] = {}

	def __call__(self, request: httpx.Request) -> httpx.Response:
		host = request.url.host
		sent = self.calls.setdefault(host, [])
		sent.append(json.loads(request.content))
		return httpx.Response(200, json=wire(host, json.dumps(SCRIPT[len(sent) - 1])))


@pytest.mark.parametrize(
	("model", "host"),
	[
		("openai:gpt-5-mini", "api.openai.com"),
		("anthropic:claude-sonnet-4-5", "api.anthropic.com"),
		("google:gemini-2.5-flash", "generativelanguage.googleapis.com"),
	],
)
async def test_same_agent_same_result_on_every_provider(model, host) -> None:
	"""One agent definition and model_config run unchanged on OpenAI, Anthropic and Gemini."""
	servers = ScriptedServers()
	http = httpx.AsyncClient(transport=httpx.MockTransport(servers))
	om = OpenMolt(llm_providers=SETTINGS, http_client=http)  # providers found through entry points
	agent = om.create_agent(
		name="Finder",
		model=model,
		instructions="Find the capital.",
		model_config=CONFIG,
		output_schema={
			"type": "object",
			"properties": {"answer": {"type": "string"}},
			"required": ["answer"],
		},
	)
	result = await agent.run("Capital of Norway?")
	assert result.status == "success"
	assert result.output == {"answer": "Oslo"}
	assert result.usage.calls == 2 and result.usage.input_tokens == 200
	assert result.usage.output_tokens == 20
	assert list(servers.calls) == [host] and len(servers.calls[host]) == 2
	first, second = servers.calls[host]
	assert len(json.dumps(second)) > len(json.dumps(first))  # the history grows at the end


async def test_entry_points_find_the_providers(monkeypatch) -> None:
	"""create_agent finds openai through its entry point, without a key; the run names the variable."""
	from openmolt_providers.openai import OpenAIProvider

	monkeypatch.delenv("OPENMOLT_OPENAI_API_KEY", raising=False)
	om = OpenMolt()
	agent = om.create_agent(name="Finder", model="openai:gpt-5-mini")
	assert isinstance(om.provider("openai"), OpenAIProvider)
	assert om.plugins.source("providers:openai") == "openmolt-providers"
	with pytest.raises(ConfigurationError, match="OPENMOLT_OPENAI_API_KEY"):
		await agent.run("hi")
	await om.aclose()


def test_importing_the_package_loads_no_provider() -> None:
	"""Importing openmolt_providers loads none of the provider modules."""
	import subprocess
	import sys

	code = (
		"import sys, openmolt_providers; "
		"print([m for m in sys.modules if m.startswith('openmolt_providers.')])"
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	assert out.stdout.strip() == "['openmolt_providers._common']"
