"""Two processes decide the two calls of one park at the same moment: both decisions go on.

Each read the park before either started the run's next segment; the one whose start lost (the
segment's id taken a moment before, by the other process) was refused "already decided" though
its call was not. It now waits for the other's segment and goes on from the park it comes to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from _harness import start_python
from approver_agents import payer

from openmolt import OpenMolt

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


async def test_two_processes_deciding_one_park_s_two_calls_at_once_both_go_on(
	url: str, tmp_path: Path
) -> None:
	"""Each call paid once; one delivery parks again on the other call, the other ends the run."""
	paid, go, state_file = tmp_path / "paid", tmp_path / "go", tmp_path / "state.json"
	om = OpenMolt(durability={"url": url, "worker_id": "tester"}, entry_points=False)
	agent: Any = payer(om, paid)
	other = None
	try:
		parked = await agent.run("pay")
		state_file.write_text(json.dumps(parked.state.to_dict()))
		first, _ = agent.approval_requests(parked.state)
		other = start_python(
			["approver.py", url, str(state_file), "1", str(paid), str(go)],
			None,
			tmp_path / "approver.log",
		)
		await anyio.to_thread.run_sync(other.wait_line, "ready")
		backend: Any = om.durability
		start = backend._start

		async def held(*args: Any, **kwargs: Any) -> bool:
			go.touch()  # both have read the park: both start now
			return bool(await start(*args, **kwargs))

		backend._start = held
		mine = await agent.resume(parked.state, decision=first.approve())
		await anyio.to_thread.run_sync(other.wait_line, "result ")
		said = other.output()
		assert "refused" not in said, said
		theirs = said.split("result ", 1)[1].split()[0]
		assert sorted([mine.status, theirs]) == ["approval_required", "success"]
		assert sorted(paid.read_text().split()) == ["A", "B"]  # each once
		assert (await om.result(parked.state.run_id)).output == {"result": "AB"}
	finally:
		if other is not None:
			other.stop()
		await om.aclose()
