"""A charge in doubt after a crash is repeated with its key only while the service keeps the key.

The worker stops while a keyed POST (Stripe's kind: its keys are pruned after 24 h) is under
way. Recovered at once, the charge goes out again with the same key; recovered after the key's
lifetime (its recorded start made 25 h older, as a run recovered a day later finds it), it is not
sent again: a person is asked whether it took effect, and told why.

The API key was rotated between the crash and the recovery: the recovered run calls with the
key bound now. Credentials are the worker's configuration, never the run's (the store holds
none, and an OAuth token refreshes during a run's life): a revoked key is not kept alive.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
import sqlalchemy as sa
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_dbos._workers import CALLS, make_engine

RUN = "key-lifetime-1"
DAY = 24 * 3600.0
OLD_KEY, NEW_KEY = "sk_test_old_0123456789abcdef", "sk_test_new_0123456789abcdef"


def _agent(om: OpenMolt, model: Any, asked: list[str], key: str) -> Any:
	setup = {
		"baseUrl": "https://pay.example",
		"idempotencyHeader": "Idempotency-Key",
		"idempotencyKeyLifetime": DAY,
	}
	charge = {
		"handle": "charge",
		"description": "Charge a card.",
		"method": "POST",
		"endpoint": "/charges",
		"body": {"amount": "{{ input.amount }}"},
		"inputSchema": {"type": "object", "properties": {"amount": {"type": "integer"}}},
	}
	bearer = {"type": "bearer", "headers": {"Authorization": "Bearer {{ config.apiKey }}"}}
	om.register_integration(
		"pay", {"name": "pay", "apiSetup": setup, "credentialSetup": [bearer], "tools": [charge]}
	)
	binding = {"integration": "pay", "credential": {"type": "bearer", "config": {"apiKey": key}}}

	def person(question: str) -> str:
		asked.append(question)
		return "no, it did not go through"

	return om.create_agent(
		name="Payer", model=model, integrations=[binding], on_human_input_request=person
	)


def _http(sent: list[str], hang: anyio.Event | None, keys: list[str]) -> httpx.AsyncClient:
	async def api(request: httpx.Request) -> httpx.Response:
		sent.append(request.headers.get("Idempotency-Key", "-"))
		keys.append(request.headers.get("Authorization", "-"))
		if hang is not None:
			hang.set()
			await anyio.sleep_forever()
		return httpx.Response(200, json={"id": "ch_1"})

	return httpx.AsyncClient(transport=httpx.MockTransport(api))


async def _first(durability: dict[str, Any], sent: list[str], keys: list[str]) -> None:
	"""The run starts; the charge goes out, and the process stops before its answer."""
	reached = anyio.Event()
	http = _http(sent, reached, keys)
	om = OpenMolt(durability=durability, entry_points=False, http_client=http)
	agent = _agent(om, ScriptedModel([call_tool("pay.charge", amount=500)]), [], OLD_KEY)
	try:
		await agent.start("charge it", run_id=RUN)
		with anyio.fail_after(60):
			await reached.wait()
	finally:
		await stop_process()
		await http.aclose()


async def _recover(
	durability: dict[str, Any], sent: list[str], keys: list[str], asked: list[str]
) -> Any:
	"""This worker starts again, its API key rotated, and recovers the run; its result."""
	http = _http(sent, None, keys)
	om = OpenMolt(durability=durability, entry_points=False, http_client=http)
	_agent(om, ScriptedModel([finish(result="done")]), asked, NEW_KEY)
	try:
		durable = om.durability
		assert durable is not None
		await durable.start()  # recovers this worker's unfinished run
		with anyio.fail_after(60):
			return await om.result(RUN)
	finally:
		await stop_process()
		await http.aclose()


@pytest.mark.parametrize("older", [0.0, DAY + 3600], ids=["at-once", "a-day-later"])
def test_a_keyed_charge_in_doubt_is_repeated_only_while_its_key_lives(
	store: str, older: float
) -> None:
	"""At once: sent again with its key. A day later: not sent; the person is told why."""
	durability = {"url": store, "worker_id": "pay-worker", "heartbeat": 0.2, "lapse": 1.0}
	sent: list[str] = []
	keys: list[str] = []
	anyio.run(_first, durability, sent, keys)
	assert len(sent) == 1 and sent[0] != "-"
	engine = make_engine(store)
	try:
		with engine.begin() as conn:  # the run is recovered a day later
			moved = conn.execute(
				sa.update(CALLS)
				.where(CALLS.c.run_id == RUN)
				.values(started_at=CALLS.c.started_at - older)
			)
			assert moved.rowcount == 1  # the keyed call's start was recorded
	finally:
		engine.dispose()
	asked: list[str] = []
	result = anyio.run(_recover, durability, sent, keys, asked)
	assert result is not None and result.status == "success", result
	if not older:
		assert sent == [sent[0], sent[0]] and asked == []  # again, with the same key
		assert keys == [f"Bearer {OLD_KEY}", f"Bearer {NEW_KEY}"]  # the key bound now
		return
	assert sent == [sent[0]]  # not again: the key may be forgotten
	assert len(asked) == 1 and "pay.charge" in asked[0]
	assert "25 h ago" in asked[0] and "keeps an idempotency key for 24 h only" in asked[0]
