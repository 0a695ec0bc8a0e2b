"""Runs a served surface started, as the viewer reads them: an agent served over MCP whose call
parks for the client's user's approval, then goes on with the decision made in the client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from openmolt import FunctionTool, OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp.server import agent_server
from openmolt_ui import Viewer
from openmolt_ui._live import clean_start, tainted_by
from openmolt_ui.viewer import _merged

pytestmark = pytest.mark.anyio


async def test_an_mcp_served_run_decided_in_the_client_reads_as_mcp_with_its_decision(
	tmp_path: Path,
) -> None:
	"""The run an MCP client started is an ``mcp`` run (it was ``api``), tainted by its input; its
	call waited for the client's user, whose denial and reason the run's events keep."""

	refund = FunctionTool(
		handle="refund",
		description="Refund an order.",
		function=lambda i, c: f"refunded {i['order']}",
		labels=[],
	)

	model = ScriptedModel([call_tool("local.refund", order="A1"), finish("Not refunded.")])
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agent = om.create_agent(
		name="Helper", model=model, tools=[refund], requires_approval=["local.refund"]
	)
	reason = '<img src=x onerror="alert(1)">\u202etoo large'

	async def elicit(context: Any, params: Any) -> ElicitResult:
		return ElicitResult(action="accept", content={"approve": False, "reason": reason})

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, mode="auto", elicitation_callback=elicit) as client:
			answer = await client.call_tool("Helper", {"input": "Refund A1"})
	assert not answer.is_error
	viewer = Viewer(store=tmp_path / "runs.db")
	rows = await viewer.runs()
	assert [(r["agent"], r["status"]) for r in rows] == [("Helper", "success")]
	assert rows[0]["trigger"] == {"kind": "mcp", "where": "Helper"}
	view = await viewer.run_view(rows[0]["run_id"])
	assert view is not None
	names = [e["name"] for e in view["events"]]
	assert "approval:request" in names and names.count("finish") == 2  # parked, then ended
	decision = next(e["data"] for e in view["events"] if e["name"] == "approval:decision")
	assert (decision["action"], decision["reason"]) == ("denied", reason)
	assert view["run"]["tainted_by"] == ["its input (mcp:Helper)"]
	await om.aclose()


def test_a_runs_taint_reads_by_where_it_came_from() -> None:
	"""Records of an input, a memory and a tool list are said; calls are left to the calls."""
	taint = [
		{"call": "input", "tool": "agui:Desk:earlier", "step": 0},
		{"call": "memory:longTerm", "tool": "the agent's long-term memory", "step": 0},
		{"call": "tools:mcp", "tool": "the tool list of mcp", "step": 1},
		{"call": "tool:1:0:local.read", "tool": "local.read", "step": 1},
		"damaged",
	]
	assert tainted_by(taint) == [
		"an earlier turn of its session, which was tainted (agui:Desk:earlier)",
		"the agent's long-term memory",
		"the tool list of mcp",
	]
	for_alice = tainted_by(taint, user="alice")
	assert for_alice[1] == (
		"the agent's long-term memory (the run is for end user alice: the memory is theirs, "
		"unless the agent's is shared)"
	)  # a user's memory a tainted run of theirs wrote: said as the agent's
	assert for_alice[::2] == tainted_by(taint)[::2]
	assert clean_start({"kind": "agui", "where": "Desk"}, taint) is None  # its input tainted it
	assert "trustInput" in (clean_start({"kind": "agui"}, taint[1:]) or "")
	assert clean_start({"kind": "a2a"}, []) is None  # never vouched for: nothing to explain
	assert clean_start({"kind": "api"}, []) is None  # the operator's own


def test_a_live_row_keeps_the_trigger_its_first_start_recorded() -> None:
	"""A run a webhook started elsewhere, resumed here under no trigger, still says webhook."""
	stored = {"run_id": "r", "started": "2026-01-01T00:00:00", "trigger": {"kind": "webhook"}}
	live = {"run_id": "r", "started": "2026-01-02T00:00:00", "trigger": {"kind": "api"}}
	merged = _merged(live, stored)
	assert merged["trigger"] == {"kind": "webhook"}
	assert merged["started"] == stored["started"]
