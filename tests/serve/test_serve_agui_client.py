"""AG-UI's published TypeScript client (@ag-ui/client) drives an agent served by `openmolt serve`.

The client checks the event stream as a front end would: it verifies the order of the events,
applies the state snapshot and the JSON Patch deltas, builds messages from the text and tool-call
events, and tracks interrupts and their resume. It is installed with the other npm test tools
(`uv run nox -s tests`, noxfile.py ``NPM_LIBS``) into ``.cache/node/``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
NODE = Path(os.environ.get("OPENMOLT_NODE_DIR", ROOT / ".cache" / "node"))
SCRIPT = Path(__file__).with_name("js") / "agui_client.cjs"
TOKEN = "ts-client-token-0123456789"


def client_modules() -> Path:
	modules = NODE / "node_modules"
	node = shutil.which("node")
	if node is None or not (modules / "@ag-ui" / "client" / "package.json").is_file():
		pytest.fail(
			f"node and @ag-ui/client are needed in {modules}; run `uv run nox -s tests` (which "
			"installs the npm test tools) or `npm install --prefix .cache/node --no-save "
			"@ag-ui/client@1.0.0`",
			pytrace=False,
		)
	return modules


async def test_the_typescript_client_runs_an_agent_and_resumes_its_interrupt() -> None:
	"""Tool calls, plan state, text and an interrupt reach the TS client; its resume goes on."""
	modules = client_modules()

	@tool(labels=[])
	def forecast(city: str) -> dict[str, Any]:
		"""The week's forecast.

		Args:
			city: The city.
		"""
		return {"city": city, "monday": "rain"}

	model = ScriptedModel(
		[
			[update_plan("get the forecast", "answer"), call_tool("local.forecast", city="Oslo")],
			ask_human("Which day?"),
			finish({"result": "Rain on Monday."}, human_message="Rain on Monday, take a coat."),
		]
	)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Weather", model=model, tools=[forecast])
	park_questions(agent)
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		done = await anyio.run_process(
			[shutil.which("node") or "node", str(SCRIPT), f"{server.url}/agui/Weather", TOKEN],
			env={**os.environ, "NODE_PATH": str(modules)},
			check=False,
		)
		assert done.returncode == 0, done.stderr.decode()
		async with httpx.AsyncClient(base_url=server.url) as http:
			refused = await http.post("/agui/Weather", json={})
			assert refused.status_code == 401
	await om.aclose()
	seen = json.loads(done.stdout)
	assert seen["interrupts"][0]["reason"] == "question"
	assert seen["interrupts"][0]["message"] == "Which day?"
	assert seen["seen"].count("RUN_STARTED") == 2
	assert seen["seen"].count("RUN_FINISHED") == 2
	assert "TOOL_CALL_RESULT" in seen["seen"] and "STATE_DELTA" in seen["seen"]
	assert seen["result"] == {"result": "Rain on Monday."}
	assert seen["pending"] == 0  # the resume answered it
	# the snapshot, then the delta, applied by the client's own JSON Patch code
	assert seen["states"][0] == {"plan": []}
	assert [item["name"] for item in seen["state"]["plan"]] == ["get the forecast", "answer"]
	roles = [(m["role"], m["toolCalls"]) for m in seen["messages"]]
	assert ("assistant", ["local.forecast"]) in roles
	assert any(m["role"] == "tool" and "rain" in (m["content"] or "") for m in seen["messages"])
	assert seen["messages"][-1] == {
		"role": "assistant",
		"content": "Rain on Monday, take a coat.",
		"toolCalls": [],
	}
	assert "Monday" in model.requests[2].messages[-1].content  # the resume's answer


VERIFY = Path(__file__).with_name("js") / "agui_verify.cjs"


async def verified(events: list[dict[str, Any]]) -> None:
	"""The TypeScript client's own checks (verifyEvents) pass on a recorded stream."""
	modules = client_modules()
	done = await anyio.run_process(
		[shutil.which("node") or "node", str(VERIFY)],
		input=json.dumps(events).encode(),
		env={**os.environ, "NODE_PATH": str(modules)},
		check=False,
	)
	assert done.returncode == 0, done.stderr.decode()


async def test_a_sub_agents_tool_calls_are_a_subagent_of_the_stream() -> None:
	"""An agent called as a tool opens a subagent (SUBAGENT_STARTED, named), its tool calls carry
	its subagentRunId, its end closes it before the caller's call gets its result; one that
	fails is SUBAGENT_ERROR. The TypeScript client's checks pass on the whole stream."""

	@tool(labels=[])
	def forecast(city: str) -> dict[str, Any]:
		"""The week's forecast.

		Args:
			city: The city.
		"""
		return {"city": city, "monday": "rain"}

	om = OpenMolt(entry_points=False)
	helper = om.create_agent(
		name="Forecaster",
		model=ScriptedModel(
			[
				[update_plan("ask the service"), call_tool("local.forecast", city="Oslo")],
				finish({"result": "rain"}),
				call_tool("local.forecast", city="Bergen"),
				finish({"result": "no forecast"}, status="failure"),  # the second call fails
				call_tool("local.forecast", city="Tromsø"),  # the third breaks: no more replies
			]
		),
		tools=[forecast],
		output_schema={"type": "object", "properties": {"result": {"type": "string"}}},
	)
	model = ScriptedModel(
		[
			call_tool("local.Forecaster", task="Oslo this week?"),
			call_tool("local.Forecaster", task="Bergen?"),
			call_tool("local.Forecaster", task="Tromsø?"),
			finish({"result": "Rain in Oslo."}),
		]
	)
	agent = om.create_agent(name="Weather", model=model, tools=[helper])
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	body = {
		"threadId": "t-sub",
		"runId": "run-1",
		"messages": [{"id": "u1", "role": "user", "content": "Weather?"}],
	}
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
			async with http.stream("POST", "/agui/Weather", json=body) as response:
				text = (await response.aread()).decode()
	await om.aclose()
	events = [
		json.loads(frame.removeprefix("data: "))
		for frame in text.split("\n\n")
		if frame.startswith("data: ")
	]
	await verified(events)
	started = [e for e in events if e["type"] == "SUBAGENT_STARTED"]
	assert [e["name"] for e in started] == ["Forecaster"] * 3
	first, second, third = (e["subagentRunId"] for e in started)
	inner = [e for e in events if e.get("subagentRunId") == first]
	assert [e["type"] for e in inner] == [
		"SUBAGENT_STARTED",
		"TOOL_CALL_START",
		"TOOL_CALL_ARGS",
		"TOOL_CALL_END",
		"TOOL_CALL_RESULT",
		"SUBAGENT_FINISHED",
	]
	assert inner[-1]["result"] == {"result": "rain"}
	ends = {e["subagentRunId"]: i for i, e in enumerate(events) if e["type"] == "SUBAGENT_ERROR"}
	assert set(ends) == {second, third}
	outer = [e for e in events if "subagentRunId" not in e]
	last_result = max(
		i for i, e in enumerate(events) if e in outer and e["type"] == "TOOL_CALL_RESULT"
	)
	assert ends[third] < last_result  # closed before its caller reads how it went
	calls = [e["toolCallName"] for e in outer if e["type"] == "TOOL_CALL_START"]
	assert calls == ["local.Forecaster"] * 3
	assert [e for e in events if e["type"] == "STATE_DELTA"] == []  # its plan is not the state
	assert events[-1]["type"] == "RUN_FINISHED"
