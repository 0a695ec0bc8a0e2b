"""A journal never holds a secret: the port a durability backend gets journals redacted values.

A durable run journals each step's value (a tool's result, a model's reply, a person's answer) so
that a replay returns it instead of acting again. Those values come from outside: a tool result
can echo a token, an error can quote a header. `RedactedPort` wraps the backend's port and masks
every secret the agent knows (`openmolt_core.secrets.Redactor`: its tools' credentials, the
instance's keys) in each value before the journal stores it.

The run reads what the journal holds, on its first execution as on a replay: the masked value.
That is the contract, and it costs nothing that matters, because the run never hands a secret
on anyway: what a tool returns reaches the model, the events and the stores only through the
same redactor. Secrets reach tools from their bindings (credentials, config), never from the
journal, so a replayed run calls its tools with the same credentials as the first. What can
differ is code that reads a step's raw value in the process (a tool result shown to a
guardrail judge before redaction): a durable run sees it masked, live and on replay alike, so
the two never diverge. An in-process run (`openmolt_core.durability.LOCAL_PORT`) has no journal
and is not wrapped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from openmolt_core.durability import ForwardingPort, RunPort

__all__ = ["RedactedPort"]


class RedactedPort(ForwardingPort):
	"""A port whose journaled step values have every known secret masked.

	Args:
		port: The backend's port.
		redact: Masks secrets in a JSON-like value (the agent's `Redactor.deep`); looked up at
			each step, so secrets learned during the run (a refreshed token) are masked too.
	"""

	__slots__ = ("_redact",)

	def __init__(self, port: RunPort, redact: Callable[[Any], Any]) -> None:
		super().__init__(port)
		self._redact = redact

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run the step on the wrapped port; the value it journals (and returns) is redacted."""
		redact = self._redact

		def sealed(value: Any) -> Any:
			return redact(value if encode is None else encode(value))

		return await self.port.step(key, fn, encode=sealed, decode=decode)
