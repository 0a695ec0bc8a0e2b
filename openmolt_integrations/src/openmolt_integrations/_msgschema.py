"""Small builders for the JSON Schemas of the messaging integrations' tool inputs.

They only shorten the literal dicts: ``string("Channel id.")`` is
``{"type": "string", "description": "Channel id."}``. Every builder takes a description, because a
model reads it to fill the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["array", "boolean", "integer", "number", "obj", "string"]


def string(description: str, **extra: Any) -> dict[str, Any]:
	"""A string property (``enum``, ``default``, ``format``, ``pattern``... go in ``extra``)."""
	return {"type": "string", "description": description, **extra}


def integer(description: str, **extra: Any) -> dict[str, Any]:
	"""An integer property (``minimum``, ``maximum``, ``default``... go in ``extra``)."""
	return {"type": "integer", "description": description, **extra}


def number(description: str, **extra: Any) -> dict[str, Any]:
	"""A number property."""
	return {"type": "number", "description": description, **extra}


def boolean(description: str, **extra: Any) -> dict[str, Any]:
	"""A boolean property."""
	return {"type": "boolean", "description": description, **extra}


def array(description: str, items: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
	"""An array property whose items follow ``items``."""
	return {"type": "array", "description": description, "items": dict(items), **extra}


def obj(
	properties: Mapping[str, Mapping[str, Any]],
	required: Iterable[str] = (),
	description: str | None = None,
	**extra: Any,
) -> dict[str, Any]:
	"""An object schema; the tool input itself or a nested object property.

	Args:
		properties: Property name to its schema.
		required: The names that must be present.
		description: What the object is (needed for nested properties, optional at the top).
		**extra: More keywords (``additionalProperties``, ``minProperties``...).
	"""
	schema: dict[str, Any] = {
		"type": "object",
		"properties": {k: dict(v) for k, v in properties.items()},
	}
	if description is not None:
		schema["description"] = description
	req = list(required)
	if req:
		schema["required"] = req
	schema.update(extra)
	return schema
