"""Runs one scenario of the matrix on each real provider and returns what it must keep.

Each provider (OpenAI Responses, OpenAI Chat Completions, Anthropic, Gemini) runs the scenario
through its real request builder and reply parser, over an `httpx.MockTransport` that records each
request body and answers the scenario's scripted replies in the provider's wire format. The agent
runs through `Agent.execute` with a `RecordingPort`, a `openmolt_core.durability.RunPort` that
records every step key and reads time from a fixed clock, with a fixed run id; the instance's
own clock is a `openmolt_core.testing.FakeClock`.

What a golden holds, per provider: the agent's fingerprint, every request (method, URL, the body
parsed and the SHA-256 of its exact bytes), each phase's status and `RunState.to_dict()`, the step
keys in the order the port saw them, and the event ``(name, seq, run_id)`` sequence (a
sub-agent's events carry its own run id).

Values the library draws at random are replaced in ONE place, `normalize` (with `Randoms`, which
collects them): an approval decision's id (``secrets.token_hex``) and its HMAC signature, the ids
of stored files (``openmolt-file:`` + ``secrets.token_urlsafe``, `openmolt_core.files`), and the
temporary folder of the run (files, skills). Nothing else is normalized, so a golden that changes
for another reason shows the change.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from openmolt import OpenMolt
from openmolt_core.approvals import Approvals
from openmolt_core.events import EVENT_NAMES, STREAM_EVENTS
from openmolt_core.testing import FakeClock

RUN_ID = "golden-run"
"""The run id of every golden run (a sub-agent's derives from it)."""

APPROVAL_KEY = b"goldens-approval-key-0123456789abcdef"
"""A fixed signing key, so decisions verify the same way in every recording."""

START = 1_000.0
"""Where the port's clock starts (seconds); it moves only by the waits a run asks for."""


@dataclass(frozen=True)
class Provider:
	"""One provider dialect of the matrix: the model ids it answers and how it is configured."""

	name: str
	prefix: str
	models: tuple[str, str]
	settings: dict[str, Any]
	wire: Callable[[str], dict[str, Any]]


USAGE_IN, USAGE_OUT = 1_000, 50
"""Tokens every scripted reply reports (the cost budget and compaction read them)."""


def _responses(text: str) -> dict[str, Any]:
	content = [{"type": "output_text", "text": text, "annotations": []}]
	return {
		"id": "resp_golden",
		"object": "response",
		"status": "completed",
		"output": [{"type": "message", "role": "assistant", "content": content}],
		"usage": {
			"input_tokens": USAGE_IN,
			"output_tokens": USAGE_OUT,
			"total_tokens": USAGE_IN + USAGE_OUT,
		},
	}


def _chat(text: str) -> dict[str, Any]:
	message = {"role": "assistant", "content": text}
	return {
		"id": "chatcmpl-golden",
		"object": "chat.completion",
		"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
		"usage": {
			"prompt_tokens": USAGE_IN,
			"completion_tokens": USAGE_OUT,
			"total_tokens": USAGE_IN + USAGE_OUT,
		},
	}


def _anthropic(text: str) -> dict[str, Any]:
	return {
		"id": "msg_golden",
		"type": "message",
		"role": "assistant",
		"stop_reason": "end_turn",
		"content": [{"type": "text", "text": text}],
		"usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
	}


def _gemini(text: str) -> dict[str, Any]:
	return {
		"candidates": [
			{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
		],
		"usageMetadata": {
			"promptTokenCount": USAGE_IN,
			"candidatesTokenCount": USAGE_OUT,
			"totalTokenCount": USAGE_IN + USAGE_OUT,
		},
	}


PROVIDERS: tuple[Provider, ...] = (
	Provider(
		"openai-responses",
		"openai",
		("gpt-5-mini", "gpt-5-nano"),
		{"openai": {"api_key": "sk-golden", "max_retries": 0}},
		_responses,
	),
	Provider(
		"openai-chat",
		"openai",
		("gpt-5-mini", "gpt-5-nano"),
		{"openai": {"api_key": "sk-golden", "api_mode": "chat", "max_retries": 0}},
		_chat,
	),
	Provider(
		"anthropic",
		"anthropic",
		("claude-sonnet-4-5", "claude-haiku-4-5"),
		{"anthropic": {"api_key": "sk-ant-golden", "max_retries": 0}},
		_anthropic,
	),
	Provider(
		"gemini",
		"google",
		("gemini-2.5-flash", "gemini-2.5-flash-lite"),
		{"google": {"api_key": "AIza-golden", "max_retries": 0}},
		_gemini,
	),
)
"""The provider dialects every scenario runs on, in the order the golden files list them.

``max_retries: 0`` in each provider's settings, besides ``OpenMolt(retry={"attempts": 1})``: the
Anthropic and Gemini providers do not take the instance's retry policy (their ``__init__`` does
not pass ``retry`` on), so without it they would retry a failure, with real, jittered sleeps,
instead of falling back."""


class RecordingError(Exception):
	"""A scenario could not be recorded on a provider (the message names both)."""


@dataclass(frozen=True)
class Fail:
	"""A scripted reply that is an HTTP error (a model that is down, for fallback)."""

	status: int


Reply = str | dict[str, Any] | list[dict[str, Any]] | Fail
"""A scripted reply: raw text, one command, a list of commands, or an HTTP error."""


def reply_text(reply: str | dict[str, Any] | list[dict[str, Any]]) -> str:
	"""The text a model sends for a scripted reply (commands go in the envelope)."""
	if isinstance(reply, str):
		return reply
	commands = reply if isinstance(reply, list) else [reply]
	return json.dumps({"commands": commands})


class Server:
	"""A fake provider API: records each request and answers the script in order."""

	def __init__(self, provider: Provider, script: Sequence[Reply]) -> None:
		self.provider = provider
		self.script = list(script)
		self.requests: list[httpx.Request] = []

	def handle(self, request: httpx.Request) -> httpx.Response:
		"""Record the request and send the next scripted reply."""
		self.requests.append(request)
		if len(self.requests) > len(self.script):
			return httpx.Response(
				400, json={"error": {"message": "the golden script has no more replies"}}
			)
		reply = self.script[len(self.requests) - 1]
		if isinstance(reply, Fail):
			return httpx.Response(reply.status, json={"error": {"message": "overloaded"}})
		return httpx.Response(200, json=self.provider.wire(reply_text(reply)))


class RecordingPort:
	"""A `openmolt_core.durability.RunPort` that records step keys; time moves only by waits."""

	replaying = False
	deliver_replayed = False

	def __init__(self) -> None:
		self.keys: list[str] = []
		self.clock = START

	def now(self) -> float:
		"""The fixed clock."""
		return self.clock

	async def deadline(self, seconds: float) -> float:
		"""Record the reading as a step (a durable engine journals it)."""
		self.keys.append("deadline")
		return self.clock + seconds

	async def sleep(self, seconds: float) -> None:
		"""Move the clock instead of sleeping."""
		self.keys.append(f"sleep:{seconds}")
		self.clock += seconds

	def reserve(self, keys: Sequence[str]) -> None:
		"""Record a concurrent batch the loop opens."""
		self.keys.append("reserve:" + ",".join(keys))

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		"""Record the key and run the step."""
		self.keys.append(key)
		return await fn()


@dataclass
class Phase:
	"""One call on the agent: a start (``input``), or a resume with an answer or approvals."""

	input: Any = None
	answer: str | None = None
	approve: bool = False


@dataclass
class Scenario:
	"""One agent of the matrix: how to build it, what the model replies, and the phases."""

	name: str
	build: Callable[[OpenMolt, Provider, Path], Any]
	script: Sequence[Reply]
	phases: Sequence[Phase] = field(default_factory=lambda: [Phase(input="go")])
	setup: Callable[[OpenMolt, Path], None] | None = None


FILE_ID = re.compile(r"openmolt-file:[A-Za-z0-9_-]{16}")
"""A stored file's reference: `openmolt_core.filestore.FileStore` draws the id at random."""


@dataclass
class Randoms:
	"""Values drawn at random during a recording, each mapped to its placeholder."""

	values: dict[str, str] = field(default_factory=dict)
	files: int = 0

	def add(self, value: str, placeholder: str) -> None:
		"""Replace ``value`` with ``placeholder`` wherever it appears in the golden."""
		if value:
			self.values[value] = placeholder

	def scan(self, text: str) -> None:
		"""Number the file references of ``text`` not seen yet, in the order they appear.

		The recorder scans each phase's saved state, then each request, in run order, so the
		numbers do not depend on the random ids.
		"""
		for ref in FILE_ID.findall(text):
			if ref not in self.values:
				self.files += 1
				self.add(ref, f"openmolt-file:<file-{self.files}>")


def normalize(text: str, randoms: Randoms) -> str:
	"""THE one place goldens replace values: each random value by its placeholder.

	Which values and why: an approval decision's ``id`` is ``secrets.token_hex(8)`` and its
	``signature`` an HMAC over it (``openmolt_core.approvals``); a stored file's id is
	``secrets.token_urlsafe(12)`` (``openmolt_core.files``), numbered by `Randoms.scan`; the run's
	files and skills live in a temporary folder. Every other value of a golden is deterministic.
	"""
	for value, placeholder in sorted(randoms.values.items(), key=lambda kv: -len(kv[0])):
		text = text.replace(value, placeholder)
		text = text.replace(json.dumps(value)[1:-1], placeholder)  # as escaped inside JSON
	return text


def _request(request: httpx.Request, randoms: Randoms) -> dict[str, Any]:
	raw = normalize(request.content.decode("utf-8"), randoms)
	return {
		"method": request.method,
		"url": normalize(str(request.url), randoms),
		"sha256": hashlib.sha256(raw.encode("utf-8")).hexdigest(),
		"body": json.loads(raw) if raw else None,
	}


async def record_provider(scenario: Scenario, provider: Provider, tmp: Path) -> dict[str, Any]:
	"""Run ``scenario`` on ``provider`` and return its golden part (JSON, normalized)."""
	server = Server(provider, scenario.script)
	randoms = Randoms()
	randoms.add(str(tmp), "<tmp>")
	http = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
	om = OpenMolt(
		llm_providers=provider.settings,
		http_client=http,
		approvals=Approvals(key=APPROVAL_KEY),
		retry={"attempts": 1},
		files_dir=tmp / "files",
		clock=FakeClock(),
	)
	try:
		if scenario.setup is not None:
			scenario.setup(om, tmp)
		agent = scenario.build(om, provider, tmp)
		events: list[list[Any]] = []
		for name in sorted(EVENT_NAMES - STREAM_EVENTS):  # numbered events; no streaming
			agent.on(name, lambda e, name=name: events.append([name, e.seq, e.run_id]))
		port = RecordingPort()
		phases: list[dict[str, Any]] = []
		state: Any = None
		for phase in scenario.phases:
			decisions = []
			if phase.approve:
				for request in agent.approval_requests(state):
					decision = request.approve()
					randoms.add(decision.id, "<approval-id>")
					randoms.add(decision.signature, "<approval-signature>")
					decisions.append(decision)
			result = await agent.execute(
				state,
				port=port,
				input=phase.input,
				answer=phase.answer,
				decisions=decisions,
				run_id=RUN_ID,
			)
			state = result.state
			saved = result.state.to_dict()
			randoms.scan(json.dumps(saved))
			phases.append({"status": result.status, "state": saved})
		for request in server.requests:
			randoms.scan(request.content.decode("utf-8"))
		part = {
			"fingerprint": agent.fingerprint(),
			"phases": phases,
			"step_keys": port.keys,
			"events": events,
			"requests": [_request(r, randoms) for r in server.requests],
		}
	finally:
		await om.aclose()
		await http.aclose()
	return json.loads(normalize(json.dumps(part), randoms))  # type: ignore[no-any-return]


async def record(scenario: Scenario, tmp: Path) -> dict[str, Any]:
	"""The whole golden of one scenario: its part on every provider."""
	parts: dict[str, Any] = {}

	async def one(provider: Provider) -> None:
		folder = tmp / provider.name
		folder.mkdir(parents=True, exist_ok=True)
		try:
			parts[provider.name] = await record_provider(scenario, provider, folder)
		except Exception as exc:
			raise RecordingError(
				f"golden {scenario.name!r} on {provider.name}: {exc!r}; if the agent now asks "
				"for more (or fewer) model calls, change its script in tests/goldens/_matrix.py"
			) from exc

	# The providers run side by side (each on its own instance, port and server): a scenario
	# that starts an MCP server then waits for the four starts at once, not one after another.
	async with anyio.create_task_group() as tg:
		for provider in PROVIDERS:
			tg.start_soon(one, provider)
	return {"scenario": scenario.name, **{p.name: parts[p.name] for p in PROVIDERS}}


def dumps(golden: Mapping[str, Any]) -> str:
	"""The file text of a golden (stable: sorted keys, two-space indent, final newline)."""
	return json.dumps(golden, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
