"""Tool calls that wait for an end user to connect an account: the kernel's side of it.

A tool bound per end user (``integrations=[{"integration": "gmail", "account": "user"}]``) has a
`openmolt_core._binding.UserAccount`. Before each of its calls the loop asks it (`screen`, a
journaled step ``account:<step>:<index>:<handle>``, so a replay decides the same) whether the
run's user has connected the account with the scopes the call needs. When not, the call does not
fail: it parks like a call waiting for approval, with an authorization request (integration,
user, scopes, consent URL) in ``state.pending`` (`pending_state`), and the run ends with status
``authorization_required``. Once the user has connected (the consent URL's callback stored the
token: `openmolt_core.accounts`), ``agent.resume(state)`` rebuilds the step (`restore`) and runs
it on from the parked calls, in any process. What a request holds is plain JSON, never a secret.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.durability import step_key
from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.commands import Command
	from openmolt_core.durability import RunPort
	from openmolt_core.result import RunState

__all__ = ["KIND", "add", "message", "pending_state", "restore", "screen"]

KIND = "authorization"
"""``state.pending["kind"]`` of a run waiting for an end user's account."""


async def screen(
	port: RunPort, state: RunState, step: int, index: int, bound: BoundTool
) -> dict[str, Any] | None:
	"""Ask the tool's account whether the run's user can make this call now (journaled).

	Args:
		port: The run's port.
		state: The run's state (its user and run id).
		step: The step.
		index: The call's index in the reply.
		bound: The tool; its ``account`` is set.

	Returns:
		None when the call may run; else ``{"error": ...}`` or ``{"authorize": request}``.
	"""
	account = bound.account
	if account is None:
		return None

	async def ask() -> dict[str, Any]:
		found = await account.authorize(state.user, bound, state.run_id)
		return {"ok": True} if found is None else dict(found)

	outcome: dict[str, Any] = await port.step(step_key("account", step, index, bound.handle), ask)
	return None if outcome.get("ok") else outcome


def add(
	pending: dict[str, Any] | None, index: int, call: str, request: Mapping[str, Any]
) -> dict[str, Any]:
	"""The step's pending authorizations with one more parked call.

	Args:
		pending: The step's record of what it waits for (None: nothing yet).
		index: The call's index in the reply.
		call: The call's step key.
		request: The authorization request (integration, user, scopes, url...).
	"""
	out: dict[str, Any] = pending if pending is not None else {"kind": KIND, "calls": []}
	out["calls"].append({**request, "index": index, "call": call})
	return out


def message(pending: Mapping[str, Any]) -> str:
	"""What the parked run's result says: who must connect what, and where."""
	parts = []
	for request in sorted(pending.get("calls", []), key=lambda c: c["index"]):
		who, what = request.get("user"), request.get("integration")
		parts.append(
			f"{request.get('tool')} waits for {who} to connect {what}: {request.get('url')}"
		)
	return (
		"; ".join(parts) + "; once connected, go on with agent.resume(state) "
		"(openmolt_core.accounts.authorization_requests(state) lists them)"
	)


def pending_state(
	step: int,
	pending: Mapping[str, Any],
	commands: Sequence[Command],
	results: Sequence[dict[str, Any] | None],
	ignored: Sequence[str],
) -> dict[str, Any]:
	"""``state.pending`` for a step parked on authorizations: plain JSON, to resume anywhere.

	Args:
		step: The parked step.
		pending: The step's record of the parked calls (`add`).
		commands: Every command of the step.
		results: One result per command (None for those still to run).
		ignored: The texts of commands the parser ignored in the reply.
	"""
	return {
		"kind": KIND,
		"step": step,
		"calls": sorted(pending.get("calls", []), key=lambda c: c["index"]),
		"commands": [c.model_dump(mode="json", by_alias=True) for c in commands],
		"results": list(results),
		"ignored": list(ignored),
	}


def restore(
	pending: Mapping[str, Any], tools: Container[str]
) -> tuple[list[Command], list[dict[str, Any] | None], int, list[str]]:
	"""Rebuild a step parked on authorizations; nothing runs yet.

	Args:
		pending: ``state.pending``.
		tools: The handles the resuming agent has: a call to another is not run.

	Returns:
		The commands, their results, the index to run on from, and the ignored texts.

	Raises:
		ConfigurationError: The saved step is damaged.
	"""
	from pydantic import TypeAdapter
	from pydantic import ValidationError as PydanticError

	from openmolt_core.commands import CallTool, Command

	adapter: TypeAdapter[Command] = TypeAdapter(Command)
	try:
		commands = [adapter.validate_python(c) for c in pending["commands"]]
		results: list[dict[str, Any] | None] = list(pending.get("results") or [])
		start = min(int(c["index"]) for c in pending["calls"])
	except (KeyError, TypeError, ValueError, PydanticError) as exc:
		raise ConfigurationError(
			f"resume: the saved state's pending step is damaged ({type(exc).__name__}); it "
			"cannot be resumed"
		) from None
	if len(results) != len(commands) or not 0 <= start < len(commands):
		raise ConfigurationError(
			"resume: the saved state's pending step is damaged (its results do not match its "
			"commands); it cannot be resumed"
		)
	for index, command in enumerate(commands):
		if results[index] is None and isinstance(command, CallTool) and command.tool not in tools:
			results[index] = {
				"tool": command.tool,
				"ok": False,
				"error": "not run on resume: this agent has no such tool",
			}
	return commands, results, start, [str(t) for t in pending.get("ignored") or ()]
