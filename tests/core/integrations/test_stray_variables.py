"""In Python as on the command line, a variable meant for an integration but misnamed is named."""

from __future__ import annotations

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


async def test_a_misnamed_variable_is_named_when_the_run_is_refused(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""OPENMOLT_SLACK_API_KEY is read by nothing: the refusal says so, beside the right name."""
	for name in ("OPENMOLT_SLACK_TOKEN", "OPENMOLT_SLACK_BOT_TOKEN"):
		monkeypatch.delenv(name, raising=False)
	monkeypatch.setenv("OPENMOLT_SLACK_API_KEY", "xoxb-misnamed-0123456789")
	om = OpenMolt()
	agent = om.create_agent(
		name="Poster", model=ScriptedModel([finish("x")]), integrations=["slack"]
	)
	with pytest.raises(ConfigurationError) as info:
		await agent.run("post")
	text = str(info.value)
	assert "OPENMOLT_SLACK_API_KEY is set, but slack reads no variable of that name" in text
	assert "OPENMOLT_SLACK_TOKEN" in text
	assert "xoxb-misnamed" not in text  # the value is never shown
	await om.aclose()


async def test_variables_the_integration_reads_are_not_called_typos(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A variable of another credential type of the same integration is no typo (X's bearer)."""
	for name in ("OPENMOLT_SLACK_API_KEY", "OPENMOLT_SLACK_TOKEN", "OPENMOLT_SLACK_BOT_TOKEN"):
		monkeypatch.delenv(name, raising=False)
	monkeypatch.setenv("OPENMOLT_SLACK_SIGNING_SECRET_X", "")  # empty: not counted
	om = OpenMolt()
	agent = om.create_agent(
		name="Poster", model=ScriptedModel([finish("x")]), integrations=["slack"]
	)
	with pytest.raises(ConfigurationError) as info:
		await agent.run("post")
	assert "reads no variable" not in str(info.value)
	await om.aclose()


async def test_another_integrations_variable_is_no_typo(monkeypatch: pytest.MonkeyPatch) -> None:
	"""OPENMOLT_SLACK_ADMIN_API_KEY is slackAdmin's, not a misspelling of slack's (the command
	line's rule: a variable of another provider or integration is not a typo)."""
	from openmolt_core.integrations import ApiSetup, BearerCredential, HttpTool, Integration

	for name in ("OPENMOLT_SLACK_API_KEY", "OPENMOLT_SLACK_TOKEN", "OPENMOLT_SLACK_BOT_TOKEN"):
		monkeypatch.delenv(name, raising=False)
	monkeypatch.setenv("OPENMOLT_SLACK_ADMIN_API_KEY", "xoxa-admin-0123456789")
	monkeypatch.setenv("OPENMOLT_SLACK_TOKNE", "xoxb-misspelt-0123456789")
	admin = Integration(
		name="Slack admin",
		api_setup=ApiSetup(base_url="https://admin.example.com"),
		credential_setup=[
			BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
		],
		tools=[HttpTool(handle="users", description="d", endpoint="/users")],
		labels={"users": []},
	)
	om = OpenMolt()
	om.register_integration("slackAdmin", admin)
	agent = om.create_agent(
		name="Poster", model=ScriptedModel([finish("x")]), integrations=["slack", "slackAdmin"]
	)
	with pytest.raises(ConfigurationError) as info:
		await agent.run("post")
	text = str(info.value)
	assert "OPENMOLT_SLACK_TOKNE is set, but slack reads no variable" in text  # still named
	assert "OPENMOLT_SLACK_ADMIN_API_KEY" not in text
	await om.aclose()
