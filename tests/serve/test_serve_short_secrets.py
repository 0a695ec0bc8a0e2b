"""A secret a server checks requests with is long enough to be masked and to resist guessing."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio

SHORT = "abc1234"  # 7 characters: no log masks it


def _server(settings: dict[str, Any]) -> TriggerServer:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Triage", model=ScriptedModel([]))
	return TriggerServer([(agent, Triggers.model_validate(settings))], port=0)


CASES = {
	"webhook secret": {"webhook": {"scheme": "hmac", "secret": SHORT}},
	"webhook secret (variable)": {"webhook": {"scheme": "github", "secretEnv": "HOOK_SECRET"}},
	"previous webhook secret": {
		"webhook": {"scheme": "hmac", "secret": "s" * 20, "previousSecretEnv": "HOOK_SECRET"}
	},
	"webhook secret (default variable)": {"webhook": {"scheme": "stripe"}},
	"Telegram secret token": {
		"channels": [
			{
				"type": "telegram",
				"token": "123456:TEST-telegram-token",
				"mode": "webhook",
				"secretToken": SHORT,
				"allowEveryone": True,
			}
		]
	},
	"Slack signing secret": {
		"channels": [
			{
				"type": "slack",
				"botToken": "xoxb-test-slack-token",
				"signingSecretEnv": "HOOK_SECRET",
				"allowEveryone": True,
			}
		]
	},
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_short_webhook_or_channel_secret_is_refused_before_anything_listens(
	case: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""7 characters (given, or read from a variable): refused naming it, never showing it."""
	monkeypatch.setenv("HOOK_SECRET", SHORT)
	monkeypatch.setenv("OPENMOLT_TRIAGE_WEBHOOK_SECRET", SHORT)
	caplog.set_level(logging.DEBUG)
	with pytest.raises(ConfigurationError) as refused:
		server = _server(CASES[case])
		async with server:
			pass
	message = str(refused.value)
	assert "has 7 characters; give one of at least 8" in message
	assert SHORT not in message and SHORT not in caplog.text


def test_a_viewer_token_given_too_short_is_refused() -> None:
	"""Viewer(token=...) under 8 characters: refused (it would be shown and guessed); 8 are taken."""
	with pytest.raises(ConfigurationError, match=r"viewer's token.*has 7 characters") as refused:
		Viewer(token=SHORT)
	assert SHORT not in str(refused.value)
	assert Viewer(token=SHORT + "8").token == SHORT + "8"


def test_the_rule_lives_with_the_servers_settings_and_keeps_its_old_path() -> None:
	"""`strong_enough` is the triggers' rule; `openmolt_core.secrets` still gives the same one."""
	from openmolt_core import secrets, triggers

	assert secrets.strong_enough is triggers.strong_enough
	assert triggers.strong_enough("x" * secrets.MIN_KEY, what="the token") == "x" * secrets.MIN_KEY
	with pytest.raises(ConfigurationError, match="the token has 3 characters"):
		triggers.strong_enough(" abc ", what="the token")
