"""What a chat or an A2A caller is told masks a URL's login and keeps its links working.

As AG-UI's text (`test_serve_agui_text_logins`): a chat's reply (whole, and live as the model
writes it: ``stream: true`` edits one message as it grows) and an A2A task's text showed the
password of a connection string the model read in a document, which no source knows. A live
message showed it as it grew too, before the URL had ended (``postgresql://app:Pw-7f``).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_serve._live import LiveReplies
from openmolt_serve.chats import Incoming

pytestmark = pytest.mark.anyio

PASSWORD = "Pw-7f3a9e21c4d8"
SIGNATURE = "5d1e0f7a9b2c4e6f8a0b"
LOGIN = f"postgresql://app:{PASSWORD}@db.example/runs"
LINK = f"https://b.s3.example/k.pdf?X-Amz-Expires=600&X-Amz-Signature={SIGNATURE}"
WORDS = f"Connect with {LOGIN} then download {LINK} today."
MESSAGE = Incoming(channel="telegram", id="1", chat="42", user="42", text="hi")


def _delta(text: str) -> Any:
	from openmolt_core.events import TextDeltaEvent

	event = TextDeltaEvent(agent="a", step=1, index=0, field="humanMessage", text=text, model="m")
	event.run_id = "r1"
	return event


def _shows(text: str) -> bool:
	"""Whether text shows the password, or a start of it (a live message as it grows)."""
	return any(PASSWORD[:n] in text for n in range(5, len(PASSWORD) + 1))


async def test_a_live_reply_never_shows_a_login_as_it_grows() -> None:
	shown: list[str] = []

	async def post(message: Incoming, text: str) -> str:
		shown.append(text)
		return "7"

	async def edit(message: Incoming, sent: str, text: str) -> None:
		shown.append(text)

	live = LiveReplies(post, edit, limit=1000, interval=0.0)
	live.watch("r1", MESSAGE)
	for at in range(0, len(WORDS), 3):
		await live.on_delta(_delta(WORDS[at : at + 3]))
	assert shown and not any(_shows(text) for text in shown), shown
	assert shown[0] == "Con"  # words without a URL are shown as they come


async def test_a_chat_reply_masks_the_login_and_keeps_the_link() -> None:
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel
	from openmolt_core.triggers import TelegramChannel
	from openmolt_serve.chats import Conversations

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	settings = TelegramChannel.model_validate({"type": "telegram", "allowEveryone": True})

	async def send(message: Incoming, text: str) -> None:
		return None

	talks = Conversations(agent, settings, send, launcher=None)  # type: ignore[arg-type]
	said = talks.redact(WORDS)
	assert not _shows(said) and LINK in said, said
	await om.aclose()


async def test_an_a2a_task_s_text_masks_the_login_and_keeps_the_link() -> None:
	from a2a.server.tasks import TaskUpdater
	from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

	from openmolt import OpenMolt
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.testing import ScriptedModel
	from openmolt_serve._launch import in_memory_sessions
	from openmolt_serve.a2a import OpenMoltExecutor, _Collected

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	executor = OpenMoltExecutor(agent, in_memory_sessions())
	queue = _Collected()
	result = RunResult(None, "success", WORDS, [], 1, Usage(), RunState(run_id="r"))  # type: ignore[arg-type]
	await executor._report(TaskUpdater(queue, "t", "c"), "t", result)
	told = str([MessageToDict(e) for e in queue.events])
	assert not _shows(told) and SIGNATURE in told, told
	await om.aclose()
