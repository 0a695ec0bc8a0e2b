"""Telegram's shared pieces: common parameters, the two tool shapes, the chat administration tools.

The chat administration tools read chats, their administrators and members, pin messages and
manage the webhook. `telegram` builds the integration from these; see its module docstring for the API version and
the reference checks.
"""

from __future__ import annotations

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
	"ALBUM",
	"CAPTION",
	"CHAT",
	"CHAT_TOOLS",
	"FILE_REF",
	"MARKUP",
	"MEDIA_ITEM",
	"PARSE_MODE",
	"REPLY",
	"SILENT",
	"THREAD",
	"UPDATES",
	"method_tool",
	"upload_tool",
]

CHAT = {
	"type": ["integer", "string"],
	"description": "Chat id (a number; groups are negative) or a public channel's @username.",
}
PARSE_MODE = string(
	"How to read entities in the text. HTML is the easiest to escape (<b>, <i>, <a href>, "
	"<code>); MarkdownV2 needs _*[]()~`>#+-=|{}.! escaped with a backslash.",
	enum=["HTML", "MarkdownV2", "Markdown"],
)
THREAD = integer("Forum topic id, to post inside a topic of a forum supergroup.")
REPLY = obj(
	{
		"message_id": integer("Id of the message to reply to."),
		"chat_id": CHAT,
		"allow_sending_without_reply": boolean("Send even if the replied message is gone."),
		# https://core.telegram.org/bots/api#replyparameters: "0-1024 characters after entities
		# parsing".
		"quote": string(
			"Exact part of the replied message to quote, up to 1024 characters.", maxLength=1024
		),
	},
	["message_id"],
	description="Reply to a message (reply_parameters).",
)
MARKUP = {
	"type": "object",
	"description": 'reply_markup: an inline keyboard {"inline_keyboard": [[{"text": "Yes", '
	'"callback_data": "yes"}]]}, a reply keyboard, {"remove_keyboard": true} or '
	'{"force_reply": true}.',
}
SILENT = boolean("Deliver without a notification sound.")
CAPTION = string("Caption, up to 1024 characters.", maxLength=1024)
FILE_REF = string(
	"File reference of the bytes to upload: openmolt-file:<id>, data:<type>;base64,<data> or "
	"fileSystem:<path>."
)
MEDIA_ITEM = obj(
	{
		"type": string(
			"photo or video (mixable), or all audio, or all document.",
			enum=["photo", "video", "audio", "document"],
		),
		"media": string(
			"file_id on Telegram, an HTTPS URL, or attach://<name> of an uploaded file "
			"(uploadMediaGroup)."
		),
		"caption": CAPTION,
		"parse_mode": PARSE_MODE,
		"has_spoiler": boolean("Photo or video: cover with a spoiler animation."),
	},
	["type", "media"],
	description="One item of the album (an InputMedia object).",
)
ALBUM = array(MEDIA_ITEM, "2 to 10 items, in order.", minItems=2, maxItems=10)
UPDATES = array(
	string(),
	"Update types to receive, e.g. message, edited_message, callback_query, channel_post. "
	"Empty list: all except chat_member, message_reaction, message_reaction_count.",
)


def method_tool(
	handle: str, method: str, description: str, scopes: list[str], schema: dict[str, Any]
) -> HttpTool:
	"""A JSON POST to a Bot API method whose body is the tool input, field for field."""
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method="POST",
		endpoint=f"/{method}",
		body=passthrough_of(schema),
		input_schema=schema,
	)


def upload_tool(
	handle: str, method: str, field: str, description: str, extra: dict[str, Any]
) -> HttpTool:
	"""A multipart POST that uploads the file of input ``field`` (the Bot API's name) as that part."""
	schema = obj({"chat_id": CHAT, field: FILE_REF, **extra}, ["chat_id", field])
	return HttpTool(
		handle=handle,
		description=description,
		scopes=["send"],
		method="POST",
		endpoint=f"/{method}",
		request_format="multipart",
		body=passthrough_of(schema, exclude=[field]),
		files=passthrough(field),
		input_schema=schema,
	)


# Chats, their administrators and members, pins and the webhook.
CHAT_TOOLS = [
	method_tool(
		"getChat",
		"getChat",
		"Get a chat's details: title, type, description, pinned message.",
		["read"],
		obj({"chat_id": CHAT}, ["chat_id"]),
	),
	method_tool(
		"setWebhook",
		"setWebhook",
		"Have Telegram POST updates to an HTTPS URL. Telegram then sends the secret_token in the "
		"X-Telegram-Bot-Api-Secret-Token header of each call.",
		["admin"],
		obj(
			{
				# https://core.telegram.org/bots/api#setwebhook: "HTTPS URL to send updates to. Use
				# an empty string to remove webhook integration"; "Ports currently supported for
				# webhooks: 443, 80, 88, 8443". The host may be an IPv6 literal ([2001:db8::1]).
				"url": string(
					"HTTPS URL that receives updates (ports 443, 80, 88 or 8443); an empty string "
					"removes the webhook.",
					pattern=(
						r"^(?:https://(?:\[[0-9A-Fa-f:.]+\]|[^/:?#\[\]]+)(?::(?:443|80|88|8443))?"
						r"(?:[/?#].*)?)?$"
					),
				),
				"secret_token": string(
					"1 to 256 characters A-Z a-z 0-9 _ -, echoed in a header.",
					pattern="^[A-Za-z0-9_-]{1,256}$",
					minLength=1,
					maxLength=256,
				),
				"allowed_updates": UPDATES,
				"drop_pending_updates": boolean("Discard updates waiting in the queue."),
				"max_connections": integer(
					"Simultaneous connections.", minimum=1, maximum=100, default=40
				),
			},
			["url"],
		),
	),
	method_tool(
		"getWebhookInfo",
		"getWebhookInfo",
		"Get the webhook's status: its URL (empty when polling with getUpdates), pending update "
		"count and the last delivery error.",
		["admin"],
		obj({}),
	),
	method_tool(
		"deleteWebhook",
		"deleteWebhook",
		"Remove the webhook so that getUpdates works again.",
		["admin"],
		obj({"drop_pending_updates": boolean("Discard updates waiting in the queue.")}),
	),
	method_tool(
		"pinChatMessage",
		"pinChatMessage",
		"Pin a message in a chat (the bot must be an admin with the pin right in groups and "
		"channels).",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"message_id": integer("Id of the message to pin."),
				"disable_notification": boolean(
					"Pin without notifying the members (always silent in channels)."
				),
			},
			["chat_id", "message_id"],
		),
	),
	method_tool(
		"unpinChatMessage",
		"unpinChatMessage",
		"Unpin a message in a chat; without message_id, the most recent pinned message.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"message_id": integer("Id of the message to unpin (omit for the latest pin)."),
			},
			["chat_id"],
		),
	),
	method_tool(
		"getChatAdministrators",
		"getChatAdministrators",
		"List a group's or channel's administrators with their rights and custom titles "
		"(other bots only with return_bots).",
		["read"],
		obj(
			{
				"chat_id": CHAT,
				"return_bots": boolean("Also list the other bots that are administrators."),
			},
			["chat_id"],
		),
	),
	method_tool(
		"getChatMember",
		"getChatMember",
		"Get one member of a chat: status (creator, administrator, member, restricted, left, "
		"kicked), rights and custom title.",
		["read"],
		obj(
			{"chat_id": CHAT, "user_id": integer("The user's id.")},
			["chat_id", "user_id"],
		),
	),
]
