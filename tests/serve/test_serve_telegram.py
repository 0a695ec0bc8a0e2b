"""Telegram: messages start or continue runs, replies and questions go to the same chat (a fake Bot API)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

pytestmark = pytest.mark.anyio


def inputs(model: ScriptedModel) -> list[Any]:
	return [
		json.loads(r.messages[0].content)["input"] for r in model.requests if len(r.messages) == 1
	]


async def bot(
	model: ScriptedModel, fake: FakeTelegram, sessions: Any = None, **channel: Any
) -> AsyncIterator[TriggerServer]:
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=model, instructions="Help.")
		settings = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42],
			**channel,
		}
		triggers = Triggers.model_validate({"channels": [settings]})
		async with TriggerServer([(agent, triggers)], port=0, sessions=sessions) as server:
			yield server
		await om.aclose()


async def test_a_message_starts_a_run_and_its_human_message_is_the_reply() -> None:
	"""getUpdates brings the message; sendMessage answers in the same chat, replying to it."""
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok", human_message="Hello Ada!")])
	async for _ in bot(model, fake):
		update = fake.message("hi there")
		await eventually(lambda: len(fake.sent) == 1)
	[sent] = fake.sent
	assert sent["chat_id"] == "42" and sent["text"] == "Hello Ada!"
	assert sent["reply_parameters"]["message_id"] == update * 10
	assert inputs(model) == [{"message": "hi there", "from": "ada", "chat": "42"}]
	# Long polling: a timeout, message updates only, and the offset after the update taken.
	assert fake.polls[0] == {"timeout": 1, "allowed_updates": ["message"]}
	assert any(p.get("offset") == update + 1 for p in fake.polls[1:])
	assert all(p.startswith(f"/bot{TOKEN}/") for p in fake.paths)


async def test_a_question_is_asked_in_the_chat_and_the_next_message_answers_it() -> None:
	"""requestHumanInput goes to the chat; the next message resumes the same run with it as the answer."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[ask_human("Which invoice, INV-1 or INV-2?"), finish("paid", human_message="Paid INV-2.")]
	)
	async for server in bot(model, fake):
		fake.message("pay the invoice")
		await eventually(lambda: len(fake.sent) == 1)
		assert fake.sent[0]["text"] == "Which invoice, INV-1 or INV-2?"
		fake.message("INV-2")
		await eventually(lambda: len(fake.sent) == 2)
		assert fake.sent[1]["text"] == "Paid INV-2."
		assert server.launcher is not None and not server.launcher.running
	# One run: the answer arrived as the result of the question, not as a new run's input.
	assert inputs(model) == [{"message": "pay the invoice", "from": "ada", "chat": "42"}]
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert "INV-2" in json.dumps(results)


def earlier(model: ScriptedModel) -> list[Any]:
	return [
		json.loads(r.messages[0].content).get("earlier")
		for r in model.requests
		if len(r.messages) == 1
	]


async def test_the_next_message_continues_the_conversation() -> None:
	"""A new run of the chat continues its session: the earlier turns come before its input."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[finish("a", human_message="It is 12 °C."), finish("b", human_message="Yes, take one.")]
	)
	async for _ in bot(model, fake):
		fake.message("weather in Oslo?")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("umbrella?")
		await eventually(lambda: len(fake.sent) == 2)
	second = inputs(model)[1]
	assert second == {"message": "umbrella?", "from": "ada", "chat": "42"}
	assert earlier(model)[1] == [
		{"role": "user", "content": {"message": "weather in Oslo?", "from": "ada", "chat": "42"}},
		{"role": "agent", "content": "It is 12 °C."},
	]


async def test_a_restart_keeps_the_conversation(tmp_path: Any) -> None:
	"""A new server on the same session file goes on with the chat where the last one was."""
	from openmolt_core.sessions import SQLiteSession

	path = tmp_path / "sessions.db"
	fake = FakeTelegram()
	first = ScriptedModel([finish("a", human_message="Noted: order 42.")])
	async for _ in bot(first, fake, sessions=lambda sid: SQLiteSession(sid, path)):
		fake.message("my order is 42")
		await eventually(lambda: len(fake.sent) == 1)
	again = ScriptedModel([finish("b", human_message="Order 42 ships today.")])
	async for _ in bot(again, fake, sessions=lambda sid: SQLiteSession(sid, path)):
		fake.message("where is it?")
		await eventually(lambda: len(fake.sent) == 2)
	assert [e["content"] for e in earlier(again)[0]] == [
		{"message": "my order is 42", "from": "ada", "chat": "42"},
		"Noted: order 42.",
	]
	assert earlier(first) == [None]


async def test_history_0_runs_each_message_alone() -> None:
	fake = FakeTelegram()
	model = ScriptedModel([finish("a", human_message="one"), finish("b", human_message="two")])
	async for _ in bot(model, fake, history=0):
		fake.message("first")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("second")
		await eventually(lambda: len(fake.sent) == 2)
	assert earlier(model) == [None, None]


async def test_strangers_are_ignored_and_allowed_chats_let_anyone_in() -> None:
	"""A user not on allowedUsers gets no run and no answer; a message in an allowed chat runs."""
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok", human_message="hi group")])
	async for _ in bot(model, fake, allowedChats=[-100]):
		fake.message("let me in", user=7, chat=7, username="mallory")
		fake.message("hello", user=8, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 1)
		await eventually(
			lambda: all("offset" in p for p in fake.polls[-1:]) and len(fake.polls) > 2
		)
	assert fake.sent[0]["chat_id"] == "-100"
	assert inputs(model) == [{"message": "hello", "from": "bob", "chat": "-100"}]


async def test_webhook_mode_checks_telegrams_secret_token() -> None:
	"""POST /channels/telegram/<agent> needs X-Telegram-Bot-Api-Secret-Token; then the update runs."""
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok", human_message="via webhook")])
	async for server in bot(model, fake, mode="webhook", secretToken="tg-secret"):
		fake.message("hi")  # queued in the fake, but never polled: webhook mode
		update = fake.updates[0]
		async with httpx.AsyncClient(base_url=server.url) as client:
			refused = await client.post("/channels/telegram/Helper", json=update)
			assert refused.status_code == 401
			wrong = await client.post(
				"/channels/telegram/Helper",
				json=update,
				headers={"X-Telegram-Bot-Api-Secret-Token": "nope"},
			)
			assert wrong.status_code == 401
			ok = await client.post(
				"/channels/telegram/Helper",
				json=update,
				headers={"X-Telegram-Bot-Api-Secret-Token": "tg-secret"},
			)
			assert ok.status_code == 200
			# Telegram retries an update it got no answer for: the same update_id is ignored.
			await client.post(
				"/channels/telegram/Helper",
				json=update,
				headers={"X-Telegram-Bot-Api-Secret-Token": "tg-secret"},
			)
		await eventually(lambda: len(fake.sent) == 1)
		assert server.routes() == ["POST /channels/telegram/Helper"]
	assert fake.polls == [] and len(inputs(model)) == 1


async def test_a_wrong_token_stops_polling_with_a_clear_error() -> None:
	"""Telegram's 401 on getUpdates is a ConfigurationError naming the token's variable, without the token."""
	from openmolt import ConfigurationError

	fake = FakeTelegram()
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=ScriptedModel([]))
		triggers = Triggers.model_validate(
			{
				"channels": [
					{
						"type": "telegram",
						"token": "999:wrong",
						"baseUrl": base,
						"allowEveryone": True,
					}
				]
			}
		)
		server = TriggerServer([(agent, triggers)], port=0)
		with pytest.raises(ExceptionGroup) as group:
			async with server:
				await eventually(lambda: False, seconds=5)
		[error] = group.value.exceptions
		assert isinstance(error, ConfigurationError)
		assert "TELEGRAM_BOT_TOKEN" in str(error) and "999:wrong" not in str(error)
		await om.aclose()


def test_channels_need_an_allow_list() -> None:
	"""Without allowedUsers, allowedChats or allowEveryone, the settings are refused."""
	from pydantic import ValidationError

	with pytest.raises(ValidationError, match="name who may talk to the agent"):
		Triggers.model_validate({"channels": [{"type": "telegram"}]})


async def test_a_tool_call_waiting_for_approval_is_said_in_the_chat() -> None:
	"""A run parked on an approval tells the chat where to decide it (the viewer), not 'failed'."""
	from openmolt_core.testing import call_tool

	def refund(amount: int) -> str:
		"""Refund an amount."""
		return "refunded"

	fake = FakeTelegram()
	model = ScriptedModel([call_tool("local.refund", amount=5)])
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="Helper", model=model, tools=[refund], requires_approval=True)
		channel = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42],
		}
		async with TriggerServer(
			[(agent, Triggers.model_validate({"channels": [channel]}))], port=0
		):
			fake.message("refund me")
			await eventually(lambda: len(fake.sent) == 1)
		await om.aclose()
	assert "waits for an approval" in fake.sent[0]["text"]


async def test_a_restart_while_a_question_waits_keeps_the_question(tmp_path: Any) -> None:
	"""In process, a parked run is lost with the process; its question is in the session, so the
	answer after the restart starts a run that reads it."""
	from openmolt_core.sessions import SQLiteSession

	path = tmp_path / "sessions.db"
	fake = FakeTelegram()
	first = ScriptedModel([ask_human("Which invoice, INV-1 or INV-2?")])
	async for _ in bot(first, fake, sessions=lambda sid: SQLiteSession(sid, path)):
		fake.message("pay the invoice")
		await eventually(lambda: len(fake.sent) == 1)
	again = ScriptedModel([finish("paid", human_message="Paid INV-2.")])
	async for _ in bot(again, fake, sessions=lambda sid: SQLiteSession(sid, path)):
		fake.message("INV-2")
		await eventually(lambda: len(fake.sent) == 2)
	assert fake.sent[1]["text"] == "Paid INV-2."
	assert [e["content"] for e in earlier(again)[0]] == [
		{"message": "pay the invoice", "from": "ada", "chat": "42"},
		"Which invoice, INV-1 or INV-2?",
	]


async def test_a_long_reply_told_to_wait_waits_and_is_sent_whole() -> None:
	"""A reply over 4096 characters goes in pieces; a piece refused with 429 and retry_after is
	sent again after the wait, so no part of the answer is lost."""
	from openmolt_serve.telegram import MAX_TEXT

	fake = FakeTelegram(flood=[2])
	long = "".join(f"{n:07d} " for n in range(1_000))  # 8,000 characters: two messages
	model = ScriptedModel([finish("ok", human_message=long)])
	async for _ in bot(model, fake):
		fake.message("tell me everything")
		await eventually(lambda: len(fake.sent) == 2)
	assert all(len(s["text"]) <= MAX_TEXT for s in fake.sent)
	assert "".join(s["text"] for s in fake.sent) == long


async def test_each_forum_topic_is_a_conversation_answered_in_its_topic() -> None:
	"""A forum's topics (message_thread_id) keep their own sessions, and replies go to the topic."""
	fake = FakeTelegram()
	model = ScriptedModel([finish("a", human_message="one"), finish("b", human_message="two")])

	def in_topic(text: str, topic: int) -> None:
		fake.message(text, chat=-100)
		fake.updates[-1]["message"].update(message_thread_id=topic, is_topic_message=True)
		fake.updates[-1]["message"]["chat"].update(type="supergroup", is_forum=True)

	async for _ in bot(model, fake, allowedChats=[-100]):
		in_topic("billing question", 7)
		await eventually(lambda: len(fake.sent) == 1)
		in_topic("deploy question", 9)
		await eventually(lambda: len(fake.sent) == 2)
	assert [(s["text"], s["message_thread_id"]) for s in fake.sent] == [("one", 7), ("two", 9)]
	assert earlier(model) == [None, None]  # topic 9 does not read topic 7's turns
	assert inputs(model)[1]["thread"] == "9"


@pytest.mark.parametrize("question", ["", "  \n"])
async def test_an_empty_question_is_still_asked_so_the_next_message_is_an_answer(
	question: str,
) -> None:
	"""Telegram refuses an empty text: the chat gets a question of its own rather than nothing."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[ask_human(question), finish("ok", human_message=" "), finish("x", human_message="no")]
	)
	async for _ in bot(model, fake):
		fake.message("do the thing")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("the blue one")
		await eventually(lambda: len(fake.sent) == 2)
	assert fake.sent[0]["text"] == "I need your answer to go on: what should I do?"
	assert fake.sent[1]["text"] == "ok"  # a blank humanMessage gives way to the output


async def test_in_a_group_a_run_reads_what_the_chat_was_told_not_another_members_output() -> None:
	"""Alice's run's output (a dict, no humanMessage: the group got "Done.") never reaches Bob's run."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			finish({"inbox": ["overdraft mail from the bank"]}),
			finish("b", human_message="Hi Bob."),
			finish("c", human_message="Here it is."),
		]
	)
	async for _ in bot(model, fake, allowedUsers=[42, 43]):
		fake.message("check my inbox", chat=-100)
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("hello", user=43, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 2)
		fake.message("what did you find?", chat=-100)
		await eventually(lambda: len(fake.sent) == 3)
	assert [s["text"] for s in fake.sent] == ["Done.", "Hi Bob.", "Here it is."]
	bobs = earlier(model)[1]
	assert "overdraft" not in json.dumps(bobs)
	assert bobs == [
		{"role": "user", "content": {"message": "check my inbox", "from": "ada", "chat": "-100"}},
		{"role": "agent", "content": None},  # what the group was told: nothing of its own
	]
	# The output went to Alice's run only: her next run reads it, and what Bob was told.
	alices = earlier(model)[2]
	assert alices[1] == {"role": "agent", "content": {"inbox": ["overdraft mail from the bank"]}}
	assert alices[3] == {"role": "agent", "content": "Hi Bob."}


async def test_in_a_group_what_a_run_said_reaches_the_next_members_run() -> None:
	"""A posted humanMessage, or the posted text of an output's result, reaches Bob's run; the rest
	of that output does not."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			finish("hidden", human_message="Your balance is fine."),
			finish({"result": "Two new mails.", "subjects": ["overdraft notice"]}),
			finish("c", human_message="ok"),
		]
	)
	async for _ in bot(model, fake, allowedUsers=[42, 43]):
		fake.message("how is my account?", chat=-100)
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("any mail?", chat=-100)
		await eventually(lambda: len(fake.sent) == 2)
		fake.message("hello", user=43, chat=-100, username="bob")
		await eventually(lambda: len(fake.sent) == 3)
	assert [s["text"] for s in fake.sent] == ["Your balance is fine.", "Two new mails.", "ok"]
	bobs = earlier(model)[2]
	assert [e["content"] for e in bobs if e["role"] == "agent"] == [
		"Your balance is fine.",
		"Two new mails.",
	]
	assert "overdraft" not in json.dumps(bobs)


async def test_while_the_secret_token_is_replaced_both_are_taken(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""previousSecretTokenEnv: updates carrying the old token still come in; both are masked."""
	from openmolt_core.secrets import Redactor

	monkeypatch.setenv("TG_OLD_SECRET", "the-old-telegram-secret-token")
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok", human_message="one"), finish("ok", human_message="two")])
	channel = {"mode": "webhook", "secretToken": "tg-new-secret-token"}
	async for server in bot(model, fake, previousSecretTokenEnv="TG_OLD_SECRET", **channel):
		fake.message("new")
		fake.message("old")
		fake.message("third")
		new, old, third = fake.updates[:3]
		async with httpx.AsyncClient(base_url=server.url) as client:
			header = "X-Telegram-Bot-Api-Secret-Token"
			for update, token, status in (
				(new, "tg-new-secret-token", 200),
				(old, "the-old-telegram-secret-token", 200),
				(third, "a-third-token", 401),
				(third, "", 401),
			):
				answer = await client.post(
					"/channels/telegram/Helper", json=update, headers={header: token}
				)
				assert answer.status_code == status, (token, answer.text)
		await eventually(lambda: len(fake.sent) == 2)
		masked = Redactor(known=server.telegram["Helper"].agent.om.secrets)
		assert masked("the-old-telegram-secret-token tg-new-secret-token") == (
			"[redacted] [redacted]"
		)
	assert [i["message"] for i in inputs(model)] == ["new", "old"]
