"""X tools' inputs against the constraints of the X API OpenAPI that xdk is generated from.

xdk (the reference test_messaging_conformance.py reads) keeps the names, enums and required
fields of X's OpenAPI but none of its patterns, lengths, counts or ranges. x_openapi_2_167.json is
the extract of that document (``xdevplatform/xdk`` ``specs/openapi.json``, 2.167, the commit of
xdk 0.10.6; source inside) for the operations the tools call. Each input that fills a path or
query parameter or a body field must be as strict as the spec there: ids carry the id pattern,
poll options their 25 characters, the field lists at least one value, pagination tokens their
least length.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _edit import pop_at, with_input_schema
from _openapi import schema_errors

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import x

_REF = Path(__file__).with_name("x_openapi_2_167.json")
_SOURCE = re.compile(r"input(?:\.|\[\")(\w+)")


@cache
def reference() -> dict[str, Any]:
	"""The pinned extract of X's OpenAPI."""
	loaded: dict[str, Any] = json.loads(_REF.read_text())
	return loaded


def _shape(path: str) -> str:
	return re.sub(r"\{[^}]+\}", "{}", path)


def x_constraint_errors(integration: Integration) -> list[str]:
	"""Where an X input is looser than the parameter or body field it fills."""
	ops = {
		(key.split(" ")[0], _shape(key.split(" ", 1)[1])): (key, op)
		for key, op in reference()["operations"].items()
	}
	errors = []
	for tool in integration.tools:
		if not isinstance(tool, HttpTool):
			continue
		found = ops.get((tool.method, _shape(re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint))))
		if found is None:
			errors.append(f"{tool.handle}: {tool.method} {tool.endpoint} is not in the spec")
			continue
		key, op = found
		props = tool.input_schema["properties"]
		params = op["parameters"]
		# path parameters in order: ours are inputs, the spec's are named
		ours = [m.group(1) for m in re.finditer(r"\{\{ input\.(\w+)", tool.endpoint)]
		for name, theirs in zip(ours, re.findall(r"\{(\w+)\}", key.split(" ", 1)[1]), strict=True):
			errors += schema_errors(
				tool.handle, f"/{theirs}", props[name], params[theirs]["schema"]
			)
		for name, value in tool.query_params.items():
			source = _SOURCE.search(str(value))
			if name in params and source and source.group(1) in props:
				errors += schema_errors(
					tool.handle, f"?{name}", props[source.group(1)], params[name]["schema"]
				)
		body = op.get("requestBody", {}).get("application/json", {}).get("properties", {})
		for name, value in (tool.body or {}).items():
			source = _SOURCE.search(str(value))
			if name in body and source and source.group(1) in props:
				errors += schema_errors(tool.handle, name, props[source.group(1)], body[name])
	return errors


def test_x_inputs_are_as_strict_as_the_openapi() -> None:
	"""Every X input is within the pattern, lengths, counts and ranges of what it fills."""
	assert reference()["version"] == "2.167"
	assert len(reference()["operations"]) == len(x.INTEGRATION.tools)
	assert x_constraint_errors(x.INTEGRATION) == []


@pytest.mark.parametrize(
	("handle", "path", "key"),
	[
		("createPost", "poll.options.items", "maxLength"),
		("createPost", "media.media_ids.items", "pattern"),
		("searchRecent", "post_fields", "minItems"),
		("listDirectMessages", "pagination_token", "minLength"),
		("finalizeMediaUpload", "id", "pattern"),
		("initializeMediaUpload", "total_bytes", "maximum"),
		("followUser", "target_user_id", "pattern"),
	],
)
def test_an_x_input_looser_than_the_openapi_fails_the_check(
	handle: str, path: str, key: str
) -> None:
	"""Dropping a pattern, length, count or range the spec sets makes the check fail."""

	def drop(schema: dict[str, Any]) -> None:
		*steps, last = path.split(".")
		node = schema
		for step in steps:
			node = node["items"] if step == "items" else node["properties"][step]
		(node["items"] if last == "items" else node["properties"][last]).pop(key)

	broken = with_input_schema(x.INTEGRATION, handle, drop)
	assert x_constraint_errors(broken)


def test_a_dropped_limit_of_the_dm_text_is_not_the_spec_s() -> None:
	"""The spec sets no upper length on a DM's text: dropping ours (X's docs) passes this check."""
	broken = with_input_schema(x.INTEGRATION, "sendDirectMessage", pop_at("text", "maxLength"))
	assert x_constraint_errors(broken) == []


def x_narrower_range_errors(integration: Integration) -> list[str]:
	"""Where an integer query input refuses values the spec's parameter takes (a page size of 1)."""
	ops = {
		(key.split(" ")[0], _shape(key.split(" ", 1)[1])): op
		for key, op in reference()["operations"].items()
	}
	errors = []
	for tool in integration.tools:
		if not isinstance(tool, HttpTool):
			continue
		op = ops[(tool.method, _shape(re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint)))]
		props = tool.input_schema["properties"]
		for name, value in tool.query_params.items():
			source = _SOURCE.search(str(value))
			if name not in op["parameters"] or not source or source.group(1) not in props:
				continue
			ours, spec = props[source.group(1)], op["parameters"][name]["schema"]
			if spec.get("type") != "integer":
				continue
			for key, narrower in (("minimum", int.__gt__), ("maximum", int.__lt__)):
				if key in spec and narrower(ours.get(key, spec[key]), spec[key]):
					errors.append(
						f"{tool.handle}?{name}: {key} {ours[key]}, the spec's {spec[key]}"
					)
	return errors


def test_x_page_sizes_take_every_value_the_openapi_takes() -> None:
	"""No X page size refuses a value the spec allows (the home timeline takes 1 to 100)."""
	timeline = reference()["operations"]["GET /2/users/{id}/timelines/reverse_chronological"]
	assert timeline["parameters"]["max_results"]["schema"]["minimum"] == 1
	assert x_narrower_range_errors(x.INTEGRATION) == []


def test_a_page_size_narrower_than_the_openapi_fails_the_check() -> None:
	"""Raising a page size's least value above the spec's makes the check fail."""
	broken = with_input_schema(
		x.INTEGRATION,
		"searchRecent",
		lambda s: s["properties"]["max_results"].update(minimum=20),
	)
	assert x_narrower_range_errors(broken) == [
		"searchRecent?max_results: minimum 20, the spec's 10"
	]


def _operation_scopes(integration: Integration) -> dict[str, set[str]]:
	"""Each X tool's operation's OAuth 2.0 scopes, by handle (X's OpenAPI security)."""
	ops = {
		(key.split(" ")[0], _shape(key.split(" ", 1)[1])): op
		for key, op in reference()["operations"].items()
	}
	return {
		tool.handle: set(
			ops[(tool.method, _shape(re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint)))][
				"oauth2_scopes"
			]
		)
		for tool in integration.tools
		if isinstance(tool, HttpTool)
	}


def x_scope_errors(integration: Integration) -> list[str]:
	"""The OAuth 2.0 scopes an X tool's operation requires that the integration does not ask for."""
	oauth = integration.credential("oauth2")
	asked = set(oauth.scopes if oauth is not None else [])
	return [
		f"{handle}: {s}"
		for handle, needed in _operation_scopes(integration).items()
		for s in sorted(needed)
		if s not in asked
	]


def x_scope_map_errors(integration: Integration) -> list[str]:
	"""Each tool scope that asks for an OAuth scope none of its tools' operations needs, or
	leaves out one they need (offline.access, for the refresh token, is asked always)."""
	from openmolt_core.integrations.oauth import requested_scopes

	oauth = integration.credential("oauth2")
	assert oauth is not None
	needs = _operation_scopes(integration)
	errors = []
	for scope in integration.scopes:
		needed = {"offline.access"}.union(
			*(needs[t.handle] for t in integration.tools if scope in t.scopes)
		)
		asked = set(requested_scopes(integration, oauth, [scope]))
		errors += [f"{scope}: asks for {s}, which none of its tools needs" for s in asked - needed]
		errors += [f"{scope}: does not ask for {s}" for s in needed - asked]
	return sorted(errors)


def test_x_asks_for_the_oauth_scopes_every_tool_needs() -> None:
	"""Every OAuth 2.0 scope X's OpenAPI requires of a tool's operation is one the app asks for."""
	assert all("oauth2_scopes" in op for op in reference()["operations"].values())
	assert x_scope_errors(x.INTEGRATION) == []


def test_each_x_tool_scope_asks_only_for_the_oauth_scopes_its_tools_need() -> None:
	"""An agent given the read tools is asked for tweet.read and users.read, not dm.write or
	bookmark.write: each tool scope maps to its operations' OAuth 2.0 scopes in X's OpenAPI."""
	assert x_scope_map_errors(x.INTEGRATION) == []


def test_a_missing_oauth_scope_fails_the_check() -> None:
	"""Dropping bookmark.read from the asked scopes names the tool that needs it."""
	oauth = x.INTEGRATION.credential("oauth2")
	assert oauth is not None
	fewer = oauth.model_copy(update={"scopes": [s for s in oauth.scopes if s != "bookmark.read"]})
	broken = x.INTEGRATION.model_copy(
		update={"credential_setup": [fewer, *x.INTEGRATION.credential_setup[1:]]}
	)
	assert x_scope_errors(broken) == ["getBookmarks: bookmark.read"]


def x_default_errors(integration: Integration) -> list[str]:
	"""Query inputs whose schema default is not the default X's OpenAPI gives the parameter.

	The tools send nothing for an input left out, so X applies its own default: a different one
	in the schema (or one the spec does not state) tells the model a page size it will not get.
	"""
	ops = {
		(key.split(" ")[0], _shape(key.split(" ", 1)[1])): op
		for key, op in reference()["operations"].items()
	}
	errors = []
	for tool in integration.tools:
		if not isinstance(tool, HttpTool):
			continue
		op = ops[(tool.method, _shape(re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint)))]
		props = tool.input_schema["properties"]
		for name, value in tool.query_params.items():
			source = _SOURCE.search(str(value))
			if not source or "default" not in props.get(source.group(1), {}):
				continue
			ours = props[source.group(1)]["default"]
			theirs = op["parameters"].get(name, {}).get("schema", {}).get("default")
			if "| default" not in str(value) and ours != theirs:
				errors.append(f"{tool.handle}?{name}: default {ours}, the spec's {theirs}")
	return errors


def test_x_defaults_are_the_openapi_defaults() -> None:
	"""A page size's default in a tool's schema is the one X applies (the spec's)."""
	assert x_default_errors(x.INTEGRATION) == []


def test_a_default_the_openapi_does_not_state_fails_the_check() -> None:
	"""A schema default X's OpenAPI does not give (or gives otherwise) is reported."""
	broken = with_input_schema(
		x.INTEGRATION,
		"searchRecent",
		lambda s: s["properties"]["max_results"].update(default=50),
	)
	assert x_default_errors(broken) == ["searchRecent?max_results: default 50, the spec's 10"]
