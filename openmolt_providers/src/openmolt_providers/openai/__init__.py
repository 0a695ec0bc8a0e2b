"""OpenAI models: ``openai:<model>``, over the Responses API or an OpenAI-compatible server.

API targeted: the Responses API, ``POST /v1/responses`` (https://platform.openai.com/docs/api-reference/responses),
checked against the ``openai`` Python SDK 3.57 types. With ``api_mode: "chat"`` the provider speaks
Chat Completions (``POST {base_url}/chat/completions``) instead, which Ollama, vLLM, LM Studio,
llama.cpp's server, OpenRouter and most gateways serve (on api.openai.com, a model the Responses
API alone serves, such as ``gpt-5-pro``, is still asked there). Name an instance per server, so that each
keeps its own URL and key next to OpenAI's (docs/guides/local-models.md)::

	ollama = {"provider": "openai", "base_url": "http://localhost:11434/v1", "api_mode": "chat"}
	om = OpenMolt(llm_providers={"ollama": ollama})
	om.create_agent(name="Local", model="ollama:llama3.2", ...)

Without ``api_mode``, a server other than api.openai.com is asked on the Responses API first; if
it has none (404, 405 or 501, or LM Studio's "Unexpected endpoint" reply), the provider switches
to Chat Completions for good and logs it once. No key is needed there, since a local server
usually has none. Settings: `openmolt_providers.settings.OpenAISettings`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from openmolt_core import hookimpl
from openmolt_core.errors import ProviderError
from openmolt_providers._common import HTTPProvider, refuses_stream
from openmolt_providers._schema import plain_request
from openmolt_providers.openai import _dialect, _fallback
from openmolt_providers.settings import OpenAISettings

# Each API's module (`_chat`, `_responses`) loads at the first request that speaks it, and the
# stream parsers (`_stream`) at the first stream: a one-shot run on Chat Completions loads
# neither the Responses API's module nor any streaming code.

if TYPE_CHECKING:
	import httpx

	from openmolt_core.capabilities.structured import SchemaDialect
	from openmolt_core.llm import ModelConfig, ModelRequest, ModelResponse
	from openmolt_core.plugins import ProviderRegistrar
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.streaming import StreamChunk

__all__ = ["OpenAIProvider", "register_providers"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

log = logging.getLogger("openmolt")

_NO_ENDPOINT = frozenset({404, 405, 501})

_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")
"""The hosts of an Azure OpenAI resource: ``{resource}.openai.azure.com`` and, for a newer
resource, ``{resource}.cognitiveservices.azure.com`` (Azure OpenAI's REST reference)."""


def _azure_openai(base_url: str) -> bool:
	"""Whether a base URL is an Azure OpenAI resource's OpenAI API.

	Its path is ``/openai/v1`` or ``/openai/deployments/{id}``: another model an Azure host serves
	(Azure AI Foundry's ``/models``) keeps its own limits.

	Args:
		base_url: The provider's base URL.
	"""
	url = urlsplit(base_url)
	host = (url.hostname or "").lower()
	path = url.path.lower()
	return host.endswith(_AZURE_HOSTS) and (path == "/openai" or path.startswith("/openai/"))


class OpenAIProvider(HTTPProvider):
	"""OpenAI over the Responses API, or any OpenAI-compatible Chat Completions server.

	Args:
		settings: The user's ``llm_providers[name]`` dict (see `OpenAISettings`).
		http: Returns the shared ``httpx.AsyncClient``.
		sleep: Waits between retries; tests pass a fake one.
		name: The instance's name (default ``openai``).
		retry: The instance's retry policy (`openmolt_core.retry.RetryPolicy`).

	Raises:
		ConfigurationError: A setting is unknown or wrong.
	"""

	name = "openai"
	# platform.openai.com/docs/models (2026-11): GPT-5.4 and later 1.05M, GPT-5 400K,
	# GPT-4.1 1,047,576, o-series and codex-mini 200K, GPT-4o 128K.
	context_windows = (
		("gpt-5.4", 1_050_000),
		("gpt-5.5", 1_050_000),
		("gpt-5", 400_000),
		("gpt-4.1", 1_047_576),
		("gpt-4o", 128_000),
		("o1", 200_000),
		("o3", 200_000),
		("o4", 200_000),
		("codex-mini", 200_000),
	)
	default_base_url = DEFAULT_BASE_URL
	settings_model = OpenAISettings
	local_servers = (
		"`ollama serve` (Ollama), `vllm serve MODEL` (vLLM) or `llama-server -m MODEL.gguf` "
		"(llama.cpp)"
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
		options: OpenAISettings = self.options  # type: ignore[assignment]  # settings_model above
		self.settings = options
		self.api_mode: str = options.api_mode or "responses"
		"""The API in use: ``responses`` or ``chat`` (after a fallback, ``chat``)."""
		# Only a server other than OpenAI's, with no api_mode chosen, may turn out to lack the
		# Responses API.
		self.may_fall_back = options.api_mode is None and not self.official
		self.azure = _azure_openai(self.base_url)
		"""Whether the server is Azure OpenAI's (`_azure_openai`): it keeps OpenAI's request limits
		(the stop sequences') but none of the fields only api.openai.com knows."""
		self.image_limits: Literal["OPENAI", "AZURE_OPENAI"] | None = (
			"OPENAI" if self.official else "AZURE_OPENAI" if self.azure else None
		)
		"""The limits the images of a request are fitted to (`openmolt_providers._images`):
		api.openai.com's, Azure OpenAI's (10 images a call); None: another server's own."""
		self._urls = {
			"responses": self.base_url + "/responses",
			"chat": self.base_url + "/chat/completions",
		}
		self.plain_json = False
		"""Whether this server refused structured output once (then it gets plain JSON requests)."""
		self._api_known = False  # a call of this server answered: streams may use its API

	def auth_headers(self, key: str | None) -> dict[str, str]:
		"""``Authorization: Bearer``, plus the organization and project when set."""
		headers = {"authorization": f"Bearer {key}"} if key else {}
		if org := self.settings.organization:
			headers["openai-organization"] = org
		if project := self.settings.project:
			headers["openai-project"] = project
		return headers

	def schema_dialect(self, model: str, config: ModelConfig | None = None) -> SchemaDialect | None:
		"""The structured-output dialect of a model (None: JSON mode only, or plain JSON).

		Args:
			model: The model name.
			config: The agent's model configuration (not needed here).
		"""
		return None if self.plain_json else _dialect.dialect_for(model)

	def chat(self, model: str) -> bool:
		"""Whether a call of this model speaks Chat Completions.

		As `api_mode` says, except that on api.openai.com a model served by the Responses API
		only (`openmolt_providers.openai._models.responses_only`: ``gpt-5-pro``, the codex and
		deep research models...) is asked there, with a warning once: Chat Completions refuses
		it with a 400 at every call; and a Chat Completions model (`chat_only`: the search and
		audio models) is asked on Chat Completions, which the Responses API's refusals ask.

		Args:
			model: The model of the call.
		"""
		if self.api_mode != "chat":
			if self.official:
				from openmolt_providers.openai._models import chat_only

				if chat_only(model):
					self.warn(
						model,
						"api_mode",
						"is served by Chat Completions only; asked there (the Responses API "
						"holds for the other models)",
					)
					return True
			return False
		if self.official:
			from openmolt_providers.openai._models import responses_only

			if responses_only(model):
				self.warn(
					model,
					"api_mode",
					"is served by the Responses API only; asked there (api_mode 'chat' holds "
					"for the other models)",
				)
				return False
		return True

	def _built(self, request: ModelRequest) -> dict[str, Any]:
		# The API's builder: Chat Completions or Responses, as the provider speaks now.
		if self.chat(request.model):
			from openmolt_providers.openai import _chat

			return _chat.build(self, request)
		from openmolt_providers.openai import _responses

		return _responses.build(self, request)

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Send one request and return the reply text, usage and raw response.

		Raises:
			ConfigurationError: No API key is set.
			ProviderError: The API refused the request or failed after retries.
		"""
		self.headers()  # a missing key fails here, before any body is built or sent
		# An error sent in a 200 reply (a failed response's server_error, a gateway's 502) is
		# retried as its status would be.
		return await self.again(lambda: self._generate(request))

	async def _generate(self, request: ModelRequest) -> ModelResponse:
		if self.chat(request.model):
			return await self._chat(request)
		from openmolt_providers.openai import _responses

		payload = self._body(request)
		try:
			data = await _fallback.post(
				self,
				self._urls["responses"],
				payload,
				request.model,
				lambda: self._body(plain_request(request)),
			)
		except ProviderError as exc:
			if not self._no_responses(exc):
				raise
			return await self._without_responses(request, exc)
		if "output" not in data and _unknown_endpoint(data):
			# LM Studio answers an endpoint it lacks with 200 and an error message.
			return await self._without_responses(
				request,
				ProviderError(
					f"the server has no Responses API: {_unknown_endpoint(data)}",
					provider=self.name,
					model=request.model,
					status_code=404,
				),
			)
		return _responses.parse(self, request.model, data)

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		"""Send one request and yield the reply text as it arrives, then the whole response.

		The final response equals what `generate` returns for the same reply. A server whose
		API is not known yet (no ``api_mode``, not OpenAI's) answers without streaming first, as
		does a server that refuses the structured output before anything streamed (the request
		goes again without it, as `generate` sends it). A server that does not stream is asked
		without streaming from then on (`HTTPProvider.streamed`).

		Raises:
			ConfigurationError: No API key is set.
			ProviderError: The API refused the request, failed after retries, or the stream was
				cut off before the reply was complete.
		"""
		self.headers()
		if self.may_fall_back and not self._api_known:
			async for chunk in self._at_once(request):
				yield chunk
			self._api_known = True  # its Responses API answered, or it speaks chat from now on
			return
		chunks = self.streamed(
			lambda: self._streaming(request),
			lambda: self.generate(request),
			request.model,
			lambda data: self._whole(request, data),
		)
		async for chunk in chunks:
			yield chunk

	def _whole(self, request: ModelRequest, data: dict[str, Any]) -> ModelResponse | None:
		# A whole reply a server sent for a stream (`HTTPProvider.streamed`); None: not one.
		if self.chat(request.model):
			from openmolt_providers.openai import _chat

			reads = "choices" in data or "error" in data
			return _chat.parse(self, request.model, data) if reads else None
		from openmolt_providers.openai import _responses

		reads = "output" in data or "error" in data
		return _responses.parse(self, request.model, data) if reads else None

	async def _streaming(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		from openmolt_providers.openai import _stream

		chat = self.chat(request.model)
		source = _stream.chat if chat else _stream.responses
		streamed = False
		try:
			async for chunk in source(self, request):
				streamed = True
				yield chunk
		except ProviderError as exc:
			if not streamed and not chat and self._no_responses(exc):
				# As `generate` says it: the server has no Responses API (or falls back to chat).
				async for chunk in self._at_once_after(request, exc):
					yield chunk
				return
			if (
				streamed
				or self.official
				or refuses_stream(exc)
				or request.response_schema is None  # no format to go without: refused again
				or not _fallback.blames_format(exc)
			):
				raise  # a refused stream is the caller's (`streamed`) to handle
			async for chunk in self._at_once(request):
				yield chunk

	def _no_responses(self, exc: ProviderError) -> bool:
		"""Whether a failure says the server has no Responses API (not OpenAI's own server)."""
		return exc.status_code in _NO_ENDPOINT and not self.official

	async def _at_once_after(
		self, request: ModelRequest, exc: ProviderError
	) -> AsyncIterator[StreamChunk]:
		from openmolt_core.streaming import TextDelta

		response = await self._without_responses(request, exc)
		if response.text:
			yield TextDelta(response.text)
		yield response

	async def _at_once(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		from openmolt_core.streaming import TextDelta

		response = await self.generate(request)
		if response.text:
			yield TextDelta(response.text)
		yield response

	async def _chat(self, request: ModelRequest) -> ModelResponse:
		from openmolt_providers.openai import _chat

		data = await _fallback.post(
			self,
			self._urls["chat"],
			self._body(request),
			request.model,
			lambda: self._body(plain_request(request)),
		)
		return _chat.parse(self, request.model, data)

	async def _without_responses(self, request: ModelRequest, exc: ProviderError) -> ModelResponse:
		if not self.may_fall_back:
			raise ProviderError(
				f"{self.base_url} answered {exc.status_code} on /responses: if this server has no "
				f"Responses API, set llm_providers[{self.name!r}]['api_mode'] = 'chat' "
				f"({exc})",
				provider=self.name,
				model=request.model,
				status_code=exc.status_code,
			) from exc
		self.api_mode = "chat"
		try:
			response = await self._chat(request)
		except ProviderError:
			self.api_mode = "responses"  # the server's trouble is elsewhere: try both next time
			raise
		self.may_fall_back = False
		log.info(
			"%s: %s has no Responses API (%s); using Chat Completions from now on "
			"(set api_mode 'chat' to skip the first try)",
			self.name,
			self.base_url,
			exc.status_code,
		)
		return response


def _unknown_endpoint(data: dict[str, Any]) -> str:
	error = data.get("error")
	text = (
		error
		if isinstance(error, str)
		else (error or {}).get("message", "")
		if isinstance(error, dict)
		else ""
	)
	return text if "endpoint" in str(text).lower() else ""


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
	"""Register ``openai``."""
	register(OpenAIProvider, name="openai")
