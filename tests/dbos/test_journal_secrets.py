"""Secrets never reach the durable store: a tool result echoing a key is journaled masked."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from _durable import stop_process

from openmolt import OpenMolt
from openmolt_core.llm import ModelRequest
from openmolt_core.testing import ScriptedModel, call_tool, finish

KEY = "sk-live-journal-0123456789"

CARELESS = {
	"name": "Careless",
	"apiSetup": {"baseUrl": "https://api.careless.example"},
	"credentialSetup": [{"type": "custom", "headers": {"X-Api-Key": "{{ config.apiKey }}"}}],
	"labels": {"whoami": []},
	"tools": [
		{
			"handle": "whoami",
			"description": "Echo what the service saw.",
			"method": "GET",
			"endpoint": "/whoami",
		}
	],
}


def _stored(store: str, run_id: str) -> str:
	"""Everything the store holds for the run, deserialized: steps, input, output, events."""
	from dbos import DBOSClient

	client = DBOSClient(system_database_url=store)
	try:
		steps = client.list_workflow_steps(run_id)
		status = client.list_workflows(workflow_ids=[run_id])
		return json.dumps(
			[[s["function_name"], s["output"], s["error"]] for s in steps]
			+ [[s.input, s.output, s.error, s.attributes] for s in status],
			default=repr,
		)
	finally:
		client.destroy()


@pytest.mark.anyio
async def test_a_tool_result_echoing_a_key_is_journaled_masked(url: str) -> None:
	"""The call sends the real key (from its binding); the journal and the model see it masked."""
	sent: list[str] = []

	def careless(request: httpx.Request) -> httpx.Response:
		sent.append(request.headers["x-api-key"])
		return httpx.Response(200, json={"saw": request.headers["x-api-key"]})

	http = httpx.AsyncClient(transport=httpx.MockTransport(careless))
	om = OpenMolt(durability=url, entry_points=False, http_client=http)
	om.register_integration("careless", CARELESS)
	model = ScriptedModel([call_tool("careless.whoami"), finish(result="done")])
	agent = om.create_agent(
		name="Careless",
		model=model,
		integrations=[
			{"integration": "careless", "credential": {"type": "custom", "config": {"apiKey": KEY}}}
		],
	)
	result = await agent.run("who am I?")
	assert result.ok and sent == [KEY]  # the binding gave the tool its real key
	stored = _stored(url, result.state.run_id)
	assert KEY not in stored
	assert "careless.whoami" in stored and "[redacted]" in stored  # the step is there, masked
	assert KEY not in json.dumps([m.content for r in model.requests for m in r.messages])
	await om.aclose()


RUN = "journal-secrets-replay"


def _om(durability: dict[str, Any], sent: list[str]) -> OpenMolt:
	def careless(request: httpx.Request) -> httpx.Response:
		sent.append(request.headers["x-api-key"])
		return httpx.Response(200, json={"saw": request.headers["x-api-key"]})

	http = httpx.AsyncClient(transport=httpx.MockTransport(careless))
	return OpenMolt(durability=durability, entry_points=False, http_client=http)


def _careless(om: OpenMolt, model: ScriptedModel) -> Any:
	om.register_integration("careless", CARELESS)
	return om.create_agent(
		name="Careless",
		model=model,
		integrations=[
			{"integration": "careless", "credential": {"type": "custom", "config": {"apiKey": KEY}}}
		],
	)


async def _until_second_call(durability: dict[str, Any], sent: list[str]) -> None:
	asked = anyio.Event()

	async def hang(request: ModelRequest) -> Any:
		asked.set()
		await anyio.sleep_forever()

	om = _om(durability, sent)
	agent = _careless(om, ScriptedModel([call_tool("careless.whoami"), hang]))
	try:
		await agent.start("who am I?", run_id=RUN)
		with anyio.fail_after(30):
			await asked.wait()  # the echoing call is journaled; the next model call hangs
	finally:
		await stop_process()


async def _recover(durability: dict[str, Any], sent: list[str]) -> tuple[Any, ScriptedModel]:
	om = _om(durability, sent)
	model = ScriptedModel([finish(result="done")])
	_careless(om, model)
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers the run: the call is answered from the journal
		with anyio.fail_after(60):
			return await om.result(RUN), model
	finally:
		await stop_process()


def test_a_replay_reads_the_masked_result_and_goes_on_as_the_first_execution_did(
	store: str,
) -> None:
	"""Recovered after the echoing call, the run reads the masked result; nothing is called twice."""
	durability = {"url": store, "worker_id": "secrets-worker", "heartbeat": 0.2, "lapse": 1.0}
	sent: list[str] = []
	anyio.run(_until_second_call, durability, sent)
	result, model = anyio.run(_recover, durability, sent)
	assert result is not None and result.output == {"result": "done"}
	assert sent == [KEY]  # called once, with the real key; the replay did not call it again
	read = model.requests[0].messages[-1].content
	assert "[redacted]" in read and KEY not in read  # what the first execution's model read
	assert KEY not in _stored(store, RUN)
