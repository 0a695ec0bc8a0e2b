"""Builds the ``*_stream.sse`` fixtures and their ``*_streamed.json`` twins (run from any directory).

Each stream follows its vendor's documented events (see tests/providers/test_provider_streams.py);
the reply text has escapes and multi-byte characters, cut into token-like pieces of uneven size.
"""

import json
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))
TEXT = json.dumps(
	{
		"commands": [
			{
				"type": "finish",
				"status": "success",
				"output": {"answer": "Oslo — «hovedstad»"},
				"humanMessage": 'Done: "Oslo" 😀\nÅ\\ok',
			}
		]
	},
	ensure_ascii=False,
)
# token-like pieces of uneven size, so that some end inside an escape
sizes = [1, 3, 7, 2, 5, 11, 4, 6, 9, 2]
pieces, i, k = [], 0, 0
while i < len(TEXT):
	n = sizes[k % len(sizes)]
	pieces.append(TEXT[i : i + n])
	i += n
	k += 1
assert "".join(pieces) == TEXT


def d(obj):
	return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# OpenAI Responses API (event names and shapes: platform.openai.com/docs/api-reference/responses-streaming)
resp = json.load(open("openai_text.json"))
resp["output"][1]["content"][0]["text"] = TEXT
created = {**resp, "status": "in_progress", "output": [], "usage": None}
ev = []
seq = 0


def add(name, data):
	global seq
	data = {"type": name, "sequence_number": seq, **data}
	seq += 1
	ev.append(f"event: {name}\ndata: {d(data)}\n\n")


add("response.created", {"response": created})
add("response.in_progress", {"response": created})
add(
	"response.output_item.added",
	{"output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}},
)
add(
	"response.output_item.done",
	{"output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}},
)
add(
	"response.output_item.added",
	{
		"output_index": 1,
		"item": {
			"id": "msg_1",
			"type": "message",
			"status": "in_progress",
			"role": "assistant",
			"content": [],
		},
	},
)
add(
	"response.content_part.added",
	{
		"item_id": "msg_1",
		"output_index": 1,
		"content_index": 0,
		"part": {"type": "output_text", "text": "", "annotations": []},
	},
)
for p in pieces:
	add(
		"response.output_text.delta",
		{"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": p, "logprobs": []},
	)
add(
	"response.output_text.done",
	{"item_id": "msg_1", "output_index": 1, "content_index": 0, "text": TEXT, "logprobs": []},
)
add(
	"response.content_part.done",
	{
		"item_id": "msg_1",
		"output_index": 1,
		"content_index": 0,
		"part": {"type": "output_text", "text": TEXT, "annotations": []},
	},
)
add("response.output_item.done", {"output_index": 1, "item": resp["output"][1]})
add("response.completed", {"response": resp})
open("openai_responses_stream.sse", "w").write("".join(ev))
json.dump(resp, open("openai_responses_streamed.json", "w"), ensure_ascii=False, indent=1)

# Chat Completions (platform.openai.com/docs/api-reference/chat-streaming), with include_usage
base = {
	"id": "chatcmpl-9x",
	"object": "chat.completion.chunk",
	"created": 1760000000,
	"model": "llama3.2",
	"system_fingerprint": "fp_ollama",
}
ev = [
	f"data: {d({**base, 'choices': [{'index': 0, 'delta': {'role': 'assistant', 'content': ''}, 'logprobs': None, 'finish_reason': None}]})}\n\n"
]
for p in pieces:
	ev.append(
		f"data: {d({**base, 'choices': [{'index': 0, 'delta': {'content': p}, 'logprobs': None, 'finish_reason': None}]})}\n\n"
	)
ev.append(
	f"data: {d({**base, 'choices': [{'index': 0, 'delta': {}, 'logprobs': None, 'finish_reason': 'stop'}]})}\n\n"
)
usage = {
	"prompt_tokens": 900,
	"completion_tokens": 40,
	"total_tokens": 940,
	"prompt_tokens_details": {"cached_tokens": 512},
}
ev.append(f"data: {d({**base, 'choices': [], 'usage': usage})}\n\n")
ev.append("data: [DONE]\n\n")
open("openai_chat_stream.sse", "w").write("".join(ev))
chat = {
	"id": "chatcmpl-9x",
	"object": "chat.completion",
	"created": 1760000000,
	"model": "llama3.2",
	"choices": [
		{"index": 0, "message": {"role": "assistant", "content": TEXT}, "finish_reason": "stop"}
	],
	"usage": usage,
}
json.dump(chat, open("openai_chat_streamed.json", "w"), ensure_ascii=False, indent=1)

# Anthropic Messages (shapes as in anthropic-sdk-python tests/lib/streaming/fixtures/basic_response.txt)
msg = json.load(open("anthropic_text.json"))
msg["content"][1]["text"] = TEXT
start = {k: v for k, v in msg.items() if k not in ("content", "stop_reason", "usage")}
start |= {
	"content": [],
	"stop_reason": None,
	"usage": {
		"input_tokens": 50,
		"cache_creation_input_tokens": 200,
		"cache_read_input_tokens": 1000,
		"output_tokens": 1,
		"service_tier": "standard",
	},
}
ev = []


def a(name, data):
	ev.append(f"event: {name}\ndata: {d({'type': name, **data})}\n\n")


a("message_start", {"message": start})
a(
	"content_block_start",
	{"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
)
a(
	"content_block_delta",
	{"index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}},
)
a(
	"content_block_delta",
	{"index": 0, "delta": {"type": "thinking_delta", "thinking": "the capital."}},
)
a(
	"content_block_delta",
	{"index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}},
)
a("content_block_stop", {"index": 0})
a("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}})
ev.append('event: ping\ndata: {"type": "ping"}\n\n')
for p in pieces:
	a("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": p}})
a("content_block_stop", {"index": 1})
a(
	"message_delta",
	{"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 120}},
)
a("message_stop", {})
open("anthropic_stream.sse", "w").write("".join(ev))
json.dump(msg, open("anthropic_streamed.json", "w"), ensure_ascii=False, indent=1)

# Gemini streamGenerateContent?alt=sse (each event a GenerateContentResponse; ai.google.dev/api/generate-content)
g = json.load(open("gemini_text.json"))
ev = []
meta = {
	"modelVersion": g.get("modelVersion", "gemini-2.5-flash"),
	"responseId": g.get("responseId", "r1"),
}
ev.append(
	f"data: {d({'candidates': [{'content': {'parts': [{'text': 'Looking up the capital.', 'thought': True}], 'role': 'model'}, 'index': 0}], 'usageMetadata': {'promptTokenCount': 1200, 'totalTokenCount': 1200}, **meta})}\r\n\r\n"
)
for p in pieces[:-1]:
	ev.append(
		f"data: {d({'candidates': [{'content': {'parts': [{'text': p}], 'role': 'model'}, 'index': 0}], 'usageMetadata': {'promptTokenCount': 1200, 'totalTokenCount': 1200}, **meta})}\r\n\r\n"
	)
final = {
	"candidates": [
		{
			"content": {"parts": [{"text": pieces[-1]}], "role": "model"},
			"finishReason": "STOP",
			"index": 0,
		}
	],
	"usageMetadata": g["usageMetadata"],
	**meta,
}
ev.append(f"data: {d(final)}\r\n\r\n")
open("gemini_stream.sse", "w").write("".join(ev))
whole = {
	"candidates": [
		{
			"content": {
				"parts": [{"text": "Looking up the capital.", "thought": True}, {"text": TEXT}],
				"role": "model",
			},
			"finishReason": "STOP",
			"index": 0,
		}
	],
	"usageMetadata": g["usageMetadata"],
	**meta,
}
json.dump(whole, open("gemini_streamed.json", "w"), ensure_ascii=False, indent=1)
