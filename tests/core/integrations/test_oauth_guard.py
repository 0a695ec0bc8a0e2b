"""Every OAuth2 request of an integration whose URLs a document chose goes through the SSRF guard.

An OpenAPI document names its token URL. Import refuses a literal internal address; a name is
left to the guard at call time, which resolves it. The token refresh went through the guard, but
the code exchange (``openmolt auth``, ``om.accounts.complete``) and the device flow sent with a
plain client: a name resolving to an internal address got the client secret and the code. They
all go through `token_reply` now, which takes the guard (`oauth_guard`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from openmolt_core.errors import ToolError
from openmolt_core.integrations import _ssrf
from openmolt_core.integrations.credentials import make_auth, oauth_guard
from openmolt_core.integrations.model import OAuth2Credential
from openmolt_core.integrations.oauth import authorize, device_authorize, exchange_code
from openmolt_core.integrations.openapi import from_openapi

pytestmark = pytest.mark.anyio

DOC: dict[str, Any] = {
	"openapi": "3.0.3",
	"info": {"title": "Pets", "version": "1"},
	"servers": [{"url": "https://api.example.com"}],
	"components": {
		"securitySchemes": {
			"o": {
				"type": "oauth2",
				"flows": {
					"authorizationCode": {
						"authorizationUrl": "https://auth.example.com/authorize",
						"tokenUrl": "https://token.rebind.example/token",
						"scopes": {"read": "read"},
					}
				},
			}
		}
	},
	"security": [{"o": ["read"]}],
	"paths": {
		"/pets": {"get": {"operationId": "listPets", "responses": {"200": {"description": "ok"}}}}
	},
}
CONFIG = {"clientId": "cid", "clientSecret": "client-secret-123456"}


@pytest.fixture(autouse=True)
def _internal_name(monkeypatch: pytest.MonkeyPatch) -> None:
	"""``token.rebind.example`` resolves to loopback (an attacker's DNS); the rest is public."""

	async def resolve(host: str, port: int) -> list[str]:
		return ["127.0.0.1"] if host == "token.rebind.example" else ["93.184.215.14"]

	monkeypatch.setattr(_ssrf, "resolve_host", resolve)


class _Recorder:
	"""A transport that records what reaches it and answers a token."""

	def __init__(self) -> None:
		self.sent: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.sent.append(request)
		return httpx.Response(200, json={"access_token": "at-1", "device_code": "dc"})

	def client(self) -> httpx.AsyncClient:
		return httpx.AsyncClient(transport=httpx.MockTransport(self))


def _spec() -> Any:
	# The token server is another site than the API's: allowed, so the import keeps it.
	return from_openapi(DOC, id="pets", allow_hosts=["token.rebind.example"])


def _consent() -> Any:
	from openmolt_core.integrations.oauth import Consent

	return Consent("https://auth.example.com/authorize", "st", None, "http://127.0.0.1/cb", ())


async def test_the_code_exchange_is_guarded() -> None:
	spec, seen = _spec(), _Recorder()
	credential = spec.credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	with pytest.raises(ToolError, match="non-public address"):
		await exchange_code(
			credential,
			CONFIG,
			"code",
			_consent(),
			client=seen.client(),
			integration="pets",
			guard=oauth_guard(spec, CONFIG),
		)
	assert seen.sent == []  # neither the code nor the client secret left


async def test_a_host_the_config_allows_is_reached() -> None:
	spec, seen = _spec(), _Recorder()
	config = {**CONFIG, "allowInternalHosts": ["token.rebind.example"]}
	credential = spec.credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	tokens = await exchange_code(
		credential,
		config,
		"code",
		_consent(),
		client=seen.client(),
		integration="pets",
		guard=oauth_guard(spec, config),
	)
	assert tokens["accessToken"] == "at-1" and len(seen.sent) == 1


async def test_openmolt_auth_s_sign_in_is_guarded() -> None:
	spec, seen, shown = _spec(), _Recorder(), []
	with pytest.raises(ToolError, match="non-public address"):
		await authorize(
			spec,
			"pets",
			CONFIG,
			client=seen.client(),
			show=shown.append,
			paste=lambda: (
				"http://127.0.0.1:8765/callback?code=c&state="
				+ dict(parse_qsl(urlsplit(shown[0]).query))["state"]
			),
			port=8765,
		)
	assert seen.sent == []


async def test_the_device_flow_is_guarded() -> None:
	spec, seen = _spec(), _Recorder()
	config = {**CONFIG, "deviceUrl": "https://token.rebind.example/device"}
	credential = spec.credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	spec.credential_setup[0] = credential.model_copy(
		update={"device_url": "{{ config.deviceUrl }}"}
	)
	with pytest.raises(ToolError, match="non-public address"):
		await device_authorize(
			spec, "pets", config, client=seen.client(), show=lambda uri, code: None
		)
	assert seen.sent == []


async def test_the_refresh_is_guarded_as_before() -> None:
	spec, seen = _spec(), _Recorder()
	auth: Any = make_auth(
		spec,
		spec.credential_setup[0],
		{**CONFIG, "refreshToken": "rt-123456"},
		on_token_refresh=None,
		http=seen.client,
	)
	with pytest.raises(ToolError, match="non-public address"):
		await auth.token()
	assert seen.sent == []


async def test_a_built_in_integration_s_token_url_is_its_author_s() -> None:
	"""No guard where no document chose the URL (a built-in's token endpoint is fixed)."""
	from openmolt_core.integrations import ApiSetup, Integration

	spec = Integration(
		id="mail",
		name="Mail",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[OAuth2Credential(type="oauth2", token_url="https://t.example/token")],
	)
	assert oauth_guard(spec, CONFIG) is None
