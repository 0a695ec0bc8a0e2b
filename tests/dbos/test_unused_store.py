"""A client on a SQLite store no durable run has used (or a mistyped path) gets a clear error.

SQLite makes a file where it is asked to: `om.pending`, `om.result`, `om.answer` and `om.cancel`
answered with DBOS's SQL error ("no such table: workflow_status") and left an empty file at the
wrong path. (PostgreSQL's missing database: test_new_database.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, finish
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, tuple[Any, ...]]] = [
	("pending", ()),
	("result", ("r1",)),
	("answer", ("r1", "yes")),
	("cancel", ("r1",)),
]


@pytest.mark.parametrize(("what", "args"), CALLS, ids=[c[0] for c in CALLS])
async def test_a_client_on_an_unused_sqlite_store_is_told_so(
	tmp_path: Path, what: str, args: tuple[Any, ...]
) -> None:
	path = tmp_path / "typo.sqlite"
	om = OpenMolt(durability=f"sqlite:///{path}", entry_points=False)
	try:
		with pytest.raises(ConfigurationError, match=r"holds no durable runs.*Check the path"):
			await getattr(om, what)(*args)
	finally:
		await om.aclose()
		reset_engine()
	assert not path.exists()


async def test_once_a_run_has_used_it_the_same_calls_answer(url: str) -> None:
	if not url.startswith("sqlite"):
		pytest.skip("SQLite only")
	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(name="Done", model=ScriptedModel([finish("done")]))
	try:
		ended = await agent.run("go")
		assert await om.pending() == []
		assert (await om.result(ended.state.run_id)).status == "success"  # type: ignore[union-attr]
	finally:
		await om.aclose()


async def test_a_client_on_a_file_that_is_no_database_or_a_folder_is_told_so(
	tmp_path: Path,
) -> None:
	"""`openmolt runs --durability agent.json` said "unexpected error: DatabaseError" with DBOS's
	SQL; a file that is not SQLite, or a folder, is now a ConfigurationError saying which."""
	agent = tmp_path / "agent.json"
	agent.write_text('{"name": "A"}')
	for path, said in ((agent, r"is not a SQLite database"), (tmp_path, r"is a folder")):
		om = OpenMolt(durability=f"sqlite:///{path}", entry_points=False)
		try:
			with pytest.raises(ConfigurationError, match=rf"durable: the store {path} {said}"):
				await om.pending()
		finally:
			await om.aclose()
			reset_engine()
	assert agent.read_text() == '{"name": "A"}'
