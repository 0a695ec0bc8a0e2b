"""Dropbox tools checked against the routes of the official `dropbox` SDK (generated from stone)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from stone.backends.python_rsrc import stone_validators as bv

from openmolt_core.integrations import HttpTool
from openmolt_integrations import dropbox

# The SDK (dropbox: about 0.3 s of CPU to import) is imported by these tests only, in the
# sdk-types xdist group: one worker imports it, not each of the four at its collection.
pytestmark = pytest.mark.xdist_group("sdk-types")


@functools.cache
def _namespaces() -> dict[str, Any]:
	"""The SDK's route namespaces the tools call, by name."""
	from dropbox import files, sharing, users

	return {"files": files, "sharing": sharing, "users": users}


ROUTES = {
	"listFolder": ("files", "list_folder"),
	"listFolderContinue": ("files", "list_folder/continue"),
	"getMetadata": ("files", "get_metadata"),
	"search": ("files", "search:2"),
	"searchContinue": ("files", "search/continue:2"),
	"download": ("files", "download"),
	"upload": ("files", "upload"),
	"uploadSessionStart": ("files", "upload_session/start"),
	"uploadSessionAppend": ("files", "upload_session/append:2"),
	"uploadSessionFinish": ("files", "upload_session/finish"),
	"saveUrl": ("files", "save_url"),
	"saveUrlStatus": ("files", "save_url/check_job_status"),
	"createFolder": ("files", "create_folder:2"),
	"delete": ("files", "delete:2"),
	"move": ("files", "move:2"),
	"copy": ("files", "copy:2"),
	"getTemporaryLink": ("files", "get_temporary_link"),
	"createSharedLink": ("sharing", "create_shared_link_with_settings"),
	"listSharedLinks": ("sharing", "list_shared_links"),
	"getCurrentAccount": ("users", "get_current_account"),
	"getSpaceUsage": ("users", "get_space_usage"),
}
TOOLS = {t.handle: t for t in dropbox.INTEGRATION.tools if isinstance(t, HttpTool)}


def _url_name(key: str) -> str:
	name, _, version = key.partition(":")
	return f"{name}_v{version}" if version else name


def _struct(validator: Any) -> Any:
	while isinstance(validator, bv.Nullable):
		validator = validator.validator
	return getattr(validator, "definition", None)


def _check_keys(value: Any, struct: Any, where: str) -> None:
	"""Every key of a (nested) argument dict is a field of the stone struct, recursively."""
	assert isinstance(value, dict), where
	fields = dict(struct._all_fields_)
	for key, sub in value.items():
		assert key in fields, f"{where}: {key!r} is not a field of {struct.__name__}"
		if isinstance(sub, dict):
			inner = _struct(fields[key])
			assert inner is not None, f"{where}.{key} is not a struct"
			_check_keys(sub, inner, f"{where}.{key}")


def _render_arg(template: str, input: dict[str, Any]) -> Any:
	"""Render a Dropbox-API-Arg template with a stand-in for the engine's json filter."""
	import liquid

	env = liquid.Environment()
	env.filters["json"] = lambda value: json.dumps(value)
	return json.loads(env.from_string(template).render(input=input, config={}))


def test_every_tool_is_a_known_route() -> None:
	"""Each tool maps to one route of the SDK, and every route exists."""
	assert set(TOOLS) == set(ROUTES)
	for ns, key in ROUTES.values():
		assert key in _namespaces()[ns].ROUTES


@pytest.mark.parametrize(("handle", "route"), ROUTES.items(), ids=list(ROUTES))
def test_tool_matches_route_host_style_and_arguments(handle: str, route: tuple[str, str]) -> None:
	"""Host, URL, style and argument names agree with the route definition."""
	ns, key = route
	r = _namespaces()[ns].ROUTES[key]
	tool = TOOLS[handle]
	assert isinstance(tool, HttpTool)
	host = r.attrs["host"]
	base = tool.base_url or dropbox.INTEGRATION.api_setup.base_url
	assert base == f"https://{host}.dropboxapi.com/2"
	assert tool.method == "POST"
	assert tool.endpoint == f"/{ns}/{_url_name(key)}"
	struct = _struct(r.arg_type)
	style = r.attrs["style"]
	if style == "rpc":
		assert "Dropbox-API-Arg" not in tool.headers
		assert (tool.request_format or "json") == "json"
		assert (tool.response_format or "json") == "json"
		if struct is None:
			assert isinstance(r.arg_type, bv.Void)
			assert tool.body is None
		else:
			_check_keys(tool.body, struct, handle)
	else:
		assert "Dropbox-API-Arg" in tool.headers
		assert tool.body is None or style == "upload"
		if style == "upload":
			assert tool.request_format == "binary"
			assert tool.headers["Content-Type"] == "application/octet-stream"
		if style == "download":
			assert tool.response_format == "binary"
			assert "Dropbox-API-Result" in tool.response_headers
		sample = {
			"path": "/Ünïcode folder/report.pdf",
			"file": "openmolt-file:abcdefgh12",
			"session_id": "AAAAAAAAAAAAAAAA",
			"offset": 8388608,
			"close": True,
			"mode": "overwrite",
			"autorename": True,
			"mute": False,
		}
		arg = _render_arg(tool.headers["Dropbox-API-Arg"], sample)
		_check_keys(arg, struct, handle)
		header = tool.headers["Dropbox-API-Arg"]
		assert "| json" in header, "values in the header are JSON-encoded by the json filter"


def test_required_arguments_are_sent() -> None:
	"""Arguments the routes require (no default, not nullable) are always in the request."""
	required_by_route = {
		"listFolder": {"path"},
		"listFolderContinue": {"cursor"},
		"getMetadata": {"path"},
		"search": {"query"},
		"move": {"from_path", "to_path"},
		"copy": {"from_path", "to_path"},
		"createSharedLink": {"path"},
		"saveUrl": {"path", "url"},
		"saveUrlStatus": {"async_job_id"},
	}
	for handle, names in required_by_route.items():
		ns, key = ROUTES[handle]
		struct = _struct(_namespaces()[ns].ROUTES[key].arg_type)
		fields = dict(struct._all_fields_)
		for name in names:
			assert not isinstance(fields[name], bv.Nullable)
			assert name in TOOLS[handle].body
			source = TOOLS[handle].body[name]
			input_name = re.fullmatch(r"\{\{ input\.(\w+) \}\}", source).group(1)
			assert input_name in TOOLS[handle].input_schema["required"], (handle, input_name)


def test_upload_header_arguments_render_to_the_sdk_shape() -> None:
	"""The rendered upload-session finish argument has cursor and commit as the SDK builds them."""
	arg = _render_arg(
		TOOLS["uploadSessionFinish"].headers["Dropbox-API-Arg"],
		{"session_id": "S1", "offset": 300, "path": "/big.bin"},
	)
	assert arg == {
		"cursor": {"session_id": "S1", "offset": 300},
		"commit": {"path": "/big.bin", "mode": "add", "autorename": False, "mute": False},
	}
	files = _namespaces()["files"]
	cursor = files.UploadSessionCursor(session_id="S1", offset=300)
	commit = files.CommitInfo(path="/big.bin")
	finish = files.UploadSessionFinishArg(cursor=cursor, commit=commit)
	assert finish.cursor.session_id == arg["cursor"]["session_id"]
	assert {"add", "overwrite"} <= set(files.WriteMode._tagmap)


def test_header_arguments_are_ascii_json() -> None:
	"""Dropbox-API-Arg must be header-safe: non-ASCII paths come out as \\u escapes."""
	import liquid

	env = liquid.Environment()
	env.filters["json"] = lambda value: json.dumps(value)
	text = env.from_string(TOOLS["download"].headers["Dropbox-API-Arg"]).render(
		input={"path": "/Ünïcode.txt"}
	)
	assert text.isascii()
	assert json.loads(text) == {"path": "/Ünïcode.txt"}


def _route_scopes() -> dict[str, str]:
	"""Each route's OAuth scope, as stone's route attrs declare it (the pinned extract)."""
	doc = json.loads((Path(__file__).parent / "dropbox_route_scopes.json").read_text())
	return doc["routes"]


# Dropbox requires account_info.read of every user-linked app ("Customizing scopes in the OAuth
# app authorization flow", dropbox.tech, 2024): it is asked always, whatever the tool scopes.
_ALWAYS = {"account_info.read"}


def test_oauth_scopes_are_the_route_scopes() -> None:
	"""The OAuth2 scopes asked for are the scope attribute of the routes the tools use: none is
	missing and none (files.metadata.write) is asked that no route needs."""
	scopes = _route_scopes()
	asked = set(dropbox.INTEGRATION.credential_setup[0].scopes)
	assert asked == {scopes[f"{ns}/{key}"] for ns, key in ROUTES.values()} | _ALWAYS


def test_each_tool_scope_asks_for_its_routes_scopes() -> None:
	"""An agent given some tool scopes is asked for the scopes of those tools' routes only: a
	reader is not asked to write files or share them."""
	from openmolt_core.integrations.oauth import requested_scopes

	scopes = _route_scopes()
	oauth = dropbox.INTEGRATION.credential("oauth2")
	assert oauth is not None
	for scope in dropbox.INTEGRATION.scopes:
		needed = {
			scopes["/".join(ROUTES[t.handle])]
			for t in dropbox.INTEGRATION.tools
			if scope in t.scopes and t.handle in ROUTES
		}
		assert set(requested_scopes(dropbox.INTEGRATION, oauth, [scope])) == needed | _ALWAYS, scope


_SENTINEL = re.compile(r"^<(\w+)>$")
_EXACT = re.compile(r"^\{\{ input\.(\w+) \}\}$")
_STRFTIME = {"%Y": "[0-9]{4}", "%m": "[0-9]{2}", "%d": "[0-9]{2}", "%H": "[0-9]{2}"}
_STRFTIME |= {"%M": "[0-9]{2}", "%S": "[0-9]{2}"}


def _sent(tool: HttpTool) -> list[tuple[list[str], str]]:
	"""(argument field path, input name) of every input the tool sends, in its body or header."""
	if "Dropbox-API-Arg" in tool.headers:
		names = tool.input_schema["properties"]
		arg, pattern = (
			_render_arg(tool.headers["Dropbox-API-Arg"], {n: f"<{n}>" for n in names}),
			_SENTINEL,
		)
	else:
		arg, pattern = tool.body or {}, _EXACT
	out: list[tuple[list[str], str]] = []

	def walk(value: Any, where: list[str]) -> None:
		for key, item in value.items():
			if isinstance(item, dict):
				walk(item, [*where, key])
			elif isinstance(item, str) and (m := pattern.match(item)):
				out.append(([*where, key], m.group(1)))

	walk(arg, [])
	return out


def _expected(validator: Any) -> dict[str, Any]:
	"""The JSON Schema keywords a stone validator's constraints become in an input schema."""
	while isinstance(validator, bv.Nullable):
		validator = validator.validator
	if isinstance(validator, bv.String):
		out: dict[str, Any] = {"type": "string"}
		if validator.pattern:
			out["pattern"] = f"^(?:{validator.pattern})$"
		if validator.min_length:
			out["minLength"] = validator.min_length
		if validator.max_length:
			out["maxLength"] = validator.max_length
		return out
	if isinstance(validator, bv.Integer):
		out = {"type": "integer", "minimum": validator.minimum}
		if validator.maximum < type(validator)().maximum:
			out["maximum"] = validator.maximum
		return out
	if isinstance(validator, bv.Timestamp):
		pattern = validator.format
		assert re.fullmatch(r"(%[YmdHMS]|[-:TZ])+", pattern), pattern
		for code, regex in _STRFTIME.items():
			pattern = pattern.replace(code, regex)
		return {"type": "string", "format": "date-time", "pattern": f"^{pattern}$"}
	if isinstance(validator, bv.Boolean):
		return {"type": "boolean"}
	if isinstance(validator, bv.List):
		return {"type": "array"}
	if isinstance(validator, bv.Union):
		return {"type": "string"}
	raise AssertionError(f"no mapping for {type(validator).__name__}")


@pytest.mark.parametrize(("handle", "route"), ROUTES.items(), ids=list(ROUTES))
def test_inputs_are_named_and_constrained_as_the_route_fields(
	handle: str, route: tuple[str, str]
) -> None:
	"""Each input sent is named as the field it fills (also inside Dropbox-API-Arg) and carries
	the field's pattern, length, range, timestamp format and union tags from the SDK."""
	ns, key = route
	tool = TOOLS[handle]
	struct = _struct(_namespaces()[ns].ROUTES[key].arg_type)
	props = tool.input_schema["properties"]
	for path, name in _sent(tool):
		assert name == path[-1], f"{handle}: input {name!r} fills {'.'.join(path)}"
		owner = struct
		for part in path[:-1]:
			owner = _struct(dict(owner._all_fields_)[part])
		validator = dict(owner._all_fields_)[path[-1]]
		schema = props[name]
		for keyword, value in _expected(validator).items():
			assert schema.get(keyword) == value, f"{handle}.{name}: {keyword} should be {value!r}"
		inner = validator.validator if isinstance(validator, bv.Nullable) else validator
		if isinstance(inner, bv.Union):
			tags = set(inner.definition._tagmap)
			assert set(schema["enum"]) <= tags, f"{handle}.{name}: {set(schema['enum']) - tags}"
	if tool.body is not None or "Dropbox-API-Arg" in tool.headers:
		assert _sent(tool), handle


def test_a_path_outside_the_route_pattern_is_refused() -> None:
	"""The carried patterns work: a revision is no folder to list, a relative path no file."""
	from openmolt_core._support.jsonschema import (
		JsonSchemaValidator,
		ValidationError,
		format_errors,
	)

	cases = [
		("listFolder", {"path": "rev:a1c10ce0dd78"}, "path"),
		("move", {"from_path": "a.txt", "to_path": "/b.txt"}, "from_path"),
		("createSharedLink", {"path": "/a", "expires": "2026-12-01T10:00:00+01:00"}, "expires"),
	]
	for handle, data, field in cases:
		with pytest.raises(ValidationError) as caught:
			JsonSchemaValidator(TOOLS[handle].input_schema).validate(data)
		assert format_errors(caught.value).startswith(field), (handle, format_errors(caught.value))
	ok = {"path": "/a", "expires": "2026-12-01T10:00:00Z", "requested_visibility": "public"}
	JsonSchemaValidator(TOOLS["createSharedLink"].input_schema).validate(ok)
	JsonSchemaValidator(TOOLS["listFolder"].input_schema).validate({"path": ""})
