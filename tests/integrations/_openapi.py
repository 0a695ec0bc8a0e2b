"""Comparing a tool's input schema with the schema an OpenAPI document gives the same value.

Shared by the checks against pinned OpenAPI extracts (WhatsApp, X): an input may be stricter than
the spec, never looser. ``schema_errors`` lists where it is looser: a name the spec does not
have, an enum value outside the spec's, a name the spec requires left optional, a looser length,
count or range, another pattern.
"""

from __future__ import annotations

from typing import Any

__all__ = ["merge_alternatives", "schema_errors"]

_UPPER = ("maxLength", "maxItems", "maximum")
_LOWER = ("minLength", "minItems", "minimum")


def merge_alternatives(spec: dict[str, Any]) -> dict[str, Any]:
	"""A schema with its oneOf/anyOf alternatives' properties merged in (none of theirs required)."""
	alternatives = spec.get("oneOf", []) + spec.get("anyOf", [])
	if not alternatives:
		return spec
	merged = {k: v for k, v in spec.items() if k not in ("oneOf", "anyOf")}
	props: dict[str, Any] = dict(spec.get("properties", {}))
	for alt in alternatives:
		for name, sub in merge_alternatives(alt).get("properties", {}).items():
			props[name] = _union(props[name], sub) if name in props else sub
	merged["properties"] = props
	return merged


def _union(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
	"""Two alternatives' schemas of one name: properties of both, the looser bounds."""
	out = {**b, **a}
	for key in _UPPER:
		if key in a and key in b:
			out[key] = max(a[key], b[key])
	for key in _LOWER:
		if key in a and key in b:
			out[key] = min(a[key], b[key])
	if "properties" in a or "properties" in b:
		out["properties"] = {**b.get("properties", {}), **a.get("properties", {})}
	if "items" in a and "items" in b:
		out["items"] = _union(merge_alternatives(a["items"]), merge_alternatives(b["items"]))
	out.pop("required", None)
	return out


def schema_errors(
	handle: str,
	where: str,
	ours: dict[str, Any],
	spec: dict[str, Any],
	extras: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
) -> list[str]:
	"""Where an input schema is looser than the spec's schema for the value it fills.

	Args:
		handle: The tool, for the messages.
		where: The dotted path of the value in the request, for the messages.
		ours: The input's JSON schema.
		spec: The spec's schema (refs resolved).
		extras: (handle, path) of names the vendor's documentation adds to the spec.
	"""
	spec = merge_alternatives(spec)
	errors = []
	if "enum" in ours and "enum" in spec and not set(ours["enum"]) <= set(spec["enum"]):
		errors.append(f"{handle}.{where}: enum {ours['enum']} not within {spec['enum']}")
	for key in _UPPER:
		if key in spec and ours.get(key, float("inf")) > spec[key]:
			errors.append(f"{handle}.{where}: {key} {spec[key]} (ours {ours.get(key)})")
	for key in _LOWER:
		if key in spec and ours.get(key, float("-inf")) < spec[key]:
			errors.append(f"{handle}.{where}: {key} {spec[key]} (ours {ours.get(key)})")
	if (
		"pattern" in spec
		and ours.get("type") == "string"
		and ours.get("pattern") != spec["pattern"]
	):
		errors.append(f"{handle}.{where}: pattern {spec['pattern']} (ours {ours.get('pattern')})")
	if "items" in ours and "items" in spec:
		errors += schema_errors(handle, f"{where}[]", ours["items"], spec["items"], extras)
	props = ours.get("properties", {})
	if props and "properties" in spec:
		for name in sorted(set(spec.get("required", [])) - set(ours.get("required", []))):
			errors.append(f"{handle}.{where}: the spec requires {name}")
		for name, sub in props.items():
			path = f"{where}.{name}".lstrip(".")
			if name in spec["properties"]:
				errors += schema_errors(handle, path, sub, spec["properties"][name], extras)
			elif (handle, path) not in extras:
				errors.append(f"{handle}.{path}: not in the spec")
	return errors
