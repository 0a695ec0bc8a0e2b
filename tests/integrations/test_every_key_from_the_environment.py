"""Every key every installed integration declares, from its variable alone: checked and sent.

The cases are built from the integrations' own declarations (`credential_needs`, one entry per
credential type and key), so a new integration, credential type or key is covered without
editing this file. For each key, only variables are set: the key's own, and the other keys its
credential cannot do without. The pre-run check must pass, the value must reach the tool's
config, and a key the credential signs with must reach the request it signs (the token request,
for the keys an OAuth2 refresh sends). The same again from a ``.env`` file through the command.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.cli._run import load
from openmolt_core.integrations.connect import CredentialNeeds, credential_needs, env_var
from openmolt_core.integrations.preflight import missing_credentials
from openmolt_core.testing import ScriptedModel, mock_http

pytestmark = pytest.mark.anyio

_OURS = ("openmolt-integrations", "openmolt-core")
_REF = re.compile(r"config\.([A-Za-z_$][\w$]*)")
_REFRESH_FIELDS = ("refresh_token", "client_id", "client_secret", "token_url")
_REFRESH_DEFAULTS = {
	"refresh_token": "refreshToken",
	"client_id": "clientId",
	"client_secret": "clientSecret",
	"token_url": "tokenUrl",
}


def _cases() -> list[Any]:
	om = OpenMolt()
	out = []
	for plugin in om.plugins.installed():
		if plugin.group != "integrations" or plugin.distribution not in _OURS:
			continue  # the test plugins of tests/plugins are not what a user installs
		spec = om.plugins.integration(plugin.name)
		iid = spec.id or plugin.name
		for index, need in enumerate(credential_needs(spec, iid)):
			for key in need.keys:
				if key.name == "expiryDate":
					continue  # a date, not a key: never sent
				out.append(pytest.param(iid, index, key.name, id=f"{iid}-{need.type}-{key.name}"))
	return out


def _refresh_keys(credential: Any) -> set[str]:
	"""The keys an OAuth2 refresh reads (its token request's fields)."""
	found: set[str] = set()
	for field in _REFRESH_FIELDS:
		template = getattr(credential, field, None)
		found |= set(_REF.findall(template)) if template else {_REFRESH_DEFAULTS[field]}
	return found


def _signed_keys(credential: Any) -> set[str]:
	"""The keys the credential itself puts in a request (not the authorization URL's)."""
	dump = credential.model_dump(mode="json", exclude={"auth_url", "scopes", "auth_params"})
	keys = set(_REF.findall(json.dumps(dump)))
	if credential.type == "basic":
		keys |= {"username", "password"} if credential.username is None else set()
	if credential.type == "oauth2":
		keys |= {"accessToken"}
	return keys


def _variables(iid: str, need: CredentialNeeds, credential: Any, key: str, value: str) -> dict:
	"""The variables of one case: the key's own, and what its credential cannot do without."""
	values = {k.name: f"fill-{k.name}-123456" for k in need.keys if k.required}
	for name in [k.name for k in need.keys if k.name == key or k.instead_of == key]:
		values.pop(name, None)  # its alternative would win over it (Twilio's, Slack's)
	for other in need.keys:
		if other.name == key and other.instead_of:
			values.pop(other.instead_of, None)  # this key stands in for that one
	if credential.type == "oauth2":
		refresh = _refresh_keys(credential)
		if key in refresh:  # sent by a refresh: no access token, so the refresh runs
			values.pop("accessToken", None)
			values.update({k: f"fill-{k}-123456" for k in refresh if k != key})
			values["tokenUrl"] = values.get("tokenUrl", "https://token.example.test/token")
		elif key != "accessToken":
			values["accessToken"] = "fill-access-123456"
	values[key] = value
	return {env_var(iid, k): v for k, v in values.items()}


def _value(key: str) -> str:
	lowered = key.lower()
	if "url" in lowered or lowered == "endpoint":
		return f"https://v{lowered}.example.test"
	if lowered == "forcepathstyle":
		return "true"
	return f"v{key}Q98765"


def _seen(requests: list[httpx.Request]) -> str:
	out = []
	for request in requests:
		out += [str(request.url), unquote(str(request.url)), request.content.decode("latin-1")]
		out.append(unquote(request.content.decode("latin-1")))
		for name, header in request.headers.items():
			out.append(f"{name}: {header}")
			if header.lower().startswith("basic "):
				out.append(base64.b64decode(header.split()[1]).decode("latin-1"))
	return "\n".join(out)


def _answer(request: httpx.Request) -> httpx.Response:
	if request.method == "POST":  # only a token refresh posts here
		return httpx.Response(200, json={"access_token": "new-access-123456", "expires_in": 3600})
	return httpx.Response(200, json={"ok": True})


@pytest.fixture(autouse=True)
def _only_these_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "no-store" / "keys.json"))
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "no-store" / "cred.enc"))
	monkeypatch.chdir(tmp_path)


async def _check_bound(agent: Any, iid: str, credential: Any, key: str, value: str) -> None:
	"""The check passes, the config holds the value, and a signed request carries it."""
	bound = [t for t in agent._tools.values() if t.integration is not None]
	assert missing_credentials(bound) == [], (iid, key)
	context = bound[0].context
	assert context.config.get(key) == value, (iid, key, sorted(context.config))
	if key not in _signed_keys(credential):
		return  # read by the base URL or by tools: the config is what they read
	sent: list[httpx.Request] = []

	def record(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return _answer(request)

	async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
		if callable(getattr(context.auth, "http", None)):
			context.auth.http = lambda: client  # an OAuth2 refresh: its token request too
		await client.get("https://api.example.test/probe", auth=context.auth)
	if credential.type == "aws_sigv4" and key in ("secretAccessKey", "sessionToken"):
		authorization = sent[-1].headers.get("Authorization", "")
		assert "Signature=" in authorization  # signs with it; the secret itself is never sent
		if key == "sessionToken":
			assert value in _seen(sent)
		return
	assert value.lower() in _seen(sent).lower(), (iid, key, [str(r.url) for r in sent])


@pytest.mark.parametrize(("iid", "index", "key"), _cases())
async def test_each_key_from_its_variable_alone(
	iid: str, index: int, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""OPENMOLT_<ID>_<KEY> in the environment passes the check and reaches the request, in Python."""
	spec = OpenMolt().plugins.integration(iid)
	need = credential_needs(spec, iid)[index]
	credential = spec.credential_setup[index]
	value = _value(key)
	for variable, given in _variables(iid, need, credential, key, value).items():
		monkeypatch.setenv(variable, given)
	om = OpenMolt(http_client=mock_http(_answer))
	entry = {"integration": iid, "credential": {"type": need.type}}
	agent = om.create_agent(name="a", model=ScriptedModel([]), integrations=[entry])
	await _check_bound(agent, iid, credential, key, value)


@pytest.mark.parametrize(("iid", "index", "key"), _cases())
async def test_each_key_from_a_dotenv_file_alone(
	iid: str, index: int, key: str, tmp_path: Path
) -> None:
	"""The same variables, only in ./.env, reach the agent the `openmolt` command builds."""
	spec = OpenMolt().plugins.integration(iid)
	need = credential_needs(spec, iid)[index]
	credential = spec.credential_setup[index]
	value = _value(key)
	variables = _variables(iid, need, credential, key, value)
	variables["OPENMOLT_OPENAI_API_KEY"] = "sk-dotenv-123456"
	(tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in variables.items()))
	entry = {"integration": iid, "credential": {"type": need.type}}
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "a",
				"model": "openai:gpt-5-mini",
				"instructions": "x",
				"integrations": [entry],
			}
		)
	)
	try:
		loaded = load(str(path), env_file=None, verbose=False)
	finally:
		for variable in variables:  # load applies .env to the environment
			os.environ.pop(variable, None)
	await _check_bound(loaded.agent, iid, credential, key, value)


def _required_cases() -> list[Any]:
	om = OpenMolt()
	out = []
	for case in _cases():
		iid, index, key = case.values
		need = credential_needs(om.plugins.integration(iid), iid)[index]
		if any(k.name == key and k.required for k in need.keys):
			out.append(case)
	return out


@pytest.mark.parametrize("blank", [None, ""])
@pytest.mark.parametrize(("iid", "index", "key"), _cases())
async def test_a_blank_value_in_code_does_not_hide_the_variable(
	iid: str, index: int, key: str, blank: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""``OpenMolt(integrations={id: {key: None}})`` still reads OPENMOLT_<ID>_<KEY>.

	The blank value was merged over the variable's: the check then asked for the variable that
	was set (``{"token": os.environ.get("SLACK")}`` in code, an empty field in a config file).
	"""
	spec = OpenMolt().plugins.integration(iid)
	need = credential_needs(spec, iid)[index]
	credential = spec.credential_setup[index]
	value = _value(key)
	for variable, given in _variables(iid, need, credential, key, value).items():
		monkeypatch.setenv(variable, given)
	om = OpenMolt(http_client=mock_http(_answer), integrations={iid: {key: blank}})
	entry = {"integration": iid, "credential": {"type": need.type}}
	agent = om.create_agent(name="a", model=ScriptedModel([]), integrations=[entry])
	await _check_bound(agent, iid, credential, key, value)


@pytest.mark.parametrize(("iid", "index", "key"), _required_cases())
def test_a_blank_variable_is_no_value_and_the_check_says_so(
	iid: str, index: int, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""OPENMOLT_<ID>_<KEY>="  " is missing, and the message says the variable is set but empty.

	Spaces passed the check, and the credential code (which strips) signed with nothing:
	Slack's ``Authorization: Bearer`` went out without a token.
	"""
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.integrations.preflight import check_credentials

	spec = OpenMolt().plugins.integration(iid)
	need = credential_needs(spec, iid)[index]
	credential = spec.credential_setup[index]
	for variable, given in _variables(iid, need, credential, key, "  ").items():
		monkeypatch.setenv(variable, given)
	entry = {"integration": iid, "credential": {"type": need.type}}
	agent = OpenMolt().create_agent(name="a", model=ScriptedModel([]), integrations=[entry])
	bound = [t for t in agent._tools.values() if t.integration is not None]
	(problem,) = missing_credentials(bound)
	assert key in problem.named
	with pytest.raises(ConfigurationError) as caught:
		check_credentials(bound, agent="a")
	assert f"{env_var(iid, key)} is set but empty" in str(caught.value)
