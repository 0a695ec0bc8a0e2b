"""Every URL a remote agent's card names is masked in the tool's errors, not only ``url``'s.

The card is the remote's word: the interface URL it names may carry a key of its own (a signed
``?sig=``, an ``api_key``, a password in its userinfo) on the remote's origin or another. A
failed call's error (the SDK's text, a proxy's page that echoes the address, the SSRF guard's
refusal) named that URL whole, and the error reaches the model and the run's state. Each URL
the card brings is masked as every error names a URL (`openmolt_core._support.masking.mask_urls`).
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext
from openmolt_serve.a2a import remote_agent
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

KEY = "CardKey-0123456789abcdefXYZ"
INTERFACES = {
	"signed query": f"https://agent.example/a2a/P/?sig={KEY}&sv=2024",
	"api key": f"https://agent.example/a2a/P/?api_key={KEY}",
	"password": f"https://relay:{KEY}@agent.example/a2a/P/",
	"other origin, signed": f"https://relay.example/a2a/P/?sig={KEY}",
	"other origin, password": f"https://relay:{KEY}@relay.example/a2a/P/",
	"internal, password": f"http://relay:{KEY}@127.0.0.1:9/a2a/P/",
}


def _network(interface: str):  # type: ignore[no-untyped-def]
	card = {
		"name": "Planner",
		"description": "d",
		"version": "1.0.0",
		"supportedInterfaces": [
			{"url": interface, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
		],
		"capabilities": {},
		"defaultInputModes": ["text/plain"],
		"defaultOutputModes": ["text/plain"],
	}

	def answer(request: httpx.Request) -> httpx.Response:
		if request.url.path.endswith("agent-card.json"):
			return httpx.Response(200, json=card)
		return httpx.Response(502, text=f"bad gateway for {request.url} (from {interface})")

	return httpx.MockTransport(answer)


@pytest.mark.parametrize("case", sorted(INTERFACES))
async def test_a_key_in_a_url_the_card_names_is_masked_in_the_error(case: str) -> None:
	planner = remote_agent("https://agent.example/a2a/P", transport=_network(INTERFACES[case]))
	with pytest.raises(ToolError) as failed:
		await planner.function({"message": "hi"}, ToolContext(agent="A", integration="local"))
	said = failed.value.message
	assert "A2A agent at https://agent.example/a2a/P" in said
	assert not leaks(said, KEY), said


@pytest.mark.parametrize("case", ["signed query", "password", "other origin, password"])
async def test_nor_does_it_reach_the_model_the_state_or_a_log(
	case: str, caplog: pytest.LogCaptureFixture
) -> None:
	caplog.set_level(logging.DEBUG)
	planner = remote_agent(
		"https://agent.example/a2a/P", handle="planner", transport=_network(INTERFACES[case])
	)
	model = ScriptedModel([call_tool("local.planner", message="Plan a trip"), finish("done")])
	async with OpenMolt(entry_points=False) as om:
		agent = om.create_agent(name="Asker", model=model, tools=[planner])
		result = await agent.run("Ask the planner.")
	sent = "\n".join(map(repr, model.requests))
	assert "A2A agent at" in sent
	assert not leaks(sent, KEY), leaks(sent, KEY)
	assert not leaks(json.dumps(result.state.to_dict(), default=str), KEY)
	assert not leaks(caplog.text, KEY)
