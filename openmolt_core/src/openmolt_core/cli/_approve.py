"""Approvals on the command line: ask on the terminal, refuse without one, or let a flag decide.

``--approvals ask`` (the default) asks a person on the terminal for each call that waits for
approval; without a terminal the run parks (status ``approval_required``, recorded in the run
store), to be decided in the viewer (``openmolt ui AGENT_FILE``) or by ``agent.resume``. ``--approvals approve``
and ``--approvals deny`` decide every call without asking (for scripts and CI). An agent file's
own ``on_approval_request`` is kept unless the flag says otherwise.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Literal

import anyio

from openmolt_core._support.jsonsafe import UnsafeJson, loads
from openmolt_core.cli._progress import active
from openmolt_core.cli._terminal import printable

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.approvals import ApprovalDecision, ApprovalHandler, ApprovalRequest

__all__ = ["MODES", "approve_on_terminal", "install"]

Mode = Literal["ask", "approve", "deny"]
MODES: tuple[Mode, ...] = ("ask", "approve", "deny")
"""The values of ``--approvals``."""

_WHERE = (
	"the run parks: decide it in the viewer (`openmolt ui AGENT_FILE`), or run the command on a "
	"terminal, or with --approvals approve"
)
_NO_TERMINAL = f"no terminal to decide this call; {_WHERE}"


_lock: anyio.Lock | None = None


async def _line(prompt: str) -> str | None:
	sys.stderr.write(prompt)
	sys.stderr.flush()
	answer: str = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
	return answer.rstrip("\n") if answer else None


async def approve_on_terminal(request: ApprovalRequest) -> ApprovalDecision:
	"""Ask a person on the terminal; use as ``on_approval_request`` in a Python agent file.

	The call (tool, the agent's reason, the input with secrets redacted) goes to stderr and the
	answer is read from stdin: ``y`` approves, ``n`` denies (with an optional reason), ``e``
	approves with an input typed as JSON. Calls that wait at the same time are asked one by one.
	Without a terminal on stdin (or when stdin closes before a decision), the run parks with
	status ``approval_required``, to be decided in ``openmolt ui AGENT_FILE``.

	Raises:
		ApprovalUnavailable: Nobody can decide on this terminal: the run parks.
	"""
	from openmolt_core.approvals import ApprovalUnavailable

	global _lock
	if not sys.stdin or not sys.stdin.isatty():
		raise ApprovalUnavailable(_NO_TERMINAL)
	if _lock is None:
		_lock = anyio.Lock()
	async with _lock:
		progress = active()
		if progress is not None:
			progress.done()
		text = json.dumps(request.input, ensure_ascii=False, indent=2)
		# The reason and the input are the model's: a control sequence in them must not rewrite
		# what the person reads before deciding.
		sys.stderr.write(
			printable(
				f"\n{request.agent} wants to call {request.tool} (it needs approval: "
				f"{request.rule})\n  reason: {request.reason or '(none given)'}\n  input: {text}\n"
			)
		)
		while True:
			answer = await _line("Approve? [y]es, [n]o, [e]dit the input: ")
			if answer is None:
				raise ApprovalUnavailable(f"stdin closed before a decision; {_WHERE}")
			choice = answer.strip().lower()[:1]
			if choice == "y":
				return request.approve(reason="approved on the terminal")
			if choice == "n":
				why = await _line("Why (the agent reads it; Enter for none): ")
				return request.deny(
					why.strip() if why and why.strip() else "denied on the terminal"
				)
			if choice == "e":
				typed = await _line("The whole input, as JSON on one line: ")
				try:  # as every approval edit is read: a key twice, NaN, a lone surrogate refused
					edited = loads(typed or "")
				except json.JSONDecodeError as exc:
					sys.stderr.write(f"  not JSON ({exc.msg}); try again\n")
					continue
				except UnsafeJson as exc:
					sys.stderr.write(printable(f"  {exc}; try again\n"))
					continue
				if not isinstance(edited, dict):
					sys.stderr.write("  the input must be a JSON object; try again\n")
					continue
				return request.approve(input=edited, reason="edited on the terminal")


def _fixed(mode: Mode) -> ApprovalHandler:
	def decide(request: ApprovalRequest) -> ApprovalDecision:
		if mode == "approve":
			return request.approve(reason="approved by --approvals approve")
		return request.deny("denied by the operator's --approvals deny: do not retry this call")

	return decide


def install(agent: Agent, mode: Mode, *, explicit: bool) -> None:
	"""Set how the command decides the agent's approvals.

	Args:
		agent: The agent to run.
		mode: ``ask``, ``approve`` or ``deny``.
		explicit: Whether the flag was given (it then replaces the file's own handler).
	"""
	if mode == "ask":
		if agent.on_approval_request is None or explicit:
			agent.on_approval_request = approve_on_terminal
		return
	agent.on_approval_request = _fixed(mode)
