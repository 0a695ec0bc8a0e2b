"""Streaming, the optional provider capability: the reply's text as the model writes it.

A provider that can stream defines, besides ``generate``, a ``stream(request)`` async iterator
(`StreamingProvider`): it yields `TextDelta` chunks of the reply text as they arrive, and ends with
the complete `openmolt_core.llm.ModelResponse`, the one ``generate`` would have returned for the
same reply (text, usage, raw response, finish reason). A stream that ends before the provider said
the reply was complete raises `openmolt_core.errors.ProviderError`: the loop runs nothing of a
reply it has not fully received.

Providers without ``stream`` still work: the streaming capability's
`openmolt_core.capabilities.streaming.stream_reply` (re-exported here on first use) then calls
``generate`` and reports the whole reply as one delta. The loop streams only when something
listens to the ``text:delta`` or ``command:ready`` events (``agent.stream()``, or ``agent.on``);
other runs call ``generate`` as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from openmolt_core._support import lazy_exports
from openmolt_core.llm import LLMProvider, ModelRequest, ModelResponse

__all__ = ["StreamChunk", "StreamingProvider", "TextDelta"]


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


# The streaming capability's consumer of this contract, under its old name here (loaded on first
# use; not in __all__).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(), {"stream_reply": "openmolt_core.capabilities.streaming"}
)
