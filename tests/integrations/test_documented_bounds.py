"""A limit a tool's input description states is a bound of its schema, not words only.

A description that says "up to 500 characters", "at most 25" keys or "max 10" items tells the
model; the vendor refuses past it. The schema must say it too (``maxLength``, ``maxItems``,
``maxProperties``; "4 to 10 characters" also ``minLength``), so the call is refused before it is
sent, with the field named. The few descriptions whose number is no schema bound are listed with
the reason.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import Any

from openmolt_core.integrations import Integration

_LIMIT = re.compile(
	r"(?:up to|at most|no more than|max(?:imum)?(?: of)?)\s+([\d,]+)(?:\s+([A-Za-z]+))?",
	re.IGNORECASE,
)
"""A stated limit and the word after its number: its unit ("3 MB", "14 images" are no count of
the field's own characters, items or keys, and are left alone)."""
_RANGE = re.compile(r"([\d,]+)\s*(?:to|-|–)\s*([\d,]+)\s+characters", re.IGNORECASE)
_KEYWORD = {"string": "maxLength", "array": "maxItems", "object": "maxProperties"}
_UNITS = {
	"string": {"characters", "chars"},
	"array": {"", "items", "entries", "elements"},
	"object": {"keys", "properties"},
}

# (integration, tool, field path): why the number stated is no schema bound.
_NOT_BOUNDS: dict[tuple[str, str, str], str] = {
	("X", "createPost", "text"): (
		"X counts weighted characters (a URL is 23, a CJK character 2) and Premium accounts post "
		"up to 25,000: a maxLength would refuse posts X takes"
	),
}


def _tools() -> list[tuple[str, Any]]:
	found: list[Integration] = []
	for entry in entry_points(group="openmolt.integrations"):
		if entry.dist is not None and entry.dist.name == "openmolt-integrations":
			module = importlib.import_module(entry.value)
			module.register_integrations(
				register=lambda integration, **_: found.append(integration)
			)
	return [(integration.name, tool) for integration in found for tool in integration.tools]


def _fields(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
	if not isinstance(schema, dict):
		return
	if path:
		yield path, schema
	for name, sub in (schema.get("properties") or {}).items():
		yield from _fields(sub, f"{path}.{name}" if path else name)
	if isinstance(schema.get("items"), dict):
		yield from _fields(schema["items"], f"{path}[]")
	for key in ("anyOf", "oneOf", "allOf"):
		for sub in schema.get(key) or ():
			yield from _fields(sub, path)


def _missing(schema: dict[str, Any]) -> list[str]:
	"""The bounds its description states that the schema lacks."""
	kind = schema.get("type")
	text = schema.get("description") or ""
	if not isinstance(kind, str) or kind not in _KEYWORD:
		return []
	lacking = []
	for match in _LIMIT.finditer(text):
		unit = (match.group(2) or "").lower()
		if unit in _UNITS[kind] and _KEYWORD[kind] not in schema:
			lacking.append(f"{_KEYWORD[kind]} ({match.group(0).strip()!r})")
	if kind == "string" and _RANGE.search(text):
		lacking += [k for k in ("minLength", "maxLength") if k not in schema]
	return lacking


def test_every_stated_limit_is_a_schema_bound() -> None:
	""" "up to N characters", "at most N" items or keys: the schema bounds the field too."""
	wrong = [
		f"{name}.{tool.handle}: {path} lacks {', '.join(lacking)}"
		for name, tool in _tools()
		for path, schema in _fields(tool.input_schema)
		if (name, tool.handle, path) not in _NOT_BOUNDS and (lacking := _missing(schema))
	]
	assert wrong == []


def test_the_check_finds_a_stated_limit_without_its_bound() -> None:
	"""The rule reads the phrasings the built-ins use (a negative case for each kind)."""
	assert _missing({"type": "string", "description": "Alt text (up to 500 characters)."})
	assert _missing({"type": "array", "description": "Locations (max 10)."}) == [
		"maxItems ('max 10')"
	]
	assert _missing({"type": "object", "description": "Inputs (at most 25 keys)."})
	assert _missing({"type": "string", "description": "The code (4 to 10 characters)."}) == [
		"minLength",
		"maxLength",
	]
	bounded = {"type": "string", "maxLength": 500, "description": "Up to 500 characters."}
	assert _missing(bounded) == []
	assert _missing({"type": "array", "description": "Files up to 3 MB each."}) == []
	assert _missing({"type": "array", "description": "Parts. Up to 14 images."}) == []


def test_each_listed_exception_still_names_a_tool_field() -> None:
	"""An exception whose field is gone (renamed, bounded since) is removed from the list."""
	known = {
		(name, tool.handle, path)
		for name, tool in _tools()
		for path, _ in _fields(tool.input_schema)
	}
	assert set(_NOT_BOUNDS) <= known
