"""One parked step is resumed once at a time in a process: two resumes at once run nothing twice.

A parked state may reach two places that resume it (two surfaces of a server, a retried webhook,
a double click): without a durable backend, which keeps one resume per step across processes,
the kernel refuses a second resume of the same parked step while the first goes on.
"""

from __future__ import annotations

import anyio
import pytest

from openmolt import ConfigurationError, HumanInputUnavailable, OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


def later(question: str) -> str:
	"""Nobody answers now: the run parks on its question."""
	raise HumanInputUnavailable(question)


async def test_two_resumes_of_one_parked_question_run_its_calls_once() -> None:
	"""The second resume, while the first runs, is refused naming the run; the tool ran once."""
	ran: list[str] = []
	going = anyio.Event()
	release = anyio.Event()

	@tool(labels=[])
	async def refund(order: str) -> str:
		"""Refund an order.

		Args:
			order: The order.
		"""
		ran.append(order)
		going.set()
		await release.wait()
		return "refunded"

	model = ScriptedModel(
		[ask_human("Which order?"), call_tool("local.refund", order="A1"), finish("done")]
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="Clerk", model=model, tools=[refund], on_human_input_request=later
	)
	parked = await agent.run("refund my order")
	assert parked.status == "human_input_required"
	saved = parked.state.to_dict()  # two places hold a copy each (a store, a surface's memory)
	results = []

	async def first() -> None:
		results.append(await agent.resume(dict(saved), answer="A1"))

	async with anyio.create_task_group() as tg:
		tg.start_soon(first)
		await going.wait()
		with pytest.raises(ConfigurationError, match=f"{parked.state.run_id} is being resumed"):
			await agent.resume(dict(saved), answer="A1")
		release.set()
	assert ran == ["A1"] and results[0].status == "success"


async def test_a_resume_refused_before_it_ran_leaves_the_step_resumable() -> None:
	"""A resume that fails (a wrong delivery) frees the step: the right one goes on."""
	model = ScriptedModel([ask_human("Which order?"), finish("done")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="Clerk", model=model, on_human_input_request=later
	)
	parked = await agent.run("go")
	with pytest.raises(ConfigurationError, match="answer="):
		await agent.resume(parked.state)  # no answer given
	assert (await agent.resume(parked.state, answer="A1")).status == "success"
