"""No call of a run begins in an execution that no longer owns the run.

DBOS gives each execution of a workflow an ownership token (``owner_xid``), written when the
execution claims the workflow (its start, a dequeue after a recovery, a resume), and checks it in
the transaction that journals a step: an execution that lost the workflow cannot journal. It does
not check it before a step's body runs, so a stale execution (a worker that was fenced a moment
too late, a run resumed or taken over while its old execution was still in a step) would make the
call, a model call or a payment, that the owner makes too, and only then fail to journal it.

`guard_steps` closes that window without a round trip of its own: before running a step, DBOS
looks the step up in the journal, in one transaction on a worker thread; the guard adds one
``SELECT`` of the token to that transaction when the journal does not hold the step (the body
is about to run), and raises `dbos._error.DBOSWorkflowConflictIDError` if another execution
owns the workflow. That is the error DBOS raises when such an execution writes: it parks the
execution until the owner records the outcome, and the run goes on in the owner only.

The guard wraps a private method of DBOS's system database (no public hook runs there); if a
DBOS release renames it, `guard_steps` says so in the log and the run goes on without the guard
(the journal stays right: DBOS still refuses the stale execution's writes).

The guard holds only before a step's body: a run handed to recovery while one of its calls is
under way in a live execution is made again by the execution that dequeues it. So a worker's
recovery of its own id (its lease came back) hands on only the runs no execution here is running
(`idle_runs`, `hand_back`): DBOS's recovery re-enqueues every pending run of the id, including
one this process started after the lease came back and is running, whose call under way was then
made twice.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["guard_steps", "hand_back", "idle_runs"]

log: logging.Logger = logging.getLogger("openmolt")

_METHOD = "_check_operation_execution_txn"


def guard_steps(sys_db: Any) -> bool:
	"""Make DBOS's step lookup refuse an execution that no longer owns its workflow.

	Args:
		sys_db: The launched DBOS instance's system database.

	Returns:
		Whether the guard is installed (False when this DBOS has no such lookup to wrap).
	"""
	import sqlalchemy as sa
	from dbos._context import current_owner_xid
	from dbos._error import DBOSWorkflowConflictIDError

	original = getattr(sys_db, _METHOD, None)
	if original is None or getattr(original, "_openmolt_guard", False):
		if original is None:
			log.warning(
				"durable: this DBOS has no step lookup to guard (%s); a stale execution may "
				"begin a call its run's owner makes too (it still cannot journal it)",
				_METHOD,
			)
		return original is not None
	table = sys_db.tables.workflow_status

	def checked(workflow_id: str, function_id: int, function_name: str, conn: Any) -> Any:
		recorded = original(workflow_id, function_id, function_name, conn)
		if recorded is not None:
			return recorded  # answered from the journal: nothing runs
		token = current_owner_xid(workflow_id)
		if token is None:
			return None
		owner = conn.execute(
			sa.select(table.c.owner_xid).where(*sys_db._wf(table, workflow_id))
		).scalar()
		if owner != token:
			raise DBOSWorkflowConflictIDError(workflow_id)
		return None

	checked._openmolt_guard = True  # type: ignore[attr-defined]  # installed once per instance
	setattr(sys_db, _METHOD, checked)
	return True


def idle_runs(sys_db: Any, executor_id: str, app_version: str, active: Any) -> dict[str, Any]:
	"""The runs pending under ``executor_id`` that no execution in this process is running.

	The rows are read first, then ``active`` is called (the workflow ids executing here): an
	execution that claimed its run before the read is running by then, unless it has yet to
	begin (it claimed the run a moment ago, and has made no call: `hand_back` leaves it alone
	unless it is seen idle again, with the same owner, a look later).

	Args:
		sys_db: The launched DBOS instance's system database.
		executor_id: The worker id whose pending runs to read (this process's own).
		app_version: The application version they run under.
		active: Returns the ids of the workflows executing in this process.

	Returns:
		Each idle run's ownership token (``owner_xid``), by workflow id.
	"""
	import sqlalchemy as sa

	table = sys_db.tables.workflow_status
	with sys_db.engine.connect() as conn:
		rows = conn.execute(
			sa.select(table.c.workflow_uuid, table.c.owner_xid).where(
				table.c.status == "PENDING",
				table.c.executor_id == executor_id,
				table.c.application_version == app_version,
				sys_db._name_filter(table.c.application_name, sys_db.app_name),
			)
		).all()
	here = set(active())
	return {str(row[0]): row[1] for row in rows if str(row[0]) not in here}


def hand_back(sys_db: Any, workflow_id: str, executor_id: str, owner: Any) -> bool:
	"""Re-enqueue a pending run of ``executor_id`` for recovery if ``owner`` still owns it.

	As DBOS's recovery does (`reenqueue_for_recovery`), on the condition that no execution
	claimed the run since it was seen idle: the queue's dequeue then admits one runner.

	Args:
		sys_db: The launched DBOS instance's system database.
		workflow_id: The run's workflow id.
		executor_id: The worker id it is pending under.
		owner: Its ownership token as `idle_runs` read it twice.

	Returns:
		Whether it was re-enqueued (not when it ended or was claimed meanwhile).
	"""
	import sqlalchemy as sa
	from dbos._utils import INTERNAL_QUEUE_NAME

	table = sys_db.tables.workflow_status
	token = table.c.owner_xid.is_(None) if owner is None else table.c.owner_xid == owner
	with sys_db.engine.begin() as conn:
		done = conn.execute(
			sa.update(table)
			.where(*sys_db._wf(table, workflow_id))
			.where(table.c.status == "PENDING", table.c.executor_id == executor_id, token)
			.values(
				status="ENQUEUED",
				owner_xid=None,
				started_at_epoch_ms=None,
				updated_at=sys_db._now_ms_sql(),
				queue_name=sa.func.coalesce(table.c.queue_name, INTERNAL_QUEUE_NAME),
			)
		)
	return bool(done.rowcount)
