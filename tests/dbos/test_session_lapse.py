"""A PostgreSQL session's turn held by a paused durable worker ends with the worker's lapse.

The turn's lapse was 30 s whatever the worker's: with the default lapse (10 s), a paused
worker's runs were taken over after 10 s and waited 20 s more for their session's turn; with a
lapse longer than 30 s, the turn ended while the paused worker's lease still held, and the worker
went on, once continued, with a run whose turn another run of the session had taken.
"""

from __future__ import annotations

import signal
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa

from openmolt_core.sessions import SQLAlchemySession

pytestmark = [
	pytest.mark.anyio,
	pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP"),
]


def _appears(path: Path) -> None:
	deadline = time.monotonic() + 90
	while not path.exists():
		assert time.monotonic() < deadline, f"{path.name} never appeared"
		time.sleep(0.05)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("store", ["postgres"], indirect=True)  # the lapse is PostgreSQL's
async def test_a_paused_workers_session_turn_ends_with_its_lapse(
	store: str, tmp_path: Path
) -> None:
	held = tmp_path / "held"
	holder = textwrap.dedent(
		f"""
		import anyio, sqlalchemy as sa
		from openmolt import OpenMolt
		from openmolt_core.sessions import SQLAlchemySession
		from openmolt_core.testing import ScriptedModel, call_tool

		async def hold() -> str:
			\"\"\"Hold the session's turn.\"\"\"
			open({str(held)!r}, "w").close()
			await anyio.sleep(120)
			return "held"

		async def main():
			durability = {{"url": {store!r}, "heartbeat": 0.5, "lapse": 3.0}}
			om = OpenMolt(durability=durability, entry_points=False)
			model = ScriptedModel([call_tool("local.hold")])
			agent = om.create_agent(name="Holder", model=model, tools=[hold])
			session = SQLAlchemySession("s-paused", engine=sa.create_engine({store!r}))
			await agent.run("go", session=session)

		anyio.run(main)
		"""
	)
	log = (tmp_path / "holder.log").open("w")
	proc = await anyio.open_process([sys.executable, "-c", holder], stdout=log, stderr=log)
	engine = sa.create_engine(store)
	try:
		await anyio.to_thread.run_sync(_appears, held)
		proc.send_signal(signal.SIGSTOP)
		began = time.monotonic()
		with anyio.fail_after(40):
			async with SQLAlchemySession("s-paused", engine=engine).turn():
				taken = time.monotonic() - began
		assert taken < 12, f"the turn ended {taken:.1f} s after the pause (lapse 3 s)"  # was 30
	finally:
		proc.kill()
		await proc.wait()
		engine.dispose()
		log.close()
