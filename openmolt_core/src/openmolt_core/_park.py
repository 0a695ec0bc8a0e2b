"""A step that parks, and a resume that goes on with it: the kernel's one parking primitive.

A step parks when one of its tool calls cannot run yet (a capability's `openmolt_core.hooks.Park`,
a gate's park): the calls before it keep their results, and ``state.pending`` keeps the step as plain
JSON (its commands, one result per command, null for those still to run, the texts of ignored
commands) with what the parked calls wait for. On resume, `restore_step` rebuilds the step, checks
every command still to run again in the resuming agent's context (its tools may have changed), and
the step goes on from the first parked call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from openmolt_core.commands import CallTool
from openmolt_core.errors import ConfigurationError, OpenMoltError
from openmolt_core.hooks import PARKED_BY_CAPABILITY

if TYPE_CHECKING:
	from collections.abc import Callable

	from openmolt_core.commands import Command
	from openmolt_core.errors import RunError
	from openmolt_core.hooks import Capability, Hooks, Run
	from openmolt_core.result import RunState

__all__ = [
	"RESUMING",
	"deciding",
	"hand_over",
	"nested_alone",
	"parked_by",
	"parked_step",
	"parker",
	"refusal",
	"restore_step",
	"resuming_once",
	"saved_commands",
	"waits_for",
	"with_given",
]

CAPABILITY = PARKED_BY_CAPABILITY
"""``state.pending["kind"]`` of a step parked by a capability."""

RESUMING: set[tuple[str, int]] = set()
"""The parked steps (run id, steps) a resume of this process is going on from, durable runs aside."""


def parked_step(
	step: int,
	commands: Sequence[Command],
	results: Sequence[dict[str, Any] | None],
	ignored: Sequence[str],
	kind: str,
	calls: list[Any],
) -> dict[str, Any]:
	"""``state.pending`` for a parked step: plain JSON, to resume in any process.

	Args:
		step: The parked step's number.
		commands: The step's commands.
		results: One per command: its result entry, None for those still to run.
		ignored: The texts of commands the parser ignored in the reply.
		kind: What the calls wait for (``approval``, ``capability``).
		calls: One JSON entry per parked call, each with its command ``index``.
	"""
	return {
		"kind": kind,
		"step": step,
		"calls": sorted(calls, key=lambda c: c["index"]),
		"commands": [c.model_dump(mode="json", by_alias=True) for c in commands],
		"results": list(results),
		"ignored": list(ignored),
	}


def saved_commands(pending: Mapping[str, Any]) -> list[Command]:
	"""The commands of a parked step, read back from ``state.pending``.

	Raises:
		ConfigurationError: The saved step is damaged.
	"""
	from pydantic import TypeAdapter
	from pydantic import ValidationError as PydanticError

	from openmolt_core.commands import Command

	adapter: TypeAdapter[Command] = TypeAdapter(Command)
	try:
		return [adapter.validate_python(c) for c in pending["commands"]]
	except (KeyError, TypeError, PydanticError) as exc:
		raise ConfigurationError(
			f"resume: the saved state's pending step is damaged ({type(exc).__name__}); it "
			"cannot be resumed"
		) from None


def restore_step(
	pending: Mapping[str, Any], checker: Callable[[int, Command], Command | str]
) -> tuple[list[Command], list[dict[str, Any] | None], int, list[str]]:
	"""Rebuild a parked step; every command still to run is checked again. Nothing runs yet.

	Args:
		pending: ``state.pending``.
		checker: The resumed run's check (`openmolt_core._execute.check`).

	Returns:
		The step's commands, their results (None: still to run), the index to go on from (the
		first parked call), and the texts of ignored commands.

	Raises:
		ConfigurationError: The saved step is damaged.
	"""
	commands = saved_commands(pending)
	results = list(pending.get("results") or [None] * len(commands))
	if len(results) != len(commands):
		raise ConfigurationError(
			"resume: the saved state's pending step is damaged (one result per command "
			"expected); it cannot be resumed"
		)
	for index, command in enumerate(commands):
		if results[index] is not None:
			continue
		# The reason is checked at parse time only: this agent's reply schema may have none.
		reason = ""
		if isinstance(command, CallTool):
			reason = command.reason
			command = CallTool(type="callTool", tool=command.tool, input=command.input)
		checked = checker(index, command)
		if isinstance(checked, str):
			kind = (
				{"tool": command.tool}
				if isinstance(command, CallTool)
				else {"command": command.type}
			)
			results[index] = {**kind, "ok": False, "error": f"not run on resume: {checked}"}
		elif isinstance(checked, CallTool):
			commands[index] = checked.model_copy(update={"reason": reason})
		else:
			commands[index] = checked
	calls = pending.get("calls") or []
	for info in calls:
		at = info.get("index") if isinstance(info, Mapping) else None
		if not isinstance(at, int) or not 0 <= at < len(commands):
			raise ConfigurationError(
				"resume: the saved state's pending step is damaged (a parked call has no valid "
				"index); it cannot be resumed"
			)
	start = min((c["index"] for c in calls), default=len(commands))
	return commands, results, start, list(pending.get("ignored") or [])


def refusal(capability: str, hook: str, exc: BaseException) -> str:
	"""What a resume says when a capability's hook refused it (raised): which, why, what next.

	Args:
		capability: The capability's name.
		hook: The hook that raised (``receive``, ``resume``, ``requests``).
		exc: What it raised.
	"""
	return (
		f"resume: capability {capability!r} refused what was delivered (its {hook} hook raised "
		f"{type(exc).__name__}: {exc}); the run did not go on and its state is kept, still "
		"parked (error.result.state): resume it again with what the capability asks for"
	)


def with_given(
	state: RunState, kind: str, answer: str | None, decision: object, given: object
) -> RunState:
	"""The parked state with what ``resume(given=...)`` delivers to the capability that parked.

	``given`` None: the capability needs nothing delivered (its ``before_tool`` asks again).
	"""
	if kind != PARKED_BY_CAPABILITY:
		raise ConfigurationError(
			"resume: given=... is for a run a capability parked; this run waits for "
			+ ("an answer (answer=...)" if kind == "human_input" else "decisions (decision=...)")
		)
	if answer is not None or decision is not None:
		raise ConfigurationError(
			f"resume: this run waits for what capability {parked_by(state.pending or {})} "
			"asked for (state.pending['calls'] says what): give given=... (or nothing), not an "
			"answer or a decision"
		)
	try:  # what a journal or a store can keep: no NaN, no lone surrogate, not nested too deep
		text = json.dumps(given, allow_nan=False, ensure_ascii=False)
		# Delivered as it comes back from JSON (string keys, lists): a recovered run's
		# capability reads the same as this one.
		kept = json.loads(text.encode())
	except (TypeError, ValueError, RecursionError) as exc:
		why = "nested too deep" if isinstance(exc, RecursionError) else exc
		raise ConfigurationError(f"resume: given must be JSON ({why})") from None
	state.pending = {**(state.pending or {}), "given": kept}
	return state


def parked_by(pending: Mapping[str, Any]) -> str:
	"""The capabilities whose `Park` decisions parked a step (``'ledger'``, for a message)."""
	calls = pending.get("calls") or ()
	return ", ".join(sorted({repr(c.get("by")) for c in calls if isinstance(c, Mapping)}))


def parker(hooks: Hooks, pending: Mapping[str, Any], agent: str) -> Capability | None:
	"""The capability whose gate parked a step under its own kind (`Capability.parks`).

	None for what the loop parks itself: a question, calls `Park` decisions parked.

	Raises:
		ConfigurationError: A gate parked the step, and the agent has no capability of its kind.
	"""
	kind = pending.get("kind")
	if kind == PARKED_BY_CAPABILITY or "calls" not in pending:
		return None
	owner = hooks.by_kind.get(str(kind))
	if owner is None:
		raise ConfigurationError(
			f"this run's calls wait under kind {kind!r}, and agent {agent!r} has no capability "
			"that parks so; create the agent with it to go on"
		)
	return owner


async def hand_over(
	run: Run,
	hooks: Hooks,
	pending: Mapping[str, Any],
	owner: Capability | None,
	given: Any,
	refused: Callable[[RunState, Callable[..., Any], Exception], RunError],
) -> None:
	"""Hand what is delivered to the capabilities that parked a step; nothing runs.

	A step a gate parked under its own kind (`Capability.parks`) goes to that capability
	(``owner``), with ``given``; calls parked by `Park` decisions, each to its capability (of
	``hooks``), with what ``resume(given=...)`` saved in the state.

	Raises:
		OpenMoltError: A capability refused what was delivered (a decision for another call).
		RunError: A capability's ``resume`` raised anything else (``refused`` makes it).
	"""

	async def resume(cap: Capability, parked: Mapping[str, Any], delivered: Any) -> None:
		try:
			await cap.resume(run, parked, delivered)
		except OpenMoltError:
			raise
		except Exception as exc:
			raise refused(run.state, cap.resume, exc) from exc

	if owner is not None:
		return await resume(owner, pending, given)
	for info in pending.get("calls") or ():
		by = str(info.get("by") or "")
		cap = hooks.by_name.get(by)
		if cap is None:
			raise ConfigurationError(
				f"resume: capability {by!r} parked this run, and agent {run.agent!r} has no "
				"capability of that name; create the agent with it to go on"
			)
		await resume(cap, dict(info.get("request") or {}), pending.get("given"))


def waits_for(
	state: RunState, answer: str | None, decision: object, given: object, *, left_out: bool
) -> tuple[str, str | None]:
	"""What a parked run waits for, and the answer the loop delivers (``resume``'s arguments).

	``given`` (unless ``left_out``) is saved in ``state.pending`` for the capability that parked.

	Raises:
		ConfigurationError: The state waits for nothing, or ``given`` does not fit it.
	"""
	kind = (state.pending or {}).get("kind")
	if kind is None:
		raise ConfigurationError(
			"resume: this state waits for no answer or decision (its run is not "
			"human_input_required or approval_required); use run(history=state) to go on"
		)
	if kind == PARKED_BY_CAPABILITY or not left_out:
		with_given(state, kind, answer, decision, None if left_out else given)
		answer = None
	return str(kind), answer


@contextmanager
def resuming_once(state: RunState, method: str = "resume") -> Iterator[None]:
	"""Hold the parked step of ``state`` while a resume of this process goes on from it.

	Args:
		state: The parked state.
		method: What goes on from it, for the error (``resume``, ``run(history=...)``).

	Raises:
		ConfigurationError: Another resume of the same parked step is going on.
	"""
	parked = (state.run_id, state.steps)
	if parked in RESUMING:
		raise ConfigurationError(
			f"{method}: the run {state.run_id} is being resumed already from the step it "
			"waits at (two resumes at once would run its calls twice); wait for that "
			"resume's result"
		)
	RESUMING.add(parked)
	try:
		yield
	finally:
		RESUMING.discard(parked)


def deciding(hooks: Hooks, pending: Mapping[str, Any], agent: str) -> Capability:
	"""The capability whose gate parked a step and decides its calls (``approval_requests``).

	Raises:
		ConfigurationError: The step waits for no decisions (a question, a capability's `Park`).
	"""
	owner = parker(hooks, pending, agent)
	if owner is None and pending.get("kind") == PARKED_BY_CAPABILITY:
		raise ConfigurationError(
			f"approval_requests: this run waits for what capability {parked_by(pending)} "
			"asked for (state.pending['calls'] says what), not for approval decisions; "
			"resume it with agent.resume(state, given=...)"
		)
	if owner is None:
		raise ConfigurationError(
			"approval_requests: this state waits for no approval (its run is not approval_required)"
		)
	return owner


def nested_alone(state: RunState, name: str, method: str) -> str:
	"""Why a nested run's state (`RunState.caller`) does not go on without its caller."""
	caller = state.caller or {}
	run_id = caller.get("run_id")
	agent = caller.get("agent")
	by = f" (agent {agent!r}, in its step {caller.get('call')})" if agent else ""
	again = f"run agent {agent!r} again" if agent else "run its agent again"
	return (
		f"{method}: run {state.run_id} of agent {name!r} is nested in run {run_id}{by} and goes "
		"on only inside it: on its own it would run without its caller's guardrails, budget, "
		"taint and event handlers, and its result would reach no one (the step it lived in "
		f"has ended). Go on with run {run_id} instead: resume it if it waits, or {again}; "
		f"for agent {name!r} not to park there, give it an on_human_input_request or an "
		"on_approval_request (its own or its caller's) that answers at once"
	)
