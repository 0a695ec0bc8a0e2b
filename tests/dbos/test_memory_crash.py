"""A memory ``on_update`` callback cut by a crash (SIGKILL) runs again on recovery, same update id.

The callback's step is journaled when it returns: killed while it runs, the process leaves no
record of it, and the recovered run calls it again (at least once, as a tool call in flight).
What makes that safe is the update's id (``update_id``), the same on both calls, which the
callback passes on to apply the update once.
"""

from __future__ import annotations

from typing import Any

import pytest
from _crash_cases import killed_and_recovered
from _durable import FakeServer


@pytest.mark.timeout(240)
def test_a_memory_callback_cut_by_a_crash_runs_again_with_the_same_update_id(
	store: str, server: FakeServer, spawn: Any
) -> None:
	name, held = "memo", "memo-held"
	server.scripts[name] = [
		{"type": "updateMemory", "memory": "shortTerm", "mode": "append", "data": held},
		{"type": "finish", "status": "success", "output": {"result": "noted"}},
	]
	run_id, result = killed_and_recovered(
		store,
		server,
		spawn,
		name,
		held,
		lambda: server.entries("memory", data=held),
		"the callback in flight",
	)
	assert result.status == "success" and result.output == {"result": "noted"}
	calls = server.entries("memory", data=held)
	assert len(calls) == 2, "the crash cut the first call before its step was journaled"
	assert [c.body["update_id"] for c in calls] == [f"{run_id}/memory:1:0"] * 2
	assert len(server.entries("model", name=name)) == 2  # the model's reply was journaled
