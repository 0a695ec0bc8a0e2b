"""Every event stream an AG-UI run can produce follows the protocol, checked by two oracles.

Each stream (tool calls with arguments and results, a tool that fails, calls made at once, a
question and its resume, an approval and its resume, text that streams, a model that fails, the
step limit, the timeout, a run that fails before it starts, runs of several threads at once,
sub-agents that finish and fail) is parsed with ``ag-ui-protocol``'s own event models, checked
by `protocol_order` (``RUN_STARTED`` first, exactly one ``RUN_FINISHED`` or ``RUN_ERROR`` and
last, text messages and tool calls opened, continued and closed by their ids, a result only for
a call that ended, subagents opened before their events and closed once) and by the TypeScript
client's own ``verifyEvents``.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.integrations import ApiSetup, BearerCredential, HttpTool, Integration
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, update_plan
from openmolt_core.tools import tool
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions
from tests.core.test_streaming import Streamer
from tests.serve.test_serve_agui import EVENTS, TOKEN, run_input
from tests.serve.test_serve_agui_client import verified

pytestmark = pytest.mark.anyio

Frames = list[dict[str, Any]]


def protocol_order(events: Frames) -> dict[str, str]:
	"""Check one run's stream against AG-UI's ordering rules; the fate of each tool call."""
	for event in events:
		EVENTS.validate_python(event)  # the protocol's own models
	kinds = [e["type"] for e in events]
	assert kinds[0] == "RUN_STARTED", kinds
	ends = [i for i, kind in enumerate(kinds) if kind in ("RUN_FINISHED", "RUN_ERROR")]
	assert ends == [len(kinds) - 1], kinds  # exactly one end, and nothing after it
	texts: set[str] = set()
	calls: dict[str, str] = {}
	subagents: dict[str, bool] = {}
	for event in events:
		kind, sub = event["type"], event.get("subagentRunId")
		if sub is not None and kind != "SUBAGENT_STARTED":
			assert subagents.get(sub) is True, (kind, sub)  # opened, not closed yet
		if kind == "TEXT_MESSAGE_START":
			assert event["messageId"] not in texts
			texts.add(event["messageId"])
		elif kind == "TEXT_MESSAGE_CONTENT":
			assert event["messageId"] in texts and event["delta"], event
		elif kind == "TEXT_MESSAGE_END":
			texts.remove(event["messageId"])
		elif kind == "TOOL_CALL_START":
			assert event["toolCallId"] not in calls
			calls[event["toolCallId"]] = "open"
		elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
			assert calls[event["toolCallId"]] == "open", event
			if kind == "TOOL_CALL_END":
				calls[event["toolCallId"]] = "ended"
		elif kind == "TOOL_CALL_RESULT":
			assert calls[event["toolCallId"]] == "ended", event
			calls[event["toolCallId"]] = "answered"
		elif kind == "SUBAGENT_STARTED":
			assert sub not in subagents
			subagents[sub] = True
		elif kind in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR"):
			subagents[sub] = False
	assert not texts and not any(subagents.values())
	assert "open" not in calls.values()
	return calls


async def post(client: httpx.AsyncClient, body: dict[str, Any]) -> Frames:
	async with client.stream("POST", "/agui/Helper", json=body) as response:
		assert response.status_code == 200, await response.aread()
		text = (await response.aread()).decode()
	return [json.loads(f.removeprefix("data: ")) for f in text.split("\n\n") if f.strip()]


Body = dict[str, Any] | Callable[[list[Frames]], dict[str, Any]]


async def streams(agent: Any, *bodies: Body, **agui: Any) -> list[Frames]:
	"""Serve ``agent`` and post each body in turn (a callable gets the streams so far)."""
	triggers = Triggers.model_validate({"agui": {"token": TOKEN, **agui}})
	out: list[Frames] = []
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as client:
			for body in bodies:
				out.append(await post(client, body(out) if callable(body) else body))
		assert not any(t.busy for t in server.agui["Helper"].threads.values())
	await OpenMolt.of(agent).aclose()
	return out


async def conform(runs: list[Frames]) -> list[dict[str, str]]:
	fates = [protocol_order(events) for events in runs]
	for events in runs:
		await verified(events)
	return fates


@tool(labels=[])
def lookup(city: str) -> dict[str, Any]:
	"""Look a city up.

	Args:
		city: The city.
	"""
	if city == "nowhere":
		raise RuntimeError("no such city")
	return {"city": city, "weather": "rain"}


@tool(labels=[])
async def slow() -> str:
	"""Take a long time."""
	await anyio.sleep(30)
	return "late"


def helper(model: Any, **options: Any) -> Any:
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Helper", model=model, instructions="Help.", tools=[lookup, slow], **options
	)
	park_questions(agent)
	return agent


def interrupts(runs: list[Frames]) -> list[dict[str, Any]]:
	outcome = runs[-1][-1]["outcome"]
	assert outcome["type"] == "interrupt"
	return list(outcome["interrupts"])


def types(events: Frames) -> list[str]:
	return [e["type"] for e in events]


async def test_tool_calls_made_at_once_and_one_that_fails_each_get_their_result() -> None:
	"""Three calls of one step (two alike, one failing): each opens, closes and gets its result."""
	model = ScriptedModel(
		[
			[
				update_plan("look"),
				call_tool("local.lookup", city="Oslo"),
				call_tool("local.lookup", city="Oslo"),
				call_tool("local.lookup", city="nowhere"),
			],
			finish({"result": "Rain."}),
		]
	)
	(run,) = await streams(helper(model), run_input())
	(fates,) = await conform([run])
	assert list(fates.values()) == ["answered"] * 3
	results = [json.loads(e["content"]) for e in run if e["type"] == "TOOL_CALL_RESULT"]
	assert sum("no such city" in json.dumps(r) for r in results) == 1
	assert run[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("how", ["model fails", "step limit", "timeout"])
async def test_a_run_that_ends_on_an_error_ends_its_stream_with_run_error(how: str) -> None:
	"""The model failing, the step limit, the timeout (a call in flight): one RUN_ERROR, last."""

	def down(request: Any) -> Any:
		raise ProviderError("down", provider="scripted", model="scripted", retryable=False)

	options: dict[str, Any] = {}
	if how == "model fails":
		replies: list[Any] = [call_tool("local.lookup", city="Oslo"), down]
	elif how == "step limit":
		replies, options = [call_tool("local.lookup", city=c) for c in "ABC"], {"max_steps": 2}
	else:
		replies, options = [call_tool("local.slow")], {"timeout": 0.5}
	(run,) = await streams(helper(ScriptedModel(replies), **options), run_input())
	(fates,) = await conform([run])
	assert run[-1]["type"] == "RUN_ERROR"
	assert run[-1]["code"] == {"model fails": "error", "step limit": "limit_reached"}.get(
		how, run[-1]["code"]
	)
	if how == "timeout":
		assert list(fates.values()) == ["ended"]  # stopped in flight: no result follows


async def test_a_question_and_its_resume_are_two_conforming_runs() -> None:
	"""The question's run ends with an interrupt; the resumed run streams the end as its own."""
	model = ScriptedModel(
		[
			[update_plan("ask"), ask_human("Which city?")],
			call_tool("local.lookup", city="Oslo"),
			finish({"result": "Rain."}, human_message="Rain in Oslo."),
		]
	)

	def answer(runs: list[Frames]) -> dict[str, Any]:
		(asked,) = interrupts(runs)
		entry = {"interruptId": asked["id"], "status": "resolved", "payload": "Oslo"}
		return run_input("", resume=[entry])

	runs = await streams(helper(model), run_input(), answer)
	await conform(runs)
	assert types(runs[1])[-1] == "RUN_FINISHED" and runs[1][-1]["result"] == {"result": "Rain."}
	assert "TOOL_CALL_RESULT" in types(runs[1])


@pytest.mark.parametrize("approved", [True, False])
async def test_an_approval_and_its_decision_are_two_conforming_runs(approved: bool) -> None:
	"""The call waiting for approval is an interrupt; the decided run streams the call (or not)."""
	model = ScriptedModel([call_tool("local.lookup", city="Oslo"), finish({"result": "ok"})])

	def decide(runs: list[Frames]) -> dict[str, Any]:
		(waiting,) = interrupts(runs)
		payload = {"approved": approved, "reason": "checked"}
		entry = {"interruptId": waiting["id"], "status": "resolved", "payload": payload}
		return run_input("", resume=[entry])

	agent = helper(model, requires_approval=["local.lookup"])
	runs = await streams(agent, run_input(), decide, decideApprovals=True)
	await conform(runs)
	assert ("TOOL_CALL_RESULT" in types(runs[1])) is approved
	assert runs[1][-1]["type"] == "RUN_FINISHED"


async def test_text_that_streams_between_tool_calls_is_closed_before_them() -> None:
	"""A reply streamed in pieces is one message, closed before the stream's end."""
	replies = [
		{"commands": [call_tool("local.lookup", city="Oslo")]},
		{"commands": [finish({"result": "r"}, human_message="It rains in Oslo today.")]},
	]
	(run,) = await streams(helper(Streamer(replies, size=4)), run_input())
	await conform([run])
	pieces = [e["delta"] for e in run if e["type"] == "TEXT_MESSAGE_CONTENT"]
	assert len(pieces) > 1 and "".join(pieces) == "It rains in Oslo today."


async def test_a_run_that_fails_before_it_starts_ends_with_run_error_and_leaves_nothing_open() -> (
	None
):
	"""A run refused before it starts (a credential missing): RUN_ERROR naming the fix, the
	thread free, and nothing of the stream left to the garbage collector (no ResourceWarning)."""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"svc",
		Integration(
			name="Svc",
			api_setup=ApiSetup(base_url="https://svc.example"),
			credential_setup=[
				BearerCredential(
					type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}
				)
			],
			tools=[HttpTool(handle="get", description="Get.", method="GET", endpoint="/x")],
		),
	)
	model = ScriptedModel([finish({"result": "never"})])
	agent = om.create_agent(name="Helper", model=model, integrations=["svc"])
	before = open_streams()
	(run,) = await streams(agent, run_input())
	await conform([run])
	assert types(run) == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_ERROR"]
	assert "apiKey" in run[-1]["message"]
	assert model.calls == 0
	assert open_streams() - before == set()  # its events' stream closed, both ends


def open_streams() -> set[int]:
	"""The memory object streams alive and not closed (a log record may keep one alive)."""
	gc.collect()
	kinds = (MemoryObjectReceiveStream, MemoryObjectSendStream)
	return {id(o) for o in gc.get_objects() if isinstance(o, kinds) and not o._closed}


async def test_runs_of_several_threads_at_once_each_get_their_own_stream() -> None:
	"""Six threads at once on one server: six conforming streams, each with its own reply."""
	count = 6
	replies = [
		{"commands": [finish({"result": "r"}, human_message=f"Reply number {n} is here.")]}
		for n in range(count)
	]
	agent = helper(Streamer(replies, size=3))
	triggers = Triggers.model_validate({"agui": {"token": TOKEN}})
	runs: dict[int, Frames] = {}
	async with TriggerServer([(agent, triggers)], port=0) as server:
		headers = {"Authorization": f"Bearer {TOKEN}"}
		async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as client:

			async def one(n: int) -> None:
				runs[n] = await post(client, run_input(thread=f"t{n}"))

			async with anyio.create_task_group() as tg:
				for n in range(count):
					tg.start_soon(one, n)
	await OpenMolt.of(agent).aclose()
	await conform(list(runs.values()))
	said = set()
	for n, events in runs.items():
		assert events[0]["threadId"] == f"t{n}"
		text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
		said.add(text)
	assert said == {f"Reply number {n} is here." for n in range(count)}


async def test_sub_agents_that_finish_and_fail_open_and_close_their_subagents() -> None:
	"""An agent called as a tool opens a subagent before its events and closes it once, whether
	it finishes or fails; its caller's call gets its result after it closed."""
	om = OpenMolt(entry_points=False)
	forecaster = om.create_agent(
		name="Forecaster",
		model=ScriptedModel(
			[
				call_tool("local.lookup", city="Oslo"),
				finish({"result": "rain"}),
				call_tool("local.lookup", city="nowhere"),  # then no reply: its run breaks
			]
		),
		tools=[lookup],
		instructions="Forecast.",
	)
	model = ScriptedModel(
		[
			call_tool("local.Forecaster", task="Oslo?"),
			call_tool("local.Forecaster", task="Nowhere?"),
			finish({"result": "Rain in Oslo."}),
		]
	)
	agent = om.create_agent(name="Helper", model=model, tools=[forecaster], instructions="Help.")
	(run,) = await streams(agent, run_input())
	(fates,) = await conform([run])
	assert list(fates.values()).count("answered") == len(fates)
	kinds = [(e["type"], "subagentRunId" in e) for e in run]
	assert kinds.count(("SUBAGENT_STARTED", True)) == 2
	assert ("SUBAGENT_FINISHED", True) in kinds and ("SUBAGENT_ERROR", True) in kinds
	assert run[-1]["type"] == "RUN_FINISHED"
