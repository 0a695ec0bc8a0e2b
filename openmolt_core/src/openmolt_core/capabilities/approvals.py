"""Approvals as capabilities: which tool calls wait for a decision, and the gate that decides.

``create_agent(requires_approval=...)`` (and ``OpenMolt(requires_approval=...)``) builds it when
the agent has approval rules (`openmolt_core.policy`). It attaches through
`ApprovalRules.describe_tools`: each tool a rule selects is marked with that rule (its listing
says ``"approval": true`` and the reply schema gives ``callTool`` a ``reason``), when the agent is
built and again when a run-time source changes its tools.

`ApprovalGate` is the last gate on a call (`Capability.gate_tool`): it asks the approver, uses
a decision delivered on resume, or parks the run (`openmolt_core._approve`), for a call whose tool
is marked and for one a capability hands it under a rule of its own (`openmolt_core.hooks.Approve`:
the taint policy's, so every agent ``create_agent`` builds has it, shared per instance). It parks
under a kind of its own (``approval``, `Capability.parks`), so the loop hands it such a run on
resume: it reads and checks the decisions (`Capability.receive`, `Capability.resume`) and lists
what waits (`Capability.requests`, ``agent.approval_requests``). The decisions are signed by
`openmolt_core.approvals.Approvals`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.hooks import AgentInfo, Capability

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core._execute import RunContext
	from openmolt_core.commands import CallTool
	from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
	from openmolt_core.hooks import Gated, Run, ToolRecord, ToolSpec
	from openmolt_core.policy import ApprovalPolicy

__all__ = ["ApprovalGate", "ApprovalRules"]


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


class ApprovalGate(Capability):
	"""The approvals gate: asks, uses delivered decisions, or parks (`openmolt_core._approve`)."""

	__slots__ = ()

	name = "approval-gate"
	in_fingerprint: ClassVar[bool] = False  # its steps are the journal's ``approval:`` keys
	parks: ClassVar[str] = "approval"  # `openmolt_core._approve.KIND`

	async def gate_tool(
		self, run: Run, step: Any, index: int, call: CallTool, tool: ToolSpec, rule: str | None
	) -> Gated:
		"""Decide whether a call that waits for approval runs (see `Capability.gate_tool`).

		Args:
			run: The run.
			step: The step's record (a parked call is added to its ``pending``).
			index: The call's index in the reply.
			call: The call, as the capabilities let it through.
			tool: Its tool's record.
			rule: The rule a capability makes the call wait under, or None.
		"""
		from openmolt_core import _approve  # here: a run that gates nothing never loads it

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return await _approve.gate(ctx, step, index, call, tool, rule)  # type: ignore[arg-type]

	def receive(
		self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None
	) -> list[ApprovalDecision]:
		"""Read ``agent.resume(state, decision=...)``: the decisions, their signatures checked.

		Args:
			run: The parked run.
			parked: ``state.pending``.
			given: One decision or several, objects or their dicts, or None.
			answer: Refused: the run waits for decisions.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.receive(ctx, given, answer)

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		"""Check each decision against the call it decides; the gate uses them as the step goes on.

		Args:
			run: The resumed run.
			parked: ``state.pending``: the parked step.
			given: The decisions `receive` read.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		await _approve.resume(ctx, parked, given)

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[ApprovalRequest]:
		"""The calls that wait for a decision, as requests signed by the instance's signer.

		Args:
			run: The parked run.
			parked: ``state.pending``: the parked step.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.pending_requests(ctx, parked)
