"""durability=... settings, and the workers table: one holder per id, one taker per dead worker."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_dbos import parse_settings
from openmolt_dbos._workers import WORKERS, Heartbeat, create_tables, list_workers, make_engine


def test_a_path_or_a_url_names_the_store(tmp_path: Path) -> None:
	"""A bare path is a SQLite file; sqlite:/// and postgresql:// URLs pass (postgres:// too)."""
	assert parse_settings(str(tmp_path / "r.sqlite")).url == f"sqlite:///{tmp_path / 'r.sqlite'}"
	assert parse_settings(tmp_path / "r.sqlite").is_sqlite
	pg = parse_settings("postgres://me:secret@db:5432/runs")
	assert pg.url == "postgresql://me:secret@db:5432/runs" and not pg.is_sqlite
	assert pg.describe() == "postgresql://me@db:5432/runs"  # no password in messages


@pytest.mark.parametrize(
	("config", "match"),
	[
		(
			"runs\x00.db",
			r"durability must be a SQLite file's path .* no NUL character \(it holds one at 4\)",
		),
		({"url": "runs\x00.db"}, r"durability\['url'\] must be .* no NUL character"),
		({"url": 5}, r"durability\['url'\] must be .*\(text or a pathlib.Path\), got int"),
		(
			{"url": "r.db", "filesDir": "f\x00"},
			r"durability\['filesDir'\] must be a folder's path .* NUL",
		),
	],
)
def test_a_path_the_os_cannot_take_is_named_with_the_option(config: object, match: str) -> None:
	"""A NUL character (the OS's "embedded null byte", raised at the first run) or a number: named where given."""
	with pytest.raises(ConfigurationError, match=match):
		parse_settings(config)  # type: ignore[arg-type]


def test_options_are_checked_by_name(tmp_path: Path) -> None:
	"""The dict form takes the options (camelCase too) and names a wrong one with the fix."""
	settings = parse_settings(
		{"url": str(tmp_path / "r.sqlite"), "workerId": "w7", "heartbeat": 1, "lapse": 4}
	)
	assert (settings.executor_id(), settings.heartbeat, settings.lapse) == ("w7", 1.0, 4.0)
	with pytest.raises(ConfigurationError, match="did you mean 'heartbeat'"):
		parse_settings({"url": "x.sqlite", "hartbeat": 1})
	with pytest.raises(ConfigurationError, match="needs 'url'"):
		parse_settings({"lapse": 3})
	with pytest.raises(ConfigurationError, match="longer than heartbeat"):
		parse_settings({"url": "x.sqlite", "heartbeat": 5, "lapse": 5})
	with pytest.raises(ConfigurationError, match="seconds > 0"):
		parse_settings({"url": "x.sqlite", "lapse": -1})
	with pytest.raises(ConfigurationError, match="not supported"):
		parse_settings("mysql://db/runs")
	# A url that is not text was made a SQLite file named "5" in the working directory.
	with pytest.raises(ConfigurationError, match=r"durability\['url'\] must be a SQLite file's"):
		parse_settings({"url": 5})
	assert not Path("5").exists()


def _beat(engine: object, executor_id: str, **options: object) -> Heartbeat:
	recovered: list[str] = []
	heartbeat = Heartbeat(
		engine,  # type: ignore[arg-type]
		executor_id=executor_id,
		app_version=str(options.get("version", "v1")),
		heartbeat=0.1,
		lapse=float(options.get("lapse", 0.5)),  # type: ignore[arg-type]
		recover=recovered.append,
	)
	heartbeat.recovered = recovered  # type: ignore[attr-defined]
	return heartbeat


def test_a_worker_id_has_one_live_holder(store: str) -> None:
	"""A second process under a live id waits for the lapse, then refuses; a stopped id is free."""
	engine = make_engine(store)
	try:
		create_tables(engine)
		# A lapse of 2 s against beats every 50 ms: a beat held up by a loaded machine (four test
		# workers writing SQLite files) must not read as a dead holder (0.5 s did, once in CI).
		first = _beat(engine, "w1", lapse=2.0)
		first.claim()
		with engine.begin() as conn:  # as if another machine held it: no pid to check
			conn.execute(WORKERS.update().values(host="elsewhere"))
		second = _beat(engine, "w1", lapse=2.0)
		began = time.time()
		for _ in range(3):
			first.beat()
		with pytest.raises(ConfigurationError, match="held by another live process"):
			# `first` keeps beating from another thread while `second` waits.
			import threading

			stop = threading.Event()

			def keep() -> None:
				while not stop.is_set():
					first.beat()
					time.sleep(0.05)

			threading.Thread(target=keep, daemon=True).start()
			try:
				second.claim()
			finally:
				stop.set()
		assert time.time() - began >= 2.0
		first.stop()
		second.claim()  # stopped: free at once
		assert {r["executor_id"]: r["token"] for r in list_workers(engine)} == {"w1": second.token}
	finally:
		engine.dispose()


def test_a_dead_worker_is_taken_over_once_and_only_by_its_version(store: str) -> None:
	"""Of two live workers, one claims the dead one; workers of another version never do."""
	engine = make_engine(store)
	try:
		create_tables(engine)
		# A lapse of 2 s: on a loaded machine claiming three workers on PostgreSQL took longer
		# than 0.5 s, and the dead one's lapse was over before the check that it still beats.
		dead = _beat(engine, "dead", lapse=2.0)
		dead.claim()
		live = [_beat(engine, "a", lapse=2.0), _beat(engine, "b", lapse=2.0)]
		other = _beat(engine, "c", version="v2", lapse=2.0)
		for heartbeat in (*live, other):
			heartbeat.claim()
		assert [h.take_over() for h in live] == [[], []]  # still beating
		time.sleep(2.2)
		for heartbeat in (*live, other):
			heartbeat.beat()
		taken = [h.take_over() for h in (*live, other)]
		assert sorted(map(len, taken)) == [0, 0, 1]
		assert taken[2] == []  # another version
		winner = live[0] if taken[0] else live[1]
		assert winner.recovered == ["dead"]  # type: ignore[attr-defined]
		rows = {r["executor_id"]: r for r in list_workers(engine)}
		assert rows["dead"]["state"] == "taken" and rows["dead"]["taken_by"] == winner.executor_id
		assert [h.take_over() for h in live] == [[], []]  # never twice
	finally:
		engine.dispose()


def test_the_sqlite_store_is_0600_in_a_0700_folder_whatever_the_umask(tmp_path: Path) -> None:
	"""The durable store holds every step's result: new folders 0700, the file (and WAL) 0600."""
	import os
	import sqlite3
	import stat

	from openmolt_dbos._engine import use_wal

	old = os.umask(0o002)
	try:
		path = tmp_path / "state" / "runs.sqlite"
		use_wal(f"sqlite:///{path}")
		with sqlite3.connect(path) as conn:
			conn.execute("CREATE TABLE t (x)")
		earlier = tmp_path / "earlier.sqlite"
		sqlite3.connect(earlier).close()
		os.chmod(earlier, 0o644)
		use_wal(f"sqlite:///{earlier}")
	finally:
		os.umask(old)
	assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
	files = [*(tmp_path / "state").iterdir(), earlier]
	for file in files:
		assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_a_worker_without_a_lease_stops_its_runs_before_anyone_may_take_them(store: str) -> None:
	"""The lease runs out before the lapse: fenced (runs stopped), no takeover by or of it yet;
	back, it resumes its own runs; if its row was taken, it holds its id again and resumes what is
	still pending under it."""
	engine = make_engine(store)
	try:
		create_tables(engine)
		# A lapse of 3 s: the claims and checks on a loaded PostgreSQL leave the windows their margin
		owner, other = _beat(engine, "owner", lapse=3.0), _beat(engine, "other", lapse=3.0)
		stopped: list[str] = []
		owner.fence = lambda: stopped.append("owner")
		for heartbeat in (owner, other):
			heartbeat.claim()
		assert owner.fence_after < owner.lapse and owner.check()
		time.sleep(owner.fence_after + 0.05)  # no beat: as when the database is unreachable
		assert not owner.check() and stopped == ["owner"] and owner.fenced
		assert not owner.check() and stopped == ["owner"]  # fenced once
		other.beat()
		assert other.take_over() == []  # the owner's beat is within the lapse: refused
		owner.beat()  # the database answers again: the lease is back, its runs resume here
		assert owner.lease_valid() and owner.recovered == ["owner"]  # type: ignore[attr-defined]
		time.sleep(owner.lapse + 0.05)
		other.beat()
		assert other.take_over() == ["owner"]  # its beat lapsed: taken over
		assert not owner.check()  # it had stopped already (its lease ran out first)
		owner.beat()  # back: its row was taken, so it holds its id again, and resumes what its
		# queue dequeued (and stopped) while it was fenced: the runs still pending under its id
		assert owner.lease_valid() and owner.recovered == ["owner", "owner"]  # type: ignore[attr-defined]
		rows = {r["executor_id"]: r for r in list_workers(engine)}
		assert rows["owner"]["state"] == "live"
	finally:
		engine.dispose()


def test_a_recovery_that_fails_when_the_lease_comes_back_is_tried_again(store: str) -> None:
	"""The store answers the beat but not the recovery: the runs are still owed, and the next beat
	resumes them (a run left pending under a live worker would wait forever)."""
	engine = make_engine(store)
	try:
		create_tables(engine)
		owner = _beat(engine, "owner", lapse=3.0)
		calls: list[str] = []

		def flaky(executor_id: str) -> None:
			calls.append(executor_id)
			if len(calls) == 1:
				raise ConnectionError("the store went away again")

		owner.recover = flaky
		owner.claim()
		time.sleep(owner.fence_after + 0.05)
		assert not owner.check()
		with pytest.raises(ConnectionError):
			owner.beat()
		assert owner.lease_valid() and calls == ["owner"]  # the lease holds: runs may start here
		owner.beat()
		assert calls == ["owner", "owner"]
		owner.beat()
		assert calls == ["owner", "owner"]  # resumed once: nothing owed any more
	finally:
		engine.dispose()


def test_threads_asking_for_the_tables_first_make_one_engine(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Answers and claims read the tables from worker threads: they share one engine.

	Without the lock each thread that saw no engine made its own (one leaked, pooled).
	"""
	import threading

	from openmolt_dbos import _workers
	from openmolt_dbos._engine import Engine

	made: list[object] = []

	def slow_engine(url: str, **options: Any) -> object:
		time.sleep(0.05)
		made.append(make_engine(url, **options))
		return made[-1]

	monkeypatch.setattr(_workers, "make_engine", slow_engine)
	engine = Engine(parse_settings(str(tmp_path / "r.sqlite")))
	seen: list[object] = []
	threads = [threading.Thread(target=lambda: seen.append(engine.tables)) for _ in range(3)]
	for thread in threads:
		thread.start()
	for thread in threads:
		thread.join()
	assert len(made) == 1 and seen == [made[0]] * 3
	engine.tables.dispose()
