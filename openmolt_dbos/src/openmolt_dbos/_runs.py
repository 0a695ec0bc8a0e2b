"""The durable run: one DBOS workflow per run, parked questions, and results as JSON.

A run is the workflow ``openmolt.run`` with the run id as its workflow id (a scheduled run's id is
``<schedule key>@<due time>``). Its inputs are the agent's name and the run's state (or, for a
scheduled run, the input: the state is then built in the journaled step ``start``). The workflow
finds the agent by name in this process (`openmolt_dbos._engine.Engine.agent`) and runs the loop
with a `openmolt_dbos._port.DBOSPort`.

A question nobody can answer now ends the loop with ``human_input_required``. The workflow then
parks: it records the parked result (event ``openmolt_park``) and marks itself parked in its
attributes (``openmolt_parked``, ``openmolt_question``), then waits on ``DBOS.recv`` for a
message on the topic ``openmolt_answer`` that names its question. Any process can send it
(``om.answer``); the workflow goes on with the answer, in whichever worker runs it then.

The workflow returns ``{"result": RunResult.to_dict(), "state": RunState.to_dict()}``: JSON, so
any process can read it. An error ends the workflow with the `RunError` (which pickles with its
state), so ``om.result`` in another process raises it again. What DBOS keeps (the input, the
park event and question, the output, the error) is masked with the agent's redactor first
(`openmolt_dbos._sealed`), and the run and its caller read the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
from dbos import DBOS
from dbos._error import DBOSWorkflowCancelledError, DBOSWorkflowConflictIDError

from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.result import RunResult, RunState
from openmolt_dbos import _sealed as sealed
from openmolt_dbos._engine import Engine, Outcome
from openmolt_dbos._port import DBOSPort

if TYPE_CHECKING:
	from dbos import WorkflowStatus

	from openmolt_core.agent import Agent

__all__ = [
	"ANSWER_TOPIC",
	"FINGERPRINT",
	"PARK_EVENT",
	"WORKFLOW",
	"CancelWatch",
	"asked_at",
	"attrs",
	"check_definition",
	"find",
	"listed_status",
	"outcome_of",
	"refuse_other_definition",
	"result_of",
	"run_workflow",
	"set_engine",
]

WORKFLOW = "openmolt.run"
"""The DBOS workflow name of a run."""

ANSWER_TOPIC = "openmolt_answer"
"""The DBOS message topic a parked run waits on."""

PARK_EVENT = "openmolt_park"
"""The DBOS event holding a parked run's result and state."""

FINGERPRINT = "openmolt_fingerprint"
"""The attribute naming the agent definition a run's journal was made by (`_engine.definition`:
`Agent.fingerprint` and its tools' gates; a run recorded before the gates were, the fingerprint).

None once ``openmolt runs --migrate`` moved the run to another definition on purpose.
"""

_WAIT = 24 * 3600.0  # seconds of one recv; a parked run waits again after each

_ENGINE: Engine | None = None


def set_engine(engine: Engine) -> None:
	"""Tell the workflow function which engine it runs under (the process's)."""
	global _ENGINE
	_ENGINE = engine


def _engine() -> Engine:
	if _ENGINE is None:
		raise ConfigurationError(
			"durable: a workflow was started before OpenMolt's engine; create OpenMolt("
			"durability=...) and its agents first"
		)
	return _ENGINE


def attrs(status: WorkflowStatus) -> dict[str, Any]:
	"""A workflow's attributes (empty when it has none)."""
	return dict(status.attributes or {})


async def find(engine: Engine, labels: dict[str, Any], **filters: Any) -> list[WorkflowStatus]:
	"""Run workflows whose attributes hold ``labels`` (filtered here: SQLite cannot in SQL)."""
	statuses = await engine.client().list_workflows_async(
		name=WORKFLOW, load_input=False, load_output=False, **filters
	)
	return [s for s in statuses if all(attrs(s).get(k) == v for k, v in labels.items())]


def result_of(data: dict[str, Any], agent: Agent | None) -> RunResult:
	"""Rebuild a `RunResult` from a workflow's output (`openmolt_dbos._sealed.payload`'s JSON).

	The output is validated by the agent, if known.
	"""
	state = RunState.from_dict(data["state"])
	result = RunResult.from_dict(data["result"], state)
	if agent is not None and result.output is not None and result.status in ("success", "failure"):
		try:
			result.output = agent.validate_output(result.output)
		except Exception:  # a changed schema: the JSON is still the output
			pass
	return result


def outcome_of(status: WorkflowStatus, parked: Any) -> Outcome | None:
	"""What a workflow's status says about its run: ended, parked (with its event), or None."""
	if status.status == "SUCCESS":
		return Outcome("done", status.output)
	if status.status == "ERROR" or status.error is not None:
		return Outcome("error", status.error)
	if status.status in ("CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
		return Outcome(
			"error",
			ConfigurationError(
				f"durable run {status.workflow_id} was {status.status.lower().replace('_', ' ')}"
			),
		)
	if attrs(status).get("openmolt_parked") and isinstance(parked, dict):
		return Outcome("parked", parked)
	return None


def listed_status(
	status: WorkflowStatus, output: Any, *, cancelled: bool = False
) -> tuple[str, str | None, str | None]:
	"""A run's status as its latest workflow says it: the status, what it is parked on, and why.

	The one reading of a workflow's status as a run's (``openmolt runs``, `DBOSBackend.runs`).
	A workflow that returned holds the run's result: its status is the run's (``success``,
	``failure``, ``limit_reached``...), and a result that parked (an approval, an account)
	makes the run ``parked``, not ``success``; a run cancelled while parked so, or after its
	latest workflow failed (``openmolt_cancels``), is ``cancelled``. A workflow still going is ``parked`` while it waits
	for an answer to its question, else ``pending`` or ``enqueued``. Other workflow statuses
	(``error``, ``cancelled``) are the run's.

	Args:
		status: The run's latest workflow.
		output: The workflow's output (`openmolt_dbos._sealed.payload`'s JSON), when it
			returned; None otherwise.
		cancelled: Whether the run was cancelled while parked in that output, or after that
			workflow failed.

	Returns:
		``(status, parked_on, waiting_for)``: ``parked_on`` is the `RunResult` status of the park
		(``human_input_required``, ``approval_required``, ``authorization_required``) and
		``waiting_for`` says what it waits for in one line (`openmolt_core.observe.waiting_for`);
		both None unless ``status`` is ``parked``.
	"""
	from openmolt_core.observe import waiting_for
	from openmolt_core.result import PARKED_STATUSES

	labels = attrs(status)
	going = status.status in ("PENDING", "ENQUEUED")
	question = labels.get("openmolt_question")
	if going and labels.get("openmolt_parked") and isinstance(question, dict):
		asked = {"kind": "human_input", "message": str(question.get("message", ""))}
		return "parked", "human_input_required", waiting_for(asked)
	if status.status == "ERROR" and cancelled:  # failed, then cancelled: its state goes nowhere
		return "cancelled", None, None
	if status.status != "SUCCESS" or not isinstance(output, dict):
		return status.status.lower(), None, None
	if "skipped" in output:  # a scheduled run that overlapped its previous one
		return "skipped", None, None
	result = output.get("result")
	ended = str(result.get("status")) if isinstance(result, dict) else "success"
	if ended not in PARKED_STATUSES:
		return ended, None, None
	if cancelled:
		return "cancelled", None, None
	state = output.get("state")
	pending = state.get("pending") if isinstance(state, dict) else None
	return "parked", ended, waiting_for(pending)


@DBOS.workflow(name=WORKFLOW)
async def run_workflow(
	agent_name: str,
	state: dict[str, Any] | None,
	answer: str | None = None,
	schedule: dict[str, Any] | None = None,
	decisions: list[Any] | None = None,
) -> dict[str, Any] | None:
	"""The workflow of one durable run (see the module docstring).

	Args:
		agent_name: The agent's name.
		state: The run's state (`RunState.to_dict`); None for a scheduled run.
		answer: The answer to the state's parked question, if it has one.
		schedule: For a scheduled run: ``{"id", "due", "input", "note"}``.
		decisions: Approval decisions for the state's parked tool calls, if it has some.

	Returns:
		The result as `openmolt_dbos._sealed.payload` keeps it (masked), or ``{"skipped":
		note}`` for a scheduled run that overlapped.
	"""
	engine = _engine()
	wid = DBOS.workflow_id or ""
	task = asyncio.current_task()
	untrack = engine.track(wid, task) if task is not None else (lambda: None)
	watch = CancelWatch(wid, task)
	try:
		watch.start()
		return await _run(engine, wid, agent_name, state, answer, schedule, decisions or [], watch)
	except BaseException as exc:
		# DBOS's error for an execution that lost its run (openmolt_dbos._ownership) is a
		# BaseException: DBOS parks this execution, and a waiter polls for the owner's outcome.
		lost = _lost(exc)
		# A canceller in another process waits to hear it stopped. A step that is not
		# preemptible (a model call) and ends after the cancel is not journaled: the cancel
		# took the run from this execution, and DBOS says it lost the run, not that it was
		# cancelled.
		cancelled = _cancelled(exc) or watch.fired  # a cancel stopped it outside a step
		with anyio.CancelScope(shield=True), anyio.move_on_after(10):
			cancelled = cancelled or (lost and await _cancelled_in_store(engine, wid))
			if cancelled:
				await anyio.to_thread.run_sync(engine.record_stop, wid)
		if lost and isinstance(exc, BaseExceptionGroup):
			# From a concurrent batch it comes in a task group's group: DBOS knows it only alone.
			raise DBOSWorkflowConflictIDError(wid) from exc
		if cancelled:  # its caller reads the cancel from the store (DBOS's error is not for it)
			engine.notify(wid, Outcome("cancelled", None))
		elif isinstance(exc, Exception):
			_sealed_error(engine, agent_name, exc)  # before DBOS pickles it; the caller's too
			engine.notify(wid, Outcome("error", exc))
		raise
	finally:
		watch.stop()
		untrack()


def _sealed_error(engine: Engine, agent_name: str, exc: Exception) -> None:
	"""Mask the error a run ends with, with its agent's redactor (`openmolt_dbos._sealed.error`).

	An agent this process does not know has run nothing here: its error names the agent only.
	"""
	agent = engine.agents.get(agent_name)
	if agent is not None:
		sealed.error(exc, agent.redact)


class CancelWatch:
	"""Stops a workflow's execution in this process once the run is cancelled, from any process.

	DBOS looks for a cancel only around a preemptible step (`openmolt_dbos._port`): what runs
	in the workflow's own code, between steps, went on until its next step began. That is the
	run's event handlers and observers (an async one waiting on a slow service), a model call
	under way, the loop's own work. The watch registers the workflow with DBOS's cancellation
	watcher (one poller per event loop, one query a second for every workflow and preemptible
	step it watches), and cancels the workflow's task when it sees the cancel, as a cancel in
	this process does (`openmolt_dbos._engine.Engine.stop`): the run stops where it is, and
	`run_workflow` records that it stopped. Paused while the run waits for an answer to its
	question (nothing runs then, and a park may last days).

	The watcher is DBOS's private API; a DBOS without it leaves the run as before (stopped at
	its next step), and says so once in the log.

	Args:
		wid: The workflow id.
		task: The workflow's task (None: nothing to watch).
	"""

	__slots__ = ("_signal", "_task", "_wid", "fired")

	def __init__(self, wid: str, task: asyncio.Task[Any] | None) -> None:
		self._wid = wid
		self._task = task
		self._signal: Any = None
		self.fired = False
		"""Whether the watch saw the cancel and stopped the execution."""

	def start(self) -> None:
		"""Watch from now on (again, after `pause`)."""
		if self._task is None or self._signal is not None or self.fired:
			return
		watcher, shard = _watcher()
		if watcher is None:
			return
		signal = watcher.register(self._wid, shard)
		signal.add_done_callback(self._seen)
		self._signal = (watcher, shard, signal)

	def stop(self) -> None:
		"""Stop watching (the run ended here, or parks)."""
		if self._signal is not None:
			watcher, shard, signal = self._signal
			self._signal = None
			watcher.unregister(self._wid, shard, signal)

	@contextlib.contextmanager
	def pause(self) -> Iterator[None]:
		"""Not watching while the block runs (a wait for an answer)."""
		self.stop()
		try:
			yield
		finally:
			self.start()

	def _seen(self, signal: asyncio.Future[None]) -> None:
		if signal.cancelled():
			return  # unregistered
		self.stop()  # the watcher polls while anything is registered
		if self._task is None or self._task.done():
			return  # ended meanwhile
		self.fired = True
		self._task.cancel()


_NO_WATCHER: list[bool] = []


def _watcher() -> tuple[Any, str | None]:
	"""DBOS's cancellation watcher of this event loop, and the workflow's shard key."""
	try:
		from dbos._context import get_local_dbos_context
		from dbos._core import _cancellation_watcher
		from dbos._dbos import _get_dbos_instance

		ctx = get_local_dbos_context()
		return _cancellation_watcher(_get_dbos_instance()), getattr(ctx, "shard_key", None)
	except (ImportError, AttributeError, RuntimeError) as exc:
		if not _NO_WATCHER:
			_NO_WATCHER.append(True)
			import logging

			logging.getLogger("openmolt").warning(
				"durable: this DBOS has no cancellation watcher (%s); a run cancelled from "
				"another process stops at its next step, not in an event handler or a model call",
				exc,
			)
		return None, None


def _cancelled(exc: BaseException) -> bool:
	"""Whether DBOS stopped the workflow because it was cancelled (alone, or in a group)."""
	if isinstance(exc, BaseExceptionGroup):
		return exc.subgroup(DBOSWorkflowCancelledError) is not None
	return isinstance(exc, DBOSWorkflowCancelledError)


def _lost(exc: BaseException) -> bool:
	"""Whether the execution lost its run to another, or to a cancel (alone, or in a group)."""
	if isinstance(exc, BaseExceptionGroup):
		return exc.subgroup(DBOSWorkflowConflictIDError) is not None
	return isinstance(exc, DBOSWorkflowConflictIDError)


async def _cancelled_in_store(engine: Engine, wid: str) -> bool:
	"""Whether the workflow is cancelled in the store."""
	statuses = await engine.client().list_workflows_async(
		workflow_ids=[wid], load_input=False, load_output=False
	)
	return any(s.status == "CANCELLED" for s in statuses)


async def _run(
	engine: Engine,
	wid: str,
	agent_name: str,
	state: dict[str, Any] | None,
	answer: str | None,
	schedule: dict[str, Any] | None,
	decisions: list[Any],
	watch: CancelWatch,
) -> dict[str, Any] | None:
	run_id = str((state or {}).get("run_id") or wid)
	agent = await engine.agent_for(agent_name, run_id)
	if wid != run_id and await _cancelled_while_parked(engine, run_id):
		# A segment going on from a park the run was cancelled in, or from the state a failed
		# segment kept (a delivery or a resume that passed its check a moment before the
		# cancel): nothing of it runs.
		await engine.client().cancel_workflow_async(wid)
		raise DBOSWorkflowCancelledError(f"run {run_id} was cancelled while it was parked")
	fresh = wid in engine.created
	if fresh:  # this process created the workflow a moment ago: nothing to read
		engine.created.discard(wid)
		steps = []
	else:
		await check_definition(engine, wid, agent_name)
		steps = await engine.client().list_workflow_steps_async(wid, load_output=False)
	completed = {
		s["function_id"]: (s["completed_at_epoch_ms"] or s["started_at_epoch_ms"] or 0) / 1000
		for s in steps
	}
	port = DBOSPort(
		journal_end=max(completed, default=-1),
		completed=completed,
		deliver_replayed=engine.settings.replay_events,
		# A scheduled run's id is its workflow's; a run's later segments carry it in their state.
		run_id=run_id,
		starts=engine.record_start,
		ages=engine.call_age,
		lease=engine.lease_valid,
		offset=engine.clock_offset,  # the budget is judged on the store's clock
		clocks=engine.execution_clock,
		fresh=fresh,
	)
	if schedule is None:
		result = await agent.execute(state, port=port, answer=answer, decisions=decisions)
		return await _finish(engine, wid, port, agent, result, watch)
	from openmolt_dbos._schedules import scheduled_end, scheduled_start

	skipped = await scheduled_start(engine, port, agent, wid, schedule)
	if skipped is not None:
		return {"skipped": agent.redact(skipped)}
	try:
		first = await agent.execute(None, port=port, input=schedule.get("input"), run_id=wid)
		done = await _finish(engine, wid, port, agent, first, watch)
	except RunError as exc:
		sealed.error(exc, agent.redact)  # reported as DBOS keeps it
		await scheduled_end(engine, wid, schedule, None, exc, agent=agent.name)
		raise
	await scheduled_end(engine, wid, schedule, result_of(done, agent), agent=agent.name)
	return done


async def _cancelled_while_parked(engine: Engine, run_id: str) -> bool:
	"""Whether the run was cancelled while parked in an ended workflow, or failed (`record_cancel`)."""
	from openmolt_dbos._workers import cancelled_runs

	found = await anyio.to_thread.run_sync(cancelled_runs, engine.tables, [run_id])
	return run_id in found


async def check_definition(engine: Engine, wid: str, agent_name: str) -> None:
	"""Refuse to replay a run's journal with another definition of its agent than made it.

	The application version covers the agents a process knew when it launched; an agent created
	later, or a version set by hand (``app_version``), lets a process whose agent of that name
	differs (other instructions, another model) recover the run: it would read the journal's
	answers as if its own agent had made them, and go on as another agent.

	Raises:
		ConfigurationError: The run's journal was made by another definition of its agent.
	"""
	found = await engine.client().list_workflows_async(
		workflow_ids=[wid], load_input=False, load_output=False
	)
	made = attrs(found[0]).get(FINGERPRINT) if found else None
	here = _other_definition(engine, made, agent_name)
	if here is None:
		return
	raise ConfigurationError(
		f"durable run {wid}: agent {agent_name!r} in worker {engine.executor_id} is not the "
		f"definition that made the run's journal (fingerprint {str(made)[:12]}, here "
		f"{here[:12]}: its model, instructions, tools, or their approval rules, in-doubt "
		"policies or labels differ), and the application version did not tell them apart (an "
		"agent created after the first durable run of the process, or app_version set by "
		"hand); the run ends here and nothing of it was replayed. Create every agent before "
		"the first durable run of a process (the version then keeps the run for a worker of "
		"its definition), and start the run again"
	)


def _other_definition(engine: Engine, made: Any, agent_name: str) -> str | None:
	"""This process's definition of an agent, if it is not ``made``, the one a run recorded.

	None when they are the same, when either is unknown (a run moved on purpose, ``--migrate``),
	or when ``made`` is the agent's bare fingerprint (recorded before the tools' gates were: as
	it was judged then).
	"""
	here = engine.definitions.get(agent_name)
	if made is None or here is None or made == here:
		return None
	return None if made == engine.agent(agent_name).fingerprint() else here


def refuse_other_definition(
	engine: Engine, status: WorkflowStatus, run_id: str, agent: str
) -> None:
	"""Refuse to go on from a stored run's park, or kept state, with another definition of its agent.

	A run parked on an approval or an account, or failed with a state that may go on, has ended
	its workflow: the delivery that resumes it starts its next segment in the delivering process.
	Started by another definition of its agent there (an approval rule removed, a laxer in-doubt
	policy, another tool or instructions), the rest of the run would go on as that agent, and a
	call the run's own definition kept for a person would be made unasked; a recovery by another
	definition is refused the same way (`check_definition`).

	Raises:
		ConfigurationError: ``status``, the run's latest segment, was made by another definition.
	"""
	made = attrs(status).get(FINGERPRINT)
	here = _other_definition(engine, made, agent)
	if here is None:
		return
	raise ConfigurationError(
		f"durable run {run_id}: agent {agent!r} here is not the definition that ran it up to "
		f"its park (fingerprint {str(made)[:12]}, here {here[:12]}: its model, instructions, "
		"tools, or their approval rules, in-doubt policies or labels differ); it was not "
		"resumed, and nothing ran. Resume it in a process whose agent is the definition that "
		"parked it; or, if the change is compatible, move it to this definition on purpose "
		f"(`openmolt runs --migrate {run_id}`) and resume it again; or cancel it "
		f"(`openmolt runs --cancel {run_id}`) and start the run again"
	)


async def _finish(
	engine: Engine, wid: str, port: DBOSPort, agent: Agent, result: RunResult, watch: CancelWatch
) -> dict[str, Any]:
	# Park on each question nobody could answer, until the run ends. What DBOS keeps of the
	# park (its event, the question in the attributes) and of the end (the output) is masked,
	# and this process's caller reads the same (`openmolt_dbos._sealed`).
	redact = agent.redact
	while result.status == "human_input_required" and result.state.pending is not None:
		qid = str(result.state.steps)
		parked = sealed.payload(result, redact)
		await DBOS.set_event_async(PARK_EVENT, parked)
		asked = {
			"id": qid,
			"message": str(result.state.pending.get("message", "")),
			"step": result.state.steps,
			"asked_at": time.time(),
			"user": result.state.user,  # who may answer, where several could
		}
		await DBOS.update_workflow_attributes_async(
			wid,
			{"openmolt_parked": True, "openmolt_question": sealed.question(asked, redact)},
			merge=True,
		)
		engine.notify(wid, Outcome("parked", parked))
		with watch.pause():  # nothing runs while it waits; a park may last days
			text = await _answer(qid)
		await DBOS.update_workflow_attributes_async(
			wid, {"openmolt_parked": False, "openmolt_question": None}, merge=True
		)
		result = await agent.execute(result.state, port=port, answer=text)
	done = sealed.payload(result, redact)
	engine.notify(wid, Outcome("done", done))
	return done


async def _answer(qid: str) -> str:
	# Messages for another question (a late second answer) are dropped.
	while True:
		message = await DBOS.recv_async(ANSWER_TOPIC, timeout_seconds=_WAIT)
		if isinstance(message, dict) and message.get("question") == qid:
			return str(message.get("text", ""))


def asked_at(question: dict[str, Any]) -> datetime:
	"""When a parked question was asked (UTC)."""
	return datetime.fromtimestamp(float(question.get("asked_at") or 0.0), UTC)
