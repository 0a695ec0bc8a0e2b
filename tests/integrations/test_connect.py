"""How to connect each integration: the keys each credential reads, in the CLI and the docs."""

from __future__ import annotations

import io
from typing import Any

import pytest

from openmolt_core import OpenMolt
from openmolt_core.cli._info import list_tools
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.connect import credential_needs, env_var
from openmolt_core.integrations.preflight import _missing_for
from openmolt_integrations import notion, s3, shopify

from .test_integration_templates import ENTRIES, _registered


def _all() -> list[tuple[str, Any]]:
	return [(spec.id or entry.name, spec) for entry in ENTRIES for spec in _registered(entry)]


@pytest.mark.parametrize(("iid", "spec"), _all(), ids=[i for i, _ in _all()])
def test_the_needs_name_every_key_a_run_checks(iid: str, spec: Any) -> None:
	"""Whatever the pre-run check finds missing with an empty config is listed, per type."""
	needs = credential_needs(spec, iid)
	assert [n.type for n in needs] == [c.type for c in spec.credential_setup]
	for need, cred in zip(needs, spec.credential_setup, strict=True):
		names = {k.name for k in need.keys}
		missing = _missing_for(iid, cred, {})
		if missing is not None:
			assert set(missing.keys) <= names, (need.type, missing.keys, names)
		listed_required = {k.name for k in need.keys if k.required}
		# Setting every required key (and the OAuth token) satisfies the check.
		config = {name: "x" * 12 for name in listed_required | {"accessToken"}}
		assert _missing_for(iid, cred, config) is None, (need.type, listed_required)


@pytest.mark.parametrize(("iid", "spec"), _all(), ids=[i for i, _ in _all()])
def test_every_key_the_needs_call_required_is_checked_before_a_run(iid: str, spec: Any) -> None:
	"""Leaving out any one key `openmolt tools ID` calls required fails the pre-run check.

	A Shopify agent without its shop sent its token to ``https://.myshopify.com``, a Twilio one
	without its secret signed with an empty password, an Etsy one without its key was refused
	only at its first tool call: the check and the listing follow the same rules.
	"""
	for need, cred in zip(credential_needs(spec, iid), spec.credential_setup, strict=True):
		required = {k.name for k in need.keys if k.required}
		full = {name: "x" * 12 for name in required | {"accessToken"}}
		assert _missing_for(iid, cred, full, spec) is None, (need.type, required)
		for name in required - {"accessToken"}:
			config = {k: v for k, v in full.items() if k != name}
			missing = _missing_for(iid, cred, config, spec)
			assert missing is not None and name in missing.keys, (need.type, name)


def test_stripe_and_google_ads_headers_that_may_be_left_out_are_optional() -> None:
	"""Stripe's Connect account and Google Ads' manager id are optional; the developer token is not."""
	from openmolt_integrations import google_ads, stripe, twilio

	bearer = credential_needs(stripe.INTEGRATION, "stripe")[0]
	assert {k.name: k.required for k in bearer.keys} == {"apiKey": True, "accountId": False}
	(oauth,) = credential_needs(google_ads.INTEGRATION, "googleAds")
	flags = {k.name: k.required for k in oauth.keys}
	assert flags["developerToken"] is True and flags["loginCustomerId"] is False
	(basic,) = credential_needs(twilio.INTEGRATION, "twilio")
	flags = {k.name: k.required for k in basic.keys}
	assert flags == {
		"apiKeySid": True,
		"accountSid": False,
		"apiKeySecret": True,
		"authToken": False,
		"verifyServiceSid": False,  # read by the Verify tools' URLs, not the credential
	}
	config = {"accountSid": "AC" + "1" * 32, "authToken": "t" * 32}
	assert _missing_for("twilio", twilio.INTEGRATION.credential_setup[0], config) is None


def test_known_integrations_read_what_their_docs_say() -> None:
	"""Spot checks against the integrations' definitions."""
	(bearer, oauth) = credential_needs(notion.INTEGRATION, "notion")
	assert [(k.name, k.required, k.secret) for k in bearer.keys] == [("apiKey", True, True)]
	assert bearer.keys[0].env_var == env_var("notion") == "OPENMOLT_NOTION_API_KEY"
	assert oauth.oauth_scopes == tuple(notion.INTEGRATION.credential("oauth2").scopes)  # type: ignore[union-attr]
	(sigv4,) = credential_needs(s3.INTEGRATION, "s3")
	flags = {k.name: (k.required, k.secret) for k in sigv4.keys}
	assert flags["accessKeyId"] == (True, False)
	assert flags["secretAccessKey"] == (True, True)
	assert flags["sessionToken"] == (False, True)
	assert flags["endpoint"] == (False, False)  # only under {% if config.endpoint %}
	custom = credential_needs(shopify.INTEGRATION, "shopify")[0]
	assert {k.name: k.required for k in custom.keys} == {"accessToken": True, "shop": True}


def test_openmolt_tools_shows_the_credentials_and_where_they_come_from() -> None:
	"""`openmolt tools ID` lists each type's keys, the OAuth scopes and where values go."""
	om = OpenMolt()
	out = io.StringIO()
	list_tools(om, "notion", out, as_json=False)
	text = out.getvalue()
	assert "credentials (the first is the default" in text
	assert "bearer (default):" in text and "apiKey" in text and "required, secret" in text
	assert "OAuth scopes to request:" not in text or "oauth2:" in text
	assert '"integrations": [{"integration": "notion", "credential": {"config": {...}}}]' in text
	assert "`openmolt keys set notion`" in text
	assert "OPENMOLT_NOTION_API_KEY" in text
	out = io.StringIO()
	list_tools(om, "s3", out, as_json=True)
	import json

	data = json.loads(out.getvalue())
	(sigv4,) = data["credentials"]
	names = [k["name"] for k in sigv4["keys"]]
	assert names[:3] == ["accessKeyId", "secretAccessKey", "sessionToken"]
	# what reads each key, in words (not the auth's snake_case parameter)
	assert "aws_sigv4 auth: access key id" in out.getvalue()
	assert "agent file: integrations.s3.accessKeyId" in sigv4["keys"][0]["sources"]
	assert not any("OPENMOLT_S3_API_KEY" in s for k in sigv4["keys"] for s in k["sources"])
	# Each key's variable is a field of its own, for scripts.
	assert [k["envVar"] for k in sigv4["keys"][:2]] == [
		"OPENMOLT_S3_ACCESS_KEY_ID",
		"OPENMOLT_S3_SECRET_ACCESS_KEY",
	]


def test_openmolt_tools_is_a_compact_table_and_one_tool_is_shown_whole() -> None:
	"""A row per tool (handle, scopes, required inputs, one line); `tools ID TOOL` has the schema."""
	om = OpenMolt()
	out = io.StringIO()
	list_tools(om, "telegram", out, as_json=False)
	text = out.getvalue()
	rows = [line.split() for line in text.splitlines() if line.startswith("  telegram.")]
	assert len(rows) == len(om.plugins.integration("telegram").tools)
	send = next(r for r in rows if r[0] == "telegram.sendMessage")
	assert send[1:4] == ["send", "chat_id,", "text"]
	assert '"properties"' not in text  # no schema dumps in the table
	assert "\\u2026" not in text and "…" in text  # non-ASCII as it is
	assert "how to connect:" in text and "@BotFather" in text
	assert "Reference checks" not in text  # the maintainers' notes stay out
	assert "OPENMOLT_TELEGRAM_BOT_TOKEN" in text
	one = io.StringIO()
	list_tools(om, "telegram", one, as_json=False, handle="sendMessage")
	whole = one.getvalue()
	assert whole.startswith("telegram.sendMessage  [send]")
	assert '"maxLength": 4096' in whole
	with pytest.raises(ConfigurationError, match=r"did you mean 'telegram\.sendMessage'"):
		list_tools(om, "telegram", io.StringIO(), as_json=False, handle="sendMesage")
	data = io.StringIO()
	list_tools(om, "telegram", data, as_json=True)
	assert "…" in data.getvalue()  # JSON keeps non-ASCII readable too


@pytest.mark.parametrize("iid", ["slack", "telegram", "googleAds", "notion"])
def test_openmolt_tools_id_says_the_integration_s_description_whole(iid: str) -> None:
	"""11 of the 30 integrations had their description cut at 100 characters under the title
	('... manage channels and their members; users, rea…'): it is wrapped, not cut."""
	om = OpenMolt()
	out = io.StringIO()
	list_tools(om, iid, out, as_json=False)
	head = out.getvalue().split("\n\n")[0].splitlines()[1:]  # under the title, up to the keys
	description = " ".join(om.plugins.integration(iid).description.split("\n\n")[0].split())
	assert " ".join(head) == description
	assert all(len(line) <= 100 for line in head), head
