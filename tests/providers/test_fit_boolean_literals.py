"""Boolean literals, where the dialect's enums hold no boolean, are a boolean (or a union with one).

Gemini's ``responseJsonSchema`` takes enums of strings and numbers only. ``Literal[True]``
(``{"const": true}``), ``Literal[True, False]`` and ``Literal["auto", False]`` had no form there,
so the whole output (or tool input) went as JSON text, unconstrained, as null literals did before
(`test_fit_null_literals`). Each is now ``{"type": "boolean"}``, alone or in a union with the
other literals; a single boolean is loosened to both (``relaxed``: the loop still refuses the
other one), and a boolean its ``type`` refuses stays refused.
"""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
import pydantic
import pytest

from openmolt_core.structured import fit_schema
from openmolt_providers.gemini._dialect import GEMINI


class Flags(pydantic.BaseModel):
	"""Boolean literals as pydantic writes them."""

	agreed: Literal[True]
	either: Literal[True, False]
	mode: Literal["auto", False]
	maybe: Literal[False, None] = None


def _enums(schema: Any) -> list[Any]:
	if isinstance(schema, dict):
		found = [schema["enum"]] if "enum" in schema else []
		return found + [v for value in schema.values() for v in _enums(value)]
	if isinstance(schema, list):
		return [v for item in schema for v in _enums(item)]
	return []


def test_boolean_literals_have_a_strict_form_in_gemini() -> None:
	"""Strict; no enum or const holds a boolean; every literal passes the fitted schema."""
	schema = Flags.model_json_schema()
	fitted = fit_schema(schema, GEMINI)
	assert fitted.mode == "strict", fitted.notes
	assert fitted.schema is not None
	assert "const" not in str(fitted.schema)
	assert all(not isinstance(v, bool) for values in _enums(fitted.schema) for v in values)
	for reply in (
		{"agreed": True, "either": False, "mode": "auto", "maybe": None},
		{"agreed": True, "either": True, "mode": False, "maybe": False},
	):
		jsonschema.validate(reply, fitted.schema)
		jsonschema.validate(fitted.restore(reply), schema)
	with pytest.raises(jsonschema.ValidationError):
		jsonschema.validate({**reply, "mode": "manual"}, fitted.schema)
	with pytest.raises(jsonschema.ValidationError):
		jsonschema.validate({**reply, "either": "yes"}, fitted.schema)


def test_one_boolean_is_loosened_and_said_so() -> None:
	"""``{"const": true}`` is sent as a boolean, and the fitted schema says the literal is relaxed."""
	schema = {"type": "object", "properties": {"ok": {"const": True}}, "required": ["ok"]}
	fitted = fit_schema(schema, GEMINI)
	assert fitted.mode == "strict", fitted.notes
	assert fitted.schema is not None
	assert fitted.schema["properties"]["ok"] == {"type": "boolean"}
	assert fitted.relaxed & {"const", "enum"}
	both = {"type": "object", "properties": {"ok": {"enum": [True, False]}}, "required": ["ok"]}
	exact = fit_schema(both, GEMINI)
	assert exact.schema is not None and exact.schema["properties"]["ok"] == {"type": "boolean"}
	assert not exact.relaxed


def test_a_boolean_its_type_refuses_stays_refused() -> None:
	"""``"type": "string"`` with true listed: true never validates, so it is not sent."""
	schema = {"type": "object", "properties": {"e": {"type": "string", "enum": ["a", True]}}}
	fitted = fit_schema(schema, GEMINI)
	assert fitted.schema is not None
	assert fitted.schema["properties"]["e"] == {"type": "string", "enum": ["a"]}
