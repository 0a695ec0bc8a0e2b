"""What the providers share about structured output: which schema to send, and a cache.

The loop fits the reply schema to the provider's dialect (`openmolt_core.capabilities.structured.fit`) and
says how to use it in ``request.response_mode``. `reply_format` turns that into one decision per
request: a strict schema to send, JSON mode only, or nothing. A request that carries a schema
but no mode (a caller that did not fit it) is fitted here as a whole
(`openmolt_core.capabilities.structured.fit_schema`), once per schema object.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from openmolt_core.capabilities.structured import fit_schema
from openmolt_providers._body import keep

if TYPE_CHECKING:
	from openmolt_core.capabilities.structured import FittedSchema, SchemaDialect
	from openmolt_core.llm import ModelConfig, ModelRequest

__all__ = ["SchemaCache", "plain_request", "reply_format"]


class _Provider(Protocol):
	schemas: SchemaCache

	def schema_dialect(
		self, model: str, config: ModelConfig | None = None
	) -> SchemaDialect | None: ...

	def warn(self, model: str, key: str, message: str) -> None: ...


def reply_format(provider: _Provider, request: ModelRequest) -> tuple[dict[str, Any] | None, bool]:
	"""What to ask of the API for one request.

	Args:
		provider: The provider (its dialect for the model and settings decides).
		request: The request.

	Returns:
		``(schema, json)``: a schema to send as strict structured output (or None), and whether
		to ask for JSON at all (False only when the request carries no schema).
	"""
	schema, mode = request.response_schema, request.response_mode
	if schema is None:
		return None, mode is not None
	dialect = provider.schema_dialect(request.model, request.config)
	if mode is None:
		if dialect is None:
			return None, True
		fitted: FittedSchema = provider.schemas.get(
			schema, dialect.name, lambda s: fit_schema(s, dialect)
		)
		schema, mode = fitted.schema, fitted.mode
	if mode == "off" or schema is None:
		return None, True
	if dialect is None:
		if request.config.search and provider.schema_dialect(request.model) is not None:
			provider.warn(
				request.model,
				"search",
				"structured output does not combine with search on this model; the reply is "
				"checked after it arrives",
			)
		return None, True
	return keep(schema), True  # the same dict at every step: its JSON is written once


def plain_request(request: ModelRequest) -> ModelRequest:
	"""The request without structured output, with the loop's prompt for that (when it gave one)."""
	system = request.plain_system() if request.plain_system is not None else request.system
	return replace(request, system=system, response_schema=None)


class SchemaCache:
	"""Remembers a conversion per schema object: the loop sends the same dict at every step."""

	def __init__(self, size: int = 64) -> None:
		self._size = size
		self._items: dict[tuple[int, str], tuple[Any, Any]] = {}

	def get(self, schema: Any, kind: str, convert: Any) -> Any:
		"""Return ``convert(schema)``, computed once per schema object and kind."""
		key = (id(schema), kind)
		hit = self._items.get(key)
		if hit is not None and hit[0] is schema:
			return hit[1]
		if len(self._items) >= self._size:
			self._items.clear()
		value = convert(schema)
		self._items[key] = (schema, value)
		return value
