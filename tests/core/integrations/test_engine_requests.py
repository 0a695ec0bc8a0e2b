import json
import uuid
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from pydantic import TypeAdapter

from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.integrations import (
	ApiSetup,
	Credential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.credentials import authorization_url, carries_token, make_auth
from openmolt_core.integrations.extensions import form_encoder, graphql_errors
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio


async def no_sleep(_: float) -> None:
	return None


def context(
	handler: Any, *, auth: Any = None, client: httpx.AsyncClient | None = None
) -> ToolContext:
	http = client or httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return ToolContext(
		agent="a",
		integration="svc",
		config={},
		http=lambda: http,
		auth=auth,
		extras={"retry_policy": RetryPolicy(sleep=no_sleep)},
	)


def integration(tool: HttpTool, *, code: dict[str, Any] | None = None, **setup: Any) -> Integration:
	return Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com", **setup),
		tools=[tool],
		**(code or {}),
	)


def form(request: httpx.Request) -> list[tuple[str, str]]:
	return parse_qsl(request.content.decode(), keep_blank_values=True)


# form_arrays

FORM_TOOL = HttpTool(
	handle="send",
	description="d",
	method="POST",
	endpoint="/send",
	request_format="form-data",
	body={"MediaUrl": "{{ input.urls }}", "items": [{"price": "p1"}], "meta": {"tags": ["x"]}},
)


@pytest.mark.parametrize(
	("style", "expected"),
	[
		(
			"indices",
			[
				("MediaUrl[0]", "a"),
				("MediaUrl[1]", "b"),
				("items[0][price]", "p1"),
				("meta[tags][0]", "x"),
			],
		),
		(
			"brackets",
			[
				("MediaUrl[]", "a"),
				("MediaUrl[]", "b"),
				("items[0][price]", "p1"),
				("meta[tags][]", "x"),
			],
		),
		(
			"repeat",
			[("MediaUrl", "a"), ("MediaUrl", "b"), ("items[0][price]", "p1"), ("meta[tags]", "x")],
		),
	],
)
async def test_form_arrays_styles(style: str, expected: list[tuple[str, str]]) -> None:
	"""Lists of scalars follow the form encoder's style; lists of objects always use indices."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		request.read()
		seen.append(request)
		return httpx.Response(200, json={})

	code = {"encoders": {"form-data": form_encoder(style)}}  # type: ignore[arg-type]
	await execute_http_tool(
		FORM_TOOL, integration(FORM_TOOL, code=code), {"urls": ["a", "b"]}, context(handler)
	)
	assert form(seen[0]) == expected


async def test_a_form_encoder_writes_multipart_fields_its_way() -> None:
	"""A form-data encoder with a file field sends multipart, its list style kept."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		request.read()
		seen.append(request)
		return httpx.Response(200, json={})

	tool = FORM_TOOL.model_copy(update={"files": {"f": "{{ input.f }}"}})
	code = {"encoders": {"form-data": form_encoder("repeat")}}
	ctx = context(handler)
	ctx = replace(ctx, files=FileStore())
	await execute_http_tool(
		tool,
		integration(tool, code=code),
		{"urls": ["a", "b"], "f": "data:text/plain;base64,aGk="},
		ctx,
	)
	text = seen[0].content.decode()
	assert text.count('name="MediaUrl"\r\n') == 2
	assert "MediaUrl[]" not in text


# idempotency keys and retries


def post_tool(**kw: Any) -> HttpTool:
	return HttpTool(handle="create", description="d", method="POST", endpoint="/things", **kw)


def counting(statuses: list[int]) -> tuple[list[httpx.Request], Any]:
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		status = statuses[min(len(seen), len(statuses)) - 1]
		return httpx.Response(status, json={"error": {"message": f"status {status}"}})

	return seen, handler


async def test_post_gets_a_fresh_idempotency_key_kept_across_retries() -> None:
	"""Each POST call gets a new UUID4 key; the engine's retries of one call reuse it."""
	tool = post_tool()
	spec = integration(tool, idempotency_header="Idempotency-Key")
	seen, handler = counting([503, 502, 200])
	await execute_http_tool(tool, spec, {}, context(handler))
	keys = [r.headers["idempotency-key"] for r in seen]
	assert len(keys) == 3 and len(set(keys)) == 1
	assert uuid.UUID(keys[0]).version == 4
	more, handler2 = counting([200])
	await execute_http_tool(tool, spec, {}, context(handler2))
	assert more[0].headers["idempotency-key"] != keys[0]


async def test_explicit_idempotency_key_is_kept_and_get_gets_none() -> None:
	"""A key the call sets is sent as is; non-POST methods get no key."""
	tool = post_tool(headers={"Idempotency-Key": "{{ input.key }}"})
	spec = integration(tool, idempotency_header="Idempotency-Key")
	seen, handler = counting([200])
	await execute_http_tool(tool, spec, {"key": "order-42"}, context(handler))
	assert seen[0].headers["idempotency-key"] == "order-42"
	get = HttpTool(handle="get", description="d", endpoint="/things")
	seen, handler = counting([200])
	await execute_http_tool(
		get, integration(get, idempotency_header="Idempotency-Key"), {}, context(handler)
	)
	assert "idempotency-key" not in seen[0].headers


async def test_post_without_key_is_not_retried_on_5xx_but_is_on_429() -> None:
	"""A POST without an idempotency key is sent once on 5xx; 429 is retried."""
	tool = post_tool()
	seen, handler = counting([500, 200])
	with pytest.raises(ToolError, match="not retried: the request may have been applied") as info:
		await execute_http_tool(tool, integration(tool), {}, context(handler))
	assert len(seen) == 1 and info.value.status_code == 500
	seen, handler = counting([429, 429, 200])
	assert await execute_http_tool(tool, integration(tool), {}, context(handler)) == {
		"error": {"message": "status 200"}
	}
	assert len(seen) == 3


async def test_get_and_put_are_retried_on_5xx() -> None:
	"""Idempotent methods are retried on 5xx without any key."""
	for method in ("GET", "PUT"):
		tool = HttpTool(handle="t", description="d", method=method, endpoint="/x")
		seen, handler = counting([503, 200])
		await execute_http_tool(tool, integration(tool), {}, context(handler))
		assert len(seen) == 2


async def test_post_timeouts_are_retried_only_with_a_key() -> None:
	"""A read timeout repeats a POST only when it carries an idempotency key."""
	attempts: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		attempts.append(request)
		if len(attempts) == 1:
			raise httpx.ReadTimeout("slow", request=request)
		return httpx.Response(200, json={"id": 1})

	tool = post_tool()
	with pytest.raises(ToolError, match="did not answer in time"):
		await execute_http_tool(tool, integration(tool), {}, context(handler))
	assert len(attempts) == 1
	attempts.clear()
	spec = integration(tool, idempotency_header="Idempotency-Key")
	assert await execute_http_tool(tool, spec, {}, context(handler)) == {"id": 1}
	assert len(attempts) == 2


async def test_post_connect_errors_are_retried() -> None:
	"""A POST that never reached the service (connect error) is retried even without a key."""
	attempts: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		attempts.append(request)
		if len(attempts) == 1:
			raise httpx.ConnectError("refused", request=request)
		return httpx.Response(201, json={"id": 2})

	tool = post_tool()
	assert await execute_http_tool(tool, integration(tool), {}, context(handler)) == {"id": 2}
	assert len(attempts) == 2


async def test_a_service_that_cannot_be_reached_is_named_by_its_host() -> None:
	"""The error says where the request went (host and port), so a wrong base URL shows."""

	def handler(request: httpx.Request) -> httpx.Response:
		raise httpx.ConnectError("refused", request=request)

	tool = post_tool()
	spec = integration(tool)
	with pytest.raises(ToolError) as caught:
		await execute_http_tool(tool, spec, {}, context(handler))
	assert "could not connect to the service at api.example.com (connection refused" in str(
		caught.value
	)


# error_check


def answering(payload: Any) -> Any:
	return lambda request: httpx.Response(200, json=payload)


async def test_graphql_errors_without_data_raise() -> None:
	"""graphql: top-level errors with null data is a ToolError with every message."""
	tool = post_tool(body={"query": "{ shop { name } }"})
	spec = integration(tool, code={"response_checks": [graphql_errors]})
	reply = {
		"errors": [{"message": "Field 'nme' doesn't exist"}, {"message": "Access denied"}],
		"data": None,
	}
	with pytest.raises(ToolError, match="Field 'nme' doesn't exist; Access denied") as info:
		await execute_http_tool(tool, spec, {}, context(answering(reply)))
	assert info.value.status_code == 200 and info.value.details == reply
	with pytest.raises(ToolError, match="Throttled"):
		await execute_http_tool(tool, spec, {}, context(answering({"errors": "Throttled"})))
	partial = {"data": {"shop": None}, "errors": [{"message": "partial"}]}
	assert await execute_http_tool(tool, spec, {}, context(answering(partial))) == partial
	assert (
		await execute_http_tool(tool, integration(tool), {}, context(answering(reply))) == reply
	)  # without the check the reply is returned


async def test_a_throttle_check_retries_a_200_that_applied_nothing() -> None:
	"""throttle_checks: a 2xx the check finds turned away is sent again, even a POST without an
	idempotency key, after the wait the check gives (its backoff when 0); other 2xx are kept."""
	seen: list[httpx.Request] = []
	waits: list[float] = []
	replies = [{"busy": 1.5}, {"busy": 0}, {"done": True}]

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json=replies[len(seen) - 1])

	async def sleep(seconds: float) -> None:
		waits.append(seconds)

	def busy(value: Any) -> float | None:
		return value.get("busy") if isinstance(value, dict) else None

	tool = post_tool(body={"a": 1})
	spec = integration(tool, code={"throttle_checks": [busy]})
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	ctx = ToolContext(
		agent="a",
		integration="svc",
		config={},
		http=lambda: http,
		extras={"retry_policy": RetryPolicy(sleep=sleep, backoff=0.25)},
	)
	assert await execute_http_tool(tool, spec, {}, ctx) == {"done": True}
	assert len(seen) == 3 and waits == [1.5, 0.5]  # the second wait: backoff 0.25 doubled
	assert "idempotency-key" not in seen[0].headers


async def test_slack_ok_false_raises_with_the_error() -> None:
	"""Slack's check: {"ok": false, "error": ...} is a ToolError; ok true is returned."""
	from openmolt_integrations.slack import ok_false

	tool = post_tool()
	spec = integration(tool, code={"response_checks": [ok_false]})
	reply = {
		"ok": False,
		"error": "channel_not_found",
		"response_metadata": {"messages": ["[ERROR] bad channel"]},
	}
	with pytest.raises(ToolError, match="channel_not_found; \\[ERROR\\] bad channel"):
		await execute_http_tool(tool, spec, {}, context(answering(reply)))
	good = {"ok": True, "ts": "1.2"}
	assert await execute_http_tool(tool, spec, {}, context(answering(good))) == good


# credentials


def test_scope_separator_from_the_credential() -> None:
	"""authorization_url joins scopes with the credential's separator unless told otherwise."""
	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://slack.com/api/oauth.v2.access",
		auth_url="https://slack.com/oauth/v2/authorize",
		client_id="{{ config.clientId }}",
		scopes=["chat:write", "channels:read"],
		scope_separator=",",
	)
	url = authorization_url(cred, {"clientId": "c"}, "https://x/cb", "s")
	assert dict(parse_qsl(urlsplit(url).query))["scope"] == "chat:write,channels:read"
	url = authorization_url(cred, {"clientId": "c"}, "https://x/cb", "s", scope_separator=" ")
	assert dict(parse_qsl(urlsplit(url).query))["scope"] == "chat:write channels:read"
	assert OAuth2Credential(type="oauth2", token_url="https://t").scope_separator == " "
	adapter: TypeAdapter[Any] = TypeAdapter(Credential)
	given = {"type": "oauth2", "tokenUrl": "https://t", "scopeSeparator": ","}
	assert adapter.validate_python(given).scope_separator == ","


def test_auth_params_add_replace_or_leave_out_url_parameters() -> None:
	"""auth_params adds parameters, overrides defaults, and a None leaves a default out."""
	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://t.example/token",
		auth_url="https://a.example/authorize",
		client_id="{{ config.clientId }}",
		auth_params={"response_type": None, "prompt": "consent"},
	)
	query = dict(
		parse_qsl(urlsplit(authorization_url(cred, {"clientId": "c"}, "https://x", "s")).query)
	)
	assert query == {
		"client_id": "c",
		"redirect_uri": "https://x",
		"state": "s",
		"prompt": "consent",
	}


def oauth(**kw: Any) -> Credential:
	return OAuth2Credential(
		type="oauth2",
		token_url="https://auth.example.com/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
		**kw,
	)


async def run_oauth(cred: Credential) -> tuple[list[httpx.Request], list[httpx.Request]]:
	token_requests: list[httpx.Request] = []
	api_requests: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		request.read()
		if request.url.path == "/token":
			token_requests.append(request)
			return httpx.Response(200, json={"access_token": "fresh-token-123", "expires_in": 3600})
		api_requests.append(request)
		return httpx.Response(200, json={})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	tool = HttpTool(handle="get", description="d", endpoint="/me")
	spec = integration(tool)
	config = {"clientId": "cid", "clientSecret": "secret-xyz", "refreshToken": "refresh-abc"}
	auth = make_auth(spec, cred, config, on_token_refresh=None, http=lambda: client)
	await execute_http_tool(tool, spec, {}, context(None, auth=auth, client=client))
	return token_requests, api_requests


async def test_oauth_token_request_asks_for_json() -> None:
	"""The token request sends Accept: application/json; the API call gets the bearer token."""
	tokens, calls = await run_oauth(oauth())
	assert tokens[0].headers["accept"] == "application/json"
	assert dict(parse_qsl(tokens[0].content.decode()))["grant_type"] == "refresh_token"
	assert calls[0].headers["authorization"] == "Bearer fresh-token-123"


async def test_a_header_carrying_the_token_replaces_authorization() -> None:
	"""A credential header using config.accessToken carries the token; no Authorization is added."""
	shopify = oauth(headers={"X-Shopify-Access-Token": "{{ config.accessToken }}"})
	assert carries_token(shopify)
	_, calls = await run_oauth(shopify)
	assert calls[0].headers["x-shopify-access-token"] == "fresh-token-123"
	assert "authorization" not in calls[0].headers
	etsy = oauth(headers={"x-api-key": "{{ config.clientId }}"})
	assert not carries_token(etsy)
	_, calls = await run_oauth(etsy)
	assert calls[0].headers["authorization"] == "Bearer fresh-token-123"
	assert calls[0].headers["x-api-key"] == "cid"


async def test_a_list_header_is_sent_comma_separated_and_an_object_header_is_refused() -> None:
	"""A header's list of values is one comma-separated value (it was Python's "['a', 'b']");
	an object has no header form: refused, naming the header (it was "{'a': 1}")."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	tool = HttpTool(handle="t", description="d", endpoint="/x", headers={"X-V": "{{ input.v }}"})
	await execute_http_tool(tool, integration(tool), {"v": ["a", 1, True]}, context(handler))
	assert seen[0].headers["X-V"] == "a,1,true"
	with pytest.raises(ToolError, match=r"header 'X-V' .*object.*json.*param_style"):
		await execute_http_tool(tool, integration(tool), {"v": {"a": 1}}, context(handler))
	with pytest.raises(ToolError, match=r"header 'X-V' .*object"):
		await execute_http_tool(tool, integration(tool), {"v": [{"a": 1}]}, context(handler))
	assert len(seen) == 1


async def test_a_body_template_sends_the_call_s_idempotency_key_kept_across_retries() -> None:
	"""``{{ call.idempotency_key }}`` renders to the call's key: the same on every retry of one
	call (a body-keyed POST is retried on 5xx), another for another call, and the header the
	integration names carries the same key."""
	from openmolt_core.integrations.schema import IDEMPOTENCY_KEY

	tool = post_tool(body={"variables": {"key": IDEMPOTENCY_KEY, "n": "{{ input.n }}"}})
	assert tool.sends_call_key
	assert "key" not in tool.input_schema.get("properties", {})
	spec = integration(tool, idempotency_header="Idempotency-Key")
	seen, handler = counting([503, 200])
	await execute_http_tool(tool, spec, {"n": 1}, context(handler))
	bodies = [json.loads(r.content) for r in seen]
	keys = {b["variables"]["key"] for b in bodies}
	assert len(seen) == 2 and len(keys) == 1
	(key,) = keys
	assert uuid.UUID(key) and seen[0].headers["idempotency-key"] == key
	more, handler2 = counting([200])
	await execute_http_tool(tool, spec, {"n": 1}, context(handler2))
	assert json.loads(more[0].content)["variables"]["key"] != key


async def test_a_post_without_the_call_s_key_in_its_body_is_not_retried_on_5xx() -> None:
	"""Only a template that sends the call's key makes a POST safe to repeat."""
	tool = post_tool(body={"key": "{{ input.key }}"})
	assert not tool.sends_call_key
	seen, handler = counting([503, 200])
	with pytest.raises(ToolError, match="not retried"):
		await execute_http_tool(tool, integration(tool), {"key": "k"}, context(handler))
	assert len(seen) == 1


def test_a_template_reading_a_call_field_the_engine_does_not_fill_is_refused() -> None:
	"""``call`` holds the idempotency key only: a misspelt field would send nothing."""
	with pytest.raises(ValueError, match=r"call\.idempotencyKey: a template reads only"):
		post_tool(body={"key": "{{ call.idempotencyKey }}"})
	with pytest.raises(ValueError, match=r"call\.run"):
		post_tool(headers={"X-Run": '{{ call["run"] }}'})
	assert not post_tool(body={"k": "{{ input.call.idempotency_key }}"}).sends_call_key


@pytest.mark.parametrize(
	("where", "value"),
	[
		("api_setup", {"headers": {"X-Run": "{{ call.run_id }}"}}),
		("api_setup", {"query_params": {"run": '{{ call["run"] }}'}}),
		("api_setup", {"base_url": "https://api.example.com/{{ call.tenant }}"}),
		("bearer", {"headers": {"Authorization": "Bearer {{ call.idempotency_key }}"}}),
		("custom", {"headers": {"X-Key": "{{ call.token }}"}}),
		("custom", {"query_params": {"key": "{{ call.idempotency_key }}"}}),
	],
)
def test_a_call_field_no_one_fills_is_refused_in_every_template_of_an_integration(
	where: str, value: dict[str, Any]
) -> None:
	"""The setup every tool shares and the credentials' templates, not only a tool's own.

	A setup's header reading ``call.run_id`` was sent without it on every call, with no word;
	a credential's templates are rendered with the config alone, so any ``call`` field there
	(the idempotency key too) renders to nothing: a key sent empty.
	"""
	from openmolt_core.integrations.model import ApiSetup, BearerCredential, CustomCredential

	made = {"api_setup": ApiSetup, "bearer": BearerCredential, "custom": CustomCredential}
	with pytest.raises(ValueError, match=r"call\."):
		made[where].model_validate(value)


def test_a_setup_may_send_the_call_s_idempotency_key() -> None:
	"""The one field the engine fills for every call is allowed where every tool's request is made."""
	from openmolt_core.integrations.model import ApiSetup

	setup = ApiSetup(headers={"X-Key": "{{ call.idempotency_key }}"}, base_url="https://a.example")
	assert setup.headers["X-Key"] == "{{ call.idempotency_key }}"
