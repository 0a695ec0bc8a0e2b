"""A run recovered by a process whose agent of that name is another definition: a clear error.

The application version hashes the agents a process knew when it launched; an agent created
after the first durable run is not in it, so a restart with that agent changed (other
instructions) has the same version and recovers the run. Its journal was made by the old
definition: the recovery refuses it, naming the run, instead of going on as the new agent.
"""

from __future__ import annotations

import pytest
from dbos import DBOS

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


async def _process(url: str, instructions: str, model: ScriptedModel) -> tuple[OpenMolt, object]:
	# One process's life: an agent known at launch, then the payer created after the first run.
	om = OpenMolt(durability={"url": url, "worker_id": "w1"}, entry_points=False)
	first = om.create_agent(name="Greeter", model=ScriptedModel([finish("hi")]))
	await first.run("hello")
	payer = om.create_agent(
		name="Payer", model=model, instructions=instructions, on_human_input_request=park
	)
	return om, payer


async def test_a_run_recovered_by_another_definition_of_its_agent_is_refused(url: str) -> None:
	"""Same worker id and version, other instructions: an error naming the run, no model call."""
	om, payer = await _process(url, "Pay 5 EUR.", ScriptedModel([ask_human("Pay?"), finish("5")]))
	parked = await payer.run("pay")  # type: ignore[attr-defined]
	run_id = parked.state.run_id
	version = om.durability.engine.app_version  # type: ignore[union-attr]
	await om.aclose()
	DBOS.destroy()
	reset_engine()

	later = ScriptedModel([finish("5000")])
	om, payer = await _process(url, "Pay 5000 EUR.", later)
	try:
		assert om.durability.engine.app_version == version  # type: ignore[union-attr]
		with pytest.raises(
			ConfigurationError, match=f"durable run {run_id}: agent 'Payer'.*not the"
		):
			await om.result(run_id)
		assert later.requests == []  # the other definition never went on with the run
	finally:
		await om.aclose()
