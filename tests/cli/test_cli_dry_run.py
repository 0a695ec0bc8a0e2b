"""--dry-run's estimate is the first request as a run sends it, for every built-in provider."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from tests.cli._http import json_server

COMMANDS = json.dumps(
	{"commands": [{"type": "finish", "status": "success", "output": {"greeting": "Hi Zoë"}}]}
)
OUTPUT_SCHEMA = {
	"type": "object",
	"properties": {"greeting": {"type": "string", "description": "the greeting — in full"}},
	"required": ["greeting"],
}


def _reply(path: str) -> dict[str, Any]:
	"""A finish command in the reply shape of the API the path names."""
	if path.endswith("/chat/completions"):
		message = {"role": "assistant", "content": COMMANDS}
		return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {}}
	if path.endswith("/responses"):
		text = {"type": "output_text", "text": COMMANDS}
		return {"output": [{"type": "message", "content": [text]}], "usage": {}}
	if path.endswith("/messages"):
		content = [{"type": "text", "text": COMMANDS}]
		return {"content": content, "stop_reason": "end_turn", "usage": {}}
	parts = {"role": "model", "parts": [{"text": COMMANDS}]}  # Gemini's generateContent
	return {"candidates": [{"content": parts, "finishReason": "STOP"}]}


class Recorder:
	"""Records each request body's bytes and answers it in the API's own shape."""

	def __init__(self) -> None:
		self.bodies: list[tuple[str, bytes]] = []
		self.httpd = json_server(self._respond)
		self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

	def _respond(self, path: str, headers: Message, body: bytes) -> tuple[int, Any]:
		self.bodies.append((path, body))
		return 200, _reply(path)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
	srv = Recorder()
	thread = threading.Thread(target=srv.httpd.serve_forever, kwargs={"poll_interval": 0.05})
	thread.start()
	yield srv
	srv.httpd.shutdown()
	srv.httpd.server_close()
	thread.join()


PROVIDERS = {
	"openai responses": ("openai:gpt-5-mini", {"openai": {"baseUrl": "{url}/v1"}}),
	"openai chat": ("openai:gpt-5-mini", {"openai": {"baseUrl": "{url}/v1", "apiMode": "chat"}}),
	"anthropic": ("anthropic:claude-haiku-4-5", {"anthropic": {"baseUrl": "{url}/v1"}}),
	"gemini": ("google:gemini-2.5-flash", {"google": {"baseUrl": "{url}/v1beta"}}),
	"ollama": (
		"ollama:llama3.2",
		{"ollama": {"provider": "openai", "baseUrl": "{url}/v1", "apiMode": "chat"}},
	),
	"local, API not set": ("local:qwen3", {"local": {"provider": "openai", "baseUrl": "{url}/v1"}}),
}


@pytest.mark.allow_model_requests  # to the recorder on 127.0.0.1
@pytest.mark.parametrize("integrations", [[], ["slack"]], ids=["no tools", "slack"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_estimate_is_the_bytes_the_first_request_sends(
	provider: str, integrations: list[str], tmp_path: Path, recorder: Recorder, cli
) -> None:
	"""request_bytes is the first request's body to the byte, reply schema and wrappers included."""
	model, settings = PROVIDERS[provider]
	settings = json.loads(json.dumps(settings).replace("{url}", recorder.url))
	for entry in settings.values():
		entry.setdefault("apiKey", "sk-test")
		entry["maxRetries"] = 0
	agent = {
		"name": "Greeter",
		"model": model,
		"instructions": "Greet the user « warmly ».",
		"outputSchema": OUTPUT_SCHEMA,
		"integrations": integrations,
		"taintPolicy": {"warn": False},
		"llmProviders": settings,
	}
	(tmp_path / "agent.json").write_text(json.dumps(agent, ensure_ascii=False))
	env = cli.clean_env(OPENMOLT_SLACK_TOKEN="xoxb-test-token")
	dry = cli.openmolt("agent.json", "--dry-run", "--json", "--input", "Zoë", cwd=tmp_path, env=env)
	assert dry.returncode == 0, dry.stderr
	estimate = json.loads(dry.stdout)
	assert recorder.bodies == []  # a dry run sends nothing
	ran = cli.openmolt("agent.json", "--input", "Zoë", cwd=tmp_path, env=env)
	assert ran.returncode == 0, ran.stderr
	sent = recorder.bodies[0][1]
	assert estimate["request_bytes"] == len(sent)
	assert estimate["characters"] == len(sent.decode())
	assert estimate["estimated_tokens"] == (estimate["characters"] + 3) // 4
	assert 0 < estimate["schema_characters"] < estimate["characters"]


@pytest.mark.anyio
@pytest.mark.parametrize("max_steps", [1, 2, 3])
async def test_the_first_request_of_a_one_step_agent_carries_its_last_step_notice(
	max_steps: int,
) -> None:
	"""first_request (what --dry-run measures) is what the first call sends, at any max_steps."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish

	model = ScriptedModel([finish("hi")])
	agent = OpenMolt().create_agent(name="G", model=model, max_steps=max_steps)
	built = agent.first_request("Zoë")
	result = await agent.run("Zoë")
	assert result.status == "success", result.error
	sent = model.requests[0]
	assert [m.content for m in built.messages] == [m.content for m in sent.messages]
	assert built.system == sent.system
	assert ("last step" in sent.messages[-1].content) == (max_steps == 1)
