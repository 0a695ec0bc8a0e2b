"""Approvals as a capability: which tool calls wait for a decision.

``create_agent(requires_approval=...)`` (and ``OpenMolt(requires_approval=...)``) builds it when
the agent has approval rules (`openmolt_core.policy`). It attaches through
`ApprovalRules.describe_tools`: each tool a rule selects is marked with that rule (its listing
says ``"approval": true`` and the reply schema gives ``callTool`` a ``reason``), when the agent is
built and again when a run-time source changes its tools.

The gate that asks, parks and checks decisions (`openmolt_core._approve`) reads the mark; the
decisions are signed by `openmolt_core.approvals.Approvals`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from openmolt_core.hooks import AgentInfo, Capability

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.hooks import ToolRecord
	from openmolt_core.policy import ApprovalPolicy

__all__ = ["ApprovalRules"]


class ApprovalRules(Capability):
	"""An agent's approval rules, marking the tools whose calls wait for a decision.

	Args:
		policy: The rules (the instance's, then the agent's own).
	"""

	__slots__ = ("policy",)

	name = "approvals"
	in_fingerprint: ClassVar[bool] = False  # its marks are in the tool listing, not the journal

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
