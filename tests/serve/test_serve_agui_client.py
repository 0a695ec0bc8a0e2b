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
