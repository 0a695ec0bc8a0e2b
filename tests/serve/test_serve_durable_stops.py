"""A durable run a protocol's caller stops (AG-UI's client leaving, A2A's CancelTask) stops.

On a durable store (openmolt-dbos, SQLite) a trigger's run is a workflow this process waits for:
cancelling the wait alone left the workflow going, its next steps run for no one, and the AG-UI
thread freed while the run still appended to it. The stop cancels the run where it is kept
(`OpenMolt.cancel`), and the caller hears of it once the run has stopped. A server that stops
still leaves its durable runs to recover (`test_a_stopping_server_leaves_a_durable_run_to_recover`).

These start real DBOS engines, so they run in the "dbos-shared" xdist group, one after another.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _serve_fakes import restart
from a2a.helpers.proto_helpers import get_text_parts
from a2a.types import CancelTaskRequest, GetTaskRequest, TaskState

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from tests.serve.test_serve_a2a import client_for, message
from tests.serve.test_serve_agui import TOKEN, run, run_input

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("dbos-shared"), pytest.mark.timeout(120)]

A2A_TOKEN = "a2a-token-for-tests-0123456789"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[str]:
	yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
	await restart()


class Slow:
	"""A tool that takes ``seconds`` (2), and says whether it was stopped."""

	def __init__(self, seconds: float = 2) -> None:
		self.seconds = seconds
		self.entered = anyio.Event()
		self.ended = anyio.Event()
		self.stopped = False

	def tool(self) -> Any:
		@tool(labels=[], name="slow")
		async def slow() -> str:
			"""Take a while."""
			self.entered.set()
			try:
				await anyio.sleep(self.seconds)
			except BaseException:
				self.stopped = True
				raise
			finally:
				self.ended.set()
			return "late"

		return slow


async def status(om: OpenMolt, agent: str) -> list[str]:
	assert om.durability is not None
	return [row["status"] for row in await om.durability.runs(agent=agent)]


async def test_an_agui_client_that_leaves_stops_its_durable_run(store: str) -> None:
	"""The call in flight is stopped, no model call follows, the run is cancelled in the store,
	and the thread is busy until it has stopped; the next message runs."""
	slow = Slow()
	om = OpenMolt(entry_points=False, durability=store)
	model = ScriptedModel([call_tool("local.slow"), finish("went on"), finish("second")])
	agent = om.create_agent(name="Helper", model=model, tools=[slow.tool()])
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as client,
	):
		async with client.stream("POST", "/agui/Helper", json=run_input("go")) as response:
			async for line in response.aiter_lines():
				if "TOOL_CALL_START" in line:
					break  # the client leaves while the tool runs
		thread = server.agui["Helper"].threads["t-1"]
		with anyio.fail_after(10):
			while thread.busy:  # noqa: ASYNC110  # the thread says nothing when it is free
				await anyio.sleep(0.02)
		assert slow.ended.is_set() and slow.stopped  # free only once the run has stopped
		await anyio.sleep(2.5)  # the tool's time, and more: nothing of the run goes on
		assert len(model.requests) == 1
		assert await status(om, "Helper") == ["cancelled"]
		again = await run(client, run_input("again"))
	await om.aclose()
	assert again[-1].type.value == "RUN_FINISHED"
	assert len(model.requests) == 2


async def test_an_a2a_cancel_stops_a_working_durable_run(store: str) -> None:
	"""CancelTask on a working task cancels its durable run: the call in flight stops, nothing
	follows, the store says cancelled, and the task is canceled (never failed)."""
	slow = Slow()
	om = OpenMolt(entry_points=False, durability=store)
	model = ScriptedModel([call_tool("local.slow"), finish("went on")])
	agent = om.create_agent(name="Helper", model=model, tools=[slow.tool()])
	triggers = Triggers.model_validate({"a2a": {"token": A2A_TOKEN}})
	headers = {"Authorization": f"Bearer {A2A_TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(headers=headers, timeout=20) as http,
	):
		client = await client_for(f"{server.url}/a2a/Helper", streaming=True, http=http)
		task_id = ""
		async for response in client.send_message(message("go")):
			if response.HasField("task"):
				task_id = response.task.id
			if response.HasField("status_update"):
				task_id = response.status_update.task_id
				notes = get_text_parts(response.status_update.status.message.parts)
				if "calling local.slow" in notes:
					break
		canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
		assert canceled.status.state == TaskState.TASK_STATE_CANCELED
		assert slow.ended.is_set() and slow.stopped  # stopped before the cancel answered
		await anyio.sleep(2.5)
		task = await client.get_task(GetTaskRequest(id=task_id))
		states = [m.parts[0].text for m in task.history if m.parts]
		assert await status(om, "Helper") == ["cancelled"]
	await om.aclose()
	assert task.status.state == TaskState.TASK_STATE_CANCELED
	assert not any("failed" in s or "error" in s for s in states), states
	assert len(model.requests) == 1


async def test_a_stopping_server_leaves_a_durable_run_to_recover(store: str) -> None:
	"""A server that stops while an AG-UI client reads a durable run cancels nothing in the
	store: the run is left to recover, as every run a stop cuts short."""
	slow = Slow(seconds=10)  # still running when the server's graceful shutdown ends
	om = OpenMolt(entry_points=False, durability=store)
	model = ScriptedModel([call_tool("local.slow"), finish("went on")])
	agent = om.create_agent(name="Helper", model=model, tools=[slow.tool()])
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	ended = anyio.Event()

	async def read(url: str) -> None:
		try:
			async with (
				httpx.AsyncClient(headers=headers, timeout=20) as client,
				client.stream("POST", f"{url}/agui/Helper", json=run_input()) as response,
			):
				async for _ in response.aiter_lines():
					pass
		except httpx.HTTPError:
			pass
		finally:
			ended.set()

	async with anyio.create_task_group() as tg:
		async with TriggerServer([(agent, triggers)], port=0) as server:
			tg.start_soon(read, server.url)
			with anyio.fail_after(10):
				await slow.entered.wait()
		with anyio.fail_after(10):
			await ended.wait()  # the server stopped under its reader
	assert "cancelled" not in await status(om, "Helper")
	await om.aclose()
