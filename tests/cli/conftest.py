"""A fake model server on 127.0.0.1 and helpers that run the real `openmolt` command.

The tests drive the real `openai` provider (its `base_url` pointed at the fake server), so the
whole client path runs: request building, HTTP, response parsing. Set OPENMOLT_TEST_PROVIDER=fakeai
to use the minimal third-party test provider of tests/plugins/openmolt_weather instead.

`cli.openmolt(...)` runs the command in this process (`openmolt_core.cli.main`) unless the test
asks for a process: a fresh interpreter costs a second or more of start-up and imports, which only
tests about the process itself (signals, exit status, pipes, terminals, start-up) need.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from tests.cli._http import json_server

PROVIDER = os.environ.get("OPENMOLT_TEST_PROVIDER", "openai")
KEY_VAR = f"OPENMOLT_{PROVIDER.upper()}_API_KEY"
OUTPUT_SCHEMA = {
	"type": "object",
	"properties": {"greeting": {"type": "string"}},
	"required": ["greeting"],
}


def _text(content: Any) -> str:
	if isinstance(content, str):
		return content
	return "".join(part.get("text", "") for part in content)


class FakeModelServer:
	"""Answers POST /v1/responses; what it answers depends on the model name it is sent.

	With ``chat_only`` it is a server like llama.cpp's or an older Ollama: /v1/chat/completions
	answers, /v1/responses is 404 (or, with ``lmstudio``, 200 with LM Studio's error message).
	"""

	def __init__(self, *, chat_only: bool = False, lmstudio: bool = False) -> None:
		self.requests: list[dict[str, Any]] = []
		self.chat_only = chat_only
		self.lmstudio = lmstudio
		self.httpd = json_server(self._respond)
		self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

	def _respond(self, path: str, headers: Message, raw: bytes) -> tuple[int, Any]:
		body = json.loads(raw)
		self.requests.append({"auth": headers.get("Authorization"), "body": body, "path": path})
		return self.route(path, body)

	def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
		if path.endswith("/chat/completions"):
			status, reply = self.reply(body, body["messages"])
			if status != 200:
				return status, reply
			text = reply["output"][0]["content"][0]["text"]
			return 200, {
				"choices": [
					{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
				],
				"usage": {"prompt_tokens": 100, "completion_tokens": 20},
			}
		if self.chat_only:
			if self.lmstudio:
				return 200, {"error": "Unexpected endpoint or method. (POST /v1/responses)"}
			return 404, {"error": {"message": "File Not Found", "type": "not_found_error"}}
		return self.reply(body, body["input"])

	def reply(
		self, body: dict[str, Any], turns: list[dict[str, Any]]
	) -> tuple[int, dict[str, Any]]:
		messages = [m for m in turns if m.get("role") in ("user", "assistant")]
		first = json.loads(_text(messages[0]["content"]))
		behaviour = body["model"]
		if behaviour == "broken":
			return 500, {"error": {"message": "the fake model is broken"}}
		if behaviour == "slow":
			time.sleep(1.5)
		name = first["input"]["name"] if isinstance(first["input"], dict) else first["input"]
		if behaviour == "loop" or (behaviour == "plan" and len(messages) == 1):
			commands = [
				{"type": "updatePlan", "plan": [{"name": "Say hello", "status": "inProgress"}]}
			]
		elif behaviour == "ask" and len(messages) == 1:
			commands = [{"type": "requestHumanInput", "message": "What is your name?"}]
		elif behaviour.startswith("call:") and len(messages) == 1:  # one tool call, no input
			commands = [{"type": "callTool", "tool": behaviour[5:], "input": {}}]
		else:
			if behaviour == "ask":
				name = json.loads(_text(messages[-1]["content"]))["results"][0]["result"]
			commands = [
				{"type": "finish", "status": "success", "output": {"greeting": f"Hello, {name}!"}}
			]
		text = json.dumps({"commands": commands})
		return 200, {
			"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
			"usage": {"input_tokens": 100, "output_tokens": 20},
		}

	@property
	def keys(self) -> list[str]:
		return [r["auth"] for r in self.requests]


def _serve(srv: FakeModelServer):
	# A short poll interval: shutdown() waits for the next poll (0.5 s by default, every test).
	thread = threading.Thread(target=srv.httpd.serve_forever, args=(0.02,), daemon=True)
	thread.start()
	yield srv
	srv.httpd.shutdown()
	srv.httpd.server_close()


@pytest.fixture
def server():
	yield from _serve(FakeModelServer())


@pytest.fixture
def chat_server():
	"""A Chat-Completions-only server (no /v1/responses), like llama.cpp's."""
	yield from _serve(FakeModelServer(chat_only=True))


@pytest.fixture
def lmstudio_server():
	"""A Chat-Completions-only server that answers /v1/responses 200 with an error, like LM Studio."""
	yield from _serve(FakeModelServer(chat_only=True, lmstudio=True))


def agent_file(
	directory: Path, server: FakeModelServer, behaviour: str = "greet", **extra: Any
) -> Path:
	data: dict[str, Any] = {
		"name": "Greeter",
		"model": f"{PROVIDER}:{behaviour}",
		"instructions": "Greet the person named in the input.",
		"input": "Ada",
		"outputSchema": OUTPUT_SCHEMA,
		"llmProviders": {PROVIDER: {"baseUrl": server.url, "maxRetries": 0}},
	}
	data.update(extra)
	path = directory / "agent.json"
	path.write_text(json.dumps(data, indent=2))
	return path


def clean_env(**extra: str) -> dict[str, str]:
	env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
	env.update(extra)
	return env


def openmolt(
	*args: str,
	cwd: Path,
	env: dict[str, str] | None = None,
	stdin: str = "",
	timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
	"""Run the command in a fresh process (the `cli` fixture's ``openmolt(..., process=True)``)."""
	return subprocess.run(
		[sys.executable, "-m", "openmolt", *args],
		cwd=cwd,
		env=env if env is not None else clean_env(**{KEY_VAR: "env-key"}),
		input=stdin,
		capture_output=True,
		text=True,
		timeout=timeout,
	)


class Running:
	"""A running `openmolt` process whose output lines are collected as they come."""

	def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
		self.proc = subprocess.Popen(
			[sys.executable, "-m", "openmolt", *args],
			cwd=cwd,
			env=env if env is not None else clean_env(**{KEY_VAR: "env-key"}),
			stdin=subprocess.DEVNULL,
			stdout=subprocess.PIPE,
			stderr=subprocess.PIPE,
			text=True,
		)
		self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
		self._queue: queue.Queue[tuple[str, str]] = queue.Queue()
		self._threads = [
			threading.Thread(target=self._pump, args=(name,), daemon=True)
			for name in ("stdout", "stderr")
		]
		for thread in self._threads:
			thread.start()

	def _pump(self, name: str) -> None:
		for line in getattr(self.proc, name):
			self._queue.put((name, line.rstrip("\n")))

	def wait_for(self, stream: str, text: str, count: int = 1, timeout: float = 30) -> list[str]:
		deadline = time.monotonic() + timeout
		while True:
			hits = [line for line in self.lines[stream] if text in line]
			if len(hits) >= count:
				return hits
			remaining = deadline - time.monotonic()
			if remaining <= 0:
				self.proc.kill()
				self.finish()
				raise AssertionError(f"no {text!r} on {stream} in time: {self.lines}")
			try:
				name, line = self._queue.get(timeout=remaining)
			except queue.Empty:
				continue
			self.lines[name].append(line)

	def finish(self, timeout: float = 30) -> int:
		try:
			code = self.proc.wait(timeout=timeout)
		except subprocess.TimeoutExpired:  # ended here, so no process outlives the test
			self.proc.kill()
			self.proc.wait()
			raise
		for thread in self._threads:
			thread.join(timeout=5)
		self.proc.stdout.close()
		self.proc.stderr.close()
		while not self._queue.empty():
			name, line = self._queue.get()
			self.lines[name].append(line)
		return code


@pytest.fixture
def cli(cli_in_process):
	"""The helpers above, for test modules (importlib mode cannot import conftest by name).

	``cli.openmolt(*args, cwd=..., env=..., stdin=..., process=False)`` runs the command in this
	process by default (`cli_in_process`); a test about the process itself (signals, its exit
	status, pipes, terminals, start-up, what is installed on ``sys.path``) passes
	``process=True``.
	"""
	from types import SimpleNamespace

	def run(
		*args: str,
		cwd: Path,
		env: dict[str, str] | None = None,
		stdin: str = "",
		timeout: float = 60,
		process: bool = False,
		tty: bool = False,
	) -> subprocess.CompletedProcess[str]:
		if process:
			return openmolt(*args, cwd=cwd, env=env, stdin=stdin, timeout=timeout)
		env = env if env is not None else clean_env(**{KEY_VAR: "env-key"})
		return cli_in_process(list(args), cwd=cwd, env=env, stdin=stdin, tty=tty)

	return SimpleNamespace(
		agent_file=agent_file,
		clean_env=clean_env,
		openmolt=run,
		Running=Running,
		PROVIDER=PROVIDER,
		KEY_VAR=KEY_VAR,
	)
