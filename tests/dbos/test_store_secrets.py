"""Nothing a durable run hands DBOS to keep shows a secret: inputs, outputs, events, messages, errors.

The journal's steps pass the agent's redactor (`test_journal_secrets`); so does everything else the
backend stores for a run: the workflow's input (the state it goes on from, a person's answer,
approval decisions), its output, its park event and attributes, the answer's message and the
backend's own tables, and the error a failed run ends with. Each test reads every table of the
store (DBOS's and OpenMolt's), the serialized values decoded, and looks for every spelling.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import anyio
import pytest
from _durable import stop_process

from openmolt import FunctionTool, OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.errors import ProviderError, RunError
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

KEY = "sk-live-store-mask-0123456789"
LATE = "tok-refreshed-9876543210-late"


def _cells(value: Any) -> list[str]:
	"""A stored value as text, and decoded when it is base64 (DBOS pickles values so)."""
	if value is None:
		return []
	text = bytes(value).decode("latin-1") if isinstance(value, bytes | memoryview) else str(value)
	out = [text]
	if isinstance(value, str) and len(value) >= 8:
		try:
			out.append(base64.b64decode(value, validate=True).decode("latin-1"))
		except (binascii.Error, ValueError):
			pass
	return out


def stored_leaks(url: str, *secrets: str, skip_inputs_of: str | None = None) -> list[str]:
	"""Where the store shows a secret in any spelling: ``table.column``, of every row of every table.

	Reads DBOS's tables and OpenMolt's, each value as stored and decoded from base64.

	Args:
		url: The store.
		*secrets: The secrets.
		skip_inputs_of: A workflow whose input is left out (written before a secret was known).
	"""
	import sqlalchemy as sa

	from openmolt_dbos._workers import make_engine

	engine = make_engine(url)
	found: list[str] = []
	try:
		with engine.connect() as conn:
			inspector = sa.inspect(conn)
			schemas: list[str | None] = [None]
			if conn.dialect.name == "postgresql":
				schemas = [
					s
					for s in inspector.get_schema_names()
					if s != "information_schema" and not s.startswith("pg_")
				]
			tables = 0
			for schema in schemas:
				for name in inspector.get_table_names(schema=schema):
					tables += 1
					table = sa.Table(name, sa.MetaData(), autoload_with=conn, schema=schema)
					for row in conn.execute(sa.select(table)).mappings():
						for column, value in row.items():
							if (
								skip_inputs_of is not None
								and column == "inputs"
								and row.get("workflow_uuid") == skip_inputs_of
							):
								continue
							text = json.dumps(value) if isinstance(value, dict | list) else value
							if any(leaks(cell, *secrets) for cell in _cells(text)):
								found.append(f"{name}.{column}")
			assert tables >= 10  # DBOS's tables and OpenMolt's were all read
	finally:
		engine.dispose()
	return sorted(set(found))


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


def _learner(om: OpenMolt) -> FunctionTool:
	async def learn(i: dict[str, Any], ctx: Any) -> Any:
		om.secrets.add(LATE)  # a token refreshed mid-run: a secret from now on
		return "learned"

	return FunctionTool(handle="learn", description="d", function=learn)


async def test_a_state_given_to_go_on_and_its_answer_are_stored_masked(url: str) -> None:
	"""A parked state saved where a key was no secret yet, resumed with an answer holding one."""
	plain = OpenMolt(entry_points=False)
	first = plain.create_agent(
		name="Asker", model=ScriptedModel([ask_human("Which key?")]), on_human_input_request=park
	)
	parked = await first.run(f"use the token {LATE}")
	assert parked.status == "human_input_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert LATE in json.dumps(saved)  # no secret where it was saved
	await plain.aclose()

	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY, LATE])
	model = ScriptedModel([finish(result="done")])
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=park)
	try:
		result = await agent.resume(saved, answer=f"the key is {KEY}")
		assert result.ok
		seen = model.requests[0].messages
		assert "[redacted]" in seen[-1].content and not leaks(repr(seen), KEY, LATE)
		assert not leaks(json.dumps(result.state.to_dict()), KEY, LATE)
	finally:
		await om.aclose()
	assert not (found := stored_leaks(url, KEY, LATE)), found


async def test_an_answer_to_a_parked_run_is_stored_masked(url: str) -> None:
	"""om.answer: the recorded answer, its message to the workflow and the run's state."""
	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY])
	model = ScriptedModel([ask_human("Which key?"), finish(result="done")])
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=park)
	try:
		parked = await agent.run("ask me")
		assert parked.status == "human_input_required"
		await om.answer(parked.state.run_id, f"the key is {KEY}")
		result = await om.result(parked.state.run_id)
		assert result is not None and result.ok
		assert "[redacted]" in model.requests[1].messages[-1].content
	finally:
		await om.aclose()
	assert not (found := stored_leaks(url, KEY)), found


async def test_approval_decisions_are_stored_masked_and_still_accepted(url: str) -> None:
	"""A decision's note and edited input show a key: stored masked, the decision still good."""
	got: list[dict[str, Any]] = []

	async def send(i: dict[str, Any], ctx: Any) -> Any:
		got.append(dict(i))
		return "sent"

	tool = FunctionTool(
		handle="send",
		description="d",
		function=send,
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
	)
	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY])
	model = ScriptedModel([call_tool("local.send", text="hi"), finish(result="done")])
	agent = om.create_agent(
		name="Sender", model=model, tools=[tool], requires_approval=["local.send"]
	)
	try:
		parked = await agent.run("send it")
		assert parked.status == "approval_required"
		[request] = agent.approval_requests(parked.state)
		decision = request.approve(input={"text": f"with {KEY}"}, reason=f"fine, {KEY}")
		result = await agent.resume(parked.state, decision=decision)
		assert result.ok, result.error
		assert got == [{"text": "with [redacted]"}]  # what a durable run's tool always got
		assert not leaks(json.dumps(result.state.to_dict()), KEY)
	finally:
		await om.aclose()
	assert not (found := stored_leaks(url, KEY)), found


async def test_a_failed_run_is_stored_masked(url: str) -> None:
	"""A provider error quoting the key: the step's error and the run's error are masked."""

	def down(request: Any) -> Any:
		raise ProviderError(f"bad key {KEY}", provider="x", status_code=401, retryable=False)

	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY])
	agent = om.create_agent(name="Failing", model=ScriptedModel([down]))
	try:
		with pytest.raises(RunError) as caught:
			await agent.run("go")
		assert not leaks(str(caught.value), KEY)
		assert not leaks(json.dumps(caught.value.to_dict()), KEY)
	finally:
		await om.aclose()
	assert not (found := stored_leaks(url, KEY)), found


async def test_a_secret_learned_mid_run_is_masked_in_what_is_stored_after(url: str) -> None:
	"""The input held a token before it was a secret: its park, answer and output hold it masked."""
	om = OpenMolt(durability=url, entry_points=False)
	model = ScriptedModel([call_tool("local.learn"), ask_human("Go on?"), finish(result="done")])
	agent = om.create_agent(
		name="Learner", model=model, tools=[_learner(om)], on_human_input_request=park
	)
	try:
		parked = await agent.run(f"the token is {LATE}")
		assert parked.status == "human_input_required"
		assert not leaks(json.dumps(parked.state.to_dict()), LATE)
		result = await agent.resume(parked.state, answer=f"yes, {LATE}")
		assert result.ok and not leaks(json.dumps(result.state.to_dict()), LATE)
		run_id = result.state.run_id
	finally:
		await om.aclose()
	# Its input was stored when the token was no secret yet; everything after holds it masked.
	assert not (found := stored_leaks(url, LATE, skip_inputs_of=run_id)), found


async def test_a_run_failing_after_it_learned_a_secret_stores_its_error_masked(url: str) -> None:
	"""The failed run's error carries its state: the token in its input is masked there."""

	def down(request: Any) -> Any:
		raise ProviderError("down for good", provider="x", status_code=500, retryable=False)

	om = OpenMolt(durability=url, entry_points=False)
	agent = om.create_agent(
		name="Learner", model=ScriptedModel([call_tool("local.learn"), down]), tools=[_learner(om)]
	)
	try:
		with pytest.raises(RunError) as caught:
			await agent.run(f"the token is {LATE}")
		assert not leaks(json.dumps(caught.value.to_dict()), LATE)
		run_id = caught.value.result.state.run_id
	finally:
		await om.aclose()
	assert not (found := stored_leaks(url, LATE, skip_inputs_of=run_id)), found


async def test_a_scheduled_run_s_input_is_stored_masked(url: str) -> None:
	"""A schedule whose input holds a key: the due time's workflow input is masked."""
	om = OpenMolt(durability=url, entry_points=False, secrets=[KEY])
	model = ScriptedModel([finish(result="ok")])
	agent = om.create_agent(name="Digest", model=model)
	agent.schedule({"type": "interval", "value": 3600, "id": "digest", "input": f"use {KEY}"})
	async with om:
		with anyio.fail_after(60):
			record = await om.scheduler.get("digest").run_now()
		assert record.status == "success", record.error
		assert "[redacted]" in model.requests[0].messages[0].content
		om.scheduler.stop()
	assert not (found := stored_leaks(url, KEY)), found


def _sending(om: OpenMolt, got: list[dict[str, Any]], model: ScriptedModel) -> Any:
	async def send(i: dict[str, Any], ctx: Any) -> Any:
		got.append(dict(i))
		return "sent"

	tool = FunctionTool(
		handle="send",
		description="d",
		function=send,
		input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
	)
	return om.create_agent(
		name="Sender",
		model=model,
		tools=[tool],
		requires_approval=["local.send"],
		on_human_input_request=park,
	)


async def _decide_answer_and_crash(
	durability: dict[str, Any], got: list[dict[str, Any]], seen: list[str], runs: list[str]
) -> None:
	asked = anyio.Event()

	async def hang(request: Any) -> Any:
		seen.append(request.messages[-1].content)
		asked.set()
		await anyio.sleep_forever()

	om = OpenMolt(durability=durability, entry_points=False, secrets=[KEY])
	replies: list[Any] = [call_tool("local.send", text="hi"), ask_human("More?"), hang]
	agent = _sending(om, got, ScriptedModel(replies))
	try:
		parked = await agent.run("send it")
		runs.append(parked.state.run_id)
		[request] = agent.approval_requests(parked.state)
		decision = request.approve(input={"text": f"with {KEY}"}, reason=f"fine, {KEY}")
		question = await agent.resume(parked.state, decision=decision)
		assert question.status == "human_input_required", question.error
		await om.answer(parked.state.run_id, f"yes, {KEY}")
		with anyio.fail_after(30):
			await asked.wait()  # the answer's turn reached the model; the crash comes now
	finally:
		await stop_process()


async def _recover(durability: dict[str, Any], got: list[dict[str, Any]], run_id: str) -> Any:
	om = OpenMolt(durability=durability, entry_points=False, secrets=[KEY])
	model = ScriptedModel([finish(result="done")])
	_sending(om, got, model)
	durable = om.durability
	assert durable is not None
	try:
		await durable.start()  # recovers the segment: its masked decision and answer read again
		with anyio.fail_after(60):
			return await om.result(run_id), model
	finally:
		await stop_process()


def test_a_recovered_run_goes_on_from_the_masked_decision_and_answer_as_the_first_did(
	store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Crashed after a masked decision and answer: recovered, it reads what the first execution read."""
	monkeypatch.setenv("OPENMOLT_APPROVAL_KEY", "a shared approval key of 32 bytes!")
	durability = {"url": store, "worker_id": "mask-worker", "heartbeat": 0.2, "lapse": 1.0}
	got: list[dict[str, Any]] = []
	seen: list[str] = []
	runs: list[str] = []
	anyio.run(_decide_answer_and_crash, durability, got, seen, runs)
	result, model = anyio.run(_recover, durability, got, runs[0])
	assert result is not None and result.output == {"result": "done"}, result
	assert got == [{"text": "with [redacted]"}]  # the approved call ran once, not again
	[read] = [r.messages[-1].content for r in model.requests]
	assert read == seen[0] and "yes, [redacted]" in read  # the same turn as before the crash
	assert not (found := stored_leaks(store, KEY)), found
