"""The viewer lists a run parked until an end user connects an account, with its consent URL."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from cryptography.fernet import Fernet

from openmolt import OpenMolt
from openmolt_core.credstore import KEY_VARIABLE, EncryptedFileStore
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential
from openmolt_core.testing import ScriptedModel, call_tool
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio


async def test_a_run_waiting_for_an_account_is_listed_with_its_link(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""The page shows who must connect what, and where; it offers no answer box."""
	monkeypatch.setenv(KEY_VARIABLE, Fernet.generate_key().decode())
	monkeypatch.setitem(sys.modules, "keyring", None)
	om = OpenMolt(
		entry_points=False,
		run_store=tmp_path / "r.db",
		credential_store=EncryptedFileStore(tmp_path / "c.enc"),
		integrations={"mail": {"clientId": "cid-1"}},
		accounts={"redirect_uri": "https://app.example/auth/callback", "key": "k" * 32},
	)
	om.register_integration(
		"mail",
		Integration(
			id="mail",
			name="Mail",
			api_setup=ApiSetup(base_url="https://api.mail.example"),
			credential_setup=[
				OAuth2Credential(
					type="oauth2",
					auth_url="https://auth.mail.example/authorize",
					token_url="https://auth.mail.example/token",
					client_id="{{ config.clientId }}",
				)
			],
			tools=[HttpTool(handle="me", description="who am I", endpoint="/me")],
		),
	)
	agent = om.create_agent(
		name="Mailer",
		model=ScriptedModel([call_tool("mail.me")]),
		integrations=[{"integration": "mail", "account": "user"}],
	)
	parked = await agent.run("who am I?", user="alice")
	assert parked.status == "authorization_required"
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		state: dict[str, Any] = {}
		with anyio.fail_after(15):
			while not state.get("questions"):
				state = (
					await http.get(
						f"http://127.0.0.1:{viewer.port}/api/state",
						headers={"x-openmolt-token": viewer.token},
					)
				).json()
				await anyio.sleep(0.05)
	(shown,) = state["questions"]
	assert shown["run_id"] == parked.state.run_id and shown["can_answer"] is False
	assert "alice to connect mail: https://auth.mail.example/authorize?" in shown["message"]
	(row,) = [r for r in state["runs"] if r["run_id"] == parked.state.run_id]
	assert row["status"] == "authorization_required"
	await om.aclose()
