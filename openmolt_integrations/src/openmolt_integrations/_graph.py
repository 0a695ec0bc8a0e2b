"""What the Meta Graph API integrations (Meta Ads, Instagram) share: the version and small helpers.

The version is the one the official ``facebook-business`` SDK targets (26.0.3 ships
``API_VERSION = 'v26.0'``); the conformance tests compare the two.
"""

from __future__ import annotations

from typing import Any

__all__ = [
	"GRAPH_URL",
	"GRAPH_VERSION",
	"fields_input",
	"fields_param",
	"graph_schema",
	"json_param",
	"pass_through",
]

GRAPH_VERSION = "v26.0"
"""The Graph API version every Meta tool calls (the ``facebook-business`` SDK's ``API_VERSION``)."""

GRAPH_URL = f"https://graph.facebook.com/{GRAPH_VERSION}"
"""The base URL of the Graph API at `GRAPH_VERSION`."""


def fields_input(default: str) -> dict[str, Any]:
	"""The ``fields`` input: a list of Graph field names, with the default the tool asks for.

	Args:
		default: The comma-separated fields sent when the input is left out.
	"""
	return {
		"type": "array",
		"items": {"type": "string"},
		"description": f"Fields to return (default: {default}).",
	}


def fields_param(default: str) -> str:
	"""The ``fields`` query template: the input's names comma-joined, else ``default``.

	Args:
		default: The comma-separated fields sent when the input is left out.
	"""
	return "{% if input.fields %}{{ input.fields | join: ',' }}{% else %}" + default + "{% endif %}"


def json_param(name: str) -> str:
	"""A query template sending input ``name`` JSON-encoded, or nothing when it is left out.

	Graph reads list and object query parameters (``effective_status``, ``time_range``) as JSON.

	Args:
		name: The input field (a Graph parameter name).
	"""
	return "{% if input.NAME %}{{ input.NAME | json }}{% endif %}".replace("NAME", name)


# Liquid reads these words as keywords after a dot, so their inputs are looked up by subscript.
_LIQUID_WORDS = frozenset({"limit", "offset", "reversed", "cols"})


def pass_through(*names: str) -> dict[str, str]:
	"""Query or body entries that send each input field under its own (the vendor's) name.

	A Liquid keyword (``limit``) is written ``input["limit"]``, which renders as text: use such
	names in the query only.

	Args:
		*names: Input fields, named as the Graph API names its parameters.
	"""
	return {
		name: f'{{{{ input["{name}"] }}}}' if name in _LIQUID_WORDS else f"{{{{ input.{name} }}}}"
		for name in names
	}


def graph_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
	"""A tool input schema that refuses unknown fields.

	Args:
		properties: Field name to its schema.
		required: The fields that must be present.
	"""
	schema: dict[str, Any] = {"type": "object", "properties": properties}
	if required:
		schema["required"] = required
	schema["additionalProperties"] = False
	return schema
