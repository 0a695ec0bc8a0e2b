"""Agents whose capabilities meet a crash, as a worker's Python agent file (``openmolt worker``).

- Post: a third-party capability found through its entry point only (``acme-approver``, the
  test plugin of tests/plugins) guards its ``send`` tool, adds the ``approver.policy`` tool and
  keeps what was approved in ``state.ext["approver"]``.
- Boss: reads untrusted pages and hands tasks to two sub-agents: Courier (it may ``send``, an
  outbound call its taint policy refuses to a tainted run) and Scribe (its ``note`` is safe
  to repeat, so a Scribe call in flight at a crash runs again). Both report the taint their runs
  start with to the fake server before each model call (`Spy`): ``POST /tool/seen``.

The model and the tools are the fake server's (`crash_agents.ServerModel`): the scenario is each
run's input (a sub-agent's: its task).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
from crash_agents import ServerModel, _server

from openmolt import Capability, OpenMolt
from openmolt_core.hooks import Run
from openmolt_core.tools import tool


async def _post(path: str, body: dict[str, Any]) -> dict[str, Any]:
	async with httpx.AsyncClient(timeout=120) as client:
		reply = await client.post(f"{_server()}{path}", json=body)
	return dict(reply.json())


@tool(labels=["outbound"])
async def send(scenario: str, to: str, hold: str = "") -> dict[str, Any]:
	"""Send a letter (outbound: an in-doubt call asks a person).

	Args:
		scenario: The scenario.
		to: The address.
		hold: A hold name: the server answers only when the test releases it.
	"""
	return await _post("/tool/send", {"scenario": scenario, "value": to, "hold": hold})


@tool(labels=[])
async def note(scenario: str, value: str, hold: str = "") -> dict[str, Any]:
	"""Write a note (nothing goes out; safe to repeat: a call in doubt runs again).

	Args:
		scenario: The scenario.
		value: The note.
		hold: A hold name: the server answers only when the test releases it.
	"""
	return await _post("/tool/note", {"scenario": scenario, "value": value, "hold": hold})


@tool(labels=["untrusted"])
async def read_page(scenario: str, value: str, hold: str = "") -> dict[str, Any]:
	"""Read a web page (untrusted: the run that reads it is tainted).

	Args:
		scenario: The scenario.
		value: The page.
		hold: A hold name: the server answers only when the test releases it.
	"""
	return await _post("/tool/page", {"scenario": scenario, "value": value, "hold": hold})


class Spy(Capability):
	"""Tells the fake server, before each model call, which tools the run's taint names."""

	name: ClassVar[str] = "spy"
	in_fingerprint: ClassVar[bool] = False

	async def before_model(self, run: Run) -> None:
		scenario = json.loads(run.state.messages[0].content)["input"]
		tainted = [t["tool"] for t in run.state.taint]
		await _post("/tool/seen", {"scenario": scenario, "value": json.dumps(tainted)})


def build(om: OpenMolt) -> list[Any]:
	"""The agents: Post (the plugin's capability), Boss with its sub-agents Courier and Scribe."""
	post = om.create_agent(
		name="Post",
		model=ServerModel(),
		instructions="Send what the scenario says, once approved.",
		tools=[send, note],
		capabilities=[{"name": "acme-approver", "options": {"guard": ["local.send"]}}],
		max_steps=10,
	)
	courier = om.create_agent(
		name="Courier",
		model=ServerModel(),
		instructions="Send what the task says.",
		tools=[send],
		capabilities=[Spy()],
		# once its run is tainted, its send does not run (the model reads why)
		taint_policy={"on_outbound": "refuse", "only_trifecta": False},
		max_steps=5,
	)
	scribe = om.create_agent(
		name="Scribe",
		model=ServerModel(),
		instructions="Note what the task says.",
		tools=[note],
		capabilities=[Spy()],
		max_steps=5,
	)
	boss = om.create_agent(
		name="Boss",
		model=ServerModel(),
		instructions="Read, then delegate.",
		tools=[read_page, courier, scribe],
		taint_policy="allow",  # the boss lets its calls through: each sub-run must gate its own
		max_steps=10,
	)
	return [post, boss]


_BUILT: dict[int, list[Any]] = {}


def _built(om: OpenMolt) -> list[Any]:
	if id(om) not in _BUILT:
		_BUILT[id(om)] = build(om)
	return _BUILT[id(om)]


def post_agent(om: OpenMolt) -> Any:
	return _built(om)[0]


def boss_agent(om: OpenMolt) -> Any:
	return _built(om)[1]


agents = [post_agent, boss_agent]
