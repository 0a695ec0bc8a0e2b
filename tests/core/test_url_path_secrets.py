"""A URL's secret may sit in its path: a Slack, Discord, Teams, Zapier, Make or Mattermost
webhook's token, a Telegram bot's token, a key after ``/key/``. `url_secrets` finds it wherever a
URL is configured, so it is masked in every sink like a password or an ``?api_key=``."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import (
	environment_secrets,
	secret_values,
	settings_secrets,
	shown_url,
	url_secrets,
)
from openmolt_core.testing import ScriptedModel
from tests.core._sinks import instance, sink_texts

pytestmark = pytest.mark.anyio

SLACK = "xS1ackT0kenCanary0000001"
DISCORD = "DiscordTokenCanary_0000-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
TELEGRAM = "123456789:AAHTelegramCanary_000000000000000001"
TEAMS_HASH = "0123456789abcdef0123456789abcdef"
TEAMS_ID = "aaaabbbb-cccc-dddd-eeee-ffff00001111"
ZAPIER = "zap9hook1"
MAKE = "makeCanary0000000000000000000001"
MATTERMOST = "mattermostcanary0000000001"
IFTTT = "IftttKeyCanary0000001"

URLS = {
	f"https://hooks.slack.com/services/T0001/B0002/{SLACK}": {SLACK},
	f"https://hooks.slack.com/workflows/T0001/A0002/123456/{SLACK}": {SLACK},
	f"https://discord.com/api/webhooks/112233445566778899/{DISCORD}": {DISCORD},
	f"https://discordapp.com/api/v10/webhooks/112233445566778899/{DISCORD}?wait=true": {DISCORD},
	f"https://api.telegram.org/bot{TELEGRAM}/sendMessage": {TELEGRAM},
	f"https://api.telegram.org/file/bot{TELEGRAM}/photos/file_1.jpg": {TELEGRAM},
	f"https://api.telegram.org/bot{TELEGRAM.replace(':', '%3A')}/getMe": {TELEGRAM},
	(
		"https://contoso.webhook.office.com/webhookb2/11111111-2222-3333-4444-555555555555@"
		f"66666666-7777-8888-9999-000000000000/IncomingWebhook/{TEAMS_HASH}/{TEAMS_ID}"
	): {TEAMS_HASH, TEAMS_ID},
	f"https://hooks.zapier.com/hooks/catch/123456/{ZAPIER}/": {ZAPIER},
	f"https://hooks.zapier.com/hooks/catch/123456/{ZAPIER}/silent/": {ZAPIER},
	f"https://hook.eu1.make.com/{MAKE}": {MAKE},
	f"https://chat.example.com/hooks/{MATTERMOST}": {MATTERMOST},
	f"https://maker.ifttt.com/trigger/door_open/with/key/{IFTTT}": {IFTTT},
}


@pytest.mark.parametrize("url", list(URLS))
def test_a_webhook_or_bot_url_gives_the_secret_in_its_path(url: str) -> None:
	assert URLS[url] <= url_secrets(url)
	shown = shown_url(url)
	assert "[redacted]" in shown and not any(s in shown for s in URLS[url]), shown


def test_the_public_parts_of_such_urls_and_ordinary_paths_stay_readable() -> None:
	"""Ids (a Slack team's, a Discord webhook's), plain words and ordinary API paths are no
	secret: they are shown in replies, and masking them would hide them everywhere."""
	found = url_secrets(f"https://hooks.slack.com/services/T0001ABCD/B0002EFGH/{SLACK}")
	assert found == {SLACK}
	assert url_secrets(f"https://discord.com/api/webhooks/112233445566778899/{DISCORD}") == {
		DISCORD
	}
	assert url_secrets(f"https://hooks.zapier.com/hooks/catch/123456/{ZAPIER}/silent/") == {ZAPIER}
	for public in (
		"https://api.openai.com/v1/chat/completions",
		"https://my-res.openai.azure.com/openai/deployments/gpt-4o-2024-08-06",
		"https://api.github.com/repos/octo/hello-world2024/hooks/12345678",
		"https://vault.example:8200/v1/secret/data/prod-db",
		"https://api.example/oauth/token/refresh",
		"sqlite:////srv/openmolt/sessions/team1.db",  # a store's file, named in its errors
		"postgresql://app@db.local/sessions/runs2024",
	):
		assert url_secrets(public) == set(), public


def test_power_automate_and_teams_workflow_urls_keep_their_sig_secret() -> None:
	sig = "Pa5igCanary0000000000000000000000000000001"
	url = (
		"https://prod-01.westus.logic.azure.com:443/workflows/0123abcd/triggers/manual/paths/"
		f"invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}"
	)
	assert sig in url_secrets(url)


def test_every_place_a_url_is_configured_reads_its_path_secret() -> None:
	slack = f"https://hooks.slack.com/services/T0001/B0002/{SLACK}"
	discord = f"https://discord.com/api/webhooks/112233445566778899/{DISCORD}"
	assert SLACK in environment_secrets({"NOTIFY_ENDPOINT": slack})
	assert SLACK in settings_secrets({"base_url": slack})
	assert SLACK in secret_values({"endpoint": slack})  # a public key: the URL's parts
	assert DISCORD in secret_values({"target": discord})  # any key: the whole, and its parts
	assert DISCORD in settings_secrets({"auth_url": discord})


def test_an_mcp_servers_url_and_an_integrations_base_url_read_it() -> None:
	pytest.importorskip("openmolt_mcp")
	from openmolt_core.integrations import ApiSetup, Integration
	from openmolt_core.integrations.binding import written_secrets
	from openmolt_mcp import MCP

	spec = Integration(
		name="Hook", api_setup=ApiSetup(base_url=f"https://hook.eu1.make.com/{MAKE}"), tools=[]
	)
	assert MAKE in written_secrets(spec)
	om = OpenMolt(entry_points=False)
	om.register_integration("hooked", MCP.http(f"https://chat.example.com/hooks/{MATTERMOST}"))
	om.create_agent(name="A", model=ScriptedModel([]), integrations=["hooked"])
	assert MATTERMOST in om.secrets.values()


async def test_a_configured_webhook_url_never_shows_in_any_sink(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""Slack's URL in the environment under a public name, Telegram's and Discord's in the
	integrations' configs: the tool calls them (httpx logs each), shows them and fails with them."""
	slack = f"https://hooks.slack.com/services/T0001/B0002/{SLACK}"
	telegram = f"https://api.telegram.org/bot{TELEGRAM}/sendMessage"
	discord = f"https://discord.com/api/webhooks/112233445566778899/{DISCORD}"
	monkeypatch.setenv("NOTIFY_ENDPOINT", slack)
	om = instance(
		tmp_path,
		integrations={"telegram": {"endpoint": telegram}, "discord": {"url": discord}},
	)
	texts = await sink_texts(om, slack, f"{telegram} and {discord}", caplog, tmp_path)
	leaked = [(s, t[:200]) for t in texts for s in (SLACK, TELEGRAM, DISCORD) if s in t]
	assert not leaked, leaked[:3]
