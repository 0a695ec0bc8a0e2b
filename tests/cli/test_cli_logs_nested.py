"""`openmolt logs` lists the runs nested in others as the run viewer does: on their caller."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core import runstore
from openmolt_core.cli import main as openmolt_main
from openmolt_core.guardrails import Guardrail
from openmolt_core.testing import ScriptedModel, call_tool, finish

VERDICT = {
	"type": "object",
	"properties": {"action": {"type": "string"}, "reason": {"type": "string"}},
	"required": ["action", "reason"],
}


@pytest.fixture
def top(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
	"""One run of Main, which calls the agent tool Helper, judged by the guardrail agent Judge."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))
	ids: list[str] = []

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		helper = om.create_agent(name="Helper", model=ScriptedModel([finish("a")]))
		judge = om.create_agent(
			name="Judge",
			model=ScriptedModel([finish({"action": "allow", "reason": "fine"})]),
			output_schema=VERDICT,
		)
		main = om.create_agent(
			name="Main",
			model=ScriptedModel([call_tool("local.Helper", task="go"), finish("done")]),
			tools=[helper],
			guardrails=[Guardrail(judge, on="tool_call")],
		)
		ids.append((await main.run("go")).state.run_id)

	anyio.run(record)
	return ids[0]


def test_logs_lists_top_level_runs_and_a_runs_page_lists_its_nested_ones(
	top: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""The list held the guardrail agent's and the sub-agent's rows beside their caller (a
	guardrail per call filled it); now a filter finds them, marked, and the caller lists them."""
	assert openmolt_main(["logs"]) == 0
	listed = capsys.readouterr().out
	assert "Main  success" in listed and "Judge" not in listed and "Helper" not in listed
	assert openmolt_main(["logs", "--agent", "Judge"]) == 0
	judged = capsys.readouterr().out
	assert f"{top}.guard.1.tool_call.0.0.Judge  Judge  success" in judged
	assert f"nested in {top}" in judged
	assert openmolt_main(["logs", top]) == 0
	one = capsys.readouterr().out
	nested = one.split("nested runs")[1]
	assert f"{top}.1.0  Helper  success" in nested
	assert f"{top}.guard.1.tool_call.0.0.Judge  Judge  success" in nested


def test_logs_says_and_filters_whose_run_it_is(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run for an end user says whose it is, and --user lists only theirs."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		for user in ("alice", "bob"):
			agent = om.create_agent(name="Desk", model=ScriptedModel([finish(f"hi {user}")]))
			await agent.run("hello", user=user)

	anyio.run(record)
	assert openmolt_main(["logs", "--user", "alice"]) == 0
	listed = capsys.readouterr().out
	assert "for end user alice" in listed and "bob" not in listed
	assert openmolt_main(["logs", "--user", "carol"]) == 0
	assert "no recorded run matches --user 'carol'" in capsys.readouterr().err


def test_a_run_id_with_a_dot_is_a_run_of_its_own_in_the_list(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run the application named 'order.123' is listed, and not said to be nested in 'order'."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		agent = om.create_agent(name="Shop", model=ScriptedModel([finish("sold")]))
		from openmolt_core.durability import LOCAL_PORT

		await agent.execute(None, port=LOCAL_PORT, input="sell", run_id="order.123")

	anyio.run(record)
	assert openmolt_main(["logs"]) == 0
	listed = capsys.readouterr().out
	assert "order.123  Shop  success" in listed and "nested in" not in listed
	assert openmolt_main(["logs", "--agent", "Shop"]) == 0
	assert "nested in" not in capsys.readouterr().out


def test_a_run_whose_id_starts_with_anothers_is_not_listed_as_nested_in_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs order` lists no nested runs when 'order.123' is a run of its own."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		agent = om.create_agent(name="Shop", model=ScriptedModel([finish("sold"), finish("sold")]))
		from openmolt_core.durability import LOCAL_PORT

		await agent.execute(None, port=LOCAL_PORT, input="sell", run_id="order")
		await agent.execute(None, port=LOCAL_PORT, input="sell", run_id="order.123")

	anyio.run(record)
	assert openmolt_main(["logs", "order"]) == 0
	shown = capsys.readouterr().out
	assert shown.startswith("run order:")
	assert "nested runs" not in shown and "order.123" not in shown


def test_one_runs_page_says_its_caller_and_its_end_user(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs ID` of a nested run names its caller, and of a user's run whose it is, as
	the list's rows and the viewer's run page say."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))
	ids: list[str] = []

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		helper = om.create_agent(name="Helper", model=ScriptedModel([finish("a")]))
		main = om.create_agent(
			name="Main",
			model=ScriptedModel([call_tool("local.Helper", task="go"), finish("done")]),
			tools=[helper],
		)
		ids.append((await main.run("go", user="alice")).state.run_id)

	anyio.run(record)
	top = ids[0]
	assert openmolt_main(["logs", f"{top}.1.0"]) == 0
	head = capsys.readouterr().out.split("events:")[0]
	assert f"nested in {top}" in head and "for end user alice" in head
	assert openmolt_main(["logs", top]) == 0
	head = capsys.readouterr().out.split("events:")[0]
	assert "nested in" not in head and "for end user alice" in head


def test_a_runs_page_says_when_it_lists_only_the_latest_of_its_nested_runs(
	top: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run with more nested runs than the page lists said nothing of the others (a guardrail
	agent per call passes 100 soon); it says how many it shows and how to find the rest."""

	monkeypatch.setattr(runstore, "NESTED_SHOWN", 1)
	assert openmolt_main(["logs", top]) == 0
	nested = capsys.readouterr().out.split("nested runs")[1]
	assert len([line for line in nested.splitlines() if line.startswith(f"  {top}.")]) == 1
	assert "the latest 1 only" in nested and "--agent" in nested
	assert openmolt_main(["logs", top, "--json"]) == 0
	document = json.loads(capsys.readouterr().out)
	assert len(document["nested"]) == 1 and document["nested_more"] is True


def test_a_runs_json_holds_its_nested_runs_rows(
	top: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs RUN --json` lacked the nested runs its text page and the viewer's export
	list: their rows are under ``nested``, oldest first, with ``nested_more``, and the document
	is still one JSON value with the run's events."""
	assert openmolt_main(["logs", top, "--json"]) == 0
	document = json.loads(capsys.readouterr().out)
	assert document["run_id"] == top and document["events"]
	nested = {row["run_id"]: row for row in document["nested"]}
	assert set(nested) == {f"{top}.1.0", f"{top}.guard.1.tool_call.0.0.Judge"}
	assert nested[f"{top}.1.0"]["agent"] == "Helper"
	assert nested[f"{top}.1.0"]["status"] == "success"
	assert document["nested"] == sorted(document["nested"], key=lambda r: r["started"])
	assert document["nested_more"] is False
