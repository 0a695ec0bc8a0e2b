"""``openmolt auth``'s flow end to end against a local authorization server enforcing PKCE and state."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential
from openmolt_core.integrations.oauth import (
	LoopbackReceiver,
	authorize,
	code_from_redirect,
	consent_url,
	pkce_pair,
	requested_scopes,
)

from ._fake_oauth import FakeAuthServer

pytestmark = pytest.mark.anyio

SECRET = "csecret-abcdef"


@pytest.fixture
def server() -> Iterator[FakeAuthServer]:
	srv = FakeAuthServer()
	yield srv
	srv.close()


def service(server: FakeAuthServer, **kw: Any) -> Integration:
	fields: dict[str, Any] = {
		"type": "oauth2",
		"auth_url": f"{server.url}/authorize",
		"token_url": f"{server.url}/token",
		"client_id": "{{ config.clientId }}",
		"client_secret": "{{ config.clientSecret }}",
		"refresh_token": "{{ config.refreshToken }}",
		"scopes": ["offline", "mail.read", "mail.send"],
		"scope_map": {"read": ["mail.read"], "send": ["mail.send"]},
		"pkce": "supported",
		**kw,
	}
	return Integration(
		id="mail",
		name="Mail",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[OAuth2Credential(**fields)],
		scopes={"read": "read mail", "send": "send mail"},
		tools=[HttpTool(handle="me", description="d", endpoint="/me", scopes=["read"])],
	)


def browser(answer: str | None = None) -> Any:
	"""A browser: follows the consent URL (the server redirects it to the loopback listener)."""

	def show(url: str) -> None:
		with httpx.Client(trust_env=False, follow_redirects=answer is None) as client:
			response = client.get(url)
		assert response.status_code in (200, 302), response.text

	return show


def redirect_of(url: str) -> str:
	"""The address the server sends the browser to (what a user pastes)."""
	with httpx.Client(trust_env=False) as client:
		response = client.get(url)
	assert response.status_code == 302, response.text
	return response.headers["location"]


CONFIG = {"clientId": "cid-123", "clientSecret": SECRET}


async def test_sign_in_over_the_loopback_redirect(server: FakeAuthServer) -> None:
	"""The browser is redirected to 127.0.0.1/callback; state and PKCE check; tokens come back."""
	async with httpx.AsyncClient(trust_env=False) as client:
		tokens = await authorize(
			service(server), "mail", CONFIG, client=client, tool_scopes=["read"], show=browser()
		)
	assert tokens["accessToken"].startswith("at-") and tokens["refreshToken"].startswith("rt-")
	assert tokens["expiryDate"].endswith("Z")
	assert tokens["clientId"] == "cid-123" and tokens["clientSecret"] == SECRET
	(asked,) = server.authorize_requests
	assert asked["redirect_uri"].startswith("http://127.0.0.1:")
	assert urlsplit(asked["redirect_uri"]).path == "/callback"
	assert asked["scope"] == "offline mail.read"  # the read tool scope only, plus the base scope
	(exchange,) = server.token_requests
	assert exchange["grant_type"] == "authorization_code"
	digest = hashlib.sha256(exchange["code_verifier"].encode()).digest()
	assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == asked["code_challenge"]


async def test_no_browser_reads_the_pasted_address(server: FakeAuthServer) -> None:
	"""--no-browser: the URL is shown and the redirect address is pasted back."""
	shown: list[str] = []
	async with httpx.AsyncClient(trust_env=False) as client:
		tokens = await authorize(
			service(server),
			"mail",
			CONFIG,
			client=client,
			show=shown.append,
			paste=lambda: redirect_of(shown[0]),
			port=8765,
		)
	assert tokens["accessToken"].startswith("at-")
	assert dict(parse_qsl(urlsplit(shown[0]).query))["redirect_uri"] == (
		"http://127.0.0.1:8765/callback"
	)


async def test_a_forged_state_is_refused_before_any_exchange(server: FakeAuthServer) -> None:
	"""An answer whose state is not this sign-in's never reaches the token URL."""
	shown: list[str] = []

	def forged() -> str:
		real = redirect_of(shown[0])
		query = dict(parse_qsl(urlsplit(real).query))
		return f"http://127.0.0.1:8765/callback?code={query['code']}&state=someone-elses"

	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ConfigurationError, match="state"):
			await authorize(
				service(server), "mail", CONFIG, client=client, show=shown.append, paste=forged
			)
	assert server.token_requests == []


@pytest.mark.parametrize(
	"answer",
	[
		"http://127.0.0.1:1/callback?code=abc",  # no state
		"http://127.0.0.1:1/callback?code=abc&state=",  # empty state
		"http://127.0.0.1:1/callback?state=S",  # no code
		"http://127.0.0.1:1/callback?error=access_denied&state=S",
		"",
	],
)
def test_code_from_redirect_refuses_bad_answers(answer: str) -> None:
	"""Missing or wrong state, no code, or a refusal: a clear error, never a code."""
	with pytest.raises(ConfigurationError) as info:
		code_from_redirect(answer, "S")
	assert "abc" not in str(info.value)


def test_code_from_redirect_takes_a_url_or_a_query() -> None:
	"""The whole address or just its query works; surrounding whitespace is ignored."""
	assert code_from_redirect(" http://127.0.0.1:9/callback?code=c1&state=S\n", "S") == "c1"
	assert code_from_redirect("?code=c2&state=S", "S") == "c2"
	assert code_from_redirect("code=c3&state=S", "S") == "c3"


async def test_a_server_requiring_pkce_refuses_a_credential_that_sends_none(
	server: FakeAuthServer,
) -> None:
	"""pkce=unsupported sends no challenge: this server refuses, and no answer ever arrives."""
	statuses: list[int] = []

	def show(url: str) -> None:
		with httpx.Client(trust_env=False) as client:
			statuses.append(client.get(url).status_code)

	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ConfigurationError, match="no answer"):
			await authorize(
				service(server, pkce="unsupported"),
				"mail",
				CONFIG,
				client=client,
				show=show,
				wait_seconds=0.3,
			)
	assert statuses == [400]
	(asked,) = server.authorize_requests
	assert "code_challenge" not in asked and server.token_requests == []


def test_unsupported_pkce_sends_no_challenge_and_no_verifier() -> None:
	"""pkce=unsupported: neither code_challenge nor code_challenge_method is in the URL."""
	credential = OAuth2Credential(
		type="oauth2",
		auth_url="https://a.example/auth",
		token_url="https://a.example/token",
		client_id="{{ config.clientId }}",
		pkce="unsupported",
		auth_params={"code_challenge_method": "S256"},
	)
	consent = consent_url(credential, {"clientId": "c"}, "http://127.0.0.1:1/callback")
	query = dict(parse_qsl(urlsplit(consent.url).query))
	assert "code_challenge" not in query and "code_challenge_method" not in query
	assert consent.verifier is None


async def test_a_wrong_verifier_is_refused_and_the_message_holds_no_secret(
	server: FakeAuthServer,
) -> None:
	"""The server's PKCE check bites, and the error names no code, verifier or secret."""
	from openmolt_core.integrations.oauth import Consent, exchange_code

	shown: list[str] = []
	spec = service(server)
	credential = spec.credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	consent = consent_url(credential, CONFIG, "http://127.0.0.1:8765/callback")
	code = code_from_redirect(redirect_of(consent.url), consent.state)
	wrong = Consent(consent.url, consent.state, "x" * 64, consent.redirect_uri, consent.scopes)
	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ToolError, match="PKCE failed") as info:
			await exchange_code(
				credential, CONFIG, code, wrong, client=client, integration="mail", guard=None
			)
	text = str(info.value)
	assert code not in text and SECRET not in text and "x" * 64 not in text
	assert "Consent(" in repr(consent) and consent.verifier not in repr(consent)  # type: ignore[operator]
	assert shown == []


async def test_missing_client_secret_is_named_before_the_exchange(server: FakeAuthServer) -> None:
	"""A confidential client without its secret: an error naming clientSecret and the fix."""
	shown: list[str] = []
	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ConfigurationError, match=r"clientSecret.*OPENMOLT_MAIL_CLIENT_SECRET"):
			await authorize(
				service(server),
				"mail",
				{"clientId": "cid-123"},
				client=client,
				show=shown.append,
				paste=lambda: redirect_of(shown[0]),
			)
	assert server.token_requests == []


def test_missing_client_id_is_named() -> None:
	"""No client id: the error says how to give one."""
	credential = OAuth2Credential(
		type="oauth2", auth_url="https://a.example/auth", token_url="https://a.example/token"
	)
	with pytest.raises(ConfigurationError, match="--client-id"):
		consent_url(credential, {}, "http://127.0.0.1:1/callback")


def test_pkce_pair_follows_rfc_7636() -> None:
	"""The verifier is 43-128 unreserved characters; the challenge its unpadded S256."""
	verifier, challenge = pkce_pair()
	assert 43 <= len(verifier) <= 128
	assert set(verifier) <= set(
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	)
	digest = hashlib.sha256(verifier.encode()).digest()
	assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
	assert pkce_pair()[0] != verifier


def test_requested_scopes_follow_the_tool_scopes(server: FakeAuthServer) -> None:
	"""Only the mapped scopes of the tool scopes given, plus the unmapped base ones."""
	spec = service(server)
	credential = spec.credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	assert requested_scopes(spec, credential, ["send"]) == ["offline", "mail.send"]
	assert requested_scopes(spec, credential, None) == ["offline", "mail.read", "mail.send"]
	with pytest.raises(ConfigurationError, match=r"unknown scope.*delete"):
		requested_scopes(spec, credential, ["delete"])


def test_tools_needing_no_oauth_scope_ask_for_the_credential_s_minimum() -> None:
	"""A tool scope mapped to no OAuth scope would send a consent with none, which some services
	refuse: minimum_scopes are asked then, and only then; each must be one of the scopes."""
	from openmolt_core.integrations import Integration

	credential = OAuth2Credential(
		type="oauth2",
		auth_url="https://auth.example/authorize",
		token_url="https://auth.example/token",
		scopes=["catalog.read", "orders.read"],
		scope_map={"info": [], "catalog": ["catalog.read"], "orders": ["orders.read"]},
		minimum_scopes=["catalog.read"],
	)
	spec = Integration(
		id="shop",
		name="Shop",
		scopes={"info": "i", "catalog": "c", "orders": "o"},
		credential_setup=[credential],
	)
	assert requested_scopes(spec, credential, ["info"]) == ["catalog.read"]
	assert requested_scopes(spec, credential, ["info", "orders"]) == ["orders.read"]
	with pytest.raises(ValueError, match=r"minimum_scopes \['x'\] are not in scopes"):
		OAuth2Credential(type="oauth2", token_url="https://t", scopes=["a"], minimum_scopes=["x"])


def test_the_loopback_listener_binds_127_0_0_1_and_ignores_other_paths() -> None:
	"""Only GET /callback is taken; the listener is on the loopback address."""
	receiver = LoopbackReceiver()
	receiver.expect("s")
	try:
		assert receiver.redirect_uri.startswith("http://127.0.0.1:")
		base = receiver.redirect_uri.removesuffix("/callback")
		with httpx.Client(trust_env=False) as client:
			assert client.get(f"{base}/favicon.ico").status_code == 404
			assert client.get(f"{receiver.redirect_uri}?code=c&state=s").status_code == 200
		assert receiver.wait(1) == "/callback?code=c&state=s"
	finally:
		receiver.close()


def test_the_loopback_listeners_pages_carry_the_security_headers() -> None:
	"""Its pages' address holds the code: no referrer, no cache, no framing, no sniffing."""
	from openmolt_core._support.webheaders import SECURITY_HEADERS

	receiver = LoopbackReceiver()
	receiver.expect("s")
	try:
		base = receiver.redirect_uri.removesuffix("/callback")
		with httpx.Client(trust_env=False) as client:
			pages = [
				client.get(f"{base}/favicon.ico"),
				client.get(f"{receiver.redirect_uri}?code=c&state=other"),
				client.get(f"{receiver.redirect_uri}?code=c&state=s"),
			]
	finally:
		receiver.close()
	assert [page.status_code for page in pages] == [404, 400, 200]
	for page in pages:
		for name, value in SECURITY_HEADERS:
			assert page.headers.get(name) == value, (page.status_code, name)


def test_a_busy_port_is_a_clear_error() -> None:
	"""A port already taken: an error naming --port."""
	first = LoopbackReceiver()
	try:
		port = int(first.redirect_uri.split(":")[2].split("/")[0])
		with pytest.raises(ConfigurationError, match="--port"):
			LoopbackReceiver(port)
	finally:
		first.close()


async def test_device_flow_polls_through_pending_and_slow_down(server: FakeAuthServer) -> None:
	"""RFC 8628: the code is shown, pending and slow_down are waited out, the tokens come back."""
	from openmolt_core.integrations.oauth import device_authorize

	shown: list[tuple[str, str]] = []
	waits: list[float] = []

	async def sleep(seconds: float) -> None:
		waits.append(seconds)

	spec = service(server, device_url=f"{server.url}/device")
	async with httpx.AsyncClient(trust_env=False) as client:
		tokens = await device_authorize(
			spec,
			"mail",
			{"clientId": "cid-123"},
			client=client,
			tool_scopes=["send"],
			show=lambda uri, code: shown.append((uri, code)),
			sleep=sleep,
		)
	assert shown == [(f"{server.url}/activate", "WDJB-MJHT")]
	assert waits == [5, 5, 10]  # slow_down adds five seconds
	assert tokens["accessToken"].startswith("at-") and tokens["clientId"] == "cid-123"
	device_polls = [r for r in server.token_requests if "device_code" in r]
	assert len(device_polls) == 3 and all("client_secret" not in r for r in device_polls)


@pytest.mark.parametrize("ending", ["access_denied", "expired_token"])
async def test_device_flow_ends_on_refusal(server: FakeAuthServer, ending: str) -> None:
	"""A refusal or an expired code ends the polling with the reason, never a token."""
	from openmolt_core.integrations.oauth import device_authorize

	server.device_answers = ["authorization_pending", ending]

	async def sleep(seconds: float) -> None:
		return None

	spec = service(server, device_url=f"{server.url}/device")
	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ToolError, match=ending):
			await device_authorize(
				spec, "mail", CONFIG, client=client, show=lambda u, c: None, sleep=sleep
			)


async def test_device_flow_needs_a_device_url(server: FakeAuthServer) -> None:
	"""An integration without a device flow: the error says to use the browser."""
	from openmolt_core.integrations.oauth import device_authorize

	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ConfigurationError, match="no device flow"):
			await device_authorize(
				service(server), "mail", CONFIG, client=client, show=lambda u, c: None
			)


async def test_a_forged_callback_on_the_loopback_is_turned_away(server: FakeAuthServer) -> None:
	"""Another program hitting /callback first gets 400; the real answer still signs in."""
	statuses: list[int] = []

	def show(url: str) -> None:
		redirect = dict(parse_qsl(urlsplit(url).query))["redirect_uri"]
		with httpx.Client(trust_env=False, follow_redirects=True) as client:
			statuses.append(client.get(f"{redirect}?code=forged&state=forged").status_code)
			statuses.append(client.get(url).status_code)

	async with httpx.AsyncClient(trust_env=False) as client:
		tokens = await authorize(service(server), "mail", CONFIG, client=client, show=show)
	assert statuses == [400, 200]
	assert tokens["accessToken"].startswith("at-")
	assert [r["code"] for r in server.token_requests] != ["forged"]


@pytest.mark.parametrize("port", [-1, 65536, 10**9])
def test_a_port_out_of_range_is_named(port: int) -> None:
	"""Not a port: an error naming --port, never an OverflowError."""
	with pytest.raises(ConfigurationError, match="--port"):
		LoopbackReceiver(port)


@pytest.mark.parametrize("expires_in", ["", "1e400", 1e300])
async def test_an_unreadable_expires_in_keeps_the_exchanged_tokens(
	server: FakeAuthServer, expires_in: Any
) -> None:
	"""A code exchange whose expires_in is no usable number gives its tokens, with no expiry."""
	from openmolt_core.integrations.oauth import Consent, exchange_code

	def handler(request: httpx.Request) -> httpx.Response:
		body = {
			"access_token": "at-1234567",
			"refresh_token": "rt-1234567",
			"expires_in": expires_in,
		}
		return httpx.Response(200, json=body)

	credential = service(server).credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	consent = Consent("", "state", "verifier", "http://127.0.0.1:9/callback", ())
	async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
		tokens = await exchange_code(
			credential, CONFIG, "code-1", consent, client=client, integration="mail", guard=None
		)
	assert tokens["refreshToken"] == "rt-1234567" and "expiryDate" not in tokens


async def test_device_flow_takes_an_unreadable_expires_in_as_the_default(
	server: FakeAuthServer,
) -> None:
	"""A device authorization whose expires_in is no number polls as if it had none (900 s)."""
	from openmolt_core.integrations.oauth import device_authorize

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/device":
			start = {"device_code": "dev-1", "user_code": "AB-CD", "expires_in": "later"}
			return httpx.Response(200, json={**start, "verification_uri": "https://x.test/a"})
		return httpx.Response(200, json={"access_token": "at-1234567"})

	async def sleep(seconds: float) -> None:
		return None

	spec = service(server, device_url=f"{server.url}/device")
	async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
		tokens = await device_authorize(
			spec, "mail", CONFIG, client=client, show=lambda u, c: None, sleep=sleep
		)
	assert tokens["accessToken"] == "at-1234567"


def test_a_silent_connection_does_not_hold_up_the_loopback_answer() -> None:
	"""A connection that sends nothing (a browser's preconnect) leaves the real answer served."""
	import socket

	receiver = LoopbackReceiver()
	receiver.expect("s")
	port = int(receiver.redirect_uri.split(":")[2].split("/")[0])
	idle = socket.create_connection(("127.0.0.1", port))
	try:
		with httpx.Client(trust_env=False, timeout=3) as client:
			answer = client.get(f"{receiver.redirect_uri}?code=c&state=s")
		assert answer.status_code == 200
		assert receiver.wait(1) == "/callback?code=c&state=s"
	finally:
		idle.close()
		receiver.close()


def test_the_loopback_takes_no_answer_before_it_knows_the_state() -> None:
	"""An answer that comes before the sign-in's state is known is turned away, not taken."""
	receiver = LoopbackReceiver()
	try:
		with httpx.Client(trust_env=False) as client:
			assert client.get(f"{receiver.redirect_uri}?code=c&state=early").status_code == 400
			receiver.expect("s")
			assert client.get(f"{receiver.redirect_uri}?code=c&state=s").status_code == 200
		assert receiver.wait(1) == "/callback?code=c&state=s"
	finally:
		receiver.close()


async def test_a_refused_exchange_shows_neither_the_code_nor_the_verifier(
	server: FakeAuthServer,
) -> None:
	"""A token endpoint echoing the code and the PKCE verifier in its refusal: the error hides both."""
	from openmolt_core.integrations.oauth import Consent, exchange_code

	def handler(request: httpx.Request) -> httpx.Response:
		form = dict(parse_qsl(request.content.decode()))
		reason = f"code {form['code']} does not match verifier {form['code_verifier']}"
		return httpx.Response(400, json={"error": "invalid_grant", "error_description": reason})

	credential = service(server).credential_setup[0]
	assert isinstance(credential, OAuth2Credential)
	verifier, _ = pkce_pair()
	consent = Consent("", "state", verifier, "http://127.0.0.1:9/callback", ())
	async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
		with pytest.raises(ToolError, match="refused") as info:
			await exchange_code(
				credential,
				CONFIG,
				"4/0Acode-abcdef",
				consent,
				client=client,
				integration="mail",
				guard=None,
			)
	assert "4/0Acode-abcdef" not in str(info.value) and verifier not in str(info.value)


async def test_a_device_refusal_does_not_show_the_device_code(server: FakeAuthServer) -> None:
	"""A device flow's refusal echoing the device code: the error hides it."""
	from openmolt_core.integrations.oauth import device_authorize

	def handler(request: httpx.Request) -> httpx.Response:
		if request.url.path == "/device":
			start = {"device_code": "dev-secret-123456", "user_code": "AB-CD", "interval": 1}
			return httpx.Response(200, json={**start, "verification_uri": "https://x.test/a"})
		reason = "device code dev-secret-123456 was denied"
		return httpx.Response(400, json={"error": "access_denied", "error_description": reason})

	async def sleep(seconds: float) -> None:
		return None

	spec = service(server, device_url=f"{server.url}/device")
	async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
		with pytest.raises(ToolError, match="denied") as info:
			await device_authorize(
				spec, "mail", CONFIG, client=client, show=lambda u, c: None, sleep=sleep
			)
	assert "dev-secret-123456" not in str(info.value)


async def test_a_declined_consent_is_said_on_the_page_and_in_the_terminal(
	server: FakeAuthServer,
) -> None:
	"""error=access_denied on the loopback: the page says nothing was signed in, the flow ends.

	The page said "Signed in. You can close this window" while the terminal said the service
	refused: a user who declined, or whose consent failed, was told it worked.
	"""
	pages: list[httpx.Response] = []

	def decline(url: str) -> None:  # the user clicks "Cancel" on the consent page
		asked = dict(parse_qsl(urlsplit(url).query))
		answer = {"error": "access_denied", "error_description": "The user denied access"}
		with httpx.Client(trust_env=False) as client:
			pages.append(
				client.get(asked["redirect_uri"], params={**answer, "state": asked["state"]})
			)

	async with httpx.AsyncClient(trust_env=False) as client:
		with pytest.raises(ConfigurationError, match="access_denied") as info:
			await authorize(service(server), "mail", CONFIG, client=client, show=decline)
	assert "The user denied access" in str(info.value)
	(page,) = pages
	assert page.status_code == 400 and "Signed in" not in page.text
	assert "not signed in" in page.text and "access_denied" in page.text
	assert server.token_requests == []
