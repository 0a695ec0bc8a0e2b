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


# the instance's secret set and every spelling ----------------------------------------------

SPELLED = "k3y+/=\u00e9 ~!x:9"  # + / = non-ASCII, a space, and what quote keeps or not


def _all_spellings(secret: str) -> dict[str, str]:
	import base64
	import re
	from urllib.parse import quote, quote_plus

	out: dict[str, str] = {"raw": secret}
	for safe in ("", "/", ":", "!$&'()*+,;=:@/~"):
		for fn in (quote, quote_plus):
			encoded = fn(secret, safe=safe)
			out[f"{fn.__name__}[{safe}]"] = encoded
			out[f"{fn.__name__}[{safe}] lower"] = re.sub(
				r"%[0-9A-F]{2}", lambda m: m[0].lower(), encoded
			)
	data = secret.encode()
	for name, fn in (("std", base64.b64encode), ("url", base64.urlsafe_b64encode)):
		out[name] = fn(data).decode()
		out[f"{name} nopad"] = fn(data).decode().rstrip("=")
		for user in ("a", "ab", "abc", "someone"):
			out[f"{name} {user}:secret"] = fn(f"{user}:{secret}".encode()).decode()
	out["json"] = json.dumps(secret)[1:-1]
	out["json utf8"] = json.dumps(secret, ensure_ascii=False)[1:-1]
	out["json in json"] = json.dumps(json.dumps(secret))[1:-1]
	out["repr"] = repr(secret)[1:-1]
	out["bytes repr"] = repr(secret.encode())[2:-1]
	out["json escaped slash"] = json.dumps(secret)[1:-1].replace("/", "\\/")
	return out


@pytest.mark.parametrize("secret", [SPELLED, "sk-proj-AbC123_xyz", "p@ss w0rd/with%sign"])
def test_every_spelling_of_a_secret_is_masked(secret: str) -> None:
	"""Raw, percent-encoded (any safe set, both hex cases), base64 (+ user:secret), JSON, repr."""
	from openmolt_core.secrets import mask

	for name, spelling in _all_spellings(secret).items():
		text = f"before {spelling} after"
		masked = mask(text, frozenset({secret}))
		assert spelling not in masked and "[redacted]" in masked, (name, masked)
		assert masked.startswith("before ") and masked.endswith(" after"), (name, masked)


def test_a_percent_encoded_run_of_another_encoder_is_decoded_and_masked() -> None:
	"""An encoder that keeps other characters as they are still cannot spell the secret out."""
	from openmolt_core.secrets import mask

	odd = "k3y%2B/%3D%C3%A9%20~!x%3a9"  # '/' kept, ':' encoded in lower case, '+' encoded
	masked = mask(f"GET https://h.example/p?a=1&k={odd}&b=2", frozenset({SPELLED}))
	assert odd not in masked and "[redacted]" in masked and "a=1" in masked and "b=2" in masked


def test_short_values_and_ordinary_text_are_left_alone() -> None:
	"""Only the raw spelling of a very short secret is masked, where it stands alone (not inside a
	word: masking every ``es`` would make every log line noise); other text stays as it was."""
	from openmolt_core.secrets import mask

	assert mask("the abc of it", frozenset({"abc"})) == "the [redacted] of it"
	assert mask("YWJj and %61bc", frozenset({"abc"})) == "YWJj and %61bc"
	# Where it stands alone only: inside a word or a number it is ordinary text.
	both = frozenset({"es", "sk-proj-AbC123_xyz"})
	assert mask("tests pass; key=es&x=1", both) == "tests pass; key=[redacted]&x=1"
	assert mask("es", both) == "[redacted]" and mask("yes, es.", both) == "yes, [redacted]."
	assert mask("a sk-proj-AbC123_xyz and tests", both) == "a [redacted] and tests"
	assert mask("token 42 and 1042", frozenset({"42"})) == "token [redacted] and 1042"
	text = "lorem ipsum dolor sit amet " * 10
	assert mask(text, frozenset({"sk-proj-AbC123_xyz"})) == text


def test_the_instance_knows_provider_keys_from_settings_and_the_environment(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""llm_providers keys and headers, secret-named env vars and providers' keys are in om.secrets."""
	monkeypatch.setenv("OPENMOLT_ANTHROPIC_API_KEY", "sk-ant-from-env-0001")
	monkeypatch.setenv("SOME_SERVICE_TOKEN", "svc-token-value-0002")
	monkeypatch.setenv("SOME_SERVICE_URL", "https://not.a.secret.example")
	om = OpenMolt(
		{
			"openai": {"api_key": "sk-openai-set-0003", "headers": {"X-Org-Key": "org-key-0004"}},
			"local": {"provider": "openai", "base_url": "http://127.0.0.1:1/v1"},
		},
		{"notion": {"apiKey": "ntn-instance-key-0008", "region": "eu-west-1"}},
		entry_points=False,
	)
	known = om.secrets.values()
	assert {"sk-ant-from-env-0001", "svc-token-value-0002", "sk-openai-set-0003"} <= known
	assert "org-key-0004" in known and "ntn-instance-key-0008" in known  # no agent needed
	assert "https://not.a.secret.example" not in known and "http://127.0.0.1:1/v1" not in known
	assert "sk-openai" not in repr(om.secrets) and "sk-openai" not in repr(om)


def test_a_key_a_provider_reads_from_the_environment_later_is_known() -> None:
	"""A provider's secrets() source: a key set after the instance was made is masked too."""
	import os

	from openmolt_providers.openai import OpenAIProvider

	om = OpenMolt(entry_points=False)
	provider = OpenAIProvider({}, om.http)
	om._providers["openai"] = provider
	os.environ[provider.env_var] = "sk-late-from-env-0005"
	try:
		assert "sk-late-from-env-0005" in om.secrets.values()
	finally:
		del os.environ[provider.env_var]


async def test_the_provider_key_returned_by_a_tool_never_reaches_the_model_or_events() -> None:
	"""Every agent of the instance masks its provider key, whatever tool returns it."""
	key = "sk-live+Provider/Key=0006"

	async def leak(i: dict[str, Any], ctx: Any) -> Any:
		import base64
		from urllib.parse import quote

		return {"k": key, "q": quote(key, safe=""), "b": base64.b64encode(key.encode()).decode()}

	om = OpenMolt({"openai": {"api_key": key}}, entry_points=False)
	model = ScriptedModel([call_tool("local.leak"), finish(done=True)])
	tool = FunctionTool(handle="leak", description="Leak.", function=leak)
	agent = om.create_agent(name="A", model=model, tools=[tool])
	seen: list[Any] = []
	agent.on("tool:response", lambda e: seen.append(e.response))
	result = await agent.run()
	sent = "".join(m.content for r in model.requests for m in r.messages)
	assert sent.count("[redacted]") >= 3 and "sk-live" not in sent and "Provider" not in sent
	assert "sk-live" not in json.dumps(seen) + json.dumps(result.state.to_dict())


def test_a_secret_added_later_is_masked_by_existing_agents_and_broken_sources_are_skipped() -> None:
	"""om.secrets is read at every use: a bot token registered after create_agent is masked."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([]))
	redact = agent._redactor
	assert redact("123:bot-token-later") == "123:bot-token-later"
	om.secrets.add("123:bot-token-later", None, "")

	def broken() -> set[str]:
		raise RuntimeError("no")

	om.secrets.add_source(broken)
	assert redact("x 123:bot-token-later y") == "x [redacted] y"
	assert redact.deep({"123:bot-token-later": ["123:bot-token-later"]}) == {
		"[redacted]": ["[redacted]"]
	}


def test_records_of_a_logger_made_after_the_secrets_are_masked(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A module imported late (a logger below httpx or mcp made now) still has its records masked."""
	import logging

	om = OpenMolt(entry_points=False)
	om.secrets.add("late-logger-secret-0007")
	caplog.set_level(logging.DEBUG)
	for name in ("mcp.brand.new.module", "httpx._late_module", "httpcore.late"):
		logging.getLogger(name).debug("value %s and %r", "late-logger-secret-0007", ["x"])
	assert "late-logger-secret-0007" not in caplog.text
	assert caplog.text.count("[redacted]") == 3
	del om


def test_a_secret_source_that_logs_does_not_recurse(caplog: pytest.LogCaptureFixture) -> None:
	"""A source that logs while the filter reads it: no recursion, the record is still masked."""
	import logging

	om = OpenMolt(entry_points=False)

	def chatty() -> set[str]:
		logging.getLogger("httpx").warning("reading secrets")
		return {"chatty-source-secret-0009"}

	om.secrets.add_source(chatty)
	om.secrets.add("another-secret-0010")
	caplog.set_level(logging.DEBUG)
	logging.getLogger("httpx").info("value chatty-source-secret-0009")
	assert "chatty-source-secret-0009" not in caplog.text and "[redacted]" in caplog.text


def test_known_secrets_follow_the_environment_as_it_changes(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A key exported, changed or removed since the last read is what the next read says."""
	from openmolt_core.secrets import environment_secrets_now, known_secrets

	monkeypatch.delenv("ACME_LATER_TOKEN", raising=False)
	# The environment's part: the live part is process-wide (another test's instance collected
	# meanwhile takes its secrets out of it).
	before = environment_secrets_now()
	monkeypatch.setenv("ACME_LATER_TOKEN", "first-value-0a1b2c")
	assert "first-value-0a1b2c" in known_secrets()
	monkeypatch.setenv("ACME_LATER_TOKEN", "second-value-3d4e5f")
	now = known_secrets()
	assert "second-value-3d4e5f" in now and "first-value-0a1b2c" not in now
	monkeypatch.delenv("ACME_LATER_TOKEN")
	assert "second-value-3d4e5f" not in known_secrets()
	assert environment_secrets_now() == before


def test_the_sessions_variable_names_a_place_not_a_secret() -> None:
	"""OPENMOLT_SESSIONS ends like a secret's name but holds the sessions' file: its path stays
	readable (it was "[redacted]" in every error naming the file); a URL's password in it is
	still a secret."""
	from openmolt_core._support.masking import PUBLIC_ENV, environment_secrets
	from openmolt_core.sessions import ENV_VAR

	assert ENV_VAR in PUBLIC_ENV
	path = "/home/ada/.local/state/openmolt/sessions.db"
	assert environment_secrets({ENV_VAR: path}) == set()
	url = "postgresql://app:s3cret-pass-word@db.internal/sessions"
	assert environment_secrets({ENV_VAR: url}) == {"s3cret-pass-word"}
	assert environment_secrets({"SERVICE_SESSIONS": path}) == {path}  # not ours: a secret
