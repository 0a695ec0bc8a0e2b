"""AG-UI threads on a shared run store: a parked run is resumed from any server on the store.

Behind one address, a client's ``resume`` may reach another server than the one whose run
parked, or the same server after a restart. With a run store (``OpenMolt(run_store=...)``) the
thread's parked run is kept in the store's file (`openmolt_serve._rows`), so every server on the
file finds it, with the checks a resume has on one server: the caller's thread, the interrupt
ids, and one resume of an interrupt, whichever server each reaches.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.sessions import SQLiteSession
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions
from tests.serve.test_serve_agui_client import verified
from tests.serve.test_serve_agui_streams import protocol_order

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CRM = "crm-agui-token-0123456789abcdef"
WEB = "web-agui-token-0123456789abcdef"
Frames = list[dict[str, Any]]


@tool(labels=[])
def lookup(city: str) -> dict[str, Any]:
	"""Look a city up.

	Args:
		city: The city.
	"""
	LOOKED.append(city)
	return {"city": city, "weather": "rain"}


LOOKED: list[str] = []


@asynccontextmanager
async def server(
	model: ScriptedModel, folder: Path, **agui: Any
) -> AsyncIterator[tuple[TriggerServer, OpenMolt]]:
	"""One server of Helper on the run store (and the sessions) in ``folder``."""
	om = OpenMolt(entry_points=False, run_store=folder / "runs.db")
	agent = om.create_agent(
		name="Helper",
		model=model,
		instructions="Help.",
		tools=[lookup],
		requires_approval=["local.lookup"] if agui.pop("approve", False) else None,
	)
	park_questions(agent)
	callers = {"crm": {"token": CRM}, "web": {"token": WEB}}
	triggers = Triggers.model_validate({"agui": {"callers": callers, **agui}})

	def sessions(session_id: str) -> SQLiteSession:
		return SQLiteSession(session_id, folder / "sessions.db")

	try:
		async with TriggerServer([(agent, triggers)], port=0, sessions=sessions) as served:
			yield served, om
	finally:
		await om.aclose()


def client(served: TriggerServer, token: str = CRM) -> httpx.AsyncClient:
	headers = {"Authorization": f"Bearer {token}"}
	return httpx.AsyncClient(base_url=served.url, headers=headers, timeout=30)


def run_input(text: str = "Weather?", thread: str = "t-1", **more: Any) -> dict[str, Any]:
	body: dict[str, Any] = {
		"threadId": thread,
		"runId": uuid.uuid4().hex,
		"messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}] if text else [],
		"state": {},
		"tools": [],
		"context": [],
		"forwardedProps": {},
	}
	return {**body, **more}


async def post(http: httpx.AsyncClient, body: dict[str, Any]) -> tuple[int, Frames | str]:
	async with http.stream("POST", "/agui/Helper", json=body) as response:
		text = (await response.aread()).decode()
	if response.status_code != 200:
		return response.status_code, text
	return 200, [json.loads(f.removeprefix("data: ")) for f in text.split("\n\n") if f.strip()]


async def stream(http: httpx.AsyncClient, body: dict[str, Any]) -> Frames:
	status, frames = await post(http, body)
	assert status == 200 and isinstance(frames, list), frames
	protocol_order(frames)
	await verified(frames)
	return frames


def interrupt_of(frames: Frames) -> dict[str, Any]:
	outcome = frames[-1]["outcome"]
	assert outcome["type"] == "interrupt", frames[-1]
	(interrupt,) = outcome["interrupts"]
	return dict(interrupt)


def resume(interrupt: dict[str, Any], payload: Any, thread: str = "t-1") -> dict[str, Any]:
	entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}
	return run_input("", thread=thread, resume=[entry])


async def test_a_question_parked_on_one_server_is_answered_on_another(tmp_path: Path) -> None:
	"""Server A's run asks; B takes the answer and the run ends there, its stream conforming;
	the answer again, on A or B, is 409: nothing waits any more."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async with (
		server(model, tmp_path) as (a, _),
		server(model, tmp_path) as (b, _),
		client(a) as on_a,
		client(b) as on_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		done = await stream(on_b, resume(asked, "Oslo"))
		assert done[-1]["type"] == "RUN_FINISHED" and done[-1]["result"] == {
			"result": "Rain in Oslo."
		}
		for again in (on_a, on_b):
			status, _ = await post(again, resume(asked, "Bergen"))
			assert status == 409
	assert len(model.requests) == 2
	assert "Oslo" in json.dumps(model.requests[1].messages[-1].content)


async def test_an_approval_parked_on_one_server_is_decided_on_another(tmp_path: Path) -> None:
	"""The call waiting on A is approved from B: it runs once, there, and the run ends."""
	LOOKED.clear()
	model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])
	options = {"approve": True, "decideApprovals": True}
	async with (
		server(model, tmp_path, **options) as (a, _),
		server(model, tmp_path, **options) as (b, _),
		client(a) as on_a,
		client(b) as on_b,
	):
		waiting = interrupt_of(await stream(on_a, run_input()))
		assert waiting["reason"] == "approval"
		done = await stream(on_b, resume(waiting, {"approved": True}))
		assert "TOOL_CALL_RESULT" in [e["type"] for e in done]
		assert done[-1]["result"] == {"result": "ok"}
		status, _ = await post(on_a, resume(waiting, {"approved": True}))
		assert status == 409
	assert LOOKED == ["Oslo"]


async def test_a_question_survives_a_restart_of_its_server(tmp_path: Path) -> None:
	"""The server stops while its run waits; started again on the same store, it takes the answer."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async with server(model, tmp_path) as (a, _), client(a) as on_a:
		asked = interrupt_of(await stream(on_a, run_input()))
	async with server(model, tmp_path) as (again, _), client(again) as http:
		done = await stream(http, resume(asked, "Oslo"))
		assert done[-1]["result"] == {"result": "Rain in Oslo."}
	assert len(model.requests) == 2


async def test_a_thread_is_its_callers_on_every_server(tmp_path: Path) -> None:
	"""web's resume, on B, of crm's interrupt (crm's threadId) is 409 and runs nothing; crm's
	own on B goes on."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async with (
		server(model, tmp_path) as (a, _),
		server(model, tmp_path) as (b, _),
		client(a) as crm_a,
		client(b) as crm_b,
		client(b, WEB) as web_b,
	):
		asked = interrupt_of(await stream(crm_a, run_input()))
		status, body = await post(web_b, resume(asked, "Paris"))
		assert status == 409 and "no run waiting" in str(body)
		assert len(model.requests) == 1
		done = await stream(crm_b, resume(asked, "Oslo"))
		assert done[-1]["result"] == {"result": "Rain in Oslo."}


async def test_resumes_of_one_interrupt_racing_on_two_servers_go_on_once(tmp_path: Path) -> None:
	"""Six resumes of one question at once, three on each server: one run goes on; each other
	request is 409 or told the interrupt was answered; the model is asked once more."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "ok"}), finish("twice")])
	async with (
		server(model, tmp_path) as (a, _),
		server(model, tmp_path) as (b, _),
		client(a) as on_a,
		client(b) as on_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		answers: list[tuple[int, Frames | str]] = []

		async def answer(http: httpx.AsyncClient) -> None:
			answers.append(await post(http, resume(asked, "Oslo")))

		async with anyio.create_task_group() as tg:
			for http in (on_a, on_b) * 3:
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


async def test_two_takes_of_one_park_found_at_once_go_on_once(tmp_path: Path) -> None:
	"""Two servers find the thread's parked run, then both take it: one does, the other not."""
	from openmolt_serve._agui_threads import Thread

	model = ScriptedModel([ask_human("Which city?")])
	async with (
		server(model, tmp_path) as (a, _),
		server(model, tmp_path) as (b, _),
		client(a) as on_a,
	):
		await stream(on_a, run_input())
		parks = [s.agui["Helper"].parks for s in (a, b)]
		found = [await p.find(Thread(), "crm", "t-1") for p in parks]
		assert all(f is not None for f in found)
		taken = [
			await p.take(Thread(), "crm", "t-1", f) for p, f in zip(parks, found, strict=True) if f
		]
		assert taken == [True, False]
		assert await parks[1].find(Thread(), "crm", "t-1") is None


async def test_a_new_message_on_another_server_gives_the_waiting_run_up(tmp_path: Path) -> None:
	"""B's new message on the thread cancels the run parked on A (in the run store): a late
	resume on A is 409, and the new message ran."""
	model = ScriptedModel([ask_human("Which city?"), finish("joke"), finish("never")])
	async with (
		server(model, tmp_path) as (a, om),
		server(model, tmp_path) as (b, _),
		client(a) as on_a,
		client(b) as on_b,
	):
		asked = interrupt_of(await stream(on_a, run_input()))
		fresh = await stream(on_b, run_input("Forget it: tell me a joke"))
		assert fresh[-1]["type"] == "RUN_FINISHED"
		store = om.run_store
		assert store is not None
		row = await store.run(asked["id"].split(":question:")[0])
		assert row is not None and row.status == "cancelled"
		status, _ = await post(on_a, resume(asked, "Oslo"))
		assert status == 409
	assert len(model.requests) == 2


async def test_a_run_another_surface_went_on_with_waits_for_nothing(tmp_path: Path) -> None:
	"""The run is answered from the store (as the run viewer does) after it parked: the thread's
	resume is 409, never a second resume of the step."""
	model = ScriptedModel([ask_human("Which city?"), finish("viewer"), finish("never")])
	async with server(model, tmp_path) as (a, om), client(a) as on_a:
		asked = interrupt_of(await stream(on_a, run_input()))
		store = om.run_store
		assert store is not None
		run_id = asked["id"].split(":question:")[0]
		state = await store.state(run_id)
		assert state is not None
		await a.agents["Helper"][0].resume(state, answer="Bergen")
		status, body = await post(on_a, resume(asked, "Oslo"))
		assert status == 409 and "no run waiting" in str(body)
	assert len(model.requests) == 2


async def test_a_store_that_cannot_be_read_is_503_and_runs_nothing(tmp_path: Path) -> None:
	"""The rows fail: the resume is 503 (try again), not a 409 that says nothing waits."""
	model = ScriptedModel([ask_human("Which city?"), finish("never")])
	async with server(model, tmp_path) as (a, _), client(a) as on_a:
		asked = interrupt_of(await stream(on_a, run_input()))
		rows = a.agui["Helper"].parks.rows
		assert rows is not None

		def down(*_: Any) -> bytes | None:
			raise OSError("disk I/O error")

		rows.get = down  # type: ignore[method-assign,assignment]  # the store down
		status, body = await post(on_a, resume(asked, "Oslo"))
		assert status == 503 and "try again" in str(body)
	assert len(model.requests) == 1


async def test_without_a_store_a_waiting_run_is_the_servers_own(tmp_path: Path) -> None:
	"""No run store, no durable store: the run waits in A's memory; B's resume is 409."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "ok"})])
	agents = []
	for _ in range(2):
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=model, instructions="Help.")
		park_questions(agent)
		agents.append(agent)
	triggers = Triggers.model_validate({"agui": {"callers": {"crm": {"token": CRM}}}})
	async with (
		TriggerServer([(agents[0], triggers)], port=0) as a,
		TriggerServer([(agents[1], triggers)], port=0) as b,
		client(a) as on_a,
		client(b) as on_b,
	):
		assert a.agui["Helper"].parks.rows is None
		asked = interrupt_of(await stream(on_a, run_input()))
		status, _ = await post(on_b, resume(asked, "Oslo"))
		assert status == 409
		done = await stream(on_a, resume(asked, "Oslo"))
		assert done[-1]["result"] == {"result": "ok"}
	for agent in agents:
		await OpenMolt.of(agent).aclose()


async def test_a_run_waiting_for_an_account_goes_on_from_another_server(tmp_path: Path) -> None:
	"""A's run waits for its user's account; once connected, B's resume with the authorization
	interrupt makes it go on there; the interrupt's secret link never reaches the store's row."""
	from tests.serve.test_serve_a2a_accounts import SECRET, Consent, me

	model = ScriptedModel([call_tool("local.me"), finish({"result": "You are ada."})])
	consents = [Consent(), Consent()]
	servers = []
	for consent in consents:
		om = OpenMolt(
			entry_points=False,
			run_store=tmp_path / "runs.db",
			integrations={"mail": {"clientSecret": SECRET}},
		)
		agent = om.create_agent(name="Helper", model=model, tools=[me], capabilities=[consent])
		servers.append(agent)
	triggers = Triggers.model_validate({"agui": {"callers": {"crm": {"token": CRM}}}})
	async with (
		TriggerServer([(servers[0], triggers)], port=0) as a,
		TriggerServer([(servers[1], triggers)], port=0) as b,
		client(a) as on_a,
		client(b) as on_b,
	):
		waiting = interrupt_of(await stream(on_a, run_input("Who am I?")))
		assert waiting["reason"] == "authorization"
		consents[1].connected = True  # the user connected the account (B sees it)
		done = await stream(on_b, resume(waiting, {}))
		assert done[-1]["result"] == {"result": "You are ada."}
	kept = _bytes_of(tmp_path, "runs.db*")  # with the -wal
	assert kept and SECRET.encode() not in kept
	for agent in servers:
		await OpenMolt.of(agent).aclose()


def _bytes_of(folder: Path, pattern: str) -> bytes:
	return b"".join(f.read_bytes() for f in sorted(folder.glob(pattern)))
