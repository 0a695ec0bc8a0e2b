"""Tool search, stored results and model fallback in a durable run: parked, then resumed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _harness import make_store

from openmolt import FunctionTool, OpenMolt, ProviderError
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.llm import ModelRequest, ModelResponse
from openmolt_core.offload import READ_TOOL
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.toolsearch import LOAD_TOOL, SEARCH_TOOL
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio


@pytest.fixture
async def url(tmp_path: Path) -> AsyncIterator[str]:
	stores = make_store("sqlite", tmp_path)
	store = next(stores)
	try:
		yield store
	finally:
		from dbos import DBOS

		from openmolt_dbos import _engine

		engine = _engine._ENGINE
		if engine is not None and engine.launched:
			await engine.shutdown()
		DBOS.destroy()
		reset_engine()


class Overloaded:
	"""The first model: overloaded at every call, so each step falls back."""

	name = "primary"
	model = "big"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		raise ProviderError("overloaded (529)", provider="primary", status_code=529, retryable=True)


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


ROWS = [[f"r{r}c{c}" for c in range(10)] for r in range(1500)]


def tools() -> list[FunctionTool]:
	def ping(i: dict[str, Any], c: Any) -> str:
		return "pong"

	def rows(i: dict[str, Any], c: Any) -> list[list[str]]:
		return ROWS

	return [
		FunctionTool(handle="ping", description="Answer pong.", function=ping),
		FunctionTool(handle="rows", description="All the spreadsheet rows.", function=rows),
	]


def read_stored(request: ModelRequest) -> dict[str, Any]:
	# After the resume the model reads the handle it got before the run parked.
	for message in request.messages:
		if '"stored":"openmolt-file:' in message.content:
			handle = message.content.split('"stored":"')[1].split('"')[0]
			return call_tool(READ_TOOL, result=handle, pointer="/1200/3")
	raise AssertionError("no stored result in the conversation")


async def test_a_parked_durable_run_keeps_its_tools_its_stored_result_and_its_models(
	url: str,
) -> None:
	"""Loaded tools, the stored result's handle and the answering model survive the park."""
	om = OpenMolt(durability=url, entry_points=False)
	backup = ScriptedModel(
		[
			call_tool(SEARCH_TOOL, query="spreadsheet rows"),
			call_tool(LOAD_TOOL, tools=["local.rows"]),
			[call_tool("local.rows"), ask_human("Which row?")],
			read_stored,
			finish(result="done"),
		],
		name="backup",
	)
	agent = om.create_agent(
		name="Durable",
		model=[Overloaded(), backup],
		tools=tools(),
		tool_loading="search",
		on_human_input_request=park,
	)
	fallbacks: list[Any] = []
	agent.on("model:fallback", fallbacks.append)
	parked = await agent.run("find row 1200")
	assert parked.status == "human_input_required", parked.error
	assert parked.state.loaded == ["local.rows", READ_TOOL]
	[record] = parked.state.stored
	assert record["tool"] == "local.rows"
	done = await agent.resume(parked.state, answer="1200")
	await om.aclose()
	assert done.ok, done.error
	results = json.loads(backup.requests[-1].messages[-1].content)["results"]
	assert results[0]["result"]["value"] == ROWS[1200][3]
	assert done.state.models == ["backup:scripted"] * 5
	assert list(done.state.usage_by_model) == ["backup:scripted"]
	assert [e.reason for e in fallbacks] == ["overloaded"] * 5
	assert len({e.seq for e in fallbacks}) == 5
