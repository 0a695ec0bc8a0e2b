"""Run records of scheduled runs, and their optional SQLite file (stdlib sqlite3, in a thread).

`RunRecord` is what the ``schedule:*`` events (`openmolt_core.scheduler.ScheduleEvent`) carry;
`openmolt_core.result` and `openmolt_core.scheduler` re-export it under their names.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import anyio

from openmolt_core.result import RunResult, RunStatus

__all__ = ["RecordStatus", "RunRecord", "SqliteHistory"]

RecordStatus = Literal[RunStatus, "running", "cancelled", "skipped"]
"""A run's status: the run's own (`openmolt_core.result.RunStatus`), or ``running``, ``cancelled``
(stopped before it ended) or ``skipped`` (not started: another run of the agent was going, or the
run was missed while the process was down; ``note`` says which)."""


@dataclass(slots=True)
class RunRecord:
	"""One scheduled run, or one skipped.

	Args:
		schedule_id: The schedule's id.
		agent: The agent's name.
		due: When the run was due (UTC).
		started: When it started (UTC).
		ended: When it ended (UTC), None while running.
		status: See `RecordStatus`.
		usage: Tokens and cost (``Usage.to_dict()``), when the run got that far.
		note: Why it was skipped, or that it caught up on missed runs.
		error: What went wrong.
		result: The run's result (kept in memory only, not in the SQLite file).
	"""

	schedule_id: str
	agent: str
	due: datetime
	started: datetime
	ended: datetime | None = None
	status: RecordStatus = "running"
	usage: dict[str, Any] | None = None
	note: str | None = None
	error: str | None = None
	result: RunResult | None = field(default=None, repr=False)

	def to_dict(self) -> dict[str, Any]:
		"""The record as JSON-serializable data (times in ISO 8601, the result dumped)."""
		return {
			"schedule_id": self.schedule_id,
			"agent": self.agent,
			"due": self.due.isoformat(),
			"started": self.started.isoformat(),
			"ended": self.ended.isoformat() if self.ended else None,
			"status": self.status,
			"usage": self.usage,
			"note": self.note,
			"error": self.error,
			"result": self.result.to_dict() if self.result is not None else None,
		}


_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	schedule_id TEXT NOT NULL,
	agent TEXT NOT NULL,
	due TEXT NOT NULL,
	started TEXT NOT NULL,
	ended TEXT,
	status TEXT NOT NULL,
	usage TEXT,
	note TEXT,
	error TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_schedule ON runs (schedule_id, due);
CREATE TABLE IF NOT EXISTS anchors (
	schedule_id TEXT PRIMARY KEY,
	anchor TEXT NOT NULL
);
"""


KEEP = 1000
"""How many records of each schedule a `SqliteHistory` keeps by default (the oldest go first)."""


class SqliteHistory:
	"""Run records in a SQLite file, so history and missed runs survive a restart.

	Every call opens its own connection in a worker thread, so the event loop never blocks. The
	file keeps the latest ``keep`` records of each schedule: a schedule that fires every minute
	for years does not grow it without end.

	Args:
		path: The database file; created with its table on first use.
		keep: The records kept per schedule (at least 1).
	"""

	def __init__(self, path: str | Path, *, keep: int = KEEP) -> None:
		self.path: Path = Path(path)
		self.keep: int = max(int(keep), 1)
		self._ready = False

	def _connect(self) -> sqlite3.Connection:
		if not self._ready:
			from openmolt_core._support.private import private_file

			private_file(self.path)  # 0600 in a 0700 folder, also a file made before
		conn = sqlite3.connect(self.path, timeout=10)
		if not self._ready:
			conn.executescript(_SCHEMA)
			self._ready = True
		return conn

	def _add(self, record: RunRecord) -> None:
		conn = self._connect()
		try:
			with conn:
				conn.execute(
					"INSERT INTO runs (schedule_id, agent, due, started, ended, status, usage, note, error)"
					" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
					(
						record.schedule_id,
						record.agent,
						record.due.isoformat(),
						record.started.isoformat(),
						record.ended.isoformat() if record.ended else None,
						record.status,
						json.dumps(record.usage) if record.usage is not None else None,
						record.note,
						record.error,
					),
				)
				conn.execute(
					"DELETE FROM runs WHERE schedule_id = ? AND id <= (SELECT id FROM runs"
					" WHERE schedule_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
					(record.schedule_id, record.schedule_id, self.keep),
				)
		finally:
			conn.close()

	def _last_due(self, schedule_id: str) -> datetime | None:
		conn = self._connect()
		try:
			row = conn.execute(
				"SELECT due FROM runs WHERE schedule_id = ? ORDER BY due DESC LIMIT 1",
				(schedule_id,),
			).fetchone()
		finally:
			conn.close()
		return datetime.fromisoformat(row[0]) if row else None

	def _anchor(self, schedule_id: str, default: datetime) -> datetime:
		conn = self._connect()
		try:
			with conn:
				conn.execute(
					"INSERT OR IGNORE INTO anchors (schedule_id, anchor) VALUES (?, ?)",
					(schedule_id, default.isoformat()),
				)
				row = conn.execute(
					"SELECT anchor FROM anchors WHERE schedule_id = ?", (schedule_id,)
				).fetchone()
		finally:
			conn.close()
		return datetime.fromisoformat(row[0])

	def _records(self, schedule_id: str, limit: int) -> list[RunRecord]:
		conn = self._connect()
		try:
			rows = conn.execute(
				"SELECT schedule_id, agent, due, started, ended, status, usage, note, error FROM runs"
				" WHERE schedule_id = ? ORDER BY id DESC LIMIT ?",
				(schedule_id, limit),
			).fetchall()
		finally:
			conn.close()
		return [
			RunRecord(
				schedule_id=r[0],
				agent=r[1],
				due=datetime.fromisoformat(r[2]),
				started=datetime.fromisoformat(r[3]),
				ended=datetime.fromisoformat(r[4]) if r[4] else None,
				status=r[5],
				usage=json.loads(r[6]) if r[6] else None,
				note=r[7],
				error=r[8],
			)
			for r in reversed(rows)
		]

	async def add(self, record: RunRecord) -> None:
		"""Store a finished (or skipped) run."""
		await anyio.to_thread.run_sync(self._add, record)

	async def last_due(self, schedule_id: str) -> datetime | None:
		"""The due time of the schedule's latest stored run or skip, if any."""
		return await anyio.to_thread.run_sync(self._last_due, schedule_id)

	async def anchor(self, schedule_id: str, default: datetime) -> datetime:
		"""The instant the schedule's interval counts from, kept from its first start.

		A ``run_now`` between two due times does not move it, so a restart keeps the grid.

		Args:
			schedule_id: The schedule's id.
			default: The anchor to keep when the file has none for it yet.
		"""
		return await anyio.to_thread.run_sync(self._anchor, schedule_id, default)

	async def records(self, schedule_id: str, limit: int = 100) -> list[RunRecord]:
		"""The schedule's latest stored records, oldest first."""
		return await anyio.to_thread.run_sync(self._records, schedule_id, limit)
