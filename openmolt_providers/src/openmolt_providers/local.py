"""Local model servers by name: ``ollama:``, ``lmstudio:``, ``vllm:`` and ``llamacpp:`` with no settings.

Each is an instance of the ``openai`` provider (`openmolt_providers.openai.OpenAIProvider`) that
speaks Chat Completions to the server's default address on this machine, so a model id alone
runs an agent on it: ``openmolt run -m ollama:llama3.2 "Hello"``, or
``om.create_agent(model="ollama:llama3.2", ...)``. No key is sent unless one is set.

| name | server | default base URL (its documented default port) |
| --- | --- | --- |
| ``ollama`` | Ollama (``ollama serve``) | ``http://localhost:11434/v1`` |
| ``lmstudio`` | LM Studio (``lms server start``) | ``http://localhost:1234/v1`` |
| ``vllm`` | vLLM (``vllm serve MODEL``) | ``http://localhost:8000/v1`` |
| ``llamacpp`` | llama.cpp (``llama-server -m MODEL.gguf``) | ``http://localhost:8080/v1`` |

What the user sets wins, as for any instance: ``llm_providers={"ollama": {"base_url": ...}}``
(or ``baseUrl`` in an agent file), else ``OPENMOLT_OLLAMA_BASE_URL``; ``api_mode`` defaults to
``"chat"``; a key comes from ``api_key`` or ``OPENMOLT_<NAME>_API_KEY``. An instance of another
name made from one of them (``{"gpu": {"provider": "vllm", "base_url": ...}}``) reads its own
name's variables. Each entry point names its own `LocalServer` object (pluggy registers a plugin
object once).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core._envvars import env_var

if TYPE_CHECKING:
	import httpx

	from openmolt_core.plugins import ProviderRegistrar
	from openmolt_core.retry import RetryPolicy
	from openmolt_providers.openai import OpenAIProvider

__all__ = ["LocalServer", "llamacpp", "lmstudio", "ollama", "vllm"]


class LocalServer:
	"""A local OpenAI-compatible server known by name: a provider plugin of its own.

	Args:
		name: The model-id prefix (``ollama``).
		base_url: The server's default base URL on this machine.
		start: How to start it, for the error when nothing listens there.
	"""

	def __init__(self, name: str, base_url: str, start: str) -> None:
		self.name = name
		self.base_url = base_url
		self.start = start

	def __repr__(self) -> str:
		return f"LocalServer({self.name!r}, {self.base_url!r})"

	def make(
		self,
		settings: Mapping[str, Any],
		http: Callable[[], httpx.AsyncClient],
		*,
		name: str | None = None,
		retry: RetryPolicy | None = None,
	) -> OpenAIProvider:
		"""Build the provider: the ``openai`` one, at this server's address unless told another.

		Args:
			settings: The user's settings for this instance (may be empty).
			http: Returns the shared ``httpx.AsyncClient``.
			name: The instance's name (default this server's: ``ollama``, or the name of an
				instance made from it).
			retry: The instance's retry policy.
		"""
		from openmolt_providers.openai import OpenAIProvider

		name = name or self.name
		given = dict(settings)
		default = not (
			given.get("base_url")
			or given.get("baseUrl")
			or os.environ.get(env_var(name, "baseUrl"))
		)
		if default:
			given["base_url"] = self.base_url
		if given.get("api_mode") is None and given.get("apiMode") is None:
			given["api_mode"] = "chat"  # what every one of these servers speaks
		provider = OpenAIProvider(given, http, name=name, retry=retry)
		provider.local_servers = self.start
		if default:  # the server's default, not the user's: OPENMOLT_<NAME>_BASE_URL moves it
			provider._base_url_set = False
		return provider

	@hookimpl
	def register_providers(self, register: ProviderRegistrar) -> None:
		"""Register this server's name."""
		register(self.make, name=self.name)


ollama = LocalServer("ollama", "http://localhost:11434/v1", "`ollama serve` (Ollama)")
lmstudio = LocalServer("lmstudio", "http://localhost:1234/v1", "`lms server start` (LM Studio)")
vllm = LocalServer("vllm", "http://localhost:8000/v1", "`vllm serve MODEL` (vLLM)")
llamacpp = LocalServer(
	"llamacpp", "http://localhost:8080/v1", "`llama-server -m MODEL.gguf` (llama.cpp)"
)
