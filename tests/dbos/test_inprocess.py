"""Durable runs in one process: the same API as in-process runs, journaled on DBOS."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_memory, wait
from openmolt_core.tools import ToolContext
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio


def _steps(store: str, run_id: str) -> list[tuple[int, str]]:
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		return [
			(s["function_id"], s["function_name"])
			for s in client.list_workflow_steps(run_id, load_output=False)
		]
	finally:
		client.destroy()


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


async def test_a_durable_run_journals_each_step_under_its_key(url: str, tmp_path: Path) -> None:
	"""A run is the workflow of its run id; model calls, tools, memory and waits are its steps."""
	seen: list[Any] = []

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		seen.append((a, b))
		return a + b

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[
			[update_memory("noted"), call_tool("local.add", a=1, b=2)],
			[wait(0.1), finish(result="3")],
		]
	)
	agent = om.create_agent(
		name="Adder",
		model=model,
		tools=[add],
		memory={"short_term": {"data": "", "on_update": lambda data: seen.append(data)}},
	)
	result = await agent.run("add")
	await om.aclose()
	assert result.ok and result.output == {"result": "3"}
	assert seen == ["noted", (1, 2)]
	names = [name for _, name in _steps(url, result.state.run_id)]
	for key in ("model:1", "memory:1:0", "tool:1:1:local.add", "model:2"):
		assert key in names
	assert any("sleep" in n.lower() for n in names)
	assert names.index("memory:1:0") < names.index("tool:1:1:local.add") < names.index("model:2")


async def test_concurrent_calls_take_their_steps_in_command_order(url: str) -> None:
	"""Calls that finish in reverse order still hold the step ids of their command order."""

	async def slow(n: int) -> int:
		"""Return n after a delay that shrinks with n.

		Args:
			n: A number.
		"""
		await anyio.sleep(0.3 - n * 0.1)
		return n

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Batch",
		model=ScriptedModel(
			[[call_tool("local.slow", n=i) for i in range(3)], finish(result="ok")]
		),
		tools=[slow],
	)
	result = await agent.run("go")
	await om.aclose()
	steps = dict((name, fid) for fid, name in _steps(url, result.state.run_id))
	ids = [steps[f"tool:1:{i}:local.slow"] for i in range(3)]
	assert ids == sorted(ids)
	results = json.loads(result.state.messages[2].content)["results"]
	assert [r["result"] for r in results] == [0, 1, 2]


async def test_a_parked_run_returns_then_resumes_with_the_answer(url: str) -> None:
	"""run() returns human_input_required while the workflow waits; resume() answers and goes on."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([ask_human("Which colour?"), finish(result="blue it is")])
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=park)
	parked = await agent.run("paint")
	assert parked.status == "human_input_required"
	assert parked.state.pending is not None
	pending = await om.pending()
	assert [(p.run_id, p.agent, p.question) for p in pending] == [
		(parked.state.run_id, "Asker", "Which colour?")
	]
	assert (await om.result(parked.state.run_id, wait=False)).status == "human_input_required"
	done = await agent.resume(parked.state, answer="blue")
	assert done.ok and done.output == {"result": "blue it is"}
	assert "blue" in model.requests[1].messages[-1].content
	assert await om.pending() == []
	with pytest.raises(ConfigurationError, match="waits for no answer"):
		await om.answer(parked.state.run_id, "red")
	with pytest.raises(ConfigurationError, match="no durable run"):
		await om.answer("nope", "red")
	await om.aclose()


async def test_results_come_back_as_runresults_with_the_output_model(url: str) -> None:
	"""om.result rebuilds the result, validating the output with the agent's output model."""
	from pydantic import BaseModel

	class Answer(BaseModel):
		text: str

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Typed", model=ScriptedModel([finish(text="hi")]), output_schema=Answer
	)
	result = await agent.run("x")
	fetched = await om.result(result.state.run_id)
	await om.aclose()
	assert isinstance(result.output, Answer) and isinstance(fetched.output, Answer)
	assert fetched.output.text == "hi"
	assert fetched.state.messages == result.state.messages


async def test_the_file_store_is_persistent_beside_the_sqlite_file(tmp_path: Path) -> None:
	"""With durability on, files outlive the process: beside the SQLite file by default."""
	from openmolt_dbos import parse_settings

	settings = parse_settings(str(tmp_path / "runs.sqlite"))
	assert settings.store_files_dir == tmp_path / "runs.sqlite.files"
	custom = parse_settings({"url": str(tmp_path / "r.sqlite"), "files_dir": str(tmp_path / "f")})
	assert custom.store_files_dir == tmp_path / "f"


async def test_one_process_uses_one_store(url: str, tmp_path: Path) -> None:
	"""A second store in the same process is refused with a clear error."""
	om = OpenMolt(durability=url, entry_points=False)
	om.create_agent(name="A", model=ScriptedModel([finish(result="x")]))
	other = OpenMolt(durability=str(tmp_path / "other.sqlite"), entry_points=False)
	with pytest.raises(ConfigurationError, match="one store"):
		other.create_agent(name="B", model=ScriptedModel([finish(result="x")]))
	await om.aclose()


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_durable_runs_under_trio_say_they_need_asyncio(tmp_path: Path) -> None:
	"""DBOS runs on asyncio only: under trio a durable run fails with a clear error."""
	om = OpenMolt(durability=str(tmp_path / "runs.sqlite"), entry_points=False)
	agent = om.create_agent(name="Trio", model=ScriptedModel([finish(result="x")]))
	try:
		with pytest.raises(ConfigurationError, match="asyncio"):
			await agent.run("x")
		with pytest.raises(ConfigurationError, match="asyncio"):
			await om.pending()
	finally:
		reset_engine()


def test_the_core_never_imports_dbos_and_durability_imports_it_on_demand(tmp_path: Path) -> None:
	"""In a fresh interpreter: a run without durability loads no DBOS; durability=... does."""
	code = """
import sys, anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

async def main():
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(result="x")]))
	assert (await agent.run("x")).ok
	await om.aclose()
	print(sorted(m for m in sys.modules if m.split(".")[0] in ("dbos", "openmolt_dbos", "sqlalchemy")))
	om = OpenMolt(durability=sys.argv[1], entry_points=False)
	print("dbos" in sys.modules)
	om.create_agent(name="B", model=ScriptedModel([finish(result="x")]))
	print("dbos" in sys.modules)

anyio.run(main)
"""
	done = subprocess.run(
		[sys.executable, "-c", code, str(tmp_path / "runs.sqlite")],
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert done.returncode == 0, done.stderr
	assert done.stdout.split() == ["[]", "False", "True"]


async def test_a_finished_durable_run_goes_on_as_a_new_segment_of_its_run(url: str) -> None:
	"""run(history=state) of an ended run starts workflow <run id>+<steps>; its id is kept."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([call_tool("local.add", a=1, b=1), finish(result="2")])

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		return a + b

	agent = om.create_agent(name="Short", model=model, tools=[add], max_steps=1)
	first = await agent.run("add")
	assert first.status == "limit_reached"
	agent.max_steps = 5
	second = await agent.run(history=first.state)
	assert second.ok and second.state.run_id == first.state.run_id
	names = [n for _, n in _steps(url, f"{first.state.run_id}+1")]
	assert "model:2" in names and "model:1" not in names
	fetched = await om.result(first.state.run_id)
	assert fetched.ok and fetched.output == {"result": "2"}
	await om.aclose()


async def test_a_sqlite_store_is_in_wal_mode_and_read_by_others_during_a_run(
	tmp_path: Path,
) -> None:
	"""The store is switched to write-ahead logging, so other readers do not block a run."""
	import sqlite3

	from dbos import DBOS

	path = tmp_path / "runs.sqlite"
	reads: list[int] = []

	def count() -> int:
		"""Count the journaled steps from another connection, as `openmolt runs` would."""
		with sqlite3.connect(path, timeout=0.05) as reader:
			reader.execute("BEGIN")  # a read transaction held across the run's next commit
			reads.append(reader.execute("SELECT count(*) FROM operation_outputs").fetchone()[0])
			return reads[-1]

	om = OpenMolt(durability=str(path), entry_points=False)
	agent = om.create_agent(
		name="Reader",
		model=ScriptedModel(
			[call_tool("local.count"), call_tool("local.count"), finish(result="ok")]
		),
		tools=[count],
	)
	try:
		result = await agent.run("go")
		assert result.ok, result
		with sqlite3.connect(path) as conn:
			assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
		assert reads[1] > reads[0]  # the second read saw the steps committed after the first
	finally:
		await om.aclose()
		DBOS.destroy()
		reset_engine()


async def test_a_new_run_reads_no_journal_and_a_taken_run_id_is_attached_to(url: str) -> None:
	"""A workflow this process creates starts with nothing to replay; a taken id is not re-run."""
	from openmolt_dbos import _engine

	calls: list[int] = []

	def add(a: int, b: int) -> int:
		"""Add two numbers."""
		calls.append(a)
		return a + b

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Fresh",
		model=ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")] * 2),
		tools=[add],
	)
	await om.durability.start()  # type: ignore[union-attr]
	engine = _engine._ENGINE
	assert engine is not None
	client = engine.client()
	reads: list[str] = []
	list_steps = client.list_workflow_steps_async

	async def counted(wid: str, **kwargs: Any) -> Any:
		reads.append(wid)
		return await list_steps(wid, **kwargs)

	client.list_workflow_steps_async = counted  # type: ignore[method-assign,assignment]
	first = await agent.run("add")
	assert first.ok and calls == [1]
	assert first.state.run_id not in reads  # created by this start: its journal is empty
	assert not engine.created  # the first execution took its mark

	again = agent.new_state("add")
	again.run_id = first.state.run_id  # a new state under a run id that is taken
	second = await agent.run(history=again)
	assert second.ok and second.output == first.output
	assert calls == [1]  # attached to the finished workflow: nothing ran twice
	assert not engine.created
	await om.aclose()


async def test_start_returns_the_run_id_at_once_and_the_handle_s_result_waits(url: str) -> None:
	"""agent.start() records the run and returns; the run goes on; result() waits for it."""
	from openmolt_core.durability import RunHandle

	om = OpenMolt(durability=url, entry_points=False)
	gate = anyio.Event()
	called = anyio.Event()
	calls: list[str] = []

	async def slow(what: str) -> str:
		"""Wait for the gate.

		Args:
			what: Anything.
		"""
		calls.append(what)
		called.set()
		await gate.wait()
		return what

	model = ScriptedModel([call_tool("local.slow", what="x"), finish(result="done")])
	agent = om.create_agent(name="Bg", model=model, tools=[slow])
	handle = await agent.start("go", run_id="bg-run-1")
	assert isinstance(handle, RunHandle) and handle.run_id == "bg-run-1"
	assert await handle.result(wait=False) is None  # recorded, running in the background
	with anyio.fail_after(30):
		await called.wait()
	gate.set()
	result = await handle.result()
	assert result is not None and result.ok and result.output == {"result": "done"}
	assert result.state.run_id == "bg-run-1"
	assert (await om.result("bg-run-1")).output == {"result": "done"}
	again = await agent.start("go", run_id="bg-run-1")  # a taken id attaches: nothing reruns
	assert (await again.result()).output == {"result": "done"} and calls == ["x"]
	await om.aclose()


async def test_start_without_durability_says_what_to_do() -> None:
	"""In process, start() refuses with the fix (durability=..., or a task group)."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Bg", model=ScriptedModel([finish(result="x")]))
	with pytest.raises(ConfigurationError, match="durability"):
		await agent.start("go")


async def test_a_shutdown_right_after_a_run_ended_lets_its_outcome_be_recorded(
	url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""DBOS records a run's outcome in a thread after the workflow returns; closing the instance
	in that moment waits for the record instead of cancelling it (a run left pending would be
	run again by the next worker, and answer a resume with its old result)."""
	import time

	from dbos import DBOSClient
	from dbos._sys_db import SystemDatabase

	record = SystemDatabase.update_workflow_outcome

	def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
		time.sleep(0.5)  # the caller has its result; the instance closes meanwhile
		return record(self, *args, **kwargs)

	monkeypatch.setattr(SystemDatabase, "update_workflow_outcome", slow)
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Quick", model=ScriptedModel([finish(result="done")]))
	async with om:
		result = await agent.run("go")
	assert result.status == "success"
	monkeypatch.undo()
	client = DBOSClient(system_database_url=url)
	try:
		status = client.retrieve_workflow(result.state.run_id).get_status()
	finally:
		client.destroy()
	assert status.status == "SUCCESS"


async def test_a_run_a_live_worker_serves_is_not_migrated(url: str) -> None:
	"""--migrate moves only stranded runs: moved while it runs, a run would run in two places."""
	entered = anyio.Event()
	release = anyio.Event()
	calls: list[int] = []

	async def charge(amount: int) -> str:
		"""Charge an amount.

		Args:
			amount: How much.
		"""
		calls.append(amount)
		entered.set()
		await release.wait()
		return "charged"

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([call_tool("local.charge", amount=5), finish(result="ok")])
	agent = om.create_agent(name="Live", model=model, tools=[charge])
	try:
		handle = await agent.start("go")
		with anyio.fail_after(30):
			await entered.wait()
		with pytest.raises(ConfigurationError, match="not stranded"):
			await om.durability.migrate(handle.run_id)  # type: ignore[union-attr]
		await anyio.sleep(1.5)  # a second execution would have called it again by now
		release.set()
		done = await handle.result()
		assert done is not None and done.ok and calls == [5]
	finally:
		release.set()
		await om.aclose()


async def test_a_tool_result_too_deep_or_cyclic_is_journaled_cut(url: str) -> None:
	"""A result nested thousands deep, or one that contains itself, is cut before the journal:
	the durable run ends (it failed: the journal's pickling recursed past Python's limit)."""

	def deep(n: int) -> list[Any]:
		"""A list nested n levels deep.

		Args:
			n: Levels.
		"""
		value: list[Any] = []
		for _ in range(n):
			value = [value]
		return value

	def loop(name: str) -> dict[str, Any]:
		"""A node pointing at itself.

		Args:
			name: Its name.
		"""
		node: dict[str, Any] = {"name": name}
		node["next"] = node
		return node

	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel(
		[call_tool("local.deep", n=20_000), call_tool("local.loop", name="a"), finish("done")]
	)
	agent = om.create_agent(name="Deep", model=model, tools=[deep, loop])
	try:
		with anyio.fail_after(60):
			result = await agent.run("go")
		assert result.status == "success", result.error
		first = json.loads(model.requests[1].messages[-1].content)["results"][0]["result"]
		text = json.dumps(first)
		assert "levels deep: cut" in text and text.count("[") < 70
		second = json.loads(model.requests[2].messages[-1].content)["results"][0]["result"]
		assert second == {"name": "a", "next": "(a reference to a value that contains it: cut)"}
	finally:
		await om.aclose()


async def test_an_agent_run_inside_a_tool_without_its_parent_says_how(url: str) -> None:
	"""Started inside a durable step, a run was DBOS's wordless AssertionError; it names parent=context.run, which works."""
	om = OpenMolt(durability=url, entry_points=False)
	helper = om.create_agent(name="helper", model=ScriptedModel([finish("inner")] * 2))

	async def alone(task: str) -> str:
		"""Ask the helper on its own.

		Args:
			task: The task.
		"""
		return str((await helper.run(task)).output)

	async def nested(task: str, context: ToolContext) -> str:
		"""Ask the helper inside this call.

		Args:
			task: The task.
		"""
		return str((await helper.run(task, parent=context.run)).output)

	model = ScriptedModel(
		[call_tool("local.alone", task="x"), call_tool("local.nested", task="y"), finish("done")]
	)
	boss = om.create_agent(name="boss", model=model, tools=[alone, nested])
	result = await boss.run("go")
	await om.aclose()
	assert result.ok
	failed, worked = (json.loads(r.messages[-1].content)["results"][0] for r in model.requests[1:3])
	assert failed["ok"] is False and "AssertionError" not in failed["error"]
	assert "agent 'helper' was run inside a step of a durable run" in failed["error"]
	assert "parent=context.run" in failed["error"]
	assert worked["ok"] is True and worked["result"] == "inner"
