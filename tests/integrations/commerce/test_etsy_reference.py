"""Etsy tools against Etsy's Open API v3 document, as the ``etsy-ts`` npm package types it.

Etsy publishes its Open API v3 document on its developer site only (no registry package of its
own). ``etsy-ts`` (npm, pinned 8.0.1) is generated from that document by swagger-typescript-api:
each operation is a method whose JSDoc carries ``@name <operationId>`` and ``@request
METHOD:/v3/...``, whose first argument is ``I<Operation>Params`` (the path parameters in
camelCase, the query parameters under their own names) and whose ``data`` argument, when the
operation has a body, is ``I<Operation>Payload``. The test reads those (nothing runs) and checks
every Etsy tool: method and path, query and body names, the body fields the document requires,
and that an input sent as a parameter the document types as a string-literal union lists only
those values. The operation of each tool is the one its documentation pin names
(test_commerce_documented.py).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_commerce_documented import ETSY_DOCS

from openmolt_core.integrations import HttpTool
from openmolt_integrations import etsy

_JSDOC_OP = re.compile(r"@name (\w+)\s*\n\s*\*\s*@request (\w+):(\S+)")
_SIGNATURE = re.compile(r"^    (\w+): \((.*?)\) => Promise", re.M)
_INTERFACE = re.compile(r"export interface (I\w+) \{(.*?)\n\}", re.S)


def _uncomment(text: str) -> str:
	return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def _members(body: str) -> dict[str, tuple[str, bool]]:
	"""Top-level members of an interface body: name → (type text, optional)."""
	out, depth, current = {}, 0, []
	for char in _uncomment(body) + ";":
		depth += char in "{(["
		depth -= char in "})]"
		if char == ";" and depth == 0:
			match = re.match(r"\s*(\w+)(\?)?\s*:\s*(.*)$", "".join(current), re.S)
			if match:
				out[match.group(1)] = (match.group(3).strip(), bool(match.group(2)))
			current = []
		else:
			current.append(char)
	return out


@pytest.fixture(scope="module")
def etsy_reference(etsy_api_files: dict[str, str]) -> dict[str, dict[str, Any]]:
	"""operationId → method, path, params and payload members (name → (type, optional))."""
	files = etsy_api_files
	interfaces = {
		name: _members(body) for name, body in _INTERFACE.findall(files["data-contracts.d.ts"])
	}
	ops: dict[str, dict[str, Any]] = {}
	for name, text in files.items():
		if not name.endswith(".js"):
			continue
		for op, method, path in _JSDOC_OP.findall(text):
			ops[op[0].lower() + op[1:]] = {"method": method, "path": path}
		for method_name, args in _SIGNATURE.findall(files.get(name[:-3] + ".d.ts", "")):
			if method_name in ops:
				params = re.search(r": (I\w+Params)\b", args)
				payload = re.search(r"data: (I\w+Payload)\b", args)
				ops[method_name]["params"] = interfaces[params.group(1)] if params else {}
				ops[method_name]["payload"] = interfaces[payload.group(1)] if payload else {}
	assert len(ops) > 60, "etsy-ts no longer lists Etsy's operations where the test looks"
	assert all("params" in op for op in ops.values()), "an etsy-ts signature was not read"
	return ops


def _operation(tool: HttpTool) -> str:
	return ETSY_DOCS[tool.handle][0].split("#operation/")[1]


def _literals(type_text: str) -> set[str] | None:
	"""The values of a string-literal union (``"a" | "b" | null``), or None for another type."""
	parts = [p.strip() for p in type_text.split("|")]
	values = {p.strip('"') for p in parts if p.startswith('"')}
	rest = [p for p in parts if not p.startswith('"') and p != "null"]
	return values if values and not rest else None


def _enum_of(prop: dict[str, Any]) -> list[Any] | None:
	item = prop.get("items", prop) if prop.get("type") == "array" else prop
	return item.get("enum")


@pytest.mark.parametrize("tool", etsy.TOOLS, ids=lambda t: t.handle)
def test_etsy_tool_is_an_open_api_v3_operation(tool, etsy_reference, shape) -> None:
	"""Method, path, query and body names of each tool are its operation's in the document."""
	op = etsy_reference.get(_operation(tool))
	assert op, f"{tool.handle}: {_operation(tool)} is not in Etsy's Open API v3"
	s = shape(tool)
	assert (s["method"], s["path"]) == (op["method"], op["path"]), tool.handle
	path_params = set(re.findall(r"\{(\w+)\}", op["path"]))
	camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), p) for p in path_params}
	query = set(op["params"]) - camel
	assert s["query"] <= query, f"{tool.handle}: query {s['query'] - query} not in the document"
	sent = s["body"] | s["files"]
	assert sent <= set(op["payload"]), f"{tool.handle}: body {sent - set(op['payload'])}"
	required = {n for n, (_, optional) in op["payload"].items() if not optional}
	assert required <= sent, f"{tool.handle}: the document requires {required - sent}"


@pytest.mark.parametrize("tool", etsy.TOOLS, ids=lambda t: t.handle)
def test_etsy_enums_are_the_documents_literals(tool, etsy_reference, shape) -> None:
	"""An input sent as a parameter the document types as a string-literal union has an enum
	of those values only (sort_on, sort_order, type, state, when_made...)."""
	op = etsy_reference[_operation(tool)]
	members = {**op["params"], **op["payload"]}
	props = tool.input_schema.get("properties", {})
	s = shape(tool)
	for name in (s["query"] | s["body"]) & set(members) & set(props):
		literals = _literals(members[name][0])
		if literals is None:
			continue
		enum = _enum_of(props[name])
		assert enum is not None, f"{tool.handle}.{name}: the document allows only {literals}"
		assert set(enum) <= literals, (tool.handle, name, set(enum) - literals)


def test_a_wrong_etsy_request_fails_the_check(etsy_reference, shape) -> None:
	"""The check catches a wrong path and an unknown body name."""
	tool = next(t for t in etsy.TOOLS if t.handle == "createReceiptShipment")
	moved = tool.model_copy(update={"endpoint": tool.endpoint.replace("receipts", "orders")})
	with pytest.raises(AssertionError):
		test_etsy_tool_is_an_open_api_v3_operation(moved, etsy_reference, shape)
	body = {**tool.body, "tracking_number": "{{ input.tracking_code }}"}
	renamed = tool.model_copy(update={"body": body})
	with pytest.raises(AssertionError, match="tracking_number"):
		test_etsy_tool_is_an_open_api_v3_operation(renamed, etsy_reference, shape)
