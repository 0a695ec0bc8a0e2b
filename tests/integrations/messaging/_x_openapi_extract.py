"""Write x_openapi_2_167.json, the extract of X's OpenAPI for the operations the x tools call.

The whole document (``xdevplatform/xdk`` ``specs/openapi.json``, 828 KB) is too large to pin, so
the tests read this extract: each operation's parameters by name (in, required, schema), its
request body schema per content type, with ``$ref`` resolved, ``allOf`` merged, and descriptions,
summaries and examples dropped, and the OAuth 2.0 scopes its user-token security requires. Run it on the document at the commit named in ``SOURCE`` after
adding a tool:

    uv run python tests/integrations/messaging/_x_openapi_extract.py path/to/openapi.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_integrations import x

OUT = Path(__file__).with_name("x_openapi_2_167.json")
SOURCE = (
	"xdevplatform/xdk specs/openapi.json at 84c26540df30c0b798e50e34151c56d5d262ba1c (SDK "
	"v0.10.6), the X API OpenAPI xdk is generated from; the operations the x tools call, refs "
	"resolved, allOf merged, descriptions and examples dropped, OAuth2UserToken scopes kept"
)
_DROP = {"description", "example", "examples", "summary"}


def _resolve(spec: dict[str, Any], node: Any, names: bool = False) -> Any:
	"""``node`` with refs resolved and allOf merged; ``names`` marks a properties map."""
	if isinstance(node, list):
		return [_resolve(spec, v) for v in node]
	if not isinstance(node, dict):
		return node
	if names:
		return {k: _resolve(spec, v) for k, v in node.items()}
	if "$ref" in node:
		target: Any = spec
		for step in node["$ref"].removeprefix("#/").split("/"):
			target = target[step]
		return _resolve(spec, target)
	out: dict[str, Any] = {}
	for part in node.get("allOf", []):
		for key, value in _resolve(spec, part).items():
			if key == "properties":
				out.setdefault("properties", {}).update(value)
			elif key == "required":
				out["required"] = out.get("required", []) + value
			else:
				out[key] = value
	for key, value in node.items():
		if key != "allOf" and key not in _DROP:
			out[key] = _resolve(spec, value, key == "properties")
	return out


def operation(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
	"""One operation of the extract: parameters by name, request body per content type."""
	op = spec["paths"][path][method.lower()]
	params = {}
	for raw in op.get("parameters", []):
		param = _resolve(spec, raw)
		params[param["name"]] = {
			"in": param["in"],
			"required": param.get("required", False),
			"schema": param["schema"],
		}
	out: dict[str, Any] = {"parameters": params}
	for requirement in op.get("security", []):
		if "OAuth2UserToken" in requirement:
			out["oauth2_scopes"] = sorted(requirement["OAuth2UserToken"])
	if "requestBody" in op:
		body = _resolve(spec, op["requestBody"])
		out["requestBody"] = {ct: c["schema"] for ct, c in body["content"].items()}
	return out


def tool_operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
	"""The extract's operations: the one each x tool calls, keyed ``METHOD /path``."""
	shapes = {
		(method.upper(), re.sub(r"\{[^}]+\}", "{}", path)): path
		for path, item in spec["paths"].items()
		for method in item
	}
	out = {}
	for tool in x.INTEGRATION.tools:
		if not isinstance(tool, HttpTool):
			continue
		shape = re.sub(r"\{[^}]+\}", "{}", re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint))
		path = shapes[(tool.method, shape)]
		out[f"{tool.method} {path}"] = operation(spec, tool.method, path)
	return dict(sorted(out.items()))


def main(document: str) -> None:
	"""Write the extract from the whole OpenAPI document at ``document``."""
	spec = json.loads(Path(document).read_text(encoding="utf-8"))
	extract = {
		"operations": tool_operations(spec),
		"source": SOURCE,
		"version": spec["info"]["version"],
	}
	OUT.write_text(json.dumps(extract, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
	main(sys.argv[1])
