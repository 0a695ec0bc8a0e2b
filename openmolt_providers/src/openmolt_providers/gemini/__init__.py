"""Google Gemini models: ``google:<model>``, over the Gemini API.

API targeted: ``POST /v1beta/models/{model}:generateContent``
(https://ai.google.dev/api/generate-content), checked against the ``google-genai`` 3.6 types. The
key travels in the ``x-goog-api-key`` header, never in the URL. Structured output uses
``responseMimeType`` with ``responseJsonSchema``; thinking uses ``thinkingLevel`` on Gemini 3 and
``thinkingBudget`` on Gemini 2.5; search is the ``googleSearch`` grounding tool. A reply the API
stops at its per-request token limit (``finishReason: CONTINUATION``) goes on with its
``continuationToken``, as the SDK's ``automatic_continuation`` does (`_convert.go_on`).

Settings: `openmolt_providers.settings.GeminiSettings`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from openmolt_core import hookimpl
from openmolt_core.errors import ProviderError
from openmolt_providers._body import encode
from openmolt_providers._common import HTTPProvider, billed
from openmolt_providers.gemini import _convert, _dialect, _stream
from openmolt_providers.settings import GeminiSettings

if TYPE_CHECKING:
	from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

	import httpx

	from openmolt_core.capabilities.structured import SchemaDialect
	from openmolt_core.llm import ModelConfig, ModelRequest, ModelResponse
	from openmolt_core.plugins import ProviderRegistrar
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.streaming import StreamChunk

__all__ = ["GeminiProvider", "register_providers"]


class GeminiProvider(HTTPProvider):
	"""Gemini over the Gemini API (``generativelanguage.googleapis.com``).

	Args:
		settings: The user's ``llm_providers["google"]`` dict (see the module docstring).
		http: Returns the shared ``httpx.AsyncClient``.
		sleep: Waits between retries; tests pass a fake one.
		name: The instance's name (default: the vendor's).
		retry: The instance's retry policy (`openmolt_core.retry.RetryPolicy`).
	"""

	name = "google"
	settings_model = GeminiSettings
	# ai.google.dev/gemini-api/docs/models: 1,048,576 input tokens for Gemini 2.x and 3.x.
	context_windows = (
		("gemini-2", 1_048_576),
		("gemini-3", 1_048_576),
		# The aliases (gemini-flash-latest...) name a current model: 1M tokens, as every one.
		("gemini-flash-", 1_048_576),
		("gemini-pro-latest", 1_048_576),
	)
	default_base_url = "https://generativelanguage.googleapis.com/v1beta"
	# docs.litellm.ai (the Gemini CLI guide): the LiteLLM proxy serves the generateContent routes.
	local_servers = (
		"`litellm --config config.yaml` (the LiteLLM proxy speaks the Gemini API: base_url "
		"http://localhost:4000/v1beta)"
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
		self._urls: dict[str, str] = {}

	def auth_headers(self, key: str | None) -> dict[str, str]:
		"""``x-goog-api-key``."""
		return {"x-goog-api-key": key} if key else {}

	def url(self, model: str) -> str:
		"""The ``generateContent`` URL of a model (no key in it)."""
		url = self._urls.get(model)
		if url is None:
			name = model.removeprefix("models/")
			url = f"{self.base_url}/models/{quote(name, safe='.-_')}:generateContent"
			self._urls[model] = url
		return url

	def schema_dialect(self, model: str, config: ModelConfig | None = None) -> SchemaDialect | None:
		"""The structured-output dialect of a model (None: JSON mode without a schema).

		Args:
			model: The model name.
			config: The agent's model configuration: with ``search`` on, Gemini 2.5 has none.
		"""
		if model in self.plain_models:
			return None  # the API refused its schema once (`schema_refused`)
		return _dialect.dialect_for(model, search=config is not None and config.search)

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
		url = self.url(request.model)
		data = first or await self.post(url, encode(body), model=request.model)
		hops: list[dict[str, Any]] = []
		# The API stopped the reply at its per-request limit: go on with it (`_convert.go_on`).
		while (token := _convert.continued(data)) and len(hops) < _convert.MAX_CONTINUATIONS:
			hops.append(data)
			try:
				data = await self.post(
					url, encode(_convert.go_on(body, token)), model=request.model
				)
			except ProviderError as exc:  # the stopped requests were billed all the same
				billed(exc, _convert.hops_usage(self, request.model, hops))
				raise
		return _convert.parse_continued(self, request.model, hops, data)

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
				if "candidates" in data or "promptFeedback" in data or "error" in data
				else None
			),
			lambda data: self._generate(request, data) if _convert.continued(data) else None,
		)


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
	"""Register ``google``."""
	register(GeminiProvider, name="google")
