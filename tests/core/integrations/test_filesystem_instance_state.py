"""The file tools never touch the stores an instance keeps inside a FileSystem's directories.

``OpenMolt(files_dir=..., run_store=..., schedule_store=..., credential_store=..., durability=...)``
may name places inside the folder a FileSystem integration is allowed (a project folder). A run
with that integration rewrote a stored file's owner metadata, the run history or a schedule, and
read the credential store: only the taint record, OpenMolt's default state and configuration
folders and the key store were kept out. Every path the instance keeps state in is kept out now,
with the names a store keeps beside its file (SQLite's ``-wal``, a ``.files`` folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests._results import tool_results

pytestmark = pytest.mark.anyio

NEEDLE = "kept-by-openmolt-3f9a"

# option -> (OpenMolt's options, relative to the allowed folder; the file it keeps there)
OPTIONS: dict[str, tuple[dict[str, Any], str]] = {
	"files_dir": ({"files_dir": "store"}, "store/ab/ab12.json"),
	"run_store": ({"run_store": "db/runs.db"}, "db/runs.db"),
	"schedule_store's journal": ({"schedule_store": "sched/s.db"}, "sched/s.db-wal"),
	"schedule_store": ({"schedule_store": "sched/schedules.db"}, "sched/schedules.db"),
	"credential_store": ({"credential_store": "secret/credentials.enc"}, "secret/credentials.enc"),
	"credential_store's lock": (
		{"credential_store": "secret/credentials.enc"},
		"secret/.credentials.enc.store.lock",
	),
}


def _instance(root: Path, options: dict[str, Any]) -> OpenMolt:
	def inside(value: Any) -> Any:
		if isinstance(value, dict):
			return {k: inside(v) if k in ("url", "filesDir") else v for k, v in value.items()}
		return str(root / value)

	om = OpenMolt(entry_points=False, **{k: inside(v) for k, v in options.items()})
	om.register_integration("fileSystem", OpenMolt.FileSystemIntegration(root))
	return om


@pytest.mark.parametrize("option", sorted(OPTIONS))
async def test_no_file_tool_reaches_a_store_the_instance_keeps_in_the_folder(
	tmp_path: Path, option: str
) -> None:
	"""Read, write, delete, move onto, copy onto, delete its folder: refused; search skips it."""
	root = tmp_path / "project"
	options, kept = OPTIONS[option]
	target = root / kept
	target.parent.mkdir(parents=True)
	target.write_text(NEEDLE)
	folder = kept.split("/")[0]
	steps = [
		call_tool("fileSystem.read", path=kept),
		call_tool("fileSystem.write", path=kept, content="{}", overwrite=True),
		call_tool("fileSystem.delete", path=kept),
		call_tool("fileSystem.write", path="blank.txt", content="{}"),
		call_tool("fileSystem.move", source="blank.txt", destination=kept, overwrite=True),
		call_tool("fileSystem.copy", source="blank.txt", destination=kept, overwrite=True),
		call_tool("fileSystem.delete", path=folder, recursive=True),
		call_tool("fileSystem.search", path=".", query=NEEDLE),
		call_tool("fileSystem.write", path="notes/today.md", content=NEEDLE),
		call_tool("fileSystem.read", path="notes/today.md"),
	]
	om = _instance(root, options)
	model = ScriptedModel([*steps, finish("done")])
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"], max_steps=20)
	await agent.run("tidy")
	await om.aclose()
	read, write, delete, blank, move, copy, rmtree, search, own, back = tool_results(model)
	for refused in (read, write, delete, move, copy, rmtree):
		assert not refused["ok"] and "OpenMolt's own state" in refused["error"], refused
	assert search["ok"] and search["result"]["matches"] == []
	assert target.read_text() == NEEDLE
	assert blank["ok"] and own["ok"] and back["result"]["content"] == NEEDLE  # others as before


@pytest.mark.parametrize(
	("durability", "kept"),
	[
		("durable/runs.sqlite", "durable/runs.sqlite"),
		("durable/runs.sqlite", "durable/runs.sqlite-wal"),
		("durable/runs.sqlite", "durable/runs.sqlite.files/f"),
		({"url": "durable/r.sqlite", "filesDir": "shared"}, "durable/r.sqlite"),
		({"url": "durable/r.sqlite", "filesDir": "shared"}, "shared/f"),
	],
)
def test_the_durable_store_and_its_files_are_kept_out(
	tmp_path: Path, durability: Any, kept: str
) -> None:
	"""A durable store's SQLite file, journal and files: refused where every path is checked.

	Not run through an agent: a process opens one durable store (DBOS), and binding loads it.
	"""
	from openmolt_core.assembly import own_state
	from openmolt_core.errors import ToolError
	from openmolt_core.integrations.filesystem import keep_out, sandbox_of

	root = tmp_path / "project"
	(root / kept).parent.mkdir(parents=True)
	(root / kept).write_text(NEEDLE)
	(root / "free.txt").write_text("x")
	if isinstance(durability, dict):
		durability = {k: str(root / v) for k, v in durability.items()}
	else:
		durability = str(root / durability)
	om = OpenMolt(entry_points=False, durability=durability)
	files = OpenMolt.FileSystemIntegration(root)
	state = own_state(om)
	keep_out(files, state.folders, state.stores)
	box = sandbox_of(files)
	with pytest.raises(ToolError, match="OpenMolt's own state"):
		box.file(kept)
	assert box.file("free.txt")


async def test_a_runs_session_file_is_kept_out(tmp_path: Path) -> None:
	"""``run(session=SQLiteSession(id, "project/chat.db"))``: its file, journal and turns folder."""
	from openmolt_core.sessions import SQLiteSession

	root = tmp_path / "project"
	root.mkdir()
	session = SQLiteSession("ada", root / "chat.db")
	om = _instance(root, {})
	steps = [
		call_tool("fileSystem.read", path="chat.db"),
		call_tool("fileSystem.write", path="chat.db", content="{}", overwrite=True),
		call_tool("fileSystem.write", path="chat.db-wal", content="{}"),
		call_tool("fileSystem.delete", path="chat.db"),
		call_tool("fileSystem.search", path=".", query="tidy"),
	]
	model = ScriptedModel([*steps, finish("done")])
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"], max_steps=20)
	await agent.run("tidy", session=session)
	await om.aclose()
	results = tool_results(model)
	for refused in results[:4]:
		assert not refused["ok"] and "OpenMolt's own state" in refused["error"], refused
	assert results[4]["ok"] and results[4]["result"]["matches"] == []
	assert (root / "chat.db").stat().st_size > 2


@pytest.mark.parametrize(
	"variable", ["OPENMOLT_SESSIONS", "OPENMOLT_RUN_STORE", "OPENMOLT_SCHEDULE_STORE"]
)
async def test_a_store_the_command_is_told_of_by_the_environment_is_kept_out(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
	"""The ``openmolt`` command's stores named by the environment, outside its state folder."""
	root = tmp_path / "project"
	(root / "state").mkdir(parents=True)
	monkeypatch.setenv(variable, str(root / "state" / "store.db"))
	(root / "state" / "store.db").write_text(NEEDLE)
	om = _instance(root, {})
	model = ScriptedModel(
		[
			call_tool("fileSystem.read", path="state/store.db"),
			call_tool("fileSystem.delete", path="state", recursive=True),
			finish("done"),
		]
	)
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"])
	await agent.run("tidy")
	await om.aclose()
	for refused in tool_results(model):
		assert not refused["ok"] and "OpenMolt's own state" in refused["error"], refused


async def test_the_approval_ledger_is_kept_out(tmp_path: Path) -> None:
	"""``approvals=Approvals(ledger=SQLiteLedger(...))``: its file and journal are kept out.

	Removing the ledger would let a decision already used be accepted again.
	"""
	from openmolt_core.approvals import Approvals, SQLiteLedger

	root = tmp_path / "project"
	root.mkdir()
	(root / "ledger.db").write_bytes(b"")
	om = OpenMolt(entry_points=False, approvals=Approvals(ledger=SQLiteLedger(root / "ledger.db")))
	om.register_integration("fileSystem", OpenMolt.FileSystemIntegration(root))
	model = ScriptedModel(
		[
			call_tool("fileSystem.delete", path="ledger.db"),
			call_tool("fileSystem.write", path="ledger.db-journal", content="x"),
			finish("done"),
		]
	)
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"])
	await agent.run("tidy")
	await om.aclose()
	for refused in tool_results(model):
		assert not refused["ok"] and "OpenMolt's own state" in refused["error"], refused
	assert (root / "ledger.db").exists()


async def _refused_reads(om: OpenMolt, paths: list[str], **run: Any) -> list[dict[str, Any]]:
	"""Run an agent with the FileSystem that reads each path; its results."""
	model = ScriptedModel([*(call_tool("fileSystem.read", path=p) for p in paths), finish("ok")])
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"], max_steps=20)
	await agent.run("tidy", **run)
	return tool_results(model)


def _all_refused(results: list[dict[str, Any]]) -> None:
	for refused in results:
		assert not refused["ok"] and "OpenMolt's own state" in refused["error"], refused


async def test_the_default_temporary_file_store_is_kept_out(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""No ``files_dir``: the store made in the temporary folder on the first save, and another
	instance's or process's there, when a FileSystem is allowed the temporary folder."""
	import tempfile

	root = tmp_path / "tmp"
	root.mkdir()
	monkeypatch.setattr(tempfile, "tempdir", str(root))
	om = _instance(root, {})
	saved = await om.files.save(NEEDLE.encode(), media_type="text/plain")
	(other := root / "openmolt-files-x1y2").mkdir()
	(other / "f.json").write_text(NEEDLE)
	folder = next(p for p in root.iterdir() if p.name.startswith("openmolt-files-") and p != other)
	kept = sorted(str(p.relative_to(root)) for p in folder.rglob("*") if p.is_file())
	assert kept and saved
	results = await _refused_reads(om, [*kept, "openmolt-files-x1y2/f.json"])
	await om.aclose()
	_all_refused(results)


async def test_a_sqlalchemy_sessions_sqlite_file_is_kept_out(tmp_path: Path) -> None:
	"""``run(session=SQLAlchemySession(id, "sqlite:///project/chat.db"))``: as a SQLiteSession's."""
	from openmolt_core.sessions import SQLAlchemySession

	root = tmp_path / "project"
	root.mkdir()
	session = SQLAlchemySession("ada", f"sqlite:///{root / 'chat.db'}")
	om = _instance(root, {})
	await _refused_reads(om, [], session=session)  # the first run makes the file
	assert (root / "chat.db").exists()
	results = await _refused_reads(om, ["chat.db", "chat.db.turns"], session=session)
	await om.aclose()
	_all_refused(results)


async def test_a_credential_store_set_after_the_agents_were_made_is_kept_out(
	tmp_path: Path,
) -> None:
	"""``om.credential_store = EncryptedFileStore("project/creds.enc")`` once the agent is bound."""
	from openmolt_core.credstore import EncryptedFileStore

	root = tmp_path / "project"
	root.mkdir()
	(root / "creds.enc").write_text(NEEDLE)
	om = OpenMolt(entry_points=False, credential_store=False)
	om.register_integration("fileSystem", OpenMolt.FileSystemIntegration(root))
	model = ScriptedModel([call_tool("fileSystem.read", path="creds.enc"), finish("ok")])
	agent = om.create_agent(name="Files", model=model, integrations=["fileSystem"])
	om.credential_store = EncryptedFileStore(root / "creds.enc", key="k" * 32)
	await agent.run("tidy")
	await om.aclose()
	_all_refused(tool_results(model))


def test_a_durable_backends_files_folder_is_kept_out_wherever_it_puts_it(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A PostgreSQL store keeps files in ``./openmolt-files`` by default: the backend says where.

	The backend's ``files_dir`` is the one the file store uses (`openmolt_core.assembly.file_store`),
	so it is what is kept out, whatever the options spelled.
	"""
	from openmolt_core import _durable
	from openmolt_core.assembly import own_state
	from openmolt_core.errors import ToolError
	from openmolt_core.integrations.filesystem import keep_out, sandbox_of

	root = tmp_path / "project"
	(root / "openmolt-files").mkdir(parents=True)
	(root / "openmolt-files" / "f").write_text(NEEDLE)
	(root / "free.txt").write_text("x")

	class Backend:
		files_dir = root / "openmolt-files"

	monkeypatch.setattr(_durable, "load_backend", lambda om, config: Backend())
	om = OpenMolt(entry_points=False, durability="postgresql://u@db.internal/runs")
	assert om.files.root == Backend.files_dir  # the file store's folder
	files = OpenMolt.FileSystemIntegration(root)
	state = own_state(om)
	keep_out(files, state.folders, state.stores)
	box = sandbox_of(files)
	with pytest.raises(ToolError, match="OpenMolt's own state"):
		box.file("openmolt-files/f")
	assert box.file("free.txt")
