"""A built-in HTTP tool refuses an input it does not know, as function tools do, never drops it."""

from __future__ import annotations

import importlib
import json
import pkgutil

import httpx
import pytest

import openmolt_integrations
from openmolt import OpenMolt
from openmolt_core.integrations import HttpTool
from openmolt_core.testing import ScriptedModel, call_tool, finish

MODULES = [m.name for m in pkgutil.iter_modules(openmolt_integrations.__path__) if m.name[0] != "_"]
HTTP_TOOLS = [
	pytest.param(tool, id=f"{name}.{tool.handle}")
	for name in MODULES
	for tool in importlib.import_module(f"openmolt_integrations.{name}").INTEGRATION.tools
	if isinstance(tool, HttpTool)
]


@pytest.mark.parametrize("tool", HTTP_TOOLS)
def test_every_built_in_http_tool_checks_inputs_against_the_ones_it_declares(
	tool: HttpTool,
) -> None:
	"""An input the tool neither declares nor reads would be dropped: it is refused instead."""
	checked = tool.checked_input_schema()
	assert checked["additionalProperties"] is False
	assert checked["properties"] == tool.input_schema["properties"]


@pytest.mark.anyio
async def test_a_misspelt_input_is_refused_not_dropped() -> None:
	"""createIssue with 'lables' opened an issue without labels; now nothing is sent."""
	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(201, json={"number": 1})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
	call = call_tool("github.createIssue", owner="o", repo="r", title="Bug", lables=["bug"])
	model = ScriptedModel([call, finish(done=True)])
	config = {"apiKey": "ghp_abcdefgh123456"}
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[{"integration": "github", "credential": {"config": config}}],
	)
	async with om:
		await agent.run()
	assert seen == []
	[reply] = [m.content for m in model.requests[1].messages if '"results"' in m.content]
	assert "lables: unknown field; remove it" in json.loads(reply)["results"][0]["error"]
