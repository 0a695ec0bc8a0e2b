"""In-doubt tool calls: started, but their result never journaled, when their worker died.

Before a call whose policy is not ``retry`` runs, the port records its start
(`openmolt_core.durability.call_started`); a replay that finds it handles the call by the tool's
policy (``retry``, ``ask`` or ``fail``) instead of running it blindly again. The policies and their
defaults: docs/guides/durable.md.
"""

from __future__ import annotations

import json
from typing import Any

from openmolt_core.errors import OpenMoltError
from openmolt_core.tools import CallingRun, InDoubt, strictest

__all__ = [
	"IN_DOUBT",
	"WHY",
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


async def nesting_begins(agent: str, policies: list[InDoubt | None], link: CallingRun) -> None:
	"""Tell a durable calling run that a run of ``agent``, nested in its call, starts.

	A nested run stricter than the call's own policy is recorded by the caller, and one an
	earlier execution of the call had begun does not start again.

	Args:
		agent: The nested run's agent.
		policies: The in-doubt policies of its tools and capabilities (None: no say).
		link: The calling run.

	Raises:
		NestedRunInDoubt: An earlier execution of the call began a run here.
	"""
	policy = strictest([p for p in policies if p is not None])
	if policy == "retry" or link.nesting is None:
		return
	found = await link.nesting(policy)
	if found is not None:
		raise NestedRunInDoubt.of(agent, found)


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
