"""A journal never holds a secret: the port a durability backend gets journals redacted values.

`RedactedPort` wraps the backend's port and masks every secret the agent knows in each step's
value (and a failed step's error) before the journal stores it. The run reads what the journal
holds, on its first execution as on a replay: the masked value, so the two never diverge; secrets
reach tools from their bindings, never from the journal. What a backend keeps besides its steps
is its own to mask, with the same redactor (`openmolt_core.agent.Agent.redact`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core.durability import ForwardingPort, RunPort
from openmolt_core.result import RunState

if TYPE_CHECKING:
	from openmolt_core._support.secretset import Redactor
	from openmolt_core.files import InstanceFiles

__all__ = ["RedactedPort"]


class RedactedPort(ForwardingPort):
	"""A port whose journaled step values have every known secret masked.

	Args:
		port: The backend's port.
		redactor: Gives the agent's `Redactor`; asked at each step, so secrets learned during
			the run (a refreshed token, an integration bound later) are masked too.
		files: Gives the instance's file store, which masks a state that holds files; asked
			only for such a state.
	"""

	__slots__ = ("_files", "_redactor")

	def __init__(
		self,
		port: RunPort,
		redactor: Callable[[], Redactor],
		files: Callable[[], InstanceFiles],
	) -> None:
		super().__init__(port)
		self._redactor = redactor
		self._files = files

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run the step on the wrapped port; the value it journals (and returns) is redacted.

		A state's files are screened as bytes (`InstanceFiles.masked_state`); every other
		value is masked as text (`Redactor.deep`). A step that fails is journaled with its
		error (a provider's error quoting a key), masked in place first (`Redactor.exception`),
		as the run masks it anyway once it reaches the loop.
		"""
		redactor, files = self._redactor, self._files

		def sealed(value: Any) -> Any:
			data = value if encode is None else encode(value)
			if (
				isinstance(value, RunState)
				and isinstance(data, Mapping)
				and any(m.attachments for m in value.messages)
			):
				return files().masked_state(data, redactor())
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
		await super().record_spent(key, self._redactor().deep(dict(entry)))
