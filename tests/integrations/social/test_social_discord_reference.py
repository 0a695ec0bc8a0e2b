"""Discord input schemas carry the formats, patterns and limits of Discord's OpenAPI document.

Discord publishes its OpenAPI document (``discord/discord-api-spec``, API v10) on GitHub only. The
npm package ``discord-api-spec`` (pinned 10.0.266135; the version is the spec's build number) is
generated from it daily: ``Paths`` as TypeScript (methods, path and query parameters, request body
types) and every component schema as Zod. Zod's own ``toJSONSchema`` (zod 4.6.7, run with node)
turns those back into JSON Schema, so the constraints compared here (``format``, ``pattern``,
``minLength``/``maxLength``, ``minItems``/``maxItems``, ``minimum``/``maximum``) are the spec's.

For every Discord tool the test finds its operation (method and path, parameter names included),
checks query and body names, and walks each body, query and path input alongside the reference
schema: every constraint the reference sets, the input schema must set too (equal, or stricter).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _edit import with_input_schema, with_tool
from _social_refs import npm_install, npm_member
from _social_ts import close, members, split, uncomment

from openmolt_core.integrations import HttpTool, Integration
from openmolt_core.integrations.templating import null_inputs
from openmolt_integrations import discord

_BOUNDS_MAX = ("maxLength", "maxItems", "maximum")
_BOUNDS_MIN = ("minLength", "minItems", "minimum")


@dataclass(frozen=True)
class Operation:
	"""One method of one path: its path and query parameter types and its request body type."""

	path: dict[str, str]
	query: dict[str, str]
	body: str | None


def _params(block: str, kind: str) -> dict[str, str]:
	match = re.search(rf"\b{kind}\?: \{{", block)
	if not match:
		return {}
	start = match.end() - 1
	return {k: m.type for k, m in members(block[start + 1 : close(block, start) - 1]).items()}


@cache
def paths() -> dict[tuple[str, str], Operation]:
	"""(METHOD, /path/{param}) to its operation, from the package's TypeScript ``Paths``."""
	text = uncomment(npm_member("discord", "build/discord-api-spec.ts"))
	start = text.index("{", text.index("export interface Paths"))
	body = text[start + 1 : close(text, start) - 1]
	out = {}
	for match in re.finditer(r'\n  "(/[^"]*)": \{', body):
		brace = match.end() - 1
		block = body[brace + 1 : close(body, brace) - 1]
		for part in split(block):
			verb = re.match(r"(get|put|post|patch|delete): \{", part)
			if not verb:
				continue
			request = re.search(r"requestBody\?:\s*([^;]+)", part)
			out[(verb.group(1).upper(), match.group(1))] = Operation(
				_params(part, "path"),
				_params(part, "query"),
				request.group(1).strip() if request else None,
			)
	return out


@cache
def schemas(tmp: str) -> dict[str, Any]:
	"""JSON Schema of every request body and of SnowflakeType, by zod's toJSONSchema (node)."""
	node = shutil.which("node")
	if node is None:
		pytest.fail("node is needed to read discord-api-spec's Zod schemas (apt: nodejs)")
	names = {"SnowflakeType"}
	for op in paths().values():
		if op.body:
			names |= set(re.findall(r"\b([A-Z]\w*)\b", op.body))
	exported = set(
		re.findall(
			r"export const (\w+)Schema =", npm_member("discord", "build/discord-api-spec.zod.js")
		)
	)
	script = Path(tmp) / "dump.mjs"
	script.write_text(
		'import * as z from "zod";\n'
		'import * as S from "discord-api-spec/zod";\n'
		"const out = {};\n"
		f"for (const name of {json.dumps(sorted(names & exported))}) "
		'out[name] = z.toJSONSchema(S[name + "Schema"], '
		'{unrepresentable: "any", cycles: "ref", reused: "inline"});\n'
		"console.log(JSON.stringify(out));\n"
	)
	done = subprocess.run(
		[node, str(script)], cwd=tmp, capture_output=True, text=True, timeout=120, check=False
	)
	assert done.returncode == 0, done.stderr[-2000:]
	loaded: dict[str, Any] = json.loads(done.stdout)
	return loaded


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
	tmp = npm_install(["zod", "discord"], tmp_path_factory.mktemp("discord-ref"))
	return schemas(str(tmp))


# Walking an input schema alongside the reference --------------------------------------------


def _branches(ref: dict[str, Any]) -> list[dict[str, Any]]:
	"""The non-null alternatives of a reference schema (nullable fields are anyOf [x, null])."""
	alts = ref.get("anyOf") or ref.get("oneOf")
	if alts:
		return [b for alt in alts for b in _branches(alt) if b.get("type") != "null"]
	return [ref]


def _merge(refs: list[dict[str, Any]]) -> dict[str, Any]:
	"""One schema for a union: the properties of every branch; constraints of the first."""
	merged: dict[str, Any] = {}
	props: dict[str, Any] = {}
	for ref in refs:
		for key, value in ref.items():
			if key == "properties":
				for name, sub in value.items():
					props.setdefault(name, sub)
			else:
				merged.setdefault(key, value)
	if props:
		merged["properties"] = props
	return merged


def constraint_errors(where: str, ours: dict[str, Any], ref: dict[str, Any]) -> list[str]:
	"""What the reference constrains that the input schema leaves open (recursively)."""
	ref = _merge(_branches(ref))
	errors = []
	if "format" in ref and ours.get("format") != ref["format"]:
		errors.append(f"{where}: format {ref['format']!r} (ours {ours.get('format')!r})")
	if "pattern" in ref and ref.get("format") != "date-time":  # zod's date-time regex
		if ours.get("pattern") != ref["pattern"]:
			errors.append(f"{where}: pattern {ref['pattern']!r} (ours {ours.get('pattern')!r})")
	if "enum" in ref:
		values = ours.get("enum")
		if not values or not set(values) <= set(ref["enum"]):
			errors.append(f"{where}: enum {ref['enum']} (ours {values})")
	for key in _BOUNDS_MAX:
		if key in ref and ref[key] < 2**31 - 1 and not ours.get(key, float("inf")) <= ref[key]:
			errors.append(f"{where}: {key} {ref[key]} (ours {ours.get(key)})")
	for key in _BOUNDS_MIN:
		if key in ref and ref[key] > 0 and not ours.get(key, float("-inf")) >= ref[key]:
			errors.append(f"{where}: {key} {ref[key]} (ours {ours.get(key)})")
	if "items" in ours and "items" in ref:
		errors += constraint_errors(f"{where}[]", ours["items"], ref["items"])
	for name, sub in ours.get("properties", {}).items():
		if name in ref.get("properties", {}):
			errors += constraint_errors(f"{where}.{name}", sub, ref["properties"][name])
		elif ref.get("properties") is not None:
			errors.append(f"{where}.{name} is not a field of the reference")
	return errors


def _input_of(template: Any) -> str | None:
	match = re.fullmatch(r"\{\{ input\.(\w+) \}\}", template) if isinstance(template, str) else None
	return match.group(1) if match else None


def _route(tool: HttpTool) -> str:
	return re.sub(r"\{\{ input\.(\w+) \}\}", r"{\1}", tool.endpoint)


def check_discord(integration: Integration, ref: dict[str, Any]) -> int:
	"""Assert names and constraints of every Discord tool against the spec; return checks made."""
	ops = paths()
	snowflake = ref["SnowflakeType"]
	checked = 0
	for tool in integration.tools:
		assert isinstance(tool, HttpTool)
		key = (tool.method, _route(tool))
		assert key in ops, f"{tool.handle}: {key} is not an operation of the spec"
		op = ops[key]
		props = tool.input_schema.get("properties", {})
		errors = []
		for name, kind in op.path.items():
			if kind == "SnowflakeType":
				errors += constraint_errors(f"{tool.handle} path {name}", props[name], snowflake)
		unknown = set(tool.query_params) - set(op.query)
		assert not unknown, f"{tool.handle}: query {unknown} is not in the spec"
		for name, template in tool.query_params.items():
			source = _input_of(template)
			if source and op.query[name].startswith("SnowflakeType"):
				errors += constraint_errors(f"{tool.handle} query {name}", props[source], snowflake)
		if isinstance(tool.body, dict) or tool.files:
			assert op.body, f"{tool.handle}: the spec's operation takes no body"
			named = [ref[n] for n in re.findall(r"\b([A-Z]\w*)\b", op.body) if n in ref]
			body = _merge(named)
			fields = body.get("properties", {})
			# what every alternative of the body requires, the tool sends from a required input
			need = set.intersection(*(set(n.get("required", ())) for n in named))
			required = set(tool.input_schema.get("required", []))
			for name in sorted(need):
				source = _input_of((tool.body or {}).get(name))
				if name not in (tool.body or {}) or (source and source not in required):
					errors.append(f"{tool.handle}.{name}: required by the spec")
			# The multipart form of a message adds files[n] parts (payload_json is the JSON body).
			allowed = set(fields) | {f for f in tool.files if re.fullmatch(r"files\[\d+\]", f)}
			sent = set(tool.body or {}) | set(tool.files)
			assert sent <= allowed, f"{tool.handle}: body {sent - allowed} is not in the spec"
			for name, template in (tool.body or {}).items():
				source = _input_of(template)
				if source and source in props:
					errors += constraint_errors(
						f"{tool.handle}.{name}", props[source], fields[name]
					)
		assert not errors, errors
		checked += 1
	return checked


def test_the_reference_is_read(reference: dict[str, Any]) -> None:
	"""The package gives the operations and the JSON Schema of request bodies and snowflakes."""
	assert len(paths()) > 200
	assert paths()[("GET", "/channels/{channel_id}/messages")].query["around"] == "SnowflakeType"
	assert reference["SnowflakeType"]["pattern"] == "^(0|[1-9][0-9]*)$"
	embeds = _branches(reference["MessageCreateRequest"]["properties"]["embeds"])[0]
	url = _branches(embeds["items"]["properties"]["url"])[0]
	assert (url["format"], url["maxLength"]) == ("uri", 2048)


def test_discord_inputs_carry_the_spec_constraints(reference: dict[str, Any]) -> None:
	"""Every Discord tool is a spec operation, and its inputs carry the spec's constraints."""
	assert check_discord(discord.INTEGRATION, reference) == len(discord.INTEGRATION.tools)


def _unset(*path: str) -> Callable[[dict[str, Any]], None]:
	def change(schema: dict[str, Any]) -> None:
		node = schema
		for step in path[:-1]:
			node = node[step]
		node.pop(path[-1])

	return change


_LOOSER = {
	"embed url format": (
		"sendMessage",
		_unset("properties", "embeds", "items", "properties", "url", "format"),
	),
	"allowed_mentions users pattern": (
		"sendMessage",
		_unset("properties", "allowed_mentions", "properties", "users", "items", "pattern"),
	),
	"sticker_ids pattern": ("sendMessage", _unset("properties", "sticker_ids", "items", "pattern")),
	"applied_tags pattern": (
		"createThread",
		_unset("properties", "applied_tags", "items", "pattern"),
	),
	"before pattern": ("listMessages", _unset("properties", "before", "pattern")),
	"channel_id pattern": ("getChannel", _unset("properties", "channel_id", "pattern")),
	"channel type without its enum": ("createChannel", _unset("properties", "type", "enum")),
	"channel name maxLength": ("updateChannel", _unset("properties", "name", "maxLength")),
	"channel parent_id pattern": ("createChannel", _unset("properties", "parent_id", "pattern")),
	"slow mode maximum": ("updateChannel", _unset("properties", "rate_limit_per_user", "maximum")),
	"bitrate minimum": ("createChannel", _unset("properties", "bitrate", "minimum")),
	"role_id pattern": ("addMemberRole", _unset("properties", "role_id", "pattern")),
	"user_id pattern": ("removeMemberRole", _unset("properties", "user_id", "pattern")),
	"members after pattern": ("listGuildMembers", _unset("properties", "after", "pattern")),
	"channel name not required": (
		"createChannel",
		lambda s: s.update(required=[r for r in s["required"] if r != "name"]),
	),
	"thread name not required": (
		"createThread",
		lambda s: s.update(required=[r for r in s["required"] if r != "name"]),
	),
	"a DM channel type": ("createChannel", lambda s: s["properties"]["type"]["enum"].append(1)),
	"embed title maxLength": (
		"editMessage",
		_unset("properties", "embeds", "items", "properties", "title", "maxLength"),
	),
}


@pytest.mark.parametrize("case", sorted(_LOOSER))
def test_a_looser_input_fails_the_check(reference: dict[str, Any], case: str) -> None:
	"""Dropping one format, pattern or limit the spec sets makes the check fail."""
	handle, change = _LOOSER[case]
	with pytest.raises(AssertionError):
		check_discord(with_input_schema(discord.INTEGRATION, handle, change), reference)


_BREAKS: dict[str, Callable[[HttpTool], dict[str, Any]]] = {
	"method": lambda t: {"method": "PATCH" if t.method != "PATCH" else "PUT"},
	"path": lambda t: {"endpoint": t.endpoint + "/nonexistent"},
	"path name": lambda t: {
		"endpoint": t.endpoint.replace("channel_id", "chan_id").replace("guild_id", "server_id")
	},
	"query": lambda t: {"query_params": {**t.query_params, "nonexistent_param": "1"}},
	"body": lambda t: {"body": {**(t.body or {}), "nonexistent_field": "1"}},
}


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize("handle", ["sendMessage", "createChannel", "updateChannel"])
def test_a_wrong_discord_request_fails_the_check(
	reference: dict[str, Any], broken: str, handle: str
) -> None:
	"""A wrong method, path, path parameter, query name or body name fails the spec check."""
	with pytest.raises(AssertionError):
		check_discord(with_tool(discord.INTEGRATION, handle, _BREAKS[broken]), reference)


@pytest.mark.parametrize(
	"handle", ["listGuildMembers", "addMemberRole", "removeMemberRole", "deleteChannel"]
)
def test_a_wrong_member_or_role_route_fails_the_check(
	reference: dict[str, Any], handle: str
) -> None:
	"""The member, role and channel routes are compared too: another method or path fails."""
	for change in (lambda t: {"method": "POST"}, _BREAKS["path"]):
		with pytest.raises(AssertionError):
			check_discord(with_tool(discord.INTEGRATION, handle, change), reference)


def _nullable_fields(tool: HttpTool, ref: dict[str, Any]) -> set[str]:
	"""The body fields that some branch of the spec's request body lets be null."""
	op = paths()[(tool.method, _route(tool))]
	out: set[str] = set()
	for name in re.findall(r"\b([A-Z]\w*)\b", op.body or ""):
		for field, schema in ref.get(name, {}).get("properties", {}).items():
			alts = schema.get("anyOf") or schema.get("oneOf") or []
			if schema.get("type") == "null" or any(a.get("type") == "null" for a in alts):
				out.add(field)
	return out


@pytest.mark.parametrize("tool", discord.INTEGRATION.tools, ids=lambda t: t.handle)
def test_discord_null_inputs_are_nullable_in_the_spec(
	tool: HttpTool, reference: dict[str, Any]
) -> None:
	"""An input the engine would send as null is a body field the spec lets be null."""
	nulls = null_inputs(tool.input_schema)
	sent = {_input_of(t): name for name, t in (tool.body or {}).items() if _input_of(t)}
	assert nulls <= set(sent), (tool.handle, nulls - set(sent))
	assert {sent[n] for n in nulls} <= _nullable_fields(tool, reference), tool.handle


def test_discord_update_channel_clears_topic_and_category(reference: dict[str, Any]) -> None:
	"""updateChannel sends topic: null and parent_id: null (ModifyGuildChannel's ?string and
	?snowflake); createChannel, where null clears nothing, takes neither."""
	(update,) = [t for t in discord.INTEGRATION.tools if t.handle == "updateChannel"]
	(create,) = [t for t in discord.INTEGRATION.tools if t.handle == "createChannel"]
	assert null_inputs(update.input_schema) == {"topic", "parent_id"}
	assert {"topic", "parent_id"} <= _nullable_fields(update, reference)
	assert null_inputs(create.input_schema) == set()
