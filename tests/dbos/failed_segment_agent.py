"""The process of `test_failed_segment`: delivers the approval of a parked run's [pay, check].

    python failed_segment_agent.py STORE PAID SAVED first|again

``first`` runs the agent until it parks on approval of [pay, check], saves the parked state and
the approvals to SAVED, then delivers them while the policy service is down: pay's effect happens
(a line in PAID), then the capability deciding check raises, which cancels pay before its result
is journaled, and the resumed segment fails. ``again`` delivers the same approvals once more (an
approval service retrying). Each prints ``resume <status>`` or ``raised <error>``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

import anyio

from openmolt import Capability, OpenMolt
from openmolt_core.approvals import ApprovalDecision
from openmolt_core.hooks import Proceed, Run
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool


async def main(store: str, paid: Path, saved: Path, phase: str) -> None:
	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		with paid.open("a") as f:
			f.write(f"{os.getpid()} paid {amount}\n")
		await anyio.sleep(6)  # waits for the bank's confirmation
		return "paid"

	@tool
	async def check(account: str) -> str:
		"""Check an account.

		Args:
			account: Which.
		"""
		return "ok"

	down = {"on": False}

	class Policy(Capability):
		name: ClassVar[str] = "policy"

		async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
			if down["on"] and call.tool == "local.check":
				await anyio.sleep(1.0)
				raise ConnectionError("policy service unreachable")
			return Proceed()

	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel(
		[
			[call_tool("local.pay", amount=5), call_tool("local.check", account="A")],
			finish("done"),
		]
	)
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[pay, check],
		capabilities=[Policy()],
		requires_approval=["local.pay", "local.check"],
		on_human_input_request=_park,
	)
	try:
		if phase == "first":
			parked = await agent.run("pay")
			decisions = [r.approve() for r in agent.approval_requests(parked.state)]
			await anyio.Path(saved).write_text(
				json.dumps(
					{"state": parked.state.to_dict(), "decisions": [d.to_dict() for d in decisions]}
				)
			)
			down["on"] = True  # the policy service goes down as the decisions arrive
		data = json.loads(await anyio.Path(saved).read_text())
		decisions = [ApprovalDecision.from_dict(d) for d in data["decisions"]]
		try:
			result = await agent.resume(data["state"], decision=decisions)
			print(f"resume {result.status}", flush=True)
			if result.state.pending is not None:
				print(f"pending {json.dumps(result.state.pending.get('message'))}", flush=True)
		except Exception as exc:
			print(f"raised {type(exc).__name__}", flush=True)
	finally:
		await om.aclose()


def _park(question: str) -> str:
	from openmolt_core.agent import HumanInputUnavailable

	raise HumanInputUnavailable(question)


if __name__ == "__main__":
	anyio.run(main, sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
