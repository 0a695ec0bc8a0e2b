"""What the Meta Graph API integrations (Meta Ads, Instagram) share: the version and small helpers.

The version is the one the official ``facebook-business`` SDK targets (26.0.3 ships
``API_VERSION = 'v26.0'``); the conformance tests compare the two. Input schemas and pass-through
entries come from `openmolt_core.integrations.schema` (``obj(..., closed=True)``,
``passthrough``).
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations.schema import array, passthrough, string

__all__ = [
	"GRAPH_URL",
	"GRAPH_VERSION",
	"fields_input",
	"fields_param",
	"json_param",
	"paging",
]

GRAPH_VERSION = "v26.0"
"""The Graph API version every Meta tool calls (the ``facebook-business`` SDK's ``API_VERSION``)."""

GRAPH_URL = f"https://graph.facebook.com/{GRAPH_VERSION}"
"""The base URL of the Graph API at `GRAPH_VERSION`."""


def paging() -> dict[str, str]:
	"""The ``limit`` and ``after`` query entries of a paged Graph edge (cursor paging)."""
	return passthrough("limit", "after")


def fields_input(default: str) -> dict[str, Any]:
	"""The ``fields`` input: a list of Graph field names, with the default the tool asks for.

	Args:
		default: The comma-separated fields sent when the input is left out.
	"""
	return array(string(), f"Fields to return (default: {default}).")


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
