"""Every answer of openmolt serve carries the security headers, whatever route (or none) made it."""

from __future__ import annotations

import socket

import anyio
import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core._support.webheaders import SECURITY_HEADERS
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio

AGUI = "agui-token-for-tests-0123456789"
A2A = "a2a-token-for-tests-0123456789"


def assert_secured(response: httpx.Response, what: str) -> None:
	for name, value in SECURITY_HEADERS:
		assert response.headers.get(name) == value, (what, name, dict(response.headers))


async def test_refusals_pages_and_protocol_answers_all_carry_the_security_headers() -> None:
	"""A 404 of no route, a 405, a webhook's 401, AG-UI's and A2A's refusals, /health, the card."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=ScriptedModel([finish("ok")] * 5))
	triggers = Triggers.model_validate(
		{
			"webhook": {"secret": "webhook-secret-for-tests", "scheme": "hmac"},
			"agui": {"token": AGUI},
			"a2a": {"token": A2A},
		}
	)
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as http:
			answers = {
				"health": await http.get("/health"),
				"no route": await http.get("/<script>alert(1)</script>"),
				"wrong method": await http.get("/hooks/Triage"),
				"no such agent": await http.post("/hooks/<b>x</b>", content=b"{}"),
				"unsigned webhook": await http.post("/hooks/Triage", content=b"{}"),
				"agui without token": await http.post("/agui/Triage", content=b"{}"),
				"agui bad input": await http.post(
					"/agui/Triage", content=b"{}", headers={"authorization": f"Bearer {AGUI}"}
				),
				"a2a without token": await http.post("/a2a/Triage/", content=b"{}"),
				"agent card": await http.get("/a2a/Triage/.well-known/agent-card.json"),
				"callback": await http.get("/auth/callback?state=x&code=y"),
			}
	await om.aclose()
	assert answers["no route"].status_code == 404
	assert answers["unsigned webhook"].status_code == 401
	assert answers["agent card"].status_code == 200
	for what, response in answers.items():
		assert_secured(response, what)


async def test_the_connection_guards_own_answers_carry_them_too() -> None:
	"""The 408 a request whose headers never end gets is written before any route: secured too."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=ScriptedModel([finish("ok")]))
	triggers = Triggers.model_validate(
		{"webhook": {"secret": "webhook-secret-for-tests", "scheme": "hmac"}}
	)
	async with TriggerServer([(agent, triggers)], port=0, header_timeout=0.2) as server:
		with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
			sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # never ends its headers
			data = b""
			with anyio.fail_after(5):
				while b"\r\n\r\n" not in data:
					chunk = await anyio.to_thread.run_sync(sock.recv, 4096)
					if not chunk:
						break
					data += chunk
	await om.aclose()
	head = data.split(b"\r\n\r\n")[0].decode().lower()
	assert head.startswith("http/1.1 408")
	for name, value in SECURITY_HEADERS:
		assert f"{name.lower()}: {value.lower()}" in head


async def test_a_route_that_fails_answers_500_with_the_headers_too(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Starlette's own error answer (outside every middleware a route list gets) is secured."""
	import openmolt_serve.server as server_module

	async def broken(*args: object, **kwargs: object) -> None:
		raise RuntimeError("the handler broke")

	monkeypatch.setattr(server_module, "handle_webhook", broken)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=ScriptedModel([]))
	triggers = Triggers.model_validate(
		{"webhook": {"secret": "webhook-secret-for-tests", "scheme": "hmac"}}
	)
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient(base_url=server.url) as http:
			failed = await http.post("/hooks/Triage", content=b"{}")
	await om.aclose()
	assert failed.status_code == 500
	assert_secured(failed, "500")
