"""A worker's slow recovery of a dead worker's runs must not cost it its own lease.

``recover`` ran in the heartbeat thread: a recovery that took longer than the lease
(``fence_after``; DBOS re-enqueues the dead worker's runs one statement each, thousands of them on
a loaded store) left the worker taking over without a beat, so it fenced itself, stopping every run
it executed (a model call under way, paid for, is made again when the run resumes), and past the
lapse a third worker took it over too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from openmolt_dbos._workers import Heartbeat, list_workers

LAPSE = 1.0


def test_a_slow_recovery_does_not_fence_the_worker_taking_over(tables: Any) -> None:
	dead = Heartbeat(
		tables, executor_id="dead", app_version="v1", heartbeat=0.1, lapse=LAPSE, recover=print
	)
	dead.claim()  # then never beats again
	done = threading.Event()
	recovered: list[str] = []

	def slow(executor_id: str) -> None:
		recovered.append(executor_id)
		time.sleep(LAPSE * 1.6)  # longer than the lease, and than the lapse
		done.set()

	taker = Heartbeat(
		tables, executor_id="taker", app_version="v1", heartbeat=0.1, lapse=LAPSE, recover=slow
	)
	taker.claim()
	time.sleep(LAPSE + 0.2)
	taker.start()
	try:
		assert done.wait(LAPSE * 5)
		deadline = time.monotonic() + LAPSE * 5
		while not taker.taken and time.monotonic() < deadline:  # the take-over ends after slow
			time.sleep(0.01)
		assert [executor_id for executor_id, _ in taker.taken] == ["dead"]
		assert recovered == ["dead"]
		assert taker.fences == 0  # before: fenced while its beat thread recovered
		assert taker.lease_valid()
		rows = {r["executor_id"]: r for r in list_workers(tables)}
		assert rows["taker"]["state"] == "live"
		assert rows["dead"]["state"] == "taken" and rows["dead"]["taken_by"] == "taker"
	finally:
		taker.stop()
