"""A reply that calls a tool natively (function calling) runs nothing, on each API, streamed or not.

The loop declares no native tools: its tools are called by ``callTool`` commands in the reply's
JSON. A model (or a server, or ``provider_options`` that add tools) may still answer with a native
call, alone or next to valid command text. Running the text would drop the call the model meant,
and dropping the reply silently would leave it believing its call ran: the provider reports finish
reason ``tool_calls``, nothing runs, and the model is told how to call tools here.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core._parse import parse_reply
from openmolt_core.prompt import dumps
from tests.providers._replies import CMD, generate, stream

pytestmark = pytest.mark.anyio

CALL = {"name": "local_add", "arguments": '{"a":1,"b":2}'}


def _chat(text: str | None, reason: str) -> dict[str, Any]:
	call = {"id": "call_1", "type": "function", "function": CALL}
	message = {"role": "assistant", "content": text, "tool_calls": [call]}
	return {"choices": [{"index": 0, "message": message, "finish_reason": reason}]}


def _responses(text: str) -> dict[str, Any]:
	output: list[dict[str, Any]] = []
	if text:
		content = [{"type": "output_text", "text": text, "annotations": []}]
		output.append({"type": "message", "role": "assistant", "content": content})
	output.append({"type": "function_call", "call_id": "call_1", **CALL})
	return {"status": "completed", "output": output}


def _anthropic(text: str, reason: str) -> dict[str, Any]:
	content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
	call = {"type": "tool_use", "id": "toolu_1", "name": "local_add", "input": {"a": 1}}
	return {"type": "message", "stop_reason": reason, "content": [*content, call]}


def _gemini(text: str, reason: str = "STOP") -> dict[str, Any]:
	parts: list[dict[str, Any]] = [{"text": text}] if text else []
	parts.append({"functionCall": {"name": "local_add", "args": {"a": 1}}})
	return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": reason}]}


def _caller_item(item: dict[str, Any]) -> dict[str, Any]:
	"""A Responses reply: command text beside an output item the caller must act on."""
	content = [{"type": "output_text", "text": CMD, "annotations": []}]
	message = {"type": "message", "role": "assistant", "content": content}
	return {"status": "completed", "output": [message, item]}


_SHELL = {"commands": ["ls"]}
CALLER_ITEMS = [
	{"type": "computer_call", "id": "cu_1", "call_id": "c1", "status": "completed"},
	{"type": "local_shell_call", "id": "ls_1", "call_id": "c2", "status": "completed"},
	{"type": "shell_call", "id": "sh_1", "call_id": "c3", "action": _SHELL, "status": "completed"},
	{"type": "apply_patch_call", "id": "ap_1", "call_id": "c4", "status": "completed"},
	{"type": "tool_search_call", "id": "ts_1", "call_id": "c5", "execution": "client"},
	{"type": "mcp_approval_request", "id": "mr_1", "name": "x", "server_label": "s"},
]
"""Responses output items of the caller's tools (computer use, a local shell, apply_patch, a
client tool search) and an MCP call waiting for the caller's approval (openai SDK 3.57's
``ResponseOutputItem``): each asks the caller to act, as a ``function_call`` does."""

CASES = [
	*[("openai", _caller_item(item)) for item in CALLER_ITEMS],
	("chat", _chat(CMD, "tool_calls")),
	("chat", _chat(None, "tool_calls")),
	("chat", _chat(CMD, "stop")),  # servers that say "stop" next to a call
	("openai", _responses(CMD)),
	("openai", _responses("")),
	("anthropic", _anthropic(CMD, "tool_use")),
	("anthropic", _anthropic("", "tool_use")),
	("anthropic", _anthropic(CMD, "end_turn")),
	("google", _gemini(CMD)),
	("google", _gemini("")),
	(
		"google",
		{"candidates": [{"content": {"parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}]},
	),
	(
		"google",
		{"candidates": [{"content": {"parts": []}, "finishReason": "UNEXPECTED_TOOL_CALL"}]},
	),
]


@pytest.mark.parametrize(("vendor", "reply"), CASES)
async def test_a_native_call_runs_nothing_and_says_how_to_call(vendor, reply) -> None:
	"""Finish reason ``tool_calls``; the parser runs nothing and names ``callTool``."""
	response = await generate(vendor, reply)
	assert response.finish_reason == "tool_calls"
	parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
	assert parsed.commands == []
	assert len(parsed.errors) == 1
	assert "natively" in parsed.errors[0]
	assert "callTool" in parsed.errors[0]


@pytest.mark.parametrize(("vendor", "reply"), CASES)
@pytest.mark.parametrize("size", [1, 4096])
async def test_streamed_the_same(vendor, reply, size) -> None:
	"""Streamed, the final response has the same text and finish reason."""
	whole = await generate(vendor, reply)
	streamed = await stream(vendor, reply, size)
	assert (streamed.text, streamed.finish_reason) == (whole.text, "tool_calls")


async def test_calls_the_api_runs_itself_are_no_native_calls() -> None:
	"""A web search the API ran (Responses, Anthropic), a shell call the API ran in its container
	(its output beside it), are no calls of ours: the reply runs."""
	content = [{"type": "output_text", "text": CMD, "annotations": []}]
	responses = {
		"status": "completed",
		"output": [
			{"type": "web_search_call", "id": "ws_1", "status": "completed"},
			{"type": "message", "role": "assistant", "content": content},
		],
	}
	anthropic = {
		"type": "message",
		"stop_reason": "end_turn",
		"content": [
			{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
			{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
			{"type": "text", "text": CMD},
		],
	}
	shell = {"type": "shell_call", "id": "sh_1", "call_id": "c3", "action": _SHELL}
	ran = {"type": "shell_call_output", "id": "sho_1", "call_id": "c3", "output": []}
	hosted = {**responses, "output": [shell, ran, *responses["output"]]}
	for vendor, reply in [("openai", responses), ("anthropic", anthropic), ("openai", hosted)]:
		response = await generate(vendor, reply)
		assert response.finish_reason == "stop"
		parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
		assert [c.type for c in parsed.commands] == ["finish"]


@pytest.mark.parametrize("commentary", ["Let me search for that first.", CMD])
@pytest.mark.parametrize("size", [0, 1, 4096])
async def test_a_responses_commentary_message_is_no_part_of_the_reply(commentary, size) -> None:
	"""A message of phase ``commentary`` (openai SDK 3.57: "intermediate commentary", beside the
	``final_answer``) is not the reply: its text was joined to the answer's, so prose or a
	second command object ran with it (or made the reply two objects, and none ran). Streamed,
	its deltas are not the reply's either."""

	def message(text: str, phase: str) -> dict[str, Any]:
		content = [{"type": "output_text", "text": text, "annotations": []}]
		return {"type": "message", "role": "assistant", "phase": phase, "content": content}

	reply = {
		"status": "completed",
		"output": [
			message(commentary, "commentary"),
			{"type": "web_search_call", "id": "ws_1", "status": "completed"},
			message(CMD, "final_answer"),
		],
	}
	response = await (generate("openai", reply) if not size else stream("openai", reply, size))
	assert (response.text, response.finish_reason) == (CMD, "stop")


CUT_CALLS = [
	# A call cut at the output limit (its arguments unfinished): the limit, not the call.
	("chat", _chat(None, "length"), "max_tokens"),
	("chat", _chat(CMD, "length"), "max_tokens"),
	("anthropic", _anthropic("", "max_tokens"), "max_tokens"),
	("google", _gemini("", "MAX_TOKENS"), "max_tokens"),
	(
		"openai",
		{
			**_responses(""),
			"status": "incomplete",
			"incomplete_details": {"reason": "max_output_tokens"},
		},
		"max_tokens",
	),
	# A content filter stopped the reply beside the call: the filter, not the call.
	("chat", _chat(CMD, "content_filter"), "safety"),
	("google", _gemini(CMD, "SAFETY"), "safety"),
	# A reply stopped for another reason beside a call: stopped, as without it.
	("chat", _chat(CMD, "insufficient_system_resource"), "incomplete"),
	("google", _gemini(CMD, "OTHER"), "incomplete"),
]
"""A native call beside a stop that is no clean end: the stop decides, as it does without the
call, on every API (a call counts only beside a complete reply: ``stop``, or no reason)."""


@pytest.mark.parametrize(("vendor", "reply", "reason"), CUT_CALLS)
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_call_beside_a_stop_that_is_no_clean_end_keeps_that_stop(
	vendor, reply, reason, streamed
) -> None:
	"""A call cut at the limit is told it was cut, not that it called natively."""
	response = await (stream(vendor, reply) if streamed else generate(vendor, reply))
	assert response.finish_reason == reason
	parsed = parse_reply(response.text, dumps=dumps, finish_reason=response.finish_reason)
	assert parsed.commands == []
	assert "natively" not in parsed.errors[0]
