"""A process of the tests of capabilities across a crash: drives the agents of `plugin_agents`.

    python plugin_driver.py STORE WORKER_ID park SCENARIO STATE_FILE
    python plugin_driver.py STORE WORKER_ID resume STATE_FILE GIVEN
    python plugin_driver.py STORE WORKER_ID start SCENARIO...

``park`` runs Post until it parks, writes the saved state (JSON) to STATE_FILE, prints
``parked <status>`` and ends. ``resume`` resumes Post from STATE_FILE with ``given`` and
``start`` starts Boss runs (``started <scenario> <run id>`` each); both print ``ready`` and wait
until they are killed. The instance loads the plugins' entry points, as an application's does:
Post's capability is found through its entry point only.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from plugin_agents import boss_agent, post_agent

from openmolt import OpenMolt


async def main(store: str, worker_id: str, command: str, args: list[str]) -> None:
	om = OpenMolt(
		durability={
			"url": store,
			"worker_id": worker_id,
			"heartbeat": float(os.environ.get("OPENMOLT_TEST_HEARTBEAT", "0.5")),
			"lapse": float(os.environ.get("OPENMOLT_TEST_LAPSE", "3")),
		}
	)
	post, boss = post_agent(om), boss_agent(om)  # every agent the worker serves
	if command == "park":
		scenario, path = args
		result = await post.run(scenario)
		await anyio.Path(path).write_text(json.dumps(result.state.to_dict()), encoding="utf-8")
		print(f"parked {result.status}", flush=True)
		await om.aclose()
		return

	async def one(drive: Any, name: str) -> None:
		try:
			await drive()
		except Exception as exc:
			print(f"ended {name} {type(exc).__name__}: {exc}", flush=True)

	async with anyio.create_task_group() as tg:
		if command == "resume":
			path, given = args
			saved = json.loads(await anyio.Path(path).read_text(encoding="utf-8"))
			tg.start_soon(one, lambda: post.resume(saved, given=given), "resume")
		else:
			assert command == "start", command
			for scenario in args:
				state = boss.new_state(scenario)
				print(f"started {scenario} {state.run_id}", flush=True)
				tg.start_soon(one, lambda state=state: boss.run(history=state), scenario)
		print("ready", flush=True)
		await anyio.sleep_forever()


if __name__ == "__main__":
	anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
