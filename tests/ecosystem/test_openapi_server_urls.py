"""An imported API's server URL, as the document (or the user's ``base_url``) writes it.

A server URL may carry a query (``https://api.example.com/v1?api_key=K``): its operations' paths
are joined into the server URL's path and the query stays a query. The importer keeps the query
as written, and resolves an operation's relative server URL against the server's path.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations.openapi import from_openapi, to_module
from openmolt_core.testing import ScriptedModel, call_tool, finish


def _document(server: str, **op: Any) -> dict[str, Any]:
	return {
		"openapi": "3.0.3",
		"info": {"title": "Pets", "version": "1"},
		"servers": [{"url": server}],
		"paths": {
			"/pets/{petId}": {
				"get": {
					"operationId": "getPet",
					"parameters": [
						{"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}},
						{"name": "limit", "in": "query", "schema": {"type": "integer"}},
					],
					"responses": {"200": {"description": "ok"}},
					**op,
				}
			}
		},
	}  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(
	("server", "base_url", "sent"),
	[
		("https://api.example.com/v1?api_key=K", None, "/v1/pets/7?api_key=K&limit=2"),
		("https://api.example.com/v1/?api_key=K", None, "/v1/pets/7?api_key=K&limit=2"),
		("https://api.example.com/v1?limit=9&api_key=K", None, "/v1/pets/7?api_key=K&limit=2"),
		("https://api.example.com", "https://api.example.com/v2?key=K", "/v2/pets/7?key=K&limit=2"),
	],
)
async def test_an_imported_operation_joins_the_server_path_and_keeps_its_query(
	server: str, base_url: str | None, sent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""``GET /pets/{petId}`` on ``https://api.example.com/v1?api_key=K`` reaches ``/v1/pets/7``."""
	from openmolt_core.integrations import _ssrf

	async def resolve(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	monkeypatch.setattr(_ssrf, "resolve_host", resolve)
	seen: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"id": "7"})

	integration = from_openapi(
		_document(server), id="pets", base_url=base_url, labels={"getPet": ["untrusted"]}
	)
	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("pets", integration)
	model = ScriptedModel([call_tool("pets.getPet", petId="7", limit=2), finish(result="done")])
	agent = om.create_agent(name="A", model=model, integrations=["pets"])
	result = await agent.run("Get pet 7.")
	await om.aclose()
	assert result.status == "success", result.error
	assert [r.headers["host"] for r in seen] == ["api.example.com"]  # sent to its checked address
	assert seen[0].url.raw_path.decode() == sent
	answer = json.loads(model.requests[-1].messages[-1].content)["results"][0]
	assert answer["ok"] is True


@pytest.mark.parametrize(
	("server", "kept"),
	[
		("https://api.example.com/v1/", "https://api.example.com/v1"),
		("https://api.example.com/v1/?next=/", "https://api.example.com/v1?next=/"),
		("https://api.example.com/v1?path=/a/", "https://api.example.com/v1?path=/a/"),
		("HTTPS://API.EXAMPLE.COM/v1", "HTTPS://API.EXAMPLE.COM/v1"),
	],
)
def test_the_server_url_loses_only_its_paths_trailing_slash(server: str, kept: str) -> None:
	"""A slash that ends a query value is the value's; an upper-case scheme is still http(s)."""
	integration = from_openapi(_document(server), id="pets")
	assert integration.api_setup.base_url == kept
	assert "api_setup" in to_module(integration) or "ApiSetup" in to_module(integration)


@pytest.mark.parametrize(
	("base", "server", "tool_base"),
	[
		("https://api.example.com/v1?api_key=K", "beta", "https://api.example.com/v1/beta"),
		("https://api.example.com/v1/?api_key=K", "beta/", "https://api.example.com/v1/beta"),
		("https://api.example.com/v1?api_key=K", "/v2", "https://api.example.com/v2"),
		("https://api.example.com/v1", "beta", "https://api.example.com/v1/beta"),
	],
)
def test_a_relative_operation_server_resolves_against_the_server_path(
	base: str, server: str, tool_base: str
) -> None:
	"""``beta`` under ``https://api.example.com/v1?api_key=K`` is ``/v1/beta``, not ``/beta``.

	As RFC 3986 (5.2.2) resolves a reference with a path, the base URL's query is not carried to
	the operation's server.
	"""
	document = _document(base, servers=[{"url": server}])
	integration = from_openapi(document, id="pets")
	(tool,) = integration.tools
	assert getattr(tool, "base_url", None) == tool_base


def test_a_path_with_a_fragment_requests_what_a_client_would_and_says_so() -> None:
	"""``/cookies#form`` (one path listed twice) is requested as ``/cookies``; the docs say why."""
	document = _document("https://api.example.com/v1")
	document["paths"] = {
		"/cookies#form": {"get": {"operationId": "form", "responses": {"200": {"description": "ok"}}}},
		"/pets/{id}#x{tail}": {
			"get": {
				"operationId": "byId",
				"parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
				"responses": {"200": {"description": "ok"}},
			}
		},
	}  # fmt: skip
	integration = from_openapi(document, id="pets")
	endpoints = {t.handle: getattr(t, "endpoint", None) for t in integration.tools}
	assert endpoints == {"form": "/cookies", "byId": "/pets/{{ input.id }}"}
	assert "'/cookies#form' has a fragment" in integration.docs
