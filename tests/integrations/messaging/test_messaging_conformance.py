"""Every messaging tool against the service's official reference, read at test time.

Installed from PyPI: Twilio (twilio, generated from twilio-oai), X (xdk, generated from the X API
OpenAPI file), Microsoft Graph (msgraph-sdk request builders) and Slack (slack-sdk's WebClient).
WhatsApp publishes no machine-readable reference in a package registry, and Discord's is checked
again against its OpenAPI document in tests/integrations/social/: here their requests are pinned
to the official documentation pages, cited next to each entry. Telegram, Instagram and TikTok are
checked in tests/integrations/social/.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from _edit import pop_at, with_input_schema, with_tool

from openmolt_core.integrations import HttpTool, Integration
from openmolt_core.integrations.schema import input_name
from openmolt_integrations import (
	discord,
	outlook,
	slack,
	twilio,
	whatsapp,
	x,
)

_IF_ELSE = re.compile(
	r"\{%-?\s*if [^%]*%\}(.*?)\{%-?\s*else\s*-?%\}(.*?)\{%-?\s*endif\s*-?%\}", re.S
)
_IF = re.compile(r"\{%-?\s*(?:if|unless) [^%]*%\}(.*?)\{%-?\s*end(?:if|unless)\s*-?%\}", re.S)
_VAR = re.compile(r"\{\{\s*(.*?)\s*\}\}")
# Graph API parameters every node and edge accepts: field selection and cursor paging
# (https://developers.facebook.com/docs/graph-api/results).
_GRAPH_COMMON = {"fields", "limit", "after", "before"}


def variants(text: str) -> list[str]:
	"""Expand the Liquid conditionals of a template into every text it can produce."""
	match = _IF_ELSE.search(text)
	if match:
		head, tail = text[: match.start()], text[match.end() :]
		return variants(head + match.group(1) + tail) + variants(head + match.group(2) + tail)
	match = _IF.search(text)
	if match:
		head, tail = text[: match.start()], text[match.end() :]
		return variants(head + match.group(1) + tail) + variants(head + tail)
	return [text]


def shape(url: str) -> str:
	"""A URL template with every ``{{ ... }}`` as ``{}``."""
	return _VAR.sub("{}", url)


def http_tools(integration: Integration) -> list[HttpTool]:
	return [t for t in integration.tools if isinstance(t, HttpTool)]


def urls(integration: Integration, tool: HttpTool) -> list[str]:
	base = tool.base_url if tool.base_url is not None else integration.api_setup.base_url
	return [base + v for v in variants(tool.endpoint)]


def input_path_names(url: str) -> list[str | None]:
	"""For each placeholder of a URL: the input field it renders, or None for config values."""
	out: list[str | None] = []
	for expr in _VAR.findall(url):
		name = expr.split("|")[0].strip()
		out.append(name.removeprefix("input.") if name.startswith("input.") else None)
	return out


def request_format(integration: Integration, tool: HttpTool) -> str:
	return tool.request_format or integration.api_setup.request_format


def body_keys(tool: HttpTool) -> tuple[set[str], dict[str, set[str]]]:
	if not isinstance(tool.body, dict):
		return set(), {}
	nested = {k: set(v) for k, v in tool.body.items() if isinstance(v, dict)}
	return set(tool.body), nested


def _norm(name: str) -> str:
	return name.lower().replace("-", "_")


# Shared check ---------------------------------------------------------------------------------


def _names_match(ours: list[str | None], theirs: list[str]) -> bool:
	"""Input path names equal the reference's (config values are not compared)."""
	return len(ours) == len(theirs) and all(
		o is None or _norm(o).replace("_", "") == _norm(t).replace("_", "").replace(".", "")
		for o, t in zip(ours, theirs, strict=True)
	)


def _op_errors(
	integration: Integration, tool: HttpTool, op: dict[str, Any], extra_query: set[str]
) -> list[str]:
	"""What of a tool's query, format and body the operation does not accept."""
	errors = []
	unknown_query = set(tool.query_params) - set(op["query"]) - extra_query
	if unknown_query:
		errors.append(f"query {unknown_query}")
	top, nested = body_keys(tool)
	top |= {re.sub(r"\[\d+\]$", "[n]", f) for f in tool.files}
	if top:
		fmt = request_format(integration, tool)
		if "formats" in op and fmt not in op["formats"]:
			errors.append(f"format {fmt}")
		allowed_top = set(op["body"])
		if op.get("casefold"):  # msgraph-sdk writes action bodies in PascalCase (SaveToSentItems)
			top, allowed_top = {k.lower() for k in top}, {k.lower() for k in allowed_top}
		if not top <= allowed_top:
			errors.append(f"body {top - allowed_top}")
		for key_name, keys in nested.items():
			allowed = set(op.get("nested", {}).get(key_name, ()))
			if not keys <= allowed:
				errors.append(f"{key_name}.{keys - allowed}")
	return errors


def check_operations(
	integration: Integration,
	ops: dict[tuple[str, str], list[dict[str, Any]]],
	*,
	extra_query: set[str] = frozenset(),  # type: ignore[assignment]
	skip: set[str] = frozenset(),  # type: ignore[assignment]
	names_match: Callable[[list[str | None], list[str]], bool] = _names_match,
) -> int:
	"""Assert method, path, path-parameter names, query names and body names; return checks made.

	``ops`` maps (method, URL shape) to operations, each a dict with ``path`` (its placeholder
	names), ``query`` and ``body`` (allowed names), optionally ``nested`` (allowed names under a
	body key) and ``formats`` (the request formats it accepts).
	"""
	checked = 0
	for tool in http_tools(integration):
		if tool.handle in skip:
			continue
		for url in urls(integration, tool):
			key = (tool.method, shape(url))
			assert key in ops, f"{tool.handle}: {key[0]} {key[1]} is not in the reference"
			ours = input_path_names(url)
			named = [op for op in ops[key] if names_match(ours, op["path"])]
			assert named, f"{tool.handle}: path parameters {ours} differ from {ops[key]}"
			errors = [_op_errors(integration, tool, op, extra_query) for op in named]
			assert [] in errors, f"{tool.handle}: {errors}"
			checked += 1
	return checked


def _doc_ops(
	docs: dict[str, tuple[str, str, set[str], set[str], dict[str, set[str]]]],
	formats: tuple[str, ...],
) -> dict[tuple[str, str], list[dict[str, Any]]]:
	"""Operations by (method, URL shape) from a table of documented requests."""
	ops: dict[tuple[str, str], list[dict[str, Any]]] = {}
	for method, url, query, body, nested in docs.values():
		ops.setdefault((method, re.sub(r"\{[^}]+\}", "{}", url)), []).append(
			{
				"path": re.findall(r"\{([^}]+)\}", url),
				"query": query,
				"body": body,
				"nested": nested,
				"formats": formats,
			}
		)
	return ops


def _site(package: str, relative: str) -> Path:
	return Path(str(metadata.distribution(package).locate_file(relative)))


# Discord ----------------------------------------------------------------------------------------

# Discord publishes its OpenAPI file only on GitHub (no official registry package), so the tools
# are pinned to the official documentation, one page per request: method, route, query string
# parameters and JSON/form parameters as the page lists them.
_DISCORD_MESSAGE = {
	"content",
	"nonce",
	"tts",
	"embeds",
	"allowed_mentions",
	"message_reference",
	"components",
	"sticker_ids",
	"files[n]",
	"payload_json",
	"attachments",
	"flags",
	"enforce_nonce",
	"poll",
}
_DISCORD_MESSAGE_PATH = "https://discord.com/api/v10/channels/{channel.id}/messages/{message.id}"
_DISCORD_MEMBER_ROLE = (
	"https://discord.com/api/v10/guilds/{guild.id}/members/{user.id}/roles/{role.id}"
)
# https://discord.com/developers/docs/resources/guild#create-guild-channel-json-params
_DISCORD_CHANNEL_SETTINGS = {
	"name",
	"type",
	"topic",
	"bitrate",
	"user_limit",
	"rate_limit_per_user",
	"position",
	"permission_overwrites",
	"parent_id",
	"nsfw",
	"rtc_region",
	"video_quality_mode",
	"default_auto_archive_duration",
	"default_reaction_emoji",
	"available_tags",
	"default_sort_order",
	"default_forum_layout",
	"default_thread_rate_limit_per_user",
}
DISCORD_DOCS: dict[str, tuple[str, str, set[str], set[str], dict[str, set[str]]]] = {
	# https://discord.com/developers/docs/resources/message#create-message
	"createMessage": (
		"POST",
		"https://discord.com/api/v10/channels/{channel.id}/messages",
		set(),
		_DISCORD_MESSAGE,
		{},
	),
	# https://discord.com/developers/docs/resources/message#get-channel-messages
	"getChannelMessages": (
		"GET",
		"https://discord.com/api/v10/channels/{channel.id}/messages",
		{"around", "before", "after", "limit"},
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/message#get-channel-message
	"getChannelMessage": ("GET", _DISCORD_MESSAGE_PATH, set(), set(), {}),
	# https://discord.com/developers/docs/resources/message#edit-message
	"editMessage": (
		"PATCH",
		_DISCORD_MESSAGE_PATH,
		set(),
		{
			"content",
			"embeds",
			"flags",
			"allowed_mentions",
			"components",
			"files[n]",
			"payload_json",
			"attachments",
		},
		{},
	),
	# https://discord.com/developers/docs/resources/message#delete-message
	"deleteMessage": ("DELETE", _DISCORD_MESSAGE_PATH, set(), set(), {}),
	# https://discord.com/developers/docs/resources/message#create-reaction
	"createReaction": ("PUT", _DISCORD_MESSAGE_PATH + "/reactions/{emoji}/@me", set(), set(), {}),
	# https://discord.com/developers/docs/resources/message#delete-own-reaction
	"deleteOwnReaction": (
		"DELETE",
		_DISCORD_MESSAGE_PATH + "/reactions/{emoji}/@me",
		set(),
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/message#pin-message
	"pinMessage": (
		"PUT",
		"https://discord.com/api/v10/channels/{channel.id}/messages/pins/{message.id}",
		set(),
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/channel#start-thread-from-message
	"startThreadFromMessage": (
		"POST",
		_DISCORD_MESSAGE_PATH + "/threads",
		set(),
		{"name", "auto_archive_duration", "rate_limit_per_user"},
		{},
	),
	# https://discord.com/developers/docs/resources/channel#start-thread-without-message and
	# https://discord.com/developers/docs/resources/channel#start-thread-in-forum-or-media-channel
	"startThread": (
		"POST",
		"https://discord.com/api/v10/channels/{channel.id}/threads",
		set(),
		{
			"name",
			"auto_archive_duration",
			"type",
			"invitable",
			"rate_limit_per_user",
			"message",
			"applied_tags",
			"files[n]",
			"payload_json",
		},
		{},
	),
	# https://discord.com/developers/docs/resources/channel#get-channel
	"getChannel": ("GET", "https://discord.com/api/v10/channels/{channel.id}", set(), set(), {}),
	# https://discord.com/developers/docs/resources/guild#get-guild
	"getGuild": (
		"GET",
		"https://discord.com/api/v10/guilds/{guild.id}",
		{"with_counts"},
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#get-guild-channels
	"getGuildChannels": (
		"GET",
		"https://discord.com/api/v10/guilds/{guild.id}/channels",
		set(),
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#list-active-guild-threads
	"listActiveGuildThreads": (
		"GET",
		"https://discord.com/api/v10/guilds/{guild.id}/threads/active",
		set(),
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#search-guild-members
	"searchGuildMembers": (
		"GET",
		"https://discord.com/api/v10/guilds/{guild.id}/members/search",
		{"query", "limit"},
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#create-guild-channel
	"createGuildChannel": (
		"POST",
		"https://discord.com/api/v10/guilds/{guild.id}/channels",
		set(),
		_DISCORD_CHANNEL_SETTINGS,
		{},
	),
	# https://discord.com/developers/docs/resources/channel#modify-channel (guild channel and
	# thread fields)
	"modifyChannel": (
		"PATCH",
		"https://discord.com/api/v10/channels/{channel.id}",
		set(),
		_DISCORD_CHANNEL_SETTINGS
		| {"flags", "archived", "auto_archive_duration", "locked", "invitable", "applied_tags"},
		{},
	),
	# https://discord.com/developers/docs/resources/channel#deleteclose-channel
	"deleteChannel": (
		"DELETE",
		"https://discord.com/api/v10/channels/{channel.id}",
		set(),
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#list-guild-members
	"listGuildMembers": (
		"GET",
		"https://discord.com/api/v10/guilds/{guild.id}/members",
		{"limit", "after"},
		set(),
		{},
	),
	# https://discord.com/developers/docs/resources/guild#add-guild-member-role
	"addGuildMemberRole": ("PUT", _DISCORD_MEMBER_ROLE, set(), set(), {}),
	# https://discord.com/developers/docs/resources/guild#remove-guild-member-role
	"removeGuildMemberRole": ("DELETE", _DISCORD_MEMBER_ROLE, set(), set(), {}),
	# https://discord.com/developers/docs/resources/user#create-dm
	"createDm": (
		"POST",
		"https://discord.com/api/v10/users/@me/channels",
		set(),
		{"recipient_id"},
		{},
	),
	# https://discord.com/developers/docs/resources/user#get-current-user-guilds
	"getCurrentUserGuilds": (
		"GET",
		"https://discord.com/api/v10/users/@me/guilds",
		{"before", "after", "limit", "with_counts"},
		set(),
		{},
	),
}


def _discord_names_match(ours: list[str | None], theirs: list[str]) -> bool:
	# The documentation writes {channel.id}, {message.id} and {emoji} (the emoji's name).
	return len(ours) == len(theirs) and all(
		o is None or _norm(o).startswith(t.replace(".", "_"))
		for o, t in zip(ours, theirs, strict=True)
	)


def check_discord(integration: Integration) -> int:
	"""Assert every Discord tool is a documented request; return checks made."""
	ops = _doc_ops(DISCORD_DOCS, ("json", "multipart"))
	return check_operations(integration, ops, names_match=_discord_names_match)


def test_discord_tools_follow_the_discord_documentation() -> None:
	"""Each Discord tool is a documented route of API v10 with its parameter and body names."""
	assert discord.INTEGRATION.api_setup.base_url == "https://discord.com/api/v10"
	assert check_discord(discord.INTEGRATION) == len(discord.INTEGRATION.tools)
	with_file = next(t for t in discord.INTEGRATION.tools if t.files)
	assert request_format(discord.INTEGRATION, with_file) == "multipart"
	assert all(re.fullmatch(r"files\[\d+\]", f) for f in with_file.files)


# WhatsApp ---------------------------------------------------------------------------------------

# The Cloud API spec (facebook/openapi) is published on GitHub only, not in a registry package, so
# the tools are pinned to the official documentation pages.
_WA = "https://graph.facebook.com/v26.0"
_WA_SEND = {
	"messaging_product",
	"recipient_type",
	"to",
	"context",
	"type",
	"biz_opaque_callback_data",
	"text",
	"template",
	"image",
	"video",
	"audio",
	"document",
	"sticker",
	"interactive",
	"reaction",
	"location",
	"contacts",
}
WHATSAPP_DOCS: dict[str, tuple[str, str, set[str], set[str], dict[str, set[str]]]] = {
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
	# (text: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/text-messages,
	# template: https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates,
	# reaction: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/reaction-messages)
	"sendMessage": (
		"POST",
		_WA + "/{Phone-Number-ID}/messages",
		set(),
		_WA_SEND,
		{
			"text": {"body", "preview_url"},
			"template": {"name", "language", "components"},
			"reaction": {"message_id", "emoji"},
		},
	),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read and
	# https://developers.facebook.com/docs/whatsapp/cloud-api/typing-indicators
	"markAsRead": (
		"POST",
		_WA + "/{Phone-Number-ID}/messages",
		set(),
		{"messaging_product", "status", "message_id", "typing_indicator"},
		{},
	),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
	"uploadMedia": (
		"POST",
		_WA + "/{Phone-Number-ID}/media",
		set(),
		{"file", "type", "messaging_product"},
		{},
	),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#retrieve-media-url
	"getMediaUrl": ("GET", _WA + "/{Media-ID}", {"phone_number_id"}, set(), {}),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#delete-media
	"deleteMedia": ("DELETE", _WA + "/{Media-ID}", {"phone_number_id"}, set(), {}),
	# https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates/
	"listTemplates": (
		"GET",
		_WA + "/{WhatsApp-Business-Account-ID}/message_templates",
		{"category", "content", "language", "name", "name_or_content", "quality_score", "status"},
		set(),
		{},
	),
	# https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
	"createTemplate": (
		"POST",
		_WA + "/{WhatsApp-Business-Account-ID}/message_templates",
		set(),
		{"name", "language", "category", "components", "parameter_format"},
		{},
	),
	# https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
	"listPhoneNumbers": (
		"GET",
		_WA + "/{WhatsApp-Business-Account-ID}/phone_numbers",
		set(),
		set(),
		{},
	),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/business-profiles
	"getBusinessProfile": (
		"GET",
		_WA + "/{Phone-Number-ID}/whatsapp_business_profile",
		set(),
		set(),
		{},
	),
	# the same page: update business profile
	"updateBusinessProfile": (
		"POST",
		_WA + "/{Phone-Number-ID}/whatsapp_business_profile",
		set(),
		{
			"messaging_product",
			"about",
			"address",
			"description",
			"email",
			"profile_picture_handle",
			"vertical",
			"websites",
		},
		{},
	),
}


def check_whatsapp(integration: Integration) -> int:
	"""Assert every WhatsApp tool but downloadMedia is a documented request; return checks made."""
	ops = _doc_ops(WHATSAPP_DOCS, ("json", "multipart"))
	return check_operations(integration, ops, extra_query=_GRAPH_COMMON, skip={"downloadMedia"})


def test_whatsapp_tools_follow_the_cloud_api_documentation() -> None:
	"""Each WhatsApp tool is a documented Cloud API request with its parameter and body names."""
	assert whatsapp.INTEGRATION.api_setup.base_url == _WA
	assert check_whatsapp(whatsapp.INTEGRATION) == len(whatsapp.INTEGRATION.tools) - 1
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#download-media:
	# GET the media URL itself (with the access token), binary response.
	download = next(t for t in whatsapp.INTEGRATION.tools if t.handle == "downloadMedia")
	assert (download.method, download.base_url, download.response_format) == (
		"GET",
		"{{ input.url }}",
		"binary",
	)
	upload = next(t for t in whatsapp.INTEGRATION.tools if t.handle == "uploadMedia")
	assert request_format(whatsapp.INTEGRATION, upload) == "multipart"
	sends = [t for t in whatsapp.INTEGRATION.tools if t.endpoint.endswith("/messages")]
	assert sends and all(t.body["messaging_product"] == "whatsapp" for t in sends)


# Limits the Cloud API documentation sets on message fields (no machine-readable reference):
# the inputs must carry them (equal, or stricter). Tool, input path, keyword, documented value.
WHATSAPP_LIMITS: list[tuple[str, str, str, Any]] = [
	# https://developers.facebook.com/docs/whatsapp/cloud-api/messages/text-messages: body,
	# "Maximum 4096 characters".
	("sendText", "body", "maxLength", 4096),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages
	# and .../interactive-list-messages: body text 1024, header text 60, footer text 60 characters.
	("sendInteractive", "interactive.body.text", "maxLength", 1024),
	("sendInteractive", "interactive.header.text", "maxLength", 60),
	("sendInteractive", "interactive.footer.text", "maxLength", 60),
	# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages (image, video
	# and document objects): caption, "Maximum 1024 characters".
	("sendMedia", "image.caption", "maxLength", 1024),
	("sendMedia", "video.caption", "maxLength", 1024),
	("sendMedia", "document.caption", "maxLength", 1024),
	# https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates:
	# names of lowercase letters, digits and underscores, up to 512 characters; the categories.
	("createTemplate", "name", "pattern", "^[a-z0-9_]{1,512}$"),
	("createTemplate", "category", "enum", ["MARKETING", "UTILITY", "AUTHENTICATION"]),
]


def whatsapp_limit_errors(integration: Integration) -> list[str]:
	"""The documented limits a WhatsApp input schema leaves open."""
	tools = {t.handle: t for t in http_tools(integration)}
	errors = []
	for handle, path, key, value in WHATSAPP_LIMITS:
		schema: dict[str, Any] = tools[handle].input_schema
		for step in path.split("."):
			schema = schema["properties"][step]
		ours = schema.get(key)
		ok = (
			ours is not None and ours <= value
			if key.startswith("max")
			else ours is not None and set(ours) <= set(value)
			if key == "enum"
			else ours == value
		)
		if not ok:
			errors.append(f"{handle}.{path}: {key} {value!r} (ours {ours!r})")
	return errors


def test_whatsapp_inputs_carry_the_documented_limits() -> None:
	"""Text lengths, the template name pattern and categories of the docs are in the inputs."""
	assert whatsapp_limit_errors(whatsapp.INTEGRATION) == []


@pytest.mark.parametrize("index", range(len(WHATSAPP_LIMITS)))
def test_a_whatsapp_input_without_its_limit_fails_the_check(index: int) -> None:
	"""Dropping a documented limit from an input makes the check fail."""
	handle, path, key, _ = WHATSAPP_LIMITS[index]
	broken = with_input_schema(whatsapp.INTEGRATION, handle, pop_at(path, key))
	assert whatsapp_limit_errors(broken)


# Twilio: the twilio PyPI SDK, generated from twilio-oai --------------------------------------

_TWILIO_DIRS = {"api": "v2010", "verify": "v2", "lookups": "v2"}


def twilio_operations() -> dict[tuple[str, str], list[dict[str, Any]]]:
	"""Operations of the installed twilio package: each resource's URI, HTTP methods and keys."""
	rest = _site("twilio", "twilio/rest")
	ops: dict[tuple[str, str], list[dict[str, Any]]] = {}
	for domain, version_dir in _TWILIO_DIRS.items():
		base_src = next((rest / domain).glob("*Base.py")).read_text()
		host = re.search(r'super\(\).__init__\(twilio, "(https://[^"]+)"\)', base_src)
		version_src = (rest / domain / version_dir / "__init__.py").read_text()
		version = re.search(r'super\(\).__init__\(domain, "([^"]+)"\)', version_src)
		assert host and version, domain
		prefix = f"{host.group(1)}/{version.group(1)}"
		for module in (rest / domain / version_dir).rglob("*.py"):
			for cls in re.split(r"\nclass ", module.read_text())[1:]:
				uri = re.search(r'self\._uri = "([^"]+)"', cls)
				if not uri:
					continue
				for fn in re.split(r"\n    (?:async )?def ", cls)[1:]:
					method = re.search(r'method="(\w+)", uri=self\._uri', fn)
					if not method:
						continue
					keys = {
						k
						for block in re.findall(r"values\.of\(\s*\{(.*?)\}\s*\)", fn, re.S)
						for k in re.findall(r'"([^"]+)":', block)
					}
					sent_as = "data=data" if "data=data" in fn else "params="
					ops.setdefault(
						(method.group(1), prefix + re.sub(r"\{[^}]+\}", "{}", uri.group(1))), []
					).append(
						{
							"path": re.findall(r"\{([^}]+)\}", uri.group(1)),
							"query": keys if sent_as == "params=" else set(),
							"body": keys if sent_as == "data=data" else set(),
							"formats": ("form-data",),
						}
					)
	return ops


def test_twilio_tools_match_the_twilio_sdk() -> None:
	"""Each Twilio tool is a resource operation of the twilio SDK on its host, with its key names."""
	ops = twilio_operations()
	assert len(ops) > 100
	assert check_operations(twilio.INTEGRATION, ops) == len(twilio.INTEGRATION.tools)
	hosts = {
		re.match(r"https://[^/]+", urls(twilio.INTEGRATION, t)[0]).group(0)  # type: ignore[union-attr]
		for t in twilio.INTEGRATION.tools
	}
	assert hosts == {
		"https://api.twilio.com",
		"https://verify.twilio.com",
		"https://lookups.twilio.com",
	}
	for tool in twilio.INTEGRATION.tools:
		if tool.method == "POST":
			assert request_format(twilio.INTEGRATION, tool) == "form-data", tool.handle
	# twilio-python sends list parameters (MediaUrl) as a list the HTTP client repeats per item.
	message = _site("twilio", "twilio/rest/api/v2010/account/message/__init__.py").read_text()
	assert '"MediaUrl": serialize.map(media_url, lambda e: e)' in message
	import anyio

	from openmolt_core.integrations.extensions import EncodeRequest

	encode = twilio.INTEGRATION.encoders["form-data"]
	encoded = anyio.run(encode, {"To": "+1", "MediaUrl": ["a", "b"]}, EncodeRequest({}, None))
	assert encoded.content == b"To=%2B1&MediaUrl=a&MediaUrl=b"


# The twilio SDK's types for each parameter: the inputs carry them (issue 15 E.4) -------------


def _twilio_prefixes() -> dict[Path, str]:
	"""Each product's SDK directory to its URL prefix (host and version)."""
	rest = _site("twilio", "twilio/rest")
	out = {}
	for domain, version_dir in _TWILIO_DIRS.items():
		base_src = next((rest / domain).glob("*Base.py")).read_text()
		host = re.search(r'super\(\).__init__\(twilio, "(https://[^"]+)"\)', base_src)
		version_src = (rest / domain / version_dir / "__init__.py").read_text()
		version = re.search(r'super\(\).__init__\(domain, "([^"]+)"\)', version_src)
		assert host and version, domain
		out[rest / domain / version_dir] = f"{host.group(1)}/{version.group(1)}"
	return out


def _sdk_enums(tree: ast.Module) -> dict[str, list[str]]:
	"""``Instance.Enum`` to its values: the SDK's nested enum classes (``CallInstance.Status``)."""
	enums: dict[str, list[str]] = {}
	for outer in tree.body:
		if isinstance(outer, ast.ClassDef):
			for inner in outer.body:
				if isinstance(inner, ast.ClassDef):
					enums[f"{outer.name}.{inner.name}"] = [
						node.value.value
						for node in inner.body
						if isinstance(node, ast.Assign)
						and isinstance(node.value, ast.Constant)
						and isinstance(node.value.value, str)
					]
	return enums


def _class_uri(cls: ast.ClassDef) -> str | None:
	for node in ast.walk(cls):
		if (
			isinstance(node, ast.Assign)
			and isinstance(node.targets[0], ast.Attribute)
			and node.targets[0].attr == "_uri"
			and isinstance(node.value, ast.Call)
			and isinstance(node.value.func, ast.Attribute)
			and isinstance(node.value.func.value, ast.Constant)
		):
			return str(node.value.func.value.value)
	return None


def _sent_keys(fn: ast.FunctionDef, enums: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
	"""Each key a SDK method sends: the Python type, the serializer, enum values and the doc."""
	types = {a.arg: ast.unparse(a.annotation) for a in fn.args.args if a.annotation}
	doc = ast.get_docstring(fn) or ""
	keys: dict[str, dict[str, Any]] = {}
	for node in ast.walk(fn):
		if not (
			isinstance(node, ast.Call)
			and ast.unparse(node.func) == "values.of"
			and node.args
			and isinstance(node.args[0], ast.Dict)
		):
			continue
		for key, value in zip(node.args[0].keys, node.args[0].values, strict=True):
			serializer = None
			if isinstance(value, ast.Call) and value.args:
				serializer = ast.unparse(value.func)
				value = value.args[0]
			if not (isinstance(key, ast.Constant) and isinstance(value, ast.Name)):
				continue
			kind = types.get(value.id, "")
			enum = re.search(r"['\"](\w+\.\w+)['\"]", kind)
			param_doc = re.search(rf":param (?:\S+ )?{value.id}: ([^\n]*)", doc)
			keys[str(key.value)] = {
				"type": kind,
				"serializer": serializer,
				"enum": enums.get(enum.group(1)) if enum else None,
				"doc": param_doc.group(1) if param_doc else "",
			}
	return keys


@cache
def twilio_parameters() -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
	"""(method, URL shape) to the keys its SDK methods send, with their SDK types."""
	out: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
	for directory, prefix in _twilio_prefixes().items():
		for module in directory.rglob("*.py"):
			tree = ast.parse(module.read_text())
			enums = _sdk_enums(tree)
			for cls in tree.body:
				uri = _class_uri(cls) if isinstance(cls, ast.ClassDef) else None
				if uri is None:
					continue
				assert isinstance(cls, ast.ClassDef)
				shape_ = prefix + re.sub(r"\{[^}]+\}", "{}", uri)
				for fn in cls.body:
					if not isinstance(fn, ast.FunctionDef):
						continue
					methods = {
						kw.value.value
						for node in ast.walk(fn)
						if isinstance(node, ast.Call)
						for kw in node.keywords
						if kw.arg == "method" and isinstance(kw.value, ast.Constant)
					}
					for method in methods:
						out.setdefault((str(method), shape_), {}).update(_sent_keys(fn, enums))
	return out


def _type_errors(where: str, ours: dict[str, Any], sdk: dict[str, Any]) -> list[str]:
	"""What of the SDK's type a Twilio input leaves out: its JSON type, date format and enum."""
	errors = []
	kind, serializer = sdk["type"], sdk["serializer"]
	expected = (
		"array"
		if "List[" in kind
		else "integer"
		if re.search(r"\bint\b", kind)
		else "boolean"
		if re.search(r"\bbool\b", kind)
		else "number"
		if re.search(r"\bfloat\b", kind)
		else None
	)
	if expected and ours.get("type") != expected:
		errors.append(f"{where}: type {expected} (ours {ours.get('type')})")
	if serializer == "serialize.iso8601_datetime":
		# The SDK sends a date-time; where its doc lets the filter take a day (YYYY-MM-DD), a
		# date input is what Twilio's docs ask for.
		allowed = {"date-time", "date"} if "YYYY-MM-DD" in sdk["doc"] else {"date-time"}
		if ours.get("format") not in allowed:
			errors.append(f"{where}: format {sorted(allowed)} (ours {ours.get('format')})")
	if serializer == "serialize.iso8601_date" and ours.get("format") != "date":
		errors.append(f"{where}: format date (ours {ours.get('format')})")
	if sdk["enum"]:
		values = (ours.get("items") or {}).get("enum") if "items" in ours else ours.get("enum")
		if not values:
			errors.append(f"{where}: enum {sdk['enum']} (ours none)")
		elif not set(values) <= set(sdk["enum"]):
			errors.append(f"{where}: values {set(values) - set(sdk['enum'])} are not the SDK's")
	return errors


def check_twilio_types(integration: Integration) -> int:
	"""Assert every forwarded Twilio input carries its SDK type; return the inputs checked."""
	params = twilio_parameters()
	checked, errors = 0, []
	for tool in http_tools(integration):
		key = (tool.method, shape(urls(integration, tool)[0]))
		props = tool.input_schema.get("properties", {})
		for name, template in {**tool.query_params, **(tool.body or {})}.items():
			source = re.match(r"\{\{ input\.(\w+)", str(template))
			if not source or source.group(1) not in props:
				continue
			assert name in params[key], f"{tool.handle}: the SDK sends no {name}"
			errors += _type_errors(
				f"{tool.handle}.{name}", props[source.group(1)], params[key][name]
			)
			checked += 1
	assert not errors, errors
	return checked


def test_twilio_inputs_carry_the_sdk_types() -> None:
	"""Each Twilio input has the JSON type, date format and enum of the SDK's parameter."""
	params = twilio_parameters()
	message = ("POST", "https://api.twilio.com/2010-04-01/Accounts/{}/Messages.json")
	assert params[message]["ScheduleType"]["enum"] == ["fixed"]
	assert params[message]["SendAt"]["serializer"] == "serialize.iso8601_datetime"
	assert check_twilio_types(twilio.INTEGRATION) > 40


_TWILIO_LOOSER: dict[str, tuple[str, str, Callable[[dict[str, Any]], None]]] = {
	"SendAt without its format": ("sendMessage", "SendAt", lambda p: p.pop("format")),
	"SendAt as a day": ("sendMessage", "SendAt", lambda p: p.update(format="date")),
	"DateSentAfter without its format": (
		"listMessages",
		"DateSentAfter",
		lambda p: p.pop("format"),
	),
	"Status without its enum": ("listCalls", "Status", lambda p: p.pop("enum")),
	"Status with a value the SDK lacks": (
		"updateCall",
		"Status",
		lambda p: p.update(enum=["completed", "hangup"]),
	),
	"Timeout as a string": ("makeCall", "Timeout", lambda p: p.update(type="string")),
}


@pytest.mark.parametrize("case", sorted(_TWILIO_LOOSER))
def test_a_twilio_input_without_its_sdk_type_fails_the_check(case: str) -> None:
	"""Dropping a format or enum the SDK sets, or changing a type, makes the check fail."""
	handle, prop, change = _TWILIO_LOOSER[case]
	with pytest.raises(AssertionError):
		check_twilio_types(
			with_input_schema(twilio.INTEGRATION, handle, lambda s: change(s["properties"][prop]))
		)


# Twilio SIDs: the per-resource patterns of Twilio's OpenAPI (twilio-oai) ---------------------

# The twilio SDK carries no parameter patterns; twilio-oai (the OpenAPI the SDK is generated from)
# is published on GitHub only. twilio_oai_sids.json is its extract: every parameter and form field
# with a pattern, by (method, URL shape), for the three products the tools use (source and commit
# inside the file).
_TWILIO_SIDS = Path(__file__).with_name("twilio_oai_sids.json")


@cache
def twilio_sid_patterns() -> dict[str, Any]:
	loaded: dict[str, Any] = json.loads(_TWILIO_SIDS.read_text())
	return loaded


def twilio_sid_errors(integration: Integration) -> list[str]:
	"""Where a Twilio input that fills a SID parameter lacks its OpenAPI pattern and length, or
	an input named like a SID fills no parameter the OpenAPI gives a pattern."""
	ref = twilio_sid_patterns()
	errors = []
	for tool in http_tools(integration):
		url = urls(integration, tool)[0]
		patterns = ref["patterns"].get(f"{tool.method} {shape(url)}", {})
		props = tool.input_schema.get("properties", {})
		sources = {
			name: name for name in input_path_names(url) if name is not None and name in props
		}
		for name, template in {**tool.query_params, **(tool.body or {})}.items():
			source = re.match(r"\{\{ input\.(\w+)", str(template))
			if source and source.group(1) in props:
				sources[name] = source.group(1)
		for name, source in sources.items():
			ours = props[source]
			if name not in patterns:
				if source.endswith("Sid"):
					errors.append(f"{tool.handle}.{source}: no SID pattern in Twilio's OpenAPI")
				continue
			wanted = (patterns[name], ref["minLength"], ref["maxLength"])
			found = (ours.get("pattern"), ours.get("minLength"), ours.get("maxLength"))
			if found != wanted:
				errors.append(f"{tool.handle}.{source}: {wanted} (ours {found})")
		errors += [
			f"{tool.handle}.{name}: a SID input sent nowhere"
			for name in props
			if name.endswith("Sid") and name not in sources.values()
		]
	return errors


def test_twilio_sid_inputs_carry_the_openapi_patterns() -> None:
	"""Every SID input has its resource's pattern (prefix, upper- or lower-case hex) and length."""
	ref = twilio_sid_patterns()
	message = ref["patterns"]["GET https://api.twilio.com/2010-04-01/Accounts/{}/Messages/{}.json"]
	assert message == {"AccountSid": "^AC[0-9a-fA-F]{32}$", "Sid": "^(SM|MM)[0-9a-fA-F]{32}$"}
	assert twilio_sid_errors(twilio.INTEGRATION) == []
	sid_inputs = [
		name
		for tool in http_tools(twilio.INTEGRATION)
		for name in tool.input_schema.get("properties", {})
		if name.endswith("Sid")
	]
	assert len(sid_inputs) >= 9


@pytest.mark.parametrize(
	("handle", "prop", "value", "valid"),
	[
		("getMessage", "Sid", "SM" + "0123456789ABCDEF" * 2, True),
		("getMessage", "Sid", "MM" + "0123456789abcdef" * 2, True),
		("getMessage", "Sid", "CA" + "0123456789abcdef" * 2, False),
		("getMessage", "Sid", "SM" + "0123456789abcdef" * 2 + "0", False),
		("getCall", "Sid", "CA" + "ABCDEF0123456789" * 2, True),
		("getCall", "Sid", "SM" + "0123456789abcdef" * 2, False),
		("listRecordings", "CallSid", "CA" + "0123456789abcdef" * 2, True),
		("listRecordings", "CallSid", "RE" + "0123456789abcdef" * 2, False),
		("listMessageMedia", "MessageSid", "MM" + "0123456789abcdef" * 2, True),
		("sendMessage", "MessagingServiceSid", "MG" + "0123456789abcdef" * 2, True),
		("sendMessage", "MessagingServiceSid", "SM" + "0123456789abcdef" * 2, False),
		("sendMessage", "ContentSid", "HX" + "0123456789abcdef" * 2, True),
		("checkVerification", "VerificationSid", "VE" + "0123456789abcdef" * 2, True),
		("checkVerification", "VerificationSid", "VA" + "0123456789abcdef" * 2, False),
	],
)
def test_twilio_sid_inputs_accept_their_resource_only(
	handle: str, prop: str, value: str, valid: bool
) -> None:
	"""A SID of the resource (either hex case) passes validation; another resource's SID fails."""
	from openmolt_core._support.jsonschema import JsonSchemaValidator, ValidationError

	tool = next(t for t in twilio.INTEGRATION.tools if t.handle == handle)
	validator = JsonSchemaValidator(tool.input_schema["properties"][prop])
	if valid:
		validator.validate(value)
	else:
		with pytest.raises(ValidationError):
			validator.validate(value)


_TWILIO_SID_BREAKS: dict[str, tuple[str, str, Callable[[dict[str, Any]], None]]] = {
	"the old shared pattern": (
		"getMessage",
		"Sid",
		lambda p: p.update(pattern="^[A-Z]{2}[0-9a-f]{32}$"),
	),
	"a call SID without its pattern": ("getCall", "Sid", lambda p: p.pop("pattern")),
	"a message SID with the call prefix": (
		"listMessageMedia",
		"MessageSid",
		lambda p: p.update(pattern="^CA[0-9a-fA-F]{32}$"),
	),
	"CallSid without its length": ("listRecordings", "CallSid", lambda p: p.pop("maxLength")),
	"MessagingServiceSid lower-case hex only": (
		"sendMessage",
		"MessagingServiceSid",
		lambda p: p.update(pattern="^MG[0-9a-f]{32}$"),
	),
	"VerificationSid as any string": (
		"checkVerification",
		"VerificationSid",
		lambda p: p.pop("pattern"),
	),
}


@pytest.mark.parametrize("case", sorted(_TWILIO_SID_BREAKS))
def test_a_twilio_sid_input_without_its_pattern_fails_the_check(case: str) -> None:
	"""Loosening or changing one SID pattern, or dropping its length, makes the check fail."""
	handle, prop, change = _TWILIO_SID_BREAKS[case]
	broken = with_input_schema(twilio.INTEGRATION, handle, lambda s: change(s["properties"][prop]))
	assert twilio_sid_errors(broken)


def test_a_new_sid_input_without_a_reference_pattern_fails_the_check() -> None:
	"""A SID input the OpenAPI gives no pattern for (or that is sent nowhere) is reported."""
	broken = with_input_schema(
		twilio.INTEGRATION,
		"getMessage",
		lambda s: s["properties"].update(ParentSid={"type": "string"}),
	)
	assert twilio_sid_errors(broken) == ["getMessage.ParentSid: a SID input sent nowhere"]


# X: the xdk PyPI package, X's SDK generated from its OpenAPI ---------------------------------


def _xdk_schema_fields(schemas: str, name: str) -> set[str]:
	block = re.search(rf"\nclass {name}\(BaseModel\):\n(.*?)(?=\nclass |\Z)", schemas, re.S)
	if block is None and re.search(rf"\n{name} = Dict\[", schemas):
		return set()  # an untyped body (Dict[str, Any]): no field names to compare
	assert block, name
	fields = set()
	for match in re.finditer(r"\n    (\w+): [^\n]*(?:\n        [^\n]*)*", block.group(1)):
		alias = re.search(r'alias="([^"]+)"', match.group(0))
		fields.add(alias.group(1) if alias else match.group(1))
	return fields


def x_operations() -> dict[tuple[str, str], list[dict[str, Any]]]:
	"""Operations of the installed xdk: each client method's path, verb, query and body names."""
	root = _site("xdk", "xdk")
	schemas = (root / "schemas.py").read_text()
	ops: dict[tuple[str, str], list[dict[str, Any]]] = {}
	for client in root.glob("*/client.py"):
		models = (client.parent / "models.py").read_text()
		for fn in re.split(r"\n    def ", client.read_text())[1:]:
			# black wraps long URLs: url = (\n self.client.base_url\n + "/2/...")
			path = re.search(r'url = \(?\s*self\.client\.base_url\s*\+\s*"([^"]+)"', fn)
			verb = re.search(r'method="(\w+)", url=full_url', fn)
			if not path or not verb:
				continue
			signature = fn[: fn.index(")")] if ")" in fn else ""
			query = set(re.findall(r'(?:page_)?params\["([^"]+)"\]', fn))
			query |= set(re.findall(r'pagination_param_name = "(\w+)"', fn))
			query |= set(re.findall(r"\b(\w+_token): Optional", fn.split('"""')[0]))
			body: set[str] = set()
			model = re.search(r"body: (?:Optional\[)?(\w+)", signature)
			if model:
				alias = re.search(rf"\n{model.group(1)} = schemas\.(\w+)", models)
				name = alias.group(1) if alias else model.group(1)
				# a request model is in schemas.py, or in the client's models.py as a RootModel
				# of one (class Name(RootModel[schemas.Other]))
				root = re.search(rf"\nclass {name}\(\s*RootModel\[schemas\.(\w+)\]", models)
				body = _xdk_schema_fields(schemas, root.group(1) if root else name)
			ops.setdefault(
				(
					verb.group(1).upper(),
					"https://api.x.com" + re.sub(r"\{[^}]+\}", "{}", path.group(1)),
				),
				[],
			).append(
				{"path": re.findall(r"\{([^}]+)\}", path.group(1)), "query": query, "body": body}
			)
	return ops


def test_x_tools_match_the_xdk_sdk() -> None:
	"""Each X tool is an operation of xdk (X API v2), with its query and body names."""
	ops = x_operations()
	assert len(ops) > 100
	# URLs black wrapped in parentheses are read too (they were skipped before)
	assert ("DELETE", "https://api.x.com/2/users/{}/following/{}") in ops
	assert ("POST", "https://api.x.com/2/dm_conversations/with/{}/messages") in ops
	assert check_operations(x.INTEGRATION, ops) == len(x.INTEGRATION.tools)
	assert x.INTEGRATION.api_setup.base_url == "https://api.x.com"
	assert not any("1.1" in t.endpoint for t in x.INTEGRATION.tools)


def _literals(node: ast.AST | None) -> list[str]:
	"""The string values of the ``Literal[...]`` in a type annotation."""
	values: list[str] = []
	for sub in ast.walk(node) if node is not None else ():
		if isinstance(sub, ast.Subscript) and ast.unparse(sub.value) == "Literal":
			values += [
				c.value
				for c in ast.walk(sub.slice)
				if isinstance(c, ast.Constant) and isinstance(c.value, str)
			]
	return values


@cache
def x_enums() -> dict[tuple[str, str], dict[str, list[str]]]:
	"""(method, URL shape) to the values xdk allows per query and body name (its Literal types)."""
	root = _site("xdk", "xdk")
	models: dict[str, dict[str, list[str]]] = {}
	for cls in ast.parse((root / "schemas.py").read_text()).body:
		if isinstance(cls, ast.ClassDef):
			models[cls.name] = {
				field.target.id: _literals(field.annotation)
				for field in cls.body
				if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
			}
	out: dict[tuple[str, str], dict[str, list[str]]] = {}
	for client in root.glob("*/client.py"):
		aliases = dict(
			re.findall(r"\n(\w+) = schemas\.(\w+)", (client.parent / "models.py").read_text())
		)
		for fn in ast.walk(ast.parse(client.read_text())):
			if not isinstance(fn, ast.FunctionDef):
				continue
			src = ast.unparse(fn)
			path = re.search(r"url = self\.client\.base_url \+ ['\"]([^'\"]+)", src)
			verb = re.search(r"method=['\"](\w+)['\"], url=full_url", src)
			if not path or not verb:
				continue
			types = {a.arg: a.annotation for a in fn.args.args if a.annotation}
			enums: dict[str, list[str]] = {}
			for node in ast.walk(fn):
				if (
					isinstance(node, ast.Assign)
					and isinstance(node.targets[0], ast.Subscript)
					and ast.unparse(node.targets[0].value) in {"params", "page_params"}
					and isinstance(node.targets[0].slice, ast.Constant)
				):
					used = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)]
					source = next((n for n in used if n in types), None)
					if source:
						enums[str(node.targets[0].slice.value)] = _literals(types[source])
			body = ast.unparse(types["body"]) if "body" in types else ""
			model = re.sub(r"^Optional\[(\w+)\]$", r"\1", body)
			enums.update(models.get(aliases.get(model, model), {}))
			key = (
				verb.group(1).upper(),
				"https://api.x.com" + re.sub(r"\{[^}]+\}", "{}", path.group(1)),
			)
			out.setdefault(key, {}).update({k: v for k, v in enums.items() if v})
	return out


def _no_default(value: ast.expr | None) -> bool:
	"""Whether a pydantic field's value leaves it without a default: none at all, or a
	``Field(...)`` call with neither a positional default nor default/default_factory."""
	if value is None:
		return True
	return (
		isinstance(value, ast.Call)
		and ast.unparse(value.func) == "Field"
		and not value.args
		and not {k.arg for k in value.keywords} & {"default", "default_factory"}
	)


@cache
def x_required() -> dict[tuple[str, str], set[str]]:
	"""(method, URL shape) to the query and body names xdk requires: arguments without a default
	that fill a query parameter, and request-model fields that are neither Optional nor defaulted."""
	root = _site("xdk", "xdk")
	needed: dict[str, set[str]] = {}
	for cls in ast.parse((root / "schemas.py").read_text()).body:
		if isinstance(cls, ast.ClassDef):
			needed[cls.name] = {
				field.target.id
				for field in cls.body
				if isinstance(field, ast.AnnAssign)
				and isinstance(field.target, ast.Name)
				and _no_default(field.value)
				and not ast.unparse(field.annotation).startswith("Optional")
			}
	out: dict[tuple[str, str], set[str]] = {}
	for client in root.glob("*/client.py"):
		aliases = dict(
			re.findall(r"\n(\w+) = schemas\.(\w+)", (client.parent / "models.py").read_text())
		)
		for fn in ast.walk(ast.parse(client.read_text())):
			if not isinstance(fn, ast.FunctionDef):
				continue
			src = ast.unparse(fn)
			path = re.search(r"url = self\.client\.base_url \+ ['\"]([^'\"]+)", src)
			verb = re.search(r"method=['\"](\w+)['\"], url=full_url", src)
			if not path or not verb:
				continue
			args = fn.args.args[1:]
			no_default = {a.arg for a in args[: len(args) - len(fn.args.defaults)]}
			names: set[str] = set()
			for node in ast.walk(fn):
				if (
					isinstance(node, ast.Assign)
					and isinstance(node.targets[0], ast.Subscript)
					and ast.unparse(node.targets[0].value) in {"params", "page_params"}
					and isinstance(node.targets[0].slice, ast.Constant)
					and {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & no_default
				):
					names.add(str(node.targets[0].slice.value))
			body = next((a for a in args if a.arg == "body"), None)
			if body is not None and body.annotation is not None and "body" in no_default:
				model = ast.unparse(body.annotation)
				names |= needed.get(aliases.get(model, model), set())
			key = (
				verb.group(1).upper(),
				"https://api.x.com" + re.sub(r"\{[^}]+\}", "{}", path.group(1)),
			)
			out.setdefault(key, set()).update(names)
	return out


def x_required_errors(integration: Integration) -> list[str]:
	"""The names xdk requires that a tool leaves out or fills from an optional input."""
	required_by = x_required()
	errors = []
	for tool in http_tools(integration):
		# A multipart body's file parts (the media of an upload) are body fields too.
		sent = {**tool.query_params, **(tool.body or {}), **(tool.files or {})}
		required = set(tool.input_schema.get("required", []))
		for name in sorted(required_by.get((tool.method, shape(urls(integration, tool)[0])), ())):
			source = re.match(r"\{\{ input\.(\w+)", str(sent.get(name, "")))
			if name not in sent:
				errors.append(f"{tool.handle}: xdk requires {name}")
			elif source and source.group(1) not in required:
				errors.append(f"{tool.handle}: make {source.group(1)} required ({name})")
	return errors


def test_x_tools_send_what_xdk_requires() -> None:
	"""Every query parameter and body field xdk requires is sent from a required input."""
	required = x_required()
	assert required[("GET", "https://api.x.com/2/tweets/search/recent")] == {"query"}
	assert required[("POST", "https://api.x.com/2/users/{}/following")] == {"target_user_id"}
	assert x_required_errors(x.INTEGRATION) == []


@pytest.mark.parametrize(
	("handle", "field"),
	[
		("followUser", "target_user_id"),
		("likePost", "tweet_id"),
		("searchRecent", "query"),
		("repostPost", "tweet_id"),
	],
)
def test_an_x_tool_with_an_optional_required_field_fails_the_check(handle: str, field: str) -> None:
	"""Making the input optional that fills a field xdk requires fails the check."""
	broken = with_input_schema(
		x.INTEGRATION, handle, lambda s: s.update(required=[r for r in s["required"] if r != field])
	)
	assert x_required_errors(broken)


# Body fields xdk's request models leave optional that X's media upload documentation requires
# (https://docs.x.com/x-api/media/media-upload-initialize, .../media-upload): the tools keep them
# required.
X_DOCUMENTED_REQUIRED = {
	("uploadMedia", "media_category"),
	("initializeMediaUpload", "media_type"),
	("initializeMediaUpload", "total_bytes"),
	("initializeMediaUpload", "media_category"),
	("appendMediaUpload", "segment_index"),
}


def x_over_required_errors(integration: Integration) -> list[str]:
	"""The required inputs that fill a query or body name xdk leaves optional (unless listed).

	A DM needs text or attachments, neither alone: requiring one refuses messages X takes.
	"""
	required_by = x_required()
	errors = []
	for tool in http_tools(integration):
		known = required_by.get((tool.method, shape(urls(integration, tool)[0])), set())
		required = set(tool.input_schema.get("required", []))
		for name, value in {**tool.query_params, **(tool.body or {})}.items():
			source = re.match(r"\{\{ input\.(\w+)", str(value))
			if (
				source
				and source.group(1) in required
				and name not in known
				and (tool.handle, name) not in X_DOCUMENTED_REQUIRED
			):
				errors.append(f"{tool.handle}: xdk leaves {name} optional")
	return errors


def test_x_tools_require_only_what_xdk_or_the_docs_require() -> None:
	"""No X tool requires an input that fills a field xdk leaves optional, save the listed ones."""
	assert x_over_required_errors(x.INTEGRATION) == []
	dm = next(t for t in x.INTEGRATION.tools if t.handle == "sendDirectMessage")
	assert dm.input_schema["required"] == ["participant_id"]
	media_id = dm.input_schema["properties"]["attachments"]["items"]["properties"]["media_id"]
	assert media_id["pattern"] == "^[0-9]{1,19}$"


@pytest.mark.parametrize(
	("handle", "field"),
	[("sendDirectMessage", "text"), ("sendConversationMessage", "text"), ("getPost", "id")],
)
def test_an_x_tool_requiring_an_optional_field_fails_the_check(handle: str, field: str) -> None:
	"""Requiring the input of a field xdk leaves optional fails the check (a path name does not)."""
	broken = with_input_schema(
		x.INTEGRATION, handle, lambda s: s.update(required=sorted({*s["required"], field}))
	)
	assert bool(x_over_required_errors(broken)) is (field == "text")


def check_x_enums(integration: Integration) -> int:
	"""Assert every X input sent where xdk allows fixed values has an enum of those; return checks."""
	enums = x_enums()
	checked, errors = 0, []
	for tool in http_tools(integration):
		allowed = enums.get((tool.method, shape(urls(integration, tool)[0])), {})
		props = tool.input_schema.get("properties", {})
		for name, template in {**tool.query_params, **(tool.body or {})}.items():
			source = re.match(r"\{\{ input\.(\w+)", str(template))
			if name not in allowed or not source or source.group(1) not in props:
				continue
			ours = props[source.group(1)]
			values = (ours.get("items") or {}).get("enum") if "items" in ours else ours.get("enum")
			extra = set(values or ()) - set(allowed[name])
			if not values:
				errors.append(f"{tool.handle}.{name}: enum {allowed[name]} (ours none)")
			elif extra:
				errors.append(f"{tool.handle}.{name}: {sorted(extra)} are not xdk's values")
			checked += 1
	assert not errors, errors
	return checked


def test_x_inputs_carry_the_xdk_enums() -> None:
	"""Each X input sent where X's OpenAPI fixes the values has an enum of those values."""
	enums = x_enums()
	search = enums[("GET", "https://api.x.com/2/tweets/search/recent")]
	assert search["sort_order"] == ["recency", "relevancy"]
	assert "created_at" in search["post.fields"] and "description" in search["user.fields"]
	assert check_x_enums(x.INTEGRATION) > 20


_X_LOOSER: dict[str, tuple[str, str, Callable[[dict[str, Any]], None]]] = {
	"post_fields without its enum": ("getPost", "post_fields", lambda p: p["items"].pop("enum")),
	"post_fields with an expansion": (
		"searchRecent",
		"post_fields",
		lambda p: p["items"]["enum"].append("author_id"),
	),
	"user_fields without its enum": ("getMe", "user_fields", lambda p: p["items"].pop("enum")),
	"sort_order without its enum": ("searchRecent", "sort_order", lambda p: p.pop("enum")),
	"media_category amplify_video in a simple upload": (
		"uploadMedia",
		"media_category",
		lambda p: p["enum"].append("amplify_video"),
	),
	"event_types without its enum": (
		"listDirectMessages",
		"event_types",
		lambda p: p["items"].pop("enum"),
	),
	"dm_event_fields with a post field": (
		"getDirectMessagesWith",
		"dm_event_fields",
		lambda p: p["items"]["enum"].append("public_metrics"),
	),
	"DM expansions with a post expansion": (
		"listDirectMessages",
		"expansions",
		lambda p: p["items"]["enum"].append("author_id"),
	),
	"reply_settings with another value": (
		"createPost",
		"reply_settings",
		lambda p: p["enum"].append("everyone"),
	),
}


@pytest.mark.parametrize("case", sorted(_X_LOOSER))
def test_an_x_input_without_its_enum_fails_the_check(case: str) -> None:
	"""Dropping an enum X's OpenAPI sets, or adding a value it lacks, makes the check fail."""
	handle, prop, change = _X_LOOSER[case]
	with pytest.raises(AssertionError):
		check_x_enums(
			with_input_schema(x.INTEGRATION, handle, lambda s: change(s["properties"][prop]))
		)


# Microsoft Graph: the msgraph-sdk PyPI package ------------------------------------------------

_GRAPH_USER = "msgraph/generated/users/item"


def _graph_model_fields(directory: Path, name: str) -> set[str]:
	"""Wire names of a msgraph-sdk model and of its base classes."""
	snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
	models = _site("msgraph-sdk", "msgraph/generated/models")
	path = directory / f"{snake}.py"
	if not path.is_file():
		path = models / f"{snake}.py"
	src = path.read_text()
	fields = set(re.findall(r'"(@?[\w.]+)": lambda', src))
	base = re.search(rf"\nclass {name}\((\w+)", src)
	if base and base.group(1) not in {"AdditionalDataHolder", "BackedModel", "Parsable"}:
		fields |= _graph_model_fields(models, base.group(1))
	return fields


def graph_operations() -> dict[tuple[str, str], list[dict[str, Any]]]:
	"""Request builders of the installed msgraph-sdk under /users/{id}: URL template and verbs."""
	root = _site("msgraph-sdk", _GRAPH_USER)
	ops: dict[tuple[str, str], list[dict[str, Any]]] = {}
	subs = ("messages", "mail_folders", "send_mail", "events", "calendar", "calendar_view")
	for sub in (*subs, "contacts"):
		for builder in (root / sub).rglob("*_request_builder.py"):
			src = builder.read_text()
			template = re.search(r'super\(\).__init__\(request_adapter, "([^"]+)"', src)
			assert template, builder
			url = template.group(1)
			path = re.split(r"\{\?|\?", url, maxsplit=1)[0].replace("{+baseurl}", "")
			# Required query parameters are written ?name={name}, optional ones {?a,b} or {&a,b}.
			query = set(re.findall(r"[?&](\w+)=\{", url)) | {
				n.replace("%24", "$").rstrip("*")
				for group in re.findall(r"\{[?&]([^}]*)\}", url)
				for n in group.split(",")
			}
			for verb, model in re.findall(
				r"def to_(get|post|patch|delete|put)_request_information\(self,(?:body: (\w+))?",
				src,
			):
				body = _graph_model_fields(builder.parent, model) if model[:1].isupper() else set()
				nested = {}
				if "Message" in body and model.endswith("RequestBody"):
					nested["message"] = _graph_model_fields(builder.parent, "Message")
				if model in {"Message", "Event"}:
					nested["body"] = _graph_model_fields(builder.parent, "ItemBody")
					nested["location"] = _graph_model_fields(builder.parent, "Location")
				if model == "Attachment":
					body |= _graph_model_fields(builder.parent, "FileAttachment") | {"@odata.type"}
				ops.setdefault(
					(
						verb.upper(),
						"https://graph.microsoft.com/v1.0" + re.sub(r"\{[^}]+\}", "{}", path),
					),
					[],
				).append(
					{
						"path": re.findall(r"\{([^}]+)\}", path),
						"query": query,
						"body": body,
						"nested": nested,
						"casefold": model.endswith("RequestBody"),
					}
				)
	return ops


def _as_user(integration: Integration) -> Integration:
	"""The integration with /me written as msgraph-sdk's /users/{user-id}."""
	return integration.model_copy(
		update={
			"tools": [
				t.model_copy(
					update={"endpoint": t.endpoint.replace("/me/", "/users/{{ config.user }}/", 1)}
				)
				for t in integration.tools
			]
		}
	)


def _graph_names(ours: list[str | None], theirs: list[str]) -> bool:
	"""Path inputs are named as msgraph-sdk's URL template names them ({message%2Did} is
	``message-id``, the input ``message_id``); config values (the user) are not compared."""
	return len(ours) == len(theirs) and all(
		o is None or o == input_name(t.replace("%2D", "-"))
		for o, t in zip(ours, theirs, strict=True)
	)


# Outlook tools whose last path segment is an input naming a Graph action: checked per value.
_PER_ACTION = {"respondToEvent"}


def test_outlook_tools_match_msgraph_sdk_request_builders() -> None:
	"""Each Outlook tool is a msgraph-sdk request builder: path, method, query and body names."""
	base = "https://graph.microsoft.com/v1.0"
	assert outlook.INTEGRATION.api_setup.base_url == base
	assert all(t.endpoint.startswith("/me/") for t in outlook.INTEGRATION.tools)
	ops = graph_operations()
	assert len(ops) > 50
	checked = check_operations(
		_as_user(outlook.INTEGRATION), ops, names_match=_graph_names, skip=_PER_ACTION
	)
	# replyToMessage is reply and replyAll; createMailFolder a top-level or a child folder;
	# respondToEvent is checked per action below.
	assert checked == len(outlook.INTEGRATION.tools) - 1 + 2


def test_outlook_event_answers_are_msgraph_event_actions() -> None:
	"""respondToEvent's path ends with its response input: each value it allows is an event
	action of msgraph-sdk (accept, tentativelyAccept, decline), with the body it sends."""
	tool = next(t for t in outlook.INTEGRATION.tools if t.handle == "respondToEvent")
	values = tool.input_schema["properties"]["response"]["enum"]
	assert tool.endpoint.endswith("/{{ input.response }}")
	ops = graph_operations()
	for value in values:
		fixed = tool.model_copy(
			update={"endpoint": tool.endpoint.replace("{{ input.response }}", value)}
		)
		one = outlook.INTEGRATION.model_copy(update={"tools": [fixed]})
		assert check_operations(_as_user(one), ops, names_match=_graph_names) == 1, value
	assert set(values) == {"accept", "tentativelyAccept", "decline"}


def test_outlook_schedule_times_are_msgraph_date_time_time_zones() -> None:
	"""getSchedule's startTime and endTime are msgraph-sdk's DateTimeTimeZone objects."""
	tool = next(t for t in outlook.INTEGRATION.tools if t.handle == "getSchedule")
	props = tool.input_schema["properties"]
	for name in ("startTime", "endTime"):
		assert check_graph_object(f"getSchedule.{name}", props[name], "DateTimeTimeZone") == 1
		assert set(props[name]["required"]) == {"dateTime", "timeZone"}


def _graph_enum(model: str, attribute: str) -> set[str]:
	"""The values of the msgraph-sdk enum a model attribute is typed with, lower-cased."""
	import enum
	import importlib

	def load(name: str) -> Any:
		snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
		return getattr(importlib.import_module(f"msgraph.generated.models.{snake}"), name)

	cls = load(model)
	for klass in cls.__mro__:
		hint = getattr(klass, "__annotations__", {}).get(attribute)
		if hint:
			kind = load(re.fullmatch(r"Optional\[(\w+)\]", hint).group(1))
			assert issubclass(kind, enum.Enum), (model, attribute)
			return {m.value.lower() for m in kind}
	raise AssertionError(f"{model}.{attribute} is not in msgraph-sdk")


# Input property (a path through the input schema) -> the msgraph-sdk model attribute it fills.
_GRAPH_ENUM_INPUTS = {
	"importance": ("Message", "importance"),
	"contentType": ("ItemBody", "content_type"),
	"flag.flagStatus": ("FollowupFlag", "flag_status"),
	"showAs": ("Event", "show_as"),
	"attendees[].type": ("Attendee", "type"),
}


def _at(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
	for part in path.split("."):
		many = part.endswith("[]")
		schema = (schema.get("properties") or {}).get(part.removesuffix("[]"))
		if schema is None:
			return None
		if many:
			schema = schema["items"]
	return schema


def test_outlook_inputs_carry_msgraph_enums() -> None:
	"""Each input filling an enum-typed Graph property lists values of msgraph-sdk's enum."""
	checked = 0
	for tool in http_tools(outlook.INTEGRATION):
		for path, (model, attribute) in _GRAPH_ENUM_INPUTS.items():
			prop = _at(tool.input_schema, path)
			body = tool.body if isinstance(tool.body, dict) else {}
			if prop is None or (
				path == "contentType" and "body" not in {**body, **(body.get("message") or {})}
			):
				continue  # addAttachment's contentType is a MIME type, not an itemBody's
			values = _graph_enum(model, attribute)
			assert "enum" in prop, (
				f"{tool.handle}.{path}: msgraph-sdk's {model}.{attribute} is an enum"
			)
			assert {v.lower() for v in prop["enum"]} <= values, (tool.handle, path, values)
			checked += 1
	assert checked >= 10


def test_outlook_enum_inputs_cover_every_enum_property_sent() -> None:
	"""Every top-level Message or Event property a tool sends that msgraph-sdk types as an
	enum is in the table above, so a new one cannot skip the check."""
	import enum
	import importlib

	for tool in http_tools(outlook.INTEGRATION):
		body = tool.body if isinstance(tool.body, dict) else {}
		sent = set(body) | set(body.get("message") or {})
		for model in ("Message", "Event"):
			module = importlib.import_module(f"msgraph.generated.models.{model.lower()}")
			for key in sent:
				snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
				hint = getattr(module, model).__annotations__.get(snake, "")
				name = re.fullmatch(r"Optional\[(\w+)\]", hint)
				kind = getattr(module, name.group(1), None) if name else None
				if isinstance(kind, type) and issubclass(kind, enum.Enum):
					assert key in _GRAPH_ENUM_INPUTS, f"{tool.handle}: {key} is a Graph enum"


def _graph_attribute(model: str, wire: str) -> str | None:
	"""The msgraph-sdk model a model attribute holds (a list's item model), or None for scalars
	and for names the model does not have (check_operations checks those against the request
	builders)."""
	import importlib

	snake = re.sub(r"(?<!^)(?=[A-Z])", "_", model).lower()
	cls = getattr(importlib.import_module(f"msgraph.generated.models.{snake}"), model)
	attribute = re.sub(r"(?<!^)(?=[A-Z])", "_", wire).lower()
	for klass in cls.__mro__:
		hint = getattr(klass, "__annotations__", {}).get(attribute)
		if hint:
			inner = re.fullmatch(r"Optional\[(?:list\[)?(\w+)\]?\]", hint)
			name = inner.group(1) if inner else ""
			return name if name[:1].isupper() and name not in {"UUID"} else None
	return None  # not a property of the model (an action's own parameter: checked elsewhere)


def check_graph_object(where: str, schema: dict[str, Any], model: str) -> int:
	"""An input describing a Graph object has only that msgraph-sdk model's wire names, all the
	way down; return the objects checked."""
	models = _site("msgraph-sdk", "msgraph/generated/models")
	if schema.get("type") == "array":
		schema = schema["items"]
	props = schema.get("properties")
	if not props:
		return 0
	fields = _graph_model_fields(models, model)
	assert set(props) <= fields, f"{where}: {set(props) - fields} not in msgraph-sdk's {model}"
	checked = 1
	for name, prop in props.items():
		inner = _graph_attribute(model, name)
		if inner:
			checked += check_graph_object(f"{where}.{name}", prop, inner)
	return checked


# The Graph model each Outlook path writes (the request builders' body type).
_OUTLOOK_BODY_MODELS = {
	"/me/contacts": "Contact",
	"/me/events": "Event",
	"/me/messages": "Message",
	"/me/sendMail": "Message",
	"/me/mailFolders": "MailFolder",
}


def test_outlook_object_inputs_are_msgraph_models() -> None:
	"""Every object input a tool sends as a Graph property (recipients, attendees, start, a
	contact's emailAddresses and addresses...) has the field names of msgraph-sdk's model."""
	checked = 0
	for tool in http_tools(outlook.INTEGRATION):
		if not isinstance(tool.body, dict) or tool.endpoint.endswith("/attachments"):
			continue
		model = next(
			(m for p, m in _OUTLOOK_BODY_MODELS.items() if tool.endpoint.startswith(p)), None
		)
		if model is None:
			continue
		body = tool.body.get("message", tool.body) if tool.handle == "sendMail" else tool.body
		props = tool.input_schema["properties"]
		for key, value in body.items():
			match = (
				re.fullmatch(r"\{\{ input\.(\w+) \}\}", value) if isinstance(value, str) else None
			)
			if not match or match.group(1) not in props:
				continue
			inner = _graph_attribute(model, key)
			if inner:
				checked += check_graph_object(f"{tool.handle}.{key}", props[match.group(1)], inner)
	assert checked >= 10, checked


def test_an_outlook_object_input_with_a_foreign_field_fails_the_check() -> None:
	"""A contact address with a field PhysicalAddress does not have fails the model check."""
	schema = {"type": "object", "properties": {"street": {}, "county": {}}}
	with pytest.raises(AssertionError, match="county"):
		check_graph_object("t", schema, "PhysicalAddress")


def test_outlook_calendar_view_times_are_date_times() -> None:
	"""calendarView's startDateTime/endDateTime are ISO 8601 times (msgraph-sdk's docstring):
	date-time inputs, forwarded under Graph's names."""
	src = _site(
		"msgraph-sdk", f"{_GRAPH_USER}/calendar_view/calendar_view_request_builder.py"
	).read_text()
	tool = next(t for t in outlook.INTEGRATION.tools if t.handle == "listCalendarView")
	for name in ("startDateTime", "endDateTime"):
		assert f'return "{name}"' in src
		assert tool.input_schema["properties"][name]["format"] == "date-time"
		assert tool.query_params[name] == f"{{{{ input.{name} }}}}"
	assert re.search(r"start date and time of the time range, represented in ISO 8601", src)


# Outlook inputs that fill no Graph parameter of their own name, and why.
_OUTLOOK_CONVENIENCE = {
	"bodyAsHtml": "chooses the Prefer: outlook.body-content-type header",
	"timeZone": "the Prefer: outlook.timezone header",
	"expandAttachments": "composed into $expand=attachments($select=...)",
	"replyAll": "chooses the reply or replyAll action",
	"response": "chooses the accept, tentativelyAccept or decline action",
	"file": "a stored file sent as contentBytes",
}


def test_every_outlook_input_is_a_graph_name_or_a_listed_convenience() -> None:
	"""Each input is a path parameter, a query or body name it is sent under (input_name of the
	Graph name), or a convenience listed with what it does."""
	for tool in http_tools(outlook.INTEGRATION):
		sent = {
			input_name(k)
			for part in (tool.query_params, tool.body, tool.headers)
			for k in _keys(part)
		}
		for name in tool.input_schema.get("properties", {}):
			in_path = re.search(rf"input\.{name}\b", tool.endpoint) is not None
			assert in_path or name in sent or name in _OUTLOOK_CONVENIENCE, (tool.handle, name)


def _keys(part: Any) -> set[str]:
	if isinstance(part, dict):
		return set(part) | {k for v in part.values() for k in _keys(v)}
	return set()


def test_an_outlook_path_input_with_another_name_fails_the_check() -> None:
	"""The path inputs are compared by name: {{ input.id }} for a message-id fails."""
	tools = [
		t.model_copy(update={"endpoint": t.endpoint.replace("input.message_id", "input.id")})
		for t in outlook.INTEGRATION.tools
	]
	broken = outlook.INTEGRATION.model_copy(update={"tools": tools})
	with pytest.raises(AssertionError, match="path parameters"):
		check_operations(_as_user(broken), graph_operations(), names_match=_graph_names)


# Slack ----------------------------------------------------------------------------------------


def _slack_methods() -> dict[str, dict[str, Any]]:
	path = Path(str(metadata.distribution("slack-sdk").locate_file("slack_sdk/web/client.py")))
	tree = ast.parse(path.read_text())
	client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "WebClient")
	methods: dict[str, dict[str, Any]] = {}
	for fn in client.body:
		if not isinstance(fn, ast.FunctionDef):
			continue
		params = {a.arg for a in fn.args.kwonlyargs}
		# keyword-only arguments without a default are the method's required arguments
		required = {
			a.arg
			for a, default in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
			if default is None
		}
		for node in ast.walk(fn):
			if (
				isinstance(node, ast.Call)
				and isinstance(node.func, ast.Attribute)
				and node.func.attr == "update"
			):
				for arg in node.args:
					if isinstance(arg, ast.Dict):
						params |= {k.value for k in arg.keys if isinstance(k, ast.Constant)}
			if (
				isinstance(node, ast.Call)
				and isinstance(node.func, ast.Attribute)
				and node.func.attr == "api_call"
			):
				name = node.args[0]
				if not isinstance(name, ast.Constant):
					continue
				kw = {k.arg: k.value for k in node.keywords}
				verb = kw.get("http_verb")
				methods[name.value] = {
					"verb": verb.value if isinstance(verb, ast.Constant) else "POST",
					"json": "json" in kw,
					"params": params,
					"required": required,
				}
	return methods


def test_slack_tools_are_slack_sdk_web_api_methods() -> None:
	"""Each Slack tool calls a WebClient method with its HTTP verb, encoding and argument names."""
	methods = _slack_methods()
	assert len(methods) > 300
	assert "files.getUploadURLExternal" in methods and "files.completeUploadExternal" in methods
	checked = 0
	for tool in slack.INTEGRATION.tools:
		if tool.handle == "uploadFileBytes":
			continue
		name = tool.endpoint.lstrip("/")
		assert name != "files.upload", "files.upload is retired"
		assert name in methods, f"{tool.handle}: {name} is not a Slack Web API method"
		spec = methods[name]
		assert tool.method == spec["verb"], (
			f"{tool.handle}: slack-sdk sends {name} as {spec['verb']}"
		)
		if tool.method == "GET":
			names = set(tool.query_params)
		else:
			fmt = request_format(slack.INTEGRATION, tool)
			assert fmt == ("json" if spec["json"] else "form-data"), f"{tool.handle}: {fmt}"
			names = set(tool.body)
		assert names <= spec["params"], f"{tool.handle}: {names - spec['params']}"
		assert slack_required_errors(tool, spec) == []
		checked += 1
	assert checked == len(slack.INTEGRATION.tools) - 1
	upload = next(t for t in slack.INTEGRATION.tools if t.handle == "uploadFileBytes")
	assert (upload.method, upload.base_url, upload.request_format) == (
		"POST",
		"{{ input.upload_url }}",
		"binary",
	)
	client = Path(
		str(metadata.distribution("slack-sdk").locate_file("slack_sdk/web/client.py"))
	).read_text()
	assert 'url=f["upload_url"]' in client  # slack-sdk also POSTs the raw bytes to upload_url


def slack_required_errors(tool: HttpTool, spec: dict[str, Any]) -> list[str]:
	"""The WebClient method's required arguments that the tool may leave out."""
	sent = tool.query_params if tool.method == "GET" else (tool.body or {})
	required = set(tool.input_schema.get("required", []))
	errors = []
	for name in sorted(spec["required"]):
		source = re.match(r"\{\{ input\.(\w+)", str(sent.get(name, "")))
		if name not in sent:
			errors.append(f"{tool.handle}: slack-sdk requires {name}")
		elif source and source.group(1) not in required:
			errors.append(f"{tool.handle}: make {source.group(1)} required ({name})")
	return errors


_SLACK_NEW = {
	"createChannel": ("conversations.create", {"name", "is_private", "team_id"}),
	"renameChannel": ("conversations.rename", {"channel", "name"}),
	"archiveChannel": ("conversations.archive", {"channel"}),
	"inviteToChannel": ("conversations.invite", {"channel", "users", "force"}),
	"removeFromChannel": ("conversations.kick", {"channel", "user"}),
	"setChannelTopic": ("conversations.setTopic", {"channel", "topic"}),
	"setChannelPurpose": ("conversations.setPurpose", {"channel", "purpose"}),
	"searchMessages": ("search.messages", None),
	"getPermalink": ("chat.getPermalink", {"channel", "message_ts"}),
	"joinChannel": ("conversations.join", {"channel"}),
	"deleteScheduledMessage": ("chat.deleteScheduledMessage", {"channel", "scheduled_message_id"}),
	"listChannelMembers": ("conversations.members", {"channel", "cursor", "limit"}),
}


def test_slack_channel_search_and_permalink_tools_are_the_sdk_methods() -> None:
	"""The channel management, search and permalink tools call the methods slack-sdk names,
	sending every argument it requires from a required input."""
	methods = _slack_methods()
	assert methods["search.messages"]["verb"] == "GET"
	assert methods["conversations.invite"]["required"] == {"channel", "users"}
	tools = {t.handle: t for t in slack.INTEGRATION.tools}
	for handle, (name, sent) in _SLACK_NEW.items():
		tool = tools[handle]
		assert tool.endpoint == f"/{name}", handle
		assert slack_required_errors(tool, methods[name]) == [], handle
		if sent is not None:
			assert set(tool.body or tool.query_params) == sent, handle
	search = tools["searchMessages"].input_schema["properties"]
	assert search["sort"]["enum"] == ["score", "timestamp"]
	assert search["sort_dir"]["enum"] == ["asc", "desc"]
	assert search["count"]["maximum"] == 100 and search["page"]["maximum"] == 100


@pytest.mark.parametrize(
	("handle", "field"),
	[
		("renameChannel", "name"),
		("inviteToChannel", "users"),
		("removeFromChannel", "user"),
		("setChannelTopic", "topic"),
		("searchMessages", "query"),
		("getPermalink", "message_ts"),
		("postMessage", "channel"),
	],
)
def test_a_slack_tool_with_an_optional_required_argument_fails_the_check(
	handle: str, field: str
) -> None:
	"""Making an input optional that fills an argument slack-sdk requires fails the check."""
	broken = with_input_schema(
		slack.INTEGRATION,
		handle,
		lambda s: s.update(required=[r for r in s["required"] if r != field]),
	)
	tool = next(t for t in broken.tools if t.handle == handle)
	assert slack_required_errors(tool, _slack_methods()[tool.endpoint.lstrip("/")])


def test_slack_scopes_and_errors_follow_slack_sdk() -> None:
	"""Scopes are comma-joined in the authorize URL and ok=false is an error, as in slack-sdk."""
	sdk = Path(str(metadata.distribution("slack-sdk").locate_file("slack_sdk")))
	generator = (sdk / "oauth/authorize_url_generator/__init__.py").read_text()
	assert '",".join(self.scopes)' in generator
	response = (sdk / "web/slack_response.py").read_text()
	assert 'self.data.get("ok", False)' in response  # validate() raises SlackApiError otherwise
	oauth = slack.INTEGRATION.credential("oauth2")
	assert oauth is not None and oauth.scope_separator == ","
	(check,) = slack.INTEGRATION.response_checks
	assert check({"ok": True, "channel": "C1"}) is None
	failed = {"ok": False, "error": "invalid_blocks", "response_metadata": {"messages": ["m"]}}
	assert check(failed) == "invalid_blocks; m"


# The checks fail on a wrong request -------------------------------------------------------------


def _check(name: str, integration: Integration) -> int:
	if name == "Discord":
		return check_discord(integration)
	if name == "WhatsApp":
		return check_whatsapp(integration)
	if name == "Twilio":
		return check_operations(integration, twilio_operations())
	if name == "X":
		return check_operations(integration, x_operations())
	return check_operations(
		_as_user(integration), graph_operations(), names_match=_graph_names, skip=_PER_ACTION
	)


_BREAKS = {
	"method": lambda t: {"method": "PUT" if t.method != "PUT" else "PATCH"},
	"path": lambda t: {"endpoint": t.endpoint + "/nonexistent"},
	"query": lambda t: {"query_params": {**t.query_params, "nonexistentParam": "1"}},
	"body": lambda t: {"body": {**(t.body or {}), "nonexistentField": "1"}, "method": t.method},
}


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize(
	("integration", "handle"),
	[
		(discord.INTEGRATION, "sendMessage"),
		(whatsapp.INTEGRATION, "sendText"),
		(twilio.INTEGRATION, "sendMessage"),
		(x.INTEGRATION, "createPost"),
		(x.INTEGRATION, "sendDirectMessage"),
		(x.INTEGRATION, "followUser"),
		(outlook.INTEGRATION, "createDraft"),
	],
	ids=["discord", "whatsapp", "twilio", "x", "x-dm", "x-follow", "outlook"],
)
def test_a_wrong_method_path_or_parameter_name_fails_the_check(
	integration: Integration, handle: str, broken: str
) -> None:
	"""Changing one tool's method, path, a query name or a body name makes its reference check fail."""
	with pytest.raises(AssertionError):
		_check(integration.name, with_tool(integration, handle, _BREAKS[broken]))
	assert _check(integration.name, integration) > 0


# The OAuth scopes each vendor documents for the new tools, which the integration's OAuth2
# credential must request (Slack: https://docs.slack.dev/reference/methods/<method> "Required
# scopes"; X: https://docs.x.com/x-api/ endpoint pages "OAuth 2.0 scopes required").
_OAUTH_SCOPES: dict[tuple[str, str], set[str]] = {
	("slack", "createChannel"): {"channels:manage", "groups:write"},
	("slack", "renameChannel"): {"channels:manage", "groups:write"},
	("slack", "archiveChannel"): {"channels:manage", "groups:write"},
	("slack", "inviteToChannel"): {"channels:manage", "groups:write"},
	("slack", "removeFromChannel"): {"channels:manage", "groups:write"},
	("slack", "setChannelTopic"): {"channels:manage", "groups:write"},
	("slack", "setChannelPurpose"): {"channels:manage", "groups:write"},
	("slack", "joinChannel"): {"channels:join"},
	("slack", "deleteScheduledMessage"): {"chat:write"},
	("slack", "listChannelMembers"): {"channels:read", "groups:read", "im:read", "mpim:read"},
	("x", "sendDirectMessage"): {"dm.write", "dm.read", "tweet.read", "users.read"},
	("x", "sendConversationMessage"): {"dm.write", "dm.read", "tweet.read", "users.read"},
	("x", "listDirectMessages"): {"dm.read", "tweet.read", "users.read"},
	("x", "getDirectMessagesWith"): {"dm.read", "tweet.read", "users.read"},
	("x", "followUser"): {"follows.write", "tweet.read", "users.read"},
	("x", "unfollowUser"): {"follows.write", "tweet.read", "users.read"},
}


@pytest.mark.parametrize(("key", "handle"), sorted(_OAUTH_SCOPES))
def test_the_oauth_credential_requests_the_scopes_each_new_tool_needs(
	key: str, handle: str
) -> None:
	"""The authorization asks for every OAuth scope the vendor requires for the tool."""
	integration = {"slack": slack.INTEGRATION, "x": x.INTEGRATION}[key]
	assert any(t.handle == handle for t in integration.tools)
	oauth = integration.credential("oauth2")
	assert oauth is not None
	missing = _OAUTH_SCOPES[(key, handle)] - set(oauth.scopes)
	assert not missing, f"{key}.{handle}: the oauth2 credential does not request {missing}"


def test_slack_search_asks_for_its_user_scope() -> None:
	"""search.messages takes only user tokens: search:read is requested as user_scope, not as a
	bot scope (Slack refuses it there)."""
	oauth = slack.INTEGRATION.credential("oauth2")
	assert oauth is not None
	assert oauth.auth_params["user_scope"] == "search:read"
	assert "search:read" not in oauth.scopes
	assert "user token" in next(
		t.description for t in slack.INTEGRATION.tools if t.handle == "searchMessages"
	)


def test_outlook_attachment_bytes_are_saved_as_a_file() -> None:
	"""fileAttachment.contentBytes is base64 bytes (msgraph-sdk reads it with get_bytes_value):
	getAttachment saves it as a file with the attachment's type and name, not as model text."""
	import base64

	import anyio
	import httpx

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	source = (
		Path(metadata.distribution("msgraph-sdk").locate_file("msgraph"))
		/ "generated/models/file_attachment.py"
	).read_text()
	assert (
		"\"contentBytes\": lambda n : setattr(self, 'content_bytes', n.get_bytes_value())" in source
	)
	pdf = b"%PDF-1.7 quarterly numbers"
	reply = {
		"@odata.type": "#microsoft.graph.fileAttachment",
		"id": "AAMk=",
		"name": "q3.pdf",
		"contentType": "application/pdf",
		"size": len(pdf),
		"contentBytes": base64.b64encode(pdf).decode(),
	}

	async def run() -> Any:
		om = OpenMolt(
			http_client=httpx.AsyncClient(
				transport=httpx.MockTransport(lambda r: httpx.Response(200, json=reply))
			)
		)
		model = ScriptedModel(
			[
				call_tool("outlook.getAttachment", message_id="AAMkm=", attachment_id="AAMk="),
				finish(done=True),
			]
		)
		config = {"accessToken": "eyJ0eXAi-token"}
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[{"integration": "outlook", "credential": {"config": config}}],
		)
		async with om:
			result = await agent.run()
			[seen] = [m.content for m in model.requests[1].messages if '"results"' in m.content]
			saved = json.loads(seen)["results"][0]["result"]["contentBytes"]
		return result, seen, saved

	_, seen, saved = anyio.run(run)
	assert reply["contentBytes"] not in seen
	assert saved["mediaType"] == "application/pdf"
	assert saved["name"] == "q3.pdf"
	assert saved["size"] == len(pdf)
	assert saved["file"].startswith("openmolt-file:")


def test_slack_json_posts_name_their_charset_as_slack_sdk_does() -> None:
	"""slack-sdk posts JSON as application/json;charset=utf-8; Slack warns missing_charset
	(and may misread non-ASCII text) without it, so every JSON tool sends the charset."""
	import anyio
	import httpx

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	source = Path(
		metadata.distribution("slack-sdk").locate_file("slack_sdk/web/base_client.py")
	).read_text()
	assert 'headers["Content-Type"] = "application/json;charset=utf-8"' in source
	json_tools = [t for t in slack.INTEGRATION.tools if t.request_format == "json"]
	assert json_tools
	for tool in json_tools:
		assert tool.headers.get("Content-Type", "").replace(" ", "").lower() == (
			"application/json;charset=utf-8"
		), tool.handle

	seen: list[httpx.Request] = []

	async def run() -> None:
		def service(request: httpx.Request) -> httpx.Response:
			seen.append(request)
			return httpx.Response(200, json={"ok": True, "ts": "1.2"})

		om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
		model = ScriptedModel(
			[call_tool("slack.postMessage", channel="C1", text="héllo"), finish(done=True)]
		)
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[{"integration": "slack", "credential": {"config": {"token": "xoxb-1"}}}],
		)
		async with om:
			await agent.run()

	anyio.run(run)
	[request] = seen
	assert request.headers["content-type"].replace(" ", "") == "application/json;charset=utf-8"
	assert json.loads(request.content.decode("utf-8"))["text"] == "héllo"
