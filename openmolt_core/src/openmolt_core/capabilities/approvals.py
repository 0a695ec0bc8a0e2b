"""Approvals as capabilities: which tool calls wait for a decision, and the gate that decides.

``create_agent(requires_approval=...)`` (and ``OpenMolt(requires_approval=...)``) builds it when
the agent has approval rules (`openmolt_core.policy`). It attaches through
`ApprovalRules.describe_tools`: each tool a rule selects is marked with that rule (its listing
says ``"approval": true`` and the reply schema gives ``callTool`` a ``reason``), when the agent is
built and again when a run-time source changes its tools.

`ApprovalGate` is the last capability asked about a call (its `Capability.before_tool`): it asks
the approver, uses a decision delivered on resume, or parks the run (`openmolt_core._approve`),
for a call whose tool is marked and for one a capability holds under a rule of its own
(`openmolt_core.hooks.Approve`: the taint policy's, so every agent ``create_agent`` builds has it,
shared per instance). Its `Park` parks under a kind of its own (``approval``,
`Capability.parks`), so the loop hands it such a run on
resume: it reads and checks the decisions (`Capability.receive`, `Capability.resume`) and lists
what waits (`Capability.requests`, ``agent.approval_requests``). The decisions are signed by
`openmolt_core.approvals.Approvals`. The gate is defined in `openmolt_core.capabilities`, with
the other capabilities every agent has (a plain run loads no feature module), and re-exported
here (same object).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from openmolt_core.capabilities import ApprovalGate  # every agent has it: defined there
from openmolt_core.hooks import BUILTIN, PROCEED, AgentInfo, Approve, Capability

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool, ToolDefinition
	from openmolt_core._execute import RunContext
	from openmolt_core.hooks import Run, ToolDecision, ToolRecord, ToolSpec
	from openmolt_core.policy import ApprovalPolicy
	from openmolt_core.result import CallTool

__all__ = ["ApprovalGate", "ApprovalRules"]


class ApprovalRules(Capability):
	"""An agent's approval rules, marking the tools whose calls wait for a decision.

	Args:
		policy: The rules (the instance's, then the agent's own).
	"""

	__slots__ = ("policy",)

	name = "approvals"
	in_fingerprint: ClassVar[bool] = False  # its marks are in the tool listing, not the journal
	journal_decisions: ClassVar[bool] = False  # a pure function of the call's tool and the rules

	def __init__(self, policy: ApprovalPolicy) -> None:
		self.policy: ApprovalPolicy = policy

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		"""Mark each tool with the rule that makes its calls wait (None: it runs unasked).

		Args:
			agent: The agent being built.
			tools: Its bound tools.
		"""
		bound: Sequence[BoundTool] = tools  # type: ignore[assignment]  # the loop's records
		rule_for = self.policy.rule_for
		for t in bound:
			t.approval = rule_for(t.handle, t.tool)

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""Hold a call of a capability's built-in tool that a rule selects (``"*"``) for a decision.

		The built-in tools (``openmolt.<handle>``, `Capability.builtin_tools`) are bound apart
		from the agent's, so `describe_tools` never marks them. The core's own machinery reads
		what the run holds or changes which tools the model sees, and runs unasked; any other
		capability's built-in tool may do anything, so the rules that select it (``"*"``,
		``"openmolt"``) hold its call for the approvals gate, as they would any tool's.

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
		"""
		rule = self._builtin_rule(call, tool)
		return PROCEED if rule is None else Approve(rule)

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		"""The gate's ``approval`` step for a built-in tool's call a rule holds, in a batch.

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
		"""
		if self._builtin_rule(call, tool) is None:
			return ()
		from openmolt_core.durability import step_key

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return [step_key(ApprovalGate.parks, ctx.step, ctx.command_index, call.tool)]

	def builtin_approval(self, handle: str, tool: ToolDefinition) -> str | None:
		"""The rule that holds calls of a capability's built-in tool (the core's machinery: None).

		Args:
			handle: The tool's handle (``openmolt.<handle>``).
			tool: The tool.
		"""
		if not handle.startswith(_BUILTIN_PREFIX) or _machinery(tool):
			return None
		return self.policy.rule_for(handle, tool)

	def _builtin_rule(self, call: CallTool, tool: ToolSpec) -> str | None:
		"""The rule that holds a call of a capability's built-in tool, or None."""
		if tool.approval is not None:
			return None
		bound: BoundTool = tool  # type: ignore[assignment]  # the loop's record
		return self.builtin_approval(call.tool, bound.tool)


_BUILTIN_PREFIX = f"{BUILTIN}."


def _machinery(tool: object) -> bool:
	"""Whether a built-in tool is the core's own machinery (the reader, tool search's two)."""
	from openmolt_core.capabilities import ReadResultTool
	from openmolt_core.capabilities.toolsearch import LoadToolsTool, SearchToolsTool

	return isinstance(tool, (ReadResultTool, SearchToolsTool, LoadToolsTool))
