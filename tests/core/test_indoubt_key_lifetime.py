"""A keyed call in doubt is repeated with its key only while the service still keeps the key.

Stripe prunes an idempotency key once it is at least 24 h old, and runs a request that reuses a
pruned key again. A charge found in doubt after a crash was repeated with its key however long
ago it began: a run recovered (or a failed segment retried) more than a day later could charge
twice. An integration now says how long its service keeps keys (``idempotencyKeyLifetime``);
a call begun longer ago, or at a time the store does not know, asks a person instead.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_durability import JournalPort

pytestmark = pytest.mark.anyio

DAY = 24 * 3600.0


class _StartedPort(JournalPort):
	"""A durable-like port on which every call had started before, ``age`` seconds ago."""

	def __init__(self, age: float | None) -> None:
		super().__init__()
		self.age = age
		self.starts: list[str] = []

	async def call_started(self, key: str) -> bool:
		self.starts.append(key)
		return True

	async def call_age(self, key: str) -> float | None:
		return self.age


def _nobody(question: str) -> str:
	raise HumanInputUnavailable(question)


def _payer(sent: list[str], lifetime: float | None) -> tuple[Any, httpx.AsyncClient]:
	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request.headers.get("Idempotency-Key", "-"))
		return httpx.Response(200, json={"id": "ch_1"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(entry_points=False, http_client=http)
	setup: dict[str, Any] = {
		"baseUrl": "https://pay.example",
		"idempotencyHeader": "Idempotency-Key",
	}
	if lifetime is not None:
		setup["idempotencyKeyLifetime"] = lifetime
	charge = {
		"handle": "charge",
		"description": "Charge a card.",
		"method": "POST",
		"endpoint": "/charges",
		"body": {"amount": "{{ input.amount }}"},
		"inputSchema": {"type": "object", "properties": {"amount": {"type": "integer"}}},
	}
	om.register_integration("pay", {"name": "pay", "apiSetup": setup, "tools": [charge]})
	model = ScriptedModel([call_tool("pay.charge", amount=500), finish(result="paid")])
	agent = om.create_agent(
		name="Payer", model=model, integrations=["pay"], on_human_input_request=_nobody
	)
	return agent, http


@pytest.mark.parametrize("age", [DAY + 3600, None])
async def test_a_charge_in_doubt_longer_than_its_key_lives_asks_a_person(
	age: float | None,
) -> None:
	"""Begun 25 h ago (or at an unknown time): not sent again; the run parks on why."""
	sent: list[str] = []
	agent, http = _payer(sent, DAY)
	assert agent.in_doubt == {"pay.charge": "retry"}
	port = _StartedPort(age)
	result = await agent.execute(agent.new_state("pay"), port=port)
	await http.aclose()
	assert sent == []  # the key may be forgotten: the charge is not made again
	assert port.starts == ["tool:1:0:pay.charge"]
	assert result.status == "human_input_required"
	message = result.state.pending["message"]
	assert "pay.charge" in message and "Did it take effect?" in message
	assert "keeps an idempotency key for 24 h only" in message
	assert ("25 h ago" if age is not None else "at a time not recorded") in message


async def test_a_charge_in_doubt_within_its_key_s_life_is_repeated_with_the_key() -> None:
	"""Begun an hour ago: sent again with the same key, which the service still deduplicates."""
	sent: list[str] = []
	agent, http = _payer(sent, DAY)
	port = _StartedPort(3600.0)
	result = await agent.execute(agent.new_state("pay"), port=port)
	await http.aclose()
	assert result.ok and len(sent) == 1 and sent[0] != "-"
	assert port.starts == ["tool:1:0:pay.charge"]


async def test_a_key_kept_for_good_records_no_start() -> None:
	"""No lifetime declared: the keyed call is retried as before, with no start recorded."""
	sent: list[str] = []
	agent, http = _payer(sent, None)
	port = _StartedPort(10 * DAY)
	result = await agent.execute(agent.new_state("pay"), port=port)
	await http.aclose()
	assert result.ok and len(sent) == 1
	assert port.starts == []


def test_stripe_writes_retry_for_a_day_and_twilio_sends_ask() -> None:
	"""Stripe's writes are retried in doubt for 24 h; Twilio's sends (no key) ask a person."""
	import warnings

	from openmolt_integrations import stripe

	om = OpenMolt()  # the installed integrations, as an application gets them
	bindings: list[Any] = [
		{"integration": "stripe", "credential": {"type": "bearer", "config": {"apiKey": "sk_x"}}},
		{
			"integration": "twilio",
			"credential": {
				"type": "basic",
				"config": {"accountSid": "AC" + "0" * 32, "authToken": "t"},
			},
		},
	]
	with warnings.catch_warnings():  # the lethal-trifecta warning of this tool mix
		warnings.simplefilter("ignore")
		agent = om.create_agent(
			name="Shop", model=ScriptedModel([finish(result="x")]), integrations=bindings
		)
	assert agent.in_doubt["stripe.createPaymentIntent"] == "retry"
	assert agent.in_doubt["twilio.sendMessage"] == "ask"
	assert agent.in_doubt["twilio.makeCall"] == "ask"
	assert stripe.INTEGRATION.api_setup.idempotency_key_lifetime == DAY
	lifetimes = {h: b.key_lifetime for h, b in agent._tools.items()}
	assert lifetimes["stripe.createPaymentIntent"] == DAY
	assert lifetimes["stripe.retrieve"] is None  # a read: no key to outlive
	assert lifetimes["twilio.sendMessage"] is None  # no key at all: it asks anyway


async def test_a_durable_port_an_observer_wraps_still_finds_the_call_in_doubt() -> None:
	"""The in-doubt calls attach to a run by its port being journaled (`durability.journaled`),
	which sees through a forwarding port (an observer's wrapper, the redacting one): wrapped, the
	charge begun 25 h ago is still not made again, and the run parks on why."""
	from openmolt_core.durability import ForwardingPort

	sent: list[str] = []
	agent, http = _payer(sent, DAY)
	inner = _StartedPort(DAY + 3600)
	result = await agent.execute(agent.new_state("pay"), port=ForwardingPort(inner))
	await http.aclose()
	assert sent == []
	assert inner.starts == ["tool:1:0:pay.charge"]
	assert result.status == "human_input_required"
