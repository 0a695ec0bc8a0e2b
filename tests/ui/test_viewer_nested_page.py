"""A run's nested runs and its end user on the page, in a real browser; hostile text stays text."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from openmolt_core import runstore

from .conftest import Served, shoot
from .test_viewer_nested import _family

pytestmark = [pytest.mark.xdist_group("browser")]

EVIL = '<img src=x onerror="window.pwned=1">\u202egnp.exe'


def test_nested_runs_are_reached_from_their_caller_and_lead_back(served: Served, page: Any) -> None:
	"""The guardrail agent's run (no event names it) and a call's two runs are listed on the
	caller's page with their cost and whether it is counted; each links back; the end user
	shows in the list, the page and its memory's note."""
	problems: list[str] = []
	page.on("pageerror", lambda error: problems.append(str(error)))
	result = served.call(lambda: _family(served.om).run("go", user="alice"))
	assert result.status == "success"
	top = result.state.run_id
	page.goto(f"{served.viewer.url}#run={top}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-user")).to_have_text("alice")
	expect(page.get_by_test_id("run-item-user")).to_contain_text("for alice")
	expect(view.get_by_test_id("note-memory")).to_contain_text("end user alice's")
	rows = view.get_by_test_id("nested-run")
	expect(rows).to_have_count(3)
	guard = view.locator("[data-testid=nested-run][data-kind=guardrail]")
	expect(guard.get_by_test_id("nested-kind")).to_contain_text(
		"guardrail Judge judging tool call at step 1's call 0"
	)
	expect(guard.get_by_test_id("nested-cost")).to_have_attribute("data-counted", "yes")
	second = view.locator(f"[data-testid=nested-run][data-run-id='{top}.1.0.2']")
	expect(second.get_by_test_id("nested-kind")).to_contain_text("run 2 of step 1's call 0")
	# the tool's code ran Helper without adding its usage: not in Main's totals
	expect(second.get_by_test_id("nested-cost")).to_have_attribute("data-counted", "no")
	shoot(page, "nested-runs")
	page.get_by_test_id("filter-user").fill("bob")
	page.get_by_test_id("filter-apply").click()
	expect(page.get_by_test_id("run-item")).to_have_count(0)
	page.get_by_test_id("filter-user").fill("alice")
	page.get_by_test_id("filter-apply").click()
	expect(page.get_by_test_id("run-item")).to_have_count(1)
	guard.get_by_test_id("nested-link").click()
	expect(view.get_by_test_id("run-agent")).to_have_text("Judge")
	expect(view.get_by_test_id("caller-link")).to_have_attribute("data-run-id", top)
	view.get_by_test_id("caller-link").click()
	expect(view.get_by_test_id("run-agent")).to_have_text("Main")
	assert page.evaluate("window.pwned") is None
	assert page.locator("#run img, #runs img").count() == 0
	assert problems == []


def test_hostile_nested_rows_stay_text_and_their_links_stay_in_the_page(
	served: Served, page: Any
) -> None:
	"""An end user's id and nested rows another program wrote (HTML and bidi in ids, names,
	statuses and the trigger's caller, a javascript: caller that is no prefix) show as text;
	links stay #run=."""
	from datetime import UTC, datetime

	from .conftest import seed_runs

	problems: list[str] = []
	page.on("pageerror", lambda error: problems.append(str(error)))
	now = datetime.now(UTC).isoformat()
	evil = '<svg onload="window.pwned=1">\u202e'
	seed_runs(
		served.store_path,
		[
			{"run_id": "host", "agent": "Host", "status": "success", "started": now},
			{
				"run_id": f"host.guard.1.{evil}.0.0.{evil}",
				"agent": evil,
				"status": evil,
				"started": now,
				"trigger": {"kind": "agent", "parent_run_id": "javascript:window.pwned=1"},
			},
			{
				"run_id": f"host.1.0.{evil}",
				"agent": "Sub",
				"status": "success",
				"started": now,
				"usage": {"input_tokens": evil, "cost_usd": evil},
				"trigger": {"kind": "agent", "parent_run_id": "host"},
			},
		],
	)
	# A user id with a bidi override is refused by the run now (tests/core/test_user_id_aliases.py);
	# the nested rows above keep one, as another program wrote them.
	result = served.call(lambda: _family(served.om).run("go", user=EVIL.replace("\u202e", "")))
	page.goto(f"{served.viewer.url}#run={result.state.run_id}")
	view = page.get_by_test_id("run-view")
	shown_user = EVIL.replace("\u202e", "")
	expect(view.get_by_test_id("run-user")).to_have_text(shown_user)
	item = page.locator(f"[data-run-id='{result.state.run_id}'] [data-testid=run-item-user]")
	expect(item).to_contain_text(shown_user[:30])
	expect(view.get_by_test_id("note-memory")).to_contain_text(f"end user {shown_user}'s")
	page.goto(f"{served.viewer.url}#run=host")
	rows = view.get_by_test_id("nested-run")
	expect(rows).to_have_count(2)
	guard = view.locator("[data-testid=nested-run][data-kind=guardrail]")
	expect(guard.get_by_test_id("nested-kind")).to_contain_text("<svg onload")
	guard.get_by_test_id("nested-link").click()
	expect(view.get_by_test_id("caller-link")).to_have_attribute("data-run-id", "host")
	page.wait_for_timeout(200)
	assert page.evaluate("window.pwned") is None
	assert page.locator("#run svg, #run img").count() == 0
	hrefs = page.locator("#run a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
	assert all(h.startswith(("#run=", "/", "?")) for h in hrefs), hrefs
	assert problems == []


def test_a_runs_page_says_when_it_lists_only_the_latest_of_its_nested_runs(
	served: Served, page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Past the most the page lists, the rest of a run's nested runs went unmentioned; the
	page says it lists the latest only, and how to find the others."""

	result = served.call(lambda: _family(served.om).run("go"))
	top = result.state.run_id
	page.goto(f"{served.viewer.url}#run={top}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("nested-run")).to_have_count(3)
	expect(view.get_by_test_id("nested-more")).to_have_count(0)
	monkeypatch.setattr(runstore, "NESTED_SHOWN", 2)
	page.reload()
	expect(view.get_by_test_id("nested-run")).to_have_count(2)
	expect(view.get_by_test_id("nested-more")).to_contain_text("The latest 2 only")
