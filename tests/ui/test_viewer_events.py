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
	menu = set(origins.evaluate_all("options => options.map(o => o.value)"))
	assert (set(TRIGGER_KINDS) - {"operator"}) | {"cli", "api", "agent"} <= menu
	assert "operator" not in menu  # no run records it: code's runs say api or cli
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


def test_every_call_the_model_asked_for_shows_with_what_happened_to_it(
	served: Served, page: Any
) -> None:
	"""A refused call, one a capability held back, and the events that name a call sit in it.

	An ``error`` about a call (a capability refused it, it failed) sits in that call too (its
	``call`` key), not loose in the step.
	"""
	from typing import ClassVar

	from openmolt_core.guardrails import GuardrailCheck, Verdict, guardrail, refuse
	from openmolt_core.hooks import PROCEED, Capability, Refuse, Run, ToolDecision
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=[])
	def send(to: str, text: str) -> str:
		"""Send a message.

		Args:
			to: The address.
			text: The text.
		"""
		return "sent"

	@tool(labels=[])
	def wipe() -> str:
		"""Wipe the disk."""
		return "wiped"

	@tool(labels=["untrusted"])
	def read_page() -> str:
		"""Read a web page."""
		return "someone else wrote this"

	@tool(labels=[])
	def backup() -> str:
		"""Back the disk up."""
		raise RuntimeError("the tape is full")

	@guardrail("tool_call", name="no_secrets")
	def no_secrets(check: GuardrailCheck) -> Verdict | None:
		return refuse("no secrets leave") if "secret" in str(check.value) else None

	class Lock(Capability):
		name: ClassVar[str] = "lock"

		async def before_tool(self, run: Run, call: Any, spec: Any) -> ToolDecision:
			return Refuse("the disk is locked") if call.tool == "local.wipe" else PROCEED

	model = ScriptedModel(
		[
			[
				call_tool("local.send", to="eve", text="the secret"),
				call_tool("local.send", to="bob", text="hello"),
				call_tool("local.wipe"),
			],
			[call_tool("local.read_page"), call_tool("local.backup")],
			finish("done"),
		]
	)
	agent = served.om.create_agent(
		name="Careful",
		model=model,
		tools=[send, wipe, read_page, backup],
		guardrails=[no_secrets],
		capabilities=[Lock()],
	)
	result = served.call(agent.run, "send both")
	assert result.status == "success"
	page.goto(f"{served.viewer.url}#run={result.state.run_id}")
	view = page.get_by_test_id("run-view")
	first = view.locator("[data-testid=step][data-step='1']")
	sends = first.locator("[data-testid=tool-call][data-tool='local.send']")
	expect(sends).to_have_count(2)
	expect(sends.nth(0)).to_have_attribute("data-status", "refused")
	expect(sends.nth(0).get_by_test_id("tool-input")).to_contain_text("the secret")
	expect(sends.nth(0).get_by_test_id("note-guardrail")).to_contain_text(
		"guardrail no_secrets refused it (tool call): no secrets leave"
	)
	expect(sends.nth(1)).to_have_attribute("data-status", "ok")
	expect(sends.nth(1).get_by_test_id("tool-input")).to_contain_text("hello")
	wiped = first.locator("[data-testid=tool-call][data-tool='local.wipe']")
	expect(wiped).to_have_attribute("data-status", "not_run")
	expect(wiped.get_by_test_id("note-error")).to_contain_text("the disk is locked")
	expect(first.locator(":scope > [data-testid=note-error]")).to_have_count(0)
	read = view.locator("[data-testid=tool-call][data-tool='local.read_page']")
	expect(read.locator("[data-testid=note-event][data-event=taint]")).to_have_count(1)
	backed = view.locator("[data-testid=tool-call][data-tool='local.backup']")
	expect(backed).to_have_attribute("data-status", "failed")
	expect(backed.get_by_test_id("note-error")).to_contain_text("the tape is full")
	shoot(page, "every-call")


def test_a_verdict_on_a_failed_calls_error_says_so(served: Served, page: Any) -> None:
	"""A result guardrail's verdict on a failed call's error names the error, in that call.

	It read "rewrote it (tool result)" beside a failed call, as if a result had been judged.
	"""
	from openmolt_core.guardrails import GuardrailCheck, Verdict, guardrail, rewrite
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=[])
	def backup() -> str:
		"""Back the disk up."""
		raise RuntimeError("the tape is full")

	@guardrail("tool_result", name="plain_words")
	def plain_words(check: GuardrailCheck) -> Verdict | None:
		return rewrite("the backup failed") if "tape" in str(check.value) else None

	agent = served.om.create_agent(
		name="Backer",
		model=ScriptedModel([call_tool("local.backup"), finish("done")]),
		tools=[backup],
		guardrails=[plain_words],
	)
	result = served.call(agent.run, "back up")
	assert result.status == "success"
	page.goto(f"{served.viewer.url}#run={result.state.run_id}")
	backed = page.locator("[data-testid=tool-call][data-tool='local.backup']")
	expect(backed).to_have_attribute("data-status", "failed")
	verdict = backed.locator("[data-testid=note-guardrail][data-judged=error]")
	expect(verdict).to_contain_text("guardrail plain_words rewrote the call's error (tool result)")


def test_untrusted_results_are_marked_and_shown_as_text(served: Served, page: Any) -> None:
	"""Every call whose result was untrusted is marked (not only the first), live and stored alike."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	hostile = (
		'<img src=x onerror="document.title=\'owned\'"><script>document.title="owned"</script>'
	)

	@tool(labels=["untrusted"])
	def read_page(url: str) -> str:
		"""Read a web page.

		Args:
			url: The page.
		"""
		return f"{url}: {hostile}"

	@tool(labels=[])
	def note(text: str) -> str:
		"""Keep a note.

		Args:
			text: The note.
		"""
		return "kept"

	def script() -> ScriptedModel:
		return ScriptedModel(
			[
				call_tool("local.read_page", url="a"),
				[call_tool("local.note", text="read a"), call_tool("local.read_page", url="b")],
				finish("read"),
			]
		)

	elsewhere = OpenMolt(entry_points=False, run_store=served.store_path)  # another process
	stored = served.call(
		elsewhere.create_agent(name="Reader", model=script(), tools=[read_page, note]).run, "go"
	)
	live = served.call(
		served.om.create_agent(name="Reader", model=script(), tools=[read_page, note]).run, "go"
	)
	for result in (stored, live):
		page.goto(f"{served.viewer.url}#run={result.state.run_id}")
		view = page.get_by_test_id("run-view")
		expect(view.get_by_test_id("run-status")).to_have_text("success")
		reads = view.locator("[data-testid=tool-call][data-tool='local.read_page']")
		expect(reads).to_have_count(2)
		for n in range(2):
			expect(reads.nth(n)).to_have_attribute("data-untrusted", "true")
			expect(reads.nth(n).get_by_test_id("untrusted")).to_contain_text("untrusted")
			expect(reads.nth(n).get_by_test_id("tool-output")).to_contain_text("<script>")
		notes = view.locator("[data-testid=tool-call][data-tool='local.note']")
		expect(notes).not_to_have_attribute("data-untrusted", "true")
		assert view.locator("img, script").count() == 0
		assert page.title() != "owned"
	shoot(page, "untrusted")
	served.call(elsewhere.aclose)


def test_a_long_value_is_cut_with_a_button_that_shows_it_whole(served: Served, page: Any) -> None:
	"""A 200,000-character tool output shows its start; 'Show all' shows it whole, and it stays."""
	big = "word " * 40_000
	seed_runs(
		served.store_path,
		[{"run_id": "long1", "agent": "Reader", "status": "success", "started": _iso(1)}],
		[
			{
				"run_id": "long1",
				"name": "commandsQueued",
				"time": _iso(1),
				"data": {"commands": [{"type": "callTool", "tool": "web.fetch", "input": {}}]},
			},
			{
				"run_id": "long1",
				"name": "tool:call",
				"time": _iso(1),
				"data": {"tool": "web.fetch", "input": {}},
			},
			{
				"run_id": "long1",
				"name": "tool:response",
				"time": _iso(1),
				"data": {"tool": "web.fetch", "input": {}, "response": big, "duration": 0.1},
			},
		],
	)
	page.goto(f"{served.viewer.url}#run=long1")
	call = page.locator("[data-testid=tool-call][data-tool='web.fetch']")
	output = call.get_by_test_id("tool-output")
	expect(output).to_have_attribute("data-cut", "true")
	assert len(output.inner_text()) < 5_000
	more = call.get_by_test_id("show-all")
	expect(more).to_contain_text("Show all 200,002 characters")
	more.click()
	expect(output).not_to_have_attribute("data-cut", "true")
	assert len(output.text_content() or "") == len(big) + 2  # the JSON string's quotes
	page.evaluate("renderRun()")  # a new event redraws the run: what was opened stays open
	expect(call.get_by_test_id("show-all")).to_have_count(0)
	assert len(call.get_by_test_id("tool-output").text_content() or "") == len(big) + 2
	shoot(page, "long-value")


def test_a_sub_agent_waiting_for_a_person_shows_its_callers_run_waiting(
	served: Served, page: Any
) -> None:
	"""A sub-agent's call and question wait in the page: the run in the list says it waits."""
	from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=[])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: Cents.
		"""
		return "paid"

	child = served.om.create_agent(
		name="Payer",
		model=ScriptedModel([call_tool("local.pay", amount=5), ask_human("Sure?"), finish("paid")]),
		tools=[pay],
		requires_approval=["local.pay"],
		on_approval_request=served.viewer.approve,
		on_human_input_request=served.viewer.ask,
	)
	parent = served.om.create_agent(
		name="Boss",
		model=ScriptedModel([call_tool("local.Payer", task="pay 5"), finish("done")]),
		tools=[child],
	)
	run = served.start(parent.run, "pay")
	page.goto(served.viewer.url)
	item = page.locator("[data-testid=run-item]")
	card = page.get_by_test_id("approval")
	expect(card).to_have_count(1)
	expect(item).to_have_attribute("data-status", "waiting")
	top = item.get_attribute("data-run-id")
	expect(card.get_by_test_id("asked-in")).to_have_attribute("data-run-id", top or "")
	expect(card.get_by_test_id("asked-in")).to_contain_text("Boss's run, by a sub-agent")
	card.get_by_test_id("approve").click()
	question = page.get_by_test_id("question")
	expect(question).to_have_count(1)
	expect(item).to_have_attribute("data-status", "waiting")
	question.get_by_test_id("asked-in").click()
	expect(page.get_by_test_id("run-agent")).to_have_text("Boss")
	expect(page.get_by_test_id("run-status")).to_have_text("waiting")
	question.get_by_test_id("answer-input").fill("yes")
	question.get_by_test_id("answer-send").click()
	assert run.result(timeout=15).status == "success"
	expect(item).to_have_attribute("data-status", "success")
	shoot(page, "sub-agent-waits")


def test_every_event_the_project_names_is_shown_and_none_breaks_the_page(
	served: Served, page: Any
) -> None:
	"""Each event name (and a capability's unknown one) shows in its step, odd data or not.

	Nothing goes wrong in the page either: no script error, no failed request (not even the
	browser's own request for an icon, which has no token to carry).
	"""
	from openmolt_core.events import STREAM_EVENTS

	# previews are never stored; the registry's names: the loop's and every capability's
	names = [*sorted(registered_events() - STREAM_EVENTS), "acme:audited"]
	odd = {"plan": 5, "commands": 5, "request": 5, "usage": 5, "result": 5, "call": 5}
	runs = (("plain", None), ("odd", odd), ("hostile", hostile_data()))
	for run_id, data in runs:
		seed_runs(
			served.store_path,
			[{"run_id": run_id, "agent": "Everything", "status": "success", "started": _iso(1)}],
			[
				{
					"run_id": run_id,
					"name": name,
					"step": n + 1,
					"time": _iso(1),
					"data": data or {"about": f"{name} happened"},
				}
				for n, name in enumerate(names)
			],
		)
	problems: list[str] = []
	page.on("pageerror", lambda error: problems.append(str(error)))
	page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
	for run_id, _ in runs:
		page.goto(f"{served.viewer.url}#run={run_id}")
		view = page.get_by_test_id("run-view")
		expect(view.get_by_test_id("run-agent")).to_have_text("Everything")
		expect(view.get_by_test_id("run-unreadable")).to_have_count(0)
		for n, name in enumerate(names):
			if name in ("planUpdate", "finish"):  # the run's plan and end, not a step's
				continue
			shown = view.locator(f"[data-testid=step][data-step='{n + 1}'] > :not(.head)")
			expect(shown, f"{name} is not shown in its step ({run_id})").not_to_have_count(0)
		unknown = view.locator("[data-testid=note-event][data-event='acme:audited']")
		expect(unknown).to_contain_text("acme:audited")
	shoot(page, "every-event")
	assert problems == []
	assert page.evaluate("window.pwned") is None  # the hostile run's text stayed text
	assert page.locator("#run img, #run svg, #run script, #run iframe").count() == 0
	hrefs = page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
	assert not any(h and h.lower().startswith("javascript:") for h in hrefs)


EVIL = '<img src=x onerror="window.pwned=1"><script>window.pwned=1</script>\u202e\u0007'


def hostile_data() -> dict[str, Any]:
	"""An event's data whose every field a view reads is attacker text (HTML, bidi, long)."""
	text = EVIL + "x" * 20_000
	item = {"name": EVIL, "status": EVIL, "notes": EVIL, "subSteps": [{"name": EVIL}]}
	return {
		**{k: EVIL for k in ("tool", "message", "reason", "guardrail", "stage", "action", "kind")},
		**{k: EVIL for k in ("memory", "mode", "field", "from_model", "to_model", "model")},
		**{k: EVIL for k in ("schedule_id", "version", "current", "worker", "through_step")},
		"output": text,
		"data": text,
		"response": {"html": EVIL, "link": "javascript:window.pwned=1"},
		"input": {"to": EVIL},
		"call": f"tool:1:0:{EVIL}",
		"error": EVIL,
		"files": [EVIL],
		"tokens_before": EVIL,
		"tokens_after": EVIL,
		"plan": [item],
		"commands": [{"type": EVIL}, {"type": "callTool", "tool": EVIL, "input": {"a": EVIL}}],
		"request": {
			"tool": EVIL,
			"user": EVIL,
			"integration": EVIL,
			"scopes": [EVIL],
			"url": "javascript:window.pwned=1",
			"reason": EVIL,
			"input": {"a": EVIL},
		},
		"record": {"due": EVIL, "status": EVIL, "error": EVIL, "note": EVIL},
		"result": {"status": EVIL, "plan": [item]},
		"usage": {"input_tokens": EVIL, "cost_usd": EVIL},
	}


def registered_events() -> set[str]:
	"""Every event name the project registers: the loop's, and each capability class's.

	The capabilities of the core and of the installed extras are imported, then every
	`Capability` subclass's ``events`` is read: a capability added with an event of its own is
	in the family without a hand list.
	"""
	import importlib
	import pkgutil

	from openmolt_core.events import EVENT_NAMES
	from openmolt_core.hooks import Capability

	for package in ("openmolt_core.capabilities", "openmolt_serve", "openmolt_dbos"):
		module = importlib.import_module(package)
		for found in pkgutil.iter_modules(module.__path__):
			importlib.import_module(f"{package}.{found.name}")
	for package in ("openmolt_mcp", "openmolt_otel", "openmolt_core.subagents"):
		importlib.import_module(package)
	names = set(EVENT_NAMES)
	stack = list(Capability.__subclasses__())
	while stack:
		cls = stack.pop()
		stack.extend(cls.__subclasses__())
		names |= set(cls.events)
	return names


def test_a_durable_runs_replayed_events_are_shown_once(served: Served, page: Any) -> None:
	"""Recovered from a crash, a durable run delivers its events again: each call shows once."""

	def event(
		seq: int, name: str, data: dict[str, Any], *, replayed: bool = False
	) -> dict[str, Any]:
		return {
			"run_id": "durable1",
			"seq": seq,
			"name": name,
			"time": _iso(1),
			"data": {**data, "replayed": replayed},
		}

	call = {"type": "callTool", "tool": "crm.update", "input": {"id": 7}}
	before = [
		event(1, "llmOutput", {"output": "{}", "usage": {"input_tokens": 10, "output_tokens": 5}}),
		event(2, "commandsQueued", {"commands": [call]}),
		event(3, "tool:call", {"tool": "crm.update", "input": {"id": 7}}),
		event(4, "tool:response", {"tool": "crm.update", "input": {}, "response": "updated"}),
	]
	again = [event(e["seq"], e["name"], e["data"], replayed=True) for e in before]
	seed_runs(
		served.store_path,
		[{"run_id": "durable1", "agent": "Durable", "status": "success", "started": _iso(1)}],
		[*before, *again, event(5, "finish", {"result": {"status": "success"}})],
	)
	page.goto(f"{served.viewer.url}#run=durable1")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-agent")).to_have_text("Durable")
	calls = view.locator("[data-testid=tool-call]")
	expect(calls).to_have_count(1)
	expect(calls.first).to_have_attribute("data-status", "ok")
	expect(view.get_by_test_id("model-call")).to_have_count(1)


def test_a_cancelled_run_says_so_and_its_call_in_flight_stops_with_it(
	served: Served, page: Any
) -> None:
	"""The call running when the run was cancelled is interrupted; its bar does not grow on."""
	import anyio

	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	started: list[anyio.Event] = []

	@tool(labels=[])
	async def slow() -> str:
		"""Take a minute."""
		started[0].set()
		await anyio.sleep(60)
		return "done"

	agent = served.om.create_agent(
		name="Stopped", model=ScriptedModel([call_tool("local.slow"), finish("done")]), tools=[slow]
	)

	async def cancelled() -> None:
		started.append(anyio.Event())
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run, "go")
			await started[0].wait()  # the call is running: stop the run there
			tg.cancel_scope.cancel()

	served.call(cancelled)
	page.goto(served.viewer.url)
	page.locator("[data-testid=run-item]").first.click()
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("cancelled")
	expect(view.get_by_test_id("run-error")).to_contain_text("Cancelled")
	call = view.locator("[data-testid=tool-call][data-tool='local.slow']")
	expect(call).to_have_attribute("data-status", "interrupted")
	bar = view.locator("[data-testid=bar][data-kind=tool]")
	took = bar.get_by_test_id("bar-duration").inner_text()
	page.wait_for_timeout(1_100)
	page.evaluate("renderRun()")
	expect(bar.get_by_test_id("bar-duration")).to_have_text(took)
	shoot(page, "cancelled")


def test_a_capabilitys_event_says_what_happened_and_who_emits_it(served: Served, page: Any) -> None:
	"""The page names no capability: what an event means and who emits it come from the registry."""
	from dataclasses import dataclass
	from typing import ClassVar

	from openmolt_core.events import Event
	from openmolt_core.hooks import Capability, Run
	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@dataclass(slots=True, kw_only=True)
	class Spent(Event):
		"""The spending desk counted what the step may still spend."""

		name: str = "desk:spent"
		left: int = 0

	class Desk(Capability):
		name: ClassVar[str] = "spending-desk"
		events: ClassVar[dict[str, type[Event]]] = {"desk:spent": Spent}

		async def before_model(self, run: Run) -> None:
			if run.wants("desk:spent"):
				await run.emit(Spent(agent=run.agent, step=run.step + 1, left=7))
			else:
				run.skip_event()

	@tool(labels=["untrusted"])
	def read_page() -> str:
		"""Read a web page."""
		return "someone else wrote this"

	@tool(labels=[])
	def backup() -> str:
		"""Back the disk up."""
		raise RuntimeError("the tape is full")

	agent = served.om.create_agent(
		name="Desk",
		model=ScriptedModel([call_tool("local.read_page"), finish("read")]),
		tools=[read_page],
		capabilities=[Desk()],
	)
	result = served.call(agent.run, "read")
	page.goto(f"{served.viewer.url}#run={result.state.run_id}")
	view = page.get_by_test_id("run-view")
	spent = view.locator("[data-testid=note-event][data-event='desk:spent']").first
	expect(spent.get_by_test_id("event-about")).to_have_text(
		"desk:spent · The spending desk counted what the step may still spend."
		" · by capability spending-desk"
	)
	expect(spent).to_contain_text('"left": 7')
	taint = view.locator("[data-testid=note-event][data-event=taint]")
	expect(taint.get_by_test_id("event-about")).to_contain_text("read untrusted content")
	shoot(page, "capability-event")


def test_a_call_waiting_for_a_decision_when_its_run_stopped_did_not_run(
	served: Served, page: Any
) -> None:
	"""Cancelled while a person was asked: the call says it did not run, not that it waits."""
	import anyio

	from openmolt_core.testing import ScriptedModel, call_tool, finish
	from openmolt_core.tools import tool

	@tool(labels=[])
	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: Cents.
		"""
		return "paid"

	agent = served.om.create_agent(
		name="Unanswered",
		model=ScriptedModel([call_tool("local.pay", amount=5), finish("paid")]),
		tools=[pay],
		requires_approval=["local.pay"],
		on_approval_request=served.viewer.approve,
	)

	async def cancelled() -> None:
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run, "pay")
			live = served.viewer.live
			while not live.approvals.pending:  # the page changes as the call is listed
				await live.changed.wait()
			tg.cancel_scope.cancel()  # nobody decided: the run is stopped

	served.call(cancelled)
	page.goto(served.viewer.url)
	page.locator("[data-testid=run-item]").first.click()
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("cancelled")
	call = view.locator("[data-testid=tool-call][data-tool='local.pay']")
	expect(call).to_have_attribute("data-status", "not_run")
	expect(page.get_by_test_id("approval")).to_have_count(0)


def test_each_models_usage_and_the_verdicts_on_words_for_people(served: Served, page: Any) -> None:
	"""A fallback's run shows each model's part; a verdict on a question, a plan or a call's reason says so.

	The verdict sits with the words it judged (the question's command, the call), labelled with
	them, its reason set as text; a run recorded before the event named the words is read the
	same way; a run of one model shows no table of models.
	"""
	from openmolt import HumanInputUnavailable
	from openmolt_core.guardrails import GuardrailCheck, guardrail, refuse
	from openmolt_core.guardrails.pii import pii_redaction
	from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan

	from .conftest import fallback_models

	hostile = "<img src=x onerror=\"document.title='owned'\">"

	def refund(customer: str) -> str:
		"""Refund a customer.

		Args:
			customer: The customer id.
		"""
		return "refunded"

	def park(question: str) -> str:
		raise HumanInputUnavailable(question)

	@guardrail("output", message=True)
	def no_questions_yet(check: GuardrailCheck) -> Any:
		return refuse(f"not yet {hostile}") if check.field == "message" else None

	om = served.om
	fell = served.call(om.create_agent(name="Fallback", model=fallback_models()).run, "go")
	reason = {**call_tool("local.refund", customer="c1"), "reason": "ada@example.com asked"}
	guarded = served.call(
		om.create_agent(
			name="Guarded",
			model=ScriptedModel(
				[
					reason,
					[update_plan("Email ada@example.com"), ask_human("Is ada@example.com right?")],
				]
			),
			tools=[refund],
			guardrails=[pii_redaction("output", kinds=["email"], message=True)],
			requires_approval=["local.refund"],
			on_approval_request=lambda r: r.approve(),
			on_human_input_request=park,
		).run,
		"go",
	)
	refused = served.call(
		om.create_agent(
			name="Refused",
			model=ScriptedModel([ask_human("May I?"), finish("ok")]),
			guardrails=[no_questions_yet],
			on_human_input_request=lambda q: "yes",
		).run,
		"go",
	)
	assert (fell.status, guarded.status, refused.status) == (
		"success",
		"human_input_required",
		"success",
	)

	page.goto(f"{served.viewer.url}#run={fell.state.run_id}")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	rows = view.locator("[data-testid=usage-by-model] [data-testid=usage-model]")
	expect(rows).to_have_count(2)
	blocked = view.locator("[data-testid=usage-model][data-model='a:m']")
	expect(blocked).to_contain_text("900")
	expect(blocked.get_by_test_id("usage-model-cost")).to_have_text("$0.0090")
	expect(view.get_by_test_id("fallback")).to_contain_text("a:m failed (blocked)")
	shoot(page, "usage-by-model")

	page.goto(f"{served.viewer.url}#run={guarded.state.run_id}")
	expect(view.get_by_test_id("run-status")).to_have_text("human input required")
	expect(view.get_by_test_id("usage-by-model")).to_have_count(0)  # one model: its totals say it
	call = view.locator("[data-testid=tool-call][data-tool='local.refund']")
	expect(call.get_by_test_id("call-reason")).to_have_text("[email] asked")
	on_reason = call.locator("[data-testid=note-guardrail][data-judged=reason]")
	expect(on_reason).to_contain_text(
		"guardrail pii_redaction rewrote the call's reason, for its approver: redacted 1 email"
	)
	asked = view.locator("[data-testid=command][data-type=requestHumanInput]")
	on_question = asked.locator("[data-testid=note-guardrail][data-judged=message]")
	expect(on_question).to_contain_text("guardrail pii_redaction rewrote the question")
	planned = view.locator("[data-testid=command][data-type=updatePlan]")
	on_plan = planned.locator("[data-testid=note-guardrail][data-judged=plan]")
	expect(on_plan).to_contain_text("guardrail pii_redaction rewrote the plan")
	shoot(page, "verdict-on-words")

	page.goto(f"{served.viewer.url}#run={refused.state.run_id}")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	first = view.locator("[data-testid=step][data-step='1']")
	note = first.locator(
		"[data-testid=command][data-type=requestHumanInput] [data-testid=note-guardrail]"
	)
	expect(note).to_have_attribute("data-judged", "message")
	expect(note).to_contain_text(f"no_questions_yet refused the question: not yet {hostile}")
	assert view.locator("img").count() == 0 and page.title() != "owned"

	# a run recorded before the event named the words: read from where the verdict was given
	old = "r-old-verdicts"
	seed_runs(
		served.store_path,
		[{"run_id": old, "agent": "Old", "status": "success", "started": _iso(3)}],
		[
			{
				"run_id": old,
				"name": "commandsQueued",
				"time": _iso(3),
				"data": {
					"commands": [
						{"type": "callTool", "tool": "local.refund", "input": {}},
						{"type": "requestHumanInput", "message": "Which one?"},
					]
				},
			},
			*(
				{
					"run_id": old,
					"name": "guardrail",
					"time": _iso(3),
					"data": {"guardrail": "g", "stage": "output", "action": "rewrite", **at},
				}
				for at in ({"tool": "local.refund", "call": "tool:1:0:local.refund"}, {})
			),
		],
	)
	page.goto(f"{served.viewer.url}#run={old}")
	expect(view.get_by_test_id("run-agent")).to_have_text("Old")
	expect(
		view.locator("[data-testid=tool-call] [data-testid=note-guardrail][data-judged=reason]")
	).to_have_count(1)
	expect(
		view.locator("[data-testid=command] [data-testid=note-guardrail][data-judged=message]")
	).to_have_count(1)
