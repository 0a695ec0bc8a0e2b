"""The crash harness: durable runs killed with SIGKILL, resumed by a worker, compared with uncrashed runs.

The cases run once per store from ``test_crash_sqlite.py`` and ``test_crash_postgres.py``, which
give the module-scoped ``crash_store`` fixture: with one store per module, a shuffled test order
never sets the harness (about a minute) up twice.

One process (``driver.py``, worker id ``w1``) starts six runs at once. The fake server holds each
one at its crash point; when the server's log (and the store) show that all of them are there, the
process is killed with SIGKILL:

| scenario | held at the kill |
| --- | --- |
| tool | an HTTP tool call in flight (after a memory update and a completed call) |
| wait | inside an 8 s ``wait`` (the sleep is journaled) |
| ask | parked on a question (answered from this process while no worker runs) |
| batch | five concurrent function tools, one in flight, tool:call handlers awaiting |
| budget | an HTTP tool call in flight, in a run with a 60 s time budget |
| error | already ended: the model server answered 500 |

Then ``openmolt worker`` starts under the same worker id and finishes them. The same scripts run
without a crash in this process (``ref-*``) while that happens, and every run is compared with
its uncrashed twin.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable import FakeServer
from _harness import Proc, make_store, start_python

from openmolt import OpenMolt
from openmolt_core.errors import RunError
from openmolt_core.result import RunResult
from openmolt_dbos._engine import reset_engine

SCENARIOS = ["tool", "wait", "ask", "batch", "budget", "error"]
WAIT = 8.0
# Long enough that the held tool call completes inside the budget even when the other scenarios
# are slow to reach their crash points (a loaded 2-core machine took over 30 s); the run then ends
# on the budget, in its 60 s wait.
BUDGET = 60.0


def _call(tool: str, **input: Any) -> dict[str, Any]:
	return {"type": "callTool", "tool": tool, "input": input}


def _finish(result: str) -> dict[str, Any]:
	return {"type": "finish", "status": "success", "output": {"result": result}}


def script(name: str) -> list[Any]:
	"""The model's replies, turn by turn, for a scenario (crashed or ``ref-``)."""
	kind = name.removeprefix("ref-")
	if kind == "tool":
		return [
			[
				{
					"type": "updateMemory",
					"memory": "shortTerm",
					"mode": "append",
					"data": f"noted {name}",
				},
				_call("svc.charge", scenario=name, value="A"),
			],
			[_call("svc.charge", scenario=name, value="B", hold=name)],
			_finish("charged"),
		]
	if kind == "wait":
		return [
			{"type": "wait", "seconds": WAIT},
			_call("svc.charge", scenario=name, value="W"),
			_finish("waited"),
		]
	if kind == "ask":
		return [
			[
				_call("svc.charge", scenario=name, value="Q"),
				{"type": "requestHumanInput", "message": "May I go on?"},
			],
			_finish("answered"),
		]
	if kind == "batch":
		return [
			[
				_call("local.echo", scenario=name, value=f"v{i}", hold=name if i == 3 else "")
				for i in range(5)
			],
			_finish("batched"),
		]
	if kind == "budget":
		return [
			_call("svc.charge", scenario=name, value="T", hold=name),
			{"type": "wait", "seconds": 60},
		]
	assert kind == "error"
	return [_call("svc.charge", scenario=name, value="E"), _finish("never")]


def _client_om(store: str) -> OpenMolt:
	return OpenMolt(durability=store, entry_points=False)


async def _om_call(store: str, what: str, *args: Any) -> Any:
	om = _client_om(store)
	try:
		return await getattr(om, what)(*args)
	finally:
		await om.aclose()
		reset_engine()


def run_sync(store: str, what: str, *args: Any) -> Any:
	"""``om.<what>(*args)`` from this process (a client: it never launches the engine)."""
	return anyio.run(_om_call, store, what, *args)


def killed_and_recovered(
	store: str,
	server: FakeServer,
	spawn: Any,
	scenario: str,
	held: str,
	reached: Any,
	what: str,
	*,
	heartbeat: float = 0.3,
	lapse: float = 5.0,
) -> tuple[str, RunResult]:
	"""Start ``scenario`` in ``driver.py``, SIGKILL it once ``reached()`` holds (the call ``held``
	in flight), then let ``openmolt worker`` recover the run: its id and its result.

	The lapse is what the recovering worker waits for the killed driver's lease (the driver
	fences itself 0.6 s before it): at 1.5 s, a driver whose beats were held up 1.2 s on CI's
	loaded machine stopped its own run mid-step and asked the model of that step again, which a
	test of exactly-once model calls across the crash read as a repeat."""
	server.holds[held] = threading.Event()
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(heartbeat),
		"OPENMOLT_TEST_LAPSE": str(lapse),
	}
	driver = spawn(["driver.py", store, "w1", scenario], env, name="w1")
	driver.wait_line("ready")
	[run_id] = [
		line.split()[2] for line in driver.output().splitlines() if line.startswith("started ")
	]
	server.wait_for(reached, 90, what)
	driver.kill()
	server.holds[held].set()
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", store, "--id", "w1"]
	worker = spawn([*args, "--heartbeat", str(heartbeat), "--lapse", str(lapse)], env, "w1b")
	worker.wait_line("ready")
	result = run_sync(store, "result", run_id)
	worker.stop()
	return run_id, result


def _steps(store: str, run_id: str) -> list[str]:
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		return [s["function_name"] for s in client.list_workflow_steps(run_id, load_output=False)]
	finally:
		client.destroy()


def _output(store: str, run_id: str, step: str) -> Any:
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		found = [s for s in client.list_workflow_steps(run_id) if s["function_name"] == step]
		return found[0]["output"]
	finally:
		client.destroy()


def _status(store: str, run_ids: list[str]) -> dict[str, str]:
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		found = client.list_workflows(workflow_ids=run_ids, load_input=False, load_output=False)
		return {s.workflow_id: s.status for s in found}
	finally:
		client.destroy()


def _references(out: dict[str, Any]) -> None:
	"""The uncrashed runs, local and in process, in a thread (the crash harness goes on).

	Their agents read the harness's variables: its server, and its references' events file."""
	import crash_agents

	async def main() -> None:
		om = OpenMolt(entry_points=False)
		crash, budget = crash_agents.build(om)

		async def one(name: str) -> None:
			agent = budget if name.startswith("ref-budget") else crash
			started = time.time()
			try:
				result: Any = await agent.run(name)
			except RunError as exc:
				result = exc
			out[name] = (result, started, time.time())

		async with anyio.create_task_group() as tg:
			for kind in SCENARIOS:
				if kind != "ask":
					tg.start_soon(one, f"ref-{kind}")
		# The question: a parked run, answered in process.
		started = time.time()
		parked = await crash.run("ref-ask")
		result = await crash.resume(parked.state, answer="yes, go on")
		out["ref-ask"] = (result, started, time.time())
		await om.aclose()

	anyio.run(main)


ENV = ("OPENMOLT_TEST_SERVER", "OPENMOLT_TEST_EVENTS", "OPENMOLT_TEST_BUDGET")
"""The variables the crash agents read (`crash_agents`), which the harness sets."""

_HARNESS: dict[str, dict[str, Any]] = {}
"""What the harness observed, per store: computed once per process (pytest-xdist tears
module fixtures down at the end of each batch of tests it hands a worker, which would run the
one-minute harness again for the same cases)."""


@pytest.fixture(scope="module")
def crashed(crash_store: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
	found = _HARNESS.get(crash_store)
	if found is None:
		found = _HARNESS[crash_store] = _harness(crash_store, tmp_path_factory)
	return found


def _harness(crash_store: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
	"""Crash the runs, recover them, and return what happened (the processes and store gone)."""
	tmp = tmp_path_factory.mktemp(f"crash-{crash_store}")
	stores = make_store(crash_store, tmp)
	store = next(stores)
	server = FakeServer()
	server.jitter = 0.02
	for name in SCENARIOS:
		server.scripts[name] = script(name)
		server.scripts[f"ref-{name}"] = script(f"ref-{name}")
		server.holds[name] = threading.Event()
	server.fail = {("error", 1), ("ref-error", 1)}
	events = tmp / "events.jsonl"
	ref_events = tmp / "ref-events.jsonl"
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_EVENTS": str(events),
		"OPENMOLT_TEST_BUDGET": str(BUDGET),
	}
	# The references run crash_agents in this process (`_references`), which reads the same
	# variables: set for the harness only, and put back as they were (a later test of this
	# process building those agents would call a closed server and write into these events).
	saved = {name: os.environ.get(name) for name in ENV}
	os.environ.update({**env, "OPENMOLT_TEST_EVENTS": str(ref_events)})
	procs: list[Any] = []

	def start(args: list[str], name: str) -> Proc:
		proc = start_python(args, env, tmp / f"{name}.log")
		procs.append(proc)
		return proc

	try:
		driver = start(["driver.py", store, "w1", *SCENARIOS], "driver")
		refs: dict[str, Any] = {}
		thread = threading.Thread(target=_references, args=(refs,))
		driver.wait_line("ready")
		run_ids = {}
		for line in driver.output().splitlines():
			if line.startswith("started "):
				_, name, run_id = line.split()
				run_ids[name] = run_id
		thread.start()

		def at_crash_points() -> bool:
			held = server.entries("tool", name="charge", scenario="tool", value="B")
			held = held and server.entries("tool", name="charge", scenario="budget")
			batch = {e.body.get("value") for e in server.entries("tool-done", scenario="batch")}
			started3 = server.entries("tool", name="echo", scenario="batch", value="v3")
			return bool(held and started3 and batch >= {"v0", "v1", "v2", "v4"})

		server.wait_for(at_crash_points, 120, "the tool and batch runs at their crash points")
		deadline = time.time() + 120
		while time.time() < deadline:
			slept = any("sleep" in s.lower() for s in _steps(store, run_ids["wait"]))
			parked = [p.run_id for p in run_sync(store, "pending")]
			ended = _status(store, [run_ids["error"]]).get(run_ids["error"]) == "ERROR"
			if slept and run_ids["ask"] in parked and ended:
				break
			time.sleep(0.2)
		else:
			raise AssertionError(f"crash points not reached:\n{driver.output()[-4000:]}")
		killed_at = time.time()
		driver.kill()
		# Answered from this process: no worker runs now.
		run_sync(store, "answer", run_ids["ask"], "yes, go on")
		answered_at = time.time()
		for hold in server.holds.values():
			hold.set()
		worker = start(
			[
				"-m",
				"openmolt",
				"worker",
				"crash_agents.py",
				"--durability",
				store,
				"--id",
				"w1",
				"--heartbeat",
				"0.5",
				"--lapse",
				"3",
			],
			"worker",
		)
		ids = list(run_ids.values())
		deadline = time.time() + 150
		while time.time() < deadline:
			statuses = _status(store, ids)
			if all(statuses.get(i) in ("SUCCESS", "ERROR") for i in ids):
				break
			time.sleep(0.3)
		else:
			raise AssertionError(f"runs did not finish: {statuses}\n{worker.output()[-4000:]}")
		results: dict[str, Any] = {}
		for name, run_id in run_ids.items():
			try:
				results[name] = run_sync(store, "result", run_id)
			except RunError as exc:
				results[name] = exc
		thread.join(120)
		worker.stop()
		deadlines = {
			run_ids["budget"]: _output(store, run_ids["budget"], "deadline:1"),
		}
		return {
			"store": store,
			"server": server,
			"run_ids": run_ids,
			"results": results,
			"refs": refs,
			"events": _read(events),
			"ref_events": _read(ref_events),
			"deadlines": deadlines,
			"killed_at": killed_at,
			"answered_at": answered_at,
			"driver_started": driver.started,
			"worker_started": worker.started,
			"driver_pid": driver.popen.pid,
			"worker_pid": worker.popen.pid,
		}
	finally:
		for name, value in saved.items():
			if value is None:
				os.environ.pop(name, None)
			else:
				os.environ[name] = value
		for proc in procs:
			proc.kill()
		server.close()
		try:
			next(stores)
		except StopIteration:
			pass


def _read(path: Path) -> list[dict[str, Any]]:
	if not path.exists():
		return []
	return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _norm(result: RunResult, name: str) -> list[tuple[str, str]]:
	return [(m.role, m.content.replace(f"ref-{name}", name)) for m in result.state.messages]


def _result(value: Any) -> RunResult:
	return value.result if isinstance(value, RunError) else value


@pytest.mark.timeout(420)
def test_each_turn_calls_the_model_once(crashed: Any) -> None:
	"""After the crash, no model call of a finished turn is repeated."""
	server: FakeServer = crashed["server"]
	for name in SCENARIOS:
		turns = Counter(e.body["turn"] for e in server.entries("model", name=name))
		ref = Counter(e.body["turn"] for e in server.entries("model", name=f"ref-{name}"))
		assert turns == ref, name
		assert set(turns.values()) == {1}, (name, turns)


@pytest.mark.timeout(420)
def test_completed_tools_run_once_and_the_one_in_flight_at_most_twice_with_one_key(
	crashed: Any,
) -> None:
	"""Side effects: completed calls once; the call in flight at the kill at most twice, one key."""
	server: FakeServer = crashed["server"]
	charges = server.entries("tool", name="charge", scenario="tool")
	by_value: dict[str, list[str]] = {}
	for entry in charges:
		by_value.setdefault(entry.body["value"], []).append(entry.headers["idempotency-key"])
	assert len(by_value["A"]) == 1
	assert 1 <= len(by_value["B"]) <= 2
	assert len(set(by_value["B"])) == 1
	assert by_value["A"] != by_value["B"]
	for kind in ("wait", "ask", "error"):
		assert len(server.entries("tool", name="charge", scenario=kind)) == 1, kind
	budget = server.entries("tool", name="charge", scenario="budget")
	assert 1 <= len(budget) <= 2
	assert len({e.headers["idempotency-key"] for e in budget}) == 1
	echoes = Counter(e.body["value"] for e in server.entries("tool", name="echo", scenario="batch"))
	assert all(echoes[f"v{i}"] == 1 for i in (0, 1, 2, 4)), echoes
	assert 1 <= echoes["v3"] <= 2
	# A function tool gets the HTTP engine's key: the replayed call sends the same one.
	keys = {
		e.body["value"]: e.headers["idempotency-key"]
		for e in server.entries("tool", name="echo", scenario="batch")
	}
	v3 = {
		e.headers["idempotency-key"]
		for e in server.entries("tool", name="echo", scenario="batch", value="v3")
	}
	assert len(v3) == 1 and len(set(keys.values())) == 5


@pytest.mark.timeout(420)
def test_final_messages_and_usage_equal_the_uncrashed_runs(crashed: Any) -> None:
	"""Each crashed run ends with the same conversation, status and usage as its uncrashed twin."""
	for name in SCENARIOS:
		got = _result(crashed["results"][name])
		want = _result(crashed["refs"][f"ref-{name}"][0])
		assert got.status == want.status, name
		assert _norm(got, name) == _norm(want, name), name
		assert got.usage.to_dict() == want.usage.to_dict(), name
		assert got.state.run_id == crashed["run_ids"][name]


@pytest.mark.timeout(420)
def test_concurrent_calls_keep_their_own_results(crashed: Any) -> None:
	"""The batch's results, replayed after the crash, are each its own call's (command order)."""
	result = _result(crashed["results"]["batch"])
	results = json.loads(result.state.messages[2].content)["results"]
	assert [r["result"]["echo"] for r in results] == [f"v{i}" for i in range(5)]


@pytest.mark.timeout(420)
def test_memory_on_update_runs_once(crashed: Any) -> None:
	"""The memory callback of a journaled step does not run again on replay."""
	server: FakeServer = crashed["server"]
	assert len(server.entries("memory", data="noted tool")) == 1


@pytest.mark.timeout(420)
def test_events_are_unique_by_run_and_seq_and_replays_are_not_delivered(crashed: Any) -> None:
	"""Delivered events: no replayed ones, one event per (run_id, seq), the uncrashed run's set."""
	events = crashed["events"]
	ref_events = crashed["ref_events"]
	assert not [e for e in events if e["replayed"]]
	for name in SCENARIOS:
		run_id = crashed["run_ids"][name]
		mine = [e for e in events if e["run_id"] == run_id]
		names: dict[int, set[str]] = {}
		for event in mine:
			names.setdefault(event["seq"], set()).add(event["name"])
		assert all(len(v) == 1 for v in names.values()), (name, names)
		ref_id = _result(crashed["refs"][f"ref-{name}"][0]).state.run_id
		want = {(e["seq"], e["name"]) for e in ref_events if e["run_id"] == ref_id}
		assert {(e["seq"], e["name"]) for e in mine} == want, name
		# What comes again is what the crashed process delivered after its run's last journaled
		# step (it cannot know those were delivered): the events of the tool call in flight, or
		# the last few it delivered.
		count = Counter((e["seq"], e["name"]) for e in mine)
		before = [e for e in mine if e["pid"] == crashed["driver_pid"]]
		for i, event in enumerate(before):
			if count[(event["seq"], event["name"])] > 1:
				in_flight = event["name"] == "tool:call"
				assert in_flight or i >= len(before) - 3, (name, event, before)
		# "Done" is said once: a tool:response comes after its result is journaled, and a call
		# answered from the journal says nothing again.
		done = Counter(e["seq"] for e in mine if e["name"] == "tool:response")
		assert all(n == 1 for n in done.values()), (name, done)


@pytest.mark.timeout(420)
def test_a_wait_keeps_its_deadline_across_the_crash(crashed: Any) -> None:
	"""The wait resumes with the time left: the next turn comes at the original end, not later."""
	server: FakeServer = crashed["server"]
	run_id = crashed["run_ids"]["wait"]
	queued = [
		e for e in crashed["events"] if e["run_id"] == run_id and e["name"] == "commandsQueued"
	]
	began = queued[0]["at"]
	turn1 = server.entries("model", name="wait", turn=1)[0].at
	assert turn1 >= began + WAIT - 0.1
	# A sleep that restarted would end WAIT seconds after the worker resumed the runs (when it
	# delivered its first event); a durable one ends at its first end, or at once if that passed.
	resumed = min(e["at"] for e in crashed["events"] if e["pid"] == crashed["worker_pid"])
	assert turn1 < max(began + WAIT, resumed) + WAIT / 2


@pytest.mark.timeout(420)
def test_a_parked_question_is_answered_from_another_process(crashed: Any) -> None:
	"""The question, answered while no worker ran, reaches the run, which then finishes."""
	result = _result(crashed["results"]["ask"])
	assert result.status == "success"
	assert result.output == {"result": "answered"}
	assert "yes, go on" in result.state.messages[2].content
	assert crashed["answered_at"] < crashed["worker_started"]


@pytest.mark.timeout(420)
def test_the_time_budget_holds_across_the_crash(crashed: Any) -> None:
	"""The budget's deadline is the first start's: the run ends on time despite the restart."""
	run_id = crashed["run_ids"]["budget"]
	result = _result(crashed["results"]["budget"])
	assert result.status == "limit_reached"
	assert "interrupted: the time budget ran out" in result.state.messages[-1].content
	deadline = crashed["deadlines"][run_id]
	assert deadline - BUDGET < crashed["killed_at"]  # set by the first process, kept by the next
	ends = [e["at"] for e in crashed["events"] if e["run_id"] == run_id and e["name"] == "finish"]
	assert ends and deadline - 0.1 <= ends[-1] < deadline + 2.0


@pytest.mark.timeout(420)
def test_an_error_fetched_from_another_process_is_a_run_error_with_its_state(
	crashed: Any,
) -> None:
	"""om.result in this process raises the RunError the run ended with, state and all."""
	error = crashed["results"]["error"]
	assert isinstance(error, RunError)
	assert "the model server broke" in str(error)
	assert error.result.status == "error"
	assert error.result.state.run_id == crashed["run_ids"]["error"]
	assert len(error.result.state.messages) == 3  # first turn, the reply, its results


def test_the_harness_puts_the_environment_back(crashed: Any) -> None:
	"""The variables the crash agents read are as the harness found them once it is done."""
	assert os.environ.get("OPENMOLT_TEST_SERVER") != crashed["server"].url
	assert "ref-events" not in os.environ.get("OPENMOLT_TEST_EVENTS", "")
