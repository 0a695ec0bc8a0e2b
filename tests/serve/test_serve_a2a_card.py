"""The A2A agent card is public: nothing secret of the served agent is published in it."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import A2ATrigger, Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio

TOKEN = "CANARY-a2a-card-token-0123456789"
SECRET = "CANARY-instance-secret-9876543210"
CALLER = "CANARY-caller-bob-token-24680"


@pytest.mark.parametrize("callers", [False, True], ids=["token", "callers"])
async def test_the_cards_description_masks_every_secret_the_agent_knows(callers: bool) -> None:
	"""A description that names the instance's secret or a caller's own bearer token (an
	interpolated variable, a paste) is published masked: the card is served without a token."""
	om = OpenMolt(entry_points=False, secrets={"API_KEY": SECRET})
	agent = om.create_agent(name="Helper", model=ScriptedModel([]), instructions="Help.")
	access = {"callers": {"bob": {"token": CALLER}}} if callers else {"token": TOKEN}
	said = f"Weather. key {SECRET}, token {TOKEN}, bob {CALLER}"
	triggers = Triggers.model_validate({"a2a": {**access, "description": said}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		async with httpx.AsyncClient() as http:
			got = await http.get(f"{server.url}/a2a/Helper/.well-known/agent-card.json")
	await om.aclose()
	assert got.status_code == 200
	card = got.text
	assert "Weather." in card
	for secret in (SECRET, CALLER) if callers else (SECRET, TOKEN):
		assert secret not in card


@pytest.mark.parametrize(
	"url",
	[
		"https://bob:CANARY-url-password@agents.example/a2a/Helper",
		"https://CANARY-url-user@agents.example/a2a/Helper",
		"https://agents.example/a2a/Helper?key=CANARY-url-query",
		"https://agents.example/a2a/Helper#CANARY-url-fragment",
	],
)
def test_a_public_url_with_credentials_or_a_query_is_refused(url: str) -> None:
	"""The card publishes ``publicUrl``: a user, a password, a query or a fragment in it would
	be published too (and broken by the path appended to it), so the setting refuses them and
	says so, without repeating the address."""
	with pytest.raises(ValidationError) as caught:
		A2ATrigger(token=TOKEN, public_url=url)
	assert "publicUrl" in str(caught.value) or "public_url" in str(caught.value)
	assert "CANARY" not in str(caught.value)


def test_a_plain_public_url_is_taken() -> None:
	"""A scheme, a host, a port and a path: the address callers reach."""
	url = "https://agents.example:8443/a2a/Helper/"
	assert A2ATrigger(token=TOKEN, public_url=url).public_url == url
