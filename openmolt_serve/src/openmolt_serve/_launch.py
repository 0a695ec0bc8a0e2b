"""Start runs in the server's task group and say when each has started (and so is recorded).

A trigger answers once its run has started: in process, when the run's first drive begins; on a
durable backend, when its workflow (whose id is the run id) has started, so that a crash after
the answer loses nothing (the backend recovers the workflow). A run id derived from the sender's
delivery id makes a retried delivery land on the same run rather than start a second one.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from openmolt_core.accounts import authorization_requests
from openmolt_core.errors import ConfigurationError, OpenMoltError, RunError
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome, started_by
from openmolt_core.openmolt import OpenMolt
from openmolt_core.result import PARKED_STATUSES, RunResult, RunState
from openmolt_core.taint import untrusted_input
from openmolt_core.triggers import DEFAULT_CALLER, starting_taint
from openmolt_serve._recent import recent

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.approvals import ApprovalDecision
	from openmolt_core.llm import Attachment
	from openmolt_core.sessions import Session

__all__ = [
	"MAX_SESSIONS",
	"Done",
	"Launcher",
	"RunCancelled",
	"Sessions",
	"caller_sender",
	"caller_user",
	"cancel_if_parked",
	"connect_text",
	"in_memory_sessions",
	"key_refused",
	"record_unstarted",
	"run_id_for",
	"run_trigger",
	"scope_prefix",
	"session_id",
]

log: logging.Logger = logging.getLogger("openmolt")


class RunCancelled(OpenMoltError):
	"""The run was stopped by `Launcher.cancel` (its client left): what its ``done`` gets."""


Done = Callable[[RunResult | None, BaseException | None], Awaitable[None]]
"""Called when a run ends: its result, or the error it ended with."""


async def cancel_if_parked(om: OpenMolt, run_id: str, *, going: bool = False) -> bool:
	"""Cancel a durable run that is parked, on whatever it waits for; whether it was.

	Parked on a question, its workflow waits; parked on an approval or an account, its workflow
	returned the park. Both read as a parked result (``om.result(run_id, wait=False)``), the one
	status query a surface asks: `OpenMolt.pending` lists questions only. A run that ended, was
	cancelled or is unknown is left as it is; so is one that goes on, unless ``going``.

	Args:
		om: The instance (durable, else nothing is done).
		run_id: The run.
		going: Cancel a run that goes on too: the surface saw it parked, and a delivery from
			elsewhere (an operator's approval, an answer through ``om.answer``) resumed it
			since; its caller asked for it to stop (A2A's CancelTask).

	Raises:
		OpenMoltError: The store could not be read, or the cancel failed.
	"""
	if om.durability is None:
		return False
	try:
		result = await om.result(run_id, wait=False)
	except (RunError, ConfigurationError):  # ended on an error, cancelled, or no such run
		return False
	if result is None and going:
		try:
			await om.cancel(run_id)
		except ConfigurationError:  # it ended a moment ago
			return False
		return True
	if result is None or result.status not in PARKED_STATUSES:
		return False
	await om.cancel(run_id)
	return True


Sessions = Callable[[str], "Session"]
"""Gives the session of a conversation id (`openmolt_core.sessions`): where chats keep theirs."""


MAX_SESSIONS = 10_000
"""The most conversations `in_memory_sessions` keeps: past it the least recently used one of the
caller holding the most is forgotten (a store, ``openmolt serve``'s SQLite file, keeps every one)."""


def in_memory_sessions() -> Sessions:
	"""Sessions kept in this process (one per id): what a server uses unless given a store.

	At most `MAX_SESSIONS`: each A2A context, AG-UI thread or chat is one, and callers choose
	their ids.
	"""
	from openmolt_core.sessions import InMemorySession

	kept: OrderedDict[str, Session] = OrderedDict()

	def get(session_id: str) -> Session:
		return recent(
			kept, session_id, lambda: InMemorySession(session_id), most=MAX_SESSIONS, owner=_party
		)

	return get


_NAMESPACE = uuid.UUID("8b0c6a5e-2f4b-4f55-9a39-9f0e0b7e1a20")


def run_id_for(kind: str, agent: str, delivery: str | None, *, scope: str | None = None) -> str:
	"""The run id of a trigger: stable for one delivery id, random without one.

	Args:
		kind: ``hook``, ``telegram``, ``slack``.
		agent: The agent's name.
		delivery: The sender's id of the delivery (None: a new random id).
		scope: What the run belongs to (a chat), readable in the id: `scope_prefix` finds the
			runs of one chat among a durable store's.
	"""
	tail = (
		uuid.uuid5(_NAMESPACE, f"{kind}:{agent}:{scope}:{delivery}").hex
		if delivery
		else uuid.uuid4().hex
	)
	return f"{scope_prefix(kind, agent, scope)}{tail}"


def _party(session: str) -> str:
	"""Whose conversation a `session_id` is: its surface, agent and caller (all but its key)."""
	return session.rpartition(":")[0]


def session_id(kind: str, agent: str, key: str, *, caller: str = DEFAULT_CALLER) -> str:
	"""The session of one conversation a surface serves: ``<kind>:<agent>:<key>``.

	A conversation of a named caller of A2A or AG-UI (`openmolt_serve._token`) is
	``<kind>:<agent>:<caller>:<key>``: two callers using one context or thread id never share
	it. `DEFAULT_CALLER`'s keeps the id without a caller (the sessions it had before callers).

	The agent's name and the key (a thread, a chat, a context id) may hold a ``:`` (an agent
	named for its model, ``openai:gpt-5-mini``): each writes ``%`` as ``%25``, ``:`` as ``%3A``
	and a control character as its ``%XX`` (which no store takes: a webhook payload's key may
	hold one), so two conversations never share one session (agent ``x`` thread ``y:z`` and
	agent ``x:y`` thread ``z``). A name and key without any are written as they are, as before.

	Args:
		kind: The surface (``agui``, ``a2a``, ``hook``, a chat channel's type).
		agent: The agent's name.
		key: The conversation's id on that surface.
		caller: Whose conversation it is (A2A, AG-UI).
	"""
	if caller != DEFAULT_CALLER:
		return f"{kind}:{_escaped(agent)}:{_escaped(caller)}:{_escaped(key)}"
	return f"{kind}:{_escaped(agent)}:{_escaped(key)}"


def key_refused(kind: str, agent: str, key: str, *, caller: str = DEFAULT_CALLER) -> str | None:
	"""Why a conversation's key from outside cannot name a session, or None when it can.

	The rule is the session id's (`openmolt_core._support.userids.key_problem`), said of the
	key as the session id writes it (a control character as its ``%XX``: it aliases nothing),
	then of the whole session id (`session_id`), which ``run(session=...)`` checks: a request
	refused here is answered before anything is claimed or run, not failed at the run's door.

	Args:
		kind: The surface, as for `session_id`.
		agent: The agent's name.
		key: The conversation's id as the request gave it (a thread, a context, a payload's key).
		caller: Whose conversation it is, as for `session_id`.
	"""
	from openmolt_core._support.userids import key_problem

	return key_problem(_escaped(key)) or key_problem(session_id(kind, agent, key, caller=caller))


def caller_sender(caller: str) -> str | None:
	"""Who sent a run's input, for its trigger (`run_trigger`'s ``sender``): a named caller.

	An A2A or AG-UI run of a named caller (`openmolt_serve._token`) is recorded as that
	caller's (the run store's trigger, the run viewer's origin, the run's span); None for
	`DEFAULT_CALLER` (a single token: no name to tell) and for `NOBODY`.

	Args:
		caller: The caller the token guard admitted the request for.
	"""
	from openmolt_serve._token import NOBODY

	return None if caller in (DEFAULT_CALLER, NOBODY) else caller


def caller_user(kind: str, agent: str, caller: str) -> str | None:
	"""The end user a run of a named A2A or AG-UI caller acts for: ``<kind>:<agent>:<caller>``.

	A named caller (`openmolt_serve._token`: a front end, a partner) is one party, so its runs
	act for it as a chat's run acts for its sender: their long-term memory and its taint mark,
	the files they keep and the accounts integrations bound per end user use are the caller's
	own (`openmolt_core.accounts`), and the run store, the run viewer and ``openmolt logs
	--user`` name it. The agent's name is part of it, as in a webhook's user
	(`openmolt_serve.webhooks.webhook_user`): callers are named in each agent's settings, so
	caller ``crm`` of one agent is not caller ``crm`` of another (nor of the other protocol).
	Both are written as in a session id (`session_id`: a ``:`` in the agent's name is ``%3A``).

	None (no user, the agent's own memory, as before callers) for `DEFAULT_CALLER` (a single
	token: the one caller) and for `NOBODY`.

	Args:
		kind: ``agui`` or ``a2a``.
		agent: The agent's name.
		caller: The caller the token guard admitted the request for.
	"""
	if caller_sender(caller) is None:
		return None
	return session_id(kind, agent, caller)


def _escaped(part: str) -> str:
	return _ESCAPED.sub(lambda m: f"%{ord(m[0]):02X}", part)


_ESCAPED = re.compile(r"[%:\x00-\x1f\x7f]")


def _slug(text: str, size: int) -> str:
	return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:size]


def scope_prefix(kind: str, agent: str, scope: str | None = None) -> str:
	"""How the run ids of one kind, agent (and scope) begin."""
	head = f"{kind}-{_slug(agent, 24) or 'agent'}-"
	if scope is not None:
		head += f"{uuid.uuid5(_NAMESPACE, scope).hex[:12]}-"
	return head


def connect_text(state: RunState) -> str:
	"""What a run parked on ``authorization_required`` tells its user: the consent links.

	Every surface says it in these words (a chat, an A2A task's status, an AG-UI interrupt);
	the caller masks it with the instance's secrets before it leaves.

	Args:
		state: The parked run's state (`openmolt_core.accounts.authorization_requests`).
	"""
	links = [
		f"{r.get('integration')}: {r.get('url')}"
		for r in authorization_requests(state)
		if r.get("url")
	]
	return (
		"To do this I need access to your account. Connect it here, and I will go on:\n"
		+ "\n".join(links)
	)


async def run_trigger(
	agent: Agent,
	input: Any = None,
	*,
	run_id: str,
	trigger: str,
	where: str = "",
	sender: str | None = None,
	trusted: Sequence[str | int] = (),
	resume: RunState | None = None,
	answer: str | None = None,
	decision: Sequence[ApprovalDecision] | None = None,
	tainted: bool = False,
	session: Session | None = None,
	user: str | None = None,
	attachments: Sequence[Attachment] = (),
	vouched: bool = False,
) -> RunResult:
	"""Run (or resume) a trigger's run here, tainted as `starting_taint` decides.

	What `Launcher.start` runs in the server's task group; a protocol whose handler owns the run
	(A2A's executor, which cancels it) calls it directly. The arguments are `Launcher.start`'s.

	Raises:
		ConfigurationError: An untrusted answer to a clean durable run's question: its
			workflow takes the answer's text only, so the run could not be tainted by it.
	"""
	source = starting_taint(trigger, where=where, sender=sender, trusted=trusted, vouched=vouched)
	if source is None and tainted:
		source = f"{trigger}:{where}:earlier" if where else f"{trigger}:earlier"
	with started_by(trigger, where=where, sender=sender):
		if resume is not None:
			if source is not None and not resume.tainted:
				if answer is not None and _answered_in_workflow(agent, resume):
					raise ConfigurationError(
						f"resume: the answer to the run {resume.run_id} is not trusted "
						f"({source}), and the run is durable and clean: its workflow takes an "
						"answer's text only, so the run would not be tainted by it; answer in "
						"the words of someone trusted, or start a run of its own with it"
					)
				resume.taint.append(untrusted_input(source).taint[0])
			return await agent.resume(resume, answer=answer, decision=decision, session=session)
		history = RunState(run_id=run_id) if source is None else untrusted_input(source)
		history.run_id = run_id
		return await agent.run(
			input, history=history, session=session, user=user, attachments=attachments
		)


def _answered_in_workflow(agent: Agent, state: RunState) -> bool:
	"""Whether an answer to the parked run goes to a durable workflow (its text only)."""
	return agent.om.durability is not None and (state.pending or {}).get("kind") == "human_input"


async def record_unstarted(
	agent: Agent,
	run_id: str,
	input: Any,
	error: BaseException,
	*,
	trigger: str,
	where: str = "",
	sender: str | None = None,
	user: str | None = None,
) -> None:
	"""Record a trigger's run that failed before it started, where its user looks for it.

	A run that fails before its observers hear it start (its session's store is down, a tool
	set cannot be prepared) leaves no row of its own, and a webhook's sender was told ``202``
	already when it was queued: the run store (``openmolt logs``, the run viewer) gets it as a
	failed run (status ``error``) with its input, its trigger and the reason, the instance's
	secrets masked. A run already recorded (it started elsewhere: another server, a durable
	store) keeps its row. Without a run store the failure is logged only. A store that fails
	is logged, never raised.

	Args:
		agent: The agent.
		run_id: The run's id.
		input: The run's input.
		error: Why it did not start.
		trigger: The trigger's kind (``webhook``, ``chat``).
		where: Which one (the agent's name, ``telegram:Support``).
		sender: Who wrote the input, when known.
		user: The end user the run was to act for (a chat's sender, a named caller), kept with
			it (`openmolt logs --user` finds it), masked.
	"""
	store = OpenMolt.of(agent).run_store
	if store is None:
		return
	from openmolt_core.secrets import Redactor

	redact = Redactor(known=OpenMolt.of(agent).secrets)
	details = {"where": where, "sender": sender}
	origin = {"kind": trigger, **{k: v for k, v in details.items() if v not in (None, "")}}
	reason = f"the run did not start: {type(error).__name__}: {error}"
	if isinstance(error, OpenMoltError):
		reason = f"the run did not start: {error}"
	try:
		await store.not_started(
			run_id,
			agent.name,
			input=redact.deep(input),
			trigger=origin,
			error=redact(reason),
			model=f"{agent.provider_name}:{agent.model}" if agent.provider_name else agent.model,
			user=None if user is None else redact(user),
		)
	except Exception as exc:
		log.warning("the run store could not record the run %s: %s", run_id, type(exc).__name__)


class _Starts(RunObserver):
	"""Sets an event when a run it waits for starts."""

	def __init__(self) -> None:
		self.waiting: dict[str, anyio.Event] = {}

	async def started(self, run: ObservedRun) -> None:
		"""A run started: release whoever waits for it."""
		event = self.waiting.get(run.run_id)
		if event is not None:
			event.set()

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""Nothing: `Launcher` hears the end from the run itself."""


class Launcher:
	"""Starts trigger runs in a task group the server owns.

	Args:
		tg: The server's task group (runs stop with it).
		start_timeout: Seconds to wait for a run to start before answering anyway.
		sessions: Where conversations are kept, by id (default: in this process only).
	"""

	def __init__(
		self, tg: TaskGroup, *, start_timeout: float = 30.0, sessions: Sessions | None = None
	) -> None:
		self.tg = tg
		self.start_timeout = start_timeout
		self.sessions: Sessions = sessions or in_memory_sessions()
		self._observers: dict[int, _Starts] = {}
		self.running: set[str] = set()
		self._scopes: dict[str, anyio.CancelScope] = {}
		self._instances: dict[str, OpenMolt] = {}  # each running run's instance
		self._stopping = False

	def cancel(self, run_id: str) -> bool:
		"""Stop a run this launcher started, if it is still going; returns whether one was.

		A run of a durable instance is cancelled where it is kept (`OpenMolt.cancel`: the call
		under way stops, no step of it begins any more; cancelling the wait here alone would
		leave its workflow going), and its ``done`` comes once it has stopped. Another run's
		task is cancelled here; its ``done`` gets `RunCancelled`. Once the server stops
		(`stopping`), a durable run's wait is cancelled only: the run recovers, as every run
		the stop cuts short.

		Args:
			run_id: The run's id.
		"""
		scope = self._scopes.get(run_id)
		if scope is None:
			return False
		om = self._instances.get(run_id)
		if om is not None and om.durability is not None and not self._stopping:
			self.tg.start_soon(self._cancel_durable, om, run_id, scope, name=f"cancel {run_id}")
		else:
			scope.cancel()
		return True

	def stopping(self) -> None:
		"""The server is about to stop: from now on `cancel` leaves durable runs to recover."""
		self._stopping = True

	async def _cancel_durable(self, om: OpenMolt, run_id: str, scope: anyio.CancelScope) -> None:
		"""Cancel a durable run in its store, then its wait here (whatever it waits for now)."""
		try:
			await om.cancel(run_id)
		except Exception as exc:  # it ended meanwhile, or has no workflow yet: its wait stops
			log.info("the durable run %s was not cancelled in its store: %s", run_id, exc)
		finally:
			scope.cancel()

	def _watch(self, om: OpenMolt) -> _Starts:
		starts = self._observers.get(id(om))
		if starts is None:
			starts = self._observers[id(om)] = _Starts()
			om.observers.append(starts)
		return starts

	async def start(
		self,
		agent: Agent,
		input: Any = None,
		*,
		run_id: str,
		trigger: str,
		where: str = "",
		sender: str | None = None,
		trusted: Sequence[str | int] = (),
		resume: RunState | None = None,
		answer: str | None = None,
		decision: Sequence[ApprovalDecision] | None = None,
		done: Done | None = None,
		tainted: bool = False,
		session: Session | None = None,
		user: str | None = None,
		attachments: Sequence[Attachment] = (),
		within: float | None = None,
		unstarted: Callable[[BaseException], None] | None = None,
		vouched: bool = False,
	) -> str:
		"""Start a run (or resume a parked one with an answer); return once it has started.

		Whether it starts tainted is decided by `openmolt_core.triggers.starting_taint` from
		``trigger`` and ``sender`` (every run a trigger starts comes through `run_trigger`): tainted,
		the agent's taint policy applies to its outbound tools from the first step. An answer
		from someone untrusted taints the run it resumes the same way.

		Args:
			agent: The agent.
			input: The run's input.
			run_id: Its id.
			trigger: The trigger's kind (``webhook``, ``chat``: `openmolt_core.triggers`).
			where: Which one (the agent's name, ``telegram:Support``), for the taint record.
			sender: Who wrote the input or the answer (a chat user's id), when known.
			trusted: The user ids the operator trusts for this trigger.
			resume: A parked run's state to resume with ``answer`` instead.
			answer: The answer for ``resume`` (a parked question).
			decision: The decisions for ``resume`` (parked approvals).
			done: Called with the result (or the error) when the run ends.
			tainted: Taint the run even from a trusted sender (its input holds words of
				others).
			session: The conversation the run continues (or the resumed run belongs to): its
				earlier turns reach the model, and a stranger's among them taint the run.
			user: The end user a new run acts for (a chat's sender, a named A2A or AG-UI
				caller: `caller_user`): its long-term memory is theirs, and integrations bound
				per user use their account (`openmolt_core.accounts`). A resumed run keeps the
				user it started for.
			attachments: Files for the model with a new run's input (a resume takes none).
			within: The most seconds to wait for it to start (at most ``start_timeout``; None:
				``start_timeout``). A run queued behind its session's running turn starts when
				that turn ends: a caller that must answer its sender soon (a webhook) returns
				before; its failure to start is then recorded (`record_unstarted`) and told
				to ``unstarted``.
			unstarted: Called with the error when the run fails before it started (before or
				after this returned): a trigger gives back what it claimed (its delivery id),
				so the sender's retry runs. A new run that fails so is recorded in the run
				store as a failed run with the reason (`record_unstarted`), masked.
			vouched: The operator vouches for this trigger's input (a webhook's
				``trustPayload``, an AG-UI endpoint's ``trustInput``: `starting_taint`).

		Returns:
			The run id.

		Raises:
			OpenMoltError: The run could not start (a missing key, a bad setting).
		"""

		async def go() -> RunResult:
			return await run_trigger(
				agent,
				input,
				run_id=run_id,
				trigger=trigger,
				where=where,
				sender=sender,
				trusted=trusted,
				resume=resume,
				answer=answer,
				decision=decision,
				tainted=tainted,
				session=session,
				user=user,
				attachments=attachments,
				vouched=vouched,
			)

		async def not_started(error: BaseException) -> None:
			if unstarted is not None:
				try:
					unstarted(error)
				except Exception:
					log.exception("after the run %s of %s failed to start", run_id, agent.name)
			if resume is None:  # a resumed run has its row: its own failure is its caller's
				await record_unstarted(
					agent,
					run_id,
					input,
					error,
					trigger=trigger,
					where=where,
					sender=sender,
					user=user,
				)

		return await self._launch(
			agent, run_id, go, done, wait=True, within=within, unstarted=not_started
		)

	async def answer(
		self,
		agent: Agent,
		run_id: str,
		text: str,
		*,
		step: int | None = None,
		done: Done | None = None,
	) -> str:
		"""Answer a durable run parked on a question (found in the store) and follow it.

		Returns once the answer is recorded; ``done`` gets the run's next result.

		Args:
			agent: The agent the run belongs to.
			run_id: The parked run's id.
			text: The answer.
			step: The step of the question answered (`PendingRun.step`): refused when the run
				has moved past it. None: the question pending now.
			done: Called with the run's next result (or error).

		Raises:
			OpenMoltError: The run waits for no answer.
		"""
		om = OpenMolt.of(agent)
		await om.answer(run_id, text, step=step)

		async def go() -> RunResult:
			result = await om.result(run_id)
			if result is None:  # pragma: no cover - result(wait=True) always returns one
				raise OpenMoltError(f"the run {run_id} has no result")
			return result

		return await self._launch(agent, run_id, go, done, wait=False)

	async def _launch(
		self,
		agent: Agent,
		run_id: str,
		run: Callable[[], Awaitable[RunResult]],
		done: Done | None,
		*,
		wait: bool,
		within: float | None = None,
		unstarted: Callable[[BaseException], Awaitable[None]] | None = None,
	) -> str:
		starts = self._watch(OpenMolt.of(agent))
		started = starts.waiting.setdefault(run_id, anyio.Event())
		if not wait:
			started.set()
		ended = anyio.Event()
		failure: list[BaseException] = []

		async def go() -> None:
			result: RunResult | None = None
			error: BaseException | None = None
			self.running.add(run_id)
			scope = self._scopes[run_id] = anyio.CancelScope()
			self._instances[run_id] = OpenMolt.of(agent)
			try:
				with scope:
					result = await run()
				if scope.cancelled_caught:
					error = RunCancelled(f"the run {run_id} was cancelled")
			except RunError as exc:
				error, result = exc, exc.result
				if not started.is_set() and unstarted is not None:  # no observer saw it start
					await unstarted(exc)
			except Exception as exc:
				error = exc
				if not started.is_set():
					failure.append(exc)
					if unstarted is not None:
						await unstarted(exc)
				log.warning("the run %s of %s failed: %s", run_id, agent.name, exc)
			finally:
				self.running.discard(run_id)
				if self._scopes.get(run_id) is scope:
					del self._scopes[run_id]
					self._instances.pop(run_id, None)
				if starts.waiting.get(run_id) is started:
					del starts.waiting[run_id]
				ended.set()
				started.set()
			if done is not None:
				try:
					await done(result, error)
				except Exception:
					log.exception("after the run %s of %s", run_id, agent.name)

		self.tg.start_soon(go, name=f"openmolt trigger run {run_id}")
		try:
			limit = self.start_timeout if within is None else min(within, self.start_timeout)
			with anyio.move_on_after(limit):
				await started.wait()
		finally:
			if unstarted is None:
				starts.waiting.pop(run_id, None)
			# Else the run's own task drops it as it ends: a run still queued when this returns
			# (a webhook answers within seconds) is then known to start, and a failure after
			# that is its run's, not one to start (`unstarted`: its claim is not given back).
		if failure and ended.is_set():
			exc = failure[0]
			if isinstance(exc, OpenMoltError):
				raise exc
			raise OpenMoltError(f"the run could not start: {type(exc).__name__}: {exc}") from exc
		return run_id
