"""One SQLite connection kept open for a table of the server's own in a local file.

The replay guard (`openmolt_serve._seen`) and the A2A task store (`openmolt_serve._a2a_store`)
keep short rows in the run store's file. Their calls are short local writes on a connection kept
open on purpose (the guard's in the event loop, the task store's in a worker thread): closing
the last connection of a WAL file checkpoints and syncs it, about 20 ms, too long at every
request; a commit on an open one takes about 0.1 ms.
The rows are callers' tasks and messages: the file (and SQLite's ``-wal`` and ``-shm``) is 0600
in a 0700 folder, as every store of OpenMolt (`openmolt_core._support.private`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from openmolt_core._support.private import erasing, private_file
from openmolt_core.openmolt import OpenMolt

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["SqliteFile", "local_file"]


def local_file(agent: Agent, name: str) -> Path | None:
	"""The SQLite file a served surface keeps an agent's rows in on this machine (one rule).

	The run store's file (``OpenMolt(run_store=...)``), else the file ``name`` in the durable
	store's file folder (``OpenMolt(durability=...)``: ``files_dir``), else None (memory only).
	A durable store that several machines share keeps them in its database instead (the
	backend's ``seen_store``, ``task_rows``), which the callers ask first.

	Args:
		agent: The agent.
		name: The file's name in the durable store's file folder.
	"""
	om = OpenMolt.of(agent)
	if om.run_store is not None:
		return om.run_store.path
	if om.durability is not None:
		return Path(om.durability.files_dir) / name
	return None


class SqliteFile:
	"""A SQLite file with a schema, and one connection to it (until `close`).

	Args:
		path: The file (made with its folder on first use).
		schema: The SQL that makes the tables (``IF NOT EXISTS``).
		migrate: Brings a table an older version made up to date (a column added), after
			``schema``, in the connection's first transaction.
	"""

	def __init__(
		self,
		path: str | Path,
		schema: str,
		migrate: Callable[[sqlite3.Connection], None] | None = None,
	) -> None:
		self.path = Path(path)
		self.schema = schema
		self.migrate = migrate
		self._lock = threading.Lock()
		self._conn: sqlite3.Connection | None = None
		self._finalizer: weakref.finalize[[], SqliteFile] | None = None

	@contextlib.contextmanager
	def transaction(self) -> Iterator[sqlite3.Connection]:
		"""The connection, in a transaction (committed when the block ends)."""
		with self._lock:
			if self._conn is None:
				private_file(self.path)  # tasks and messages are people's words: 0600
				conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
				erasing(conn)  # a forgotten task's words leave the file's bytes too
				conn.execute("PRAGMA journal_mode = WAL")  # as the run store: fast commits
				conn.execute("PRAGMA synchronous = NORMAL")
				conn.executescript(self.schema)
				if self.migrate is not None:
					with conn:
						self.migrate(conn)
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
