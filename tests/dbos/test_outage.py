"""A database outage never runs one run in two places (PostgreSQL behind a proxy the test cuts).

Two workers, w1 (which starts the runs) and w2, reach PostgreSQL through a TCP proxy. Cutting it
for longer than the lapse: w1 cannot renew its lease, stops its runs (fencing) before w2 may take
them over, and after the outage exactly one worker finishes each run: the model is asked each turn
once. Cutting it for less than the lapse: nothing is fenced, nothing taken over, nothing repeated.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import pytest
from _crash_cases import _client_om, _om_call
from _durable import FakeServer
from _harness import make_store
from dbos import DBOSClient

from openmolt_dbos._engine import reset_engine
from openmolt_dbos._workers import list_workers, make_engine

HEARTBEAT, LAPSE = 0.3, 3.0
OUTAGE = LAPSE * 3
"""How long the store is away in the test whose outage outlasts the lapse."""
WAIT = OUTAGE
"""The wait run's sleep in that test: the outage must begin while it still sleeps, so that no
model call is in flight when the store goes away (`_settled`). A call in flight then is made
again by the worker that goes on (turns [0, 1, 1], measured by holding the model's reply over
the cut): that is at least once, documented, not a run in two places, and not what this test
is about. As long as the outage, the sleep ends by the outage's end when the cut comes at once:
the test takes no longer for it (it was 2.5 s, then 5 s, and the look that starts the cut came
up to 24 s late: `Journal`)."""
SHORT_WAIT = 5.0
"""The wait run's sleep in the test whose outage must change nothing (a cut of ``LAPSE / 4``)."""
CALM_LAPSE = 10.0
"""The lapse of the test whose outage must change nothing: its cut is ``LAPSE / 4``, but a worker
starved of CPU for 3 s (a CI machine running four test processes on two cores) lapsed without any
outage, and that test read it as the outage's doing."""


class Proxy:
	"""A TCP proxy to PostgreSQL that the test can cut (every connection dropped, new ones refused)."""

	def __init__(self, host: str, port: int) -> None:
		self.target = (host, port)
		self.up = True
		self._conns: list[socket.socket] = []
		self._lock = threading.Lock()
		self.listener = socket.create_server(("127.0.0.1", 0))
		self.port = self.listener.getsockname()[1]
		threading.Thread(target=self._accept, daemon=True).start()

	def _accept(self) -> None:
		while True:
			try:
				client, _ = self.listener.accept()
			except OSError:
				return
			if not self.up:
				client.close()
				continue
			try:
				upstream = socket.create_connection(self.target)
			except OSError:
				client.close()
				continue
			with self._lock:
				self._conns += [client, upstream]
			for a, b in ((client, upstream), (upstream, client)):
				threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

	def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
		try:
			while data := src.recv(65536):
				dst.sendall(data)
		except OSError:
			pass
		for s in (src, dst):
			try:
				s.shutdown(socket.SHUT_RDWR)
			except OSError:
				pass
			s.close()

	def cut(self, seconds: float) -> None:
		"""The database is unreachable for ``seconds``."""
		self.up = False
		with self._lock:
			conns, self._conns = self._conns, []
		for conn in conns:
			try:
				conn.shutdown(socket.SHUT_RDWR)
				conn.close()
			except OSError:
				pass
		time.sleep(seconds)
		self.up = True

	def close(self) -> None:
		self.listener.close()


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[str, Proxy]]:
	"""A fresh PostgreSQL database, and its URL through a proxy."""
	stores = make_store("postgres", tmp_path)
	store = next(stores)
	parts = urlsplit(store)
	proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
	netloc = f"{parts.username}@127.0.0.1:{proxy.port}"
	try:
		yield urlunsplit(parts._replace(netloc=netloc)), proxy
	finally:
		proxy.close()
		for _ in stores:
			pass


def _scripts(server: FakeServer, tag: str, seconds: float) -> list[str]:
	tool, wait = f"{tag}-tool", f"{tag}-wait"
	server.scripts[tool] = [
		{
			"type": "callTool",
			"tool": "svc.charge",
			"input": {"scenario": tool, "value": "O", "hold": tool},
		},
		{"type": "finish", "status": "success", "output": {"result": "charged"}},
	]
	server.scripts[wait] = [
		{"type": "wait", "seconds": seconds},
		{"type": "finish", "status": "success", "output": {"result": "waited"}},
	]
	server.holds[tool] = threading.Event()
	return [tool, wait]


def _start(
	spawn: Any, url: str, server: FakeServer, names: list[str], go: Path, lapse: float = LAPSE
) -> tuple[Any, Any, dict[str, str]]:
	"""Start w1 (the driver, holding the runs) and w2; the runs begin once both are up.

	The runs wait for the go-ahead file ``go`` (the driver's ``later:``): begun as the driver
	was ready, they ran while w2 started, which took 6 s on a loaded machine, and the wait
	run's sleep had ended before the test could look for it.
	"""
	env = {
		"OPENMOLT_TEST_SERVER": server.url,
		"OPENMOLT_TEST_HEARTBEAT": str(HEARTBEAT),
		"OPENMOLT_TEST_LAPSE": str(lapse),
		"OPENMOLT_TEST_GO": str(go),
	}
	driver = spawn(["driver.py", url, "w1", *(f"later:{n}" for n in names)], env, name="w1")
	driver.wait_line("ready")
	ids = dict(
		line.split()[1:3] for line in driver.output().splitlines() if line.startswith("started ")
	)
	args = ["-m", "openmolt", "worker", "crash_agents.py", "--durability", url, "--id", "w2"]
	worker = spawn([*args, "--heartbeat", str(HEARTBEAT), "--lapse", str(lapse)], env, "w2")
	worker.wait_line("ready")
	go.touch()
	return driver, worker, ids


class Journal:
	"""Reads runs' journaled steps through one DBOS client, imported before the runs start.

	A client made at each look (`_crash_cases._steps`) imported DBOS into the test process at
	the first: on a loaded machine that took 10 s, and the look for the wait run's sleep came
	24 s after the sleep began, when the sleep (then 2.5 or 5 s) had long ended: the cut found
	the run done, or asking its next turn. The client is made at the first look, once the
	workers made DBOS's tables.
	"""

	def __init__(self, url: str) -> None:
		self.url = url
		self.client: DBOSClient | None = None

	def steps(self, run_id: str) -> list[dict[str, Any]]:
		"""The run's journaled steps (name and output)."""
		if self.client is None:
			self.client = DBOSClient(system_database_url=self.url)
		return [dict(s) for s in self.client.list_workflow_steps(run_id)]

	def close(self) -> None:
		if self.client is not None:
			self.client.destroy()


def _settled(journal: Journal, server: FakeServer, names: list[str], ids: dict[str, str]) -> float:
	"""Wait until no model call is in flight: the tool call is held, the wait's sleep journaled.

	A call in flight when the store goes away cannot be journaled, so the worker that goes on
	makes it again: that is at least once, whatever the fencing. The cut comes when both runs sit
	in a step whose start is journaled. Returns the seconds the sleep has left (its wake time is
	the step's output).
	"""
	server.wait_for(lambda: server.entries("tool", name="charge", scenario=names[0]), 60, "held")

	def wake() -> float | None:
		sleeps = [s for s in journal.steps(ids[names[1]]) if s["function_name"] == "DBOS.sleep"]
		return float(sleeps[0]["output"]) if sleeps else None

	return float(server.wait_for(wake, 60, "sleeping")) - time.time()


async def _now(url: str, run_id: str) -> Any:
	om = _client_om(url)
	try:
		return await om.result(run_id, wait=False)
	finally:
		await om.aclose()
		reset_engine()


def _results(url: str, ids: dict[str, str], *procs: Any) -> dict[str, Any]:
	"""Each run's result; a run that does not end in time fails the test with what the workers said."""

	async def all_of() -> dict[str, Any]:
		with anyio.move_on_after(120):
			return {name: await _om_call(url, "result", run_id) for name, run_id in ids.items()}
		statuses = {name: await _now(url, run_id) for name, run_id in ids.items()}
		said = "\n".join(
			line for p in procs for line in p.output().splitlines() if "openmolt" in line.lower()
		)
		raise AssertionError(f"the runs did not end: {statuses}\n{said[-6000:]}")

	return anyio.run(all_of)


def _once_each(server: FakeServer, names: list[str], cut: float, **procs: Any) -> None:
	"""Each turn asked once: never in two places. A failure says who asked each, and when."""
	who = {str(p.popen.pid): name for name, p in procs.items()}
	for name in names:
		asked = server.entries("model", name=name)
		turns = [e.body["turn"] for e in asked]
		said = [
			f"turn {e.body['turn']} by {who.get(str(e.body.get('pid')))} at {e.at - cut:+.2f} s"
			for e in asked
		]
		assert sorted(turns) == [0, 1], (name, said)  # times from the cut


@pytest.fixture
def journal(proxied: tuple[str, Proxy]) -> Iterator[Journal]:
	"""The runs' journals (read before the outage only)."""
	reader = Journal(proxied[0])
	yield reader
	reader.close()


@pytest.mark.timeout(240)
def test_an_outage_longer_than_the_lapse_fences_the_owner_and_one_worker_goes_on(
	proxied: tuple[str, Proxy], journal: Journal, server: FakeServer, spawn: Any, tmp_path: Path
) -> None:
	"""During a tool call and during a wait: the owner stops first; each run finishes once."""
	url, proxy = proxied
	names = _scripts(server, "long", WAIT)
	driver, worker, ids = _start(spawn, url, server, names, tmp_path / "go")
	left = _settled(journal, server, names, ids)
	if left < 0.5:  # the test would not be about a wait: say so, rather than what follows
		pytest.fail(f"the wait run's sleep ended {-left:.1f} s before the cut could come")
	released = threading.Timer(0.5, server.holds[names[0]].set)  # the call ends in the outage
	released.start()
	cut = time.time()
	proxy.cut(OUTAGE)
	results = _results(url, ids, driver, worker)
	assert results[names[0]].output == {"result": "charged"}
	assert results[names[1]].output == {"result": "waited"}
	_once_each(server, names, cut, w1=driver, w2=worker)
	charges = server.entries("tool", name="charge", scenario=names[0])
	assert 1 <= len(charges) <= 2 and len({c.headers["idempotency-key"] for c in charges}) == 1
	assert "lost its lease" in driver.output() or "lost its lease" in worker.output()
	driver.kill()
	worker.stop()


@pytest.mark.timeout(240)
def test_an_outage_shorter_than_the_lapse_changes_nothing(
	proxied: tuple[str, Proxy], journal: Journal, server: FakeServer, spawn: Any, tmp_path: Path
) -> None:
	"""Nobody is fenced or taken over; every call and turn happens once, in w1."""
	url, proxy = proxied
	names = _scripts(server, "short", SHORT_WAIT)
	driver, worker, ids = _start(spawn, url, server, names, tmp_path / "go", lapse=CALM_LAPSE)
	_settled(journal, server, names, ids)
	cut = time.time()
	proxy.cut(LAPSE / 4)
	server.holds[names[0]].set()
	results = _results(url, ids, driver, worker)
	assert [r.status for r in results.values()] == ["success", "success"]
	_once_each(server, names, cut, w1=driver, w2=worker)
	assert len(server.entries("tool", name="charge", scenario=names[0])) == 1
	assert "lost its lease" not in driver.output() + worker.output()
	tables = make_engine(url)
	try:
		rows = {r["executor_id"]: r for r in list_workers(tables)}
	finally:
		tables.dispose()
	assert rows["w1"]["state"] == "live" and rows["w2"]["state"] == "live"
	driver.kill()
	worker.stop()
