"""The run viewer in a real browser: a live run, a question, approvals, and the token."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from openmolt_core.errors import ToolError
from openmolt_core.llm import ModelRequest
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan
from openmolt_core.tools import tool
from openmolt_ui import PendingApproval

from .conftest import Served

pytestmark = [pytest.mark.xdist_group("browser")]


def _results(request: ModelRequest) -> list[dict[str, Any]]:
	return json.loads(request.messages[-1].content)["results"]


def test_the_page_shows_a_run_progress_live(served: Served, page: Any) -> None:
	"""Plan, tool call (input, then output), status and tokens appear while the run goes on."""
	gate = served.event()
	seen: dict[str, Any] = {}

	async def fetch_report(city: str) -> dict[str, Any]:
		"""The weather report of a city."""
		seen["city"] = city
		await gate.wait()
		return {"city": city, "forecast": "light rain"}

	model = ScriptedModel(
		[
			[
				update_plan(
					{"name": "Fetch the report", "status": "inProgress"},
					{"name": "Summarize", "status": "pending"},
				),
				call_tool("local.fetch_report", city="Oslo"),
			],
			[
				update_plan(
					{"name": "Fetch the report", "status": "completed"},
					{"name": "Summarize", "status": "completed"},
				),
				finish(summary="Take an umbrella."),
			],
		]
	)
	agent = served.om.create_agent(name="Forecaster", model=model, tools=[fetch_report])
	run = served.start(agent.run, "Weather in Oslo?")
	page.goto(served.viewer.url)
	expect(page.get_by_test_id("connection")).to_have_text("live")
	item = page.locator("[data-testid=run-item]").first
	expect(item).to_have_attribute("data-status", "running")
	item.click()
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-agent")).to_have_text("Forecaster")
	expect(view.get_by_test_id("run-status")).to_have_text("running")
	call = view.locator("[data-testid=tool-call][data-tool='local.fetch_report']")
	expect(call).to_have_attribute("data-status", "running")
	expect(call.get_by_test_id("tool-input")).to_contain_text('"city": "Oslo"')
	plan = view.locator("[data-testid=plan-item]")
	expect(plan.nth(0)).to_have_attribute("data-status", "inProgress")
	expect(plan.nth(1)).to_have_attribute("data-status", "pending")
	expect(view.get_by_test_id("tokens-in")).to_have_text("10")
	assert seen == {"city": "Oslo"}

	served.set(gate)  # the tool returns: the page follows without a reload
	expect(call).to_have_attribute("data-status", "ok")
	expect(call.get_by_test_id("tool-output")).to_contain_text("light rain")
	expect(view.get_by_test_id("run-status")).to_have_text("success")
	expect(plan.nth(0)).to_have_attribute("data-status", "completed")
	expect(view.get_by_test_id("tokens-in")).to_have_text("20")
	expect(view.get_by_test_id("tokens-out")).to_have_text("10")
	expect(view.get_by_test_id("run-output")).to_contain_text("Take an umbrella.")
	expect(view.locator("[data-testid=step]")).to_have_count(2)
	assert run.result(timeout=15).status == "success"


def test_a_person_answers_the_agents_question_in_the_page(served: Served, page: Any) -> None:
	"""The question shows while the run waits; the typed answer reaches the model."""

	def check_answer(request: ModelRequest) -> dict[str, Any]:
		(result,) = _results(request)
		assert result == {"command": "requestHumanInput", "ok": True, "result": "Bergen"}
		return finish(city=result["result"])

	model = ScriptedModel([ask_human("Which city should I check?"), check_answer])
	agent = served.om.create_agent(
		name="Asker", model=model, on_human_input_request=served.viewer.ask
	)
	run = served.start(agent.run, "Check the weather")
	page.goto(served.viewer.url)
	question = page.get_by_test_id("question")
	expect(question.get_by_test_id("question-message")).to_have_text("Which city should I check?")
	expect(page.locator("[data-testid=run-item]").first).to_have_attribute("data-status", "waiting")
	question.get_by_test_id("answer-input").fill("Bergen")
	question.get_by_test_id("answer-send").click()
	expect(page.get_by_test_id("question")).to_have_count(0)
	expect(page.get_by_test_id("run-status")).to_have_text("success")
	expect(page.get_by_test_id("run-output")).to_contain_text("Bergen")
	result = run.result(timeout=15)
	assert result.output == {"city": "Bergen"}
	model.assert_consumed()


def test_a_parked_run_resumes_with_the_answer_given_in_the_page(served: Served, page: Any) -> None:
	"""A run parked on a question (nobody could answer) is resumed from the page."""
	from openmolt_core.agent import HumanInputUnavailable

	def nobody(message: str) -> str:
		raise HumanInputUnavailable("nobody is at the terminal")

	def check_answer(request: ModelRequest) -> dict[str, Any]:
		(result,) = _results(request)
		assert result["result"] == "Tromsø"
		return finish(city=result["result"])

	model = ScriptedModel([ask_human("Which city?"), check_answer])
	agent = served.om.create_agent(name="Parker", model=model, on_human_input_request=nobody)
	parked = served.call(agent.run, "Check the weather")
	assert parked.status == "human_input_required"
	page.goto(served.viewer.url)
	question = page.locator("[data-testid=question][data-question-id^='parked:']")
	expect(question.get_by_test_id("question-message")).to_have_text("Which city?")
	question.get_by_test_id("answer-input").fill("Tromsø")
	question.get_by_test_id("answer-send").click()
	expect(page.get_by_test_id("question")).to_have_count(0)
	item = page.locator(f"[data-testid=run-item][data-run-id='{parked.state.run_id}']")
	expect(item).to_have_attribute("data-status", "success")
	model.assert_consumed()


def _gated(served: Served, calls: list[int]) -> Any:
	"""A test double of the loop's approval gate: the tool asks the page before it runs.

	The approvals helper's handler (issue 18 part 1) will call `Viewer.request_approval` the same
	way, with the pending call the loop holds.
	"""

	@tool(labels=["outbound"])  # money moves out; nothing private read, nothing others wrote
	async def refund(amount: int) -> dict[str, Any]:
		"""Refund an amount to the customer."""
		decision = await served.viewer.request_approval(
			PendingApproval(tool="local.refund", input={"amount": amount}, reason="money moves")
		)
		if not decision.approved:
			raise ToolError(f"denied by a person: {decision.reason}", tool="local.refund")
		final = dict(decision.input or {"amount": amount})
		calls.append(final["amount"])
		return {"refunded": final["amount"]}

	return refund


def test_a_person_approves_edits_and_denies_tool_calls(served: Served, page: Any) -> None:
	"""Approve as is, approve with an edited input, deny with a reason: the model reads each."""
	calls: list[int] = []

	def check(request: ModelRequest) -> dict[str, Any]:
		results = _results(request)
		assert results[0] == {"tool": "local.refund", "ok": True, "result": {"refunded": 5}}
		assert results[1] == {"tool": "local.refund", "ok": True, "result": {"refunded": 40}}
		assert results[2]["ok"] is False
		assert "denied by a person: far too much" in results[2]["error"]
		return finish(done=True)

	# the three calls come in one reply: they wait for their decisions side by side
	model = ScriptedModel(
		[
			[
				call_tool("local.refund", amount=5),
				call_tool("local.refund", amount=50),
				call_tool("local.refund", amount=5000),
			],
			check,
		]
	)
	agent = served.om.create_agent(name="Refunder", model=model, tools=[_gated(served, calls)])
	run = served.start(agent.run, "Refund the customer")
	page.goto(served.viewer.url)
	approvals = page.get_by_test_id("approval")
	expect(approvals).to_have_count(3)
	ids = {
		json.loads(approvals.nth(i).get_by_test_id("approval-input").input_value())[
			"amount"
		]: approvals.nth(i).get_attribute("data-approval-id")
		for i in range(3)
	}
	first, second, third = (
		page.locator(f"[data-testid=approval][data-approval-id='{ids[a]}']") for a in (5, 50, 5000)
	)
	expect(first.get_by_test_id("approval-tool")).to_have_text("local.refund")
	expect(first.get_by_test_id("approval-why")).to_have_text("money moves")
	first.get_by_test_id("approve").click()
	expect(approvals).to_have_count(2)
	second.get_by_test_id("approval-input").fill('{"amount": 40}')
	second.get_by_test_id("approve-edited").click()
	expect(approvals).to_have_count(1)
	third.get_by_test_id("deny").click()  # no reason: refused, the call still waits
	expect(third.get_by_test_id("approval-error")).to_contain_text("needs a reason")
	third.get_by_test_id("approval-reason").fill("far too much")
	third.get_by_test_id("deny").click()
	expect(approvals).to_have_count(0)
	expect(page.get_by_test_id("run-status")).to_have_text("success")
	failed = page.locator("[data-testid=tool-call][data-status=failed]")
	expect(failed).to_have_count(1)
	expect(failed.get_by_test_id("tool-output")).to_contain_text("far too much")
	assert sorted(calls) == [5, 40]
	assert run.result(timeout=15).status == "success"
	model.assert_consumed()


def test_a_request_without_the_token_is_refused(served: Served, page: Any) -> None:
	"""The page, the API and the static files answer 403 without the token, or a wrong one."""
	base = f"http://127.0.0.1:{served.viewer.port}"
	for path in ("/", "/api/state", "/static/app.js", "/?token=wrong"):
		response = page.goto(base + path)
		assert response is not None and response.status == 403, path
		assert "forbidden" in page.content()
	response = page.goto(served.viewer.url)
	assert response is not None and response.status == 200
	# no cookie is set (a cookie for 127.0.0.1 goes to every port): a request needs the token
	assert page.context.cookies() == []
	assert page.evaluate("fetch('/api/state').then(r => r.status)") == 403
	status = page.evaluate(
		"fetch('/api/questions/q1', {method: 'POST', body: '{\"answer\": \"x\"}'}).then(r => r.status)"
	)
	assert status == 403


def test_another_local_server_never_receives_the_token(served: Served, page: Any) -> None:
	"""After the page ran live, a server on another 127.0.0.1 port gets no cookie, no token."""
	import http.server
	import threading

	seen: list[str] = []

	class Record(http.server.BaseHTTPRequestHandler):
		def do_GET(self) -> None:
			seen.append(f"{self.path} {self.headers}")
			self.send_response(200)
			self.send_header("content-type", "text/plain")
			self.end_headers()
			self.wfile.write(b"other")

		def log_message(self, *args: Any) -> None:
			pass

	other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
	thread = threading.Thread(target=other.serve_forever, args=(0.02,), daemon=True)
	thread.start()
	try:
		response = page.goto(served.viewer.url)
		assert response is not None and response.status == 200
		expect(page.get_by_test_id("connection")).to_have_text("live")  # the streams are open
		page.goto(f"http://127.0.0.1:{other.server_address[1]}/anything")
		page.evaluate("fetch('/api/state').then(r => r.status)")
	finally:
		other.shutdown()
		other.server_close()
	assert seen and all(served.viewer.token not in s for s in seen)
	assert all("cookie" not in s.lower() for s in seen), seen
	assert page.context.cookies() == []
