"""The JSON Schema of one agent's reply, derived from the command models.

The schema says exactly what the parser accepts for this agent: ``callTool`` is one variant per
visible tool (its handle as a ``const``, its own input schema), ``requestHumanInput`` appears only
when a person can answer, and ``finish.output`` is the agent's output schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from openmolt_core._support.jsonschema import inline_refs, lift_defs
from openmolt_core.commands import COMMANDS, CallTool, Finish, RequestHumanInput

if TYPE_CHECKING:
	from openmolt_core._support.schemafit import Repair
	from openmolt_core.llm import StructuredMode

__all__ = [
	"GENERATED",
	"Envelope",
	"FittedSchema",
	"ToolSchema",
	"command_schema",
	"derive_command_schema",
]

GENERATED = Path(__file__).with_name("command_schemas.json")
"""The built-in commands' schemas, as `derive_command_schema` makes them (a test checks)."""


@cache
def _generated() -> dict[str, dict[str, Any]]:
	try:
		text = GENERATED.read_text(encoding="utf-8")
	except OSError:  # a bundle that left the package's data files out: the models describe them
		return {}
	loaded: dict[str, dict[str, Any]] = json.loads(text)
	return loaded


def derive_command_schema(command: type[BaseModel]) -> dict[str, Any]:
	"""The JSON Schema of one command class, from its pydantic model (builds the model).

	Args:
		command: A command class.
	"""
	raw = command.model_json_schema(by_alias=True)
	out: dict[str, Any] = inline_refs(raw, raw.get("$defs", {}))
	return out


@cache
def command_schema(command: type[BaseModel]) -> dict[str, Any]:
	"""The JSON Schema of one command class, self-contained, without titles or descriptions.

	A built-in command's is read from `GENERATED`, which builds no pydantic model.

	Args:
		command: A class of `openmolt_core.commands.COMMANDS`.

	Returns:
		A schema that is shared: copy it before changing it.
	"""
	schema = _generated().get(command.__name__) if command in COMMANDS else None
	return derive_command_schema(command) if schema is None else schema


@dataclass(frozen=True, slots=True)
class ToolSchema:
	"""One tool as the reply schema sees it.

	Args:
		handle: The tool's full handle (``integration.tool``).
		input_schema: JSON Schema of its input object.
	"""

	handle: str
	input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Envelope:
	"""The reply schema of one agent, in parts a provider can fit to its dialect.

	Args:
		tools: The tools the agent may call, in the order of its tools list.
		output_schema: The JSON Schema ``finish.output`` must match (None: any JSON value).
		human_input: Whether ``requestHumanInput`` is allowed.
		approvals: Whether some tools wait for approval: ``callTool`` then takes a ``reason``.
	"""

	tools: tuple[ToolSchema, ...] = ()
	output_schema: dict[str, Any] | None = None
	human_input: bool = False
	approvals: bool = False
	_schema: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

	@classmethod
	def build(
		cls,
		tools: Sequence[ToolSchema],
		*,
		output_schema: dict[str, Any] | None,
		human_input: bool,
		approvals: bool = False,
	) -> Envelope:
		"""The envelope for an agent's visible tools, output schema and human-input setting."""
		return cls(tuple(tools), output_schema, human_input, approvals)

	def tool_variant(
		self, tool: ToolSchema, input_schema: dict[str, Any] | None = None
	) -> dict[str, Any]:
		"""The ``callTool`` variant for one tool (with another input schema when given)."""
		properties = {
			"type": {"const": "callTool"},
			"tool": {"const": tool.handle},
			"input": tool.input_schema if input_schema is None else input_schema,
		}
		if self.approvals:
			properties["reason"] = command_schema(CallTool)["properties"]["reason"]
		return {
			"type": "object",
			"properties": properties,
			"required": ["type", "tool", "input"],
			"additionalProperties": False,
		}

	def finish_variant(self, output_schema: dict[str, Any] | None = None) -> dict[str, Any]:
		"""The ``finish`` variant (with another output schema when given)."""
		base = command_schema(Finish)
		schema = self.output_schema if output_schema is None else output_schema
		props = dict(base["properties"])
		required = list(base["required"])
		if schema is None:
			props["output"] = {"default": None}
		else:
			props["output"] = schema
			required.append("output")
		return {**base, "properties": props, "required": required}

	def other_variants(self) -> list[dict[str, Any]]:
		"""The variants of the commands other than ``callTool`` and ``finish``, in order."""
		return [
			command_schema(c)
			for c in COMMANDS
			if c not in (CallTool, Finish) and (self.human_input or c is not RequestHumanInput)
		]

	def wrap(self, variants: Sequence[dict[str, Any]]) -> dict[str, Any]:
		"""The whole reply schema around a list of command variants."""
		return {
			"type": "object",
			"properties": {
				"commands": {"type": "array", "items": {"anyOf": list(variants)}, "minItems": 1}
			},
			"required": ["commands"],
			"additionalProperties": False,
		}

	def schema(self) -> dict[str, Any]:
		"""The canonical reply schema (built once; shared, so copy it before changing it).

		A tool's (or the output's) ``$defs`` are lifted to the root as ``t0.Address`` and so on.
		"""
		if not self._schema:
			defs: dict[str, Any] = {}
			variants = [
				self.tool_variant(t, lift_defs(t.input_schema, f"t{i}", defs))
				for i, t in enumerate(self.tools)
			]
			variants += self.other_variants()
			output = (
				None if self.output_schema is None else lift_defs(self.output_schema, "out", defs)
			)
			variants.append(self.finish_variant(output))
			self._schema.update(self.wrap(variants))
			if defs:
				self._schema["$defs"] = defs
		return self._schema


@dataclass(frozen=True, slots=True, eq=False)  # never compared: no __eq__ to generate
class _EnvelopeRepair:
	"""Repairs a decoded reply command by command: by ``type``, and by ``tool`` for tool calls."""

	commands: Mapping[tuple[str, str | None], Repair] = field(default_factory=dict)

	def __call__(self, data: Any) -> Any:
		if isinstance(data, dict) and isinstance(data.get("commands"), list):
			items = data["commands"]
		elif isinstance(data, list):
			items = data
		elif isinstance(data, dict) and "type" in data:
			items = [data]
		else:
			return data
		for item in items:
			if not isinstance(item, dict) or not isinstance(item.get("type"), str):
				continue
			kind = item["type"]
			tool = item.get("tool") if kind == "callTool" else None
			if kind == "callTool" and isinstance(item.get("input"), str):
				# Sent as JSON text (a tool that fell back, a model not constrained): decoded.
				from openmolt_core._support.schemafit import Decode

				item["input"] = Decode(objects=True)(item["input"])
				continue
			repair = self.commands.get((kind, tool if isinstance(tool, str) else None))
			if repair is not None:
				repair(item)
		return data


@dataclass(frozen=True, slots=True)
class FittedSchema:
	"""The reply schema fitted to a dialect, and how to read replies made under it.

	Args:
		schema: The schema to send; with mode ``off``, the canonical schema for reference (the
			provider sends none).
		mode: Which mode took effect.
		encoded: Handles of the tools whose input is sent as a JSON string.
		output_encoded: Whether ``finish.output`` is sent as a JSON string.
		notes: Why each fallback happened, for ``--dry-run`` and the ``llmOutput`` event.
		relaxed: Assertion keywords the provider does not enforce (the loop still checks them).
		dialect: The dialect's name, or None when the provider declared none.
	"""

	schema: dict[str, Any] | None
	mode: StructuredMode
	encoded: frozenset[str] = frozenset()
	output_encoded: bool = False
	notes: tuple[str, ...] = ()
	relaxed: frozenset[str] = frozenset()
	dialect: str | None = None
	_repair: Repair = field(default_factory=_EnvelopeRepair, compare=False, repr=False)

	def restore(self, data: Any) -> Any:
		"""Undo the dialect's changes on a decoded reply, before the loop validates it.

		JSON-string tool inputs (and output, when encoded) are decoded (a string that is not
		JSON is left as is), and nulls that stand for a property left out are removed. The
		reply, of any shape, is changed in place and returned.

		Args:
			data: The decoded reply (``{"commands": [...]}`` or a looser shape).

		Raises:
			UnsafeJson: JSON text it decoded holds what a state cannot (``NaN``, a key twice,
				a lone surrogate). Nothing else raises, whatever the shape.
		"""
		return self._repair(data)

	def output_repair(self) -> tuple[bool, Repair | None] | None:
		"""How `restore` changes a ``finish``'s ``output``, for previews of it as it streams.

		Returns:
			Whether a null output is dropped and the repair of its value, or None when
			`restore` leaves the output as the model wrote it (or sent it as JSON text).
		"""
		commands = getattr(self._repair, "commands", None)
		finish = commands.get(("finish", None)) if isinstance(commands, Mapping) else None
		for name, drop, repair in getattr(finish, "props", ()):
			if name == "output" and (drop or repair is not None) and not self.output_encoded:
				return drop, repair
		return None
