"""The replay guard on a PostgreSQL durable store: servers on several machines take a key once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _harness import make_store

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_serve._seen import SqliteSeen, seen_store
from openmolt_serve.signatures import ReplayGuard, Verified


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[str]:
	"""A fresh PostgreSQL store (its process engine forgotten after)."""
	from openmolt_dbos._engine import reset_engine

	stores = make_store("postgres", tmp_path)
	yield next(stores)
	reset_engine()  # its connections closed before the database is dropped
	for _ in stores:
		pass


def _server(url: str, machine: Path) -> Any:
	"""An instance and its agent as a server on one machine sees them (its own files folder)."""
	om = OpenMolt(durability={"url": url, "files_dir": str(machine)}, entry_points=False)
	return om.create_agent(name="Support", model=ScriptedModel([finish("hi")]))


def test_a_chat_message_retried_to_another_machine_is_taken_once(
	postgres: str, tmp_path: Path
) -> None:
	"""Two servers sharing only a PostgreSQL store (each its own files folder): one takes a
	message's id, the other is told it is taken; each kept its own SQLite file before."""
	one = seen_store(_server(postgres, tmp_path / "machine-a"), "chat:telegram")
	two = seen_store(_server(postgres, tmp_path / "machine-b"), "chat:telegram")
	assert one is not None and two is not None
	assert not isinstance(one, SqliteSeen)
	assert one.take({"msg:77": 4e9}, 1e9) is None
	assert two.take({"msg:77": 4e9}, 1e9) == "msg:77"
	# A webhook delivery the same way: the retry, signed anew, reaches the other machine.
	a = ReplayGuard(store=seen_store(_server(postgres, tmp_path / "machine-a"), "hook"))
	b = ReplayGuard(store=seen_store(_server(postgres, tmp_path / "machine-b"), "hook"))
	assert a.claim(Verified("github", "ab" * 32, None, "d-1")) is None
	assert b.claim(Verified("github", "cd" * 32, None, "d-1")) == "delivery"
	a.forget(Verified("github", "ab" * 32, None, "d-1"))  # its run could not start
	assert b.claim(Verified("github", "cd" * 32, None, "d-1")) is None


def test_of_many_servers_taking_one_key_at_once_one_gets_it(postgres: str, tmp_path: Path) -> None:
	"""Eight threads take one key together: exactly one is told it took it."""
	stores = [seen_store(_server(postgres, tmp_path / f"m{i}"), "hook") for i in range(8)]
	barrier = threading.Barrier(len(stores))
	won: list[bool] = []

	def take(store: Any) -> None:
		barrier.wait()
		won.append(store.take({"id:same": None, "sig:same": 4e9}, 1e9) is None)

	threads = [threading.Thread(target=take, args=(s,)) for s in stores]
	for t in threads:
		t.start()
	for t in threads:
		t.join(30)
	assert sorted(won) == [False] * 7 + [True]


def test_expired_entries_do_not_count_and_scopes_are_apart(postgres: str, tmp_path: Path) -> None:
	"""An entry past its time is taken again; another agent's scope keeps its own keys."""
	store = seen_store(_server(postgres, tmp_path / "a"), "hook")
	assert store is not None
	assert store.take({"sig:x": 100.0}, 50.0) is None
	assert store.seen(["sig:x"], 60.0) and not store.seen(["sig:x"], 200.0)
	assert store.take({"id:d": None, "sig:x": 300.0}, 60.0) == "sig:x"  # nothing kept
	assert not store.seen(["id:d"], 60.0)
	assert store.take({"sig:x": 300.0}, 200.0) is None  # expired: taken again
	other = seen_store(_server(postgres, tmp_path / "a"), "chat:slack")
	assert other is not None and other.take({"sig:x": 300.0}, 200.0) is None
	assert "password" not in repr(store) and "scope='hook:Support'" in repr(store)


def test_a_sqlite_durable_store_keeps_the_guard_in_its_file_folder(tmp_path: Path) -> None:
	"""On SQLite the servers share a machine: the guard stays in a file beside the store."""
	from openmolt_dbos._engine import reset_engine

	try:
		agent = _server(f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "files")
		store = seen_store(agent, "hook")
		assert isinstance(store, SqliteSeen) and store.path.parent == tmp_path / "files"
	finally:
		reset_engine()


def test_a_long_delivery_id_is_taken_once(postgres: str, tmp_path: Path) -> None:
	"""A sender's delivery id longer than the table's key column (an unsigned header a client
	sets, an event id) is taken and refused as a short one is, not a database error."""
	one = seen_store(_server(postgres, tmp_path / "a"), "hook")
	two = seen_store(_server(postgres, tmp_path / "b"), "hook")
	assert one is not None and two is not None
	long = "id:" + "d" * 2000
	assert one.take({long: None, "sig:y": 4e9}, 1e9) is None
	assert two.take({long: None, "sig:z": 4e9}, 1e9) == long
	assert two.seen([long], 1e9)
	two.discard([long])
	assert one.take({long: None}, 1e9) is None


def _replay_across_skewed_clocks(store: Any) -> None:
	"""B takes a signed delivery; A, whose clock is a minute ahead, then one a minute behind,
	takes another; the delivery replayed inside its window to C (the right clock), or to a server
	a minute behind, is refused."""
	stamp = 1_800_000_000
	delivery = Verified("stripe", "ab" * 32, stamp, None)  # Stripe signs a time, names no id
	assert ReplayGuard(store=store).claim(delivery, now=stamp + 10) is None
	for n, skew in enumerate((60, -60)):
		another = Verified("stripe", f"{n:02d}" * 32, stamp + 240, None)
		assert ReplayGuard(store=store).claim(another, now=stamp + 245 + skew) is None
	assert ReplayGuard(store=store).claim(delivery, now=stamp + 250) == "signature"
	assert ReplayGuard(store=store).claim(delivery, now=stamp + 330 - 60) == "signature"


def test_a_server_on_another_clock_never_drops_what_the_others_still_refuse(
	postgres: str, tmp_path: Path
) -> None:
	"""On PostgreSQL: a server's clock ahead of the others' does not let a replay through."""
	_replay_across_skewed_clocks(seen_store(_server(postgres, tmp_path / "m"), "hook"))


def test_a_server_on_another_clock_never_drops_what_the_others_still_refuse_sqlite(
	tmp_path: Path,
) -> None:
	"""On one SQLite file: the same."""
	_replay_across_skewed_clocks(SqliteSeen(tmp_path / "runs.db", "hook:Support"))
