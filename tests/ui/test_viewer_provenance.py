"""A run's whole story in a real browser: what it cost (partly unpriced, or nothing), a run that
never started, where its untrusted content came from (its trigger, its long-term memory, a file
read back) or why it started clean, and the trigger that started it; text from outside in each of
those fields stays text (HTML, script, bidi and control characters, very long values).

Each test saves a screenshot of the page it checks under ``.artifacts/ui/`` (see conftest).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import expect

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish, update_memory
from openmolt_core.tools import LabelledResult
from openmolt_serve._launch import record_unstarted, run_trigger

from .conftest import Served, no_horizontal_scroll, seed_runs, shoot

pytestmark = [pytest.mark.xdist_group("browser")]

EVIL = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
BIDI = "\u202egnp.exe\u2066\u0007\u009b"
"""A right-to-left override (the text after it reads backwards), an isolate, BEL and a C1 CSI."""
SECRET = "hk-live-7f3a9c2e5b1d4f6a8c0e"


def _inert(page: Any, problems: list[str]) -> None:
	"""Nothing of EVIL ran or became an element, and no bidi or control character is raw text."""
	page.wait_for_timeout(300)
	assert page.evaluate("window.pwned") is None
	assert page.locator("#run img, #run script, #runs img, #runs script").count() == 0
	text = page.locator("body").inner_text()
	for char in "\u202e\u2066\u0007\u009b":
		assert char not in text, f"U+{ord(char):04X} is shown raw"
	assert "\\u202e" in text  # shown, as its escape
	assert problems == []


def test_partial_unpriced_and_no_cost_read_right_everywhere(served: Served, page: Any) -> None:
	"""'$0.2500+ (1 call unpriced)' in the list, the run, the overview and the daily sums; a run
	that made no model call costs 'none', one whose calls had no price 'unknown'."""
	now = datetime.now(UTC).replace(hour=12).isoformat()
	usage = {"input_tokens": 100, "output_tokens": 10, "calls": 2}
	seed_runs(
		served.store_path,
		[
			{
				"run_id": "partial",
				"agent": "Partial",
				"status": "success",
				"started": now,
				"usage": {**usage, "cost_usd": 0.25, "unpriced_calls": 1},
			},
			{
				"run_id": "priced",
				"agent": "Priced",
				"status": "success",
				"started": now,
				"usage": {**usage, "cost_usd": 0.5},
			},
			{
				"run_id": "unpriced",
				"agent": "Unpriced",
				"status": "success",
				"started": now,
				"usage": {**usage, "cost_usd": None, "unpriced_calls": 2},
			},
		],
	)
	store = served.viewer.store
	assert store is not None
	written = served.call(
		functools.partial(
			store.not_started,
			"nothing",
			"Nothing",
			input="hi",
			trigger={"kind": "webhook"},
			error="the run did not start: down",
		)
	)
	assert written
	page.goto(served.viewer.url)
	items = page.get_by_test_id("runs")
	for run_id, said in (
		("partial", "$0.2500+ (1 call unpriced)"),
		("priced", "$0.5000"),
		("unpriced", "cost unknown (2 calls unpriced)"),
	):
		expect(items.locator(f"[data-run-id={run_id}]")).to_contain_text(said)
	expect(items.locator("[data-run-id=nothing]")).not_to_contain_text("$")
	expect(items.locator("[data-run-id=nothing]")).not_to_contain_text("unknown")
	view = page.get_by_test_id("run-view")
	for run_id, said in (
		("partial", "$0.2500+ (1 call unpriced)"),
		("unpriced", "unknown (2 calls unpriced)"),
		("nothing", "none"),
	):
		items.locator(f"[data-run-id={run_id}]").click()
		expect(view.get_by_test_id("run-cost")).to_have_text(said)
	page.get_by_test_id("nav-overview").click()
	overview = page.get_by_test_id("overview")
	for agent, said in (
		("Partial", "$0.2500+ (1 call unpriced)"),
		("Priced", "$0.5000"),
		("Unpriced", "unknown (2 calls unpriced)"),
		("Nothing", "none"),
	):
		row = overview.locator(f"[data-testid=per-agent-row][data-key={agent}]")
		expect(row.get_by_test_id("row-cost")).to_have_text(said)
	day = overview.locator("[data-testid=per-day-row]")
	expect(day.get_by_test_id("row-cost")).to_have_text("$0.7500+ (3 calls unpriced)")
	bar = overview.locator(f"[data-testid=chart-bar][data-day='{now[:10]}'] title")
	expect(bar).to_have_text(f"{now[:10]}: $0.7500+ (3 calls unpriced)")
	shoot(page, "overview-partial-cost")


def test_a_run_that_did_not_start_is_listed_with_why_masked_and_inert(
	served: Served, page: Any
) -> None:
	"""A webhook's run that failed before it started: listed as an error, its page says why (the
	secret masked), that no step ran, and where it came from; hostile text stays text."""
	hooks = OpenMolt(entry_points=False, run_store=served.store_path, secrets={"HOOK": SECRET})
	agent = hooks.create_agent(name="Triage", model=ScriptedModel([finish("never")]))
	sender = f"{EVIL}{BIDI}" + "s" * 20_000
	error = RuntimeError(f"the session store refused token {SECRET}: {EVIL}{BIDI}")
	served.call(
		functools.partial(
			record_unstarted,
			agent,
			"unstarted-1",
			{"text": f"{EVIL}{BIDI}", "token": SECRET},
			error,
			trigger="webhook",
			where="Triage",
			sender=sender,
		)
	)
	problems: list[str] = []
	page.on("pageerror", lambda e: problems.append(str(e)))
	page.goto(f"{served.viewer.url}#run=unstarted-1")
	item = page.locator("[data-testid=run-item][data-run-id=unstarted-1]")
	expect(item).to_have_attribute("data-status", "error")
	expect(item).to_contain_text("webhook")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("error")
	expect(view.get_by_test_id("run-error")).to_contain_text("the run did not start")
	expect(view.get_by_test_id("run-error")).to_contain_text("<img src=x")
	expect(view.get_by_test_id("no-steps")).to_contain_text("did not start")
	expect(view).not_to_contain_text("Waiting for the model")
	expect(view.get_by_test_id("run-origin")).to_contain_text("webhook · where Triage")
	assert SECRET not in page.content()
	_inert(page, problems)
	page.set_viewport_size({"width": 390, "height": 844})
	no_horizontal_scroll(page)
	shoot(page, "run-not-started")
	served.call(hooks.aclose)


def _notes(value: Any) -> FunctionTool:
	"""A private reader whose result says it is untrusted (a file a tainted run wrote)."""

	def read(i: Any, c: Any) -> Any:
		return LabelledResult(value, ("untrusted",))

	return FunctionTool(
		handle="read", description="Read a file.", function=read, labels=["private"]
	)


def test_where_a_runs_untrusted_content_came_from_and_why_one_started_clean(
	served: Served, page: Any
) -> None:
	"""A webhook's run starts tainted by its input, another by its long-term memory, a file read
	back marks its call; a vouched webhook's and a trusted chat user's runs say why they are clean."""
	problems: list[str] = []
	page.on("pageerror", lambda e: problems.append(str(e)))

	def agent(name: str, *replies: Any, **options: Any) -> Any:
		model = ScriptedModel([*replies, finish("done")])
		return served.om.create_agent(name=name, model=model, tools=[_notes(EVIL)], **options)

	def trigger(run_id: str, made: Any, **how: Any) -> Any:
		return served.call(functools.partial(run_trigger, made, "go", run_id=run_id, **how))

	tainted = trigger(
		"hook-tainted",
		agent("Hooked", call_tool("local.read")),
		trigger="webhook",
		where="Triage",
		sender=f"{EVIL}{BIDI}",
	)
	assert tainted.state.taint[0]["call"] == "input", tainted.state.taint
	vouched = trigger(
		"hook-vouched", agent("Vouched"), trigger="webhook", where="Ours", vouched=True
	)
	assert not vouched.state.tainted
	chat = trigger(
		"chat-trusted",
		agent("Chatty"),
		trigger="chat",
		where="telegram:Support",
		sender="42",
		trusted=["42"],
	)
	assert not chat.state.tainted
	memory = {"longTerm": {"data": ""}}
	wrote = trigger(
		"mem-1",
		agent(
			"Memo",
			call_tool("local.read"),
			update_memory("remember", memory="longTerm", mode="replace"),
			memory=memory,
		),
		trigger="operator",
	)
	assert wrote.state.tainted
	memory = {"longTerm": {"data": wrote.state.memory["longTerm"]}}
	later = trigger("mem-2", agent("Memo", memory=memory), trigger="operator")
	assert [t["call"] for t in later.state.taint] == ["memory:longTerm"]

	view = page.get_by_test_id("run-view")
	page.goto(f"{served.viewer.url}#run=hook-tainted")
	expect(view.get_by_test_id("run-origin")).to_contain_text("webhook · where Triage · sender")
	expect(view.get_by_test_id("run-taint")).to_contain_text("started tainted")
	expect(view.get_by_test_id("run-taint")).to_contain_text("its input (webhook:Triage:<img")
	call = view.locator("[data-testid=tool-call][data-tool='local.read']")
	expect(call).to_have_attribute("data-untrusted", "true")  # the file read back said untrusted
	expect(view.get_by_test_id("run-taint")).to_contain_text("1 call's result")
	_inert(page, problems)
	shoot(page, "run-tainted-by-trigger")

	page.goto(f"{served.viewer.url}#run=hook-vouched")
	expect(view.get_by_test_id("run-agent")).to_have_text("Vouched")
	expect(view.get_by_test_id("run-taint")).to_contain_text("started clean")
	expect(view.get_by_test_id("run-taint")).to_contain_text("trustPayload")
	page.goto(f"{served.viewer.url}#run=chat-trusted")
	expect(view.get_by_test_id("run-agent")).to_have_text("Chatty")
	expect(view.get_by_test_id("run-taint")).to_contain_text("allowedUsers")

	page.goto(f"{served.viewer.url}#run=mem-2")
	expect(view.get_by_test_id("run-agent")).to_have_text("Memo")
	expect(view.get_by_test_id("run-taint")).to_contain_text("the agent's long-term memory")
	note = view.locator("[data-testid=note-event][data-event=taint]")
	expect(note).to_contain_text("the agent's long-term memory")
	expect(note).not_to_contain_text("the result of")
	shoot(page, "run-tainted-by-memory")
	page.goto(f"{served.viewer.url}#run=mem-1")
	expect(view.get_by_test_id("run-agent")).to_have_text("Memo")
	expect(view.get_by_test_id("run-taint")).to_contain_text("tainted by 1 call's result")


def test_a_run_an_mcp_client_parked_says_the_client_decides_it(served: Served, page: Any) -> None:
	"""Parked for approval by an MCP-served agent: the page says the client's user decides it,
	not that this agent's file must be loaded."""
	now = datetime.now(UTC).isoformat()
	call = {"type": "callTool", "tool": "local.refund", "input": {"order": "A1"}}
	seed_runs(
		served.store_path,
		[
			{
				"run_id": "mcp-parked",
				"agent": "Helper",
				"status": "approval_required",
				"started": now,
				"trigger": {"kind": "mcp", "where": "Helper"},
				"pending": {
					"kind": "approval",
					"step": 1,
					"commands": [call],
					"calls": [
						{"index": 0, "call": "tool:1:0:local.refund", "tool": "local.refund"}
					],
				},
			}
		],
	)
	page.goto(f"{served.viewer.url}#run=mcp-parked")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-origin")).to_contain_text("mcp · where Helper")
	expect(view.get_by_test_id("run-parked-how")).to_contain_text("The MCP client")
	card = page.locator("[data-testid=approval][data-tool='local.refund']")
	expect(card.get_by_test_id("approve")).to_be_disabled()
	expect(card.get_by_test_id("approval-how")).to_contain_text("The MCP client")
	shoot(page, "run-parked-by-mcp")
