"""The process the crash tests kill: starts durable runs of `crash_agents` and waits.

    python driver.py STORE WORKER_ID SCENARIO...

Each scenario named ``budget...`` runs on the Budget agent, ``tokens...`` on Tokens, the others
on Crash. It prints
``started <scenario> <run id>`` for each, then ``ready``, and waits until it is killed.

A scenario written ``later:<scenario>`` gets its run id at once but starts only when the file
named by ``OPENMOLT_TEST_GO`` exists: a run whose clock matters (a time budget) starts when the
test is ready for it, not when the process does.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from crash_agents import build, tokens_agent

from openmolt import OpenMolt


def _wait_for(path: Path) -> None:
	"""Return once ``path`` exists (the test's go-ahead)."""
	while not path.exists():
		time.sleep(0.05)


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
	crash, budget = build(om)
	tokens = tokens_agent(om)  # every agent the worker serves: the version names them all

	async def one(agent: Any, state: Any, scenario: str, later: bool) -> None:
		if later:
			await anyio.to_thread.run_sync(_wait_for, Path(os.environ["OPENMOLT_TEST_GO"]))
		try:
			await agent.run(history=state)
		except Exception as exc:
			print(f"ended {scenario} {type(exc).__name__}", flush=True)

	runs = []
	for named in scenarios:
		later = named.startswith("later:")
		scenario = named.removeprefix("later:")
		agent = budget if scenario.startswith("budget") else crash
		if scenario.startswith("tokens"):
			agent = tokens
		state = agent.new_state(scenario)
		print(f"started {scenario} {state.run_id}", flush=True)
		runs.append((agent, state, scenario, later))
	print("ready", flush=True)
	async with anyio.create_task_group() as tg:
		for run in runs:
			tg.start_soon(one, *run)
		await anyio.sleep_forever()


if __name__ == "__main__":
	# What the engine says (fencing, takeovers) goes to the output, as the worker command's does.
	said = logging.StreamHandler(sys.stdout)
	said.setFormatter(logging.Formatter("openmolt: %(message)s"))
	logging.getLogger("openmolt").addHandler(said)
	logging.getLogger("openmolt").setLevel(logging.INFO)
	anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
