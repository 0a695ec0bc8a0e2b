"""The tool contract, the context a tool runs in, and tools made from Python functions."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

if TYPE_CHECKING:
	import httpx

	from openmolt_core.files import FileStore

__all__ = ["FunctionTool", "Tool", "ToolContext", "schema_of"]


@dataclass(slots=True)
class ToolContext:
	"""What a tool can see while it runs.

	Args:
		agent: The agent's name.
		integration: The id of the integration the tool belongs to.
		config: The integration's credential config (secrets included; never send it to a model).
		memory: The agent's memory as ``{"longTerm": ..., "shortTerm": ...}`` at call time.
		http: Returns the shared ``httpx.AsyncClient`` (created on first use).
		auth: The ``httpx.Auth`` built from the agent's credential, for HTTP tools.
		redact: Secret values to scrub from anything the tool reports.
		files: The instance's file store: save binary results, resolve file references.
		extras: Anything the integration or the application passes along.
	"""

	agent: str
	integration: str
	config: Mapping[str, Any] = field(default_factory=dict)
	memory: Mapping[str, str] = field(default_factory=dict)
	http: Callable[[], httpx.AsyncClient] | None = None
	auth: httpx.Auth | None = None
	redact: frozenset[str] = frozenset()
	files: FileStore | None = None
	extras: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Tool(Protocol):
	"""Something an agent can call: a handle, a description, schemas, scopes and ``execute``."""

	handle: str
	"""The tool's name inside its integration (``getForecast``)."""
	description: str
	"""What the tool does, written for a model."""
	input_schema: dict[str, Any]
	"""JSON Schema of the input object."""
	output_schema: dict[str, Any] | None
	"""JSON Schema of the output, a guide for the model (not enforced)."""
	scopes: Sequence[str]
	"""The integration scopes an agent needs to see and call this tool."""

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Run the tool.

		Args:
			input: The input, already validated against ``input_schema``.
			context: The agent, integration and credential the call runs for.

		Returns:
			A JSON-serializable result.

		Raises:
			ToolError: The tool failed in a way the model should hear about.
		"""
		...


def schema_of(schema: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any] | None:
	"""Return a JSON Schema for a pydantic model class or a JSON Schema dict.

	Args:
		schema: A pydantic model class, a JSON Schema dict, or None.
	"""
	if schema is None:
		return None
	if isinstance(schema, dict):
		return schema
	if isinstance(schema, type) and issubclass(schema, BaseModel):
		return schema.model_json_schema()
	raise TypeError(f"expected a pydantic model class or a JSON Schema dict, got {schema!r}")


ExecuteFn = Callable[[dict[str, Any], ToolContext], Awaitable[Any] | Any]


@dataclass(slots=True)
class FunctionTool:
	"""A tool whose work is a Python function (sync or async), as the spec's ``execute`` form.

	Args:
		handle: The tool's name inside its integration.
		description: What the tool does, for the model.
		function: Called as ``function(input, context)``; may be sync or async.
		input_schema: JSON Schema of the input (a pydantic model class is converted).
		output_schema: JSON Schema of the output, if known.
		scopes: Scopes needed to see and call the tool.
	"""

	handle: str
	description: str
	function: ExecuteFn
	input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Call the function, awaiting it when it is async."""
		result = self.function(input, context)
		if inspect.isawaitable(result):
			result = await result
		if isinstance(result, BaseModel):
			return result.model_dump(mode="json")
		return result
