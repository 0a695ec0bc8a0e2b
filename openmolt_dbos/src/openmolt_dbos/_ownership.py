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
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["guard_steps"]

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
