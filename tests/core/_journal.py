"""A durable port in miniature, to check that a replayed run rebuilds the same state."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from openmolt import RunState
from openmolt_core.llm import Message


class Journal:
	"""A durable port in miniature: records each step's JSON, or answers from a recording."""

	def __init__(self, replay: dict[str, Any] | None = None, *, deliver: bool = False) -> None:
		self.values: dict[str, Any] = {}
		self.replay = replay
		self.deliver_replayed = deliver

	@property
	def replaying(self) -> bool:
		return self.replay is not None

	def now(self) -> float:
		return time.monotonic()

	async def deadline(self, seconds: float) -> float:
		return time.monotonic() + seconds

	async def sleep(self, seconds: float) -> None:
		return None

	def reserve(self, keys: Sequence[str]) -> None:
		return None

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		if self.replay is not None:
			data = self.replay[key]
			return decode(data) if decode else data
		value = await fn()
		self.values[key] = json.loads(json.dumps(encode(value) if encode else value))
		return value


async def drive(agent: Any, port: Journal, run_id: str) -> RunState:
	state = RunState(run_id=run_id)
	state.messages.append(Message("user", agent.first_message("go", state)))
	await agent._prepare()
	await agent._loop(agent._context(state, port), None)
	return state
