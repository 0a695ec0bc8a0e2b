"""A run's nested runs (its tool calls' runs, its guardrail agents') can be found from it, and it
from them; a run for an end user says whose it is. No browser: the page's data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core import runstore
from openmolt_core.guardrails import Guardrail
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_memory
from openmolt_core.tools import ToolContext, tool
from openmolt_ui import Viewer
from openmolt_ui._live import callers

pytestmark = pytest.mark.anyio

VERDICT = {
	"type": "object",
	"properties": {"action": {"type": "string"}, "reason": {"type": "string"}},
	"required": ["action", "reason"],
}


def _family(om: OpenMolt, *, helper_asks: Any = None) -> Any:
	"""Main calls ``local.twice`` (a tool whose code runs Helper twice), judged by Judge."""
	second = [ask_human("Which one?"), finish("b")] if helper_asks else [finish("b")]
	helper = om.create_agent(
		name="Helper",
		model=ScriptedModel([finish("a"), *second]),
		on_human_input_request=helper_asks,
	)

	@tool(labels=[])
	async def twice(x: str, context: ToolContext) -> str:
		"""Run the helper twice.

		Args:
			x: The text.
		"""
		first = await helper.run(x, parent=context.run)
		again = await helper.run(x, parent=context.run)
		return f"{first.output} {again.output}"

	judge = om.create_agent(
		name="Judge",
		model=ScriptedModel([finish({"action": "allow", "reason": "fine"})]),
		output_schema=VERDICT,
	)
	return om.create_agent(
		name="Main",
		model=ScriptedModel(
			[
				call_tool("local.twice", x="hi"),
				[update_memory("likes tea", memory="longTerm"), finish("done")],
			]
		),
		tools=[twice],
		guardrails=[Guardrail(judge, on="tool_call")],
	)


def test_the_callers_of_a_nested_run_are_its_prefixes_the_top_run_included() -> None:
	"""A tool call's second run (``.<step>.<index>.2``) named ``X.1`` as its caller, not ``X``."""
	assert callers("X.1.0") == ["X.1", "X"]
	assert callers("X.1.0.2") == ["X.1.0", "X.1", "X"]
	assert callers("X.guard.1.tool_call.0.0.Judge")[-1] == "X"
	assert callers("X") == []


async def test_a_second_nested_run_waiting_for_a_person_shows_its_top_run_waiting(
	tmp_path: Path,
) -> None:
	"""While a tool call's second run asks in the page, the run listed (its caller) waits."""
	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	async with Viewer(om, poll=0.1) as viewer:
		agent = _family(om, helper_asks=viewer.ask)
		async with anyio.create_task_group() as tg:
			tg.start_soon(agent.run, "go")
			with anyio.fail_after(10):
				while not viewer.live.questions:
					await viewer.live.changed.wait()
			question = next(iter(viewer.live.questions.values()))
			assert question.run_id.endswith(".1.0.2")
			top = question.run_id.split(".")[0]
			rows = {r["run_id"]: r for r in await viewer.runs()}
			assert rows[top]["status"] == "waiting"
			viewer.live.answer(question.id, "the first")
	await om.aclose()


@pytest.mark.parametrize("live", [True, False])
async def test_a_runs_nested_runs_are_listed_with_it_and_each_names_its_caller(
	tmp_path: Path, live: bool
) -> None:
	"""The guardrail agent's run (whose events stay its own) and both runs of one call are
	reachable from the run's page, each with its kind, its cost and whether the caller counts it;
	a nested run's page names its caller."""
	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	agent = _family(om)
	result = await agent.run("go", user="alice")
	assert result.status == "success"
	top = result.state.run_id
	viewer = Viewer(om if live else None, store=store)
	if live:  # the same runs, observed by a viewer watching this instance
		agent = _family(om)
		result = await agent.run("go", user="alice")
		top = result.state.run_id
	view = await viewer.run_view(top)
	assert view is not None
	nested = {n["run_id"]: n for n in view["run"]["nested"]}
	guard = f"{top}.guard.1.tool_call.0.0.Judge"
	assert set(nested) == {f"{top}.1.0", f"{top}.1.0.2", guard}
	assert nested[guard]["kind"] == "guardrail"
	assert nested[guard]["guardrail"] == "Judge" and nested[guard]["stage"] == "tool_call"
	assert nested[guard]["counted"] is True  # a guardrail agent's spend is the judged run's
	assert nested[guard]["caller"] == top and nested[guard]["step"] == 1
	assert nested[f"{top}.1.0.2"]["kind"] == "call" and nested[f"{top}.1.0.2"]["nth"] == 2
	assert nested[f"{top}.1.0"]["counted"] is None  # a tool's own code: the page compares
	assert nested[f"{top}.1.0"]["usage"]["input_tokens"] == 10
	assert view["run"]["user"] == "alice"
	exported = await viewer.export(top)
	assert exported is not None
	assert {r["run_id"] for r in exported["sub_runs"]} == set(nested)  # the guardrail's too
	sub = await viewer.run_view(guard)
	assert sub is not None
	assert sub["run"]["caller"] == top and sub["run"]["nested"] == []
	await om.aclose()


async def test_the_list_pages_by_top_level_runs_and_a_filter_finds_nested_ones(
	tmp_path: Path,
) -> None:
	"""Nested rows took the list's places (3 runs with 40 guardrail runs each listed 1 of 3, and
	said nothing more); the 'agent' origin and an agent's name found none of them."""
	from datetime import UTC, datetime, timedelta

	from .conftest import seed_runs

	store = tmp_path / "runs.db"
	start = datetime(2026, 1, 1, tzinfo=UTC)
	rows: list[dict[str, Any]] = []
	for n in range(3):
		top = f"top{n}"
		at = start + timedelta(hours=n)
		rows.append(
			{"run_id": top, "agent": "Main", "status": "success", "started": at.isoformat()}
		)
		rows += [
			{
				"run_id": f"{top}.guard.{k}.tool_call.0.0.Judge",
				"agent": "Judge",
				"status": "success",
				"started": (at + timedelta(seconds=k + 1)).isoformat(),
				"trigger": {"kind": "agent", "parent_run_id": top},
			}
			for k in range(40)
		]
	seed_runs(store, rows)
	viewer = Viewer(store=store)
	listed = await viewer.runs(3)
	assert [r["run_id"] for r in listed] == ["top2", "top1", "top0"]
	judged = await viewer.runs(5, trigger="agent")
	assert len(judged) == 5 and all(r["caller"] == "top2" for r in judged)
	assert len(await viewer.runs(200, agent="Judge")) == 120


async def test_a_runs_end_user_is_in_its_row_from_its_start_and_the_list_filters_by_it(
	tmp_path: Path,
) -> None:
	"""The store had no user: a running run of another process said nobody's, and no list
	could ask for one user's runs. The row keeps it (masked) from the start; both filter by it."""
	from openmolt_core.runstore import RunStore

	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	for user in ("alice", "bob", None):
		assert (await _family(om).run("go", user=user)).status == "success"
	rows = await RunStore(store).runs(top_level=True)
	assert sorted(str(r.user) for r in rows) == ["None", "alice", "bob"]
	nested = await RunStore(store).runs(nested_in=rows[-1].run_id)  # alice's first run
	assert {r.user for r in nested} == {"alice"}  # a nested run acts for its caller's user
	viewer = Viewer(store=store)
	listed = await viewer.runs(user="alice")
	assert [r["agent"] for r in listed] == ["Main"] and listed[0]["user"] == "alice"
	await om.aclose()


async def test_a_run_whose_id_holds_a_dot_is_nested_only_when_its_trigger_says_so(
	tmp_path: Path,
) -> None:
	"""An interval schedule's skipped due time (its id holds the time's fraction of a second)
	and a run id the application chose ('order.123') were taken for nested runs: left out of
	the list and the overview, and given a caller ('tick@2026-01-01T00:00:00')."""
	from .conftest import seed_runs

	store = tmp_path / "runs.db"
	now = "2026-01-01T00:00:01+00:00"
	seed_runs(
		store,
		[
			{
				"run_id": "tick@2026-01-01T00:00:00.5+00:00:skipped",
				"agent": "Ticker",
				"status": "skipped",
				"started": now,
				"trigger": {"kind": "schedule", "where": "tick"},
			},
			{"run_id": "order.123", "agent": "Shop", "status": "success", "started": now},
			{
				"run_id": "order.123.1.0",
				"agent": "Helper",
				"status": "success",
				"started": now,
				"trigger": {"kind": "agent", "parent_run_id": "order.123"},
			},
		],
	)
	seed_runs(
		store,
		[  # a hostile nested row: digits no int() reads
			{
				"run_id": f"order.123.\u00b2.{'9' * 5000}",
				"agent": "Odd",
				"status": "success",
				"started": now,
				"trigger": {"kind": "agent", "parent_run_id": "order.123"},
			}
		],
	)
	viewer = Viewer(store=store)
	listed = {r["run_id"]: r for r in await viewer.runs()}
	assert set(listed) == {"tick@2026-01-01T00:00:00.5+00:00:skipped", "order.123"}
	assert all(r["caller"] is None for r in listed.values())
	view = await viewer.run_view("order.123.1.0")
	assert view is not None and view["run"]["caller"] == "order.123"
	shop = await viewer.run_view("order.123")
	assert shop is not None
	odd = [n for n in shop["run"]["nested"] if n["agent"] == "Odd"]
	assert odd and odd[0]["step"] is None and odd[0]["index"] is None
	assert await viewer.run_view("order") is None  # no such run; "order.123" is not nested
	overview = await viewer.overview(3650)
	assert {a["agent"] for a in overview["agents"]} == {"Ticker", "Shop"}


async def test_a_runs_page_says_when_it_lists_only_the_latest_of_its_nested_runs(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run with more nested runs than the page lists gave no sign of the others; its row now
	says so (``nested_more``), and a run with all of them listed says none are left out."""

	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	top = (await _family(om).run("go")).state.run_id
	viewer = Viewer(None, store=store)
	view = await viewer.run_view(top)
	assert view is not None and len(view["run"]["nested"]) == 3
	assert view["run"]["nested_more"] is False
	monkeypatch.setattr(runstore, "NESTED_SHOWN", 2)
	view = await viewer.run_view(top)
	assert view is not None and len(view["run"]["nested"]) == 2
	assert view["run"]["nested_more"] is True
	await om.aclose()
