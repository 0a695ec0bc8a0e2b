"""Discord: the HTTP API v10 for messages, channels, threads, reactions and embeds.

Requests carry ``Authorization: Bot <token>``. Discord rate-limits per route bucket and answers 429
with ``Retry-After`` and ``X-RateLimit-*`` headers; the engine waits and retries.

Input schemas carry the constraints of Discord's OpenAPI document (``discord/discord-api-spec``,
API v10): snowflake ids are ``SnowflakeType`` (``pattern ^(0|[1-9][0-9]*)$``), embed URLs are
``format: uri`` with ``maxLength 2048``, and text and list limits are the spec's, so the model gets
our validation message instead of Discord's 400. Each constraint is written once below
(`SNOWFLAKE` in `_discord`, `_url`, ...) and reused wherever the spec uses the same schema.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	string,
)
from openmolt_integrations._discord import CHANNEL, GUILD, GUILD_TOOLS, SNOWFLAKE

__all__ = ["INTEGRATION", "register_integrations"]

_MESSAGE = string("Message id (a snowflake).", **SNOWFLAKE)


def _ids(description: str, **extra: Any) -> dict[str, Any]:
	"""An array of snowflakes (``items: SnowflakeType``)."""
	return array(string("A snowflake id.", **SNOWFLAKE), description, **extra)


# The engine's validator treats ``format`` as an annotation, so a URI's shape (a scheme, then no
# whitespace: RFC 3986) is also written as a pattern, which it enforces.
_URI_PATTERN = r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$"


def _url(description: str) -> dict[str, Any]:
	"""An embed URL: the spec's ``format: uri`` with ``maxLength: 2048``."""
	return string(description, format="uri", maxLength=2048, pattern=_URI_PATTERN)


_EMBED = obj(
	{
		"title": string("Title, up to 256 characters.", maxLength=256),
		"description": string("Body text (Markdown), up to 4096 characters.", maxLength=4096),
		"url": _url("Link opened by the title."),
		"color": integer(
			"Side colour as an integer, e.g. 5814783 for 0x58B9FF.", minimum=0, maximum=16777215
		),
		"timestamp": string("ISO 8601 time shown in the footer.", format="date-time"),
		"author": obj(
			{
				"name": string("Author name.", maxLength=256),
				"url": _url("Author link."),
				"icon_url": _url("Author icon URL."),
			},
			["name"],
			description="Author line at the top.",
		),
		"footer": obj(
			{
				"text": string("Footer text.", maxLength=2048),
				"icon_url": _url("Footer icon URL."),
			},
			["text"],
			description="Footer line.",
		),
		"image": obj(
			{"url": _url("Image URL (https or attachment://name).")},
			["url"],
			description="Large image.",
		),
		"thumbnail": obj(
			{"url": _url("Thumbnail URL.")}, ["url"], description="Small image at the top right."
		),
		"fields": array(
			obj(
				{
					"name": string("Field name.", maxLength=256),
					"value": string("Field value.", maxLength=1024),
					"inline": boolean("Show next to other inline fields."),
				},
				["name", "value"],
			),
			"Up to 25 name/value fields.",
			maxItems=25,
		),
	},
	description="A rich embed.",
)
_EMBEDS = array(_EMBED, "Up to 10 rich embeds.", maxItems=10)
_ALLOWED_MENTIONS = obj(
	{
		"parse": array(
			string(enum=["roles", "users", "everyone"]),
			"Mention types to ping.",
			uniqueItems=True,
			maxItems=3,
		),
		"users": _ids("User ids that may be pinged.", maxItems=100, uniqueItems=True),
		"roles": _ids("Role ids that may be pinged.", maxItems=100, uniqueItems=True),
		"replied_user": boolean("Ping the author of the replied-to message."),
	},
	description='Which mentions in the content notify people. Use {"parse": []} to ping nobody.',
)
# The spec's content limit (maxLength 4000); Discord documents 2000 for bots without Nitro.
_CONTENT = string("Message text (Markdown), up to 2000 characters.", maxLength=4000)
_ARCHIVE = integer(
	"Minutes of inactivity before the thread is archived.", enum=[60, 1440, 4320, 10080]
)

_NONCE = "{{ call.idempotency_key | remove: '-' | slice: 0, 25 }}"
"""The call's idempotency key as a message nonce: its first 25 hex digits (Discord's limit)."""

_DOCS = """\
## Get a token

1. Open the [Discord Developer Portal](https://discord.com/developers/applications), click
   **New Application**, then **Bot** → **Reset Token**, and copy the bot token.
2. Under **Bot**, enable the **Message Content Intent** if the agent must read message text.
3. Invite the bot: **OAuth2** → **URL Generator**, tick the `bot` scope and the permissions Send
   Messages, Send Messages in Threads, Create Public Threads, Read Message History, Add
   Reactions, Embed Links, Attach Files, Manage Messages (for pins), Manage Channels (create,
   edit and delete channels) and Manage Roles (add and remove roles; only roles below the bot's
   own), then open the URL and pick the server.
4. For `listGuildMembers`, enable the **Server Members Intent** under **Bot** (a privileged
   intent).

```python
om = OpenMolt(integrations={"discord": {"botToken": "MTA..."}})
```

Requests are sent as `Authorization: Bot <token>` to `https://discord.com/api/v10`. Ids (servers,
channels, messages) are snowflakes: enable **Developer Mode** in Discord's settings and use
"Copy ID".

The `oauth2` credential (authorization URL `https://discord.com/oauth2/authorize`, token URL
`https://discord.com/api/oauth2/token`) gives a user's Bearer token for the tools about that user
(`listMyGuilds`); posting and moderating need the bot token.

## Reference checks

Discord's OpenAPI document ([discord/discord-api-spec](https://github.com/discord/discord-api-spec),
API v10) is checked by the test suite through the npm package `discord-api-spec` (generated from
it; its version is the spec's build number): every tool's method, path and path parameter names,
query and body names, and every `format`, `pattern`, length, item-count and range constraint the
spec sets on a body field, and the snowflake pattern on path and query ids. Not checkable there:
the ranges of query parameters (`limit` 1-100 for messages, 1-200 for guilds), which the
package's TypeScript types drop; the tools take them from the same spec's documentation.
"""

_TOOLS = [
	HttpTool(
		handle="sendMessage",
		description="Send a message to a channel or thread, with optional embeds, or as a reply "
		"(message_reference). At least one of content or embeds is required.",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/messages",
		body=passthrough(
			"content",
			"embeds",
			"tts",
			"allowed_mentions",
			"message_reference",
			"sticker_ids",
			# The call's key as the message nonce (Discord takes up to 25 characters) with
			# enforce_nonce: a retry within Discord's few minutes returns the message already
			# created instead of posting it twice.
			nonce=_NONCE,
		)
		| {"enforce_nonce": True},
		# The nonce is checked only for a few minutes: a durable run replaying the call later
		# would post again, so a call in doubt still asks.
		in_doubt="ask",
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				"content": _CONTENT,
				"embeds": _EMBEDS,
				"tts": boolean("Send as text-to-speech.", default=False),
				"allowed_mentions": _ALLOWED_MENTIONS,
				"message_reference": obj(
					{
						"message_id": _MESSAGE,
						"fail_if_not_exists": boolean("Fail if the replied message was deleted."),
					},
					["message_id"],
					description="Reply to this message.",
				),
				"sticker_ids": _ids("Up to 3 sticker ids.", maxItems=3),
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
		body=passthrough("content"),
		files={"files[0]": "{{ input.file }}"},
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				"content": _CONTENT,
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
		query_params=passthrough(
			"limit",
			"before",
			"after",
			"around",
		),
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				"limit": integer("Messages to return.", minimum=1, maximum=100, default=50),
				"before": string("Messages before this message id (older).", **SNOWFLAKE),
				"after": string("Messages after this message id (newer).", **SNOWFLAKE),
				"around": string("Messages around this message id.", **SNOWFLAKE),
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
			{"channel_id": CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
		),
	),
	HttpTool(
		handle="editMessage",
		description="Edit a message the bot sent: new content and/or embeds.",
		scopes=["write"],
		method="PATCH",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}",
		body=passthrough(
			"content",
			"embeds",
			"allowed_mentions",
		),
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				"message_id": _MESSAGE,
				"content": _CONTENT,
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
			{"channel_id": CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
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
				"channel_id": CHANNEL,
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
				"channel_id": CHANNEL,
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
			{"channel_id": CHANNEL, "message_id": _MESSAGE}, ["channel_id", "message_id"]
		),
	),
	HttpTool(
		handle="createThreadFromMessage",
		description="Start a thread on an existing message; returns the thread channel (send "
		"messages to its id).",
		scopes=["write"],
		method="POST",
		endpoint="/channels/{{ input.channel_id }}/messages/{{ input.message_id }}/threads",
		body=passthrough(
			"name",
			"auto_archive_duration",
			"rate_limit_per_user",
		),
		input_schema=obj(
			{
				"channel_id": CHANNEL,
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
		body=passthrough(
			"name",
			"type",
			"auto_archive_duration",
			"invitable",
			"message",
			"applied_tags",
		),
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				"name": string("Thread name, 1 to 100 characters.", minLength=1, maxLength=100),
				"type": integer(
					"11 = public thread, 12 = private thread (text channels only).", enum=[11, 12]
				),
				"auto_archive_duration": _ARCHIVE,
				"invitable": boolean("Private threads: whether members can invite others."),
				"message": obj(
					{
						"content": _CONTENT,
						"embeds": _EMBEDS,
						"sticker_ids": _ids("Up to 3 sticker ids.", maxItems=3),
					},
					description="Forum/media channels: the starter message.",
				),
				"applied_tags": _ids("Up to 5 forum tag ids to apply.", maxItems=5),
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
		input_schema=obj({"channel_id": CHANNEL}, ["channel_id"]),
	),
	HttpTool(
		handle="getGuild",
		description="Get a server: name, description, owner, roles (ids and names, for "
		"addMemberRole), emojis and, with with_counts, approximate member and online counts.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}",
		query_params=passthrough("with_counts"),
		input_schema=obj(
			{
				"guild_id": GUILD,
				"with_counts": boolean("Include approximate member and presence counts."),
			},
			["guild_id"],
		),
	),
	HttpTool(
		handle="listGuildChannels",
		description="List a server's channels (not threads). type 0 = text, 2 = voice, "
		"4 = category, 5 = announcement, 15 = forum.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/channels",
		input_schema=obj({"guild_id": GUILD}, ["guild_id"]),
	),
	HttpTool(
		handle="listActiveThreads",
		description="List a server's active threads the bot can see.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/threads/active",
		input_schema=obj({"guild_id": GUILD}, ["guild_id"]),
	),
	HttpTool(
		handle="searchGuildMembers",
		description="Find server members whose username or nickname starts with a string.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/members/search",
		query_params=passthrough("query", limit='{{ input["limit"] | default: 10 }}'),
		input_schema=obj(
			{
				"guild_id": GUILD,
				"query": string("Start of the username or nickname.", minLength=1, maxLength=100),
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
		body=passthrough("recipient_id"),
		input_schema=obj(
			{"recipient_id": string("User id (a snowflake).", **SNOWFLAKE)}, ["recipient_id"]
		),
	),
	HttpTool(
		handle="listMyGuilds",
		description="List the servers the bot (or user) is in; page with before/after.",
		scopes=["read"],
		method="GET",
		endpoint="/users/@me/guilds",
		query_params=passthrough(
			"before",
			"after",
			"limit",
			"with_counts",
		),
		input_schema=obj(
			{
				"before": string("Servers before this id.", **SNOWFLAKE),
				"after": string("Servers after this id.", **SNOWFLAKE),
				"limit": integer("Servers to return.", minimum=1, maximum=200, default=200),
				"with_counts": boolean("Include approximate member and presence counts."),
			}
		),
	),
	*GUILD_TOOLS,
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"deleteMessage": [],
		"addReaction": [],
		"removeReaction": [],
		"pinMessage": [],
		"createDm": [],
		"listMyGuilds": [],
		"listMessages": ["private", "untrusted"],
		"getMessage": ["private", "untrusted"],
		"listActiveThreads": ["untrusted"],
		"send*": ["outbound"],
		"editMessage": ["outbound"],
		"createThread*": ["outbound"],
		"createChannel": ["outbound"],
		"updateChannel": ["outbound"],
		"deleteChannel": ["outbound"],
		"addMemberRole": ["outbound"],
		"removeMemberRole": ["outbound"],
		# names and nicknames the members chose
		"listGuildMembers": ["private", "untrusted"],
		# Others' words: topics, descriptions, nicknames and role names others write.
		"getChannel": ["untrusted"],
		"getGuild": ["untrusted"],
		"listGuildChannels": ["untrusted"],
		"searchGuildMembers": ["untrusted"],
	},
	name="Discord",
	description="Send, edit and read Discord messages with embeds, reactions, threads and pins; "
	"create, edit and delete channels; list members and give or take roles.",
	api_version="v10",
	api_setup=ApiSetup(
		base_url="https://discord.com/api/v10",
		headers={"User-Agent": "DiscordBot (https://pypi.org/project/openmolt/, 0.1.0)"},
	),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bot {{ config.botToken }}"}),
		OAuth2Credential(
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
		"manage": "Create, edit and delete channels; give and take members' roles.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Discord integration."""
	register(INTEGRATION)
