"""The first start on a PostgreSQL database that does not exist yet: created, or a clear error."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from _harness import POSTGRES_URL

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, finish
from openmolt_dbos._engine import reset_engine

pytestmark = [
	pytest.mark.anyio,
	pytest.mark.skipif(not POSTGRES_URL, reason="PostgreSQL: set OPENMOLT_TEST_POSTGRES_URL"),
]


def _admin(sql: str, *params: str) -> list[tuple[object, ...]]:
	import psycopg

	assert POSTGRES_URL
	with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
		cur = conn.execute(sql, params or None)
		return list(cur.fetchall()) if cur.description else []


def _exists(name: str) -> bool:
	return bool(_admin("SELECT 1 FROM pg_database WHERE datname = %s", name))


@pytest.fixture
def new_name() -> Iterator[str]:
	"""A database name that does not exist (dropped at the end if a test created it)."""
	name = f"om_new_{uuid.uuid4().hex[:10]}"
	assert not _exists(name)
	yield name
	_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", name)
	_admin(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.fixture
async def clean() -> AsyncIterator[None]:
	yield
	from dbos import DBOS

	from openmolt_dbos import _engine

	engine = _engine._ENGINE
	if engine is not None and engine.launched:
		await engine.shutdown()
	DBOS.destroy()
	reset_engine()


def _url(role: str, name: str) -> str:
	assert POSTGRES_URL
	base = POSTGRES_URL.rpartition("/")[0]
	scheme, _, rest = base.partition("://")
	host = rest.rpartition("@")[2]
	return f"{scheme}://{role}@{host}/{name}"


async def test_a_missing_database_is_created_on_the_first_run(new_name: str, clean: None) -> None:
	"""From a cluster with only `postgres`, the first durable run creates its database."""
	om = OpenMolt(durability=_url("postgres", new_name), entry_points=False)
	agent = om.create_agent(name="First", model=ScriptedModel([finish(result="ok")]))
	result = await agent.run("go")
	assert result.ok and result.output == {"result": "ok"}
	assert _exists(new_name)
	assert (await om.result(result.state.run_id)).ok
	await om.aclose()


async def test_a_role_that_may_not_create_it_gets_an_error_naming_the_database_and_the_fix(
	new_name: str, clean: None
) -> None:
	"""No raw OperationalError: a ConfigurationError with the database's name and createdb."""
	role = f"om_role_{uuid.uuid4().hex[:8]}"
	_admin(f'CREATE ROLE "{role}" LOGIN NOCREATEDB')
	try:
		om = OpenMolt(durability=_url(role, new_name), entry_points=False)
		agent = om.create_agent(name="First", model=ScriptedModel([finish(result="ok")]))
		with pytest.raises(ConfigurationError) as caught:
			await agent.run("go")
		message = str(caught.value)
		assert new_name in message and "createdb" in message and "CREATEDB" in message
		assert not _exists(new_name)
		await om.aclose()
	finally:
		_admin(f'DROP ROLE IF EXISTS "{role}"')


async def test_an_unreachable_server_is_a_clear_error(clean: None) -> None:
	"""A server that does not answer: the store (without password) and what to check."""
	om = OpenMolt(durability="postgresql://me:secret@127.0.0.1:1/nowhere", entry_points=False)
	agent = om.create_agent(name="First", model=ScriptedModel([finish(result="ok")]))
	with pytest.raises(ConfigurationError) as caught:
		await agent.run("go")
	message = str(caught.value)
	assert "cannot reach the store" in message and "secret" not in message
	await om.aclose()


async def test_a_reader_of_a_missing_database_is_told_to_start_a_worker_first(
	new_name: str, clean: None
) -> None:
	"""om.pending / om.answer (no worker here) never create it: a clear error instead."""
	om = OpenMolt(durability=_url("postgres", new_name), entry_points=False)
	om.create_agent(name="First", model=ScriptedModel([finish(result="ok")]))
	for call in (om.pending(), om.answer("some-run", "yes")):
		with pytest.raises(ConfigurationError, match="has no database yet"):
			await call
	assert not _exists(new_name)
	await om.aclose()
