"""A user whose stored account lacks what the credential signs with never signs with the operator's.

An integration bound per end user (``account: "user"``) signs each call with the user's record
over the operator's client config. The operator's values were dropped only when they looked
secret (`openmolt_core._support.masking.secret_values`): a short key (``abc12``), a key of digits
under a plain name (``pin``), or one under a public-looking name (``accountId``) stayed, and jack,
connected without one, signed his calls with the operator's.
"""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(
	"operator",
	[{"pin": "12345678"}, {"apiKey": "abc12"}, {"accountId": "acct-operator-77"}],
	ids=["digits", "short", "public-looking name"],
)
async def test_a_user_without_the_signing_key_never_signs_with_the_operators(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operator: dict[str, str]
) -> None:
	"""Jack connected with a region only: his call fails, unsent (it went out signed with the
	operator's value), while ivy's signs with her own, and the operator's region still fills
	the address of a user who has none."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	[(key, value)] = operator.items()
	store = EncryptedFileStore(tmp_path / "credentials.enc")
	store.save("crm", {"region": "eu"}, user="jack")
	store.save("crm", {key: "ivy-own-0000"}, user="ivy")
	sent: list[tuple[str, str]] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append((request.headers["host"], request.headers.get("x-sign", "")))
		return httpx.Response(200, json={"ok": True})

	crm = Integration(
		id="crm",
		name="CRM",
		api_setup=ApiSetup(base_url="https://{{ config.region }}.crm.example"),
		credential_setup=[BearerCredential(headers={"X-Sign": f"{{{{ config.{key} }}}}"})],
		tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
	)
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	config = {"crm": {**operator, "region": "us"}}
	async with OpenMolt(
		entry_points=False, http_client=client, credential_store=store, integrations=config
	) as om:
		om.register_integration("crm", crm)
		model = ScriptedModel(
			[call_tool("crm.me"), finish(result="a"), call_tool("crm.me"), finish(result="b")]
		)
		agent = om.create_agent(
			name="a", model=model, integrations=[{"integration": "crm", "account": "user"}]
		)
		assert (await agent.run("go", user="jack")).ok
		assert (await agent.run("go", user="ivy")).ok
	assert value not in str(sent), sent
	assert sent == [("us.crm.example", "ivy-own-0000")], sent
	jack = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert jack["ok"] is False and key in jack["error"], jack
