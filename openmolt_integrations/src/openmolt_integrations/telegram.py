"""Telegram: the Bot API 10 — messages, media and albums, updates, webhooks and file downloads.

Tool inputs are the Bot API's own parameter names. The test suite checks every method, parameter
name, nested object field and enum value against ``@grammyjs/types`` 5.0.0 (npm), the Bot API
type declarations of grammY, which follow each Bot API release.

The bot token is part of every URL (``https://api.telegram.org/bot<token>/<method>``). It lives in
the credential config, so the engine redacts it from logs, errors and everything the model sees.
Every method answers ``{"ok": true, "result": ...}``; failures carry ``description`` and, on 429,
``parameters.retry_after``.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	passthrough_of,
	string,
)

__all__ = ["INTEGRATION", "register_integrations"]

_CHAT = {
	"type": ["integer", "string"],
	"description": "Chat id (a number; groups are negative) or a public channel's @username.",
}
_PARSE_MODE = string(
	"How to read entities in the text. HTML is the easiest to escape (<b>, <i>, <a href>, "
	"<code>); MarkdownV2 needs _*[]()~`>#+-=|{}.! escaped with a backslash.",
	enum=["HTML", "MarkdownV2", "Markdown"],
)
_THREAD = integer("Forum topic id, to post inside a topic of a forum supergroup.")
_REPLY = obj(
	{
		"message_id": integer("Id of the message to reply to."),
		"chat_id": _CHAT,
		"allow_sending_without_reply": boolean("Send even if the replied message is gone."),
		"quote": string("Exact part of the replied message to quote."),
	},
	["message_id"],
	description="Reply to a message (reply_parameters).",
)
_MARKUP = {
	"type": "object",
	"description": 'reply_markup: an inline keyboard {"inline_keyboard": [[{"text": "Yes", '
	'"callback_data": "yes"}]]}, a reply keyboard, {"remove_keyboard": true} or '
	'{"force_reply": true}.',
}
_SILENT = boolean("Deliver without a notification sound.")
_CAPTION = string("Caption, up to 1024 characters.", maxLength=1024)
_FILE_REF = string(
	"File reference of the bytes to upload: openmolt-file:<id>, data:<type>;base64,<data> or "
	"fileSystem:<path>."
)
_MEDIA_ITEM = obj(
	{
		"type": string(
			"photo or video (mixable), or all audio, or all document.",
			enum=["photo", "video", "audio", "document"],
		),
		"media": string(
			"file_id on Telegram, an HTTPS URL, or attach://<name> of an uploaded file "
			"(uploadMediaGroup)."
		),
		"caption": _CAPTION,
		"parse_mode": _PARSE_MODE,
		"has_spoiler": boolean("Photo or video: cover with a spoiler animation."),
	},
	["type", "media"],
	description="One item of the album (an InputMedia object).",
)
_ALBUM = array(_MEDIA_ITEM, "2 to 10 items, in order.", minItems=2, maxItems=10)
_UPDATES = array(
	string(),
	"Update types to receive, e.g. message, edited_message, callback_query, channel_post. "
	"Empty list: all except chat_member, message_reaction, message_reaction_count.",
)

_DOCS = """\
## Get a token

1. In Telegram, open a chat with [@BotFather](https://t.me/BotFather) and send `/newbot`.
2. Choose a display name and a username ending in `bot`. BotFather answers with a token such as
   `123456789:AAH...`.
3. Give it to OpenMolt; it is only ever placed in the request URL, never shown to the model:

```python
om = OpenMolt(integrations={"telegram": {"botToken": "123456789:AAH..."}})
```

A bot only sees chats it was added to, and in groups only commands and replies unless privacy mode
is turned off (`/setprivacy` in BotFather). To find a chat id, send the bot a message and call
`getUpdates`: `result[].message.chat.id`. Use either `getUpdates` (polling) or `setWebhook`, not both.

Limits: about 30 messages per second overall, 1 per second per chat and 20 per minute per group;
429 answers carry `retry_after`. Bots download files up to 20 MB and upload up to 50 MB.

## Reference checks

Telegram publishes no machine-readable Bot API description. The test suite checks every tool
against `@grammyjs/types` 5.0.0 (npm): the Bot API's methods and types as TypeScript
declarations, maintained by the grammY team with each Bot API release (the docs' descriptions
are copied into them). Checked: the method name, every parameter and nested field name
(`reply_parameters`, `link_preview_options`, the album's `InputMedia` items), the enum values
(`parse_mode`, `action`), that every parameter the API requires is required by the tool, and
the ranges the docs state in words and the package copies into each parameter's description
("1-4096 characters", "Values between 1-100", "2-10 items"): the inputs carry them as length,
range and item-count bounds. Not checkable there: the endpoint form
`https://api.telegram.org/bot<token>/METHOD` and the file URL
`https://api.telegram.org/file/bot<token>/<file_path>` (`downloadFile`), which follow the
[Bot API docs](https://core.telegram.org/bots/api#making-requests), and ranges the docs do not
state as numbers (`getUpdates` `timeout`), which the tools take from the same docs.
"""


def _method(
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


def _upload(
	handle: str, method: str, field: str, description: str, extra: dict[str, Any]
) -> HttpTool:
	"""A multipart POST that uploads the file of input ``field`` (the Bot API's name) as that part."""
	schema = obj({"chat_id": _CHAT, field: _FILE_REF, **extra}, ["chat_id", field])
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


_TOOLS = [
	_method(
		"getMe",
		"getMe",
		"Check the token and get the bot's id, name and username.",
		["read"],
		obj({}),
	),
	_method(
		"sendMessage",
		"sendMessage",
		"Send a text message (up to 4096 characters) to a chat, optionally with buttons or as a reply.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"text": string("Message text, 1 to 4096 characters.", minLength=1, maxLength=4096),
				"parse_mode": _PARSE_MODE,
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"reply_markup": _MARKUP,
				"disable_notification": _SILENT,
				"link_preview_options": obj(
					{"is_disabled": boolean("Hide the link preview.")},
					description="Link preview settings.",
				),
			},
			["chat_id", "text"],
		),
	),
	_method(
		"sendPhoto",
		"sendPhoto",
		"Send a photo that is already on Telegram (file_id) or at a public HTTPS URL. To send "
		"bytes, use uploadPhoto.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"photo": string(
					"file_id of a photo on Telegram, or an HTTPS URL of a JPEG/PNG (max 10 MB)."
				),
				"caption": _CAPTION,
				"parse_mode": _PARSE_MODE,
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "photo"],
		),
	),
	_upload(
		"uploadPhoto",
		"sendPhoto",
		"photo",
		"Upload and send a photo from a file reference (max 10 MB).",
		{"caption": _CAPTION, "parse_mode": _PARSE_MODE, "message_thread_id": _THREAD},
	),
	_method(
		"sendDocument",
		"sendDocument",
		"Send a document that is on Telegram (file_id) or at a public HTTPS URL (PDF or ZIP "
		"only by URL). To send bytes, use uploadDocument.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"document": string("file_id of a document on Telegram, or an HTTPS URL."),
				"caption": _CAPTION,
				"parse_mode": _PARSE_MODE,
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "document"],
		),
	),
	_upload(
		"uploadDocument",
		"sendDocument",
		"document",
		"Upload and send any file as a document from a file reference (max 50 MB).",
		{"caption": _CAPTION, "parse_mode": _PARSE_MODE, "message_thread_id": _THREAD},
	),
	_method(
		"sendVideo",
		"sendVideo",
		"Send a video (MP4) that is on Telegram (file_id) or at a public HTTPS URL. To send "
		"bytes, use uploadVideo.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"video": string("file_id of a video on Telegram, or an HTTPS URL of an MP4."),
				"caption": _CAPTION,
				"parse_mode": _PARSE_MODE,
				"supports_streaming": boolean("The video can be played while it downloads."),
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "video"],
		),
	),
	_upload(
		"uploadVideo",
		"sendVideo",
		"video",
		"Upload and send a video (MP4) from a file reference (max 50 MB).",
		{
			"caption": _CAPTION,
			"parse_mode": _PARSE_MODE,
			"supports_streaming": boolean("The video can be played while it downloads."),
			"message_thread_id": _THREAD,
		},
	),
	_method(
		"sendAudio",
		"sendAudio",
		"Send music (MP3 or M4A, shown in the player) that is on Telegram (file_id) or at a "
		"public HTTPS URL. To send bytes, use uploadAudio.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"audio": string("file_id of an audio file on Telegram, or an HTTPS URL."),
				"caption": _CAPTION,
				"parse_mode": _PARSE_MODE,
				"performer": string("Performer shown in the player."),
				"title": string("Track name shown in the player."),
				"duration": integer("Duration in seconds.", minimum=0),
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "audio"],
		),
	),
	_upload(
		"uploadAudio",
		"sendAudio",
		"audio",
		"Upload and send music (MP3 or M4A) from a file reference (max 50 MB).",
		{
			"caption": _CAPTION,
			"parse_mode": _PARSE_MODE,
			"performer": string("Performer shown in the player."),
			"title": string("Track name shown in the player."),
			"message_thread_id": _THREAD,
		},
	),
	_method(
		"sendMediaGroup",
		"sendMediaGroup",
		"Send an album of 2 to 10 photos and videos (or only audio, or only documents) that are "
		"on Telegram (file_id) or at HTTPS URLs; captions go on the items. To send bytes, use "
		"uploadMediaGroup.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"media": _ALBUM,
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "media"],
		),
	),
	HttpTool(
		handle="uploadMediaGroup",
		description="Upload and send an album of 2 to 10 files: put the files in `files` (in "
		"order) and write media[i].media as attach://file<i> (attach://file0, attach://file1...).",
		scopes=["send"],
		method="POST",
		endpoint="/sendMediaGroup",
		request_format="multipart",
		# multipart fields are text: the album goes as the JSON-serialized array the API expects
		body=passthrough(
			"chat_id",
			"message_thread_id",
			"disable_notification",
			media="{{ input.media | json }}",
		),
		files={f"file{i}": f"{{{{ input.files[{i}] }}}}" for i in range(10)},
		input_schema=obj(
			{
				"chat_id": _CHAT,
				"media": _ALBUM,
				"files": array(_FILE_REF, "The files, in order: file0, file1...", maxItems=10),
				"message_thread_id": _THREAD,
				"disable_notification": _SILENT,
			},
			["chat_id", "media", "files"],
		),
	),
	_method(
		"copyMessage",
		"copyMessage",
		"Copy a message to another chat without the 'Forwarded from' header (a new message "
		"with the same content; captions can be replaced). Returns the new message_id.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"from_chat_id": _CHAT,
				"message_id": integer("Id of the message in from_chat_id."),
				"caption": string(
					"New caption for media, up to 1024 characters (omit to keep it).",
					maxLength=1024,
				),
				"parse_mode": _PARSE_MODE,
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"reply_markup": _MARKUP,
				"disable_notification": _SILENT,
			},
			["chat_id", "from_chat_id", "message_id"],
		),
	),
	_method(
		"editMessageText",
		"editMessageText",
		"Replace the text of a message the bot sent.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"message_id": integer("Id of the message to edit."),
				"text": string("New text, 1 to 4096 characters.", minLength=1, maxLength=4096),
				"parse_mode": _PARSE_MODE,
				"reply_markup": _MARKUP,
			},
			["chat_id", "message_id", "text"],
		),
	),
	_method(
		"editMessageReplyMarkup",
		"editMessageReplyMarkup",
		"Change or remove the inline keyboard of a message the bot sent (omit reply_markup to "
		"remove it), e.g. after a button press.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"message_id": integer("Id of the message to edit."),
				"reply_markup": obj(
					{
						"inline_keyboard": array(
							array({"type": "object"}),
							'Rows of buttons: [[{"text": "Yes", "callback_data": "yes"}]].',
						)
					},
					["inline_keyboard"],
					description="The new inline keyboard (InlineKeyboardMarkup).",
				),
			},
			["chat_id", "message_id"],
		),
	),
	_method(
		"deleteMessage",
		"deleteMessage",
		"Delete a message (the bot's own within 48 hours; others' in groups where it is admin).",
		["delete"],
		obj(
			{"chat_id": _CHAT, "message_id": integer("Id of the message to delete.")},
			["chat_id", "message_id"],
		),
	),
	_method(
		"forwardMessage",
		"forwardMessage",
		"Forward a message from one chat to another.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"from_chat_id": _CHAT,
				"message_id": integer("Id of the message in from_chat_id."),
				"message_thread_id": _THREAD,
				"disable_notification": _SILENT,
			},
			["chat_id", "from_chat_id", "message_id"],
		),
	),
	_method(
		"getUpdates",
		"getUpdates",
		"Fetch new updates (incoming messages, button presses) by long polling. Pass offset = "
		"the last update_id + 1 to confirm earlier updates. Fails while a webhook is set.",
		["read"],
		obj(
			{
				"offset": integer("First update id to return (last update_id + 1)."),
				"limit": integer("Updates to return.", minimum=1, maximum=100, default=100),
				"timeout": integer(
					"Seconds to wait for an update (long polling).",
					minimum=0,
					maximum=50,
					default=0,
				),
				"allowed_updates": _UPDATES,
			}
		),
	),
	_method(
		"getFile",
		"getFile",
		"Get a file's `file_path` from its file_id (photos, documents, voice notes in updates); "
		"then fetch its bytes with downloadFile. Files up to 20 MB.",
		["read"],
		obj({"file_id": string("file_id from a message.")}, ["file_id"]),
	),
	HttpTool(
		handle="downloadFile",
		description="Download a file's bytes by the `file_path` that getFile returned; saves it "
		"and returns a file reference.",
		scopes=["read"],
		method="GET",
		base_url="https://api.telegram.org/file/bot{{ config.botToken }}",
		endpoint="/{{ input.file_path | path_segments }}",
		response_format="binary",
		input_schema=obj(
			{"file_path": string("`result.file_path` from getFile, e.g. photos/file_12.jpg.")},
			["file_path"],
		),
	),
	_method(
		"getChat",
		"getChat",
		"Get a chat's details: title, type, description, pinned message.",
		["read"],
		obj({"chat_id": _CHAT}, ["chat_id"]),
	),
	_method(
		"sendChatAction",
		"sendChatAction",
		"Show a status such as 'typing…' in a chat for about 5 seconds.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"action": string(
					"The status to show.",
					enum=[
						"typing",
						"upload_photo",
						"record_video",
						"upload_video",
						"record_voice",
						"upload_voice",
						"upload_document",
						"choose_sticker",
						"find_location",
						"record_video_note",
						"upload_video_note",
					],
				),
				"message_thread_id": _THREAD,
			},
			["chat_id", "action"],
		),
	),
	_method(
		"answerCallbackQuery",
		"answerCallbackQuery",
		"Answer an inline-keyboard button press (stops the button's spinner), with an optional "
		"notification or alert.",
		["send"],
		obj(
			{
				"callback_query_id": string("`callback_query.id` from the update."),
				"text": string("Notification text, up to 200 characters.", maxLength=200),
				"show_alert": boolean("Show an alert dialog instead of a toast."),
			},
			["callback_query_id"],
		),
	),
	_method(
		"setWebhook",
		"setWebhook",
		"Have Telegram POST updates to an HTTPS URL. Telegram then sends the secret_token in the "
		"X-Telegram-Bot-Api-Secret-Token header of each call.",
		["admin"],
		obj(
			{
				"url": string("HTTPS URL that receives updates (ports 443, 80, 88 or 8443)."),
				"secret_token": string(
					"1 to 256 characters A-Z a-z 0-9 _ -, echoed in a header.",
					pattern="^[A-Za-z0-9_-]{1,256}$",
					minLength=1,
					maxLength=256,
				),
				"allowed_updates": _UPDATES,
				"drop_pending_updates": boolean("Discard updates waiting in the queue."),
				"max_connections": integer(
					"Simultaneous connections.", minimum=1, maximum=100, default=40
				),
			},
			["url"],
		),
	),
	_method(
		"getWebhookInfo",
		"getWebhookInfo",
		"Get the webhook's status: its URL (empty when polling with getUpdates), pending update "
		"count and the last delivery error.",
		["admin"],
		obj({}),
	),
	_method(
		"deleteWebhook",
		"deleteWebhook",
		"Remove the webhook so that getUpdates works again.",
		["admin"],
		obj({"drop_pending_updates": boolean("Discard updates waiting in the queue.")}),
	),
	_method(
		"pinChatMessage",
		"pinChatMessage",
		"Pin a message in a chat (the bot must be an admin with the pin right in groups and "
		"channels).",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"message_id": integer("Id of the message to pin."),
				"disable_notification": boolean(
					"Pin without notifying the members (always silent in channels)."
				),
			},
			["chat_id", "message_id"],
		),
	),
	_method(
		"unpinChatMessage",
		"unpinChatMessage",
		"Unpin a message in a chat; without message_id, the most recent pinned message.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"message_id": integer("Id of the message to unpin (omit for the latest pin)."),
			},
			["chat_id"],
		),
	),
	_method(
		"sendLocation",
		"sendLocation",
		"Send a point on the map, optionally a live location that can be updated for a period.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"latitude": {
					"type": "number",
					"description": "Latitude, -90 to 90.",
					"minimum": -90,
					"maximum": 90,
				},
				"longitude": {
					"type": "number",
					"description": "Longitude, -180 to 180.",
					"minimum": -180,
					"maximum": 180,
				},
				"horizontal_accuracy": {
					"type": "number",
					"description": "Radius of uncertainty in meters, 0 to 1500.",
					"minimum": 0,
					"maximum": 1500,
				},
				"live_period": integer(
					"Live location: seconds it can be updated, 60 to 86400 (2147483647: "
					"indefinitely).",
					minimum=60,
					maximum=2147483647,
				),
				"heading": integer(
					"Live location: direction of movement in degrees.", minimum=1, maximum=360
				),
				"proximity_alert_radius": integer(
					"Live location: alert distance in meters.", minimum=1, maximum=100000
				),
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "latitude", "longitude"],
		),
	),
	_method(
		"sendSticker",
		"sendSticker",
		"Send a sticker (static .WEBP, animated .TGS or video .WEBM) by file_id or HTTPS URL.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"sticker": string("file_id of a sticker on Telegram, or an HTTPS URL of a .WEBP."),
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "sticker"],
		),
	),
	_method(
		"sendAnimation",
		"sendAnimation",
		"Send an animation (GIF or H.264/MPEG-4 AVC video without sound) by file_id or HTTPS "
		"URL. To send bytes, use uploadAnimation.",
		["send"],
		obj(
			{
				"chat_id": _CHAT,
				"animation": string("file_id of an animation on Telegram, or an HTTPS URL."),
				"caption": _CAPTION,
				"parse_mode": _PARSE_MODE,
				"has_spoiler": boolean("Cover the animation with a spoiler effect."),
				"message_thread_id": _THREAD,
				"reply_parameters": _REPLY,
				"disable_notification": _SILENT,
			},
			["chat_id", "animation"],
		),
	),
	_upload(
		"uploadAnimation",
		"sendAnimation",
		"animation",
		"Upload and send an animation (GIF or soundless MP4) from a file reference (max 50 MB).",
		{"caption": _CAPTION, "parse_mode": _PARSE_MODE, "message_thread_id": _THREAD},
	),
	_method(
		"getChatAdministrators",
		"getChatAdministrators",
		"List a group's or channel's administrators with their rights and custom titles "
		"(other bots only with return_bots).",
		["read"],
		obj(
			{
				"chat_id": _CHAT,
				"return_bots": boolean("Also list the other bots that are administrators."),
			},
			["chat_id"],
		),
	),
	_method(
		"getChatMember",
		"getChatMember",
		"Get one member of a chat: status (creator, administrator, member, restricted, left, "
		"kicked), rights and custom title.",
		["read"],
		obj(
			{"chat_id": _CHAT, "user_id": integer("The user's id.")},
			["chat_id", "user_id"],
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		"getUpdates": ["private", "untrusted"],
		"getChat": ["private"],
		"sendMessage": ["outbound"],
		"sendPhoto": ["outbound"],
		"sendDocument": ["outbound"],
		"sendVideo": ["outbound"],
		"sendAudio": ["outbound"],
		"sendMediaGroup": ["outbound"],
		"upload*": ["outbound"],
		"copyMessage": ["outbound"],
		"forwardMessage": ["outbound"],
		"editMessageText": ["outbound"],
		"answerCallbackQuery": ["outbound"],
		"setWebhook": ["outbound"],
		"pinChatMessage": ["outbound"],
		"unpinChatMessage": ["outbound"],
		"sendLocation": ["outbound"],
		"sendSticker": ["outbound"],
		"sendAnimation": ["outbound"],
		# members' names and the custom titles admins gave them
		"getChatAdministrators": ["private", "untrusted"],
		"getChatMember": ["private", "untrusted"],
	},
	name="Telegram",
	description="Send, edit, copy and pin Telegram messages, photos, videos, audio, documents, "
	"albums, locations, stickers and animations; read updates, chats' administrators and "
	"members, manage the webhook, download files.",
	api_version="Bot API 10",
	api_setup=ApiSetup(base_url="https://api.telegram.org/bot{{ config.botToken }}"),
	credential_setup=[CustomCredential(type="custom")],
	scopes={
		"read": "Read updates, chats, their administrators and members, and files.",
		"send": "Send, edit and forward messages, media, locations, stickers and animations; pin "
		"and unpin messages; answer button presses.",
		"delete": "Delete messages.",
		"admin": "Set, inspect or remove the bot's webhook.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Telegram integration."""
	register(INTEGRATION)
