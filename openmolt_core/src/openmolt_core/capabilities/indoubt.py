"""In-doubt tool calls: started, but their result never journaled, when their worker died.

Before a call whose policy is not ``retry`` runs, the port records its start
(`openmolt_core.durability.call_started`); a replay that finds it handles the call by the tool's
policy (``retry``, ``ask`` or ``fail``) instead of running it blindly again. The policies and their
defaults: docs/guides/durable.md.

`InDoubtCalls` does it, on every run whose port records the starts of calls (a durable run: the
agent adds it then, `openmolt_core.agent.Instance.durable_capabilities`) and on the runs its
calls nest (it hands itself down):

- `Capability.reserve_steps`: a person's word on a call of a concurrent batch
  (``indoubt:<step>:<command index>:<tool handle>``), numbered in command order;
- `Capability.wrap_tool`, inside the call's journaled step: a recorded start answers the step
  with the in-doubt marker instead of running the call; a run the call nests is recorded as it
  starts when it is stricter than the call (``<key>#nested:<n>``, `nesting_begins`), and one an
  earlier execution began does not start again (`NestedRunInDoubt`, caught here);
- `Capability.after_tool`: the marker, from the journal, becomes what the model reads: ``fail``
  an entry and an ``in_doubt`` error; ``ask`` asks a person (`openmolt_core._execute.RunContext.ask_person`),
  and without an answer the step parks on the question.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.durability import call_age, call_started, journaled, step_key
from openmolt_core.errors import OpenMoltError
from openmolt_core.hooks import Capability
from openmolt_core.tools import CallingRun, InDoubt, strictest

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core.commands import CallTool
	from openmolt_core.durability import RunPort
	from openmolt_core.hooks import Run, ToolSpec, ToolStep, ToolWork

__all__ = [
	"IN_DOUBT",
	"WHY",
	"InDoubtCalls",
	"NestedRunInDoubt",
	"in_doubt_entry",
	"key_outlived",
	"nested_doubt",
	"nesting_begins",
	"question",
]

IN_DOUBT = "_in_doubt"
"""The key of a tool step's journaled result when its call was in doubt."""


def question(tool: str, tool_input: dict[str, Any], why: str | None = None) -> str:
	"""The question a person answers about an in-doubt call (``why``: why it is not retried)."""
	from openmolt_core._support.masking import masked_excerpt

	shown = masked_excerpt(json.dumps(tool_input, ensure_ascii=False, default=str), 300, more="...")
	return (
		f"In doubt: the run stopped while the call {tool} {shown} was under way (its worker "
		"died, or that part of the run failed), before its result was recorded. "
		f"{why + ' ' if why else ''}Did it take effect? Answer what happened (for example "
		"'yes, it went through' or 'no, run it again'); the agent reads your answer."
	)


WHY = "_in_doubt_why"
"""The key of an in-doubt step's journaled result that says why a person is asked."""


def key_outlived(age: float | None, lifetime: float) -> str | None:
	"""Why a keyed call in doubt must not be repeated with its key; None while the key holds.

	A call whose idempotency key the service kept would be deduplicated: it is retried. One
	that began longer ago than the service keeps keys (``idempotency_key_lifetime``), or
	whose start time is unknown, could take effect twice: a person is asked instead.

	Args:
		age: Seconds since the call's first start was recorded (None: unknown).
		lifetime: Seconds the service keeps an idempotency key.
	"""
	if age is not None and age < lifetime:
		return None
	keeps = _span(lifetime)
	since = "at a time not recorded" if age is None else f"{_span(age)} ago"
	return (
		f"It is not repeated by itself: it began {since}, and the service keeps an idempotency "
		f"key for {keeps} only, so the same key could make it again."
	)


def _span(seconds: float) -> str:
	"""Seconds as a person reads them (``26 h``, ``45 min``, ``30 s``)."""
	if seconds >= 7200:
		return f"{seconds / 3600:.0f} h"
	if seconds >= 120:
		return f"{seconds / 60:.0f} min"
	return f"{seconds:.0f} s"


def in_doubt_entry(tool: str, how: str) -> dict[str, Any]:
	"""The result entry the model reads for an in-doubt call."""
	return {
		"tool": tool,
		"ok": False,
		"error": (
			"in doubt: the run stopped while this call was under way (its worker died, or that "
			"part of the run failed), before its result was recorded, so it may or may not have "
			f"taken effect; {how}"
		),
	}


class NestedRunInDoubt(OpenMoltError):
	"""A run nested in a tool call does not start: an earlier execution of the call began one.

	Raised by ``agent.run(..., parent=context.run)`` (`nesting_begins`); the call it was raised
	in is in doubt under ``policy`` (`nested_doubt`).

	Args:
		message: What happened (`of` words it).
		agent: The nested run's agent.
		policy: The strictest in-doubt policy of what the nested run would make again.
	"""

	def __init__(self, message: str, *, agent: str, policy: InDoubt) -> None:
		super().__init__(message)
		self.agent = agent
		self.policy: InDoubt = policy

	@classmethod
	def of(cls, agent: str, policy: InDoubt) -> NestedRunInDoubt:
		"""The error for a run of ``agent`` an earlier execution began, worded for a person.

		Args:
			agent: The nested run's agent.
			policy: The strictest in-doubt policy of what the nested run would make again.
		"""
		return cls(
			f"in doubt: an earlier execution of this tool call began a run of agent {agent!r} "
			"before it was cut off (its worker died), so that run may or may not have taken "
			f"effect; it is not run again (its tools' in-doubt policy is {policy!r})",
			agent=agent,
			policy=policy,
		)


def nesting_begins(
	port: RunPort, key: str, policy: InDoubt
) -> Callable[[str, Sequence[InDoubt | None]], Awaitable[None]]:
	"""What a run nested in the call ``key`` awaits as it starts (`CallingRun.nesting`).

	A nested run stricter than the call's own policy is recorded by the caller as it starts
	(``<key>#nested:<n>``), and one an earlier execution of the call had begun does not start
	again.

	Args:
		port: The calling run's port (it records starts).
		key: The call's step key.
		policy: The call's own in-doubt policy.
	"""
	count = 0

	async def nesting(agent: str, policies: Sequence[InDoubt | None]) -> None:
		"""Raises `NestedRunInDoubt` when an earlier execution of the call began this run."""
		nonlocal count
		nested = strictest([p for p in policies if p is not None])
		if nested == "retry" or strictest((policy, nested)) == policy:  # its start covers it
			return
		count += 1
		if await call_started(port, f"{key}#nested:{count}"):
			raise NestedRunInDoubt.of(agent, nested)

	return nesting


def nested_doubt(exc: BaseException) -> InDoubt | None:
	"""The policy of a `NestedRunInDoubt` a tool raised (alone, as its cause, or in a group)."""
	seen = 0
	found: BaseException | None = exc
	while found is not None and seen < 16:
		if isinstance(found, NestedRunInDoubt):
			return found.policy
		if isinstance(found, BaseExceptionGroup):
			inner = found.subgroup(NestedRunInDoubt)
			if inner is not None:
				return nested_doubt(inner.exceptions[0])
		found = found.__cause__ or found.__context__
		seen += 1
	return None


def _nested_in_doubt(exc: BaseException) -> bool:
	"""Whether a tool raised a `NestedRunInDoubt` (`CallingRun.passes`)."""
	return nested_doubt(exc) is not None


class InDoubtCalls(Capability):
	"""Handles the tool calls a durable run finds in doubt after a crash (see the module).

	The agent adds it to a run whose port records the starts of calls; the runs their calls
	nest get it handed down.
	"""

	__slots__ = ()

	name = "in-doubt-calls"
	in_fingerprint: ClassVar[bool] = False  # a run's port brings it, not the agent

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		"""A person's word on the call, should a recovery find it in doubt (if someone can answer).

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
		"""
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		if ctx.human is None or not journaled(ctx.port):
			return ()
		return [step_key("indoubt", ctx.step, ctx.command_index, call.tool)]

	async def wrap_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		"""The call's step, answered with the in-doubt marker when an earlier execution began it.

		Args:
			run: The calling run.
			call: The call.
			tool: The tool's record.
			step: Runs the call's journaled step.
		"""
		return await step(functools.partial(self._inside, run, call, tool))

	async def _inside(
		self, run: Run, call: CallTool, tool: ToolSpec, calling: CallingRun, work: ToolWork
	) -> dict[str, Any]:
		records = journaled(run.port)
		policy: InDoubt = tool.in_doubt if records else "retry"
		# A call retried in doubt for its idempotency key is retried only while the service keeps
		# the key: its start is recorded too, and one begun longer ago asks a person.
		lifetime = tool.key_lifetime if records and policy == "retry" else None
		key = calling.call
		if policy != "retry" or lifetime is not None:
			if await call_started(run.port, key):  # started before a crash: in doubt
				if lifetime is None:
					return {IN_DOUBT: policy, "tool": call.tool}
				outlived = key_outlived(await call_age(run.port, key), lifetime)
				if outlived is not None:
					return {IN_DOUBT: "ask", WHY: outlived, "tool": call.tool}
		link = run.link
		if link is not None:  # runs nested deeper are recorded by the top call
			calling.nesting = link.nesting
		elif records:
			calling.nesting = nesting_begins(run.port, key, policy)
		calling.passes = _nested_in_doubt
		calling.capabilities = (*calling.capabilities, self)  # its nested runs handle theirs
		try:
			return await work()
		except Exception as exc:
			doubt = nested_doubt(exc)
			if doubt is None:
				raise
			return {IN_DOUBT: doubt, "tool": call.tool}  # it was not run again

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any]:
		"""What the model reads of a call found in doubt: by its policy (``fail``, ``ask``).

		Either way an ``in_doubt`` error names the call (its slot's number): a viewer shows the
		call in doubt, not as run, failed, or still running since its first execution.

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
			entry: The call's entry (the in-doubt marker, from the journal).
		"""
		if IN_DOUBT not in entry:
			return entry
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		handle = call.tool
		key = step_key("tool", ctx.step, ctx.command_index, handle)
		slot = ctx.call_events + 2  # the call's error event
		if entry[IN_DOUBT] == "fail":
			said = in_doubt_entry(
				handle, "check whether it did (with a read tool) before calling again"
			)
			await ctx.error("in_doubt", said["error"], seq=slot, call=key)
			return said
		# ``WHY``: why a call that is retried in doubt was not (its idempotency key may be
		# forgotten).
		text = question(handle, call.input, entry.get(WHY))
		said = in_doubt_entry(handle, "a person is asked whether it did")
		await ctx.error("in_doubt", said["error"], seq=slot, call=key)
		asked = step_key("indoubt", ctx.step, ctx.command_index, handle)
		answer = await ctx.ask_person(asked, text, " on an in-doubt call")
		if answer is None:  # the step parks on the question
			return in_doubt_entry(handle, "a person is asked whether it did; their answer follows")
		return {
			"tool": handle,
			"ok": True,
			"result": f"in doubt after a crash; a person who checked says: {answer['result']}",
		}
