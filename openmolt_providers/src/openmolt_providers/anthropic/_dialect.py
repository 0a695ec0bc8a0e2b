"""Anthropic's structured-outputs dialect (``output_config.format``), and which models have it.

From "Structured outputs" (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
checked 2026-12-01), section "JSON Schema limitations": supported are the basic types, ``enum``
of primitives, ``const``, ``anyOf``, ``allOf`` (not with ``$ref``), local ``$ref``, ``default``,
``required``, ``additionalProperties: false`` (required on every object), the string formats
below and ``minItems`` of 0 or 1; not supported are recursive schemas, numeric constraints
(``minimum``, ``maximum``, ``multipleOf``), string length constraints and other array
constraints. ``pattern`` is accepted with simple regular expressions only ("complex patterns may
result in 400 errors"): a simple one is sent (no lookaround, backreference or word boundary), any
other is dropped and checked by the loop (`SchemaDialect.simple_patterns`). Section "Schema complexity
limits", for all strict schemas of a request together: at most 24 optional parameters (not in
``required``) and 16 parameters with union types (``anyOf`` or a list of types); past internal
limits the request fails with "Schema is too complex for compilation". Properties with a default
are made required, as the page advises, so the envelope's own optional fields cost nothing.
A list of types is written as ``anyOf`` (the same union to the API; the SDK's own
``transform_schema`` knows only single types), and ``enum``/``const`` go without a ``type``, as
``transform_schema`` writes them.

Models: the page lists Claude Opus 4.5 to 4.8, Sonnet 4.5 and 4.6, Haiku 4.5, and the Claude 5
models. Structured outputs do not combine with citations, which web search results carry.
"""

from __future__ import annotations

from openmolt_core.capabilities.structured import SchemaDialect

__all__ = ["ANTHROPIC"]

ANTHROPIC = SchemaDialect(
	name="anthropic",
	keywords=frozenset({"description", "minItems"}),
	formats=frozenset(
		{
			"date-time",
			"time",
			"date",
			"duration",
			"email",
			"hostname",
			"uri",
			"ipv4",
			"ipv6",
			"uuid",
		}
	),
	closed_objects=True,
	require_defaults=True,
	literal_types=False,
	type_lists=False,
	simple_patterns=True,
	max_min_items=1,
	max_optional=24,
	max_unions=16,
	source="https://platform.claude.com/docs/en/build-with-claude/structured-outputs (2026-12-01)",
)
"""Structured outputs as the Anthropic Messages API documents them."""
