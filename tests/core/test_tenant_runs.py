"""One deployment, several end users: what a run keeps and starts stays its user's.

Two paths crossed users. A large result a run for alice stored (`openmolt.readResult`'s handle,
a file reference too) was kept with no owner, so any run, for bob or for the operator, read it
through a tool that takes files. And a guardrail agent judging alice's run ran for no user
(the operator): its tools saw ``context.run.user`` None, read the operator's files and none of
hers, and its per-user integrations had no account. A run nested in another now acts for its
caller's user, and refuses to act for anyone else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.guardrails import VERDICT_SCHEMA, Guardrail
from openmolt_core.offload import READ_TOOL
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext, tool
from tests._results import results_at

pytestmark = pytest.mark.anyio

BIG = {"rows": [f"alice's private row {i}" for i in range(2_000)]}
"""A result far past the default threshold: it is stored, and the model reads a preview."""


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
			[read] = results_at(model, 1)
			assert read["ok"] is False, read
			assert "unknown file reference" in read["error"], read
		model = ScriptedModel([call_tool("local.peek", ref=ref), finish(result="ok")])
		again = om.create_agent(name="again", model=model, tools=[peek])
		assert (await again.run("look", user="alice")).ok
		[read] = results_at(model, 1)
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
		[read] = results_at(model, 2)
		assert read["ok"] is True, read
		assert read["result"]["value"] == "alice's private row 3"


class Judge:
	"""A guardrail agent whose one tool notes who its run acts for, and reads a file."""

	def __init__(self, om: OpenMolt, ref: str = "") -> None:
		self.users: list[str | None] = []
		self.read: list[dict[str, Any]] = []
		users = self.users

		@tool(labels=[])
		def who(context: ToolContext) -> str:
			"""Say whom the run acts for."""
			users.append(context.run.user if context.run is not None else "no run")
			return "noted"

		calls = [call_tool("local.who")]
		if ref:
			calls.append(call_tool("local.peek", ref=ref))
		self.model = ScriptedModel([*calls, finish({"action": "allow", "reason": "ok"})] * 2)
		self.agent = om.create_agent(
			name="judge", model=self.model, tools=[who, peek], output_schema=VERDICT_SCHEMA
		)


@tool(labels=[])
async def keep(context: ToolContext) -> dict[str, Any]:
	"""Keep a file of the run's user."""
	assert context.files is not None
	return await context.files.save(b"alice's photo", media_type="text/plain", name="p.txt")


@pytest.mark.parametrize("stage", ["input", "output"])
async def test_a_guardrail_agent_acts_for_the_judged_runs_user(stage: str) -> None:
	"""A judge of alice's run acts for alice (it acted for the operator: None)."""
	async with OpenMolt(entry_points=False) as om:
		judge = Judge(om)
		main = om.create_agent(
			name="main",
			model=ScriptedModel([finish(result="ok")] * 2),
			guardrails=[Guardrail(judge.agent, on=stage)],  # type: ignore[arg-type]
		)
		result = await main.run("hello", user="alice")
		assert result.ok, result.error
		assert judge.users == ["alice"]
		assert judge.agent.last_state is not None and judge.agent.last_state.user == "alice"
		judge.users.clear()
		assert (await main.run("hello")).ok
		assert judge.users == [None]  # the operator's run: the operator's judge


async def test_a_guardrail_agent_reads_the_judged_users_files_and_no_one_elses(
	tmp_path: Path,
) -> None:
	"""Judging alice's output, the judge reads her file; judging bob's, it finds no such file."""
	async with OpenMolt(entry_points=False, files_dir=tmp_path) as om:
		kept = ScriptedModel([call_tool("local.keep"), finish(result="ok")])
		owner = om.create_agent(name="owner", model=kept, tools=[keep])
		assert (await owner.run("keep", user="alice")).ok
		ref = results_at(kept, 1)[0]["result"]["file"]
		for user, readable in (("alice", True), ("bob", False)):
			judge = Judge(om, ref)
			main = om.create_agent(
				name="main",
				model=ScriptedModel([finish(result="ok")]),
				guardrails=[Guardrail(judge.agent, on="output")],
			)
			assert (await main.run("hello", user=user)).ok
			[read] = results_at(judge.model, 2)
			assert read["ok"] is readable, (user, read)


async def test_a_nested_run_acts_for_no_other_user_than_its_callers() -> None:
	"""A tool that runs an agent for bob inside alice's run is refused (the nested run would act
	with bob's accounts for alice's words); inside the operator's run it may."""
	async with OpenMolt(entry_points=False) as om:
		inner = om.create_agent(name="inner", model=ScriptedModel([finish(result="x")] * 2))

		@tool(labels=[])
		async def for_bob(context: ToolContext) -> str:
			"""Run the inner agent for bob."""
			result = await inner.run("task", parent=context.run, user="bob")
			return str(result.state.user)

		def outer() -> tuple[ScriptedModel, Any]:
			model = ScriptedModel([call_tool("local.for_bob"), finish(result="ok")])
			return model, om.create_agent(name="outer", model=model, tools=[for_bob])

		model, agent = outer()
		assert (await agent.run("go", user="alice")).ok
		[entry] = results_at(model, 1)
		assert entry["ok"] is False, entry
		assert "acts for 'alice'" in entry["error"] and "'bob'" in entry["error"], entry
		model, agent = outer()
		assert (await agent.run("go")).ok
		[entry] = results_at(model, 1)
		assert entry == {**entry, "ok": True, "result": "bob"}
