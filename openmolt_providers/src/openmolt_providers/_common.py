"""What the three providers share: settings, the HTTP call with retries, errors and warnings.

Each provider builds its request body as plain dicts, serializes it once as compact JSON
(``_body.encode``), and hands the bytes to `HTTPProvider.post`. That method sends them with the
shared ``httpx.AsyncClient``, retries what may succeed later (408, 409, 429, 5xx, connection
errors; the server's ``x-should-retry`` header decides instead when it is sent) under the
instance's `openmolt_core.retry.RetryPolicy` (tenacity; the HTTP tools share it), honouring
``Retry-After``, and turns every other failure into a `openmolt_core.errors.ProviderError` that
names the provider, the model and the fix, never the key.
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from openmolt_core._envvars import env_var
from openmolt_core._support import LazyPattern
from openmolt_core._support.masking import masked_excerpt, warn
from openmolt_core._support.words import quantity
from openmolt_core.errors import ConfigurationError, ProviderError
from openmolt_core.retry import retry_after

if TYPE_CHECKING:
	import httpx

	from openmolt_core.llm import ModelRequest, ModelResponse, Usage
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.streaming import StreamChunk
	from openmolt_providers._sse import SSEvent
	from openmolt_providers.settings import ProviderSettings

__all__ = [
	"FLAGGED_FIX",
	"MAX_ERROR_CHARS",
	"RETRY_STATUSES",
	"HTTPProvider",
	"ModelConfigWarning",
	"NotStreamingWarning",
	"provider_message",
	"refuses_stream",
	"retry_delay",
	"retryable_status",
]

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses worth another try: timeouts, conflicts, rate limits and server trouble."""

MAX_ERROR_CHARS = 500
"""The most characters of a provider's message an error quotes (masked before it is cut)."""

_MAX_WAIT = 60.0
_T = TypeVar("_T")
_C = TypeVar("_C")

_KEY_PATTERNS = LazyPattern(r"(sk-[A-Za-z0-9*_\-]{6,}|AIza[0-9A-Za-z_\-]{10,})")


class ModelConfigWarning(UserWarning):
	"""A ``model_config`` key (or structured output) the model or server cannot honour was dropped."""


class NotStreamingWarning(ModelConfigWarning):
	"""A server did not stream, so its replies are asked for whole from then on.

	It refused ``stream``, or answered it with a whole reply. The command shows it with
	``--verbose`` only.
	"""


_REFUSED_STREAM = frozenset({400, 404, 405, 415, 422})
"""Statuses a server answers a ``stream`` it does not take with (with "stream" in the message)."""

_STREAM_WORD = LazyPattern(r"\bstream", re.IGNORECASE)
""""stream" as a word or a word's start (``stream_options``, "streaming"), not "upstream"."""


class _NotStreamed(ProviderError):
	"""A server answered a request for a stream with a whole reply (plain JSON).

	``reply`` is that reply's JSON object (None if it was not one): the reply to the request,
	used as it is rather than asked for again (a second, paid, call).
	"""

	reply: dict[str, Any] | None = None


def _parsed(
	parse: Callable[[dict[str, Any]], ModelResponse | None], reply: dict[str, Any]
) -> ModelResponse | None:
	"""A whole reply read by the provider's parser; None if it is not one it reads.

	Raises:
		ProviderError: The body is the API's error object (a gateway sends it with 200): the
			answer to this request, raised as the error it stands for, unless it is about
			streaming (then the server does not stream, and the request is asked again).
	"""
	try:
		return parse(reply)
	except ProviderError as exc:
		error = bool(reply.get("error")) or reply.get("type") == "error"
		if error and _STREAM_WORD().search(str(exc)) is None:
			raise
		return None  # a refusal of the stream: asked again without it
	except (LookupError, TypeError, ValueError, AttributeError):
		return None  # not a reply of this API (another shape): asked again


_ANSWERED = "_answered"
"""Marks a `ProviderError` made from the server's HTTP answer to the request (`HTTPProvider._error`),
not from an error event inside a stream; private, so not in ``to_dict`` (the type stays
``ProviderError``)."""


_WAIT = "_wait"
"""The wait, in seconds, an error sent in a reply asks for (`reply_failure`'s ``wait``: Gemini's
``RetryInfo`` in a body sent with 200 or a stream's event); private, as `_ANSWERED` is."""

_RETRIED = "_retried"
"""Marks a `ProviderError` the retry policy had its say on: raised out of the HTTP call itself
(`HTTPProvider.post`, the opening of `HTTPProvider.post_stream`), or given up on by
`HTTPProvider.again` or `HTTPProvider.streamed`; so no caller asks again (`HTTPProvider._again`).
Private, as `_ANSWERED` is: not in ``to_dict``."""


def refuses_stream(exc: ProviderError) -> bool:
	"""Whether a failure before anything streamed says the server does not stream.

	Only the HTTP answer to the request says so: an ``error`` event a stream sent (Anthropic's
	``invalid_request_error``, reported as "the stream failed: ...") does not.
	"""
	if isinstance(exc, _NotStreamed):
		return True
	return (
		bool(vars(exc).get(_ANSWERED))
		and exc.status_code in _REFUSED_STREAM
		and _STREAM_WORD().search(str(exc)) is not None
	)


class _RetryableError(ProviderError):
	"""A failure worth retrying; carries the server's ``Retry-After`` when it sent one."""

	def __init__(self, message: str, *, retry_after: float | None, **kwargs: Any) -> None:
		super().__init__(message, retryable=True, **kwargs)
		self.detail = message
		self.retry_after = retry_after


def provider_message(body: Any) -> str:
	"""The human message inside a provider's JSON error body (all three use ``error.message``).

	Args:
		body: The decoded error body, or its text.

	Returns:
		The message, or an empty string.
	"""
	if isinstance(body, dict):
		error = body.get("error")
		if isinstance(error, dict):
			return str(error.get("message") or error.get("status") or error.get("type") or "")
		if isinstance(error, str):
			return error
		return str(body.get("message") or "")
	if isinstance(body, list) and body:
		return provider_message(body[0])
	return str(body or "")


class HTTPProvider:
	"""Base of the built-in providers: settings, the key, the HTTP call and the warnings.

	Args:
		settings: The user's ``llm_providers[name]`` dict; see `openmolt_providers.settings`.
		http: Returns the shared ``httpx.AsyncClient``.
		sleep: Waits between retries (tests pass a fake one); default: the policy's.
		name: The instance's name (``ollama`` for ``llm_providers={"ollama": {"provider":
			"openai", ...}}``): it names errors and the ``OPENMOLT_<NAME>_API_KEY`` and
			``OPENMOLT_<NAME>_BASE_URL`` variables. Default: the vendor's name.
		retry: The instance's retry policy (`openmolt_core.retry.RetryPolicy`, the one the
			HTTP tools use too): waits, backoff and caps. The ``max_retries`` setting, when
			given, sets this provider's attempts (``max_retries + 1``).

	Raises:
		ConfigurationError: A setting is unknown or wrong; the message names it.
	"""

	name = ""
	"""The instance's name (the model-id prefix); the vendor's name unless named otherwise."""
	vendor = ""
	"""The plugin's own name (``openai``): prices and vendor rules follow it."""
	env_var = ""
	"""The variable the API key is read from when the settings have none."""
	default_base_url = ""
	settings_model: type[ProviderSettings] | None = None
	"""The settings this provider accepts (`openmolt_providers.settings`; default: the common ones)."""
	context_windows: tuple[tuple[str, int], ...] = ()
	"""Context window (tokens) by model-name prefix, the most specific first (vendor docs)."""
	local_servers = "a server that speaks this API"
	"""The servers that speak this provider's API on one's own machine, with the command that
	starts each: the hint when nothing listens at a local ``base_url``."""

	def context_window(self, model: str) -> int | None:
		"""The model's context window in tokens, or None when unknown.

		``llm_providers[name]['context_window']`` wins when set (a local model); else the
		vendor's figure for the model family, read from the model's name (`model_name`: a
		``models/`` or gateway prefix and a fine-tune's ``ft:`` do not hide the family).
		"""
		if self.options.context_window:
			return self.options.context_window
		try:
			return _window(self.context_windows, model)
		except TypeError:  # a subclass's windows as a list: read them at every call
			return _window.__wrapped__(self.context_windows, model)

	def __init__(
		self,
		settings: Mapping[str, Any],
		http: Callable[[], httpx.AsyncClient],
		*,
		sleep: Callable[[float], Awaitable[None]] | None = None,
		name: str | None = None,
		retry: RetryPolicy | None = None,
	) -> None:
		self.vendor = type(self).name
		self.name = name or self.vendor
		# The command's names for them, one rule (`openmolt_core._envvars.env_var`): a provider
		# instance "myLocal" reads OPENMOLT_MY_LOCAL_API_KEY, as the command resolves it.
		self.env_var = env_var(self.name)
		self._base_url_var = env_var(self.name, "baseUrl")
		from openmolt_providers.settings import ProviderSettings, parse_settings

		model = self.settings_model or ProviderSettings
		self.options = parse_settings(model, settings, name=self.name)
		self._http = http
		base = self.options.base_url or os.environ.get(self._base_url_var)
		self._base_url_set = bool(self.options.base_url)
		"""Whether a setting gave the base URL (it wins over the variable; a local server's
		default, `openmolt_providers.local`, is not one)."""
		self.base_url = str(base or self.default_base_url).rstrip("/")
		self.official = self.base_url == self.default_base_url.rstrip("/")
		"""Whether calls go to the vendor's own API (only then is a key always required)."""
		# A model call without streaming can think for minutes: the shared client's 60 s read
		# timeout would cut it off and a retry would pay for it again.
		self.timeout: float | None = self.options.timeout
		from openmolt_core.retry import DEFAULT_RETRY

		policy = retry or DEFAULT_RETRY
		if "max_retries" in self.options.model_fields_set:
			self.max_retries = self.options.max_retries
		else:
			self.max_retries = policy.attempts - 1
		if sleep is not None:
			import dataclasses

			policy = dataclasses.replace(policy, sleep=sleep)
		self.retry = policy
		"""The retry policy of this provider's calls."""
		self.extra_headers = dict(self.options.headers)
		key = self.options.api_key
		self._key: str | None = key.get_secret_value() if key is not None else None
		self._key = self._key or None
		self._headers: dict[str, str] | None = None
		self._timeout_ext: dict[str, float | None] | None = None
		self._heads: dict[tuple[str, bool], _Head] = {}
		from openmolt_providers._schema import SchemaCache

		self.schemas = SchemaCache()  # reply schemas converted to this API's dialect, once each
		self._warned: set[tuple[str, str]] = set()
		self.streams = True
		"""Whether ``stream`` streams: False once the server did not (`streamed`)."""
		self.plain_models: set[str] = set()
		"""Models whose reply schema the API refused (`schema_refused`): asked for plain JSON."""

	def price(self, model: str) -> tuple[float, float, float, float | None] | None:
		"""The list price of a model at this vendor, in USD per million tokens.

		Returns:
			``(input, cached input, output, cache write)``, or None when it is unknown or the
			calls go to another server than the vendor's (a local model costs nothing known).
		"""
		if not self.official:
			return None
		from openmolt_providers._prices import price_for

		return price_for(self.vendor, model)

	def price_at(
		self, model: str, prompt_tokens: int
	) -> tuple[float, float, float, float | None] | None:
		"""The price a prompt of ``prompt_tokens`` tokens pays, or None as `price`.

		Past the model's long-context threshold, its tier's
		(`openmolt_providers._price_table.TIERS`); else the base price. The budget
		(``max_cost``) estimates the coming call with it.

		Args:
			model: The model name.
			prompt_tokens: The prompt's size in tokens.
		"""
		if not self.official:
			return None
		from openmolt_providers._prices import price_for

		return price_for(self.vendor, model, prompt_tokens)

	def audio_price(self, model: str) -> float | None:
		"""The price of the model's audio input in USD per million tokens, where it has its own.

		None when its audio costs the input price, or the price is unknown, or the calls go to
		another server than the vendor's (`price`). The budget (``max_cost``) prices a prompt
		that holds audio at it (`openmolt_providers._price_table.AUDIO`: Gemini Flash, ``gpt-audio``).

		Args:
			model: The model name.
		"""
		if not self.official:
			return None
		from openmolt_providers._prices import audio_price_for

		return audio_price_for(self.vendor, model)

	def spoken_price(self, model: str) -> float | None:
		"""The price of the model's audio output in USD per million tokens, where it has its own.

		None when it has none (it does not speak, or its audio costs the output price), the price
		is unknown, or the calls go to another server than the vendor's (`price`). The budget
		(``max_cost``) estimates the output of a model that can speak at it (``gpt-audio``: 64
		a million where text is 10).

		Args:
			model: The model name.
		"""
		if not self.official:
			return None
		from openmolt_providers._prices import spoken_price_for

		return spoken_price_for(self.vendor, model)

	def cost(
		self,
		model: str,
		*,
		input_tokens: int,
		output_tokens: int,
		cached_tokens: int = 0,
		cache_write_tokens: int = 0,
		hour_writes: int = 0,
		audio_tokens: int = 0,
		cached_audio_tokens: int = 0,
		output_audio_tokens: int = 0,
	) -> float | None:
		"""The estimated cost of one call (`openmolt_providers._prices.cost`) at this vendor.

		None when the price is unknown, when the calls go to another server than the vendor's (a
		local model, a proxy: what it costs is not known here), or when the usage counted neither
		input nor output tokens (a server that reports only a total, or no count): unknown, not
		0.0 for a call that used tokens (the loop counts such a reply from its size).

		Args:
			model: The model name.
			input_tokens: All prompt tokens, cached and cache-written ones included.
			output_tokens: All output tokens, reasoning included.
			cached_tokens: Prompt tokens read from the cache.
			cache_write_tokens: Prompt tokens written to the cache.
			hour_writes: Of ``cache_write_tokens``, those written for an hour (Anthropic).
			audio_tokens: Of ``input_tokens``, those of audio (Gemini, ``gpt-audio``: apart).
			cached_audio_tokens: Of ``cached_tokens``, those of audio.
			output_audio_tokens: Of ``output_tokens``, those of audio (a spoken reply).
		"""
		if not self.official or not (input_tokens or output_tokens):
			return None
		from openmolt_providers._prices import cost

		return cost(
			self.vendor,
			model,
			input_tokens=input_tokens,
			output_tokens=output_tokens,
			cached_tokens=cached_tokens,
			cache_write_tokens=cache_write_tokens,
			hour_writes=hour_writes,
			audio_tokens=audio_tokens,
			cached_audio_tokens=cached_audio_tokens,
			output_audio_tokens=output_audio_tokens,
		)

	def models(self) -> list[str]:
		"""The models of this vendor whose list price is known (what ``openmolt models`` lists).

		Empty when the calls go to another server than the vendor's: ask that server.
		"""
		if not self.official:
			return []
		from openmolt_providers._prices import PRICES

		return sorted(PRICES.get(self.vendor, {}))

	def media_models(self) -> frozenset[str]:
		"""The listed models that speak, listen or draw, and those no agent's request reaches.

		Realtime, audio, live, image, text-to-speech and transcription models, the legacy
		completion models (``/v1/completions`` only: ``gpt-3.5-turbo-instruct``, ``davinci-002``)
		and ``computer-use-preview`` (the computer tool only). They take no agent's conversation:
		``openmolt models`` leaves them out unless ``--all``. Told by genai-prices
		(`openmolt_providers._price_table.MEDIA`): such a model's output audio or images (or its
		image input) are priced apart from text tokens, or its name says it (``-tts``,
		``transcribe``, ``-instruct``, ``computer-use``).
		"""
		from openmolt_providers._price_table import MEDIA

		return frozenset(MEDIA.get(self.vendor, ()))

	@property
	def key_required(self) -> bool:
		"""Whether a call needs an API key: at the vendor's own API; a local server needs none."""
		return self.official

	# the key and headers ------------------------------------------------------------------

	def api_key(self) -> str | None:
		"""The API key from the settings or the environment, read on first use.

		Raises:
			ConfigurationError: No key is set and this provider needs one.
		"""
		if self._key is None:
			self._key = os.environ.get(self.env_var) or None
			if self._key is None and self.key_required:
				raise ConfigurationError(
					f"{self.name}: no API key; set the environment variable {self.env_var} "
					f"(or pass llm_providers={{'{self.name}': {{'api_key': ...}}}})"
				)
		return self._key

	def secrets(self) -> set[str]:
		"""The values this provider must never show: its key and its extra headers' values.

		Read by ``OpenMolt.secrets`` (`openmolt_core.secrets`), so a key read from the
		environment on first use is masked everywhere from then on.
		"""
		found = {v for v in (self._key, os.environ.get(self.env_var)) if v}
		if self.extra_headers:  # asked at every step: most providers have none
			from openmolt_core.secrets import settings_secrets

			found |= settings_secrets({"headers": self.extra_headers})
		return found

	def auth_headers(self, key: str | None) -> dict[str, str]:
		"""The headers that carry the key; each provider names its own."""
		raise NotImplementedError

	def headers(self) -> dict[str, str]:
		"""The request headers, built once: content type, auth, then the user's extra headers."""
		if self._headers is None:
			headers = {"content-type": "application/json", "accept": "application/json"}
			headers.update(self.auth_headers(self.api_key()))
			headers.update(self.extra_headers)
			self._headers = headers
		return self._headers

	# warnings -----------------------------------------------------------------------------

	def build(self, request: ModelRequest) -> dict[str, Any]:
		"""The request body of one call: what `generate` and `stream` send. The caller's own copy.

		A subclass that overrides it changes what every call sends (`_body`). The copy
		(`openmolt_providers._body.owned`): the body a call sends shares its kept turns with
		other requests, and a change made here must reach none of them.

		Args:
			request: The model request.
		"""
		# not at import: importing the package loads no module it does not need
		from openmolt_providers._body import owned

		return owned(self._built(request))

	def _built(self, request: ModelRequest) -> dict[str, Any]:
		"""The API's builder: the body as each provider builds it, shared with its kept turns."""
		raise NotImplementedError(f"{type(self).__name__} builds no request body")

	def _body(self, request: ModelRequest) -> dict[str, Any]:
		"""The body a call sends: `build`'s, without the copy made for `build`'s caller.

		A subclass's own ``build`` is sent as it answers; the built-in one is the builder's
		body itself (the calls change nothing in it).
		"""
		if type(self).build is not HTTPProvider.build:
			return self.build(request)
		return self._built(request)

	def warn(
		self,
		model: str,
		key: str,
		message: str,
		*,
		category: type[ModelConfigWarning] = ModelConfigWarning,
	) -> None:
		"""Warn once per model and key that a setting was dropped or adjusted."""
		if (model, key) in self._warned:
			return
		self._warned.add((model, key))
		warn(f"{self.name}:{model}: {message}", category, stacklevel=5, at_caller=True)

	def capped_output(self, model: str, wanted: int, most: int | None) -> int:
		"""``max_output_tokens`` within the model's own output limit, with a warning once if cut.

		Above it the vendor refuses the request (400) at every step; each vendor's model rules
		give ``most`` (None: not known here, the value is sent as asked).

		Args:
			model: The model of the call.
			wanted: The agent's ``max_output_tokens``.
			most: The model's output limit in tokens, or None.
		"""
		if most is None or wanted <= most:
			return wanted
		self.warn(
			model,
			"max_output_tokens",
			f"this model writes at most {most:,} output tokens; max_output_tokens {wanted:,} "
			f"lowered to {most:,}",
		)
		return most

	# a reply schema the API refuses ---------------------------------------------------------

	def schema_refused(self, exc: ProviderError, request: ModelRequest) -> bool:
		"""Whether the API refused a request for its reply schema; the model is then remembered.

		The dialects check the limits their vendors document, but an API may refuse a schema
		past limits it does not publish: Anthropic's "Schema is too complex for compilation",
		Gemini's "constraint that has too many states". A 400 that names the schema of a request
		that sent one marks the model (`plain_models`: its dialect is None from then on, so the
		loop fits mode ``off``), and a `ModelConfigWarning` says so once; the caller asks again
		without structured output (`asked`, `asked_stream`).

		Args:
			exc: The failure.
			request: The request that failed.
		"""
		if exc.status_code != 400 or "schema" not in str(exc).lower():
			return False
		from openmolt_providers._schema import reply_format

		# Only providers with a ``schema_dialect`` (each built-in one) send a reply schema.
		sent = reply_format(cast("Any", self), request)[0]
		if request.model in self.plain_models or sent is None:
			return False
		self.plain_models.add(request.model)
		detail = str(exc).split(": ", 1)[-1]
		self.warn(
			request.model,
			"schema",
			f"the API refused the reply schema ({detail}); this model is asked for plain JSON "
			"from now on (the prompt describes the reply and every reply is checked)",
		)
		return True

	async def asked(
		self, call: Callable[[ModelRequest], Awaitable[ModelResponse]], request: ModelRequest
	) -> ModelResponse:
		"""``call(request)``, once more without structured output if the API refused the schema."""
		try:
			return await call(request)
		except ProviderError as exc:
			if not self.schema_refused(exc, request):
				raise
		from openmolt_providers._schema import plain_request  # a refusal's: not at every call

		return await call(plain_request(request))

	async def asked_stream(
		self, source: Callable[[ModelRequest], AsyncIterator[StreamChunk]], request: ModelRequest
	) -> AsyncIterator[StreamChunk]:
		"""``source(request)``'s stream; without structured output if the API refused the schema."""
		streamed = False
		try:
			async for chunk in source(request):
				streamed = True
				yield chunk
			return
		except ProviderError as exc:
			if streamed or not self.schema_refused(exc, request):
				raise
		from openmolt_providers._schema import plain_request  # a refusal's: not at every call

		async for chunk in source(plain_request(request)):
			yield chunk

	# streaming ----------------------------------------------------------------------------

	async def streamed(
		self,
		source: Callable[[], AsyncIterator[StreamChunk]],
		once: Callable[[], Awaitable[ModelResponse]],
		model: str,
		parse: Callable[[dict[str, Any]], ModelResponse | None] | None = None,
		go_on: Callable[[dict[str, Any]], Awaitable[ModelResponse] | None] | None = None,
	) -> AsyncIterator[StreamChunk]:
		"""Yield ``source``'s stream, or the reply asked for whole if the server does not stream.

		A stream that fails before anything streamed, in a way another try may not meet (an
		overload or rate limit sent as an event after a 200), is asked again under the retry
		policy, as `post` asks a call again; once text streamed, a failure is raised (the text
		was shown). A server that refuses ``stream`` before anything streamed is asked once
		more without streaming (one that answers it with a whole reply has answered: that
		reply is used when ``parse`` reads it); the provider remembers it, so its later calls
		are plain requests, and a `NotStreamingWarning` says so once. A stream asked again
		after a failure that was billed (its error carries usage) counts in the final reply's
		usage, or in the error raised at the end.

		Args:
			source: Opens the stream.
			once: Asks for the reply without streaming (the provider's ``generate``).
			model: The model name, for the warning.
			parse: Reads a whole reply the server sent instead of a stream (the provider's
				reply parser; None for a body that is not a reply of its API): that reply is
				used, not asked for again. Without it (or for no reply) it is asked again. An
				error body it raises on is the request's error: raised, and streaming stays on.
			go_on: Goes on with such a whole reply when the API stopped it before its end (an
				Anthropic paused turn, a Gemini continuation), as ``once`` goes on with its own;
				None for a reply that ended (without it, the reply is used as it is).
		"""
		from openmolt_core.streaming import TextDelta

		whole: ModelResponse | None = None
		reply: dict[str, Any] | None = None  # the whole reply a server sent for the stream
		attempt = 0
		spent: Usage | None = None  # what the tries asked again were billed for
		while self.streams:
			streamed = False
			try:
				async for chunk in source():
					streamed = True
					yield _charged(chunk, spent)
				return
			except ProviderError as exc:
				too_long = self._too_long(exc)
				if not streamed and not too_long and self._again(exc, attempt):
					spent = added(spent, exc.usage)
					attempt += 1
					await self.retry.sleep(self.retry.delay(attempt, _hint(exc)))
					continue
				if not streamed:  # shown text is why it is not asked again, not the policy
					self._note_gave_up(exc, attempt, too_long)
				vars(exc)[_RETRIED] = True  # had its say: a caller does not ask again
				billed(exc, spent)
				if streamed or not refuses_stream(exc):
					raise
				if parse is not None and isinstance(exc, _NotStreamed) and exc.reply is not None:
					# An error body is raised here, and the server may still stream.
					whole = _parsed(parse, exc.reply)
					reply = exc.reply
				self.streams = False
				status = f" ({exc.status_code})" if not isinstance(exc, _NotStreamed) else ""
				self.warn(
					model,
					"stream",
					f"{self.base_url} does not stream{status}; its replies are asked for whole",
					category=NotStreamingWarning,
				)
		going = go_on(reply) if whole is not None and reply and go_on is not None else None
		if going is not None:  # the API stopped that reply before its end: it goes on
			try:
				whole = await going
			except ProviderError as exc:  # the tries before it were billed all the same
				raise billed(exc, spent) from None
		response = whole if whole is not None else await once()
		if response.text:
			yield TextDelta(response.text)
		yield _charged(response, spent)

	def _again(self, exc: ProviderError, attempt: int) -> bool:
		"""Whether a call that failed with ``exc`` is asked again (`again`, `streamed`).

		A failure another try may not meet (``retryable``) that reached here past the HTTP call
		(an error sent in a reply with 200: Anthropic's ``overloaded_error``, a failed Responses
		reply's ``server_error``, a gateway's 502; in a stream, an event after the 200 or a cut
		before the first text) is what `post` retries as a status; up to the provider's
		retries. Not one the retry policy had its say on already (`_RETRIED`: the HTTP call's
		own failures, and what `again` gave up on), nor a prompt past the context window (the
		loop compacts on it).
		"""
		return self._retries(exc) and attempt < self.max_retries

	@staticmethod
	def _retries(exc: ProviderError) -> bool:
		"""Whether the retry policy may ask again after ``exc`` (`_again`, with attempts left)."""
		return exc.retryable and not exc.context_exceeded and not vars(exc).get(_RETRIED)

	def _note_gave_up(self, exc: ProviderError, attempt: int, note: str = "") -> None:
		"""Say in ``exc`` that the policy gave up after ``attempt + 1`` tries (`_gave_up`).

		Only for a failure the policy would ask again with attempts left (`_retries`): one it
		does not retry was not given up on.

		Args:
			exc: The failure.
			attempt: The tries made before it.
			note: Why the policy stopped early (`_too_long`), or empty.
		"""
		if self._retries(exc):
			self._gave_up(exc, exc.model or "", attempts=attempt + 1, note=note)

	def _too_long(self, exc: BaseException) -> str:
		"""What to say of a failure whose server asks for a wait past ``max_wait``; else empty.

		No try is made before the wait the server asked for (it would fail the same way), and
		none after it: the call gives up at once and says so.
		"""
		wait = _hint(exc)
		if wait is None or wait <= self.retry.max_wait:
			return ""
		return (
			f"; it asked to wait {wait:.0f} s, longer than the retry policy's max_wait "
			f"({self.retry.max_wait:g} s: OpenMolt(retry={{'max_wait': ...}}))"
		)

	async def again(self, call: Callable[[], Awaitable[ModelResponse]]) -> ModelResponse:
		"""``call()``, asked again under the retry policy after a failure `post` did not retry.

		For a reply that is an error sent with status 200 (`_again`): retried as its status
		would be. What it raises at the end is marked, so no caller asks again. A try that
		failed but was billed (its error carries usage: a failed Responses reply) counts in
		what the call returns or raises at the end.

		Args:
			call: Makes the whole call: the request and the reading of its reply.
		"""
		attempt = 0
		spent: Usage | None = None
		while True:
			try:
				response = await call()
			except ProviderError as exc:
				too_long = self._too_long(exc)
				if too_long or not self._again(exc, attempt):
					self._note_gave_up(exc, attempt, too_long)
					vars(exc)[_RETRIED] = True
					billed(exc, spent)
					raise
				spent = added(spent, exc.usage)
				wait = _hint(exc)
			else:
				return _charged(response, spent)
			attempt += 1
			await self.retry.sleep(self.retry.delay(attempt, wait))

	# HTTP ---------------------------------------------------------------------------------

	async def post(self, url: str, body: bytes, *, model: str) -> dict[str, Any]:
		"""POST a JSON body and return the decoded JSON reply, retrying what may succeed later.

		Args:
			url: The full URL.
			body: The serialized JSON body.
			model: The model name, for error messages.

		Returns:
			The reply as a dict.

		Raises:
			ProviderError: The provider refused the request, or it still failed after the retries.
		"""
		try:
			try:
				# The first attempt goes straight out: tenacity is set up only when a retry is due.
				return await self._send(url, body, model)
			except Exception as exc:
				first = self._retryable(exc, url, model)
			return await self._retry(functools.partial(self._send, url, body, model), model, first)
		except ProviderError as exc:
			vars(exc)[_RETRIED] = True
			raise

	async def post_stream(self, url: str, body: bytes, *, model: str) -> AsyncIterator[SSEvent]:
		"""POST a JSON body and yield the server-sent events of the reply as they arrive.

		Opening the stream is retried as `post` retries (nothing was received yet); a stream
		cut off once it flows is not, since its text was already reported.

		Args:
			url: The full URL.
			body: The serialized JSON body (asking for a stream).
			model: The model name, for error messages.

		Raises:
			ProviderError: The provider refused the request, it still failed after the
				retries, or the connection broke while the reply streamed.
		"""
		import httpx

		from openmolt_providers._sse import sse_events  # loaded with the first stream

		try:
			try:
				response = await self._open(url, body, model)
			except Exception as exc:
				first = self._retryable(exc, url, model)
				response = await self._retry(
					functools.partial(self._open, url, body, model), model, first
				)
		except ProviderError as exc:
			vars(exc)[_RETRIED] = True
			raise
		start = bytearray()  # the body's start, kept until an event came (`_no_events`)
		seen = False
		# Seconds spent waiting on the server since its last event that was no keep-alive: a
		# ping or an SSE comment resets the connection's read timeout, so without this count a
		# stream that stalled but kept pinging was never given up on. Checked as each chunk
		# arrives (no bytes at all is the read timeout's case), and only the waits count, not
		# the time the caller spends between events.
		idle = 0.0
		limit = math.inf if self.timeout is None else self.timeout

		async def chunks() -> AsyncIterator[bytes]:
			nonlocal idle
			source = response.aiter_bytes()
			while True:
				began = time.monotonic()
				chunk = await anext(source, None)
				idle += time.monotonic() - began
				if idle > limit:
					raise self._stalled(model)
				if chunk is None:
					return
				if not seen and len(start) < _MAX_UNSTREAMED:
					start.extend(chunk[: _MAX_UNSTREAMED - len(start)])
				yield chunk

		try:
			async for event in sse_events(chunks()):
				seen = True
				if event.event not in _KEEPALIVES:
					idle = 0.0
				yield event
			failure = None if seen else self._no_events(response, bytes(start), model)
			if failure is not None:
				raise failure
		except httpx.DecodingError as exc:
			raise self._undecodable(response, model) from exc
		except httpx.TransportError as exc:
			raise ProviderError(
				f"the connection broke while the reply streamed ({type(exc).__name__}), so none "
				"of it was run; try again",
				provider=self.name,
				model=model,
				retryable=True,
			) from exc
		finally:
			await response.aclose()

	def _stalled(self, model: str) -> ProviderError:
		"""The error of a stream that sent only keep-alives for ``timeout`` seconds (retryable)."""
		return ProviderError(
			f"the stream sent nothing but keep-alives for {self.timeout:g} s, so none of the "
			"reply was run; try again, or allow a slower model longer with "
			f"llm_providers['{self.name}']['timeout']",
			provider=self.name,
			model=model,
			retryable=True,
		)

	def _no_events(
		self, response: httpx.Response, start: bytes, model: str
	) -> ProviderError | None:
		"""The error of a streamed answer that held no event: a page, or a whole JSON body.

		`_open` knows both by their content type; sent as ``text/plain`` or untyped, they were
		read as events, held none, and failed as a stream cut off (asked again, each try paid
		for when it was a reply). A page is named as one (`_page_answer`); a JSON object is the
		answer to the request (`_NotStreamed`: a reply is used, an error body raised); None for
		anything else: the provider's reader says the stream was cut off, as before.

		Args:
			response: The answer.
			start: Its body's first bytes (up to `_MAX_UNSTREAMED`).
			model: The model asked.
		"""
		text = start.decode("utf-8", "replace")
		if _page(response.headers, text) is not None:
			return self._page_answer(response, model, text)
		from openmolt_providers._shape import decoded

		try:
			data = decoded(start)
		except ValueError:
			data = None
		if not isinstance(data, dict):
			return None
		not_streamed = _NotStreamed(
			"the server answered without streaming",
			provider=self.name,
			model=model,
			status_code=response.status_code,
		)
		not_streamed.reply = data
		return not_streamed

	def _retryable(self, exc: Exception, url: str, model: str) -> Exception:
		"""The first failure of a call, when another attempt is due; else raises what to raise."""
		if not _should_retry(exc):
			raise exc
		if _nothing_listens(exc, url):
			raise self._not_listening(model) from exc
		if self.max_retries < 1:
			raise self._gave_up(exc, model) from exc
		return exc

	def _base_url_setting(self) -> str:
		"""Where this instance's base URL is set, for messages (the agent's command rewords it).

		The variable is named only when setting it would change the address: a ``base_url``
		setting wins over it (``examples/local.json`` sets one).
		"""
		setting = f"llm_providers['{self.name}']['base_url']"
		return setting if self._base_url_set else f"{setting} (or {self._base_url_var})"

	def _not_listening(self, model: str) -> ProviderError:
		from openmolt_core._support.docs import docs_url  # only a message that names a page

		return ProviderError(
			f"nothing listens at {self.base_url} (the connection failed): start the server, e.g. "
			f"{self.local_servers}, or fix {self._base_url_setting()} "
			f"({docs_url('guides/local-models.md')})",
			provider=self.name,
			model=model,
			retryable=True,
		)

	async def _retry(self, send: Callable[[], Awaitable[_T]], model: str, first: Exception) -> _T:
		"""Try ``send`` again under the retry policy, after ``first`` failed."""
		policy = self.retry
		wait = _hint(first)
		note = self._too_long(first)
		if note:
			raise self._gave_up(first, model, attempts=1, note=note) from first
		await policy.sleep(policy.delay(1, wait))
		retrying = policy.retrying(_should_retry, _hint, attempts=self.max_retries)
		try:
			async for attempt in retrying:
				with attempt:
					return await send()
		except Exception as exc:
			if _should_retry(exc):
				raise self._gave_up(exc, model) from exc
			raise
		raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

	def _gave_up(
		self, exc: Exception, model: str, *, attempts: int | None = None, note: str = ""
	) -> ProviderError:
		"""The error of a call the retry policy gave up on: the one place that words it.

		Every give-up says ``(gave up after N attempts)`` after what failed: an HTTP status or
		a connection `post` retried, and an error in a reply or a stream that `again` or
		`streamed` asked again (that error itself, its message extended: its type, usage and
		marks stay).

		Args:
			exc: The last failure.
			model: The model asked.
			attempts: How many tries were made (default: all the policy allows).
			note: Said after the count (why the policy stopped early).
		"""
		gave_up = f"(gave up after {quantity(attempts or self.max_retries + 1, 'attempt')})"
		if isinstance(exc, _RetryableError):
			return ProviderError(
				f"{exc.detail} {gave_up}{note}",
				provider=self.name,
				model=model,
				status_code=exc.status_code,
				retryable=True,
			)
		if isinstance(exc, ProviderError):
			exc.args = (f"{exc.args[0]} {gave_up}{note}", *exc.args[1:])
			return exc
		return ProviderError(
			f"could not reach {self.base_url}: {type(exc).__name__} {gave_up}; check the "
			f"network and {self._base_url_setting()}",
			provider=self.name,
			model=model,
			retryable=True,
		)

	def _request(
		self, client: httpx.AsyncClient, url: str, body: bytes, stream: bool
	) -> httpx.Request:
		"""The ``POST`` of one call: what ``httpx.Request(content=body)`` builds, header for header.

		The URL is parsed and the client's headers merged with ours once per URL (`_Head`); the
		``Host`` and ``Content-Length`` headers httpx would add are written here, in its order.
		Built httpx's way, a request cost about 12 µs of CPU a call (its headers scanned once per
		header it checks); this way about 4.
		"""
		import httpx

		head = self._heads.get((url, stream))
		if head is None:
			headers = self.headers()
			if stream:
				headers = {**headers, "accept": "text/event-stream"}
			head = self._heads[(url, stream)] = _Head(url, {**client.headers, **headers})
		if self._timeout_ext is None:
			timeout = client.timeout if self.timeout is None else httpx.Timeout(self.timeout)
			self._timeout_ext = timeout.as_dict()
		extensions = {"timeout": self._timeout_ext}
		if head.raw is None or not body:  # what httpx orders its own way (an empty body too)
			return httpx.Request(
				"POST", head.url, headers=head.headers, content=body, extensions=extensions
			)
		length = (b"Content-Length", str(len(body)).encode())
		request = httpx.Request(
			"POST",
			head.url,
			headers=httpx.Headers([*head.raw, length]),
			stream=httpx.ByteStream(body),
			extensions=extensions,
		)
		request.read()  # what httpx does for a body given whole: `request.content` is set
		return request

	async def _send(self, url: str, body: bytes, model: str) -> dict[str, Any]:
		import httpx

		client = self._http()
		request = self._request(client, url, body, stream=False)
		try:
			response = await client.send(request)
		except httpx.DecodingError as exc:  # the body is read (decompressed) by the send
			raise self._undecodable(None, model) from exc
		status = response.status_code
		if status < 300:
			from openmolt_providers._shape import decoded, not_json  # loaded with the parser

			try:
				data = decoded(response.content)
			except ValueError as exc:
				if _page(response.headers, response.text) is not None:
					raise self._page_answer(response, model) from exc
				raise ProviderError(
					f"the reply is {not_json(exc)} ({status}); check {self._base_url_setting()}",
					provider=self.name,
					model=model,
					status_code=status,
				) from exc
			if not isinstance(data, dict):
				raise ProviderError(
					f"the reply is not a JSON object; check {self._base_url_setting()}",
					provider=self.name,
					model=model,
					status_code=status,
				)
			return data
		raise self._error(response, model)

	async def _open(self, url: str, body: bytes, model: str) -> httpx.Response:
		"""Send a streaming request; the response, its body not read yet, once its status is OK."""
		client = self._http()
		request = self._request(client, url, body, stream=True)
		response = await client.send(request, stream=True)
		if response.status_code < 300:
			kind = response.headers.get("content-type", "")
			if "html" in kind.lower():  # a page, not events: read as a stream, it was "cut off"
				await self._read(response, model)
				raise self._page_answer(response, model)
			if not kind.startswith("application/json"):
				return response
			# a whole reply: the answer to this request, read as `generate` reads one
			await self._read(response, model)
			not_streamed = _NotStreamed(
				"the server answered without streaming",
				provider=self.name,
				model=model,
				status_code=response.status_code,
			)
			from openmolt_providers._shape import decoded

			try:
				data = decoded(response.content)
			except ValueError:
				data = None
			not_streamed.reply = data if isinstance(data, dict) else None
			raise not_streamed
		await self._read(response, model)
		raise self._error(response, model)

	async def _read(self, response: httpx.Response, model: str) -> None:
		"""Read a streamed response's whole body (a page, a whole reply, an error) and close it.

		Raises:
			ProviderError: The body does not decompress (`_undecodable`).
		"""
		import httpx

		try:
			await response.aread()
		except httpx.DecodingError as exc:
			raise self._undecodable(response, model) from exc
		finally:
			await response.aclose()

	def _undecodable(self, response: httpx.Response | None, model: str) -> ProviderError:
		"""The error of a body that does not decompress as its ``content-encoding`` says.

		httpx decompresses a body as it reads it; bytes that are not the gzip (or deflate,
		brotli, zstd) their header names raise its ``DecodingError``, which is no transport
		error: it escaped the provider as it was. Something between here and the API (a proxy
		that compresses or cuts) is the likely cause; another try may pass.

		Args:
			response: The response whose body failed (None: its status is not known yet).
			model: The model asked.
		"""
		status = response.status_code if response is not None else None
		coding = response.headers.get("content-encoding", "") if response is not None else ""
		named = f" as {self._redact(coding[:40])!r}" if coding else ""
		return ProviderError(
			f"the reply's body could not be decompressed{named}: something between here and "
			"the API (a proxy) changed or cut it, or the server's compression is broken; try "
			f"again, and check {self._base_url_setting()} and any proxy between here and the API",
			provider=self.name,
			model=model,
			status_code=status,
			retryable=True,
		)

	# errors -------------------------------------------------------------------------------

	def scrub(self, text: str) -> str:
		"""A provider's message fit for an error: every secret and key-like string masked, capped.

		The whole message is masked before it is cut to `MAX_ERROR_CHARS`: every spelling of
		this provider's key and extra headers' values (`secrets`) and of what the process knows
		(`openmolt_core._support.masking.masked_excerpt`: the instances' secret sets), then
		key-like strings; cut first, a secret straddling the cut would survive as a prefix.
		"""
		return self._redact(text)

	def _page_answer(
		self, response: httpx.Response, model: str, text: str | None = None
	) -> ProviderError:
		"""The error of an HTML page sent with a success status in place of the API's answer.

		``text``: the page's text, when the answer was streamed (default: its body, read).
		"""
		title = _page(response.headers, response.text if text is None else text) or "untitled"
		return ProviderError(
			f"the server answered with an HTML page ({self._redact(title)!r}), not the API's "
			f"answer ({response.status_code}): something between here and the API answered (a "
			f"proxy's sign-in page, a wrong address); check {self._base_url_setting()} and any "
			"proxy between here and the API",
			provider=self.name,
			model=model,
			status_code=response.status_code,
		)

	def _redact(self, text: str) -> str:
		# Masked whole, not cut yet: a mask may be longer than the secret it replaces, so the
		# masked text is not cut at the text's own length either (that cut the message's end).
		masked = masked_excerpt(text, sys.maxsize, self.secrets())
		return _KEY_PATTERNS().sub("***", masked)[:MAX_ERROR_CHARS]

	def _error(self, response: httpx.Response, model: str) -> ProviderError:
		from openmolt_providers._shape import decoded

		status = response.status_code
		try:
			body: Any = decoded(response.content)
		except ValueError:
			body = response.text
		if isinstance(body, list) and len(body) == 1:
			body = body[0]  # Google's error as a list of one Status (python-genai's APIError)
		page = _page(response.headers, body) if isinstance(body, str) else None
		if page is not None:  # a proxy's or gateway's page: its title, not its markup
			detail = self._redact(f"{_PAGE_FROM.format(page)}")
		else:
			detail = self._redact(provider_message(body).strip())
		suffix = f": {detail}" if detail else ""
		keyfix = (
			f"set a valid key in {self.env_var} or llm_providers['{self.name}']['api_key']"
			if self.key_required or self._key
			else f"this server wants an API key: set {self.env_var} or "
			f"llm_providers['{self.name}']['api_key']"
		)
		if status == 429 and _out_of_quota(body):
			return ProviderError(
				f"out of quota (429): the account has no credit left, so trying again will not "
				f"help; check the plan and billing{suffix}",
				provider=self.name,
				model=model,
				status_code=status,
			)
		# The server's word first, as the anthropic and openai SDKs obey it (a non-standard
		# header both APIs send): "false" on a 5xx that would fail the same way again.
		says = response.headers.get("x-should-retry")
		again = says == "true" if says in ("true", "false") else retryable_status(status)
		if retryable_status(status) and not again:
			refusal = ProviderError(
				f"the provider failed the request ({status}){suffix}; it said another try "
				"would fail the same way",
				provider=self.name,
				model=model,
				status_code=status,
			)
			vars(refusal)[_ANSWERED] = True
			return refusal
		if again:
			what = {
				408: "the request timed out",
				409: "the request conflicted with another",
				429: "rate limited or out of quota; wait, lower concurrency or check billing",
			}.get(
				status,
				"the provider had a server error; try again later"
				if status >= 500
				else "the request failed, and the provider said to try again",
			)
			wait = retry_after(response.headers)
			return _RetryableError(
				f"{what} ({status}){suffix}",
				retry_after=wait if wait is not None else retry_delay(body),
				provider=self.name,
				model=model,
				status_code=status,
			)
		exceeded = status in (400, 413) and exceeds_context(_error_code(body), detail)
		if exceeded:
			refusal = window_error(self, model, detail, status)
			vars(refusal)[_ANSWERED] = True
			return refusal
		if status == 400 and _flagged(body):
			message = (
				f"the provider's content filter refused the prompt ({status}){suffix}: "
				f"{FLAGGED_FIX} (an Azure deployment's filter is set on the deployment)"
			)
		elif status == 401 or (status in (400, 403) and "api key" in detail.lower()):
			message = f"the API key was rejected ({status}); {keyfix}"
		elif status == 402 or (status == 400 and _BILLING().search(detail)):
			message = f"a billing problem ({status}): check the plan and payment details{suffix}"
		elif status == 403:
			message = (
				f"access denied (403): the key may lack access to this model or feature{suffix}"
			)
		elif status == 404:
			message = (
				f"not found (404): check the model name {model!r} and "
				f"{self._base_url_setting()}{suffix}"
			)
		elif status == 413:
			message = f"the request is too large (413): send smaller attachments or history{suffix}"
		elif page is not None:
			message = (
				f"the request was rejected ({status}){suffix}; check "
				f"{self._base_url_setting()} and any proxy between here and the API"
			)
		else:
			message = (
				f"the request was rejected ({status}){suffix}; check model_config and "
				"provider_options for settings this model does not support"
			)
		refusal = ProviderError(message, provider=self.name, model=model, status_code=status)
		vars(refusal)[_ANSWERED] = True
		return refusal


_KEEPALIVES = frozenset({"ping", "keepalive"})
"""Event names that only keep a stream open: Anthropic's ``ping`` (its SDK skips it), and the
``keepalive`` some servers send; SSE comments never become events (`post_stream`'s idle count)."""

_MAX_UNSTREAMED = 1 << 20
"""The most bytes of a streamed answer kept until its first event (`HTTPProvider._no_events`):
a page or a whole reply sent in place of the events is read from them."""

_PAGE_FROM = "an HTML page ({!r}) from a proxy or gateway, not the API's own answer"
"""How an error names a page in place of the API's answer (`_page`)."""

_PAGE_TITLE = LazyPattern(r"<(title|h1)[^>]{0,200}>(.{0,500}?)</\1\s*>", re.IGNORECASE | re.DOTALL)
"""A page's title: bounded, so a page of unclosed tags is read in linear time."""
_TAG = LazyPattern(r"<[^>]*>")


def _page(headers: httpx.Headers, text: str) -> str | None:
	"""The title of an HTML page answered in place of the API's JSON; None if it is not one.

	None of the APIs answers with HTML (their errors are JSON); a page comes from something in
	between (a load balancer's 502, a proxy's sign-in page) and is known by its content type or
	its markup. Its ``<title>`` (else its first ``<h1>``) names it, cut to 120 characters.

	Args:
		headers: The answer's headers.
		text: The answer's body.
	"""
	kind = headers.get("content-type", "").lower()
	start = text[:200].lstrip().lower()
	if "html" not in kind and not start.startswith(("<!doctype html", "<html")):
		return None
	import html

	found = _PAGE_TITLE().search(text[:20_000])
	title = " ".join(html.unescape(_TAG().sub(" ", found.group(2))).split()) if found else ""
	return title[:120] or "untitled"


def exceeds_context(code: Any, detail: str) -> bool:
	"""Whether an error's code and message say the prompt is longer than the context window.

	One rule for every way an API says it: an HTTP refusal, a failed reply, a stream's error
	event (`window_error` is the error to raise).

	Args:
		code: The error's machine-readable code or type (any value; None for none).
		detail: The error's message.
	"""
	return bool(_CONTEXT_EXCEEDED().search(f"{code or ''} {detail}"))


def window_error(
	provider: HTTPProvider,
	model: str,
	detail: str,
	status: int | None = None,
	*,
	usage: Usage | None = None,
) -> ProviderError:
	"""The error for a prompt the model refused as longer than its context window.

	Marked ``context_exceeded``: a run that compacts summarises its older steps and asks again.
	A reply cut off because it filled the window (`window_stop`) is the same error: the prompt
	left no room for the answer, and asking again unchanged would end the same way.

	Args:
		provider: The provider that was asked.
		model: The model asked.
		detail: The provider's message, already scrubbed (`HTTPProvider.scrub`).
		status: The HTTP status, when the refusal came as one (None: inside a reply or stream).
		usage: What a reply that filled the window was billed for (`window_stop`); None for a
			refusal, which bills nothing.
	"""
	where = ": ".join(part for part in (str(status or ""), detail) if part)
	what = (
		"the prompt left no room in the model's context window for the reply, which was cut off"
		if usage is not None
		else "the prompt is longer than the model's context window"
	)
	message = (
		f"{what} ({where}): "
		"let compaction summarise older steps sooner (create_agent(compaction={"
		"'share': 0.5}) or 'threshold_tokens'; on a local server set "
		f"llm_providers['{provider.name}']['context_window'] to its real size), send smaller "
		"inputs, results or attachments, lower max_output_tokens, or use a model with a "
		"larger context window"
	)
	return ProviderError(
		message,
		provider=provider.name,
		model=model,
		status_code=status,
		context_exceeded=True,
		usage=usage,
	)


def filled_window(provider: HTTPProvider, model: str, usage: Usage) -> bool:
	"""Whether a reply its API says was cut at the output limit in fact filled the context window.

	An API's output-limit reason (Chat's ``length``, the Responses API's ``max_output_tokens``,
	Messages' ``max_tokens``, Gemini's ``MAX_TOKENS``) is said by OpenAI-compatible servers
	(vLLM, llama.cpp's server, Ollama, OpenRouter) for a reply that ran into the end of the
	window too: vLLM's default output limit is what the window leaves. The prompt and the reply
	together reaching the model's window, as far as it is known (`HTTPProvider.context_window`:
	the vendor's table, or ``llm_providers[name]["context_window"]`` for a local model), is the
	window (`window_stop`): read as the output limit, the run would ask the same full window
	again at every step and never compact.

	Args:
		provider: The provider that was asked.
		model: The model asked.
		usage: The reply's usage (unknown tokens count as 0: then it is the output limit).
	"""
	window = provider.context_window(model)
	return window is not None and usage.input_tokens + usage.output_tokens >= window


def window_stop(provider: HTTPProvider, model: str, reason: str, usage: Usage) -> ProviderError:
	"""The error for a reply (sent with 200) whose finish reason says it filled the context window.

	Anthropic's ``stop_reason: "model_context_window_exceeded"`` and Mistral's ``finish_reason:
	"model_length"`` (OpenAI-compatible Chat) stop a reply at the model's context window, not
	at the output limit the request set: read as ``max_tokens`` ("cut off, answer shorter"), the
	run asked the same full window again at each step and never compacted. It is `window_error`,
	carrying the reply's billed usage, so the run counts it.

	Args:
		provider: The provider that was asked.
		model: The model asked.
		reason: The finish reason the API gave, for the message.
		usage: The reply's usage (what was billed).
	"""
	detail = f"finish reason {reason!r}"
	return window_error(provider, model, detail, usage=usage)


def reply_failure(
	provider: HTTPProvider,
	model: str,
	what: str,
	why: str,
	status: int | None,
	code: Any = None,
	*,
	usage: Usage | None = None,
	wait: float | None = None,
) -> ProviderError:
	"""The error an API's error object stands for (a stream's error event, a body sent with 200).

	A prompt past the context window is `window_error` (the loop compacts on it); anything else
	fails with the status the error names, retried when that status passes.

	Args:
		provider: The provider that was asked.
		model: The model asked.
		what: What failed, for the message (``the stream``, ``the reply``).
		why: The error's message, already scrubbed (`HTTPProvider.scrub`).
		status: The HTTP status the error stands for, when it names one.
		code: The error's machine-readable code or type, for `exceeds_context`.
		usage: What the failed reply reports it was billed for (its ``usage`` beside the error);
			None when it reports nothing.
		wait: The seconds the error asks to wait before another try (`retry_delay`), when it
			says: the retry policy keeps it as it keeps a ``Retry-After`` header.
	"""
	if exceeds_context(code, why):
		refusal = window_error(provider, model, why, status)
		refusal.usage = usage  # the refusal's message stays a refusal's: nothing was cut off
		return refusal
	failure = ProviderError(
		f"{what} failed: {why}",
		provider=provider.name,
		model=model,
		status_code=status,
		retryable=retryable_status(status),
		usage=usage,
	)
	if wait is not None:
		vars(failure)[_WAIT] = float(wait)
	return failure


def no_answer(provider: HTTPProvider, model: str, usage: Usage | None = None) -> ProviderError:
	"""The error of a whole reply that holds no answer at all: retryable, as a cut stream is.

	Chat's ``choices: []`` and Gemini's ``candidates: []`` without a blocked prompt: streamed,
	such a reply ends without a finish reason, is cut off and asked again; read as an empty
	answer, a step was paid to tell the model it answered nothing.

	Args:
		provider: The provider that was asked.
		model: The model asked.
		usage: What the reply reports it was billed for, if anything.
	"""
	return ProviderError(
		"the reply held no answer (no choice or candidate), so none of it was run; try again",
		provider=provider.name,
		model=model,
		retryable=True,
		usage=usage,
	)


def billed(exc: ProviderError, spent: Usage | None) -> ProviderError:
	"""``exc`` with what billed requests before it cost added to its usage (in place).

	A call made of several requests (an Anthropic paused turn, a Gemini continuation, the tries
	a retry made) was billed for each that answered; the request that failed last carries its
	own usage, if it reported any (`ProviderError.usage`), and the run counts the sum.

	Args:
		exc: The failure.
		spent: What the earlier requests of the call were billed for (None: nothing).
	"""
	if spent is not None:
		exc.usage = added(spent, exc.usage)
	return exc


def joined(response: ModelResponse, earlier: Usage, last: Usage) -> ModelResponse:
	"""A reply made of several requests (a paused turn, a continuation): each one billed.

	Its usage adds up every request's; the prompt's size stays the last request's
	(``prompt_tokens``), as each request's prompt holds the ones before.

	Args:
		response: The reply, its content joined.
		earlier: What the requests before the last were billed for.
		last: The last request's usage.
	"""
	usage = added(earlier, last)
	if usage is not None:
		response.usage = usage
	response.prompt_tokens = last.input_tokens
	return response


def added(first: Usage | None, then: Usage | None) -> Usage | None:
	"""The sum of two usages, either of which may be None (nothing billed), as a new usage."""
	if first is None and then is None:
		return None
	from openmolt_core.llm import Usage

	total = Usage()
	for usage in (first, then):
		if usage is not None:
			total.add(usage)
	return total


_NEVER_LATER = frozenset({501, 505})
"""Server statuses that do not pass: 501 Not Implemented (a server without this endpoint: the
OpenAI provider then tries Chat Completions) and 505 HTTP Version Not Supported."""

_CONTEXT_EXCEEDED = LazyPattern(
	r"context_length_exceeded|exceed_context_size|context (length|window|size|limit)"
	r"|prompt is too long"
	r"|input token count.*exceeds|maximum number of tokens allowed|too many input tokens",
	re.IGNORECASE,
)
"""How the APIs name a prompt past the context window: OpenAI's code ``context_length_exceeded``
(Chat: "This model's maximum context length is..."; Responses: "Your input exceeds the context
window of this model"), Anthropic's "prompt is too long: N tokens > M maximum", and "input length and `max_tokens` exceed context limit", Gemini's "The input token count (N)
exceeds the maximum number of tokens allowed (M)", vLLM's "maximum context length" and
llama.cpp's ``exceed_context_size_error``."""


def _error_code(body: Any) -> str:
	"""The machine-readable code or type of an error body (OpenAI's ``error.code``)."""
	error = body.get("error") if isinstance(body, dict) else None
	if not isinstance(error, dict):
		return ""
	return " ".join(str(error.get(k) or "") for k in ("code", "type"))


FLAGGED_FIX = (
	"something the run sent was flagged (the task, an attachment or a tool's result, often the "
	"latest); asking again sends it again, so change it, or use another model"
)
"""What to do about a prompt a content filter or usage policy refused (every API's wording)."""

_FLAGGED = frozenset({"content_filter", "invalid_prompt", "ResponsibleAIPolicyViolation"})
"""Error codes of a prompt a content filter refused: Azure OpenAI's ``content_filter`` (its
``innererror.code`` ``ResponsibleAIPolicyViolation``), OpenAI's ``invalid_prompt`` ("your prompt
was flagged as potentially violating our usage policy")."""


def _flagged(body: Any) -> bool:
	"""Whether a 400's body says a content filter refused the prompt (`_FLAGGED`)."""
	error = body.get("error") if isinstance(body, dict) else None
	if not isinstance(error, dict):
		return False
	inner = error.get("innererror")
	codes = {error.get("code"), inner.get("code") if isinstance(inner, dict) else None}
	return any(isinstance(code, str) and code in _FLAGGED for code in codes)


_BILLING = LazyPattern(r"credit balance|enable billing", re.IGNORECASE)
"""How a 400 names a billing problem: Anthropic's "Your credit balance is too low to access the
Anthropic API" (an ``invalid_request_error``, not its 402 ``billing_error``), Gemini's "Please
enable billing on your project" (a region without the free tier)."""


def _out_of_quota(body: Any) -> bool:
	"""Whether a 429 says the account is out of credit (OpenAI's ``insufficient_quota``)."""
	return "insufficient_quota" in _error_code(body)


def retry_delay(body: Any) -> float | None:
	"""The wait an error body asks for: Google's ``RetryInfo`` detail (``"retryDelay": "37s"``).

	Gemini answers a 429 (``RESOURCE_EXHAUSTED``) without a ``Retry-After`` header; the wait is
	in ``error.details``, a ``google.rpc.RetryInfo`` whose ``retryDelay`` is a protobuf
	Duration in JSON (seconds with an ``s``, up to nine decimals).

	Args:
		body: The decoded error body.
	"""
	error = body.get("error") if isinstance(body, dict) else None
	details = error.get("details") if isinstance(error, dict) else None
	for detail in details if isinstance(details, list) else ():
		delay = detail.get("retryDelay") if isinstance(detail, dict) else None
		if isinstance(delay, str) and delay.endswith("s"):
			try:
				seconds = float(delay[:-1])
			except ValueError:
				continue
			if math.isfinite(seconds):  # "nans" reads as NaN, which no sleep takes
				return max(seconds, 0.0)
	return None


def retryable_status(status: int | None) -> bool:
	"""Whether a failure with this HTTP status may pass on another try.

	`RETRY_STATUSES`, and every other 5xx but 501 and 505; for the HTTP answer and the error
	events of streams alike.

	Args:
		status: The status, or None when the failure named none.
	"""
	if status is None:
		return False
	return status in RETRY_STATUSES or (status >= 500 and status not in _NEVER_LATER)


class _Head:
	"""What every request of a provider to one URL shares: the parsed URL and the headers.

	``raw`` is the header list httpx would send before ``Content-Length`` (``Host`` first, then
	the client's and the provider's headers), or None when the headers name ``Host``,
	``Content-Length`` or ``Transfer-Encoding`` themselves: httpx then decides (`HTTPProvider._request`).
	"""

	__slots__ = ("headers", "raw", "url")

	def __init__(self, url: str, headers: Mapping[str, str]) -> None:
		import httpx

		self.url = httpx.URL(url)
		self.headers = httpx.Headers(headers)
		own = ("host", "content-length", "transfer-encoding")
		if any(name in self.headers for name in own):
			self.raw: list[tuple[bytes, bytes]] | None = None
		else:
			self.raw = [(b"Host", self.url.netloc), *self.headers.raw]


@functools.lru_cache(maxsize=256)
def _window(windows: tuple[tuple[str, int], ...], model: str) -> int | None:
	"""The context window of ``windows`` (`HTTPProvider.context_windows`) whose prefix names the model.

	Read from the model's name (`model_name`: a ``models/`` or gateway prefix and a fine-tune's
	``ft:`` do not hide the family). Asked at every step, for the same model: kept.
	"""
	from openmolt_providers._model_id import model_name  # importing the package loads none

	name = model_name(model)
	for prefix, size in windows:
		if name.startswith(prefix):
			return size
	return None


def _charged(chunk: _C, spent: Usage | None) -> _C:
	"""A call's reply with what its earlier, failed but billed, tries cost added to its usage.

	Only the whole reply (a `ModelResponse`) carries usage; a text delta is returned as it is.
	"""
	if spent is None:  # the first try answered: nothing to add (the common case)
		return chunk
	from openmolt_core.llm import ModelResponse

	if isinstance(chunk, ModelResponse):
		if chunk.prompt_tokens is None:  # the prompt's size stays the answering request's
			chunk.prompt_tokens = chunk.usage.input_tokens
		chunk.usage = added(spent, chunk.usage) or chunk.usage
	return chunk


def _hint(exc: BaseException) -> float | None:
	"""The wait a failure's server asked for: its ``Retry-After``, or the wait in its error body."""
	if isinstance(exc, _RetryableError):
		return exc.retry_after
	wait = vars(exc).get(_WAIT) if isinstance(exc, ProviderError) else None
	return wait if isinstance(wait, float) else None


def _nothing_listens(exc: BaseException, url: str) -> bool:
	"""A failed connect to this machine: no server is there, and retrying will not start one.

	On the loopback interface a connect fails at once and only when nothing listens (no network
	between), whatever the transport's wording (httpx says "refused", aiohttp "connect call failed").
	"""
	import ipaddress

	import httpx

	if not isinstance(exc, httpx.ConnectError):
		return False
	host = httpx.URL(url).host
	if host == "localhost":
		return True
	try:
		address = ipaddress.ip_address(host)
	except ValueError:
		return False
	# 0.0.0.0 and :: (what servers print as their listening address) reach this machine too.
	return address.is_loopback or address.is_unspecified


def _should_retry(exc: BaseException) -> bool:
	return isinstance(exc, _RetryableError | _transport_error())


def _transport_error() -> type[Exception]:
	import httpx

	return httpx.TransportError
