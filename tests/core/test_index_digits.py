"""A list index or a number read from outside text is ASCII digits, not what ``str.isdigit`` takes.

``"²".isdigit()`` and ``"①".isdigit()`` are true, and ``int()`` cannot read either: a guard of
``isdigit()`` before ``int()`` let them through to a ``ValueError``. A JSON pointer's index is
ASCII digits (RFC 6901), so a ``$ref`` holding one points to nothing, as any other index that
names no item does; an OpenAPI document's said so as ``invalid literal for int()``, and a tool's
schema (an MCP server's) failed to compile.
"""

from __future__ import annotations

import pytest

from openmolt_core._support.jsonschema import JsonSchemaValidator
from openmolt_core.errors import ConfigurationError
from openmolt_core.openapi import from_openapi

ODD = ["\u00b2", "\u2460", "1\u00b9"]
"""Superscript two, circled one, and a one followed by a superscript one."""


@pytest.mark.parametrize("index", ODD)
def test_a_tool_schema_ref_with_such_an_index_points_to_nothing(index: str) -> None:
	"""As a ref to an index past the end: the schema compiles, the ref checks nothing."""
	schema = {
		"type": "object",
		"properties": {"a": {"$ref": f"#/$defs/x/{index}"}},
		"$defs": {"x": [{"type": "string"}]},
	}
	assert JsonSchemaValidator(schema).validate({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("index", ODD)
def test_an_openapi_ref_with_such_an_index_points_to_nothing(index: str) -> None:
	"""The document's error names the reference that points to nothing, as for any other."""
	document = {
		"openapi": "3.1.0",
		"info": {"title": "t", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/p": {
				"post": {
					"operationId": "op",
					"requestBody": {
						"content": {
							"application/json": {
								"schema": {"$ref": f"#/components/schemas/L/allOf/{index}"}
							}
						}
					},
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
		"components": {"schemas": {"L": {"allOf": [{"type": "object"}]}}},
	}
	with pytest.raises(ConfigurationError, match="points to nothing in the document"):
		from_openapi(document, id="t")
