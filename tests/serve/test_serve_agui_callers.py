"""AG-UI callers with tokens of their own: a thread is its caller's; a new message on a thread
whose run waits gives that run up everywhere it is kept."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event, EventType, RunAgentInput, UserMessage
from pydantic import TypeAdapter

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CRM = "crm-agui-token-0123456789abcdef"
WEB = "web-agui-token-0123456789abcdef"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@asynccontextmanager
async def serving(
	model: ScriptedModel, om: OpenMolt | None = None, **agui: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient, OpenMolt]]:
	"""Helper over AG-UI to the callers crm and web: a client for each."""
	om = om or OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model, instructions="Help.")
	park_questions(agent)
	callers = {"crm": {"token": CRM}, "web": {"token": WEB}}
	triggers = Triggers.model_validate({"agui": {"callers": callers, **agui}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with (
			httpx.AsyncClient(base_url=server.url, timeout=20, headers=_auth(CRM)) as crm,
			httpx.AsyncClient(base_url=server.url, timeout=20, headers=_auth(WEB)) as web,
		):
			yield crm, web, om


def _auth(token: str) -> dict[str, str]:
	return {"Authorization": f"Bearer {token}"}


def run_input(text: str = "hi", thread: str = "t-1", **more: Any) -> dict[str, Any]:
	given = RunAgentInput(
		thread_id=thread,
		run_id=uuid.uuid4().hex,
		messages=[UserMessage(id=uuid.uuid4().hex, role="user", content=text)],
		**more,
	)
	return given.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(client: httpx.AsyncClient, body: dict[str, Any]) -> list[Any]:
	async with client.stream("POST", "/agui/Helper", json=body) as response:
		assert response.status_code == 200, await response.aread()
		text = (await response.aread()).decode()
	frames = [f for f in text.split("\n\n") if f.strip()]
	return [EVENTS.validate_json(f.removeprefix("data: ")) for f in frames]


def interrupt_of(events: list[Any]) -> Any:
	finished = events[-1]
	assert finished.type == EventType.RUN_FINISHED
	outcome = finished.outcome.root if hasattr(finished.outcome, "root") else finished.outcome
	(interrupt,) = outcome.interrupts
	return interrupt


def answer(interrupt: Any, text: str, thread: str = "t-1") -> dict[str, Any]:
	entry = {"interruptId": interrupt.id, "status": "resolved", "payload": text}
	return run_input("", thread=thread, resume=[entry])


def said(model: ScriptedModel, index: int) -> str:
	return json.dumps([m.content for m in model.requests[index].messages])


async def test_a_thread_id_is_each_callers_own_conversation() -> None:
	"""web's run on crm's threadId does not read crm's turn; crm's next run on it does."""
	model = ScriptedModel([finish("noted"), finish("nothing"), finish("alpha")])
	async with serving(model) as (crm, web, _):
		await run(crm, run_input("the code word is alpha"))
		await run(web, run_input("what is the code word?"))
		await run(crm, run_input("and the code word?"))
	assert "alpha" not in said(model, 1)  # web's run
	assert "code word is alpha" in said(model, 2)


async def test_another_caller_cannot_answer_a_threads_interrupt() -> None:
	"""web's resume of crm's question (its interrupt id, crm's threadId) is 409 and runs
	nothing; crm's own answer then goes on with the run."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async with serving(model) as (crm, web, _):
		interrupt = interrupt_of(await run(crm, run_input("Weather?")))
		refused = await web.post("/agui/Helper", json=answer(interrupt, "Paris"))
		assert refused.status_code == 409
		assert "resume" in refused.json()["error"]
		assert len(model.requests) == 1
		resumed = await run(crm, answer(interrupt, "Oslo"))
		assert resumed[-1].result == {"result": "Rain in Oslo."}
	assert "Oslo" in said(model, 1)


async def test_the_rate_limit_is_each_callers_own() -> None:
	"""At one run a minute, crm's second request is 429 while web's first runs."""
	model = ScriptedModel([finish("one"), finish("two")])
	async with serving(model, rateLimit=1) as (crm, web, _):
		await run(crm, run_input("one"))
		assert (await crm.post("/agui/Helper", json=run_input("again"))).status_code == 429
		assert (await run(web, run_input("two")))[-1].type == EventType.RUN_FINISHED


async def test_a_new_message_on_a_waiting_thread_cancels_its_run_in_the_store(
	tmp_path: Path,
) -> None:
	"""The run parked on a question is cancelled in the run store (the viewer offers no answer
	to it); the old interrupt's resume is 409; the new message runs."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	model = ScriptedModel([ask_human("Which city?"), finish("new run"), finish("never")])
	async with serving(model, om) as (crm, _, _):
		interrupt = interrupt_of(await run(crm, run_input("Weather?")))
		store = om.run_store
		assert store is not None
		(parked,) = [r for r in await store.runs() if r.status == "human_input_required"]
		fresh = await run(crm, run_input("Forget it: tell me a joke"))
		assert fresh[-1].type == EventType.RUN_FINISHED
		row = await store.run(parked.run_id)
		assert row is not None
		assert (row.status, row.pending) == ("cancelled", None)
		assert "new message" in (row.error or "")
		late = await crm.post("/agui/Helper", json=answer(interrupt, "Oslo"))
		assert late.status_code == 409
	assert len(model.requests) == 2
	await om.aclose()


@pytest.fixture
async def durable(tmp_path: Path) -> AsyncIterator[str]:
	yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()
	DBOS.destroy()
	_engine.reset_engine()


@pytest.mark.xdist_group("dbos-shared")
async def test_a_new_message_on_a_waiting_thread_cancels_its_durable_run(durable: str) -> None:
	"""The durable run parked on a question is cancelled by the engine: no longer pending, and
	an answer to it (``openmolt answer``) is refused."""
	from openmolt_core.errors import OpenMoltError

	om = OpenMolt(durability=durable, entry_points=False)
	model = ScriptedModel([ask_human("Which city?"), finish("new run")])
	async with serving(model, om) as (crm, _, _):
		await run(crm, run_input("Weather?"))
		(parked,) = await om.pending()
		await run(crm, run_input("Forget it"))
		assert [p.run_id for p in await om.pending()] == []
		with pytest.raises(OpenMoltError):
			await om.answer(parked.run_id, "Oslo")
	await om.aclose()
