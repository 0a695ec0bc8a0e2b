"""Where an AG-UI endpoint keeps the run each thread waits with: in memory, or in shared rows.

A run that parks (a question, an approval, an account) waits for the next request on its thread.
Without a run store or a durable store the endpoint keeps it in its memory (`Thread.parked`): a
restart forgets it, and a ``resume`` that reaches another server behind the same address finds
nothing there (``409``). With one (``OpenMolt(run_store=...)``, ``OpenMolt(durability=...)``)
the thread has a row (`openmolt_serve._rows`: the run store's file, the durable store's database
on PostgreSQL, else a file in its files folder; one per caller and thread) naming the run, the
step it waits at and the park (a random mark of its own). The run's state is read from where the
run is kept (the durable store, else the run store) when a request comes, never from a copy: any
server on the rows resumes it, after a restart too, and a run that another surface went on with
or cancelled since waits for nothing.

A resume takes the thread's row first (`ThreadParks.take`: one DELETE of the row as it was
read): of two resumes of one interrupt at once, on two servers, one takes it and goes on, and
the other is told the interrupt was answered. The run's own claim (the run store's
``claim_parked``, the durable backend's one delivery per step) then guards the step against the
other surfaces (the run viewer, ``openmolt answer``). The rows are `openmolt_serve._parks`'s,
which a chat channel keeps its parked runs in too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from openmolt_core.openmolt import OpenMolt
from openmolt_serve._launch import cancel_if_parked
from openmolt_serve._parks import ParkRows

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.result import RunState
	from openmolt_serve._rows import TaskRows

__all__ = ["Thread", "ThreadParks", "Waiting"]

log: logging.Logger = logging.getLogger("openmolt")


@dataclass
class Thread:
	"""A thread as this process serves it: its turn, and (without rows) the run it waits with."""

	turn: anyio.Semaphore = field(default_factory=lambda: anyio.Semaphore(1))
	"""Held from a request's start to its run's end (a client that leaves stops the run; the
	turn comes back once it has stopped)."""
	parked: RunState | None = None
	"""The run the thread waits with, when the endpoint keeps it in memory (no rows)."""

	@property
	def busy(self) -> bool:
		"""Whether a run of the thread is going on (or a request waits to start one)."""
		return self.turn.value == 0


@dataclass(frozen=True)
class Waiting:
	"""A run a thread waits with, as a request found it."""

	state: RunState
	"""The parked run's state (from memory, or read where the run is kept)."""
	row: bytes | None = None
	"""The thread's row as it was read (None: kept in memory); `ThreadParks.take` takes it."""


class ThreadParks:
	"""The runs an endpoint's threads wait with: in its memory, or in rows every server shares.

	Args:
		agent: The endpoint's agent (its instance's run store or durable store holds the runs).
		rows: The threads' rows (`openmolt_serve._rows.task_rows` of kind ``agui``; None: in
			memory only).
		most: The most threads the rows keep (the oldest parks beyond are forgotten).
		prefix: How the ids of a caller's thread's runs begin, from the caller and the
			``threadId``: a row naming another run is taken as no row (`ParkRows`).
	"""

	def __init__(
		self,
		agent: Agent,
		rows: TaskRows | None,
		*,
		most: int,
		prefix: Callable[[str, str], str],
	) -> None:
		self.agent = agent
		self.rows = rows
		self.shared = (
			None if rows is None else ParkRows(agent, rows, most=most, what="AG-UI", prefix=prefix)
		)
		"""The rows' parks (`openmolt_serve._parks`), or None: in memory only."""
		self.name = agent.name

	async def find(self, thread: Thread, caller: str, thread_id: str) -> Waiting | None:
		"""The run the caller's thread waits with, or None when it waits for nothing.

		Args:
			thread: The thread as this process serves it (its memory, without rows).
			caller: Whose thread it is (the row's owner: two callers' threads never meet).
			thread_id: The thread's ``threadId``.

		Raises:
			Exception: The rows or the store the run is kept in could not be read.
		"""
		if self.shared is None:
			return None if thread.parked is None else Waiting(thread.parked)
		found = await self.shared.find(caller, thread_id)
		if found is None or found.state is None:
			return None
		return Waiting(found.state, found.row)

	async def take(self, thread: Thread, caller: str, thread_id: str, waiting: Waiting) -> bool:
		"""Take the run a resume found for that resume: whether it still waited (one taker wins).

		Args:
			thread: The thread as this process serves it (its memory, without rows).
			caller: Whose thread it is (the row's owner: two callers' threads never meet).
			thread_id: The thread's ``threadId``.
			waiting: What the resume found (`find`).

		Raises:
			Exception: The rows could not be written.
		"""
		if self.shared is None or waiting.row is None:
			if thread.parked is not waiting.state:
				return False
			thread.parked = None
			return True
		return await self.shared.take(caller, thread_id, waiting.row)

	async def give_up(self, thread: Thread, caller: str, thread_id: str) -> str | None:
		"""Give up the run the thread waits with, if any (a new message came on it): its id.

		Taken from where the thread keeps it (memory, the rows); marked ``cancelled`` in the
		run store; cancelled in the durable store if it waits there (the engine's cancel), so
		nothing resumes it later (a late ``resume``, the run viewer, ``openmolt answer``).
		Failures are logged: the new message runs anyway.

		Args:
			thread: The thread as this process serves it (its memory, without rows).
			caller: Whose thread it is (the row's owner: two callers' threads never meet).
			thread_id: The thread's ``threadId``.
		"""
		try:
			run_id = await self._taken(thread, caller, thread_id)
		except Exception as exc:
			log.warning("AG-UI: a waiting run of %s could not be given up: %s", self.name, exc)
			return None
		if run_id is None:
			return None
		log.info("AG-UI run %s of %s given up: a new message on its thread", run_id, self.name)
		om = OpenMolt.of(self.agent)
		if om.run_store is not None:
			try:
				await om.run_store.cancel_parked(
					run_id, "given up: a new message came on its AG-UI thread"
				)
			except Exception as exc:
				log.warning(
					"AG-UI: could not cancel the parked run %s in the store: %s", run_id, exc
				)
		try:
			await cancel_if_parked(om, run_id)  # on a question, an approval or an account
		except Exception as exc:
			log.warning("AG-UI: could not cancel the durable run %s: %s", run_id, exc)
		return run_id

	async def _taken(self, thread: Thread, caller: str, thread_id: str) -> str | None:
		if self.shared is None:
			parked, thread.parked = thread.parked, None
			return None if parked is None else parked.run_id
		return await self.shared.take_any(caller, thread_id)

	async def keep(self, thread: Thread, caller: str, thread_id: str, state: RunState) -> None:
		"""The thread now waits with this parked run (a new park: its row gets a mark of its own).

		A failure to keep it is logged (the run's end is still told to its client); a resume
		of it is then refused (``409``).

		Args:
			thread: The thread as this process serves it (its memory, without rows).
			caller: Whose thread it is (the row's owner: two callers' threads never meet).
			thread_id: The thread's ``threadId``.
			state: The run's state as it parked (its id and steps are kept, not its words).
		"""
		if self.shared is None:
			thread.parked = state
			return
		await self.shared.keep(caller, thread_id, state)

	def close(self) -> None:
		"""Close the rows (the server does when it stops)."""
		if self.shared is not None:
			self.shared.close()
