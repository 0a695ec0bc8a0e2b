"""A token budget's end across a crash (SIGKILL): the recovered run ends where an uncrashed one does.

The budget capability decides from the journaled usage, so the steps replayed from the journal
go on as they did, and the live rest ends on the same step with the same words.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _crash_cases import killed_and_recovered
from _durable import FakeServer


def _charge(value: str, hold: str = "") -> dict[str, Any]:
	return {
		"type": "callTool",
		"tool": "svc.charge",
		"input": {"scenario": "tokens", "value": value, "hold": hold},
	}


@pytest.mark.timeout(240)
def test_a_token_budget_ends_a_recovered_run_on_the_same_step(
	store: str, server: FakeServer, spawn: Any
) -> None:
	name, held = "tokens", "tokens-held"
	# The server's usage: 110, 112, 114 tokens at turns 0, 1, 2; the budget is 250.
	server.scripts[name] = [
		_charge("A"),
		_charge("B", hold=held),
		_charge("C"),
		{"type": "finish", "status": "success", "output": {"result": "charged"}},
	]
	_, result = killed_and_recovered(
		store,
		server,
		spawn,
		name,
		held,
		lambda: server.entries("tool", name="charge", hold=held),
		"the call in flight",
	)
	assert (result.status, result.error) == ("limit_reached", "336 of 250 tokens used")
	assert result.usage.total_tokens == 336
	models = server.entries("model", name=name)
	assert [m.body["turn"] for m in models] == [0, 1, 2]  # the first two replayed, not asked
	notice = json.loads(models[2].body["last"])["notice"]
	assert notice.startswith("This is your last step (250 tokens)")
