"""Test doubles for OpenMolt and for plugin authors: a scripted model and a mock HTTP client.

```python
model = ScriptedModel([call_tool("weather.getForecast", city="Oslo"), finish(result="Umbrella.")])
agent = om.create_agent(name="Umbrella", model=model, integrations=["weather"])
result = await agent.run("Do I need an umbrella?")
model.assert_consumed()
```
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, get_args

import anyio
import anyio.lowlevel

from openmolt_core.commands import (
	CallTool,
	Finish,
	RequestHumanInput,
	UpdateMemory,
	UpdatePlan,
	Wait,
)
from openmolt_core.errors import ConfigurationError
from openmolt_core.llm import ModelRequest, ModelResponse, Usage

if TYPE_CHECKING:
	import httpx

__all__ = [
	"ALLOW_MODEL_REQUESTS",
	"FakeClock",
	"ModelRequestsDisallowedError",
	"ScriptedModel",
	"ScriptedModelError",
	"ask_human",
	"call_tool",
	"finish",
	"mock_http",
	"update_memory",
	"update_plan",
	"wait",
]

ALLOW_MODEL_REQUESTS = True
"""Whether providers of an OpenMolt instance with its own HTTP client may call a real model.

The pytest plugin (`openmolt_core.pytest_plugin`) turns it off for every test, so a test that
forgot its mock fails at once instead of paying for (and waiting on) a real call. Instances given
``http_client=`` (a mock) and scripted models are never refused.
"""


class ModelRequestsDisallowedError(ConfigurationError):
	"""A test was about to send a real model request while `ALLOW_MODEL_REQUESTS` is off."""


Reply = str | dict[str, Any] | list[dict[str, Any]] | Callable[[ModelRequest], Any]
"""A scripted reply: raw text, one command, a list of commands, or a (sync or async) function of
the request returning one of those."""


def _count(n: int, noun: str, plural: str | None = None) -> str:
	# Only for the messages of a script gone wrong: a plain run's imports stay the kernel's.
	from openmolt_core._support.words import quantity

	return quantity(n, noun, plural)


def _scripted(n: int) -> str:
	"""``1 reply was scripted``, ``2 replies were scripted``."""
	return f"{_count(n, 'reply', 'replies')} {'was' if n == 1 else 'were'} scripted"


class ScriptedModelError(AssertionError):
	"""The scripted model was called more often than scripted, or not as often."""


def _command(cls: type[Any], **fields: Any) -> dict[str, Any]:
	"""A command dict for ``cls``: its ``type``, and each field under its wire name (alias).

	Nothing is validated, so a test can build a command the loop must refuse.
	"""
	names = {n: (f.alias or n) for n, f in cls.model_fields.items()}
	kind = get_args(cls.model_fields["type"].annotation)[0]
	return {"type": kind, **{names.get(k, k): v for k, v in fields.items()}}


def call_tool(tool: str, /, **input: Any) -> dict[str, Any]:
	"""A ``callTool`` command for ``tool`` (``integration.handle``) with keyword input."""
	return _command(CallTool, tool=tool, input=input)


def finish(
	output: Any = None, /, *, status: str = "success", human_message: str = "", **fields: Any
) -> dict[str, Any]:
	"""A ``finish`` command; give the output positionally or as keyword fields."""
	value = output if output is not None else (fields or None)
	return _command(Finish, status=status, output=value, human_message=human_message)


def wait(seconds: float) -> dict[str, Any]:
	"""A ``wait`` command."""
	return _command(Wait, seconds=seconds)


def update_plan(*steps: dict[str, Any] | str) -> dict[str, Any]:
	"""An ``updatePlan`` command; a str step becomes ``{"name": step, "status": "pending"}``."""
	plan = [{"name": s, "status": "pending"} if isinstance(s, str) else s for s in steps]
	return _command(UpdatePlan, plan=plan)


def update_memory(data: str, *, memory: str = "shortTerm", mode: str = "append") -> dict[str, Any]:
	"""An ``updateMemory`` command.

	Args:
		data: The text.
		memory: ``shortTerm`` or ``longTerm`` (``short_term`` and ``long_term``, as
			``create_agent(memory=...)`` spells them, are taken too).
		mode: ``append`` or ``replace``.
	"""
	memory = _MEMORY_NAMES.get(memory, memory)
	return _command(UpdateMemory, memory=memory, mode=mode, data=data)


_MEMORY_NAMES = {"short_term": "shortTerm", "long_term": "longTerm"}
"""The command's names of the memories, by the names ``create_agent(memory=...)`` uses."""


def ask_human(message: str) -> dict[str, Any]:
	"""A ``requestHumanInput`` command."""
	return _command(RequestHumanInput, message=message)


class ScriptedModel:
	"""A fake model that answers with scripted replies, in order, and records every request.

	Args:
		replies: One reply per expected call (see `Reply`).
		usage: Usage reported for each call.
		name: The provider name it reports.
		price: Its price in USD per million tokens, ``(input, cached input, output, cache
			write)``, as a provider's ``price(model)`` gives it (for ``max_cost``); None: unknown.
	"""

	def __init__(
		self,
		replies: Sequence[Reply],
		*,
		usage: Usage | None = None,
		name: str = "scripted",
		price: tuple[float, float, float, float | None] | None = None,
	) -> None:
		self.replies: list[Reply] = list(replies)
		self.requests: list[ModelRequest] = []
		self.usage: Usage = usage or Usage(input_tokens=10, output_tokens=5)
		self.name = name
		self.model = "scripted"
		self._price = price

	def price(self, model: str) -> tuple[float, float, float, float | None] | None:
		"""Its price per million tokens (given at creation), or None."""
		return self._price

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""Return the next scripted reply."""
		index = len(self.requests)
		# The loop passes its own growing message list; keep a snapshot of this call.
		self.requests.append(replace(request, messages=list(request.messages)))
		if index >= len(self.replies):
			raise ScriptedModelError(
				f"the model was called {_count(index + 1, 'time')} but only "
				f"{_scripted(len(self.replies))}"
			)
		reply = self.replies[index]
		if callable(reply):
			reply = reply(request)
			if inspect.isawaitable(reply):
				reply = await reply
		if isinstance(reply, str):
			text = reply
		else:
			commands = [reply] if isinstance(reply, dict) and "commands" not in reply else reply
			body = commands if isinstance(commands, dict) else {"commands": commands}
			text = json.dumps(body)
		usage = Usage(
			input_tokens=self.usage.input_tokens,
			output_tokens=self.usage.output_tokens,
			cached_tokens=self.usage.cached_tokens,
			cost_usd=self.usage.cost_usd,
			calls=1,
		)
		return ModelResponse(text=text, usage=usage, raw={"scripted": index}, finish_reason="stop")

	@property
	def calls(self) -> int:
		"""How many times the model was called."""
		return len(self.requests)

	def assert_consumed(self) -> None:
		"""Fail unless every scripted reply was used."""
		if len(self.requests) != len(self.replies):
			raise ScriptedModelError(
				f"{_scripted(len(self.replies))} but the model was called "
				f"{_count(len(self.requests), 'time')}"
			)

	def last_turn(self) -> Any:
		"""The last user turn of the last request, parsed from JSON."""
		return json.loads(self.requests[-1].messages[-1].content)


def mock_http(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
	"""An ``httpx.AsyncClient`` whose requests go to ``handler`` instead of the network."""
	import httpx

	return httpx.AsyncClient(transport=httpx.MockTransport(handler))


class FakeClock:
	"""A clock for scheduler tests: time moves only when the test moves it, and nobody sleeps.

	```python
	clock = FakeClock(datetime(2024, 3, 9, 12, tzinfo=UTC))
	om = OpenMolt(clock=clock, entry_points=False)
	...
	await clock.advance(hours=24)   # every due run fires, at its due time, in order
	clock.jump(hours=5)             # the machine slept: sleepers wake late, all at once
	```

	Args:
		start: The starting time (aware); default 2024-01-01 00:00 UTC.
	"""

	def __init__(self, start: datetime | None = None) -> None:
		self._now = (start or datetime(2024, 1, 1, tzinfo=UTC)).astimezone(UTC)
		self._sleepers: list[tuple[datetime, anyio.Event]] = []
		self._working = 0

	def now(self) -> datetime:
		"""The fake current time (UTC)."""
		return self._now

	async def sleep_until(self, when: datetime) -> None:
		"""Wait until the test moves the clock to ``when`` or later."""
		if when <= self._now:
			await anyio.lowlevel.checkpoint()
			return
		event = anyio.Event()
		entry = (when, event)
		self._sleepers.append(entry)
		try:
			await event.wait()
		finally:
			if entry in self._sleepers:
				self._sleepers.remove(entry)

	@property
	def sleeping(self) -> int:
		"""How many tasks wait on this clock."""
		return len(self._sleepers)

	@contextlib.contextmanager
	def working(self) -> Iterator[None]:
		"""Mark work in a worker thread (the scheduler's SQLite store) that `advance` waits for.

		A task waiting for a thread counts as blocked, so without this `advance` would move the
		time on while the store still decides whether a due time runs.
		"""
		self._working += 1
		try:
			yield
		finally:
			self._working -= 1

	async def _settle(self) -> None:
		# Every task blocked, and no marked work in a thread.
		await anyio.wait_all_tasks_blocked()
		while self._working:
			await anyio.sleep(0.001)
			await anyio.wait_all_tasks_blocked()

	def _wake(self) -> None:
		for when, event in list(self._sleepers):
			if when <= self._now:
				event.set()

	def jump(self, **delta: float) -> None:
		"""Move the time forward at once (``hours=5``); every sleeper due by then wakes late."""
		self._now += timedelta(**delta)
		self._wake()

	async def advance(self, **delta: float) -> None:
		"""Move the time forward (``hours=24``), stopping at each sleeper's due time in turn.

		After each stop it lets every task run until all are blocked again, so runs happen at
		their due times and in order, as with a real clock.
		"""
		target = self._now + timedelta(**delta)
		await self._settle()
		while True:
			due = [when for when, _ in self._sleepers if when <= target]
			if not due:
				break
			self._now = max(self._now, min(due))
			self._wake()
			await self._settle()
		self._now = target
		self._wake()
		await self._settle()
