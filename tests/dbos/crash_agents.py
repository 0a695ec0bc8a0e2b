"""The agents of the durable tests, as a worker's Python agent file (``openmolt worker``).

The model is the fake server (`tests/dbos/_server.py`), reached over HTTP by a small provider; the
tools are an HTTP integration on the same server (with an idempotency header) and a function tool
that posts there too. Every event goes to the JSON-lines file ``OPENMOLT_TEST_EVENTS``, with the
process id, so a test sees what each process delivered.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

import anyio
import httpx

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ProviderError
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.tools import ToolContext, tool


def _server() -> str:
	return os.environ.get("OPENMOLT_TEST_SERVER", "http://127.0.0.1:9")


class ServerModel:
	"""A provider whose replies come from the fake server: the scenario is the run's input."""

	name = "server"
	model = "server"

	def scenario(self, request: ModelRequest) -> Any:
		"""The scenario of a request: its run's input."""
		return json.loads(request.messages[0].content)["input"]

	async def generate(self, request: ModelRequest) -> ModelResponse:
		scenario = self.scenario(request)
		turn = sum(1 for m in request.messages if m.role == "assistant")
		async with httpx.AsyncClient(timeout=60) as client:
			reply = await client.post(
				f"{_server()}/model",
				json={
					"scenario": scenario,
					"turn": turn,
					"last": request.messages[-1].content,
					"pid": os.getpid(),  # which process asked: a test names the worker
				},
			)
		if reply.status_code >= 500:
			raise ProviderError(
				reply.json()["error"]["message"], provider="server", status_code=500
			)
		data = reply.json()
		return ModelResponse(text=data["text"], usage=Usage(**data["usage"]))


async def echo(scenario: str, value: str, context: ToolContext, hold: str = "") -> dict[str, Any]:
	"""Send a value to the server and return what it echoes.

	Args:
		scenario: The scenario.
		value: The value.
		context: The call's context: its idempotency key goes along, as a payment API's would.
		hold: A hold name: the server answers only when the test releases it.
	"""
	async with httpx.AsyncClient(timeout=120) as client:
		reply = await client.post(
			f"{_server()}/tool/echo",
			json={"scenario": scenario, "value": value, "hold": hold},
			headers={"Idempotency-Key": context.idempotency_key},
		)
	return dict(reply.json())


async def _refund(scenario: str, value: str, hold: str) -> dict[str, Any]:
	async with httpx.AsyncClient(timeout=120) as client:
		reply = await client.post(
			f"{_server()}/tool/refund", json={"scenario": scenario, "value": value, "hold": hold}
		)
	return dict(reply.json())


@tool(labels=["outbound"])
async def refund(scenario: str, value: str, hold: str = "") -> dict[str, Any]:
	"""Refund a payment (outbound, no idempotency key: an in-doubt call asks a person).

	Args:
		scenario: The scenario.
		value: The payment.
		hold: A hold name: the server answers only when the test releases it.
	"""
	return await _refund(scenario, value, hold)


@tool(labels=["outbound"], in_doubt="fail")
async def refund_strict(scenario: str, value: str, hold: str = "") -> dict[str, Any]:
	"""Refund a payment; an in-doubt call ends with an error the model reads.

	Args:
		scenario: The scenario.
		value: The payment.
		hold: A hold name: the server answers only when the test releases it.
	"""
	return await _refund(scenario, value, hold)


@tool(labels=[], in_doubt="fail")
async def ledger(scenario: str, value: str, hold: str = "") -> dict[str, Any]:
	"""Append a line to the ledger: no data goes out, but it must never be written twice.

	Args:
		scenario: The scenario.
		value: The line.
		hold: A hold name: the server answers only when the test releases it.
	"""
	async with httpx.AsyncClient(timeout=120) as client:
		reply = await client.post(
			f"{_server()}/tool/ledger", json={"scenario": scenario, "value": value, "hold": hold}
		)
	return dict(reply.json())


def shout(text: str) -> str:
	"""Shout a text (the tool a changed definition adds).

	Args:
		text: The text.
	"""
	return text.upper()


def park(question: str) -> str:
	"""Nobody answers in a worker: the run parks until om.answer."""
	raise HumanInputUnavailable(question)


async def remember(data: str, update_id: str) -> None:
	"""The memory on_update callback: a side effect on the server, with the update's id.

	The server holds the call when a hold is named as the memory's text (the crash happens then).
	"""
	async with httpx.AsyncClient(timeout=150) as client:
		await client.post(
			f"{_server()}/memory", json={"data": data, "update_id": update_id, "hold": data}
		)


def _svc() -> dict[str, Any]:
	return {
		"name": "svc",
		"labels": {"charge": ["outbound"]},
		"apiSetup": {"baseUrl": _server(), "idempotencyHeader": "Idempotency-Key", "timeout": 120},
		"tools": [
			{
				"handle": "charge",
				"description": "Charge an amount.",
				"method": "POST",
				"endpoint": "/tool/charge",
				"body": {
					"scenario": "{{ input.scenario }}",
					"value": "{{ input.value }}",
					"hold": "{{ input.hold }}",
				},
				"inputSchema": {
					"type": "object",
					"properties": {
						"scenario": {"type": "string"},
						"value": {"type": "string"},
						"hold": {"type": "string"},
					},
					"required": ["scenario", "value"],
				},
			}
		],
	}


def _write_event(event: Any) -> None:
	events = os.environ.get("OPENMOLT_TEST_EVENTS")
	if not events:
		return
	line = {
		"pid": os.getpid(),
		"name": event.name,
		"run_id": event.run_id,
		"seq": event.seq,
		"step": event.step,
		"replayed": event.replayed,
		"tool": getattr(event, "tool", None),
		"at": time.time(),
	}
	with open(events, "a", encoding="utf-8") as out:
		out.write(json.dumps(line) + "\n")
		out.flush()


async def _jitter(event: Any) -> None:
	# A tool:call handler that awaits: concurrent calls must still get their own results.
	await anyio.sleep(random.uniform(0, 0.05))


def build(om: OpenMolt) -> list[Any]:
	"""The agents: Crash (tools, memory, questions, the sub-agent Clerk), Budget (a time budget)."""
	om.register_integration("svc", _svc())
	# The fake server listens on 127.0.0.1, which the SSRF guard refuses unless allowed.
	om.integration_configs.setdefault("svc", {})["allowInternalHosts"] = ["127.0.0.1"]
	# A sub-agent of Crash (its task is its scenario): its run lives inside Crash's call of it.
	clerk = om.create_agent(
		name="Clerk", model=ServerModel(), instructions="Keep the ledger.", tools=[ledger]
	)
	crash = om.create_agent(
		name="Crash",
		model=ServerModel(),
		instructions="Do what the scenario says.",
		integrations=["svc"],
		# OPENMOLT_TEST_EXTRA_TOOL: a changed definition (one more tool), as after a deploy.
		# echo returns what the server says: untrusted, so runs that call it are tainted and
		# their taint event must be delivered once across a crash, as every other event.
		tools=[
			tool(echo, labels=["untrusted"]),
			refund,
			refund_strict,
			clerk,
			*([shout] if os.environ.get("OPENMOLT_TEST_EXTRA_TOOL") else []),
		],
		memory={"short_term": {"data": "", "on_update": remember}},
		on_human_input_request=park,
		max_steps=20,
	)
	budget = om.create_agent(
		name="Budget",
		model=ServerModel(),
		instructions="Do what the scenario says, in time.",
		integrations=["svc"],
		max_steps=20,
		timeout=float(os.environ.get("OPENMOLT_TEST_BUDGET", "12")),
	)
	for agent in (crash, budget):
		for name in sorted(EVENT_NAMES - STREAM_EVENTS):
			if not name.startswith("schedule"):
				agent.on(name, _write_event)
		agent.on("tool:call", _jitter)
	return [crash, budget]


_BUILT: dict[int, list[Any]] = {}


def _built(om: OpenMolt) -> list[Any]:
	if id(om) not in _BUILT:
		_BUILT[id(om)] = build(om)
	return _BUILT[id(om)]


def crash_agent(om: OpenMolt) -> Any:
	return _built(om)[0]


def budget_agent(om: OpenMolt) -> Any:
	return _built(om)[1]


_TOKENS: dict[int, Any] = {}


def tokens_agent(om: OpenMolt) -> Any:
	"""Tokens: a token budget (``max_tokens=250``), for a budget's end across a crash."""
	if id(om) not in _TOKENS:
		_built(om)  # the integration
		_TOKENS[id(om)] = om.create_agent(
			name="Tokens",
			model=ServerModel(),
			instructions="Do what the scenario says, within the tokens.",
			integrations=["svc"],
			max_steps=20,
			max_tokens=250,
		)
	return _TOKENS[id(om)]


agents = [crash_agent, budget_agent, tokens_agent]

# A schedule for the tests of workers serving one schedule (OPENMOLT_TEST_SCHEDULE=<seconds>).
schedules = (
	[
		{
			"agent": "Crash",
			"id": "tick",
			"type": "interval",
			"value": float(os.environ["OPENMOLT_TEST_SCHEDULE"]),
			"input": "tick",
		}
	]
	if os.environ.get("OPENMOLT_TEST_SCHEDULE")
	else []
)
