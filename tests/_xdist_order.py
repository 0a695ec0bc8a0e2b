"""`--dist loadgroup`, with the longest xdist groups handed out first (tests/conftest.py uses it).

pytest-xdist hands its work out in units (a group, or one test not in a group), the units with
the most tests first: a group of few but long tests (a durable store's tests that start worker
processes, 28 tests, the longest group) waited until a worker had finished a group of more but
shorter tests, and ended last. The groups named in `FIRST` are handed out before any other.
"""

from __future__ import annotations

from typing import Any

FIRST = ("dbos-postgres-processes", "dbos-sqlite-processes")
"""The groups handed out first, in this order: the longest (tests/dbos/conftest.py, `_group`)."""


def make_scheduler(config: Any, log: Any) -> Any:
	"""The scheduler of ``--dist loadgroup`` that hands the `FIRST` groups out first (else None)."""
	if config.getvalue("dist") != "loadgroup":
		return None
	from xdist.scheduler import LoadGroupScheduling

	class FirstGroupsFirst(LoadGroupScheduling):  # type: ignore[misc]
		"""LoadGroupScheduling, the `FIRST` groups moved to the front of its queue."""

		def _assign_work_unit(self, node: Any) -> None:
			for scope in reversed(FIRST):
				if scope in self.workqueue:
					self.workqueue.move_to_end(scope, last=False)
			super()._assign_work_unit(node)

	return FirstGroupsFirst(config, log)
