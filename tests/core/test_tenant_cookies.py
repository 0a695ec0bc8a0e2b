"""A client an application gives an instance keeps no cookie one user's call got for another's.

The client an instance makes stores no cookie (`openmolt_core.integrations._client`); one given
with ``OpenMolt(http_client=...)`` did: ivy's session cookie, set by the service her key signed
in to, rode along on jack's request to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.integrations import ApiSetup, BearerCredential, HttpTool, Integration
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


async def test_a_session_cookie_of_one_user_never_reaches_anothers_request(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Ivy's call gets a session cookie; jack's call to the same service carries none of it,
	while a cookie the application gave its client is still sent."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	store = EncryptedFileStore(tmp_path / "credentials.enc")
	store.save("crm", {"apiKey": "sk-ivy-1111111"}, user="ivy")
	store.save("crm", {"apiKey": "sk-jack-2222222"}, user="jack")
	seen: list[tuple[str | None, str | None]] = []

	def api(request: httpx.Request) -> httpx.Response:
		auth = request.headers.get("authorization", "")
		seen.append((auth, request.headers.get("cookie")))
		cookie = f"session=of-{auth[-7:]}; Path=/"
		return httpx.Response(200, json={"me": auth[-7:]}, headers={"set-cookie": cookie})

	crm = Integration(
		id="crm",
		name="CRM",
		api_setup=ApiSetup(base_url="https://api.crm.example"),
		credential_setup=[
			BearerCredential(headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	client.cookies.set("region", "eu", domain="api.crm.example")  # the application's own
	async with OpenMolt(entry_points=False, http_client=client, credential_store=store) as om:
		om.register_integration("crm", crm)
		model = ScriptedModel(
			[call_tool("crm.me"), finish(result="a"), call_tool("crm.me"), finish(result="b")]
		)
		agent = om.create_agent(
			name="a", model=model, integrations=[{"integration": "crm", "account": "user"}]
		)
		assert (await agent.run("go", user="ivy")).ok
		assert (await agent.run("go", user="jack")).ok
	assert [auth for auth, _ in seen] == ["Bearer sk-ivy-1111111", "Bearer sk-jack-2222222"]
	for _, cookie in seen:
		assert cookie == "region=eu", seen
