"""The commands a model sends back: the one source of the command protocol.

A reply is one JSON object ``{"commands": [...]}``. Each command is a pydantic model below, chosen by
its ``type``. The parser, the reply schema (`openmolt_core.envelope`), the prompt's command section
(`openmolt_core.prompt`: each model's docstring, ``example`` and ``rules``) and the loop's dispatch
derive from these models.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
	"COMMANDS",
	"COMMAND_TYPES",
	"ENDS_REPLY",
	"MAX_WAIT_SECONDS",
	"PLAN_STATUSES",
	"CallTool",
	"Command",
	"Finish",
	"PlanStatus",
	"PlanStep",
	"RequestHumanInput",
	"SubStep",
	"UpdateMemory",
	"UpdatePlan",
	"Wait",
	"command_class",
]

MAX_WAIT_SECONDS: float = 60
"""The longest a ``wait`` command may pause, as the spec asks (one minute)."""

PlanStatus = Literal["pending", "inProgress", "completed", "failed"]
"""Where a plan step stands."""

PLAN_STATUSES: tuple[str, ...] = get_args(PlanStatus)
"""The plan statuses, in order."""


class _Strict(BaseModel):
	"""Base of the command models: strict, closed, fields by name or by alias."""

	# Strict: a reply's types are JSON's ("10" and true are no number), as the reply schema says.
	# Each is built on first use.
	model_config: ClassVar[ConfigDict] = ConfigDict(
		extra="forbid", populate_by_name=True, strict=True, defer_build=True
	)


class SubStep(_Strict):
	"""One sub-step of a plan step. Sub-steps have no sub-steps of their own."""

	name: str = Field(description="What this sub-step does.")
	status: PlanStatus = Field(default="pending", description="Where the sub-step stands.")
	notes: str = Field(default="", description="Details, errors or findings.")


class PlanStep(_Strict):
	"""One step of the agent's plan."""

	name: str = Field(description="What this step does.")
	status: PlanStatus = Field(default="pending", description="Where the step stands.")
	notes: str = Field(default="", description="Details, errors or findings.")
	sub_steps: list[SubStep] = Field(
		default=[], alias="subSteps", description="Optional sub-steps, one level deep."
	)


class _Command(_Strict):
	"""Base of the commands: what the prompt says about each one lives on its class."""

	example: ClassVar[dict[str, Any]]
	"""A valid instance, shown to the model in the prompt (a test checks it parses)."""
	rules: ClassVar[tuple[str, ...]] = ()
	"""What the model must know to use the command well, one line each."""
	shape: ClassVar[tuple[str, ...]] = ()
	"""What the reply schema says too: the prompt states it only when structured output is off."""
	approval_rules: ClassVar[tuple[str, ...]] = ()
	"""Rules shown only to agents with tools that wait for approval."""


class CallTool(_Command):
	"""Call one of your tools."""

	type: Literal["callTool"]
	tool: str = Field(description="The tool handle, `integration.tool`.")
	input: dict[str, Any] = Field(description="The tool's input object.")
	reason: str = Field(
		default="", description="Why you make the call, for the person who approves it."
	)

	example: ClassVar[dict[str, Any]] = {
		"type": "callTool",
		"tool": "slack.postMessage",
		"input": {"channel": "C123", "text": "Hi"},
	}
	rules: ClassVar[tuple[str, ...]] = ("After a failure, change something before retrying.",)
	shape: ClassVar[tuple[str, ...]] = ("input matches the tool's inputSchema.",)
	approval_rules: ClassVar[tuple[str, ...]] = (
		'Tools marked "approval":true wait for a person: add a short "reason"; they may refuse '
		"or change the input.",
	)


class Wait(_Command):
	"""Pause, when something needs time."""

	type: Literal["wait"]
	seconds: float = Field(ge=0, le=MAX_WAIT_SECONDS, description="How long to wait.")

	example: ClassVar[dict[str, Any]] = {"type": "wait", "seconds": 10}
	shape: ClassVar[tuple[str, ...]] = (f"At most {MAX_WAIT_SECONDS:g} seconds.",)


class UpdatePlan(_Command):
	"""Replace your whole plan."""

	type: Literal["updatePlan"]
	plan: list[PlanStep] = Field(description="The whole plan.")

	example: ClassVar[dict[str, Any]] = {
		"type": "updatePlan",
		"plan": [
			{"name": "Find the data", "status": "completed", "notes": "3 files"},
			{
				"name": "Write the report",
				"status": "inProgress",
				"notes": "",
				"subSteps": [{"name": "Draft", "status": "pending", "notes": ""}],
			},
		],
	}
	rules: ClassVar[tuple[str, ...]] = ("Plan tasks of several steps and keep the plan current.",)
	shape: ClassVar[tuple[str, ...]] = (
		f"Steps have a status ({', '.join(PLAN_STATUSES)}) and subSteps one level deep.",
	)


class UpdateMemory(_Command):
	"""Remember something."""

	type: Literal["updateMemory"]
	memory: Literal["longTerm", "shortTerm"] = Field(description="Which memory.")
	mode: Literal["replace", "append"] = Field(default="append", description="How to change it.")
	data: str = Field(description="What to store.")

	example: ClassVar[dict[str, Any]] = {
		"type": "updateMemory",
		"memory": "shortTerm",
		"mode": "append",
		"data": "customer id cus_1",
	}
	rules: ClassVar[tuple[str, ...]] = ("shortTerm is for this task, longTerm for later runs.",)
	shape: ClassVar[tuple[str, ...]] = ("mode append or replace.",)


class RequestHumanInput(_Command):
	"""Ask a person, only when you cannot go on without them."""

	type: Literal["requestHumanInput"]
	message: str = Field(description="One clear, self-contained question.")

	example: ClassVar[dict[str, Any]] = {
		"type": "requestHumanInput",
		"message": "Pay invoice INV-1 or INV-2?",
	}
	rules: ClassVar[tuple[str, ...]] = ("The answer comes next step.",)


class Finish(_Command):
	"""End the task."""

	type: Literal["finish"]
	status: Literal["success", "failure"] = Field(
		default="success", description="success, or failure when it cannot be done."
	)
	output: Any = Field(default=None, description="The result; it must match the output schema.")
	human_message: str = Field(
		default="", alias="humanMessage", description="A short message for the person."
	)

	example: ClassVar[dict[str, Any]] = {
		"type": "finish",
		"status": "success",
		"output": {"result": "..."},
		"humanMessage": "Report saved.",
	}
	rules: ClassVar[tuple[str, ...]] = (
		"humanMessage is a short note for the person (on failure, say why).",
	)
	shape: ClassVar[tuple[str, ...]] = (
		"status success or failure; output matches the output schema.",
	)


Command = Annotated[
	CallTool | Wait | UpdatePlan | UpdateMemory | RequestHumanInput | Finish,
	Field(discriminator="type"),
]
"""Any one command; pydantic picks the class from ``type``."""

COMMANDS: tuple[type[_Command], ...] = get_args(get_args(Command)[0])
"""The command classes, in the order the prompt and the reply schema list them."""

COMMAND_TYPES: tuple[str, ...] = tuple(
	get_args(c.model_fields["type"].annotation)[0] for c in COMMANDS
)
"""The ``type`` of each command, in the same order."""

_BY_TYPE: dict[str, type[_Command]] = dict(zip(COMMAND_TYPES, COMMANDS, strict=True))

ENDS_REPLY: frozenset[type[_Command]] = frozenset({Finish, RequestHumanInput})
"""Commands after which nothing more of a reply runs."""


def command_class(kind: str) -> type[_Command] | None:
	"""The command class for a ``type`` value, or None when there is none."""
	return _BY_TYPE.get(kind)
