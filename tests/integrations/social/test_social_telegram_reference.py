"""Telegram tools against the Bot API as typed by ``@grammyjs/types`` (npm, pinned 5.0.0).

Telegram publishes no machine-readable Bot API description. ``@grammyjs/types`` is the most used
standalone package of Bot API types (millions of downloads a month), kept by the grammY team in
step with each Bot API release and copying the official docs into its JSDoc; ``typegram`` is
backported from it. It is types only (nothing to run), so the test reads its ``.d.ts`` files: the
``ApiMethods`` method signatures and the interfaces and type aliases they refer to.

Python packages were considered: aiogram (Bot API 10.3) pins pydantic below the version this
workspace locks, and python-telegram-bot 22.8 is a release behind (Bot API 10.0).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema
import pytest
from _edit import pop_at, with_input_schema, with_tool
from _social_refs import npm_member
from _social_ts import Member, close, members, split, uncomment

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import telegram

_FILES = (
	"methods.d.ts",
	"message.d.ts",
	"markup.d.ts",
	"manage.d.ts",
	"update.d.ts",
	"settings.d.ts",
	"inline.d.ts",
)


@dataclass(frozen=True)
class BotApi:
	"""The methods (parameter members), interfaces (fields) and aliases of the Bot API types."""

	methods: dict[str, dict[str, Member]]
	interfaces: dict[str, dict[str, Member]]
	aliases: dict[str, str]

	def fields(self, type_text: str, seen: frozenset[str] = frozenset()) -> dict[str, Member]:
		"""The fields of every interface a type text names (through aliases and arrays)."""
		out: dict[str, Member] = {}
		for name in re.findall(r"\b([A-Z]\w*)\b", type_text):
			if name in seen:
				continue
			if name in self.interfaces:
				found = self.interfaces[name]
			elif name in self.aliases:
				found = self.fields(self.aliases[name], seen | {name})
			else:
				continue
			for key, member in found.items():  # a union: a field may take any member's type
				if key in out and out[key] != member:
					member = Member(f"{out[key].type} | {member.type}", out[key].optional)
				out[key] = member
		return out

	def literals(self, type_text: str) -> set[str] | None:
		"""The string literals a type allows, or None when it allows any string."""
		text = type_text
		for _ in range(5):
			text = re.sub(
				r"\b([A-Z]\w*)\b(?:<\w+>)?",
				lambda m: (
					f"({self.aliases[m.group(1)]})" if m.group(1) in self.aliases else m.group(0)
				),
				text,
			)
		if re.search(r"\bstring\b", text):
			return None
		found = set(re.findall(r'"([^"]*)"', text))
		return found or None


@cache
def bot_api() -> BotApi:
	methods: dict[str, dict[str, Member]] = {}
	interfaces: dict[str, dict[str, Member]] = {}
	aliases: dict[str, str] = {}
	for name in _FILES:
		text = uncomment(npm_member("grammy", name))
		start = text.find("export type ApiMethods<F> = {")
		if start >= 0:
			brace = text.index("{", start)
			body = text[brace + 1 : close(text, brace) - 1]
			for part in split(body):
				match = re.match(r"(\w+)\((args\??:\s*)?", part)
				if not match:
					continue
				args = part.find("{", match.end()) if match.group(2) else -1
				methods[match.group(1)] = (
					members(part[args + 1 : close(part, args) - 1]) if args >= 0 else {}
				)
		for match in re.finditer(
			r"(?:export )?interface (\w+)(?:<[^>{]*>)?(?: extends ([^{]+))?\s*\{", text
		):
			brace = match.end() - 1
			fields = members(text[brace + 1 : close(text, brace) - 1])
			for parent in re.findall(r"\b([A-Z]\w*)", match.group(2) or ""):
				fields = {**interfaces.get(parent, {}), **fields}
			interfaces[match.group(1)] = fields
		for match in re.finditer(r"export type (\w+)(?:<[^=]*>)?\s*=\s*([^;]+);", text):
			if match.group(1) != "ApiMethods":
				aliases[match.group(1)] = match.group(2)
	return BotApi(methods, interfaces, aliases)


# The check -------------------------------------------------------------------------------------


def _sent_inputs(tool: HttpTool) -> dict[str, str | None]:
	"""Each API parameter the tool sends, to the input field it comes from (None: constant)."""
	out: dict[str, str | None] = {}
	for name, template in {**(tool.body or {}), **tool.files}.items():
		used = re.findall(r"input\.(\w+)", str(template))
		out[name] = used[0] if used else None
	return out


def _nested_errors(api: BotApi, where: str, schema: dict[str, Any], type_text: str) -> list[str]:
	"""Field names and enums of an input schema that the reference type does not have."""
	errors = []
	if schema.get("type") == "array" and "items" in schema:
		return _nested_errors(api, where + "[]", schema["items"], type_text)
	if "enum" in schema and schema.get("type") == "string":
		allowed = api.literals(type_text)
		if allowed is not None and not set(schema["enum"]) <= allowed:
			errors.append(f"{where}: values {set(schema['enum']) - allowed}")
	props = schema.get("properties")
	if props:
		fields = api.fields(type_text)
		assert fields, f"{where}: the reference type {type_text!r} has no fields to compare"
		for key, sub in props.items():
			if key not in fields:
				errors.append(f"{where}.{key} is not a field of {type_text}")
			else:
				errors += _nested_errors(api, f"{where}.{key}", sub, fields[key].type)
	return errors


def check_telegram(integration: Integration, api: BotApi) -> int:
	"""Assert each tool is a Bot API method with its parameters, fields and enums; return checks."""
	checked = 0
	for tool in integration.tools:
		assert isinstance(tool, HttpTool)
		if tool.handle == "downloadFile":
			continue
		method = tool.endpoint.lstrip("/")
		assert method in api.methods, f"{tool.handle}: {method} is not a Bot API method"
		assert tool.method == "POST", f"{tool.handle}: send {method} as POST"
		params = api.methods[method]
		sent = _sent_inputs(tool)
		unknown = set(sent) - set(params)
		if any("<F>" in m.type for m in params.values()):
			# InputMedia<F> items name uploaded files as attach://<field>: such fields are parts,
			# not parameters (https://core.telegram.org/bots/api#sending-files).
			unknown -= {
				f
				for f in tool.files
				if f not in params and f"attach://{f[:-1]}" in tool.description
			}
		assert not unknown, f"{tool.handle}: {unknown} are not parameters of {method}"
		required = set(tool.input_schema.get("required", []))
		for name, member in params.items():
			if member.optional or "input_message_content" in name:
				continue
			assert name in sent, f"{tool.handle}: {method} requires {name}"
			source = sent[name]
			assert source is None or source in required, f"{tool.handle}: make {source} required"
		props = tool.input_schema["properties"]
		errors = []
		for name, source in sent.items():
			if source is not None and source in props and name not in tool.files:
				errors += _nested_errors(
					api, f"{tool.handle}.{name}", props[source], params[name].type
				)
		assert not errors, errors
		if tool.files:
			assert tool.request_format == "multipart", tool.handle
		checked += 1
	return checked


def test_the_reference_is_read() -> None:
	"""The parser finds the Bot API's methods, their parameters and the types they name."""
	api = bot_api()
	assert len(api.methods) > 150
	assert api.methods["sendMessage"]["chat_id"] == Member("number | string", False)
	assert api.methods["sendMessage"]["reply_markup"].optional
	assert api.methods["getWebhookInfo"] == {}
	assert {"type", "media", "caption"} <= set(api.fields("InputMediaPhoto<F>"))
	assert api.literals("ParseMode") == {"Markdown", "MarkdownV2", "HTML"}


def test_telegram_tools_are_bot_api_methods() -> None:
	"""Every Telegram tool calls a Bot API method with its parameter names, fields and enums."""
	assert telegram.INTEGRATION.api_setup.base_url == (
		"https://api.telegram.org/bot{{ config.botToken }}"
	)
	tools = [t for t in telegram.INTEGRATION.tools if isinstance(t, HttpTool)]
	assert check_telegram(telegram.INTEGRATION, bot_api()) == len(tools) - 1
	names = {t.endpoint.lstrip("/") for t in tools}
	wanted = {
		"sendVideo",
		"sendAudio",
		"sendMediaGroup",
		"copyMessage",
		"editMessageReplyMarkup",
		"setWebhook",
		"getWebhookInfo",
		"pinChatMessage",
		"unpinChatMessage",
		"sendLocation",
		"sendSticker",
		"sendAnimation",
		"getChatAdministrators",
		"getChatMember",
	}
	assert wanted <= names


def test_download_file_follows_the_bot_api_docs() -> None:
	"""downloadFile GETs https://api.telegram.org/file/bot<token>/<file_path> (core.telegram.org/bots/api#getfile)."""
	tool = next(t for t in telegram.INTEGRATION.tools if t.handle == "downloadFile")
	assert isinstance(tool, HttpTool)
	assert tool.base_url == "https://api.telegram.org/file/bot{{ config.botToken }}"
	assert tool.endpoint == "/{{ input.file_path | path_segments }}"
	assert (tool.method, tool.response_format) == ("GET", "binary")


def test_album_uploads_attach_each_file_by_name() -> None:
	"""uploadMediaGroup sends the album JSON-serialized and each file under attach://file<i>."""
	tool = next(t for t in telegram.INTEGRATION.tools if t.handle == "uploadMediaGroup")
	assert isinstance(tool, HttpTool)
	assert tool.body["media"] == "{{ input.media | json }}"
	photo = npm_member("grammy", "methods.d.ts").split("export interface InputMediaPhoto<F>")[1]
	assert 'pass "attach://\\<file_attach_name>" to upload a new one' in photo.split("}")[0]
	assert "InputMediaPhoto<F>" in bot_api().methods["sendMediaGroup"]["media"].type
	assert sorted(tool.files) == sorted(f"file{i}" for i in range(10))


# Ranges the Bot API states in words: the docs, copied into each parameter's JSDoc, say
# "1-4096 characters", "Values between 1-100 are accepted", "must include 2-10 items".
_CHARACTERS = re.compile(r"(\d+)-(\d+) characters")
_ITEMS = re.compile(r"(\d+)-(\d+) items")
_VALUES = re.compile(r"(?:[Vv]alues between |; |, )(\d+)-(\d+)\b(?! characters| items)")
# "must be between 60 and 86400, or 0x7FFFFFFF for ..." (sendLocation live_period).
_BETWEEN = re.compile(r"\bbetween (\d+) and (\d+)\b")
_EXCEPT = re.compile(r"\b(\d+) and \d+, or (0x[0-9A-Fa-f]+|\d+)\b")
_BOUNDS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}


@cache
def param_docs() -> dict[str, dict[str, str]]:
	"""Each Bot API method's parameters to their JSDoc text (the docs' description)."""
	text = npm_member("grammy", "methods.d.ts")
	docs: dict[str, dict[str, str]] = {}
	method = None
	for match in re.finditer(
		r"\n    (\w+)\(args\??: \{|/\*\*((?:(?!\*/).)*)\*/\s*(\w+)\??:", text, re.S
	):
		if match.group(1):
			method = match.group(1)
			docs[method] = {}
		elif method:
			docs[method][match.group(3)] = " ".join(match.group(2).split())
	return docs


@cache
def field_docs() -> dict[str, dict[str, str]]:
	"""Each Bot API interface's fields to their JSDoc text (the docs' description)."""
	docs: dict[str, dict[str, str]] = {}
	for name in _FILES:
		text = npm_member("grammy", name)
		for match in re.finditer(
			r"(?:export )?interface (\w+)(?:<[^>{]*>)?(?: extends [^{]+)?\s*\{", text
		):
			brace = match.end() - 1
			body = text[brace + 1 : close(text, brace) - 1]
			found = docs.setdefault(match.group(1), {})
			for doc in re.finditer(r"/\*\*((?:(?!\*/).)*)\*/\s*(\w+)\??:", body, re.S):
				found[doc.group(2)] = " ".join(doc.group(1).split())
	return docs


def _nested_docs(api: BotApi, type_text: str, seen: frozenset[str] = frozenset()) -> dict[str, str]:
	"""The field docs of every interface a type text names (through aliases and arrays)."""
	out: dict[str, str] = {}
	for name in re.findall(r"\b([A-Z]\w*)\b", type_text):
		if name in seen:
			continue
		if name in field_docs():
			for key, doc in field_docs()[name].items():
				out.setdefault(key, doc)
		elif name in api.aliases:
			for key, doc in _nested_docs(api, api.aliases[name], seen | {name}).items():
				out.setdefault(key, doc)
	return out


def _bound_errors(where: str, ours: dict[str, Any], doc: str) -> list[str]:
	"""The ranges one doc text states that the input schema ``ours`` leaves open."""
	errors = []
	ranges = [
		(low, high, kind)
		for pattern, kind in (
			(_CHARACTERS, "string"),
			(_ITEMS, "array"),
			(_VALUES, "integer"),
			(_BETWEEN, "integer"),
		)
		for low, high in pattern.findall(doc)
	]
	# A value the docs allow besides the range ("or 0x7FFFFFFF") may be one const branch.
	allowed = {int(value, 0) for _, value in _EXCEPT.findall(doc)}
	for low, high, kind in ranges:
		if kind == "integer" and ours.get("type") not in {"integer", "number"}:
			continue  # "0-9" in a list of allowed characters is not a range
		least, most = _BOUNDS.get(kind, ("minimum", "maximum"))
		for branch in ours.get("anyOf") or [{}]:
			if branch.get("const", object()) in allowed:
				continue
			bounds = {**ours, **branch}
			if not bounds.get(most, float("inf")) <= int(high):
				errors.append(f"{where}: {most} {high} (ours {bounds.get(most)})")
			if int(low) > 0 and not bounds.get(least, float("-inf")) >= int(low):
				errors.append(f"{where}: {least} {low} (ours {bounds.get(least)})")
	return errors


def _nested_bound_errors(
	api: BotApi, where: str, ours: dict[str, Any], type_text: str
) -> list[str]:
	"""The documented ranges of the fields of an object input (at any depth) it leaves open."""
	if ours.get("type") == "array" and isinstance(ours.get("items"), dict):
		return _nested_bound_errors(api, where + "[]", ours["items"], type_text)
	errors = []
	props = ours.get("properties") or {}
	if props:
		docs = _nested_docs(api, type_text)
		fields = api.fields(type_text)
		for key, sub in props.items():
			errors += _bound_errors(f"{where}.{key}", sub, docs.get(key, ""))
			if key in fields:
				errors += _nested_bound_errors(api, f"{where}.{key}", sub, fields[key].type)
	return errors


def range_errors(integration: Integration) -> list[str]:
	"""The ranges the docs state for a parameter, or a field in one, that its input leaves open."""
	docs = param_docs()
	api = bot_api()
	errors = []
	for tool in integration.tools:
		assert isinstance(tool, HttpTool)
		if tool.handle == "downloadFile":
			continue
		method = tool.endpoint.lstrip("/")
		props = tool.input_schema["properties"]
		for name, source in _sent_inputs(tool).items():
			if source is None or name in tool.files or source not in props:
				continue
			ours = props[source]
			where = f"{tool.handle}.{name}"
			errors += _bound_errors(where, ours, docs[method].get(name, ""))
			errors += _nested_bound_errors(api, where, ours, api.methods[method][name].type)
	return errors


def test_telegram_inputs_carry_the_documented_ranges() -> None:
	"""Text lengths, item counts and value ranges the Bot API docs state are in the inputs."""
	docs = param_docs()
	assert "1-4096 characters" in docs["sendMessage"]["text"]
	assert _VALUES.findall(docs["getUpdates"]["limit"]) == [("1", "100")]
	assert _ITEMS.findall(docs["sendMediaGroup"]["media"]) == [("2", "10")]
	assert _BETWEEN.findall(docs["sendLocation"]["live_period"]) == [("60", "86400")]
	assert "0-1024 characters" in field_docs()["ReplyParameters"]["quote"]
	assert range_errors(telegram.INTEGRATION) == []


def test_set_webhook_takes_an_https_url_on_a_webhook_port() -> None:
	"""setWebhook's url is HTTPS on port 443, 80, 88 or 8443, or empty (no webhook).

	https://core.telegram.org/bots/api#setwebhook: "HTTPS URL to send updates to. Use an empty
	string to remove webhook integration", "Ports currently supported for webhooks: 443, 80, 88,
	8443".
	"""
	doc = param_docs()["setWebhook"]["url"]
	assert "HTTPS URL" in doc and "empty string to remove" in doc
	tool = next(t for t in telegram.INTEGRATION.tools if t.handle == "setWebhook")
	schema = tool.input_schema["properties"]["url"]
	for good in (
		"https://bot.example.com/hook",
		"https://bot.example.com:8443/hook?x=1",
		"https://bot.example.com",
		"https://[2001:db8::1]:88/hook",
		"",
	):
		jsonschema.validate(good, schema)
	for bad in (
		"http://bot.example.com/hook",
		"https://bot.example.com:8080/hook",
		"https://[2001:db8::1]:8080/hook",
		"https://bot.example.com:443x/hook",
	):
		with pytest.raises(jsonschema.ValidationError):
			jsonschema.validate(bad, schema)


def test_live_period_is_a_day_at_most_or_indefinite() -> None:
	"""sendLocation's live_period takes 60-86400 or 0x7FFFFFFF and nothing in between.

	https://core.telegram.org/bots/api#sendlocation: "must be between 60 and 86400, or
	0x7FFFFFFF for live locations that can be edited indefinitely".
	"""
	tool = next(t for t in telegram.INTEGRATION.tools if t.handle == "sendLocation")
	schema = tool.input_schema["properties"]["live_period"]
	for good in (60, 900, 86400, 0x7FFFFFFF):
		jsonschema.validate(good, schema)
	for bad in (59, 86401, 100000, 0x7FFFFFFE):
		with pytest.raises(jsonschema.ValidationError):
			jsonschema.validate(bad, schema)


@pytest.mark.parametrize(
	("handle", "prop", "key"),
	[
		("sendMessage", "text", "maxLength"),
		("sendMessage", "text", "minLength"),
		("uploadPhoto", "caption", "maxLength"),
		("getUpdates", "limit", "maximum"),
		("sendMediaGroup", "media", "minItems"),
		("setWebhook", "secret_token", "maxLength"),
		("setWebhook", "max_connections", "minimum"),
		("answerCallbackQuery", "text", "maxLength"),
		("sendLocation", "horizontal_accuracy", "maximum"),
		("sendLocation", "heading", "minimum"),
		("sendLocation", "heading", "maximum"),
		("sendLocation", "live_period", "anyOf"),
		("sendMessage", "reply_parameters.quote", "maxLength"),
		("sendMediaGroup", "media.[].caption", "maxLength"),
		("sendAnimation", "caption", "maxLength"),
		("uploadAnimation", "caption", "maxLength"),
	],
)
def test_an_input_without_its_documented_range_fails_the_check(
	handle: str, prop: str, key: str
) -> None:
	"""Dropping a bound the docs state makes the check fail."""
	assert range_errors(with_input_schema(telegram.INTEGRATION, handle, pop_at(prop, key)))


# Negative checks -----------------------------------------------------------------------------

_BREAKS: dict[str, Callable[[HttpTool], dict[str, Any]]] = {
	"method": lambda t: {"method": "GET"},
	"path": lambda t: {"endpoint": t.endpoint + "Nonexistent"},
	"body": lambda t: {"body": {**(t.body or {}), "nonexistent_param": "{{ input.chat_id }}"}},
	"nested": lambda t: {
		"input_schema": {
			**t.input_schema,
			"properties": {
				**t.input_schema["properties"],
				"reply_parameters": {
					"type": "object",
					"properties": {"message_idd": {"type": "integer"}},
				},
			},
		}
	},
	"enum": lambda t: {
		"input_schema": {
			**t.input_schema,
			"properties": {
				**t.input_schema["properties"],
				"parse_mode": {"type": "string", "enum": ["HTML", "Markdown3"]},
			},
		}
	},
	"required": lambda t: {
		"input_schema": {**t.input_schema, "required": ["chat_id"]},
	},
}


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize("handle", ["sendMessage", "sendVideo", "copyMessage", "sendAnimation"])
def test_a_wrong_telegram_request_fails_the_check(handle: str, broken: str) -> None:
	"""A wrong method, name, nested field, enum value or optional required param fails the check."""
	broken_integration = with_tool(telegram.INTEGRATION, handle, _BREAKS[broken])
	with pytest.raises(AssertionError):
		check_telegram(broken_integration, bot_api())


@pytest.mark.parametrize(
	("handle", "field"),
	[
		("pinChatMessage", "message_id"),
		("pinChatMessage", "chat_id"),
		("unpinChatMessage", "chat_id"),
		("sendLocation", "latitude"),
		("sendLocation", "longitude"),
		("sendSticker", "sticker"),
		("sendAnimation", "animation"),
		("uploadAnimation", "animation"),
		("getChatAdministrators", "chat_id"),
		("getChatMember", "user_id"),
	],
)
def test_a_required_bot_api_parameter_left_optional_fails_the_check(
	handle: str, field: str
) -> None:
	"""An input that fills a parameter the Bot API requires must be required by the tool."""
	broken = with_input_schema(
		telegram.INTEGRATION,
		handle,
		lambda s: s.update(required=[r for r in s["required"] if r != field]),
	)
	with pytest.raises(AssertionError, match="required"):
		check_telegram(broken, bot_api())


@pytest.mark.parametrize(
	("handle", "method"),
	[
		("pinChatMessage", "pinChatMessage"),
		("getChatMember", "getChatMember"),
		("sendSticker", "sendSticker"),
	],
)
def test_a_chat_tool_pointed_at_another_method_fails_the_check(handle: str, method: str) -> None:
	"""Sending a new tool's parameters to another Bot API method fails the parameter check."""
	other = {"pinChatMessage": "/getChat", "getChatMember": "/getMe", "sendSticker": "/sendMessage"}
	broken = with_tool(telegram.INTEGRATION, handle, lambda t: {"endpoint": other[method]})
	with pytest.raises(AssertionError):
		check_telegram(broken, bot_api())
