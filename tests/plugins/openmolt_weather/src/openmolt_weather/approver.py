"""A third-party capability shipped by a plugin: the ``acme-approver`` entry point.

It parks every call of the tools it guards until someone approves it (``agent.resume(state,
given="approve")``), keeps what was approved in the run's state, and adds a tool that tells the
model the policy. The tests use it through its entry point only (``capabilities=["acme-approver"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openmolt_core import hookimpl
from openmolt_core.commands import CallTool
from openmolt_core.hooks import (
	AgentInfo,
	Capability,
	Park,
	Proceed,
	Refuse,
	Run,
	ToolDecision,
	ToolSpec,
)
from openmolt_core.plugins import CapabilityRegistrar


class Approver(Capability):
	"""Calls of ``guard`` wait for a person; a denial is read by the model."""

	name = "approver"

	def __init__(self, guard: Sequence[str] = ()) -> None:
		self.guard = frozenset(guard)

	def tools(self, agent: AgentInfo) -> Sequence[Callable[..., Any]]:
		guarded = sorted(self.guard)

		def policy() -> str:
			"""Which tools wait for a person's approval."""
			return "approval needed for: " + ", ".join(guarded)

		return [policy]

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		if tool.handle not in self.guard:
			return Proceed()
		key = f"{run.step}:{tool.handle}:{sorted(call.input.items())}"
		mine = self.state(run)
		if key in mine.get("approved", []):
			return Proceed()
		if key in mine.get("denied", []):
			return Refuse("a person denied this call")
		return Park(f"{tool.handle} waits for approval", {"key": key, "input": dict(call.input)})

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		mine = self.state(run)
		verdict = "approved" if given == "approve" else "denied"
		mine.setdefault(verdict, []).append(parked["key"])


@hookimpl
def register_capabilities(register: CapabilityRegistrar) -> None:
	register(Approver, name="acme-approver")
