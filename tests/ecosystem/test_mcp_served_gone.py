"""A client of ``openmolt mcp`` that goes away while its user is asked: the run waits, unanswered."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

AGENT_PY = """
import atexit, pathlib
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool

LOG = pathlib.Path(__file__).with_name("log.txt")


def note(text):
    with LOG.open("a", encoding="utf-8") as f:
        f.write(text + "\\n")


@tool(labels=[])
def refund(order: str) -> str:
    \"\"\"Refund an order.

    Args:
        order: The order.
    \"\"\"
    note("made " + order)
    return "refunded"


def again(request):
    note("asked again")
    return finish({"result": "done"})


first = call_tool("local.refund", order="A1") if KIND == "approval" else ask_human("Which?")
model = ScriptedModel([first, again, again])
om = OpenMolt(entry_points=False)
agent = om.create_agent(
    name="Helper", model=model, tools=[refund], requires_approval=["local.refund"]
)


@atexit.register
def _kept():
    state = agent.last_state
    try:
        waiting = agent.approval_requests(state)
    except Exception:
        waiting = []
    pending = (state.pending or {}).get("kind") if state is not None else None
    note(f"waiting {[r.tool for r in waiting]} pending {pending}")
"""


@pytest.mark.parametrize("kind", ["approval", "question"])
async def test_a_client_gone_before_its_user_answers_leaves_the_run_parked(
	tmp_path: Path, kind: str
) -> None:
	"""A legacy client that closes the connection while its user is asked (elicitation/create)
	makes no decision: the call is not made, the model is not asked again, and the run is kept
	waiting for an answer, as when nobody can be asked now."""
	agent_file = tmp_path / "agent.py"
	agent_file.write_text(f"KIND = {kind!r}\n" + AGENT_PY, encoding="utf-8")
	log = tmp_path / "log.txt"
	server = StdioServerParameters(
		command=sys.executable,
		args=["-m", "openmolt", "mcp", str(agent_file)],
		env={"PYTHONPATH": os.pathsep.join(sys.path)},
		cwd=str(tmp_path),
	)
	asked = anyio.Event()

	async def elicit(context: Any, params: Any) -> Any:
		asked.set()
		await anyio.sleep_forever()

	async def call() -> None:
		async with Client(server, cache=None, mode="legacy", elicitation_callback=elicit) as c:
			await c.call_tool("Helper", {"input": "Refund A1"})

	with anyio.fail_after(30):
		async with anyio.create_task_group() as group:
			group.start_soon(call)
			await asked.wait()
			group.cancel_scope.cancel()  # the client goes away (its stdin closes)
		for _ in range(600):  # until the server process ends
			if "waiting" in (log.read_text("utf-8") if log.exists() else ""):
				break
			await anyio.sleep(0.05)
	lines = log.read_text("utf-8").splitlines()
	if kind == "approval":
		assert lines == ["waiting ['local.refund'] pending approval"]
	else:
		assert lines == ["waiting [] pending human_input"]
