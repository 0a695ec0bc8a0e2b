"""Helpers for integration authors: JSON Schema pieces and pass-through parameters.

Most body and query entries of a declarative tool restate its input: ``"limit": "{{ input.limit
}}"``. `passthrough` writes them from the names, and `passthrough_of` from the input schema
itself, so a tool lists each parameter once:

```python
from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import integer, obj, passthrough, passthrough_of, string

SEARCH = obj({"query": string("What to look for."), "limit": integer("At most.", maximum=100)}, ["query"])
tool = HttpTool(
	handle="search",
	description="Search.",
	endpoint="/search",
	input_schema=SEARCH,
	query_params=passthrough_of(SEARCH),  # {"query": "{{ input.query }}", "limit": ...}
)
assert passthrough("a", b="{{ input.b | join: ',' }}") == {
	"a": "{{ input.a }}",
	"b": "{{ input.b | join: ',' }}",
}
```

An exact ``{{ input.x }}`` keeps the value's type and drops the key when ``x`` is missing (see
docs/integration-authoring.md), so pass-through entries need no conditions.

A service that reads an idempotency key from the body (Shopify's ``@idempotent(key:)`` variable)
gets the call's own key from `IDEMPOTENCY_KEY` (``"{{ call.idempotency_key }}"``): the same on a
retry and on a durable replay, another for every other call, and no input the model fills.

Tool input names follow one rule: the vendor's own parameter names (what its docs and the model
know), so pass-through entries map a name to itself. Where a vendor's name holds characters that a
model provider refuses in a property name or that Liquid cannot read after a dot, `input_name`
gives its spelling: a leading ``$`` and a trailing ``[]`` are dropped (OData's ``$top`` is ``top``,
Stripe's ``expand[]`` is ``expand``), Twilio's ``DateSent>`` and ``DateSent<`` are
``DateSentAfter`` and ``DateSentBefore`` (``>=``, ``<=`` and ``!=`` are ``OnOrAfter``,
``OnOrBefore`` and ``Not``; Stripe's ``created[gte]`` is ``created_on_or_after``), and ``.``,
``-``, brackets or any other character become ``_`` between words (S3's ``max-keys`` is
``max_keys``, ``filter[name]`` is ``filter_name``). Inputs with no vendor counterpart (a stored file, an upload session's URL) follow
the vendor's case style. docs/integration-authoring.md states the rule for authors.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from openmolt_core.integrations.templating import IDEMPOTENCY_KEY

__all__ = [
	"IDEMPOTENCY_KEY",
	"array",
	"boolean",
	"input_name",
	"integer",
	"nullable",
	"number",
	"obj",
	"passthrough",
	"passthrough_of",
	"string",
]


def obj(
	properties: Mapping[str, Mapping[str, Any]],
	required: Iterable[str] = (),
	*,
	description: str | None = None,
	closed: bool = False,
	**extra: Any,
) -> dict[str, Any]:
	"""An object schema: a tool's input, or a nested object property.

	Args:
		properties: Property name to its schema.
		required: The names that must be present.
		description: What the object is (for a nested property).
		closed: Refuse properties that are not listed (``additionalProperties: false``).
		**extra: More keywords (``minProperties``...).
	"""
	schema: dict[str, Any] = {
		"type": "object",
		"properties": {k: dict(v) for k, v in properties.items()},
	}
	if description is not None:
		schema["description"] = description
	names = list(required)
	if names:
		unknown = [n for n in names if n not in properties]
		if unknown:
			raise ValueError(f"required names {unknown} are not properties of the object")
		schema["required"] = names
	if closed:
		schema["additionalProperties"] = False
	schema.update(extra)
	return schema


def array(items: Mapping[str, Any], description: str | None = None, **extra: Any) -> dict[str, Any]:
	"""An array whose items follow ``items``.

	Args:
		items: The schema of each item.
		description: What the list holds.
		**extra: More keywords (``minItems``, ``maxItems``...).
	"""
	schema: dict[str, Any] = {"type": "array", "items": dict(items)}
	if description is not None:
		schema["description"] = description
	return {**schema, **extra}


def _typed(kind: str, description: str | None, extra: dict[str, Any]) -> dict[str, Any]:
	schema: dict[str, Any] = {"type": kind}
	if description is not None:
		schema["description"] = description
	return {**schema, **extra}


def string(description: str | None = None, **extra: Any) -> dict[str, Any]:
	"""A string (``enum``, ``format``, ``pattern``, ``maxLength``... as keywords).

	Args:
		description: What it is, for the model.
		**extra: More keywords.
	"""
	return _typed("string", description, extra)


def integer(description: str | None = None, **extra: Any) -> dict[str, Any]:
	"""An integer (``minimum``, ``maximum``... as keywords).

	Args:
		description: What it is, for the model.
		**extra: More keywords.
	"""
	return _typed("integer", description, extra)


def number(description: str | None = None, **extra: Any) -> dict[str, Any]:
	"""A number.

	Args:
		description: What it is, for the model.
		**extra: More keywords.
	"""
	return _typed("number", description, extra)


def boolean(description: str | None = None, **extra: Any) -> dict[str, Any]:
	"""A boolean.

	Args:
		description: What it is, for the model.
		**extra: More keywords.
	"""
	return _typed("boolean", description, extra)


def nullable(schema: Mapping[str, Any], clears: str) -> dict[str, Any]:
	"""A top-level input that may also be null, which the service reads as "clear this field".

	The HTTP engine sends an explicit null in a JSON body only for such inputs (an absent input,
	and any other null, is left out): ``"milestone": nullable(integer("Milestone number."),
	"null removes the milestone.")`` sends ``{"milestone": null}``. Use it only where the
	service's reference says null clears the field.

	Args:
		schema: The input's schema (with a single ``type``, or ``anyOf``/``oneOf`` branches).
		clears: What null does, for the model (added to the description).

	Raises:
		ValueError: The schema has neither one ``type`` nor ``anyOf``/``oneOf``.
	"""
	out = dict(schema)
	kind = out.get("type")
	if isinstance(kind, str):
		out["type"] = [kind, "null"]
	elif isinstance(out.get("anyOf") or out.get("oneOf"), list):
		key = "anyOf" if "anyOf" in out else "oneOf"
		out[key] = [*out[key], {"type": "null"}]
	else:
		raise ValueError("nullable() needs a schema with one type, or anyOf/oneOf branches")
	described = out.get("description")
	out["description"] = f"{described} {clears}" if described else clears
	return out


def input_name(vendor_name: str) -> str:
	"""The tool input name for a vendor's parameter or field name (the naming rule above).

	Args:
		vendor_name: The name as the vendor's API reference spells it (``$top``, ``expand[]``,
			``DateSent>``, ``created[gte]``, ``filter[name]``, ``max-keys``, ``tweet.fields``).

	Returns:
		The name made of ASCII letters, digits and ``_``, not starting with a digit, that the
		tool's input uses: ``top``, ``expand``, ``DateSentAfter``, ``created_on_or_after``,
		``filter_name``, ``max_keys``, ``tweet_fields`` (``value`` when no letter or digit is
		left). Names that already are such identifiers are returned as they are.
	"""
	if _IDENTIFIER.fullmatch(vendor_name):
		return vendor_name
	name = vendor_name.removeprefix("$").removesuffix("[]")
	for suffix, word in _COMPARISONS:
		if name.endswith(suffix) and len(name) > len(suffix):
			base = name[: -len(suffix)].removesuffix("[]")
			snake = "_" in base or base == base.lower()  # created[gte], start_date<
			name = base + (_snake(word) if snake else word)
			break
	# Accented letters lose their accents; any other run of characters is one "_" between
	# words (filter[name], a b, tweet.fields) and nothing at either end (@type, $filter).
	name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
	if not _IDENTIFIER.fullmatch(name):
		name = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")
	if not name:
		return "value"
	return f"_{name}" if name[0].isdigit() else name


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _snake(word: str) -> str:
	"""``OnOrAfter`` as ``_on_or_after``, for a snake_case name (``start_date[gte]``)."""
	return re.sub(r"([A-Z])", lambda m: f"_{m.group(1).lower()}", word)


_COMPARISONS = (
	(">=", "OnOrAfter"),
	("<=", "OnOrBefore"),
	("!=", "Not"),
	(">", "After"),
	("<", "Before"),
	("[gte]", "OnOrAfter"),
	("[lte]", "OnOrBefore"),
	("[neq]", "Not"),
	("[ne]", "Not"),
	("[gt]", "After"),
	("[lt]", "Before"),
)
"""A filter's comparison suffix and its word (Twilio's ``StartTime>``, Stripe's ``created[gte]``):
the first that ends a name wins, so each comes before the shorter ones it ends with."""


def passthrough(*names: str, **templates: str) -> dict[str, str]:
	"""Entries that send input fields under their own names: ``{"a": "{{ input.a }}"}``.

	Args:
		*names: Input names sent as they are (each value keeps its type).
		**templates: Other entries, by name (a filter, a renamed field).
	"""
	out = {name: f"{{{{ input.{name} }}}}" for name in names}
	clash = sorted(set(out) & set(templates))
	if clash:
		raise ValueError(f"{clash} given both as a name and as a template")
	return {**out, **templates}


def passthrough_of(
	schema: Mapping[str, Any], *, exclude: Iterable[str] = (), **templates: str
) -> dict[str, str]:
	"""`passthrough` for every property of an input schema, but those excluded.

	A property whose name is not a plain identifier is read with brackets
	(``{{ input["max-keys"] }}``), as Liquid needs.

	Args:
		schema: The tool's input schema (an object schema).
		exclude: Properties sent elsewhere (in the endpoint, a header).
		**templates: Entries that replace or add to the pass-through ones.
	"""
	skip = set(exclude)
	out: dict[str, str] = {}
	for name in schema.get("properties") or {}:
		if name in skip or name in templates:
			continue
		plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)
		out[name] = f"{{{{ input.{name} }}}}" if plain else f'{{{{ input["{name}"] }}}}'
	return {**out, **templates}
