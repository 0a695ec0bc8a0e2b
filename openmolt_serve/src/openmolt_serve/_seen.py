"""The replay guard's durable memory: a table in the run store's SQLite file.

With a run store (``OpenMolt(run_store=...)``, the ``runStore`` of an agent file) the webhooks'
and the Slack app's `ReplayGuard <openmolt_serve.signatures.ReplayGuard>` keeps what it has seen
in a table of its own in the same file (else, on a durable store, in a file of its files
folder: `seen_store`), so a restart forgets no signature: a signature without a time (``hmac``,
``github``) is refused again for as long as the file lives, a timestamped one until its window
closes. A request is taken in one step (`SqliteSeen.take`: one write transaction), so of two
servers on the file that receive one delivery at once, one runs it. The calls are short local
writes, made in the event loop on purpose. Servers on several machines that share a PostgreSQL
durable store keep it in that database instead (`seen_store`): a file is one machine's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openmolt_core.openmolt import OpenMolt
from openmolt_serve._sqlite import SqliteFile, local_file

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_serve.signatures import SeenStore

__all__ = ["CLOCKS_APART", "SqliteSeen", "seen_store"]

CLOCKS_APART = 3600.0
"""Seconds an entry is kept past its end before a server drops it: the servers on the file (or
a server after its clock was set) may read time differently, and one whose clock is ahead
would drop an entry the others still refuse by (a replay of a signed delivery inside its
window, let through on them). As `openmolt_dbos._seen.CLOCKS_APART` on PostgreSQL."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS openmolt_webhook_seen (
	scope TEXT NOT NULL,
	key TEXT NOT NULL,
	until REAL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS openmolt_webhook_seen_until ON openmolt_webhook_seen (scope, until);
"""


class SqliteSeen(SqliteFile):
	"""A `SeenStore <openmolt_serve.signatures.SeenStore>` in a SQLite file.

	Args:
		path: The SQLite file (the run store's).
		scope: Whose entries these are (the agent's webhook): each agent has its own.
	"""

	def __init__(self, path: str | Path, scope: str) -> None:
		super().__init__(path, _SCHEMA)
		self.scope = scope

	def __repr__(self) -> str:
		return f"SqliteSeen({str(self.path)!r}, scope={self.scope!r})"

	def seen(self, keys: Sequence[str], now: float) -> bool:
		"""Whether one of ``keys`` is kept and not expired at ``now``."""
		marks = ",".join("?" * len(keys))
		with self.transaction() as db:
			row = db.execute(
				f"SELECT 1 FROM openmolt_webhook_seen WHERE scope = ? AND key IN ({marks}) "
				"AND (until IS NULL OR until >= ?) LIMIT 1",
				(self.scope, *keys, now),
			).fetchone()
		return row is not None

	def add(self, keys: Sequence[str], until: float | None) -> None:
		"""Keep ``keys`` until ``until`` (None: for good); expired entries are dropped."""
		with self.transaction() as db:
			db.executemany(
				"INSERT OR REPLACE INTO openmolt_webhook_seen (scope, key, until) VALUES (?, ?, ?)",
				[(self.scope, k, until) for k in keys],
			)
			db.execute(  # the timestamped ones whose window has closed on every clock
				"DELETE FROM openmolt_webhook_seen WHERE scope = ? AND until < ?",
				(self.scope, time.time() - CLOCKS_APART),
			)

	def take(self, entries: Mapping[str, float | None], now: float) -> str | None:
		"""Keep every key of ``entries`` unless one is kept and not expired: that key, else None.

		One write transaction (``BEGIN IMMEDIATE``: one writer from the look-up to the insert),
		so of several processes on the file taking one key, one wins. A key is held while its
		entry has not ended at ``now``; the scope's entries that ended `CLOCKS_APART` ago are
		dropped first (never by this clock alone: another server's may be behind it).
		"""
		keys = list(entries)
		marks = ",".join("?" * len(keys))
		with self.transaction() as db:
			db.execute("BEGIN IMMEDIATE")
			db.execute(
				"DELETE FROM openmolt_webhook_seen WHERE scope = ? AND until < ?",
				(self.scope, now - CLOCKS_APART),
			)
			held = {
				row[0]
				for row in db.execute(
					f"SELECT key FROM openmolt_webhook_seen WHERE scope = ? AND key IN ({marks})"
					" AND (until IS NULL OR until >= ?)",
					(self.scope, *keys, now),
				)
			}
			for key in keys:
				if key in held:
					return key
			db.executemany(
				"INSERT OR REPLACE INTO openmolt_webhook_seen (scope, key, until) VALUES (?, ?, ?)",
				[(self.scope, k, u) for k, u in entries.items()],
			)
			return None

	def claim(self, key: str, until: float) -> bool:
		"""Keep ``key`` until ``until`` unless it is kept already: whether this call kept it (`take`)."""
		return self.take({key: until}, time.time()) is None

	def discard(self, keys: Sequence[str]) -> None:
		"""Drop ``keys``."""
		marks = ",".join("?" * len(keys))
		with self.transaction() as db:
			db.execute(
				f"DELETE FROM openmolt_webhook_seen WHERE scope = ? AND key IN ({marks})",
				(self.scope, *keys),
			)


def seen_store(agent: Agent, kind: str) -> SeenStore | None:
	"""Where an agent's replay guard keeps what it has seen, beyond the process's life.

	A durable store that servers on several machines share (PostgreSQL: the backend's
	``seen_store``, a table in its database), so a delivery retried to another machine is known
	there; else a table in the run store's file (``OpenMolt(run_store=...)``), else a SQLite file
	in the durable store's file folder (``OpenMolt(durability=...)``: ``files_dir``), else None
	(memory only).

	Args:
		agent: The agent.
		kind: Which of its routes (``hook``, ``slack``) or chat channels (``chat:slack``,
			``chat:telegram``): each keeps its own entries.
	"""
	scope = f"{kind}:{agent.name}"
	shared = getattr(OpenMolt.of(agent).durability, "seen_store", None)
	if shared is not None:
		found: SeenStore | None = shared(scope)
		if found is not None:
			return found
	path = local_file(agent, "webhook-seen.sqlite")
	return SqliteSeen(path, scope) if path is not None else None
