"""OAuth2 refresh for confidential and public clients, and config keys in both spellings."""

import base64
import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations import (
	ApiSetup,
	Credential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.credentials import (
	OAUTH2_CONFIG_KEYS,
	authorization_url,
	make_auth,
	oauth2_config,
)
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

TOOL = HttpTool(handle="get", description="d", endpoint="/me")
TOKEN_URL = "https://auth.example.com/token"


def templated(**kw: Any) -> Credential:
	"""An oauth2 credential written the way the built-in integrations write theirs."""
	return OAuth2Credential(
		type="oauth2",
		auth_url="https://auth.example.com/authorize",
		token_url=TOKEN_URL,
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
		scopes=["read"],
		**kw,
	)


def bare(**kw: Any) -> Credential:
	"""An oauth2 credential with no templates: every value comes from the config itself."""
	return OAuth2Credential(type="oauth2", token_url="{{ config.tokenUrl }}", scopes=["read"], **kw)


async def call(cred: Credential, config: dict[str, Any]) -> tuple[list[httpx.Request], Any]:
	seen: list[httpx.Request] = []
	refreshed: list[dict[str, Any]] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.path == "/token":
			return httpx.Response(
				200,
				json={"access_token": "at-new-1", "expires_in": 3600, "refresh_token": "rt-2nd-1"},
			)
		return httpx.Response(200, json={"ok": True})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	integration = Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[cred],
		tools=[TOOL],
	)
	auth = make_auth(
		integration, cred, config, on_token_refresh=refreshed.append, http=lambda: client
	)
	context = ToolContext(
		agent="a", integration="svc", config=config, http=lambda: client, auth=auth
	)
	await execute_http_tool(TOOL, integration, {}, context)
	return seen, refreshed


def form(request: httpx.Request) -> dict[str, str]:
	return dict(parse_qsl(request.content.decode()))


@pytest.mark.parametrize("token_auth", ["basic", "body"])
async def test_public_client_sends_client_id_in_the_body_and_no_authorization(token_auth) -> None:
	"""No client secret (PKCE): client_id in the body, no Authorization header, either token_auth."""
	seen, _ = await call(
		templated(token_auth=token_auth), {"clientId": "cid-public", "refreshToken": "rt-1st-1"}
	)
	assert seen[0].url == TOKEN_URL
	assert "authorization" not in seen[0].headers
	assert form(seen[0]) == {
		"grant_type": "refresh_token",
		"refresh_token": "rt-1st-1",
		"client_id": "cid-public",
	}
	assert seen[1].headers["authorization"] == "Bearer at-new-1"


async def test_public_client_json_body_carries_the_client_id() -> None:
	"""A JSON token request of a public client also carries client_id and no Authorization."""
	seen, _ = await call(
		templated(token_auth="basic", token_format="json"),
		{"clientId": "cid-public", "refreshToken": "rt-1st-1"},
	)
	assert "authorization" not in seen[0].headers
	assert json.loads(seen[0].content) == {
		"grant_type": "refresh_token",
		"refresh_token": "rt-1st-1",
		"client_id": "cid-public",
	}


async def test_confidential_client_with_basic_auth_keeps_the_secret_out_of_the_body() -> None:
	"""With a secret and token_auth basic: HTTP Basic client auth, no client fields in the body."""
	seen, _ = await call(
		templated(token_auth="basic"),
		{"clientId": "cid", "clientSecret": "csecret-1", "refreshToken": "rt-1st-1"},
	)
	pair = base64.b64encode(b"cid:csecret-1").decode()
	assert seen[0].headers["authorization"] == f"Basic {pair}"
	assert form(seen[0]) == {"grant_type": "refresh_token", "refresh_token": "rt-1st-1"}


async def test_confidential_client_with_body_auth_sends_id_and_secret_in_the_body() -> None:
	"""With a secret and token_auth body: client_id and client_secret in the form."""
	seen, _ = await call(
		templated(token_auth="body"),
		{"clientId": "cid", "clientSecret": "csecret-1", "refreshToken": "rt-1st-1"},
	)
	assert "authorization" not in seen[0].headers
	assert form(seen[0])["client_id"] == "cid"
	assert form(seen[0])["client_secret"] == "csecret-1"


def test_the_key_table_pairs_each_camel_name_with_its_snake_name() -> None:
	"""Each OAuth2 config key's snake_case name is its camelCase name split at the capitals."""
	for camel, snake in OAUTH2_CONFIG_KEYS.items():
		parts = snake.split("_")
		assert camel == parts[0] + "".join(p.title() for p in parts[1:])
	assert {"accessToken", "refreshToken", "expiryDate", "clientId", "clientSecret"} <= set(
		OAUTH2_CONFIG_KEYS
	)


def test_both_spellings_must_agree() -> None:
	"""oauth2_config copies snake_case keys to camelCase; two different values are refused."""
	out = oauth2_config({"refreshToken": "same", "refresh_token": "same", "client_id": "c"})
	assert out["refreshToken"] == "same" and out["clientId"] == "c"
	assert out["refresh_token"] == "same" and out["client_id"] == "c"
	with pytest.raises(ConfigurationError, match="give refreshToken or refresh_token, not both"):
		oauth2_config({"refreshToken": "camel", "refresh_token": "snake"})


SNAKE = {
	"refreshToken": "rt-snake-1",
	"clientId": "cid-snake",
	"clientSecret": "cs-snake-1",
}


@pytest.mark.parametrize("cred", [templated(), bare()], ids=["templated", "bare"])
@pytest.mark.parametrize("key", ["refreshToken", "clientId", "clientSecret", "tokenUrl"])
async def test_each_refresh_key_works_in_snake_case(key: str, cred: Credential) -> None:
	"""A refresh reads refresh_token, client_id, client_secret and token_url written in snake_case."""
	camel = {**SNAKE, "tokenUrl": TOKEN_URL}
	config = {k: v for k, v in camel.items() if k != key}
	config[OAUTH2_CONFIG_KEYS[key]] = camel[key]
	seen, _ = await call(cred, config)
	assert seen[0].url == TOKEN_URL
	assert form(seen[0]) == {
		"grant_type": "refresh_token",
		"refresh_token": "rt-snake-1",
		"client_id": "cid-snake",
		"client_secret": "cs-snake-1",
	}


async def test_access_token_and_expiry_date_work_in_snake_case() -> None:
	"""access_token is used while expiry_date lies ahead; a past expiry_date forces a refresh."""
	later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
	seen, _ = await call(templated(), {**SNAKE, "access_token": "at-snake-1", "expiry_date": later})
	assert [r.url.path for r in seen] == ["/me"]
	assert seen[0].headers["authorization"] == "Bearer at-snake-1"
	seen, _ = await call(templated(), {**SNAKE, "access_token": "at-snake-1", "expiry_date": 1000})
	assert [r.url.path for r in seen] == ["/token", "/me"]


async def test_a_refresh_updates_the_snake_case_keys_the_user_wrote() -> None:
	"""The new config keeps the user's spelling current: access_token and refresh_token change too."""
	config = {
		"access_token": "at-old-1",
		"expiry_date": 1000,
		"refresh_token": "rt-snake-1",
		"client_id": "cid-snake",
	}
	_, refreshed = await call(templated(), config)
	(new,) = refreshed
	assert new["accessToken"] == new["access_token"] == "at-new-1"
	assert new["refreshToken"] == new["refresh_token"] == "rt-2nd-1"
	assert new["expiryDate"] == new["expiry_date"] != 1000


def test_authorization_url_reads_snake_case_keys() -> None:
	"""client_id and auth_url in snake_case fill the authorization URL."""
	cred = bare(auth_url="{{ config.authUrl }}")
	config = {"client_id": "cid-snake", "auth_url": "https://a.example/o"}
	parts = urlsplit(authorization_url(cred, config, "https://r/cb", "st"))
	assert parts.netloc == "a.example" and parts.path == "/o"
	assert dict(parse_qsl(parts.query))["client_id"] == "cid-snake"


def test_every_key_of_the_table_is_covered_by_a_test_here() -> None:
	"""Adding a key to OAUTH2_CONFIG_KEYS needs a snake_case test in this module."""
	covered = {"refreshToken", "clientId", "clientSecret", "tokenUrl", "accessToken", "expiryDate"}
	assert set(OAUTH2_CONFIG_KEYS) == covered | {"authUrl"}
