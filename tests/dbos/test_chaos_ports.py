"""An observer's port around a durable run's: the run keeps what the durable port knows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.durability import RunPort
from openmolt_core.observe import ObservedRun, RunObserver
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


class Timed:
	"""A port that times each step and forwards the protocol's members (no `ForwardingPort`)."""

	def __init__(self, port: RunPort, keys: list[str]) -> None:
		self.port = port
		self.keys = keys

	@property
	def replaying(self) -> bool:
		return self.port.replaying

	@property
	def deliver_replayed(self) -> bool:
		return self.port.deliver_replayed

	def now(self) -> float:
		return self.port.now()

	async def deadline(self, seconds: float) -> float:
		return await self.port.deadline(seconds)

	async def sleep(self, seconds: float) -> None:
		await self.port.sleep(seconds)

	def reserve(self, keys: Sequence[str]) -> None:
		self.port.reserve(keys)

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		self.keys.append(key)
		return await self.port.step(key, fn, encode=encode, decode=decode)


class Timing(RunObserver):
	"""Wraps each run's port in a `Timed` one."""

	def __init__(self) -> None:
		self.keys: list[str] = []

	def wrap_port(self, run: ObservedRun, port: RunPort) -> RunPort:
		return Timed(port, self.keys)


async def test_an_in_doubt_call_is_not_run_again_under_an_observer_s_own_port(url: str) -> None:
	"""A call a dead worker started is in doubt, though an observer wraps the port in its own.

	The loop asks the run's port whether it records the starts of calls; an observer's port
	that implements the protocol (its step, clock and sleep) but not the optional members
	answered no, and the refund the dead worker had sent was sent again.
	"""
	refunds: list[str] = []

	@tool(labels=["outbound"], in_doubt="fail")
	def refund(payment: str) -> str:
		"""Refund.

		Args:
			payment: The payment.
		"""
		refunds.append(payment)
		return "refunded"

	timing = Timing()
	om = OpenMolt(durability=url, entry_points=False, observers=[timing])
	model = ScriptedModel([call_tool("local.refund", payment="P-1"), finish("settled")])
	agent = om.create_agent(name="Refunds", model=model, tools=[refund])
	try:
		await om.durability.start()  # type: ignore[union-attr]
		engine = om.durability.engine  # type: ignore[union-attr]
		# What the worker that died recorded as it sent the refund.
		assert not engine.record_start("r-1", "tool:1:0:local.refund", "r-1")
		result = await agent.run("refund P-1", history=RunState(run_id="r-1"))
		assert result.status == "success", result.error
		assert refunds == []
		assert "in doubt" in model.requests[1].messages[-1].content
		assert "tool:1:0:local.refund" in timing.keys  # the observer's port was used
	finally:
		await om.aclose()


async def test_a_sub_agent_call_in_doubt_is_not_run_again_under_an_observer_s_own_port(
	url: str,
) -> None:
	"""A sub-agent's call a dead worker started follows its tools' policy under an observer's
	port: the sub-agent does not run again, nor write its ledger twice."""
	lines: list[str] = []

	@tool(in_doubt="fail")
	def ledger(line: str) -> str:
		"""Write a line.

		Args:
			line: The line.
		"""
		lines.append(line)
		return "written"

	om = OpenMolt(durability=url, entry_points=False, observers=[Timing()])
	clerk = om.create_agent(
		name="Clerk",
		model=ScriptedModel([call_tool("local.ledger", line="L-1"), finish("kept")]),
		tools=[ledger],
	)
	model = ScriptedModel([call_tool("local.Clerk", task="keep it"), finish("settled")])
	agent = om.create_agent(name="Boss", model=model, tools=[clerk])
	try:
		await om.durability.start()  # type: ignore[union-attr]
		engine = om.durability.engine  # type: ignore[union-attr]
		assert not engine.record_start("r-2", "tool:1:0:local.Clerk", "r-2")
		result = await agent.run("go", history=RunState(run_id="r-2"))
		assert result.status == "success", result.error
		assert lines == []
		assert "in doubt" in model.requests[1].messages[-1].content
	finally:
		await om.aclose()
