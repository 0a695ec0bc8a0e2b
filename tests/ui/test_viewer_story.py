"""The whole story of a run in a real browser: resumes, decisions, sub-agents, the timeline, the
model side, where the run came from, finding runs, the overview, export, and a phone's width.

Each test saves a screenshot of the page it checks under ``.artifacts/ui/`` (see conftest).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan

from .conftest import Served, no_horizontal_scroll, seed_runs, shoot

pytestmark = [pytest.mark.xdist_group("browser")]


def _open_run(page: Any, served: Served, run_id: str) -> Any:
	page.goto(f"{served.viewer.url}#run={run_id}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-agent")).to_be_visible()
	return view


def _iso(minutes_ago: float) -> str:
	return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()


def test_a_resumed_run_keeps_its_history_its_start_and_its_numbering(
	served: Served, page: Any
) -> None:
	"""Parked by another instance, resumed from the page: every step shows, started is the first."""

	def ping() -> str:
		"""Ping."""
		return "pong"

	def nobody(message: str) -> str:
		raise HumanInputUnavailable("nobody is at the terminal")

	elsewhere = OpenMolt(entry_points=False, run_store=served.store_path)  # another process
	first = ScriptedModel(
		[
			[update_plan({"name": "Ask", "status": "inProgress"}), call_tool("local.ping")],
			ask_human("Which city?"),
		]
	)
	parker = elsewhere.create_agent(
		name="Resumer", model=first, tools=[ping], on_human_input_request=nobody
	)
	parked = served.call(parker.run, "Check the weather")
	assert parked.status == "human_input_required"
	run_id = parked.state.run_id
	stored = served.call(served.viewer.store.run, run_id)  # type: ignore[union-attr]
	then = ScriptedModel([finish(city="Tromsø")])
	served.viewer.add_agent(served.om.create_agent(name="Resumer", model=then, tools=[ping]))

	view = _open_run(page, served, run_id)
	expect(view.get_by_test_id("run-status")).to_have_text("human input required")
	expect(view.get_by_test_id("run-parked")).to_contain_text("Which city?")
	expect(view.get_by_test_id("run-error")).to_have_count(0)  # parked is not an error
	expect(view.locator("[data-testid=bar][data-kind=parked]")).to_have_count(1)
	question = page.locator("[data-testid=question][data-question-id^='parked:']")
	question.get_by_test_id("answer-send").click()  # empty: refused in the page
	expect(question.get_by_test_id("answer-error")).to_contain_text("type an answer")
	question.get_by_test_id("answer-input").fill("Tromsø")
	question.get_by_test_id("answer-send").click()
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	expect(view.locator("[data-testid=step]")).to_have_count(3)  # the steps before the park stay
	expect(view.locator("[data-testid=tool-call][data-tool='local.ping']")).to_have_attribute(
		"data-status", "ok"
	)
	expect(view.get_by_test_id("note-humanInput")).to_contain_text("answer: Tromsø")
	expect(view.get_by_test_id("run-started")).to_have_attribute("data-time", stored.started)
	expect(view.locator("[data-testid=bar][data-kind=person]")).to_have_count(1)
	expect(view.get_by_test_id("plan")).to_contain_text("Ask")
	events = served.call(served.viewer.store.events, run_id)  # type: ignore[union-attr]
	seqs = [e.seq for e in events]
	assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # numbered across the resume
	shoot(page, "resumed-run")
	served.call(elsewhere.aclose)


def test_denied_and_edited_decisions_stay_on_the_page(served: Served, page: Any) -> None:
	"""Deny one refund and edit another: each call shows the decision, its reason, the input."""
	ran: list[int] = []

	def refund(customer: str, amount: int) -> dict[str, Any]:
		"""Refund a customer.

		Args:
			customer: The customer id.
			amount: Cents.
		"""
		ran.append(amount)
		return {"refunded": amount}

	model = ScriptedModel(
		[
			[
				call_tool("local.refund", customer="cus_1", amount=9000),
				call_tool("local.refund", customer="cus_2", amount=500),
			],
			finish(done=True),
		]
	)
	agent = served.om.create_agent(
		name="Refunds",
		model=model,
		tools=[refund],
		requires_approval=["local.refund"],
		on_approval_request=served.viewer.approve,
	)
	run = served.start(agent.run, "refund both")
	page.goto(served.viewer.url)
	approvals = page.get_by_test_id("approval")
	expect(approvals).to_have_count(2)
	ids = {
		json.loads(approvals.nth(i).get_by_test_id("approval-input").input_value())[
			"amount"
		]: approvals.nth(i).get_attribute("data-approval-id")
		for i in range(2)
	}
	big, small = (
		page.locator(f"[data-testid=approval][data-approval-id='{ids[a]}']") for a in (9000, 500)
	)
	big.get_by_test_id("approval-reason").fill("far too much")
	big.get_by_test_id("deny").click()
	expect(approvals).to_have_count(1)
	small.get_by_test_id("approval-input").fill('{"customer": "cus_2", "amount": 400}')
	small.get_by_test_id("approve-edited").click()
	expect(approvals).to_have_count(0)
	assert run.result(timeout=15).status == "success"
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	denied = view.locator("[data-testid=tool-call][data-status=denied]")
	expect(denied).to_have_count(1)
	expect(denied.get_by_test_id("decision")).to_have_attribute("data-action", "denied")
	expect(denied.get_by_test_id("decision-reason")).to_have_text("far too much")
	expect(denied.get_by_test_id("tool-input")).to_contain_text("9000")
	edited = view.locator("[data-testid=tool-call][data-status=ok]")
	expect(edited.get_by_test_id("decision")).to_have_attribute("data-action", "edited")
	expect(edited.get_by_test_id("decision-reason")).to_have_text("edited in the run viewer")
	expect(edited.get_by_test_id("decision-input")).to_contain_text('"amount": 400')
	expect(edited.get_by_test_id("asked-input")).to_contain_text('"amount": 500')
	expect(view.locator("[data-testid=bar][data-kind=approval]")).to_have_count(2)
	assert ran == [400]
	shoot(page, "decisions")


def test_a_sub_agents_run_is_nested_under_its_call(served: Served, page: Any) -> None:
	"""The child's plan, steps and tokens sit under the parent's call; the parent's stay its own."""

	def lookup(city: str) -> dict[str, str]:
		"""Look a city up.

		Args:
			city: The city.
		"""
		return {"city": city, "weather": "rain"}

	child = served.om.create_agent(
		name="Researcher",
		model=ScriptedModel(
			[
				[
					update_plan({"name": "Look it up", "status": "inProgress"}),
					call_tool("local.lookup", city="Oslo"),
				],
				finish(found="rain"),
			]
		),
		tools=[lookup],
	)
	parent = served.om.create_agent(
		name="Writer",
		model=ScriptedModel(
			[
				[
					update_plan({"name": "Delegate", "status": "inProgress"}),
					call_tool("local.Researcher", task="Oslo weather"),
				],
				finish(text="Rain in Oslo"),
			]
		),
		tools=[child],
	)
	result = served.call(parent.run, "Write about Oslo")
	assert result.status == "success"
	page.goto(served.viewer.url)
	expect(page.locator("[data-testid=run-item]")).to_have_count(
		1
	)  # the child is not a run of its own in the list
	view = _open_run(page, served, result.state.run_id)
	expect(view.get_by_test_id("run-origin")).to_contain_text("api")
	plan = view.get_by_test_id("plan")
	expect(plan).to_contain_text("Delegate")
	expect(plan).not_to_contain_text("Look it up")
	call = view.locator("[data-testid=tool-call][data-tool='local.Researcher']")
	sub = call.get_by_test_id("sub-run")
	expect(sub).to_have_attribute("data-agent", "Researcher")
	expect(sub.get_by_test_id("sub-status")).to_have_text("success")
	expect(sub.get_by_test_id("sub-plan")).to_contain_text("Look it up")
	expect(sub.locator("[data-testid=tool-call][data-tool='local.lookup']")).to_have_count(1)
	expect(sub.get_by_test_id("sub-usage")).to_contain_text("20 in")
	# the parent's own steps hold no call of the child's
	own_steps = view.locator("[data-testid=step]:not([data-testid=sub-run] [data-testid=step])")
	expect(own_steps).to_have_count(2)
	expect(view.locator("[data-testid=tool-call][data-tool='local.lookup']")).to_have_count(1)
	shoot(page, "sub-agent")
	child_view = _open_run(page, served, f"{result.state.run_id}.1.1")
	expect(child_view.get_by_test_id("run-origin")).to_contain_text(result.state.run_id)
	expect(child_view.get_by_test_id("plan")).to_contain_text("Look it up")


def test_the_timeline_and_the_model_side_of_each_step(served: Served, page: Any) -> None:
	"""Bars placed by time, the slowest marked; model, tokens, cost, reply, fallback per step."""
	run_id = "r-timeline"
	start = datetime.now(UTC) - timedelta(minutes=5)

	def at(seconds: float) -> str:
		return (start + timedelta(seconds=seconds)).isoformat()

	usage = {"input_tokens": 1200, "cached_tokens": 800, "output_tokens": 90, "cost_usd": 0.0123}
	seed_runs(
		served.store_path,
		[
			{
				"run_id": run_id,
				"agent": "Timed",
				"status": "success",
				"started": at(0),
				"ended": at(9),
				"steps": 2,
				"usage": usage,
				"trigger": {"kind": "webhook", "where": "Triage"},
			}
		],
		[
			{
				"run_id": run_id,
				"name": "model:fallback",
				"step": 1,
				"time": at(1),
				"data": {
					"from_model": "openai:gpt-5",
					"to_model": "anthropic:claude",
					"reason": "overloaded",
					"error": "529",
				},
			},
			{
				"run_id": run_id,
				"name": "llmOutput",
				"step": 1,
				"time": at(2),
				"data": {
					"output": '{"commands": [{"type": "callTool"}]} key=[redacted]',
					"usage": usage,
					"model": "anthropic:claude",
				},
			},
			{
				"run_id": run_id,
				"name": "commandsQueued",
				"step": 1,
				"time": at(2),
				"data": {
					"commands": [
						{
							"type": "callTool",
							"tool": "web.fetch",
							"input": {"url": "https://example.com"},
						}
					]
				},
			},
			{
				"run_id": run_id,
				"name": "tool:call",
				"step": 1,
				"time": at(2),
				"data": {"tool": "web.fetch", "input": {"url": "https://example.com"}},
			},
			{
				"run_id": run_id,
				"name": "tool:response",
				"step": 1,
				"time": at(8),
				"data": {
					"tool": "web.fetch",
					"input": {},
					"response": {"ok": True},
					"error": False,
					"duration": 6.0,
				},
			},
			{
				"run_id": run_id,
				"name": "llmOutput",
				"step": 2,
				"time": at(9),
				"data": {
					"output": "done",
					"usage": {"input_tokens": 10, "output_tokens": 5},
					"model": "openai:gpt-5",
				},
			},
			{
				"run_id": run_id,
				"name": "finish",
				"step": 2,
				"time": at(9),
				"data": {"result": {"status": "success"}},
			},
		],
	)
	view = _open_run(page, served, run_id)
	expect(view.get_by_test_id("run-origin")).to_have_text("webhook · where Triage")
	bars = view.locator("[data-testid=bar]")
	expect(bars).to_have_count(3)
	slowest = view.locator("[data-testid=bar][data-slowest=true]")
	expect(slowest).to_have_attribute("data-kind", "tool")
	expect(slowest.get_by_test_id("bar-duration")).to_have_text("6.00 s")
	# drawn to scale: the 6 s call is three times the first model call (2 s, its fallback in it)
	expect(bars.first.get_by_test_id("bar-duration")).to_have_text("2.00 s")
	track = slowest.locator(".bar-track").bounding_box()
	tool_bar = slowest.locator(".bar").bounding_box()
	model_bar = bars.first.locator(".bar").bounding_box()
	assert track and tool_bar and model_bar
	assert abs(tool_bar["width"] / track["width"] - 6 / 9) < 0.02
	assert abs(tool_bar["width"] / model_bar["width"] - 3) < 0.15
	assert tool_bar["x"] > model_bar["x"] + model_bar["width"] - 1  # after the model call
	first = view.locator("[data-testid=step][data-step='1'] [data-testid=model-call]")
	expect(first.get_by_test_id("model-name")).to_have_text("anthropic:claude")
	expect(first.get_by_test_id("model-tokens")).to_contain_text("1200 in · 800 cached · 90 out")
	expect(first.get_by_test_id("model-cost")).to_contain_text("$0.0123")
	expect(first.get_by_test_id("fallback")).to_contain_text(
		"openai:gpt-5 failed (overloaded): anthropic:claude answered"
	)
	first.get_by_test_id("model-reply").locator("summary").click()
	expect(first.get_by_test_id("model-reply")).to_contain_text("key=[redacted]")
	expect(view.get_by_test_id("tokens-cached")).to_have_text("800")
	shoot(page, "timeline")
	page.set_viewport_size({"width": 390, "height": 844})
	expect(view.get_by_test_id("timeline")).to_be_visible()
	no_horizontal_scroll(page)
	shoot(page, "run-phone")


def test_killed_runs_filters_search_and_paging(served: Served, page: Any) -> None:
	"""A dead process's run shows killed; filters, search and 'Older runs' find the rest."""
	dead = subprocess.Popen([sys.executable, "-c", "pass"])
	dead.wait()
	rows = [
		{
			"run_id": f"r{i:03d}",
			"agent": "Billing" if i % 2 else "Support",
			"status": "success" if i % 3 else "failure",
			"started": _iso(200 - i),
			"input": f"ticket {i}" + (" about a refund" if i == 42 else ""),
			"trigger": {"kind": "schedule" if i % 5 == 0 else "cli"},
		}
		for i in range(120)
	]
	rows.append(
		{
			"run_id": "killed1",
			"agent": "Support",
			"status": "running",
			"started": _iso(0.5),
			"ended": None,
			"pid": dead.pid,
		}
	)
	seed_runs(served.store_path, rows)
	page.goto(served.viewer.url)
	items = page.locator("[data-testid=run-item]")
	expect(items.first).to_have_attribute("data-run-id", "killed1")
	expect(items.first).to_have_attribute("data-status", "killed")
	expect(items).to_have_count(100)
	page.get_by_test_id("older").click()
	expect(items).to_have_count(121)
	page.get_by_test_id("filter-search").fill("REFUND")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(1)
	expect(items.first).to_have_attribute("data-run-id", "r042")
	page.get_by_test_id("filter-search").fill("")
	page.get_by_test_id("filter-agent").fill("Billing")
	page.get_by_test_id("filter-status").select_option("failure")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(
		len([r for r in rows[:120] if r["agent"] == "Billing" and r["status"] == "failure"])
	)
	page.get_by_test_id("filter-agent").fill("")
	page.get_by_test_id("filter-status").select_option("")
	page.get_by_test_id("filter-trigger").select_option("schedule")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(24)
	expect(page.get_by_test_id("older")).to_be_hidden()
	page.get_by_test_id("filter-trigger").select_option("")
	page.get_by_test_id("filter-status").select_option("killed")
	page.get_by_test_id("filter-apply").click()
	expect(items).to_have_count(1)
	items.first.click()
	expect(page.get_by_test_id("run-error")).to_contain_text(f"pid {dead.pid}")
	shoot(page, "filters")
	bad = page.evaluate(
		"fetch('/api/runs?status=nope', {headers: {'x-openmolt-token': document.querySelector('meta[name=openmolt-token]').content}}).then(r => r.json())"
	)
	assert "status must be one of" in bad["error"]
	page.set_viewport_size({"width": 390, "height": 844})
	no_horizontal_scroll(page)
	shoot(page, "list-phone")


def test_ten_thousand_runs_open_a_page_of_the_newest(served: Served, page: Any) -> None:
	"""The list pages: with 10,000 stored runs, the page opens on the newest 100 at most, and
	offers the older ones (the time it took is printed; speed is the benchmarks' to judge, not a
	test's: a loaded machine failed a 1 s limit)."""
	rows = [
		{
			"run_id": f"big{i:05d}",
			"agent": f"Agent{i % 7}",
			"status": "success",
			"started": _iso(10_000 - i),
			"input": f"job {i}",
		}
		for i in range(10_000)
	]
	seed_runs(served.store_path, rows)
	began = time.perf_counter()
	page.goto(served.viewer.url)
	items = page.locator("[data-testid=run-item]")
	expect(items.first).to_have_attribute("data-run-id", "big09999")
	print(f"\n10,000 stored runs: the list opened in {(time.perf_counter() - began) * 1000:.0f} ms")
	expect(page.locator("#older")).to_be_visible()
	assert 0 < items.count() <= 100
	ids = items.evaluate_all("(els) => els.map((e) => e.dataset.runId)")
	assert ids == [f"big{i:05d}" for i in range(9_999, 9_999 - len(ids), -1)]


def test_overview_export_and_a_direct_link(served: Served, page: Any) -> None:
	"""Tokens and cost per agent and day with a chart; a run's JSON; a link opens one run."""
	today = datetime.now(UTC).replace(hour=12)
	rows = [
		{
			"run_id": f"o{i}",
			"agent": "Billing" if i % 2 else "Support",
			"status": "success",
			"started": (today - timedelta(days=i % 3)).isoformat(),
			"usage": {"input_tokens": 100, "output_tokens": 10, "cost_usd": 0.01},
		}
		for i in range(6)
	]
	rows.append(
		{
			"run_id": "o6.1.0",
			"agent": "Child",
			"status": "success",
			"started": today.isoformat(),
			"usage": {"input_tokens": 999, "output_tokens": 9, "cost_usd": 5.0},
			"trigger": {"kind": "agent", "parent_run_id": "o6"},  # as a nested run records it
		}
	)
	seed_runs(
		served.store_path,
		rows,
		[
			{
				"run_id": "o1",
				"name": "llmOutput",
				"step": 1,
				"time": today.isoformat(),
				"data": {"output": "hi", "usage": {"input_tokens": 100, "output_tokens": 10}},
			}
		],
	)
	page.goto(served.viewer.url)
	page.get_by_test_id("nav-overview").click()
	overview = page.get_by_test_id("overview")
	agents = overview.locator("[data-testid=per-agent-row]")
	expect(agents).to_have_count(2)  # the sub-agent's run is in its caller's totals already
	expect(overview.locator("[data-testid=per-agent-row][data-key=Billing]")).to_contain_text(
		"$0.0300"
	)
	expect(overview.locator("[data-testid=chart-bar]")).to_have_count(14)
	expect(overview.locator("[data-testid=per-day-row]")).to_have_count(3)
	shoot(page, "overview")
	page.set_viewport_size({"width": 390, "height": 844})
	no_horizontal_scroll(page)
	page.set_viewport_size({"width": 1280, "height": 900})
	page.goto(f"{served.viewer.url}#run=o1")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-agent")).to_have_text("Billing")
	link = view.get_by_test_id("run-link").get_attribute("href")
	assert link is not None and link.endswith("#run=o1")
	href = view.get_by_test_id("run-export").get_attribute("href")
	exported = page.evaluate(f"fetch({json.dumps(href)}).then(r => r.json())")
	assert exported["format"] == "openmolt-run/1" and exported["run"]["run_id"] == "o1"
	assert [e["name"] for e in exported["events"]] == ["llmOutput"]
	page.goto(f"http://127.0.0.1:{served.viewer.port}{link}")
	expect(page.get_by_test_id("run-agent")).to_have_text("Billing")
	expect(page.locator("[data-testid=run-item].selected")).to_have_attribute("data-run-id", "o1")


def test_parked_runs_look_parked_and_disabled_buttons_look_disabled(
	served: Served, page: Any
) -> None:
	"""A run parked on an approval of an agent not loaded here: an amber badge, greyed buttons."""
	seed_runs(
		served.store_path,
		[
			{
				"run_id": "parked1",
				"agent": "Elsewhere",
				"status": "approval_required",
				"started": _iso(1),
				"error": "no terminal to decide this call; the run parks",
				"pending": {
					"kind": "approval",
					"step": 1,
					"calls": [
						{"index": 0, "call": "tool:1:0:local.refund", "tool": "local.refund"}
					],
					"commands": [
						{"type": "callTool", "tool": "local.refund", "input": {"amount": 5}}
					],
				},
			}
		],
	)
	page.goto(f"{served.viewer.url}#run=parked1")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-parked")).to_contain_text("local.refund")
	expect(view.get_by_test_id("run-error")).to_have_count(0)
	card = page.get_by_test_id("approval")
	approve = card.get_by_test_id("approve")
	expect(approve).to_be_disabled()
	assert float(approve.evaluate("b => getComputedStyle(b).opacity")) < 0.6
	assert approve.evaluate("b => getComputedStyle(b).cursor") == "not-allowed"
	status = view.get_by_test_id("run-status")
	grey = page.evaluate(
		"getComputedStyle(document.documentElement).getPropertyValue('--line').trim()"
	)
	background = status.evaluate("b => getComputedStyle(b).backgroundColor")
	assert background != "rgb(226, 226, 224)" and grey == "#e2e2e0"  # amber, not the grey
	shoot(page, "parked")


def test_a_run_a_capability_parked_shows_what_it_waits_for_and_its_request(
	served: Served, page: Any
) -> None:
	"""Parked by a capability (any status): listed as waiting with its request; an amber badge."""
	seed_runs(
		served.store_path,
		[
			{
				"run_id": "held1",
				"agent": "Elsewhere",
				"status": "authorization_required",
				"started": _iso(1),
				"error": "the hold desk checks it",
				"pending": {
					"kind": "capability",
					"step": 1,
					"calls": [
						{
							"index": 0,
							"tool": "local.refund",
							"by": "hold-desk",
							"message": "the hold desk checks it",
							"request": {"ticket": 7},
							"status": "authorization_required",
						}
					],
					"commands": [
						{"type": "callTool", "tool": "local.refund", "input": {"amount": 5}}
					],
				},
			}
		],
	)
	page.goto(f"{served.viewer.url}#run=held1")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-parked")).to_contain_text("local.refund (held by hold-desk)")
	expect(view.get_by_test_id("run-error")).to_have_count(0)
	card = page.locator("[data-testid=question][data-question-id='parked:held1:0']")
	expect(card.get_by_test_id("question-message")).to_contain_text("waits for hold-desk")
	expect(card.get_by_test_id("question-request")).to_contain_text('"ticket": 7')
	expect(card.get_by_test_id("question-how")).to_contain_text("agent.resume(state, given=")
	expect(card.get_by_test_id("answer-send")).to_have_count(0)  # the application resumes it
	status = view.get_by_test_id("run-status")
	background = status.evaluate("b => getComputedStyle(b).backgroundColor")
	assert background == "rgb(251, 239, 213)"  # amber, as every parked run


def test_taint_and_a_capabilitys_own_events_show_in_their_step(served: Served, page: Any) -> None:
	"""Events the page has no view of (taint, a third party's) still show, as notes of their step."""
	from dataclasses import dataclass
	from typing import ClassVar

	from openmolt_core.events import Event
	from openmolt_core.hooks import Capability, Run
	from openmolt_core.tools import tool

	@dataclass(slots=True, kw_only=True)
	class Budgeted(Event):
		name: str = "acme:budget"
		left: int = 0

	class Budget(Capability):
		name: ClassVar[str] = "acme-budget"
		events: ClassVar[dict[str, type[Event]]] = {"acme:budget": Budgeted}

		async def before_model(self, run: Run) -> None:
			if run.wants("acme:budget"):
				await run.emit(Budgeted(agent=run.agent, step=run.step + 1, left=42))
			else:
				run.skip_event()

	@tool(labels=["untrusted"])
	def read_page() -> str:
		"""Read a web page."""
		return "someone else wrote this"

	model = ScriptedModel([call_tool("local.read_page"), finish("read")])
	agent = served.om.create_agent(
		name="Noted", model=model, tools=[read_page], capabilities=[Budget()]
	)
	result = served.call(agent.run, "read it")
	view = _open_run(page, served, result.state.run_id)
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	first = view.locator("[data-testid=step][data-step='1']")
	budget = first.locator("[data-testid=note-event][data-event='acme:budget']")
	expect(budget).to_contain_text('"left": 42')
	expect(first.locator("[data-testid=note-event][data-event=taint]")).to_contain_text(
		"local.read_page"
	)
	expect(view.locator("[data-testid=note-event][data-event='acme:budget']")).to_have_count(2)
