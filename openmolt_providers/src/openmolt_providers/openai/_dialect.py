"""OpenAI's Structured Outputs dialect, and which models have it.

From "Structured model outputs", section "Supported schemas"
(https://platform.openai.com/docs/guides/structured-outputs#supported-schemas, checked
2026-12-01): the root is an object; every property is ``required`` (an optional one is written
as a union with ``null``); every object sets ``additionalProperties: false``; supported are
``anyOf``, ``enum``, ``const``, ``$defs`` (recursion too: ``"$ref": "#"`` or into ``$defs``, so a
recursive definition is sent in the root's ``$defs``), string ``pattern`` and ``format`` (the nine formats
below), number ``multipleOf``/``maximum``/``exclusiveMaximum``/``minimum``/``exclusiveMinimum``,
array ``minItems``/``maxItems``; not supported are ``allOf``, ``not``, ``dependentRequired``,
``dependentSchemas``, ``if``/``then``/``else`` (``default`` is not listed: it is dropped). Limits: at most
5,000 object properties and 10 levels of nesting, 1,000 enum values, 120,000 characters of
property names, definition names, enum and const values, and, for one enum of more than 250
string values, 15,000 characters. Fine-tuned models do not support the type-specific keywords.

The page says nothing on whether an array counts as a nesting level: `SchemaDialect.max_depth`
counts it (fails closed). Models: GPT-4o from 2024-08-06, GPT-4o mini, o1 (not o1-mini or
o1-preview) and later; older models (GPT-3.5, GPT-4, GPT-4 Turbo) have JSON mode only.

An OpenAI-compatible server (vLLM, Ollama, LM Studio, OpenRouter) gets the same dialect: its
``json_schema`` support compiles a grammar from any JSON Schema, and the OpenAI subset is the
narrowest common form. A server that rejects ``response_format`` is remembered and then sent
plain JSON requests (`openmolt_providers.openai._fallback`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from openmolt_core.capabilities.structured import SchemaDialect
from openmolt_providers._model_id import fine_tuned, model_name

__all__ = ["OPENAI", "OPENAI_FINE_TUNED", "dialect_for"]

OPENAI = SchemaDialect(
	name="openai",
	keywords=frozenset(
		{
			"description",
			"pattern",
			"multipleOf",
			"maximum",
			"exclusiveMaximum",
			"minimum",
			"exclusiveMinimum",
			"minItems",
			"maxItems",
		}
	),
	formats=frozenset(
		{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
	),
	closed_objects=True,
	require_all=True,
	recursive_refs=True,
	max_properties=5000,
	max_depth=10,
	max_enum_values=1000,
	max_string_length=120_000,
	long_enum=(250, 15_000),
	source="https://platform.openai.com/docs/guides/structured-outputs#supported-schemas (2026-12-01)",
)
"""Structured Outputs (``strict: true``) as the OpenAI API documents it."""

OPENAI_FINE_TUNED = replace(
	OPENAI, name="openai-fine-tuned", keywords=frozenset({"description"}), formats=frozenset()
)
"""Structured Outputs of fine-tuned models (``ft:...``): no type-specific keywords."""

_NO_STRUCTURED = re.compile(
	r"^(gpt-3\.5|gpt-4($|-\d|-turbo|-32k|-vision)|gpt-4o-2024-05-13|o1-mini|o1-preview)"
)


def dialect_for(model: str) -> SchemaDialect | None:
	"""The dialect of one model, or None when it has JSON mode only.

	Args:
		model: The model name (a ``provider/`` prefix, as gateways use, is ignored).
	"""
	if _NO_STRUCTURED.match(model_name(model)):
		return None  # a fine-tune of GPT-3.5 or GPT-4 has JSON mode only, as its base model
	return OPENAI_FINE_TUNED if fine_tuned(model) else OPENAI
