"""`DBOSBackend`: what a durable `OpenMolt` delegates runs, answers and schedules to.

``agent.run()`` on a durable instance builds the run's state as usual, then starts the workflow
whose id is the run id and waits for it, in this process, until the run ends or parks on a
question: then it returns the same `RunResult` an in-process run returns
(``human_input_required``, with ``state.pending``), while the workflow keeps waiting durably.
``agent.resume(state, answer=...)`` and ``om.answer(run_id, text)`` send the answer; the first
also waits for what comes next.

Reads and answers go through a `dbos.DBOSClient` on the store, so a process that only answers
questions or fetches results never launches the engine nor counts as a worker.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from dbos import DBOS, SetWorkflowAttributes, SetWorkflowID
from dbos._error import DBOSWorkflowIDInUseError  # not exported by dbos; raised by "reject"

from openmolt_core._durable import PendingRun
from openmolt_core._support.words import quantity
from openmolt_core.errors import ApprovalError, ConfigurationError, RunCancelledError, RunError
from openmolt_core.result import PARKED_STATUSES, RunResult, RunState
from openmolt_core.runstore import parked_where as _parked_at
from openmolt_dbos import _sealed as sealed
from openmolt_dbos._engine import Engine, Outcome, engine_for, require_asyncio
from openmolt_dbos._runs import (
	ANSWER_TOPIC,
	FINGERPRINT,
	PARK_EVENT,
	WORKFLOW,
	asked_at,
	attrs,
	find,
	listed_status,
	outcome_of,
	refuse_other_definition,
	result_of,
	run_workflow,
	set_engine,
)
from openmolt_dbos._settings import Settings
from openmolt_dbos._taken import taken_from, was_taken_from
from openmolt_dbos._workers import (
	answered,
	answered_in_run,
	cancelled_runs,
	claim_answer,
	claimed,
	record_cancel,
)

if TYPE_CHECKING:
	from collections.abc import Sequence

	from dbos import WorkflowStatus

	from openmolt_core.agent import Agent
	from openmolt_core.approvals import ApprovalDecision
	from openmolt_core.openmolt import OpenMolt
	from openmolt_dbos._a2a_tasks import StoreTasks
	from openmolt_dbos._engine import _Waiter
	from openmolt_dbos._schedules import DBOSScheduleBackend
	from openmolt_dbos._seen import StoreSeen

__all__ = ["CANCEL_WAIT", "AlreadyAnsweredError", "DBOSBackend"]

log: logging.Logger = logging.getLogger("openmolt")


class AlreadyAnsweredError(ConfigurationError):
	"""Another answer to the run's question won; this one was not used.

	Args:
		message: What happened (default: says so for ``run_id``).
		run_id: The run.
		question: The question's id (its step).
	"""

	def __init__(
		self, message: str | None = None, *, run_id: str, question: str | None = None
	) -> None:
		super().__init__(
			message
			or f"run {run_id} waits for no answer: its question was already answered (the "
			"first answer wins; this one was not used); see `openmolt runs` for what it waits "
			"for now"
		)
		self.run_id = run_id
		self.question = question


class DBOSBackend:
	"""The durability backend of one `OpenMolt` instance (the engine is the process's).

	Args:
		om: The instance.
		settings: Its ``durability=...``, parsed.
	"""

	def __init__(self, om: OpenMolt, settings: Settings) -> None:
		self.om = om
		self.settings = settings
		self.engine: Engine = engine_for(settings)
		set_engine(self.engine)
		self._started = False
		self._schedules: DBOSScheduleBackend | None = None

	@property
	def files_dir(self) -> Path:
		"""The persistent file store shared by the workers (see `Settings.files_dir`)."""
		return self.settings.store_files_dir

	def seen_store(self, scope: str) -> StoreSeen | None:
		"""Where a server's replay guard keeps what it took, when this store is shared by machines.

		On PostgreSQL, a table in the store's database (`openmolt_dbos._seen`): servers on
		several machines share the store and nothing else, and each one's own file would let a
		delivery retried to another machine run there again. On SQLite, None: the servers share
		the machine, and ``openmolt serve`` keeps its own file beside the store's.

		Args:
			scope: Whose entries these are (``hook:<agent>``, ``chat:telegram:<agent>``...).
		"""
		if self.settings.is_sqlite:
			return None
		from openmolt_dbos._seen import StoreSeen

		return StoreSeen(self.engine.tables, scope)

	def task_rows(self, scope: str) -> StoreTasks | None:
		"""Where a server's A2A tasks (or AG-UI threads) are kept, when this store is shared by machines.

		On PostgreSQL, a table in the store's database (`openmolt_dbos._a2a_tasks`): servers on
		several machines behind one address share the store and nothing else, and a task kept
		in one's own file was "task not found" on the others (a thread's parked run was not
		found by its ``resume``). On SQLite, None: the servers share the machine, and
		``openmolt serve`` keeps the rows in its file beside the store's.

		Args:
			scope: Whose rows these are (``a2a:<agent>``, ``agui:<agent>``).
		"""
		if self.settings.is_sqlite:
			return None
		from openmolt_dbos._a2a_tasks import StoreTasks

		return StoreTasks(self.engine.tables, scope)

	def register(self, agent: Agent) -> None:
		"""Know an agent by name in this process (its runs recover here)."""
		self.engine.register(agent)

	async def start(self) -> None:
		"""Launch the engine in this process (once); recovers its executor's unfinished runs."""
		require_asyncio("durable runs")
		if not self._started:
			self._started = True
			self.engine.users += 1
		await self.engine.launch()

	async def aclose(self) -> None:
		"""Release the engine; the last instance of the process stops it (runs stay recoverable)."""
		if self._started:
			self._started = False
			await self.engine.release()

	def schedule_backend(self) -> DBOSScheduleBackend:
		"""The durable schedule backend (one run per due time across all workers)."""
		if self._schedules is None:
			from openmolt_dbos._schedules import DBOSScheduleBackend

			self._schedules = DBOSScheduleBackend(self)
		return self._schedules

	# runs ---------------------------------------------------------------------------------

	async def drive(
		self,
		agent: Agent,
		state: RunState,
		answer: str | None,
		decisions: Sequence[ApprovalDecision] = (),
	) -> RunResult:
		"""Run a state as the workflow ``state.run_id``; return when it ends or parks.

		A run parked on tool calls that wait for approval (``approval_required``) has ended
		its workflow: resuming it with ``decisions`` starts the run's next segment.
		"""
		if DBOS.step_id is not None:
			raise _inside_a_step(agent.name)
		await self.start()
		run_id = state.run_id
		status = None
		if state.steps or state.pending is not None:  # a saved run: its workflow may exist
			status = await self._latest(run_id)
		if status is not None:  # before anything: another agent's run is not driven
			_refuse_other_agent(status, agent.name, run_id)
			if await self._cancelled_kept(status, run_id):
				raise _cancelled(
					run_id
				)  # cancelled while parked (an approval, an account) or failed
		# A state parked on a question: the question's id is its step (`_finish` names it so).
		asked = (state.pending or {}).get("kind") == "human_input"
		if status is not None and status.status == "CANCELLED":
			raise _cancelled(run_id)  # final: neither an answer nor a decision goes on with it
		# The latest segment went on from this state's step and parked again right where this
		# state waits (calls left without a decision, a capability asking again): nothing of
		# the step ran there, and this state is the run's current park, to go on from.
		again = status is not None and await self._parked_here(status, run_id, state)
		if decisions and status is not None:
			steps, _ = _segment(status.workflow_id, run_id)
			# A segment went on from this state (or later): its calls were decided then, unless
			# that very segment failed (the kept state may go on, see below) or parked again
			# where this state waits.
			if steps > state.steps or (
				steps == state.steps and not self._failed(status) and not again
			):
				if steps == state.steps and await self._segment_ends(status, state):
					# Another delivery to this park goes on from it: what it comes to decides.
					return await self.drive(agent, state, answer, decisions)
				later = await self._parked_later(status, run_id, state, decisions)
				if later is None:
					raise _decided(run_id, state.steps, decisions)
				# That segment parked again in this step, on calls this delivery decides: the
				# run's current park, which it goes on from.
				state, again = later, True
		going = status is not None and status.status in ("PENDING", "ENQUEUED")
		if status is not None and going and status.workflow_id not in self.engine.ended:
			# The run's workflow is still going (parked on this question, or running).
			if _segment(status.workflow_id, run_id)[0] == state.steps:
				await self._refuse_other_given(status.workflow_id, run_id, agent, state)
			skip = None
			if answer is not None:  # to this state's question only, never to a later one
				text = sealed.answer(answer, agent.redact)
				skip = await self._send(status, text, state.steps if asked else None)
			# Its outcome may have come before this delivery waited for it (a question's
			# park; what an answer led to): the store is read first.
			return await self._await(status.workflow_id, agent, skip=skip, look=True)
		if status is not None:  # a new segment goes on as the agent that parked the run
			refuse_other_definition(self.engine, status, run_id, agent.name)
		if asked and status is not None:
			await self._refuse_answered(run_id, state.steps)
		wid = run_id if status is None else f"{run_id}+{state.steps}"  # a new segment
		if status is not None and status.workflow_id != run_id:
			steps, retry = _segment(status.workflow_id, run_id)
			if steps == state.steps:  # the latest segment went on from this very state
				failed = self._failed(status)
				# Failed (a refused resume, a provider down): the kept state goes on in a
				# segment of its own (attached to, the failed one would only raise its error
				# again); else the same state resumed again attaches to that segment. Unless
				# that segment did what would be done again: a parked state delivered again, or
				# a state a failure kept gone on from again (a stale copy, its next failure's
				# kept state holds more).
				if failed and (
					state.pending is not None or await self._went_on_from(status, state)
				):
					await self._refuse_repeat(status.workflow_id, run_id, steps)
				# Parked again where this state waits: the next segment goes on from it
				# (attached to, the one that parked would only return its park again).
				wid = f"{run_id}+{steps}~{retry + 1}" if failed or again else status.workflow_id
		waiter = self.engine.waiter(wid)
		labels = self._labels(run_id, agent)
		args = sealed.workflow_args(agent, state, answer, decisions)  # what DBOS keeps: masked
		lost = False  # another delivery's segment took the id: its waiter, its start
		if status is not None and wid == status.workflow_id:  # attached to: it went on from here
			await self._refuse_other_given(wid, run_id, agent, state)
		try:
			created = await self._start(wid, labels, args, attach=not decisions)
			lost = not created and bool(decisions)  # else attached to it (or it is ours)
			if not created and not lost:  # another delivery started it a moment ago
				await self._refuse_other_given(wid, run_id, agent, state)
			if not lost:
				# Attached to: what it came to before (a question's park) is in the store.
				return await self._await(wid, agent, waiter=waiter, look=not created)
		finally:
			if not lost:
				self.engine.created.discard(wid)  # when the workflow never began
				self.engine.forget(wid)
			elif not (self.engine.runs_here(wid) or wid in self.engine.created):
				self.engine.forget(wid)  # the segment is another process's: nobody here waits
		# Another delivery started the segment a moment ago, from the park this one read (two
		# approvers at once): what that segment comes to decides, as for one found going.
		return await self.drive(agent, state, answer, decisions)

	async def _refuse_other_given(
		self, wid: str, run_id: str, agent: Agent, state: RunState
	) -> None:
		"""Refuse a word for a capability's park other than the one its segment went on with.

		A run a capability parked goes on from its park once, in the segment ``wid`` the first
		delivery started: the same word again (a retry) attaches to it and gets what came of
		it. Attached with another word, that word would be dropped unsaid, its caller handed
		the result of a word it did not give (a second decision on a decided call is refused
		the same way). Nothing is refused when the segment's input cannot be read.

		Raises:
			ConfigurationError: ``state`` carries another ``given`` than the segment went on with.
		"""
		pending = state.pending or {}
		if "given" not in pending:
			return
		client = self.engine.client()
		found = await client.list_workflows_async(workflow_ids=[wid], load_output=False)
		inputs: Any = found[0].input if found else None  # {"args": [...], "kwargs": ...}
		args = inputs.get("args") if isinstance(inputs, dict) else None
		earlier = args[1] if isinstance(args, list | tuple) and len(args) > 1 else None
		went = earlier.get("pending") if isinstance(earlier, dict) else None
		if not isinstance(went, dict) or went.get("step") != pending.get("step"):
			return  # another park's segment, or unreadable
		mine = sealed.workflow_args(agent, state, None)[1]["pending"].get("given")  # as kept
		if json.dumps(went.get("given"), sort_keys=True) == json.dumps(mine, sort_keys=True):
			return
		raise ConfigurationError(
			f"resume: run {run_id} went on from this park (step {state.steps}) already, with "
			"another word given to the capability that parked it; a park goes on once, and "
			"this word was not used (the same word again gets what came of it). See where the "
			f"run is with om.result({run_id!r}) or `openmolt runs --all`"
		)

	async def _parked_here(self, status: WorkflowStatus, run_id: str, state: RunState) -> bool:
		"""Whether a segment of the run ended parked at the very point ``state`` is parked at.

		A segment that goes on from a parked step and parks again in it without running
		anything (the calls left without a decision park again; a capability asks again) ends
		with the same step waiting on the same calls: that park is the run's current one, and
		a delivery to it starts the next segment. A segment that ran any of the step's calls
		parks with fewer calls waiting, or later.
		"""
		where = _parked_at(state.pending)
		if where is None or status.workflow_id == run_id:
			return False  # not parked on calls; or the run's first workflow, no segment yet
		found = await self._ended_outcome(status)
		if found is None or found.kind != "done" or not isinstance(found.payload, dict):
			return False
		ended = found.payload.get("state")
		return isinstance(ended, dict) and _parked_at(ended.get("pending")) == where

	async def _segment_ends(self, status: WorkflowStatus, state: RunState) -> bool:
		"""Wait until the run's segment going on from ``state``'s park ends; whether it did.

		A delivery to a park another delivery resumed a moment ago may answer the park that
		segment comes to (two approvers of a step's two calls, deciding at once): what the
		segment comes to decides whether this one goes on. False, at once, for a segment that
		has ended, or a state parked on no calls (a question's answer is sent to the run); and
		for one that came to a question (its workflow waits for the answer: the run went past
		the calls this delivery decides).
		"""
		wid = status.workflow_id
		if (
			status.status not in ("PENDING", "ENQUEUED")
			or wid in self.engine.ended
			or _parked_at(state.pending) is None
		):
			return False
		while True:
			found = await self._outcome(wid)
			if found is not None:
				return found.kind != "parked"
			await anyio.sleep(min(self.settings.poll, 0.25))

	async def _parked_later(
		self, status: WorkflowStatus, run_id: str, state: RunState, decisions: Sequence[Any]
	) -> RunState | None:
		"""The run's current park, when it is a later park of ``state``'s step these decisions answer.

		A segment went on from ``state``'s park with another delivery, ran some of its calls
		and parked again in the same step on the others (those left without a decision). A
		decision for one of those was not used by anyone: it goes on from that park (the
		segment's state), where it is checked again (`openmolt_core._approve.resume`). None
		when the segment did not end parked so, or a decision is for a call that no longer
		waits (decided, run): such a delivery is refused.
		"""
		where = _parked_at(state.pending)
		if where is None or status.workflow_id == run_id or not decisions:
			return None
		found = await self._ended_outcome(status)
		if found is None or found.kind != "done" or not isinstance(found.payload, dict):
			return None
		ended = found.payload.get("state")
		if not isinstance(ended, dict):
			return None
		pending = ended.get("pending")
		now = _parked_at(pending)
		if now is None or now[:2] != where[:2] or not set(now[3]) <= set(where[3]):
			return None  # parked elsewhere, or on other calls: not a later park of this one
		assert isinstance(pending, dict)  # `_parked_at` read it
		if not all(getattr(d, "call", None) in _waiting_calls(pending) for d in decisions):
			return None
		return RunState.from_dict(ended)

	def _failed(self, status: WorkflowStatus) -> bool:
		"""Whether a run's workflow ended on an error (in this process a moment ago, or stored)."""
		return status.status == "ERROR" or self.engine.ended.get(status.workflow_id) == "error"

	async def _refuse_answered(self, run_id: str, step: int) -> None:
		"""Refuse to answer a question again once the run went on from another answer to it.

		Started from the parked state again (with an answer, or without one: run(history=...)),
		the run would repeat everything it did after the question (its tool calls too).

		Raises:
			AlreadyAnsweredError: An answer to the question of ``step`` is recorded for the run.
		"""
		if await anyio.to_thread.run_sync(answered_in_run, self.engine.tables, run_id, str(step)):
			raise AlreadyAnsweredError(
				f"resume: the question of run {run_id} at step {step} was already answered (the "
				"first answer wins; an answer given now is not used) and the run went on from "
				"it; going on from its parked state again would repeat what it did since. See "
				f"where it is now with om.result({run_id!r}) or `openmolt runs --all`",
				run_id=run_id,
				question=str(step),
			)

	async def _went_on_from(self, status: WorkflowStatus, state: RunState) -> bool:
		"""Whether the failed segment ``status`` went on from ``state``, not kept it.

		A failure keeps the state it reached (``RunError.result.state``), at the step the
		segment went on from when it failed before the next one ended: both have its step
		count. The kept one numbered the events of what the segment did; a state numbered
		before it is the one the segment went on from (or an older copy). Read as such when
		the error's state cannot be read.

		A segment that failed here a moment ago may not be recorded yet (DBOS records the
		error after the caller got it): its error is waited for, up to `_RECORDING` seconds.
		"""
		wid = status.workflow_id
		found = await self._outcome(wid)
		with anyio.move_on_after(_RECORDING):
			while found is None and self.engine.ended.get(wid) == "error":
				await anyio.sleep(min(self.settings.poll, 0.1))
				found = await self._outcome(wid)
		error = found.payload if found is not None and found.kind == "error" else None
		kept = getattr(getattr(error, "result", None), "state", None)
		return not isinstance(kept, RunState) or state.seq < kept.seq

	async def _refuse_repeat(self, failed: str, run_id: str, steps: int) -> None:
		"""Refuse to go on again from a state whose failed segment ran steps with effects.

		The segment took the answer or decision, ran the parked calls (or more) and then failed
		(the model down for good, a refused resume of another capability): started again from
		the parked state, it would run them again, and the memory callbacks, guardrail agents,
		capabilities' own steps and questions to a person it ran too (any step not known to be
		free of effects). The same holds for a state an earlier failure kept, gone on from again
		after the segment that went on from it failed. The state its error kept
		(``RunError.result.state``) holds their results and goes on without them.
		"""
		client = self.engine.client()
		journal = await client.list_workflow_steps_async(failed, load_output=False)
		if any(s["function_name"].startswith(_DECIDED) for s in journal):
			try:  # whether a handler decided (a person asked) is in the step's value
				journal = await client.list_workflow_steps_async(failed, load_output=True)
			except Exception:  # a value this process cannot read: taken as a person asked
				log.debug("durable: could not read the steps of %s", failed, exc_info=True)
		ran = [s["function_name"] for s in journal if _had_effect(s["function_name"], s)]
		if ran:
			raise ConfigurationError(
				f"resume: run {run_id} was resumed from step {steps} already, and that segment "
				f"ran {quantity(len(ran), 'step')} that may have had effects (tool calls, memory "
				"updates, guardrail agents, capabilities' own steps, a person asked: "
				f"{', '.join(ran[:3])}) before it failed; going on from this state again would "
				"run them again. Go on from "
				"the state its error kept (RunError.result.state, e.g. "
				"agent.run(history=that_state)), or start a new run"
			)

	async def begin(self, agent: Agent, state: RunState) -> None:
		"""Start a new state as the workflow ``state.run_id`` and return once DBOS recorded it.

		The workflow runs on in this process; a run id already taken attaches to its run.
		"""
		await self.start()
		wid = state.run_id
		labels = self._labels(wid, agent)
		await self._start(wid, labels, sealed.workflow_args(agent, state, None))

	def _labels(self, run_id: str, agent: Agent) -> dict[str, Any]:
		# The definition that makes the journal: a recovery by another is refused (`_runs`).
		made = self.engine.definitions.get(agent.name)
		return {"openmolt_run": run_id, "openmolt_agent": agent.name, FINGERPRINT: made}

	async def _start(
		self, wid: str, labels: dict[str, Any], args: tuple[Any, ...], *, attach: bool = True
	) -> bool:
		# A start that creates the workflow tells its first execution so: the journal is empty,
		# and the execution need not read it. DBOS refuses ("reject") to create a workflow whose
		# id is taken; such a workflow is attached to instead (and its journal is read), unless
		# ``attach`` is False (decisions: another delivery's segment did not take them).
		# True: this start created the workflow.
		mine = wid not in self.engine.created  # else another delivery here is creating it
		self.engine.created.add(wid)
		try:
			with (
				SetWorkflowID(wid, workflow_id_reuse_policy="reject"),
				SetWorkflowAttributes(labels),
			):
				await DBOS.start_workflow_async(run_workflow, *args)
			return True
		except DBOSWorkflowIDInUseError:
			if mine:
				self.engine.created.discard(wid)
			if not attach:
				return False
		# Taken: by this run (another delivery of it), or by another agent's run of that id (a
		# run id given by hand), which is not attached to: its result is not this agent's.
		found = await self.engine.client().list_workflows_async(
			workflow_ids=[wid], load_output=False
		)
		if found:
			_refuse_other_agent(found[0], str(labels["openmolt_agent"]), labels["openmolt_run"])
			_refuse_other_user(found[0], args, labels["openmolt_run"])
		with SetWorkflowID(wid), SetWorkflowAttributes(labels):
			await DBOS.start_workflow_async(run_workflow, *args)
		return False

	async def _await(
		self,
		wid: str,
		agent: Agent | None,
		*,
		waiter: _Waiter | None = None,
		skip: str | None = None,
		look: bool = False,
	) -> RunResult:
		waiter = waiter or self.engine.waiter(wid)
		try:
			outcome = await self.wait(wid, waiter, skip=skip, look=look)
			if outcome.kind == "cancelled":  # stopped here: the store says how far it got
				outcome = await self._outcome(wid) or outcome
		finally:
			self.engine.forget(wid)
		return self._result(outcome, agent)

	async def wait(
		self, wid: str, waiter: _Waiter, *, skip: str | None = None, look: bool = False
	) -> Outcome:
		"""The next outcome of a workflow: from this process at once, else by polling the store.

		Args:
			wid: The workflow id.
			waiter: Registered before the workflow started (`Engine.waiter`).
			skip: A question id already answered: its park does not count.
			look: Read the store before the first wait, for a workflow that was going before
				the waiter was registered: an outcome it had by then (a park on a question) is
				told to no waiter again, and a run of this process is otherwise read from the
				store only after 20 polls.
		"""
		while True:
			outcome = waiter.outcome
			if outcome is not None:
				if not _answered(outcome, skip):
					return outcome
				waiter = self.engine.waiter(wid)  # the park of the question just answered
			if not look:
				# A run going on in this process says when it parks or ends; others are polled.
				poll = self.settings.poll * (20 if self.engine.runs_here(wid) else 1)
				with anyio.move_on_after(poll):
					await waiter.event.wait()
				if waiter.event.is_set():
					continue
			look = False
			found = await self._outcome(wid)
			if found is not None and not _answered(found, skip):
				return found

	def _result(self, outcome: Outcome, agent: Agent | None) -> RunResult:
		if outcome.kind == "cancelled":  # not recorded yet (it is, at once: DBOS cancels in SQL)
			raise ConfigurationError("durable run was cancelled")
		if outcome.kind == "error":
			error = outcome.payload
			if isinstance(error, BaseException):
				raise error
			raise ConfigurationError(f"durable run failed: {error}")
		if isinstance(outcome.payload, dict) and "skipped" in outcome.payload:
			raise ConfigurationError(f"the run was skipped: {outcome.payload['skipped']}")
		return result_of(outcome.payload, agent)

	async def _outcome(self, wid: str) -> Outcome | None:
		client = self.engine.client()
		found = await client.list_workflows_async(workflow_ids=[wid], load_input=False)
		if not found:
			return None
		status = found[0]
		if status.status == "CANCELLED":
			return Outcome("error", await self._cancelled_error(status))
		parked = None
		if attrs(status).get("openmolt_parked"):
			parked = await client.get_event_async(wid, PARK_EVENT, timeout_seconds=0)
		return outcome_of(status, parked)

	async def _cancelled_error(
		self, status: WorkflowStatus, *, parked: RunResult | None = None
	) -> RunCancelledError:
		"""The error of a cancelled run, with its state as far as the store kept it.

		That is the state of its last park (a question's park event, or the park its workflow
		returned: ``parked``), else the state its workflow went on from (its input); what it
		did since is not in it (the cancel stopped it where it was).
		"""
		run_id = str(attrs(status).get("openmolt_run", status.workflow_id))
		message = (
			f"durable run {run_id} was cancelled (openmolt runs --cancel): it ended there, and "
			"takes no answer or resume"
		)
		state = parked.state if parked is not None else await self._last_state(status, run_id)
		result = RunResult(
			output=None,
			status="error",
			human_message="",
			plan=list(state.plan),
			steps=state.steps,
			usage=state.usage,
			state=state,
			error=message,
		)
		return RunCancelledError(message, result=result)

	async def _last_state(self, status: WorkflowStatus, run_id: str) -> RunState:
		"""A workflow's latest state in the store: its park's, else its input's, else a new one."""
		client = self.engine.client()
		wid = status.workflow_id
		data: Any = None
		try:
			parked = await client.get_event_async(wid, PARK_EVENT, timeout_seconds=0)
			if isinstance(parked, dict):
				data = parked.get("state")
			if data is None:
				found = await client.list_workflows_async(workflow_ids=[wid], load_output=False)
				given: Any = found[0].input if found else None  # {"args": [...], "kwargs": ...}
				args = given.get("args") if isinstance(given, dict) else None
				data = args[1] if isinstance(args, list | tuple) and len(args) > 1 else None
			if isinstance(data, dict):
				return RunState.from_dict(data)
		except Exception:  # unreadable: the turn is still the run's, with nothing of it
			log.warning("durable run %s: its last state could not be read", run_id, exc_info=True)
		return RunState(run_id=run_id)

	async def _latest(self, run_id: str) -> WorkflowStatus | None:
		# A run's workflows: its id, then `<id>+<steps>` for segments started from its state
		# (the latest has the most steps; creation times may tie at the store's resolution).
		found = await find(self.engine, {"openmolt_run": run_id}, workflow_id_prefix=run_id)
		return max(found, key=lambda s: _segment(s.workflow_id, run_id), default=None)

	async def _ended_outcome(self, status: WorkflowStatus) -> Outcome | None:
		"""The outcome a workflow that returned was recorded with; None if it did not return.

		One that returned in this process a moment ago is waited for while DBOS records it
		(up to `_RECORDING` seconds).
		"""
		if status.status != "SUCCESS" and self.engine.ended.get(status.workflow_id) != "done":
			return None
		found = await self._outcome(status.workflow_id)
		with anyio.move_on_after(_RECORDING):  # ended here a moment ago: DBOS is recording it
			while found is None:
				await anyio.sleep(min(self.settings.poll, 0.1))
				found = await self._outcome(status.workflow_id)
		return found

	async def _parked_in(self, status: WorkflowStatus) -> bool:
		"""Whether the run's workflow ended with the run parked (on an approval, an account).

		A run parked on a question is not: its workflow waits for the answer.
		"""
		found = await self._ended_outcome(status)
		data = found.payload if found is not None and found.kind == "done" else None
		result = data.get("result") if isinstance(data, dict) else None
		return isinstance(result, dict) and result.get("status") in PARKED_STATUSES

	async def _kept(self, status: WorkflowStatus) -> bool:
		"""Whether the run's workflow ended with a state that may go on in a new segment.

		Parked on an approval or an account (`_parked_in`), or failed: its error keeps the
		state it reached (``RunError.result.state``), which ``agent.run(history=...)`` goes on
		from, as the parked state delivered again may. DBOS has nothing to cancel in either:
		only the record of the cancel (`record_cancel`) stops the run.
		"""
		return self._failed(status) or await self._parked_in(status)

	async def _cancelled_kept(self, status: WorkflowStatus, run_id: str) -> bool:
		"""Whether the run, parked in an ended workflow or failed, was cancelled (`cancel`)."""
		failed = self._failed(status)
		if (
			not failed
			and status.status != "SUCCESS"
			and self.engine.ended.get(status.workflow_id) != "done"
		):
			return False
		found = await anyio.to_thread.run_sync(cancelled_runs, self.engine.tables, [run_id])
		return run_id in found and (failed or await self._parked_in(status))

	async def _send(self, status: WorkflowStatus, text: str, step: int | None = None) -> str:
		# ``text``: the answer masked (`openmolt_dbos._sealed.answer`); it is recorded and sent.
		run_id = str(attrs(status).get("openmolt_run", status.workflow_id))
		if status.status == "CANCELLED":
			raise _cancelled(run_id)  # its question stays marked, but nobody waits for it
		question = attrs(status).get("openmolt_question")
		parked = bool(attrs(status).get("openmolt_parked")) and isinstance(question, dict)
		pending_id = str(question.get("id")) if parked and isinstance(question, dict) else None
		if step is not None and pending_id != str(step):
			# The question it answers is not the pending one: answered (the run went past it),
			# or never asked.
			past = pending_id is not None and pending_id.isdigit() and int(pending_id) > step
			if past or await anyio.to_thread.run_sync(
				claimed, self.engine.tables, status.workflow_id, str(step)
			):
				raise AlreadyAnsweredError(run_id=run_id, question=str(step))
			raise ConfigurationError(
				f"run {run_id} waits for no answer to the question of step {step}; see "
				"`openmolt runs`"
			)
		if not parked:
			if await anyio.to_thread.run_sync(answered, self.engine.tables, status.workflow_id):
				raise AlreadyAnsweredError(
					run_id=run_id
				)  # by another answer (the run may have ended)
			raise ConfigurationError(
				f"run {run_id} waits for no answer (status {status.status.lower()}); see "
				"`openmolt runs`"
			)
		qid = str(pending_id)
		won = await anyio.to_thread.run_sync(
			claim_answer, self.engine.tables, status.workflow_id, qid, str(text)
		)
		# The winner sends; a loser sends the winner's text again (the key makes it a no-op),
		# should the winner have died between recording the answer and sending it.
		await self.engine.client().send_async(
			status.workflow_id,
			{"question": qid, "text": str(text) if won is None else won},
			ANSWER_TOPIC,
			idempotency_key=f"{status.workflow_id}:{qid}",
		)
		if won is not None:
			raise AlreadyAnsweredError(run_id=run_id, question=qid)
		return qid

	async def answer(self, run_id: str, text: str, *, step: int | None = None) -> None:
		"""Answer a parked run's question (from any process; the first answer wins).

		Args:
			run_id: The run's id.
			text: The answer.
			step: The step of the question answered (`PendingRun.step`); None: the pending one.

		Raises:
			AlreadyAnsweredError: Another answer to the question won (this one was not used).
			ConfigurationError: No run has that id, or it waits for no answer.
		"""
		require_asyncio("om.answer")
		status = await self._latest(run_id)
		if status is None:
			raise ConfigurationError(f"no durable run has the id {run_id!r}; see `openmolt runs`")
		# Masked by the run's agent when this process knows it, else by the instance's secrets.
		agent = self.engine.agents.get(str(attrs(status).get("openmolt_agent", "")))
		redact = agent.redact if agent is not None else sealed.instance_redactor(self.om.secrets)
		await self._send(status, sealed.answer(text, redact), step)

	async def pending(self, *, agent: str | None = None) -> list[PendingRun]:
		"""The runs parked on a question, oldest question first."""
		require_asyncio("om.pending")
		labels: dict[str, Any] = {"openmolt_parked": True}
		if agent is not None:
			labels["openmolt_agent"] = agent
		statuses = await find(self.engine, labels, status=["PENDING", "ENQUEUED"])
		out = []
		for status in statuses:
			labels = attrs(status)
			question = labels.get("openmolt_question")
			if not isinstance(question, dict):
				continue
			out.append(
				PendingRun(
					run_id=str(labels.get("openmolt_run", status.workflow_id)),
					agent=str(labels.get("openmolt_agent", "")),
					question=str(question.get("message", "")),
					asked_at=asked_at(question),
					step=int(question.get("step", 0)),
					user=None if question.get("user") is None else str(question["user"]),
				)
			)
		return sorted(out, key=lambda p: p.asked_at)

	@property
	def worker_id(self) -> str:
		"""This process's worker id (the executor id its runs are recorded under)."""
		return self.engine.executor_id

	async def taken_from_here(self, run_id: str) -> bool:
		"""Whether another worker took a workflow of the run over from this process's worker.

		Its caller here was paused past the lease (or its database away): whoever follows the
		run for that caller now (`openmolt_serve.chats`) decides by a claim, as for a gone
		worker's run.

		Args:
			run_id: The run's id.
		"""
		return await anyio.to_thread.run_sync(
			was_taken_from, self.engine.tables, run_id, self.engine.executor_id
		)

	async def runs(self, *, agent: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
		"""The latest durable runs (newest first): id, agent, status, parked, worker, times.

		One row per run, read from its latest workflow (a run resumed from a park goes on in a
		segment of its own): ``status`` is the run's (`openmolt_dbos._runs.listed_status`):
		``parked`` while it waits for someone (``parked_on`` says on what: a question, an
		approval, an account; ``waiting_for`` says for what, in one line), ``stranded`` when no
		live worker serves its agent version, ``pending`` or ``enqueued`` while it runs, else how
		it ended (``success``, ``failure``, ``limit_reached``, ``error``, ``cancelled``...).
		``worker_live`` says whether the run's worker beats now (this process included): a run
		of a live worker has a process that follows it; one of a gone worker is taken over.
		``taken_from`` names the worker the run was last taken over from (by any worker: kept in
		the store, `openmolt_dbos._taken`), also once that worker beats again (it started again
		under its id: the caller that waited for the run is gone all the same), for whoever
		follows the run for that worker's caller; None when it was not taken over, or is back
		under that worker.
		"""
		require_asyncio("openmolt runs")
		labels = {"openmolt_agent": agent} if agent is not None else {}
		versions = await anyio.to_thread.run_sync(self.engine.live_versions)
		beating = await anyio.to_thread.run_sync(self.engine.live_workers)
		latest: dict[str, WorkflowStatus] = {}  # newest run first: its newest workflow first
		began: dict[str, int | None] = {}  # when each run's first workflow listed was created
		# Workflows are listed a page at a time until `limit` runs are found: the agent filter
		# is applied here (SQLite cannot in SQL) and a run may have several workflows, so one
		# page of `limit` workflows could hold fewer runs than asked for.
		offset, page = 0, max(limit, 50)
		while True:
			listed = await self.engine.client().list_workflows_async(
				name=WORKFLOW,
				load_input=False,
				load_output=False,
				sort_desc=True,
				limit=page,
				offset=offset,
			)
			for status in listed:
				if any(attrs(status).get(k) != v for k, v in labels.items()):
					continue
				run_id = str(attrs(status).get("openmolt_run", status.workflow_id))
				if run_id not in latest and len(latest) >= limit:
					continue  # an older run than those listed: only its own rows matter
				began[run_id] = status.created_at
				seen = latest.get(run_id)
				if seen is None or _segment(status.workflow_id, run_id) > _segment(
					seen.workflow_id, run_id
				):
					latest[run_id] = status
			if len(listed) < page or len(latest) >= limit:
				break
			offset += page
		# A workflow that returned holds the run's result, which says how the run ended or
		# where it parked: read for those only (the others' status is their workflow's). One
		# that returned here a moment ago is read once DBOS has recorded it.
		returned = [s.workflow_id for s in latest.values() if s.status == "SUCCESS"]
		ending = [w.workflow_id for w in latest.values() if w.workflow_id in self.engine.ended]
		outputs: dict[str, Any] = {}
		for status in await self._recorded(returned, ending):
			run_id = str(attrs(status).get("openmolt_run", status.workflow_id))
			latest[run_id] = status
			if status.status == "SUCCESS":
				outputs[status.workflow_id] = status.output
		# Those parked in an ended workflow, or failed, may have been cancelled (`cancel`).
		kept = [r for r, s in latest.items() if s.workflow_id in outputs or s.status == "ERROR"]
		cancelled = await anyio.to_thread.run_sync(cancelled_runs, self.engine.tables, kept)
		moving = [s.workflow_id for s in latest.values() if s.status in ("PENDING", "ENQUEUED")]
		taken_over = await anyio.to_thread.run_sync(taken_from, self.engine.tables, moving)
		out = []
		for run_id, status in latest.items():
			shown, parked_on, waiting = listed_status(
				status, outputs.get(status.workflow_id), cancelled=run_id in cancelled
			)
			going = status.status in ("PENDING", "ENQUEUED")
			taken = taken_over.get(status.workflow_id)
			if taken == status.executor_id:
				taken = None  # back under the worker it was taken from
			# A run no live worker can resume: its agent version is served nowhere.
			if going and bool(status.app_version) and status.app_version not in versions:
				shown = "stranded"
			out.append(
				{
					"run_id": run_id,
					"workflow_id": status.workflow_id,
					"agent": attrs(status).get("openmolt_agent", ""),
					"status": shown,
					"parked_on": parked_on,
					"waiting_for": waiting,
					"version": status.app_version,
					"worker": status.executor_id,
					"worker_live": status.executor_id in beating,
					"taken_from": taken,
					"created_at": _ms(began.get(run_id)),
					"updated_at": _ms(status.updated_at),
				}
			)
		return out

	async def _recorded(self, returned: list[str], ending: list[str]) -> list[WorkflowStatus]:
		"""The workflows ``returned`` and ``ending`` with their outputs, ``ending`` once recorded.

		``ending``: workflows that ended in this process, which DBOS may still be recording
		(waited for up to `_RECORDING` seconds, as `_ended_outcome` does).
		"""
		wanted = list(dict.fromkeys([*returned, *ending]))
		if not wanted:
			return []
		client = self.engine.client()
		found = await client.list_workflows_async(workflow_ids=wanted, load_input=False)
		with anyio.move_on_after(_RECORDING):
			while any(
				s.status in ("PENDING", "ENQUEUED") for s in found if s.workflow_id in ending
			):
				await anyio.sleep(min(self.settings.poll, 0.1))
				found = await client.list_workflows_async(workflow_ids=wanted, load_input=False)
		return list(found)

	async def cancel(self, run_id: str) -> str:
		"""Cancel an unfinished run (running, parked, stranded, or failed); its workflow id.

		DBOS cancels the workflow, so its parked question is refused an answer and no later step
		begins (`DurabilityBackend.cancel`). Then this waits until the run has stopped, so that
		nothing of it runs once this returns: the call under way is stopped where it is (its
		effect may or may not have happened, as for a crash), a sub-agent in a tool step with
		it. In this process, its task is cancelled and awaited. In another worker, DBOS sees the
		cancel within about a second and stops the step; that worker records that the run
		stopped, and this waits for the record, up to `CANCEL_WAIT` seconds. A parked run, or
		one whose worker no longer beats, runs nowhere: nothing to wait for. Past the wait, a
		warning says the run's worker has not confirmed (it is stuck in code that ignores
		cancellation, or cannot reach the store); the run is cancelled all the same, and no step
		of it begins any more. A run parked on an approval or an account, or failed (its error
		kept a state that may go on), has no workflow going: the cancel is recorded, and refuses
		whatever would go on with it later.

		Args:
			run_id: The run's id.

		Raises:
			ConfigurationError: No run has that id, or it has ended (done, or cancelled).
		"""
		require_asyncio("openmolt runs")
		status = await self._latest(run_id)
		if status is not None and await self._kept(status):
			# Parked on an approval or an account (its workflow returned the park), or failed
			# (its error kept the state, which may go on in a new segment): DBOS has nothing
			# to cancel; the record refuses the run's next delivery or resume (`drive`), and a
			# segment that begins after it stops at its start (`openmolt_dbos._runs`).
			await anyio.to_thread.run_sync(record_cancel, self.engine.tables, run_id)
			later = await self._latest(run_id)
			if later is None or later.workflow_id == status.workflow_id:
				return status.workflow_id
			# A delivery that passed its check before the record started the run's next
			# segment meanwhile: it is cancelled as any run under way (once it ended, the
			# run has ended, or parked or failed again: the record holds that state).
			if later.status not in ("PENDING", "ENQUEUED") and await self._kept(later):
				return later.workflow_id
		status = await self._going(run_id)
		wid = status.workflow_id
		how = self.engine.ended.get(wid)
		if how is not None:  # it ended here a moment ago; DBOS is recording it
			raise ConfigurationError(
				f"run {run_id} has ended ({'an error' if how == 'error' else 'done'}); nothing "
				"to cancel"
			)
		await self.engine.client().cancel_workflow_async(wid)
		here = self.engine.runs_here(wid)
		if here and not await self.engine.stop(wid, CANCEL_WAIT):
			log.warning(
				"cancel: run %s was cancelled, but its call under way did not stop within %.0f "
				"s (code that ignores cancellation); no step of it begins any more",
				run_id,
				CANCEL_WAIT,
			)
		elif not here:
			await self._await_stop(run_id, status)
		return wid

	async def _await_stop(self, run_id: str, status: WorkflowStatus) -> None:
		"""Wait until another worker running a cancelled run says it stopped (`cancel`)."""
		from openmolt_dbos._workers import stopped

		executor = status.executor_id
		queued = status.status == "ENQUEUED"
		if not (status.status == "PENDING" or queued) or not executor:
			return
		if queued or attrs(status).get("openmolt_parked"):
			# Queued (a takeover's) or parked on a question when read, before the cancel: a
			# worker may have dequeued it since, or an answer come, and the run gone on. Read
			# again now that it is cancelled: a dequeue names the worker that runs it, a run
			# that goes on from its question marks itself so before its next step, and a step
			# that begins after the cancel never runs.
			found = await self.engine.client().list_workflows_async(
				workflow_ids=[status.workflow_id], load_input=False, load_output=False
			)
			if not found or attrs(found[0]).get("openmolt_parked"):
				return  # it runs nowhere
			if queued and found[0].executor_id == executor:
				return  # still queued when cancelled: no worker took it
			executor = found[0].executor_id or executor
		if executor == self.engine.executor_id and self.engine.launched:
			return  # this worker, but not running it now (it ended a moment ago)
		tables = self.engine.tables
		with anyio.move_on_after(CANCEL_WAIT):
			while True:
				if await anyio.to_thread.run_sync(stopped, tables, status.workflow_id):
					return
				if not await anyio.to_thread.run_sync(self.engine.worker_live, executor):
					return  # its worker is gone: nothing of it runs
				await anyio.sleep(min(self.settings.poll, 0.25))
		log.warning(
			"cancel: run %s was cancelled, but worker %s has not confirmed within %.0f s that it "
			"stopped it (the call under way ignores cancellation, or the worker cannot reach the "
			"store); no step of it begins any more",
			run_id,
			executor,
			CANCEL_WAIT,
		)

	async def migrate(self, run_id: str, version: str | None = None) -> str:
		"""Resume an unfinished run on the agent definition live workers serve; its workflow id.

		For a run stranded by a compatible change (a tool added, instructions reworded): its
		application version becomes ``version`` (default: this process's if it runs durable
		work, else the one version the live workers serve), and a worker of it resumes the run
		from its journal. A replay that asks for other steps than the journal holds stops with
		an error naming the step (the change was not compatible): cancel such a run instead.
		A run parked on an approval or an account, or failed with a state that may go on, runs
		nowhere: it is released from the definition that parked it, and the next delivery to
		it goes on as the agent that delivers it (`refuse_other_definition`).

		Args:
			run_id: The run.
			version: The application version to move it to (see `openmolt runs --all`).

		Raises:
			ConfigurationError: No run has that id, it has ended (and may not go on), it is
				not stranded (a live worker serves its version: moved, it would run in two
				places at once), or the version is ambiguous.
		"""
		latest = await self._latest(run_id)
		if latest is not None and latest.status not in ("PENDING", "ENQUEUED"):
			if await self._kept(latest) and not await self._cancelled_kept(latest, run_id):
				await self.engine.client().update_workflow_attributes_async(
					latest.workflow_id, {FINGERPRINT: None}, merge=True
				)
				return latest.workflow_id
		status = await self._going(run_id)
		live = sorted(await anyio.to_thread.run_sync(self.engine.live_versions))
		if status.app_version in live:
			raise ConfigurationError(
				f"migrate {run_id}: the run is not stranded: a live worker serves its version "
				f"({status.app_version}) and runs it, or takes it over; moved, it would run in "
				"two places at once. Only stranded runs move (see `openmolt runs --all`)"
			)
		if version is None:
			if len(live) != 1:
				raise ConfigurationError(
					f"migrate {run_id}: live workers serve {len(live)} versions "
					f"({', '.join(live) or 'none'}); name one with --version, and start a worker "
					"of the new definition first"
				)
			version = live[0]

		def move() -> bool:
			import sqlalchemy as sa

			client = self.engine.client()
			table = client._sys_db.tables.workflow_status  # DBOS's own table (no public API for it)
			with client._sys_db.engine.begin() as conn:
				# Only from the stranded version read above: a migration that moved it meanwhile
				# (another process's, at the same moment) handed it to a worker already, and a
				# resume now would take it from the execution under way and run it again.
				moved = conn.execute(
					sa.update(table)
					.where(table.c.workflow_uuid == status.workflow_id)
					.where(table.c.status.in_(("PENDING", "ENQUEUED")))
					.where(table.c.application_version == status.app_version)
					.values(application_version=version)
				).rowcount
			if not moved:
				return False
			# Moved on purpose: whichever definition that version serves replays it.
			client.update_workflow_attributes(status.workflow_id, {FINGERPRINT: None}, merge=True)
			client.resume_workflow(status.workflow_id)
			return True

		if not await anyio.to_thread.run_sync(move):
			raise ConfigurationError(
				f"migrate {run_id}: the run is no longer stranded at version {status.app_version}: "
				"another migration moved it a moment ago (or it ended); see `openmolt runs --all`"
			)
		return status.workflow_id

	async def _going(self, run_id: str) -> WorkflowStatus:
		require_asyncio("openmolt runs")
		status = await self._latest(run_id)
		if status is None:
			raise ConfigurationError(f"no durable run has the id {run_id!r}; see `openmolt runs`")
		if status.status not in ("PENDING", "ENQUEUED"):
			raise ConfigurationError(
				f"run {run_id} has ended (status {status.status.lower()}); nothing to do"
			)
		return status

	async def result(self, run_id: str, *, wait: bool = True) -> RunResult | None:
		"""A run's result from the store.

		With ``wait``, once the run has ended or parked on an approval or an account (its
		workflow returned the park: ``agent.resume`` goes on in a new one); a run parked on a
		question is still going (its workflow waits for ``om.answer``), so this waits for its
		answer and what follows. Without, at once: the result of an ended run, the
		``human_input_required`` result of one parked on a question, or None while it runs.

		Raises:
			RunError: The run ended on an error (with its state).
			ConfigurationError: No run has that id.
		"""
		require_asyncio("om.result")
		status = await self._latest(run_id)
		if status is None:
			raise ConfigurationError(f"no durable run has the id {run_id!r}; see `openmolt runs`")
		if await self._cancelled_kept(status, run_id):  # it parked or failed, then cancelled
			if self._failed(status):
				found = await self._outcome(status.workflow_id)
			else:
				found = await self._ended_outcome(status)
			payload = found.payload if found is not None else None
			agent = self.engine.agents.get(str(attrs(status).get("openmolt_agent", "")))
			parked = result_of(payload, agent) if isinstance(payload, dict) else None
			if isinstance(payload, RunError) and payload.result is not None:
				parked = payload.result  # the state its failure kept
			raise await self._cancelled_error(status, parked=parked)
		agent = self.engine.agents.get(str(attrs(status).get("openmolt_agent", "")))
		wid = status.workflow_id
		while True:
			found = await self._outcome(wid)
			if not wait:
				return None if found is None else self._result(found, agent)
			if found is not None and found.kind != "parked":
				return self._result(found, agent)
			waiter = self.engine.waiter(wid)
			with anyio.move_on_after(self.settings.poll):
				await waiter.event.wait()
			self.engine.forget(wid)


def _cancelled(run_id: str) -> ConfigurationError:
	"""The error of an answer or a resume given to a cancelled run (a cancel is final)."""
	return ConfigurationError(
		f"run {run_id} was cancelled (openmolt runs --cancel): it takes no answer and does not "
		"go on from its state (this answer or decision was not used, nothing ran); start a new "
		"run instead"
	)


def _inside_a_step(agent: str) -> ConfigurationError:
	"""The error of a run started inside a durable run's step (DBOS asserts there, wordless).

	A tool's function or a callback runs inside its run's journaled step, and a durable run
	cannot start another one from there; a nested run is part of that step instead.
	"""
	from openmolt_core._support.docs import docs_url

	return ConfigurationError(
		f"agent {agent!r} was run inside a step of a durable run (a tool's function or a "
		"callback) without parent=context.run; pass it (agent.run(task, parent=context.run)) so "
		"its run is part of the calling step, or give the agent as a tool (tools=[agent]) "
		f"({docs_url('guides/agents-as-tools.md')})"
	)


def _refuse_other_agent(status: WorkflowStatus, agent: str, run_id: str) -> None:
	"""Refuse to drive, or attach to, a stored run with another agent than the one it runs.

	The run's workflow names its agent exactly (``openmolt_agent``); a run id names it only by
	a slug (serve's ``run_id_for``), so "Helper" and "helper" look alike there. Driven by the
	other one, a parked run's answer or decisions would go to a run of another agent, or a new
	segment would go on from its state with another definition.

	Raises:
		ConfigurationError: The run was started by an agent of another name (nothing ran).
	"""
	made = attrs(status).get("openmolt_agent")
	if made is None or made == agent:
		return
	raise ConfigurationError(
		f"run {run_id} is a run of agent {made!r}, not of agent {agent!r} (agent names are "
		"exact: case counts); it was not resumed, answered nor attached to, and nothing ran. "
		f"Resume it with agent {made!r}, or start a new run (with a run id of its own)"
	)


def _refuse_other_user(status: WorkflowStatus, args: tuple[Any, ...], run_id: str) -> None:
	"""Refuse to attach to a stored run that acts for another end user than this start.

	A taken run id attaches to its run (a retry gets its result, nothing runs twice); a start
	for another user (`RunState.user`) under that id is no retry: attached, its caller would get
	that user's run as its own. Nothing is refused when the stored input cannot be read.

	Raises:
		ConfigurationError: The run was started for another user (or for none, or for one).
	"""
	inputs: Any = status.input  # {"args": [...], "kwargs": ...}
	stored = inputs.get("args") if isinstance(inputs, dict) else None
	earlier = stored[1] if isinstance(stored, list | tuple) and len(stored) > 1 else None
	mine = args[1] if len(args) > 1 else None
	if not isinstance(earlier, dict) or not isinstance(mine, dict):
		return
	if earlier.get("user") == mine.get("user"):
		return
	raise ConfigurationError(
		f"run {run_id} acts for another user than this one: a run id is one run, and this start "
		"was not attached to it, nor run (nothing ran). Start this user's run under a run id "
		"of its own"
	)


def _decided(run_id: str, step: int, decisions: Sequence[ApprovalDecision]) -> ApprovalError:
	"""The error of decisions delivered to a parked state that another delivery resumed."""
	return ApprovalError(
		f"resume: the calls run {run_id} parked at step {step} were already decided: another "
		"delivery resumed it from there (a call is decided once, and a decision is used once; "
		f"this one was not used). See what came of it with om.result({run_id!r}) or "
		"`openmolt runs --all`",
		problem="replayed",
		call=str(getattr(decisions[0], "call", "") or ""),
	)


CANCEL_WAIT = 10.0
"""The most seconds `DBOSBackend.cancel` waits for the cancelled run to stop where it runs."""

_NO_EFFECTS = (
	"model:",
	"compact:",
	"start",
	"approval:",
	"hook:",
	"deadline:",
	"DBOS.",
)
"""The journal steps known to have no effect outside the run: model calls (a compaction's too),
the run's start, an approval decision delivered with the resume (one whose handler asked a
person is not: `_had_effect`), a capability's decision on a call (``hook:``: a decision again,
not an effect; the call it lets through is a tool step, and one under way when the segment failed
is in doubt), the budget's clock and sleeps. Every other step may have had one (a tool call, a
memory callback, a guardrail agent's run, a capability's own step, a question to the
human-input handler, ``human:`` and ``indoubt:``, whose person got a message): unknown is taken as
effectful."""


_DECIDED = "approval:"
"""The journal steps of approval decisions: delivered with the resume (no effect), or decided by
the approval handler (a person asked): the step's value tells them apart (`_had_effect`)."""


def _had_effect(name: str, step: Mapping[str, Any]) -> bool:
	"""Whether the journal's step ``name`` (its row ``step``) may have had an effect.

	Asking a person is one: the handler sent them a message, and the run delivered again from
	the park before it would send it again. An approval step asked one when its handler decided
	(`openmolt_core._approve.ASKED`); a decision delivered with the resume asked nobody. A step
	whose value could not be read counts as one that asked.
	"""
	if name.startswith(_DECIDED):
		from openmolt_core._approve import ASKED  # loaded with the runs that have approvals

		output = step.get("output")  # None when not loaded
		return not isinstance(output, dict) or bool(output.get(ASKED))
	return not name.startswith(_NO_EFFECTS)


def _segment(workflow_id: str, run_id: str) -> tuple[int, int]:
	# `<id>` (0), `<id>+<steps>`, and `<id>+<steps>~<n>`: the n-th retry of a failed segment.
	rest = workflow_id[len(run_id) :]
	if not rest:
		return 0, -1  # before `<id>+0`
	head, _, retry = rest.partition("~")
	if head.startswith("+") and head[1:].isdigit() and (retry.isdigit() or not retry):
		return int(head[1:]), int(retry or 0)
	return -1, 0


def _waiting_calls(pending: dict[str, Any]) -> set[str]:
	"""The step keys of the calls a state parked on calls still waits on (no result yet)."""
	results = pending.get("results")
	calls = pending.get("calls")
	if not isinstance(results, list) or not isinstance(calls, list):
		return set()
	return {
		str(c.get("call"))
		for c in calls
		if isinstance(c, dict)
		and isinstance(c.get("index"), int)
		and 0 <= c["index"] < len(results)
		and results[c["index"]] is None
	}


_RECORDING = 10.0  # seconds to wait for DBOS to record the outcome of a segment that ended here


def _answered(outcome: Outcome, skip: str | None) -> bool:
	if skip is None or outcome.kind != "parked" or not isinstance(outcome.payload, dict):
		return False
	state = outcome.payload.get("state") or {}
	return str(state.get("steps")) == skip


def _ms(value: int | None) -> str | None:
	if value is None:
		return None
	from datetime import UTC, datetime

	return datetime.fromtimestamp(value / 1000, UTC).isoformat()
