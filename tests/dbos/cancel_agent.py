"""The processes of the two-process cancel test: a worker whose run's sub-agent pays, a canceller.

    python cancel_agent.py STORE PAID work      # starts the run, prints "started <run id>"
    python cancel_agent.py STORE RUN_ID cancel  # cancels it, prints "cancelled <wall time>"

The worker's run calls its sub-agent Clerk, which pays 1, waits 5 s, pays 2, ... up to 8; each
payment is a line ``<wall time> paid <n>`` in PAID.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish, wait
from openmolt_core.tools import tool

PAYMENTS = 8
"""The payments the sub-agent would make if nothing stopped it."""


async def work(store: str, paid: Path) -> None:
	@tool(labels=["outbound"])
	async def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		with paid.open("a") as f:
			f.write(f"{time.time():.3f} paid {amount}\n")
		return "paid"

	om = OpenMolt(durability=store, entry_points=False)
	clerk = om.create_agent(
		name="Clerk",
		model=ScriptedModel(
			# Eight payments 5 s apart: the run outlasts a canceller started on a loaded machine
			# (2 s apart, a canceller that took 14 s to import and reach the store found the run
			# ended). A cancelled run stops at once, so the test is no longer for it.
			[
				*[
					step
					for n in range(1, PAYMENTS + 1)
					for step in (call_tool("local.pay", amount=n), wait(5))
				][:-1],
				finish("done"),
			]
		),
		tools=[pay],
	)
	boss = om.create_agent(
		name="Boss",
		model=ScriptedModel([call_tool("local.Clerk", task="pay all"), finish("ok")]),
		tools=[clerk],
	)
	try:
		handle = await boss.start("go")
		print(f"started {handle.run_id}", flush=True)
		try:
			await handle.result()
		except Exception as exc:
			print(f"result {type(exc).__name__}", flush=True)
		await anyio.sleep(6)  # what a run that was not stopped would still do
	finally:
		await om.aclose()


async def cancel(store: str, run_id: str) -> None:
	om = OpenMolt(durability=store, entry_points=False)
	try:
		await om.cancel(run_id)
		print(f"cancelled {time.time():.3f}", flush=True)
	finally:
		await om.aclose()


if __name__ == "__main__":
	if sys.argv[3] == "work":
		anyio.run(work, sys.argv[1], Path(sys.argv[2]))
	else:
		anyio.run(cancel, sys.argv[1], sys.argv[2])
