"""What the Telegram channel sends is Bot API as typed by @grammyjs/types (the reference the
Telegram integration's tests read; see tests/integrations/social/test_social_telegram_reference.py).

The channel's calls are recorded by the fake Bot API of the other tests; here each method and
each parameter they use (nested ones too) must exist in the reference, with the types it gives.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The Telegram reference test and the shared helpers it imports (_edit.py) live under
# tests/integrations, whose conftest is not loaded when this folder runs alone.
INTEGRATIONS = Path(__file__).resolve().parents[1] / "integrations"
for _folder in (INTEGRATIONS, INTEGRATIONS / "social"):
	if str(_folder) not in sys.path:
		sys.path.insert(0, str(_folder))

from test_social_telegram_reference import bot_api  # noqa: E402

from openmolt_serve.telegram import TelegramBot  # noqa: E402

pytestmark = pytest.mark.anyio

# What TelegramBot sends (the fakes of test_serve_telegram.py assert the same shapes at run time).
SENT = {
	"getUpdates": {"offset": 1001, "timeout": 30, "allowed_updates": ["message"]},
	"sendMessage": {
		"chat_id": "42",
		"text": "hi",
		"reply_parameters": {"message_id": 10010, "allow_sending_without_reply": True},
		"link_preview_options": {"is_disabled": True},
	},
}


def test_the_methods_and_parameters_the_channel_sends_are_in_the_bot_api() -> None:
	"""getUpdates and sendMessage, and every parameter (and reply_parameters' fields), are Bot API."""
	api = bot_api()
	for method, params in SENT.items():
		assert method in api.methods, method
		members = api.methods[method]
		for name, value in params.items():
			assert name in members, f"{method}.{name} is not a Bot API parameter"
			if isinstance(value, dict):
				fields = api.fields(members[name].type)
				assert set(value) <= set(fields), f"{method}.{name}: {set(value) - set(fields)}"
	required = {n for n, m in api.methods["sendMessage"].items() if not m.optional}
	assert required == {"chat_id", "text"}
	# allowed_updates names fields of Update (all but update_id): "message" is one.
	assert "message" in api.interfaces["Update"]


async def test_the_channel_sends_exactly_those_shapes() -> None:
	"""A TelegramBot's real calls (to a fake transport) match SENT, key for key."""
	import json

	import httpx

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import TelegramChannel
	from openmolt_serve.chats import Incoming

	calls: dict[str, dict[str, object]] = {}

	def api(request: httpx.Request) -> httpx.Response:
		method = request.url.path.rsplit("/", 1)[1]
		calls[method] = json.loads(request.content)
		return httpx.Response(200, json={"ok": True, "result": []})

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([]))
	settings = TelegramChannel.model_validate(
		{"type": "telegram", "token": "1:TEST-telegram-token", "allowEveryone": True}
	)
	from anyio import create_task_group

	from openmolt_serve._launch import Launcher

	async with httpx.AsyncClient(transport=httpx.MockTransport(api)) as http:
		async with create_task_group() as tg:
			bot = TelegramBot(agent, settings, Launcher(tg), http)
			bot.offset = 1001
			await bot.poll_once()
			await bot.reply(Incoming("telegram", "42", "1", "hi", "u1", reply_to="10010"), "hi")
	assert set(calls) == set(SENT)
	for method, params in SENT.items():
		assert calls[method].keys() == params.keys(), method
	assert calls["sendMessage"]["reply_parameters"] == SENT["sendMessage"]["reply_parameters"]
	assert calls["sendMessage"]["link_preview_options"] == {"is_disabled": True}
