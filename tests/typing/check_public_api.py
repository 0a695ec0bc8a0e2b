"""Public use of OpenMolt, type-checked by mypy --strict (never run)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from openmolt import FunctionTool, ModelConfig, OpenMolt, RunResult, ToolContext
from openmolt_core.events import ToolCallEvent
from openmolt_core.testing import ScriptedModel, call_tool, finish


class Report(BaseModel):
	result: str


def add(input: dict[str, Any], context: ToolContext) -> dict[str, int]:
	return {"sum": int(input["a"]) + int(input["b"])}


async def example() -> str:
	om = OpenMolt(llm_providers={"openai": {"api_key": "sk"}}, max_steps=5, verbose=False)
	agent = om.create_agent(
		name="Typed",
		model=ScriptedModel([call_tool("local.add", a=1, b=2), finish(result="3")]),
		model_config=ModelConfig(thinking="low", temperature=0.2),
		tools=[FunctionTool(handle="add", description="Add.", function=add)],
		output_schema=Report,
	)

	def on_call(event: ToolCallEvent) -> None:
		print(event.tool, event.input)

	agent.on("tool:call", on_call)
	result: RunResult = await agent.run("go")
	assert isinstance(result.output, Report)
	return result.output.result


async def approvals_and_sub_agents() -> str:
	from openmolt import ApprovalDecision, ApprovalRequest, Approvals
	from openmolt_core.approvals import SQLiteLedger
	from openmolt_core.approvals import ApprovalDecisionEvent

	async def decide(request: ApprovalRequest) -> ApprovalDecision:
		if request.tool.endswith("Refund"):
			return request.deny("needs a ticket")
		return request.approve(input={**request.input, "note": request.reason})

	om = OpenMolt(
		requires_approval=["stripe:writes"],
		approvals=Approvals(key="k" * 32, ledger=SQLiteLedger("approvals.db")),
	)
	helper = om.create_agent(name="helper", model=ScriptedModel([finish("ok")]))
	agent = om.create_agent(
		name="Boss",
		model=ScriptedModel([finish("done")]),
		tools=[helper, helper.as_tool(name="second")],
		requires_approval=["local.helper"],
		on_approval_request=decide,
	)

	def on_decision(event: ApprovalDecisionEvent) -> None:
		print(event.action, event.decision_id, event.parent_run_id)

	agent.on("approval:decision", on_decision)
	parked = await agent.run("go")
	if parked.status == "approval_required":
		requests: list[ApprovalRequest] = agent.approval_requests(parked.state)
		decision: ApprovalDecision = requests[0].approve()
		parked = await agent.resume(parked.state.to_dict(), decision=[decision.to_dict()])
	return parked.status


async def many_tools_fallback_and_results() -> float | None:
	from collections.abc import Sequence

	from openmolt_core.fallback import ModelFallbackEvent
	from openmolt_core.toolsearch import EmbeddingSearch, ToolSearch

	async def embed(texts: Sequence[str]) -> list[list[float]]:
		return [[float(len(t))] for t in texts]

	om = OpenMolt()
	agent = om.create_agent(
		name="Scaled",
		model=["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"],
		fallback_models=["google:gemini-2.5-flash"],
		integrations=["gmail", "slack"],
		tool_loading=ToolSearch(searcher=EmbeddingSearch(embed), pinned=["slack.postMessage"]),
		config={"max_result_chars": 8000, "max_result_chars_per_tool": {"gmail.*": 20000}},
	)

	def on_fallback(event: ModelFallbackEvent) -> None:
		print(event.from_model, event.to_model, event.reason, event.status_code)

	agent.on("model:fallback", on_fallback)
	result = await agent.run("go")
	loaded: list[str] = result.state.loaded
	print(loaded, result.state.stored, result.state.models, agent.models)
	return result.usage_by_model["openai:gpt-5-mini"].cost_usd


async def typed_options() -> None:
	"""create_agent's typed options: config, integrations and memory, checked by mypy."""
	from openmolt import (
		AgentConfig,
		AgentMemory,
		IntegrationCredential,
		IntegrationEntry,
		MemoryPart,
		RetryPolicy,
	)

	om = OpenMolt(retry=RetryPolicy(attempts=2))
	entry = IntegrationEntry(
		integration="notion",
		credential=IntegrationCredential(type="bearer", config={"apiKey": "k"}),
		scopes=["read"],
	)
	agent = om.create_agent(
		name="Typed options",
		model=ScriptedModel([finish(result="ok")]),
		config=AgentConfig(max_steps=3, verbose=False),
		integrations=["weather", entry],
		memory=AgentMemory(long_term=MemoryPart(data="notes"), short_term="today"),
	)
	steps: int = agent.max_steps
	assert steps == 3


async def streamed_run() -> str:
	"""agent.stream(): typed events, the same RunResult, and a provider that streams."""
	from collections.abc import AsyncIterator

	from openmolt import RunStream
	from openmolt_core import StreamingProvider, TextDelta
	from openmolt_core.events import Event, TextDeltaEvent
	from openmolt_core.llm import ModelRequest, ModelResponse
	from openmolt_core.streaming import StreamChunk

	class Typist:
		name = "typist"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			return ModelResponse(text="{}")

		async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
			yield TextDelta("{}")
			yield ModelResponse(text="{}")

	provider: StreamingProvider = Typist()
	om = OpenMolt()
	agent = om.create_agent(name="Streamer", model=provider)
	run: RunStream
	async with agent.stream("go") as run:
		async for event in run:
			seen: Event = event
			if isinstance(seen, TextDeltaEvent):
				print(seen.text, seen.field, seen.index)
		result: RunResult = await run.result()
	return result.status


async def end_users_accounts(callback_url: str) -> str:
	"""Credentials per end user and the consent a parked run waits for (openmolt_core.accounts)."""
	from openmolt_core.accounts import Connected, authorization_requests
	from openmolt_core.accounts import AuthorizationRequestEvent

	om = OpenMolt(
		credential_store="credentials.enc",
		accounts={"redirect_uri": "https://app.example/auth/callback", "key": "k" * 32},
	)
	agent = om.create_agent(
		name="Inbox",
		model="openai:gpt-5-mini",
		integrations=[{"integration": "gmail", "account": "user", "scopes": ["read"]}],
	)

	def on_request(event: AuthorizationRequestEvent) -> None:
		print(event.request["url"], event.request["user"])

	agent.on("authorization:request", on_request)
	result = await agent.run("Summarise my mail", user="alice")
	if result.status == "authorization_required":
		urls: list[str] = [r["url"] for r in authorization_requests(result.state)]
		print(urls, result.state.user)
		connected: Connected = await om.accounts.complete(callback_url)
		print(connected.integration, connected.user, connected.run_id)
		result = await agent.resume(result.state)
	return result.status


async def an_agent_and_its_instance() -> None:
	"""The kernel's views of an agent and its instance, and OpenMolt.of for the rest."""
	from openmolt_core.agent import Agent, Instance, SkillInfo
	from openmolt_core.durability import DurableAgent
	from openmolt_core.schedule import IntervalSchedule

	om = OpenMolt()
	agent: Agent = om.create_agent(name="Views", model="openai:gpt-5-mini")
	owner: Instance = om  # an OpenMolt offers what an agent needs of its instance
	durable: DurableAgent = agent  # and an agent what a durability backend needs of it
	skills: tuple[SkillInfo, ...] = agent.skills
	agent.schedule(IntervalSchedule(type="interval", value=60))
	same: OpenMolt = OpenMolt.of(agent)
	print(owner.secrets, durable.name, skills, await same.pending())


def a_capability_sees_a_typed_agent() -> None:
	"""What a capability reads of the agent is typed: a misspelt attribute fails the check.

	The ``type: ignore`` lines are the test: were the agent typed ``Any``, mypy --strict would
	report them as unused.
	"""
	from openmolt_core.hooks import Call, CallDrive, Capability, RunOwner

	class Greeter(Capability):
		name = "greeter"
		takes = "greeting"

		async def wrap_call(self, call: Call, drive: CallDrive) -> RunResult:
			agent: RunOwner = call.agent
			print(agent.name, agent.first_message(call.asked, call.state))
			print(call.agent.nmae)  # type: ignore[attr-defined]
			return await drive(None)

	print(Greeter.name)


async def the_dispatchers_take_their_hooks_arguments(run: Any, call: Any) -> None:
	"""Each hook tuple of `Hooks` is told or asked as the hook is, typed from its signature.

	The ``type: ignore`` lines are the test: a dispatcher typed ``Callable[..., Any]`` would let
	them through, and mypy --strict would report the ignores as unused.
	"""
	from openmolt_core.hooks import Hooks, first_answer, tell, tell_async, until_stop

	hooks = Hooks()
	tell(hooks.tool_done, run, call, 0, {"tool": "local.echo", "ok": True, "result": 1})
	tell(hooks.tool_done, run, call, "0", {})  # type: ignore[arg-type]  # index: int
	stop = await until_stop(hooks.before_step, run)
	print(stop.reason if stop is not None else "")
	await tell_async(hooks.on_run_end, run)  # type: ignore[arg-type]  # the result is missing
	reason: str | None = first_answer(hooks.last_step, run)
	policy: Literal["retry", "ask", "fail"] | None = first_answer(hooks.nested_in_doubt, run)
	wrong: int | None = first_answer(hooks.why_hidden, run, "x")  # type: ignore[assignment]
	print(reason, policy, wrong, hooks.memory_start(run, None, 3))  # type: ignore[arg-type]  # state: RunState
