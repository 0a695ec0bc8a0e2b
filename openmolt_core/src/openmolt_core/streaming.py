"""Streaming, the optional provider capability: the reply's text as the model writes it.

A provider that can stream defines, besides ``generate``, a ``stream(request)`` async iterator
(`StreamingProvider`): it yields `TextDelta` chunks of the reply text as they arrive, and ends with
the complete `openmolt_core.llm.ModelResponse`, the one ``generate`` would have returned for the
same reply (text, usage, raw response, finish reason). A stream that ends before the provider said
the reply was complete raises `openmolt_core.errors.ProviderError`: the loop runs nothing of a
reply it has not fully received.

Providers without ``stream`` still work: `stream_reply` then calls ``generate`` and reports the
whole reply as one delta. The loop streams only when something listens to the ``text:delta`` or
``command:ready`` events (``agent.stream()``, or ``agent.on``); other runs call ``generate`` as
before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from openmolt_core.errors import ProviderError
from openmolt_core.llm import LLMProvider, ModelRequest, ModelResponse

__all__ = ["StreamChunk", "StreamingProvider", "TextDelta", "stream_reply"]


@dataclass(frozen=True, slots=True)
class TextDelta:
	"""The next piece of the reply text.

	Args:
		text: The new text (decoded; a chunk of bytes cut inside a character waits for the rest).
	"""

	text: str


StreamChunk = TextDelta | ModelResponse
"""What a provider's ``stream`` yields: deltas, then one `ModelResponse`, last."""


@runtime_checkable
class StreamingProvider(LLMProvider, Protocol):
	"""A provider that can also stream its reply (the optional capability of this module)."""

	def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		"""Send one request and yield the reply as it is generated.

		Args:
			request: The same request ``generate`` takes.

		Returns:
			An async iterator of `TextDelta` chunks, ending with the complete `ModelResponse`
			(equal to what ``generate`` returns for the same reply).

		Raises:
			ProviderError: The provider refused or failed, or the stream was cut off before the
				reply was complete.
		"""
		...


async def stream_reply(
	provider: LLMProvider,
	request: ModelRequest,
	on_text: Callable[[str], Awaitable[None]],
) -> ModelResponse:
	"""Ask a provider for one reply, streaming it when the provider can.

	Args:
		provider: Any provider; one with ``stream`` streams, others answer at once.
		request: The request.
		on_text: Awaited with each new piece of the reply text, in order.

	Returns:
		The complete response.

	Raises:
		ProviderError: As the provider raises; also when a stream ends without its response.
	"""
	stream = getattr(provider, "stream", None)
	if not callable(stream):  # no capability (or an unrelated attribute of that name)
		response = await provider.generate(request)
		if isinstance(response, ModelResponse) and response.text:
			await on_text(response.text)
		return response
	final: ModelResponse | None = None
	chunks: AsyncIterator[StreamChunk] = stream(request)
	try:
		async for chunk in chunks:
			if isinstance(chunk, ModelResponse):
				final = chunk
			elif chunk.text:
				await on_text(chunk.text)
	finally:
		close = getattr(chunks, "aclose", None)
		if close is not None:
			await close()
	if final is None:
		raise ProviderError(
			"the stream ended without a complete reply, so none of it was run; try again",
			provider=getattr(provider, "name", "") or "custom",
			model=request.model,
			retryable=True,
		)
	return final
