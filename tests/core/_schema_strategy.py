"""A hypothesis strategy for instances of a JSON Schema (the subset reply schemas use).

Covers ``const``, ``enum``, ``anyOf``, ``type`` (one or a list), object ``properties`` /
``required`` / ``additionalProperties: false``, array ``items`` / ``minItems`` / ``maxItems``,
numeric bounds, string lengths and a free-form schema (``{}``). Optional properties appear or not.
"""

from typing import Any

from hypothesis import strategies as st

_ANY = st.recursive(
	st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
	lambda inner: (
		st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
	),
	max_leaves=4,
)


def instances(schema: Any) -> st.SearchStrategy[Any]:
	"""Values valid under ``schema``."""
	if not isinstance(schema, dict) or not schema or set(schema) <= {"default", "description"}:
		return _ANY
	if "const" in schema:
		return st.just(schema["const"])
	if "enum" in schema:
		return st.sampled_from(schema["enum"])
	if "anyOf" in schema:
		return st.one_of([instances(s) for s in schema["anyOf"]])
	kind = schema.get("type")
	if isinstance(kind, list):
		return st.one_of([instances({**schema, "type": k}) for k in kind])
	if kind == "object" or "properties" in schema:
		props = schema.get("properties", {})
		required = set(schema.get("required", []))
		return st.fixed_dictionaries(
			{k: instances(v) for k, v in props.items() if k in required},
			optional={k: instances(v) for k, v in props.items() if k not in required},
		)
	if kind == "array":
		return st.lists(
			instances(schema.get("items", {})),
			min_size=schema.get("minItems", 0),
			max_size=min(schema.get("maxItems", 3), 3),
		)
	if kind == "string":
		return st.text(
			min_size=schema.get("minLength", 0), max_size=max(schema.get("minLength", 0), 6)
		)
	if kind == "integer":
		return st.integers(int(schema.get("minimum", -10)), int(schema.get("maximum", 100)))
	if kind == "number":
		low, high = schema.get("minimum", -10), schema.get("maximum", 100)
		return st.floats(low, high) | st.integers(int(low), int(high))
	if kind == "boolean":
		return st.booleans()
	if kind == "null":
		return st.none()
	return _ANY
