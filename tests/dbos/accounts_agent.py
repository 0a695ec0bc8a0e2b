"""The agent of the durable per-user test, and the process that resumes its parked run.

    python accounts_agent.py STORE CREDENTIALS AUTH_SERVER STATE_FILE

The process builds the same instance (the durable store, the credential store, the accounts
key), resumes the state in ``STATE_FILE`` with ``agent.resume(state)``, and prints
``result <status> <user> <Authorization header the mail API saw>``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "integrations"))
from _fake_oauth import mail_integration  # the accounts tests' one integration

REDIRECT = "http://127.0.0.1:9/auth/callback"
AUTH_KEY = "durable-accounts-key-0123456789"


def build(
	store: str | dict[str, Any],
	credentials: str,
	auth_server: str,
	model: ScriptedModel,
	seen: list[str],
) -> tuple[OpenMolt, Any]:
	"""The durable instance and its agent, whose mail tools act for each run's user."""

	async def api(request: httpx.Request) -> httpx.Response:
		if request.url.host == "127.0.0.1":  # the token server, for real
			async with httpx.AsyncClient(trust_env=False) as real:
				answer = await real.send(request)
				return httpx.Response(answer.status_code, content=await answer.aread())
		seen.append(request.headers.get("authorization", ""))
		return httpx.Response(200, json={"me": "ok"})

	om = OpenMolt(
		durability=store,
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
		credential_store=credentials,
		integrations={"mail": {"clientId": "cid-123", "clientSecret": "csecret-abcdef"}},
		accounts={"redirect_uri": REDIRECT, "key": AUTH_KEY},
	)
	om.register_integration("mail", mail_integration(auth_server))
	agent = om.create_agent(
		name="Mailer", model=model, integrations=[{"integration": "mail", "account": "user"}]
	)
	return om, agent


async def main(store: str, credentials: str, auth_server: str, state: dict[str, Any]) -> None:
	seen: list[str] = []
	om, agent = build(store, credentials, auth_server, ScriptedModel([finish(result="hi")]), seen)
	async with om:
		result = await agent.resume(state)
	print("result", result.status, result.state.user, seen[0] if seen else "-", flush=True)


if __name__ == "__main__":
	sys.modules["keyring"] = None  # type: ignore[assignment]  # the key comes from the variable
	anyio.run(main, *sys.argv[1:4], json.loads(Path(sys.argv[4]).read_text()))
