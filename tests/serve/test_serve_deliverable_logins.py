"""A run's deliverable masks a URL's login wherever it leaves the process, its links working.

Text for a person already masked a connection string's password no source knows
(`test_serve_chat_text_logins`); the run's output did not: AG-UI's ``RUN_FINISHED`` result, an
A2A task's data part, the MCP tool's structured content and text, the viewer's result panel
(live and stored), the run store's row, ``openmolt run``'s printed result and ``openmolt logs``
all showed ``postgresql://app:PASSWORD@db``. One rule (`mask_url_logins_deep`) for all of them:
the password masked in every string and key (also where a field repeats it alone), a signed
link's query kept.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from openmolt_core._support.masking import mask_url_logins_deep
from openmolt_core.llm import Usage
from openmolt_core.result import RunResult, RunState
from openmolt_core.secrets import Redactor

pytestmark = pytest.mark.anyio

PASSWORD = "Pw-7f3a9e21c4d8"
SIGNATURE = "5d1e0f7a9b2c4e6f8a0b"
LOGIN = f"postgresql://app:{PASSWORD}@db.example/runs"
LINK = f"https://b.s3.example/k.pdf?X-Amz-Expires=600&X-Amz-Signature={SIGNATURE}"
OUTPUT = {"dsn": LOGIN, "links": [LINK], "password": PASSWORD, "note": f"use {LOGIN}\tnow"}


def _result(output: Any = OUTPUT) -> RunResult:
	return RunResult(output, "success", "", [], 1, Usage(), RunState(run_id="r"))  # type: ignore[arg-type]


def _clean(shown: str) -> None:
	assert PASSWORD not in shown and "[redacted]" in shown, shown
	assert SIGNATURE in shown, shown  # the signed link still works


def test_the_rule_masks_every_string_and_key_and_keeps_other_values() -> None:
	value = {**OUTPUT, LOGIN: 1, "n": 3, "ok": True, "none": None}
	masked = mask_url_logins_deep(value)
	_clean(json.dumps(masked))
	assert masked["n"] == 3 and masked["ok"] is True and masked["none"] is None
	assert mask_url_logins_deep({"a": LINK}) == {"a": LINK}
	assert mask_url_logins_deep(LOGIN) == "postgresql://app:[redacted]@db.example/runs"


def test_a_model_output_is_read_as_its_data() -> None:
	from pydantic import BaseModel

	class Out(BaseModel):
		dsn: str
		link: str

	_clean(json.dumps(mask_url_logins_deep(Out(dsn=LOGIN, link=LINK)), default=str))


def test_agui_run_finished_result() -> None:
	from openmolt_serve._agui_events import AguiEvents

	sent = AguiEvents("thread", "r", Redactor()).finished(_result(), None)
	_clean(" ".join(e.model_dump_json() for e in sent))


async def test_a2a_data_part() -> None:
	from a2a.server.tasks import TaskUpdater
	from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve._launch import in_memory_sessions
	from openmolt_serve.a2a import OpenMoltExecutor, _Collected

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	queue = _Collected()
	executor = OpenMoltExecutor(agent, in_memory_sessions())
	await executor._report(TaskUpdater(queue, "t", "c"), "t", _result())
	_clean(str([MessageToDict(e) for e in queue.events]))
	await om.aclose()


async def test_mcp_tool_output_text_and_structured_content() -> None:
	from mcp import Client

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, finish
	from openmolt_mcp.server import agent_server

	om = OpenMolt(entry_points=False)
	schema = {"type": "object", "properties": {"dsn": {"type": "string"}}}
	agent = om.create_agent(
		name="Helper",
		model=ScriptedModel([finish({"dsn": LOGIN, "link": LINK})]),
		output_schema=schema,
	)
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			result = await client.call_tool("Helper", {"input": "go"})
	await om.aclose()
	_clean(result.content[0].text)
	_clean(json.dumps(result.structured_content))


def test_the_viewer_result_panel_live_and_stored() -> None:
	from openmolt_ui.viewer import _shown

	row = {"run_id": "r", "status": "success", "output": OUTPUT, "trigger": None}
	_clean(json.dumps(_shown(row)["output"]))


async def test_the_run_store_row_and_openmolt_logs(tmp_path: Any, capsys: Any) -> None:
	from openmolt import OpenMolt
	from openmolt_core.cli._logs import _short
	from openmolt_core.runstore import RunStore
	from openmolt_core.testing import ScriptedModel, finish

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agent = om.create_agent(
		name="Helper", model=ScriptedModel([finish({"result": "ok", "dsn": LOGIN, "link": LINK})])
	)
	result = await agent.run("go")
	await om.aclose()
	store = RunStore(tmp_path / "runs.db")
	stored = await store.run(result.state.run_id)
	store.close()
	assert stored is not None
	_clean(json.dumps(stored.output))
	_clean(_short(OUTPUT, 400))  # a run stored before the rule


def test_openmolt_run_prints_the_result_masked() -> None:
	from openmolt_core.cli._run import _for_a_person

	shown = _for_a_person(
		RunResult(OUTPUT, "success", f"see {LOGIN}", [], 1, Usage(), RunState(run_id="r"))  # type: ignore[arg-type]
	)
	_clean(json.dumps(shown.to_dict()["output"]))
	assert PASSWORD not in (shown.human_message or "")


def test_openmolt_logs_json_masks_a_stored_runs_output(
	tmp_path: Any, monkeypatch: Any, capsys: Any
) -> None:
	"""A run stored before the run store masked a URL's login: ``--json`` shows it masked."""
	import sqlite3

	from openmolt import OpenMolt
	from openmolt_core.cli import main
	from openmolt_core.testing import ScriptedModel, finish

	async def run() -> str:
		om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
		agent = om.create_agent(name="Helper", model=ScriptedModel([finish({"result": "ok"})]))
		result = await agent.run("go")
		await om.aclose()
		return result.state.run_id

	run_id = anyio.run(run)
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(tmp_path / "runs.db"))
	with sqlite3.connect(tmp_path / "runs.db") as db:  # as an older version stored it
		db.execute("UPDATE agent_runs SET output = ?", (json.dumps(OUTPUT),))
	capsys.readouterr()
	for args in (["logs", "--json"], ["logs", run_id, "--json"]):
		assert main(args) == 0, capsys.readouterr().err
		_clean(capsys.readouterr().out)
