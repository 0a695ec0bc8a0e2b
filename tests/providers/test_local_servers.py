"""Self-hosted servers: settings, OPENMOLT_<NAME>_BASE_URL, named instances, the Chat fallback."""

import json

import httpx
import pytest

from openmolt import ConfigurationError, OpenMolt, ProviderError
from openmolt_core.testing import finish
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

REPLY = json.dumps({"commands": [finish(greeting="hi")]})


class Servers:
	"""Several OpenAI-compatible hosts behind one mock transport; some lack /responses."""

	def __init__(self, chat_only: set[str]) -> None:
		self.chat_only = chat_only
		self.seen: list[tuple[str, str, str | None]] = []
		self.client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

	def handle(self, request: httpx.Request) -> httpx.Response:
		host, path = request.url.host, request.url.path
		self.seen.append((host, path, request.headers.get("authorization")))
		if path.endswith("/chat/completions"):
			return httpx.Response(
				200, json={"choices": [{"message": {"content": REPLY}, "finish_reason": "stop"}]}
			)
		if host in self.chat_only:
			return httpx.Response(404, json={"error": {"message": "Not Found"}})
		return httpx.Response(
			200,
			json={
				"output": [{"type": "message", "content": [{"type": "output_text", "text": REPLY}]}]
			},
		)


def test_unknown_settings_are_refused_with_the_closest_one() -> None:
	"""A typo in llm_providers is an error, not a setting silently ignored."""
	with pytest.raises(
		ConfigurationError, match=r"unknown setting 'baseurl'; did you mean '(base_url|baseUrl)'\?"
	):
		OpenAIProvider({"baseurl": "http://x"}, lambda: None)
	with pytest.raises(
		ConfigurationError, match=r"api_mode: Input should be 'responses' or 'chat'"
	):
		OpenAIProvider({"api_mode": "completions"}, lambda: None)
	assert (
		OpenAIProvider({"baseUrl": "http://x/v1/", "maxRetries": 0}, lambda: None).base_url
		== "http://x/v1"
	)


def test_the_base_url_variable_and_the_key_rule(monkeypatch) -> None:
	"""OPENMOLT_OPENAI_BASE_URL is read; a key is required only at api.openai.com."""
	monkeypatch.delenv("OPENMOLT_OPENAI_API_KEY", raising=False)
	monkeypatch.setenv("OPENMOLT_OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
	local = OpenAIProvider({}, lambda: None)
	assert local.base_url == "http://127.0.0.1:8080/v1"
	assert local.key_required is False and local.api_key() is None
	assert local.price("gpt-5-mini") is None  # a local server's calls have no list price
	monkeypatch.delenv("OPENMOLT_OPENAI_BASE_URL")
	vendor = OpenAIProvider({}, lambda: None)
	assert vendor.key_required is True and vendor.price("gpt-5-mini") is not None
	with pytest.raises(ConfigurationError, match="OPENMOLT_OPENAI_API_KEY"):
		vendor.api_key()


def test_a_named_instance_has_its_own_name_and_variables(monkeypatch) -> None:
	"""ollama: an openai instance that reads OPENMOLT_OLLAMA_* and names itself in errors."""
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-openai")
	monkeypatch.setenv("OPENMOLT_OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1")
	om = OpenMolt(llm_providers={"ollama": {"provider": "openai", "api_mode": "chat"}})
	provider = om.provider("ollama")
	assert isinstance(provider, OpenAIProvider)
	assert (provider.name, provider.vendor) == ("ollama", "openai")
	assert provider.base_url == "http://127.0.0.1:11434/v1"
	assert provider.env_var == "OPENMOLT_OLLAMA_API_KEY"
	assert provider.api_key() is None  # never OpenAI's key
	assert om.provider("openai") is not provider


async def test_two_compatible_endpoints_coexist() -> None:
	"""ollama: and vllm: agents in one instance go to their own servers with their own keys."""
	servers = Servers(chat_only=set())
	om = OpenMolt(
		llm_providers={
			"ollama": {
				"provider": "openai",
				"base_url": "http://ollama.local/v1",
				"api_mode": "chat",
			},
			"vllm": {"provider": "openai", "baseUrl": "http://vllm.local/v1", "apiKey": "vk"},
		},
		http_client=servers.client,
	)
	for model in ("ollama:llama3.2", "vllm:qwen3"):
		result = await om.create_agent(name="A", model=model).run("x")
		assert result.output == {"greeting": "hi"}
	assert servers.seen == [
		("ollama.local", "/v1/chat/completions", None),
		("vllm.local", "/v1/responses", "Bearer vk"),
	]


async def test_a_server_without_responses_falls_back_to_chat_for_good() -> None:
	"""Without api_mode, a 404 on /responses switches the instance to Chat Completions."""
	servers = Servers(chat_only={"llama.local"})
	om = OpenMolt(
		llm_providers={"openai": {"base_url": "http://llama.local/v1"}}, http_client=servers.client
	)
	agent = om.create_agent(name="A", model="openai:llama")
	for _ in range(2):
		assert (await agent.run("x")).status == "success"
	assert [p for _, p, _ in servers.seen] == [
		"/v1/responses",
		"/v1/chat/completions",
		"/v1/chat/completions",
	]
	assert om.provider("openai").api_mode == "chat"


async def test_an_explicit_mode_and_the_vendor_never_fall_back(monkeypatch) -> None:
	"""api_mode 'responses' says what to set; api.openai.com's 404 is just an error."""
	servers = Servers(chat_only={"llama.local", "api.openai.com"})
	om = OpenMolt(
		llm_providers={
			"openai": {"api_key": "sk", "max_retries": 0},
			"llama": {
				"provider": "openai",
				"base_url": "http://llama.local/v1",
				"api_mode": "responses",
			},
		},
		http_client=servers.client,
	)
	with pytest.raises(ProviderError, match=r"set llm_providers\['llama'\]\['api_mode'\] = 'chat'"):
		await om.provider("llama").generate(_request())
	with pytest.raises(ProviderError, match=r"not found \(404\)"):
		await om.provider("openai").generate(_request())
	assert all(p == "/v1/responses" for _, p, _ in servers.seen)


async def test_an_explicit_mode_streamed_says_the_same(monkeypatch) -> None:
	"""Streamed (the command streams on a terminal), the 404 says what to set, as generate does.

	The stream path raised the bare "not found (404): check the model name" instead.
	"""
	servers = Servers(chat_only={"llama.local"})
	om = OpenMolt(
		llm_providers={
			"llama": {
				"provider": "openai",
				"base_url": "http://llama.local/v1",
				"api_mode": "responses",
				"max_retries": 0,
			},
		},
		http_client=servers.client,
	)
	with pytest.raises(ProviderError, match=r"set llm_providers\['llama'\]\['api_mode'\] = 'chat'"):
		async for _ in om.provider("llama").stream(_request()):
			pass
	assert all(p == "/v1/responses" for _, p, _ in servers.seen)


def _request():
	from openmolt_core.llm import Message, ModelRequest

	return ModelRequest(model="m", system="s", messages=[Message("user", "{}")])


LOCAL = {
	"ollama": ("http://localhost:11434/v1", "ollama serve"),
	"lmstudio": ("http://localhost:1234/v1", "lms server start"),
	"vllm": ("http://localhost:8000/v1", "vllm serve"),
	"llamacpp": ("http://localhost:8080/v1", "llama-server"),
}


@pytest.mark.parametrize("name", sorted(LOCAL))
def test_a_local_server_is_known_by_name_without_settings(monkeypatch, name: str) -> None:
	"""ollama:, lmstudio:, vllm:, llamacpp: need no llm_providers: Chat Completions at the default port."""
	monkeypatch.delenv(f"OPENMOLT_{name.upper()}_BASE_URL", raising=False)
	monkeypatch.delenv(f"OPENMOLT_{name.upper()}_API_KEY", raising=False)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-openai-never-sent-to-local")
	provider = OpenMolt().provider(name)
	url, start = LOCAL[name]
	assert isinstance(provider, OpenAIProvider)
	assert (provider.name, provider.vendor, provider.base_url) == (name, "openai", url)
	assert provider.api_mode == "chat" and provider.may_fall_back is False
	assert provider.key_required is False and provider.api_key() is None
	assert start in provider.local_servers  # the hint when nothing listens there


def test_what_the_user_sets_wins_over_a_local_server_default(monkeypatch) -> None:
	"""base_url (either spelling), OPENMOLT_<NAME>_BASE_URL and api_mode given are kept."""
	monkeypatch.setenv("OPENMOLT_OLLAMA_BASE_URL", "http://gpu-box:11434/v1")
	assert OpenMolt().provider("ollama").base_url == "http://gpu-box:11434/v1"
	om = OpenMolt(
		llm_providers={
			"ollama": {"base_url": "http://a.local/v1"},
			"lmstudio": {"baseUrl": "http://b.local/v1", "apiMode": "responses"},
			"vllm": {"api_mode": "responses", "api_key": "vk"},
		}
	)
	assert om.provider("ollama").base_url == "http://a.local/v1"
	studio = om.provider("lmstudio")
	assert (studio.base_url, studio.api_mode) == ("http://b.local/v1", "responses")
	vllm = om.provider("vllm")
	assert (vllm.base_url, vllm.api_mode, vllm.api_key()) == (
		"http://localhost:8000/v1",
		"responses",
		"vk",
	)


def test_an_instance_made_from_a_local_server_reads_its_own_variables(monkeypatch) -> None:
	"""{"gpu": {"provider": "vllm"}}: vLLM's defaults, but OPENMOLT_GPU_* variables and its own name."""
	monkeypatch.setenv("OPENMOLT_VLLM_BASE_URL", "http://not-this/v1")
	monkeypatch.setenv("OPENMOLT_GPU_API_KEY", "gpu-key")
	gpu = OpenMolt(llm_providers={"gpu": {"provider": "vllm"}}).provider("gpu")
	assert (gpu.name, gpu.base_url, gpu.api_key()) == ("gpu", "http://localhost:8000/v1", "gpu-key")
	monkeypatch.setenv("OPENMOLT_GPU_BASE_URL", "http://gpu.local:9000/v1")
	assert OpenMolt(llm_providers={"gpu": {"provider": "vllm"}}).provider("gpu").base_url == (
		"http://gpu.local:9000/v1"
	)


async def test_a_run_on_a_local_server_by_name_sends_no_key(monkeypatch) -> None:
	"""model="ollama:llama3.2" alone: the request goes to Ollama's Chat Completions, no Authorization."""
	monkeypatch.delenv("OPENMOLT_OLLAMA_BASE_URL", raising=False)
	monkeypatch.delenv("OPENMOLT_OLLAMA_API_KEY", raising=False)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-openai-never-sent-to-local")
	servers = Servers(chat_only=set())
	om = OpenMolt(http_client=servers.client)
	result = await om.create_agent(name="A", model="ollama:llama3.2").run("x")
	assert result.output == {"greeting": "hi"}
	assert servers.seen == [("localhost", "/v1/chat/completions", None)]


@pytest.mark.parametrize(
	("settings", "variable", "named"),
	[
		# the address was given: the variable would change nothing (a setting wins over it)
		({"base_url": "http://localhost:11434/v1"}, "http://elsewhere:1/v1", False),
		({"base_url": "http://localhost:11434/v1"}, None, False),
		# the variable gave it, or the default is used: either fixes it
		({}, "http://localhost:11434/v1", True),
		({}, None, True),
	],
)
def test_a_fix_for_the_address_names_only_what_would_change_it(
	monkeypatch, settings: dict[str, str], variable: str | None, named: bool
) -> None:
	"""`examples/local.json` sets llmProviders.ollama.baseUrl: "nothing listens" told its reader
	to fix it "(or OPENMOLT_OLLAMA_BASE_URL)", which the file's own address wins over; the
	variable is named only where setting it would move the calls."""
	if variable is None:
		monkeypatch.delenv("OPENMOLT_OLLAMA_BASE_URL", raising=False)
	else:
		monkeypatch.setenv("OPENMOLT_OLLAMA_BASE_URL", variable)
	provider = OpenMolt(llm_providers={"ollama": settings}).provider("ollama")
	said = str(provider._not_listening("llama3.2"))
	assert "llm_providers['ollama']['base_url']" in said
	assert ("OPENMOLT_OLLAMA_BASE_URL" in said) is named, said
