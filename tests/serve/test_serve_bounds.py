"""What a server keeps per caller is bounded: sessions in memory, chats, live replies."""

from __future__ import annotations

from typing import Any

import pytest
from _serve_fakes import FakeTelegram, eventually
from test_serve_telegram import bot

import openmolt_serve._launch as launch_module
import openmolt_serve.chats as chats_module
from openmolt_core.testing import ScriptedModel, finish
from openmolt_serve._launch import in_memory_sessions
from openmolt_serve._live import LiveReplies

pytestmark = pytest.mark.anyio


def test_in_memory_sessions_keep_the_most_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Past MAX_SESSIONS the least recently used session is forgotten; a used one is kept."""
	monkeypatch.setattr(launch_module, "MAX_SESSIONS", 2)
	get = in_memory_sessions()
	a, b = get("a"), get("b")
	assert get("a") is a  # used again: now the newest
	get("c")
	assert get("a") is a
	assert get("b") is not b  # the oldest went


async def test_chats_past_max_chats_forget_the_least_recent_idle_one(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A channel remembers at most MAX_CHATS chats; every message is still answered."""
	monkeypatch.setattr(chats_module, "MAX_CHATS", 2)
	fake = FakeTelegram()
	model = ScriptedModel([finish("ok", human_message=f"hi {n}") for n in range(4)])
	async for server in bot(model, fake, allowEveryone=True):
		for n in range(4):
			fake.message(f"hello {n}", user=100 + n, chat=100 + n)
			await eventually(lambda n=n: len(fake.sent) == n + 1)  # type: ignore[misc]
		conversations = server.telegram["Helper"].conversations
		assert len(conversations.chats) <= 2
	assert len(fake.sent) == 4


async def test_a_live_reply_whose_run_never_started_is_forgotten() -> None:
	"""`LiveReplies.forget` drops a watched run (one that could not start): nothing stays."""

	async def post(message: Any, text: str) -> str:
		return "1"

	async def edit(message: Any, sent: str, text: str) -> None:
		return None

	live = LiveReplies(post, edit, limit=100)
	live.watch("run-1", object())  # type: ignore[arg-type]
	live.forget("run-1")
	assert live._runs == {}


def test_one_bound_for_threads_chats_and_sessions() -> None:
	"""`recent`: the least recently used idle entry goes past the most; a busy one stays."""
	from collections import OrderedDict

	from openmolt_serve._recent import recent

	kept: OrderedDict[str, object] = OrderedDict()
	a = recent(kept, "a", object, most=2)
	recent(kept, "b", object, most=2)
	recent(kept, "c", object, most=2, busy=lambda e: e is a)
	assert list(kept) == ["a", "c"]  # "a" is busy: the next oldest, "b", went
	assert recent(kept, "a", object, most=2) is a  # kept, the same entry, now the newest
	recent(kept, "d", object, most=2)
	assert list(kept) == ["a", "d"]  # "c" was the least recently used
