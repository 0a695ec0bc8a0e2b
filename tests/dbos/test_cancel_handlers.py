"""A run cancelled from another process while it waits on the application's code stops there.

Approval, human-input and in-doubt questions, memory callbacks, the capabilities' journaled
decisions and a capability's own steps each run in a step. DBOS stops a step under way on a
cancel only if it is preemptible, and these were not: a handler waiting for a person kept the run
alive after a cancel from another process (whose ``om.cancel`` waited 10 s for the worker to
confirm, then warned), and acted on its answer once it came. A handler that answered before the
cancel is journaled as before: a recovered run does not ask it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from _durable import stop_process
from _harness import make_store

from openmolt import Capability, OpenMolt
from openmolt_core.commands import CallTool
from openmolt_core.errors import ConfigurationError
from openmolt_core.hooks import PROCEED, Run, ToolDecision, ToolSpec
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_memory
from openmolt_core.tools import cancelled, tool

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[str]:
	"""A fresh SQLite store; the engine is shut down after."""
	stores = make_store("sqlite", tmp_path)
	store = next(stores)
	try:
		yield store
	finally:
		await stop_process()


async def _cancel_elsewhere(om: OpenMolt, run_id: str) -> None:
	"""Cancel the run in the store, as `om.cancel` in another process does, and see it stop.

	The worker records that the run stopped (what the other process's `om.cancel` waits for)
	within a few seconds (DBOS polls once a second), and the run's status is cancelled.
	"""
	from openmolt_dbos._workers import stopped

	engine = om.durability.engine  # type: ignore[union-attr]
	await engine.client().cancel_workflow_async(run_id)  # not this process's stop
	with anyio.fail_after(10):
		while not await anyio.to_thread.run_sync(stopped, engine.tables, run_id):  # noqa: ASYNC110  # a row in the store
			await anyio.sleep(0.05)
	with pytest.raises(ConfigurationError, match="was cancelled"):
		await om.result(run_id)
	runs = await om.durability.runs()  # type: ignore[union-attr]
	assert [r["status"] for r in runs] == ["cancelled"]


async def _cancel_once_asked(agent: Any, task: str, began: anyio.Event) -> None:
	"""Start a run of ``agent``, wait until the code it waits on is asked, cancel it elsewhere."""
	handle = await agent.start(task)
	with anyio.fail_after(30):
		await began.wait()
	await _cancel_elsewhere(agent.om, handle.run_id)


def _pay(paid: list[int]) -> Any:
	@tool(labels=["outbound"])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		paid.append(amount)
		return "paid"

	return pay


def _waiting(log: list[str], began: anyio.Event, answer: Any = "yes") -> Any:
	"""An async handler that waits for a person who does not answer in time."""

	async def handler(*args: Any, **kwargs: Any) -> Any:
		log.append("asked")
		began.set()
		try:
			await anyio.sleep(60)
		except BaseException:
			log.append("cancelled")
			raise
		log.append("answered")
		return answer

	return handler


async def test_a_cancel_from_elsewhere_stops_a_human_input_handler_waiting(url: str) -> None:
	"""The person's handler is cancelled where it waits; the run ends cancelled, does nothing more."""
	log: list[str] = []
	paid: list[int] = []
	began = anyio.Event()
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([ask_human("Pay?"), call_tool("local.pay", amount=1), finish("paid")])
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[_pay(paid)],
		on_human_input_request=_waiting(log, began),
	)
	try:
		await _cancel_once_asked(agent, "pay", began)
		assert log == ["asked", "cancelled"] and paid == [] and model.calls == 1
	finally:
		await om.aclose()


async def test_a_cancel_from_elsewhere_stops_a_sync_approval_handler_waiting(sqlite: str) -> None:
	"""A sync approver (in a worker thread) sees `cancelled()`; the call it was asked about never runs."""
	log: list[str] = []
	paid: list[int] = []
	began = threading.Event()

	def approve(request: Any) -> Any:
		log.append("asked")
		began.set()
		deadline = time.monotonic() + 60
		while not cancelled() and time.monotonic() < deadline:
			time.sleep(0.02)  # a person at a prompt
		log.append("cancelled" if cancelled() else "answered")
		return request.approve()

	om = OpenMolt(durability=sqlite, entry_points=False)
	model = ScriptedModel([call_tool("local.pay", amount=1), finish("paid")])
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[_pay(paid)],
		requires_approval=["local.pay"],
		on_approval_request=approve,
	)
	try:
		handle = await agent.start("pay")
		with anyio.fail_after(30):
			while not began.is_set():  # noqa: ASYNC110  # set in the handler's thread
				await anyio.sleep(0.02)
		await _cancel_elsewhere(om, handle.run_id)
		with anyio.fail_after(5):
			while len(log) < 2:  # noqa: ASYNC110  # written in the handler's thread
				await anyio.sleep(0.02)
		assert log == ["asked", "cancelled"] and paid == [] and model.calls == 1
	finally:
		await om.aclose()


async def test_a_cancel_from_elsewhere_stops_a_memory_callback_under_way(sqlite: str) -> None:
	"""A memory ``on_update`` writing to a slow store is cancelled; the run ends cancelled."""
	log: list[str] = []
	paid: list[int] = []
	began = anyio.Event()
	om = OpenMolt(durability=sqlite, entry_points=False)
	model = ScriptedModel(
		[update_memory("likes tea"), call_tool("local.pay", amount=1), finish("paid")]
	)
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[_pay(paid)],
		memory={"short_term": {"data": "", "on_update": _waiting(log, began, None)}},
	)
	try:
		await _cancel_once_asked(agent, "pay", began)
		assert log == ["asked", "cancelled"] and paid == [] and model.calls == 1
	finally:
		await om.aclose()


async def test_a_cancel_from_elsewhere_stops_a_sub_agent_s_handler_waiting(sqlite: str) -> None:
	"""A sub-agent asks its person inside its caller's tool step: the cancel stops it there too."""
	log: list[str] = []
	paid: list[int] = []
	began = anyio.Event()
	om = OpenMolt(durability=sqlite, entry_points=False)
	clerk = om.create_agent(
		name="Clerk",
		model=ScriptedModel([ask_human("Pay?"), call_tool("local.pay", amount=1), finish("ok")]),
		tools=[_pay(paid)],
		on_human_input_request=_waiting(log, began),
	)
	boss = om.create_agent(
		name="Boss",
		model=ScriptedModel([call_tool("local.Clerk", task="pay"), finish("ok")]),
		tools=[clerk],
	)
	try:
		await _cancel_once_asked(boss, "go", began)
		assert log == ["asked", "cancelled"] and paid == []
	finally:
		await om.aclose()


@pytest.mark.parametrize("event", ["tool:response", "llmOutput"])
async def test_a_cancel_from_elsewhere_stops_a_slow_async_event_handler(
	url: str, event: str
) -> None:
	"""An async event handler of the run (outside any step) is cancelled where it waits, and the
	run begins nothing after it.

	DBOS looks for a cancel only in a preemptible step: a handler runs in the workflow's own
	code, so the cancel reached it only once it returned (``om.cancel`` elsewhere waited 10 s
	for the worker to confirm, then warned)."""
	log: list[str] = []
	paid: list[int] = []
	began = anyio.Event()
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.pay", amount=1), call_tool("local.pay", amount=2), finish("paid")]
	)
	agent = om.create_agent(name="Payer", model=model, tools=[_pay(paid)])
	waiting = _waiting(log, began)

	async def handler(seen: Any) -> None:
		if not began.is_set():  # the first one waits; a replay or a later one goes by
			await waiting()

	agent.on(event, handler)
	try:
		await _cancel_once_asked(agent, "pay", began)
		assert log == ["asked", "cancelled"] and model.calls == 1
		assert paid == ([1] if event == "tool:response" else [])
	finally:
		await om.aclose()


class _Asks(Capability):
	"""Asks a person before each call (journaled by the loop under ``hook:``), or audits each
	result in a step of its own (``acme-audit:``, as a plugin might)."""

	name: ClassVar[str] = "acme-asks"

	def __init__(self, log: list[str], began: anyio.Event, *, own_step: bool) -> None:
		self.wait = _waiting(log, began, "fine")
		self.own_step = own_step

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		if not self.own_step:
			await self.wait()
		return PROCEED

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any]:
		if not self.own_step:
			return entry
		seen = await run.port.step(f"acme-audit:{run.step}:{run.command_index}", self.wait)
		return {**entry, "audit": seen}

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		return [f"acme-audit:{run.step}:{run.command_index}"] if self.own_step else ()


@pytest.mark.parametrize("own_step", [False, True], ids=["hook", "own-step"])
async def test_a_cancel_from_elsewhere_stops_a_capability_waiting(
	sqlite: str, own_step: bool
) -> None:
	"""A capability's journaled decision (``hook:``) or its own step is cancelled where it waits."""
	log: list[str] = []
	paid: list[int] = []
	began = anyio.Event()
	om = OpenMolt(durability=sqlite, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.pay", amount=1), call_tool("local.pay", amount=2), finish("paid")]
	)
	agent = om.create_agent(
		name="Payer",
		model=model,
		tools=[_pay(paid)],
		capabilities=[_Asks(log, began, own_step=own_step)],
	)
	try:
		await _cancel_once_asked(agent, "pay", began)
		assert log == ["asked", "cancelled"] and model.calls == 1
		assert paid == ([1] if own_step else [])  # the audit follows the call; the hook precedes
	finally:
		await om.aclose()


RUN = "cancel-in-doubt-1"


def test_a_cancel_from_elsewhere_stops_the_in_doubt_question(tmp_path: Path) -> None:
	"""Recovered with a call in doubt, the run asks the person's handler whether it happened; a
	cancel while the handler waits stops it, and the call is not made again."""
	stores = make_store("sqlite", tmp_path)
	store = {"url": next(stores), "worker_id": "doubt-worker", "heartbeat": 0.2, "lapse": 1.0}
	paid: list[int] = []
	log: list[str] = []

	def agent(om: OpenMolt, model: ScriptedModel, handler: Any) -> Any:
		@tool(labels=["outbound"], in_doubt="ask")
		async def pay(amount: int) -> str:
			"""Pay.

			Args:
				amount: How much.
			"""
			paid.append(amount)
			await anyio.sleep(60)  # the bank confirms; the worker dies first
			return "paid"

		return om.create_agent(
			name="Payer", model=model, tools=[pay], on_human_input_request=handler
		)

	async def first() -> None:
		om = OpenMolt(durability=store, entry_points=False)
		model = ScriptedModel([call_tool("local.pay", amount=1), finish("paid")])
		payer = agent(om, model, _waiting(log, anyio.Event()))  # not asked here
		try:
			await payer.start("pay", run_id=RUN)
			with anyio.fail_after(30):
				while not paid:  # noqa: ASYNC110  # the tool has begun
					await anyio.sleep(0.02)
		finally:
			await stop_process()  # as a worker that dies: the call is in doubt

	async def second() -> None:
		began = anyio.Event()
		om = OpenMolt(durability=store, entry_points=False)
		model = ScriptedModel([finish("paid")])
		agent(om, model, _waiting(log, began))
		try:
			await om.durability.start()  # type: ignore[union-attr]  # recovers the run
			with anyio.fail_after(30):
				await began.wait()
			await _cancel_elsewhere(om, RUN)
			assert model.calls == 0
		finally:
			await stop_process()

	anyio.run(first)
	anyio.run(second)
	assert paid == [1] and log == ["asked", "cancelled"]


def test_handlers_that_answered_are_not_asked_again_when_the_run_is_recovered(
	tmp_path: Path,
) -> None:
	"""Preemptible, the handlers' steps are journaled as before: a recovered run reads them."""
	stores = make_store("sqlite", tmp_path)
	store = {"url": next(stores), "worker_id": "answered-worker", "heartbeat": 0.2, "lapse": 1.0}
	asked: list[str] = []
	paid: list[int] = []

	def agent(om: OpenMolt, model: ScriptedModel) -> Any:
		async def ask(question: str) -> str:
			asked.append("human")
			return "yes"

		def approve(request: Any) -> Any:
			asked.append("approval")
			return request.approve()

		async def remember(text: str) -> None:
			asked.append("memory")

		return om.create_agent(
			name="Payer",
			model=model,
			tools=[_pay(paid)],
			requires_approval=["local.pay"],
			on_approval_request=approve,
			on_human_input_request=ask,
			memory={"short_term": {"data": "", "on_update": remember}},
		)

	script = [ask_human("Pay?"), update_memory("pays"), call_tool("local.pay", amount=1)]

	async def first() -> None:
		hung = anyio.Event()

		async def hang(request: Any) -> Any:
			hung.set()
			await anyio.sleep_forever()

		om = OpenMolt(durability=store, entry_points=False)
		try:
			await agent(om, ScriptedModel([*script, hang])).start("pay", run_id=RUN)
			with anyio.fail_after(30):
				await hung.wait()  # every handler answered; the last model call hangs
		finally:
			await stop_process()

	async def second() -> Any:
		om = OpenMolt(durability=store, entry_points=False)
		agent(om, ScriptedModel([finish("paid")]))  # the journal answers the earlier calls
		try:
			await om.durability.start()  # type: ignore[union-attr]  # recovers the run
			with anyio.fail_after(60):
				return await om.result(RUN)
		finally:
			await stop_process()

	anyio.run(first)
	assert asked == ["human", "memory", "approval"] and paid == [1]
	result = anyio.run(second)
	assert result is not None and result.status == "success"
	assert asked == ["human", "memory", "approval"] and paid == [1]
