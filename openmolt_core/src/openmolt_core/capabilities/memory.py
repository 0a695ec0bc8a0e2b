"""Memory beyond a run's state: what a new run starts from, and what an update is kept in.

The loop knows only the run's memories (``state.memory``: ``longTerm`` and ``shortTerm``, in the
first turn) and that ``updateMemory`` changes one. The rest is this feature's, reached through
`openmolt_core.capabilities.Memory`, which every agent of ``create_agent`` has:

- a new run starts from the agent's memory option (``create_agent(memory=...)``,
  `openmolt_core.options.AgentMemory`), and from the long-term memory its earlier runs wrote in
  this process, each end user's apart (`memory_owner`): `first_memory`;
- an update is kept for the agent's next runs (long-term memory outlives the run) and told to
  the option's ``on_update`` callback, journaled as the step ``memory:<step>:<index>``:
  `written`.

`Memory` calls this module when a run's agent has a memory option or writes its memory, so a
plain run does not load it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from openmolt_core._support.sync import call, takes
from openmolt_core.durability import step_key
from openmolt_core.prompt import dumps

if TYPE_CHECKING:
	from openmolt_core._execute import MemoryConfig, RunContext
	from openmolt_core.options import AgentMemory

__all__ = ["first_memory", "memory_owner", "memory_part", "written"]

log: logging.Logger = logging.getLogger("openmolt")


def memory_owner(memory: AgentMemory | MemoryConfig | None, user: str | None) -> str | None:
	"""Whose long-term memory a run for ``user`` reads and writes.

	The user's own; None (the agent's) for a run for no user, and for every run when the
	memory is ``shared`` (`openmolt_core.options.MemoryPart`).

	Args:
		memory: The agent's memory option.
		user: The run's end user (``state.user``).
	"""
	if user is None or not memory:
		return user
	from openmolt_core.options import AgentMemory, MemoryPart, parse_options

	part = parse_options(AgentMemory, memory, "memory").long_term
	return None if isinstance(part, MemoryPart) and part.shared else user


def memory_part(
	memory: AgentMemory | MemoryConfig | None, key: str
) -> tuple[str, Callable[[str], Any] | None]:
	"""The initial data and the update callback of ``long_term`` or ``short_term`` memory.

	Args:
		memory: The agent's memory option (`openmolt_core.options.AgentMemory`, or a dict of its
			fields in either spelling).
		key: ``long_term`` or ``short_term``.
	"""
	if not memory:
		return "", None
	from openmolt_core.options import AgentMemory, parse_options

	parsed = parse_options(AgentMemory, memory, "memory")
	part = getattr(parsed, key) or ""
	if isinstance(part, str):
		return part, None
	data = part.data or ""
	if not isinstance(data, str):
		data = dumps(data)
	return data, part.on_update


def first_memory(
	memory: AgentMemory | MemoryConfig | None, user: str | None, kept: dict[str | None, str] | None
) -> dict[str, str]:
	"""A new run's memory: the long-term memory it reads, and the option's short-term data.

	Long-term memory is the run's user's (the agent's for a run for no user, or when shared):
	one user's never reaches another's run. It is what the agent's last run for that owner
	wrote in this process, else the option's ``data`` for the agent's own, else empty.

	Args:
		memory: The agent's memory option.
		user: The run's end user.
		kept: The long-term memory the agent's runs wrote in this process, by owner.
	"""
	owner = memory_owner(memory, user)
	long_term = kept.get(owner) if kept else None
	if long_term is None:
		long_term = memory_part(memory, "long_term")[0] if owner is None else ""
	short_term, _ = memory_part(memory, "short_term")
	return {"longTerm": long_term, "shortTerm": short_term}


async def written(
	ctx: RunContext,
	key: str,
	index: int,
	kept: MutableMapping[str | None, str] | None,
	warn: Callable[[], bool],
) -> None:
	"""Keep an update of the run's ``key`` memory and tell the option's ``on_update`` callback.

	Long-term memory is kept in ``kept`` under its owner (`memory_owner`). The callback runs
	as the step ``memory:<step>:<index>``: at least once on a durable run (a crash inside it,
	before its step is journaled, runs it again on recovery, with the same ``update_id`` for a
	callback that takes it). A long-term callback without a ``user`` parameter of its own is
	not called for a user's run (it would keep that user's text as the agent's): ``warn()``
	says whether to log so (once per agent).

	Args:
		ctx: The run.
		key: ``longTerm`` or ``shortTerm``.
		index: The command's position among the step's commands.
		kept: The agent's long-term memory by owner; None when the run has no agent.
		warn: Whether to warn now that a user's update is not told to the callback.
	"""
	data = ctx.state.memory[key]
	user = ctx.state.user
	long_term = key == "longTerm"
	owner = memory_owner(ctx.memory, user) if long_term else None
	if long_term and kept is not None:
		kept[owner] = data  # long-term memory outlives the run
	_, callback = memory_part(ctx.memory, "long_term" if long_term else "short_term")
	if callback is None:
		return
	if long_term and owner is not None and not takes(callback, "user", kwargs=False):
		if warn():
			log.warning(
				"%s: long-term memory is each user's, and its on_update callback takes no "
				"'user' parameter: the memory of runs for a user is kept in this process "
				"only; give the callback a 'user' parameter to keep each user's, or make "
				"the memory shared (memory.long_term.shared)",
				ctx.agent,
			)
		return
	step = step_key("memory", ctx.step, index)
	extra: dict[str, Any] = {}
	if takes(callback, "update_id"):
		extra["update_id"] = f"{ctx.state.run_id}/{step}"
	if takes(callback, "user"):  # whose memory it is (the agent's: None)
		extra["user"] = owner if long_term else user
	found = callback

	async def tell() -> None:
		try:
			await call(found, data, **extra)  # a sync callback runs in a worker thread
		except Exception:
			log.exception("memory on_update callback failed; the run goes on")

	await ctx.port.step(step, tell)
