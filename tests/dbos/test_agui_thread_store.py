"""AG-UI threads on a durable store: a parked run is resumed from any server on the store.

Behind one address, a client's ``resume`` may reach another server than the one whose run
parked. On PostgreSQL the servers share the store's database and nothing else (each machine its
own files folder): the thread's row is kept in its table (`openmolt_dbos._a2a_tasks.StoreTasks`,
scope ``agui:<agent>``), and the run's state is read from the engine. On SQLite they share a
machine and the file beside the store. Either way a resume goes on once, on whichever server it
reaches first.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _durable import FakeServer
from agui_agent import TOKEN

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.triggers import Triggers
from openmolt_dbos._a2a_tasks import StoreTasks
from openmolt_serve import TriggerServer
from openmolt_serve._rows import SqliteTasks
from openmolt_serve.chats import park_questions
from tests.serve.test_serve_agui_shared import (
	CRM,
	LOOKED,
	WEB,
	Frames,
	client,
	interrupt_of,
	lookup,
	post,
	resume,
	run_input,
	stream,
)
from tests.serve.test_serve_agui_streams import protocol_order

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_servers(
	url: str, tmp_path: Path, model: ScriptedModel, **agui: Any
) -> AsyncIterator[tuple[TriggerServer, TriggerServer]]:
	"""Helper served by two servers on one durable store (on PostgreSQL, two machines' folders)."""
	postgres = not url.startswith("sqlite")
	approve = agui.pop("approve", False)
	callers = {"crm": {"token": CRM}, "web": {"token": WEB}}
	triggers = Triggers.model_validate({"agui": {"callers": callers, **agui}})
	agents = []
	for machine in ("a", "b"):
		files = tmp_path / (f"machine-{machine}" if postgres else "files")  # one machine: one
		om = OpenMolt(durability={"url": url, "files_dir": str(files)}, entry_points=False)
		agent = om.create_agent(
			name="Helper",
			model=model,
			instructions="Help.",
			tools=[lookup],
			requires_approval=["local.lookup"] if approve else None,
		)
		park_questions(agent)
		agents.append(agent)
	try:
		async with (
			TriggerServer([(agents[0], triggers)], port=0) as a,
			TriggerServer([(agents[1], triggers)], port=0) as b,
		):
			rows = [s.agui["Helper"].parks.rows for s in (a, b)]
			assert all(isinstance(r, StoreTasks if postgres else SqliteTasks) for r in rows)
			yield a, b
	finally:
		for agent in agents:
			await OpenMolt.of(agent).aclose()


async def test_a_question_parked_on_one_server_is_answered_on_another(
	url: str, tmp_path: Path
) -> None:
	"""A's durable run asks; B takes the answer and streams the run's end, conforming; the
	answer again, on A, is 409; web's resume of crm's thread is 409 on either server."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async with (
		two_servers(url, tmp_path, model) as (a, b),
		client(a) as on_a,
		client(b) as on_b,
		client(b, WEB) as web_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		status, _ = await post(web_b, resume(asked, "Paris"))
		assert status == 409
		done = await stream(on_b, resume(asked, "Oslo"))
		assert done[-1]["type"] == "RUN_FINISHED"
		assert done[-1]["result"] == {"result": "Rain in Oslo."}
		status, _ = await post(on_a, resume(asked, "Bergen"))
		assert status == 409
	assert len(model.requests) == 2


async def test_an_approval_parked_on_one_server_is_decided_on_another(
	url: str, tmp_path: Path
) -> None:
	"""The call waiting on A is approved from B: it runs once, and the run ends."""
	LOOKED.clear()
	model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])
	async with (
		two_servers(url, tmp_path, model, approve=True, decideApprovals=True) as (a, b),
		client(a) as on_a,
		client(b) as on_b,
	):
		waiting = interrupt_of(await stream(on_a, run_input()))
		assert waiting["reason"] == "approval"
		done = await stream(on_b, resume(waiting, {"approved": True}))
		assert done[-1]["result"] == {"result": "ok"}
		status, _ = await post(on_a, resume(waiting, {"approved": True}))
		assert status == 409
	assert LOOKED == ["Oslo"]


async def test_resumes_of_one_interrupt_racing_on_two_servers_go_on_once(
	url: str, tmp_path: Path
) -> None:
	"""Four resumes of one question at once, two on each server: one goes on; each other is
	409 or told the interrupt was answered; the model is asked once more."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "ok"}), finish("twice")])
	async with (
		two_servers(url, tmp_path, model) as (a, b),
		client(a) as on_a,
		client(b) as on_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		answers: list[tuple[int, Frames | str]] = []

		async def answer(http: httpx.AsyncClient) -> None:
			answers.append(await post(http, resume(asked, "Oslo")))

		async with anyio.create_task_group() as tg:
			for http in (on_a, on_b) * 2:
				tg.start_soon(answer, http)
	went_on = [f for s, f in answers if s == 200 and isinstance(f, list) and "result" in f[-1]]
	assert len(went_on) == 1 and went_on[0][-1]["result"] == {"result": "ok"}
	for status, frames in answers:
		if isinstance(frames, list) and frames is not went_on[0]:
			protocol_order(frames)
			assert frames[-1]["type"] == "RUN_ERROR" and frames[-1]["code"] == "answered"
		elif status != 200:
			assert status == 409
	assert len(model.requests) == 2


async def test_a_new_message_on_another_server_cancels_the_waiting_durable_run(
	url: str, tmp_path: Path
) -> None:
	"""B's new message on the thread gives up the run parked on A: the engine cancelled it, no
	question is pending, and a late resume on A is 409."""
	model = ScriptedModel([ask_human("Which city?"), finish("joke")])
	async with (
		two_servers(url, tmp_path, model) as (a, b),
		client(a) as on_a,
		client(b) as on_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		fresh = await stream(on_b, run_input("Forget it: tell me a joke"))
		assert fresh[-1]["type"] == "RUN_FINISHED"
		om = OpenMolt.of(a.agents["Helper"][0])
		assert await om.pending() == []
		status, _ = await post(on_a, resume(asked, "Oslo"))
		assert status == 409
	assert len(model.requests) == 2


def _serve(spawn: Any, store: str, name: str, env: dict[str, str]) -> tuple[Any, str]:
	args = ["-m", "openmolt", "serve", "agui_agent.py", "--durability", store]
	args += ["--port", "0", "--no-ui"]
	proc = spawn(args, env, name=name)
	proc.wait_line("POST /agui/Helper on ")
	found = re.search(r"POST /agui/Helper on (http://\S+)", proc.output())
	assert found is not None, proc.output()
	return proc, found.group(1)


@pytest.mark.timeout(120)
async def test_a_question_survives_a_restart_of_its_server(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""`openmolt serve` stops while its durable run waits; started again on the store, it takes
	the answer and the run ends (the model asked once more)."""
	scenario = f"agui-{uuid.uuid4().hex}"  # the run store (XDG state) outlives the test
	server.scripts[scenario] = [
		{"type": "requestHumanInput", "message": "Which city?"},
		{"type": "finish", "status": "success", "output": {"result": "Rain in Oslo."}},
	]
	env = {"OPENMOLT_TEST_SERVER": server.url}
	headers = {"Authorization": f"Bearer {TOKEN}"}
	thread = f"t-{scenario}"
	first, url = _serve(spawn, store, "serve-1", env)
	async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
		asked = interrupt_of(await stream(http, run_input(scenario, thread=thread)))
	assert first.stop() == 0
	second, url = _serve(spawn, store, "serve-2", env)
	async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
		done = await stream(http, resume(asked, "Oslo", thread=thread))
	assert done[-1]["result"] == {"result": "Rain in Oslo."}, done[-1]
	second.stop()
	assert len(server.entries("model", name=scenario)) == 2
