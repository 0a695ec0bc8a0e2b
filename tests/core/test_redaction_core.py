import json
from typing import Any

import httpx
import pytest

from openmolt import FunctionTool, OpenMolt
from openmolt_core._binding import secret_values
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

OAUTH = {
	"name": "Echo",
	"apiSetup": {"baseUrl": "https://api.echo.example"},
	"credentialSetup": [
		{
			"type": "oauth2",
			"tokenUrl": "https://auth.echo.example/token",
			"clientId": "{{ config.clientId }}",
			"clientSecret": "{{ config.clientSecret }}",
			"refreshToken": "{{ config.refreshToken }}",
		}
	],
	"scopes": {"read": "Read."},
	"tools": [
		{
			"handle": "whoami",
			"description": "Echo what the service saw.",
			"scopes": ["read"],
			"method": "GET",
			"endpoint": "/whoami",
		}
	],
}

NEW_TOKEN = "fresh-access-token-0123456789"


def service(request: httpx.Request) -> httpx.Response:
	if request.url.host == "auth.echo.example":
		return httpx.Response(200, json={"access_token": NEW_TOKEN, "expires_in": 3600})
	# a careless service that echoes the credential back
	return httpx.Response(200, json={"saw": request.headers["authorization"]})


async def test_a_token_obtained_by_refresh_never_reaches_the_model_or_events() -> None:
	"""A token the agent only learned by an OAuth2 refresh is still masked everywhere."""
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	om = OpenMolt(entry_points=False, http_client=http)
	om.register_integration("echo", OAUTH)
	model = ScriptedModel([call_tool("echo.whoami"), finish(done=True)])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{
				"integration": "echo",
				"credential": {
					"type": "oauth2",
					"config": {
						"clientId": "client-1",
						"clientSecret": "client-secret-xyz",
						"refreshToken": "refresh-abc-123",
					},
				},
			}
		],
	)
	seen: list[Any] = []
	agent.on("tool:response", lambda e: seen.append(e.response))
	result = await agent.run()
	sent = "".join(m.content for r in model.requests for m in r.messages)
	assert NEW_TOKEN not in sent and "[redacted]" in sent
	assert NEW_TOKEN not in json.dumps(seen)
	assert NEW_TOKEN not in json.dumps(result.state.to_dict())


def test_public_config_values_stay_readable_and_secrets_do_not() -> None:
	"""Regions, endpoints and ids are not treated as secrets; keys, tokens and odd names are."""
	config = {
		"region": "eu-west-1",
		"endpoint": "https://minio.local:9000",
		"customerId": "1234567890",
		"accessKeyId": "AKIAEXAMPLE123",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG",
		"apiKey": "sk-live-123456",
		"whatever": "looks-random-value",
		"accountSid": "AC0123456789",
	}
	assert secret_values(config) == {
		"AKIAEXAMPLE123",
		"wJalrXUtnFEMI/K7MDENG",
		"sk-live-123456",
		"looks-random-value",
		"AC0123456789",
	}


async def test_local_tools_get_the_file_store_and_http_client() -> None:
	"""Tools given straight to create_agent can save files and use the shared client."""
	got: dict[str, Any] = {}

	async def save(i: dict[str, Any], ctx: Any) -> Any:
		got["http"] = ctx.http()
		return await ctx.files.save(b"hello", media_type="text/plain", name="a.txt")

	http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(204)))
	om = OpenMolt(entry_points=False, http_client=http)
	tool = FunctionTool(handle="save", description="Save.", function=save)
	model = ScriptedModel([call_tool("local.save"), finish(ok=True)])
	agent = om.create_agent(name="A", model=model, tools=[tool])
	await agent.run()
	result = json.loads(model.requests[1].messages[-1].content)["results"][0]["result"]
	assert result["file"].startswith("openmolt-file:") and result["size"] == 5
	assert got["http"] is http
	await om.aclose()
