"""Chat replies while the model writes them: one message, edited as it grows (stream: true)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _serve_fakes import FakeSlack, FakeTelegram, eventually
from test_serve_slack import app, callback, dm, send
from test_serve_telegram import bot

from openmolt_core.llm import ModelRequest
from openmolt_core.streaming import StreamChunk, TextDelta
from openmolt_core.testing import ScriptedModel, finish
from openmolt_serve._live import LiveReplies
from openmolt_serve.chats import Incoming

pytestmark = pytest.mark.anyio


class Typist(ScriptedModel):
	"""A scripted model that streams each reply two characters at a time."""

	async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
		response = await self.generate(request)
		for i in range(0, len(response.text), 2):
			yield TextDelta(response.text[i : i + 2])
		yield response


class Clock:
	def __init__(self) -> None:
		self.now = 0.0

	def __call__(self) -> float:
		return self.now


def delta(text: str, *, run: str = "r1", step: int = 1, model: str = "m", **extra: Any) -> Any:
	from openmolt_core.events import TextDeltaEvent

	event = TextDeltaEvent(
		agent="a", step=step, index=0, field="humanMessage", text=text, model=model, **extra
	)
	event.run_id = run
	return event


MESSAGE = Incoming(channel="telegram", id="1", chat="42", user="42", text="hi")


async def test_edits_are_rate_limited_and_the_end_replaces_the_text() -> None:
	"""The first text is sent; edits wait for the interval; the run's end is the last edit."""
	calls: list[tuple[str, str]] = []
	clock = Clock()

	async def post(message: Incoming, text: str) -> str:
		calls.append(("post", text))
		return "7"

	async def edit(message: Incoming, sent: str, text: str) -> None:
		assert sent == "7"
		calls.append(("edit", text))

	live = LiveReplies(post, edit, limit=10, interval=1.0, clock=clock)
	live.watch("r1", MESSAGE)
	await live.on_delta(delta("Hel"))
	await live.on_delta(delta("lo"))  # too soon: not shown yet
	clock.now = 1.5
	await live.on_delta(delta(" world, long"))
	await live.on_delta(delta("x", run="other"))  # not a watched run
	await live.on_delta(delta("y", parent_run_id="r0"))  # a sub-agent's text
	assert calls == [("post", "Hel"), ("edit", "Hello worl")]  # cut at the limit
	clock.now = 1.6
	await live.on_delta(delta("Retry", step=2))  # a new step starts the text over
	assert await live.finish("r1", "Final.") == ""  # all of it shown: nothing left to send
	assert calls[-1] == ("edit", "Final.")
	assert await live.finish("r1", "again") is None  # forgotten once finished


async def test_a_call_made_again_starts_the_live_text_over() -> None:
	"""The same step and model writing again (a retry: the next attempt) replaces the text."""
	calls: list[tuple[str, str]] = []

	async def post(message: Incoming, text: str) -> str:
		calls.append(("post", text))
		return "7"

	async def edit(message: Incoming, sent: str, text: str) -> None:
		calls.append(("edit", text))

	live = LiveReplies(post, edit, limit=100, interval=0.0, clock=Clock())
	live.watch("r1", MESSAGE)
	await live.on_delta(delta("Half a rep"))
	await live.on_delta(delta("Whole", attempt=2))
	await live.on_delta(delta(" reply.", attempt=2))
	assert calls == [("post", "Half a rep"), ("edit", "Whole"), ("edit", "Whole reply.")]


async def test_a_failed_edit_stops_the_live_text_and_the_end_replies_as_usual() -> None:
	"""When the service refuses an edit, the live text stops; the end is sent as a new message."""

	async def post(message: Incoming, text: str) -> str:
		return "7"

	async def edit(message: Incoming, sent: str, text: str) -> None:
		raise RuntimeError("429 Too Many Requests")

	clock = Clock()
	live = LiveReplies(post, edit, limit=100, interval=0.0, clock=clock)
	live.watch("r1", MESSAGE)
	await live.on_delta(delta("a"))
	await live.on_delta(delta("b"))
	assert await live.finish("r1", "ab!") is None


async def test_telegram_streams_one_message_and_edits_it() -> None:
	"""With stream: true the reply is sent at its first text and edited to its end."""
	fake = FakeTelegram()
	model = Typist([finish("ok", human_message="Hello Ada, the answer is long enough.")])
	async for _ in bot(model, fake, stream=True):
		fake.message("hi there")
		await eventually(lambda: bool(fake.edits))
	[sent] = fake.sent
	final = "Hello Ada, the answer is long enough."
	assert sent["chat_id"] == "42" and final.startswith(sent["text"]) and sent["text"] != final
	assert fake.edits[-1]["message_id"] == 1
	assert fake.edits[-1]["text"] == final


async def test_telegram_without_stream_sends_once() -> None:
	"""Without stream, a streaming model's reply is one sendMessage at the end, no edit."""
	fake = FakeTelegram()
	model = Typist([finish("ok", human_message="Hello Ada!")])
	async for _ in bot(model, fake):
		fake.message("hi there")
		await eventually(lambda: len(fake.sent) == 1)
	assert fake.sent[0]["text"] == "Hello Ada!" and fake.edits == []


async def test_slack_streams_one_message_and_updates_it() -> None:
	"""With stream: true Slack gets chat.postMessage then chat.update with the whole reply."""
	fake = FakeSlack()
	model = Typist([finish("ok", human_message="Here is the report you asked for.")])
	async for client in app(model, fake, stream=True):
		await send(client, callback(dm("report please")))
		await eventually(lambda: bool(fake.updated))
	[posted] = fake.posted
	assert posted["channel"] == "D1"
	assert fake.updated[-1]["ts"] == "170000001.0001"
	assert fake.updated[-1]["text"] == "Here is the report you asked for."
	assert "Here is the report you asked for.".startswith(posted["text"])


async def test_a_run_that_ends_without_a_result_leaves_no_live_reply(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A failure after the run (no result to finish the message with): the entry is dropped."""
	import openmolt_serve._launch as launch_module

	real = launch_module.run_trigger

	async def fails_after(*args: Any, **kwargs: Any) -> Any:
		await real(*args, **kwargs)
		raise RuntimeError("the store went away")

	monkeypatch.setattr(launch_module, "run_trigger", fails_after)
	fake = FakeTelegram()
	model = Typist([finish("ok", human_message="Hello Ada, the answer is long enough.")])
	async for server in bot(model, fake, stream=True):
		fake.message("hi there")
		await eventually(lambda: any("Sorry" in m.get("text", "") for m in fake.sent + fake.edits))
		live = server.telegram["Helper"].conversations.live
		assert live is not None and live._runs == {}


async def test_a_call_that_fails_midway_says_so_in_the_live_message_at_once() -> None:
	"""A cut delta (the call writing the text failed) marks the shown text cut off at once,
	whatever the interval; the next attempt's text then replaces it."""
	calls: list[tuple[str, str]] = []

	async def post(message: Incoming, text: str) -> str:
		calls.append(("post", text))
		return "7"

	async def edit(message: Incoming, sent: str, text: str) -> None:
		calls.append(("edit", text))

	clock = Clock()
	live = LiveReplies(post, edit, limit=100, interval=5.0, clock=clock)
	live.watch("r1", MESSAGE)
	await live.on_delta(delta("I sent the money to the "))
	await live.on_delta(delta("wrong"))  # too soon to be shown
	await live.on_delta(delta("", cut=True))
	await live.on_delta(delta("", cut=True, attempt=3))  # another attempt's: not this text
	assert calls == [
		("post", "I sent the money to the "),
		("edit", "I sent the money to the wrong [cut off]"),
	]
	clock.now = 10.0
	await live.on_delta(delta("Nothing was sent.", attempt=2))
	assert calls[-1] == ("edit", "Nothing was sent.")
