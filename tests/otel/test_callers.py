"""A run an A2A or AG-UI caller starts names that caller: in its span, its stored row, its taint.

Served with ``callers`` (a token each), a run was recorded as ``a2a · where Helper`` whoever
sent it: the run span had no trigger at all, and neither the store nor the viewer could tell
crm's runs from web's. Their tokens never show.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_otel import Telemetry
from openmolt_serve import TriggerServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CRM = "crm-caller-token-0123456789abcdef"
WEB = "web-caller-token-0123456789abcdef"


def _om(exporter: InMemorySpanExporter, store: Path) -> OpenMolt:
	tracing = TracerProvider()
	tracing.add_span_processor(SimpleSpanProcessor(exporter))
	om = OpenMolt(entry_points=False, run_store=store)
	Telemetry(tracer_provider=tracing).instrument(om)
	return om


async def _a2a(url: str, token: str) -> None:
	headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
	message = {
		"messageId": uuid.uuid4().hex,
		"role": "ROLE_USER",
		"parts": [{"text": "hello"}],
	}
	async with httpx.AsyncClient(headers=headers, timeout=20) as http:
		answer = await http.post(
			f"{url}/a2a/Helper/",
			json={
				"jsonrpc": "2.0",
				"id": 1,
				"method": "SendMessage",
				"params": {"message": message},
			},
		)
	assert answer.status_code == 200 and "result" in answer.json(), answer.text


async def _agui(url: str, token: str) -> None:
	body = {
		"threadId": "t-1",
		"runId": uuid.uuid4().hex,
		"state": {},
		"messages": [{"id": uuid.uuid4().hex, "role": "user", "content": "hello"}],
		"tools": [],
		"context": [],
		"forwardedProps": {},
	}
	headers = {"Authorization": f"Bearer {token}"}
	async with httpx.AsyncClient(base_url=url, timeout=20, headers=headers) as http:
		async with http.stream("POST", "/agui/Helper", json=body) as response:
			assert response.status_code == 200, await response.aread()
			await response.aread()


@pytest.mark.parametrize("protocol", ["a2a", "agui"])
async def test_each_callers_run_names_its_caller_in_its_span_and_its_row(
	protocol: str, exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
	"""crm's run and web's: the run span and the stored trigger name each; no token shows."""
	store = tmp_path / "runs.db"
	om = _om(exporter, store)
	agent = om.create_agent(
		name="Helper", model=ScriptedModel([finish("one"), finish("two")]), instructions="Help."
	)
	callers = {"crm": {"token": CRM}, "web": {"token": WEB}}
	triggers = Triggers.model_validate({protocol: {"callers": callers}})
	send = _a2a if protocol == "a2a" else _agui
	async with TriggerServer([(agent, triggers)], port=0) as server:
		await send(server.url, CRM)
		await send(server.url, WEB)
	runs = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent Helper"]
	said = [dict(s.attributes or {}) for s in runs]
	assert [(a["openmolt.trigger.kind"], a["openmolt.trigger.sender"]) for a in said] == [
		(protocol, "crm"),
		(protocol, "web"),
	]
	assert all(a["openmolt.trigger.where"] == "Helper" for a in said)
	assert om.run_store is not None
	stored = sorted((r.trigger or {}).get("sender", "") for r in await om.run_store.runs())
	assert stored == ["crm", "web"]
	everything = json.dumps(
		[[dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]] for s in runs]
	) + store.read_bytes().decode("utf-8", "replace")
	assert CRM not in everything and WEB not in everything
	await om.aclose()
