"""Every event and every status reaches the page readably, in a real browser.

The run list's menus hold every status a run can have and every origin it can come from; each
call the model asked for shows, with what happened to it (a guardrail, the taint policy, an
approval, a capability's own event naming it); untrusted content is marked; long values are cut
with a way to see them whole. Each test saves a screenshot under ``.artifacts/ui/``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import pytest
from playwright.sync_api import expect

from openmolt_core.result import RunStatus
from openmolt_core.triggers import TRIGGER_KINDS

from .conftest import Served, seed_runs, shoot

pytestmark = [pytest.mark.xdist_group("browser")]


def _iso(minutes_ago: float) -> str:
	return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()


def test_the_list_offers_every_status_and_origin_a_run_can_have(served: Served, page: Any) -> None:
	"""A run waiting for an account, or started over MCP, is one choice of the menus away."""
	seed_runs(
		served.store_path,
		[
			{"run_id": "done1", "agent": "Desk", "status": "success", "started": _iso(3)},
			{
				"run_id": "account1",
				"agent": "Mail",
				"status": "authorization_required",
				"started": _iso(2),
				"trigger": {"kind": "mcp", "where": "claude"},
			},
		],
	)
	page.goto(served.viewer.url)
	items = page.locator("[data-testid=run-item]")
	expect(items).to_have_count(2)
	statuses = page.get_by_test_id("filter-status").locator("option")
	offered = set(statuses.evaluate_all("options => options.map(o => o.value)"))
	assert {*get_args(RunStatus), "running", "cancelled", "killed"} <= offered
	origins = page.get_by_test_id("filter-trigger").locator("option")
	assert set(TRIGGER_KINDS) | {"cli", "api"} <= set(
		origins.evaluate_all("options => options.map(o => o.value)")
	)
	page.get_by_test_id("filter-status").select_option("authorization_required")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(1)
	expect(items.first).to_have_attribute("data-run-id", "account1")
	page.get_by_test_id("filter-status").select_option("")
	page.get_by_test_id("filter-trigger").select_option("mcp")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(1)
	expect(items.first).to_have_attribute("data-run-id", "account1")
	shoot(page, "filters-every-status")
