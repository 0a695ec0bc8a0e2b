"""The run store records every run with its events, and a parked run resumes from it elsewhere."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from openmolt import HumanInputUnavailable, OpenMolt, RunError
from openmolt_core.runstore import RunStore, default_path
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan
from openmolt_core.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


@tool(labels=[])  # declares no labels: this test is not about taint
def double(n: int) -> int:
	"""Twice n."""
	return 2 * n


def nobody(question: str) -> str:
	raise HumanInputUnavailable("nobody here")


async def test_a_run_is_recorded_with_its_input_status_usage_output_and_events(
	tmp_path: Path,
) -> None:
	"""The row says how the run went; the events come back in order, redacted JSON."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "deep" / "runs.db")
	model = ScriptedModel(
		[
			[
				update_plan({"name": "Double", "status": "inProgress"}),
				call_tool("local.double", n=21),
			],
			finish(answer=42),
		]
	)
	agent = om.create_agent(name="Doubler", model=model, tools=[double])
	result = await agent.run({"n": 21})
	assert om.run_store is not None
	(run,) = await om.run_store.runs()
	assert run.run_id == result.state.run_id
	assert (run.agent, run.model, run.status, run.input) == (
		"Doubler",
		"scripted",
		"success",
		{"n": 21},
	)
	assert run.steps == 2 and run.usage is not None and run.usage["input_tokens"] == 20
	assert run.output == {"answer": 42} and run.ended is not None and run.error is None
	events = await om.run_store.events(run.run_id)
	assert [e.name for e in events] == [
		"llmOutput",
		"commandsQueued",
		"planUpdate",
		"tool:call",
		"tool:response",
		"llmOutput",
		"commandsQueued",
		"finish",
	]
	assert [e.seq for e in events] == sorted(e.seq for e in events)
	assert events[2].data["plan"] == [
		{"name": "Double", "status": "inProgress", "notes": "", "subSteps": []}
	]
	assert events[4].data["response"] == 42 and events[4].step == 1
	assert await om.run_store.events(run.run_id, after=events[5].id) == events[6:]


async def test_a_failed_run_is_recorded_as_an_error(tmp_path: Path) -> None:
	"""A provider failure leaves a row with status error and the message."""

	def fail(request: object) -> str:
		raise RuntimeError("the model is down")

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agent = om.create_agent(name="A", model=ScriptedModel([fail]))
	with pytest.raises(RunError):
		await agent.run("go")
	assert om.run_store is not None
	(run,) = await om.run_store.runs()
	assert run.status == "error" and run.error is not None and "the model is down" in run.error


async def test_a_parked_run_resumes_in_another_instance_from_the_stored_state(
	tmp_path: Path,
) -> None:
	"""The question is stored; a new instance (another process) resumes it; one row, all events."""
	path = tmp_path / "runs.db"
	first = OpenMolt(entry_points=False, run_store=path)
	script = [ask_human("Which city?"), finish(city="Oslo")]
	agent = first.create_agent(
		name="Asker", model=ScriptedModel(script[:1]), on_human_input_request=nobody
	)
	parked = await agent.run("weather")
	assert parked.status == "human_input_required"
	store = RunStore(path)
	(row,) = await store.runs()
	assert row.status == "human_input_required"
	assert row.to_dict()["pending"] == {"kind": "human_input", "message": "Which city?"}
	before = await store.events(row.run_id)

	second = OpenMolt(entry_points=False, run_store=path)
	again = second.create_agent(
		name="Asker", model=ScriptedModel(script[1:]), on_human_input_request=nobody
	)
	state = await store.state(row.run_id)
	assert state is not None and state.pending is not None
	result = await again.resume(state, answer="Oslo")
	assert result.output == {"city": "Oslo"}
	(row,) = await store.runs()
	assert row.status == "success" and row.pending is None and row.input == "weather"
	after = await store.events(row.run_id)
	assert after[: len(before)] == before
	assert [e.name for e in after[len(before) :]][-1] == "finish"
	assert "humanInput" in [e.name for e in after[len(before) :]]


async def test_the_store_is_plain_sqlite_that_other_tools_can_read(tmp_path: Path) -> None:
	"""Two tables, one row per run and one per event; readable while the file is in WAL mode."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	await om.create_agent(name="A", model=ScriptedModel([finish(ok=1)])).run("x")
	conn = sqlite3.connect(tmp_path / "runs.db")
	try:
		assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
		(status, output) = conn.execute("SELECT status, output FROM agent_runs").fetchone()
		names = [r[0] for r in conn.execute("SELECT name FROM run_events ORDER BY id")]
	finally:
		conn.close()
	assert status == "success" and json.loads(output) == {"ok": 1}
	assert names == ["llmOutput", "commandsQueued", "finish"]


def test_the_default_path_follows_the_environment(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""$OPENMOLT_RUN_STORE wins (``off`` disables); else $XDG_STATE_HOME/openmolt/runs.db."""
	monkeypatch.delenv("OPENMOLT_RUN_STORE", raising=False)
	monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
	assert default_path() == tmp_path / "openmolt" / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(tmp_path / "mine.db"))
	assert default_path() == tmp_path / "mine.db"
	for off in ("off", "", "0", "OFF", "false", "no", "none", "None", "disabled"):
		monkeypatch.setenv("OPENMOLT_RUN_STORE", off)
		assert default_path() is None


async def test_a_run_records_where_it_came_from_and_keeps_it_across_a_resume(
	tmp_path: Path,
) -> None:
	"""started_by's kind and details go with the row; a sub-agent names its caller; a resume
	(started elsewhere) keeps the first origin."""
	from openmolt_core.observe import started_by

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	child = om.create_agent(name="Child", model=ScriptedModel([finish(ok=True)]))
	parent = om.create_agent(
		name="Parent",
		model=ScriptedModel([call_tool("local.Child", task="go"), ask_human("more?")]),
		tools=[child],
		on_human_input_request=nobody,
	)
	with started_by("chat", where="telegram:Support", sender="42", empty=""):
		parked = await parent.run("hi")
	assert parked.status == "human_input_required"
	store = om.run_store
	assert store is not None
	row = await store.run(parked.state.run_id)
	assert row is not None and row.trigger == {
		"kind": "chat",
		"where": "telegram:Support",
		"sender": "42",
	}
	sub = await store.run(f"{parked.state.run_id}.1.0")
	assert sub is not None
	assert sub.trigger == {"kind": "agent", "parent_run_id": parked.state.run_id}
	state = await store.state(parked.state.run_id)
	assert state is not None
	elsewhere = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	again = elsewhere.create_agent(name="Parent", model=ScriptedModel([finish(done=True)]))
	with started_by("cli"):
		assert (await again.resume(state, answer="no")).status == "success"
	await elsewhere.aclose()
	row = await store.run(parked.state.run_id)
	assert row is not None and row.trigger is not None and row.trigger["kind"] == "chat"
	assert [r.run_id for r in await store.runs(trigger="chat")] == [parked.state.run_id]
	assert await store.runs(trigger="webhook") == []
	plain = om.create_agent(name="Plain", model=ScriptedModel([finish(ok=True)]))
	result = await plain.run("x")
	row = await store.run(result.state.run_id)
	assert row is not None and row.trigger == {"kind": "api"}
	with pytest.raises(ValueError, match="kind"):
		with started_by(""):
			pass
	await om.aclose()


async def test_a_store_made_before_triggers_gets_the_column(tmp_path: Path) -> None:
	"""An older file (no trigger column) is upgraded on first use; its rows read as None."""
	path = tmp_path / "old.db"
	conn = sqlite3.connect(path)
	conn.executescript(
		"CREATE TABLE agent_runs (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, model TEXT NOT"
		" NULL, status TEXT NOT NULL, started TEXT NOT NULL, updated TEXT NOT NULL, ended TEXT,"
		" input TEXT, steps INTEGER NOT NULL DEFAULT 0, usage TEXT, output TEXT, error TEXT,"
		" pending TEXT, state TEXT, pid INTEGER);"
		"INSERT INTO agent_runs (run_id, agent, model, status, started, updated)"
		" VALUES ('old', 'A', 'm', 'success', '2026-01-01T00:00:00+00:00', '2026-01-01');"
	)
	conn.close()
	store = RunStore(path)
	(old,) = await store.runs()
	assert old.run_id == "old" and old.trigger is None


async def test_totals_sum_tokens_and_cost_per_day_and_agent(tmp_path: Path) -> None:
	"""Sub-agents' runs are left out (their usage is in their caller's already)."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	child = om.create_agent(name="Child", model=ScriptedModel([finish(ok=True)]))
	parent = om.create_agent(
		name="Parent",
		model=ScriptedModel([call_tool("local.Child", task="go"), finish(ok=True)]),
		tools=[child],
	)
	result = await parent.run("hi")
	store = om.run_store
	assert store is not None
	(row,) = await store.totals("2000-01-01")
	assert row["agent"] == "Parent" and row["runs"] == 1
	assert row["input_tokens"] == result.usage.input_tokens
	assert row["output_tokens"] == result.usage.output_tokens
	await om.aclose()


async def test_a_session_run_records_its_session_and_runs_can_be_listed_by_it(
	tmp_path: Path,
) -> None:
	"""A run of a session says which one (the observers' run, the stored row); a plain run none."""
	from openmolt_core.observe import ObservedRun, RunObserver
	from openmolt_core.sessions import InMemorySession

	seen: list[str | None] = []

	class Sessions(RunObserver):
		async def started(self, run: ObservedRun) -> None:
			seen.append(run.session_id)

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db", observers=[Sessions()])
	model = ScriptedModel([finish(answer=1), finish(answer=2), finish(answer=3)])
	agent = om.create_agent(name="Chat", model=model)
	session = InMemorySession("support:ada")
	first = await agent.run("hi", session=session)
	second = await agent.run("again", session=session)
	plain = await agent.run("alone")
	assert seen == ["support:ada", "support:ada", None]
	assert om.run_store is not None
	stored = {r.run_id: r for r in await om.run_store.runs()}
	assert stored[first.state.run_id].session_id == "support:ada"
	assert stored[plain.state.run_id].session_id is None
	assert stored[first.state.run_id].to_dict()["session_id"] == "support:ada"
	listed = await om.run_store.runs(session="support:ada")
	assert [r.run_id for r in listed] == [second.state.run_id, first.state.run_id]


async def test_the_stores_nested_rule_and_caller_of_agree_on_every_row(tmp_path: Path) -> None:
	"""A run a tool's code goes on with (history=, parent=) under an id of its own (no dot) was
	nested to the store's SQL (left out of every list and total) but a run of its own to
	caller_of, and no caller's page reached it; both now read it as a run of its own."""
	from openmolt_core.llm import Message
	from openmolt_core.result import RunState
	from openmolt_core.runstore import caller_of

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	helper = om.create_agent(name="Helper", model=ScriptedModel([finish("again")]))
	saved = RunState(run_id="conversation-7")
	saved.messages = [Message(role="user", content="hi")]  # a run saved before its first step

	@tool
	async def go_on(context: ToolContext) -> str:
		"""Go on with the helper's conversation."""
		return str((await helper.run(history=saved, parent=context.run)).output)

	main = om.create_agent(
		name="Main",
		model=ScriptedModel([call_tool("local.go_on"), finish("done")]),
		tools=[go_on],
	)
	assert (await main.run("go")).status == "success"
	store = om.run_store
	assert store is not None
	rows = await store.runs()
	assert {r.run_id for r in rows} >= {"conversation-7"}
	top = {r.run_id for r in await store.runs(top_level=True)}
	for row in rows:
		assert (row.run_id in top) == (caller_of(row.run_id, row.trigger) is None), row.run_id
	assert "conversation-7" in top
	await om.aclose()


async def test_an_events_number_goes_on_across_a_resume_and_names_it_with_its_run(
	tmp_path: Path,
) -> None:
	"""A resumed run numbers its events after the earlier drive's; a sub-agent's keep their own.

	``(run_id, seq)`` identifies a stored event, ``run_id`` being the sub-run's (``sub_run_id``)
	for a sub-agent's event kept with its caller's, as `openmolt_core.events.Event.seq` says.
	"""
	path = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=path)
	helper = om.create_agent(name="Helper", model=ScriptedModel([finish(n=1), finish(n=2)]))
	script = [call_tool("local.Helper", task="one"), ask_human("Which?"), finish(done=True)]
	agent = om.create_agent(
		name="Caller",
		model=ScriptedModel(script),
		tools=[helper],
		on_human_input_request=nobody,
	)
	parked = await agent.run("go")
	assert parked.status == "human_input_required"
	store = RunStore(path)
	result = await agent.resume(await store.state(parked.state.run_id), answer="that one")
	assert result.status == "success"
	events = await store.events(result.state.run_id)
	own = [e.seq for e in events if not e.data.get("sub_run_id")]
	# one count across both drives (a number an event nobody heard took is skipped)
	assert own == sorted(set(own)) and own[0] == 1
	resumed = [e for e in events if e.name == "humanInput"]
	assert resumed and resumed[0].seq > max(e.seq for e in events[: events.index(resumed[0])])
	keys = [(e.data.get("sub_run_id") or e.run_id, e.seq) for e in events]
	assert len(keys) == len(set(keys))
	assert any(e.data.get("sub_run_id") for e in events)
