"""The payer two processes approve at once (`test_two_approvers`, `approver.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish


def payer(om: OpenMolt, paid: Path, *, parked: bool = False) -> Any:
	"""A payer whose one step calls pay A and pay B, each waiting for approval; pays go to ``paid``.

	``parked``: its model is asked only after the park (another process ran the first step).
	"""

	def pay(invoice: str) -> str:
		"""Pay an invoice.

		Args:
			invoice: The invoice.
		"""
		with paid.open("a") as out:
			out.write(invoice + "\n")
		return f"paid {invoice}"

	script = [
		[call_tool("local.pay", invoice="A"), call_tool("local.pay", invoice="B")],
		finish(result="AB"),
	]
	if parked:
		script = script[1:]
	return om.create_agent(
		name="Approved", model=ScriptedModel(script), tools=[pay], requires_approval=["local.pay"]
	)
