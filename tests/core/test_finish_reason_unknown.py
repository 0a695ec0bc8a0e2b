"""A finish reason the loop does not know is read as an incomplete reply: none of it runs.

The built-in providers map their reasons onto the loop's (`openmolt_core.llm.ModelResponse`);
a provider of a plugin or of the application may pass its API's own (``length``,
``content_filter``, ``SAFETY``, ``error``). Unknown is unsafe: the reply may have been cut or
filtered, so its commands are not run and the model is asked again. A compaction summary with
such a reason does not stand for the steps it would replace. None (a provider that does not say)
is read as a complete reply, as before.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from openmolt import OpenMolt
from openmolt_core.compaction import unfit_summary
from openmolt_core.llm import ModelRequest, ModelResponse, Usage
from openmolt_core.result import RunResult
from openmolt_core.testing import call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


class Reasons:
	"""A provider whose first reply calls a tool with the given finish reason, then finishes."""

	name = "reasons"

	def __init__(self, reason: str | None) -> None:
		self.reason = reason
		self.requests: list[ModelRequest] = []

	async def generate(self, request: ModelRequest) -> ModelResponse:
		"""The scripted replies."""
		self.requests.append(replace(request, messages=list(request.messages)))
		if len(self.requests) == 1:
			body = {"commands": [call_tool("local.send", to="x")]}
			return ModelResponse(json.dumps(body), Usage(1, 1), finish_reason=self.reason)
		return ModelResponse(json.dumps({"commands": [finish("done")]}), Usage(1, 1))


async def _run(model: Reasons) -> tuple[RunResult, list[str]]:
	"""Run an agent whose model first calls ``local.send``: its result, and whom it sent to."""
	sent: list[str] = []

	@tool(labels=[])
	def send(to: str) -> str:
		"""Send.

		Args:
			to: Whom.
		"""
		sent.append(to)
		return "sent"

	async with OpenMolt(entry_points=False) as om:
		agent = om.create_agent(name="A", model=model, tools=[send])
		return await agent.run("go"), sent


@pytest.mark.parametrize("reason", ["length", "content_filter", "SAFETY", "error", "pause_turn"])
async def test_a_reply_with_an_unknown_finish_reason_runs_none_of_its_commands(
	reason: str,
) -> None:
	model = Reasons(reason)
	result, sent = await _run(model)
	assert result.ok
	assert sent == []  # the cut or filtered reply's call did not run
	told = model.requests[1].messages[-1].content
	assert "stopped before it was complete" in told


@pytest.mark.parametrize("reason", [None, "stop"])
async def test_a_complete_or_unsaid_finish_reason_runs_the_reply(reason: str | None) -> None:
	result, sent = await _run(Reasons(reason))
	assert result.ok
	assert sent == ["x"]


def test_a_summary_with_an_unknown_finish_reason_does_not_stand() -> None:
	why = unfit_summary(ModelResponse("the summary", Usage(1, 1), finish_reason="length"))
	assert why is not None and "stopped before its end" in why
	assert unfit_summary(ModelResponse("the summary", Usage(1, 1), finish_reason=None)) is None
