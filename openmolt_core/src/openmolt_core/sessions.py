"""Sessions: conversations that outlive a run (``agent.run(input, session=...)``).

A session is an ordered, append-only record of one conversation, keyed by an id the application
chooses (per user, per chat, per thread). Each run in it reads the earlier turns and appends its
own: the user's input, the agent's reply (what it said: `said`) and the run behind them. Items
are JSON dicts; ``role`` says which kind:

- ``{"role": "user", "content": input, "run_id", "tainted"?, "attachments"?}``: what the run was
  asked (``attachments``: the media type and name of each file sent with it, whose bytes are not
  kept: a later turn reads that they were sent);
- ``{"role": "agent", "content": said, "status", "run_id", "output"?, "user"?, "tainted"?}``:
  what it said to everyone in the conversation (`said`: its human message or question, else its
  output's text; None: nothing), and, when its caller got more (an output a chat does not
  post), that as ``output``, for the runs of the same ``user`` only;
- ``{"role": "memory", "content": text, "run_id", "user"?, "tainted"?}``: the session's
  short-term memory after a run for ``user`` (the latest one for the run's user counts);
- ``{"role": "summary", "content": text, "through": n, "notes", "private"?, "user"?,
  "tainted"?}``: the first ``n`` items, summarised (empty content: they were dropped), written
  when the history grew past its budget (``private``: as a run for ``user`` read them, outputs
  included: only runs for the same user read it; ``notes``: every user's short-term notes as
  they stood, ``{"content", "user"?, "tainted"?}`` each, so a run reads the session from its
  latest summary on, not from its first item);
- ``{"role": "pending", "run_id", "content"?, "asked", "new", "seq"?, "tainted"?}``: a durable
  run's turn under way, written as it starts (never shown to a model), and again after each turn
  that parks (``seq``: the run's ``state.seq`` as it parked, which tells one park from the next
  of the same status). A durable run goes on where its caller cannot follow (the caller's
  process died, and another one recovered the run; an answer came through
  ``om.durability.answer``): the next run of the session finds its turn missing, asks the
  durable backend for the run's result and appends the turn then (`SessionRun.open`);
- ``{"role": "settled"}``: the place of a ``pending`` item whose turn was appended since
  (`replace_pending`), kept when items came after it: a summary's ``through`` counts it, so
  the items after it keep their positions (never shown to a model; pruning removes it).

How the earlier turns reach the model (`history_of`): under ``"earlier"`` in the first user turn,
right after the agent's instructions and tools and before its memory and input, as the latest
summary (if any) and then every turn after it, oldest first. A new turn only appends to that list,
so the prompt's prefix is byte-stable from one turn to the next and the provider's cache keeps
it; when the list passes its budget (half the agent's compaction threshold), the older turns are
summarised in one chunk (the compaction's summary prompt and model) and the prefix changes once.

Taint stays with the words: an item written by someone untrusted (a stranger's chat message) or
by a tainted run is marked ``tainted``, and a run whose history holds one starts tainted
(`openmolt_core.taint`). A summary of tainted turns is tainted. Items are stored redacted (the
agent's redactor: every secret of ``om.secrets`` and of its tools).

Short-term memory (``updateMemory`` with ``shortTerm``) in a session run is the session's: it
starts from the session's latest ``memory`` item and is stored back at the end, and the agent's
``short_term`` ``on_update`` callback is not called, so two sessions never see each other's
notes. In a session several people write in (a group chat, where each message's run acts for
its sender: ``run(user=...)``), the notes are each user's: a run reads those of the latest run
for the same user, so what a run noted from one person's connected account never reaches a run
for another. The turns themselves (what was asked, and said, in the chat) are the session's; an
output its run's caller got and the chat did not (a dict a chat answers "Done." for) is its
user's too, as is a summary that holds one. A run for no one reads the outputs of runs for no
one: a session of one person's runs (``agent.run(session=...)``, a direct chat) reads every
reply as its caller got it. Notes written before they named their user are read only by runs
for no user.
Long-term memory is each end user's in every session (the agent's for runs for no user:
`openmolt_core.capabilities.memory.memory_owner`).

The agent meets a session at one seam (`Agent.run`/`Agent.resume` with ``session=``), through
the sessions capability (`openmolt_core.capabilities.sessions`): a `SessionRun` made per run (`OpenMolt.conversation`)
reads the history the first request shows (`read_history`) when the run opens, appends the turn
(`items_after`) when it closes, and the session's ``shortTerm`` is the run's memory namespace. The runs of one session go one after another
(`openmolt_core.capabilities.sessions.session_call`), in a process and, through the stores that
processes share (`SharedSession`: ``turn()``), across processes: each reads the turns of those
before it.

A run reads a session from its end (`get_latest`, which every built-in store has): the latest
items, more of them only while they lack the run's latest summary or one with everyone's notes,
so a session of thousands of turns costs a run a few hundred items, not all of them. A durable
run's `SessionRun.reconcile` and a chat's `SessionRun.record` read it the same way.

Stores shrink by pruning (`prune`, `prune_store`: `Pruned`): the turns the latest summary every
run reads covers go, and sessions idle longer than a limit; a ``pending`` turn and everyone's
notes stay, and positions (a summary's ``through``) count the pruned items (`get_latest`).

Stores implement `Session` (four async methods, as the OpenAI Agents SDK's): `InMemorySession`,
`SQLiteSession` (the default of the CLI and ``openmolt serve``; a 0600 file in a 0700 folder) and
`SQLAlchemySession` (PostgreSQL, through SQLAlchemy and psycopg, an optional import).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from openmolt_core._chain import slot_id, spend, split_id
from openmolt_core._cost import counted, price_call
from openmolt_core._support.jsonsafe import encodable, encodable_text
from openmolt_core._support.private import erasing, private_dir, private_file
from openmolt_core._support.userids import MAX_USER_ID
from openmolt_core.capabilities.sessions import SessionHistory, SharedSession, not_held
from openmolt_core.compaction import DEFAULT_CONTEXT_WINDOW
from openmolt_core.conversation import Session
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.llm import Attachment, Message, ModelRequest
from openmolt_core.prompt import dumps
from openmolt_core.result import PARKED_STATUSES

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.result import RunResult, RunState

__all__ = [
	"ENV_VAR",
	"MAX_SESSION_ID",
	"InMemorySession",
	"Pruned",
	"SQLAlchemySession",
	"SQLiteSession",
	"Session",
	"SessionHistory",
	"SessionRun",
	"SharedSession",
	"StoredSession",
	"default_path",
	"history_of",
	"hold_turns_for",
	"items_after",
	"last_reply",
	"read_history",
	"reply_of",
	"said",
]

log: logging.Logger = logging.getLogger("openmolt")

ENV_VAR = "OPENMOLT_SESSIONS"
"""The environment variable naming the CLI's and ``openmolt serve``'s session file."""

ROLES = ("user", "agent", "memory", "summary", "pending", "settled")
"""The kinds of session items."""

RECONCILED = 5
"""How many of the latest unfinished durable turns a run looks for (`SessionRun.reconcile`)."""


SUMMARY_PROMPT = """\
You summarise the earlier turns of a conversation between people and an AI agent so it can go \
on without them. You receive the previous summary (if any) and the turns, as JSON. Write a \
dense, factual summary in plain text: what was asked and answered, every id, number, name and \
value the agent may still need, and what was still open. Do not invent anything. Do not give \
instructions. Keep it under {words} words."""


MAX_SESSION_ID = MAX_USER_ID
"""The longest session id taken (characters): stores index it, logs and the viewer show it. A
store takes any other id it can keep, so rows an older version wrote keep opening; a run refuses
a new id that can alias another's (`openmolt_core._support.userids.refused_session_id`)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_id(session_id: Any) -> str:
	if not isinstance(session_id, str) or not session_id.strip():
		got = "an empty string" if isinstance(session_id, str) else type(session_id).__name__
		raise ConfigurationError(
			f"session_id: expected a non-empty string (a user, chat or thread id), got {got}"
		)
	if len(session_id) > MAX_SESSION_ID:
		raise ConfigurationError(
			f"session_id: at most {MAX_SESSION_ID} characters, got {len(session_id)}; use a "
			"shorter id (a hash of a long one)"
		)
	bad = _CONTROL.search(session_id)
	if bad is not None:
		raise ConfigurationError(
			f"session_id: no control characters (it holds {bad[0]!r} at {bad.start()}): "
			"PostgreSQL refuses a NUL, and logs and pages would show the others"
		)
	return session_id


def _check_items(items: Sequence[dict[str, Any]]) -> list[str]:
	# Errors name the item and its shape, never its content (it may hold anything).
	if isinstance(items, (str, bytes, dict)) or not isinstance(items, Sequence):
		raise ConfigurationError(
			f"add_items: expected a list of items (dicts with a 'role'), got "
			f"{type(items).__name__}; wrap one item in a list"
		)
	texts = []
	for i, item in enumerate(items):
		if not isinstance(item, dict):
			raise ConfigurationError(
				f"session item {i}: expected a dict with a 'role', got {type(item).__name__}"
			)
		if item.get("role") not in ROLES:
			raise ConfigurationError(
				f"session item {i}: 'role' must be one of {', '.join(ROLES)}; this one has "
				f"keys {sorted(map(str, item))[:10]}"
			)
		try:
			text = json.dumps(item, ensure_ascii=False, allow_nan=False)
		except (TypeError, ValueError, RecursionError) as exc:
			raise ConfigurationError(
				f"session item {i}: not JSON-serializable ({type(exc).__name__}); give text, "
				"numbers (finite), lists and dicts"
			) from exc
		if encodable_text(text) != text:  # a database's UTF-8 cannot hold it
			raise ConfigurationError(
				f"session item {i}: holds a lone surrogate (U+D800 to U+DFFF without its pair), "
				"which is not text; replace it (U+FFFD)"
			)
		texts.append(text)
	return texts


def _marker_of(text: str, run_ids: frozenset[str]) -> bool:
	"""Whether a stored item is the ``pending`` item of one of these runs (`replace_pending`)."""
	try:
		return _is_marker(json.loads(text), run_ids)
	except ValueError:
		return False


_PENDING_LIKE = '%"role": "pending"%'
"""What a stored ``pending`` item's text holds (`_check_items` writes ``json.dumps``'s spacing)."""

_SETTLED = json.dumps({"role": "settled"})
"""The text a ``pending`` item taken back from within a session becomes (`_taken_back`)."""


def _taken_back(
	rows: Sequence[tuple[Any, str]], run_ids: frozenset[str], last: Any
) -> tuple[list[Any], list[Any]]:
	"""How a store takes these runs' ``pending`` items back (`replace_pending`).

	Only the session's latest row is removed. One that items follow becomes ``settled`` in its
	place instead: positions count it (a summary written since covers it in its ``through``),
	and removing it would move every later item one place back, so that summary would skip
	the first turn it leaves verbatim.

	Args:
		rows: The session's rows (id, text) that may be ``pending`` items.
		run_ids: The runs whose items go.
		last: The id of the session's latest row.

	Returns:
		The ids of the rows to remove, and those of the rows to make ``settled``.
	"""
	drop: list[Any] = []
	keep: list[Any] = []
	for ident, text in rows:
		if _marker_of(text, run_ids):
			(drop if ident == last else keep).append(ident)
	return drop, keep


def _run_like(run_id: str) -> str:
	"""A LIKE pattern (a backslash escapes) of the stored items that may be a run's (`get_run`)."""
	text = f'"run_id": {json.dumps(run_id, ensure_ascii=False)}'
	return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _of_run(text: str, run_id: str) -> bool:
	"""Whether a stored item is one of a run's (its ``run_id``)."""
	try:
		item = json.loads(text)
	except ValueError:
		return False
	return isinstance(item, dict) and str(item.get("run_id")) == run_id


def _is_pending(text: str) -> bool:
	"""Whether a stored item is a ``pending`` item (a durable run's turn still to append)."""
	try:
		item = json.loads(text)
	except ValueError:
		return False
	return isinstance(item, dict) and item.get("role") == "pending"


def _prune_point(items: list[dict[str, Any]], skipped: int, *, complete: bool) -> int | None:
	"""The index in a session's latest items before which no run reads anything.

	That is the ``through`` of the latest summary every run reads (not one user's: `_owns`),
	never past the latest summary with everyone's notes (a run's notes are read from it on:
	`history_of`) nor past a ``pending`` item (a durable run's turn still to append:
	`SessionRun.reconcile`). Private summaries after it cover at least as much (their runs read
	from it on), and the items after the point keep their positions (`skipped` counts the
	pruned ones), so every run reads what it read before.

	Args:
		items: The session's latest items.
		skipped: How many items of the session come before them (pruned ones included).
		complete: Whether ``items`` are all the session's stored items.

	Returns:
		The index (0: nothing to prune); None when the items do not reach back far enough.
	"""
	public = notes = None
	for index in range(len(items) - 1, -1, -1):
		item = items[index]
		if item.get("role") != "summary":
			continue
		if notes is None and isinstance(item.get("notes"), list):
			notes = index
		if public is None and not item.get("private"):
			public = index
		if public is not None and notes is not None:
			break
	if public is None or notes is None:
		return 0 if complete else None
	through = items[public].get("through")
	if not isinstance(through, int) or isinstance(through, bool):
		through = public + skipped
	if through < skipped:
		return 0 if complete else None
	cut = min(through - skipped, public, notes)
	for index in range(cut):
		if items[index].get("role") == "pending":
			return index
	return cut


@dataclass(frozen=True, slots=True)
class Pruned:
	"""What pruning a store removed (with ``dry_run``: would remove).

	Args:
		sessions: How many sessions were looked at.
		items: How many items of the sessions kept were removed: turns a summary covers.
		deleted: The sessions deleted whole: idle longer than the limit.
		busy: Idle sessions kept: a run holds their turn, or a durable turn of theirs is pending.
		dry_run: Whether nothing was removed, only counted.
	"""

	sessions: int
	items: int
	deleted: tuple[str, ...] = ()
	busy: tuple[str, ...] = ()
	dry_run: bool = False


@dataclass(frozen=True, slots=True)
class StoredSession:
	"""One session of a store, as `SQLiteSession.list_store` lists it.

	Args:
		session_id: The conversation's id.
		items: How many items the store keeps of it.
		pruned: How many of its items pruning removed (positions still count them).
		last_active: When its latest item was written, in seconds since the epoch.
	"""

	session_id: str
	items: int
	pruned: int
	last_active: float


def _listing_limit(limit: int | None) -> int | None:
	"""``list_store``'s ``limit``, checked: None (every session) or a whole number of at least 1."""
	if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
		raise ConfigurationError(
			f"limit: expected a whole number of sessions of at least 1 (or None: all), got "
			f"{limit!r}"
		)
	return limit


def _listing_ids(session_ids: Sequence[str] | None) -> list[str] | None:
	"""``list_store``'s ``session_ids``, checked: None (every session), or a list of ids."""
	if session_ids is None:
		return None
	if isinstance(session_ids, str) or not isinstance(session_ids, Sequence):
		raise ConfigurationError(
			f"session_ids: expected a list of session ids (or None: all), got "
			f"{type(session_ids).__name__}; wrap one id in a list"
		)
	return list(dict.fromkeys(map(str, session_ids)))


def _idle_since(idle_days: float | None) -> float | None:
	"""The time before which a session's last item makes it idle (None: no retention)."""
	if idle_days is None:
		return None
	if (
		isinstance(idle_days, bool)
		or not isinstance(idle_days, (int, float))
		or not (idle_days >= 0)
	):
		raise ConfigurationError(
			f"idle_days: expected a number of days of at least 0, got {idle_days!r}"
		)
	return time.time() - float(idle_days) * 86400


def _prune_rows(
	latest: Callable[[int], tuple[int, int, list[tuple[Any, str]]]],
	pending_before: Callable[[Any], list[tuple[Any, str]]],
	count_before: Callable[[Any], int],
) -> tuple[int, Any]:
	"""Where a stored session's prune cuts, read inside the store's transaction.

	The session is read from its end, a window that grows until it reaches the summary that
	decides (`_prune_point`), as a run reads it; ``pending`` items older than the window are
	looked for by the database, not read.

	Args:
		latest: Given a limit: the items pruned before, the items stored, and the latest
			``limit`` rows (id, text), oldest first.
		pending_before: The rows (id, text) before an id that may be ``pending`` items.
		count_before: How many rows come before an id.

	Returns:
		How many rows to remove, and the id of the first row kept (None: none to remove).
	"""
	limit = WINDOW
	while True:
		pruned, total, rows = latest(limit)
		items = [json.loads(text) for _, text in rows]
		cut = _prune_point(items, pruned + total - len(rows), complete=len(rows) == total)
		if cut is not None:
			break
		limit *= 4
	if not cut:
		return 0, None
	first = rows[cut][0]
	if total > len(rows):
		older = [ident for ident, text in pending_before(rows[0][0]) if _is_pending(text)]
		if older:  # a pending item before the window (a run parked long): it and what follows stay
			first = min(older)
	return count_before(first), first


class InMemorySession:
	"""A session kept in this process only (tests, notebooks): gone when the process ends.

	Args:
		session_id: The conversation's id.
	"""

	def __init__(self, session_id: str) -> None:
		self.session_id: str = _check_id(session_id)
		self._items: list[str] = []
		self._pruned = 0  # items pruned (`prune`): positions still count them

	def __repr__(self) -> str:
		return f"InMemorySession({self.session_id!r}, {len(self._items)} items)"

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		"""The items, oldest first (the latest ``limit`` of them)."""
		rows = self._items if limit is None else self._items[-limit:] if limit > 0 else []
		return [json.loads(r) for r in rows]

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		"""How many items come before the latest ``limit`` (pruned ones too), and those items."""
		skipped = max(len(self._items) - max(limit, 0), 0)
		return self._pruned + skipped, [json.loads(r) for r in self._items[skipped:]]

	async def prune(self, *, dry_run: bool = False) -> int:
		"""Remove the items no run reads any more: those the latest summary covers.

		See `SQLiteSession.prune`.

		Args:
			dry_run: Only count them.

		Returns:
			How many items were (or would be) removed.
		"""
		items = [json.loads(r) for r in self._items]
		cut = _prune_point(items, self._pruned, complete=True) or 0
		if cut and not dry_run:
			del self._items[:cut]
			self._pruned += cut
		return cut

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		"""Append items (copies: a caller's later change does not reach the session)."""
		self._items.extend(_check_items(items))

	async def pop_item(self) -> dict[str, Any] | None:
		"""Remove and return the latest item."""
		return json.loads(self._items.pop()) if self._items else None

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		"""Remove these runs' ``pending`` items and append ``items``, at once.

		A run's turn and its item go together (`SessionRun`): both or neither. An item that
		others follow stays in its place, ``settled`` (`_taken_back`).
		"""
		texts = _check_items(items)
		ids = frozenset(map(str, run_ids))
		drop, keep = _taken_back(list(enumerate(self._items)), ids, len(self._items) - 1)
		for index in keep:
			self._items[index] = _SETTLED
		for index in reversed(drop):
			del self._items[index]
		self._items.extend(texts)

	async def get_run(self, run_id: str) -> list[dict[str, Any]]:
		"""A run's items (its ``run_id``), oldest first, wherever they are in the session."""
		return [json.loads(t) for t in self._items if _of_run(t, str(run_id))]

	async def clear(self) -> None:
		"""Remove every item."""
		self._items.clear()
		self._pruned = 0


def default_path() -> Path:
	"""The CLI's and ``openmolt serve``'s session file.

	``$OPENMOLT_SESSIONS``, else ``$XDG_STATE_HOME/openmolt/sessions.db``
	(``~/.local/state/openmolt/sessions.db``).
	"""
	value = os.environ.get(ENV_VAR, "").strip()
	if value:
		return Path(value)
	from openmolt_core._support.private import state_folder

	return state_folder() / "sessions.db"


_SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS session_items (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id TEXT NOT NULL,
	item TEXT NOT NULL,
	created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS session_items_by_session ON session_items (session_id, id);
CREATE TABLE IF NOT EXISTS session_pruned (
	session_id TEXT PRIMARY KEY,
	items INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS session_last (
	scope TEXT PRIMARY KEY,
	session_id TEXT NOT NULL,
	updated REAL NOT NULL
);
"""


class SQLiteSession:
	"""A session in a SQLite file (many sessions share one file), readable by its user only.

	Args:
		session_id: The conversation's id.
		path: The file (default: `default_path`); made 0600 in a 0700 folder.
	"""

	_ready: ClassVar[set[str]] = set()
	_lock = threading.Lock()

	def __init__(self, session_id: str, path: str | os.PathLike[str] | None = None) -> None:
		self.session_id: str = _check_id(session_id)
		if path is not None:
			from openmolt_core._support.paths import path_problem

			problem = path_problem(path)
			if problem is not None:
				raise ConfigurationError(f"SQLiteSession path must be a file's path {problem}")
		self.path: Path = Path(path) if path is not None else default_path()
		if str(self.path) == ":memory:" or str(self.path).startswith("file:"):
			raise ConfigurationError(
				f"SQLiteSession path: {str(self.path)!r} would not outlive a connection; give a "
				"file path, or use InMemorySession for a session kept in this process"
			)

	def __repr__(self) -> str:
		return f"SQLiteSession({self.session_id!r}, {str(self.path)!r})"

	def _connect(self) -> sqlite3.Connection:
		key = str(self.path.resolve())
		if key not in self._ready:
			with self._lock:
				if key not in self._ready:
					private_file(self.path)  # conversations hold people's words: 0600
					conn = erasing(sqlite3.connect(self.path, timeout=10))
					try:
						conn.executescript(_SCHEMA)
					finally:
						conn.close()
					self._ready.add(key)
		return erasing(sqlite3.connect(self.path, timeout=10))  # what it deletes is gone

	def _looking(self) -> tuple[sqlite3.Connection, bool] | None:
		"""A connection for a dry run, which writes nothing: no file, table or mode is made.

		Returns:
			The connection, and whether the file has the table of pruned counts (one made before
			it had none); None when the file holds no sessions (missing, or another store's).

		Raises:
			FileRefused: The path names a folder, a device, a named pipe or a socket.
		"""
		from openmolt_core._support.paths import check_regular

		check_regular(self.path)  # a folder is no empty store: said, as a write says it
		if not self.path.is_file():
			return None
		conn = sqlite3.connect(self.path, timeout=10)
		try:
			tables = {
				r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
			}
		except BaseException:
			conn.close()
			raise
		if "session_items" not in tables:
			conn.close()
			return None
		return conn, "session_pruned" in tables

	def _run(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
		conn = self._connect()
		try:
			with conn:
				found: list[tuple[Any, ...]] = []
				for row in rows:
					found.extend(conn.execute(sql, row).fetchall())
				return found
		finally:
			conn.close()

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		"""The items, oldest first (the latest ``limit`` of them).

		A read makes nothing: a file that is missing, or holds no sessions, has no items and is
		left as it is (``openmolt sessions show`` of a mistyped ``--store``); a write makes it.
		"""
		if limit is not None and limit <= 0:
			return []
		sql = "SELECT item FROM session_items WHERE session_id = ? ORDER BY id DESC"
		args: tuple[Any, ...] = (self.session_id,)
		if limit is not None:
			sql += " LIMIT ?"
			args = (self.session_id, int(limit))

		def read() -> list[Any]:
			if str(self.path.resolve()) in self._ready:
				conn = self._connect()
			else:
				found = self._looking()
				if found is None:
					return []
				conn = found[0]
			try:
				return conn.execute(sql, args).fetchall()
			finally:
				conn.close()

		rows = await anyio.to_thread.run_sync(read)
		return [json.loads(r[0]) for r in reversed(rows)]

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		"""How many items come before the latest ``limit`` (pruned ones too), and those items.

		Read in one transaction: the count and the rows agree.
		"""

		def read() -> tuple[int, list[dict[str, Any]]]:
			conn = self._connect()
			try:
				with conn:
					conn.execute("BEGIN")
					pruned, total, rows = self._latest(conn, limit)
			finally:
				conn.close()
			return pruned + total - len(rows), [json.loads(r[1]) for r in rows]

		return await anyio.to_thread.run_sync(read)

	def _latest(
		self, conn: sqlite3.Connection, limit: int, *, counted: bool = True
	) -> tuple[int, int, list[Any]]:
		"""Items pruned, items stored, and the latest ``limit`` rows (id, text), oldest first.

		``counted``: the file has the table of pruned counts (False: none was pruned).
		"""
		found = (
			conn.execute(
				"SELECT items FROM session_pruned WHERE session_id = ?", (self.session_id,)
			).fetchone()
			if counted
			else None
		)
		(total,) = conn.execute(
			"SELECT COUNT(*) FROM session_items WHERE session_id = ?", (self.session_id,)
		).fetchone()
		rows = conn.execute(
			"SELECT id, item FROM session_items WHERE session_id = ? ORDER BY id DESC LIMIT ?",
			(self.session_id, max(int(limit), 0)),
		).fetchall()
		return (int(found[0]) if found else 0), int(total), list(reversed(rows))

	async def prune(self, *, dry_run: bool = False) -> int:
		"""Remove the items no run reads any more: those the latest summary covers.

		A run reads a session from its latest summary on (`history_of`): the turns before that
		summary's ``through`` are kept only in it. Pruning removes them, in one transaction
		that holds the database's write lock (a turn appended meanwhile waits, and one read
		meanwhile reads the session before or after, whole). It keeps the summaries every run
		still reads, each user's notes (the latest summary with notes, and the ``memory`` items
		after it), and everything from the first ``pending`` item on (a durable run's turn still
		to append). The positions of the items kept do not change: a summary's ``through``
		counts the pruned items too (`get_latest`), so a run under way writes a summary that
		still covers what it read.

		Args:
			dry_run: Only count them.

		Returns:
			How many items were (or would be) removed.
		"""

		def prune() -> int:
			counted = True
			if dry_run:  # writes nothing: a file without sessions is left as it is
				found = self._looking()
				if found is None:
					return 0
				conn, counted = found
			else:
				conn = self._connect()
			try:
				with conn:
					conn.execute("BEGIN" if dry_run else "BEGIN IMMEDIATE")
					return self._prune(conn, dry_run, counted=counted)
			finally:
				conn.close()

		return await anyio.to_thread.run_sync(prune)

	def _prune(self, conn: sqlite3.Connection, dry_run: bool, *, counted: bool = True) -> int:
		sid = self.session_id
		count, first = _prune_rows(
			lambda limit: self._latest(conn, limit, counted=counted),
			lambda before: conn.execute(
				"SELECT id, item FROM session_items WHERE session_id = ? AND id < ? "
				"AND item LIKE ?",
				(sid, before, _PENDING_LIKE),
			).fetchall(),
			lambda before: conn.execute(
				"SELECT COUNT(*) FROM session_items WHERE session_id = ? AND id < ?", (sid, before)
			).fetchone()[0],
		)
		if count and not dry_run:
			conn.execute("DELETE FROM session_items WHERE session_id = ? AND id < ?", (sid, first))
			conn.execute(
				"INSERT INTO session_pruned (session_id, items) VALUES (?, ?) ON CONFLICT(session_id)"
				" DO UPDATE SET items = items + excluded.items",
				(sid, count),
			)
		return int(count)

	@classmethod
	async def prune_store(
		cls,
		path: str | os.PathLike[str] | None = None,
		*,
		idle_days: float | None = None,
		dry_run: bool = False,
	) -> Pruned:
		"""Prune every session in a file: delete the idle ones, and `prune` the others.

		A session whose latest item is older than ``idle_days`` is deleted whole (its items and
		its lock file), unless a run holds its turn or a durable turn of it is pending (a run
		parked on a question): those are kept, and reported busy.

		Args:
			path: The file (default: `default_path`).
			idle_days: Delete the sessions idle longer than this many days (None: none).
			dry_run: Only count what would go.

		Raises:
			ConfigurationError: ``idle_days`` is not a number of days of at least 0.
		"""
		since = _idle_since(idle_days)
		probe = cls("probe", path)
		if not probe.path.exists():
			return Pruned(0, 0, dry_run=dry_run)
		query = (
			"SELECT session_id, MAX(created) FROM session_items GROUP BY session_id "
			"ORDER BY session_id"
		)

		def looked() -> list[tuple[Any, ...]]:  # a dry run makes no table in a file without
			found = probe._looking()
			if found is None:
				return []
			conn = found[0]
			try:
				return list(conn.execute(query).fetchall())
			finally:
				conn.close()

		if dry_run:
			listed = await anyio.to_thread.run_sync(looked)
		else:
			listed = await anyio.to_thread.run_sync(probe._run, query, [()])
		removed = 0
		deleted: list[str] = []
		busy: list[str] = []
		for sid, last in listed:
			session = cls(sid, probe.path)
			if since is not None and last < since:
				gone = await anyio.to_thread.run_sync(session._drop_idle, since, dry_run)
				if gone is not None:
					(deleted if gone else busy).append(sid)
					continue
			removed += await session.prune(dry_run=dry_run)
		return Pruned(len(listed), removed, tuple(deleted), tuple(busy), dry_run)

	@classmethod
	async def list_store(
		cls,
		path: str | os.PathLike[str] | None = None,
		*,
		limit: int | None = None,
		session_ids: Sequence[str] | None = None,
	) -> list[StoredSession]:
		"""The sessions in a file, the latest active first, with their counts.

		Only reads: a file that is missing, or holds no sessions (another program's), lists
		none and is left as it is (no file, table or journal mode is made).

		Args:
			path: The file (default: `default_path`).
			limit: List at most this many (None: all).
			session_ids: List only these sessions (those the file holds); None: every one.

		Raises:
			ConfigurationError: ``limit`` is not a whole number of at least 1.
		"""
		limit = _listing_limit(limit)
		ids = _listing_ids(session_ids)
		probe = cls("probe", path)

		def looked() -> list[StoredSession]:
			found = probe._looking() if ids != [] else None
			if found is None:
				return []
			conn, counted = found
			pruned, joined = (
				"COALESCE(MAX(p.items), 0)",
				"LEFT JOIN session_pruned p USING (session_id)",
			)
			if not counted:  # a file made before pruning counted: nothing was pruned
				pruned, joined = "0", ""
			only = f"WHERE i.session_id IN ({', '.join('?' * len(ids))})" if ids else ""
			sql = (
				f"SELECT i.session_id, COUNT(*), {pruned}, MAX(i.created) FROM session_items i "
				f"{joined} {only} GROUP BY i.session_id "
				"ORDER BY MAX(i.created) DESC, MAX(i.id) DESC LIMIT ?"
			)
			try:
				rows = conn.execute(sql, (*(ids or ()), limit if limit is not None else -1))
				return [
					StoredSession(str(sid), int(items), int(gone), float(last))
					for sid, items, gone, last in rows.fetchall()
				]
			finally:
				conn.close()

		return await anyio.to_thread.run_sync(looked)

	def _drop_idle(self, since: float, dry_run: bool) -> bool | None:
		"""Delete this idle session: True; False when busy; None when no longer idle."""
		lock = _turn_file(self.path, self.session_id)
		with _turn_now(lock, make=not dry_run) as free:
			if not free:
				return False
			if dry_run:  # listed by a dry run: the file holds sessions
				found = self._looking()
				if found is None:
					return None
				conn = found[0]
			else:
				conn = self._connect()
			try:
				with conn:
					conn.execute("BEGIN" if dry_run else "BEGIN IMMEDIATE")
					sid = self.session_id
					(last,) = conn.execute(
						"SELECT MAX(created) FROM session_items WHERE session_id = ?", (sid,)
					).fetchone()
					if last is None or last >= since:
						return None  # a turn was appended meanwhile
					marks = conn.execute(
						"SELECT item FROM session_items WHERE session_id = ? AND item LIKE ?",
						(sid, _PENDING_LIKE),
					).fetchall()
					if any(_is_pending(m[0]) for m in marks):
						return False
					if not dry_run:
						conn.execute("DELETE FROM session_items WHERE session_id = ?", (sid,))
						conn.execute("DELETE FROM session_pruned WHERE session_id = ?", (sid,))
			finally:
				conn.close()
		if not dry_run:
			_drop_turn_file(lock)
		return True

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		"""Append items, in one transaction."""
		texts = _check_items(items)
		now = time.time()
		await anyio.to_thread.run_sync(
			self._run,
			"INSERT INTO session_items (session_id, item, created) VALUES (?, ?, ?)",
			[(self.session_id, t, now) for t in texts],
		)

	async def pop_item(self) -> dict[str, Any] | None:
		"""Remove and return the latest item."""

		def pop() -> dict[str, Any] | None:
			conn = self._connect()
			try:
				with conn:
					row = conn.execute(
						"SELECT id, item FROM session_items WHERE session_id = ? "
						"ORDER BY id DESC LIMIT 1",
						(self.session_id,),
					).fetchone()
					if row is None:
						return None
					conn.execute("DELETE FROM session_items WHERE id = ?", (row[0],))
					item: dict[str, Any] = json.loads(row[1])
					return item
			finally:
				conn.close()

		return await anyio.to_thread.run_sync(pop)

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		"""Remove these runs' ``pending`` items and append ``items``, in one transaction.

		A run's turn and its item go together (`SessionRun`): both or neither, whatever stops
		the process. An item that others follow stays in its place, ``settled`` (`_taken_back`).
		"""
		texts = _check_items(items)
		ids = frozenset(map(str, run_ids))
		now = time.time()

		def swap() -> None:
			conn = self._connect()
			try:
				with conn:
					rows = conn.execute(
						"SELECT id, item FROM session_items WHERE session_id = ? AND item LIKE ?",
						(self.session_id, "%pending%"),
					).fetchall()
					(last,) = conn.execute(
						"SELECT MAX(id) FROM session_items WHERE session_id = ?",
						(self.session_id,),
					).fetchone()
					drop, keep = _taken_back(rows, ids, last)
					conn.executemany("DELETE FROM session_items WHERE id = ?", [(i,) for i in drop])
					conn.executemany(
						"UPDATE session_items SET item = ? WHERE id = ?",
						[(_SETTLED, i) for i in keep],
					)
					conn.executemany(
						"INSERT INTO session_items (session_id, item, created) VALUES (?, ?, ?)",
						[(self.session_id, t, now) for t in texts],
					)
			finally:
				conn.close()

		await anyio.to_thread.run_sync(swap)

	async def get_run(self, run_id: str) -> list[dict[str, Any]]:
		"""A run's items (its ``run_id``), oldest first, wherever they are in the session.

		The database picks the rows that name the run: the others are not read.
		"""
		rows = await anyio.to_thread.run_sync(
			self._run,
			"SELECT item FROM session_items WHERE session_id = ? AND item LIKE ? ESCAPE '\\' "
			"ORDER BY id",
			[(self.session_id, _run_like(str(run_id)))],
		)
		return [json.loads(r[0]) for r in rows if _of_run(r[0], str(run_id))]

	async def clear(self) -> None:
		"""Remove every item of this session (the others in the file stay), and its lock file."""

		def clear() -> None:
			conn = self._connect()
			try:
				with conn:
					conn.execute(
						"DELETE FROM session_items WHERE session_id = ?", (self.session_id,)
					)
					conn.execute(
						"DELETE FROM session_pruned WHERE session_id = ?", (self.session_id,)
					)
			finally:
				conn.close()

		await anyio.to_thread.run_sync(clear)
		_drop_turn_file(_turn_file(self.path, self.session_id))

	def turn(self) -> contextlib.AbstractAsyncContextManager[None]:
		"""Hold this session while one run of it goes on, in every process that shares the file.

		A lock file per session beside the database (``<file>.turns/``, 0700), locked with
		``flock``: another process's run of the same session waits until this one's turn is
		appended, so it reads it (`openmolt_core.capabilities.sessions.session_call` takes it
		around each run, after the process's own queue).
		"""
		return _file_turn(_turn_file(self.path, self.session_id), self.session_id)

	async def mark_last(self, scope: str) -> None:
		"""Remember this session as the last one of ``scope`` (the CLI's ``-c`` reads it).

		Args:
			scope: What the session was the last one of (``cli:<agent name>``).
		"""
		await anyio.to_thread.run_sync(
			self._run,
			"INSERT INTO session_last (scope, session_id, updated) VALUES (?, ?, ?) "
			"ON CONFLICT(scope) DO UPDATE SET session_id = excluded.session_id, "
			"updated = excluded.updated",
			[(scope, self.session_id, time.time())],
		)

	@classmethod
	async def last(cls, scope: str, path: str | os.PathLike[str] | None = None) -> str | None:
		"""The id of the session last marked for ``scope`` in the file (None: none yet).

		Args:
			scope: As given to `mark_last`.
			path: The file (default: `default_path`).
		"""
		probe = cls("probe", path)
		if not probe.path.exists():
			return None
		rows = await anyio.to_thread.run_sync(
			probe._run, "SELECT session_id FROM session_last WHERE scope = ?", [(scope,)]
		)
		return str(rows[0][0]) if rows else None


_TURN_POLL, _TURN_POLL_MAX = 0.01, 0.2  # seconds between tries for a session another process holds

_TURN_LAPSE = 30.0
"""Seconds a PostgreSQL session's turn outlives its holder's last renewal (`_Renewal`): 30, or
a durable worker's lapse (`hold_turns_for`)."""


def hold_turns_for(seconds: float) -> None:
	"""Make this process's PostgreSQL session turns lapse ``seconds`` after the last renewal.

	A durable worker gives its lapse (`openmolt_dbos`): a paused worker's runs are taken over
	once it lapses, and its turn must end then too, not 30 s later (the run taken over waited
	for it); nor sooner than the worker's lease: a worker paused past a shorter turn but
	within its lease went on with a run whose turn another run of the session had taken.

	Args:
		seconds: The lapse, more than 0.

	Raises:
		ValueError: ``seconds`` is not more than 0.
	"""
	global _TURN_LAPSE
	if seconds <= 0:
		raise ValueError(f"a session turn's lapse must be more than 0 seconds, not {seconds!r}")
	_TURN_LAPSE = float(seconds)


def _lapse_idle(sa: Any, conn: Any) -> None:
	"""Have PostgreSQL end the lock connection once idle for `_TURN_LAPSE` (its holder paused).

	``idle_session_timeout`` is PostgreSQL 14's; an older server refuses it, and keeps a paused
	holder's turn until the process ends (logged once per connection).
	"""
	try:
		conn.execute(sa.text(f"SET idle_session_timeout = {int(_TURN_LAPSE * 1000)}"))
	except sa.exc.DBAPIError as exc:
		log.warning(
			"a session's turn lock cannot lapse on this server (idle_session_timeout needs "
			"PostgreSQL 14): a process paused holding a turn holds it until it ends (%s)",
			type(exc).__name__,
		)


class _Renewal:
	"""Renews a PostgreSQL turn: a statement on its lock connection every quarter lapse.

	A thread, not a task: a run that keeps its event loop busy must not lose its turn. Only
	this thread uses the connection until `stop`.

	Args:
		sa: The sqlalchemy module.
		conn: The connection that holds the turn's lock.
		session_id: The session, for the log.
	"""

	def __init__(self, sa: Any, conn: Any, session_id: str) -> None:
		self._sa, self._conn, self._session_id = sa, conn, session_id
		self._stopped = threading.Event()
		self._thread = threading.Thread(target=self._run, name="openmolt turn", daemon=True)
		self._thread.start()

	def _run(self) -> None:
		ping = self._sa.text("SELECT 1")
		while not self._stopped.wait(_TURN_LAPSE / 4):
			try:
				self._conn.execute(ping)
			except Exception as exc:
				log.error(
					"the turn of session %r was lost (its lock connection ended: %s, as after "
					"a pause past %.0f s); another run of the session may take it meanwhile",
					self._session_id,
					type(exc).__name__,
					_TURN_LAPSE,
				)
				return

	def stop(self) -> None:
		"""Stop renewing, and wait for the thread (the connection is the caller's again)."""
		self._stopped.set()
		self._thread.join()


async def _until(taken: Callable[[], Awaitable[bool]]) -> None:
	"""Try to take a lock until it is taken, pausing longer each time (cancellable meanwhile)."""
	delay = _TURN_POLL
	while not await taken():
		await anyio.sleep(delay)
		delay = min(delay * 2, _TURN_POLL_MAX)


async def _quietly(step: Callable[[], Any]) -> None:
	"""Release a session's lock connection, shielded; a failure is logged, never raised.

	A connection that died (a restart, ``pg_terminate_backend``) took its lock with it: the
	run's result must not be replaced by that error.
	"""
	with anyio.CancelScope(shield=True):
		try:
			await anyio.to_thread.run_sync(step)
		except Exception as exc:
			log.warning(
				"a session's lock connection failed as it was released: %s", type(exc).__name__
			)


_LOCK_ENGINES: dict[str, Any] = {}
_LOCK_ENGINES_LOCK = threading.Lock()


def _lock_engine(sa: Any, engine: Any) -> Any:
	"""The engine that takes a database's session locks: no pool, autocommit.

	A lock is held for a whole run, on a connection of its own: taken from the sessions' pool,
	as many concurrent runs as the pool holds would starve their own reads and writes. In
	autocommit the connection is never "idle in transaction" while it waits with the lock
	(which a server's ``idle_in_transaction_session_timeout`` would end, and which holds VACUUM
	back).
	"""
	url = engine.url.render_as_string(hide_password=False)
	with _LOCK_ENGINES_LOCK:
		found = _LOCK_ENGINES.get(url)
		if found is None:
			found = _LOCK_ENGINES[url] = sa.create_engine(
				engine.url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT"
			)
		return found


def _turn_file(database: Path, session_id: str) -> Path:
	"""The lock file of a session's turns: ``<database>.turns/<digest of the id>``."""
	name = hashlib.sha256(session_id.encode()).hexdigest()[:32]
	database = database.absolute()  # one name for one file, whatever the working directory
	return database.with_name(database.name + ".turns") / name


@contextlib.asynccontextmanager
async def _file_turn(path: Path, session_id: str) -> AsyncIterator[None]:
	"""Hold an exclusive ``flock`` on ``path`` (made 0600 in a 0700 folder) while the block runs.

	Tried without blocking, again after a growing pause: a run waiting for its turn can be
	cancelled, which a thread blocked in ``flock`` could not. The lock goes with the process if it
	dies. Written here rather than taken from a library: the core's dependencies stay the design
	card's, and the polling is what lets anyio cancel the wait. Without ``fcntl`` (Windows) the
	process's own queue is the only order.
	"""
	try:
		import fcntl
	except ImportError:  # pragma: no cover - Windows
		yield
		return
	private_dir(path.parent)
	async with not_held(str(path), session_id):
		fd = [os.open(path, os.O_RDWR | os.O_CREAT, 0o600)]

		async def taken() -> bool:
			try:
				fcntl.flock(fd[0], fcntl.LOCK_EX | fcntl.LOCK_NB)
			except BlockingIOError:
				return False
			if _same_file(fd[0], path):
				return True
			# `clear` removed the file while this run waited on it: the next run locks the
			# file the path names now, and so must this one.
			os.close(fd[0])
			fd[0] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
			return False

		try:
			await _until(taken)
			try:
				yield
			finally:
				fcntl.flock(fd[0], fcntl.LOCK_UN)
		finally:
			os.close(fd[0])


@contextlib.contextmanager
def _turn_now(path: Path, *, make: bool = True) -> Iterator[bool]:
	"""Take a session's lock file without waiting: True while held, False when a run holds it.

	For pruning (`SQLiteSession.prune_store`): a session in a run's turn is left alone. Without
	``fcntl`` (Windows): True.

	Args:
		path: The session's lock file.
		make: Make the file (and its folder) when missing. A dry run makes nothing: a file
			that is not there is held by no run (a run makes it as it takes its turn), and
			one made after this look is the run's, as it would be after a real prune.
	"""
	try:
		import fcntl
	except ImportError:  # pragma: no cover - Windows
		yield True
		return
	if not make:
		try:
			fd = os.open(path, os.O_RDWR)
		except FileNotFoundError:
			yield True
			return
	else:
		private_dir(path.parent)
		fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
	try:
		try:
			fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
		except BlockingIOError:
			yield False
			return
		try:
			yield True
		finally:
			fcntl.flock(fd, fcntl.LOCK_UN)
	finally:
		os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
	"""Whether ``path`` still names the file open at ``fd`` (not removed, not replaced)."""
	try:
		named = os.stat(path)
	except FileNotFoundError:
		return False
	held = os.fstat(fd)
	return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _drop_turn_file(path: Path) -> None:
	"""Remove a session's lock file (`clear`), unless a run holds it.

	Taken first, without waiting: a run in its turn keeps its file (the next `clear` removes
	it). A run waiting on the file does not keep it: once it holds the lock, it checks that the
	path still names that file (`_file_turn`) and takes the new one if not, so two runs never
	hold two files of one session.
	"""
	try:
		import fcntl
	except ImportError:  # pragma: no cover - Windows: no lock files
		return
	try:
		fd = os.open(path, os.O_RDWR)
	except FileNotFoundError:
		return
	try:
		fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
		if _same_file(fd, path):
			path.unlink()
	except BlockingIOError:
		pass  # a run holds it
	finally:
		os.close(fd)


_ENGINES: dict[str, Any] = {}  # url -> the engine its sessions share
_ENGINES_LOCK = threading.Lock()


def _engine_for(sa: Any, url: str) -> Any:
	"""The one engine of a database URL (made on first use), which its sessions share.

	An engine per session would open a connection pool per conversation, left open until the
	session is garbage collected.
	"""
	if url.startswith("postgresql://"):
		url = url.replace("postgresql://", "postgresql+psycopg://", 1)
	with _ENGINES_LOCK:
		engine = _ENGINES.get(url)
		if engine is None:
			engine = _ENGINES[url] = sa.create_engine(url)
		return engine


def _erasing_checkout(dbapi: Any, record: Any, proxy: Any) -> None:
	cursor = dbapi.cursor()
	try:
		cursor.execute("PRAGMA secure_delete = ON")
	finally:
		cursor.close()


def _erase_on(sa: Any, engine: Any) -> None:
	"""Every connection a SQLite engine hands out overwrites what it deletes (`erasing`).

	Set as each one is checked out: an application's engine may hold connections made before.
	"""
	if not sa.event.contains(engine, "checkout", _erasing_checkout):
		sa.event.listen(engine, "checkout", _erasing_checkout)


class SQLAlchemySession:
	"""A session in a database SQLAlchemy reaches: PostgreSQL (``postgresql://...``), SQLite.

	Needs SQLAlchemy and, for PostgreSQL, psycopg (both come with ``openmolt-dbos``); the table
	``openmolt_session_items`` is made on first use. Give the same URL as the durable backend's
	to keep conversations in its database.

	Args:
		session_id: The conversation's id.
		url: The database URL (``postgresql://`` uses the psycopg driver). Sessions of one URL
			share one engine, made by the first of them: one connection pool per database,
			however many conversations a process opens.
		engine: An engine to share between sessions instead of ``url``.
	"""

	_tables: ClassVar[weakref.WeakSet[Any]] = weakref.WeakSet()  # engines whose table exists

	def __init__(self, session_id: str, url: str | None = None, *, engine: Any = None) -> None:
		self.session_id: str = _check_id(session_id)
		try:
			import sqlalchemy as sa
		except ImportError as exc:  # pragma: no cover - depends on the environment
			from openmolt_core._hints import install_command

			raise ConfigurationError(
				"SQLAlchemySession needs SQLAlchemy (and psycopg for PostgreSQL): "
				f"{install_command('openmolt[dbos]')}"
			) from exc
		if engine is None:
			if not url:
				raise ConfigurationError(
					"SQLAlchemySession: give url='postgresql://user@host/db' or engine=..."
				)
			engine = _engine_for(sa, url)
		self._sa = sa
		self.engine: Any = engine
		meta = sa.MetaData()
		self._table = sa.Table(
			"openmolt_session_items",
			meta,
			sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
			sa.Column("session_id", sa.String, nullable=False, index=True),
			sa.Column("item", sa.Text, nullable=False),
			sa.Column("created", sa.Float, nullable=False),
		)
		self._pruned = sa.Table(  # items pruned per session (`prune`): positions count them
			"openmolt_session_pruned",
			meta,
			sa.Column("session_id", sa.String, primary_key=True),
			sa.Column("items", sa.Integer, nullable=False),
		)
		self._meta = meta

	def __repr__(self) -> str:
		return f"SQLAlchemySession({self.session_id!r})"

	@property
	def path(self) -> Path | None:
		"""The SQLite file the session is kept in (beside it, its turns' locks); None elsewhere.

		As `SQLiteSession.path`: the file tools of the runs of this session keep out of it.
		"""
		database = self.engine.url.database
		if self.engine.dialect.name != "sqlite" or database in (None, "", ":memory:"):
			return None
		if str(database).startswith("file:"):  # a URI: the file is its path part
			database = str(database).removeprefix("file:").split("?", 1)[0]
		return Path(database)

	def _ensure(self) -> None:
		if self.engine not in self._tables:
			if self.engine.dialect.name == "sqlite":  # what it deletes leaves the file's bytes
				_erase_on(self._sa, self.engine)
			try:
				self._meta.create_all(self.engine, checkfirst=True)
			except self._sa.exc.DBAPIError:
				# Two processes creating the table at once: PostgreSQL refuses the second
				# CREATE TABLE (a duplicate pg_type row) even with the existence check. The other
				# one made it; check again, and fail only if it is still missing.
				self._meta.create_all(self.engine, checkfirst=True)
			self._tables.add(self.engine)

	@contextlib.asynccontextmanager
	async def turn(self) -> AsyncIterator[None]:
		"""Hold this session while one run of it goes on, in every process that shares the database.

		PostgreSQL: an advisory lock of the session (another key than its writes' lock), held by
		a connection of its own for the turn; SQLite: a lock file beside the database file, as
		`SQLiteSession.turn`. Another process's run of the same session waits until this one's
		turn is appended. Other databases: this process's queue only.

		On PostgreSQL the turn is a lease: the holder renews it from a thread, and the server
		ends the lock's connection (freeing the turn) once it was idle for `_TURN_LAPSE`
		(``idle_session_timeout``, PostgreSQL 14 and later). A process paused while it holds a
		turn (SIGSTOP, a debugger), alive but never continuing, held it forever before: every
		later run of the session waited, a durable run that another worker took over too.
		"""
		dialect = self.engine.dialect.name
		database = self.engine.url.database
		if dialect == "sqlite" and database not in (None, "", ":memory:"):
			async with _file_turn(_turn_file(Path(database), self.session_id), self.session_id):
				yield
			return
		if dialect != "postgresql":
			yield
			return
		key = {"key": self._turn_key()}
		engine = _lock_engine(self._sa, self.engine)
		where = f"{engine.url.render_as_string(hide_password=True)} {key['key']}"
		async with not_held(where, self.session_id):
			take = self._sa.text("SELECT pg_try_advisory_lock(:key)")
			conn = await anyio.to_thread.run_sync(engine.connect)

			async def taken() -> bool:
				return bool(
					await anyio.to_thread.run_sync(lambda: conn.execute(take, key).scalar())
				)

			try:
				await anyio.to_thread.run_sync(_lapse_idle, self._sa, conn)
				await _until(taken)
				renewal = _Renewal(self._sa, conn, self.session_id)
				try:
					yield
				finally:
					await _quietly(renewal.stop)  # before the connection is used here again
					unlock = self._sa.text("SELECT pg_advisory_unlock(:key)")
					await _quietly(lambda: conn.execute(unlock, key))
			finally:
				await _quietly(conn.close)

	def _turn_key(self) -> int:
		"""The advisory lock key of this session's turns (another than its writes')."""
		digest = hashlib.sha256(b"turn:" + self.session_id.encode()).digest()[:8]
		return int.from_bytes(digest, "big", signed=True)

	def _one_writer(self, conn: Any) -> None:
		"""Hold this session's lock until the transaction ends (PostgreSQL; SQLite has one writer).

		Without it, two turns appended at once interleave their ids (user, user, agent, agent),
		and two pops take the same item.
		"""
		if conn.dialect.name == "postgresql":
			digest = hashlib.sha256(self.session_id.encode()).digest()[:8]
			key = int.from_bytes(digest, "big", signed=True)
			conn.execute(self._sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		"""The items, oldest first (the latest ``limit`` of them).

		A read makes nothing, as `SQLiteSession.get_items`: a database without the sessions'
		table has no items and is left without it (a write makes it).
		"""
		if limit is not None and limit <= 0:
			return []
		t, sa = self._table, self._sa

		def read() -> list[dict[str, Any]]:
			if self._found() is None:
				return []  # a read makes no table: the first write does
			query = sa.select(t.c.item).where(t.c.session_id == self.session_id)
			query = query.order_by(t.c.id.desc())
			if limit is not None:
				query = query.limit(int(limit))
			with self.engine.connect() as conn:
				rows = conn.execute(query).fetchall()
			return [json.loads(r[0]) for r in reversed(rows)]

		return await anyio.to_thread.run_sync(read)

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		"""How many items come before the latest ``limit`` (pruned ones too), and those items.

		Read in one transaction, under the session's write lock: the count and the rows agree.
		"""

		def read() -> tuple[int, list[dict[str, Any]]]:
			self._ensure()
			with self.engine.begin() as conn:
				self._one_writer(conn)  # no turn appended between the count and the rows
				pruned, total, rows = self._latest(conn, limit)
			return pruned + total - len(rows), [json.loads(r[1]) for r in rows]

		return await anyio.to_thread.run_sync(read)

	def _latest(self, conn: Any, limit: int, *, counted: bool = True) -> tuple[int, int, list[Any]]:
		"""Items pruned, items stored, and the latest ``limit`` rows (id, text), oldest first.

		``counted``: the database has the table of pruned counts (False: none was pruned).
		"""
		t, p, sa = self._table, self._pruned, self._sa
		mine = t.c.session_id == self.session_id
		pruned = (
			conn.execute(sa.select(p.c["items"]).where(p.c.session_id == self.session_id)).scalar()
			if counted
			else 0
		)
		total = conn.execute(sa.select(sa.func.count()).select_from(t).where(mine))
		count = int(total.scalar() or 0)
		query = sa.select(t.c.id, t.c.item).where(mine).order_by(t.c.id.desc())
		rows = conn.execute(query.limit(max(int(limit), 0))).fetchall()
		return int(pruned or 0), count, [tuple(r) for r in reversed(rows)]

	async def prune(self, *, dry_run: bool = False) -> int:
		"""Remove the items no run reads any more: those the latest summary covers.

		As `SQLiteSession.prune`, in one transaction under the session's write lock (PostgreSQL:
		its advisory lock, which every write of the session takes).

		Args:
			dry_run: Only count them.

		Returns:
			How many items were (or would be) removed.
		"""

		def prune() -> int:
			counted = True
			if dry_run:  # writes nothing: a database without the tables is left without
				found = self._found()
				if found is None:
					return 0
				counted = found
			else:
				self._ensure()
			with self.engine.begin() as conn:
				self._one_writer(conn)
				return self._prune(conn, dry_run, counted=counted)

		return await anyio.to_thread.run_sync(prune)

	def _found(self) -> bool | None:
		"""Which tables the database has, for a read or a dry run (which make none).

		Returns:
			None without the items' table; else whether the pruned counts' table is there too.
		"""
		if self.engine in self._tables:
			return True
		database = self.engine.url.database
		if self.engine.dialect.name == "sqlite" and database not in (None, "", ":memory:"):
			if not Path(database).is_file():
				return None  # connecting would make the file
		names = set(self._sa.inspect(self.engine).get_table_names())
		if self._table.name not in names:
			return None
		if self._pruned.name in names:
			self._tables.add(self.engine)  # both there: as `_ensure` leaves them
			return True
		return False

	def _prune(self, conn: Any, dry_run: bool, *, counted: bool = True) -> int:
		t, p, sa = self._table, self._pruned, self._sa
		mine = t.c.session_id == self.session_id
		count, first = _prune_rows(
			lambda limit: self._latest(conn, limit, counted=counted),
			lambda before: [
				tuple(r)
				for r in conn.execute(
					sa.select(t.c.id, t.c.item).where(
						mine, t.c.id < before, t.c.item.like(_PENDING_LIKE)
					)
				).fetchall()
			],
			lambda before: int(
				conn.execute(
					sa.select(sa.func.count()).select_from(t).where(mine, t.c.id < before)
				).scalar()
				or 0
			),
		)
		if count and not dry_run:
			conn.execute(t.delete().where(mine, t.c.id < first))
			done = conn.execute(
				p.update()
				.where(p.c.session_id == self.session_id)
				.values(items=p.c["items"] + count)
			)
			if not done.rowcount:
				conn.execute(p.insert().values(session_id=self.session_id, items=count))
		return int(count)

	@classmethod
	async def prune_store(
		cls,
		url: str | None = None,
		*,
		engine: Any = None,
		idle_days: float | None = None,
		dry_run: bool = False,
	) -> Pruned:
		"""Prune every session in a database: delete the idle ones, and `prune` the others.

		As `SQLiteSession.prune_store`: a session in a run's turn (PostgreSQL: its advisory
		lock, tried without waiting) or with a pending durable turn is kept, and reported busy.

		Args:
			url: The database URL (as the sessions were given).
			engine: The engine instead of ``url``.
			idle_days: Delete the sessions idle longer than this many days (None: none).
			dry_run: Only count what would go.

		Raises:
			ConfigurationError: No ``url`` nor ``engine``, or ``idle_days`` is not a number of
				days of at least 0.
		"""
		since = _idle_since(idle_days)
		probe = cls("probe", url, engine=engine)
		t, sa = probe._table, probe._sa

		def listed() -> list[Any]:
			if not dry_run:
				probe._ensure()
			elif probe._found() is None:
				return []  # a dry run makes no table
			with probe.engine.connect() as conn:
				query = (
					sa.select(t.c.session_id, sa.func.max(t.c.created))
					.group_by(t.c.session_id)
					.order_by(t.c.session_id)
				)
				return [tuple(r) for r in conn.execute(query).fetchall()]

		found = await anyio.to_thread.run_sync(listed)
		removed = 0
		deleted: list[str] = []
		busy: list[str] = []
		for sid, last in found:
			session = cls(sid, engine=probe.engine)
			if since is not None and last < since:
				gone = await session._drop_idle(since, dry_run)
				if gone is not None:
					(deleted if gone else busy).append(sid)
					continue
			removed += await session.prune(dry_run=dry_run)
		return Pruned(len(found), removed, tuple(deleted), tuple(busy), dry_run)

	@classmethod
	async def list_store(
		cls,
		url: str | None = None,
		*,
		engine: Any = None,
		limit: int | None = None,
		session_ids: Sequence[str] | None = None,
	) -> list[StoredSession]:
		"""The sessions in a database, the latest active first, with their counts.

		As `SQLiteSession.list_store`: it only reads, and a database without the sessions'
		table lists none and is left without it.

		Args:
			url: The database URL (as the sessions were given).
			engine: The engine instead of ``url``.
			limit: List at most this many (None: all).
			session_ids: List only these sessions (those the database holds); None: every one.

		Raises:
			ConfigurationError: No ``url`` nor ``engine``, or ``limit`` is not a whole number of
				at least 1.
		"""
		limit = _listing_limit(limit)
		probe = cls("probe", url, engine=engine)
		t, p, sa = probe._table, probe._pruned, probe._sa
		ids = _listing_ids(session_ids)

		def listed() -> list[StoredSession]:
			found = probe._found()
			if found is None or ids == []:
				return []
			last = sa.func.max(t.c.created)
			if found:
				pruned = sa.func.coalesce(sa.func.max(p.c["items"]), 0)
				joined = t.outerjoin(p, p.c.session_id == t.c.session_id)
				query = sa.select(t.c.session_id, sa.func.count(), pruned, last).select_from(joined)
			else:  # a database made before pruning counted: nothing was pruned
				query = sa.select(t.c.session_id, sa.func.count(), sa.literal(0), last)
			if ids is not None:
				query = query.where(t.c.session_id.in_(ids))
			query = query.group_by(t.c.session_id).order_by(last.desc(), sa.func.max(t.c.id).desc())
			if limit is not None:
				query = query.limit(limit)
			with probe.engine.connect() as conn:
				rows = conn.execute(query).fetchall()
			return [
				StoredSession(str(sid), int(items), int(gone or 0), float(when))
				for sid, items, gone, when in rows
			]

		return await anyio.to_thread.run_sync(listed)

	async def _drop_idle(self, since: float, dry_run: bool) -> bool | None:
		"""Delete this idle session: True; False when busy; None when no longer idle."""
		dialect = self.engine.dialect.name
		database = self.engine.url.database
		if dialect == "sqlite" and database not in (None, "", ":memory:"):
			lock = _turn_file(Path(database), self.session_id)
			with _turn_now(lock, make=not dry_run) as free:
				gone = (
					await anyio.to_thread.run_sync(self._delete_idle, since, dry_run)
					if free
					else False
				)
			if gone and not dry_run:
				_drop_turn_file(lock)
			return gone
		if dialect != "postgresql":
			return await anyio.to_thread.run_sync(self._delete_idle, since, dry_run)
		key = {"key": self._turn_key()}
		engine = _lock_engine(self._sa, self.engine)

		def locked() -> bool | None:
			with engine.connect() as conn:
				take = self._sa.text("SELECT pg_try_advisory_lock(:key)")
				if not conn.execute(take, key).scalar():
					return False  # a run holds the session's turn
				try:
					return self._delete_idle(since, dry_run)
				finally:
					conn.execute(self._sa.text("SELECT pg_advisory_unlock(:key)"), key)

		return await anyio.to_thread.run_sync(locked)

	def _delete_idle(self, since: float, dry_run: bool) -> bool | None:
		t, p, sa = self._table, self._pruned, self._sa
		mine = t.c.session_id == self.session_id
		with self.engine.begin() as conn:
			self._one_writer(conn)
			last = conn.execute(sa.select(sa.func.max(t.c.created)).where(mine)).scalar()
			if last is None or last >= since:
				return None  # a turn was appended meanwhile
			marks = conn.execute(sa.select(t.c.item).where(mine, t.c.item.like(_PENDING_LIKE)))
			if any(_is_pending(m[0]) for m in marks.fetchall()):
				return False
			if not dry_run:
				conn.execute(t.delete().where(mine))
				conn.execute(p.delete().where(p.c.session_id == self.session_id))
		return True

	async def add_items(self, items: Sequence[dict[str, Any]]) -> None:
		"""Append items, in one transaction."""
		texts = _check_items(items)
		now = time.time()
		rows = [{"session_id": self.session_id, "item": x, "created": now} for x in texts]

		def write() -> None:
			self._ensure()
			if rows:
				with self.engine.begin() as conn:
					self._one_writer(conn)
					conn.execute(self._table.insert(), rows)

		await anyio.to_thread.run_sync(write)

	async def pop_item(self) -> dict[str, Any] | None:
		"""Remove and return the latest item."""
		t, sa = self._table, self._sa

		def pop() -> dict[str, Any] | None:
			self._ensure()
			with self.engine.begin() as conn:
				self._one_writer(conn)
				row = conn.execute(
					sa.select(t.c.id, t.c.item)
					.where(t.c.session_id == self.session_id)
					.order_by(t.c.id.desc())
					.limit(1)
				).fetchone()
				if row is None:
					return None
				conn.execute(t.delete().where(t.c.id == row[0]))
				item: dict[str, Any] = json.loads(row[1])
				return item

		return await anyio.to_thread.run_sync(pop)

	async def replace_pending(
		self, run_ids: Sequence[str], items: Sequence[dict[str, Any]]
	) -> None:
		"""Remove these runs' ``pending`` items and append ``items``, in one transaction.

		A run's turn and its item go together (`SessionRun`): both or neither, whatever stops
		the process. An item that others follow stays in its place, ``settled`` (`_taken_back`).
		"""
		texts = _check_items(items)
		ids = frozenset(map(str, run_ids))
		now = time.time()
		rows = [{"session_id": self.session_id, "item": x, "created": now} for x in texts]
		t, sa = self._table, self._sa

		def swap() -> None:
			self._ensure()
			with self.engine.begin() as conn:
				self._one_writer(conn)
				mine = t.c.session_id == self.session_id
				found = conn.execute(
					sa.select(t.c.id, t.c.item).where(mine).where(t.c.item.like("%pending%"))
				).fetchall()
				last = conn.execute(sa.select(sa.func.max(t.c.id)).where(mine)).scalar()
				drop, keep = _taken_back([tuple(r) for r in found], ids, last)
				if drop:
					conn.execute(t.delete().where(t.c.id.in_(drop)))
				if keep:
					conn.execute(t.update().where(t.c.id.in_(keep)).values(item=_SETTLED))
				if rows:
					conn.execute(t.insert(), rows)

		await anyio.to_thread.run_sync(swap)

	async def get_run(self, run_id: str) -> list[dict[str, Any]]:
		"""A run's items (its ``run_id``), oldest first, wherever they are in the session.

		The database picks the rows that name the run: the others are not read.
		"""
		t, sa = self._table, self._sa
		run_id = str(run_id)

		def read() -> list[dict[str, Any]]:
			self._ensure()
			query = (
				sa.select(t.c.item)
				.where(t.c.session_id == self.session_id)
				.where(t.c.item.like(_run_like(run_id), escape="\\"))
				.order_by(t.c.id)
			)
			with self.engine.connect() as conn:
				rows = conn.execute(query).fetchall()
			return [json.loads(r[0]) for r in rows if _of_run(r[0], run_id)]

		return await anyio.to_thread.run_sync(read)

	async def clear(self) -> None:
		"""Remove every item of this session (and on SQLite its lock file, as `SQLiteSession`)."""
		t = self._table

		def clear() -> None:
			self._ensure()
			with self.engine.begin() as conn:
				self._one_writer(conn)
				conn.execute(t.delete().where(t.c.session_id == self.session_id))
				conn.execute(
					self._pruned.delete().where(self._pruned.c.session_id == self.session_id)
				)

		await anyio.to_thread.run_sync(clear)
		database = self.engine.url.database
		if self.engine.dialect.name == "sqlite" and database not in (None, "", ":memory:"):
			_drop_turn_file(_turn_file(Path(database), self.session_id))


# what a run reads and writes -------------------------------------------------------------------


def _entry(item: dict[str, Any], user: str | None = None) -> dict[str, Any]:
	# The stored item as a run for ``user`` sees it: who, what, and whether someone untrusted
	# wrote or shaped it (all fixed when it was written: an entry never changes between turns).
	# What was said is everyone's; a reply's output only its user's (`items_after`).
	content = item["output"] if "output" in item and _owns(item, user) else item.get("content")
	entry = {"role": item["role"], "content": content}
	if item.get("attachments"):
		entry["attachments"] = item["attachments"]
	if item.get("tainted"):
		entry["untrusted"] = True
	return entry


def _owns(item: dict[str, Any], user: str | None) -> bool:
	"""Whether an item holds what only runs for ``user`` read (a reply's output, a summary of it)."""
	return ("output" in item or bool(item.get("private"))) and item.get("user") == user


def _start(
	items: list[dict[str, Any]],
	user: str | None = None,
	*,
	anyone: bool = False,
	skipped: int = 0,
) -> tuple[int, dict[str, Any] | None]:
	"""Where the verbatim turns begin: after the latest summary's ``through``.

	Args:
		items: The session's items (its latest ones, after ``skipped`` others).
		user: The run's user: a summary only another user's runs read does not count (`_owns`).
		anyone: Whoever's it is, the latest summary counts.
		skipped: How many items of the session come before ``items`` (`_window`); the index
			returned is in ``items``.
	"""
	for index in range(len(items) - 1, -1, -1):
		item = items[index]
		if item.get("role") == "summary" and (
			anyone or not item.get("private") or _owns(item, user)
		):
			through = item.get("through")
			# A summary covers the items before it, never more (a hand-edited store).
			if not isinstance(through, int) or isinstance(through, bool):
				through = index + skipped
			return max(0, min(through - skipped, index)), item
	return 0, None


WINDOW = 256
"""How many of a session's latest items a run reads first (`read_history`); four times more
each time that is too few (the latest summary the run reads, or one with every user's notes,
lies further back), up to every item."""


def _notes(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
	"""Each user's latest short-term notes in these items (oldest first), as a summary keeps them.

	A summary written with ``notes`` holds every user's notes as they stood then, so a run that
	reads the items from that summary on knows everyone's notes without the items before it.
	"""
	found: dict[Any, dict[str, Any]] = {}
	for item in items:
		if item.get("role") == "summary" and isinstance(item.get("notes"), list):
			found = {n.get("user"): n for n in item["notes"] if isinstance(n, dict)}
		elif item.get("role") == "memory":
			note: dict[str, Any] = {"content": str(item.get("content") or "")}
			if item.get("user") is not None:
				note["user"] = item["user"]
			if item.get("tainted"):
				note["tainted"] = True
			found.pop(item.get("user"), None)  # in the order they were last written
			found[item.get("user")] = note
	return list(found.values())


def _enough(
	items: list[dict[str, Any]], skipped: int, user: str | None, *, anyone: bool = False
) -> bool:
	"""Whether a run for ``user`` reads, in the latest items only, what it would read of all.

	They must hold a summary with every user's notes (`_notes`), and the run's latest summary
	with the turns it leaves verbatim (``anyone``: the latest summary, whoever's it is, as
	`SessionRun.reconcile` reads the session).
	"""
	if not skipped:
		return True
	if not any(i.get("role") == "summary" and isinstance(i.get("notes"), list) for i in items):
		return False
	for index in range(len(items) - 1, -1, -1):
		item = items[index]
		if item.get("role") == "summary" and (
			anyone or not item.get("private") or _owns(item, user)
		):
			through = item.get("through")
			return isinstance(through, int) and not isinstance(through, bool) and through >= skipped
	return False


async def _window(
	session: Session,
	user: str | None,
	*,
	anyone: bool = False,
	read: tuple[int, list[dict[str, Any]]] | None = None,
) -> tuple[int, list[dict[str, Any]]]:
	"""The latest items a run for ``user`` needs, and how many come before them.

	A store with ``get_latest(limit)`` (every built-in one) is read from its end, a window that
	grows until it holds what the run reads (`_enough`): a session of thousands of turns costs
	a run a few hundred items. Another store is read whole.

	Args:
		session: The store.
		user: The run's user (the summaries it reads).
		anyone: Read back to the latest summary whoever's it is (`SessionRun.reconcile`).
		read: A window read already (skipped, items): used if it is enough.
	"""
	if read is not None and _enough(read[1], read[0], user, anyone=anyone):
		return read
	latest = getattr(session, "get_latest", None)
	if latest is None:
		return 0, _valid(await session.get_items())
	limit = WINDOW
	while True:
		skipped, items = await latest(limit)
		items = list(items)
		if len(items) != len(_valid(items)):  # a store that holds more: its indexes are not ours
			return 0, _valid(await session.get_items())
		if _enough(items, skipped, user, anyone=anyone):
			return skipped, items
		limit *= 4


def _valid(items: Sequence[Any]) -> list[dict[str, Any]]:
	"""The items a run can read: dicts of a known role (a store of someone else's may hold more)."""
	return [i for i in items if isinstance(i, dict) and i.get("role") in ROLES]


def history_of(
	items: Sequence[Any], user: str | None = None, *, skipped: int = 0
) -> SessionHistory:
	"""The history a run reads from a session's items (see the module).

	Args:
		items: The session's items.
		user: The end user the run acts for: its short-term memory is the latest that a run
			for the same user kept, and it reads the outputs of the runs for the same user
			(and their summaries), else what each run said (None: a run for nobody in
			particular, whose notes and outputs a run for a user does not read).
		skipped: How many items of the session come before ``items`` (its latest ones, read
			from a summary on: `_window`).
	"""
	items = _valid(items)
	start, summary = _start(items, user, skipped=skipped)
	earlier: list[dict[str, Any]] = []
	tainted = False
	if summary is not None:
		text = str(summary.get("content") or "")
		note = "the earlier turns, summarised" if text else "earlier turns were dropped"
		earlier.append(_entry({**summary, "content": text or note}))
		tainted = bool(summary.get("tainted"))
	for item in items[start:]:
		if item.get("role") in ("user", "agent"):
			earlier.append(_entry(item, user))
			tainted = tainted or bool(item.get("tainted"))
	memory: str | None = None
	for item in reversed(items):
		if item.get("role") == "memory" and item.get("user") == user:
			memory = str(item.get("content") or "")
			tainted = tainted or bool(item.get("tainted"))
			break
		if item.get("role") == "summary" and isinstance(item.get("notes"), list):
			# Every user's notes as they stood when it was written (`_notes`).
			for note in item["notes"]:
				if isinstance(note, dict) and note.get("user") == user:
					memory = str(note.get("content") or "")
					tainted = tainted or bool(note.get("tainted"))
			break
	return SessionHistory(earlier, memory, tainted, skipped + len(items))


def _budget(agent: Agent) -> int:
	"""The tokens the earlier turns may take: half the agent's compaction threshold."""
	from openmolt_core.compaction import DEFAULT_COMPACTION

	config = agent.compaction or DEFAULT_COMPACTION
	threshold = config.threshold_tokens
	if threshold is None:
		size = agent._models.context_window()  # the smallest a step may reach (fallback)
		threshold = int((size or DEFAULT_CONTEXT_WINDOW) * config.share)
	return max(threshold // 2, 1)


def _tokens(entries: list[dict[str, Any]]) -> int:
	return len(dumps(entries)) // 4


async def read_history(
	agent: Agent,
	session: Session,
	state: RunState | None = None,
	*,
	read: tuple[int, list[dict[str, Any]]] | None = None,
) -> SessionHistory:
	"""Read a session for a run of ``agent``, summarising its older turns first when too long.

	The summary (or, with compaction off, a marker that drops them) is appended to the session,
	so every later run reads the same history and the prefix stays stable until the next one.

	Args:
		agent: The agent whose run reads it.
		session: The conversation's store.
		state: The run's state: the summary's model call counts in its usage, under its model,
			and its user (`RunState.user`) picks the short-term memory (`history_of`).
		read: The session's latest items as just read (how many come before them, and them):
			used instead of reading again when they hold what the run reads.
	"""
	user = state.user if state is not None else None
	skipped, items = await _window(session, user, read=read)
	history = history_of(items, user, skipped=skipped)
	budget = _budget(agent)
	if _tokens(history.earlier) <= budget:
		return history
	start, summary = _start(items, user, skipped=skipped)
	turns = [i for i in range(start, len(items)) if items[i].get("role") in ("user", "agent")]
	# Keep the latest turns that fit in half the budget; summarise everything before them.
	kept = 0
	size = 0
	for i in reversed(turns):
		size += _tokens([_entry(items[i], user)])
		if size > budget // 2:
			break
		kept += 1
	kept = max(kept, 1) if turns else 0
	cut = turns[-kept] if kept else len(items)
	old = [items[i] for i in turns if i < cut]
	if not old:
		return history
	tainted = bool(summary and summary.get("tainted")) or any(i.get("tainted") for i in old)
	# A summary of what only this user's runs read (their outputs) is theirs too (`_owns`).
	private = any(_owns(i, user) for i in [*old, *([summary] if summary else [])])
	text = ""
	keep = True
	if agent.compaction is not None:
		try:
			previous = str((summary or {}).get("content") or "")
			text = await _summarise(agent, previous, old, state, user)
		except Exception as exc:
			# No summary this time: this run reads the latest turns only; the session keeps
			# every turn, and the next run tries again.
			log.warning(
				"%s: session %s: the earlier turns could not be summarised (%s); this run "
				"reads the latest ones only",
				agent.name,
				session.session_id,
				agent.redact(f"{type(exc).__name__}: {exc}"),
			)
			keep = False
	marker: dict[str, Any] = {
		"role": "summary",
		"content": agent.redact(text),
		"through": skipped + cut,
		# Everyone's notes (a later run reads from here on: `_window`), masked again: a note
		# may hold what became a secret after it was stored.
		"notes": [{**n, "content": agent.redact(n["content"])} for n in _notes(items)],
	}
	if private:
		marker["private"] = True
		if user is not None:
			marker["user"] = user
	if tainted:
		marker["tainted"] = True
	if keep:
		await session.add_items([marker])
	return history_of([*items, marker], user, skipped=skipped)


async def _summarise(
	agent: Agent,
	previous: str,
	old: list[dict[str, Any]],
	state: RunState | None,
	user: str | None,
) -> str:
	config = agent.compaction
	words = config.summary_words if config is not None else 600
	if agent.compactor is not None:
		provider, model = agent.compactor()
		model_id = slot_id("", model, provider)
	else:
		provider, model = agent.provider(), agent.model
		model_id = agent._models.primary.id
	request = ModelRequest(
		model=model,
		system=SUMMARY_PROMPT.replace("{words}", str(words)),
		messages=[
			Message(
				"user",
				# Masked again: a turn may hold what became a secret after it was stored.
				agent.redact(
					dumps({"previousSummary": previous, "turns": [_entry(i, user) for i in old]})
				),
			)
		],
		config=agent._config_for(split_id(model_id)[0]),
		cache_key=None,
	)
	response = await provider.generate(request)
	if state is not None:  # the run this summary is read for pays for it
		counted(response.usage, request.messages, request.system, response.text)
		price_call(provider, model, response.usage)
		spend(state, response.usage, {model_id: response.usage})
	from openmolt_core.compaction import unfit_summary

	unfit = unfit_summary(response)
	if unfit is not None:  # stored, it would stand for the turns it left out from now on
		raise ValueError(f"the summary {unfit}")
	return response.text.strip()


def reply_of(result: RunResult) -> Any:
	"""What a run answered its caller: its human message, else its question, else its output."""
	if result.human_message and result.human_message.strip():
		return result.human_message
	if result.status == "human_input_required" and result.state.pending:
		return str(result.state.pending.get("message", ""))
	output = result.output
	if hasattr(output, "model_dump"):
		output = output.model_dump(mode="json")
	return output


def said(result: RunResult) -> str | None:
	"""What a run said to everyone in its conversation (None: nothing of its own).

	Its human message (unless blank), else the question it parks on; a run that succeeded
	without either says its output when that is text, or the text of its output's ``result``
	(the default output's field). A chat posts this (``openmolt serve``; "Done." for None), and
	a session keeps it as the turn every later run reads (`items_after`): the rest of the
	output went to the run's caller only.

	Args:
		result: The run's result.
	"""
	message = result.human_message
	if message and message.strip():
		return message
	if result.status == "human_input_required" and result.state.pending:
		return str(result.state.pending.get("message", ""))
	if result.status != "success":
		return None
	output = result.output
	if isinstance(output, dict):
		output = output.get("result")
	return output if isinstance(output, str) and output.strip() else None


def items_after(
	agent: Agent,
	result: RunResult,
	*,
	asked: Any,
	asked_tainted: bool,
	memory_before: str,
	attachments: Sequence[Attachment] = (),
) -> list[dict[str, Any]]:
	"""The items a run appends to its session: the input, the reply and the memory if changed.

	Args:
		agent: The agent (its redactor masks every secret).
		result: The run's result.
		asked: The run's input (or the answer that resumed it); None for no user turn (a run
			resumed by approval decisions, which are no part of the conversation).
		asked_tainted: Whether someone untrusted wrote ``asked``.
		memory_before: The session's short-term memory when the run started.
		attachments: The files sent with ``asked`` (a new run's): named in its item.
	"""
	redact = agent.redact
	state = result.state
	user: dict[str, Any] = {
		"role": "user",
		"content": redact.deep(_plain(asked)),
		"run_id": state.run_id,
	}
	if attachments:
		user["attachments"] = [
			{"mediaType": a.media_type, **({"name": redact(a.name)} if a.name else {})}
			for a in attachments
		]
	if asked_tainted:
		user["tainted"] = True
	told, answered = _plain(said(result)), _plain(reply_of(result))
	reply: dict[str, Any] = {
		"role": "agent",
		"content": redact.deep(told),
		"status": result.status,
		"run_id": state.run_id,
	}
	if answered != told:  # the rest went to the run's caller: its user's runs read it
		reply["output"] = redact.deep(answered)
		if state.user is not None:
			reply["user"] = state.user
	if state.tainted:
		reply["tainted"] = True
	items = [reply] if asked is None else [user, reply]
	memory = state.memory.get("shortTerm") or ""
	if memory != memory_before:
		note: dict[str, Any] = {"role": "memory", "content": redact(memory), "run_id": state.run_id}
		if state.user is not None:  # its notes are that user's (see `history_of`)
			note["user"] = state.user
		if state.tainted:  # a tainted run's notes carry its taint into the next turns
			note["tainted"] = True
		items.append(note)
	return items


def last_reply(items: Sequence[Any], run_id: str) -> dict[str, Any] | None:
	"""A run's latest ``agent`` item in a session's items (None: no reply of it yet).

	Its ``status`` tells a turn that ended (appended, by whichever process) from one that parked:
	a turn appended once more would show twice.

	Args:
		items: The session's items.
		run_id: The run.
	"""
	for item in reversed(_valid(items)):
		if item["role"] == "agent" and str(item.get("run_id")) == run_id:
			found: dict[str, Any] = item
			return found
	return None


async def _reply_before(
	session: Session, skipped: int, items: list[dict[str, Any]], run_id: str
) -> dict[str, Any] | None:
	"""A run's latest ``agent`` item: in a session's latest items, else in the items before them.

	A turn appended and then summarised lies before the window a run reads (`_window`): a
	store with ``get_run`` (every built-in one) hands back that run's items only; another is
	read whole.

	Args:
		session: The store.
		skipped: How many items come before ``items``.
		items: The session's latest items.
		run_id: The run.
	"""
	found = last_reply(items, run_id)
	if found is not None or not skipped:
		return found
	lookup = getattr(session, "get_run", None)
	earlier = await lookup(run_id) if lookup is not None else await session.get_items()
	return last_reply(earlier, run_id)


def _latest_of(
	items: Sequence[Any], run_id: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
	"""A run's latest reply in these items, and the ``pending`` item after it (None: none)."""
	marker = last = None
	for item in _valid(items):
		if str(item.get("run_id")) != run_id:
			continue
		if item["role"] == "agent":
			marker, last = None, item
		elif item["role"] == "pending":
			marker = item
	return marker, last


def _names_park(marker: dict[str, Any] | None) -> bool:
	"""Whether a ``pending`` item names the park it was written after (``seq``)."""
	seq = None if marker is None or marker.get("new") else marker.get("seq")
	return isinstance(seq, int) and not isinstance(seq, bool)


async def _recorded(
	session: Session,
	skipped: int,
	items: list[dict[str, Any]],
	result: RunResult,
	*,
	durable: bool,
) -> bool:
	"""Whether a session holds a run's turn as ``result`` ends it (`SessionRun.record`).

	Its latest ``pending`` item names the park the session holds (`_holds_park`); without one,
	its latest reply of the same status counts. Both are looked for in the session's latest
	items, then, when these do not say, before them (a turn summarised since it was appended):
	a store with ``get_run`` (every built-in one) hands back that run's items only; another is
	read whole. A durable run with neither has had its turns appended, and pruned since: its
	``pending`` item, written as it began (`SessionRun.ahead`) or after its latest park, went
	with the turn that followed (`SessionRun._settle`), and pruning never removes one.

	Args:
		session: The store.
		skipped: How many items come before ``items``.
		items: The session's latest items.
		result: The run's result.
		durable: Whether the run's instance is durable (its turns leave ``pending`` items).
	"""
	run_id = result.state.run_id
	marker, last = _latest_of(items, run_id)
	if last is None and not _names_park(marker) and skipped:
		lookup = getattr(session, "get_run", None)
		earlier = await lookup(run_id) if lookup is not None else await session.get_items()
		marker, last = _latest_of(earlier, run_id)
	if durable and marker is None and last is None and skipped:
		return True  # appended, then summarised and pruned: appended again it would show twice
	return _holds_park(marker, last, result)


def _plain(value: Any) -> Any:
	"""A copy every store holds: JSON (anything else as its text), UTF-8, finite numbers.

	Lone surrogates become U+FFFD, ``NaN`` and the infinities strings, an integer too long to
	write a note (`openmolt_core._support.jsonsafe.encodable`): a run's input may hold them, and
	its turn must still be appended (a SQL store refused it, and an integer too long failed the
	run that had ended).
	"""
	try:
		result: Any = json.loads(json.dumps(encodable(value), ensure_ascii=False, default=str))
	except Exception:  # a value whose text cannot be made (its __str__ fails): its type
		try:
			result = str(value)
		except Exception:
			result = f"({type(value).__name__})"
	return encodable(result)


def _marker(
	agent: Agent, run_id: str, asked: Any, asked_tainted: bool, new: bool, seq: int | None = None
) -> dict[str, Any]:
	"""A ``pending`` item: a durable run's turn is under way (`SessionRun.ahead`).

	Written again after a turn that parks, with ``seq`` (the parked state's): the session then
	says which park it holds, so the next one, of the same status, is told from it
	(`_holds_park`).
	"""
	item: dict[str, Any] = {"role": "pending", "run_id": run_id, "new": new}
	if seq is not None:
		item["seq"] = seq
	if asked is not None:
		item["content"] = agent.redact.deep(_plain(asked))
	if asked_tainted:
		item["tainted"] = True
	return item


def _after_park(agent: Agent, result: RunResult) -> dict[str, Any]:
	"""The ``pending`` item written with the turn of a durable run that parked: it goes on."""
	return _marker(agent, result.state.run_id, None, False, False, result.state.seq)


def _holds_park(
	marker: dict[str, Any] | None, last: dict[str, Any] | None, result: RunResult
) -> bool:
	"""Whether a session holds ``result``'s turn already, by the run's items in it.

	A ``pending`` item written after a park names it (``seq``): the session holds that park's
	turn and every earlier one, and not a later park's, whatever its status. Without one (none
	after the run's latest reply, or one written before parks were named, or as the run began),
	the run's latest reply says: its status is the result's. (By status alone, a second park
	with the status of the first read as recorded: its question was never appended.)

	Args:
		marker: The run's latest ``pending`` item, when no reply of the run follows it.
		last: The run's latest reply in the session (None: none).
		result: The run's result.
	"""
	if marker is not None and _names_park(marker):
		return int(marker["seq"]) >= result.state.seq
	return last is not None and last.get("status") == result.status


def _is_marker(item: Any, run_ids: Sequence[str] | frozenset[str]) -> bool:
	"""Whether an item is the ``pending`` item of one of these runs."""
	return (
		isinstance(item, dict)
		and item.get("role") == "pending"
		and str(item.get("run_id")) in run_ids
	)


class SessionRun:
	"""A run's part in a session (`openmolt_core.capabilities.sessions.RunConversation`).

	`OpenMolt.conversation` makes one per run with ``session=...``: `open` reads the history
	(`read_history`) and taints the run when it is tainted; `close` appends the turn
	(`items_after`), logging a store that fails.

	Args:
		agent: The agent whose run it is (its redactor, its compaction for long histories).
		session: The conversation's store.
	"""

	__slots__ = ("_read", "agent", "attached", "new", "session")

	def __init__(self, agent: Agent, session: Session) -> None:
		self.agent: Agent = agent
		self.session: Session = session
		self.new: bool = False
		"""Whether `open` read the session: a new run (its first turn's files are its own)."""
		self.attached: bool = False
		"""Whether the new run's id already has a turn in the session: a durable run started
		again under its id (a delivery retried to another server) attaches to the run, whose
		first caller began its turn; `close` then appends only what the session misses."""
		self._read: tuple[int, list[dict[str, Any]]] | None = None  # `reconcile`'s window

	def __repr__(self) -> str:
		return f"SessionRun({self.agent.name!r}, {self.session!r})"

	async def open(self, state: RunState) -> SessionHistory:
		"""Read the session for a new run; a tainted history taints ``state``.

		The turns of durable runs that went on elsewhere are appended first (`reconcile`).

		Args:
			state: The new run's state (no messages yet).
		"""
		self.new = True
		items = await self.reconcile()
		self.attached = any(str(i.get("run_id")) == state.run_id for i in items)
		read, self._read = self._read, None
		past = await read_history(self.agent, self.session, state, read=read)
		if past.tainted and not state.tainted:
			session = f"session:{self.session.session_id}"
			state.taint.append({"call": "session", "tool": session, "step": 0})
		return past

	async def ahead(self, state: RunState, *, asked: Any, asked_tainted: bool) -> None:
		"""Write that a new durable run's turn is under way (a ``pending`` item) before its drive.

		A durable run may end where its caller cannot append its turn (the caller died and
		another process recovered the run; an answer came through ``om.durability.answer``):
		the item lets the next run of the session find the turn missing and append it from the
		run's result (`reconcile`). `close` takes the item back when it appends the turn, and
		writes it again after a turn that parks (the run goes on). A resumed run's item is the
		one its park left. A run of an instance without durability ends with its caller:
		nothing is written. A store that fails is logged, not raised.

		Args:
			state: The run's state (its id).
			asked: The run's input; None for no user turn.
			asked_tainted: Whether someone untrusted wrote ``asked``.
		"""
		if self.agent.om.durability is None or not self.new or self.attached:
			return  # an attached run's turn was begun by its first caller
		await self._mark(state.run_id, asked, asked_tainted=asked_tainted, new=True)

	async def _mark(self, run_id: str, asked: Any, *, asked_tainted: bool, new: bool) -> None:
		try:
			await self.session.add_items([_marker(self.agent, run_id, asked, asked_tainted, new)])
		except Exception as exc:
			self._failed(run_id, exc)

	async def _settle(self, run_ids: Sequence[str], items: list[dict[str, Any]]) -> None:
		"""Append turns of these runs and take their ``pending`` items back, together.

		Shielded from the caller's cancellation: a caller that leaves while a turn is written
		(a client gone, a timeout) leaves it written whole, never its item taken back without it
		(the turn would be lost: no item left to find it by) nor the turn without its item
		taken back (an application that undoes the turn would find it appended again). A store
		with ``replace_pending`` (every built-in one) does both in one transaction, so a crash
		cannot split them either; another store's trailing item is taken back, then the turn
		appended. A store that fails is logged, not raised.
		"""
		replace = getattr(self.session, "replace_pending", None)
		with anyio.CancelScope(shield=True):
			try:
				if replace is not None:
					await replace(list(run_ids), items)
					return
				last = await self.session.get_items(1)
				if last and _is_marker(last[-1], run_ids):
					await self.session.pop_item()
				await self.session.add_items(items)
			except Exception as exc:
				self._failed(", ".join(run_ids), exc)

	async def reconcile(self, known: RunResult | None = None) -> list[dict[str, Any]]:
		"""Append the turns of durable runs that ended without their caller (see `ahead`).

		The session is read from its end: its latest summary (whoever's) and the items after
		it (`_window`), not every item. For the latest ``pending`` items not yet summarised whose
		run has no final reply in the session, the durable backend is asked for the run's result, without waiting: a run still
		going (or parked as the session already says) is left for a later turn; one that ended
		gets its reply appended now (with its input when no part of its turn is there), and one
		that was cancelled gets it from the state its `openmolt_core.errors.RunCancelledError` holds. The items of the
		runs appended are taken back with them (`_settle`); a run that parked again elsewhere
		gets a new one after its reply. When other runs' turns came since, its short-term notes
		are not appended: the later notes stand. A backend that fails is logged, never raised:
		the run reads the session as it is.

		Args:
			known: A run's result this process holds already (an attached run's): used for its
				run instead of asking the backend.

		Returns:
			The session's latest items as read (empty without durability), then those appended.
		"""
		backend = self.agent.om.durability
		if backend is None:
			return []
		skipped, items = await _window(self.session, None, anyone=True)
		start, _ = _start(items, anyone=True, skipped=skipped)
		latest: dict[str, int] = {}  # run id: its latest pending item
		for index in range(start, len(items)):
			if items[index]["role"] == "pending":
				latest[str(items[index].get("run_id"))] = index
		added: list[dict[str, Any]] = []
		settled: list[str] = []
		for run_id, index in list(latest.items())[-RECONCILED:]:
			last = last_reply(items, run_id)
			if last is None and not items[index].get("new"):
				# An item written again after a park follows the reply it parked with, which
				# a summary may cover: looked for before the window.
				last = await _reply_before(self.session, skipped, items, run_id)
			if last is not None and last.get("status") not in PARKED_STATUSES:
				continue  # its turn ended in the session, whoever appended it
			if known is not None and known.state.run_id == run_id:
				result: RunResult | None = known
			else:
				result = await self._ended(backend, run_id)
			marker = items[index]
			# A reply after it: a store without replace_pending left it in place.
			stale = any(i is last for i in items[index + 1 :])
			if result is None or (
				result.status in PARKED_STATUSES
				and _holds_park(None if stale else marker, last, result)
			):
				continue  # still going, or parked as the session says
			new_turn = last is None and bool(marker.get("new")) and "content" in marker
			# Notes a later run kept for the same user stand (a run for another user keeps its
			# own: `history_of`); a later run with users of a session that has none counts.
			user = result.state.user
			later = any(
				i.get("run_id") not in (None, run_id)
				and (user is None or (i.get("role") == "memory" and i.get("user") == user))
				for i in items[index + 1 :]
			)
			memory = result.state.memory.get("shortTerm") or ""
			messages = result.state.messages
			added += items_after(
				self.agent,
				result,
				asked=marker.get("content") if new_turn else None,
				asked_tainted=new_turn and bool(marker.get("tainted")),
				memory_before=(
					memory
					if later
					else history_of([*items, *added], result.state.user).memory or ""
				),
				attachments=messages[0].attachments if new_turn and messages else (),
			)
			settled.append(run_id)
			if result.status in PARKED_STATUSES:  # parked again elsewhere: it goes on
				added.append(_after_park(self.agent, result))
		if added:
			await self._settle(settled, added)  # each run's item goes with its turn
		else:
			self._read = (skipped, items)  # what `open` reads next, unchanged
		return [*items, *added]

	async def record(self, result: RunResult, *, asked: Any, asked_tainted: bool) -> None:
		"""Append the turn of a run that ended outside its session's call, once.

		For a caller that followed a durable run it did not drive with ``session=`` (a chat
		server's answer given through the store, or its run followed after a restart): the turn
		is appended under the session's turn, as a run of it is
		(`openmolt_core.capabilities.sessions.session_turn`), after reading the session again
		there (its end: the latest summary and the items after it, `_window`). A turn another
		writer appended meanwhile (the session's next run reconciled it, another server followed
		the same run) is not appended twice; the run's ``pending`` item
		goes with its turn (`_settle`), and a run that parked again gets a new one. A store that
		fails is logged, not raised.

		Args:
			result: The run's result (of a failed run: the error's result).
			asked: What the run was asked (its input, or the answer that resumed it); None for
				no user turn.
			asked_tainted: Whether someone untrusted wrote ``asked``.
		"""
		from openmolt_core.capabilities.sessions import session_turn

		run_id = result.state.run_id
		try:
			async with session_turn(self.session):
				skipped, items = await _window(self.session, None, anyone=True)
				durable = self.agent.om.durability is not None
				if await _recorded(self.session, skipped, items, result, durable=durable):
					return  # appended already, by whichever writer came first
				added = items_after(
					self.agent,
					result,
					asked=asked,
					asked_tainted=asked_tainted,
					memory_before=history_of(items, result.state.user).memory or "",
				)
				if durable and result.status in PARKED_STATUSES:
					added.append(_after_park(self.agent, result))  # it goes on
				await self._settle([run_id], added)
		except Exception as exc:  # the store (or its lock) failed: the run's result stands
			self._failed(run_id, exc)

	async def _ended(self, backend: Any, run_id: str) -> RunResult | None:
		"""A durable run's result if it has one now (a failed or cancelled run's too), else None."""
		try:
			found: RunResult | None = await backend.result(run_id, wait=False)
		except RunError as exc:
			return exc.result
		except ConfigurationError:  # no such run (its store was reset): nothing will come
			return None
		except Exception as exc:  # an engine down, a store that cannot be read
			log.warning(
				"%s: session %s: the result of run %s could not be read: %s",
				self.agent.name,
				self.session.session_id,
				run_id,
				self.agent.redact(f"{type(exc).__name__}: {exc}"),
			)
			return None
		return found

	def _failed(self, run_id: str, exc: Exception) -> None:
		log.warning(
			"%s: the turn of run %s could not be added to session %s: %s",
			self.agent.name,
			run_id,
			self.session.session_id,
			self.agent.redact(f"{type(exc).__name__}: {exc}"),
		)

	async def close(
		self, result: RunResult, *, asked: Any, asked_tainted: bool, memory_before: str
	) -> None:
		"""Append the run's turn (see `items_after`); a store that fails is logged, not raised.

		Args:
			result: The run's result.
			asked: The run's input, or the answer that resumed it; None for no user turn.
			asked_tainted: Whether someone untrusted wrote ``asked``.
			memory_before: The session's short-term memory when the run started.
		"""
		agent = self.agent
		durable = agent.om.durability is not None
		run_id = result.state.run_id
		if durable and self.attached:
			# Another caller began this run's turn: appended again, it would show twice. What
			# the session misses of it (its caller died, or it went on elsewhere) is appended
			# as for a run that ended without its caller.
			await self.reconcile(known=result)
			return
		messages = result.state.messages
		files = messages[0].attachments if self.new and messages else ()
		items = items_after(
			agent,
			result,
			asked=asked,
			asked_tainted=asked_tainted,
			memory_before=memory_before,
			attachments=files,
		)
		if not durable:
			try:
				await self.session.add_items(items)
			except Exception as exc:
				self._failed(run_id, exc)
			return
		if result.status in PARKED_STATUSES:  # it goes on, maybe elsewhere: a new item
			items.append(_after_park(agent, result))
		await self._settle([run_id], items)  # the item `ahead` wrote goes with the turn
