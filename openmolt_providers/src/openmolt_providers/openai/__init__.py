"""OpenAI models: ``openai:<model>``, over the Responses API or an OpenAI-compatible server.

API targeted: the Responses API, ``POST /v1/responses`` (https://platform.openai.com/docs/api-reference/responses),
checked against the ``openai`` Python SDK 3.57 types. With ``api_mode: "chat"`` the provider speaks
Chat Completions (``POST {base_url}/chat/completions``) instead, which Ollama, vLLM, LM Studio,
OpenRouter and most gateways serve::

	OpenMolt(llm_providers={"openai": {"base_url": "http://localhost:11434/v1", "api_mode": "chat"}})

Settings: ``api_key`` (default: ``OPENMOLT_OPENAI_API_KEY``; optional for a chat server at another
``base_url``), ``base_url``, ``api_mode`` (``responses`` or ``chat``), ``organization``,
``project``, ``timeout``, ``max_retries``, ``headers``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ConfigurationError
from openmolt_providers._body import encode
from openmolt_providers._common import HTTPProvider
from openmolt_providers.openai import _chat, _responses

if TYPE_CHECKING:
	import httpx

	from openmolt_core.llm import ModelRequest, ModelResponse
	from openmolt_core.plugins import ProviderRegistrar

__all__ = ["OpenAIProvider", "register_providers"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider(HTTPProvider):
	"""OpenAI over the Responses API, or any OpenAI-compatible Chat Completions server.

	Args:
		settings: The user's ``llm_providers["openai"]`` dict (see the module docstring).
		http: Returns the shared ``httpx.AsyncClient``.
		sleep: Waits between retries; tests pass a fake one.

	Raises:
		ConfigurationError: ``api_mode`` is neither ``responses`` nor ``chat``.
	"""

	name = "openai"
	env_var = "OPENMOLT_OPENAI_API_KEY"
	# platform.openai.com/docs/models (2026-11): GPT-5.4 and later 1.05M, GPT-5 400K,
	# GPT-4.1 1,047,576, o-series 200K, GPT-4o 128K.
	context_windows = (
		("gpt-5.4", 1_050_000),
		("gpt-5.5", 1_050_000),
		("gpt-5", 400_000),
		("gpt-4.1", 1_047_576),
		("gpt-4o", 128_000),
		("o1", 200_000),
		("o3", 200_000),
		("o4", 200_000),
	)
	default_base_url = DEFAULT_BASE_URL

	def __init__(
		self,
		settings: Mapping[str, Any],
		http: Callable[[], httpx.AsyncClient],
		*,
		sleep: Callable[[float], Awaitable[None]] | None = None,
	) -> None:
		super().__init__(settings, http, sleep=sleep)
		mode = settings.get("api_mode", settings.get("apiMode", "responses"))
		if mode not in ("responses", "chat"):
			raise ConfigurationError(
				f"llm_providers['openai']['api_mode'] must be 'responses' or 'chat', got {mode!r}"
			)
		self.api_mode: str = mode
		self.official = self.base_url == DEFAULT_BASE_URL
		# A local OpenAI-compatible server (Ollama, vLLM, LM Studio) usually needs no key.
		self.key_required = self.official or mode == "responses"
		self._url = self.base_url + ("/responses" if mode == "responses" else "/chat/completions")

	def auth_headers(self, key: str | None) -> dict[str, str]:
		"""``Authorization: Bearer``, plus the organization and project when set."""
		headers = {"authorization": f"Bearer {key}"} if key else {}
		if org := self.settings.get("organization"):
			headers["openai-organization"] = str(org)
		if project := self.settings.get("project"):
			headers["openai-project"] = str(project)
		return headers

	def build(self, request: ModelRequest) -> dict[str, Any]:
		"""The request body for one call (exposed for tests and debugging)."""
		if self.api_mode == "chat":
			return _chat.build(self, request)
		return _responses.build(self, request)

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send one request and return the reply text, usage and raw response.

		Raises:
			ConfigurationError: No API key is set.
			ProviderError: The API refused the request or failed after retries.
		"""
		self.headers()  # a missing key fails here, before any body is built or sent
		body = encode(self.build(request))
		data = await self.post(self._url, body, model=request.model)
		if self.api_mode == "chat":
			return _chat.parse(self, request.model, data)
		return _responses.parse(self, request.model, data)


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
	"""Register ``openai``."""
	register(OpenAIProvider, name="openai")
