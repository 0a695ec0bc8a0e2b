"""What the viewer knows of this process's runs, and the questions and approvals waiting on a person.

`LiveRuns` is a run observer (`openmolt_core.observe`): it keeps each run of this process in
memory with its events, redacted, as the page shows them. Everything changes on the viewer's event
loop; `LiveRuns.changed` is an `anyio.Event` replaced at each change, so a page's stream waits on
it and then reads what is new (no queue per reader, nothing to fall behind).
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import anyio

from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome, event_data
from openmolt_core.runstore import caller_of  # the store's rule of a nested run, for a row in hand

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.events import Event

__all__ = [
	"ApprovalDecision",
	"Approvals",
	"LiveRun",
	"LiveRuns",
	"PendingApproval",
	"Question",
	"by_model",
	"caller_of",
	"callers",
	"clean_start",
	"tainted_by",
	"tainted_calls",
]

_current_run: contextvars.ContextVar[ObservedRun | None] = contextvars.ContextVar(
	"openmolt_ui_run", default=None
)
"""The run whose task is running now (set when an observed run starts), for questions."""


def _now() -> str:
	return datetime.now(UTC).isoformat()


@dataclass(slots=True)
class LiveRun:
	"""A run of this process, as the page shows it.

	Args:
		run: What the observer was told about it (agent, state, redactor).
		status: ``running``, ``waiting`` (for a person), or how it ended.
		started: When it (first) started.
		updated: When it last changed.
		events: Its events, redacted, each with an ``id`` increasing over the whole run.
		error: What went wrong, redacted.
		output: The finish output, redacted.
	"""

	run: ObservedRun
	status: str = "running"
	started: str = field(default_factory=_now)
	updated: str = field(default_factory=_now)
	events: list[dict[str, Any]] = field(default_factory=list)
	error: str | None = None
	output: Any = None

	def summary(self) -> dict[str, Any]:
		"""The run's row in the page's list (the same shape as `StoredRun.to_dict`)."""
		state = self.run.state
		pending = state.pending
		return {
			"run_id": self.run.run_id,
			"agent": self.run.agent_name,
			"model": self.run.model,
			"status": self.status,
			"started": self.started,
			"updated": self.updated,
			"ended": None if self.status in ("running", "waiting") else self.updated,
			"input": self.run.redact.deep(self.run.input),
			"user": None if state.user is None else self.run.redact(state.user),
			"steps": state.steps,
			"usage": state.usage.to_dict(),
			"usage_by_model": by_model(state.usage_by_model),
			"output": self.output,
			"error": self.error,
			"pending": None  # redacted, as the run store keeps it
			if pending is None
			else self.run.redact.deep({k: v for k, v in pending.items() if k != "results"}),
			"plan": self.run.redact.deep(state.plan),
			"stored": [dict(s) for s in state.stored],  # results too large for the model
			"pid": self.run.pid,
			"trigger": self.run.trigger,
			"taint": tainted_calls(state.taint),
			"tainted_by": tainted_by(
				state.taint, self.run.redact(state.user) if state.user else None
			),
			"clean_start": clean_start(self.run.trigger, state.taint),
			"live": True,
		}


def callers(run_id: str) -> list[str]:
	"""The ids a nested run's callers may have, nearest first (none for a top-level run).

	A run nested in a tool call has its caller's id followed by ``.<step>.<index>``, then
	``.<n>`` for the call's n-th run (`openmolt_core.agent`); a guardrail agent's, the judged
	run's followed by ``.guard.<step>.<stage>.<index>.<n>.<name>``
	(`openmolt_core.guardrails.base`). Which dots end a caller's id cannot be read from the id
	alone (``X.1.0.2`` is the second run of ``X``'s call, or a run of ``X.1.0``...): every
	prefix up to a dot is given, and only those that are runs mean anything (`LiveRuns._chain`
	follows the runs' own record of their caller first).

	Args:
		run_id: The run's id.
	"""
	parts = run_id.split(".")
	return [".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]


def by_model(usage_by_model: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
	"""A run's tokens and cost per model (``provider:model``), as the page reads them.

	Args:
		usage_by_model: ``RunState.usage_by_model`` (each a `Usage`).
	"""
	return {str(k): u.to_dict() for k, u in usage_by_model.items()}


def tainted_calls(taint: Sequence[Any]) -> list[str]:
	"""The step keys of the calls whose untrusted results the model read (`RunState.taint`).

	The page marks those calls' outputs as untrusted: someone other than the user wrote them.
	Records of what else tainted the run (its input, its memory, a tool list) are `tainted_by`.

	Args:
		taint: The run's taint records (``{"call", "tool", "step"}`` each).
	"""
	return [
		str(t["call"])
		for t in taint
		if isinstance(t, Mapping) and str(t.get("call") or "").startswith("tool:")
	]


def tainted_by(taint: Sequence[Any], user: str | None = None) -> list[str]:
	"""What tainted the run from its start, as the page says it: not a call's result.

	A run starts tainted by its input (a trigger's: ``{"call": "input", "tool": "webhook:Triage"}``,
	`openmolt_core.taint.untrusted_input`), by its memory a tainted run wrote
	(``memory:longTerm``), or by a tool list a source gave (``tools:<id>``); the calls whose
	results were untrusted are `tainted_calls`.

	Args:
		taint: The run's taint records (`RunState.taint`).
		user: The end user the run is for: its long-term memory is theirs (unless the agent's
			memory is shared), and so is the mark a tainted run of theirs left on it.
	"""
	out = []
	for record in taint:
		if not isinstance(record, Mapping):
			continue
		call, where = str(record.get("call") or ""), str(record.get("tool") or "")
		if call.startswith("tool:"):
			continue  # a call's result: the page marks the call
		if call == "input" and where.endswith(":earlier"):
			out.append(f"an earlier turn of its session, which was tainted ({where})")
		elif call == "input":
			out.append(f"its input ({where})" if where else "its input")
		elif call.startswith("memory:") and user:
			out.append(
				f"{where or call} (the run is for end user {user}: the memory is theirs, unless "
				"the agent's is shared)"
			)
		else:
			out.append(where or call)
	return out


_CLEAN_BECAUSE = {
	"webhook": "the operator vouches for this webhook's payloads (trustPayload)",
	"agui": "the operator vouches for this AG-UI endpoint's users (trustInput)",
	"chat": "its sender is a user id the operator trusts (allowedUsers)",
}
"""Why a run of a trigger whose input comes from outside starts clean (`starting_taint`)."""


def clean_start(trigger: Any, taint: Sequence[Any]) -> str | None:
	"""Why a run a trigger started with outside input began clean, or None.

	A webhook's, an AG-UI request's or a chat message's run starts tainted unless the operator
	vouched for its input or trusts its sender (`openmolt_core.triggers.starting_taint`); such a
	run whose taint has no record of its input was trusted, and the page says by which setting.

	Args:
		trigger: The run's trigger (``{"kind": "webhook", ...}``).
		taint: The run's taint records.
	"""
	kind = trigger.get("kind") if isinstance(trigger, Mapping) else None
	if not isinstance(kind, str) or kind not in _CLEAN_BECAUSE:
		return None
	if any(isinstance(t, Mapping) and t.get("call") == "input" for t in taint):
		return None
	return _CLEAN_BECAUSE[kind]


@dataclass(slots=True)
class Question:
	"""A question a live run waits on: the page's answer goes straight back to the agent.

	Args:
		id: The question's id.
		run_id: The run that asks (empty if the handler was called outside an observed run).
		agent: The agent's name.
		message: The question, redacted.
		asked: When it was asked.
	"""

	id: str
	run_id: str
	agent: str
	message: str
	asked: str = field(default_factory=_now)
	answer: str | None = None
	_done: anyio.Event = field(default_factory=anyio.Event)

	def to_dict(self) -> dict[str, Any]:
		"""The question as the page reads it."""
		return {
			"id": self.id,
			"kind": "live",
			"run_id": self.run_id,
			"agent": self.agent,
			"message": self.message,
			"asked": self.asked,
		}


@dataclass(frozen=True, slots=True)
class PendingApproval:
	"""A tool call waiting for a person's decision, as the page shows it.

	Args:
		tool: The tool handle (``stripe.createRefund``).
		input: The call's input, redacted.
		reason: Why it needs approval, or the agent's reason for the call.
		run_id: The run that makes the call (default: the current observed run).
		agent: The agent's name (default: the current observed run's).
		step: The step of the call.
		rule: The policy rule that asks for approval, if any.
	"""

	tool: str
	input: Mapping[str, Any]
	reason: str = ""
	run_id: str = ""
	agent: str = ""
	step: int = 0
	rule: str = ""


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
	"""What a person decided about a pending call.

	Args:
		action: ``approve``, ``deny``, or ``edit`` (approve with the edited ``input``).
		reason: Why (for a denial: the model reads it).
		input: The edited input, for ``edit``.
	"""

	action: Literal["approve", "deny", "edit"]
	reason: str = ""
	input: Mapping[str, Any] | None = None

	@property
	def approved(self) -> bool:
		"""Whether the call may run (approved as is or with edits)."""
		return self.action != "deny"


@dataclass(slots=True)
class _Waiting:
	id: str
	pending: PendingApproval
	asked: str = field(default_factory=_now)
	decision: ApprovalDecision | None = None
	done: anyio.Event = field(default_factory=anyio.Event)

	def to_dict(self) -> dict[str, Any]:
		p = self.pending
		return {
			"id": self.id,
			"run_id": p.run_id,
			"agent": p.agent,
			"step": p.step,
			"tool": p.tool,
			"input": dict(p.input),
			"reason": p.reason,
			"rule": p.rule,
			"kind": "live",
			"asked": self.asked,
		}


def _row(run_id: str, event: Event, data: dict[str, Any]) -> dict[str, Any]:
	"""An event as the page reads it (`StoredEvent.to_dict`'s shape, numbered by `_keep`)."""
	return {
		"run_id": run_id,
		"seq": event.seq,
		"name": event.name,
		"step": event.step,
		"time": _now(),
		"data": data,
	}


def _keep(live: LiveRun, row: dict[str, Any]) -> None:
	"""Add an event to a live run, numbered over the whole run (``id``)."""
	live.events.append({"id": len(live.events) + 1, **row})
	live.updated = _now()


class LiveRuns(RunObserver):
	"""The runs of this process and what waits on a person (an observer: add it to the instance).

	Args:
		keep: How many ended runs to keep in memory (older ones remain in the run store).
	"""

	def __init__(self, keep: int = 200) -> None:
		self.keep = keep
		self.runs: dict[str, LiveRun] = {}
		self.questions: dict[str, Question] = {}
		self.approvals = Approvals(self)
		self._changed: anyio.Event | None = None  # made on the loop, at first use
		self.version = 0
		self._ids = itertools.count(1)
		self._tokens: dict[str, list[contextvars.Token[ObservedRun | None]]] = {}
		self._asking: dict[str, int] = {}  # run id: how many questions and calls wait in it
		# events emitted outside a run before it started here (a schedule's fire), by run id
		self._early: dict[str, list[dict[str, Any]]] = {}

	@property
	def changed(self) -> anyio.Event:
		"""Set at the next change (take it before reading, then wait on it)."""
		if self._changed is None:
			self._changed = anyio.Event()
		return self._changed

	def touch(self) -> None:
		"""Tell every waiting page that something changed."""
		self.version += 1
		changed, self._changed = self._changed, None
		if changed is not None:
			changed.set()

	# the observer -----------------------------------------------------------------------

	async def started(self, run: ObservedRun) -> None:
		"""Add the run (or mark a resumed one as running again)."""
		live = self.runs.get(run.run_id)
		if live is None:
			live = self.runs[run.run_id] = LiveRun(run)
			for early in self._early.pop(run.run_id, ()):
				_keep(live, early)
			self._forget_old()
		else:
			live.run = run
			live.status, live.error = "running", None
		live.updated = _now()
		self._tokens.setdefault(run.run_id, []).append(_current_run.set(run))
		self.touch()

	async def event(self, run: ObservedRun, event: Event) -> None:
		"""Keep the event (redacted), numbered over the whole run."""
		live = self.runs.get(run.run_id)
		if live is None:
			return
		_keep(live, _row(run.run_id, event, event_data(event, run.redact)))
		self.touch()

	async def outside(self, agent: Agent, event: Event, data: dict[str, Any]) -> None:
		"""Keep an event emitted outside a drive with the run it names, as the run store does.

		A schedule's ``schedule:run`` comes before its run starts here: it is kept until it
		does (for the latest `keep` runs not started yet). A ``schedule:skip`` names no run:
		the run store keeps it as a row of its own, this memory of live runs does not.
		"""
		if not event.run_id:
			return
		row = _row(event.run_id, event, data)  # masked by the sink, as a run's events are
		live = self.runs.get(event.run_id)
		if live is None:
			self._early.setdefault(event.run_id, []).append(row)
			while len(self._early) > self.keep:
				del self._early[next(iter(self._early))]
			return
		_keep(live, row)
		self.touch()

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""Record how the run ended."""
		tokens = self._tokens.get(run.run_id)
		if tokens:
			try:
				_current_run.reset(tokens.pop())
			except ValueError:  # ended in another context than it started: nothing to restore
				pass
		if not tokens:  # the run's last drive ended: nothing of it stays (one entry per run)
			self._tokens.pop(run.run_id, None)
		live = self.runs.get(run.run_id)
		if live is None:
			return
		live.status = outcome.status
		live.error = outcome.error
		if outcome.result is not None:
			live.output = run.redact.deep(outcome.result.to_dict()["output"])
		live.updated = _now()
		self.touch()

	def _forget_old(self) -> None:
		ended = [r for r in self.runs.values() if r.status not in ("running", "waiting")]
		for old in ended[: max(len(ended) - self.keep, 0)]:
			del self.runs[old.run.run_id]

	# questions from live runs -----------------------------------------------------------

	async def ask(self, message: str) -> str:
		"""A human-input handler: the question shows in the page, and this waits for its answer.

		Use it as ``on_human_input_request`` (``Viewer.ask`` is this). The run's own timeout
		still bounds the wait.
		"""
		run = _current_run.get()
		redact = run.redact if run is not None else (lambda text: text)
		question = Question(
			id=f"q{next(self._ids)}",
			run_id=run.run_id if run is not None else "",
			agent=run.agent_name if run is not None else "",
			message=redact(message),
		)
		self.questions[question.id] = question
		with self.waiting(question.run_id):  # its end tells the pages: the question is gone
			try:
				await question._done.wait()
			finally:
				self.questions.pop(question.id, None)
		return question.answer or ""

	def answer(self, question_id: str, answer: str) -> bool:
		"""Answer a live question; False if no question with that id waits."""
		question = self.questions.get(question_id)
		if question is None or question._done.is_set():
			return False
		question.answer = answer
		question._done.set()
		return True

	@contextmanager
	def waiting(self, run_id: str) -> Iterator[None]:
		"""Show the run, and the runs that called it, as waiting for a person while inside.

		A sub-agent's question or call waits in the page; its run is not in the list, so the run
		that called it (and that run's callers) says it waits too.

		Args:
			run_id: The run that asks (a sub-agent's: its caller's id, ``.<step>.<index>``).
		"""
		chain = self._chain(run_id) if run_id else []
		for one in chain:
			self._asking[one] = self._asking.get(one, 0) + 1
			live = self.runs.get(one)
			if live is not None and live.status == "running":
				live.status = "waiting"
		self.touch()
		try:
			yield
		finally:
			for one in chain:
				left = self._asking.pop(one, 1) - 1
				if left:
					self._asking[one] = left
				live = self.runs.get(one)
				if not left and live is not None and live.status == "waiting":
					live.status = "running"
			self.touch()

	def _chain(self, run_id: str) -> list[str]:
		"""A run and the runs it nests in, nearest first: by their record while live here."""
		chain = [run_id]
		while True:
			live = self.runs.get(chain[-1])
			if live is None:  # not live here: every prefix that may be one of its callers
				return [*chain, *callers(chain[-1])]
			parent = caller_of(chain[-1], live.run.trigger)
			if parent is None or parent in chain:
				return chain
			chain.append(parent)

	def current(self) -> ObservedRun | None:
		"""The observed run whose task calls this, if any."""
		return _current_run.get()


class Approvals:
	"""Tool calls waiting for a person's decision in the page.

	The approval handler of a run calls `ask` with the pending call; the page lists it, and the
	person's decision comes back as an `ApprovalDecision`.

	Args:
		runs: The live runs (to say which run waits, and to wake the pages).
	"""

	def __init__(self, runs: LiveRuns) -> None:
		self._runs = runs
		self._waiting: dict[str, _Waiting] = {}
		self._ids = itertools.count(1)

	@property
	def pending(self) -> list[dict[str, Any]]:
		"""The calls waiting now, as the page reads them."""
		return [w.to_dict() for w in self._waiting.values()]

	async def ask(self, pending: PendingApproval) -> ApprovalDecision:
		"""Show a pending call in the page and wait for the decision.

		Args:
			pending: The call. Its input should already be redacted; inside an observed run it
				is masked again with that run's redactor (the page never trusts the caller to
				have done it), and the run id and agent default to that run's.
		"""
		run = self._runs.current()
		if run is not None:
			pending = PendingApproval(
				tool=pending.tool,
				input=run.redact.deep(dict(pending.input)),
				reason=run.redact(pending.reason),
				run_id=pending.run_id or run.run_id,
				agent=pending.agent or run.agent_name,
				step=pending.step or run.state.steps,
				rule=pending.rule,
			)
		waiting = _Waiting(f"a{next(self._ids)}", pending)
		self._waiting[waiting.id] = waiting
		with self._runs.waiting(pending.run_id):  # its end tells the pages: the call is gone
			try:
				await waiting.done.wait()
			finally:
				self._waiting.pop(waiting.id, None)
		assert waiting.decision is not None
		return waiting.decision

	def decide(self, approval_id: str, decision: ApprovalDecision) -> bool:
		"""Give a pending call its decision; False if nothing with that id waits."""
		waiting = self._waiting.get(approval_id)
		if waiting is None or waiting.done.is_set():
			return False
		waiting.decision = decision
		waiting.done.set()
		return True
