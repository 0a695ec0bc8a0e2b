"""Replies that stopped before their end, on each API, streamed or not: none of them runs.

A reply whose text happens to parse is still refused when the provider says it did not end
normally (Gemini's ``RECITATION`` or ``OTHER``, an Anthropic stop reason added later, a
Responses API reply still ``in_progress``): the loop's parser reads the finish reason the provider maps them
to, and the model is told why. Each case is also streamed, in chunks of one byte and of many.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openmolt_core._parse import parse_reply
from openmolt_core.prompt import dumps
from tests.providers._replies import CMD, generate, stream

# Anthropic's ``pause_turn`` is not among them: the provider goes on with the paused turn
# (tests/providers/test_pause_turn.py).

pytestmark = pytest.mark.anyio


def _gemini(reason: str) -> dict[str, Any]:
	return {"candidates": [{"content": {"parts": [{"text": CMD}]}, "finishReason": reason}]}


def _anthropic(reason: str) -> dict[str, Any]:
	return {"type": "message", "stop_reason": reason, "content": [{"type": "text", "text": CMD}]}


def _chat(reason: str) -> dict[str, Any]:
	message = {"role": "assistant", "content": CMD}
	return {"choices": [{"index": 0, "message": message, "finish_reason": reason}]}


def _responses(status: str) -> dict[str, Any]:
	content = [{"type": "output_text", "text": CMD, "annotations": []}]
	return {"status": status, "output": [{"type": "message", "content": content}]}


CASES = [
	("google", _gemini("RECITATION"), "safety"),
	("google", _gemini("IMAGE_RECITATION"), "safety"),
	# google-genai 3.6: "blocked by Model Armor" (Vertex AI), "filtered by an escalation rule".
	("google", _gemini("MODEL_ARMOR"), "safety"),
	("google", _gemini("ESCALATION"), "safety"),
	("google", _gemini("OTHER"), "incomplete"),
	("google", _gemini("LANGUAGE"), "incomplete"),
	("google", _gemini("MALFORMED_RESPONSE"), "incomplete"),
	("google", _gemini("FINISH_REASON_UNSPECIFIED"), "incomplete"),
	# The account is limited under the Prohibited Use Policy: every later request stops so.
	("google", _gemini("PUP_LIMITED_DISABLED"), "blocked"),
	("anthropic", _anthropic("some_later_reason"), "incomplete"),
	("openai", _responses("in_progress"), "incomplete"),
	("openai", _responses("cancelled"), "incomplete"),
	# DeepSeek stops a reply it has no resources to end; Mistral, OpenRouter and vLLM name errors.
	("chat", _chat("insufficient_system_resource"), "incomplete"),
	("chat", _chat("error"), "incomplete"),
	("chat", _chat("abort"), "incomplete"),
	("chat", _chat("some_later_reason"), "incomplete"),
	("chat", _chat("content_filter"), "safety"),
]


@pytest.mark.parametrize(("vendor", "reply", "reason"), CASES)
async def test_a_reply_stopped_before_its_end_runs_nothing(vendor, reply, reason) -> None:
	"""The provider names the reason; the parser runs nothing and says why."""
	response = await generate(vendor, reply)
	assert response.finish_reason == reason
	parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
	assert parsed.commands == []
	assert len(parsed.errors) == 1
	assert "nothing was run" in parsed.errors[0] or "none of it was run" in parsed.errors[0]


@pytest.mark.parametrize(("vendor", "reply", "reason"), [c for c in CASES if c[0] != "openai"])
@pytest.mark.parametrize("size", [1, 7, 4096])
async def test_streamed_the_same(vendor, reply, reason, size) -> None:
	"""Streamed, the final response has the same text and finish reason as without streaming."""
	whole = await generate(vendor, reply)
	streamed = await stream(vendor, reply, size)
	assert (
		(streamed.text, streamed.finish_reason)
		== (whole.text, whole.finish_reason)
		== (
			CMD,
			reason,
		)
	)


async def test_a_normal_stop_still_runs() -> None:
	"""``STOP``, ``end_turn`` and ``completed`` are complete replies: they run."""
	for vendor, reply in [
		("google", _gemini("STOP")),
		("anthropic", _anthropic("end_turn")),
		("anthropic", _anthropic("stop_sequence")),
		("openai", _responses("completed")),
		("chat", _chat("stop")),
		("chat", _chat("eos_token")),
		("chat", _chat("stop_sequence")),
		# Together AI's end of sequence (together SDK ``Choice.finish_reason``: stop, eos, length,
		# tool_calls, function_call): a complete reply, which ran nothing at any step.
		("chat", _chat("eos")),
	]:
		response = await generate(vendor, reply)
		parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
		assert [c.type for c in parsed.commands] == ["finish"], (vendor, reply)
		assert json.loads(parsed.cleaned) == json.loads(CMD)
