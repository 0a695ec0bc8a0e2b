"""What runs nested in a tool call spend, counted in the calling run: `NestedSpend`.

A tool call may nest runs: a sub-agent's (`openmolt_core.subagents`), one a tool's code starts
with ``parent=context.run``. Their model calls were billed, so their usage and cost count in the
calling run's ``usage`` and ``usage_by_model`` (and so in its ``max_tokens`` and ``max_cost``,
`openmolt_core.capabilities.budget`). `NestedSpend` (every agent ``create_agent`` builds has it)
does that through `openmolt_core.hooks.Capability.wrap_tool`:

- inside the call's journaled step, the nested runs' usage travels with the entry the journal
  keeps (``_usage``, ``_usage_by_model``: `spent_entry`), so a replay counts it too; the run
  reads the entry without them, once they are counted (`add_spent`);
- a durable port keeps the spend so far as the nested runs make their calls
  (`record_spent`), so what an execution cut off by a crash spent counts
  once, with the result of the execution that finishes the call (`spent_before`); the runs nested
  in those run on a port that keeps nothing, and hand their spend up to the top call
  (`passed_up`);
- a call cut off (a timeout, a cancel) counts what its nested runs handed up
  (`spend_cut_off`): no result will.

The guardrail agents' checks count their runs the same way (`openmolt_core.capabilities.safety`).
An `openmolt_core.agent.Agent` built by hand with sub-agent tools needs this capability
(``capabilities=[NestedSpend()]``: create_agent adds it). `NestedSpend` is defined in
`openmolt_core.capabilities`, with the other capabilities every agent has (a call that nests no
run loads this module only when its run's spend is kept: a durable run), and re-exported here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._chain import add_by_model, spend
from openmolt_core.capabilities import (  # every agent has it: defined there
	_SPENT,
	NestedSpend,
	record_spent,
	spent_before,
)
from openmolt_core.durability import keeps_spent
from openmolt_core.llm import Usage

if TYPE_CHECKING:
	from openmolt_core.hooks import Run, ToolStep, ToolWork
	from openmolt_core.result import RunState
	from openmolt_core.tools import CallingRun

__all__ = [
	"NestedSpend",
	"add_spent",
	"kept_step",
	"passed_up",
	"read_spent",
	"spend_cut_off",
	"spent_entry",
	"summed",
]

_BY_MODEL = "_usage_by_model"
"""The key of a journaled entry (a tool's result, a guardrail's verdict) that carries a nested
run's usage per model (``_usage``: in total), so a replay counts it too."""


async def kept_step(run: Run, step: ToolStep) -> dict[str, Any]:
	"""`NestedSpend`'s step for a run whose spend is kept against a crash (see the module).

	Args:
		run: The calling run (a durable port's, or one whose caller keeps its spend).
		step: Runs the call's journaled step.
	"""
	state = run.state

	async def inside(calling: CallingRun, work: ToolWork) -> dict[str, Any]:
		# What an earlier execution of this call spent before a crash stopped it (a durable
		# port keeps it as the call's nested runs spend): it counts once, with this result.
		key = calling.call
		keeps = keeps_spent(run.port)
		before = await spent_before(run.port, key) if keeps else {}
		earlier = read_spent(before)

		def so_far(
			usage: Usage | None = None, by_model: Mapping[str, Usage] | None = None
		) -> dict[str, Any]:
			# Earlier executions', this call's ended nested runs', and a running one's usage.
			running = (usage, by_model or {})
			return spent_entry(*summed(earlier, (calling.usage, calling.usage_by_model), running))

		if keeps:

			async def spending(usage: Usage, by_model: Mapping[str, Usage]) -> None:
				await record_spent(run.port, key, so_far(usage, by_model))

			calling.spending = spending
		else:  # a nested run's port: its caller keeps it
			calling.spending = passed_up(run.link, state, calling)
		try:
			entry = await work()
		except anyio.get_cancelled_exc_class():
			if before:
				add_spent(state, before)
			spend_cut_off(state, calling)  # a nested run's calls were billed all the same
			raise
		# A sub-agent's usage travels with the journaled result, so a replay counts it too.
		spent = so_far()
		return {**entry, **spent} if spent else entry

	entry = await step(inside)
	if _SPENT in entry:  # what its nested runs spent (an in-doubt call's earlier ones too)
		return add_spent(state, entry)
	return entry


def spend_cut_off(state: RunState, run: CallingRun | None) -> None:
	"""Count what the nested runs of a call cut off (a timeout, a cancel) spent, in ``state``.

	Their calls were billed all the same: a nested run hands its usage up to ``run`` as it is
	cut off, or fails with an error that carries no result (a configuration error:
	`openmolt_core.agent.Agent`), and the call that started it (a tool call, a guardrail
	agent's check) adds it to its run's here, since no result will.

	Args:
		state: The calling run's state.
		run: The calling run the nested runs were handed (None: none was).
	"""
	if run is not None and run.usage.calls:
		spend(state, run.usage, run.usage_by_model)


def spent_entry(usage: Usage, by_model: Mapping[str, Usage]) -> dict[str, Any]:
	"""A nested run's usage as fields of the journaled entry its step returns (none if unused)."""
	if not usage.calls:
		return {}
	per_model = {_BY_MODEL: {k: u.to_dict() for k, u in by_model.items()}} if by_model else {}
	return {_SPENT: usage.to_dict(), **per_model}


def read_spent(entry: Mapping[str, Any]) -> tuple[Usage | None, dict[str, Usage]]:
	"""The usage a journaled entry carries (`spent_entry`), in total and per model (None: none)."""
	total = entry.get(_SPENT)
	if total is None:
		return None, {}
	per_model = entry.get(_BY_MODEL) or {}
	return Usage.from_dict(total), {k: Usage.from_dict(v) for k, v in per_model.items()}


def summed(
	*parts: tuple[Usage | None, Mapping[str, Usage]],
) -> tuple[Usage, dict[str, Usage]]:
	"""Usages and their parts per model, added up (one that made no call adds nothing)."""
	usage = Usage()
	by_model: dict[str, Usage] = {}
	for part, part_by_model in parts:
		if part is not None and part.calls:
			usage.add(part)
			add_by_model(by_model, part_by_model)
	return usage, by_model


def passed_up(
	link: CallingRun | None, state: RunState, run: CallingRun
) -> Callable[[Usage, Mapping[str, Usage]], Awaitable[None]] | None:
	"""For a call whose run's port keeps no spend (a nested run's): its caller's keeping, if any.

	A durable port keeps a tool call's spend as its nested runs make model calls
	(`record_spent`); the runs nested in those run on a port that keeps
	nothing. A call they make hands its running spend up through their own ``link``, as this
	run's spend so far: its state's, the call's ended nested runs' (``run``) and the running
	one's, so a crash deep down loses nothing the top call kept.

	Args:
		link: How the run making the call was called (None: a top run).
		state: That run's state.
		run: The calling run handed to the call's nested runs.
	"""
	up = None if link is None else link.spending
	if up is None:
		return None

	async def spending(usage: Usage, by_model: Mapping[str, Usage]) -> None:
		mine = (state.usage, state.usage_by_model)
		await up(*summed(mine, (run.usage, run.usage_by_model), (usage, by_model)))

	return spending


def add_spent(state: RunState, entry: Mapping[str, Any]) -> dict[str, Any]:
	"""Count the usage a journaled entry carries (`spent_entry`) in the run; the entry without it.

	An entry journaled before the usage per model was (only ``_usage``) counts in the total only.
	"""
	out = dict(entry)
	total = out.pop(_SPENT, None)
	per_model = out.pop(_BY_MODEL, None) or {}
	if total is not None:
		by_model = {k: Usage.from_dict(v) for k, v in per_model.items()}
		spend(state, Usage.from_dict(total), by_model)
	return out
