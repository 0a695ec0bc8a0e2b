"""An agent served over MCP asks the client's user to approve its calls (`openmolt_mcp._ask`)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_mcp._ask import NO_APPROVER
from openmolt_mcp.server import agent_server
from tests._results import results_at

pytestmark = pytest.mark.anyio

SECRET = "sk-live-abcdef0123456789"


def _agent(replies: list[Any], **options: Any) -> tuple[Any, Any, ScriptedModel, list[str]]:
	made: list[str] = []

	@tool(labels=[])
	def refund(order: str, note: str = "") -> str:
		"""Refund an order.

		Args:
			order: The order.
			note: A note.
		"""
		made.append(order)
		return f"refunded {order}"

	model = ScriptedModel(replies)
	om = OpenMolt(entry_points=False, secrets={"stripe": SECRET})
	agent = om.create_agent(
		name="Helper", model=model, tools=[refund], requires_approval=["local.refund"], **options
	)
	return om, agent, model, made


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_clients_user_approves_or_denies_each_call(mode: str) -> None:
	"""On MCP 2026-07-28 the form travels in the call's result, on a legacy connection as
	``elicitation/create``: an approval runs the call, a "no" with a reason, a decline and a
	dismissal deny it (the model reads why), and the form names the agent, tool and input."""
	om, agent, model, made = _agent(
		[
			call_tool("local.refund", order="A1"),
			finish({"result": "Refunded."}),
			call_tool("local.refund", order="A2"),
			finish({"result": "Not refunded."}),
			call_tool("local.refund", order="A3"),
			finish({"result": "Declined."}),
			call_tool("local.refund", order="A4"),
			finish({"result": "Dismissed."}),
		]
	)
	replies = [
		ElicitResult(action="accept", content={"approve": True}),
		ElicitResult(action="accept", content={"approve": False, "reason": "too large"}),
		ElicitResult(action="decline"),
		ElicitResult(action="cancel"),
	]
	asked: list[tuple[str, list[str]]] = []

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append((params.message, params.requested_schema["required"]))
		return replies.pop(0)

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, mode=mode, elicitation_callback=elicit) as client:
			outcomes = [
				await client.call_tool("Helper", {"input": f"Refund A{i}"}) for i in range(1, 5)
			]
	await om.aclose()
	assert [o.is_error for o in outcomes] == [False] * 4
	assert made == ["A1"]
	assert asked[0] == (
		'Helper wants to call local.refund with {"order": "A1"}. Approve it?',
		["approve"],
	)
	assert len(asked) == 4
	denied = [str(results_at(model, at)) for at in (3, 5, 7)]
	assert "too large" in denied[0]
	assert all("did not approve" in d for d in denied[1:]), denied


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_that_cannot_ask_denies_the_call_and_the_run_goes_on(mode: str) -> None:
	"""A client without elicitation: the call is not made, the model reads that nobody could
	approve it, and the client gets the run's answer (not Python advice)."""
	om, agent, model, made = _agent(
		[call_tool("local.refund", order="A1"), finish({"result": "Could not refund."})]
	)
	with anyio.fail_after(30):
		async with Client(agent_server(agent, ask_client=True), cache=None, mode=mode) as client:
			outcome = await client.call_tool("Helper", {"input": "Refund A1"})
	await om.aclose()
	assert made == []
	assert outcome.is_error is False
	assert outcome.content[0].text == '{"result": "Could not refund."}'
	assert NO_APPROVER in str(results_at(model, 1))


async def test_the_operators_own_handler_decides_and_the_client_is_not_asked() -> None:
	"""An agent with its own ``on_approval_request`` keeps it: the client's form never shows."""
	om, agent, _, made = _agent(
		[call_tool("local.refund", order="A1"), finish({"result": "Refunded."})],
		on_approval_request=lambda request: request.approve(),
	)
	asked: list[str] = []

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append(params.message)
		return ElicitResult(action="decline")

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, elicitation_callback=elicit) as client:
			outcome = await client.call_tool("Helper", {"input": "Refund A1"})
	await om.aclose()
	assert (asked, made, outcome.is_error) == ([], ["A1"], False)


async def test_without_ask_client_a_parked_approval_is_a_tool_error_in_the_clients_terms() -> None:
	"""Served without asking the client, a call waiting for approval ends the call with an
	error that names the tool and says nothing was done, not a Python method to call."""
	om, agent, _, made = _agent([call_tool("local.refund", order="A1")])
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			outcome = await client.call_tool("Helper", {"input": "Refund A1"})
	await om.aclose()
	text = outcome.content[0].text
	assert outcome.is_error is True and made == []
	assert "local.refund waits for an approval" in text and "nothing it would do was done" in text
	assert "resume" not in text and "agent." not in text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_form_masks_the_instances_secrets_in_the_calls_input(mode: str) -> None:
	"""The form leaves the instance: a secret the model put in the input shows masked."""
	om, agent, _, made = _agent(
		[call_tool("local.refund", order="A1", note=f"key {SECRET}"), finish({"result": "No."})]
	)
	asked: list[str] = []

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append(params.message)
		return ElicitResult(action="decline")

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, mode=mode, elicitation_callback=elicit) as client:
			await client.call_tool("Helper", {"input": "Refund A1"})
	await om.aclose()
	assert len(asked) == 1 and SECRET not in asked[0] and "[redacted]" in asked[0]
	assert made == []


async def test_two_calls_waiting_in_one_step_get_a_form_each() -> None:
	"""Two calls of one reply wait together: the result carries two forms, and each is
	decided by its own reply (one approved, one denied)."""
	om, agent, model, made = _agent(
		[
			[call_tool("local.refund", order="A1"), call_tool("local.refund", order="A2")],
			finish({"result": "One refunded."}),
		]
	)
	asked: list[str] = []

	async def elicit(context: Any, params: Any) -> ElicitResult:
		asked.append(params.message)
		return ElicitResult(action="accept", content={"approve": '"A1"' in params.message})

	with anyio.fail_after(30):
		server = agent_server(agent, ask_client=True)
		async with Client(server, cache=None, elicitation_callback=elicit) as client:
			outcome = await client.call_tool("Helper", {"input": "Refund both"})
	await om.aclose()
	assert outcome.is_error is False
	assert sorted(asked) == [
		'Helper wants to call local.refund with {"order": "A1"}. Approve it?',
		'Helper wants to call local.refund with {"order": "A2"}. Approve it?',
	]
	assert made == ["A1"]
	read = results_at(model, 1)
	assert "refunded A1" in str(read[0]) and "did not approve" in str(read[1]), read
	read = results_at(model, 1)
	assert "refunded A1" in str(read[0]) and "did not approve" in str(read[1]), read
