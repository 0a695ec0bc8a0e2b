"""The agent as an A2A 1.0 server, and remote A2A agents as tools (`remote_agent`).

``openmolt serve`` serves an agent whose file says ``"triggers": {"a2a": {...}}`` at
``/a2a/<agent>``: its agent card at ``/a2a/<agent>/.well-known/agent-card.json`` (public: it names
the agent, its one skill and the bearer scheme callers must use) and the JSON-RPC methods at
``/a2a/<agent>/``: ``SendMessage``, ``SendStreamingMessage``, ``GetTask``, ``CancelTask``,
``SubscribeToTask`` and ``ListTasks`` (and A2A 0.3's ``message/send``, ``message/stream``,
``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe``, which the SDK translates, for the
clients still on 0.3). The protocol is the official ``a2a-sdk``'s: its request
handler, task store and routes do the JSON-RPC; `OpenMoltExecutor` only runs the agent.

- A message starts a task, whose run starts tainted (kind ``a2a``: another agent wrote it). Its
  ``contextId`` is a session (``a2a:<agent>:<context>``), so later tasks of one context see the
  earlier turns.
- With ``callers`` (a token each, `openmolt_serve._token`) a task is its caller's: each call's
  a2a-sdk ``user`` is its caller (`Caller`), whose tasks the SDK's task store keeps apart (in
  memory and in the task file, across a restart), so another caller's ``GetTask``,
  ``CancelTask``, ``SubscribeToTask``, message or answer is "task not found" and ``ListTasks``
  lists the caller's own; a context is the caller's too (``a2a:<agent>:<caller>:<context>``),
  and so are its runs: they act for it (user ``a2a:<agent>:<caller>``,
  `openmolt_serve._launch.caller_user`), so their long-term memory and its taint mark, the files
  they are given and the accounts of integrations bound per end user are the caller's own. The
  caller ``default`` (a single ``token``) keeps the ids of before callers, and its runs act for
  no user (the agent's memory). A message's files are the model's attachments
  (`openmolt_serve._attach`); a part of a media type the card does not list is refused
  (``-32005``).
- While it runs, each tool call is a ``working`` status update (streamed to
  ``SendStreamingMessage`` and ``SubscribeToTask``).
- It ends ``completed`` (an artifact holds the output: text, and the JSON as a data part),
  ``rejected`` when a guardrail's tripwire stopped it, ``failed``, or ``input-required`` when
  the agent asks a question: the caller's next message
  to that task is the answer (with its data parts and files, saved as references), and the same run goes on (once: answers sent together reach the
  executor one after another, and those behind the first find the task moved on and run
  nothing). A run waiting for an approval is
  ``auth-required``: the operator decides it in the run viewer (a caller never approves calls
  its own words asked for), where the run goes on; the task follows it: once the run has
  ended (or parked on something else), the next ``GetTask`` or ``ListTasks`` finds the task
  ``completed`` with its artifact (or ``failed``, ``input-required``...), read from where the
  run is kept (this process, the run store or the durable store); a ``SubscribeToTask``
  stream opened while it waits hears it too (`OpenMoltExecutor.follow`). A run waiting for its user to connect an account
  (``authorization_required``) is ``auth-required`` too, its status message the consent links;
  once connected, the caller's next message to the task makes the run go on.
- ``CancelTask`` stops the run (``canceled``); a run the task parked is cancelled in the run
  store and the durable store too, so no later answer (from any surface) resumes it, and so is
  a durable run going on (the request that runs it only waits for it) or that the operator's
  approval resumed elsewhere since (it stops where it is).

What a server keeps is bounded. Its tasks: `MAX_TASKS` (`openmolt_serve._a2a_store`); the runs
parked on a question or an approval: `MAX_PARKED`, whose state the executor keeps in memory.
Past a bound, the oldest of the caller holding the most goes: a caller who sends many tasks
pushes out its own, never another caller's. An answer to an older one is ``failed`` with "task expired" (nothing runs: the
caller starts a new task). With a run store (``OpenMolt(run_store=...)``) the store is the source
of truth instead: the executor keeps no state, reads the parked run from the store, and the
tasks are written to its file, so a parked task survives a restart. On a durable store
(``OpenMolt(durability=...)``) the tasks are kept in its database on PostgreSQL (servers on
several machines share it), else in a file of its files folder, and a question a run parked on
before a restart, or on another server, is answered through it (``om.answer``). Every server on
the same rows reads a task as they hold it now (`openmolt_serve._a2a_store`).

Every request but the card's passes `openmolt_serve._token.TokenGuard` first.
"""

from __future__ import annotations

import base64
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from a2a.auth.user import User
from a2a.helpers.proto_helpers import (
	get_data_parts,
	get_text_parts,
	new_data_part,
	new_text_message,
	new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import Event, EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
	DefaultServerCallContextBuilder,
	create_agent_card_routes,
	create_jsonrpc_routes,
)
from a2a.server.tasks import TaskUpdater
from a2a.server.tasks.task_manager import append_artifact_to_task
from a2a.types import (
	AgentCapabilities,
	AgentCard,
	AgentInterface,
	AgentSkill,
	CancelTaskRequest,
	HTTPAuthSecurityScheme,
	Message,
	Role,
	SecurityRequirement,
	SecurityScheme,
	SendMessageRequest,
	StringList,
	SubscribeToTaskRequest,
	Task,
	TaskArtifactUpdateEvent,
	TaskState,
	TaskStatus,
	TaskStatusUpdateEvent,
)
from a2a.utils.constants import (
	AGENT_CARD_WELL_KNOWN_PATH,
	PROTOCOL_VERSION_0_3,
	PROTOCOL_VERSION_CURRENT,
)
from a2a.utils.errors import InvalidParamsError, PushNotificationNotSupportedError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp

from openmolt_core._support.masking import mask_url_logins, mask_url_logins_deep
from openmolt_core.accounts import authorization_requests
from openmolt_core.errors import ApprovalError, ConfigurationError, RunCancelledError, RunError
from openmolt_core.events import ToolCallEvent
from openmolt_core.files import save_screened
from openmolt_core.filestore import MAX_ATTACHMENT_BYTES
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.openmolt import OpenMolt
from openmolt_core.result import PARKED_STATUSES
from openmolt_core.secrets import Redactor
from openmolt_serve import _a2a_store
from openmolt_serve._a2a_parts import ScreenedResponses
from openmolt_serve._a2a_remote import remote_agent
from openmolt_serve._attach import ATTACHABLE, TEXTUAL, attachment
from openmolt_serve._launch import (
	Sessions,
	caller_sender,
	caller_user,
	cancel_if_parked,
	connect_text,
	key_refused,
	run_id_for,
	run_trigger,
	session_id,
)
from openmolt_serve._recent import crowded
from openmolt_serve._token import DEFAULT_CALLER, NOBODY, TokenGuard, caller_of

if TYPE_CHECKING:
	from openmolt_core._durable import PendingRun
	from openmolt_core.agent import Agent
	from openmolt_core.llm import Attachment
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.triggers import A2ATrigger

__all__ = [
	"MAX_CONTEXT_ID",
	"MAX_PARKED",
	"MAX_TASKS",
	"A2AServer",
	"OpenMoltExecutor",
	"a2a_server",
	"agent_card",
	"remote_agent",
]

log: logging.Logger = logging.getLogger("openmolt")

MAX_PARKED = 1_000
"""The most parked runs (a question, an approval) an executor keeps in memory, without a run
store; past it the oldest task expires."""

MAX_TASKS = _a2a_store.MAX_TASKS
"""The most tasks one agent's A2A server keeps (`openmolt_serve._a2a_store.MAX_TASKS`)."""

MAX_CONTEXT_ID = 256
"""The longest ``contextId`` taken (characters): it names the conversation's session."""


_POLL = 0.2
"""Seconds between two reads of a durable run answered after a restart (`OpenMoltExecutor`)."""


def agent_card(agent: Agent, config: A2ATrigger, url: str) -> AgentCard:
	"""The agent's card: its name, one skill, the JSON-RPC interface at ``url``, bearer auth.

	The instructions are never published: the description is ``config.description``, else one
	line naming the agent.

	Args:
		agent: The agent.
		config: Its ``a2a`` settings.
		url: Where its JSON-RPC endpoint is reached (ends with ``/``).
	"""
	description = config.description or f"The OpenMolt agent {agent.name}."
	return AgentCard(
		name=agent.name,
		description=description,
		version="1.0.0",
		supported_interfaces=[
			AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version)
			for version in (PROTOCOL_VERSION_CURRENT, PROTOCOL_VERSION_0_3)
		],
		capabilities=AgentCapabilities(streaming=True),
		default_input_modes=[*TEXTUAL, *ATTACHABLE],
		default_output_modes=["text/plain", "application/json"],
		skills=[
			AgentSkill(
				id=_slug(agent.name),
				name=agent.name,
				description=description,
				tags=["openmolt"],
			)
		],
		security_schemes={
			"bearer": SecurityScheme(
				http_auth_security_scheme=HTTPAuthSecurityScheme(
					scheme="bearer", description="The agent's A2A token."
				)
			)
		},
		security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
	)


@dataclass
class A2AServer:
	"""One agent's A2A server: the ASGI app to mount, and the handler that owns its tasks.

	Args:
		app: The card and the JSON-RPC endpoint, behind the token.
		handler: The a2a-sdk request handler (its tasks run the agent).
		tasks: Its task store.
	"""

	app: ASGIApp
	handler: DefaultRequestHandler
	tasks: _a2a_store.A2ATaskStore

	def stopping(self) -> None:
		"""The server is about to stop: end the ``SubscribeToTask`` streams still waiting.

		A stream following a task that waits for the operator holds its connection open; ended
		now, the server need not wait out its graceful shutdown for it. The client sees the
		stream end with the task still waiting, and may subscribe again to another process.
		"""
		executor = self.handler.agent_executor
		if isinstance(executor, OpenMoltExecutor):
			executor.stop_following()

	async def aclose(self) -> None:
		"""Stop the tasks still running (their runs are cancelled): the server is stopping."""
		try:
			await self.handler.aclose()
		finally:
			self.tasks.close()


def a2a_server(
	agent: Agent, config: A2ATrigger, guard: TokenGuard, sessions: Sessions, url: str
) -> A2AServer:
	"""The A2A server to mount at ``/a2a/<agent>``: the card, and JSON-RPC behind the token.

	Args:
		agent: The agent.
		config: Its ``a2a`` settings.
		guard: Its token gate.
		sessions: Where each context's conversation is kept.
		url: The public address of the mount (``config.public_url`` wins).
	"""
	base = (config.public_url or url).rstrip("/") + "/"
	card = agent_card(agent, config, base)
	executor = OpenMoltExecutor(agent, sessions, max_parked=MAX_PARKED)
	tasks = _a2a_store.A2ATaskStore(
		max_tasks=MAX_TASKS, rows=_a2a_store.task_rows(agent), settle=executor.settled
	)
	handler = _Handler(
		agent_executor=executor,
		task_store=tasks,
		agent_card=card,
		validate_input_modes=True,  # a part of a type the card does not take: -32005
	)
	jsonrpc = create_jsonrpc_routes(
		handler,
		"/",
		context_builder=_CallerContext(),  # each call's user is its caller: tasks are theirs
		enable_v0_3_compat=True,  # 0.3's method names
	)
	routes = [*create_agent_card_routes(card), *jsonrpc]
	app = guard.wrap(
		Starlette(routes=routes), open_paths={AGENT_CARD_WELL_KNOWN_PATH}, jsonrpc=True
	)
	# Every answer's parts screened: a file's bytes as bytes, never its base64 as text.
	return A2AServer(ScreenedResponses(app), handler, tasks)


class Caller(User):
	"""The a2a-sdk user of a call: the caller `TokenGuard` admitted it for.

	The SDK's task store keeps each user's tasks apart (its owner is the user's name): a
	caller's ``GetTask``, ``CancelTask``, ``SubscribeToTask``, ``ListTasks`` and messages reach
	its own tasks only, another's being "task not found", as an unknown id is. The owner of
	`DEFAULT_CALLER` is ``""``, the SDK's owner of a call without a user: tasks kept before
	callers existed stay its.

	Args:
		name: The caller's name.
	"""

	def __init__(self, name: str) -> None:
		self.name = name

	@property
	def is_authenticated(self) -> bool:
		"""Always: the token was checked before the call was built."""
		return True

	@property
	def user_name(self) -> str:
		"""The owner of the caller's tasks (``""`` for `DEFAULT_CALLER`)."""
		return "" if self.name == DEFAULT_CALLER else self.name


class _CallerContext(DefaultServerCallContextBuilder):
	"""Builds each call's context with its caller as the user (the SDK's way to scope tasks)."""

	def build_user(self, request: Request) -> User:
		"""The caller the token guard admitted the request for."""
		return Caller(caller_of(request))


def call_caller(context: ServerCallContext | None) -> str:
	"""The caller of an A2A call; `NOBODY` for a call built without one (never the default's)."""
	user = context.user if context is not None else None
	return user.name if isinstance(user, Caller) else NOBODY


class _Handler(DefaultRequestHandler):
	"""The SDK's request handler, refusing what a message cannot ask of this agent.

	A message a client sends as the agent's is invalid params; one whose configuration asks for
	push notifications is `PushNotificationNotSupportedError` (-32003), as the push config
	methods are: the card says none are sent, and the SDK would otherwise run the task and
	drop the request without a word.
	"""

	async def on_message_send(
		self, params: SendMessageRequest, context: ServerCallContext
	) -> Message | Task:
		self._takes(params)
		answer: Message | Task = await super().on_message_send(params, context)
		return answer

	async def on_message_send_stream(
		self, params: SendMessageRequest, context: ServerCallContext
	) -> AsyncGenerator[Event, None]:
		self._takes(params)
		async for event in super().on_message_send_stream(params, context):
			yield event

	def _takes(self, params: SendMessageRequest) -> None:
		_from_user(params)
		asks = params.configuration.HasField("task_push_notification_config")
		if asks and not self._agent_card.capabilities.push_notifications:
			raise PushNotificationNotSupportedError(
				message="configuration.taskPushNotificationConfig: this agent sends no push "
				"notifications (its card says so); follow the task with SendStreamingMessage, "
				"SubscribeToTask or GetTask"
			)

	async def on_subscribe_to_task(
		self, params: SubscribeToTaskRequest, context: ServerCallContext
	) -> AsyncGenerator[Event, None]:
		"""The SDK's subscription; for a task waiting for the operator, how its run goes on.

		Such a task has no running request whose events the SDK could pass on (its run waits
		in the viewer): the stream gives the task, then the events that bring it up to date
		once the operator has decided (`OpenMoltExecutor.follow`).
		"""
		executor = self.agent_executor
		if isinstance(executor, OpenMoltExecutor) and self._card_streams():
			tasks = self._tasks()
			task = await tasks.get(params.id, context)
			if task is not None and _awaits_approval(task):
				yield task  # the first event of a subscription is the task
				async for event in executor.follow(task, context, tasks):
					yield event
				return
		async for event in super().on_subscribe_to_task(params, context):
			yield event

	async def on_cancel_task(
		self, params: CancelTaskRequest, context: ServerCallContext
	) -> Task | None:
		"""The SDK's cancel; then the streams following the task read it at once (cancelled)."""
		task: Task | None = await super().on_cancel_task(params, context)
		executor = self.agent_executor
		if isinstance(executor, OpenMoltExecutor):
			executor.wake(run_id_for("a2a", executor.agent.name, params.id))
		return task

	def _card_streams(self) -> bool:
		return bool(self._agent_card.capabilities.streaming)

	def _tasks(self) -> _a2a_store.A2ATaskStore:
		store = self.task_store
		assert isinstance(store, _a2a_store.A2ATaskStore)
		return store


def _from_user(params: SendMessageRequest) -> None:
	"""A message a client sends is the user's (``ROLE_USER``): an agent's is invalid params."""
	if params.message.role != Role.ROLE_USER:
		raise InvalidParamsError(message="message.role: a message sent to the agent is ROLE_USER")


class OpenMoltExecutor(AgentExecutor):
	"""Runs an OpenMolt agent for the A2A request handler: one task, one run.

	Args:
		agent: The agent.
		sessions: Where each context's conversation is kept (``a2a:<agent>:<context>``).
		max_parked: The most parked runs kept in memory (without a run store).
	"""

	def __init__(self, agent: Agent, sessions: Sessions, *, max_parked: int = MAX_PARKED) -> None:
		self.agent = agent
		self.sessions = sessions
		self.max_parked = max_parked
		self.parked: OrderedDict[str, RunState] = OrderedDict()
		"""The parked runs by task id, oldest first (none with a run store: it keeps them)."""
		self.redact = Redactor(known=agent.om.secrets)
		self.awaiting: OrderedDict[str, str | None] = OrderedDict()
		"""The runs of tasks waiting for the operator's approval, by run id, with the user each
		acts for (`MAX_PARKED` of them, `_bound`)."""
		self.decided: OrderedDict[str, RunResult] = OrderedDict()
		"""How those runs went on in this process (the operator decided them in the viewer),
		until their task reads it."""
		self.reported: OrderedDict[str, list[Any]] = OrderedDict()
		"""The events that brought each task up to date with its run (`settled`), by task id
		(the newest `MAX_PARKED`): what a ``SubscribeToTask`` stream of the task hears."""
		self._woken: dict[str, anyio.Event] = {}  # the run ids subscribers wait on (`follow`)
		self._cancelling: OrderedDict[str, None] = OrderedDict()
		"""The tasks whose durable run a ``CancelTask`` cancels: their cancel reports it."""
		self._stopping = False  # the server stops: `follow` streams end
		self._ends = _Decided(self)
		OpenMolt.of(agent).observers.append(self._ends)

	async def settled(self, task: Task, context: ServerCallContext) -> Task | None:
		"""A task waiting for the operator's approval, brought up to date with its run.

		The operator decides in the run viewer, and the run goes on there: once it has ended
		or parked on something else, the task says so as if its own request had run it
		(`_report`). Called by the task store whenever a task is read.

		Args:
			task: The task as kept.
			context: The call that reads it.

		Returns:
			The task, changed (the caller saves it), when its run has gone on; None when it
			has not.
		"""
		if not _awaits_approval(task):
			return None
		run_id = run_id_for("a2a", self.agent.name, task.id)
		result = await self._went_on(run_id)
		if result is None:
			return None
		self.parked.pop(task.id, None)
		self.decided.pop(run_id, None)
		self.awaiting.pop(run_id, None)
		events = _Collected()
		await self._report(TaskUpdater(events, task.id, task.context_id), task.id, result)
		for event in events.events:
			_apply(task, event)
		self.reported[task.id] = events.events
		while len(self.reported) > self.max_parked:
			self.reported.popitem(last=False)
		return task

	async def follow(
		self, task: Task, context: ServerCallContext, store: _a2a_store.A2ATaskStore
	) -> AsyncGenerator[Event, None]:
		"""What a ``SubscribeToTask`` stream of a task waiting for the operator hears next.

		It waits until the task's run has gone on (decided in this process: at once; in
		another one, sharing the run store or the durable store: read again every
		`FOLLOW_POLL` seconds), then yields the events that brought the task up to date, as
		the task's own request would have streamed them (a status, and the artifact of a
		completed run), and ends. A task settled where they were not kept (another server
		process) is yielded whole.

		Args:
			task: The task as the stream's first event gave it (``auth-required``).
			context: The subscriber's call.
			store: The task store (reading a task settles it).
		"""
		run_id = run_id_for("a2a", self.agent.name, task.id)
		earlier = self.reported.get(task.id)  # an earlier settle of the task: not this one's
		while not self._stopping:
			fresh = await store.get(task.id, context)
			if fresh is None:
				return
			if not _awaits_approval(fresh):
				reported = self.reported.get(task.id)
				for event in (
					reported if reported is not None and reported is not earlier else [fresh]
				):
					yield event
				return
			woken = self._woken.setdefault(run_id, anyio.Event())
			with anyio.move_on_after(FOLLOW_POLL):
				await woken.wait()

	def wake(self, run_id: str) -> None:
		"""A run's result is known here (or its task was cancelled): its followers read it now."""
		woken = self._woken.pop(run_id, None)
		if woken is not None:
			woken.set()

	def stop_following(self) -> None:
		"""End every `follow` stream now and from now on: the server is stopping."""
		self._stopping = True
		woken, self._woken = self._woken, {}
		for event in woken.values():
			event.set()

	async def _went_on(self, run_id: str) -> RunResult | None:
		"""How a run parked for an approval went on (None: it still waits, or is unknown)."""
		known = self.decided.get(run_id)
		if known is not None:
			return known
		om = OpenMolt.of(self.agent)
		if om.run_store is not None:
			return await _stored_result(om, run_id)
		if om.durability is not None:
			try:
				result = await om.result(run_id, wait=False)
			except RunError as exc:
				return exc.result
			except Exception as exc:  # an unknown run, a store down: the task stays as it is
				log.info("A2A: the run %s cannot be read: %s", run_id, exc)
				return None
			if result is not None and result.status != "approval_required":
				return result
		return None

	def _park(self, task_id: str, state: RunState) -> None:
		if OpenMolt.of(self.agent).run_store is not None:
			return  # the store has the state the run ended with: the source of truth
		self.parked[task_id] = state
		self.parked.move_to_end(task_id)
		_bound(self.parked, self.max_parked, lambda task: self.parked[task].user)

	async def _unpark(self, task_id: str) -> RunState | None:
		"""The parked run of a task (taken out of memory), or None."""
		parked = self.parked.pop(task_id, None)
		store = OpenMolt.of(self.agent).run_store
		if parked is not None or store is None:
			return parked
		run_id = run_id_for("a2a", self.agent.name, task_id)
		stored = await store.run(run_id)
		if stored is None or stored.status not in PARKED_STATUSES:
			return None
		return await store.state(run_id)

	async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
		"""Start the task's run, or resume it with the caller's answer; report how it ends."""
		task_id = context.task_id or ""
		# A message to a task may leave out its contextId; the SDK then makes up a new one, but
		# the task (and its conversation, the session) stays in the context it started in.
		current = context.current_task
		context_id = (current.context_id if current is not None else "") or context.context_id or ""
		updater = TaskUpdater(event_queue, task_id, context_id)
		message = context.message
		if context.current_task is None:
			task = Task(
				id=task_id,
				context_id=context_id,
				status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
				history=[message] if message is not None else [],
			)
			await event_queue.enqueue_event(task)
		if len(context_id) > MAX_CONTEXT_ID:  # a session key: its length is bounded as AG-UI's
			note = f"contextId: at most {MAX_CONTEXT_ID} characters (a conversation's id)"
			await updater.failed(self._say(updater, note))
			return
		if context.current_task is not None and not _waits(context.current_task):
			# A message queued behind the one that answered (the SDK runs a task's messages one
			# after another): the task has moved on, so nothing runs (never a second run under
			# the task's run id); the caller reads the task as it is.
			log.info(
				"A2A task %s of %s waits for nothing: a message ignored", task_id, self.agent.name
			)
			return
		content = _content(message)
		if isinstance(content, str):
			await updater.failed(self._say(updater, content))
			return
		text, data, files, attachments = content
		caller = call_caller(context.call_context)
		if problem := key_refused("a2a", self.agent.name, context_id, caller=caller):
			# A context that can pass for another's (its session): nothing runs in it.
			note = f"contextId is refused as a conversation's id: {problem}"
			await updater.failed(self._say(updater, note))
			return
		user = caller_user("a2a", self.agent.name, caller)  # whom the caller's runs act for
		parked = await self._unpark(task_id) if context.current_task is not None else None
		stored: PendingRun | None = None
		if parked is None and _waits(context.current_task):
			stored = await self._durable_question(task_id)
			if stored is None:
				await updater.failed(self._say(updater, _EXPIRED_NOTE))
				return
		# The waiting run's own user: what it is given (an answer's files) is theirs. A run for
		# another user than the caller's (an edited row) is never the caller's to answer; one
		# parked before callers' runs acted for them (no user) is still its task's.
		owner = parked.user if parked is not None else stored.user if stored is not None else None
		if owner not in (None, user):
			log.warning("A2A task %s of %s: its run is another user's", task_id, self.agent.name)
			await updater.failed(self._say(updater, _EXPIRED_NOTE))
			return
		run_id = (
			parked.run_id if parked is not None else run_id_for("a2a", self.agent.name, task_id)
		)
		connecting = parked is not None and bool(authorization_requests(parked))
		if (
			parked is not None
			and not connecting
			and (parked.pending or {}).get("kind") != ("human_input")
		):
			self._park(task_id, parked)  # an approval: the caller cannot decide it
			await updater.requires_auth(self._say(updater, _APPROVAL_NOTE))
			return
		await updater.start_work()
		answering = stored is not None or (parked is not None and not connecting)
		# An answer is text: its data parts and files go with it (files saved, as references).
		if answering:
			answering_run = parked.run_id if parked is not None else run_id
			said = await self._answer(
				text, data, files, attachments, run_id=answering_run, user=owner
			)
		else:
			said = text

		async def working(event: ToolCallEvent) -> None:
			if event.run_id == run_id and not event.replayed:
				note = self._say(updater, f"calling {event.tool}")
				await updater.update_status(TaskState.TASK_STATE_WORKING, note)

		self.agent.on("tool:call", working)
		failed = "the run failed"
		try:
			if stored is not None:
				result = await self._answer_stored(stored, said)
			else:
				result = await run_trigger(
					self.agent,
					_input(text, data, files),
					run_id=run_id,
					trigger="a2a",
					where=self.agent.name,
					sender=caller_sender(caller),
					resume=parked,
					# after a consent the run goes on, asking its accounts again: no answer
					answer=said if parked is not None and not connecting else None,
					session=self.sessions(
						session_id(
							"a2a",
							self.agent.name,
							context_id,
							caller=caller,
						)
					),
					attachments=attachments if parked is None else (),
					user=user,  # a new run's; a resumed one keeps its own
				)
		except RunCancelledError as exc:  # CancelTask (which says so), or cancelled elsewhere
			if self._cancelling.pop(task_id, None) is None:
				log.info(
					"A2A task %s of %s: its run was cancelled: %s", task_id, self.agent.name, exc
				)
				await updater.cancel(self._say(updater, "the run was cancelled"))
			return
		except RunError as exc:
			log.warning("A2A task %s of %s failed: %s", task_id, self.agent.name, exc)
			result = exc.result
		except Exception as exc:
			log.warning("A2A task %s of %s failed: %s", task_id, self.agent.name, exc)
			result = None
			answered = stored is not None or parked is not None
			if answered and isinstance(exc, (ConfigurationError, ApprovalError)):
				# Refused before anything ran: another surface answered the question first (a
				# durable run's `openmolt answer`, the run viewer); the run goes on without it.
				failed = f"your answer was not used: {exc}"
		finally:
			self.agent.off("tool:call", working)
		if result is None:
			await updater.failed(self._say(updater, failed))
			return
		await self._report(updater, task_id, result)

	async def _durable_question(self, task_id: str) -> PendingRun | None:
		"""The task's durable run parked on a question (after a restart), if any."""
		om = OpenMolt.of(self.agent)
		if om.durability is None:
			return None
		run_id = run_id_for("a2a", self.agent.name, task_id)
		try:
			waiting = await om.pending(agent=self.agent.name)
		except Exception as exc:
			log.warning("A2A: cannot read the parked runs of %s: %s", self.agent.name, exc)
			return None
		return next((p for p in waiting if p.run_id == run_id), None)

	async def _answer(
		self,
		text: str,
		data: list[Any],
		files: list[dict[str, str]],
		attachments: list[Attachment],
		*,
		run_id: str,
		user: str | None,
	) -> str:
		"""The answer to a question as the run reads it: the text, or JSON with what came along.

		A file's bytes are saved to the file store as every file is (screened, owned by the
		run's user: `openmolt_core.files.save_screened`) and passed on as its reference, which
		the agent's tools accept (an answer takes no attachment for the model).
		"""
		if not (data or files or attachments):
			return text
		store = self.agent.om.files
		origin = {"run": run_id, "call": "answer", "user": user}
		saved: list[dict[str, Any]] = []
		for a in attachments:
			raw = base64.b64decode(a.data)
			saved.append(
				await save_screened(
					store, raw, media_type=a.media_type, name=a.name or "", origin=origin
				)
			)
		answer = _input(text, data, [*files, *saved])
		return json.dumps(answer, ensure_ascii=False)

	async def _answer_stored(self, waiting: PendingRun, text: str) -> RunResult | None:
		"""Answer a durable run's question (it started tainted: an A2A run always does).

		The result is the run's end, or its next park: ``om.result`` would wait past a second
		question for the run's end, which only the caller's answer to it, through this task,
		brings.
		"""
		om = OpenMolt.of(self.agent)
		await om.answer(waiting.run_id, text, step=waiting.step)
		while True:
			result = await om.result(waiting.run_id, wait=False)
			if result is not None and result.status != "human_input_required":
				return result  # it ended, or parks on something else
			if result is not None:
				asked = await om.pending(agent=self.agent.name)
				if any(p.run_id == waiting.run_id and p.step != waiting.step for p in asked):
					return result  # a new question
			await anyio.sleep(_POLL)

	async def _report(self, updater: TaskUpdater, task_id: str, result: RunResult) -> None:
		words = _words(result)
		if result.status == "success":
			parts = [new_text_part(mask_url_logins(self.redact(words)))] if words else []
			if result.output is not None:
				parts.append(
					new_data_part(mask_url_logins_deep(self.redact.deep(_json(result.output))))
				)
			if parts:
				await updater.add_artifact(parts, name="output", last_chunk=True)
			await updater.complete(self._say(updater, words) if words else None)
		elif result.status == "human_input_required":
			self._park(task_id, result.state)
			question = str((result.state.pending or {}).get("message", "")) or words
			await updater.requires_input(self._say(updater, question))
		elif result.status == "approval_required":
			self._park(task_id, result.state)
			self.awaiting[result.state.run_id] = result.state.user
			_bound(self.awaiting, self.max_parked, lambda run: self.awaiting[run])
			await updater.requires_auth(self._say(updater, _APPROVAL_NOTE))
		elif result.status == "authorization_required":  # the caller's user connects, then says so
			self._park(task_id, result.state)
			await updater.requires_auth(self._say(updater, connect_text(result.state)))
		elif result.status in PARKED_STATUSES:  # parked on something else: the operator's to give
			self._park(task_id, result.state)
			await updater.requires_auth(self._say(updater, result.error or words or result.status))
		elif result.status == "guardrail_tripped":  # a policy stopped it: the agent won't go on
			why = result.error or words or result.status
			await updater.reject(self._say(updater, f"{result.status}: {why}"))
		else:
			why = result.error or words or result.status
			await updater.failed(self._say(updater, f"{result.status}: {why}"))

	async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
		"""Stop the task and say so; its run is cancelled where it is kept.

		A running run is cancelled by the handler (it cancels the request that runs it); on a
		durable store, where that request only waits for the run, the run is cancelled in the
		store first (the engine's cancel: the call under way stops, no step begins any more),
		and this returns once it has stopped. A parked one (``input-required``,
		``auth-required``) is taken out of memory, marked ``cancelled`` in the run store, and
		cancelled in the durable store: a later answer to it, from any surface, is refused. A
		durable run that a delivery from elsewhere resumed since (the operator approved its call
		in another process) is cancelled too, where it runs.
		"""
		task_id = context.task_id or ""
		parked = self.parked.pop(task_id, None)
		run_id = (
			parked.run_id if parked is not None else run_id_for("a2a", self.agent.name, task_id)
		)
		if _waits(context.current_task):
			await self._cancel_parked(run_id)
		elif OpenMolt.of(self.agent).durability is not None:
			self._cancelling[task_id] = None  # its request says nothing of the cancel: this does
			while len(self._cancelling) > self.max_parked:
				self._cancelling.popitem(last=False)
			await self._cancel_parked(run_id)
		updater = TaskUpdater(event_queue, task_id, context.context_id or "")
		await updater.cancel()

	async def _cancel_parked(self, run_id: str) -> None:
		"""Cancel a task's run in the run store (if parked) and the durable store (failures logged)."""
		om = OpenMolt.of(self.agent)
		store = om.run_store
		if store is not None:
			try:
				await store.cancel_parked(run_id, "cancelled by its A2A caller (CancelTask)")
			except Exception as exc:
				log.warning("A2A: could not cancel the parked run %s in the store: %s", run_id, exc)
		try:
			# On a question, an approval or an account; or going on: a delivery from elsewhere
			# (the operator's approval) resumed it since the task said it waits.
			await cancel_if_parked(om, run_id, going=True)
		except Exception as exc:
			log.warning("A2A: could not cancel the durable run %s: %s", run_id, exc)

	def _say(self, updater: TaskUpdater, text: str) -> Message:
		return new_text_message(  # a URL's login masked, its links kept (`mask_url_logins`)
			mask_url_logins(self.redact(text)),
			context_id=updater.context_id,
			task_id=updater.task_id,
		)


_APPROVAL_NOTE = (
	"a tool call waits for the operator's approval: they decide it in their run viewer, where the "
	"run goes on; read this task again (GetTask) for how it ended"
)
_APPROVAL_WAIT = _APPROVAL_NOTE.partition(":")[0]
"""How the note starts (a task kept from before this wording was one too)."""


_EXPIRED_NOTE = (
	"task expired: the run this task waited with is no longer kept here (the server keeps the "
	"newest parked runs only, it restarted without a run store, or the operator took the run on); "
	"send your message as a new task"
)


def _waits(task: Task | None) -> bool:
	"""Whether a task waits for its caller (or the operator): its run is parked."""
	return task is not None and task.status.state in (
		TaskState.TASK_STATE_INPUT_REQUIRED,
		TaskState.TASK_STATE_AUTH_REQUIRED,
	)


_Content = tuple[str, list[Any], list[dict[str, str]], list["Attachment"]]


def _content(message: Message | None) -> _Content | str:
	"""A message's text, data, file addresses and attachments, or why it cannot be read.

	A file's bytes of an `ATTACHABLE` type are an attachment, of a `TEXTUAL` one (or none
	given) its text; a file's address is passed on as a reference (the server fetches nothing).
	"""
	if message is None:
		return "", [], [], []
	texts = list(get_text_parts(message.parts))
	files: list[dict[str, str]] = []
	attachments: list[Attachment] = []
	for part in message.parts:
		kind = part.WhichOneof("content")
		name = part.filename or None
		if kind == "url":
			file = {"url": part.url, "mediaType": part.media_type, "name": part.filename}
			files.append({k: v for k, v in file.items() if v})
		elif kind == "raw" and len(part.raw) > MAX_ATTACHMENT_BYTES:
			what = f"the file {part.filename!r}" if part.filename else "a file"
			return (
				f"{what} is {len(part.raw)} bytes, more than the {MAX_ATTACHMENT_BYTES} a message "
				"takes: send a smaller file, or its address (a url part)"
			)
		elif kind == "raw" and part.media_type in ATTACHABLE:
			attachments.append(attachment(part.media_type, part.raw, name))
		elif kind == "raw":
			try:
				texts.append(part.raw.decode("utf-8"))
			except UnicodeDecodeError:
				what = f"the file {part.filename!r}" if part.filename else "a file"
				kinds = ", ".join(ATTACHABLE)
				return f"{what} is not UTF-8 text: send text, or a file of type {kinds}"
	return "\n".join(texts), list(get_data_parts(message.parts)), files, attachments


def _input(text: str, data: list[Any], files: list[dict[str, Any]]) -> Any:
	"""The run's input: the text alone, or with the data parts and the files' addresses."""
	if not data and not files:
		return text
	given: dict[str, Any] = {"message": text}
	if data:
		given["data"] = data
	if files:
		given["files"] = files
	return given


def _words(result: RunResult) -> str:
	if result.human_message:
		return result.human_message
	output = result.output
	if isinstance(output, str):
		return output
	if isinstance(output, dict) and isinstance(output.get("result"), str):
		return str(output["result"])
	return ""


def _json(value: Any) -> Any:
	from pydantic import BaseModel

	if isinstance(value, BaseModel):
		return value.model_dump(mode="json", by_alias=True)
	return json.loads(json.dumps(value, default=str))


def _slug(name: str) -> str:
	return "".join(c if c.isalnum() else "-" for c in name).strip("-").lower() or "agent"


FOLLOW_POLL = 2.0
"""Seconds between the reads of a followed task whose run may go on in another process."""


def _awaits_approval(task: Task) -> bool:
	"""Whether a task is ``auth-required`` for the operator's approval (not for an account)."""
	if task.status.state != TaskState.TASK_STATE_AUTH_REQUIRED:
		return False
	message = task.status.message
	return any(t.startswith(_APPROVAL_WAIT) for t in get_text_parts(message.parts))


class _Collected(EventQueue):
	"""An event queue that keeps what is put in it: a report made outside a request."""

	def __init__(self) -> None:
		self.events: list[Any] = []

	async def enqueue_event(self, event: Event) -> None:
		"""Keep the event."""
		self.events.append(event)


def _apply(task: Task, event: Any) -> None:
	"""Apply a status or artifact event to its task, as the a2a-sdk's task manager does."""
	if isinstance(event, TaskStatusUpdateEvent):
		if task.status.HasField("message"):
			task.history.append(task.status.message)
		if event.metadata:
			task.metadata.MergeFrom(event.metadata)
		task.status.CopyFrom(event.status)
	elif isinstance(event, TaskArtifactUpdateEvent):
		append_artifact_to_task(task, event)


async def _stored_result(om: OpenMolt, run_id: str) -> RunResult | None:
	"""The result of a run the run store holds, once it has left the approval (else None)."""
	from openmolt_core.result import RunResult

	store = om.run_store
	assert store is not None
	stored = await store.run(run_id)
	if stored is None or stored.status in ("running", "approval_required"):
		return None
	state = await store.state(run_id)
	if state is None:
		return None
	finish: dict[str, Any] | None = None
	after = 0
	while True:  # the run's last finish event holds its result (its human message among it)
		events = await store.events(run_id, after=after)
		if not events:
			break
		after = events[-1].id
		for event in events:
			# A sub-run's events are kept under its caller's run too (with ``sub_run_id``):
			# its finish is the sub-run's result, never this run's.
			if (
				event.name == "finish"
				and not event.data.get("sub_run_id")
				and isinstance(event.data.get("result"), dict)
			):
				finish = event.data["result"]
	if finish is not None and finish.get("status") == stored.status:
		try:
			return RunResult.from_dict(finish, state)
		except ValueError:
			pass
	return RunResult(
		output=stored.output,
		status=stored.status,  # type: ignore[arg-type]  # a status the store wrote
		human_message="",
		plan=list(state.plan),
		steps=stored.steps,
		usage=state.usage,
		state=state,
		error=stored.error,
	)


def _bound(kept: OrderedDict[str, Any], most: int, owner: Callable[[str], str | None]) -> None:
	"""Past ``most`` entries, forget the oldest of the caller holding the most (`crowded`).

	A caller who parks many runs pushes out its own, never another caller's waiting one.

	Args:
		kept: The entries by id, oldest first.
		most: The most kept.
		owner: Whose an entry is (the user its run acts for: its caller's).
	"""
	while len(kept) > most:
		oldest = crowded(kept, owner)
		if oldest is None:  # pragma: no cover - a map past its bound holds a key
			return
		del kept[oldest]


class _Decided(RunObserver):
	"""Keeps how the runs of an executor's tasks waiting for an approval went on here."""

	def __init__(self, executor: OpenMoltExecutor) -> None:
		self.executor = executor

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		"""A run ended (or parked): keep its result for its task, if one waits for it."""
		result = outcome.result
		if result is None or result.status == "approval_required":
			return
		executor = self.executor
		if run.run_id in executor.awaiting:
			executor.decided[run.run_id] = result
			decided = executor.decided
			_bound(decided, executor.max_parked, lambda run: decided[run].state.user)
			executor.wake(run.run_id)
