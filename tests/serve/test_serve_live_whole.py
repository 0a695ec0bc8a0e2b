"""A chat's live message ends as the reply's start: never another attempt's text, never twice.

The live message (``stream: true``, `openmolt_serve._live`) shows the model's text while it is
written. When the run ends, the reply replaces it; a reply too long for one message puts its
first part there and sends only the rest, so the chat reads the reply once, from its start, and
not the text of a call that failed midway or the same start twice.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _serve_fakes import FakeSlack, FakeTelegram, eventually
from test_serve_slack import app, callback, dm, send
from test_serve_telegram import bot

from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.streaming import TextDelta
from openmolt_core.testing import finish
from openmolt_serve.slack import MAX_TEXT as SLACK_MAX
from openmolt_serve.slack import shown_as_text
from openmolt_serve.telegram import MAX_TEXT as TELEGRAM_MAX

pytestmark = pytest.mark.anyio

WRONG = "I sent the money to the wrong account, sorry"


class Model:
	"""Streams a finish with ``said`` in pieces; ``breaks``: the stream fails after that text.

	Asked without streaming (nothing listens), it answers the whole reply.
	"""

	def __init__(self, name: str, said: str, breaks: str | None = None) -> None:
		self.name = self.model = name
		self.said = said
		self.breaks = breaks

	async def generate(self, request: Any) -> ModelResponse:
		text = json.dumps({"commands": [finish({"result": "ok"}, human_message=self.said)]})
		return ModelResponse(text=text, usage=Usage(5, 5))

	async def stream(self, request: Any) -> AsyncIterator[Any]:
		text = json.dumps({"commands": [finish({"result": "ok"}, human_message=self.said)]})
		end = len(text) if self.breaks is None else text.index(self.breaks)
		for i in range(0, end, 700):
			yield TextDelta(text[i : min(i + 700, end)])
		if self.breaks is not None:
			raise ProviderError(
				"the stream broke", provider=self.name, model=self.name, retryable=True
			)
		yield ModelResponse(text=text, usage=Usage(5, 5))


def _long(most: int) -> str:
	return " ".join(f"w<{i}>" for i in range(most // 3))  # longer than one message


@pytest.mark.parametrize("cut", [False, True])
async def test_telegram_long_reply_starts_in_the_live_message_and_is_sent_once(cut: bool) -> None:
	"""The live message becomes the reply's first part (not a failed call's text), the rest
	follows: the messages joined are the reply, once."""
	said = _long(TELEGRAM_MAX)
	model: Any = Model("m", said)
	if cut:
		model = [Model("first", WRONG, breaks="account"), model]
	fake = FakeTelegram()
	async for _ in bot(model, fake, stream=True):
		fake.message("hi there")
		await eventually(lambda: sum(len(m["text"]) for m in fake.sent[1:]) >= len(said) / 2)
	[first, *rest] = fake.sent
	shown = fake.edits[-1]["text"] if fake.edits else first["text"]
	assert shown + "".join(m["text"] for m in rest) == said
	assert len(shown) == TELEGRAM_MAX


@pytest.mark.parametrize("cut", [False, True])
async def test_slack_long_reply_starts_in_the_live_message_and_is_posted_once(cut: bool) -> None:
	"""So on Slack, where the escapes of ``<`` and ``>`` count towards a message's size."""
	said = _long(SLACK_MAX // 2)
	model: Any = Model("m", said)
	if cut:
		model = [Model("first", WRONG, breaks="account"), model]
	fake = FakeSlack()
	async for client in app(model, fake, stream=True):
		await send(client, callback(dm("report please")))
		await eventually(lambda: len(fake.posted) >= 2)
	[first, *rest] = fake.posted
	shown = fake.updated[-1]["text"] if fake.updated else first["text"]
	assert shown + "".join(m["text"] for m in rest) == shown_as_text(said)
	assert len(shown) <= SLACK_MAX


def _units(text: str) -> int:
	return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("stream", [False, True])
async def test_telegram_measures_a_message_in_utf16_units(stream: bool) -> None:
	"""A reply of emoji (two UTF-16 units each, as Telegram counts its 4096) is sent whole, in
	messages Telegram takes, streamed or not: none is refused as too long."""
	said = "\U0001f600" * 3000 + " end"
	fake = FakeTelegram()
	async for _ in bot(Model("m", said), fake, stream=stream):
		fake.message("hi there")
		await eventually(lambda: "".join(m["text"] for m in fake.sent[1:]).endswith(" end"))
	[first, *rest] = fake.sent
	shown = fake.edits[-1]["text"] if fake.edits else first["text"]
	assert shown + "".join(m["text"] for m in rest) == said
	assert all(_units(m["text"]) <= TELEGRAM_MAX for m in [*fake.sent, *fake.edits])
