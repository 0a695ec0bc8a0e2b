"""A plugin's capability (acme-approver, entry point only) in a durable run: park, resume elsewhere,
and survive a crash (SIGKILL) of the process that resumed it."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from _crash_cases import run_sync
from _durable import FakeServer
from test_inprocess import _steps

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

HEARTBEAT, LAPSE = 0.3, 1.5


def _call(tool: str, **input: Any) -> dict[str, Any]:
	return {"type": "callTool", "tool": tool, "input": input}


def _env(server: FakeServer) -> dict[str, str]:
	return {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(LAPSE),
	}


@pytest.mark.anyio
async def test_a_capability_parks_a_durable_run_and_its_saved_state_resumes_it(url: str) -> None:
	sent: list[str] = []

	@tool(labels=["outbound"])
	def send(to: str) -> str:
		"""Send a letter.

		Args:
			to: The address.
		"""
		sent.append(to)
		return "sent"

	model = ScriptedModel(
		[[call_tool("approver.policy"), call_tool("local.send", to="ada")], finish("done")]
	)

	def build(om: OpenMolt) -> Any:
		return om.create_agent(
			name="Post",
			model=model,
			tools=[send],
			capabilities=[{"name": "acme-approver", "options": {"guard": ["local.send"]}}],
		)

	first = OpenMolt(durability=url)
	parked = await build(first).run("write to ada")
	run_id = parked.state.run_id
	assert parked.status == "approval_required" and sent == []
	keys = [name for _, name in _steps(url, run_id)]
	# the capabilities' decisions are journaled steps, before each call's own
	assert "hook:1:0:approver.policy" in keys and "hook:1:1:local.send" in keys
	assert "tool:1:1:local.send" not in keys
	saved = json.loads(json.dumps(parked.state.to_dict()))

	# a new agent object, from the saved JSON alone: the run's next segment is a new workflow
	done = await build(first).resume(saved, given="approve")
	await first.aclose()
	assert done.status == "success" and sent == ["ada"]
	assert done.state.ext["approver"]["approved"]
	assert model.calls == 2
	resumed = [name for _, name in _steps(url, f"{run_id}+1")]  # the segment after the park
	assert resumed.index("hook:1:1:local.send") < resumed.index("tool:1:1:local.send")


@pytest.mark.anyio
async def test_a_refused_durable_resume_keeps_the_run_parked_and_resumable(url: str) -> None:
	"""The capability refuses what was given: a clear error; the kept state resumes durably."""
	from tests.core.test_resume_refusals import Desk

	paid: list[int] = []

	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	model = ScriptedModel([call_tool("local.pay", amount=5), finish("done")])
	om = OpenMolt(durability=url)
	agent = om.create_agent(name="Desked", model=model, tools=[pay], capabilities=[Desk()])
	parked = await agent.run("pay")
	assert parked.status == "approval_required"
	for given in ("maybe", "later"):  # each refused segment leaves the run resumable
		with pytest.raises(RunError) as caught:
			await agent.resume(parked.state.to_dict(), given=given)
		assert f"not {given!r}" in str(caught.value) and paid == []
	kept = json.loads(json.dumps(caught.value.result.state.to_dict()))
	done = await agent.resume(kept, given="yes")
	assert done.status == "success" and paid == [5]
	again = await agent.resume(kept, given="yes")  # the same state again: the same segment
	await om.aclose()
	assert again.status == "success" and paid == [5]


@pytest.mark.timeout(240)
def test_a_plugins_capability_survives_a_crash_after_the_call_it_approved(
	store: str, server: FakeServer, spawn: Any, tmp_path: Path
) -> None:
	"""acme-approver, found through its entry point only, across three processes.

	The first parks the run (the plugin's tool has run; the guarded send waits) and ends. The
	second resumes it with ``given="approve"``, the send runs, and the process is killed
	(SIGKILL) during the next step's call. ``openmolt worker`` recovers that segment: the
	capability's resume and decision replay from the journal (the send is not repeated), its
	state is the run's, and the run ends as an uncrashed one would.
	"""
	name, held = "approve-crash", "approve-crash-held"
	server.scripts[name] = [
		[
			{"type": "callTool", "tool": "approver.policy", "input": {}},
			_call("local.send", scenario=name, to="ada"),
		],
		_call("local.note", scenario=name, value="sent", hold=held),
		{"type": "finish", "status": "success", "output": {"result": "posted"}},
	]
	server.holds[held] = threading.Event()
	env = _env(server)
	saved = tmp_path / "state.json"
	first = spawn(["plugin_driver.py", store, "w1", "park", name, str(saved)], env, name="park")
	assert first.popen.wait(120) == 0, first.output()[-3000:]
	assert "parked approval_required" in first.output()
	state = json.loads(saved.read_text(encoding="utf-8"))
	assert server.entries("tool", name="send") == []
	second = spawn(["plugin_driver.py", store, "w1", "resume", str(saved), "approve"], env, "go")
	second.wait_line("ready")
	server.wait_for(lambda: server.entries("tool", name="note", scenario=name), 90, "the note")
	second.kill()
	assert len(server.entries("tool", name="send", scenario=name)) == 1  # approved, it ran
	server.holds[held].set()
	args = ["-m", "openmolt", "worker", "plugin_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(LAPSE)], env, "w1b")
	worker.wait_line("ready")
	result = run_sync(store, "result", state["run_id"])
	worker.stop()
	assert result.status == "success" and result.output == {"result": "posted"}, result.error
	# The approved call ran once: its decision and its result came from the journal.
	assert len(server.entries("tool", name="send", scenario=name)) == 1
	assert len(server.entries("model", name=name, turn=1)) == 1  # the step before the kill
	assert len(server.entries("tool", name="note", scenario=name)) == 2  # in flight: run again
	# The plugin's state and the tool it adds, as an uncrashed run has them.
	[approved] = result.state.ext["approver"]["approved"]
	assert approved.startswith("1:local.send:")
	results = json.loads(server.entries("model", name=name, turn=1)[0].body["last"])["results"]
	assert results[0]["result"] == "approval needed for: local.send"
	assert results[1]["result"]["tool"] == "send"
	segment = f"{state['run_id']}+{state['steps']}"
	keys = [key for _, key in _steps(store, segment)]
	assert keys.index("hook:1:1:local.send") < keys.index("tool:1:1:local.send")
