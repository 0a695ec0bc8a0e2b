"""Make docs/guides/ui-run-view.png: the run view of a scripted run waiting for an approval.

Run it by hand when the page changes: ``uv run python tests/ui/make_screenshot.py``. It uses the
same Debian Chromium and Playwright as the browser tests, and a scripted model (no network).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from anyio.from_thread import start_blocking_portal
from playwright.sync_api import sync_playwright

from openmolt import OpenMolt
from openmolt_core.llm import Usage
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_plan
from openmolt_ui import PendingApproval, Viewer

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "guides" / "ui-run-view.png"
sys.path.insert(0, str(Path(__file__).parent))
from conftest import CHROMIUM, FLAGS  # noqa: E402


def main() -> None:
	with tempfile.TemporaryDirectory() as tmp, start_blocking_portal("asyncio") as portal:
		om = OpenMolt(entry_points=False, run_store=Path(tmp) / "runs.db")
		viewer = Viewer(om)

		async def get_orders(customer: str) -> dict[str, Any]:
			"""The customer's recent orders."""
			return {
				"customer": customer,
				"orders": [{"id": "o_1842", "total": 129.0, "late": True}],
			}

		async def refund(order: str, amount: float) -> dict[str, Any]:
			"""Refund part of an order."""
			decision = await viewer.request_approval(
				PendingApproval(
					tool="local.refund",
					input={"order": order, "amount": amount},
					reason="Refunds move money: a person approves each one.",
				)
			)
			return {"refunded": amount, "approved": decision.approved}

		plan = [
			{"name": "Find the late order", "status": "completed", "notes": "o_1842, 6 days late"},
			{
				"name": "Refund the shipping",
				"status": "inProgress",
				"subSteps": [{"name": "Ask for approval", "status": "inProgress"}],
			},
			{"name": "Write to the customer", "status": "pending"},
		]
		model = ScriptedModel(
			[
				[
					update_plan(
						{**plan[0], "status": "inProgress", "notes": ""},
						plan[1] | {"status": "pending", "subSteps": []},
						plan[2],
					),
					call_tool("local.get_orders", customer="cus_Ada"),
				],
				[update_plan(*plan), call_tool("local.refund", order="o_1842", amount=12.5)],
				finish(done=True),
			],
			usage=Usage(input_tokens=1840, output_tokens=212),
		)
		agent = om.create_agent(name="Support", model=model, tools=[get_orders, refund])
		with portal.wrap_async_context_manager(viewer):
			future = portal.start_task_soon(agent.run, "Ada's order arrived late: make it right.")
			with sync_playwright() as p:
				browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
				page = browser.new_page(viewport={"width": 1280, "height": 860})
				page.goto(viewer.url)
				page.get_by_test_id("approval").wait_for()
				page.locator("[data-testid=tool-call][data-status=ok]").wait_for()
				time.sleep(0.3)
				page.screenshot(path=str(OUT))
				page.get_by_test_id("approve").click()
				page.locator("[data-testid=run-status]", has_text="success").wait_for()
				browser.close()
			future.result(timeout=15)
		portal.call(om.aclose)
	print(f"wrote {OUT}")


if __name__ == "__main__":
	main()
