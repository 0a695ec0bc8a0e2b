"""Where the run viewer's stories meet: a parked run its caller cancelled, verdicts on a plan and
on a sub-agent's words.

A run parked on an approval whose A2A caller cancelled it (`RunStore.cancel_parked`: status
``cancelled``) showed its other queued call as still "waiting", as if the run could go on.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import Served, seed_runs

pytestmark = [pytest.mark.xdist_group("browser")]


def _iso(minutes_ago: float) -> str:
	return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()


def test_a_cancelled_parked_runs_calls_wait_for_nothing(served: Served, page: Any) -> None:
	"""Parked on an approval, then cancelled: neither of its step's calls is shown waiting."""
	commands = [
		{"type": "callTool", "tool": "local.pay", "input": {"amount": 5}},
		{"type": "callTool", "tool": "local.note", "input": {"text": "paid"}},
	]
	request = {"tool": "local.pay", "input": {"amount": 5}, "call": "tool:1:0:local.pay"}
	seed_runs(
		served.store_path,
		[
			{
				"run_id": "parked-then-cancelled",
				"agent": "Payer",
				"status": "cancelled",
				"started": _iso(3),
				"ended": _iso(2),
				"updated": _iso(1),
				"error": "cancelled by its A2A caller (CancelTask)",
			}
		],
		[
			{
				"run_id": "parked-then-cancelled",
				"name": name,
				"step": 1,
				"time": _iso(t),
				"data": data,
			}
			for name, t, data in (
				("llmOutput", 2.9, {"output": "{}", "usage": {}, "model": "scripted"}),
				("commandsQueued", 2.8, {"commands": commands}),
				("approval:request", 2.7, {"request": request}),
				("finish", 2.6, {"result": {"status": "approval_required", "plan": []}}),
			)
		],
	)
	page.goto(f"{served.viewer.url}#run=parked-then-cancelled")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("cancelled")
	expect(view.get_by_test_id("run-error")).to_contain_text("CancelTask")
	calls = view.get_by_test_id("tool-call")
	expect(calls).to_have_count(2)
	for tool in ("local.pay", "local.note"):
		expect(calls.and_(page.locator(f"[data-tool='{tool}']"))).to_have_attribute(
			"data-status", "not_run"
		)
	expect(view.locator("[data-testid=bar][data-kind=parked]")).to_have_count(0)


def test_a_verdict_on_a_plan_is_shown_with_the_plan_it_judged(served: Served, page: Any) -> None:
	"""A refused plan's verdict is with its updatePlan command; the plan kept is the next one."""
	from openmolt_core.guardrails.pii import pii_redaction
	from openmolt_core.testing import ScriptedModel, finish, update_plan

	plan = update_plan("Email ada@example.com the invoice")
	model = ScriptedModel([plan, update_plan("Send the invoice"), finish("sent")])
	agent = served.om.create_agent(
		name="Planner",
		model=model,
		guardrails=[pii_redaction("output", kinds=["email"], action="refuse")],
	)
	served.call(agent.run, "go")
	page.goto(served.viewer.url)
	page.locator("[data-testid=run-item]").first.click()
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	first = view.locator("[data-testid=step][data-step='1']")
	judged = first.locator("[data-testid=command][data-type=updatePlan] [data-judged=plan]")
	expect(judged).to_have_count(1)
	expect(judged).to_contain_text("refused the plan")
	expect(view.get_by_test_id("plan-item")).to_have_text(["○Send the invoice pending"])


def test_a_callers_verdict_on_a_sub_agents_message_is_shown_in_the_sub_run(
	served: Served, page: Any
) -> None:
	"""The caller's guardrail rewrote a sub-agent's humanMessage: with the sub-run's finish."""
	from openmolt_core.guardrails.pii import pii_redaction
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	address = "ada@example.com"
	sub = served.om.create_agent(
		name="helper",
		model=ScriptedModel([finish("ok", human_message=f"Done for {address}")]),
	)
	boss = served.om.create_agent(
		name="boss",
		model=ScriptedModel([call_tool("local.helper", task="help"), finish("done")]),
		tools=[sub],
		guardrails=[pii_redaction("output", kinds=["email"])],
	)
	result = served.call(boss.run, "go")
	page.goto(f"{served.viewer.url}#run={result.state.run_id}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	run = view.locator("[data-testid=sub-run][data-agent=helper]")
	expect(run).to_have_count(1)
	judged = run.locator("[data-testid=command][data-type=finish] [data-judged=humanMessage]")
	expect(judged).to_have_count(1)
	expect(judged).to_contain_text("pii_redaction")
	expect(judged).to_contain_text("rewrote the message for people")


def test_a_scheduled_runs_events_read_as_sentences_where_they_belong(
	served: Served, page: Any
) -> None:
	"""schedule:run before the first step, schedule:end after the last; taint with its call.

	``schedule:end`` (step 0, as every event emitted outside the run) was a note before the
	first step, and each was its data as JSON.
	"""
	import anyio

	from openmolt import OpenMolt
	from openmolt_core.testing import FakeClock, ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=["untrusted"])
	def fetch() -> str:
		"""Fetch a page."""
		return "page"

	async def scheduled() -> str:
		clock = FakeClock(datetime(2024, 3, 9, 12, tzinfo=UTC))
		om = OpenMolt(entry_points=False, clock=clock, run_store=served.store_path)
		model = ScriptedModel([call_tool("local.fetch"), finish("x")])
		agent = om.create_agent(name="Ticker", model=model, tools=[fetch])
		agent.schedule({"type": "interval", "value": 60, "id": "hourly"})
		assert om.run_store is not None
		async with om:
			# jump, not advance: advance waits until every task of the loop is blocked, and this
			# loop is the viewer's too (it waited past 15 s once, in a loaded CI run)
			for _ in range(1000):  # until the schedule waits for its first due time
				if clock.sleeping:
					break
				await anyio.sleep(0.01)
			clock.jump(minutes=1, seconds=1)
			for _ in range(200):  # the scheduled run ends in its own task
				ended = await om.run_store.runs(status="success")
				if ended and any(
					e.name == "schedule:end" for e in await om.run_store.events(ended[0].run_id)
				):
					return ended[0].run_id
				await anyio.sleep(0.05)
		raise AssertionError("the scheduled run did not end")

	run_id = served.call(scheduled)
	page.goto(f"{served.viewer.url}#run={run_id}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	before = view.locator("[data-testid=step][data-step='0'] [data-event='schedule:run']")
	expect(before).to_contain_text("schedule hourly: the run due 2024-03-09 12:01 UTC started")
	end = view.locator("[data-testid=step][data-step='2'] [data-event='schedule:end']")
	expect(end).to_contain_text("schedule hourly: the run due 2024-03-09 12:01 UTC ended: success")
	taint = view.locator("[data-testid=tool-call][data-tool='local.fetch'] [data-event=taint]")
	expect(taint).to_contain_text("the result of local.fetch is untrusted")
	for note in (before, end, taint):
		expect(note).not_to_contain_text('{"')


def test_compaction_and_a_stranded_run_read_as_sentences(served: Served, page: Any) -> None:
	"""A compaction says which steps it summarised; a stranded run which version it waits for."""
	seed_runs(
		served.store_path,
		[{"run_id": "kept", "agent": "Kept", "status": "stranded", "started": _iso(3)}],
		[
			{
				"run_id": "kept",
				"name": name,
				"step": step,
				"time": _iso(t),
				"data": data,
			}
			for name, step, t, data in (
				("llmOutput", 1, 2.9, {"output": "{}", "usage": {}, "model": "scripted"}),
				(
					"compaction",
					1,
					2.8,
					{"through_step": 12, "tokens_before": 90000, "tokens_after": 8000, "files": []},
				),
				("run:stranded", 0, 2.7, {"version": "v1", "current": "v2", "worker": "w-1"}),
			)
		],
	)
	page.goto(f"{served.viewer.url}#run=kept")
	view = page.get_by_test_id("run-view")
	compaction = view.locator("[data-step='1'] [data-event=compaction]")
	expect(compaction).to_contain_text(
		"summarised the steps through step 12: about 90,000 tokens to 8,000"
	)
	stranded = view.locator("[data-step='1'] [data-event='run:stranded']")
	expect(stranded).to_contain_text(
		"waits for agent version v1, which no live worker serves (this worker serves v2; it last"
		" ran on w-1)"
	)
