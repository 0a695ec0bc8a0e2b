"""A request the model refuses as longer than its context window: compaction summarises, asks again.

The estimate that triggers compaction before a step can be wrong (a local server's real window
smaller than the one configured, a tokenizer that counts more). When the provider answers that
the prompt is too long (`ProviderError.context_exceeded`), a run that compacts summarises its
older steps under a key of its own (``compact:<step>:1``) and asks the step once more
(``model:<step>:1``); a run that cannot (compaction off, too few steps, still too long) ends on
the provider's error as before. A replay reads every one of those steps from the journal.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from openmolt import OpenMolt, RunError, RunState
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.compaction import estimate_tokens
from openmolt_core.errors import ProviderError
from openmolt_core.llm import Message
from openmolt_core.testing import call_tool, finish
from tests.core._journal import Journal

pytestmark = pytest.mark.anyio


class SmallWindow:
	"""A model whose real window is ``limit`` tokens (estimated): past it, the provider's 400."""

	name = "small"

	def __init__(self, limit: int, steps: int) -> None:
		self.limit = limit
		self.steps = steps
		self.requests: list[ModelRequest] = []
		self.refused: list[int] = []  # the request numbers refused as too long
		self.answered = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.requests.append(replace(request, messages=list(request.messages)))
		tokens = estimate_tokens(request.messages, request.system)
		if tokens > self.limit:
			self.refused.append(len(self.requests))
			raise ProviderError(
				"the prompt is longer than the model's context window (400)",
				provider="small",
				model=request.model,
				status_code=400,
				context_exceeded=True,
			)
		self.answered += 1
		if self.answered >= self.steps:
			commands = [finish("done")]
		else:
			commands = [call_tool("local.echo", i=self.answered, pad="x" * 400)]
		return ModelResponse(
			text=json.dumps({"commands": commands}), usage=Usage(tokens, 20, calls=1)
		)


class Summariser:
	name = "summariser"

	def __init__(self) -> None:
		self.calls = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		self.calls += 1
		steps = json.loads(request.messages[0].content)["steps"]
		return ModelResponse(
			text=f"summary of {len(steps) // 2} steps", usage=Usage(50, 5, calls=1)
		)


def echo(i: int, pad: str) -> dict[str, Any]:
	"""Echo a step."""
	return {"i": i, "pad": pad}


def make(model: Any, summariser: Summariser | None, **options: Any) -> Any:
	om = OpenMolt(entry_points=False, max_steps=100)
	# The configured threshold is far above the model's real window: the estimate never fires.
	options.setdefault("compaction", {"threshold_tokens": 1_000_000, "keep_steps": 2})
	agent = om.create_agent(name="Long", model=model, tools=[echo], **options)
	if summariser is not None:
		agent.compactor = lambda: (summariser, "cheap")
	return agent


class ErrorJournal(Journal):
	"""`tests.core._journal.Journal` that journals a step's error too (as DBOS does) and replays it."""

	def __init__(self, replay: dict[str, Any] | None = None) -> None:
		super().__init__(replay)
		self.order: list[str] = []

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		self.order.append(key)
		if self.replay is not None:
			kind, data = self.replay[key]
			if kind == "error":
				raise data
			return decode(data) if decode else data
		try:
			value = await fn()
		except ProviderError as exc:
			self.values[key] = ("error", exc)
			raise
		self.values[key] = ("value", json.loads(json.dumps(encode(value) if encode else value)))
		return value


async def test_a_refused_step_is_compacted_and_asked_again() -> None:
	"""The 400 for a too-long prompt summarises the older steps; the same step then succeeds."""
	model, summariser = SmallWindow(limit=2500, steps=40), Summariser()
	agent = make(model, summariser)
	seen: list[Any] = []
	agent.on("error", seen.append)
	agent.on("compaction", seen.append)
	result = await agent.run("work long")
	assert result.status == "success", result.error
	assert result.steps == 40  # a retried step is still one step
	# Refused once: the refusal's size is remembered, so the later steps compact before it.
	assert len(model.refused) == 1 and summariser.calls > 1
	first = model.refused[0]
	refused, retried = model.requests[first - 1], model.requests[first]
	assert estimate_tokens(retried.messages, retried.system) < estimate_tokens(
		refused.messages, refused.system
	)
	assert '"compacted":' in retried.messages[0].content
	assert '"compacted":' not in refused.messages[0].content
	# the retried request ends with the same last turn the refused one did
	assert retried.messages[-1].content == refused.messages[-1].content
	errors = [e for e in seen if e.name == "error"]
	assert errors and all(e.kind == "context_exceeded" and not e.fatal for e in errors)
	compactions = [e for e in seen if e.name == "compaction"]
	assert compactions[0].step == errors[0].step
	assert result.state.compaction is not None
	refused_at = result.state.compaction["refused_at"]
	assert refused_at == estimate_tokens(refused.messages, refused.system)
	later = model.requests[first + 1 :]
	assert max(estimate_tokens(r.messages, r.system) for r in later) <= 2500


async def ended(agent: Any) -> Any:
	"""The result a run that ends on the provider's error carries (`RunError`)."""
	with pytest.raises(RunError, match="context window") as info:
		await agent.run("work long")
	result = info.value.result
	assert result is not None and result.status == "error"
	return result


async def test_a_streamed_step_asked_again_after_a_summary_is_its_next_attempt() -> None:
	"""Streaming meets the re-ask: the refused call is attempt 1 of its step (it wrote nothing),
	so the text of the call made after the summary is attempt 2; the other steps' text is 1."""
	from collections.abc import AsyncIterator

	from openmolt_core.streaming import StreamChunk, TextDelta

	class Streamed(SmallWindow):
		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			response = await self.generate(request)  # the refusal is raised before any text
			for i in range(0, len(response.text), 50):
				yield TextDelta(response.text[i : i + 50])
			yield response

	model, summariser = Streamed(limit=2500, steps=12), Summariser()
	agent = make(model, summariser)
	attempts: dict[int, set[int]] = {}
	agent.on("command:ready", lambda e: attempts.setdefault(e.step, set()).add(e.attempt))
	result = await agent.run("work long")
	assert result.status == "success", result.error
	assert len(model.refused) == 1 and len(attempts) == 12
	refused_step = next(step for step, seen in attempts.items() if seen != {1})
	assert attempts[refused_step] == {2}
	assert all(seen == {1} for step, seen in attempts.items() if step != refused_step)


async def test_without_compaction_the_run_ends_on_the_providers_error() -> None:
	"""compaction=False: the refusal ends the run (status error), its state kept, nothing summarised."""
	model = SmallWindow(limit=2500, steps=12)
	agent = make(model, None, compaction=False)
	result = await ended(agent)
	assert len(model.refused) == 1 and len(model.requests) == model.refused[0]
	assert result.state.compaction is None


async def test_too_few_steps_to_summarise_ends_the_run() -> None:
	"""A first step already too long: nothing to summarise, so no summary call and no retry."""
	model, summariser = SmallWindow(limit=10, steps=3), Summariser()
	agent = make(model, summariser)
	await ended(agent)
	assert summariser.calls == 0 and model.refused == [1] and len(model.requests) == 1


async def test_still_too_long_after_the_summary_ends_the_run_after_one_retry() -> None:
	"""One summary and one more try per step: a step still too long then ends the run."""

	class Shrinking(SmallWindow):
		async def generate(self, request: ModelRequest) -> ModelResponse:
			if '"compacted":' in request.messages[0].content:
				self.limit = 0  # after the summary nothing fits
			return await super().generate(request)

	model, summariser = Shrinking(limit=2500, steps=12), Summariser()
	agent = make(model, summariser)
	await ended(agent)
	assert summariser.calls == 1 and len(model.refused) == 2
	assert model.refused[1] == model.refused[0] + 1  # the retry, then the end


async def test_a_replay_reads_the_refusal_the_summary_and_the_retry_from_the_journal() -> None:
	"""Keys model:N, compact:N:1, model:N:1 in that order; a replay asks no model again."""
	model, summariser = SmallWindow(limit=2500, steps=12), Summariser()
	agent = make(model, summariser)
	port = ErrorJournal()
	state = RunState(run_id="r1")
	state.messages.append(Message("user", agent.first_message("work long", state)))
	await agent._prepare()
	first = await agent._loop(agent._context(state, port), None)
	assert first.status == "success"
	step = next(int(k.split(":")[1]) for k, (kind, _) in port.values.items() if kind == "error")
	at = port.order.index(f"model:{step}")
	assert port.order[at : at + 3] == [f"model:{step}", f"compact:{step}:1", f"model:{step}:1"]
	asked, summaries = len(model.requests), summariser.calls

	replayed = ErrorJournal(replay=port.values)
	again = RunState(run_id="r1")
	again.messages.append(Message("user", agent.first_message("work long", again)))
	second = await agent._loop(agent._context(again, replayed), None)
	assert len(model.requests) == asked and summariser.calls == summaries
	assert replayed.order == port.order
	assert second.status == "success"
	assert again.to_dict() == state.to_dict()


def test_each_api_marks_a_prompt_past_the_window() -> None:
	"""`ProviderError.context_exceeded` is a plain attribute that survives a pickle round trip."""
	import pickle

	error = ProviderError("too long", provider="p", status_code=400, context_exceeded=True)
	assert pickle.loads(pickle.dumps(error)).context_exceeded is True
	assert ProviderError("other", provider="p").context_exceeded is False
	assert error.to_dict()["context_exceeded"] is True
