"""An entry naming no credential type uses the integration's first, or the one other type ready.

X takes a user's OAuth 2.0 tokens (its first type) or an app's bearer token: with only
``OPENMOLT_X_BEARER_TOKEN`` set, an agent uses the bearer token without ``"credential":
{"type": "bearer"}`` (secrets from the environment alone). The first type stays when it has what
it needs, when none is ready, and when two others are.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core.integrations.preflight import check_credentials
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "no-store" / "keys.json"))
	monkeypatch.setenv("OPENMOLT_CREDENTIALS_FILE", str(tmp_path / "no-store" / "cred.enc"))


def _bound(om: OpenMolt, iid: str) -> Any:
	agent = om.create_agent(name="a", model=ScriptedModel([]), integrations=[iid])
	return agent, [t for t in agent._tools.values() if t.integration is not None]


async def test_a_bearer_token_alone_in_the_environment_is_used(monkeypatch) -> None:
	"""OPENMOLT_X_BEARER_TOKEN alone: the bearer type is used, and a call sends the token."""
	monkeypatch.setenv("OPENMOLT_X_BEARER_TOKEN", "app-token-123456")
	sent: list[httpx.Request] = []

	def answer(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={"data": {"id": "1", "text": "hi"}})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)))
	model = ScriptedModel([call_tool("x.getPost", id="1"), finish("ok")])
	agent = om.create_agent(name="a", model=model, integrations=["x"])
	result = await agent.run("read post 1")
	assert result.status == "success", result.error
	assert sent[0].headers["authorization"] == "Bearer app-token-123456"


def test_the_first_type_stays_when_it_has_what_it_needs(monkeypatch) -> None:
	"""A user's access token and a bearer token both set: the first type (OAuth 2.0) is used."""
	monkeypatch.setenv("OPENMOLT_X_ACCESS_TOKEN", "user-token-123456")
	monkeypatch.setenv("OPENMOLT_X_BEARER_TOKEN", "app-token-123456")
	_, tools = _bound(OpenMolt(), "x")
	assert tools[0].context.auth.credential.type == "oauth2"


def test_with_nothing_ready_the_first_type_stays_and_the_check_names_it() -> None:
	"""No variable: the first type stays, and the check before a run names what it lacks."""
	_, tools = _bound(OpenMolt(), "x")
	assert tools[0].context.auth.credential.type == "oauth2"
	with pytest.raises(ConfigurationError, match="OPENMOLT_X_ACCESS_TOKEN"):
		check_credentials(tools, agent="a")


TWO_READY = {
	"name": "Twice",
	"apiSetup": {"baseUrl": "https://api.twice.example"},
	"credentialSetup": [
		{"type": "basic", "username": "{{ config.user }}", "password": "{{ config.pass }}"},
		{"type": "bearer", "headers": {"Authorization": "Bearer {{ config.token }}"}},
		{"type": "custom", "headers": {"X-Api-Key": "{{ config.apiKey }}"}},
	],
	"labels": {"ping": []},
	"tools": [{"handle": "ping", "description": "Ping.", "method": "GET", "endpoint": "/ping"}],
}


def test_two_other_types_ready_leave_the_choice_to_the_entry(monkeypatch) -> None:
	"""Both other types ready: neither is guessed; the first stays and the check says which are
	ready instead, so the entry names one."""
	monkeypatch.setenv("OPENMOLT_TWICE_TOKEN", "tok-123456")
	monkeypatch.setenv("OPENMOLT_TWICE_API_KEY", "key-123456")
	om = OpenMolt(entry_points=False)
	om.register_integration("twice", TWO_READY)
	_, tools = _bound(om, "twice")
	assert tools[0].context.auth.credential.type == "basic"
	with pytest.raises(ConfigurationError):
		check_credentials(tools, agent="a")
	monkeypatch.delenv("OPENMOLT_TWICE_API_KEY")
	_, tools = _bound(om, "twice")
	assert tools[0].context.auth.credential.type == "bearer"
	check_credentials(tools, agent="a")
