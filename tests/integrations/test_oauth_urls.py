"""Each built-in OAuth2 integration's consent URL, against the form its provider documents.

The expected forms come from each provider's documentation of the authorization request:
Google OAuth 2.0 for installed apps (PKCE S256, ``access_type=offline``, ``prompt=consent``,
space-separated scopes), Slack OAuth v2 (comma-separated ``scope``), GitHub OAuth apps (``scope``
space-separated, PKCE S256), the Microsoft identity platform v2.0 endpoint, Dropbox
(``token_access_type=offline``, PKCE), X OAuth 2.0 (PKCE required), TikTok Login Kit for web
(``client_key``, comma-separated scopes), Etsy Open API v3 (PKCE required, space-separated),
Airtable (PKCE required) and Shopify (comma-separated scopes on the shop's domain).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from openmolt_core.integrations import Integration, OAuth2Credential
from openmolt_core.integrations.oauth import consent_url, oauth2_credential, requested_scopes
from openmolt_integrations import (
	airtable,
	dropbox,
	etsy,
	github,
	gmail,
	google_calendar,
	outlook,
	shopify,
	slack,
	tiktok,
	x,
)

REDIRECT = "http://127.0.0.1:8765/callback"

# module, host, path, client id parameter, scope separator, PKCE, parameters the docs name
DOCUMENTED: dict[str, tuple[Any, str, str, str, str, bool, dict[str, str]]] = {
	"gmail": (
		gmail,
		"accounts.google.com",
		"/o/oauth2/v2/auth",
		"client_id",
		" ",
		True,
		{"access_type": "offline", "prompt": "consent", "response_type": "code"},
	),
	"googleCalendar": (
		google_calendar,
		"accounts.google.com",
		"/o/oauth2/v2/auth",
		"client_id",
		" ",
		True,
		{"access_type": "offline", "prompt": "consent", "response_type": "code"},
	),
	"slack": (slack, "slack.com", "/oauth/v2/authorize", "client_id", ",", False, {}),
	"github": (
		github,
		"github.com",
		"/login/oauth/authorize",
		"client_id",
		" ",
		True,
		{},
	),
	"outlook": (
		outlook,
		"login.microsoftonline.com",
		"/common/oauth2/v2.0/authorize",
		"client_id",
		" ",
		True,
		{"response_type": "code"},
	),
	"dropbox": (
		dropbox,
		"www.dropbox.com",
		"/oauth2/authorize",
		"client_id",
		" ",
		True,
		{"token_access_type": "offline", "response_type": "code"},
	),
	"x": (x, "x.com", "/i/oauth2/authorize", "client_id", " ", True, {"response_type": "code"}),
	"tiktok": (
		tiktok,
		"www.tiktok.com",
		"/v2/auth/authorize/",
		"client_key",
		",",
		False,
		{"response_type": "code"},
	),
	"etsy": (
		etsy,
		"www.etsy.com",
		"/oauth/connect",
		"client_id",
		" ",
		True,
		{"response_type": "code"},
	),
	"airtable": (
		airtable,
		"airtable.com",
		"/oauth2/v1/authorize",
		"client_id",
		" ",
		True,
		{"response_type": "code"},
	),
	"shopify": (
		shopify,
		"acme.myshopify.com",
		"/admin/oauth/authorize",
		"client_id",
		",",
		False,
		{},
	),
}

CONFIG = {
	"clientId": "the-client",
	"clientKey": "the-client",
	"apiKey": "the-client",
	"shop": "acme",
}


def credential_of(module: Any) -> tuple[Integration, OAuth2Credential]:
	spec = module.INTEGRATION
	return spec, oauth2_credential(spec, spec.id or "x")


@pytest.mark.parametrize("iid", sorted(DOCUMENTED))
def test_consent_url_has_the_documented_form(iid: str) -> None:
	"""Host, path, client id parameter, redirect, state, scope separator and PKCE as documented."""
	module, host, path, id_param, separator, pkce, extra = DOCUMENTED[iid]
	spec, credential = credential_of(module)
	scopes = requested_scopes(spec, credential, None)
	consent = consent_url(credential, CONFIG, REDIRECT, scopes)
	parts = urlsplit(consent.url)
	assert (parts.scheme, parts.netloc, parts.path) == ("https", host, path)
	pairs = parse_qsl(parts.query, keep_blank_values=True)
	names = [name for name, _ in pairs]
	assert len(names) == len(set(names)), f"a parameter is repeated: {names}"
	query = dict(pairs)
	assert query[id_param] == "the-client"
	assert query["redirect_uri"] == REDIRECT and query["state"] == consent.state
	assert len(consent.state) >= 32
	assert query["scope"] == separator.join(scopes)
	assert query["scope"].split(separator) == scopes
	for name, value in extra.items():
		assert query[name] == value, name
	if pkce:
		assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
		assert consent.verifier is not None
	else:
		assert "code_challenge" not in query and "code_challenge_method" not in query
		assert consent.verifier is None
	if id_param != "client_id":
		assert "client_id" not in query


@pytest.mark.parametrize("iid", ["x", "etsy"])
def test_pkce_required_services_are_marked(iid: str) -> None:
	"""X and Etsy refuse a request without PKCE: their credentials say so, and need no secret."""
	_, credential = credential_of(DOCUMENTED[iid][0])
	assert credential.pkce == "required" and not credential.client_secret_required


def test_gmail_asks_only_for_what_the_tool_scopes_need() -> None:
	"""An agent with Gmail's read scope asks for gmail.readonly only; send adds gmail.send."""
	spec, credential = credential_of(gmail)
	base = "https://www.googleapis.com/auth/"
	assert requested_scopes(spec, credential, ["read"]) == [f"{base}gmail.readonly"]
	assert requested_scopes(spec, credential, ["read", "send"]) == [
		f"{base}gmail.readonly",
		f"{base}gmail.send",
	]
	assert requested_scopes(spec, credential, ["delete"]) == [f"{base}gmail.modify"]


def test_slack_and_github_scopes_follow_the_tool_scopes() -> None:
	"""Slack's read scope asks for no write scope; GitHub's read asks for repo, write adds workflow."""
	spec, credential = credential_of(slack)
	read = requested_scopes(spec, credential, ["read"])
	assert "channels:history" in read and "chat:write" not in read and "files:write" not in read
	spec, credential = credential_of(github)
	assert requested_scopes(spec, credential, ["read"]) == ["repo"]
	assert requested_scopes(spec, credential, ["write"]) == ["repo", "workflow"]


def test_airtable_asks_only_for_the_scopes_the_agent_uses() -> None:
	"""Airtable's consent URL carries only the scopes the agent's tool scopes need.

	https://airtable.com/developers/web/api/oauth-reference: "All scopes must be valid, Airtable
	defined scopes that have been selected for your integration": asking for all six refused an
	integration registered with the record scopes only.
	"""
	spec, credential = credential_of(airtable)
	consent = consent_url(
		credential, CONFIG, REDIRECT, requested_scopes(spec, credential, ["read", "write"])
	)
	query = dict(parse_qsl(urlsplit(consent.url).query))
	assert query["scope"] == "data.records:read data.records:write"
	assert requested_scopes(spec, credential, ["read", "delete", "schemaRead"]) == [
		"data.records:read",
		"data.records:write",
		"schema.bases:read",
	]
	assert requested_scopes(spec, credential, ["commentsWrite"]) == ["data.recordComments:write"]
	assert set(requested_scopes(spec, credential, None)) == set(credential.scopes)


def test_every_mapped_scope_is_one_the_credential_lists() -> None:
	"""A scope map names only scopes of the credential (so the docs list every one)."""
	for module in (gmail, slack, github, airtable):
		_, credential = credential_of(module)
		mapped = {s for values in credential.scope_map.values() for s in values}
		assert mapped <= set(credential.scopes), module.__name__
		assert set(credential.scope_map) <= set(module.INTEGRATION.scopes), module.__name__


def test_slack_needs_an_https_redirect() -> None:
	"""Slack accepts only https redirects: the loopback listener is refused with the fix."""
	import anyio
	import httpx

	from openmolt_core.errors import ConfigurationError
	from openmolt_core.integrations.oauth import authorize

	async def go() -> None:
		async with httpx.AsyncClient() as client:
			await authorize(
				slack.INTEGRATION, "slack", CONFIG, client=client, show=lambda url: None
			)

	with pytest.raises(ConfigurationError, match="--no-browser --redirect-uri"):
		anyio.run(go)


def test_connect_needs_name_openmolt_auth_for_oauth2() -> None:
	"""`openmolt tools ID` and the docs pages say how to sign in with the command."""
	from openmolt_core.integrations.connect import credential_needs

	(oauth,) = [n for n in credential_needs(gmail.INTEGRATION, "gmail") if n.type == "oauth2"]
	assert any("`openmolt auth gmail`" in note for note in oauth.notes)
	(bearer, _) = credential_needs(github.INTEGRATION, "github")
	assert not any("openmolt auth" in note for note in bearer.notes)


def test_device_flow_urls_are_the_documented_ones() -> None:
	"""GitHub's and Microsoft's device authorization endpoints; none elsewhere."""
	from openmolt_core.integrations.credentials import render_value

	_, github_cred = credential_of(github)
	assert github_cred.device_url == "https://github.com/login/device/code"
	_, outlook_cred = credential_of(outlook)
	assert outlook_cred.device_url is not None
	assert render_value(outlook_cred.device_url, {}) == (
		"https://login.microsoftonline.com/common/oauth2/v2.0/devicecode"
	)
	assert render_value(outlook_cred.device_url, {"tenant": "contoso.com"}) == (
		"https://login.microsoftonline.com/contoso.com/oauth2/v2.0/devicecode"
	)
	for module in (gmail, slack, dropbox, x, tiktok, etsy, shopify):
		assert credential_of(module)[1].device_url is None, module.__name__
