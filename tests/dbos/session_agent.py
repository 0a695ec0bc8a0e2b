"""The agent of the durable session tests whose caller dies, and the process that dies.

    python session_agent.py STORE SESSIONS_DB HELD_FILE

The process runs one turn of session ``guest`` on a durable instance (worker ``w1``): its tool
makes ``HELD_FILE`` and waits there until the process is killed. The test's own process builds
the same agent (`build`), whose tool returns at once, and takes the dead worker's run over.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

from openmolt import FunctionTool, OpenMolt, SQLiteSession
from openmolt_core.testing import ScriptedModel, call_tool, finish

HELD: Path | None = None
"""Where the tool says it holds (the process the test kills); None: it returns at once."""


def _fetch(input: dict[str, Any], context: Any) -> str:
	if HELD is not None:
		HELD.write_text("held")
		time.sleep(120)
	return "tea"


def build(om: OpenMolt, model: ScriptedModel) -> Any:
	"""The Host agent: one tool, retried when a crash cut it (``in_doubt='retry'``)."""
	fetch = FunctionTool(
		"fetch",
		"Fetch the goods.",
		_fetch,
		input_schema={"type": "object", "properties": {}},
		in_doubt="retry",
	)
	return om.create_agent(name="Host", model=model, tools=[fetch])


def durability(store: str, worker: str) -> dict[str, Any]:
	"""The durable settings of both processes: a short lapse, so a dead worker is taken over soon."""
	return {"url": store, "worker_id": worker, "heartbeat": 0.3, "lapse": 1.5}


async def main(store: str, sessions: str, held: str) -> None:
	global HELD
	HELD = Path(held)
	om = OpenMolt(durability=durability(store, "w1"), entry_points=False)
	model = ScriptedModel([call_tool("local.fetch"), finish("never", human_message="never")])
	agent = build(om, model)
	await agent.run("buy tea", session=SQLiteSession("guest", sessions))


if __name__ == "__main__":
	anyio.run(main, *sys.argv[1:4])
