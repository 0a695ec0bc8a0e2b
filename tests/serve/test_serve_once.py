"""A delivery runs exactly once and is never lost: the replay guard's claim, a start that fails."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx
import pytest
from _serve_fakes import eventually

from openmolt import OpenMolt
from openmolt_core.sessions import InMemorySession
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve._seen import SqliteSeen
from openmolt_serve.signatures import ReplayGuard, Verified, sign

pytestmark = pytest.mark.anyio

SECRET = "webhook-secret-for-once"


def github(body: bytes, delivery: str) -> dict[str, str]:
	return {
		**sign("github", SECRET, body),
		"X-GitHub-Delivery": delivery,
		"content-type": "application/json",
	}


def _server(model: ScriptedModel, store: Path, **webhook: Any) -> tuple[OpenMolt, TriggerServer]:
	om = OpenMolt(entry_points=False, run_store=store)
	agent = om.create_agent(name="Triage", model=model, instructions="Label issues.")
	triggers = Triggers.model_validate({"webhook": {"secret": SECRET, **webhook}})
	return om, TriggerServer([(agent, triggers)], port=0)


class _Interleaved(SqliteSeen):
	"""A store whose last look-up reads, then lets another server take the delivery, then answers.

	What two servers (or two processes) on one file do when their requests arrive together: both
	read before either writes.
	"""

	def __init__(self, path: Path, scope: str, meanwhile: Any) -> None:
		super().__init__(path, scope)
		self.meanwhile = meanwhile

	def seen(self, keys: Sequence[str], now: float) -> bool:
		answer = super().seen(keys, now)
		if self.meanwhile is not None and any(k.startswith("sig:") for k in keys):
			meanwhile, self.meanwhile = self.meanwhile, None
			meanwhile()
		return answer


async def test_two_servers_on_one_store_run_one_delivery_once(tmp_path: Path) -> None:
	"""The same delivery reaching two servers on one run store at once starts one run, not two."""
	store = tmp_path / "runs.db"
	model_a = ScriptedModel([finish("a")] * 2)
	model_b = ScriptedModel([finish("b")] * 2)
	om_a, server_a = _server(model_a, store, scheme="github")
	om_b, server_b = _server(model_b, store, scheme="github")
	body = json.dumps({"action": "opened", "issue": {"number": 7}}).encode()
	answers: dict[str, httpx.Response] = {}
	with anyio.from_thread.start_blocking_portal() as portal:  # server B: its own thread and loop
		serving_b = portal.wrap_async_context_manager(server_b)
		await anyio.to_thread.run_sync(serving_b.__enter__)
		try:

			def b_takes_it() -> None:
				with httpx.Client(base_url=server_b.url) as client:
					answers["b"] = client.post(
						"/hooks/Triage", content=body, headers=github(body, "d-1")
					)

			async with server_a:
				hook = server_a.webhooks["Triage"]
				assert hook.store is not None
				interleaved = _Interleaved(store, hook.store.scope, b_takes_it)  # type: ignore[attr-defined]
				hook.store = hook.guard.store = interleaved
				async with httpx.AsyncClient(base_url=server_a.url) as client:
					answers["a"] = await client.post(
						"/hooks/Triage", content=body, headers=github(body, "d-1")
					)
				await anyio.sleep(0.5)  # time for a second run to start
				interleaved.close()
		finally:
			await anyio.to_thread.run_sync(serving_b.__exit__, None, None, None)
	await om_a.aclose()
	await om_b.aclose()
	assert sorted(r.status_code for r in answers.values()) == [200, 202]
	assert {r.json()["run_id"] for r in answers.values()} == {answers["b"].json()["run_id"]}
	assert len(model_a.requests) + len(model_b.requests) == 1


async def test_the_same_delivery_twice_within_milliseconds_runs_once(tmp_path: Path) -> None:
	"""Senders send a delivery twice at once: one 202, one 200 duplicate, one run."""
	model = ScriptedModel([finish("a")] * 2)
	om, server = _server(model, tmp_path / "runs.db", scheme="github")
	body = b'{"n": 1}'
	async with server, httpx.AsyncClient(base_url=server.url) as client:
		answers: list[httpx.Response] = []

		async def post() -> None:
			answers.append(
				await client.post("/hooks/Triage", content=body, headers=github(body, "d-2"))
			)

		async with anyio.create_task_group() as tg:
			for _ in range(4):
				tg.start_soon(post)
		await anyio.sleep(0.3)
	await om.aclose()
	assert sorted(r.status_code for r in answers) == [200, 200, 200, 202]
	assert len(model.requests) == 1


def test_of_two_guards_on_one_file_one_claims_a_delivery(tmp_path: Path) -> None:
	"""ReplayGuard.claim is one step in the store: the second guard on the file is told it is taken."""
	one = ReplayGuard(store=SqliteSeen(tmp_path / "seen.db", "hook:A"))
	two = ReplayGuard(store=SqliteSeen(tmp_path / "seen.db", "hook:A"))
	first = Verified("github", "ab" * 32, None, "d-1")
	retry = Verified("github", "cd" * 32, None, "d-1")  # signed anew, the same delivery
	assert one.claim(first) is None
	assert two.claim(retry) == "delivery"
	assert two.claim(first) == "delivery"
	assert (
		ReplayGuard(store=SqliteSeen(tmp_path / "seen.db", "hook:A")).claim(
			Verified("hmac", "ab" * 32, None, None)
		)
		== "signature"
	)
	one.forget(first)  # its run did not start: the retry is welcome, on any server
	assert two.claim(retry) is None


class _Breaking(InMemorySession):
	"""A session whose store fails while ``broken`` (a database that went away)."""

	broken = False

	async def get_latest(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
		if _Breaking.broken:
			raise OSError(f"the session store is down (password {SECRET})")
		return await super().get_latest(limit)

	async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
		if _Breaking.broken:
			raise OSError(f"the session store is down (password {SECRET})")
		return await super().get_items(limit)


class _Slow(ScriptedModel):
	async def generate(self, request: Any) -> Any:
		await anyio.sleep(1.5)
		return await super().generate(request)


async def test_a_run_that_fails_to_start_after_the_answer_is_recorded_and_its_retry_runs(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A queued run that cannot start after its 202 is a failed run in the store (masked), and
	the sender's retry of that delivery runs: nothing ran, so it is no duplicate."""
	from openmolt_serve import webhooks

	monkeypatch.setattr(webhooks, "ACK_WITHIN", 0.3)
	monkeypatch.setattr(_Breaking, "broken", False)
	kept: dict[str, _Breaking] = {}
	model = _Slow([finish("one"), finish("three")])
	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	agent = om.create_agent(name="Triage", model=model, instructions="Label issues.")
	triggers = Triggers.model_validate(
		{"webhook": {"secret": SECRET, "scheme": "github", "session": "issue"}}
	)
	sessions = lambda sid: kept.setdefault(sid, _Breaking(sid))  # noqa: E731
	async with TriggerServer([(agent, triggers)], port=0, sessions=sessions) as server:
		async with httpx.AsyncClient(base_url=server.url) as client:
			body = b'{"issue": 7, "n": 1}'
			first = await client.post("/hooks/Triage", content=body, headers=github(body, "d-1"))
			assert first.status_code == 202  # its run holds the session's turn for 1.5 s
			body2 = b'{"issue": 7, "n": 2}'
			second = await client.post("/hooks/Triage", content=body2, headers=github(body2, "d-2"))
			assert second.status_code == 202  # it waits for the first's turn, then fails
			_Breaking.broken = True
			run_id = second.json()["run_id"]
			launcher = server.launcher
			assert launcher is not None
			await eventually(lambda: not launcher.running, seconds=20)
			rows = (
				sqlite3.connect(store)
				.execute(
					"SELECT status, error, trigger FROM agent_runs WHERE run_id = ?", (run_id,)
				)
				.fetchall()
			)
			assert len(rows) == 1, rows
			status, error, trigger = rows[0]
			assert status == "error" and "did not start" in error and "session store" in error
			assert SECRET not in error and json.loads(trigger)["kind"] == "webhook"
			_Breaking.broken = False
			retry = await client.post("/hooks/Triage", content=body2, headers=github(body2, "d-2"))
			assert retry.status_code == 202 and retry.json()["run_id"] == run_id
			await eventually(lambda: len(model.requests) == 2, seconds=20)
	await om.aclose()


async def test_a_run_that_fails_before_it_starts_is_answered_for_a_retry_and_the_retry_runs(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run that ends with a RunError before it started is no 202: the sender is told to retry
	(5xx, the claim given back), and its retry runs."""
	from openmolt_core.agent import Agent

	real = Agent._prepare
	broken = [True]

	async def prepare(self: Agent) -> None:
		if broken[0]:
			raise RuntimeError(f"the provider could not load (key {SECRET})")
		await real(self)

	monkeypatch.setattr(Agent, "_prepare", prepare)
	model = ScriptedModel([finish("done")])
	om, server = _server(model, tmp_path / "runs.db", scheme="github")
	body = b'{"issue": 8}'
	async with server, httpx.AsyncClient(base_url=server.url) as client:
		first = await client.post("/hooks/Triage", content=body, headers=github(body, "d-9"))
		assert first.status_code >= 500, first.text
		assert "could not start" in first.json()["error"] and SECRET not in first.text
		broken[0] = False
		retry = await client.post("/hooks/Triage", content=body, headers=github(body, "d-9"))
		assert retry.status_code == 202, retry.text
		await eventually(lambda: len(model.requests) == 1, seconds=20)
	await om.aclose()


class _SlowThenFailing(ScriptedModel):
	"""The first call holds the session's turn 1.5 s; every later one fails (its run started)."""

	async def generate(self, request: Any) -> Any:
		if self.requests:
			self.requests.append(request)
			raise RuntimeError("the model service is down")
		await anyio.sleep(1.5)
		return await super().generate(request)


async def test_a_queued_run_that_started_after_the_answer_then_failed_keeps_its_claim(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run queued past its 202 that then starts and fails ran: its delivery stays claimed (a
	retry is a duplicate, nothing runs twice) and its row is no 'did not start'."""
	from openmolt_serve import webhooks

	monkeypatch.setattr(webhooks, "ACK_WITHIN", 0.3)
	model = _SlowThenFailing([finish("one"), finish("two")])
	store = tmp_path / "runs.db"
	om = OpenMolt(entry_points=False, run_store=store)
	agent = om.create_agent(name="Triage", model=model, instructions="Label issues.")
	triggers = Triggers.model_validate(
		{"webhook": {"secret": SECRET, "scheme": "github", "session": "issue"}}
	)
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as client:
			body = b'{"issue": 7, "n": 1}'
			first = await client.post("/hooks/Triage", content=body, headers=github(body, "d-1"))
			assert first.status_code == 202  # its run holds the session's turn for 1.5 s
			body2 = b'{"issue": 7, "n": 2}'
			second = await client.post("/hooks/Triage", content=body2, headers=github(body2, "d-2"))
			assert second.status_code == 202  # answered before its run starts
			run_id = second.json()["run_id"]
			launcher = server.launcher
			assert launcher is not None
			await eventually(lambda: not launcher.running, seconds=20)
			assert len(model.requests) == 2  # the second run started: it called the model
			rows = (
				sqlite3.connect(store)
				.execute("SELECT status, error FROM agent_runs WHERE run_id = ?", (run_id,))
				.fetchall()
			)
			assert len(rows) == 1 and rows[0][0] == "error", rows
			assert "did not start" not in rows[0][1]
			retry = await client.post("/hooks/Triage", content=body2, headers=github(body2, "d-2"))
			assert retry.status_code == 200 and retry.json()["status"] == "duplicate", retry.text
			await anyio.sleep(0.5)
			assert len(model.requests) == 2  # nothing ran again
	await om.aclose()


async def test_a_run_that_did_not_start_is_kept_with_the_user_it_was_to_act_for(
	tmp_path: Path,
) -> None:
	"""A chat's or a named caller's run that failed before it started is found by its user
	(`openmolt logs --user`), the user masked like everything else; a run for nobody has none."""
	from openmolt_serve._launch import record_unstarted

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agent = om.create_agent(name="Desk", model=ScriptedModel([finish("x")]))
	om.secrets.add("user-secret-token-42")
	failed = RuntimeError("the session store is down")
	await record_unstarted(agent, "r-1", "hi", failed, trigger="chat", user="telegram:42")
	await record_unstarted(
		agent, "r-2", "hi", failed, trigger="agui", user="agui:Desk:user-secret-token-42"
	)
	await record_unstarted(agent, "r-3", "hi", failed, trigger="webhook")
	assert om.run_store is not None
	found = {r.run_id: r.user for r in await om.run_store.runs()}
	assert found == {"r-1": "telegram:42", "r-2": "agui:Desk:[redacted]", "r-3": None}
	assert [r.run_id for r in await om.run_store.runs(user="telegram:42")] == ["r-1"]
	await om.aclose()
