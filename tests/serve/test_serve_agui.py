"""POST /agui/<agent>: an AG-UI run streams events that the protocol's own schema accepts."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from ag_ui.core import Event, EventType, RunAgentInput, UserMessage
from pydantic import TypeAdapter

from openmolt import OpenMolt
from openmolt_core.llm import ModelResponse, Usage
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.streaming import TextDelta
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio

TOKEN = "agui-token-for-tests-0123456789"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)  # the protocol's discriminated union of events


class Ends(RunObserver):
	def __init__(self) -> None:
		self.states: list[Any] = []

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		self.states.append(run.state)


async def serving(
	model: ScriptedModel, **agui: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, list[Any], Ends]]:
	ran: list[Any] = []

	@tool(labels=[])
	def lookup(city: str) -> dict[str, Any]:
		"""Look a city up.

		Args:
			city: The city.
		"""
		ran.append(city)
		return {"city": city, "weather": "rain"}

	ends = Ends()
	om = OpenMolt(entry_points=False)
	om.observers.append(ends)
	agent = om.create_agent(
		name="Helper",
		model=model,
		instructions="Help.",
		tools=[lookup],
		requires_approval=["local.lookup"] if agui.pop("approve", False) else None,
	)
	park_questions(agent)
	triggers = Triggers.model_validate({"agui": {"token": TOKEN, **agui}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as client:
			yield client, ran, ends
	await om.aclose()


def run_input(text: str = "Weather in Oslo?", thread: str = "t-1", **more: Any) -> dict[str, Any]:
	given = RunAgentInput(
		thread_id=thread,
		run_id=uuid.uuid4().hex,
		messages=[UserMessage(id="m1", role="user", content=text)],
		**more,
	)
	return given.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(client: httpx.AsyncClient, body: dict[str, Any]) -> list[Any]:
	"""POST a run and parse every server-sent event with the protocol's own models."""
	async with client.stream("POST", "/agui/Helper", json=body) as response:
		assert response.status_code == 200, await response.aread()
		assert response.headers["content-type"].startswith("text/event-stream")
		text = (await response.aread()).decode()
	frames = [f for f in text.split("\n\n") if f.strip()]
	assert all(f.startswith("data: ") for f in frames)
	return [EVENTS.validate_json(f.removeprefix("data: ")) for f in frames]


async def run_agent(agent: Any, body: dict[str, Any] | None = None) -> list[Any]:
	"""Serve one agent over AG-UI (token TOKEN), POST one run and return its events."""
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as client:
			return await run(client, body or run_input())


def types(events: list[Any]) -> list[str]:
	return [e.type.value for e in events]


async def test_a_run_streams_its_lifecycle_tools_plan_and_text() -> None:
	"""Run started, plan as snapshot then delta, a tool call with args and result, text, finished."""
	model = ScriptedModel(
		[
			[update_plan("look it up", "answer"), call_tool("local.lookup", city="Oslo")],
			finish({"result": "Take an umbrella."}),
		]
	)
	async for client, ran, ends in serving(model):
		body = run_input()
		events = await run(client, body)
		assert types(events) == [
			"RUN_STARTED",
			"STATE_SNAPSHOT",
			"STATE_DELTA",
			"TOOL_CALL_START",
			"TOOL_CALL_ARGS",
			"TOOL_CALL_END",
			"TOOL_CALL_RESULT",
			"TEXT_MESSAGE_START",
			"TEXT_MESSAGE_CONTENT",
			"TEXT_MESSAGE_END",
			"RUN_FINISHED",
		]
		started, snapshot, delta, start, args, end, result, _, content, _, finished = events
		assert (started.thread_id, started.run_id) == ("t-1", body["runId"])
		assert snapshot.snapshot == {"plan": []}
		assert [op.root.op if hasattr(op, "root") else op.op for op in delta.delta] == [
			"add",
			"add",
		]
		assert start.tool_call_name == "local.lookup"
		assert json.loads(args.delta) == {"city": "Oslo"}
		assert start.tool_call_id == end.tool_call_id == result.tool_call_id
		assert json.loads(result.content) == {"city": "Oslo", "weather": "rain"}
		assert content.delta == "Take an umbrella."
		assert finished.run_id == body["runId"]
		assert finished.result == {"result": "Take an umbrella."}
		assert ran == ["Oslo"]
		assert json.loads(model.requests[0].messages[0].content)["input"] == "Weather in Oslo?"
		assert ends.states[0].tainted  # a front end's words: the run starts tainted


async def test_callers_without_the_token_or_with_bad_input_are_refused() -> None:
	"""No token or a wrong one is 401 before anything runs; input that is not RunAgentInput is 422."""
	model = ScriptedModel([])
	async for client, _, _ in serving(model):
		body = run_input()
		missing = await client.post("/agui/Helper", json=body, headers={"Authorization": ""})
		assert missing.status_code == 401
		assert missing.headers["www-authenticate"] == "Bearer"
		wrong = await client.post(
			"/agui/Helper", json=body, headers={"Authorization": "Bearer nope"}
		)
		assert wrong.status_code == 401
		assert TOKEN not in wrong.text
		bad = await client.post("/agui/Helper", json={"threadId": "t"})
		assert bad.status_code == 422
		assert "runId" in bad.json()["error"] or "run_id" in bad.json()["error"]
		nobody = await client.post("/agui/Nobody", json=body)
		assert nobody.status_code == 404
		no_user = {**body, "messages": []}
		assert (await client.post("/agui/Helper", json=no_user)).status_code == 422
	assert model.requests == []


async def test_a_question_is_an_interrupt_and_the_next_run_answers_it() -> None:
	"""The run ends with an interrupt outcome; a resume entry with the answer goes on with that run."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "Rain in Oslo."})])
	async for client, _, _ in serving(model):
		first = await run(client, run_input("Weather?"))
		finished = first[-1]
		assert finished.type == EventType.RUN_FINISHED
		outcome = finished.outcome.root if hasattr(finished.outcome, "root") else finished.outcome
		assert outcome.type == "interrupt"
		(interrupt,) = outcome.interrupts
		assert (interrupt.reason, interrupt.message) == ("question", "Which city?")
		wrong = run_input("", resume=[{"interruptId": "nope", "status": "resolved"}])
		assert (await client.post("/agui/Helper", json=wrong)).status_code == 409
		resumed = run_input(
			"", resume=[{"interruptId": interrupt.id, "status": "resolved", "payload": "Oslo"}]
		)
		second = await run(client, resumed)
		assert second[-1].type == EventType.RUN_FINISHED
		assert second[-1].result == {"result": "Rain in Oslo."}
		assert "Oslo" in model.requests[1].messages[-1].content
		again = await client.post("/agui/Helper", json=resumed)
		assert again.status_code == 409  # answered: nothing waits any more


async def test_approvals_are_interrupts_decided_by_the_front_end_only_when_allowed() -> None:
	"""Without decideApprovals a resume is 403; with it, an approval lets the call run."""
	for decide in (False, True):
		model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])
		async for client, ran, _ in serving(model, approve=True, decideApprovals=decide):
			events = await run(client, run_input())
			outcome = events[-1].outcome
			outcome = outcome.root if hasattr(outcome, "root") else outcome
			(interrupt,) = outcome.interrupts
			assert interrupt.reason == "approval"
			assert interrupt.metadata["decidable"] is decide
			assert interrupt.metadata["input"] == {"city": "Oslo"}
			entry = {
				"interruptId": interrupt.id,
				"status": "resolved",
				"payload": {"approved": True},
			}
			body = run_input("", resume=[entry])
			if not decide:
				refused = await client.post("/agui/Helper", json=body)
				assert refused.status_code == 403
				assert "run viewer" in refused.json()["error"]
				assert ran == []
				continue
			after = await run(client, body)
			assert "TOOL_CALL_RESULT" in types(after)
			assert after[-1].result == {"result": "ok"}
			assert ran == ["Oslo"]


async def test_an_approval_is_decided_only_with_the_interrupt_its_run_was_given() -> None:
	"""A client that knows the thread but not the run cannot approve its call by the call's key."""
	model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])
	async for client, ran, _ in serving(model, approve=True, decideApprovals=True):
		events = await run(client, run_input())
		outcome = events[-1].outcome
		(interrupt,) = (outcome.root if hasattr(outcome, "root") else outcome).interrupts
		call = interrupt.id[interrupt.id.index("tool:") :]  # tool:<step>:<index>:<handle>
		assert interrupt.id != call  # the run's random id is part of it

		def approve(interrupt_id: str, thread: str = "t-1") -> dict[str, Any]:
			entry = {
				"interruptId": interrupt_id,
				"status": "resolved",
				"payload": {"approved": True},
			}
			return run_input("", thread=thread, resume=[entry])

		for guess in (call, f"agui:Helper:t-1:{call}", interrupt.id.upper()):
			refused = await client.post("/agui/Helper", json=approve(guess))
			assert refused.status_code == 409, guess
		other = await client.post("/agui/Helper", json=approve(interrupt.id, thread="t-2"))
		assert other.status_code == 409  # another thread holds nothing of it
		assert ran == []
		after = await run(client, approve(interrupt.id))
		assert after[-1].result == {"result": "ok"}
		assert ran == ["Oslo"]


async def test_a_resume_with_a_calls_key_alone_is_told_the_interrupt_id_to_use() -> None:
	"""A client that kept the old id (the call's key) gets a 409 naming the id's form, not the run."""
	model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])
	async for client, ran, _ in serving(model, approve=True, decideApprovals=True):
		events = await run(client, run_input())
		outcome = events[-1].outcome
		(interrupt,) = (outcome.root if hasattr(outcome, "root") else outcome).interrupts
		call = interrupt.id[interrupt.id.index("tool:") :]
		entry = {"interruptId": call, "status": "resolved", "payload": {"approved": True}}
		old = await client.post("/agui/Helper", json=run_input("", resume=[entry]))
		assert old.status_code == 409
		error = old.json()["error"]
		assert "<run id>:tool:<step>:<index>:<tool>" in error  # the form the entry must have
		assert "interrupt" in error and "key alone" in error  # where to read it, what changed
		assert interrupt.id.split(":tool:")[0] not in old.text  # the run's id is not given out
		assert ran == []


def test_a_missing_token_fails_before_anything_listens(monkeypatch: pytest.MonkeyPatch) -> None:
	"""No token and no variable: the error names the variable to set."""
	from openmolt_core.errors import ConfigurationError

	monkeypatch.delenv("OPENMOLT_HELPER_AGUI_TOKEN", raising=False)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	with pytest.raises(ConfigurationError, match="OPENMOLT_HELPER_AGUI_TOKEN"):
		TriggerServer([(agent, Triggers.model_validate({"agui": {}}))], port=0)
	monkeypatch.setenv("OPENMOLT_HELPER_AGUI_TOKEN", "from-the-environment-123")
	server = TriggerServer([(agent, Triggers.model_validate({"agui": {}}))], port=0)
	assert server.routes() == ["POST /agui/Helper"]
	assert "from-the-environment-123" in om.secrets.values()  # masked wherever it shows up


async def test_known_secrets_are_masked_in_every_event() -> None:
	"""A secret the instance knows, in a tool's result and the final text, never leaves in clear."""
	secret = "sk-live-agui-secret-9f8e7d"
	body = run_input()
	model = ScriptedModel(
		[call_tool("local.lookup", city=secret), finish({"result": f"key {secret}"})]
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(secret)

	@tool(labels=[])
	def lookup(city: str) -> str:
		"""Echo the city.

		Args:
			city: The city.
		"""
		return f"weather for {city}"

	agent = om.create_agent(name="Helper", model=model, tools=[lookup])
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as client:
			async with client.stream("POST", "/agui/Helper", json=body) as response:
				text = (await response.aread()).decode()
	await om.aclose()
	assert "TOOL_CALL_RESULT" in text and "RUN_FINISHED" in text
	assert secret not in text
	assert "[redacted]" in text


async def test_an_endpoint_forgets_its_least_recently_used_idle_thread() -> None:
	"""Threads are capped: the oldest idle one goes; the one in use stays."""
	from openmolt_serve import agui

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=ScriptedModel([]))
	endpoint = agui.AguiEndpoint(
		agent,
		Triggers.model_validate({"agui": {"token": TOKEN}}).agui,
		launcher=None,  # type: ignore[arg-type]
	)
	old = agui.MAX_THREADS
	agui.MAX_THREADS = 2
	try:
		endpoint._thread("a")
		endpoint._thread("b")
		endpoint._thread("a")  # used again: now the most recent
		endpoint._thread("c")
		assert list(endpoint.threads) == ["a", "c"]
	finally:
		agui.MAX_THREADS = old
	await om.aclose()


async def test_the_gate_checks_size_token_depth_and_rate_in_the_webhooks_order() -> None:
	"""413 before the token is read; 422 for deep JSON; 429 after rateLimit runs; 401s use none of it."""
	model = ScriptedModel([finish({"result": "ok"})] * 3)
	async for client, _, _ in serving(model, rateLimit=2, maxBody=5000):
		huge = await client.post(
			"/agui/Helper", content=b"x" * 6000, headers={"Authorization": "Bearer nope"}
		)
		assert huge.status_code == 413  # even without the right token: nothing more is read
		deep = "[" * 200 + "]" * 200
		assert (await client.post("/agui/Helper", content=deep)).status_code == 422
		for _ in range(5):
			stranger = await client.post(
				"/agui/Helper", json=run_input(), headers={"Authorization": "Bearer nope"}
			)
			assert stranger.status_code == 401
		await run(client, run_input(thread="a"))
		await run(client, run_input(thread="b"))
		limited = await client.post("/agui/Helper", json=run_input(thread="c"))
		assert limited.status_code == 429
		assert int(limited.headers["Retry-After"]) >= 1
	assert len(model.requests) == 2


async def answer(client: httpx.AsyncClient, body: dict[str, Any], into: list[Any]) -> None:
	async with client.stream("POST", "/agui/Helper", json=body) as response:
		into.append((response.status_code, (await response.aread()).decode()))


async def test_two_answers_to_one_interrupt_resume_the_run_once() -> None:
	"""Concurrent resumes of one question: one goes on; the other is refused or told it was answered."""
	model = ScriptedModel([ask_human("Which city?"), finish({"result": "ok"}), finish("extra")])
	async for client, _, _ in serving(model):
		first = await run(client, run_input("Weather?"))
		outcome = first[-1].outcome
		(interrupt,) = (outcome.root if hasattr(outcome, "root") else outcome).interrupts
		entry = {"interruptId": interrupt.id, "status": "resolved", "payload": "Oslo"}
		answers: list[Any] = []
		body = run_input("", resume=[entry])
		async with anyio.create_task_group() as tg:
			tg.start_soon(answer, client, body, answers)
			tg.start_soon(answer, client, body, answers)
		finished = [b for s, b in answers if s == 200 and '"RUN_FINISHED"' in b]
		assert len(finished) == 1
		other = next(a for a in answers if a[1] not in finished)
		assert other[0] == 409 or '"code":"answered"' in other[1]
	assert len(model.requests) == 2  # the question, then one resumed step


async def test_a_client_that_leaves_mid_run_stops_it_and_frees_its_thread(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""A client that closes the stream (AG-UI's abortRun) stops its run: the tool call in flight
	is cancelled, nothing more runs, the thread is free once it has stopped, and the next request
	on it runs as a new one; the run's end is no 'after the run' traceback in the log."""
	entered = anyio.Event()
	stopped = anyio.Event()

	@tool(labels=[])
	async def slow() -> str:
		"""Wait, then answer."""
		entered.set()
		try:
			await anyio.sleep_forever()
		finally:
			stopped.set()
		return "done"

	om = OpenMolt(entry_points=False)
	model = ScriptedModel([call_tool("local.slow"), finish("second")])
	agent = om.create_agent(name="Helper", model=model, tools=[slow])
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	headers = {"Authorization": f"Bearer {TOKEN}"}
	async with (
		TriggerServer([(agent, triggers)], port=0) as server,
		httpx.AsyncClient(base_url=server.url, headers=headers, timeout=20) as client,
	):
		async with client.stream("POST", "/agui/Helper", json=run_input("go")) as response:
			async for line in response.aiter_lines():
				if "TOOL_CALL_START" in line:
					break  # the client leaves while the tool runs
		with anyio.fail_after(10):
			await stopped.wait()  # the server saw it leave: the run stops in its tool call
		with anyio.fail_after(10):
			again = await run(client, run_input("again"))  # the thread is free again
		assert not server.agui["Helper"].threads["t-1"].busy
	await om.aclose()
	assert entered.is_set()
	assert types(again)[-1] == "RUN_FINISHED"
	assert "second" in again[-1].model_dump_json()
	assert len(model.requests) == 2  # the stopped run's one call, then the new run's
	errors = [r for r in caplog.records if r.levelname == "ERROR" and r.name == "openmolt"]
	assert errors == [], [r.getMessage() for r in errors]


async def test_a_request_that_does_not_end_with_a_user_message_runs_no_earlier_turn() -> None:
	"""The thread's session holds the earlier turns: a request whose last message is the agent's
	reply or a tool's result (this agent calls no front end tool) is 422, never a second run of
	the earlier user message."""
	model = ScriptedModel([finish({"result": "Rain."})])
	runs: list[Any] = []
	async for client, _, ends in serving(model):
		runs = ends.states
		first = run_input("Weather in Oslo?")
		assert (await run(client, first))[-1].type == EventType.RUN_FINISHED
		said = [
			*first["messages"],
			{"id": "a1", "role": "assistant", "content": "Rain."},
		]
		for tail in (
			[],
			[
				{
					"id": "a2",
					"role": "assistant",
					"toolCalls": [
						{
							"id": "c1",
							"type": "function",
							"function": {"name": "confirm", "arguments": "{}"},
						}
					],
				},
				{"id": "r1", "role": "tool", "toolCallId": "c1", "content": "yes"},
			],
		):
			body = {**run_input(), "messages": [*said, *tail]}
			refused = await client.post("/agui/Helper", json=body)
			assert refused.status_code == 422
			assert "end with a user message" in refused.json()["error"]
	assert len(model.requests) == 1
	assert len(runs) == 1


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


async def test_media_parts_of_the_user_message_reach_the_model() -> None:
	"""An image's inline bytes are an attachment, a URL a reference the server does not fetch, a
	provider's file handle is dropped; bytes that are not base64 are 422 and run nothing."""
	model = ScriptedModel([finish({"result": "A receipt."})])
	content = [
		{"type": "text", "text": "What is this?"},
		{"type": "image", "source": {"type": "data", "value": PNG, "mimeType": "image/png"}},
		{"type": "document", "source": {"type": "url", "value": "https://files.example/a.pdf"}},
		{"type": "document", "source": {"type": "file", "value": "file-abc123"}},
	]
	async for client, _, _ in serving(model):
		body = {**run_input(), "messages": [{"id": "m1", "role": "user", "content": content}]}
		assert (await run(client, body))[-1].type == EventType.RUN_FINISHED
		bad = [
			{"type": "image", "source": {"type": "data", "value": "%%%", "mimeType": "image/png"}}
		]
		body = {
			**run_input(thread="t-2"),
			"messages": [{"id": "m2", "role": "user", "content": bad}],
		}
		refused = await client.post("/agui/Helper", json=body)
		assert refused.status_code == 422
		assert "base64" in refused.json()["error"]
	(first,) = model.requests[0].messages
	(sent,) = first.attachments
	assert (sent.media_type, sent.data) == ("image/png", PNG)
	assert json.loads(first.content)["input"] == {
		"message": "What is this?",
		"files": [{"url": "https://files.example/a.pdf"}],
	}
	assert len(model.requests) == 1


async def test_the_state_snapshot_keeps_the_clients_state_beside_the_plan() -> None:
	"""The application's own keys in the client's state survive the run's snapshot and deltas
	(they patch /plan only); the plan is the run's."""
	model = ScriptedModel([[update_plan("look", "answer"), finish({"result": "ok"})]])
	async for client, _, _ in serving(model):
		body = run_input(state={"cart": ["A17"], "plan": ["stale"]})
		events = await run(client, body)
	snapshot = next(e for e in events if e.type == EventType.STATE_SNAPSHOT)
	assert snapshot.snapshot == {"cart": ["A17"], "plan": []}
	deltas = [op for e in events if e.type == EventType.STATE_DELTA for op in e.delta]
	assert {op.path.split("/")[1] for op in deltas} == {"plan"}


class Streaming:
	"""A model that streams each scripted reply in pieces of ``size`` characters."""

	name = "streaming"

	def __init__(self, replies: list[Any], *, size: int = 5) -> None:
		self.texts = [json.dumps({"commands": r if isinstance(r, list) else [r]}) for r in replies]
		self.size = size
		self.requests: list[Any] = []

	async def generate(self, request: Any) -> ModelResponse:
		self.requests.append(request)
		return ModelResponse(text=self.texts.pop(0), usage=Usage(5, 5))

	async def stream(self, request: Any) -> AsyncIterator[Any]:
		self.requests.append(request)
		text = self.texts.pop(0)
		for i in range(0, len(text), self.size):
			yield TextDelta(text[i : i + self.size])
		yield ModelResponse(text=text, usage=Usage(5, 5))


async def test_the_human_message_streams_as_the_model_writes_it() -> None:
	"""The finish's humanMessage arrives in pieces in one TEXT_MESSAGE, and is not sent again."""
	said = "Take an umbrella, it rains all day in Oslo."
	model = Streaming([finish({"result": "rain"}, human_message=said)])
	async for client, _, _ in serving(model):  # type: ignore[arg-type]
		events = await run(client, run_input())
	names = types(events)
	assert names[0] == "RUN_STARTED" and names[-1] == "RUN_FINISHED"
	pieces = [e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT"]
	assert len(pieces) > 3 and "".join(pieces) == said  # streamed, whole, once
	assert names.count("TEXT_MESSAGE_START") == names.count("TEXT_MESSAGE_END") == 1
	assert names.index("TEXT_MESSAGE_END") < names.index("RUN_FINISHED")


async def test_a_reply_the_run_does_not_keep_is_closed_and_the_final_text_follows() -> None:
	"""A finish refused (its output does not fit the schema) streamed already: its message is
	closed with a mark saying it was not used, the tool calls after it come outside any
	message, and the final text is its own."""
	model = Streaming(
		[
			finish({"wrong": 1}, human_message="Done already."),
			call_tool("local.lookup", city="Oslo"),
			finish({"result": "rain"}, human_message="Rain in Oslo."),
		]
	)
	ran: list[str] = []

	@tool(labels=[])
	def lookup(city: str) -> dict[str, Any]:
		"""Look a city up.

		Args:
			city: The city.
		"""
		ran.append(city)
		return {"city": city}

	om = OpenMolt(entry_points=False)
	schema = {
		"type": "object",
		"properties": {"result": {"type": "string"}},
		"required": ["result"],
		"additionalProperties": False,
	}
	agent = om.create_agent(
		name="Helper", model=model, tools=[lookup], output_schema=schema, instructions="Help."
	)
	events = await run_agent(agent)
	await om.aclose()
	names = types(events)
	messages: dict[str, str] = {}
	open_: str | None = None
	for event in events:
		kind = event.type.value
		if kind == "TEXT_MESSAGE_START":
			assert open_ is None  # one message at a time
			open_ = event.message_id
			messages[open_] = ""
		elif kind == "TEXT_MESSAGE_CONTENT":
			assert event.message_id == open_
			messages[open_] += event.delta
		elif kind == "TEXT_MESSAGE_END":
			assert event.message_id == open_
			open_ = None
		else:
			assert open_ is None, f"{kind} inside an open text message"
	from openmolt_serve._agui_events import NOT_USED_MARK

	assert list(messages.values()) == [f"Done already.{NOT_USED_MARK}", "Rain in Oslo."]
	assert names[-1] == "RUN_FINISHED" and ran == ["Oslo"]


async def test_a_call_made_again_streams_its_reply_in_a_message_of_its_own() -> None:
	"""A retry of the same model (the next attempt) writes the reply anew: what the cut call
	streamed is closed with a mark saying it was cut off (AG-UI takes no text back), the whole
	reply is a message of its own, and the run's end does not send it again."""
	from collections.abc import Awaitable, Callable
	from typing import ClassVar

	from openmolt import Capability
	from openmolt_core.errors import ProviderError

	said = "Take an umbrella, it rains all day in Oslo."
	text = json.dumps({"commands": [finish({"result": "rain"}, human_message=said)]})

	class CutOnce:
		name = "cutonce"
		streams = 0

		async def generate(self, request: Any) -> ModelResponse:
			return ModelResponse(text=text, usage=Usage(5, 5))

		async def stream(self, request: Any) -> AsyncIterator[Any]:
			self.streams += 1
			sent = text[: len(text) * 3 // 4] if self.streams == 1 else text
			for i in range(0, len(sent), 5):
				yield TextDelta(sent[i : i + 5])
			if self.streams > 1:
				yield ModelResponse(text=text, usage=Usage(5, 5))

	class RetryOnce(Capability):
		name: ClassVar[str] = "acme-retry"
		model_calls = 2

		async def wrap_model(
			self, run: Any, request: Any, call: Callable[[Any], Awaitable[ModelResponse]]
		) -> ModelResponse:
			try:
				return await call(request)
			except ProviderError:
				return await call(request)

	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Helper", model=CutOnce(), capabilities=[RetryOnce()], instructions="Help."
	)
	events = await run_agent(agent)
	await om.aclose()
	messages: dict[str, str] = {}
	for event in events:
		if event.type.value == "TEXT_MESSAGE_CONTENT":
			messages[event.message_id] = messages.get(event.message_id, "") + event.delta
	first, second = messages.values()
	from openmolt_serve._agui_events import CUT_MARK

	assert first.endswith(CUT_MARK)  # the cut call's text, said to be cut off
	piece = first.removesuffix(CUT_MARK)
	assert piece and said.startswith(piece) and piece != said
	assert second == said
	names = types(events)
	assert names.count("TEXT_MESSAGE_START") == names.count("TEXT_MESSAGE_END") == 2
	assert names[-1] == "RUN_FINISHED"


async def test_a_launcher_that_fails_on_its_own_still_ends_the_stream_with_run_error(
	monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
	"""An unexpected failure to start is a RUN_ERROR the client reads, not a cut-off stream."""
	from openmolt_serve._launch import Launcher

	async def broken(self: Any, *args: Any, **kwargs: Any) -> None:
		raise RuntimeError("database is locked at /srv/internal/runs.db")

	monkeypatch.setattr(Launcher, "start", broken)
	async for client, ran, _ in serving(ScriptedModel([finish("x")])):
		events = await run(client, run_input())
		assert types(events) == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_ERROR"]
		assert "could not start this run" in events[-1].message
		assert "/srv/internal" not in events[-1].message  # the server's, for its log
		assert ran == []
		# The thread is free again: the next message is not refused as a turn in flight.
		monkeypatch.undo()
		assert types(await run(client, run_input(thread="t-1")))[-1] == "RUN_FINISHED"
	assert "/srv/internal/runs.db" in caplog.text
