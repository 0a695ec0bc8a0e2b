"""``openmolt run --json``: every event of the run's story is a JSON line (but the deliberate few).

The JSON lines listened to a hand-written list of names, which the events added since had
drifted from: a taint, an approval request, a compaction, a scheduled run's end, a stranded run
and a capability's own events never reached a script, though the run store and the viewer had
them.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from openmolt import OpenMolt
from openmolt_core.cli._progress import JSON_LEFT_OUT, Progress
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS, Event
from openmolt_core.hooks import Capability, Run
from openmolt_core.testing import ScriptedModel, call_tool
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@tool(labels=["untrusted"])
def read_page() -> str:
	"""Read a page someone else wrote."""
	return "someone else wrote this"


@tool(labels=["outbound"])
def send(text: str) -> str:
	"""Send a message out.

	Args:
		text: The text.
	"""
	return "sent"


@dataclass(slots=True, kw_only=True)
class NotedEvent(Event):
	"""A capability's own event."""

	note: str
	name: str = "note:made"


class Noter(Capability):
	name: ClassVar[str] = "noter"
	events: ClassVar[dict[str, type[Event]]] = {"note:made": NotedEvent}

	async def on_run_start(self, run: Run) -> None:
		await run.emit(NotedEvent(agent=run.agent, step=0, note="started"))


async def test_every_event_a_handler_hears_is_a_json_line() -> None:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Reader",
		model=ScriptedModel([[call_tool("local.read_page")], [call_tool("local.send", text="hi")]]),
		tools=[read_page, send],
		capabilities=[Noter()],
		requires_approval=["local.send"],
	)
	heard: list[str] = []
	for name in sorted((EVENT_NAMES - STREAM_EVENTS) | {"note:made"}):
		agent.on(name, lambda e: heard.append(e.name))
	out = io.StringIO()
	Progress("json", out).attach(agent)
	result = await agent.run("read it, then send it")
	assert result.status == "approval_required"
	lines = [json.loads(line)["event"] for line in out.getvalue().splitlines()]
	assert {"taint", "approval:request", "note:made"} <= set(heard)
	assert lines == [n for n in heard if n not in JSON_LEFT_OUT]


def test_what_the_json_lines_leave_out_is_a_known_event() -> None:
	"""Each name left out is one the core emits, with a reason (no stale entry)."""
	assert set(JSON_LEFT_OUT) <= EVENT_NAMES
	assert all(isinstance(why, str) and why for why in JSON_LEFT_OUT.values())
