"""Conversations over chat channels: a message starts a run or continues the chat's conversation.

One `Conversations` per agent and channel. For each message from someone the allow lists let in:

- if the sender's last run in the chat is parked on a question (the agent's
  ``requestHumanInput``), the message is the answer: the run resumes with it. A run acts for
  the person who wrote (below), so only they answer its question: in a group, another member's
  message starts a run of their own, and the question stays theirs to answer;
- otherwise a new run starts, its input ``{"message", "from", "chat"}``, in the chat's session
  (`openmolt_core.sessions`; the id is ``<channel>:<agent>:<chat>[/<thread>]``): the model sees
  the chat's earlier turns, summarised when long, and the run's turn is appended to them. The
  server's sessions store keeps them (``openmolt serve``: a SQLite file), so a restart keeps every
  conversation. ``history: 0`` turns this off: each message is a run of its own.

When the run ends, what it said (`openmolt_core.sessions.said`: its ``humanMessage``, else its
output's text) is sent to the same chat (and thread); a question it asks is sent there too, and
the run parks until the next message. That is what the session keeps as the turn every later run
reads; an output the chat was not sent (a dict: "Done.") is read by the same person's runs only.
A run acts for its sender (``user="<channel>:<sender>"``: ``telegram:42``, and for Slack,
whose user ids are unique within a workspace only, ``slack:<team>:<user id>``,
`Incoming.sender`): an integration the agent binds
per end user uses that sender's account (`openmolt_core.accounts`), and when they have not
connected it, the chat gets the consent link (a private chat only: a link connects whoever signs
in on it, so a group is told to write privately). Whoever signs in on it is not trusted to be
them: the callback route keeps the tokens and shows a one-time code (`openmolt_serve._auth`),
and a message that is exactly that code (`openmolt_core.accounts.is_code`) stores them if its
sender is the user the link was made for and the chat is that of the agent whose run asked,
then the run goes on (`Conversations.connected`; with a run store or a durable store, the run
its chat's row names, parked by any server on the store or by this one before a restart, is
read from the store and goes on if it waits for an account, acts for the sender, is a run of
this chat and the link's signed state names this agent exactly); from anyone else it drops
them (a forwarded link connects nothing), and in another agent's chat it is refused and left
for that one. Messages of one chat are handled one after another (with a run store or a durable
store, on every server on it: `openmolt_serve._parks.ParkRows.going`); chats run side by side.
A message seen before (the
service's retry) is ignored: with a run store or a durable store its id is kept in the replay
guard's file for a day (`openmolt_serve._seen`; on a PostgreSQL durable store, in its database),
so a retry that reaches another server on the store (on another machine too), or this one after a
restart, is ignored too. Messages from anyone else are ignored and logged, never answered:
a stranger learns nothing about the bot.

Where a chat's parked run is kept (a question, an account to connect): without a run store or a
durable store, in this process's memory (`_Chat.parked`), so a restart forgets it and another
server takes the answer as a new message. With one (``OpenMolt(run_store=...)``,
``OpenMolt(durability=...)``), in rows every server on the store shares
(`openmolt_serve._parks`: a row per chat and person, naming the run, its step and a park mark,
never its words), the run's state read where the run is kept when the answer comes: the answer
goes on with the run on any server, after a restart too; of two taking it at once, one does. A
question another surface answered first (the run viewer, ``openmolt answer``), or a run
cancelled since, refuses the answer ("Your answer was not used"); a store that cannot be read
runs nothing and asks for the message again.

Letting someone talk is not trusting them. A run starts tainted (`openmolt_core.taint`: the
taint policy gates outbound tools from the first step) unless its message comes from a user id
listed in ``allowedUsers`` (`openmolt_core.triggers.starting_taint`): a stranger let in by
``allowedChats`` or ``allowEveryone`` cannot make the agent send private data out without an
approval. The same holds when a stranger's words reach a run another way: a message a trusted
user forwards (Telegram's ``forward_origin``), an answer to a
parked question taints the run it resumes, and a session whose earlier turns hold a
stranger's (or a tainted run's reply or notes) taints the runs that read them. A durable run's
question takes the answer's text only (its workflow waits for it, and the taint an answer would
add is not delivered: `openmolt_serve._launch.run_trigger` refuses it), so a clean durable run is
answered only by the trusted person it acts for; their forwarded message starts a run of its own
(tainted), and the question stays theirs. A durable question found among the store's pending ones
without a row (parked before chats kept rows) is answered only by a trusted user who is the
person it acts for; anyone else's message starts a new run (tainted, from a stranger).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._support.masking import mask_known, mask_url_logins
from openmolt_core.accounts import authorization_requests, is_code
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ApprovalError, ConfigurationError
from openmolt_core.openmolt import OpenMolt
from openmolt_core.result import PARKED_STATUSES, RunResult, RunState
from openmolt_core.sessions import SessionRun, said
from openmolt_core.triggers import starting_taint
from openmolt_serve._launch import Launcher, connect_text, run_id_for, scope_prefix, session_id
from openmolt_serve._parks import ParkRows, kept_parked
from openmolt_serve._recent import crowded, recent
from openmolt_serve._rows import task_rows
from openmolt_serve._seen import seen_store

if TYPE_CHECKING:
	from openmolt_core._durable import PendingRun
	from openmolt_core.accounts import Connected
	from openmolt_core.agent import Agent
	from openmolt_core.sessions import Session
	from openmolt_core.triggers import SlackChannel, TelegramChannel
	from openmolt_serve._live import LiveReplies
	from openmolt_serve.signatures import SeenStore

__all__ = [
	"MAX_CHATS",
	"MAX_SEEN",
	"Conversations",
	"Incoming",
	"Send",
	"end_user",
	"park_questions",
	"pieces",
]

log: logging.Logger = logging.getLogger("openmolt")

KEEP_SEEN = 86_400.0
"""Seconds a message's id is kept in the store: past the services' retries (Slack's take about
half an hour; Telegram keeps an update unconfirmed for a day)."""

FOLLOW_LOOK = 5.0
"""Seconds between a server's looks for the chat runs a gone worker left (`Conversations`)."""

FOLLOW_HOLD = 4
"""How many looks (`FOLLOW_LOOK`) a server's claim to follow a run for a gone caller lasts: the
follower renews it at each look while it follows, and once it is gone (dead, stopped) the
claim lapses and another server takes it (`Conversations._takes_follow`)."""

MAX_CHATS = 10_000
"""The most chats one channel remembers (the run each may wait with, at most); past it the oldest
idle one where no run waits, of the sender who made the most, is forgotten (its conversation
stays in its session): one sender's flood of new threads, or many senders' of one chat each,
never pushes out another's waiting chat. With a run store or
a durable store, the rows keep the newest parks of this many chats (`openmolt_serve._parks`)."""

MAX_SEEN = 10_000
"""The most ids of messages taken one channel remembers in memory (with a store: for a day, in
it), to know the service's retry of one; past it the oldest of the sender with the most goes,
never one whose run is under way or parked: neither one sender's flood nor many senders' makes
the retry of another's message look new (it would run twice)."""

Send = Callable[["Incoming", str], Awaitable[None]]
"""Sends a text to the chat (and thread) a message came from."""


@dataclass(frozen=True, slots=True)
class Incoming:
	"""A message from a chat service.

	Args:
		channel: ``telegram`` or ``slack``.
		chat: The chat (Telegram chat id, Slack channel id).
		user: The sender's id.
		text: What they wrote.
		id: The service's id of the message (or update, or event), for retries.
		username: The sender's name, if known (Telegram ``@username``).
		thread: The thread it belongs to (Slack ``thread_ts``, a Telegram forum topic's
			``message_thread_id``), if any.
		reply_to: The message to reply to (Telegram ``message_id``), if any.
		forwarded: Whether it is someone else's message forwarded by the sender (its words are
			not the sender's: the run starts tainted, whoever forwarded it).
		team: The sender's team where a user id is unique only within it (Slack: the
			sender's workspace, their own for a Slack Connect user); None where ids are global
			(Telegram). OpenMolt knows the sender as `sender`: the team and the id.
	"""

	channel: str
	chat: str
	user: str
	text: str
	id: str
	username: str | None = None
	thread: str | None = None
	reply_to: str | None = None
	forwarded: bool = False
	team: str | None = None

	@property
	def key(self) -> str:
		"""The conversation it belongs to: the chat, and the thread."""
		return f"{self.chat}/{self.thread}" if self.thread else self.chat

	@property
	def sender(self) -> str:
		"""Who sent it, as OpenMolt keys people: ``<team>:<user id>`` with a team, else the id.

		Two workspaces may each have a user ``U7``: their runs, questions and accounts are
		never one person's.
		"""
		return f"{self.team}:{self.user}" if self.team else self.user


def pieces(text: str, most: int, size: Callable[[str], int] = len) -> list[str]:
	"""A reply cut into the messages a service takes (at most ``most`` each, as ``size`` counts).

	Args:
		text: The reply.
		most: The most one message holds.
		size: How much room a text takes (`openmolt_serve._live.fits`): its length by default.
	"""
	if size is len:
		return [text[i : i + most] for i in range(0, len(text), most)] or [""]
	from openmolt_serve._live import fits

	out: list[str] = []
	while size(text) > most:
		at = max(fits(text, most, size), 1)
		out.append(text[:at])
		text = text[at:]
	return [*out, text] if text or not out else out


def _nobody_now(question: str) -> str:
	raise HumanInputUnavailable(question)


def park_questions(agent: Agent) -> None:
	"""Make the agent's questions park its run, to be answered by the chat's next message."""
	agent.on_human_input_request = _nobody_now


@dataclass
class _Chat:
	owner: str = ""
	"""The end user whose message made it (`end_user`): past `MAX_CHATS`, the oldest chat of the
	one who made the most goes (`openmolt_serve._recent.crowded`)."""
	lock: anyio.Lock = field(default_factory=anyio.Lock)
	parked: dict[str, RunState] = field(default_factory=dict)
	"""By end user (`end_user`): the run that waits for that person's answer or account (when
	the channel keeps them in memory: no run store, no durable store)."""
	asked: dict[str, Incoming] = field(default_factory=dict)
	"""By end user: the message whose run waits for that person to connect an account."""


def _told(text: str) -> str:
	"""Text a chat is sent: every secret known now, and a URL's login (its links kept working)."""
	return mask_url_logins(mask_known(text))


def end_user(message: Incoming) -> str:
	"""The end user a chat message's run acts for: ``<channel>:<sender>`` (`Incoming.sender`).

	``telegram:42``; ``slack:T0123:U0456`` (a Slack user id is unique within its team only).
	"""
	return f"{message.channel}:{message.sender}"


def _sender_of(channel: str, user: str) -> tuple[str, str | None]:
	"""The sender's id and team from an end user (`end_user`) of ``channel``."""
	rest = user.removeprefix(f"{channel}:")
	team, _, uid = rest.rpartition(":")
	return uid, team or None


def _private(message: Incoming) -> bool:
	"""Whether only the sender reads the chat: a Telegram chat with the user, a Slack DM."""
	if message.channel == "telegram":
		return message.chat == message.user
	return message.chat.startswith("D")  # Slack: a direct message's channel id


_NO_QUESTION = "I need your answer to go on: what should I do?"

_ANSWERED = (
	"Your answer was not used: the question was already answered elsewhere (the run viewer, "
	"openmolt answer), or its run was cancelled or no longer waits for it."
)
"""What a chat says when the question its person answers was answered on another surface."""

_UNREADABLE = "Sorry, I cannot read what this chat waits for now; send that again in a moment."
"""What a chat says when the store that keeps its waiting run cannot be read."""


def _refused(error: BaseException | None) -> str | None:
	"""What a chat says when its answer was refused before anything ran, or None.

	Another surface answered the question first (a durable run's `openmolt answer`, the run
	viewer), or the run no longer waits for it (moved past it, cancelled): the run goes on (or
	stays) without this answer, and the person is told so rather than "could not finish". The
	error's own words are the operator's (run ids, hints for code, a worker's definition): the
	chat, which anyone the channel lets in reads, gets one fixed sentence; the log gets the rest.
	"""
	if isinstance(error, ConfigurationError | ApprovalError):
		log.info("a chat's answer was not used: %s", error)
		return _ANSWERED
	return None


def _reply(result: RunResult | None, error: BaseException | None) -> str:
	if result is not None and result.status == "success":
		return said(result) or "Done."  # what the chat's session keeps as the turn, too
	if result is not None and result.status == "approval_required":
		return "This waits for an approval: decide it in the run viewer, and I will go on there."
	if result is not None and result.status in PARKED_STATUSES:  # one this chat has no view of
		return f"This waits: {result.error}" if result.error else "This waits for someone else."
	if result is not None and result.human_message:
		return result.human_message
	status = result.status if result is not None else "error"
	return f"Sorry, I could not finish that ({status})."


def _follow_key(run_id: str, caller: str) -> str:
	"""The replay guard's key a server claims to follow a run for a gone caller's worker."""
	return f"follow:{run_id}:{caller}"


def _gone_caller(row: dict[str, Any], me: str | None) -> str | None:
	"""The worker whose gone caller a going run is followed for, or None: its caller follows it.

	A run taken over from a worker (the row's ``taken_from``, kept in the store) is that
	worker's caller's, wherever it goes on now and whether that worker beats again or not (it
	started again under its id: its caller is gone; it was paused: its caller claims the same
	key before it replies, `Conversations._still_followed_here`). Else a run of this server's
	worker (``me``) or of a live one is followed by its caller there, and a gone worker's run is
	that worker's caller's.
	"""
	taken = row.get("taken_from")
	if taken is not None:
		return str(taken)
	if row.get("worker") == me or row.get("worker_live", False):
		return None
	return str(row.get("worker") or "")


class Conversations:
	"""The conversations of one agent on one channel.

	Args:
		agent: The agent (its questions are made to park: `park_questions`).
		settings: The channel's settings (its type, allow lists, history).
		send: Sends a text to a message's chat.
		launcher: Starts the runs.
		live: Shows each run's reply while it is written (``stream: true``;
			`openmolt_serve._live`); None: the reply is sent when the run ends.
	"""

	def __init__(
		self,
		agent: Agent,
		settings: TelegramChannel | SlackChannel,
		send: Send,
		launcher: Launcher,
		live: LiveReplies | None = None,
	) -> None:
		self.channel: str = settings.type
		self.agent = agent
		self.settings = settings
		self.send = send
		self.launcher = launcher
		self.live = live
		self.chats: OrderedDict[str, _Chat] = OrderedDict()
		self.redact: Callable[[str], str] = _told
		"""Masks every text sent to a chat: the secrets of every live instance (this one's
		among them) and the environment's as it is now (a key exported after the instance read
		it), as a served response is masked (`openmolt_core._support.masking.known_secrets`),
		and a URL's login (`openmolt_core._support.masking.mask_url_logins`: its links work)."""
		self._seen: OrderedDict[str, tuple[str, str]] = OrderedDict()
		"""A taken message's id: its sender, and the run it starts (`run_id_for`)."""
		self._taking: set[str] = set()  # the ids of the messages whose handling goes on
		self._following: dict[str, str | None] = {}
		"""The runs a restart or a worker's end left, followed here: by run, the claim this
		server renews while it follows it (None: this worker's own run, followed unclaimed)."""
		self.seen_store: SeenStore | None = seen_store(agent, f"chat:{self.channel}")
		"""Where the ids of the messages taken are kept beyond this process (None: memory only)."""
		rows = task_rows(agent, f"chat:{self.channel}")
		self.parks: ParkRows | None = (
			None
			if rows is None
			else ParkRows(
				agent,
				rows,
				most=MAX_CHATS,
				what=self.channel,
				prefix=lambda _, key: scope_prefix(self.channel, agent.name, key),
				users=True,
			)
		)
		"""Where the chats' parked runs are kept (`openmolt_serve._parks`: in rows every server
		on the run store or durable store shares), or None: in this process's memory."""
		park_questions(agent)
		if live is not None:
			agent.on("text:delta", live.on_delta)  # the agent's runs stream (docs: streaming)

	def allowed(self, message: Incoming) -> bool:
		"""Whether the allow lists let this message's sender (or chat) talk to the agent."""
		s = self.settings
		if s.allow_everyone:
			return True
		users = {str(u).lstrip("@").lower() for u in s.allowed_users}
		if message.user.lower() in users or message.sender.lower() in users:
			return True
		if message.username and message.username.lstrip("@").lower() in users:
			return True
		return message.chat in {str(c) for c in s.allowed_chats}

	def trusts(self, message: Incoming) -> bool:
		"""Whether the message's sender is trusted: their user id is in ``allowedUsers``.

		The decision is `openmolt_core.triggers.starting_taint`'s (this asks it). A forwarded
		message is not trusted: its words are someone else's.
		"""
		if message.forwarded:
			return False
		trusted = self.settings.allowed_users  # an id alone, or the team's user (``T1:U7``)
		return any(
			starting_taint("chat", sender=sender, trusted=trusted) is None
			for sender in dict.fromkeys((message.sender, message.user))
		)

	def _first_time(self, message: Incoming) -> bool:
		if message.id in self._seen:
			return False
		store = self.seen_store
		if store is not None and message.id:
			# Another server on the store (or this one before a restart) may have taken it.
			now = time.time()
			if store.take({f"msg:{message.id}": now + KEEP_SEEN}, now) is not None:
				return False
		run_id = run_id_for(message.channel, self.agent.name, message.id, scope=message.key)
		self._seen[message.id] = (message.sender, run_id)
		self._taking.add(message.id)
		if len(self._seen) > MAX_SEEN:
			self._bound_seen()
		return True

	def _bound_seen(self) -> None:
		"""Forget ids past `MAX_SEEN`: never one whose run is under way or parked here.

		Its retry would run it again (a repeated side effect). Of the rest, the oldest of the
		sender with the most goes (`crowded`): one sender's flood pushes out their own, many
		senders' each other's. Those kept are bounded by the runs going and parked.
		"""
		parked = {s.run_id for chat in self.chats.values() for s in chat.parked.values()}

		def kept(key: str) -> bool:
			return key in self._taking or self._seen[key][1] in parked

		while len(self._seen) > MAX_SEEN:
			oldest = crowded(self._seen, lambda key: self._seen[key][0], spare=kept)
			if oldest is None:  # every id is of a run under way or parked
				break
			del self._seen[oldest]

	def _ended_taking(self, message: Incoming) -> None:
		"""A message's handling ended: its id may be forgotten (unless its run is parked)."""
		self._taking.discard(message.id)

	async def _take(self, message: Incoming) -> None:
		try:
			await self._handle(message)
		finally:
			self._ended_taking(message)

	async def receive(self, message: Incoming) -> bool:
		"""Take a message; its run goes on in the background (the service wants a quick answer).

		Returns:
			Whether it was taken (False: not allowed, empty, or seen before).
		"""
		if not message.text.strip():
			return False
		if not self.allowed(message):  # first: a stranger's messages take no place among the ids
			log.info(
				"%s: a message from %s in %s is ignored: not on the allow lists of %s",
				message.channel,
				message.user,
				message.chat,
				self.agent.name,
			)
			return False
		if not self._first_time(message):
			return False
		self.launcher.tg.start_soon(self._take, message, name=f"openmolt chat {message.key}")
		return True

	def _chat(self, key: str, message: Incoming) -> _Chat:
		"""The chat of a conversation key, now the most recent; past `MAX_CHATS` an idle one goes.

		The one that goes is one where no run waits (kept here when no store keeps it), the
		oldest of the sender who made the most: one sender's flood of new threads or chats
		pushes out their own, and many senders' flood each other's, never a chat waiting with a
		run (unless every chat waits: then the oldest of the sender who made the most).
		"""
		return recent(
			self.chats,
			key,
			lambda: _Chat(owner=end_user(message)),
			most=MAX_CHATS,
			busy=lambda c: c.lock.locked(),
			owner=lambda k: self.chats[k].owner,
			waits=lambda c: bool(c.parked or c.asked),
		)

	def _going(self, key: str) -> contextlib.AbstractAsyncContextManager[None]:
		"""Hold the chat's turn across the servers on the rows (after this process's own lock).

		A message of the chat another server handles meanwhile waits for this one's run, its
		reply and the park it leaves (`openmolt_serve._parks.ParkRows.going`).
		"""
		if self.parks is None:
			return contextlib.nullcontext()
		return self.parks.going(key, self.launcher.tg)

	def close(self) -> None:
		"""Close the rows the chats' parked runs are kept in (the server does when it stops)."""
		if self.parks is not None:
			self.parks.close()

	async def _handle(self, message: Incoming, stored: RunState | None = None) -> None:
		"""Take a message of a chat (or, with ``stored``, resume that run, the message its own)."""
		chat = self._chat(message.key, message)
		# One message of a chat at a time, in order: in this process, and on every server on
		# the rows.
		async with chat.lock, self._going(message.key):
			if stored is None and is_code(message.text):  # a sign-in's code, from its page
				await self._confirm(message)
				return
			done = anyio.Event()
			outcome: dict[str, Any] = {}

			async def ended(result: RunResult | None, error: BaseException | None) -> None:
				outcome["result"], outcome["error"] = result, error
				done.set()

			trusted = self.trusts(message)
			parked, rowless = stored, False
			if stored is None:
				try:
					parked, refused, rowless = await self._waiting(chat, message, trusted)
				except Exception as exc:  # the rows, the run store or the durable store is down
					log.warning(
						"%s: the waiting run of %s could not be read: %s",
						self.channel,
						self.agent.name,
						exc,
					)
					await self._say(message, _UNREADABLE)
					return
				if refused is not None:
					await self._say(message, refused)
					return
			where = f"{self.channel}:{self.agent.name}"
			allowed = (message.sender,) if trusted else ()  # as `trusts` decided
			session = self.session(message.key)
			watched: str | None = None
			answering = parked is not None  # the message answers a run's question
			try:
				if parked is not None:
					watched = self._watch(parked.run_id, message)
					await self.launcher.start(
						self.agent,
						run_id=parked.run_id,
						resume=parked,
						# A run waiting for an account takes no answer: it goes on, or asks again.
						answer=None if authorization_requests(parked) else message.text,
						done=ended,
						trigger="chat",
						where=where,
						sender=message.sender,
						trusted=allowed,
						session=session,
					)
				elif (
					trusted
					and rowless
					and (waiting := await self._parked_in_store(message)) is not None
				):
					# Only a trusted user answers a stored run: its state cannot be tainted
					# from here, so anyone else's message starts a new (tainted) run instead.
					answering = True

					async def answered(
						result: RunResult | None, error: BaseException | None
					) -> None:
						await self._record(session, result, message.text, asked_tainted=False)
						await ended(result, error)

					await self.launcher.answer(
						self.agent, waiting.run_id, message.text, step=waiting.step, done=answered
					)
				else:
					run_id = run_id_for(
						message.channel, self.agent.name, message.id, scope=message.key
					)
					watched = self._watch(run_id, message)
					await self.launcher.start(
						self.agent,
						self._input(message),
						run_id=run_id,
						done=ended,
						trigger="chat",
						where=where,
						sender=message.sender,
						trusted=allowed,
						session=session,
						user=end_user(message),
					)
			except Exception as exc:
				log.warning(
					"%s: the run for %s could not start: %s", message.channel, message.key, exc
				)
				if self.live is not None and watched is not None:
					self.live.forget(watched)  # it will not finish
				refused = _refused(exc) if answering else None
				if parked is not None and refused is None:  # nothing ran: it still waits
					await self._park(chat, message, parked)
				await self._say(message, refused or "Sorry, I cannot start on that now.")
				return
			await done.wait()
			if self.live is not None and watched is not None and outcome.get("result") is None:
				self.live.forget(watched)  # it ended with no result to finish the message with
			error = outcome.get("error")
			refused = _refused(error) if answering else None
			if refused is not None:
				await self._say(message, refused)
				return
			if not await self._still_followed_here(outcome.get("result"), error):
				return
			await self._after(message, chat, outcome.get("result"), error)

	def session(self, key: str) -> Session | None:
		"""The session of a conversation (`Incoming.key`); None when ``history`` is 0."""
		if not self.settings.history:
			return None
		return self.launcher.sessions(session_id(self.channel, self.agent.name, key))

	async def _record(
		self, session: Session | None, result: RunResult | None, asked: Any, *, asked_tainted: bool
	) -> None:
		"""Append a run's turn that ran outside `agent.run` (a durable run resumed elsewhere).

		Once, under the session's turn, its ``pending`` item taken back with it
		(`openmolt_core.sessions.SessionRun.record`): another server following the same run, or
		the session's next run finding it ended, does not append it a second time.
		"""
		if session is None or result is None:
			return
		await SessionRun(self.agent, session).record(
			result, asked=asked, asked_tainted=asked_tainted
		)

	async def _waiting(
		self, chat: _Chat, message: Incoming, trusted: bool
	) -> tuple[RunState | None, str | None, bool]:
		"""What the message goes on with: a run (None: one of its own), or why it is refused.

		Also whether the chat's rows name no run of its sender's: a durable question parked
		before chats kept rows may wait in the store then (`_parked_in_store`).

		Only the person a run acts for answers its question (their accounts are its): another
		member's message in a group starts a run of their own. The run is taken for this message
		from where the chat keeps it: its memory, or its row (one taker wins, whichever server
		it is on), the state read where the run is kept. A question that waits no more (answered
		on another surface, cancelled) refuses the answer; an account that waits no more (the
		run went on elsewhere) leaves the message a run of its own.

		Raises:
			Exception: The rows or the store the run is kept in could not be read.
		"""
		who = end_user(message)
		if self.parks is None:
			chat.asked.pop(who, None)
			return chat.parked.pop(who, None), None, False
		found = await self.parks.find(who, message.key)
		if found is None:
			return None, None, True
		state = found.state
		if state is None:  # it went on, ended or was cancelled since it asked
			await self.parks.take(who, message.key, found.row)
			return None, _ANSWERED if found.mark.get("waits") == "question" else None, False
		pending = state.pending or {}
		if (
			pending.get("kind") == "human_input"
			and not trusted
			and not state.tainted
			and self.agent.om.durability is not None
		):
			# A durable run's question takes the answer's text only (its workflow waits for it):
			# an answer that is not its person's own words (forwarded) could not taint the run.
			# The message starts a run of its own (tainted), and the question stays theirs.
			return None, None, False
		if not await self.parks.take(who, message.key, found.row):
			return None, None, False  # another message took it meanwhile (it goes on there)
		return state, None, False

	async def _park(self, chat: _Chat, message: Incoming, state: RunState) -> None:
		"""The chat now waits with this run, for the message's sender: in memory, or its row."""
		who = end_user(message)
		account = bool(authorization_requests(state))
		if self.parks is None:
			chat.parked[who] = state
			if account:
				chat.asked[who] = message
			return
		waits = "account" if account else "question"
		await self.parks.keep(who, message.key, state, waits=waits)

	async def _after(
		self, message: Incoming, chat: _Chat, result: RunResult | None, error: BaseException | None
	) -> None:
		"""Send what the run ended with: its question (it parks) or its reply.

		Once, by whichever server claims it first (`_sends`).
		"""
		if not self._sends(result if result is not None else getattr(error, "result", None)):
			return
		if result is not None and result.status == "human_input_required" and result.state.pending:
			# An empty question would not be sent (the services refuse an empty text), and the
			# next message would answer a question nobody saw.
			text = str(result.state.pending.get("message", "")).strip() or _NO_QUESTION
			await self._park(chat, message, result.state)
		elif result is not None and result.status == "authorization_required":
			if not _private(message):
				# A consent link connects whoever signs in on it: never shown to a group.
				text = (
					"To do this I need access to your account: write to me in a private chat "
					"and I will send you the link to connect it."
				)
			else:
				await self._park(chat, message, result.state)
				text = connect_text(result.state)
		else:
			text = _reply(result, error)
		text = self.redact(text)  # what the run says goes to people outside the instance
		if self.live is not None and result is not None:
			rest = await self.live.finish(result.state.run_id, text)
			if rest is not None:  # the live message now says it, or its start
				if rest:
					await self._say(message, rest)
				return
		await self._say(message, text)

	def _watch(self, run_id: str, message: Incoming) -> str:
		if self.live is not None:
			self.live.watch(run_id, message)
		return run_id

	async def _confirm(self, message: Incoming) -> None:
		"""Finish the sign-in whose code the message is, if its sender is the one it was for.

		`openmolt_core.accounts.Accounts.confirm` decides and counts wrong tries; its refusal
		(a wrong or expired code, someone else's sign-in, too many tries) is the reply. A code
		sent in a group is left alone: the sender is told to send it privately. The run the
		sign-in names goes on: held in this process's memory (`connected`), or read from the
		store its chat's row names it in (`_stored_for_account`).
		"""
		if not _private(message):
			# Not taken in a group: another member who sent someone's code first would drop
			# their sign-in (a code is confirmed once, by its user).
			await self._say(
				message, "Send me the code in our private chat, never in a group: nothing is done."
			)
			return
		who = end_user(message)
		try:
			accounts = OpenMolt.of(self.agent).accounts
			connected = await accounts.confirm(message.text, who, agent=self.agent.name)
		except ConfigurationError as exc:
			said = str(exc).removeprefix("code: ")
			await self._say(message, said[:1].upper() + said[1:])
			return
		except Exception as exc:  # the store failed: the user asks for a fresh link
			log.warning("%s: could not connect %s: %s", self.channel, who, type(exc).__name__)
			await self._say(message, "Sorry, I could not connect the account; ask me again.")
			return
		going = self.connected(connected.run_id, who) or await self._stored_for_account(
			connected, message
		)
		said = f"Your {connected.integration} account is connected"
		await self._say(message, f"{said}; I go on." if going else f"{said}; ask me again.")

	async def _parked_on_account(self, run_id: str) -> RunState | None:
		"""The stored state of a run parked on an account, or None (it went on or ended).

		Raises:
			Exception: The store could not be read.
		"""
		state = await kept_parked(self.agent, run_id, ("authorization_required",))
		return state if state is not None and authorization_requests(state) else None

	async def _stored_for_account(self, connected: Connected, message: Incoming) -> bool:
		"""Resume a stored run of this chat parked on the sender's account; whether it goes on.

		The chats' parked runs are kept in rows (a run store or a durable store): the code may
		reach another server than the one whose run asked, or this one after a restart. The run
		goes on only if the consent's signed state names this very agent
		(`openmolt_core.accounts.Connected.agent`: the run ids of agents whose names differ in
		case or punctuation begin alike, so the id does not tell them apart; a state that names
		no agent, made outside a run or before states named one, resumes nothing), and the
		store's record is parked on ``authorization_required``, acts for the sender
		(`end_user`), and is a run of this private chat (its id begins as `run_id_for` made it
		for the chat its input names). Its chat's row is taken for it (a message of the chat
		that took it first goes on with it instead), and it goes on as a run held in memory does
		(`connected`), its reply sent to that chat.
		"""
		run_id = connected.run_id
		parks = self.parks
		if parks is None or not run_id:
			return False
		if connected.agent != self.agent.name:
			return False  # another agent's run, or one the state does not name: not ours
		if not run_id.startswith(scope_prefix(self.channel, self.agent.name)):
			return False  # another channel's run: not ours to resume
		from openmolt_core.observe import run_input

		who = end_user(message)
		try:
			state = await self._parked_on_account(run_id)
		except Exception as exc:
			log.warning("%s: cannot read the run %s: %s", self.channel, run_id, exc)
			return False
		if state is None or state.user != who:
			return False
		data = run_input(state)
		if not isinstance(data, dict) or data.get("chat") != message.chat:
			return False
		thread = data.get("thread")
		asked = Incoming(
			channel=self.channel,
			chat=message.chat,
			user=message.user,
			text=str(data.get("message", "")),
			id=run_id,
			username=message.username,
			thread=thread if isinstance(thread, str) else None,
			team=message.team,
		)
		if not run_id.startswith(scope_prefix(self.channel, self.agent.name, asked.key)):
			return False  # the input names another chat than the run's id was made for
		try:
			found = await parks.find(who, asked.key)
			if found is not None and found.run_id == run_id:
				if not await parks.take(who, asked.key, found.row):
					return True  # a message of the chat took it first: it goes on there
		except Exception as exc:  # the run's own claim still keeps its step to one resume
			log.warning("%s: the row of the run %s was not taken: %s", self.channel, run_id, exc)
		self.launcher.tg.start_soon(self._handle, asked, state, name=f"openmolt {run_id}")
		return True

	def connected(self, run_id: str, user: str | None = None) -> bool:
		"""An end user connected the account a chat's run waits for: the run goes on.

		Args:
			run_id: The run the consent named (`openmolt_core.accounts.Connected.run_id`).
			user: The end user who connected it (`openmolt_core.accounts.Connected.user`): a
				run held for someone else does not go on. None: whoever the run acts for.

		Returns:
			Whether a chat of this agent was waiting for it.
		"""
		for chat in self.chats.values():
			for who, state in chat.parked.items():
				if state.run_id == run_id and who in chat.asked and user in (None, who):
					message = chat.asked.pop(who)  # a second callback starts nothing
					self.launcher.tg.start_soon(self._handle, message, name=f"openmolt {run_id}")
					return True
		return False

	async def recover(self) -> int:
		"""After a restart on a durable store: follow this channel's runs that were going.

		The backend resumes them (`openmolt_core.durability`); this waits for each one's result
		and sends it to its chat, which the run's input names. Only the runs whose caller is gone
		are followed: those of this worker (its process before the restart) and those whose
		caller's worker no longer beats, or was taken over (`_gone_caller`: a run taken over is
		its first worker's caller's, wherever it goes on). A run of another live worker (a
		second server on the store) is followed by the server that started it: followed here
		too, its reply would reach the chat twice. A gone caller's run is found by every server
		that starts (a deploy starts several at once): each follows it only if it takes the
		run's follow, for that caller's worker, in the store's replay guard (`seen_store`), so
		one of them sends its reply. This worker's own runs need no claim (no other server
		follows a live worker's runs), so a server that restarts again still follows them. From
		then on the server looks again while it runs (`_look_for_gone`). Returns how many it
		follows at its start.
		"""
		om = OpenMolt.of(self.agent)
		if getattr(om.durability, "runs", None) is None:
			return 0
		me = getattr(om.durability, "worker_id", None)
		going: list[tuple[str, str | None]] = []
		for row in await self._going_runs():
			run_id = str(row["run_id"])
			caller = _gone_caller(row, me)
			if caller is None and row.get("worker") == me:
				going.append((run_id, None))  # this worker's own, its caller gone with the restart
			elif caller is not None and self._takes_follow(run_id, caller):
				going.append((run_id, caller))
		for run_id, caller in going:
			self._start_follow(run_id, caller)
		self.launcher.tg.start_soon(
			self._look_for_gone, name=f"openmolt chat runs {self.agent.name}"
		)
		return len(going)

	async def _going_runs(self) -> list[dict[str, Any]]:
		"""The durable store's rows of this channel's runs that are going (pending, enqueued)."""
		lister = getattr(OpenMolt.of(self.agent).durability, "runs", None)
		if lister is None:
			return []
		prefix = scope_prefix(self.channel, self.agent.name)
		return [
			r
			for r in await lister(agent=self.agent.name)
			if str(r.get("run_id", "")).startswith(prefix)
			and r.get("status") in ("pending", "enqueued")
		]

	async def _look_for_gone(self) -> None:
		"""While the server runs: follow the chat runs whose caller went since it started.

		A worker that dies while this server runs leaves its chat runs to be taken over; at a
		start only, they were followed by no server already running, and their replies never
		reached their chats. Every `FOLLOW_LOOK` seconds, a run whose caller is gone
		(`_gone_caller`: its worker no longer beats, or it was taken over from its worker) is
		followed if this server takes its follow (`_takes_follow`) under that worker's key: of
		the servers that see it, one follows it.
		"""
		me = getattr(OpenMolt.of(self.agent).durability, "worker_id", None)
		while True:
			await anyio.sleep(FOLLOW_LOOK)
			self._renew_follows()
			try:
				rows = await self._going_runs()
			except Exception as exc:
				log.warning("%s: cannot look for runs to follow: %s", self.channel, exc)
				continue
			ids = {r["run_id"] for r in rows}
			self._following = {r: k for r, k in self._following.items() if r in ids}
			for row in rows:
				run_id = row["run_id"]
				if run_id in self._following or run_id in self.launcher.running:
					continue  # followed here, or its caller here waits for it
				caller = _gone_caller(row, me)
				if caller is None:
					continue  # its caller follows it: here, or on another live server
				if self._takes_follow(run_id, caller):  # else another server follows it now
					self._start_follow(run_id, caller)

	async def _still_followed_here(
		self, result: RunResult | None, error: BaseException | None
	) -> bool:
		"""Whether this server sends what its own run ended with.

		Not when another worker took the run over from this server's worker (this process
		was paused past its lease, or lost its database) and another server took its follow
		(`_takes_follow`, under this worker's key): that server sends it. Once this one takes the
		follow, no other server follows the run.
		"""
		found = result if result is not None else getattr(error, "result", None)
		state = getattr(found, "state", None)
		durability = OpenMolt.of(self.agent).durability
		check = getattr(durability, "taken_from_here", None)
		if state is None or check is None:
			return True
		try:
			taken = await check(state.run_id)
		except Exception as exc:  # the store is down: reply, as before the takeovers were kept
			log.warning(
				"%s: cannot read whether run %s was taken over: %s", self.channel, state.run_id, exc
			)
			return True
		me = getattr(durability, "worker_id", None)
		if not taken or self._takes_follow(state.run_id, str(me or ""), failing=True):
			return True
		log.info(
			"%s: run %s was taken over from this server's worker; another server follows it",
			self.channel,
			state.run_id,
		)
		return False

	def _start_follow(self, run_id: str, caller: str | None) -> None:
		self._following[run_id] = None if caller is None else _follow_key(run_id, caller)
		self.launcher.tg.start_soon(self._follow, run_id, name=f"openmolt chat run {run_id}")

	def _takes_follow(self, run_id: str, caller: str, *, failing: bool = False) -> bool:
		"""Whether this server takes the following of a run for a gone caller.

		A lease in the store's replay guard (`seen_store`), held for `FOLLOW_HOLD` looks and
		renewed at each look while this server follows the run (`_renew_follows`): a follower
		that dies in turn leaves the run to the next server that looks, which takes the claim
		once it lapsed. Keyed by the caller's worker too: once the run went on in another worker
		(taken over), a server starting after that one is gone may follow it again. Two servers
		that both follow a run (one paused past its claim, clocks apart) send its reply once
		(`_sends`).

		A store that cannot be read answers ``failing`` (a warning logged): a look leaves the run
		to its next look (an error here ended the server), its caller replies.

		Args:
			run_id: The run.
			caller: The worker whose caller is gone (`_gone_caller`).
			failing: The answer when the store cannot be read.
		"""
		store = self.seen_store
		if store is None:
			return True
		now = time.time()
		key = _follow_key(run_id, caller)
		try:
			return store.take({key: now + FOLLOW_LOOK * FOLLOW_HOLD}, now) is None
		except Exception as exc:
			log.warning("%s: cannot claim the follow of run %s: %s", self.channel, run_id, exc)
			return failing

	def _renew_follows(self) -> None:
		"""Renew the claims of the runs this server follows for gone callers (`_takes_follow`)."""
		store = self.seen_store
		keys = [k for k in self._following.values() if k is not None]
		if store is None or not keys:
			return
		try:
			store.add(keys, time.time() + FOLLOW_LOOK * FOLLOW_HOLD)
		except Exception as exc:  # the claims lapse: another server may follow them too
			log.warning("%s: cannot renew the runs' follows: %s", self.channel, exc)

	def _sends(self, result: RunResult | None) -> bool:
		"""Whether this server sends what a durable chat run ended or parked with.

		Claimed once in the store's replay guard (`seen_store`), just before it is sent, by
		whoever sends it: the run's caller, or a server that follows it for a gone caller. Of
		two that reach the same end of the run (a follower paused past its claim, a caller
		paused past its lease, clocks apart), one sends it. A store that cannot be read lets it
		be sent (a reply twice rather than none).
		"""
		store = self.seen_store
		durable = getattr(OpenMolt.of(self.agent).durability, "runs", None) is not None
		if result is None or store is None or not durable:
			return True
		state = result.state
		key = f"sent:{state.run_id}:{state.steps}:{state.seq}:{result.status}"
		now = time.time()
		try:
			if store.take({key: now + KEEP_SEEN}, now) is None:
				return True
		except Exception as exc:
			log.warning("%s: cannot claim the reply of run %s: %s", self.channel, state.run_id, exc)
			return True
		log.info("%s: run %s's reply was sent by another server", self.channel, state.run_id)
		return False

	def _let_go(self, run_id: str) -> None:
		"""Stop following a run that could not be followed: the next look follows it again."""
		key = self._following.pop(run_id, None)
		store = self.seen_store
		if key is None or store is None:
			return
		try:
			store.discard([key])
		except Exception as exc:  # it lapses
			log.warning("%s: cannot let go of the run %s: %s", self.channel, run_id, exc)

	async def _follow(self, run_id: str) -> None:
		from openmolt_core.errors import RunError
		from openmolt_core.observe import run_input

		error: BaseException | None = None
		try:
			result = await OpenMolt.of(self.agent).result(run_id)
		except RunError as exc:
			result, error = exc.result, exc
		except Exception as exc:
			log.warning("%s: cannot follow the run %s: %s", self.channel, run_id, exc)
			self._let_go(run_id)
			return
		if result is None:
			return
		data = run_input(result.state)
		if not isinstance(data, dict) or not isinstance(data.get("chat"), str):
			return
		# The person the run acts for (`end_user`): its question, or the account it waits for,
		# stays theirs to answer, as when the process that started it had it.
		user = result.state.user or ""
		uid, team = (
			_sender_of(self.channel, user) if user.startswith(f"{self.channel}:") else ("", None)
		)
		message = Incoming(
			channel=self.channel,
			chat=data["chat"],
			user=uid,
			text="",
			id=run_id,
			thread=data.get("thread"),
			team=team,
		)
		chat = self._chat(message.key, message)
		async with chat.lock, self._going(message.key):
			# The process that started it (and would have appended its turn) is gone.
			outside = any(t.get("call") == "input" for t in result.state.taint)
			await self._record(self.session(message.key), result, data, asked_tainted=outside)
			await self._after(message, chat, result, error)

	async def _parked_in_store(self, message: Incoming) -> PendingRun | None:
		"""A durable run of this chat parked on a question (after a restart), if any.

		The message answers that question only (its step): if the run moved on meanwhile, the
		answer is refused rather than taken for the run's next question.
		"""
		if self.agent.om.durability is None:
			return None
		prefix = scope_prefix(message.channel, self.agent.name, message.key)
		try:
			waiting = await OpenMolt.of(self.agent).pending(agent=self.agent.name)
		except Exception as exc:
			log.warning("%s: cannot read the parked runs: %s", message.channel, exc)
			return None
		who = end_user(message)  # only the person the run acts for answers it
		# A stored question that names nobody (recorded before runs named their user) is
		# answered in a private chat only: in a group, any member could be answering for the
		# person it acts for.
		anyone = (None, who) if _private(message) else (who,)
		found = [p for p in waiting if p.run_id.startswith(prefix) and p.user in anyone]
		return found[-1] if found else None

	def _input(self, message: Incoming) -> dict[str, Any]:
		data: dict[str, Any] = {
			"message": message.text,
			"from": message.username or message.user,
			"chat": message.chat,
		}
		if message.thread:
			data["thread"] = message.thread
		return data

	async def _say(self, message: Incoming, text: str) -> None:
		try:
			await self.send(message, self.redact(text))
		except Exception as exc:
			log.warning("%s: could not reply in %s: %s", message.channel, message.chat, exc)
