"""A step that parks, and a resume that goes on with it: the kernel's one parking primitive.

A step parks when one of its tool calls cannot run yet (a capability's `openmolt_core.hooks.Park`,
a gate's park): the calls before it keep their results, and ``state.pending`` keeps the step as plain
JSON (its commands, one result per command, null for those still to run, the texts of ignored
commands) with what the parked calls wait for. On resume, `restore_step` rebuilds the step, checks
every command still to run again in the resuming agent's context (its tools may have changed), and
the step goes on from the first parked call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.commands import CallTool
from openmolt_core.errors import ConfigurationError
from openmolt_core.hooks import PARKED_BY_CAPABILITY

if TYPE_CHECKING:
	from collections.abc import Callable

	from openmolt_core.commands import Command

__all__ = ["parked_step", "refusal", "restore_step", "saved_commands"]

CAPABILITY = PARKED_BY_CAPABILITY
"""``state.pending["kind"]`` of a step parked by a capability."""


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
