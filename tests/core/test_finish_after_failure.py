"""A finish written in the same reply as a command that failed does not end the run.

The model writes ``finish`` before it sees the results of the commands ahead of it in the reply.
When one of them failed (a tool raised, a capability or a person refused a call), the
output and the status it wrote rest on a result it never read: the run ended ``success`` with
"sent" while the mail server was down. The finish now waits: the model reads the failure, and the
finish result says why it did not run.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from openmolt import Capability, OpenMolt, Refuse
from openmolt_core.commands import CallTool
from openmolt_core.hooks import Run, ToolSpec
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from tests._results import results_at

pytestmark = pytest.mark.anyio


@tool(name="send", description="Send a mail.")
def send(to: str) -> str:
	"""Send a mail."""
	if to == "down":
		raise RuntimeError("smtp down")
	return "sent"


def _agent(replies: list[Any], **options: Any) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel(replies)
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Mailer", model=model, tools=[send], max_steps=5, **options)
	return agent, model


@pytest.mark.parametrize("status", ["success", "failure"])
async def test_a_finish_after_a_failed_call_waits_for_the_model(status: str) -> None:
	"""The run goes on; the model reads the failure and why its finish did not run."""
	agent, model = _agent(
		[
			{"commands": [call_tool("local.send", to="down"), finish("sent", status=status)]},
			finish("could not send", status="failure"),
		]
	)
	result = await agent.run("mail it")
	assert (result.status, result.output) == ("failure", "could not send")
	failed, held = results_at(model, 1)
	assert failed["ok"] is False and "smtp down" in failed["error"]
	assert held["ok"] is False and held["command"] == "finish"
	assert "command 0 (callTool local.send) failed" in held["error"]


class _Closed(Capability):
	"""Refuses every call."""

	name: ClassVar[str] = "closed"

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		return Refuse("mail is closed today")


async def test_a_finish_after_a_refused_call_waits() -> None:
	"""A call a capability refused failed too: the finish that counted on it does not run."""
	agent, model = _agent(
		[
			{"commands": [call_tool("local.send", to="ana"), finish("sent")]},
			finish("closed", status="failure"),
		],
		capabilities=[_Closed()],
	)
	result = await agent.run("mail it")
	assert result.output == "closed"
	refused, held = results_at(model, 1)
	assert "mail is closed today" in refused["error"]
	assert held["command"] == "finish" and held["ok"] is False


async def test_a_finish_after_calls_that_worked_ends_the_run() -> None:
	"""Calls that succeeded let the finish of the same reply run, as before."""
	agent, model = _agent([{"commands": [call_tool("local.send", to="ana"), finish("sent")]}])
	result = await agent.run("mail it")
	assert (result.status, result.output, model.calls) == ("success", "sent", 1)
