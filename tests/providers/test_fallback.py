"""Model fallback across real providers, over mock transports that fail in each way."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt, RunError
from openmolt_core.testing import finish, update_memory

from .test_switch import wire

pytestmark = pytest.mark.anyio

OPENAI = "openai:gpt-5-mini"
ANTHROPIC = "anthropic:claude-sonnet-4-5"
GOOGLE = "google:gemini-2.5-flash"
HOSTS = {
	"openai": "api.openai.com",
	"anthropic": "api.anthropic.com",
	"google": "generativelanguage.googleapis.com",
}
SCRIPT = [
	{"commands": [update_memory("noted")]},
	{"commands": [finish({"answer": "Oslo"})]},
]
NOW = {"retry-after": "0"}

Failure = Callable[[httpx.Request], httpx.Response]


def status(code: int) -> Failure:
	def fail(request: httpx.Request) -> httpx.Response:
		return httpx.Response(code, json={"error": {"message": f"failed with {code}"}}, headers=NOW)

	return fail


def raising(error: type[httpx.TransportError]) -> Failure:
	def fail(request: httpx.Request) -> httpx.Response:
		raise error("simulated", request=request)

	return fail


class Providers:
	"""Three fake provider APIs: one host fails (for its first ``times`` calls), the others answer."""

	def __init__(self, failing: str, failure: Failure, times: int = 1_000) -> None:
		self.failing = HOSTS[failing]
		self.failure = failure
		self.times = times
		self.calls: dict[str, int] = {}
		self.answered = 0

	def __call__(self, request: httpx.Request) -> httpx.Response:
		host = request.url.host
		self.calls[host] = self.calls.get(host, 0) + 1
		if host == self.failing and self.calls[host] <= self.times:
			return self.failure(request)
		text = json.dumps(SCRIPT[min(self.answered, len(SCRIPT) - 1)])
		self.answered += 1
		return httpx.Response(200, json=wire(host, text))


def agent_for(api: Providers, models: list[str], *, retries: int = 1) -> Any:
	om = OpenMolt(
		llm_providers={
			"openai": {"api_key": "sk-test-openai-key", "max_retries": retries},
			"anthropic": {"api_key": "sk-ant-test-key", "max_retries": retries},
			"google": {"api_key": "AIza-test-google-key", "max_retries": retries},
		},
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
	)
	return om.create_agent(name="Finder", model=models, instructions="Capital of Norway?")


@pytest.mark.parametrize(
	("failing", "failure", "reason", "code", "retries"),
	[
		("openai", status(500), "server_error", 500, 1),
		("openai", status(502), "server_error", 502, 1),
		("openai", status(429), "rate_limited", 429, 1),
		("anthropic", status(529), "overloaded", 529, 1),
		("google", status(503), "overloaded", 503, 1),
		("openai", status(408), "timeout", 408, 1),
		("openai", raising(httpx.ReadTimeout), "timeout", None, 0),
		("anthropic", raising(httpx.ConnectError), "unreachable", None, 0),
	],
)
async def test_a_failure_the_retries_gave_up_on_moves_the_step_to_the_next_model(
	failing: str, failure: Failure, reason: str, code: int | None, retries: int
) -> None:
	"""Each way of failing for good falls back, with a model:fallback event saying why."""
	order = {
		"openai": [OPENAI, ANTHROPIC],
		"anthropic": [ANTHROPIC, GOOGLE],
		"google": [GOOGLE, OPENAI],
	}
	models = order[failing]
	api = Providers(failing, failure)
	agent = agent_for(api, models, retries=retries)
	events: list[Any] = []
	agent.on("model:fallback", events.append)
	result = await agent.run()
	assert result.status == "success", result.error
	assert result.output == {"answer": "Oslo"}
	assert api.calls[HOSTS[failing]] == 2 * (retries + 1)  # both steps tried it first, with retries
	assert [(e.from_model, e.to_model, e.reason, e.status_code) for e in events] == [
		(models[0], models[1], reason, code)
	] * 2
	assert result.state.models == [models[1], models[1]]
	assert list(result.usage_by_model) == [models[1]]
	assert all("-test-" not in e.error for e in events)  # no key in what is reported


async def test_usage_and_cost_are_kept_per_model() -> None:
	"""A step answered by the fallback and one by the primary are counted apart, with prices."""
	api = Providers("openai", status(500), times=2)  # the first step's two attempts fail
	result = await agent_for(api, [OPENAI, ANTHROPIC]).run()
	assert result.state.models == [ANTHROPIC, OPENAI]
	per_model = result.usage_by_model
	assert per_model[ANTHROPIC].calls == 1 and per_model[OPENAI].calls == 1
	assert per_model[ANTHROPIC].cost_usd is not None and per_model[OPENAI].cost_usd is not None
	assert per_model[ANTHROPIC].cost_usd != per_model[OPENAI].cost_usd
	total = result.usage
	assert total.cost_usd == pytest.approx(
		per_model[ANTHROPIC].cost_usd + per_model[OPENAI].cost_usd
	)
	assert total.input_tokens == sum(u.input_tokens for u in per_model.values())


@pytest.mark.parametrize(
	("failure", "message"),
	[
		(status(401), "API key was rejected"),
		(status(403), "access denied"),
		(status(400), "the request was rejected"),
		(status(404), "not found"),
		(status(413), "too large"),
	],
)
async def test_authentication_and_validation_errors_fail_the_run_clearly(
	failure: Failure, message: str
) -> None:
	"""401, 403, 400, 404 and 413 do not fall back: the run fails, the next model is not asked."""
	api = Providers("openai", failure)
	with pytest.raises(RunError, match=message) as info:
		await agent_for(api, [OPENAI, ANTHROPIC]).run()
	assert HOSTS["anthropic"] not in api.calls
	assert info.value.result.status == "error"
	assert "sk-test-openai-key" not in str(info.value)


async def test_a_fallback_model_without_a_key_fails_the_run_clearly() -> None:
	"""A missing key on the next model fails the run, named, with its state: not a silent skip."""
	from openmolt import RunError

	api = Providers("openai", status(500))
	om = OpenMolt(
		llm_providers={"openai": {"api_key": "sk-test-openai-key", "max_retries": 0}},
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
	)
	agent = om.create_agent(name="Finder", model=OPENAI, fallback_models=[ANTHROPIC])
	with pytest.raises(RunError, match="OPENMOLT_ANTHROPIC_API_KEY") as caught:
		await agent.run()
	assert caught.value.result is not None and caught.value.result.state.messages


async def test_each_provider_gets_its_own_wire_request_with_the_same_conversation() -> None:
	"""The fallback request is the fallback provider's own format, carrying the same turns."""
	bodies: dict[str, list[dict[str, Any]]] = {}
	api = Providers("openai", status(503))

	def recording(request: httpx.Request) -> httpx.Response:
		bodies.setdefault(request.url.host, []).append(json.loads(request.content))
		return api(request)

	om = OpenMolt(
		llm_providers={
			"openai": {"api_key": "sk-test-openai-key", "max_retries": 0},
			"anthropic": {"api_key": "sk-ant-test-key", "max_retries": 0},
		},
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(recording)),
	)
	agent = om.create_agent(name="Finder", model=[OPENAI, ANTHROPIC], instructions="Capital?")
	await agent.run()
	first_openai = bodies[HOSTS["openai"]][0]
	first_anthropic = bodies[HOSTS["anthropic"]][0]
	assert first_openai["model"] == "gpt-5-mini" and first_anthropic["model"] == "claude-sonnet-4-5"
	assert text_of(first_openai["input"][0]["content"]) == text_of(
		first_anthropic["messages"][0]["content"]
	)


def text_of(content: str | list[dict[str, Any]]) -> str:
	"""A message's text in either API's shape (a string, or a list of text parts)."""
	if isinstance(content, str):
		return content
	return "".join(part["text"] for part in content if "text" in part)


async def test_an_attachment_the_first_model_cannot_read_goes_to_the_next_model() -> None:
	"""A video Claude cannot read is refused before anything is sent; a fallback model that
	reads it (Gemini) answers the step, reason ``unreadable``: the refusal said to use one."""
	import base64

	from openmolt_core.llm import Attachment

	api = Providers("openai", status(500))
	agent = agent_for(api, [ANTHROPIC, GOOGLE])
	events: list[Any] = []
	agent.on("model:fallback", events.append)
	clip = Attachment("video/mp4", base64.b64encode(b"\0\0\0\x18ftypmp42").decode(), "clip.mp4")
	result = await agent.run("What is in it?", attachments=[clip])
	assert result.status == "success", result.error
	assert result.state.models == [GOOGLE, GOOGLE]
	assert HOSTS["anthropic"] not in api.calls  # refused before anything was sent
	assert [(e.from_model, e.to_model, e.reason) for e in events] == [
		(ANTHROPIC, GOOGLE, "unreadable")
	] * 2
	assert "video/mp4" in events[0].error


async def test_an_attachment_no_model_can_read_fails_the_run_naming_each() -> None:
	"""When no model of the chain reads the file, the run fails with each model's refusal."""
	import base64

	from openmolt_core.llm import Attachment

	api = Providers("openai", status(500))
	agent = agent_for(api, [ANTHROPIC, OPENAI])
	clip = Attachment("video/mp4", base64.b64encode(b"\0\0\0\x18ftypmp42").decode(), "clip.mp4")
	with pytest.raises(RunError, match=r"every model failed.*Anthropic reads.*no video"):
		await agent.run("What is in it?", attachments=[clip])
	assert not api.calls
