"""The replay guard's durable memory: a table in the run store's SQLite file.

With a run store (``OpenMolt(run_store=...)``, the ``runStore`` of an agent file) the webhooks'
and the Slack app's `ReplayGuard <openmolt_serve.signatures.ReplayGuard>` keeps what it has seen
in a table of its own in the same file (else, on a durable store, in a file of its files
folder: `seen_store`), so a restart forgets no signature: a signature without a time (``hmac``,
``github``) is refused again for as long as the file lives, a timestamped one until its window
closes. The calls are short local writes, made in the event loop on purpose: the guard's check
and its remembering must not be interleaved by another request.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openmolt_core.openmolt import OpenMolt

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["SqliteSeen", "seen_store"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS openmolt_webhook_seen (
	scope TEXT NOT NULL,
	key TEXT NOT NULL,
	until REAL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS openmolt_webhook_seen_until ON openmolt_webhook_seen (scope, until);
"""


class SqliteSeen:
	"""A `SeenStore <openmolt_serve.signatures.SeenStore>` in a SQLite file.

	Args:
		path: The SQLite file (the run store's).
		scope: Whose entries these are (the agent's webhook): each agent has its own.
	"""

	def __init__(self, path: str | Path, scope: str) -> None:
		self.path = Path(path)
		self.scope = scope
		self._lock = threading.Lock()
		self._conn: sqlite3.Connection | None = None
		self._finalizer: weakref.finalize[[], SqliteSeen] | None = None

	def __repr__(self) -> str:
		return f"SqliteSeen({str(self.path)!r}, scope={self.scope!r})"

	@contextlib.contextmanager
	def _db(self) -> Iterator[sqlite3.Connection]:
		"""The connection, in a transaction.

		One connection is kept open (until `close`, or the store is collected): closing the
		last connection of a WAL file checkpoints and syncs it, about 20 ms, too long for the
		event loop at every request; a commit on an open one takes about 0.1 ms.
		"""
		with self._lock:
			if self._conn is None:
				self.path.parent.mkdir(parents=True, exist_ok=True)
				conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
				conn.execute("PRAGMA journal_mode = WAL")  # as the run store: fast commits
				conn.execute("PRAGMA synchronous = NORMAL")
				conn.executescript(_SCHEMA)
				self._conn = conn
				self._finalizer = weakref.finalize(self, conn.close)
			with self._conn:
				yield self._conn

	def close(self) -> None:
		"""Close the connection (the server does when it stops)."""
		with self._lock:
			if self._finalizer is not None:
				self._finalizer()
			self._conn = self._finalizer = None

	def seen(self, keys: Sequence[str], now: float) -> bool:
		"""Whether one of ``keys`` is kept and not expired at ``now``."""
		marks = ",".join("?" * len(keys))
		with self._db() as db:
			row = db.execute(
				f"SELECT 1 FROM openmolt_webhook_seen WHERE scope = ? AND key IN ({marks}) "
				"AND (until IS NULL OR until >= ?) LIMIT 1",
				(self.scope, *keys, now),
			).fetchone()
		return row is not None

	def add(self, keys: Sequence[str], until: float | None) -> None:
		"""Keep ``keys`` until ``until`` (None: for good); expired entries are dropped."""
		with self._db() as db:
			db.executemany(
				"INSERT OR REPLACE INTO openmolt_webhook_seen (scope, key, until) VALUES (?, ?, ?)",
				[(self.scope, k, until) for k in keys],
			)
			db.execute(  # the timestamped ones whose window has closed
				"DELETE FROM openmolt_webhook_seen WHERE scope = ? AND until < ?",
				(self.scope, time.time()),
			)

	def discard(self, keys: Sequence[str]) -> None:
		"""Drop ``keys``."""
		marks = ",".join("?" * len(keys))
		with self._db() as db:
			db.execute(
				f"DELETE FROM openmolt_webhook_seen WHERE scope = ? AND key IN ({marks})",
				(self.scope, *keys),
			)


def seen_store(agent: Agent, kind: str) -> SqliteSeen | None:
	"""Where an agent's replay guard keeps what it has seen, beyond the process's life.

	A table in the run store's file (``OpenMolt(run_store=...)``), else a SQLite file in the
	durable store's file folder (``OpenMolt(durability=...)``: ``files_dir``), else None (memory
	only).

	Args:
		agent: The agent.
		kind: Which of its routes (``hook``, ``slack``): each keeps its own entries.
	"""
	scope = f"{kind}:{agent.name}"
	om = OpenMolt.of(agent)
	if om.run_store is not None:
		return SqliteSeen(om.run_store.path, scope)
	if om.durability is not None:
		return SqliteSeen(Path(om.durability.files_dir) / "webhook-seen.sqlite", scope)
	return None
