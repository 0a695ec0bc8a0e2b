"""Slack's shared pieces: common parameters, the three tool shapes, the channel management tools.

The channel management tools create, rename, archive and join channels, list, invite and remove
members and set topics and purposes. `slack` builds the integration from these; see its module docstring.
"""

from __future__ import annotations

import json
from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	passthrough_of,
	string,
)

__all__ = [
	"BLOCKS",
	"CHANNEL",
	"CHANNEL_NAME",
	"CHANNEL_TOOLS",
	"CURSOR",
	"OK",
	"THREAD_TS",
	"TS",
	"get_tool",
	"post_form",
	"post_json",
]

CHANNEL = string("Conversation id (C… public, G… private, D… direct message), e.g. C0123456789.")
TS = string("Message timestamp id (the message's `ts`, e.g. 1712345678.123456).")
CURSOR = string(
	"Pagination cursor: `response_metadata.next_cursor` of the previous page. Omit for the first page."
)
BLOCKS = array(
	{"type": "object"},
	"Block Kit blocks (JSON objects) for rich layout; `text` is then the notification fallback.",
)
THREAD_TS = string("`ts` of the parent message, to post inside its thread.")

CHANNEL_NAME = string(
	"Channel name: lowercase letters, digits, hyphens and underscores, up to 80 characters.",
	pattern="^[a-z0-9_-]{1,80}$",
	minLength=1,
	maxLength=80,
)
OK = obj(
	{"ok": boolean("True on success."), "error": string("Error code when ok is false.")},
	description="Slack's envelope: every answer has `ok`, failures add `error`.",
)


def _post(
	request_format: str,
	handle: str,
	method: str,
	description: str,
	scopes: list[str],
	schema: dict[str, Any],
	body: dict[str, Any] | None,
) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method="POST",
		endpoint=f"/{method}",
		request_format=request_format,
		# slack-sdk's JSON Content-Type: without the charset Slack answers missing_charset.
		headers={"Content-Type": "application/json; charset=utf-8"}
		if request_format == "json"
		else {},
		body=passthrough_of(schema) if body is None else body,
		input_schema=schema,
		output_schema=OK,
	)


def post_json(
	handle: str,
	method: str,
	description: str,
	scopes: list[str],
	schema: dict[str, Any],
	body: dict[str, Any] | None = None,
) -> HttpTool:
	"""A JSON POST; the body sends every input under its own name unless ``body`` is given."""
	return _post("json", handle, method, description, scopes, schema, body)


def post_form(
	handle: str,
	method: str,
	description: str,
	scopes: list[str],
	schema: dict[str, Any],
	body: dict[str, Any] | None = None,
) -> HttpTool:
	"""A form POST; the body sends every input under its own name unless ``body`` is given.

	Slack's Web API (unversioned; checked against its method reference and slack-sdk) reads form
	fields as text: the tools join a list with commas (``users``) or send it as JSON text
	(``files``) in their ``body``, so form-data never meets a list or an object here.
	"""
	return _post("form-data", handle, method, description, scopes, schema, body)


def _param(name: str, spec: dict[str, Any]) -> str:
	"""A query template that sends the schema's default when the input leaves it out.

	Slack's own defaults differ from ours (e.g. page sizes), so what the schema promises the model
	is what is sent.
	"""
	value = spec["default"]
	literal = json.dumps(value) if not isinstance(value, str) else "'" + value + "'"
	return f'{{{{ input["{name}"] | default: {literal}, allow_false: true }}}}'


def get_tool(
	handle: str, method: str, description: str, scopes: list[str], schema: dict[str, Any]
) -> HttpTool:
	"""A GET whose query sends every input, and each default the schema promises when left out."""
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method="GET",
		endpoint=f"/{method}",
		query_params=passthrough_of(
			schema,
			**{
				name: _param(name, spec)
				for name, spec in schema["properties"].items()
				if "default" in spec
			},
		),
		input_schema=schema,
		output_schema=OK,
	)


# Channels: create, rename, archive, join, members, topic and purpose (the manage scope), and
# the member list (read).
CHANNEL_TOOLS = [
	post_form(
		"joinChannel",
		"conversations.join",
		"Join a public channel (conversations.join). A bot must be a member to read a channel's "
		"history or threads (else Slack answers not_in_channel); private channels need an "
		"invitation instead.",
		["manage"],
		obj({"channel": CHANNEL}, ["channel"]),
	),
	get_tool(
		"listChannelMembers",
		"conversations.members",
		"List the user ids (U…) of a conversation's members, one page at a time "
		"(conversations.members); follow `response_metadata.next_cursor`. getUserInfo gives "
		"each one's profile.",
		["read"],
		obj(
			{
				"channel": CHANNEL,
				"limit": integer("Members per page.", minimum=1, maximum=999, default=200),
				"cursor": CURSOR,
			},
			["channel"],
		),
	),
	post_form(
		"createChannel",
		"conversations.create",
		"Create a public or private channel (conversations.create). Returns `channel.id`.",
		["manage"],
		obj(
			{
				"name": CHANNEL_NAME,
				"is_private": boolean("Create a private channel.", default=False),
				"team_id": string("Workspace id (T…); needed only with an org-wide token."),
			},
			["name"],
		),
	),
	post_form(
		"renameChannel",
		"conversations.rename",
		"Rename a channel (conversations.rename); only its creator or an admin can.",
		["manage"],
		obj({"channel": CHANNEL, "name": CHANNEL_NAME}, ["channel", "name"]),
	),
	post_form(
		"archiveChannel",
		"conversations.archive",
		"Archive a channel (conversations.archive): it becomes read-only and leaves the lists.",
		["manage"],
		obj({"channel": CHANNEL}, ["channel"]),
	),
	post_form(
		"inviteToChannel",
		"conversations.invite",
		"Invite 1 to 1000 users to a channel (conversations.invite).",
		["manage"],
		obj(
			{
				"channel": CHANNEL,
				"users": array(string(), "User ids (U…) to invite.", minItems=1, maxItems=1000),
				"force": boolean("Invite the valid users even if some ids are invalid."),
			},
			["channel", "users"],
		),
		passthrough("channel", "force", users="{{ input.users | join: ',' }}"),
	),
	post_form(
		"removeFromChannel",
		"conversations.kick",
		"Remove a user from a channel (conversations.kick).",
		["manage"],
		obj(
			{"channel": CHANNEL, "user": string("Id of the user to remove (U…).")},
			["channel", "user"],
		),
	),
	post_form(
		"setChannelTopic",
		"conversations.setTopic",
		"Set a channel's topic, shown in its header (conversations.setTopic).",
		["manage"],
		obj(
			{
				"channel": CHANNEL,
				"topic": string(
					"The new topic, up to 250 characters (no formatting).", maxLength=250
				),
			},
			["channel", "topic"],
		),
	),
	post_form(
		"setChannelPurpose",
		"conversations.setPurpose",
		"Set a channel's purpose, its description (conversations.setPurpose).",
		["manage"],
		obj(
			{
				"channel": CHANNEL,
				"purpose": string("The new purpose, up to 250 characters.", maxLength=250),
			},
			["channel", "purpose"],
		),
	),
]
