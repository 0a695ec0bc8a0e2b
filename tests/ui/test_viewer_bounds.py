"""A run of thousands of steps, with a huge result, stays quick to read in the viewer.

Every step of a 3,000-step run was drawn, and drawn again at each event: 87,000 elements, most
of a second a render, twelve seconds before the page showed the run's end. Its latest 100 steps
are drawn now (and the timeline's bars are theirs), with a button for the earlier ones.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import Served, seed_runs

pytestmark = [pytest.mark.xdist_group("browser")]

STEPS = 3000
HUGE = 2_000_000


def _iso(seconds_ago: float) -> str:
	return (datetime.now(UTC) - timedelta(seconds=seconds_ago)).isoformat()


def _step(n: int) -> list[dict[str, Any]]:
	t = _iso(STEPS - n)
	call = {"tool": "local.t", "input": {"i": n}}
	response = "r" * (HUGE if n == STEPS else 200)
	return [
		{"name": "llmOutput", "time": t, "data": {"output": "{}", "usage": {}, "model": "m"}},
		{"name": "commandsQueued", "time": t, "data": {"commands": [{"type": "callTool", **call}]}},
		{"name": "tool:call", "time": t, "data": call},
		{"name": "tool:response", "time": t, "data": {**call, "response": response}},
	]


def test_a_run_of_thousands_of_steps_draws_its_latest_and_more_on_request(
	served: Served, page: Any
) -> None:
	"""The run's end is shown, earlier steps come 100 at a time, the page stays small."""
	events = [
		{"run_id": "long", "step": n, **event} for n in range(1, STEPS + 1) for event in _step(n)
	]
	seed_runs(
		served.store_path,
		[{"run_id": "long", "agent": "Long", "status": "success", "started": _iso(STEPS + 1)}],
		events,
	)
	page.goto(f"{served.viewer.url}#run=long")
	view = page.get_by_test_id("run-view")
	steps = view.get_by_test_id("step")
	# 12,000 stored events and a 2 MB result to read: 3.3 s on an idle machine, more under a
	# loaded test run (a wait for the page, not a speed goal: those are the benchmarks').
	expect(view.locator(f"[data-testid=step][data-step='{STEPS}']")).to_have_count(
		1, timeout=60_000
	)
	expect(steps).to_have_count(100)
	expect(view.locator("[data-testid=step][data-step='1']")).to_have_count(0)
	expect(view.get_by_test_id("timeline-latest")).to_have_text("the latest 100 steps of 3,000")
	expect(view.locator("[data-testid=bar][data-kind=tool]")).to_have_count(100)
	assert page.evaluate("document.querySelectorAll('*').length") < 10_000
	huge = view.locator("[data-testid=tool-call] pre[data-cut=true]")
	expect(huge).to_have_count(1)
	expect(view.get_by_test_id("show-all")).to_have_text(f"Show all {HUGE + 2:,} characters")
	more = view.get_by_test_id("earlier-steps")
	expect(more).to_have_text("Show 100 earlier steps (2,900 not shown)")
	more.click()
	expect(steps).to_have_count(200)
	expect(view.locator(f"[data-testid=step][data-step='{STEPS - 199}']")).to_have_count(1)
	expect(more).to_have_text("Show 100 earlier steps (2,800 not shown)")


def test_a_short_run_draws_every_step_without_a_button(served: Served, page: Any) -> None:
	"""100 steps or fewer: all drawn, no button, no note on the timeline."""
	events = [{"run_id": "short", "step": n, **e} for n in range(1, 4) for e in _step(n)]
	seed_runs(
		served.store_path,
		[{"run_id": "short", "agent": "Short", "status": "success", "started": _iso(STEPS + 1)}],
		events,
	)
	page.goto(f"{served.viewer.url}#run=short")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("step")).to_have_count(3)
	expect(view.get_by_test_id("earlier-steps")).to_have_count(0)
	expect(view.get_by_test_id("timeline-latest")).to_have_count(0)
