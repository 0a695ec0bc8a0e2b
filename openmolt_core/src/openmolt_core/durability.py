"""The durability port: the seam through which a durable engine journals a run.

The loop never calls a model, a tool or a callback directly, never sleeps and never reads the clock:
it goes through a `RunPort`. The default, `LocalPort`, passes straight through at no measurable
cost. A durable engine (``openmolt-dbos``) implements the same protocol: it records each step's
JSON value under its key, answers steps of a replayed run from its journal, makes ``sleep`` and
the time budget durable, and can park a run that waits for a person.

Step keys are deterministic: the same run replayed asks for the same keys in the same order.

| kind | key |
| --- | --- |
| model call | ``model:<step>`` |
| tool call | ``tool:<step>:<command index>:<tool handle>`` |
| memory callback | ``memory:<step>:<command index>`` |
| human input | ``human:<step>:<command index>`` |
| a person's word on an in-doubt call | ``indoubt:<step>:<command index>:<tool handle>`` |
| approval decision | ``approval:<step>:<command index>:<tool handle>`` (before the tool call's own step) |
| time budget | ``deadline:<n>`` (the n-th budget of the run) |
| a run's first state | ``start`` (when a durable engine builds it inside its workflow) |

Why the protocol has more than ``step``, ``now`` and ``sleep`` (each was seen to go wrong in a
prototype on DBOS):

- `RunPort.reserve`: a journal numbers steps in the order they are opened. The tool calls of one
  reply run concurrently, so without reserving they would open in whatever order their tasks
  happen to reach the port, and a replay could hand one call another's result. The loop
  reserves a batch's keys in command order before any of them awaits: each call's own, its
  capabilities' (`openmolt_core.hooks.Capability.reserve_steps`) and, where a port records
  starts and someone can be asked, the question about the call should a recovery find it in
  doubt (a reserved key never used is skipped).
- `RunPort.deadline`: the time budget starts when the run starts, not when a process picks it
  up again after a crash. The engine records the deadline once; ``now`` then reads a clock that
  every process shares (``openmolt-dbos``: the store's, not a machine's own wall clock, which may
  be minutes off), so the budget holds across a restart and across machines.
- `RunPort.replaying`: while a recovered run re-executes the code that led up to its last
  journaled step, the events it emits were delivered before the crash. They get
  ``replayed=True`` and are not delivered again unless `RunPort.deliver_replayed` says so.
  The events of a step's outcome (``llmOutput``, ``tool:response``, a failed call's ``error``)
  are emitted once the step's result is journaled, and only by the execution that ran it, so a
  listener never hears "done" for work a crash would do again; ``tool:call`` is emitted inside
  the step, as the call starts. None is emitted when the journal answers the step; each step
  reserves its block of sequence numbers beforehand, so the numbers of later events do not move.

A question nobody can answer now ends the loop with ``human_input_required`` on every port; a
durable engine waits inside its workflow and goes on with ``Agent.execute(state, answer=...)``.
An agent hands its durable runs to a `RunDriver`; the backend's whole contract is
`openmolt_core._durable`'s (re-exported here): the core never imports the engine.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.result import RunResult, RunState

__all__ = [
	"LOCAL_PORT",
	"DurableAgent",
	"ForwardingPort",
	"LocalPort",
	"RunDriver",
	"RunHandle",
	"RunPort",
	"call_age",
	"call_started",
	"journaled",
	"keeps_spent",
	"step_key",
]


def step_key(kind: str, step: int, index: int | None = None, handle: str | None = None) -> str:
	"""The deterministic key of one step (see the module docstring).

	Args:
		kind: ``model``, ``tool``, ``memory``, ``human``, ``approval`` or ``deadline``.
		step: The step number (1-based).
		index: The command's index in the reply, for tool, memory and human steps.
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

	@property
	def replaying(self) -> bool:
		"""True while a recovered run re-executes code its journal already answered."""
		...

	@property
	def deliver_replayed(self) -> bool:
		"""Whether events emitted while `replaying` are delivered (with ``replayed=True``)."""
		...

	def now(self) -> float:
		"""Seconds on the clock the time budget is measured on (see `deadline`)."""
		...

	async def deadline(self, seconds: float) -> float:
		"""The `now` reading at which a budget of ``seconds`` starting now runs out.

		A durable engine journals it, so a replayed run keeps the deadline of its first start.
		"""
		...

	async def sleep(self, seconds: float) -> None:
		"""Wait; a durable engine keeps the deadline across a restart."""
		...

	def reserve(self, keys: Sequence[str]) -> None:
		"""Open these steps now, in this order, before any of them runs (a concurrent batch).

		Args:
			keys: The keys the coming `step` calls will use, in command order.
		"""
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

	replaying: bool = False
	"""Never: nothing is journaled, so nothing is replayed."""

	deliver_replayed: bool = False
	"""Unused: nothing is replayed."""

	def now(self) -> float:
		"""`time.monotonic()`."""
		return time.monotonic()

	async def deadline(self, seconds: float) -> float:
		"""`time.monotonic()` plus ``seconds``."""
		return time.monotonic() + seconds

	async def sleep(self, seconds: float) -> None:
		"""`anyio.sleep`."""
		await anyio.sleep(seconds)

	def reserve(self, keys: Sequence[str]) -> None:
		"""Nothing to open: steps are not numbered in process."""

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


async def call_started(port: RunPort, key: str) -> bool:
	"""Record that a tool call starts; True if a previous execution had started it (in doubt).

	Through the port's optional ``async def call_started(key) -> bool``; a port without it (the
	in-process one) never finds one.

	Args:
		port: The run's port.
		key: The tool call's step key.
	"""
	started = getattr(port, "call_started", None)
	if started is None:
		return False
	return bool(await started(key))


async def call_age(port: RunPort, key: str) -> float | None:
	"""Seconds since a previous execution recorded the start of the tool call ``key``.

	Through the port's optional ``async def call_age(key) -> float | None``; None when the port
	has none, or does not know when this one began.

	Args:
		port: The run's port.
		key: The tool call's step key.
	"""
	age = getattr(port, "call_age", None)
	if age is None:
		return None
	found = await age(key)
	return None if found is None else float(found)


def keeps_spent(port: RunPort) -> bool:
	"""Whether the port keeps what a tool call's nested runs spent (its ``record_spent``).

	Through the port's optional ``record_spent(key, entry)`` and ``spent_before(key)``
	(`openmolt_core.capabilities.spend` reads and writes them). A port that forwards to another
	(`ForwardingPort`: an observer's, the redacting one) keeps what the port it wraps keeps; it
	says so with a ``keeps_spent()`` method of its own.
	"""
	asked = getattr(port, "keeps_spent", None)
	if callable(asked):
		return bool(asked())
	return getattr(port, "record_spent", None) is not None


def journaled(port: RunPort) -> bool:
	"""Whether a durable engine journals the run on this port (it records the starts of calls).

	Such a run may be executed again from its journal (after a crash, or in the worker that ran
	it once its lease is back), and its engine keeps each delivery to it single use. A port that
	forwards to another (`ForwardingPort`: an observer's, the redacting one) is journaled when
	the one it wraps is (its ``journaled()``).
	"""
	if isinstance(port, ForwardingPort):
		return port.journaled()
	return getattr(port, "call_started", None) is not None


class ForwardingPort:
	"""A port that hands everything to another port: the base for ports that wrap one.

	An observer's ``wrap_port`` (telemetry timing each step, a test recording keys) subclasses it
	and overrides what it adds to, usually `step`; every other member, including ones later
	versions of `RunPort` add, reaches the wrapped port unchanged.

	Args:
		port: The port to forward to.
	"""

	__slots__ = ("port",)

	def __init__(self, port: RunPort) -> None:
		self.port = port
		"""The wrapped port."""

	@property
	def replaying(self) -> bool:
		"""The wrapped port's `RunPort.replaying`."""
		return self.port.replaying

	@property
	def deliver_replayed(self) -> bool:
		"""The wrapped port's `RunPort.deliver_replayed`."""
		return self.port.deliver_replayed

	def now(self) -> float:
		"""The wrapped port's clock."""
		return self.port.now()

	async def deadline(self, seconds: float) -> float:
		"""The wrapped port's (journaled) deadline."""
		return await self.port.deadline(seconds)

	async def sleep(self, seconds: float) -> None:
		"""The wrapped port's (durable) sleep."""
		await self.port.sleep(seconds)

	def reserve(self, keys: Sequence[str]) -> None:
		"""Open the steps on the wrapped port."""
		self.port.reserve(keys)

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run the step on the wrapped port."""
		return await self.port.step(key, fn, encode=encode, decode=decode)

	async def call_started(self, key: str) -> bool:
		"""Record a tool call's start on the wrapped port (see `openmolt_core.capabilities.indoubt`)."""
		return await call_started(self.port, key)

	async def call_age(self, key: str) -> float | None:
		"""How long ago a tool call's start was recorded, on the wrapped port (`call_age`)."""
		return await call_age(self.port, key)

	async def spent_before(self, key: str) -> Mapping[str, Any] | None:
		"""What earlier executions of a tool call spent, on the wrapped port (None: not kept).

		What a call's nested runs spend is `openmolt_core.capabilities.spend`'s.
		"""
		read = getattr(self.port, "spent_before", None)
		return None if read is None else await read(key)

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		"""Record what a tool call spent so far, on the wrapped port (if it keeps it)."""
		write = getattr(self.port, "record_spent", None)
		if write is not None:
			await write(key, entry)

	def keeps_spent(self) -> bool:
		"""Whether the wrapped port keeps what a tool call spent (`keeps_spent`)."""
		return keeps_spent(self.port)

	def journaled(self) -> bool:
		"""Whether the wrapped port is journaled (`openmolt_core.durability.journaled`)."""
		return journaled(self.port)


# the backend the agent hands durable runs to ------------------------------------------


@dataclass(frozen=True, slots=True)
class RunHandle:
	"""A durable run started in the background (`openmolt_core.agent.Agent.start`).

	Args:
		run_id: The run's id (its workflow's id): pass it to ``om.result``, ``om.answer``,
			``openmolt runs``, from any process.
		backend: The durability backend that runs it.
	"""

	run_id: str
	backend: RunDriver

	async def result(self, *, wait: bool = True) -> RunResult | None:
		"""The run's result (``om.result(run_id)``).

		Args:
			wait: Wait until the run has ended (through any parked question); without, return at
				once: the result of an ended run, the ``human_input_required`` result of a parked
				one, or None while it runs.

		Raises:
			RunError: The run ended on an error (with its state).
		"""
		return await self.backend.result(self.run_id, wait=wait)


class DurableAgent(Protocol):
	"""What a durability backend needs of an agent (an `openmolt_core.agent.Agent`).

	A backend knows agents by name, checks that a recovered run's agent is the one that started
	it (``fingerprint``), and drives a run through the loop with its own port (``execute``).
	"""

	@property
	def name(self) -> str:
		"""The agent's name: its runs are recovered by it."""
		...

	def fingerprint(self) -> str:
		"""A hash of what a journaled run of the agent depends on."""
		...

	async def execute(
		self,
		state: RunState | Mapping[str, Any] | None,
		*,
		port: RunPort,
		answer: str | None = None,
		decisions: Sequence[Any] = (),
		input: Any = None,
		run_id: str | None = None,
	) -> RunResult:
		"""Run a state through the loop with the given port (`openmolt_core.agent.Agent.execute`).

		Args:
			state: The run's state; None to start afresh from ``input``.
			port: The port every step goes through.
			answer: The answer to the state's parked question, if any.
			decisions: What the gate that parked its calls read of a delivery (approval
				decisions), if any.
			input: The task input, when ``state`` is None.
			run_id: The new state's run id, when ``state`` is None.
		"""
		...


class RunDriver(Protocol):
	"""What the kernel hands durable runs to: the instance's durability backend.

	The whole backend (answers, parked runs, cancelling, its worker) is
	`openmolt_core._durable.DurabilityBackend`, which the assembly holds; an agent drives and
	starts its runs through these, and a `RunHandle` reads a result through them.
	"""

	async def drive(
		self,
		agent: DurableAgent,
		state: RunState,
		answer: str | None,
		decisions: Sequence[Any] = (),
	) -> RunResult:
		"""Run (or resume) a prepared state as a durable run whose id is ``state.run_id``.

		Returns when the run ends or parks on a question (``human_input_required``) or on
		tool calls a gate holds (``approval_required``, resumed with ``decisions``: what the
		gate read of ``agent.resume``'s delivery, for `Agent.execute`).
		"""
		...

	async def begin(self, agent: DurableAgent, state: RunState) -> None:
		"""Start a prepared new state as a durable run in the background; return once it is recorded."""
		...

	async def result(self, run_id: str, *, wait: bool = True) -> RunResult | None:
		"""The result of a run, from any process (None if it is still going and ``wait`` is off).

		Raises:
			RunError: The run ended on an error; the error carries its state.
		"""
		...


__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"completed_port": "openmolt_core.observe",
		**dict.fromkeys(("record_spent", "spent_before"), "openmolt_core.capabilities"),
		**dict.fromkeys(
			("DurabilityBackend", "DurabilityConfig", "PendingRun", "load_backend"),
			"openmolt_core._durable",
		),
	},
)
