"""`DBOSPort`: the core's `RunPort` on DBOS, for one run (one workflow execution).

Each model call, tool call, memory callback and person's answer is a DBOS step named by its
deterministic key, so DBOS itself refuses a replay that asks for another step than the journal
holds (instead of handing back the wrong value). The tool calls of a concurrent batch reserve
their step ids in command order before any of them runs (``DBOS.reserve_step``). ``sleep`` is
DBOS's durable sleep: after a crash only the time left is waited. The time budget's deadline is a
step of its own, and ``now`` reads one clock every worker shares: the store's, as the workers'
leases are (`openmolt_dbos._workers.store_now`). Machines' wall clocks may be minutes apart: a
deadline written by one worker and read by another's clock ended a recovered run at once, or let
it run minutes long. The store is not asked at each step: each lease beat measures how far the
store's clock is from the worker's wall clock (`Heartbeat.offset`), and an execution reads by the
offset it found when its budget began (an offset under `_CLOSE` is taken as none), so a budget
holds across a crash and across machines. While replaying, ``now`` reads the journal instead: the
time the last step answered from it completed. DBOS stamps a step with the wall clock of the
worker that wrote it; each execution with a budget records its offset (`openmolt_dbos._workers.
CLOCKS`, only when it is not the one in effect: nothing for a new run on a right clock), and the
replay adds the offset of the execution that wrote the step, so the stamp reads on the store's
clock as that execution's own readings did. The run's original reading at that point came after
that step, so every "not yet" it decided (the only decisions that let it get further) is decided
the same way again, and the replay takes the path its journal records instead of ending early.

`replaying` compares the workflow's step counter with the last step the journal held when the
execution began: while it is behind, the run re-executes code whose effects (and events) happened
before the crash.

Cancelling: a step that runs the application's code or waits for a person is preemptible: a tool
call (a sub-agent's run with it), a guardrail's check (``guard:``: a guardrail agent makes its own
calls there), an approval, human-input or in-doubt question to the application's handler, a memory
callback, the capabilities' journaled decisions (``hook:``) and a capability's own steps. When the
run is cancelled (`DBOSBackend.cancel`, from any process) while one runs, DBOS stops it within
about a second (it polls the cancelled runs of its steps) and the run ends there, its result not
journaled (a handler's task is cancelled; a sync handler's thread sees
``openmolt_core.tools.cancelled()``); a step that would begin after the cancel never does. A
step that finished is journaled as any other, so a replay does not ask its handler again. The
steps of OpenMolt's own work (the run's start, a model call, a summary, a schedule's check) are
not: they act on nothing outside the run, and a preemptible step costs a task and a watcher.
What runs between steps (event handlers, observers) and those steps are stopped by the run's
own watch (`openmolt_dbos._runs.CancelWatch`), which cancels the workflow's task.

Spend: a sub-agent's run (a guardrail agent's) lives inside its call's step, and each of its
model calls is billed as it returns. The port keeps the call's spend so far as a workflow event of
the step (``openmolt_spent:<step id>:<key>``, written from the step by DBOS, which commits it
only while this execution owns the run); an execution that recovers the run after a crash reads
it once, as the step begins again, and the step's journaled result carries it, counted once
(`openmolt_core.capabilities.record_spent`).

Fencing: a step's body (the model call, the tool call) begins only while this worker's lease holds
(checked when the body begins, after DBOS looked the step up in the store, which also checks that
this execution still owns the run: `openmolt_dbos._ownership`), and its result goes to the journal
only if the lease still holds when the call ends. DBOS checks the ownership again in the
transaction that writes the step, so a write under way when the worker was fenced lands only if
no other worker has claimed the run since (it is then the journal's answer for the worker that
takes it over); once another execution owns the run, nothing of the old one is journaled.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from dbos import DBOS, StepOptions, StepReservation

# DBOS keeps the step counter on its context; there is no public accessor for workflow code.
from dbos._context import get_local_dbos_context

__all__ = ["SPENT_EVENT", "DBOSPort", "current_step_id", "in_step"]

log: logging.Logger = logging.getLogger("openmolt")


def current_step_id() -> int:
	"""The id of the last step the current workflow execution opened (-1 before any)."""
	ctx = get_local_dbos_context()
	return ctx.function_id if ctx is not None else -1


async def _stop_here() -> None:
	# Cancel the workflow's own task: DBOS leaves a cancelled execution pending, to be resumed.
	import asyncio

	task = asyncio.current_task()
	if task is not None:
		task.cancel()
	await asyncio.sleep(0)


_CLOSE = 1.0
"""Seconds: a worker's wall clock within this of the store's is read as it is (no offset, and no
row recording one): a budget is judged to about a second, and a new run on a right clock writes
nothing more than before."""


_PLAIN = frozenset({"start", "model", "compact", "schedule"})
"""The kinds of step of OpenMolt's own work (the run's start, a model call, a summary, a schedule's
check), the only ones not preemptible: every other runs the application's code or waits for a
person (a tool, a guardrail, a handler, a memory callback, a capability's decision or step)."""


SPENT_EVENT = "openmolt_spent"
"""The prefix of the workflow events that keep what a step's nested runs spent (`DBOSPort`)."""


def _spent_event(key: str) -> str | None:
	"""The event keeping the spend of the step running now (None outside a step)."""
	step = DBOS.step_id
	return None if step is None else f"{SPENT_EVENT}:{step}:{key}"


def in_step() -> bool:
	"""Whether the caller runs inside a DBOS step (whose function runs only live)."""
	ctx = get_local_dbos_context()
	return ctx is not None and ctx.is_step()


class DBOSPort:
	"""The durability port for one DBOS workflow execution.

	Args:
		journal_end: The highest step id the journal held when this execution began (-1 for a
			new run): steps up to it are answered from the journal.
		completed: When each journaled step completed (step id to wall-clock seconds).
		deliver_replayed: Deliver events emitted while replaying (marked ``replayed``).
		run_id: The run's id: tool call starts are recorded under it (`call_started`).
		starts: Records a tool call's start (run id, step key, workflow id), in a thread; True if
			it had started before, in this workflow or in another of the run (`call_started`).
		ages: Seconds since a tool call's start was recorded (run id, step key), in a thread;
			None when none is (`call_age`).
		lease: Whether this process's worker lease holds: a step never begins without it.
		offset: The store's clock less this worker's wall clock, as its last beat measured it
			(None: the wall clock is the store's, a port outside a worker).
		clocks: Records the offset this execution reads by, from the step it may write first
			(``(workflow id, step id, offset)``, in a thread), and returns the earlier
			executions' (`openmolt_dbos._workers.execution_clock`).
		fresh: The workflow was created a moment ago by this process: no execution came before.
	"""

	__slots__ = (
		"_ages",
		"_clocks",
		"_deadlines",
		"_earlier",
		"_fresh",
		"_ids",
		"_journal_end",
		"_lease",
		"_offset",
		"_offsets",
		"_reserved",
		"_run_id",
		"_starts",
		"_times",
		"deliver_replayed",
	)

	def __init__(
		self,
		*,
		journal_end: int,
		completed: dict[int, float] | None = None,
		deliver_replayed: bool = False,
		run_id: str = "",
		starts: Callable[[str, str, str], bool] | None = None,
		ages: Callable[[str, str], float | None] | None = None,
		lease: Callable[[], bool] | None = None,
		offset: Callable[[], float] | None = None,
		clocks: Callable[[str, int, float], list[tuple[int, float]]] | None = None,
		fresh: bool = False,
	) -> None:
		self._run_id = run_id
		self._starts = starts
		self._ages = ages
		self._lease = lease
		self._offsets = offset
		self._clocks = clocks
		self._fresh = fresh
		self._offset: float | None = None  # this execution's, once its budget began
		self._earlier: list[tuple[int, float]] = []  # earlier executions', from their steps on
		self._journal_end = journal_end
		ordered = sorted((completed or {}).items())
		self._ids = [i for i, _ in ordered]
		self._times = [t for _, t in ordered]
		self._reserved: dict[str, StepReservation] = {}
		self._deadlines = 0
		self.deliver_replayed = deliver_replayed

	@property
	def replaying(self) -> bool:
		"""Whether the run is still re-executing steps its journal holds.

		Never inside a step: a step's function runs only when the journal does not hold it.
		"""
		return self._journal_end >= 0 and not in_step() and current_step_id() < self._journal_end

	def now(self) -> float:
		"""Seconds on the store's clock (the one every worker shares); the journal's while replaying."""
		if self.replaying:
			step = current_step_id()
			at = bisect.bisect_right(self._ids, step)
			stamp = self._times[at - 1] if at else (self._times[0] if self._times else 0.0)
			return stamp + self._written_by(step)
		return time.time() + self._measured()

	def _measured(self) -> float:
		"""The offset this execution reads the store's clock by (`_CLOSE`: a small one is none)."""
		if self._offset is not None:
			return self._offset
		found = 0.0 if self._offsets is None else self._offsets()
		return found if abs(found) >= _CLOSE else 0.0

	def _written_by(self, step: int) -> float:
		"""The offset of the execution that wrote the journal's step ``step`` (0: none recorded)."""
		at = bisect.bisect_right(self._earlier, step, key=lambda row: row[0])
		return self._earlier[at - 1][1] if at else 0.0

	async def _settle(self) -> None:
		"""Fix this execution's offset, record it, and read the earlier executions' (once).

		A new run of this process on a right clock has nothing to record and nothing to read.
		"""
		if self._offset is not None:
			return
		offset = self._offset = self._measured()
		if self._clocks is None or (self._fresh and offset == 0.0):
			return
		import anyio

		wid = DBOS.workflow_id or ""
		first = self._journal_end + 1
		self._earlier = await anyio.to_thread.run_sync(self._clocks, wid, first, offset)

	async def deadline(self, seconds: float) -> float:
		"""The deadline of a budget starting now, on the store's clock, journaled (kept on replay)."""
		self._deadlines += 1
		await self._settle()  # before the step: a replay reads the journal by the offsets

		async def read() -> float:
			return self.now() + seconds

		value: float = await DBOS.run_step_async({"name": f"deadline:{self._deadlines}"}, read)
		return value

	async def sleep(self, seconds: float) -> None:
		"""DBOS's durable sleep: a replay waits only for the time left."""
		await DBOS.sleep_async(seconds)

	def reserve(self, keys: Sequence[str]) -> None:
		"""Take the step ids of a concurrent batch now, in command order."""
		for key in keys:
			self._reserved[key] = DBOS.reserve_step()

	async def call_started(self, key: str) -> bool:
		"""Record the start of the tool call ``key`` before it runs; True if it started before.

		A call started by an execution that died before journaling its result is in doubt
		(`openmolt_core.capabilities.indoubt`): its tool's policy decides what happens, not a blind re-run.
		The start is the run's, not the workflow's: a later segment of the run, or the retry of
		a segment that failed with the call under way, finds it too.
		"""
		if self._starts is None:
			return False
		import anyio

		wid = DBOS.workflow_id or ""
		return await anyio.to_thread.run_sync(self._starts, self._run_id or wid, key, wid)

	async def call_age(self, key: str) -> float | None:
		"""Seconds since the start of the tool call ``key`` was first recorded (store's clock).

		The start is the run's (`call_started`); None when none is recorded, or the port
		records no starts.
		"""
		if self._ages is None:
			return None
		import anyio

		wid = DBOS.workflow_id or ""
		return await anyio.to_thread.run_sync(self._ages, self._run_id or wid, key)

	async def spent_before(self, key: str) -> dict[str, Any] | None:
		"""What an earlier execution of the step running now (the call ``key``) spent.

		A sub-agent's run (a guardrail agent's) lives inside its call's step, and its model
		calls are billed as they are made; an execution that died before the step's result was
		journaled recorded its spend so far as a workflow event of that step (`record_spent`).
		The step is found by its position in the workflow (its DBOS step id), which the
		recovered execution gives it again; a step that opens later in the workflow with the
		same key has another id, and another event. A later segment of the run (another
		workflow) reads none: it goes on from the state its predecessor kept, which counted
		what a call cut off there had spent.

		Args:
			key: The call's step key.
		"""
		name = _spent_event(key)
		if name is None:
			return None
		found = await DBOS.get_event_async(DBOS.workflow_id or "", name, timeout_seconds=0)
		return dict(found) if isinstance(found, dict) else None

	async def record_spent(self, key: str, entry: Mapping[str, Any]) -> None:
		"""Record what the step running now (the call ``key``) spent so far, as its event.

		DBOS writes it as the step's workflow event, committed before the call goes on (a
		SIGKILL after it keeps it), and only while this execution owns the run: an execution
		that lost it stops here, as at a step. The record is bookkeeping: a store that refuses
		it is logged, and the call goes on (its result carries the spend when journaled).

		Args:
			key: The call's step key.
			entry: The spend so far, earlier executions' included (`openmolt_core.capabilities.spend.spent_entry`).
		"""
		name = _spent_event(key)
		if name is None:
			return
		from dbos._error import DBOSWorkflowConflictIDError

		try:
			await DBOS.set_event_async(name, dict(entry))
		except DBOSWorkflowConflictIDError:
			await _stop_here()  # another execution owns the run now
		except Exception as exc:
			said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
			log.warning(
				"durable: could not keep what the call %s of run %s spent so far (%s: %s); it "
				"is lost if the worker dies before the call's result is journaled",
				key,
				self._run_id or DBOS.workflow_id,
				type(exc).__name__,
				said[0] if said else "",
			)

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Run ``fn`` as the DBOS step ``key``, or return its journaled value."""

		async def body() -> Any:
			# The last moment before the call: DBOS has just read the store (and the owner).
			if self._lease is not None and not self._lease():
				await _stop_here()
			value = await fn()
			if self._lease is not None and not self._lease():
				await _stop_here()  # fenced during the call: its result is not journaled here
			return value if encode is None else encode(value)

		if self._lease is not None and not self._lease():
			await _stop_here()  # fenced: the run stops (pending) before it writes another step
		reservation = self._reserved.pop(key, None)
		# A step of the application's code is preemptible: once the run is cancelled (from any
		# process), DBOS stops the call or the handler under way (a sub-agent's or a guardrail
		# agent's calls with it, a handler waiting for a person) instead of letting it finish
		# and go on. OpenMolt's own steps have no effect outside the run (a cancelled run's
		# next step never begins), and a preemptible step costs a task and a watcher
		# (benchmarks/durable.py).
		options: StepOptions = {"name": key, "preemptible": key.partition(":")[0] not in _PLAIN}
		if reservation is not None:
			value = await reservation.run_async(options, body)
		else:
			value = await DBOS.run_step_async(options, body)
		return value if decode is None else decode(value)
