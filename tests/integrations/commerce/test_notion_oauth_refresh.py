import base64
import json

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


async def test_notion_refreshes_with_a_json_body_and_basic_client_auth() -> None:
	"""Notion's token endpoint gets a JSON body and HTTP Basic client credentials, as documented."""
	seen: list[httpx.Request] = []

	def notion(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if request.url.path == "/v1/oauth/token":
			return httpx.Response(
				200, json={"access_token": "ntn_new_access_0001", "refresh_token": "nrt_next_0002"}
			)
		return httpx.Response(200, json={"object": "list", "results": []})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(notion)))
	config = {
		"clientId": "client-id-1",
		"clientSecret": "client-secret-1",
		"refreshToken": "nrt_old_0001",
	}
	model = ScriptedModel([call_tool("notion.listUsers"), finish(done=True)])
	agent = om.create_agent(
		name="N",
		model=model,
		integrations=[
			{"integration": "notion", "credential": {"type": "oauth2", "config": config}}
		],
	)
	await agent.run()
	token, call = seen
	assert token.headers["content-type"] == "application/json"
	assert json.loads(token.content) == {
		"grant_type": "refresh_token",
		"refresh_token": "nrt_old_0001",
	}
	assert (
		token.headers["authorization"]
		== "Basic " + base64.b64encode(b"client-id-1:client-secret-1").decode()
	)
	assert call.headers["authorization"] == "Bearer ntn_new_access_0001"
