"""A second process deciding a parked run's call: the other approver of a cross-process race.

    python approver.py STORE STATE_FILE CALL_INDEX PAID_FILE GO_FILE

Builds the payer of `test_two_approvers`, holds its delivery's start of the next segment until
GO_FILE exists (the test's own delivery has read the same park by then), approves the call at
CALL_INDEX of the saved park and prints ``result STATUS`` or ``refused ERROR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from approver_agents import payer

from openmolt import OpenMolt
from openmolt_core.errors import ApprovalError


async def main(store: str, state_file: str, index: int, paid: str, go: str) -> None:
	om = OpenMolt(durability={"url": store, "worker_id": "approver"}, entry_points=False)
	agent: Any = payer(om, Path(paid), parked=True)
	state = json.loads(await anyio.Path(state_file).read_text())
	request = agent.approval_requests(state)[index]
	backend: Any = om.durability
	await backend.start()
	start = backend._start

	async def held(*args: Any, **kwargs: Any) -> bool:
		while not await anyio.Path(go).exists():  # noqa: ASYNC110  # the other process's file
			await anyio.sleep(0.01)
		return bool(await start(*args, **kwargs))

	backend._start = held
	print("ready", flush=True)
	try:
		done = await agent.resume(state, decision=request.approve())
		print(f"result {done.status}", flush=True)
	except ApprovalError as exc:
		print(f"refused {exc}", flush=True)
	await om.aclose()


if __name__ == "__main__":
	anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
