"""A fake model server for the benchmarks: four real wire formats, one scripted task.

Run it alone (``python benchmarks/fake_server.py --port 8765 --latency-ms 100``) or let
``benchmarks/run.py`` start it in its own process. It is a small HTTP/1.1 server on the asyncio
``Protocol`` API (keep-alive, ``Content-Length`` bodies), so that at hundreds of concurrent clients
the client, not the server, is what is measured.

The task: the agent has one tool, ``local.add``. The server counts the assistant turns already in
the request (``"role": "assistant"``, or ``"role": "model"`` for Gemini) and, while fewer than N,
replies with one ``callTool`` command; then it replies ``finish``. N is read from the model name
(``gpt-5-mini-steps20`` means N=20), else ``--steps``. Every reply is the OpenMolt commands envelope as the
model's text, inside the normal text-output shape of the API that was called:

- ``POST .../responses``: OpenAI Responses
- ``POST .../chat/completions``: OpenAI Chat Completions
- ``POST .../messages``: Anthropic Messages
- ``POST .../models/{model}:generateContent``: Gemini

A model name containing ``native`` (``gpt-5-mini-native-steps1``, used for the peers in the cold-start
figure) gets native Chat Completions tool calls instead: a ``tool_calls`` message calling the
function ``add`` while fewer than N assistant turns, then a plain text answer.

Control endpoints (JSON): ``GET /_stats`` (requests, request-body bytes, and
``first_request_at``: the ``time.monotonic()`` of the first model request since the last reset,
a clock every process of the machine shares), ``POST /_reset`` with
``{"latency_ms": float, "record": bool}`` (zero the counters, set latency and recording),
``GET /_bodies`` (the recorded request bodies, in arrival order, as text).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time

_ASSISTANT = re.compile(rb'"role":\s*"(?:assistant|model)"')
_MODEL_IN_BODY = re.compile(rb'"model":\s*"([^"]*)"')
_STEPS_IN_MODEL = re.compile(r"steps(\d+)")


class State:
	def __init__(self, latency_ms: float, steps: int) -> None:
		self.latency = latency_ms / 1000.0
		self.steps = steps
		self.requests = 0
		self.bytes = 0
		self.record = False
		self.bodies: list[bytes] = []
		self.first_at: float | None = None  # time.monotonic() of the first model request


def _steps(model: str, default: int) -> int:
	m = _STEPS_IN_MODEL.search(model)
	return int(m.group(1)) if m else default


def _command_text(turn: int, steps: int) -> str:
	if turn < steps:
		cmd = {"type": "callTool", "tool": "local.add", "input": {"a": turn, "b": 1}}
	else:
		cmd = {
			"type": "finish",
			"status": "success",
			"output": {"sum": steps},
			"humanMessage": "done",
		}
	return json.dumps({"commands": [cmd]}, separators=(",", ":"))


def reply_body(api: str, model: str, text: str, prompt_bytes: int) -> bytes:
	"""The JSON reply of one API carrying ``text`` as the model's output."""
	inp = prompt_bytes // 4
	out = len(text) // 4
	now = int(time.time())
	if api == "responses":
		data: dict[str, object] = {
			"id": "resp_bench",
			"object": "response",
			"created_at": now,
			"status": "completed",
			"model": model,
			"output": [
				{
					"type": "message",
					"id": "msg_bench",
					"status": "completed",
					"role": "assistant",
					"content": [{"type": "output_text", "text": text, "annotations": []}],
				}
			],
			"usage": {
				"input_tokens": inp,
				"input_tokens_details": {"cached_tokens": 0},
				"output_tokens": out,
				"output_tokens_details": {"reasoning_tokens": 0},
				"total_tokens": inp + out,
			},
		}
	elif api == "chat":
		data = {
			"id": "chatcmpl-bench",
			"object": "chat.completion",
			"created": now,
			"model": model,
			"choices": [
				{
					"index": 0,
					"message": {"role": "assistant", "content": text, "refusal": None},
					"finish_reason": "stop",
					"logprobs": None,
				}
			],
			"usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out},
		}
	elif api == "anthropic":
		data = {
			"id": "msg_bench",
			"type": "message",
			"role": "assistant",
			"model": model,
			"content": [{"type": "text", "text": text}],
			"stop_reason": "end_turn",
			"stop_sequence": None,
			"usage": {
				"input_tokens": inp,
				"output_tokens": out,
				"cache_creation_input_tokens": 0,
				"cache_read_input_tokens": 0,
			},
		}
	else:
		data = {
			"candidates": [
				{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
			],
			"usageMetadata": {
				"promptTokenCount": inp,
				"candidatesTokenCount": out,
				"totalTokenCount": inp + out,
			},
			"modelVersion": model,
			"responseId": "bench",
		}
	return json.dumps(data).encode()


def native_reply(model: str, turn: int, steps: int, prompt_bytes: int) -> bytes:
	"""A Chat Completions reply with a native tool call (``add``) while turn < steps, else text."""
	if turn < steps:
		arguments = json.dumps({"a": turn, "b": 1})
		message: dict[str, object] = {
			"role": "assistant",
			"content": None,
			"tool_calls": [
				{
					"id": f"call_{turn}",
					"type": "function",
					"function": {"name": "add", "arguments": arguments},
				}
			],
		}
		finish = "tool_calls"
	else:
		message = {"role": "assistant", "content": f"The sum is {steps}."}
		finish = "stop"
	inp = prompt_bytes // 4
	data = {
		"id": "chatcmpl-bench",
		"object": "chat.completion",
		"created": int(time.time()),
		"model": model,
		"choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
		"usage": {"prompt_tokens": inp, "completion_tokens": 10, "total_tokens": inp + 10},
	}
	return json.dumps(data).encode()


def _response(status: int, body: bytes) -> bytes:
	reason = {200: "OK", 404: "Not Found", 400: "Bad Request"}.get(status, "OK")
	head = (
		f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
		f"content-length: {len(body)}\r\n\r\n"
	)
	return head.encode() + body


class HTTPProtocol(asyncio.Protocol):
	def __init__(self, state: State) -> None:
		self.state = state
		self.buffer = bytearray()
		self.transport: asyncio.Transport | None = None
		self.loop = asyncio.get_running_loop()

	def connection_made(self, transport: asyncio.BaseTransport) -> None:
		self.transport = transport  # type: ignore[assignment]

	def connection_lost(self, exc: Exception | None) -> None:
		self.transport = None

	def data_received(self, data: bytes) -> None:
		self.buffer += data
		while True:
			end = self.buffer.find(b"\r\n\r\n")
			if end < 0:
				return
			head = bytes(self.buffer[:end]).decode("latin-1")
			lines = head.split("\r\n")
			length = 0
			for line in lines[1:]:
				name, _, value = line.partition(":")
				if name.strip().lower() == "content-length":
					length = int(value.strip())
			total = end + 4 + length
			if len(self.buffer) < total:
				return
			body = bytes(self.buffer[end + 4 : total])
			del self.buffer[:total]
			method, path, _ = lines[0].split(" ", 2)
			self.handle(method, path, body)

	def send(self, payload: bytes) -> None:
		if self.transport is not None and not self.transport.is_closing():
			self.transport.write(payload)

	def handle(self, method: str, path: str, body: bytes) -> None:
		state = self.state
		if path.startswith("/_"):
			self.send(self.control(method, path, body))
			return
		if path.endswith("/responses"):
			api = "responses"
		elif path.endswith("/chat/completions"):
			api = "chat"
		elif path.endswith("/messages"):
			api = "anthropic"
		elif path.endswith(":generateContent"):
			api = "gemini"
		else:
			self.send(_response(404, b'{"error":{"message":"no such endpoint"}}'))
			return
		if state.first_at is None:
			state.first_at = time.monotonic()
		state.requests += 1
		state.bytes += len(body)
		if state.record:
			state.bodies.append(body)
		if api == "gemini":
			model = path.rsplit("/", 1)[-1].split(":", 1)[0]
		else:
			m = _MODEL_IN_BODY.search(body)
			model = m.group(1).decode() if m else "bench"
		turn = len(_ASSISTANT.findall(body))
		steps = _steps(model, state.steps)
		if api == "chat" and "native" in model:
			payload = _response(200, native_reply(model, turn, steps, len(body)))
		else:
			text = _command_text(turn, steps)
			payload = _response(200, reply_body(api, model, text, len(body)))
		if state.latency > 0:
			self.loop.call_later(state.latency, self.send, payload)
		else:
			self.send(payload)

	def control(self, method: str, path: str, body: bytes) -> bytes:
		state = self.state
		if path == "/_stats":
			return _response(
				200,
				json.dumps(
					{
						"requests": state.requests,
						"bytes": state.bytes,
						"first_request_at": state.first_at,
					}
				).encode(),
			)
		if path == "/_reset" and method == "POST":
			options = json.loads(body or b"{}")
			state.requests = state.bytes = 0
			state.bodies = []
			state.first_at = None
			state.latency = float(options.get("latency_ms", state.latency * 1000)) / 1000.0
			state.record = bool(options.get("record", False))
			return _response(200, b"{}")
		if path == "/_bodies":
			bodies = [b.decode() for b in state.bodies]
			return _response(200, json.dumps(bodies, ensure_ascii=False).encode())
		return _response(404, b'{"error":{"message":"no such control endpoint"}}')


async def serve(host: str, port: int, latency_ms: float, steps: int) -> None:
	state = State(latency_ms, steps)
	loop = asyncio.get_running_loop()
	server = await loop.create_server(lambda: HTTPProtocol(state), host, port, backlog=4096)
	bound = server.sockets[0].getsockname()[1]
	print(f"listening {host}:{bound}", flush=True)
	async with server:
		await server.serve_forever()


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
	parser.add_argument("--latency-ms", type=float, default=0.0, help="delay before each reply")
	parser.add_argument(
		"--steps", type=int, default=5, help="tool calls when the model name has no stepsN"
	)
	args = parser.parse_args()
	try:
		asyncio.run(serve(args.host, args.port, args.latency_ms, args.steps))
	except KeyboardInterrupt:
		sys.exit(0)


if __name__ == "__main__":
	main()
