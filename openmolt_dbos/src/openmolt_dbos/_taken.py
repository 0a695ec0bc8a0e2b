"""Which worker each taken-over run was taken from, kept in the store beyond the taker's life.

A worker that takes a dead worker's runs over (`openmolt_dbos._workers.Heartbeat.take_over`)
becomes their executor; whoever follows such a run for its caller (a chat's reply:
`openmolt_serve.chats.Conversations`) decides by the dead worker's id, as a server that saw the run
under that worker does, so that one of them follows it. The taker knew that id in its memory only:
once it restarted, the run was its own, followed with no claim beside the server that had claimed
it under the dead worker, and the chat got the reply twice. A row here says: the run's workflow
was taken from ``from_worker`` by ``by_worker`` (whichever worker's queue then dequeued it: the
run is that dead worker's caller's to follow wherever it goes on).

Rows are dropped a day after the takeover (`KEEP`), as long as a chat keeps the claim of a
reply it sent (a run still going a day after its takeover is its taker's own again).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import sqlalchemy as sa

from openmolt_dbos._tables import ready

__all__ = ["KEEP", "TAKEN", "record_taken", "taken_from", "was_taken_from"]

KEEP = 86_400.0
"""Seconds a row is kept after its takeover (`openmolt_serve.chats.KEEP_SEEN`: a reply's claim)."""

_META = sa.MetaData()

TAKEN = sa.Table(
	"openmolt_taken",
	_META,
	sa.Column("workflow_id", sa.String(400), primary_key=True),
	sa.Column("from_worker", sa.String(200), primary_key=True),
	sa.Column("by_worker", sa.String(200), nullable=False),
	sa.Column("taken_at", sa.Float, nullable=False, index=True),
)
"""Each takeover of a workflow: from which worker, by which, when (a workflow taken over again,
its taker dead in turn, has a row per takeover)."""


def record_taken(
	engine: sa.Engine, workflow_ids: Iterable[str], from_worker: str, by_worker: str
) -> None:
	"""Record that ``by_worker`` takes these workflows over from ``from_worker``.

	A workflow taken over again (its taker died in turn) gets a row for each takeover. Rows
	older than `KEEP` are dropped.

	Args:
		engine: The engine on OpenMolt's tables.
		workflow_ids: The workflows pending under ``from_worker``.
		from_worker: The dead worker's id.
		by_worker: The id of the worker that takes them over.
	"""
	ids = list(dict.fromkeys(workflow_ids))
	now = time.time()
	with ready(_META, engine).begin() as conn:
		conn.execute(sa.delete(TAKEN).where(TAKEN.c.taken_at < now - KEEP))
		if not ids:
			return
		conn.execute(
			sa.delete(TAKEN)
			.where(TAKEN.c.workflow_id.in_(ids))
			.where(TAKEN.c.from_worker == from_worker)
		)
		conn.execute(
			sa.insert(TAKEN),
			[
				{
					"workflow_id": w,
					"from_worker": from_worker,
					"by_worker": by_worker,
					"taken_at": now,
				}
				for w in ids
			],
		)


def taken_from(engine: sa.Engine, workflow_ids: Iterable[str]) -> dict[str, str]:
	"""The worker each of these workflows was last taken over from (those taken over only).

	Args:
		engine: The engine on OpenMolt's tables.
		workflow_ids: The workflows.

	Returns:
		By workflow id, the id of the worker it was taken from.
	"""
	ids = list(dict.fromkeys(workflow_ids))
	if not ids:
		return {}
	with ready(_META, engine).connect() as conn:
		rows = conn.execute(
			sa.select(TAKEN.c.workflow_id, TAKEN.c.from_worker)
			.where(TAKEN.c.workflow_id.in_(ids))
			.order_by(TAKEN.c.taken_at)
		).all()
	return {str(w): str(f) for w, f in rows}  # the latest takeover of each


def was_taken_from(engine: sa.Engine, run_id: str, worker: str) -> bool:
	"""Whether a workflow of the run (its first, a segment, a retry) was taken over from ``worker``.

	Args:
		engine: The engine on OpenMolt's tables.
		run_id: The run's id (its first workflow's; the others are ``<id>+<steps>[~<n>]``).
		worker: The worker id.
	"""
	ids = TAKEN.c.workflow_id
	with ready(_META, engine).connect() as conn:
		found = conn.execute(
			sa.select(ids)
			.where(TAKEN.c.from_worker == worker)
			.where(sa.or_(ids == run_id, ids.startswith(f"{run_id}+", autoescape=True)))
			.limit(1)
		).first()
	return found is not None
