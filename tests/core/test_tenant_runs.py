"""One deployment, several end users: what a run keeps and starts stays its user's.

A large result a run for alice stored (`openmolt.readResult`'s handle, a file reference too) was
kept with no owner, so any run, for bob or for the operator, read it through a tool that takes
files. It is kept as every file a call keeps: its user's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.offload import READ_TOOL
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool

pytestmark = pytest.mark.anyio

BIG = {"rows": [f"alice's private row {i}" for i in range(2_000)]}
"""A result far past the default threshold: it is stored, and the model reads a preview."""


def _results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
	found: list[dict[str, Any]] = json.loads(model.requests[request].messages[-1].content)[
		"results"
	]
	return found


@tool(labels=[])
def inbox() -> dict[str, Any]:
	"""Read the user's inbox."""
	return BIG


@tool(labels=[])
async def peek(ref: str, context: ToolContext) -> str:
	"""Read a file by reference, as any tool that takes files does.

	Args:
		ref: The file reference.
	"""
	assert context.files is not None
	return (await context.files.open(ref)).data.decode()[:60]


async def test_a_stored_large_result_is_its_users_alone(tmp_path: Path) -> None:
	"""Alice's stored inbox: her run reads it back; bob's and the operator's tools find no such
	file (they read her rows before)."""
	async with OpenMolt(entry_points=False, files_dir=tmp_path) as om:
		first = ScriptedModel([call_tool("local.inbox"), finish(result="ok")])
		agent = om.create_agent(name="mail", model=first, tools=[inbox, peek])
		result = await agent.run("inbox", user="alice")
		assert result.ok, result.error
		[record] = result.state.stored
		ref = record["file"]
		for user in ("bob", None):
			model = ScriptedModel([call_tool("local.peek", ref=ref), finish(result="ok")])
			other = om.create_agent(name="other", model=model, tools=[peek])
			assert (await other.run("look", user=user)).ok
			[read] = _results(model, 1)
			assert read["ok"] is False, read
			assert "unknown file reference" in read["error"], read
		model = ScriptedModel([call_tool("local.peek", ref=ref), finish(result="ok")])
		again = om.create_agent(name="again", model=model, tools=[peek])
		assert (await again.run("look", user="alice")).ok
		[read] = _results(model, 1)
		assert read["ok"] is True and "alice's private row" in read["result"], read


async def test_a_run_reads_back_the_results_it_stored() -> None:
	"""Alice's run reads its own stored result with the reader (its handle is checked as any
	file is: it is hers)."""

	def read_it(request: Any) -> dict[str, Any]:
		[entry] = json.loads(request.messages[-1].content)["results"]
		return call_tool(READ_TOOL, result=entry["result"]["stored"], pointer="/rows/3")

	async with OpenMolt(entry_points=False) as om:
		model = ScriptedModel([call_tool("local.inbox"), read_it, finish(result="ok")])
		agent = om.create_agent(name="mail", model=model, tools=[inbox])
		result = await agent.run("inbox", user="alice")
		assert result.ok, result.error
		[read] = _results(model, 2)
		assert read["ok"] is True, read
		assert read["result"]["value"] == "alice's private row 3"
