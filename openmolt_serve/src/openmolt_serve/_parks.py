"""The run a served conversation waits with, in rows every server on the store shares.

A run that parks (a question, an approval, an account) waits for its conversation's next
request: an AG-UI thread's ``resume`` (`openmolt_serve._agui_threads`), a chat's next message
(`openmolt_serve.chats`). With a run store or a durable store (``OpenMolt(run_store=...)``,
``OpenMolt(durability=...)``) the conversation has a row (`openmolt_serve._rows`: the run
store's file, the durable store's database on PostgreSQL, else a file in its files folder; one
per owner and conversation, the owner being whoever may answer: an AG-UI caller, a chat's end
user) naming the run, the step it waits at and the park (a random mark of its own), never the
run's words. The run's state is read from where the run is kept (the durable store, else the
run store) when a request comes, never from a copy: any server on the rows goes on with it,
after a restart too, and a run that another surface went on with or cancelled since waits for
nothing (`Found.state` is None). A row is believed only for a run of its own conversation (its
id begins as the surface makes that conversation's) acting for its owner (a chat's end user):
one that names another's run (edited by hand, copied) is logged and read as no row, so nobody
answers, resumes or gives up another conversation's run through it.

A request that goes on with the run takes the row first (`ParkRows.take`: one DELETE of the
row as it was read): of two requests at once, on two servers, one takes it. The run's own claim
(the run store's ``claim_parked``, the durable backend's one delivery per step) then guards the
step against the other surfaces (the run viewer, ``openmolt answer``).

A chat's messages are handled one at a time (`ParkRows.going`): a mark in the rows, held while
one message of the chat is handled (its run, its reply, the park it leaves), makes a message of
the same chat on another server wait for it, as the process's own lock makes the messages it
receives wait. The mark is a lease (`GOING_FOR`), renewed while it is held: a server that
stops without giving it back holds the chat that long at most. A waiting server times the lease
on its own monotonic clock, from when it read the mark as it is (each renewal writes a new one),
never by the holder's clock: servers whose clocks differ neither take a mark still renewed nor
wait past a lease for one left (a mark edited by hand to last for ever included).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.result import PARKED_STATUSES

if TYPE_CHECKING:
	from anyio.abc import TaskGroup

	from openmolt_core.agent import Agent
	from openmolt_core.result import RunState
	from openmolt_serve._rows import TaskRows

__all__ = ["GOING_FOR", "Found", "ParkRows", "kept_parked"]

log: logging.Logger = logging.getLogger("openmolt")

GOING_FOR = 30.0
"""Seconds a conversation's "a message is being handled" mark holds unless renewed (its holder
renews it every third of that): a server that stopped without giving it back holds the
conversation's next message on another server this long at most."""

_PRUNE_EVERY = 100
"""The rows drop their oldest parks once every this many parks (as the A2A tasks do)."""

_GOING = "(going)"
"""The owner of the going marks' rows: no end user or caller is named so."""


@dataclass(frozen=True)
class Found:
	"""A conversation's row, and the run it names as the store has it now."""

	run_id: str
	"""The run the row names."""
	steps: int
	"""The step it waited at when it parked."""
	row: bytes
	"""The row as it was read (`ParkRows.take` takes it)."""
	state: RunState | None
	"""The run's state where it is kept, if it still waits at that step (None: it went on, ended
	or was cancelled since, or the store has no record of it)."""
	mark: Mapping[str, Any] = field(default_factory=dict)
	"""What the surface kept in the row besides the run (`ParkRows.keep`'s ``more``)."""


class ParkRows:
	"""The runs a served surface's conversations wait with, in rows every server shares.

	A row is taken at its word only for a run of its conversation: its id begins as the
	surface makes the ids of that conversation's runs (``prefix``) and, where the owner is the
	person the run acts for (``users``: a chat's end user), the run acts for them. A row that
	names another's run (edited by hand, copied between owners) is logged and taken as no row:
	nobody answers, resumes or gives up another conversation's or person's run through it.

	Args:
		agent: The surface's agent (its instance's run store or durable store holds the runs).
		rows: The rows (`openmolt_serve._rows.task_rows`).
		most: The most parks the rows keep (the oldest beyond are forgotten).
		what: The surface, as its log lines name it (``AG-UI``, ``telegram``).
		prefix: How the ids of the runs of an owner's conversation begin, from the owner and
			the conversation's key (`openmolt_serve._launch.scope_prefix`).
		users: Whether the owner is the end user the run acts for (``RunState.user``).
	"""

	def __init__(
		self,
		agent: Agent,
		rows: TaskRows,
		*,
		most: int,
		what: str,
		prefix: Callable[[str, str], str],
		users: bool = False,
	) -> None:
		self.agent = agent
		self.rows = rows
		self.most = most
		self.what = what
		self.prefix = prefix
		self.users = users
		self.name = agent.name
		self._parks = 0

	def __repr__(self) -> str:
		return f"ParkRows({self.rows!r})"

	async def find(self, owner: str, key: str) -> Found | None:
		"""The owner's row of the conversation, and its run as the store has it now (or None).

		Args:
			owner: Who may go on with the run (an AG-UI caller, a chat's end user).
			key: The conversation (a ``threadId``, a chat's `openmolt_serve.chats.Incoming.key`).

		Raises:
			Exception: The rows or the store the run is kept in could not be read.
		"""
		row = await anyio.to_thread.run_sync(self.rows.get, owner, key)
		parsed = _parsed(row, self.what)
		if row is None or parsed is None or not self._theirs(owner, key, parsed[0]):
			return None
		run_id, steps, mark = parsed
		state = await self.parked(run_id, steps)
		if state is not None and self.users and state.user != owner:
			log.warning(
				"%s: a waiting run's row names the run %r, which acts for someone else; it is "
				"taken as waiting for nothing",
				self.what,
				run_id[:120],
			)
			return None
		return Found(run_id, steps, row, state, mark)

	def _theirs(self, owner: str, key: str, run_id: str) -> bool:
		"""Whether a row's run is one of its conversation's (said in the log when not)."""
		if run_id.startswith(self.prefix(owner, key)):
			return True
		log.warning(
			"%s: a waiting run's row names the run %r, not one of its conversation's; it is "
			"taken as waiting for nothing",
			self.what,
			run_id[:120],
		)
		return False

	async def take(self, owner: str, key: str, row: bytes) -> bool:
		"""Take a row as it was read, for one request: whether it was still kept so (one wins).

		Args:
			owner: Whose row it is.
			key: The conversation.
			row: The row as `find` read it (`Found.row`).

		Raises:
			Exception: The rows could not be written.
		"""
		return await anyio.to_thread.run_sync(self.rows.take, owner, key, row)

	async def take_any(self, owner: str, key: str) -> str | None:
		"""Take the conversation's row, whatever it names: the run it named (None: no row).

		Raises:
			Exception: The rows could not be read or written.
		"""
		row = await anyio.to_thread.run_sync(self.rows.get, owner, key)
		parsed = _parsed(row, self.what)
		if row is None or parsed is None or not self._theirs(owner, key, parsed[0]):
			return None
		taken = await anyio.to_thread.run_sync(self.rows.take, owner, key, row)
		return parsed[0] if taken else None

	async def keep(self, owner: str, key: str, state: RunState, **more: Any) -> bool:
		"""The conversation now waits with this parked run (a new park: a mark of its own).

		A failure to keep it is logged (the run's end is still told): whether it was kept.

		Args:
			owner: Who may go on with the run.
			key: The conversation.
			state: The run's state as it parked (its id and steps are kept, not its words).
			more: What the surface keeps beside them (JSON; never the run's words).
		"""
		row = {**more, "run": state.run_id, "steps": state.steps, "park": uuid.uuid4().hex}
		try:
			put = partial(self.rows.put, waits=True)  # a park waits: pruned last
			await anyio.to_thread.run_sync(put, owner, key, json.dumps(row).encode())
			self._parks += 1
			if self._parks % _PRUNE_EVERY == 0:  # a scan of the index: not at every park
				await anyio.to_thread.run_sync(self.rows.prune, self.most)
		except Exception as exc:
			log.warning(
				"%s: the parked run %s of %s was not kept (its answer will not find it): %s",
				self.what,
				state.run_id,
				self.name,
				exc,
			)
			return False
		return True

	async def parked(self, run_id: str, steps: int) -> RunState | None:
		"""The run's state where it is kept, if it is parked there still at ``steps``.

		Raises:
			Exception: The store could not be read.
		"""
		state = await kept_parked(self.agent, run_id)
		return state if state is not None and state.steps == steps else None

	@contextlib.asynccontextmanager
	async def going(self, key: str, tg: TaskGroup) -> AsyncIterator[None]:
		"""Hold the conversation's "a message is being handled" mark for the block.

		Waits while another server holds it (or this one, in another task), taking over a
		mark its holder left to lapse (`GOING_FOR`); renewed in ``tg`` while the block runs;
		given back at its end. Rows that fail are logged and the block runs without the mark
		(this process's own lock still orders its messages).

		Args:
			key: The conversation.
			tg: Where the renewal runs (the server's task group).
		"""
		token = uuid.uuid4().hex
		held = await self._hold(key, token)
		if held is None:
			yield
			return
		kept = [held]  # the mark as it is kept now (each renewal writes a new one)
		renewing = anyio.CancelScope()
		tg.start_soon(self._renew, key, token, kept, renewing, name=f"openmolt mark {key}")
		try:
			yield
		finally:
			renewing.cancel()
			with anyio.move_on_after(5, shield=True):
				try:
					await anyio.to_thread.run_sync(self.rows.take, _GOING, key, kept[0])
				except Exception as exc:  # it lapses by itself
					log.warning("%s: a chat's mark was not given back: %s", self.what, exc)

	async def _hold(self, key: str, token: str) -> bytes | None:
		"""Take the conversation's going mark once it is free: the mark (None: rows failed).

		Another server's mark lapses when this one has seen it unchanged for its lease
		(`_lease`), timed on this machine's monotonic clock: never by comparing the times the
		holder wrote with this machine's clock (a holder whose clock is behind would lose a mark
		it still renews; one ahead, or a mark edited to last for ever, would hold the chat
		for as long).
		"""
		pause = 0.05
		seen: tuple[bytes, float] | None = None  # the other mark as first read, and its end
		while True:
			mine = _mark(token)
			try:
				if await anyio.to_thread.run_sync(self.rows.add, _GOING, key, mine):
					return mine
				other = await anyio.to_thread.run_sync(self.rows.get, _GOING, key)
				if other is not None and (seen is None or seen[0] != other):
					# renewed (or new): its lease starts again, from now
					seen = (other, time.monotonic() + _lease(other))
				if other is not None and seen is not None and time.monotonic() >= seen[1]:
					log.warning(
						"%s: a lapsed mark of a chat of %s is taken over", self.what, self.name
					)
					await anyio.to_thread.run_sync(self.rows.take, _GOING, key, other)
					continue
			except Exception as exc:
				log.warning("%s: a chat's mark could not be taken: %s", self.what, exc)
				return None
			await anyio.sleep(pause)
			pause = min(pause * 2, 1.0)

	async def _renew(
		self, key: str, token: str, kept: list[bytes], scope: anyio.CancelScope
	) -> None:
		with scope:
			while True:
				await anyio.sleep(GOING_FOR / 3)
				fresh = _mark(token)
				# Shielded: a block that ends while the swap runs must still learn which mark is
				# kept, or it gives back the old one, which no longer matches, and the chat waits
				# for the new one to lapse.
				with anyio.CancelScope(shield=True):
					try:
						renewed = await anyio.to_thread.run_sync(
							self.rows.swap, _GOING, key, kept[0], fresh
						)
					except Exception as exc:  # tried again at the next renewal
						log.warning("%s: a chat's mark could not be renewed: %s", self.what, exc)
						continue
					if renewed:
						kept[0] = fresh
				if not renewed:
					log.warning("%s: a chat's mark lapsed and was taken over", self.what)
					return

	def close(self) -> None:
		"""Close the rows (the server does when it stops)."""
		self.rows.close()


def _mark(token: str) -> bytes:
	# "for": the lease, as long as the holder means to hold it unrenewed (what a waiter times);
	# "until": when it ends on the holder's clock (for a person reading the row).
	return json.dumps({"going": token, "for": GOING_FOR, "until": time.time() + GOING_FOR}).encode()


def _lease(row: bytes) -> float:
	"""How long a mark holds unchanged: its ``for``, at most `GOING_FOR` (0: not a mark of ours).

	A mark that names no lease (hand-made, or an older server's) holds until its ``until`` as
	this clock reads it, at most `GOING_FOR`.
	"""
	try:
		mark = json.loads(row)
	except ValueError:
		return 0.0  # not a mark of ours: nobody renews it
	if not isinstance(mark, dict):
		return 0.0
	lease, until = mark.get("for"), mark.get("until")
	if isinstance(lease, int | float) and not isinstance(lease, bool) and lease == lease:
		return min(max(float(lease), 0.0), GOING_FOR)
	if isinstance(until, int | float) and not isinstance(until, bool) and until == until:
		return min(max(until - time.time(), 0.0), GOING_FOR)
	return 0.0


def _parsed(row: bytes | None, what: str) -> tuple[str, int, dict[str, Any]] | None:
	"""The run, the steps and the rest a row names (None: no row, or not one of ours)."""
	if row is None:
		return None
	try:
		found = json.loads(row)
	except ValueError:
		log.warning("%s: a waiting run's row is not JSON; it is taken as waiting for nothing", what)
		return None
	run = found.pop("run", None) if isinstance(found, dict) else None
	steps = found.pop("steps", None) if isinstance(found, dict) else None
	if not isinstance(run, str) or not isinstance(steps, int) or isinstance(steps, bool):
		log.warning(
			"%s: not a waiting run's row (a run's id and its steps); it is taken as waiting for "
			"nothing",
			what,
		)
		return None
	found.pop("park", None)
	return run, steps, found


async def kept_parked(
	agent: Any, run_id: str, statuses: Collection[str] = PARKED_STATUSES
) -> RunState | None:
	"""The state of a run parked (with one of ``statuses``) where it is kept, or None.

	The durable store's (the engine keeps its runs), else the run store's: what a server that
	did not make the run (another behind the balancer, this one after a restart) goes on from.

	Args:
		agent: The run's agent.
		run_id: The run.
		statuses: The parked statuses taken (default: any).

	A record that cannot be read (edited by hand, damaged: not JSON, not a run's state) is
	logged and taken as no parked run: a conversation's next message is never held by it.

	Raises:
		Exception: The store could not be read.
	"""
	om = OpenMolt.of(agent)
	if om.durability is not None:
		try:
			result = await om.result(run_id, wait=False)
		except (RunError, ConfigurationError):  # ended on an error, cancelled, or unknown
			return None
		return result.state if result is not None and result.status in statuses else None
	if om.run_store is not None:
		try:
			stored = await om.run_store.run(run_id)
			if stored is not None and stored.status in statuses:
				return await om.run_store.state(run_id)
		except (ValueError, RecursionError) as exc:  # the record, not the store: it stays so
			log.error(
				"the parked run %r of %s cannot be read in the run store (%s): it is taken as "
				"waiting for nothing",
				run_id[:120],
				getattr(agent, "name", "?"),
				type(exc).__name__,
			)
	return None
