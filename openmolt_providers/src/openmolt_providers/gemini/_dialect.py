"""Gemini's ``responseJsonSchema`` dialect, and which models have it.

From the API reference of ``GenerationConfig.responseJsonSchema``
(https://ai.google.dev/api/generate-content#generationconfig, checked 2026-12-01; the
``google-genai`` 3.6 types carry the same text): "not all features are supported. Specifically,
only the following properties are supported: ``$id``, ``$defs``, ``$ref``, ``$anchor``,
``type``, ``format``, ``title``, ``description``, ``enum`` (for strings and numbers), ``items``,
``prefixItems``, ``minItems``, ``maxItems``, ``minimum``, ``maximum``, ``anyOf``, ``oneOf``
(interpreted the same as ``anyOf``), ``properties``, ``additionalProperties``, ``required``".
So ``const`` travels as a one-value ``enum``, a null among the literals as a union with
``{"type": "null"}``, a boolean among them as ``{"type": "boolean"}`` (one boolean alone is sent
as both, which the loop checks), and a tuple
(``prefixItems``) is sent as one, its further items with their schema or, when none is allowed,
as ``maxItems``. Objects
need not be closed and properties need not be required. The structured output guide
(https://ai.google.dev/gemini-api/docs/structured-output) gives no limit in numbers, only that
the API may reject very large or deeply nested schemas: no limit is checked here.

Models: JSON Schema output is documented for Gemini 2.5 and later (2.5 models also order the
output's keys as the schema does); older models get JSON mode without a schema. Gemini 2.5
cannot combine controlled output with Google Search grounding; Gemini 3 can.
"""

from __future__ import annotations

import re
from functools import lru_cache

from openmolt_core.capabilities.structured import SchemaDialect
from openmolt_providers._model_id import model_name

__all__ = ["GEMINI", "alias", "dialect_for", "resolved", "version"]

GEMINI = SchemaDialect(
	name="gemini",
	keywords=frozenset({"description", "minItems", "maxItems", "minimum", "maximum"}),
	formats=frozenset({"date-time", "date", "time"}),
	closed_objects=False,
	const_as_enum=True,
	tuples=True,
	enum_types=frozenset({"string", "number"}),
	source="https://ai.google.dev/api/generate-content#generationconfig (2026-12-01)",
)
"""``responseJsonSchema`` as the Gemini API documents it."""

_VERSION = re.compile(r"^gemini-(\d+)(?:\.(\d+))?")
_ALIAS = re.compile(r"^gemini-[a-z-]+-latest$")
"""An unversioned alias (``gemini-flash-latest``), which Google points at its current model."""


@lru_cache(maxsize=256)
def resolved(model: str) -> str:
	"""The model's name (`model_name`), an alias read as the model it names now, or as it is.

	Which model an alias names is genai-prices' (its match rules name each alias:
	``gemini-pro-latest`` is ``gemini-3.1-pro-preview``), so it is as current as the lock. Read
	once per model id (asked several times a request).

	Args:
		model: The model id as the agent names it.
	"""
	name = model_name(model)
	if not _ALIAS.match(name):
		return name
	from openmolt_providers._prices import priced_as

	named = priced_as("google", name)
	return named if named is not None and _VERSION.match(named) else name


def alias(model: str) -> bool:
	"""Whether the id is an alias whose model is not known (`resolved` could not read it).

	Args:
		model: The model id as the agent names it.
	"""
	return bool(_ALIAS.match(resolved(model)))


def version(model: str) -> tuple[int, int]:
	"""The (major, minor) version in a Gemini model name; (0, 0) when it is unknown."""
	name = resolved(model)
	m = _VERSION.match(name)
	if m:
		return (int(m[1]), int(m[2] or 0))
	# An alias no one names (gemini-ultra-latest) names a current 2.5-or-later model.
	return (2, 5) if _ALIAS.match(name) else (0, 0)


def dialect_for(model: str, *, search: bool = False) -> SchemaDialect | None:
	"""The dialect of one model, or None when its replies cannot follow a schema.

	Args:
		model: The model name.
		search: Whether Google Search grounding is on (Gemini 2.5 cannot combine the two).
	"""
	v = version(model)
	if v < (2, 5) or (search and v < (3, 0)):
		return None
	return GEMINI
