"""Etsy tools against Etsy's Open API v3 document, as the ``etsy-ts`` npm package types it.

Etsy publishes its Open API v3 document on its developer site only (no registry package of its
own). ``etsy-ts`` (npm, pinned 8.0.1) is generated from that document by swagger-typescript-api:
each operation is a method whose JSDoc carries ``@name <operationId>`` and ``@request
METHOD:/v3/...``, whose first argument is ``I<Operation>Params`` (the path parameters in
camelCase, the query parameters under their own names) and whose ``data`` argument, when the
operation has a body, is ``I<Operation>Payload``. The test reads those (nothing runs) and checks
every Etsy tool: method and path, query and body names, the body fields the document requires,
that an input sent as a parameter the document types as a string-literal union lists only
those values, and that an input sent as a numeric parameter has its type (``@format int64`` an
integer) and stays within its ``@min``/``@max``, and that the body goes in the encoding the
operation's request names (``type: ContentType.UrlEncoded``, ``FormData`` or ``Json``). The
operation of each tool is the one its documentation pin names (test_commerce_documented.py).
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
# An operation's request call: its ``@name`` up to the ``ContentType`` it sends its body as.
_CONTENT_TYPE = re.compile(
	r"@name (\w+)\s*\n(?:(?!@name ).)*?_this\.http\.request\(((?:(?!\);).)*)\);", re.S
)
_WIRE = {
	"UrlEncoded": "application/x-www-form-urlencoded",
	"FormData": "multipart/form-data",
	"Json": "application/json",
}


def _uncomment(text: str) -> str:
	return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


_DOC_MEMBER = re.compile(r"/\*\*((?:(?!\*/).)*?)\*/\s*^ {4}(\w+)\??:", re.S | re.M)


def _doc_tags(body: str) -> dict[str, dict[str, str]]:
	"""The JSDoc tags of each member of an interface body: name → {"format": "int64", "min": ...}."""
	return {
		name: dict(re.findall(r"@(format|min|max) (\S+)", doc))
		for doc, name in _DOC_MEMBER.findall(body)
	}


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
	bodies = dict(_INTERFACE.findall(files["data-contracts.d.ts"]))
	interfaces = {name: _members(body) for name, body in bodies.items()}
	ops: dict[str, dict[str, Any]] = {}
	for name, text in files.items():
		if not name.endswith(".js"):
			continue
		for op, method, path in _JSDOC_OP.findall(text):
			ops[op[0].lower() + op[1:]] = {"method": method, "path": path}
		for op, call in _CONTENT_TYPE.findall(text):
			kind = re.search(r"ContentType\.(\w+)", call)
			ops[op[0].lower() + op[1:]]["content_type"] = _WIRE[kind.group(1)] if kind else None
		for method_name, args in _SIGNATURE.findall(files.get(name[:-3] + ".d.ts", "")):
			if method_name in ops:
				params = re.search(r": (I\w+Params)\b", args)
				payload = re.search(r"data: (I\w+Payload)\b", args)
				ops[method_name]["params"] = interfaces[params.group(1)] if params else {}
				ops[method_name]["payload"] = interfaces[payload.group(1)] if payload else {}
				named = [m.group(1) for m in (params, payload) if m]
				ops[method_name]["tags"] = {
					k: v for n in named for k, v in _doc_tags(bodies[n]).items()
				}
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


# Inputs sent in another (documented) form than the document's type, and why.
ETSY_TYPE_EXCEPTIONS = {
	"tags": "one comma-separated string (the document's description of the form field)",
	"materials": "one comma-separated string, as tags",
}


def _camel(name: str) -> str:
	return re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)


def etsy_number_problems(tool: HttpTool, op: dict[str, Any]) -> list[str]:
	"""Path, query and body inputs whose type or bounds differ from the document's: an int64 or
	int32 parameter is an integer input, a float one a number, an array an array; a documented
	``@min``/``@max`` is carried as a bound at least as strict (946684800 for min_created...)."""
	props = tool.input_schema.get("properties", {})
	members = {**op["params"], **op["payload"]}
	sent = {**tool.query_params, **(tool.body if isinstance(tool.body, dict) else {})}
	for name in re.findall(r"input\.(\w+)", tool.endpoint):
		sent[name] = "{{ input." + name + " }}"
	problems = []
	for name, value in sent.items():
		source = re.fullmatch(r"\{\{ input\.(\w+) \}\}", str(value))
		ref = members.get(name) or members.get(_camel(name))
		if not (source and ref and source.group(1) in props) or name in ETSY_TYPE_EXCEPTIONS:
			continue
		ours = props[source.group(1)]
		tags = op["tags"].get(name) or op["tags"].get(_camel(name)) or {}
		base = ref[0].replace("| null", "").strip()
		expected = {"boolean": "boolean", "string": "string"}.get(base)
		if base == "number":
			expected = "integer" if tags.get("format") in ("int64", "int32") else "number"
		elif base.endswith("[]"):
			expected = "array"
		if expected and ours.get("type") != expected:
			problems.append(f"{tool.handle}.{name}: {ours.get('type')}, the document: {ref[0]}")
		if "min" in tags and not ours.get("minimum", float("-inf")) >= float(tags["min"]):
			problems.append(f"{tool.handle}.{name}: minimum {ours.get('minimum')} < {tags['min']}")
		limit = float(tags.get("max", "inf"))
		if limit < 1e300 and not ours.get("maximum", float("inf")) <= limit:
			problems.append(f"{tool.handle}.{name}: maximum {ours.get('maximum')} > {tags['max']}")
	return problems


@pytest.mark.parametrize("tool", etsy.TOOLS, ids=lambda t: t.handle)
def test_etsy_numbers_have_the_documents_types_and_bounds(tool, etsy_reference) -> None:
	"""Every input sent as an Etsy parameter has the document's type (int64 ids and Unix times
	are integers, prices numbers) and keeps its @min/@max (limit 1-100, min_created from 2000)."""
	assert etsy_number_problems(tool, etsy_reference[_operation(tool)]) == []


def test_a_loosened_etsy_bound_or_type_fails_the_check(etsy_reference) -> None:
	"""min_created below Etsy's 2000-01-01 floor, or a limit typed as a string, is reported."""
	tool = next(t for t in etsy.TOOLS if t.handle == "listReceipts")
	op = etsy_reference[_operation(tool)]
	props = tool.input_schema["properties"]
	loose = {**props, "min_created": {**props["min_created"], "minimum": 0}}
	loose["limit"] = {**props["limit"], "type": "string"}
	broken = tool.model_copy(update={"input_schema": {**tool.input_schema, "properties": loose}})
	assert etsy_number_problems(broken, op) == [
		"listReceipts.min_created: minimum 0 < 946684800",
		"listReceipts.limit: string, the document: number",
	]


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


def _wire_type(tool: HttpTool) -> str | None:
	"""The Content-Type the engine sends the tool's body as (None without a body)."""
	if tool.body is None and not tool.files:
		return None
	fmt = tool.request_format or etsy.INTEGRATION.api_setup.request_format
	if fmt == "multipart" or (fmt == "form-data" and tool.files):
		return "multipart/form-data"
	return {"form-data": "application/x-www-form-urlencoded", "json": "application/json"}[fmt]


@pytest.mark.parametrize("tool", etsy.TOOLS, ids=lambda t: t.handle)
def test_etsy_body_is_sent_in_the_documents_encoding(tool, etsy_reference) -> None:
	"""Each body goes as its operation's request content type: listings and return policies
	form-encoded, images multipart, inventory and receipt tracking JSON."""
	op = etsy_reference[_operation(tool)]
	assert _wire_type(tool) == op["content_type"], (tool.handle, op["content_type"])
