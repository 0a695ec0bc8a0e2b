"""A basic-auth password shorter than six characters is a secret too (masked where it stands)."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations import ApiSetup, BasicCredential, HttpTool, Integration
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


async def test_a_short_basic_auth_password_never_reaches_the_model() -> None:
	def echo(request: httpx.Request) -> httpx.Response:
		user, _, password = base64.b64decode(request.headers["authorization"][6:]).partition(b":")
		return httpx.Response(200, json={"user": user.decode(), "pw": password.decode()})

	http = httpx.AsyncClient(transport=httpx.MockTransport(echo))
	om = OpenMolt(entry_points=False, http_client=http)
	spec = Integration(
		name="Echo",
		api_setup=ApiSetup(base_url="https://api.echo.example"),
		credential_setup=[
			BasicCredential(type="basic", username="{{ config.user }}", password="{{ config.pw }}")
		],
		tools=[HttpTool(handle="me", description="d", endpoint="/me")],
	)
	om.register_integration("echo", spec)
	model = ScriptedModel([call_tool("echo.me"), finish(done=True)])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{"integration": "echo", "credential": {"config": {"user": "ops", "pw": "pw12"}}}
		],
	)
	result = await agent.run("go")
	sent = model.requests[1].messages[-1].content
	assert '"user": "ops"' in sent.replace('":"', '": "') and "pw12" not in sent, sent
	assert "pw12" not in json.dumps(result.state.to_dict())
	await http.aclose()
