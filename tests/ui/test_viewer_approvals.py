"""The page decides tool calls: the live handler `viewer.approve`, and runs parked on approvals.

The first test holds `Viewer.approve` to the interface of `openmolt_core.approvals.ApprovalRequest`
(fields, ``approve(input=, reason=)``, ``deny(reason)``) with a double, so it runs on any core; the
others drive the loop's own approvals and run once `openmolt_core.approvals` is there.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio

LOOP_APPROVALS = importlib.util.find_spec("openmolt_core.approvals") is not None
needs_loop_approvals = pytest.mark.skipif(
	not LOOP_APPROVALS, reason="the loop's approvals (issue 18 part 1) are not in this core yet"
)


@dataclass
class Request:
	"""A double of `openmolt_core.approvals.ApprovalRequest`: records the decision asked for."""

	run_id: str = "run1"
	call: str = "tool:2:0:stripe.createRefund"
	agent: str = "Pay"
	tool: str = "stripe.createRefund"
	input: dict[str, Any] = field(default_factory=lambda: {"amount": 500, "key": "[redacted]"})
	reason: str = "the customer asked"
	rule: str = "stripe:writes"
	made: list[tuple[Any, ...]] = field(default_factory=list)

	def approve(self, *, input: dict[str, Any] | None = None, reason: str = "") -> tuple[Any, ...]:
		self.made.append(("approve", input, reason))
		return self.made[-1]

	def deny(self, reason: str = "") -> tuple[Any, ...]:
		self.made.append(("deny", reason))
		return self.made[-1]


async def _wait_state(
	http: httpx.AsyncClient, viewer: Viewer, until: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
	with anyio.fail_after(15):
		while True:
			state = (
				await http.get(
					f"http://127.0.0.1:{viewer.port}/api/state",
					headers={"x-openmolt-token": viewer.token},
				)
			).json()
			if until(state):
				return dict(state)
			await anyio.sleep(0.05)


async def _decide(
	http: httpx.AsyncClient, viewer: Viewer, approval_id: str, body: dict[str, Any]
) -> httpx.Response:
	return await http.post(
		f"http://127.0.0.1:{viewer.port}/api/approvals/{approval_id}",
		json=body,
		headers={"x-openmolt-token": viewer.token},
	)


async def test_viewer_approve_shows_the_request_and_answers_with_its_methods(
	tmp_path: Path,
) -> None:
	"""Tool, redacted input, reason, rule and step show; approve, edit, deny map to the request."""
	async with Viewer(store=tmp_path / "r.db") as viewer, httpx.AsyncClient() as http:
		for body, expected in [
			({"action": "approve", "reason": "fine"}, ("approve", None, "fine")),
			(
				{"action": "edit", "input": {"amount": 50}},
				("approve", {"amount": 50}, "edited in the run viewer"),
			),
			({"action": "approve"}, ("approve", None, "approved in the run viewer")),
			({"action": "deny", "reason": "too much"}, ("deny", "too much")),
		]:
			request = Request()
			made: list[Any] = []

			async def decide_in_page(request: Request = request, made: list[Any] = made) -> None:
				made.append(await viewer.approve(request))

			async with anyio.create_task_group() as tg:
				tg.start_soon(decide_in_page)
				state = await _wait_state(http, viewer, lambda s: s["approvals"])
				(shown,) = state["approvals"]
				assert {
					k: shown[k]
					for k in ("run_id", "agent", "tool", "input", "reason", "rule", "step")
				} == {
					"run_id": "run1",
					"agent": "Pay",
					"tool": "stripe.createRefund",
					"input": {"amount": 500, "key": "[redacted]"},
					"reason": "the customer asked",
					"rule": "stripe:writes",
					"step": 2,
				}
				assert (await _decide(http, viewer, shown["id"], body)).status_code == 200
			assert made == [expected] and request.made == [expected]
		assert (await _wait_state(http, viewer, lambda s: True))["approvals"] == []


def _shop() -> tuple[list[int], Callable[..., Any]]:
	ran: list[int] = []

	def refund(customer: str, amount: int) -> dict[str, Any]:
		"""Refund a customer.

		Args:
			customer: The customer id.
			amount: Cents.
		"""
		ran.append(amount)
		return {"refunded": amount}

	return ran, refund


@needs_loop_approvals
async def test_a_live_run_waits_for_the_pages_decision(tmp_path: Path) -> None:
	"""With on_approval_request=viewer.approve, the call waits; an edited approval runs."""
	ran, refund = _shop()
	om = OpenMolt(entry_points=False, run_store=tmp_path / "r.db")
	model = ScriptedModel(
		[
			{**call_tool("local.refund", customer="cus_1", amount=500), "reason": "asked"},
			finish(done=True),
		]
	)
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		agent = om.create_agent(
			name="Pay",
			model=model,
			tools=[refund],
			requires_approval=["local.refund"],
			on_approval_request=viewer.approve,
		)
		results: list[Any] = []

		async def run() -> None:
			results.append(await agent.run("refund"))

		async with anyio.create_task_group() as tg:
			tg.start_soon(run)
			state = await _wait_state(http, viewer, lambda s: s["approvals"])
			(shown,) = state["approvals"]
			assert shown["tool"] == "local.refund" and shown["input"]["amount"] == 500
			assert shown["reason"] == "asked" and shown["rule"] == "local.refund"
			edited = {"action": "edit", "input": {"customer": "cus_1", "amount": 40}}
			assert (await _decide(http, viewer, shown["id"], edited)).status_code == 200
	assert results[0].status == "success" and ran == [40]


@needs_loop_approvals
async def test_a_run_parked_on_approval_resumes_with_the_pages_denial(tmp_path: Path) -> None:
	"""No handler: the run parks; the page lists the call; a denial resumes it, the model reads why."""
	ran, refund = _shop()
	om = OpenMolt(entry_points=False, run_store=tmp_path / "r.db")
	seen: list[Any] = []

	def check(request: Any) -> dict[str, Any]:
		seen.extend(json.loads(request.messages[-1].content)["results"])
		return finish(done=False)

	model = ScriptedModel(
		[{**call_tool("local.refund", customer="cus_1", amount=9000), "reason": "asked"}, check]
	)
	agent = om.create_agent(
		name="Pay", model=model, tools=[refund], requires_approval=["local.refund"]
	)
	parked = await agent.run("refund")
	assert parked.status == "approval_required"
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		state = await _wait_state(http, viewer, lambda s: s["approvals"])
		(shown,) = state["approvals"]
		assert shown["kind"] == "parked" and shown["can_answer"] is True
		assert shown["tool"] == "local.refund" and shown["input"]["amount"] == 9000
		denied = await _decide(http, viewer, shown["id"], {"action": "deny", "reason": "too much"})
		assert denied.status_code == 202
		await _wait_state(
			http,
			viewer,
			lambda s: any(
				r["run_id"] == parked.state.run_id and r["status"] == "success" for r in s["runs"]
			),
		)
	assert ran == []
	assert seen and seen[0]["ok"] is False and "too much" in json.dumps(seen[0])


@needs_loop_approvals
async def test_a_pending_call_naming_its_run_is_masked_all_the_same(tmp_path: Path) -> None:
	"""A handler of its own that names the run and passes the raw input: the page still shows
	the instance's secrets masked (the seam fails closed, it does not trust the caller)."""
	from openmolt_ui import PendingApproval

	secret = "sk-live-pending-call-4d3c2b"
	ran, refund = _shop()
	om = OpenMolt(entry_points=False, run_store=tmp_path / "r.db")
	om.secrets.add(secret)
	model = ScriptedModel(
		[call_tool("local.refund", customer="cus_1", amount=500), finish(done=True)]
	)
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:

		async def raw_handler(request: Any) -> Any:
			decision = await viewer.request_approval(
				PendingApproval(
					tool=request.tool,
					input={**request.input, "key": secret},
					reason=f"uses {secret}",
					run_id=request.run_id,
					agent=request.agent,
				)
			)
			return request.approve() if decision.approved else request.deny(decision.reason)

		agent = om.create_agent(
			name="Pay",
			model=model,
			tools=[refund],
			requires_approval=["local.refund"],
			on_approval_request=raw_handler,
		)
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run, "refund")
			state = await _wait_state(http, viewer, lambda s: s["approvals"])
			(shown,) = state["approvals"]
			assert secret not in json.dumps(state)
			assert shown["input"]["key"] == "[redacted]" and shown["reason"] == "uses [redacted]"
			assert shown["run_id"] and shown["agent"] == "Pay"
			assert (
				await _decide(http, viewer, shown["id"], {"action": "approve"})
			).status_code == 200
	assert ran == [500]


def slow_store(viewer: Viewer) -> None:
	"""Make the viewer's read of a parked run's state wait a moment (a slow store)."""
	read = viewer._parked_state

	async def slowly(run_id: str) -> Any:
		await anyio.sleep(0.2)
		return await read(run_id)

	viewer._parked_state = slowly  # type: ignore[method-assign]


@needs_loop_approvals
async def test_decisions_sent_at_once_to_a_parked_call_resume_its_run_once(
	tmp_path: Path,
) -> None:
	"""An approval and a denial posted together: one resumes the run, the other is refused, and
	the call runs at most once."""
	ran, refund = _shop()
	om = OpenMolt(entry_points=False, run_store=tmp_path / "r.db")
	model = ScriptedModel(
		[call_tool("local.refund", customer="cus_1", amount=700)] + [finish(done=True)] * 3
	)
	agent = om.create_agent(
		name="Pay", model=model, tools=[refund], requires_approval=["local.refund"]
	)
	parked = await agent.run("refund")
	assert parked.status == "approval_required"
	codes: list[int] = []
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		(shown,) = (await _wait_state(http, viewer, lambda s: s["approvals"]))["approvals"]
		slow_store(viewer)  # each request reads the store slowly: they overlap

		async def decide(body: dict[str, Any]) -> None:
			codes.append((await _decide(http, viewer, shown["id"], body)).status_code)

		async with anyio.create_task_group() as tg:
			for body in ({"action": "approve"}, {"action": "deny", "reason": "no"}):
				tg.start_soon(decide, body)
		await _wait_state(
			http,
			viewer,
			lambda s: any(
				r["run_id"] == parked.state.run_id and r["status"] == "success" for r in s["runs"]
			),
		)
	await om.aclose()
	assert codes.count(202) == 1, codes
	assert ran in ([], [700])
	assert len(model.requests) == 2  # the parked step, and one resume
