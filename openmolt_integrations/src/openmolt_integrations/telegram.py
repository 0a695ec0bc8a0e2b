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
from openmolt_core.integrations.schema import array, boolean, integer, obj, passthrough, string
from openmolt_integrations._telegram import (
	ALBUM,
	CAPTION,
	CHAT,
	CHAT_TOOLS,
	FILE_REF,
	MARKUP,
	PARSE_MODE,
	REPLY,
	SILENT,
	THREAD,
	UPDATES,
	method_tool,
	upload_tool,
)

__all__ = ["INTEGRATION", "register_integrations"]

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

Pinning and unpinning need the bot to be an administrator with the right to pin messages in
groups and channels (any chat with the bot in private chats). `getChatAdministrators` and
`getChatMember` work in groups, supergroups and channels the bot is in.

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

_TOOLS = [
	method_tool(
		"getMe",
		"getMe",
		"Check the token and get the bot's id, name and username.",
		["read"],
		obj({}),
	),
	method_tool(
		"sendMessage",
		"sendMessage",
		"Send a text message (up to 4096 characters) to a chat, optionally with buttons or as a reply.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"text": string("Message text, 1 to 4096 characters.", minLength=1, maxLength=4096),
				"parse_mode": PARSE_MODE,
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"reply_markup": MARKUP,
				"disable_notification": SILENT,
				"link_preview_options": obj(
					{"is_disabled": boolean("Hide the link preview.")},
					description="Link preview settings.",
				),
			},
			["chat_id", "text"],
		),
	),
	method_tool(
		"sendPhoto",
		"sendPhoto",
		"Send a photo that is already on Telegram (file_id) or at a public HTTPS URL. To send "
		"bytes, use uploadPhoto.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"photo": string(
					"file_id of a photo on Telegram, or an HTTPS URL of a JPEG/PNG (max 10 MB)."
				),
				"caption": CAPTION,
				"parse_mode": PARSE_MODE,
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "photo"],
		),
	),
	upload_tool(
		"uploadPhoto",
		"sendPhoto",
		"photo",
		"Upload and send a photo from a file reference (max 10 MB).",
		{"caption": CAPTION, "parse_mode": PARSE_MODE, "message_thread_id": THREAD},
	),
	method_tool(
		"sendDocument",
		"sendDocument",
		"Send a document that is on Telegram (file_id) or at a public HTTPS URL (PDF or ZIP "
		"only by URL). To send bytes, use uploadDocument.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"document": string("file_id of a document on Telegram, or an HTTPS URL."),
				"caption": CAPTION,
				"parse_mode": PARSE_MODE,
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "document"],
		),
	),
	upload_tool(
		"uploadDocument",
		"sendDocument",
		"document",
		"Upload and send any file as a document from a file reference (max 50 MB).",
		{"caption": CAPTION, "parse_mode": PARSE_MODE, "message_thread_id": THREAD},
	),
	method_tool(
		"sendVideo",
		"sendVideo",
		"Send a video (MP4) that is on Telegram (file_id) or at a public HTTPS URL. To send "
		"bytes, use uploadVideo.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"video": string("file_id of a video on Telegram, or an HTTPS URL of an MP4."),
				"caption": CAPTION,
				"parse_mode": PARSE_MODE,
				"supports_streaming": boolean("The video can be played while it downloads."),
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "video"],
		),
	),
	upload_tool(
		"uploadVideo",
		"sendVideo",
		"video",
		"Upload and send a video (MP4) from a file reference (max 50 MB).",
		{
			"caption": CAPTION,
			"parse_mode": PARSE_MODE,
			"supports_streaming": boolean("The video can be played while it downloads."),
			"message_thread_id": THREAD,
		},
	),
	method_tool(
		"sendAudio",
		"sendAudio",
		"Send music (MP3 or M4A, shown in the player) that is on Telegram (file_id) or at a "
		"public HTTPS URL. To send bytes, use uploadAudio.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"audio": string("file_id of an audio file on Telegram, or an HTTPS URL."),
				"caption": CAPTION,
				"parse_mode": PARSE_MODE,
				"performer": string("Performer shown in the player."),
				"title": string("Track name shown in the player."),
				"duration": integer("Duration in seconds.", minimum=0),
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "audio"],
		),
	),
	upload_tool(
		"uploadAudio",
		"sendAudio",
		"audio",
		"Upload and send music (MP3 or M4A) from a file reference (max 50 MB).",
		{
			"caption": CAPTION,
			"parse_mode": PARSE_MODE,
			"performer": string("Performer shown in the player."),
			"title": string("Track name shown in the player."),
			"message_thread_id": THREAD,
		},
	),
	method_tool(
		"sendMediaGroup",
		"sendMediaGroup",
		"Send an album of 2 to 10 photos and videos (or only audio, or only documents) that are "
		"on Telegram (file_id) or at HTTPS URLs; captions go on the items. To send bytes, use "
		"uploadMediaGroup.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"media": ALBUM,
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
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
				"chat_id": CHAT,
				"media": ALBUM,
				"files": array(FILE_REF, "The files, in order: file0, file1...", maxItems=10),
				"message_thread_id": THREAD,
				"disable_notification": SILENT,
			},
			["chat_id", "media", "files"],
		),
	),
	method_tool(
		"copyMessage",
		"copyMessage",
		"Copy a message to another chat without the 'Forwarded from' header (a new message "
		"with the same content; captions can be replaced). Returns the new message_id.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"from_chat_id": CHAT,
				"message_id": integer("Id of the message in from_chat_id."),
				"caption": string(
					"New caption for media, up to 1024 characters (omit to keep it).",
					maxLength=1024,
				),
				"parse_mode": PARSE_MODE,
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"reply_markup": MARKUP,
				"disable_notification": SILENT,
			},
			["chat_id", "from_chat_id", "message_id"],
		),
	),
	method_tool(
		"editMessageText",
		"editMessageText",
		"Replace the text of a message the bot sent.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"message_id": integer("Id of the message to edit."),
				"text": string("New text, 1 to 4096 characters.", minLength=1, maxLength=4096),
				"parse_mode": PARSE_MODE,
				"reply_markup": MARKUP,
			},
			["chat_id", "message_id", "text"],
		),
	),
	method_tool(
		"editMessageReplyMarkup",
		"editMessageReplyMarkup",
		"Change or remove the inline keyboard of a message the bot sent (omit reply_markup to "
		"remove it), e.g. after a button press.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
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
	method_tool(
		"deleteMessage",
		"deleteMessage",
		"Delete a message (the bot's own within 48 hours; others' in groups where it is admin).",
		["delete"],
		obj(
			{"chat_id": CHAT, "message_id": integer("Id of the message to delete.")},
			["chat_id", "message_id"],
		),
	),
	method_tool(
		"forwardMessage",
		"forwardMessage",
		"Forward a message from one chat to another.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"from_chat_id": CHAT,
				"message_id": integer("Id of the message in from_chat_id."),
				"message_thread_id": THREAD,
				"disable_notification": SILENT,
			},
			["chat_id", "from_chat_id", "message_id"],
		),
	),
	method_tool(
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
				"allowed_updates": UPDATES,
			}
		),
	),
	method_tool(
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
	method_tool(
		"sendChatAction",
		"sendChatAction",
		"Show a status such as 'typing…' in a chat for about 5 seconds.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
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
				"message_thread_id": THREAD,
			},
			["chat_id", "action"],
		),
	),
	method_tool(
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
	method_tool(
		"sendLocation",
		"sendLocation",
		"Send a point on the map, optionally a live location that can be updated for a period.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
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
				# https://core.telegram.org/bots/api#sendlocation: "between 60 and 86400, or
				# 0x7FFFFFFF for live locations that can be edited indefinitely".
				"live_period": integer(
					"Live location: seconds it can be updated, 60 to 86400, or 2147483647 to "
					"update it indefinitely.",
					anyOf=[{"minimum": 60, "maximum": 86400}, {"const": 0x7FFFFFFF}],
				),
				"heading": integer(
					"Live location: direction of movement in degrees.", minimum=1, maximum=360
				),
				"proximity_alert_radius": integer(
					"Live location: alert distance in meters.", minimum=1, maximum=100000
				),
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "latitude", "longitude"],
		),
	),
	method_tool(
		"sendSticker",
		"sendSticker",
		"Send a sticker (static .WEBP, animated .TGS or video .WEBM) by file_id or HTTPS URL.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"sticker": string("file_id of a sticker on Telegram, or an HTTPS URL of a .WEBP."),
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "sticker"],
		),
	),
	method_tool(
		"sendAnimation",
		"sendAnimation",
		"Send an animation (GIF or H.264/MPEG-4 AVC video without sound) by file_id or HTTPS "
		"URL. To send bytes, use uploadAnimation.",
		["send"],
		obj(
			{
				"chat_id": CHAT,
				"animation": string("file_id of an animation on Telegram, or an HTTPS URL."),
				"caption": CAPTION,
				"parse_mode": PARSE_MODE,
				"has_spoiler": boolean("Cover the animation with a spoiler effect."),
				"message_thread_id": THREAD,
				"reply_parameters": REPLY,
				"disable_notification": SILENT,
			},
			["chat_id", "animation"],
		),
	),
	upload_tool(
		"uploadAnimation",
		"sendAnimation",
		"animation",
		"Upload and send an animation (GIF or soundless MP4) from a file reference (max 50 MB).",
		{"caption": CAPTION, "parse_mode": PARSE_MODE, "message_thread_id": THREAD},
	),
	*CHAT_TOOLS,
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"getMe": [],
		"editMessageReplyMarkup": [],
		"deleteMessage": [],
		"getFile": [],
		"downloadFile": [],
		"sendChatAction": [],
		"getWebhookInfo": [],
		"deleteWebhook": [],
		"getUpdates": ["private", "untrusted"],
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
		# Others' words: a chat's description, bio and pinned message, written by others.
		"getChat": ["private", "untrusted"],
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
