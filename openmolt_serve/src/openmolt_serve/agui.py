"""``POST /agui/<agent>``: the agent as an AG-UI endpoint, for CopilotKit-style front ends.

The request is AG-UI's ``RunAgentInput``; the answer is a stream of AG-UI events (server-sent
events, ``text/event-stream``, encoded by ``ag-ui-protocol``'s ``EventEncoder``), mapped from the
run's own events in one table (`openmolt_serve._agui_events`): the run's start and end, its tool
calls and their results, its plan as state (a snapshot, then JSON Patch deltas), and its text.

```json
{"triggers": {"agui": {"tokenEnv": "SUPPORT_AGUI_TOKEN"}}}
```

- **Who may call**: ``Authorization: Bearer <token>`` (`openmolt_serve._token`: body cap,
  token, depth, rate limit, in the webhooks' order). The words are a front end user's: the run
  starts tainted (`openmolt_core.triggers.starting_taint`, kind ``agui``), unless the operator
  vouched for the front end's users (``trustInput: true``: their own signed-in application).
- **Threads**: each ``threadId`` is a session (`openmolt_core.sessions`, id
  ``agui:<agent>:<thread>``): the agent sees the thread's earlier turns, so a client sends only
  what is new (the last message, a user's, is the input; ``context`` items ride along with it).
- **Callers**: with ``callers`` (a token each, `openmolt_serve._token`), a thread is its
  caller's: another caller's request with the same ``threadId`` is another thread (session
  ``agui:<agent>:<caller>:<thread>``), which neither reads the first's turns nor answers its
  interrupts (its ``resume`` is refused, 409: that thread waits for nothing). A named caller's
  runs act for it (user ``agui:<agent>:<caller>``, `openmolt_serve._launch.caller_user`): their
  long-term memory and its taint mark, the files a message keeps and the accounts of
  integrations bound per end user are the caller's own. The caller ``default`` (and a single
  ``token``) keeps the id without a caller, and its runs act for no user (the agent's memory).
- **Interrupts**: a run that asks a question, waits for an approval, or waits for its user to
  connect an account (reason ``authorization``: the message holds the consent links), ends with
  ``RUN_FINISHED`` whose outcome is ``interrupt``. The next request on the thread answers it with
  ``resume`` entries (``interruptId``, ``status``, ``payload``): a question's payload is the
  answer; an approval's is ``{"approved": true|false, "reason"?, "input"?}``, accepted only with
  ``decideApprovals: true`` (otherwise the operator decides in the run viewer); an
  authorization's entry (any payload) says the user connected: the run goes on.
- **A client that leaves** (closes the stream: AG-UI's ``abortRun``) stops its run: the call in
  flight is cancelled, nothing more runs (on a durable store the run is cancelled there,
  `openmolt_serve._launch.Launcher.cancel`), and the thread is free once it has stopped. A
  server that stops under its clients leaves their durable runs to recover.
- **A new message on a thread whose run waits** (a request without ``resume``) gives that run
  up: it is cancelled where it is kept (this endpoint's memory, the run store, the durable
  store), so nothing resumes it later (a late ``resume``, the run viewer, ``openmolt answer``),
  and the message starts a new run on the thread.
- **Where a waiting run is kept** (`openmolt_serve._agui_threads`): with a run store or a
  durable store, in rows every server on that store shares (the run's state read where the run
  is kept), so a ``resume`` goes on after a restart, and on another server behind the same
  address; of two resumes of one interrupt at once, on two servers, one goes on. Without
  either, in this endpoint's memory: a restart forgets it, and another server knows nothing of
  it (its ``resume`` is ``409``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import math
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from ag_ui.core import (
	BaseEvent,
	DataSource,
	ResumeEntry,
	RunAgentInput,
	RunErrorEvent,
	TextMessageContentEvent,
	TextPart,
	UrlSource,
	UserMessage,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from openmolt_core.accounts import authorization_requests
from openmolt_core.errors import OpenMoltError
from openmolt_core.files import save_screened
from openmolt_core.filestore import MAX_ATTACHMENT_BYTES
from openmolt_serve._agui_events import (
	MAPPED,
	PARKED,
	AguiEvents,
	approval_id,
	authorization_id,
	question_id,
)
from openmolt_serve._agui_threads import Thread, ThreadParks, Waiting
from openmolt_serve._attach import ATTACHABLE, TEXTUAL, attachment
from openmolt_serve._launch import (
	Launcher,
	caller_sender,
	caller_user,
	key_refused,
	run_id_for,
	scope_prefix,
	session_id,
)
from openmolt_serve._recent import recent
from openmolt_serve._rows import task_rows
from openmolt_serve._token import DEFAULT_CALLER, TokenGuard, caller_of
from openmolt_ui._shown import SCREENED, SCREENED_TOKEN, shown, shown_text

if TYPE_CHECKING:
	from anyio.streams.memory import MemoryObjectSendStream

	from openmolt_core.agent import Agent
	from openmolt_core.approvals import ApprovalDecision, ApprovalRequest
	from openmolt_core.llm import Attachment
	from openmolt_core.result import RunResult
	from openmolt_core.triggers import AguiTrigger

__all__ = ["MAX_THREADS", "MAX_THREAD_ID", "AguiEndpoint"]

log: logging.Logger = logging.getLogger("openmolt")

MAX_THREADS = 10_000
"""Threads an endpoint remembers (a parked run each, at most); past it, the least recently used
idle one where no run waits, of the caller holding the most, is forgotten (its conversation stays
in its session): a caller who opens many threads pushes out its own, never another caller's
waiting one, nor a waiting one of its own (one token may serve a whole web app). With a run
store or a durable store, the rows keep the parks of this many threads, each caller's newest
first (`openmolt_serve._agui_threads`)."""


MAX_THREAD_ID = 256
"""The longest ``threadId`` taken (characters): an endpoint keeps its threads by id."""


class _Turn:
	"""A thread's turn, given back once: by the run's end, or by a request that ran nothing."""

	__slots__ = ("_held", "_thread")

	def __init__(self, thread: Thread) -> None:
		self._thread = thread
		self._held = True

	def give_back(self) -> None:
		if self._held:
			self._held = False
			self._thread.turn.release()


class _Shown:
	"""Masks as the server masks its responses (`openmolt_ui._shown`): every secret known now.

	An endpoint's event stream is masked event by event with it and says so (`SCREENED`): the
	server's masking, which reads a stream as one text, would mask the streamed message's
	deltas one by one again (`openmolt_serve._agui_events`).
	"""

	__slots__ = ()

	def __call__(self, text: str) -> str:
		"""The text masked."""
		return shown_text(text)

	def deep(self, value: Any) -> Any:
		"""A copy of a JSON-like value masked in every string."""
		return shown(value)


@dataclass
class _Start:
	"""What one request starts: a new run, or a parked one resumed."""

	input: Any = None
	waiting: Waiting | None = None
	"""The parked run a resume goes on with (taken once the thread's turn is this request's)."""
	answer: str | None = None
	decisions: list[ApprovalDecision] = field(default_factory=list)
	attachments: list[Attachment] = field(default_factory=list)
	kept: list[tuple[str, bytes]] = field(default_factory=list)
	"""Files for the agent's tools only (`_Said.kept`), saved once the run's id is known."""


class AguiEndpoint:
	"""One agent's AG-UI endpoint.

	Args:
		agent: The agent.
		config: Its ``agui`` settings.
		launcher: Starts the runs (in the server's task group).
		guard: Its token gate (default: made from ``config``).
	"""

	def __init__(
		self,
		agent: Agent,
		config: AguiTrigger,
		launcher: Launcher,
		guard: TokenGuard | None = None,
	) -> None:
		self.agent = agent
		self.config = config
		self.launcher = launcher
		self.guard = guard or TokenGuard.create(agent, "agui", config)
		self.threads: OrderedDict[str | tuple[str, str], Thread] = OrderedDict()
		"""The threads by id (`DEFAULT_CALLER`'s) or by ``(caller, id)``, least recent first."""
		self.parks = ThreadParks(
			agent, task_rows(agent, "agui"), most=MAX_THREADS, prefix=self._runs_of
		)
		"""The runs the threads wait with: in memory, or in the rows every server shares."""
		self.redact = _Shown()  # the instance's secrets, every live instance's, the environment's

	def close(self) -> None:
		"""Close what the endpoint holds open (its threads' rows): the server does as it stops."""
		self.parks.close()

	async def handle(self, request: Request) -> Response:
		"""Answer one ``POST /agui/<agent>``: a refusal, or the run's event stream."""
		body, refusal = await self.guard.admit(request)
		if refusal is not None:
			return refusal
		try:
			given = RunAgentInput.model_validate_json(body)
		except ValidationError as exc:
			return _error(422, f"not an AG-UI RunAgentInput: {_first(exc)}", "invalid")
		if len(given.thread_id) > MAX_THREAD_ID:
			return _error(422, f"threadId: at most {MAX_THREAD_ID} characters", "invalid")
		if "\x00" in given.thread_id:  # no store keeps it (PostgreSQL's text): its park is lost
			return _error(
				422, "threadId: a NUL character cannot be kept; use another id", "invalid"
			)
		caller = caller_of(request)
		if problem := key_refused("agui", self.agent.name, given.thread_id, caller=caller):
			# A thread id that can pass for another's (its session, its waiting run): refused
			# before a thread is made or anything runs.
			return _error(
				400,
				self.redact(f"threadId is refused as a conversation's id: {problem}"),
				"invalid",
			)
		thread = self._thread(given.thread_id, caller)
		try:
			start = await self._start(given, thread, caller)
		except _Refused as exc:
			return _error(exc.status, str(exc), exc.reason)
		except Exception as exc:  # the rows, the run store or the durable store is down
			log.warning("AG-UI: a waiting run of %s could not be read: %s", self.agent.name, exc)
			return _error(
				503,
				"resume: the store that keeps this thread's waiting run could not be read; try again",
				"unavailable",
			)
		encoder = EventEncoder(accept=request.headers.get("accept", ""))
		return StreamingResponse(
			self._stream(given, thread, start, encoder, caller),
			media_type=encoder.get_content_type(),
			headers={
				"Cache-Control": "no-cache",
				"X-Accel-Buffering": "no",
				# masked event by event (`_Shown`), its text as it streamed: not again as a whole
				SCREENED.decode(): SCREENED_TOKEN.decode(),
			},
		)

	def _thread(self, thread_id: str, caller: str = DEFAULT_CALLER) -> Thread:
		"""The caller's thread of this id (two callers' never meet).

		`DEFAULT_CALLER`'s is kept by its id, another caller's by ``(caller, id)``.
		"""
		key: str | tuple[str, str] = thread_id if caller == DEFAULT_CALLER else (caller, thread_id)
		return recent(
			self.threads,
			key,
			Thread,
			most=MAX_THREADS,
			busy=lambda t: t.busy,
			owner=_caller_of,
			waits=lambda t: t.parked is not None,  # one caller's token may serve many people
		)

	def _user(self, caller: str) -> str | None:
		"""Whom a caller's new run acts for (`caller_user`: None for `DEFAULT_CALLER`)."""
		return caller_user("agui", self.agent.name, caller)

	def _session(self, thread_id: str, caller: str) -> str:
		return session_id("agui", self.agent.name, thread_id, caller=caller)

	def _scope(self, caller: str, thread_id: str) -> str:
		"""What a caller's thread's run ids are made for (`run_id_for`'s ``scope``)."""
		return thread_id if caller == DEFAULT_CALLER else self._session(thread_id, caller)

	def _runs_of(self, caller: str, thread_id: str) -> str:
		"""How the ids of a caller's thread's runs begin."""
		return scope_prefix("agui", self.agent.name, self._scope(caller, thread_id))

	async def _start(
		self, given: RunAgentInput, thread: Thread, caller: str = DEFAULT_CALLER
	) -> _Start:
		if not given.resume:
			said = _last_user_turn(given)
			if said is None:
				raise _Refused(
					422,
					"messages: end with a user message (what the agent should do); this agent calls "
					"no front end tools, so a tool result answers nothing",
					"invalid",
				)
			context = [
				{"description": c.description, "value": c.value} for c in given.context or []
			]
			more = {"context": context, "files": said.files}
			extra = {key: value for key, value in more.items() if value}
			return _Start(
				input={"message": said.text, **extra} if extra or said.kept else said.text,
				attachments=said.attachments,
				kept=said.kept,
			)
		waiting = await self.parks.find(thread, caller, given.thread_id)
		parked = waiting.state if waiting is not None else None
		if (
			waiting is None
			or parked is None
			or parked.pending is None
			# a run for another user than the caller's (an edited row): never theirs to resume;
			# a run parked before callers' runs acted for them (no user) is still its caller's
			or parked.user not in (None, self._user(caller))
		):
			raise _Refused(409, "resume: this thread has no run waiting for an answer", "nothing")
		entries = {entry.interrupt_id: entry for entry in given.resume}
		if authorization_requests(parked):  # the user connected (they say): it asks again
			if authorization_id(parked.run_id, parked.steps) not in entries:
				raise _Refused(409, "resume: no entry answers the accounts this thread waits for")
			return _Start(waiting=waiting)
		if parked.pending.get("kind") == "human_input":
			entry = entries.get(question_id(parked.run_id, parked.steps))
			if entry is None:
				raise _Refused(409, "resume: no entry answers the question this thread waits for")
			return _Start(waiting=waiting, answer=_answer(entry))
		if not self.config.decide_approvals:
			raise _Refused(
				403,
				"resume: approvals of this agent are decided in the run viewer, not by the front "
				"end (the operator may set decideApprovals: true)",
				"approvals",
			)
		decisions = [
			_decision(request, entries[key])
			for request in self.agent.approval_requests(parked)
			if (key := approval_id(request.run_id, request.call)) in entries
		]
		if not decisions:
			# A client that kept an interrupt's id from before ids named their run gives the
			# call's key alone: told the form to use (never the run's id, nor whether it guessed).
			raise _Refused(
				409,
				"resume: no entry answers the approvals this thread waits for; an entry's "
				"interruptId is the id of the approval's interrupt as the run's RUN_FINISHED "
				"gave it (<run id>:tool:<step>:<index>:<tool>): a call's key alone "
				"(tool:<step>:<index>:<tool>, what clients kept before ids named their run) is "
				"not taken",
			)
		return _Start(waiting=waiting, decisions=decisions)

	async def _stream(
		self,
		given: RunAgentInput,
		thread: Thread,
		start: _Start,
		encoder: EventEncoder,
		caller: str = DEFAULT_CALLER,
	) -> AsyncIterator[str]:
		events = AguiEvents(given.thread_id, given.run_id, self.redact)
		send, receive = anyio.create_memory_object_stream[BaseEvent](math.inf)
		# One run of a thread at a time, to its end: a client that leaves mid-run stops its run
		# (AG-UI's abortRun closes the connection), and the thread is free once it has stopped,
		# never while it goes on (both would append to the thread's session and parked state).
		await thread.turn.acquire()
		turn = _Turn(thread)
		launched = False  # once the run is launched, its end gives the turn back
		read = False  # the client read the stream to its end (the run's end)
		run_id = ""
		waiting = start.waiting
		resume = waiting.state if waiting is not None else None
		try:
			if waiting is not None:
				refused = await self._take(thread, caller, given.thread_id, waiting)
				if refused is not None:  # answered by another request (here, or on another server)
					for event in [*events.started(waiting.state.plan, given.state), refused]:
						yield _frame(encoder, event)
					return
			else:
				await self.parks.give_up(thread, caller, given.thread_id)  # a new message came
			scope = self._scope(caller, given.thread_id)
			run_id = (
				resume.run_id
				if resume is not None
				else run_id_for("agui", self.agent.name, None, scope=scope)
			)
			if start.kept:  # the run's own files, screened and kept as every file is
				await self._keep(start, run_id, self._user(caller))
			plan = resume.plan if resume is not None else []
			for event in events.started(plan, given.state):
				yield _frame(encoder, event)

			def relay(event: Any) -> None:  # the run's events, and its sub-agents' (nested ids)
				mine = event.run_id == run_id or event.run_id.startswith(f"{run_id}.")
				if mine and not event.replayed:
					for out in events.translate(event):
						_offer(send, out)

			async def done(result: RunResult | None, error: BaseException | None) -> None:
				with send, _giving_back(turn):
					approvals: list[ApprovalRequest] = []
					if result is not None and result.status in PARKED:
						await self.parks.keep(thread, caller, given.thread_id, result.state)
						if result.status == "approval_required":
							approvals = self.agent.approval_requests(result.state)
					for out in events.finished(
						result, error, approvals, decide_approvals=self.config.decide_approvals
					):
						_offer(send, out)

			for name in MAPPED:
				self.agent.on(name, relay)
			try:
				launched = True  # from here the launcher calls done, even if this stream ends
				await self.launcher.start(
					self.agent,
					start.input,
					run_id=run_id,
					trigger="agui",
					where=self.agent.name,
					sender=caller_sender(caller),
					resume=resume,
					answer=start.answer,
					decision=start.decisions or None,
					attachments=start.attachments,
					done=done,
					session=self.launcher.sessions(self._session(given.thread_id, caller)),
					user=self._user(caller),  # a new run's; a resumed one keeps its own
					vouched=self.config.trust_input,
				)
				async with receive:
					async for out in receive:
						yield _frame(encoder, out)
				read = True
			except OpenMoltError as exc:
				log.warning("AG-UI run of %s could not start: %s", self.agent.name, exc)
				if resume is not None:  # nothing ran: it still waits
					await self.parks.keep(thread, caller, given.thread_id, resume)
				yield _frame(encoder, events.finished(None, exc)[-1])
			except Exception:
				turn.give_back()  # the launcher failed on its own: its done may never come
				# The stream still ends as AG-UI says a run does (RUN_ERROR), not cut off; what
				# failed is the server's, for its log, not the client's to read.
				log.exception("AG-UI run %s of %s failed to start", run_id, self.agent.name)
				failed = RuntimeError("the server could not start this run; its log says why")
				yield _frame(encoder, events.finished(None, failed)[-1])
			finally:
				for name in MAPPED:
					self.agent.off(name, relay)
		finally:
			# Whatever ended the stream (the run's end, a run that did not start, the client
			# leaving, the server stopping under it: the run's end may then never come), nothing
			# reads its events any more: the run's end offers them to no one.
			send.close()
			receive.close()
			if not launched:
				turn.give_back()
			elif not read and self.launcher.cancel(run_id):  # the client left: it stops the run
				log.info("AG-UI run %s of %s stopped: its client left", run_id, self.agent.name)

	async def _keep(self, start: _Start, run_id: str, user: str | None) -> None:
		"""Save a new run's files for its tools; their records join its input's ``files``.

		Owned by the user the run acts for (its caller's: `caller_user`), as the run's own
		files are: its tools read them, another user's runs find no such file.
		"""
		origin = {"run": run_id, "call": "input", "user": user}
		records = [
			await save_screened(self.agent.om.files, data, media_type=kind, origin=origin)
			for kind, data in start.kept
		]
		given = start.input if isinstance(start.input, dict) else {"message": start.input}
		start.input = {**given, "files": [*given.get("files", []), *records]}

	async def _take(
		self, thread: Thread, caller: str, thread_id: str, waiting: Waiting
	) -> BaseEvent | None:
		"""Take the run a resume found, for it alone: None, or the ``RUN_ERROR`` that ends it.

		Another request may have taken it since it was found (on this server while this one
		waited for the thread's turn, or on another server sharing the rows): this one is told
		the interrupt was answered, and runs nothing.
		"""
		try:
			if await self.parks.take(thread, caller, thread_id, waiting):
				return None
		except Exception as exc:
			log.warning("AG-UI: a waiting run of %s could not be taken: %s", self.agent.name, exc)
			return RunErrorEvent(
				message="the store that keeps this thread's waiting run could not be written; "
				"try again",
				code="unavailable",
			)
		return _gone()


@contextlib.contextmanager
def _giving_back(turn: _Turn) -> Iterator[None]:
	try:
		yield
	finally:
		turn.give_back()


class _Refused(Exception):
	def __init__(self, status: int, message: str, reason: str = "resume") -> None:
		super().__init__(message)
		self.status = status
		self.reason = reason


def _offer(send: MemoryObjectSendStream[BaseEvent], event: BaseEvent) -> None:
	"""Pass an event to the stream, if its client still reads it.

	A client may leave mid-run: its run is stopped, and what comes until it has is dropped.
	"""
	with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
		send.send_nowait(event)


def _caller_of(key: str | tuple[str, str]) -> str:
	"""Whose thread a key of `AguiEndpoint.threads` is (`DEFAULT_CALLER`'s is its bare id)."""
	return key[0] if isinstance(key, tuple) else DEFAULT_CALLER


def _error(status: int, message: str, reason: str) -> JSONResponse:
	return JSONResponse({"error": message, "reason": reason}, status_code=status)


def _first(exc: ValidationError) -> str:
	error = exc.errors()[0]
	where = ".".join(str(part) for part in error["loc"]) or "the body"
	return f"{where}: {error['msg']}"


def _frame(encoder: EventEncoder, event: BaseEvent) -> str:
	"""An event as the stream sends it, masked whole as the server masks a response (`_Shown`).

	But a piece of a text message: its text was masked where it streamed, or by
	`AguiEvents.text` (the stream is marked screened: the server does not mask it again).
	"""
	frame = encoder.encode(event)
	return frame if isinstance(event, TextMessageContentEvent) else shown_text(frame)


def _gone() -> BaseEvent:
	return RunErrorEvent(message="this interrupt was answered already", code="answered")


@dataclass
class _Said:
	"""What the user's last message holds: its text, files for the model, files' addresses."""

	text: str
	attachments: list[Attachment] = field(default_factory=list)
	files: list[dict[str, Any]] = field(default_factory=list)
	kept: list[tuple[str, bytes]] = field(default_factory=list)
	"""Inline files of a type the model is not shown (media type, bytes): kept in the file
	store for the agent's tools, their records joining ``files``."""


def _last_user_turn(given: RunAgentInput) -> _Said | None:
	"""What the request's last message holds, if a user wrote it (else None: nothing to do).

	Only the last message is new: the thread's session holds the earlier turns. A request that
	ends with another kind of message (the agent's reply, a front end tool's result: this agent
	calls none) asks nothing, and taking an earlier user message would run that turn again.
	A media part's inline bytes of an `ATTACHABLE` type go to the model (the run keeps them in
	the file store: `openmolt_core.filestore.keep_attachments`), of a `TEXTUAL` type are text, of
	another type are kept in the file store for the agent's tools (`_Said.kept`); a URL is
	passed on as a reference (the server fetches nothing); other parts (a provider's file
	handle) are dropped, as the protocol lets a peer do.

	Raises:
		_Refused: A part's inline bytes are not base64 (or not text where text is said), or
			larger than `MAX_ATTACHMENT_BYTES`.
	"""
	message = given.messages[-1] if given.messages else None
	if not isinstance(message, UserMessage):
		return None
	content = message.content
	if isinstance(content, str):
		return _Said(content)
	said = _Said("")
	texts: list[str] = []
	for part in content:
		if isinstance(part, TextPart):
			texts.append(part.text)
			continue
		source = part.source
		if isinstance(source, UrlSource):
			file = {"url": source.value, "mediaType": source.mime_type or ""}
			said.files.append({k: v for k, v in file.items() if v})
		elif isinstance(source, DataSource):
			if len(source.value) > MAX_ATTACHMENT_BYTES * 4 // 3 + 4:
				raise _Refused(
					413,
					f"messages: a {part.type} part is more than the {MAX_ATTACHMENT_BYTES} bytes "
					"a message takes: send a smaller file, or its URL",
					"too_large",
				)
			try:
				data = base64.b64decode(source.value, validate=True)
				if source.mime_type in TEXTUAL:
					texts.append(data.decode("utf-8"))
				elif source.mime_type in ATTACHABLE:
					said.attachments.append(attachment(source.mime_type, data))
				else:
					said.kept.append((source.mime_type, data))
			except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
				raise _Refused(
					422,
					f"messages: a {part.type} part's data is not base64 {source.mime_type}",
					"invalid",
				) from None
	said.text = "\n".join(texts)
	return said


def _answer(entry: ResumeEntry) -> str:
	if entry.status == "cancelled":
		return "(the person chose not to answer)"
	payload = entry.payload
	if isinstance(payload, dict) and isinstance(payload.get("answer"), str):
		return str(payload["answer"])
	return payload if isinstance(payload, str) else json.dumps(payload)


def _decision(request: ApprovalRequest, entry: ResumeEntry) -> ApprovalDecision:
	payload = entry.payload if isinstance(entry.payload, dict) else {}
	reason = payload.get("reason") if isinstance(payload.get("reason"), str) else ""
	if entry.status == "cancelled" or payload.get("approved") is not True:
		return request.deny(str(reason or "the person did not approve it"))
	edited = payload.get("input")
	return request.approve(input=edited if isinstance(edited, dict) else None, reason=str(reason))
