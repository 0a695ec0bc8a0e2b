"""The secrets `openmolt serve` reads (webhook, Telegram, Slack) join the instance's secret set."""

from __future__ import annotations

import base64
import logging
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel
from openmolt_core.triggers import SlackChannel, TelegramChannel, WebhookTrigger
from openmolt_serve.slack import SlackApp
from openmolt_serve.telegram import TelegramBot
from openmolt_serve.webhooks import Webhook

pytestmark = pytest.mark.anyio

SECRETS = {
	"webhook": "whsec+CANARY/webhook=1",
	"bot": "123456:CANARY-telegram_token2",
	"bot secret": "CANARYtelegram-secret-3",
	"slack token": "xoxb-CANARY-slack-4",
	"slack signing": "CANARYslack+signing/5",
}


async def test_serve_secrets_are_masked_in_httpx_lines_and_runs(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""The bot token in a Bot API URL path, and every other serve secret, never show in a log."""
	caplog.set_level(logging.DEBUG)
	http = httpx.AsyncClient(
		transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": True}))
	)
	om = OpenMolt(entry_points=False, http_client=http)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	Webhook.create(agent, WebhookTrigger(scheme="hmac", secret=SECRETS["webhook"]))
	telegram: Any = TelegramChannel(
		type="telegram",
		token=SECRETS["bot"],
		mode="webhook",
		secret_token=SECRETS["bot secret"],
		allowed_users=[1],
	)
	bot = TelegramBot(agent, telegram, None, http)  # type: ignore[arg-type]
	slack: Any = SlackChannel(
		type="slack",
		bot_token=SECRETS["slack token"],
		signing_secret=SECRETS["slack signing"],
		allowed_users=["U1"],
	)
	SlackApp(agent, slack, None, http)  # type: ignore[arg-type]
	assert set(SECRETS.values()) <= om.secrets.values()
	await bot.call("getMe", {})
	for secret in SECRETS.values():
		await http.get("https://api.example/x", params={"q": secret})
		logging.getLogger("openmolt").info(
			"%s %s", quote(secret, safe=""), base64.b64encode(secret.encode()).decode()
		)
	await om.aclose()
	assert "HTTP Request: POST https://api.telegram.org/bot[redacted]/getMe" in caplog.text
	for secret in SECRETS.values():
		for spelling in (
			secret,
			quote(secret, safe=""),
			base64.b64encode(secret.encode()).decode(),
		):
			assert spelling not in caplog.text, spelling


def test_keys_given_in_code_are_secrets_however_the_object_was_made() -> None:
	"""A webhook or bearer guard made directly (not by ``create``), a remote agent's token and
	the viewer's token: registered where they are taken (`register_key`), known to every set."""
	import gc

	given = {
		"webhook": "whsec-CANARY-direct-6",
		"guard": "CANARY-bearer-direct-7",
		"remote": "CANARY-remote-token-8",
		"viewer": "CANARY-viewer-token-9",
	}
	owner = _owners(given)  # made in a frame of their own, which has ended: no local holds them
	left = set(given.values())
	for _ in range(5):  # an owner in a reference cycle may need more than one collection
		gc.collect()
		left &= OpenMolt(entry_points=False).secrets.values()
		if not left:
			break
	assert not left, _holders(owner())


def _owners(given: dict[str, str]) -> Any:
	"""Make the owners of the keys, check every instance knows the keys, and let them go.

	In a function of its own: a snapshot of a frame's locals (a tracer, a debugger, logging at
	DEBUG level under pytest) would keep them alive as long as the frame runs.
	"""
	import weakref

	from openmolt_serve._a2a_remote import remote_agent
	from openmolt_serve._token import TokenGuard
	from openmolt_ui.viewer import Viewer

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	Webhook(agent, WebhookTrigger(scheme="hmac"), given["webhook"])  # kept while the instance lives
	TokenGuard(agent, "a2a", given["guard"])
	held = [
		remote_agent("http://127.0.0.1:9/", handle="weather", token=given["remote"]),
		Viewer(om, token=given["viewer"]),
	]
	assert set(given.values()) <= OpenMolt(entry_points=False).secrets.values()
	assert held
	return weakref.ref(om)


def _holders(obj: object, depth: int = 4) -> str:
	"""What keeps ``obj`` alive: chains of referrers (for the failure message)."""
	import gc
	import types

	if obj is None:
		return "the owner died, its keys stayed"
	lines: list[str] = []
	frontier = [(obj, type(obj).__name__)]
	for _ in range(depth):
		nxt = []
		for target, path in frontier:
			for ref in gc.get_referrers(target):
				if isinstance(ref, types.FrameType) or ref is frontier:
					continue
				name = type(ref).__name__
				if isinstance(ref, dict):
					keys = [k for k, v in ref.items() if v is target][:3]
					name = f"dict{keys}"
				nxt.append((ref, f"{path} <- {name}"))
		lines += [p for _, p in nxt[:12]]
		frontier = nxt[:6]
	return "\n".join(lines)


def test_a_webhooks_public_url_gives_its_secrets() -> None:
	"""Twilio's scheme signs the webhook's public ``url``, which may carry a password or a path
	token (Twilio sends HTTP Basic credentials written in it): secrets like the signing one's."""
	from openmolt_core.secrets import url_secrets

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Caller", model=ScriptedModel([]))
	url = "https://twilio:CANARY-url-password-10@hooks.example/hooks/Caller"
	hook = Webhook(agent, WebhookTrigger(scheme="twilio", url=url), "CANARY-twilio-auth-11")
	assert {"CANARY-url-password-10", "CANARY-twilio-auth-11"} <= om.secrets.values()
	assert url_secrets(url) <= om.secrets.values()
	assert hook.config.url == url
