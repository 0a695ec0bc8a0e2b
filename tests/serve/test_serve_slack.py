"""Slack: Events API requests, signed, start or continue runs; replies go to the channel and thread (a fake Web API)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from _serve_fakes import SLACK_SECRET, SLACK_TOKEN, FakeSlack, eventually, local_server

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.signatures import sign

pytestmark = pytest.mark.anyio


def inputs(model: ScriptedModel) -> list[Any]:
	return [
		json.loads(r.messages[0].content)["input"] for r in model.requests if len(r.messages) == 1
	]


async def app(
	model: ScriptedModel, fake: FakeSlack, **channel: Any
) -> AsyncIterator[httpx.AsyncClient]:
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=model)
		settings = {
			"type": "slack",
			"botToken": SLACK_TOKEN,
			"signingSecret": SLACK_SECRET,
			"baseUrl": base,
			"allowedUsers": ["U42"],
			**channel,
		}
		triggers = Triggers.model_validate({"channels": [settings]})
		async with TriggerServer([(agent, triggers)], port=0) as server:
			async with httpx.AsyncClient(base_url=server.url) as client:
				yield client
		await om.aclose()


_n = 0


def callback(event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
	global _n
	_n += 1
	return {
		"type": "event_callback",
		"team_id": "T1",
		"event_id": event_id or f"Ev{_n}",
		"event_time": int(time.time()),
		"authorizations": [{"user_id": "UBOT", "is_bot": True}],
		"event": event,
	}


def dm(text: str, user: str = "U42") -> dict[str, Any]:
	return {
		"type": "message",
		"channel": "D1",
		"channel_type": "im",
		"user": user,
		"text": text,
		"ts": f"{time.time():.6f}",
	}


async def send(
	client: httpx.AsyncClient, data: dict[str, Any], *, secret: str = SLACK_SECRET
) -> httpx.Response:
	body = json.dumps(data).encode()
	headers = {**sign("slack", secret, body), "content-type": "application/json"}
	return await client.post("/channels/slack/Helper", content=body, headers=headers)


async def test_the_url_verification_handshake_is_answered_only_when_signed() -> None:
	"""Slack's challenge comes back; an unsigned or wrongly signed request is 401."""
	async for client in app(ScriptedModel([]), FakeSlack()):
		challenge = {"type": "url_verification", "challenge": "3eZbrw1aB"}
		assert (await send(client, challenge)).json() == {"challenge": "3eZbrw1aB"}
		assert (await client.post("/channels/slack/Helper", json=challenge)).status_code == 401
		assert (await send(client, challenge, secret="other")).status_code == 401


async def test_a_direct_message_starts_a_run_and_is_answered_in_the_channel() -> None:
	"""A DM's run replies with chat.postMessage (bot token, channel, text); a retried event is ignored."""
	fake = FakeSlack()
	model = ScriptedModel([finish("ok", human_message="Hi!")])
	async for client in app(model, fake):
		data = callback(dm("hello"), event_id="Ev-retried")
		assert (await send(client, data)).status_code == 200
		assert (await send(client, data)).status_code == 200  # Slack's retry: same event_id
		await eventually(lambda: len(fake.posted) == 1)
	assert fake.posted == [{"channel": "D1", "text": "Hi!"}]
	assert fake.auth == [f"Bearer {SLACK_TOKEN}"]
	assert inputs(model) == [{"message": "hello", "from": "U42", "chat": "D1"}]


async def test_a_mention_is_answered_in_its_thread_and_a_question_waits_for_the_next_message() -> (
	None
):
	"""app_mention: the mention is cut, the reply goes to a thread; a question there is answered by the next message in it."""
	fake = FakeSlack()
	model = ScriptedModel(
		[ask_human("Which region?"), finish("ok", human_message="Deployed to eu.")]
	)
	async for client in app(model, fake, allowedUsers=[], allowedChats=["C9"]):
		mention = {
			"type": "app_mention",
			"channel": "C9",
			"user": "U7",
			"text": "<@UBOT> deploy",
			"ts": "111.222",
		}
		await send(client, callback(mention))
		await eventually(lambda: len(fake.posted) == 1)
		assert fake.posted[0] == {"channel": "C9", "text": "Which region?", "thread_ts": "111.222"}
		reply = {
			"type": "app_mention",
			"channel": "C9",
			"user": "U7",
			"text": "<@UBOT> eu",
			"ts": "111.300",
			"thread_ts": "111.222",
		}
		await send(client, callback(reply))
		await eventually(lambda: len(fake.posted) == 2)
	assert fake.posted[1] == {"channel": "C9", "text": "Deployed to eu.", "thread_ts": "111.222"}
	assert inputs(model) == [{"message": "deploy", "from": "U7", "chat": "C9", "thread": "111.222"}]


async def test_bots_edits_channel_chatter_and_strangers_start_nothing() -> None:
	"""The app's own and other bots' messages, edits, plain channel messages and unlisted users are skipped."""
	fake = FakeSlack()
	model = ScriptedModel([finish("ok", human_message="only this")])
	async for client in app(model, fake):
		await send(client, callback({**dm("from a bot"), "bot_id": "B1"}))
		await send(client, callback({**dm("edited"), "subtype": "message_changed"}))
		await send(client, callback({**dm("me"), "user": "UBOT"}))
		await send(client, callback({**dm("chatter"), "channel_type": "channel", "channel": "C1"}))
		await send(client, callback(dm("let me in", user="U666")))
		await send(client, callback(dm("real one")))
		await eventually(lambda: len(fake.posted) == 1)
	assert inputs(model) == [{"message": "real one", "from": "U42", "chat": "D1"}]


async def test_a_failed_post_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
	"""Slack's ok:false (a wrong token) is logged without the token; the server keeps serving."""
	fake = FakeSlack()
	model = ScriptedModel([finish("ok", human_message="lost")])
	async for client in app(model, fake, botToken="xoxb-wrong"):
		await send(client, callback(dm("hello")))
		await eventually(lambda: len(fake.auth) == 1)
		await eventually(lambda: "invalid_auth" in caplog.text)
		assert (
			await send(client, {"type": "url_verification", "challenge": "c"})
		).status_code == 200
	assert "xoxb-wrong" not in caplog.text


def test_chat_post_message_parameters_are_the_web_apis() -> None:
	"""channel, text and thread_ts are parameters of chat.postMessage in Slack's own SDK."""
	import inspect

	from slack_sdk import WebClient

	params = inspect.signature(WebClient.chat_postMessage).parameters
	assert {"channel", "text", "thread_ts"} <= set(params)


async def test_a_mention_in_a_direct_message_is_answered_once() -> None:
	"""Slack sends a DM that mentions the app as a message event and an app_mention: one run."""
	fake = FakeSlack()
	model = ScriptedModel(
		[finish("ok", human_message="Hi!"), finish("again", human_message="twice")]
	)
	async for client in app(model, fake):
		message = dm("<@UBOT> hello")
		mention = {k: v for k, v in message.items() if k != "channel_type"}
		await send(client, callback(message))
		await send(client, callback({**mention, "type": "app_mention"}))
		await eventually(lambda: len(fake.posted) >= 1)
		await anyio.sleep(0.3)  # time for a second run's reply, were there one
	assert fake.posted == [{"channel": "D1", "text": "Hi!"}]
	assert len(inputs(model)) == 1


async def test_a_reply_longer_than_slack_takes_is_split_not_truncated() -> None:
	"""Slack truncates a text past 40,000 characters: the reply goes in pieces, all of it."""
	from openmolt_serve.slack import MAX_TEXT

	fake = FakeSlack()
	long = "".join(f"{n:07d} " for n in range(6_000))  # 48,000 characters
	model = ScriptedModel([finish("ok", human_message=long)])
	async for client in app(model, fake):
		await send(client, callback(dm("tell me everything")))
		await eventually(lambda: len(fake.posted) == 2)
	assert all(len(p["text"]) <= MAX_TEXT for p in fake.posted)
	assert "".join(p["text"] for p in fake.posted) == long


def test_a_mention_loses_the_apps_mention_only() -> None:
	"""The app's own mention is cut from the text; the people it names stay in it."""
	from openmolt_serve.slack import incoming

	event = {
		"type": "app_mention",
		"channel": "C9",
		"user": "U7",
		"text": "<@UBOT> ask <@U99> about <@U98|bob>'s order",
		"ts": "1.2",
	}
	message = incoming(event, "Ev1", "UBOT")
	assert message is not None and message.text == "ask <@U99> about <@U98|bob>'s order"
	unknown = incoming(event, "Ev2", None)  # the app's id unknown: the leading mention goes
	assert unknown is not None and unknown.text == message.text


async def test_slacks_retry_after_a_restart_starts_nothing(tmp_path: Any) -> None:
	"""A retry is signed anew (X-Slack-Retry-Num) but names the same event_id: with a run store,
	the app that restarted in between knows the event, and no second run starts."""
	fake = FakeSlack()
	data = callback(dm("hello"), event_id="Ev-across")
	model = ScriptedModel([finish("ok", human_message="Hi!"), finish("again", human_message="2")])
	for attempt in range(2):
		async with local_server(fake.app()) as base:
			om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
			agent = om.create_agent(name="Helper", model=model)
			settings = {
				"type": "slack",
				"botToken": SLACK_TOKEN,
				"signingSecret": SLACK_SECRET,
				"baseUrl": base,
				"allowedUsers": ["U42"],
			}
			triggers = Triggers.model_validate({"channels": [settings]})
			async with TriggerServer([(agent, triggers)], port=0) as server:
				async with httpx.AsyncClient(base_url=server.url) as client:
					body = json.dumps(data).encode()
					headers = {
						**sign("slack", SLACK_SECRET, body, timestamp=int(time.time()) + attempt),
						"content-type": "application/json",
						"x-slack-retry-num": str(attempt),
					}
					response = await client.post(
						"/channels/slack/Helper", content=body, headers=headers
					)
					assert response.status_code == 200
					if attempt == 0:
						await eventually(lambda: len(fake.posted) == 1)
					else:
						await anyio.sleep(0.3)  # time for a second run's reply, were there one
			await om.aclose()
	assert fake.posted == [{"channel": "D1", "text": "Hi!"}]
	assert len(inputs(model)) == 1


async def test_a_retried_event_to_a_second_server_on_one_run_store_runs_once(tmp_path: Any) -> None:
	"""Slack's retry (the same event_id, signed anew) reaching another server, or this one after a
	restart, starts nothing: one model call, one reply. Each server is an instance of its own on
	one run store, as two `openmolt serve` processes on one machine are."""
	fake = FakeSlack()
	store = tmp_path / "runs.sqlite"
	models = [ScriptedModel([finish("ok", human_message="Hi!")]) for _ in range(2)]
	async with local_server(fake.app()) as base:
		settings = {
			"type": "slack",
			"botToken": SLACK_TOKEN,
			"signingSecret": SLACK_SECRET,
			"baseUrl": base,
			"allowedUsers": ["U42"],
		}
		triggers = Triggers.model_validate({"channels": [settings]})
		data = callback(dm("hello"), event_id="Ev-to-two")
		body = json.dumps(data).encode()
		for n, model in enumerate(models):
			om = OpenMolt(entry_points=False, run_store=store)
			agent = om.create_agent(name="Helper", model=model)
			async with TriggerServer([(agent, triggers)], port=0) as server:
				async with httpx.AsyncClient(base_url=server.url) as client:
					# Slack's retry carries a new timestamp, so a new signature.
					headers = {
						**sign("slack", SLACK_SECRET, body, timestamp=int(time.time()) - 60 + n),
						"content-type": "application/json",
						"X-Slack-Retry-Num": str(n),
					}
					answer = await client.post(
						"/channels/slack/Helper", content=body, headers=headers
					)
					assert answer.status_code == 200
					if n == 0:
						await eventually(lambda: len(fake.posted) == 1)
					else:
						await anyio.sleep(0.5)  # time for a second run to start and reply
			await om.aclose()
	assert fake.posted == [{"channel": "D1", "text": "Hi!"}]
	assert [len(m.requests) for m in models] == [1, 0]


def test_a_slack_user_is_known_by_their_team_and_id() -> None:
	"""A user id is unique within its workspace only: the run's end user names the team (the
	sender's own for a Slack Connect user); a Telegram user, whose id is global, needs none."""
	from openmolt_serve.chats import Incoming, end_user
	from openmolt_serve.slack import incoming

	message = incoming(dm("hi"), "Ev1", "UBOT", team="T1")
	assert message is not None and message.team == "T1" and end_user(message) == "slack:T1:U42"
	outside = incoming({**dm("hi"), "user_team": "T2", "team": "T2"}, "Ev2", "UBOT", team="T1")
	assert outside is not None and end_user(outside) == "slack:T2:U42"
	telegram = Incoming(channel="telegram", chat="42", user="42", text="hi", id="1")
	assert end_user(telegram) == "telegram:42"


async def test_the_same_user_id_in_another_team_does_not_answer_a_question() -> None:
	"""U7 of team T1 is asked a question in a shared channel's thread; U7 of team T2 writes in
	that thread: a run of their own starts, and T1's U7 answers their question after."""
	fake = FakeSlack()
	model = ScriptedModel(
		[
			ask_human("Which region?"),
			finish("ok", human_message="Hello, other U7."),
			finish("ok", human_message="Deployed to eu."),
		]
	)

	def mention(text: str, team: str, ts: str) -> dict[str, Any]:
		event = {"type": "app_mention", "channel": "C9", "user": "U7", "text": f"<@UBOT> {text}"}
		return {**event, "team": team, "user_team": team, "ts": ts, "thread_ts": "111.222"}

	async for client in app(model, fake, allowedUsers=[], allowedChats=["C9"]):
		await send(client, callback(mention("deploy", "T1", "111.222")))
		await eventually(lambda: len(fake.posted) == 1)
		await send(client, callback(mention("hello", "T2", "111.250")))
		await eventually(lambda: len(fake.posted) == 2)
		await send(client, callback(mention("eu", "T1", "111.300")))
		await eventually(lambda: len(fake.posted) == 3)
	assert [p["text"] for p in fake.posted] == [
		"Which region?",
		"Hello, other U7.",
		"Deployed to eu.",
	]
	assert [i["message"] for i in inputs(model)] == ["deploy", "hello"]


async def test_while_the_signing_secret_is_regenerated_both_are_taken(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""previousSigningSecretEnv: events signed with the old secret still come in, both masked."""
	monkeypatch.setenv("SLACK_OLD_SIGNING_SECRET", "the-old-slack-signing-secret")
	fake = FakeSlack()
	model = ScriptedModel([finish("ok", human_message="one"), finish("ok", human_message="two")])
	async for client in app(model, fake, previousSigningSecretEnv="SLACK_OLD_SIGNING_SECRET"):
		assert (await send(client, callback(dm("new")))).status_code == 200
		old = await send(client, callback(dm("old")), secret="the-old-slack-signing-secret")
		assert old.status_code == 200
		assert (await send(client, callback(dm("x")), secret="a-third")).status_code == 401
		await eventually(lambda: len(fake.posted) == 2)
