"""The commands a model sends back, as a pydantic discriminated union on ``type``.

A reply is one JSON object ``{"commands": [...]}``. Each command is one of:

| type | fields |
| --- | --- |
| ``callTool`` | ``tool`` (``integration.handle``), ``input`` (object) |
| ``wait`` | ``seconds`` (0 < s ≤ 60) |
| ``updatePlan`` | ``plan`` (list of steps, one level of sub-steps) |
| ``updateMemory`` | ``memory`` (``longTerm`` or ``shortTerm``), ``mode`` (``replace`` or ``append``), ``data`` |
| ``requestHumanInput`` | ``message`` |
| ``finish`` | ``status`` (``success`` or ``failure``), ``output``, ``humanMessage`` |
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
	"MAX_WAIT_SECONDS",
	"CallTool",
	"Command",
	"CommandEnvelope",
	"Finish",
	"PlanStatus",
	"PlanStep",
	"RequestHumanInput",
	"SubStep",
	"UpdateMemory",
	"UpdatePlan",
	"Wait",
	"command_adapter",
]

MAX_WAIT_SECONDS = 60.0
"""The longest a ``wait`` command may pause, as the spec asks (one minute)."""

PlanStatus = Literal["pending", "inProgress", "completed", "failed"]


class _Strict(BaseModel):
	model_config = ConfigDict(extra="forbid", populate_by_name=True)


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
		default_factory=list, alias="subSteps", description="Optional sub-steps, one level deep."
	)


class CallTool(_Strict):
	"""Call one tool with its input."""

	type: Literal["callTool"]
	tool: str = Field(description="The tool handle, `integration.tool`.")
	input: dict[str, Any] = Field(default_factory=dict, description="The tool's input object.")


class Wait(_Strict):
	"""Pause the run for a while (at most a minute)."""

	type: Literal["wait"]
	seconds: float = Field(ge=0, description="How long to wait, at most 60 seconds.")


class UpdatePlan(_Strict):
	"""Replace the plan with a new one."""

	type: Literal["updatePlan"]
	plan: list[PlanStep]


class UpdateMemory(_Strict):
	"""Replace or append to long-term or short-term memory."""

	type: Literal["updateMemory"]
	memory: Literal["longTerm", "shortTerm"]
	mode: Literal["replace", "append"] = "append"
	data: str


class RequestHumanInput(_Strict):
	"""Ask a person a question and wait for the answer."""

	type: Literal["requestHumanInput"]
	message: str


class Finish(_Strict):
	"""End the run with the output."""

	type: Literal["finish"]
	status: Literal["success", "failure"] = "success"
	output: Any = None
	human_message: str = Field(default="", alias="humanMessage")


Command = Annotated[
	CallTool | Wait | UpdatePlan | UpdateMemory | RequestHumanInput | Finish,
	Field(discriminator="type"),
]
"""Any one command; pydantic picks the class from ``type``."""


class CommandEnvelope(_Strict):
	"""A model's whole reply: ``{"commands": [...]}``."""

	commands: list[Command] = Field(min_length=1)


command_adapter: TypeAdapter[Any] = TypeAdapter(Command)
"""Validates one command dict into its class."""
