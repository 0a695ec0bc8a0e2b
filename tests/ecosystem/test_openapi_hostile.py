"""Hostile OpenAPI documents: generated modules are data only, whatever the document holds."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from openmolt_core._openapi_write import check_module
from openmolt_core.cli import main
from openmolt_core.errors import ConfigurationError
from openmolt_core.openapi import from_openapi, to_json, to_module

MARK = "openmolt_hostile_openapi_ran"

PAYLOADS = [
	f'"""\nimport builtins; builtins.{MARK} = True\n"""',
	f"'''\nimport builtins; builtins.{MARK} = True\n'''",
	f'"\nimport builtins; builtins.{MARK} = True\n#',
	f"\\\nimport builtins; builtins.{MARK} = True\n",
	f'\\"""; import builtins; builtins.{MARK} = True; """',
	"end with a backslash \\",
	'end with a quote "',
	"NUL \x00 inside",
	f"line separators \u2028import builtins; builtins.{MARK} = True\u2029 x",
	f"carriage return \rimport builtins; builtins.{MARK} = True\r",
	"form feed \x0c and vertical tab \x0b",
	"non-BMP \U0001f600 \U00010348 and a lone surrogate \ud800",
	"{{ config.token }} {% raw %} }} {%",
	"\\N{BULLET} \\u0041 \\x41 \\0",
	"x" * 100_000,
	'"' * 7 + "'" * 7,
]


def hostile_document(payload: str) -> dict[str, Any]:
	"""A valid document with the payload in every place that reaches the generated module."""
	return {
		"openapi": "3.0.3",
		"info": {"title": payload, "version": payload, "description": payload},
		"servers": [{"url": "https://api.example.com/v1"}],
		"components": {
			"securitySchemes": {
				payload: {"type": "apiKey", "in": "header", "name": "X-Key"},
				"oauth": {
					"type": "oauth2",
					"flows": {
						"clientCredentials": {
							"tokenUrl": "https://auth.example.com/token",
							"scopes": {payload: payload, "read": payload},
						}
					},
				},
			}
		},
		"paths": {
			"/items/{id}": {
				"get": {
					"operationId": payload,
					"summary": payload,
					"description": payload,
					"tags": [payload],
					"security": [{"oauth": [payload]}],
					"parameters": [
						{
							"name": "id",
							"in": "path",
							"required": True,
							"schema": {"type": "string"},
						},
						{
							"name": payload[:200],
							"in": "query",
							"description": payload,
							"schema": {
								"type": "string",
								"enum": [payload, "b"],
								"default": payload,
								"pattern": payload,
								"format": payload,
							},
						},
						{"name": "X-Note", "in": "header", "schema": {"default": payload}},
					],
					"responses": {"200": {"description": payload}},
				},
				"post": {
					"summary": payload,
					"requestBody": {
						"description": payload,
						"content": {
							"application/json": {
								"schema": {
									"type": "object",
									"title": payload,
									"properties": {
										payload[:200]: {"type": "string", "description": payload},
										"n": {"type": "number", "default": -1.5, "minimum": -3},
									},
									"required": [payload[:200]],
								}
							}
						},
					},
					"responses": {"201": {"description": payload}},
				},
			}
		},
	}


def _import(path: Path, name: str) -> Any:
	spec = importlib.util.spec_from_file_location(name, path)
	assert spec is not None and spec.loader is not None
	module = importlib.util.module_from_spec(spec)
	sys.modules[name] = module
	try:
		spec.loader.exec_module(module)
	finally:
		del sys.modules[name]
	return module


@pytest.mark.parametrize("index", range(len(PAYLOADS)))
def test_a_module_generated_from_a_hostile_document_is_data_only(
	index: int, tmp_path: Path
) -> None:
	"""Quotes, backslashes, NUL, line separators and long values stay values in the module."""
	import builtins

	payload = PAYLOADS[index]
	integration = from_openapi(hostile_document(payload), id="hostile")
	source = to_module(integration, source=payload)
	path = tmp_path / f"hostile_{index}.py"
	path.write_text(source, encoding="utf-8")
	module = _import(path, f"hostile_{index}")
	assert not hasattr(builtins, MARK)
	rebuilt = module.INTEGRATION
	assert rebuilt == integration
	assert rebuilt.api_version == integration.api_version
	assert module.__doc__.startswith(integration.name)
	assert json.loads(to_json(rebuilt)) == json.loads(to_json(integration))


def test_the_import_command_writes_a_module_that_only_holds_data(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt import-openapi` on a hostile document writes a module that imports harmlessly."""
	import builtins

	spec = tmp_path / "hostile.json"
	spec.write_text(json.dumps(hostile_document(PAYLOADS[0])), encoding="utf-8")
	out = tmp_path / "hostile_tools.py"
	assert main(["import-openapi", str(spec), "--id", "hostile", "-o", str(out)]) == 0
	module = _import(out, "hostile_tools")
	assert not hasattr(builtins, MARK)
	assert module.INTEGRATION.name == PAYLOADS[0]


@pytest.mark.parametrize(
	"source",
	[
		"import os\n",
		"INTEGRATION = __import__('os')\n",
		"INTEGRATION = Integration(name=open('x').read())\n",
		"INTEGRATION = [x for x in ()]\n",
		"def other() -> None:\n\tpass\n",
		"INTEGRATION = f'{1}'\n",
	],
)
def test_the_module_check_refuses_anything_but_data(source: str) -> None:
	"""The last check on generated source refuses code: imports, calls, comprehensions."""
	with pytest.raises(ConfigurationError):
		check_module(source)
