"""Agents as tools: one agent delegates a task to another, which runs as one of its tool calls.

```python
researcher = om.create_agent(name="researcher", model=..., output_schema=Findings)
writer = om.create_agent(name="writer", model=..., tools=[researcher])  # or researcher.as_tool()
```

The writer sees ``local.researcher``, with input ``{"task": "..."}`` and the researcher's output
schema as the tool's output schema. A call runs the researcher to its end:

- with its own budget (its ``max_steps``, ``max_tokens``, ``max_cost`` and ``timeout``), inside
  the caller's remaining time, tokens and cost (`openmolt_core.tools.CallingRun`);
- its usage and cost are added to the calling run's (so they count in the caller's
  ``max_tokens`` too, and in its result), and under its models in ``usage_by_model``;
- its events reach the caller's handlers as well (masked with the caller's secrets too), with
  ``parent_run_id`` set, and its run id is the caller's run id followed by ``.<step>.<index>``
  of the call, so a viewer can nest it;
- it asks approvals with its own ``on_approval_request``, else with the caller's;
- its questions and its calls' reasons, which reach the caller's people, are judged by its own
  guardrails for words for people, then by its callers' (`openmolt_core.capabilities.safety.CallerWords`);
- its output is the tool's result; a sub-run that does not succeed is an error result that says
  how it ended (one that parked says what it waits for and how to let it go on: an approver or
  a person's handler for the sub-agent, or a capability that decides without parking); its
  parked state names its caller (``state.caller``) and is not resumed on its own
  (`openmolt_core.agent.Agent.resume` refuses it: it would run without its caller);
- taint crosses the boundary both ways (`openmolt_core.taint`): the tool's labels are the union
  of the sub-agent's tools' labels (its guardrail agents' tools and its built-in tools
  included: `openmolt_core.taint.nested_labels`), so its reads of private or untrusted data and its outbound
  channels count in the caller (a tainted caller's call of a sub-agent that can send data out
  waits for approval, and the sub-agent's untrusted results taint the caller), and a sub-agent
  called by a tainted run starts tainted;
- in a durable run, a call of it found in doubt after a crash follows the strictest in-doubt
  policy of its tools (``ask`` at least when it may send data out), of its guardrail agents' and
  of its caller's guardrail agents that judge its words (they run inside the call too: the
  caller's safety capability sets the call's ``in_doubt_at_least``): it is retried, which runs
  the sub-agent again from its start, only when everything that would run again may.

Agents cannot call each other in a cycle: ``create_agent`` refuses a tool graph with one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from openmolt_core._support.words import quantity
from openmolt_core.agent import hand_up
from openmolt_core.errors import ConfigurationError, RunError, ToolError
from openmolt_core.taint import nested_in_doubt, nested_labels

if TYPE_CHECKING:
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.tools import CallingRun, InDoubt, ToolContext

__all__ = ["TASK_SCHEMA", "AgentTool", "SubAgent", "check_cycles", "nested_in_doubt"]

TASK_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"task": {
			"type": "string",
			"description": "The task, with everything the agent needs to know to do it.",
		}
	},
	"required": ["task"],
	"additionalProperties": False,
}
"""The default input of an agent tool: one task, given to the sub-agent as its input."""


class SubAgent(Protocol):
	"""What an agent tool needs of the agent it runs (an `openmolt_core.agent.Agent` has it)."""

	name: str
	"""The agent's name."""
	instructions: str
	"""Its instructions (the tool's default description starts with them)."""

	@property
	def output_schema(self) -> dict[str, Any] | None:
		"""The JSON Schema of its output (the tool's output schema)."""
		...

	@property
	def labels(self) -> dict[str, frozenset[str]]:
		"""The labels of its visible tools, by handle.

		An agent without it is taken as ``untrusted`` and ``outbound``: what it reads and
		sends is unknown (`openmolt_core.taint.nested_labels`).
		"""
		...

	@property
	def in_doubt(self) -> dict[str, InDoubt]:
		"""The in-doubt policy of its visible tools, by handle (`openmolt_core.capabilities.indoubt`)."""
		...

	@property
	def lists_tools_at_run_time(self) -> bool:
		"""Whether some of its tools are listed at each run (what they do is unknown now)."""
		...

	@property
	def sub_agents(self) -> Sequence[SubAgent]:
		"""The agents it calls as tools."""
		...

	async def run(
		self,
		input: Any = None,
		*,
		history: RunState | Mapping[str, Any] | None = None,
		parent: CallingRun | None = None,
	) -> RunResult:
		"""Run it to its end, nested in ``parent``."""
		...


_HANDLE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(slots=True)
class AgentTool:
	"""A tool that runs an agent (made by ``agent.as_tool()`` or ``create_agent(tools=[agent])``).

	Args:
		agent: The agent that does the work.
		handle: The tool's name (default: the agent's name, made into an identifier).
		description: What the agent does, for the calling model (default: from its instructions).
		input_schema: The tool's input schema. With the default (`TASK_SCHEMA`) the sub-agent's
			input is the task text; with another schema it is the whole input object.
	"""

	agent: SubAgent
	handle: str = ""
	description: str = ""
	input_schema: dict[str, Any] = field(default_factory=lambda: dict(TASK_SCHEMA))
	scopes: Sequence[str] = ()
	output_schema: dict[str, Any] | None = field(init=False, default=None)
	"""The sub-agent's output schema."""
	spends_budget: ClassVar[bool] = True
	"""Its calls spend the calling run's cost budget: calls made at once share it
	(`openmolt_core._cost.share`)."""

	@classmethod
	def of(
		cls,
		agent: SubAgent,
		name: str | None = None,
		description: str | None = None,
		input_schema: Mapping[str, Any] | None = None,
	) -> AgentTool:
		"""The tool ``agent.as_tool(...)`` makes: None takes each default (`OpenMolt.agent_tool`).

		Args:
			agent: The agent each call runs.
			name: The tool's handle.
			description: What it does, for the calling model.
			input_schema: The tool's input (default: `TASK_SCHEMA`); a mapping is copied.
		"""
		schema = TASK_SCHEMA if input_schema is None else input_schema
		return cls(
			agent,
			"" if name is None else name,
			"" if description is None else description,
			dict(schema) if isinstance(schema, Mapping) else schema,
		)

	@property
	def labels(self) -> frozenset[str]:
		"""The labels of the sub-agent's tools: what it reads and sends, the caller's taint sees.

		The union of its visible tools' labels (each resolved by its own policy, so a tool that
		declares none counts as ``untrusted`` and ``outbound``). An agent whose tools are listed
		at run time (an MCP server) also counts as ``untrusted`` and ``outbound``: what those
		tools do is not known when the caller is created.
		"""
		return nested_labels(self)

	@property
	def in_doubt(self) -> InDoubt:
		"""What a durable caller does with a call of it found started but unfinished after a crash.

		The sub-agent's run is not journaled step by step inside its caller's call: in doubt, it
		would start again from its first step, its model asked again. So the call is as strict as
		its strictest tool (``fail`` over ``ask`` over ``retry``), and ``ask`` at least when it
		may send data out (``outbound`` in its `labels`). The caller's guardrail agents that
		judge the sub-agent's words run inside the call too: the caller's record of the tool
		counts them (``BoundTool.in_doubt_at_least``, which the caller's safety capability sets).
		"""
		return nested_in_doubt(self.agent)

	def __post_init__(self) -> None:
		for what, value in (("name", self.handle), ("description", self.description)):
			if not isinstance(value, str):
				raise ConfigurationError(
					f"as_tool: {what} must be text, got {type(value).__name__} {value!r}"
				)
		if not isinstance(self.input_schema, dict):
			raise ConfigurationError(
				f"as_tool: input_schema must be a JSON Schema dict, got "
				f"{type(self.input_schema).__name__}"
			)
		if self.input_schema != TASK_SCHEMA:
			from openmolt_core._support.metaschema import check_schema

			if problems := check_schema(self.input_schema):
				raise ConfigurationError(
					"as_tool: input_schema is not a valid JSON Schema: "
					+ "; ".join(f"input_schema: {p}" for p in problems)
				)
		self.output_schema = self.agent.output_schema
		if not self.handle:
			self.handle = _HANDLE.sub("_", self.agent.name).strip("_") or "agent"
		if not self.description:
			first = self.agent.instructions.strip().split("\n\n", 1)[0].strip()
			self.description = f"Ask the agent {self.agent.name!r} to do a task. " + (
				first[:300] if first else ""
			)

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Run the sub-agent to its end and return its output.

		Raises:
			ToolError: The sub-run did not succeed (failure, a budget, a park, an error).
		"""
		task: Any = input.get("task") if self.input_schema == TASK_SCHEMA else input
		name = self.agent.name
		try:
			result = await self.agent.run(task, parent=context.run)
		except RunError as exc:
			hand_up(context.run, exc.result.state)
			raise ToolError(
				f"the agent {name!r} failed: {exc}", tool=self.handle, retryable=True
			) from exc
		hand_up(context.run, result.state)
		if result.state.pending is not None:
			raise ToolError(_parked(name, result), tool=self.handle)
		if result.status != "success":
			why = result.error or result.human_message or "no message"
			raise ToolError(
				f"the agent {name!r} ended with status {result.status} after "
				f"{quantity(result.steps, 'step')}: {why}",
				tool=self.handle,
			)
		output = result.output
		dump = getattr(output, "model_dump", None)
		return dump(mode="json") if callable(dump) else output


def _parked(name: str, result: RunResult) -> str:
	"""What a sub-run that parked says to its caller: what it waits for, and how to allow it."""
	from openmolt_core.observe import waiting_for

	pending = result.state.pending or {}
	kind = pending.get("kind")
	if kind == "human_input":
		fix = (
			f"give agent {name!r} an on_human_input_request that answers, or put what it asks "
			"in the task"
		)
	elif kind == "approval":
		fix = (
			f"give agent {name!r} an on_approval_request (or give one to this agent: a "
			"sub-agent asks its caller's), or drop the approval rule of that tool"
		)
	elif result.status == "authorization_required":
		fix = "the end user connects the account (the link it gives), then run this agent again"
	else:
		by = sorted({str(c.get("by") or kind) for c in pending.get("calls") or ()})
		fix = (
			f"make capability {', '.join(map(repr, by))} decide without parking in this "
			f"agent's runs, or run agent {name!r} on its own (agent.run, not as a tool) and "
			"resume that run (agent.resume(state, given=...))"
		)
	return (
		f"the agent {name!r} parked after {quantity(result.steps, 'step')} ({result.status}), waiting "
		f"for {waiting_for(pending)}; a sub-agent's run cannot park its caller's: {fix}"
	)


def check_cycles(agent: SubAgent) -> None:
	"""Refuse an agent whose tools reach it again through agent tools.

	Args:
		agent: The new agent.

	Raises:
		ConfigurationError: The message shows the cycle (``a -> b -> a``).
	"""
	path: list[SubAgent] = []

	def visit(current: SubAgent) -> None:
		if any(current is seen for seen in path):
			start = next(i for i, seen in enumerate(path) if seen is current)
			names = " -> ".join(a.name for a in [*path[start:], current])
			raise ConfigurationError(
				f"create_agent: agents cannot call each other in a cycle: {names}; remove one "
				"of these agent tools"
			)
		path.append(current)
		for sub in current.sub_agents:
			visit(sub)
		path.pop()

	visit(agent)
