"""Conformance of Notion, Stripe, GitHub and Shopify tools with the services' official references.

References: @notionhq/client@5.26.0 endpoint definitions, the stripe PyPI package's services and
params, @octokit/openapi@23.0.2 (GitHub's OpenAPI), @shopify/dev-mcp@1.16.0's Admin API 2026-10
introspection. The npm ones are read from ``.cache/refs`` (see conftest.py).
"""

from __future__ import annotations

import collections.abc
import copy
import json
import re
import sys
import typing
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from graphql import (
	GraphQLInputObjectType,
	OperationDefinitionNode,
	TypeInfo,
	TypeInfoVisitor,
	Undefined,
	Visitor,
	build_client_schema,
	get_named_type,
	parse,
	validate,
	visit,
)
from graphql.validation import NoDeprecatedCustomRule, specified_rules

from openmolt_core.integrations.schema import IDEMPOTENCY_KEY
from openmolt_integrations import github, notion, shopify
from openmolt_integrations import stripe as stripe_integration


def _norm(path: str) -> str:
	return re.sub(r"\{[^}]+\}", "{}", path)


def template_inputs(value: Any) -> set[str]:
	"""The inputs a template value refers to (``{{ input.x }}``, ``{{ input.x | f }}``)."""
	return set(re.findall(r"\binput\.(\w+)", json.dumps(value)))


def path_template(endpoint: str) -> str:
	"""``/repos/{{ input.owner }}/x`` → ``/repos/{owner}/x`` (filters and tags dropped)."""
	untagged = re.sub(r"\{%.*?%\}", "", endpoint)
	return re.sub(r"\{\{\s*input\.(\w+)[^}]*\}\}", r"{\1}", untagged)


# Notion ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", notion.TOOLS, ids=lambda t: t.handle)
def test_notion_tool_matches_the_sdk(tool, notion_endpoints, shape) -> None:
	"""Method, path, path/query/body/form params of each Notion tool exist in @notionhq/client."""
	s = shape(tool)
	matches = [e for e in notion_endpoints if e["method"] == s["method"] and e["path"] == s["path"]]
	assert matches, f"{s['method']} {s['path']} is not a Notion endpoint"
	(ref,) = matches
	assert set(re.findall(r"\{(\w+)\}", s["path"])) == ref["pathParams"]
	assert s["query"] <= ref["queryParams"], s["query"] - ref["queryParams"]
	assert s["body"] <= ref["bodyParams"], s["body"] - ref["bodyParams"]
	assert s["files"] <= ref["formDataParams"]


@pytest.mark.parametrize("tool", notion.TOOLS, ids=lambda t: t.handle)
def test_notion_enums_are_the_sdk_literals(tool, notion_endpoints, notion_literals, shape) -> None:
	"""An input sent as a Notion parameter typed as a string literal union keeps an enum within
	that union (createFileUpload mode, updatePageMarkdown type...)."""
	s = shape(tool)
	(ref,) = [e for e in notion_endpoints if e["method"] == s["method"] and e["path"] == s["path"]]
	literals = notion_literals.get(ref["name"], {})
	props = tool.input_schema["properties"]
	for name in (s["query"] | s["body"]) & set(literals):
		assert "enum" in props[name], f"{tool.handle}.{name}: enum {literals[name]} dropped"
		assert set(props[name]["enum"]) <= literals[name], (tool.handle, name)


def test_notion_nested_type_enums_are_the_sdk_literals(
	notion_endpoints, notion_named_unions, shape
) -> None:
	"""An object input sent as a Notion parameter typed by a named union (``position``) offers only
	that union's ``type`` values: pages take page_start/page_end, blocks take start/end
	(@notionhq/client 5.26.0, Notion-Version 2026-03-11)."""
	params, literals = notion_named_unions
	checked = set()
	for tool in notion.TOOLS:
		s = shape(tool)
		(ref,) = [
			e for e in notion_endpoints if e["method"] == s["method"] and e["path"] == s["path"]
		]
		props = tool.input_schema["properties"]
		for name in s["body"]:
			union = params.get(ref["name"], {}).get(name)
			kinds = props.get(name, {}).get("properties", {}).get("type", {}).get("enum")
			if union in literals and kinds is not None:
				assert set(kinds) <= literals[union], (tool.handle, name, literals[union])
				checked.add(f"{tool.handle}.{name}")
	assert {"createPage.position", "appendBlockChildren.position"} <= checked


def test_notion_rich_text_and_block_arrays_hold_at_most_100_items() -> None:
	"""Every rich_text or children array a Notion tool takes is capped at 100 items.

	https://developers.notion.com/reference/request-limits: "Any array of rich text objects:
	100 elements", "Any array of all block types ...: 100 elements".
	"""

	def arrays(schema: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
		for name, prop in schema.get("properties", {}).items():
			if name in {"rich_text", "children"} and prop.get("type") == "array":
				yield f"{path}.{name}", prop
			yield from arrays(prop, f"{path}.{name}")

	found = [
		(where, prop)
		for tool in notion.INTEGRATION.tools
		for where, prop in arrays(tool.input_schema, tool.handle)
	]
	assert {where for where, _ in found} >= {
		"createPage.children",
		"appendBlockChildren.children",
		"createComment.rich_text",
	}
	for where, prop in found:
		assert prop.get("maxItems", 101) <= 100, where


def test_notion_uses_the_2026_03_11_names() -> None:
	"""Notion tools target 2026-03-11: in_trash instead of archived, position instead of after."""
	assert notion.INTEGRATION.api_setup.headers["Notion-Version"] == "2026-03-11"
	for tool in notion.TOOLS:
		keys = set(tool.body) if isinstance(tool.body, dict) else set()
		assert not keys & {"archived", "after", "is_archived"}, tool.handle


# Stripe ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stripe_operations() -> dict[tuple[str, str], set[str]]:
	"""(method, normalized path) → param names, from the stripe package's services and params."""
	import stripe

	root = Path(stripe.__file__).parent
	call = re.compile(r'self\._request\(\s*"(get|post|delete)",\s*"(/v1/[^"]+)"')
	params_cls = re.compile(r'params: "?(?:Optional\[)?"(\w+Params)"')
	ops: dict[tuple[str, str], set[str]] = {}
	for path in root.rglob("_*_service.py"):
		rel = path.relative_to(root).parent.parts
		module = import_module(".".join(["stripe", "params", *rel]))
		for chunk in path.read_text().split("\n    def ")[1:]:
			m = call.search(chunk)
			if not m:
				continue
			keys: set[str] = set()
			p = params_cls.search(chunk)
			if p:
				cls = getattr(module, p.group(1))
				keys = set(cls.__required_keys__) | set(cls.__optional_keys__)
			ops.setdefault((m.group(1).upper(), _norm(m.group(2))), set()).update(keys)
	assert len(ops) > 400
	return ops


def _stripe_paths(tool) -> list[str]:
	endpoint = re.sub(r"\{\{\s*input\.(\w+)[^}]*\}\}", r"{\1}", tool.endpoint)
	props = tool.input_schema["properties"]
	if "{resource}" in endpoint:
		return [endpoint.replace("{resource}", r) for r in props["resource"]["enum"]]
	return [endpoint]


@pytest.mark.parametrize("tool", stripe_integration.TOOLS, ids=lambda t: t.handle)
def test_stripe_tool_matches_the_sdk(tool, stripe_operations, shape) -> None:
	"""Each Stripe tool's method, path and parameter names exist in the stripe package."""
	s = shape(tool)
	for path in _stripe_paths(tool):
		key = (tool.method, _norm(path))
		assert key in stripe_operations, f"{key} is not a Stripe API operation"
		params = stripe_operations[key]
		sent = s["query"] | s["body"]
		assert sent <= params, f"{tool.handle} {path}: unknown params {sent - params}"


@pytest.fixture(scope="module")
def stripe_literals() -> dict[tuple[str, str], dict[str, set[str]]]:
	"""(method, normalized path) → param name → the string Literal values its annotation allows
	(without "", Stripe's "unset" value), from the stripe package's params TypedDicts."""
	import stripe

	root = Path(stripe.__file__).parent
	call = re.compile(r'self\._request\(\s*"(get|post|delete)",\s*"(/v1/[^"]+)"')
	params_cls = re.compile(r'params: "?(?:Optional\[)?"(\w+Params)"')
	out: dict[tuple[str, str], dict[str, set[str]]] = {}
	for path in root.rglob("_*_service.py"):
		rel = path.relative_to(root).parent.parts
		module = import_module(".".join(["stripe", "params", *rel]))
		for chunk in path.read_text().split("\n    def ")[1:]:
			m, p = call.search(chunk), params_cls.search(chunk)
			if not (m and p):
				continue
			cls = getattr(module, p.group(1))
			annotations: dict[str, Any] = {}
			for base in reversed(cls.__mro__):
				annotations |= getattr(base, "__annotations__", {})
			values = {}
			for name, annotation in annotations.items():
				text = annotation if isinstance(annotation, str) else repr(annotation)
				literal = set()
				for body in re.findall(r"Literal\[([^\]]*)\]", text):
					literal |= set(re.findall(r"[\"']([^\"']*)[\"']", body)) - {""}
				if literal:
					values[name] = literal
			out[(m.group(1).upper(), _norm(m.group(2)))] = values
	return out


@pytest.mark.parametrize("tool", stripe_integration.TOOLS, ids=lambda t: t.handle)
def test_stripe_enums_are_the_sdk_literals(tool, stripe_literals, shape) -> None:
	"""Every parameter the stripe package types as a Literal has exactly those values as the
	input's enum (reason, mode, collection_method, status...), so none drifts or is dropped."""
	s = shape(tool)
	props = tool.input_schema["properties"]
	for path in _stripe_paths(tool):
		literals = stripe_literals[(tool.method, _norm(path))]
		for name in s["query"] | s["body"]:
			if name in literals:
				assert set(props[name].get("enum", ())) == literals[name], (tool.handle, name)
			elif "enum" in props[name] and name != "resource":
				raise AssertionError(f"{tool.handle}.{name}: an enum the SDK does not declare")


@pytest.fixture(scope="module")
def stripe_required() -> dict[tuple[str, str], set[str]]:
	"""(method, normalized path) → the params the stripe package's TypedDict requires."""
	import stripe

	root = Path(stripe.__file__).parent
	call = re.compile(r'self\._request\(\s*"(get|post|delete)",\s*"(/v1/[^"]+)"')
	params_cls = re.compile(r'params: "?(?:Optional\[)?"(\w+Params)"')
	out: dict[tuple[str, str], set[str]] = {}
	for path in root.rglob("_*_service.py"):
		rel = path.relative_to(root).parent.parts
		module = import_module(".".join(["stripe", "params", *rel]))
		for chunk in path.read_text().split("\n    def ")[1:]:
			m, p = call.search(chunk), params_cls.search(chunk)
			if m and p:
				cls = getattr(module, p.group(1))
				out[(m.group(1).upper(), _norm(m.group(2)))] = set(cls.__required_keys__)
	assert out[("POST", "/v1/payment_links")] == {"line_items"}
	return out


def stripe_required_problems(tool, required: dict[tuple[str, str], set[str]]) -> list[str]:
	"""Params the SDK requires that the tool does not send from a required input (or a constant)."""
	problems = []
	sent = dict(tool.query_params) | (tool.body if isinstance(tool.body, dict) else {})
	needed = set(tool.input_schema.get("required", []))
	for path in _stripe_paths(tool):
		for name in sorted(required.get((tool.method, _norm(path)), set())):
			if name not in sent:
				problems.append(f"{tool.handle}: required param {name} is not sent")
				continue
			inputs = template_inputs(sent[name])
			if inputs and not inputs & needed:
				problems.append(f"{tool.handle}: required param {name} comes from optional input")
		for name in re.findall(r"\{(\w+)\}", path):
			if name != "resource" and name not in needed:
				problems.append(f"{tool.handle}: path param {name} is not a required input")
	return problems


@pytest.mark.parametrize("tool", stripe_integration.TOOLS, ids=lambda t: t.handle)
def test_stripe_required_params_come_from_required_inputs(tool, stripe_required) -> None:
	"""Every parameter the stripe package requires (line_items of a payment link...) and every
	path parameter is sent from a required input, so a call without it is refused before sending."""
	assert stripe_required_problems(tool, stripe_required) == []


def test_the_stripe_required_check_rejects_an_optional_required_param(stripe_required) -> None:
	"""A payment link whose line_items input is optional, or left out of the body, is reported."""
	(tool,) = [t for t in stripe_integration.TOOLS if t.handle == "createPaymentLink"]
	optional = tool.model_copy(update={"input_schema": {**tool.input_schema, "required": []}})
	assert stripe_required_problems(optional, stripe_required) == [
		"createPaymentLink: required param line_items comes from optional input"
	]
	body = {k: v for k, v in tool.body.items() if k != "line_items"}
	dropped = tool.model_copy(update={"body": body})
	assert stripe_required_problems(dropped, stripe_required) == [
		"createPaymentLink: required param line_items is not sent"
	]
	(void,) = [t for t in stripe_integration.TOOLS if t.handle == "voidInvoice"]
	loose = void.model_copy(update={"input_schema": {**void.input_schema, "required": []}})
	assert stripe_required_problems(loose, stripe_required) == [
		"voidInvoice: path param invoice is not a required input"
	]


@pytest.fixture(scope="module")
def stripe_params() -> dict[tuple[str, str], type]:
	"""(method, normalized path) → the stripe package's params TypedDict of the operation."""
	import stripe

	root = Path(stripe.__file__).parent
	call = re.compile(r'self\._request\(\s*"(get|post|delete)",\s*"(/v1/[^"]+)"')
	params_cls = re.compile(r'params: "?(?:Optional\[)?"(\w+Params)"')
	out: dict[tuple[str, str], type] = {}
	for path in root.rglob("_*_service.py"):
		module = import_module(".".join(["stripe", "params", *path.relative_to(root).parent.parts]))
		for chunk in path.read_text().split("\n    def ")[1:]:
			m, p = call.search(chunk), params_cls.search(chunk)
			if m and p:
				out[(m.group(1).upper(), _norm(m.group(2)))] = getattr(module, p.group(1))
	return out


def _stripe_hints(cls: type) -> dict[str, Any]:
	"""A params TypedDict's annotations, evaluated in its module (NotRequired kept)."""
	out: dict[str, Any] = {}
	for base in reversed(cls.__mro__):
		names = {**vars(typing), **vars(collections.abc), **vars(sys.modules[base.__module__])}
		for key, value in getattr(base, "__annotations__", {}).items():
			ref = typing.ForwardRef(value) if isinstance(value, str) else value
			try:
				out[key] = typing._eval_type(ref, names, names)  # type: ignore[attr-defined]
			except NameError:  # a name only imported for type checking (StripeContext)
				out[key] = value
	return out


_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}


def stripe_nested_problems(where: str, ours: dict[str, Any], annotation: Any) -> list[str]:
	"""An input against the stripe package's annotation of the parameter it fills: its JSON type
	is one the annotation allows, an enum stays within the Literal values, and an object's
	properties are the TypedDict's keys with every required key required, all the way down."""
	from typing import Literal, NotRequired, Union, get_args, get_origin

	from typing_extensions import is_typeddict

	def alternatives(t: Any) -> list[Any]:
		if get_origin(t) in (Union, NotRequired):
			return [a for arg in get_args(t) for a in alternatives(arg)]
		return [] if t is type(None) else [t]

	options = alternatives(annotation)
	if "anyOf" in ours:  # a field with Stripe's unset value "" beside its own schema
		problems = []
		blank = "" in {v for a in options if get_origin(a) is Literal for v in get_args(a)}
		for branch in ours["anyOf"]:
			if branch.get("enum") == [""]:
				if not blank:
					problems.append(f'{where}: takes "", the SDK: {annotation}')
				continue
			problems += stripe_nested_problems(where, branch, annotation)
		return problems
	kinds = {
		str if get_origin(a) is Literal else dict if is_typeddict(a) else get_origin(a) or a
		for a in options
	}
	kinds = {dict if k is collections.abc.Mapping else k for k in kinds}
	problems = []
	json_type = _JSON_TYPES.get(ours.get("type", ""))
	if json_type and json_type not in kinds:
		problems.append(f"{where}: {ours['type']}, the SDK: {annotation}")
	literals = {v for a in options if get_origin(a) is Literal for v in get_args(a)} - {""}
	if "enum" in ours and literals and not set(ours["enum"]) <= literals:
		problems.append(f"{where}: enum {set(ours['enum']) - literals} not in the SDK's")
	for option in options:
		if ours.get("type") == "array" and get_origin(option) is list and "items" in ours:
			problems += stripe_nested_problems(f"{where}[]", ours["items"], get_args(option)[0])
		if ours.get("type") == "object" and ours.get("properties") and is_typeddict(option):
			hints = _stripe_hints(option)
			unknown = set(ours["properties"]) - set(hints)
			if unknown:
				problems.append(f"{where}: {sorted(unknown)} not in {option.__name__}")
			missing = set(option.__required_keys__) - set(ours.get("required", []))
			if missing:
				problems.append(f"{where}: {option.__name__} requires {sorted(missing)}")
			for name, prop in ours["properties"].items():
				if name in hints:
					problems += stripe_nested_problems(f"{where}.{name}", prop, hints[name])
	return problems


def stripe_tool_nested_problems(tool, params: dict[tuple[str, str], type]) -> list[str]:
	"""`stripe_nested_problems` for every input a tool sends under a parameter's name."""
	props = tool.input_schema["properties"]
	sent = dict(tool.query_params) | (tool.body if isinstance(tool.body, dict) else {})
	problems = []
	for path in _stripe_paths(tool):
		hints = _stripe_hints(params[(tool.method, _norm(path))])
		for name, value in sent.items():
			inputs = template_inputs(value)
			key = name.removesuffix("[]")
			if key in hints and len(inputs) == 1 and (source := next(iter(inputs))) in props:
				problems += stripe_nested_problems(
					f"{tool.handle}.{key}", props[source], hints[key]
				)
	return sorted(set(problems))


@pytest.mark.parametrize("tool", stripe_integration.TOOLS, ids=lambda t: t.handle)
def test_stripe_inputs_have_the_sdk_types_all_the_way_down(tool, stripe_params) -> None:
	"""Every input has the type the stripe package gives its parameter, and nested objects
	(a payment link's line_items[].adjustable_quantity, after_completion.redirect...) have the
	TypedDict's keys, its required keys required and its Literal values as enums."""
	assert stripe_tool_nested_problems(tool, stripe_params) == []


def test_a_wrong_nested_stripe_input_fails_the_check(stripe_params) -> None:
	"""A redirect without its required url, a quantity typed as a string and an unknown
	after_completion type are reported."""
	(tool,) = [t for t in stripe_integration.TOOLS if t.handle == "createPaymentLink"]
	schema = copy.deepcopy(tool.input_schema)
	after = schema["properties"]["after_completion"]["properties"]
	after["redirect"]["required"] = []
	after["type"]["enum"].append("popup")
	schema["properties"]["line_items"]["items"]["properties"]["quantity"]["type"] = "string"
	broken = tool.model_copy(update={"input_schema": schema})
	problems = stripe_tool_nested_problems(broken, stripe_params)
	assert problems == [
		"createPaymentLink.after_completion.redirect: "
		"PaymentLinkCreateParamsAfterCompletionRedirect requires ['url']",
		"createPaymentLink.after_completion.type: enum {'popup'} not in the SDK's",
		f"createPaymentLink.line_items[].quantity: string, the SDK: {int}",
	]


def test_stripe_version_is_the_sdk_version() -> None:
	"""The Stripe-Version header is the API version the stripe package pins."""
	from stripe._api_version import _ApiVersion

	assert stripe_integration.STRIPE_VERSION == _ApiVersion.CURRENT
	assert stripe_integration.INTEGRATION.api_setup.headers["Stripe-Version"] == _ApiVersion.CURRENT
	assert stripe_integration.INTEGRATION.api_setup.request_format == "form-data"


# GitHub ------------------------------------------------------------------------------------


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
	while "$ref" in node:
		target: Any = spec
		for part in node["$ref"].split("/")[1:]:
			target = target[part]
		node = target
	return node


def _body_schema(spec: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
	"""An operation's JSON body schema; a ``oneOf`` of an object and a bare array (addLabels:
	``{"labels": [...]}`` or ``[...]``) is its object branch."""
	body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
	schema = _resolve(spec, body.get("schema", {})) if body else {}
	branches = [_resolve(spec, branch) for branch in schema.get("oneOf", [])]
	objects = [branch for branch in branches if branch.get("type") == "object"]
	return objects[0] if "properties" not in schema and len(objects) == 1 else schema


def _removed_in_version(op: dict[str, Any], version: str) -> set[str]:
	"""Body properties a calendar version's breaking changes remove (patch value null)."""
	removed: set[str] = set()
	for change in op.get("x-github-breaking-changes", []):
		if change.get("version") != version:
			continue
		patch = change.get("patch")
		if isinstance(patch, dict):
			schema = (
				patch.get("requestBody", {})
				.get("content", {})
				.get("application/json", {})
				.get("schema", {})
			)
			removed |= {k for k, v in schema.get("properties", {}).items() if v is None}
		elif isinstance(patch, list):
			for item in patch:
				if item.get("op") == "remove" and "/properties/" in item.get("path", ""):
					removed.add(item["path"].rsplit("/", 1)[-1])
	return removed


@pytest.mark.parametrize("tool", github.TOOLS, ids=lambda t: t.handle)
def test_github_tool_matches_the_openapi(tool, github_openapi, shape) -> None:
	"""Each GitHub tool's method, path, query and body params exist in GitHub's OpenAPI (2026-03-10)."""
	s = shape(tool)
	paths = [s["path"]]
	if "{type}" in s["path"]:
		paths = [s["path"].replace("{type}", t) for t in github.SEARCH_TYPES]
	for path in paths:
		assert path in github_openapi["paths"], f"{path} is not a GitHub path"
		op = github_openapi["paths"][path].get(tool.method.lower())
		assert op, f"{tool.method} {path} is not a GitHub operation"
		params = [_resolve(github_openapi, p) for p in op.get("parameters", [])]
		path_params = {p["name"] for p in params if p["in"] == "path"}
		assert set(re.findall(r"\{(\w+)\}", path)) == path_params
		query = {p["name"] for p in params if p["in"] == "query"}
		assert s["query"] <= query, s["query"] - query
		required_query = {p["name"] for p in params if p["in"] == "query" and p.get("required")}
		assert required_query <= s["query"]
		schema = _body_schema(github_openapi, op)
		allowed = set(schema.get("properties", {})) - _removed_in_version(
			op, github.GITHUB_API_VERSION
		)
		assert s["body"] <= allowed, s["body"] - allowed
		assert set(schema.get("required", [])) <= s["body"]


GITHUB_ONE_OF = {
	("putFile", "content"): "composed from content (text) or content_base64 (bytes), one of two",
}
"""Required fields filled from one of several optional inputs, and why."""


def github_required_problems(tool, spec: dict[str, Any]) -> list[str]:
	"""Path params, required query params and required body fields that no required input fills."""
	s_path = path_template(tool.endpoint)
	paths = [s_path]
	if "{type}" in s_path:
		paths = [s_path.replace("{type}", t) for t in github.SEARCH_TYPES]
	needed = set(tool.input_schema.get("required", []))
	sent = dict(tool.query_params) | (tool.body if isinstance(tool.body, dict) else {})
	problems = []
	for path in paths:
		op = spec["paths"][path][tool.method.lower()]
		params = [_resolve(spec, p) for p in op.get("parameters", [])]
		names = {p["name"] for p in params if p["in"] == "path"}
		names |= {p["name"] for p in params if p["in"] == "query" and p.get("required")}
		schema = _body_schema(spec, op)
		for name in sorted(names | set(schema.get("required", []))):
			source = sent.get(name, f"input.{name}")
			inputs = template_inputs(source)
			if inputs and not inputs & needed and (tool.handle, name) not in GITHUB_ONE_OF:
				problems.append(f"{tool.handle}: required {name} comes from an optional input")
	return problems


@pytest.mark.parametrize("tool", github.TOOLS, ids=lambda t: t.handle)
def test_github_required_params_come_from_required_inputs(tool, github_openapi) -> None:
	"""Every path parameter, required query parameter and required body field of the operation
	(submitPullReview's event, deleteFile's sha, createBranch's ref...) is a required input."""
	assert github_required_problems(tool, github_openapi) == []


def test_the_github_required_check_rejects_an_optional_required_field(github_openapi) -> None:
	"""deleteFile without sha required, or submitPullReview without event required, is reported."""
	for handle, name in [("deleteFile", "sha"), ("submitPullReview", "event")]:
		(tool,) = [t for t in github.TOOLS if t.handle == handle]
		required = [r for r in tool.input_schema["required"] if r != name]
		loose = tool.model_copy(
			update={"input_schema": {**tool.input_schema, "required": required}}
		)
		assert github_required_problems(loose, github_openapi) == [
			f"{handle}: required {name} comes from an optional input"
		]


_CARRIED = ("pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
_CHECKED_FORMATS = {"date-time", "date", "uri", "email", "uuid"}


def _reference_constraints(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
	"""The constraint keywords of a reference schema (those of its oneOf/anyOf branches merged)."""
	schema = _resolve(spec, schema)
	out = {k: schema[k] for k in (*_CARRIED, "format", "enum") if k in schema}
	for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
		for key, value in _reference_constraints(spec, branch).items():
			out.setdefault(key, value)
	return out


def check_carried(
	where: str, ours: dict[str, Any], ref: dict[str, Any], *, enum_required: bool = True
) -> None:
	"""Our input schema carries the reference's checked format, pattern, bounds and enum."""
	if ref.get("format") in _CHECKED_FORMATS:
		assert ours.get("format") == ref["format"], f"{where}: format {ref['format']} dropped"
	for key in _CARRIED:
		if key in ref:
			assert ours.get(key) == ref[key], f"{where}: {key} {ref[key]!r} dropped"
	if "enum" in ours:
		assert set(ours["enum"]) <= set(ref.get("enum", ours["enum"])), where
	elif "enum" in ref and enum_required:
		raise AssertionError(f"{where}: enum {ref['enum']} dropped")


@pytest.mark.parametrize("tool", github.TOOLS, ids=lambda t: t.handle)
def test_github_inputs_carry_the_openapi_constraints(tool, github_openapi, shape) -> None:
	"""Every input a GitHub tool sends as a path, query or body parameter of the same name has
	that parameter's format (date-time...), pattern, bounds and enum from GitHub's OpenAPI."""
	s = shape(tool)
	paths = [s["path"]]
	if "{type}" in s["path"]:
		paths = [s["path"].replace("{type}", t) for t in github.SEARCH_TYPES]
	props = tool.input_schema["properties"]
	checked = 0
	for path in paths:
		op = github_openapi["paths"][path][tool.method.lower()]
		params = [_resolve(github_openapi, p) for p in op.get("parameters", [])]
		refs = {p["name"]: p["schema"] for p in params}
		schema = _body_schema(github_openapi, op)
		refs |= schema.get("properties", {})
		for name in props:
			if name in refs:
				constraints = _reference_constraints(github_openapi, refs[name])
				if len(paths) > 1 and name == "sort":
					# search's sort: each type's values (SEARCH_SORTS), the input lists them all.
					kind = path.rsplit("/", 1)[1]
					assert github.SEARCH_SORTS[kind] == constraints.get("enum"), kind
					constraints = {**constraints, "enum": props[name]["enum"]}
				check_carried(
					f"{tool.handle}.{name}", props[name], constraints, enum_required=len(paths) == 1
				)
				checked += 1
	assert checked or not props


def test_github_search_sort_lists_every_types_values() -> None:
	"""search's sort enum is every search type's sort values (none is dropped), and its
	description says which type takes which."""
	(tool,) = [t for t in github.TOOLS if t.handle == "search"]
	sort = tool.input_schema["properties"]["sort"]
	assert set(github.SEARCH_SORTS) == set(github.SEARCH_TYPES)
	assert set(sort["enum"]) == {v for values in github.SEARCH_SORTS.values() for v in values}
	for kind, values in github.SEARCH_SORTS.items():
		assert f"{kind}: {', '.join(values)}" in sort["description"]


def test_github_sends_the_version_headers() -> None:
	"""GitHub requests pin X-GitHub-Api-Version to a version the OpenAPI knows and accept JSON."""
	headers = github.INTEGRATION.api_setup.headers
	assert headers["X-GitHub-Api-Version"] == "2026-03-10"
	assert headers["Accept"] == "application/vnd.github+json"


# Shopify -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shopify_schema(shopify_introspection):
	# Shopify's schema breaks a graphql-core rule about deprecated interface fields; the
	# documents are still checked with every validation rule.
	return build_client_schema(shopify_introspection["data"], assume_valid=True)


DOCUMENT_TOOLS = [t for t in shopify.TOOLS if t.handle != "graphql"]


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_document_is_valid(tool, shopify_schema) -> None:
	"""Each Shopify document validates against Admin API 2026-10 and uses no deprecated field."""
	document = parse(tool.body["query"])
	errors = validate(shopify_schema, document, [*specified_rules, NoDeprecatedCustomRule])
	assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_variables_match_the_document(tool) -> None:
	"""The tool sends exactly the document's variables, including every required one (from a
	required input, or the call's idempotency key the engine always fills)."""
	(op,) = [
		d for d in parse(tool.body["query"]).definitions if isinstance(d, OperationDefinitionNode)
	]
	declared = {v.variable.name.value for v in op.variable_definitions or ()}
	required = {
		v.variable.name.value
		for v in op.variable_definitions or ()
		if v.type.kind == "non_null_type" and v.default_value is None
	}
	sent = set(tool.body["variables"])
	assert sent == declared
	props = tool.input_schema.get("required", [])
	for name in required:
		value = tool.body["variables"][name]
		if value == IDEMPOTENCY_KEY:
			continue  # the engine fills the call's key in every call
		if isinstance(value, str):
			inner = re.fullmatch(r"\{\{ input\.(\w+) \}\}", value)
			assert inner and inner.group(1) in props, f"{name} must come from a required input"


def _connection_fields(schema: Any, tool: Any) -> list[Any]:
	"""The top-level fields of a query document whose type is a Relay connection."""
	from graphql import get_named_type

	(op,) = [
		d for d in parse(tool.body["query"]).definitions if isinstance(d, OperationDefinitionNode)
	]
	root = schema.query_type if op.operation.value == "query" else None
	if root is None:
		return []
	return [
		node
		for node in op.selection_set.selections
		if get_named_type(root.fields[node.name.value].type).name.endswith("Connection")
	]


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_lists_page_with_the_connections_cursor(tool, shopify_schema) -> None:
	"""A tool listing a connection takes its after cursor and returns pageInfo's endCursor."""
	for node in _connection_fields(shopify_schema, tool):
		arguments = {a.name.value: a.value for a in node.arguments or ()}
		after = arguments.get("after")
		assert after is not None and after.kind == "variable", f"{node.name.value}: no after"
		assert after.name.value in tool.input_schema["properties"]
		page = [s for s in node.selection_set.selections if s.name.value == "pageInfo"]
		assert page, f"{node.name.value} selects no pageInfo"
		assert {s.name.value for s in page[0].selection_set.selections} >= {
			"hasNextPage",
			"endCursor",
		}


_SCALAR_FORMATS = {"DateTime": "date-time", "Date": "date", "URL": "uri"}


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_inputs_carry_the_graphql_enums_and_formats(tool, shopify_schema) -> None:
	"""Every input sent as a variable (or a field of an input object variable) whose GraphQL type
	is an enum lists only its non-deprecated values; DateTime/Date/URL scalars carry the format."""
	from graphql import GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLScalarType
	from graphql.utilities import type_from_ast

	(op,) = [
		d for d in parse(tool.body["query"]).definitions if isinstance(d, OperationDefinitionNode)
	]
	types = {
		v.variable.name.value: type_from_ast(shopify_schema, v.type)
		for v in op.variable_definitions or ()
	}
	props = tool.input_schema["properties"]

	def named(gtype: Any) -> Any:
		while isinstance(gtype, (GraphQLNonNull, GraphQLList)):
			gtype = gtype.of_type
		return gtype

	def walk(values: dict[str, Any], type_of: Any) -> None:
		for key, value in values.items():
			gtype = named(type_of(key))
			if isinstance(value, dict):
				walk(value, lambda field, gtype=gtype: gtype.fields[field].type)
				continue
			match = re.fullmatch(r"\{\{ input\.(\w+) \}\}", value)
			if not match:
				continue
			ours = props[match.group(1)]
			if ours.get("type") == "array":
				ours = ours["items"]
			if isinstance(gtype, GraphQLEnumType):
				allowed = {n for n, v in gtype.values.items() if not v.deprecation_reason}
				assert "enum" in ours, f"{tool.handle}.{match.group(1)}: {gtype.name} enum dropped"
				assert set(ours["enum"]) <= allowed, (tool.handle, set(ours["enum"]) - allowed)
			elif isinstance(gtype, GraphQLScalarType) and gtype.name in _SCALAR_FORMATS:
				assert ours.get("format") == _SCALAR_FORMATS[gtype.name], (tool.handle, key)
			elif isinstance(gtype, GraphQLInputObjectType):
				check_input_object(f"{tool.handle}.{match.group(1)}", ours, gtype)

	walk(tool.body["variables"], lambda name: types[name])


# An enum with more values than this (CurrencyCode, CountryCode: hundreds) may be an input with
# a pattern instead of an enum list; a declared enum must still be a subset.
_LISTED_ENUM_MAX = 40


def check_input_object(where: str, ours: dict[str, Any], gtype: Any) -> None:
	"""An input schema describing a GraphQL input object: its properties are the type's
	non-deprecated fields, every non-null field without a default is required, and nested enums,
	scalars and input objects follow the same rules, all the way down."""
	from graphql import (
		GraphQLEnumType,
		GraphQLInputObjectType,
		GraphQLList,
		GraphQLNonNull,
		GraphQLScalarType,
	)

	if ours.get("type") == "array":
		ours = ours["items"]
	props = ours.get("properties")
	if not props:
		return  # a free-form object (the model writes the GraphQL input itself)
	fields = {n: f for n, f in gtype.fields.items() if not f.deprecation_reason}
	assert set(props) <= set(fields), f"{where}: {set(props) - set(fields)} not in {gtype.name}"
	must = {
		n
		for n, f in fields.items()
		if isinstance(f.type, GraphQLNonNull) and f.default_value is Undefined
	}
	assert must <= set(ours.get("required", [])), f"{where}: {gtype.name} requires {must}"
	for name, prop in props.items():
		field_type = fields[name].type
		while isinstance(field_type, (GraphQLNonNull, GraphQLList)):
			field_type = field_type.of_type
		item = prop["items"] if prop.get("type") == "array" else prop
		if isinstance(field_type, GraphQLEnumType):
			allowed = {n for n, v in field_type.values.items() if not v.deprecation_reason}
			if len(allowed) <= _LISTED_ENUM_MAX:
				assert "enum" in item, f"{where}.{name}: {field_type.name} enum dropped"
			assert set(item.get("enum", allowed)) <= allowed, (where, name)
		elif isinstance(field_type, GraphQLScalarType) and field_type.name in _SCALAR_FORMATS:
			assert item.get("format") == _SCALAR_FORMATS[field_type.name], (where, name)
		elif isinstance(field_type, GraphQLInputObjectType):
			check_input_object(f"{where}.{name}", prop, field_type)


def test_a_shopify_input_object_missing_a_required_field_fails_the_check(shopify_schema) -> None:
	"""The input object check catches a dropped required field and an unknown property."""
	line = shopify_schema.get_type("OrderCreateLineItemInput")
	item = {"type": "object", "properties": {"variantId": {"type": "string"}}}
	with pytest.raises(AssertionError, match="requires"):
		check_input_object("t", {"type": "array", "items": item}, line)
	unknown = {"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]}
	with pytest.raises(AssertionError, match="not in OrderCreateLineItemInput"):
		check_input_object("t", unknown, line)


def test_shopify_oauth_scopes_cover_the_documents(shopify_introspection) -> None:
	"""The OAuth credential asks for an access scope each tool's root field needs."""
	access = {
		(item["typeName"], item["fieldName"]): item["offlineScopes"]
		for item in shopify_introspection["offline_scopes"]["items"]
		if item["type"] == "field" and item["typeName"] in ("QueryRoot", "Mutation")
	}
	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	for tool in DOCUMENT_TOOLS:
		(op,) = parse(tool.body["query"]).definitions
		root = "Mutation" if op.operation.value == "mutation" else "QueryRoot"
		for selection in op.selection_set.selections:
			needed = access.get((root, selection.name.value), [])
			if needed:
				assert set(needed) & set(oauth.scopes), (tool.handle, needed)


def _granted(scopes: list[str]) -> set[str]:
	"""The access scopes a token with ``scopes`` holds: a write scope grants its read scope too
	(Shopify's access scopes reference: "Any scope that writes a resource also grants read
	access to it")."""
	return set(scopes) | {s.replace("write_", "read_", 1) for s in scopes if s.startswith("write_")}


def shopify_scope_gaps(tool, schema, introspection, scopes: list[str]) -> list[str]:
	"""The fields (at any depth) and returned types of a tool's document whose access scopes
	(the Admin API reference's ``offlineScopes``) none of ``scopes`` grants."""
	items = introspection["offline_scopes"]["items"]
	fields = {
		(i["typeName"], i["fieldName"]): i["offlineScopes"] for i in items if i["type"] == "field"
	}
	types = {i["typeName"]: i["offlineScopes"] for i in items if i["type"] == "type"}
	granted = _granted(scopes)
	info = TypeInfo(schema)
	gaps: list[str] = []

	class Fields(Visitor):
		def enter_field(self, node: Any, *_: Any) -> None:
			parent, kind = info.get_parent_type(), info.get_type()
			needed = fields.get((parent.name if parent else "", node.name.value), [])
			named = get_named_type(kind).name if kind else ""
			for where, scopes_needed in (
				(f"{parent}.{node.name.value}", needed),
				(named, types.get(named, [])),
			):
				if scopes_needed and not set(scopes_needed) & granted:
					gaps.append(f"{tool.handle}: {where} needs one of {scopes_needed}")

	visit(parse(tool.body["query"]), TypeInfoVisitor(info, Fields()))
	return gaps


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_oauth_scopes_cover_every_field_selected(
	tool, shopify_schema, shopify_introspection
) -> None:
	"""The OAuth credential grants the access scope of every field a document selects, nested
	ones included (listLocations' Location.name needs read_locations, which no root field
	asks for): without it Shopify answers ACCESS_DENIED for that field."""
	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	assert shopify_scope_gaps(tool, shopify_schema, shopify_introspection, oauth.scopes) == []


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_asks_an_agent_for_the_scopes_its_tool_scopes_select(
	tool, shopify_schema, shopify_introspection
) -> None:
	"""An agent given only a tool's tool scopes is asked (scope_map) for the access scope of every
	field the tool selects: getOrder's read_orders also asks for read_customers, read_products,
	the fulfillment orders' and the locations' scopes."""
	from openmolt_core.integrations.oauth import requested_scopes

	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	asked = requested_scopes(shopify.INTEGRATION, oauth, tool.scopes)
	assert shopify_scope_gaps(tool, shopify_schema, shopify_introspection, asked) == []


def test_shopify_tool_scopes_ask_for_nothing_their_tools_do_not_select(
	shopify_schema, shopify_introspection
) -> None:
	"""Each access scope a tool scope maps to is one some tool of that scope needs (without it a
	field goes unread), so a read-only agent is not asked for write_orders; the raw graphql
	tool, whose document the model writes, asks for all of them."""
	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	assert set(oauth.scope_map) == set(shopify.INTEGRATION.scopes)
	assert set(oauth.scope_map["graphql"]) == set(oauth.scopes)
	for scope, mapped in oauth.scope_map.items():
		if scope == "graphql":
			continue
		tools = [t for t in DOCUMENT_TOOLS if scope in t.scopes]
		assert tools, scope
		for one in mapped:
			fewer = [s for s in mapped if s != one]
			assert any(
				shopify_scope_gaps(t, shopify_schema, shopify_introspection, fewer) for t in tools
			), f"{scope}: asks for {one}, which none of its tools needs"


def test_shopify_declares_that_a_write_scope_includes_its_read_scope() -> None:
	"""Each write scope asked for implies its read scope (Shopify's access scopes reference: a
	scope that writes a resource also grants read access), so a token reply that lists only
	write_orders still grants the read_orders a read tool's scope maps to."""
	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	writes = [s for s in oauth.scopes if s.startswith("write_")]
	assert writes
	assert oauth.implied_scopes == {s: [s.replace("write_", "read_", 1)] for s in writes}
	assert set(_granted(writes)) == set(writes) | {
		i for s in writes for i in oauth.implied_scopes[s]
	}


def test_a_missing_nested_field_scope_fails_the_check(
	shopify_schema, shopify_introspection
) -> None:
	"""Without read_locations, the location fields of listLocations are reported; write_orders
	alone grants read_orders."""
	(tool,) = [t for t in DOCUMENT_TOOLS if t.handle == "listLocations"]
	gaps = shopify_scope_gaps(tool, shopify_schema, shopify_introspection, ["read_inventory"])
	assert "listLocations: Location.isActive needs one of ['read_locations']" in gaps
	assert _granted(["write_orders"]) == {"write_orders", "read_orders"}


@pytest.mark.parametrize("tool", DOCUMENT_TOOLS, ids=lambda t: t.handle)
def test_shopify_input_defaults_are_the_argument_defaults(tool, shopify_introspection) -> None:
	"""An input sent as a root field's argument promises Shopify's default for it (what Shopify
	does when the input is left out): productDelete's synchronous defaults to true, so the
	deletion waits unless synchronous is false."""
	types = {t["name"]: t for t in shopify_introspection["data"]["__schema"]["types"]}
	(op,) = parse(tool.body["query"]).definitions
	root = types["Mutation" if op.operation.value == "mutation" else "QueryRoot"]
	props = tool.input_schema["properties"]
	# A variable's own default (listOrders' reverse: true) is what an omitted input sends.
	declared = {
		v.variable.name.value: v.default_value.value
		for v in op.variable_definitions or ()
		if v.default_value is not None and hasattr(v.default_value, "value")
	}
	for selection in op.selection_set.selections:
		field = next(f for f in root["fields"] if f["name"] == selection.name.value)
		for arg in field["args"]:
			if arg["defaultValue"] in (None, "null") or arg["name"] not in props:
				continue
			literal = declared.get(arg["name"], arg["defaultValue"])
			default = {"true": True, "false": False}.get(literal, literal)
			# A promised default is Shopify's (an input may also promise none).
			assert props[arg["name"]].get("default", default) == default, (tool.handle, arg["name"])
			if arg["name"] == "synchronous":
				text = tool.description + props["synchronous"].get("description", "")
				assert "synchronous false" in text or "synchronous=false" in text, tool.handle


def test_shopify_version_is_a_supported_stable_one(shopify_versions) -> None:
	"""The Admin API version in the URL (the schema the checks read is that version's) is one
	@shopify/dev-mcp lists as supported, not ``unstable``: Shopify keeps a stable version 12
	months, and a request to a retired one is answered by the oldest supported version."""
	names = [v["name"] for v in shopify_versions["admin"]]
	assert shopify.SHOPIFY_API_VERSION in names
	assert shopify.SHOPIFY_API_VERSION != "unstable"
	assert shopify.INTEGRATION.api_version == shopify.SHOPIFY_API_VERSION


def test_shopify_targets_2026_10() -> None:
	"""The base URL carries the shop from config and the 2026-10 Admin API version."""
	base = shopify.INTEGRATION.api_setup.base_url
	assert "{{ config.shop" in base and base.endswith("/admin/api/2026-10")
	assert all(t.endpoint == "/graphql.json" and t.method == "POST" for t in shopify.TOOLS)


@pytest.mark.parametrize("tool", github.TOOLS, ids=lambda t: t.handle)
def test_github_lists_return_the_link_header_that_pages_them(tool, github_openapi, shape) -> None:
	"""A GitHub list pages through its Link header (rel="next"): the tool returns that header."""
	path = shape(tool)["path"].replace("{type}", "issues")
	op = github_openapi["paths"][path][tool.method.lower()]
	response = _resolve(github_openapi, op["responses"].get("200", {}))
	pages = "Link" in response.get("headers", {})
	assert ("Link" in tool.response_headers) == pages
	if pages:
		assert "per_page" in tool.input_schema["properties"]
		assert 'rel="next"' in tool.description


GITHUB_EVERYDAY = {
	"issues/list-for-repo",
	"issues/get",
	"issues/create",
	"issues/update",
	"issues/list-comments",
	"issues/create-comment",
	"pulls/list",
	"pulls/get",
	"pulls/create",
	"pulls/merge",
	"repos/get-content",
	"repos/create-or-update-file-contents",
	"issues/add-labels",
	"issues/remove-label",
	"pulls/request-reviewers",
	"pulls/list-files",
	"actions/get-workflow-run",
	"repos/list-branches",
	"repos/list-releases",
	"repos/get-latest-release",
}
"""The issue, pull request, file and Actions operations people automate most (GitHub
operationIds): triage labels, review requests, a pull's changed files, a dispatched run."""


def test_github_covers_the_everyday_issue_and_pull_operations(github_openapi, shape) -> None:
	"""Each everyday operation of GitHub's OpenAPI is one of the tools (get issue included)."""
	covered = set()
	for tool in github.TOOLS:
		path = shape(tool)["path"]
		op = github_openapi["paths"].get(path, {}).get(tool.method.lower(), {})
		covered.add(op.get("operationId"))
	assert GITHUB_EVERYDAY - covered == set()


def test_stripe_payment_intent_can_charge_a_saved_payment_method() -> None:
	"""createPaymentIntent says it confirms with a saved payment method: it takes the
	PaymentIntentCreateParams keys that do so (payment_method, confirm, off_session...)."""
	from stripe.params._payment_intent_create_params import PaymentIntentCreateParams

	(tool,) = [t for t in stripe_integration.TOOLS if t.handle == "createPaymentIntent"]
	assert "saved payment method" in tool.description
	charge = {"payment_method", "confirm", "off_session", "return_url", "capture_method"}
	assert charge <= set(_stripe_hints(PaymentIntentCreateParams))
	assert charge <= set(tool.input_schema["properties"])
	assert charge <= set(tool.body)


@pytest.mark.parametrize(("path", "url"), [("", "/contents/"), ("/", "/contents/")])
def test_github_get_content_lists_the_repository_root(path: str, url: str, github_openapi) -> None:
	"""An empty path lists the repository's root: the OpenAPI's /contents/{path} with an empty
	path, as Octokit sends it (getContent refused it as an empty path segment)."""
	import anyio
	import httpx

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	assert "/repos/{owner}/{repo}/contents/{path}" in github_openapi["paths"]
	seen: list[httpx.Request] = []

	async def run() -> None:
		def service(request: httpx.Request) -> httpx.Response:
			seen.append(request)
			return httpx.Response(200, json=[{"type": "dir", "name": "src", "path": "src"}])

		om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
		model = ScriptedModel(
			[call_tool("github.getContent", owner="o", repo="r", path=path), finish(done=True)]
		)
		config = {"apiKey": "ghp_abcdefgh123456"}
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[{"integration": "github", "credential": {"config": config}}],
		)
		async with om:
			await agent.run()

	anyio.run(run)
	[request] = seen
	assert request.url.raw_path.decode() == "/repos/o/r" + url
