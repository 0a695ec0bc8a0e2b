"""The agents of the nested spend crash test, as a worker's agent file, and the process it kills.

    python spend_agents.py STORE WORKER_ID SCENARIO...

Spend calls one of two sub-agents (the task names the sub-agent's scenario): Scribe, whose tool
(``echo``) may run again, and Clerk, whose tool (``ledger``) fails when in doubt. Guarded's
input is judged by the guardrail agent Judge, whose tool (``echo``) may run again. Each agent's
model is the fake server (`crash_agents.ServerModel`); Judge's scenario is ``judge``.

As a process it starts a durable run of Spend for each scenario (Guarded for ``guarded...``),
prints ``started <scenario> <run id>`` for each, then ``ready``, and waits until it is killed.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import anyio
from crash_agents import ServerModel, echo, ledger

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.llm import ModelRequest
from openmolt_core.tools import tool


class JudgeModel(ServerModel):
	"""The fake server's model for a guardrail agent, whose input is the check: ``judge``."""

	def scenario(self, request: ModelRequest) -> Any:
		"""Every check's scenario is ``judge``."""
		return "judge"


_BUILT: dict[int, list[Any]] = {}


def _built(om: OpenMolt) -> list[Any]:
	if id(om) in _BUILT:
		return _BUILT[id(om)]
	retried = tool(echo, labels=["untrusted"])  # not outbound: a call in doubt runs again
	scribe = om.create_agent(
		name="Scribe", model=ServerModel(), instructions="Note it.", tools=[retried]
	)
	clerk = om.create_agent(
		name="Clerk", model=ServerModel(), instructions="Keep the ledger.", tools=[ledger]
	)
	spend = om.create_agent(
		name="Spend",
		model=ServerModel(),
		instructions="Ask the sub-agent the scenario names.",
		tools=[scribe, clerk],
		max_steps=10,
	)
	judge = om.create_agent(
		name="Judge",
		model=JudgeModel(),
		instructions="Judge the input.",
		tools=[retried],
		output_schema=VERDICT_SCHEMA,
	)
	guarded = om.create_agent(
		name="Guarded",
		model=ServerModel(),
		instructions="Do it.",
		guardrails=[Guardrail(judge, on="input")],
		max_steps=10,
	)
	_BUILT[id(om)] = [spend, guarded]
	return _BUILT[id(om)]


def spend_agent(om: OpenMolt) -> Any:
	return _built(om)[0]


def guarded_agent(om: OpenMolt) -> Any:
	return _built(om)[1]


agents = [spend_agent, guarded_agent]


async def main(store: str, worker_id: str, scenarios: list[str]) -> None:
	om = OpenMolt(
		durability={
			"url": store,
			"worker_id": worker_id,
			"heartbeat": float(os.environ.get("OPENMOLT_TEST_HEARTBEAT", "0.5")),
			"lapse": float(os.environ.get("OPENMOLT_TEST_LAPSE", "3")),
		},
		entry_points=False,
	)
	spend, guarded = _built(om)
	runs = []
	for scenario in scenarios:
		agent = guarded if scenario.startswith("guarded") else spend
		state = agent.new_state(scenario)
		print(f"started {scenario} {state.run_id}", flush=True)
		runs.append((agent, state))
	print("ready", flush=True)

	async def one(agent: Any, state: Any) -> None:
		await agent.run(history=state)

	async with anyio.create_task_group() as tg:
		for agent, state in runs:
			tg.start_soon(one, agent, state)
		await anyio.sleep_forever()


if __name__ == "__main__":
	said = logging.StreamHandler(sys.stdout)
	said.setFormatter(logging.Formatter("openmolt: %(message)s"))
	logging.getLogger("openmolt").addHandler(said)
	logging.getLogger("openmolt").setLevel(logging.INFO)
	anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
