"""A durable run's question answered through two surfaces at once: one answer, the other told.

The run viewer resumes a parked run in the background; when another surface (``openmolt
answer``, a chat, A2A) answered the run between the page's look at it and its resume, the resume
is refused (`AlreadyAnsweredError`). The page answered "resuming" all the same, and the refusal
went to the log only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio


def nobody(question: str) -> str:
	raise HumanInputUnavailable("not now")


async def test_the_viewer_is_told_when_another_surface_answered_first(
	url: str, tmp_path: Path
) -> None:
	"""The CLI's answer wins: the page gets a 409 saying so, and the refund runs once, for 5."""
	ran: list[int] = []

	def refund(amount: int) -> dict[str, Any]:
		"""Refund.

		Args:
			amount: Cents.
		"""
		ran.append(amount)
		return {"refunded": amount}

	om = OpenMolt(durability=url, entry_points=False, run_store=tmp_path / "runs.db")
	step = [call_tool("local.refund", amount=5), finish("ok")]
	model = ScriptedModel([ask_human("How much?"), *step, *step])
	agent = om.create_agent(name="Pay", model=model, tools=[refund], on_human_input_request=nobody)
	try:
		parked = await agent.run("refund")
		run_id = parked.state.run_id
		async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient(timeout=30) as http:
			read = viewer._parked_state

			async def answered_meanwhile(run: str) -> Any:
				# `openmolt answer RUN_ID 5` lands while the page reads the run's state.
				await om.answer(run_id, "5", step=parked.state.steps)
				return await read(run)

			viewer._parked_state = answered_meanwhile  # type: ignore[method-assign]
			response = await http.post(
				f"http://127.0.0.1:{viewer.port}/api/questions/parked:{run_id}",
				json={"answer": "7"},
				headers={"x-openmolt-token": viewer.token},
			)
			assert response.status_code == 409, response.text
			assert "already answered" in response.json()["error"]
			done = await om.result(run_id)
		assert done.status == "success"
		assert ran == [5]
	finally:
		await om.aclose()
