"""Discord: the HTTP API v10 for messages, channels, threads, reactions and embeds.

Requests carry ``Authorization: Bot <token>``. Discord rate-limits per route bucket and answers 429
with ``Retry-After`` and ``X-RateLimit-*`` headers; the engine waits and retries.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, Credential, HttpTool, Integration
from openmolt_integrations._msgschema import array, boolean, integer, obj, string

__all__ = ["INTEGRATION", "register_integrations"]

_SNOWFLAKE = {"pattern": "^[0-9]{15,21}$"}
_CHANNEL = string("Channel or thread id (a snowflake, e.g. 1234567890123456789).", **_SNOWFLAKE)
_MESSAGE = string("Message id (a snowflake).", **_SNOWFLAKE)
_GUILD = string("Server (guild) id (a snowflake).", **_SNOWFLAKE)

_EMBED = obj(
	{
		"title": string("Title, up to 256 characters."),
		"description": string("Body text (Markdown), up to 4096 characters."),
		"url": string("Link opened by the title."),
		"color": integer("Side colour as an integer, e.g. 5814783 for 0x58B9FF."),
		"timestamp": string("ISO 8601 time shown in the footer.", format="date-time"),
		"author": obj(
			{
				"name": string("Author name."),
				"url": string("Author link."),
				"icon_url": string("Author icon URL."),
			},
			["name"],
			"Author line at the top.",
		),
		"footer": obj(
			{"text": string("Footer text."), "icon_url": string("Footer icon URL.")},
			["text"],
			"Footer line.",
		),
		"image": obj(
			{"url": string("Image URL (https or attachment://name).")}, ["url"], "Large image."
		),
		"thumbnail": obj(
			{"url": string("Thumbnail URL.")}, ["url"], "Small image at the top right."
		),
		"fields": array(
			"Up to 25 name/value fields.",
			obj(
				{
					"name": string("Field name."),
					"value": string("Field value."),
					"inline": boolean("Show next to other inline fields."),
				},
				["name", "value"],
			),
			maxItems=25,
		),
	},
	description="A rich embed.",
)
_EMBEDS = array("Up to 10 rich embeds.", _EMBED, maxItems=10)
_ALLOWED_MENTIONS = obj(
	{
		"parse": array(
			"Mention types to ping.", {"type": "string", "enum": ["roles", "users", "everyone"]}
		),
		"users": array("User ids that may be pinged.", {"type": "string"}),
		"roles": array("Role ids that may be pinged.", {"type": "string"}),
		"replied_user": boolean("Ping the author of the replied-to message."),
	},
	description='Which mentions in the content notify people. Use {"parse": []} to ping nobody.',
)
_ARCHIVE = integer(
	"Minutes of inactivity before the thread is archived.", enum=[60, 1440, 4320, 10080]
)

_DOCS = """\
## Get a token

1. Open the [Discord Developer Portal](https://discord.com/developers/applications), click
   **New Application**, then **Bot** → **Reset Token**, and copy the bot token.
2. Under **Bot**, enable the **Message Content Intent** if the agent must read message text.
3. Invite the bot: **OAuth2** → **URL Generator**, tick the `bot` scope and the permissions Send
   Messages, Send Messages in Threads, Create Public Threads, Read Message History, Add
   Reactions, Embed Links, Attach Files, Manage Messages (for pins), then open the URL and pick
   the server.

```python
om = OpenMolt(integrations={"discord": {"botToken": "MTA..."}})
```

Requests are sent as `Authorization: Bot <token>` to `https://discord.com/api/v10`. Ids (servers,
channels, messages) are snowflakes: enable **Developer Mode** in Discord's settings and use
"Copy ID".

The `oauth2` credential (authorization URL `https://discord.com/oauth2/authorize`, token URL
`https://discord.com/api/oauth2/token`) gives a user's Bearer token for the tools about that user
(`listMyGuilds`); posting and moderating need the bot token.
"""

_TOOLS = [
	HttpTool(
		handle="sendMessage",
		description="Send a message to a channel or thread, with optional embeds, or as a reply "
		"(message_reference). At least one of content or embeds is required.",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/messages",
		body={
			"content": "{{ input.content }}",
			"embeds": "{{ input.embeds }}",
			"tts": "{{ input.tts }}",
			"allowed_mentions": "{{ input.allowed_mentions }}",
			"message_reference": "{{ input.message_reference }}",
			"sticker_ids": "{{ input.sticker_ids }}",
		},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"content": string(
					"Message text (Markdown), up to 2000 characters.", maxLength=2000
				),
				"embeds": _EMBEDS,
				"tts": boolean("Send as text-to-speech.", default=False),
				"allowed_mentions": _ALLOWED_MENTIONS,
				"message_reference": obj(
					{
						"message_id": _MESSAGE,
						"fail_if_not_exists": boolean("Fail if the replied message was deleted."),
					},
					["message_id"],
					"Reply to this message.",
				),
				"sticker_ids": array("Up to 3 sticker ids.", {"type": "string"}, maxItems=3),
			},
			["channel_id"],
		),
	),
	HttpTool(
		handle="sendMessageWithFile",
		description="Send a message with one file attached (multipart upload), e.g. an image or "
		"a report. For embeds, use sendMessage.",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/messages",
		request_format="multipart",
		body={"content": "{{ input.content }}"},
		files={"files[0]": "{{ input.file }}"},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"content": string("Message text, up to 2000 characters.", maxLength=2000),
				"file": string(
					"File reference: openmolt-file:<id>, data:<type>;base64,<data> or "
					"fileSystem:<path>. Limit 10 MiB without server boosts."
				),
			},
			["channel_id", "file"],
		),
	),
	HttpTool(
		handle="listMessages",
		description="Read a channel's recent messages, newest first. Page with before/after "
		"(message ids); use at most one of before, after, around.",
		scopes=["read"],
		method="GET",
		endpoint="/channels/{{ input.channel_id }}/messages",
		query_params={
			"limit": "{{ input.limit }}",
			"before": "{{ input.before }}",
			"after": "{{ input.after }}",
			"around": "{{ input.around }}",
		},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"limit": integer("Messages to return.", minimum=1, maximum=100, default=50),
				"before": string("Messages before this message id (older)."),
				"after": string("Messages after this message id (newer)."),
				"around": string("Messages around this message id."),
			},
			["channel_id"],
		),
	),
	HttpTool(
		handle="getMessage",
		description="Get one message by id.",
		scopes=["read"],
		method="GET",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}",
		input_schema=obj(
			{"channel_id": _CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
		),
	),
	HttpTool(
		handle="editMessage",
		description="Edit a message the bot sent: new content and/or embeds.",
		scopes=["write"],
		method="PATCH",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}",
		body={
			"content": "{{ input.content }}",
			"embeds": "{{ input.embeds }}",
			"allowed_mentions": "{{ input.allowed_mentions }}",
		},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"message_id": _MESSAGE,
				"content": string("New text, up to 2000 characters."),
				"embeds": _EMBEDS,
				"allowed_mentions": _ALLOWED_MENTIONS,
			},
			["channel_id", "message_id"],
		),
	),
	HttpTool(
		handle="deleteMessage",
		description="Delete a message (others' messages need Manage Messages).",
		scopes=["delete"],
		method="DELETE",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}",
		input_schema=obj(
			{"channel_id": _CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
		),
	),
	HttpTool(
		handle="addReaction",
		description="React to a message with an emoji.",
		scopes=["write"],
		method="PUT",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}/reactions/"
		"{{ input.emoji_name }}/@me",
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"message_id": _MESSAGE,
				"emoji_name": string(
					"A Unicode emoji (👍) or a custom emoji as name:id (party:123456789012345678)."
				),
			},
			["channel_id", "message_id", "emoji_name"],
		),
	),
	HttpTool(
		handle="removeReaction",
		description="Remove the bot's own reaction from a message.",
		scopes=["write"],
		method="DELETE",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}/reactions/"
		"{{ input.emoji_name }}/@me",
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"message_id": _MESSAGE,
				"emoji_name": string("The emoji, as given to addReaction."),
			},
			["channel_id", "message_id", "emoji_name"],
		),
	),
	HttpTool(
		handle="pinMessage",
		description="Pin a message in its channel (needs Pin Messages or Manage Messages).",
		scopes=["write"],
		method="PUT",
		endpoint="/channels/{{ input.channel_id }}/messages/pins/{{ input.message_id }}",
		input_schema=obj(
			{"channel_id": _CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
		),
	),
	HttpTool(
		handle="createThreadFromMessage",
		description="Start a thread on an existing message; returns the thread channel (send "
		"messages to its id).",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}/threads",
		body={
			"name": "{{ input.name }}",
			"auto_archive_duration": "{{ input.auto_archive_duration }}",
			"rate_limit_per_user": "{{ input.rate_limit_per_user }}",
		},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"message_id": _MESSAGE,
				"name": string("Thread name, 1 to 100 characters.", minLength=1, maxLength=100),
				"auto_archive_duration": _ARCHIVE,
				"rate_limit_per_user": integer(
					"Slow mode: seconds between messages per user.", minimum=0, maximum=21600
				),
			},
			["channel_id", "message_id", "name"],
		),
	),
	HttpTool(
		handle="createThread",
		description="Create a thread without a starter message (text channels), or a forum post "
		"(forum channels: give `message`).",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/threads",
		body={
			"name": "{{ input.name }}",
			"type": "{{ input.type }}",
			"auto_archive_duration": "{{ input.auto_archive_duration }}",
			"invitable": "{{ input.invitable }}",
			"message": "{{ input.message }}",
			"applied_tags": "{{ input.applied_tags }}",
		},
		input_schema=obj(
			{
				"channel_id": _CHANNEL,
				"name": string("Thread name, 1 to 100 characters.", minLength=1, maxLength=100),
				"type": integer(
					"11 = public thread, 12 = private thread (text channels only).", enum=[11, 12]
				),
				"auto_archive_duration": _ARCHIVE,
				"invitable": boolean("Private threads: whether members can invite others."),
				"message": obj(
					{"content": string("Text of the first post."), "embeds": _EMBEDS},
					description="Forum/media channels: the starter message.",
				),
				"applied_tags": array("Forum tag ids to apply.", {"type": "string"}),
			},
			["channel_id", "name"],
		),
	),
	HttpTool(
		handle="getChannel",
		description="Get a channel or thread: name, type, topic, parent, guild.",
		scopes=["read"],
		method="GET",
		endpoint="/channels/{{ input.channel_id }}",
		input_schema=obj({"channel_id": _CHANNEL}, ["channel_id"]),
	),
	HttpTool(
		handle="listGuildChannels",
		description="List a server's channels (not threads). type 0 = text, 2 = voice, "
		"4 = category, 5 = announcement, 15 = forum.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/channels",
		input_schema=obj({"guild_id": _GUILD}, ["guild_id"]),
	),
	HttpTool(
		handle="listActiveThreads",
		description="List a server's active threads the bot can see.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/threads/active",
		input_schema=obj({"guild_id": _GUILD}, ["guild_id"]),
	),
	HttpTool(
		handle="searchGuildMembers",
		description="Find server members whose username or nickname starts with a string.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/members/search",
		query_params={"query": "{{ input.query }}", "limit": '{{ input["limit"] | default: 10 }}'},
		input_schema=obj(
			{
				"guild_id": _GUILD,
				"query": string("Start of the username or nickname."),
				"limit": integer("Members to return.", minimum=1, maximum=1000, default=10),
			},
			["guild_id", "query"],
		),
	),
	HttpTool(
		handle="createDm",
		description="Open a direct-message channel with a user; send to the returned `id` with "
		"sendMessage.",
		scopes=["write"],
		method="POST",
		endpoint="/users/@me/channels",
		body={"recipient_id": "{{ input.recipient_id }}"},
		input_schema=obj(
			{"recipient_id": string("User id (a snowflake).", **_SNOWFLAKE)}, ["recipient_id"]
		),
	),
	HttpTool(
		handle="listMyGuilds",
		description="List the servers the bot (or user) is in; page with before/after.",
		scopes=["read"],
		method="GET",
		endpoint="/users/@me/guilds",
		query_params={
			"before": "{{ input.before }}",
			"after": "{{ input.after }}",
			"limit": "{{ input.limit }}",
			"with_counts": "{{ input.with_counts }}",
		},
		input_schema=obj(
			{
				"before": string("Servers before this id."),
				"after": string("Servers after this id."),
				"limit": integer("Servers to return.", minimum=1, maximum=200, default=200),
				"with_counts": boolean("Include approximate member and presence counts."),
			}
		),
	),
]

INTEGRATION = Integration(
	name="Discord",
	description="Send, edit and read Discord messages with embeds, reactions, threads and pins.",
	api_version="v10",
	api_setup=ApiSetup(
		base_url="https://discord.com/api/v10",
		headers={"User-Agent": "DiscordBot (https://pypi.org/project/openmolt/, 0.1.0)"},
	),
	credential_setup=[
		Credential(type="bearer", headers={"Authorization": "Bot {{ config.botToken }}"}),
		Credential(
			type="oauth2",
			auth_url="https://discord.com/oauth2/authorize",
			token_url="https://discord.com/api/oauth2/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=["identify", "guilds", "guilds.members.read"],
		),
	],
	scopes={
		"read": "Read channels, threads, messages, servers and members.",
		"write": "Send and edit messages, react, pin, open DMs and create threads.",
		"delete": "Delete messages.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Discord integration."""
	register(INTEGRATION)
