"""Anthropic Claude models: ``anthropic:<model>``, over the Messages API.

API targeted: ``POST /v1/messages`` with ``anthropic-version: 2023-06-01``
(https://platform.claude.com/docs/en/api/messages), checked against the ``anthropic`` Python SDK
2.14 types. Structured outputs use ``output_config.format``; thinking uses adaptive thinking with
``output_config.effort`` on Claude 4.6 and later, a ``budget_tokens`` budget before; search is the
``web_search_20250305`` server tool.

Settings: `openmolt_providers.settings.AnthropicSettings` (e.g. ``anthropic-beta``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ProviderError
from openmolt_providers._body import encode
from openmolt_providers._common import HTTPProvider, billed
from openmolt_providers.anthropic import _convert, _models, _stream
from openmolt_providers.anthropic._dialect import ANTHROPIC
from openmolt_providers.settings import AnthropicSettings

if TYPE_CHECKING:
	from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

	import httpx

	from openmolt_core.capabilities.structured import SchemaDialect
	from openmolt_core.llm import ModelConfig, ModelRequest, ModelResponse
	from openmolt_core.plugins import ProviderRegistrar
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.streaming import StreamChunk

__all__ = ["API_VERSION", "AnthropicProvider", "register_providers"]

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header value."""


class AnthropicProvider(HTTPProvider):
	"""Claude over the Anthropic Messages API.

	Args:
		settings: The user's ``llm_providers["anthropic"]`` dict (see the module docstring).
		http: Returns the shared ``httpx.AsyncClient``.
		sleep: Waits between retries; tests pass a fake one.
		name: The instance's name (default: the vendor's).
		retry: The instance's retry policy (`openmolt_core.retry.RetryPolicy`).
	"""

	name = "anthropic"
	settings_model = AnthropicSettings
	# docs.anthropic.com models overview: 200K for Claude 3 and 4 models (1M needs a beta header).
	context_windows = (("claude", 200_000),)
	default_base_url = "https://api.anthropic.com/v1"
	# docs.ollama.com/api/anthropic-compatibility: Ollama serves /v1/messages on its own port;
	# docs.litellm.ai: the LiteLLM proxy serves /v1/messages for any model it routes.
	local_servers = (
		"`ollama serve` (Ollama speaks the Messages API: base_url http://localhost:11434/v1) or "
		"`litellm --config config.yaml` (the LiteLLM proxy, port 4000)"
	)

	def __init__(
		self,
		settings: Mapping[str, Any],
		http: Callable[[], httpx.AsyncClient],
		*,
		sleep: Callable[[float], Awaitable[None]] | None = None,
		name: str | None = None,
		retry: RetryPolicy | None = None,
	) -> None:
		super().__init__(settings, http, sleep=sleep, name=name, retry=retry)
		self._url = self.base_url + "/messages"

	def auth_headers(self, key: str | None) -> dict[str, str]:
		"""``x-api-key`` and ``anthropic-version``."""
		headers = {"anthropic-version": API_VERSION}
		if key:
			headers["x-api-key"] = key
		return headers

	def schema_dialect(self, model: str, config: ModelConfig | None = None) -> SchemaDialect | None:
		"""The structured-output dialect of a model (None: it has no structured outputs).

		Args:
			model: The model name.
			config: The agent's model configuration: with ``search`` on there is none (web
				search results carry citations, which structured outputs refuse).
		"""
		if not _models.structured(model) or (config is not None and config.search):
			return None
		if model in self.plain_models:
			return None  # the API refused its schema once (`schema_refused`)
		return ANTHROPIC

	def _built(self, request: ModelRequest) -> dict[str, Any]:
		return _convert.build(self, request)

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send one request and return the reply text, usage and raw response.

		Raises:
			ConfigurationError: No API key is set.
			ProviderError: The API refused the request or failed after retries.
		"""
		self.headers()
		# An error sent in a 200 reply (an overload) is retried as its status would be.
		return await self.again(lambda: self.asked(self._generate, request))

	async def _generate(
		self, request: ModelRequest, first: dict[str, Any] | None = None
	) -> ModelResponse:
		"""One call; ``first`` is its first reply when a server already sent it (`stream`)."""
		body = self._body(request)
		data = first or await self.post(self._url, encode(body), model=request.model)
		paused: list[dict[str, Any]] = []
		while data.get("stop_reason") == _convert.PAUSE and len(paused) < _convert.MAX_PAUSES:
			paused.append(data)  # the API paused a long turn of its server tools: go on with it
			try:
				data = await self.post(
					self._url, encode(_convert.go_on(body, paused)), model=request.model
				)
			except ProviderError as exc:  # the paused requests were billed all the same
				billed(exc, _convert.paused_usage(self, request.model, paused))
				raise
		return _convert.parse_paused(self, request.model, paused, data)

	def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		"""Send one request and yield the reply text as it arrives, then the whole response.

		The final response equals what `generate` returns for the same reply.

		Raises:
			ConfigurationError: No API key is set.
			ProviderError: The API refused the request, failed after retries, or the stream was
				cut off before the reply was complete.
		"""
		self.headers()
		return self.streamed(
			lambda: self.asked_stream(functools.partial(_stream.stream, self), request),
			lambda: self.generate(request),
			request.model,
			lambda data: (
				_convert.parse(self, request.model, data)
				if "content" in data or "error" in data
				else None
			),
			lambda data: (
				self._generate(request, data) if data.get("stop_reason") == _convert.PAUSE else None
			),
		)


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
	"""Register ``anthropic``."""
	register(AnthropicProvider, name="anthropic")
