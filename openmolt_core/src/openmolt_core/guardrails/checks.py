r"""Two simple built-in guardrails: a maximum size and a JSON-Schema check.

```python
from openmolt_core.guardrails import json_schema, max_size

guardrails = [
	max_size(20_000),  # the run's input, as JSON
	json_schema(  # recipients of our domain only
		{"properties": {"to": {"type": "string", "pattern": "@example\\.com$"}}},
		on="tool_call",
		tools=["gmail.sendMessage"],
	),
]
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails.base import Guardrail, GuardrailCheck, Stage, Verdict, refuse, trip

__all__ = ["json_schema", "max_size"]


def _act(action: str, reason: str) -> Verdict:
	return trip(reason) if action == "trip" else refuse(reason)


def _check_action(action: str, where: str) -> None:
	if action not in ("refuse", "trip"):
		raise ConfigurationError(f"{where}: action must be 'refuse' or 'trip'")


def max_size(
	limit: int,
	on: Stage = "input",
	*,
	action: Literal["refuse", "trip"] = "refuse",
	tools: Sequence[str] = (),
	labels: Sequence[str] = (),
	name: str = "max_size",
) -> Guardrail:
	"""A guardrail that refuses (or trips on) a value longer than ``limit`` characters of JSON.

	A string counts its characters; any other value, the characters of its compact JSON.

	Args:
		limit: The most characters allowed.
		on: The stage (at the input, ``refuse`` stops the run like ``trip``).
		action: ``refuse`` (the call does not run, the result is withheld, the finish is refused)
			or ``trip``.
		tools: At the tool stages, the tools it checks (rules of `openmolt_core.policy`).
		labels: At the tool stages, the labels of the tools it checks.
		name: Its name in results, events and the audit.

	Raises:
		ConfigurationError: ``limit`` is not a positive whole number, or an unknown action.
	"""
	if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
		raise ConfigurationError(f"max_size: limit must be a whole number >= 1, got {limit!r}")
	_check_action(action, "max_size")
	from openmolt_core.prompt import dumps

	def check(c: GuardrailCheck) -> Verdict | None:
		size = len(c.value) if isinstance(c.value, str) else len(dumps(c.value))
		if size <= limit:
			return None
		what = {"input": "the input", "tool_call": "the input", "output": "the output"}.get(
			c.stage, "the result"
		)
		return _act(action, f"{what} is {size} characters, more than the {limit} allowed")

	return Guardrail(check, on=on, name=name, tools=tuple(tools), labels=tuple(labels))


def json_schema(
	schema: dict[str, Any],
	on: Stage = "tool_call",
	*,
	action: Literal["refuse", "trip"] = "refuse",
	tools: Sequence[str] = (),
	labels: Sequence[str] = (),
	name: str = "json_schema",
) -> Guardrail:
	"""A guardrail that refuses (or trips on) a value that does not match a JSON Schema.

	Beyond a tool's own input schema, it narrows what a call may do (recipients of one domain,
	amounts under a cap); on the output, it holds the finish to a stricter schema. The schema is
	checked like tool inputs are (`openmolt_core._support.jsonschema`).

	Args:
		schema: The JSON Schema.
		on: The stage (default: a tool call's input).
		action: ``refuse`` (the model reads the errors) or ``trip``.
		tools: At the tool stages, the tools it checks (rules of `openmolt_core.policy`).
		labels: At the tool stages, the labels of the tools it checks.
		name: Its name in results, events and the audit.

	Raises:
		ConfigurationError: The schema is not a dict, or an unknown action.
	"""
	if not isinstance(schema, dict):
		raise ConfigurationError("json_schema: schema must be a JSON Schema dict")
	_check_action(action, "json_schema")
	from openmolt_core._support.jsonschema import (
		JsonSchemaValidator,
		ValidationError,
		format_errors,
	)

	validator = JsonSchemaValidator(schema)

	def check(c: GuardrailCheck) -> Verdict | None:
		try:
			validator.validate(c.value)
		except ValidationError as exc:
			return _act(action, f"it does not match the allowed shape: {format_errors(exc)}")
		return None

	return Guardrail(check, on=on, name=name, tools=tuple(tools), labels=tuple(labels))
