"""A token endpoint that quotes the HTTP Basic client pair back: no bit of the secret is shown."""

import base64
import json
import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from openmolt_core._support.masking import MASK, mask
from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, OAuth2Credential
from openmolt_core.integrations.credentials import make_auth
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.tools import ToolContext

pytestmark = pytest.mark.anyio

TOOL = HttpTool(handle="get", description="d", endpoint="/me")
SECRETS = ("s3cr3tValue123", "s3cr3tValue1234", "s3cr3tValue12345")  # each length modulo 3
CLIENT_IDS = ("cid", "cid1", "cid12")  # the secret at each byte offset modulo 3


def echoes(header: str) -> dict[str, str]:
	"""The ways a token endpoint quotes the Authorization header back."""
	return {
		"clear": header,
		"url": quote(header, safe=""),
		"json": json.dumps({"authorization": header}),
		"json-twice": json.dumps(json.dumps({"authorization": header})),
	}


def only_the_id_shows(shown: str, client_id: str) -> None:
	"""Around the mask: ``client_id:`` in base64, then at most the character the secret shares.

	The character holding the colon's last bits and the secret's first is not masked (the
	neighbour decides it); the one holding the secret's last bits and the padding is.
	"""
	pair_start = base64.b64encode(f"{client_id}:".encode()).decode()
	whole = 8 * len(f"{client_id}:".encode()) // 6  # the characters of its bits only
	before, masked, after = shown.partition(MASK)
	assert masked, shown
	visible = re.search(r"(?:^|[\s\"']|%20)([A-Za-z0-9+/_-]*)$", before)[1]  # type: ignore[index]
	assert pair_start.startswith(visible[:whole]) and len(visible) <= whole + 1, shown
	assert not re.match(r"[A-Za-z0-9+/_=-]|%3[Dd]|%2[BbFf]", after), shown


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("client_id", CLIENT_IDS)
def test_a_basic_pair_is_masked_to_its_edges_in_every_spelling(client_id: str, secret: str) -> None:
	"""The character holding the secret's last bits and the padding is masked with the rest."""
	pair = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
	for spelt in (pair, pair.replace("+", "-").replace("/", "_")):
		for how, text in echoes(f"Basic {spelt}").items():
			shown = mask(text, frozenset({secret}))
			assert secret not in shown, how
			only_the_id_shows(shown, client_id)


async def refused(client_id: str, secret: str, echo: str) -> str:
	"""The error a refresh refused with the Authorization header quoted back (as ``echo``)."""

	def handler(request: httpx.Request) -> httpx.Response:
		said = echoes(request.headers["authorization"])[echo]
		return httpx.Response(400, json={"error": "invalid_client", "error_description": said})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	cred = OAuth2Credential(
		type="oauth2",
		token_url="https://auth.example.com/token",
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
		token_auth="basic",
		scopes=["read"],
	)
	integration = Integration(
		id="svc",
		name="Svc",
		api_setup=ApiSetup(base_url="https://api.example.com"),
		credential_setup=[cred],
		tools=[TOOL],
	)
	config: dict[str, Any] = {
		"clientId": client_id,
		"clientSecret": secret,
		"refreshToken": "rt-first-token-1",
	}
	auth = make_auth(integration, cred, config, on_token_refresh=print, http=lambda: client)
	context = ToolContext(
		agent="a", integration="svc", config=config, http=lambda: client, auth=auth
	)
	with pytest.raises(ToolError) as caught:
		await execute_http_tool(TOOL, integration, {}, context)
	return str(caught.value)


@pytest.mark.parametrize("echo", ["clear", "url", "json"])
@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("client_id", CLIENT_IDS)
async def test_a_refused_refresh_quoting_the_basic_pair_shows_no_bit_of_it(
	client_id: str, secret: str, echo: str
) -> None:
	"""The refresh error quotes the reason masked: the pair's base64 shows the client id only."""
	shown = await refused(client_id, secret, echo)
	assert "refresh was refused" in shown
	only_the_id_shows(shown, client_id)
