"""A refusal next to text runs nothing, on OpenAI's two APIs, streamed or not.

A Responses message may hold an ``output_text`` part and a ``refusal`` part, and a Chat message
both ``content`` and ``refusal``: the model declined part of what it wrote. The refusal decides
(fail closed): finish reason ``refusal``, the text kept for the history, no command run, even
when the text is a valid command.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core._parse import parse_reply
from openmolt_core.prompt import dumps
from tests.providers._replies import CMD, generate, stream

pytestmark = pytest.mark.anyio

NO = "I can't help with that."


def _chat() -> dict[str, Any]:
	message = {"role": "assistant", "content": CMD, "refusal": NO}
	return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def _responses() -> dict[str, Any]:
	content = [
		{"type": "output_text", "text": CMD, "annotations": []},
		{"type": "refusal", "refusal": NO},
	]
	message = {"type": "message", "role": "assistant", "content": content}
	return {"status": "completed", "output": [message]}


CASES = [("chat", _chat()), ("openai", _responses())]


@pytest.mark.parametrize(("vendor", "reply"), CASES)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_refusal_beside_a_valid_command_runs_nothing(vendor, reply, streamed) -> None:
	"""Finish reason ``refusal``: the parser runs none of the text's commands."""
	response = await (stream(vendor, reply) if streamed else generate(vendor, reply))
	assert response.finish_reason == "refusal"
	assert response.text == CMD  # the history keeps what the model wrote
	parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
	assert parsed.commands == []
	assert any("refused" in e for e in parsed.errors)
	clean = parse_reply(response.text, dumps=dumps, finish_reason="stop")
	assert clean.commands  # the same text alone would have run


@pytest.mark.parametrize(
	"parts",
	[
		[{"type": "refusal", "refusal": NO}],
		[{"type": "text", "text": CMD}, {"type": "refusal", "refusal": NO}],
	],
	ids=["alone", "beside-text"],
)
async def test_a_refusal_part_of_chat_content_parts_is_a_refusal(parts) -> None:
	"""A server that sends content as parts (OpenAI's content part types): its refusal part
	decides too; it was dropped, and the reply read as empty or as a command that ran."""
	message = {"role": "assistant", "content": parts}
	reply = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
	response = await generate("chat", reply)
	assert response.finish_reason == "refusal"
	assert response.text == (CMD if len(parts) == 2 else NO)
