import base64
import datetime as dt
import json
from functools import partial
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import anyio
import anyio.lowlevel
import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	ApiSetup,
	AuthCredential,
	BasicCredential,
	BearerCredential,
	Credential,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.credentials import OAuth2Auth, authorization_url, make_auth
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

TOOL = HttpTool(handle="get", description="d", endpoint="/me")


def spec(*creds: Credential, auths: dict[str, Any] | None = None) -> Integration:
	from openmolt_integrations._aws import sigv4_auth

	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=list(creds),
		tools=[TOOL],
		auths={"aws_sigv4": sigv4_auth, **(auths or {})},
	)


def context(client: httpx.AsyncClient, auth: Any, config: dict[str, Any]) -> ToolContext:
	return ToolContext(
		agent="a",
		integration="svc",
		config=config,
		http=lambda: client,
		auth=auth,
		extras={"retry_policy": RetryPolicy(sleep=lambda s: anyio.lowlevel.checkpoint())},
	)


async def run(cred: Credential, config: dict[str, Any], handler: Any, **kw: Any) -> Any:
	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	integration = spec(cred, auths=kw.get("auths"))
	auth = make_auth(
		integration, cred, config, on_token_refresh=kw.get("on_refresh"), http=lambda: client
	)
	return await execute_http_tool(TOOL, integration, {}, context(client, auth, config)), auth


async def test_bearer_header_from_config() -> None:
	"""bearer renders its header over the config."""
	seen = []
	cred = BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	await run(
		cred, {"apiKey": "tok-123456"}, lambda r: seen.append(r) or httpx.Response(200, json={})
	)
	assert seen[0].headers["authorization"] == "Bearer tok-123456"


async def test_custom_headers_and_query_params() -> None:
	"""custom adds headers and query parameters."""
	seen = []
	cred = CustomCredential(
		type="custom",
		headers={"X-API-Key": "{{ config.apiKey }}"},
		query_params={"api_key": "{{ config.apiKey }}"},
	)
	await run(
		cred, {"apiKey": "key-abcdef"}, lambda r: seen.append(r) or httpx.Response(200, json={})
	)
	assert seen[0].headers["x-api-key"] == "key-abcdef"
	assert parse_qs(seen[0].url.query.decode()) == {"api_key": ["key-abcdef"]}


async def test_missing_config_names_the_key_not_a_value() -> None:
	"""A credential whose config is not set fails with the missing key's name."""
	cred = BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	with pytest.raises(ToolError, match=r"\['apiKey'\]"):
		await run(cred, {}, lambda r: httpx.Response(200))


async def test_basic_auth() -> None:
	"""basic sends user:password (Twilio SID and token)."""
	seen = []
	cred = BasicCredential(
		type="basic", username="{{ config.accountSid }}", password="{{ config.authToken }}"
	)
	await run(
		cred,
		{"accountSid": "AC1", "authToken": "secret-tok"},
		lambda r: seen.append(r) or httpx.Response(200, json={}),
	)
	assert (
		seen[0].headers["authorization"] == "Basic " + base64.b64encode(b"AC1:secret-tok").decode()
	)


def oauth_cred(**kw: Any) -> Credential:
	return OAuth2Credential(
		type="oauth2",
		auth_url="https://auth.example.com/authorize",
		token_url="https://auth.example.com/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
		scopes=["read", "write"],
		**kw,
	)


BASE = {"clientId": "cid", "clientSecret": "csecret-1", "refreshToken": "rtoken-1"}


async def test_oauth2_refreshes_when_the_token_is_missing_and_reports_the_new_config() -> None:
	"""No access token: refresh first (client in body), use it, and pass the new config on."""
	seen: list[httpx.Request] = []
	refreshed: list[dict[str, Any]] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.path == "/token":
			return httpx.Response(
				200,
				json={"access_token": "at-new-1", "expires_in": 3600, "refresh_token": "rtoken-2"},
			)
		return httpx.Response(200, json={"me": 1})

	async def on_refresh(new: dict[str, Any]) -> None:
		refreshed.append(new)

	out, _ = await run(oauth_cred(), dict(BASE), handler, on_refresh=on_refresh)
	assert out == {"me": 1}
	assert dict(parse_qsl(seen[0].content.decode())) == {
		"grant_type": "refresh_token",
		"refresh_token": "rtoken-1",
		"client_id": "cid",
		"client_secret": "csecret-1",
	}
	assert seen[1].headers["authorization"] == "Bearer at-new-1"
	assert refreshed[0]["accessToken"] == "at-new-1" and refreshed[0]["refreshToken"] == "rtoken-2"
	expiry = dt.datetime.fromisoformat(refreshed[0]["expiryDate"].replace("Z", "+00:00"))
	assert 3500 < (expiry - dt.datetime.now(dt.UTC)).total_seconds() <= 3600
	assert refreshed[0]["clientId"] == "cid"


async def test_oauth2_refreshes_an_expired_token_with_basic_client_auth_and_client_key() -> None:
	"""An expired token (within the skew) is refreshed; token_auth basic and client_key work."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.path == "/token":
			return httpx.Response(200, json={"access_token": "at-2", "expires_in": 60})
		return httpx.Response(200, json={})

	soon = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=20)).isoformat()
	config = {**BASE, "accessToken": "at-old", "expiryDate": soon}
	await run(oauth_cred(token_auth="basic"), config, handler)
	assert (
		seen[0].headers["authorization"] == "Basic " + base64.b64encode(b"cid:csecret-1").decode()
	)
	assert "client_secret" not in seen[0].content.decode()
	seen.clear()
	config = {**BASE, "accessToken": "at-old", "expiryDate": 1000}
	# TikTok's way: an oauth2 auth of the integration's own that names the client id client_key.
	tiktok = {"oauth2": partial(OAuth2Auth, client_id_param="client_key")}
	await run(oauth_cred(), config, handler, auths=tiktok)
	assert dict(parse_qsl(seen[0].content.decode()))["client_key"] == "cid"


async def test_oauth2_valid_token_is_used_and_a_401_refreshes_once() -> None:
	"""A valid token is sent as is; a 401 triggers one refresh and one retry."""
	seen: list[str] = []

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/token":
			seen.append("refresh")
			return httpx.Response(200, json={"access_token": "at-fresh"})
		seen.append(request.headers["authorization"])
		if request.headers["authorization"] == "Bearer at-revoked":
			return httpx.Response(401, json={"message": "revoked"})
		return httpx.Response(200, json={"ok": 1})

	later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).timestamp() * 1000
	out, auth = await run(
		oauth_cred(), {**BASE, "accessToken": "at-revoked", "expiryDate": later}, handler
	)
	assert out == {"ok": 1}
	assert seen == ["Bearer at-revoked", "refresh", "Bearer at-fresh"]
	assert auth.refreshes == 1


async def test_oauth2_refresh_refused_is_a_tool_error_without_secrets() -> None:
	"""A refused refresh says to authorize again and shows no secret."""

	def handler(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			400,
			json={
				"error": "invalid_grant",
				"error_description": "Token has been expired or revoked.",
			},
		)

	with pytest.raises(ToolError, match="authorize again") as info:
		await run(oauth_cred(), dict(BASE), handler)
	text = json.dumps(info.value.to_dict())
	assert "rtoken-1" not in text and "csecret-1" not in text


async def test_concurrent_calls_share_one_refresh() -> None:
	"""Twenty concurrent calls with an expired token cause exactly one refresh."""
	refreshes = 0
	used: list[str] = []

	async def handler(request: httpx.Request) -> httpx.Response:
		nonlocal refreshes
		if request.url.path == "/token":
			refreshes += 1
			await anyio.sleep(0.05)
			return httpx.Response(200, json={"access_token": f"at-{refreshes}", "expires_in": 3600})
		used.append(request.headers["authorization"])
		return httpx.Response(200, json={})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	cred = oauth_cred()
	integration = spec(cred)
	calls: list[dict[str, Any]] = []
	auth = make_auth(
		integration,
		cred,
		{**BASE, "accessToken": "at-0", "expiryDate": 0},
		on_token_refresh=calls.append,
		http=lambda: client,
	)
	assert isinstance(auth, OAuth2Auth)
	ctx = context(client, auth, {})
	async with anyio.create_task_group() as tg:
		for _ in range(20):
			tg.start_soon(execute_http_tool, TOOL, integration, {}, ctx)
	assert refreshes == 1
	assert used == ["Bearer at-1"] * 20
	assert len(calls) == 1


async def test_aws_sigv4_signs_with_botocore() -> None:
	"""aws_sigv4 adds a SigV4 Authorization, X-Amz-Date and the payload hash for S3."""
	seen: list[httpx.Request] = []
	cred = AuthCredential(
		type="aws_sigv4",
		params={
			"access_key_id": "{{ config.accessKeyId }}",
			"secret_access_key": "{{ config.secretAccessKey }}",
			"region": "{{ config.region }}",
			"service": "s3",
		},
	)
	config = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG",
		"region": "eu-west-1",
	}
	await run(cred, config, lambda r: seen.append(r) or httpx.Response(200, content=b""))
	auth_header = seen[0].headers["authorization"]
	assert auth_header.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
	assert "/eu-west-1/s3/aws4_request" in auth_header
	assert "SignedHeaders=" in auth_header and "host" in auth_header
	assert "x-amz-date" in seen[0].headers and "x-amz-content-sha256" in seen[0].headers
	assert "wJalrXUtnFEMI" not in auth_header


async def test_aws_sigv4_without_botocore_says_what_to_install(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Without botocore, binding an aws_sigv4 credential asks for openmolt[s3]."""
	import sys

	from openmolt_core import _hints
	from openmolt_core.errors import IntegrationError

	monkeypatch.setitem(sys.modules, "botocore.auth", None)
	monkeypatch.setattr(_hints, "install_command", lambda r: f"pip install '{r}'")
	cred = AuthCredential(type="aws_sigv4")
	with pytest.raises(IntegrationError, match=r"pip install 'openmolt\[s3\]'"):
		make_auth(spec(cred), cred, {}, on_token_refresh=None, http=lambda: None)  # type: ignore[arg-type,return-value]


def test_authorization_url() -> None:
	"""The authorization URL carries client id, redirect, state, scopes and extra params."""
	cred = oauth_cred(auth_params={"access_type": "offline", "prompt": "consent"})
	url = authorization_url(cred, {"clientId": "cid"}, "http://localhost:8765/cb", "st8")
	parts = urlsplit(url)
	assert parts.netloc == "auth.example.com" and parts.path == "/authorize"
	assert dict(parse_qsl(parts.query)) == {
		"response_type": "code",
		"client_id": "cid",
		"redirect_uri": "http://localhost:8765/cb",
		"state": "st8",
		"scope": "read write",
		"access_type": "offline",
		"prompt": "consent",
	}
	tiktok = authorization_url(
		oauth_cred(),
		{"clientId": "k"},
		"https://x/cb",
		"s",
		scope_separator=",",
		code_challenge="abc",
		client_id_param="client_key",
	)
	query = dict(parse_qsl(urlsplit(tiktok).query))
	assert query["client_key"] == "k" and query["scope"] == "read,write"
	assert query["code_challenge"] == "abc" and query["code_challenge_method"] == "S256"


def test_credential_is_a_union_by_type_that_refuses_other_types_fields() -> None:
	"""Each type has its own fields: bearer with tokenUrl, oauth2 without one, are refused."""
	from pydantic import TypeAdapter, ValidationError

	adapter: TypeAdapter[Any] = TypeAdapter(Credential)
	bearer = adapter.validate_python({"type": "bearer", "headers": {"A": "{{ config.k }}"}})
	assert isinstance(bearer, BearerCredential)
	with pytest.raises(ValidationError, match="tokenUrl"):
		adapter.validate_python({"type": "bearer", "tokenUrl": "https://t"})
	with pytest.raises(ValidationError, match=r"accessKeyId|access_key_id"):
		adapter.validate_python({"type": "oauth2", "tokenUrl": "https://t", "accessKeyId": "x"})
	with pytest.raises(ValidationError, match=r"token_url|tokenUrl"):
		adapter.validate_python({"type": "oauth2", "clientId": "c"})
	with pytest.raises(ValidationError, match="needs a 'type'"):
		adapter.validate_python({"headers": {}})
	custom = adapter.validate_python({"type": "aws_sigv4", "params": {"region": "x"}})
	assert isinstance(custom, AuthCredential)
	with pytest.raises(
		ValidationError, match=r"neither built in .* nor in the integration's auths"
	):
		Integration(name="S", credential_setup=[custom])
	# A dump without defaults keeps the type, so it validates back to the same model.
	for cred in (bearer, OAuth2Credential(type="oauth2", token_url="https://t"), custom):
		again = adapter.validate_python(cred.model_dump(exclude_defaults=True, by_alias=True))
		assert again == cred


@pytest.mark.parametrize("expires_in", ["", "soon", "1e400", 1e300, -1e300, True])
async def test_an_unreadable_expires_in_keeps_the_rotated_refresh_token(expires_in: Any) -> None:
	"""A refresh reply whose expires_in is no usable number still gives its tokens to the caller."""

	def handler(request: httpx.Request) -> httpx.Response:
		body = {"access_token": "at-new-1", "refresh_token": "rtoken-2", "expires_in": expires_in}
		return httpx.Response(200, json=body)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	refreshed: list[dict[str, Any]] = []
	auth = OAuth2Auth(
		oauth_cred(), dict(BASE), "svc", on_token_refresh=refreshed.append, http=lambda: client
	)
	assert await auth.token() == "at-new-1"
	assert refreshed[0]["refreshToken"] == "rtoken-2"  # rotated: the old one is spent
	assert "expiryDate" not in refreshed[0]


async def test_a_refused_refresh_quotes_the_services_reason_masked_and_short() -> None:
	"""A refusal echoing the refresh token and client secret shows neither, and stays short."""

	def handler(request: httpx.Request) -> httpx.Response:
		reason = "refresh token rtoken-1 of client cid (secret csecret-1) is bad " + "x" * 5000
		return httpx.Response(400, json={"error": "invalid_request", "error_description": reason})

	with pytest.raises(ToolError, match="authorize again") as info:
		await run(oauth_cred(), dict(BASE), handler)
	text = json.dumps(info.value.to_dict())
	assert "rtoken-1" not in text and "csecret-1" not in text
	assert len(info.value.message) < 600


@pytest.mark.parametrize(
	"auth_url",
	["file:///etc/passwd", "javascript:alert(1)", "/authorize", "https://a.example.com/\x1b[2Jx"],
)
def test_an_authorization_url_that_is_no_web_address_is_refused(auth_url: str) -> None:
	"""A browser is sent to it: a file:, javascript: or relative URL, or control characters."""
	from openmolt_core.errors import ConfigurationError

	cred = oauth_cred().model_copy(update={"auth_url": "{{ config.authUrl }}"})
	with pytest.raises(ConfigurationError, match=r"authorization URL.*http"):
		authorization_url(cred, {"clientId": "c", "authUrl": auth_url}, "http://localhost/cb", "s")


async def test_a_refresh_without_expires_in_forgets_the_expired_expiry() -> None:
	"""A refresh reply with neither expires_in nor a new refresh token kept the old, passed
	expiryDate beside the new token, which then read as expired: each of twenty concurrent calls
	refreshed again (20 refreshes, each spending the refresh token). Now one refresh, the token
	is taken as valid until a 401 says otherwise, and the refresh token is kept."""
	refreshes = 0
	used: list[str] = []

	async def handler(request: httpx.Request) -> httpx.Response:
		nonlocal refreshes
		if request.url.path == "/token":
			refreshes += 1
			assert dict(httpx.QueryParams(request.content.decode()))["refresh_token"] == "rtoken-1"
			return httpx.Response(200, json={"access_token": f"at-{refreshes}"})
		used.append(request.headers["authorization"])
		return httpx.Response(200, json={})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	cred = oauth_cred()
	integration = spec(cred)
	calls: list[dict[str, Any]] = []
	auth = make_auth(
		integration,
		cred,
		{**BASE, "accessToken": "at-0", "expiry_date": "2020-01-01T00:00:00Z"},
		on_token_refresh=calls.append,
		http=lambda: client,
	)
	assert isinstance(auth, OAuth2Auth)
	ctx = context(client, auth, {})
	async with anyio.create_task_group() as tg:
		for _ in range(20):
			tg.start_soon(execute_http_tool, TOOL, integration, {}, ctx)
	await execute_http_tool(TOOL, integration, {}, ctx)
	assert refreshes == 1
	assert used == ["Bearer at-1"] * 21
	assert len(calls) == 1 and calls[0]["refreshToken"] == "rtoken-1"
	assert "expiryDate" not in calls[0] and "expiry_date" not in calls[0]
