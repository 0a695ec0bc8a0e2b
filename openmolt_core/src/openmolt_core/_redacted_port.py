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

A step that fails is journaled with its error: the error is masked in place before the backend
sees it (`Redactor.exception`), as the run masks it anyway once it reaches the loop. What a
durable backend keeps of a run besides its steps (the workflow's input, output and error) is the
backend's to mask, with the same redactor (`openmolt_core.agent.Agent.redact`).

A step whose value is a run's state (the step ``start`` journals a new run's) is masked as the
run store masks one (`openmolt_core.files.masked_state`): the base64 of a file sent with a turn
is screened as bytes, so a secret known by then (one learned during the run, an integration
bound later) leaves the file kept, kept masked (a text) or left out, never broken.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core.durability import ForwardingPort, RunPort, record_spent
from openmolt_core.result import RunState

if TYPE_CHECKING:
	from openmolt_core._support.secretset import Redactor

__all__ = ["RedactedPort"]


class RedactedPort(ForwardingPort):
	"""A port whose journaled step values have every known secret masked.

	Args:
		port: The backend's port.
		redactor: Gives the agent's `Redactor`; asked at each step, so secrets learned during
			the run (a refreshed token, an integration bound later) are masked too.
	"""

	__slots__ = ("_redactor",)

	def __init__(self, port: RunPort, redactor: Callable[[], Redactor]) -> None:
		super().__init__(port)
		self._redactor = redactor

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run the step on the wrapped port; the value it journals (and returns) is redacted.

		A state's files are screened as bytes (`openmolt_core.files.masked_state`); every other
		value is masked as text (`Redactor.deep`). A step that fails is journaled with its
		error (a provider's error quoting a key), masked in place first (`Redactor.exception`),
		as the run masks it anyway once it reaches the loop.
		"""
		redactor = self._redactor

		def sealed(value: Any) -> Any:
			data = value if encode is None else encode(value)
			if isinstance(value, RunState) and isinstance(data, Mapping):
				from openmolt_core.files import masked_state

				return masked_state(data, redactor())
			return redactor().deep(data)

		async def body() -> Any:
			try:
				return await fn()
			except Exception as exc:
				redactor().exception(exc)
				raise

		return await self.port.step(key, body, encode=sealed, decode=decode)

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		"""Keep what a tool call spent so far on the wrapped port, redacted as a step's value is.

		It holds usage and model ids today; redacted all the same, everything the backend keeps
		for a run passes this port's redactor.
		"""
		await record_spent(self.port, key, self._redactor().deep(dict(entry)))
