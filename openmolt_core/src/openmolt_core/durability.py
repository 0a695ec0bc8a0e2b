"""The durability port: the seam through which a durable engine journals a run.

The loop never calls a model, a tool or a callback directly, never sleeps and never reads the clock:
it goes through a `RunPort`. The default, `LocalPort`, passes straight through at no measurable
cost. A durable engine (``openmolt-dbos``) implements the same protocol: it records each step's
JSON value under its key, answers steps of a replayed run from its journal, makes ``sleep`` and
``now`` durable, and can park a run that waits for a person.

Step keys are deterministic: the same run replayed asks for the same keys in the same order.

| kind | key |
| --- | --- |
| model call | ``model:<step>`` |
| tool call | ``tool:<step>:<command index>:<tool handle>`` |
| memory callback | ``memory:<step>:<command index>`` |
| human input | ``human:<step>:<command index>`` |
| approval decision | ``approval:<step>:<command index>:<tool handle>`` (before the tool call's own step) |
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

import anyio

__all__ = ["LOCAL_PORT", "LocalPort", "RunPort", "step_key"]


def step_key(kind: str, step: int, index: int | None = None, handle: str | None = None) -> str:
	"""The deterministic key of one step (see the module docstring).

	Args:
		kind: ``model``, ``tool``, ``memory``, ``human`` or ``approval``.
		step: The step number (1-based).
		index: The command's index in the reply, for everything but model calls.
		handle: The tool handle, for tool calls.
	"""
	parts = [kind, str(step)]
	if index is not None:
		parts.append(str(index))
	if handle is not None:
		parts.append(handle)
	return ":".join(parts)


@runtime_checkable
class RunPort(Protocol):
	"""What the loop needs from its environment: journaled steps, a clock and a sleep.

	Values passed through `step` are JSON (dicts, lists, strings, numbers, booleans, None).
	"""

	def now(self) -> float:
		"""Seconds on a clock that only moves forward (a durable engine records each reading)."""
		...

	async def sleep(self, seconds: float) -> None:
		"""Wait; a durable engine keeps the deadline across a restart."""
		...

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run ``fn`` once for this key and return its value (from the journal on replay).

		Args:
			key: The step's deterministic key (`step_key`).
			fn: Does the work.
			encode: Turns ``fn``'s value into JSON for the journal (default: it is JSON).
			decode: Turns a journaled value back into what ``fn`` returns.
		"""
		...


class LocalPort:
	"""The in-process port: steps run directly, time is the monotonic clock, sleep is anyio's."""

	__slots__ = ()

	def now(self) -> float:
		"""`time.monotonic()`."""
		return time.monotonic()

	async def sleep(self, seconds: float) -> None:
		"""`anyio.sleep`."""
		await anyio.sleep(seconds)

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run ``fn``: in process there is no journal, so the key and the codec go unused."""
		return await fn()


LOCAL_PORT = LocalPort()
"""The shared pass-through port (it holds no state)."""
