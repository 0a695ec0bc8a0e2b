"""An empty reply, on each API and streamed or not, runs nothing and is named as empty.

Before, the model read "your answer was not valid JSON (Expecting value at line 1 column 1)",
which sends it looking for a syntax error in an answer it never gave.
"""

from __future__ import annotations

import pytest

from openmolt_core._parse import parse_reply
from openmolt_core.prompt import dumps
from tests.providers._replies import generate, stream

pytestmark = pytest.mark.anyio

CASES = [
	(
		"chat",
		{
			"choices": [
				{
					"index": 0,
					"message": {"role": "assistant", "content": None},
					"finish_reason": "stop",
				}
			]
		},
	),
	(
		"chat",
		{
			"choices": [
				{
					"index": 0,
					"message": {"role": "assistant", "content": " \n"},
					"finish_reason": "stop",
				}
			]
		},
	),
	("openai", {"status": "completed", "output": []}),
	("anthropic", {"type": "message", "stop_reason": "end_turn", "content": []}),
	(
		"google",
		{"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]},
	),
	(
		"google",
		{
			"candidates": [
				{"content": {"parts": [{"text": "hmm", "thought": True}]}, "finishReason": "STOP"}
			]
		},
	),
]


@pytest.mark.parametrize(("vendor", "reply"), CASES)
@pytest.mark.parametrize("streamed", [False, True])
async def test_an_empty_reply_is_named_empty(vendor, reply, streamed) -> None:
	"""Nothing runs; the one error says the answer was empty and what to send."""
	response = await (stream(vendor, reply, 3) if streamed else generate(vendor, reply))
	assert response.finish_reason == "stop"
	parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
	assert parsed.commands == []
	assert parsed.errors == [
		"your answer was empty, so nothing was run; answer with exactly one JSON object "
		'{"commands": [...]} and nothing else'
	]


def test_a_cut_empty_reply_says_why_it_was_cut() -> None:
	"""Cut at the output limit with no text: the cut is the reason given, not the emptiness."""
	parsed = parse_reply("", dumps=dumps, finish_reason="max_tokens")
	assert parsed.errors[0].startswith("your answer was cut off at the output token limit")
