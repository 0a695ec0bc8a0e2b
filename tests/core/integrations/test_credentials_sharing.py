import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qsl

import anyio
import anyio.lowlevel
import httpx
import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.integrations import (
	ApiSetup,
	BasicCredential,
	BearerCredential,
	Credential,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.credentials import make_auth
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

TOOL = HttpTool(handle="get", description="d", endpoint="/me?x=1")


def spec(cred: Credential) -> Integration:
	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[cred],
		tools=[TOOL],
	)


@pytest.mark.parametrize(
	"cred",
	[
		BasicCredential(
			type="basic", username="{{ config.user }}", password="{{ config.password }}"
		),
		BasicCredential(type="basic"),
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}),
		CustomCredential(
			type="custom", query_params={"api_key": "{{ config.apiKey | nosuchfilter }}"}
		),
		OAuth2Credential(type="oauth2", token_url="https://t.example.com/token"),
	],
)
def test_secrets_never_raise_on_an_unconfigured_credential(cred: Credential) -> None:
	"""secrets() of an auth with no config (or a broken template) returns a set, never raises."""
	auth = make_auth(spec(cred), cred, {}, on_token_refresh=None, http=lambda: None)  # type: ignore[arg-type,return-value]
	assert auth.secrets() == set()  # type: ignore[union-attr]


async def test_an_unconfigured_basic_credential_is_refused_before_the_first_model_call() -> None:
	"""Creating the agent works; its run names the missing key and never calls the model."""
	om = OpenMolt(entry_points=False)
	cred = BasicCredential(
		type="basic", username="{{ config.user }}", password="{{ config.password }}"
	)
	om.register_integration("svc", spec(cred))
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="B", model=model, integrations=["svc"])
	with pytest.raises(  # the password its template names too
		ConfigurationError, match="svc needs config 'user' and 'password' for its basic credential"
	):
		await agent.run("x")
	assert model.calls == 0
	await om.aclose()


async def test_query_credentials_are_set_once_across_retries() -> None:
	"""After a 429 the retried request carries the api_key once, and the tool's own query stays."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(429 if len(seen) == 1 else 200, json={"ok": True})

	cred = CustomCredential(type="custom", query_params={"api_key": "{{ config.apiKey }}"})
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	config = {"apiKey": "key-123456"}
	integration = spec(cred)
	auth = make_auth(integration, cred, config, on_token_refresh=None, http=lambda: client)
	context = ToolContext(
		agent="a",
		integration="svc",
		config=config,
		http=lambda: client,
		auth=auth,
		extras={"retry_policy": RetryPolicy(sleep=lambda s: anyio.lowlevel.checkpoint())},
	)
	assert await execute_http_tool(TOOL, integration, {}, context) == {"ok": True}
	assert len(seen) == 2
	for request in seen:
		assert parse_qsl(request.url.query.decode()) == [("x", "1"), ("api_key", "key-123456")]


async def test_agents_with_the_same_oauth2_credential_share_one_refresh() -> None:
	"""Two agents with the same credential refresh once (single-use refresh token); both callbacks run."""
	used: list[str] = []
	bearers: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/token":
			token = dict(parse_qsl(request.content.decode()))["refresh_token"]
			used.append(token)
			if token != "rtoken-1" or used.count(token) > 1:
				return httpx.Response(400, json={"error": "invalid_grant"})
			return httpx.Response(
				200,
				json={"access_token": "at-new-1", "expires_in": 3600, "refresh_token": "rtoken-2"},
			)
		bearers.append(request.headers["authorization"])
		return httpx.Response(200, json={"me": 1})

	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://auth.example.com/token",
		refresh_token="{{ config.refreshToken }}",
	)
	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
	)
	om.register_integration("svc", spec(cred))
	expired = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
	config = {"accessToken": "at-old-1", "expiryDate": expired, "refreshToken": "rtoken-1"}
	refreshed: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
	models = {}
	agents = []
	for name in ("A", "B"):
		models[name] = ScriptedModel([call_tool("svc.get"), finish(result="ok")])
		entry = {
			"integration": "svc",
			"credential": {
				"type": "oauth2",
				"config": dict(config),
				"on_token_refresh": refreshed[name].append,
			},
		}
		agents.append(om.create_agent(name=name, model=models[name], integrations=[entry]))
	for agent in agents:
		await agent.run("x")
	for name in ("A", "B"):
		turns = [
			json.loads(m.content) for m in models[name].requests[-1].messages if m.role == "user"
		]
		assert turns[1]["results"][0]["ok"] is True
		assert [new["refreshToken"] for new in refreshed[name]] == ["rtoken-2"]
	assert used == ["rtoken-1"] and bearers == ["Bearer at-new-1", "Bearer at-new-1"]
	await om.aclose()
