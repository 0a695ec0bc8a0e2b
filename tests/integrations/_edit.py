"""A built-in integration with one tool changed: the negative cases of the conformance checks.

Each reference check is shown to fail when one thing it checks is wrong. These helpers make that
one change on a copy (the integration and its other tools stay as they are).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from openmolt_core.integrations.model import Integration

__all__ = ["pop_at", "with_input_schema", "with_tool"]


def with_tool(
	integration: Integration, handle: str, update: Callable[[Any], dict[str, Any]]
) -> Integration:
	"""The integration with the tool ``handle`` replaced by ``tool.model_copy(update=update(tool))``.

	Raises:
		AssertionError: The integration has no tool of that handle (the case would test nothing).
	"""
	tools = [t.model_copy(update=update(t)) if t.handle == handle else t for t in integration.tools]
	assert any(t.handle == handle for t in integration.tools), f"{integration.id} has no {handle}"
	return integration.model_copy(update={"tools": tools})


def with_input_schema(
	integration: Integration, handle: str, change: Callable[[dict[str, Any]], None]
) -> Integration:
	"""The integration with ``change`` applied to a deep copy of one tool's input schema."""

	def update(tool: Any) -> dict[str, Any]:
		schema = copy.deepcopy(tool.input_schema)
		change(schema)
		return {"input_schema": schema}

	return with_tool(integration, handle, update)


def pop_at(path: str, *keys: str) -> Callable[[dict[str, Any]], None]:
	"""A change that removes ``keys`` from the property at the dotted ``path`` of a schema.

	A ``[]`` step goes into an array's items (``media.[].caption``).
	"""

	def change(schema: dict[str, Any]) -> None:
		node = schema
		for step in path.split("."):
			node = node["items"] if step == "[]" else node["properties"][step]
		for key in keys:
			node.pop(key)

	return change
