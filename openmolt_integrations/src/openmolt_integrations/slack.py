"""Slack: the Web API (``https://slack.com/api/{method}``) for messages, conversations and files.

Slack's Web API is unversioned; methods are named ``family.method``. Write methods take a JSON body
(the ones slack-sdk sends as JSON) or a form body; read methods are GET with query parameters.
Slack answers HTTP 200 with ``{"ok": false, "error": "..."}`` when a call fails; the API setup's
the ``ok_false`` response check turns that into a tool error carrying the ``error`` code. Files use the current external upload flow
(``files.getUploadURLExternal`` → upload the bytes → ``files.completeUploadExternal``); the old
``files.upload`` method is retired.
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
from openmolt_core.integrations.extensions import error_messages
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	string,
)
from openmolt_integrations._slack import (
	BLOCKS,
	CHANNEL,
	CHANNEL_TOOLS,
	CURSOR,
	OK,
	THREAD_TS,
	TS,
	get_tool,
	post_form,
	post_json,
)

__all__ = ["INTEGRATION", "ok_false", "register_integrations"]

_SCOPES = [
	"chat:write",
	"chat:write.public",
	"channels:read",
	"channels:history",
	"groups:read",
	"groups:history",
	"im:read",
	"im:write",
	"im:history",
	"mpim:read",
	"mpim:history",
	"users:read",
	"users:read.email",
	"reactions:write",
	"files:write",
	"channels:manage",
	"groups:write",
	"channels:join",
]
# search.messages works only with a user token: its scope is requested as a user scope.
_USER_SCOPES = ["search:read"]

_DOCS = """\
## Get a token

Slack tools act as a Slack app. Create one at <https://api.slack.com/apps> ("Create New App", "From
scratch"), open **OAuth & Permissions** and add these **Bot Token Scopes**: `chat:write`,
`chat:write.public`, `channels:read`, `channels:history`, `groups:read`, `groups:history`,
`im:read`, `im:write`, `im:history`, `mpim:read`, `mpim:history`, `users:read`,
`users:read.email`, `reactions:write`, `files:write`, `channels:manage`,
`groups:write`, `channels:join` (the last three for creating, renaming, archiving and joining
channels, inviting and removing members, and setting topics and purposes). A bot reads a public
channel's history only once it is a member: `joinChannel` joins it. Click **Install to Workspace**
and copy the **Bot User OAuth Token** (`xoxb-…`). Invite the bot to private channels
(`/invite @yourbot`); public channels work through `chat:write.public`.

```python
om = OpenMolt(integrations={"slack": {"token": "xoxb-..."}})
agent = om.create_agent(..., integrations=["slack"])
```

The token is also read from the `botToken` key (`OPENMOLT_SLACK_BOT_TOKEN` in the environment).

A user token (`xoxp-…`, **User Token Scopes**) acts as the person who installed the app instead.
`searchMessages` (search.messages) works only with a user token that has the `search:read` user
scope; Slack refuses it for bot tokens. `getPermalink` needs no scope.

**OAuth v2 with token rotation.** For an app installed by others, send users to
`https://slack.com/oauth/v2/authorize?client_id=…&scope=chat:write,channels:read,…&user_scope=search:read&redirect_uri=…`
(the `oauth2` credential asks for `search:read` as a user scope),
exchange the `code` at `https://slack.com/api/oauth.v2.access`, and enable token rotation to get a
`refresh_token` (tokens then expire after 12 hours). Configure the `oauth2` credential with
`clientId`, `clientSecret`, `refreshToken` (and the current `accessToken`, `expiryDate`); OpenMolt
refreshes the token and calls `onTokenRefresh` with the new config.

Rate limits: each method has a tier (chat.postMessage about one message per second per channel);
Slack answers 429 with `Retry-After`, which OpenMolt honours. Since 2025-05-29, commercially
distributed apps that are not in the Slack Marketplace get 1 request a minute and 15 messages per
page on `conversations.history` and `conversations.replies`; internal apps are not limited.
"""

_MESSAGE_FIELDS = {
	"channel": CHANNEL,
	"text": string("Message text (Slack mrkdwn). Required unless `blocks` is given."),
	"blocks": BLOCKS,
	"thread_ts": THREAD_TS,
	"reply_broadcast": boolean(
		"With thread_ts: also show the reply in the channel.", default=False
	),
	"unfurl_links": boolean("Expand previews of links to web pages."),
	"unfurl_media": boolean("Expand previews of media links."),
	"mrkdwn": boolean("Whether `text` uses Slack mrkdwn formatting.", default=True),
}

_TOOLS = [
	post_json(
		"postMessage",
		"chat.postMessage",
		"Post a message to a channel, a direct message or a thread (chat.postMessage). "
		"Returns `ts`, the message id used to update, delete, react or reply.",
		["write"],
		obj(_MESSAGE_FIELDS, ["channel"]),
	),
	post_json(
		"updateMessage",
		"chat.update",
		"Edit a message the token posted (chat.update).",
		["write"],
		obj(
			{
				"channel": CHANNEL,
				"ts": TS,
				"text": string("New text."),
				"blocks": BLOCKS,
				"reply_broadcast": boolean("Broadcast an existing thread reply to the channel."),
			},
			["channel", "ts"],
		),
	),
	post_form(
		"deleteMessage",
		"chat.delete",
		"Delete a message (chat.delete). Bot tokens can delete only the bot's own messages.",
		["write"],
		obj({"channel": CHANNEL, "ts": TS}, ["channel", "ts"]),
	),
	post_json(
		"scheduleMessage",
		"chat.scheduleMessage",
		"Schedule a message for later (chat.scheduleMessage), up to 120 days ahead. "
		"Returns `scheduled_message_id`.",
		["write"],
		obj(
			{
				"channel": CHANNEL,
				"post_at": integer("When to post, as a Unix timestamp in seconds (in the future)."),
				"text": string("Message text. Required unless `blocks` is given."),
				"blocks": BLOCKS,
				"thread_ts": THREAD_TS,
				"reply_broadcast": boolean("With thread_ts: also show the reply in the channel."),
			},
			["channel", "post_at"],
		),
	),
	post_form(
		"listScheduledMessages",
		"chat.scheduledMessages.list",
		"List the messages the token scheduled that are not posted yet "
		"(chat.scheduledMessages.list): each `id`, `channel_id`, `post_at` and `text`; follow "
		"`response_metadata.next_cursor`.",
		["read"],
		obj(
			{
				"channel": string("Only this conversation's scheduled messages (C…)."),
				"oldest": string("Only messages to be posted at or after this Unix time."),
				"latest": string("Only messages to be posted before this Unix time."),
				"limit": integer("Messages per page.", minimum=1),
				"cursor": CURSOR,
				"team_id": string("Workspace id (T…); needed only with an org-wide token."),
			}
		),
	),
	post_form(
		"deleteScheduledMessage",
		"chat.deleteScheduledMessage",
		"Cancel a scheduled message before it is posted (chat.deleteScheduledMessage); Slack "
		"refuses within 60 seconds of its post_at.",
		["write"],
		obj(
			{
				"channel": CHANNEL,
				"scheduled_message_id": string(
					"The `scheduled_message_id` from scheduleMessage (or an `id` from "
					"listScheduledMessages), e.g. Q1298393284."
				),
			},
			["channel", "scheduled_message_id"],
		),
	),
	post_json(
		"postEphemeral",
		"chat.postEphemeral",
		"Show a message to one user in a channel, visible only to them and not stored "
		"(chat.postEphemeral).",
		["write"],
		obj(
			{
				"channel": CHANNEL,
				"user": string("Id of the user who sees the message (U…); must be in the channel."),
				"text": string("Message text. Required unless `blocks` is given."),
				"blocks": BLOCKS,
				"thread_ts": THREAD_TS,
			},
			["channel", "user"],
		),
	),
	HttpTool(
		handle="listConversations",
		description="List channels and conversations the token can see (conversations.list), "
		"one page at a time; follow `response_metadata.next_cursor`.",
		scopes=["read"],
		method="GET",
		endpoint="/conversations.list",
		query_params=passthrough(
			"cursor",
			types="{{ input.types | join: ',' }}",
			exclude_archived='{{ input["exclude_archived"] | default: true, allow_false: true }}',
			limit='{{ input["limit"] | default: 200 }}',
		),
		input_schema=obj(
			{
				"types": array(
					string(enum=["public_channel", "private_channel", "mpim", "im"]),
					"Conversation types to include.",
					default=["public_channel"],
				),
				"exclude_archived": boolean("Leave out archived channels.", default=True),
				"limit": integer("Page size.", minimum=1, maximum=1000, default=200),
				"cursor": CURSOR,
			}
		),
		output_schema=OK,
	),
	get_tool(
		"getConversationHistory",
		"conversations.history",
		"Read a channel's messages, newest first (conversations.history). Thread replies are "
		"not included: use getThreadReplies with a message's `ts`.",
		["read"],
		obj(
			{
				"channel": CHANNEL,
				"oldest": string("Only messages after this `ts` (Unix time with microseconds)."),
				"latest": string("Only messages before this `ts`."),
				"inclusive": boolean("Include messages exactly at `oldest`/`latest`."),
				"limit": integer("Messages per page.", minimum=1, maximum=999, default=100),
				"cursor": CURSOR,
			},
			["channel"],
		),
	),
	get_tool(
		"getThreadReplies",
		"conversations.replies",
		"Read a thread: the parent message and its replies (conversations.replies).",
		["read"],
		obj(
			{
				"channel": CHANNEL,
				"ts": string("`ts` of the thread's parent message."),
				"oldest": string("Only replies after this `ts`."),
				"latest": string("Only replies before this `ts`."),
				"limit": integer("Messages per page.", minimum=1, maximum=1000, default=100),
				"cursor": CURSOR,
			},
			["channel", "ts"],
		),
	),
	get_tool(
		"getConversationInfo",
		"conversations.info",
		"Get a conversation's details: name, topic, purpose, membership (conversations.info).",
		["read"],
		obj(
			{
				"channel": CHANNEL,
				"include_num_members": boolean("Also return the member count."),
			},
			["channel"],
		),
	),
	post_form(
		"openConversation",
		"conversations.open",
		"Open (or resume) a direct message or a group DM with 1 to 8 users "
		"(conversations.open); post to the returned `channel.id`.",
		["write"],
		obj(
			{
				"users": array(string(), "User ids (U…) to talk to.", minItems=1, maxItems=8),
				"return_im": boolean("Return the full DM channel object."),
			},
			["users"],
		),
		passthrough("return_im", users="{{ input.users | join: ',' }}"),
	),
	get_tool(
		"listUsers",
		"users.list",
		"List the workspace's members, one page at a time (users.list).",
		["read"],
		obj(
			{
				"limit": integer("Users per page.", minimum=1, maximum=1000, default=200),
				"cursor": CURSOR,
				"include_locale": boolean("Include each user's locale."),
			}
		),
	),
	get_tool(
		"getUserInfo",
		"users.info",
		"Get one user's profile: name, display name, time zone, title (users.info).",
		["read"],
		obj(
			{
				"user": string("User id (U…)."),
				"include_locale": boolean("Include the user's locale."),
			},
			["user"],
		),
	),
	get_tool(
		"lookupUserByEmail",
		"users.lookupByEmail",
		"Find a user by email address (users.lookupByEmail; needs users:read.email).",
		["read"],
		obj({"email": string("Email address.", format="email")}, ["email"]),
	),
	post_form(
		"addReaction",
		"reactions.add",
		"Add an emoji reaction to a message (reactions.add).",
		["write"],
		obj(
			{
				"channel": CHANNEL,
				"timestamp": string("`ts` of the message to react to."),
				"name": string("Emoji name without colons, e.g. thumbsup or white_check_mark."),
			},
			["channel", "timestamp", "name"],
		),
	),
	post_form(
		"getUploadUrl",
		"files.getUploadURLExternal",
		"Step 1 of 3 to share a file: reserve an upload (files.getUploadURLExternal). Returns "
		"`upload_url` and `file_id`. Then call uploadFileBytes, then completeUpload.",
		["files"],
		obj(
			{
				"filename": string("File name with extension, e.g. report.pdf."),
				"length": integer("File size in bytes.", minimum=1),
				"alt_txt": string("Description of an image, for screen readers."),
				"snippet_type": string("Syntax type for a text snippet, e.g. python."),
			},
			["filename", "length"],
		),
	),
	HttpTool(
		handle="uploadFileBytes",
		description="Step 2 of 3: send the file's bytes to the `upload_url` returned by "
		"getUploadUrl. Answers `OK` as text.",
		scopes=["files"],
		method="POST",
		base_url="{{ input.upload_url }}",
		input_origins=["https://files.slack.com"],
		endpoint="",
		request_format="binary",
		response_format="text",
		body="{{ input.file }}",
		input_schema=obj(
			{
				"upload_url": string(
					"The `upload_url` from getUploadUrl.", pattern="^https://files\\.slack\\.com/"
				),
				"file": string(
					"File reference of the bytes: openmolt-file:<id>, data:<type>;base64,<data> "
					"or fileSystem:<path>."
				),
			},
			["upload_url", "file"],
		),
	),
	post_form(
		"completeUpload",
		"files.completeUploadExternal",
		"Step 3 of 3: finish the upload and share the file in a channel or thread "
		"(files.completeUploadExternal). Without channel_id the file stays private.",
		["files"],
		obj(
			{
				"files": array(
					obj(
						{
							"id": string("`file_id` from getUploadUrl."),
							"title": string("Title shown in Slack."),
						},
						["id"],
					),
					"The uploaded files.",
					minItems=1,
				),
				"channel_id": string("Conversation id to share the files in."),
				"initial_comment": string("Message text posted with the files."),
				"thread_ts": THREAD_TS,
			},
			["files"],
		),
		passthrough("channel_id", "initial_comment", "thread_ts", files="{{ input.files | json }}"),
	),
	get_tool(
		"searchMessages",
		"search.messages",
		"Search the workspace's messages with Slack's search syntax (in:#channel, from:@user, "
		"before:2026-01-31, has:link). Needs a user token with search:read; bot tokens are refused.",
		["read"],
		obj(
			{
				"query": string("Search query, e.g. `deploy in:#ops from:@ada`.", minLength=1),
				"count": integer("Results per page.", minimum=1, maximum=100, default=20),
				"page": integer("Page number, from 1.", minimum=1, maximum=100),
				"cursor": string(
					"Cursor paging: `*` for the first page, then `response_metadata.next_cursor`."
				),
				"sort": string("Sort by relevance (score) or time.", enum=["score", "timestamp"]),
				"sort_dir": string("Sort direction.", enum=["asc", "desc"]),
				"highlight": boolean("Mark the matching words in the results."),
				"team_id": string("Workspace id (T…); needed only with an org-wide token."),
			},
			["query"],
		),
	),
	get_tool(
		"getPermalink",
		"chat.getPermalink",
		"Get a message's permanent link, e.g. https://acme.slack.com/archives/C…/p… "
		"(chat.getPermalink).",
		["read"],
		obj(
			{"channel": CHANNEL, "message_ts": string("`ts` of the message.")},
			["channel", "message_ts"],
		),
	),
	*CHANNEL_TOOLS,
]


def ok_false(value: Any) -> str | None:
	"""Slack's failure inside a 200: ``"ok": false``, with ``error`` and the response messages.

	The integration's response check (https://api.slack.com/web#evaluating_responses).

	Args:
		value: The decoded reply.
	"""
	if not isinstance(value, dict) or value.get("ok") is not False:
		return None
	parts = error_messages(value.get("error")) or ["ok is false"]
	meta = value.get("response_metadata")
	if isinstance(meta, dict):
		parts += error_messages(meta.get("messages"))
	return "; ".join(parts)


INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"deleteMessage": [],
		"openConversation": [],
		"addReaction": [],
		"getUploadUrl": [],
		"uploadFileBytes": [],
		"getConversationHistory": ["private", "untrusted"],
		"getThreadReplies": ["private", "untrusted"],
		"postMessage": ["outbound"],
		"updateMessage": ["outbound"],
		"scheduleMessage": ["outbound"],
		"postEphemeral": ["outbound"],
		"completeUpload": ["outbound"],
		"createChannel": ["outbound"],
		"renameChannel": ["outbound"],
		"archiveChannel": ["outbound"],
		"inviteToChannel": ["outbound"],
		"removeFromChannel": ["outbound"],
		"setChannelTopic": ["outbound"],
		"setChannelPurpose": ["outbound"],
		# Joining shows the bot in the channel, and carries no data out.
		"joinChannel": [],
		"deleteScheduledMessage": [],
		# Texts the token scheduled: another run (or the app's user) may have written them from
		# what someone else said.
		"listScheduledMessages": ["private", "untrusted"],
		"listChannelMembers": ["private"],
		"searchMessages": ["private", "untrusted"],
		"getPermalink": ["private"],
		# Others' words: channel topics and purposes any member writes.
		"listConversations": ["untrusted"],
		"getConversationInfo": ["untrusted"],
		# Others' words: profiles (title, status text, names) each member writes.
		"listUsers": ["private", "untrusted"],
		"getUserInfo": ["private", "untrusted"],
		"lookupUserByEmail": ["private", "untrusted"],
	},
	name="Slack",
	description="Send, edit, schedule, read and search Slack messages; manage channels and "
	"their members; users, reactions, permalinks and file uploads.",
	api_version="Web API (unversioned, 2026)",
	api_setup=ApiSetup(base_url="https://slack.com/api"),
	response_checks=[ok_false],
	credential_setup=[
		# The bot token (xoxb-...): OPENMOLT_SLACK_TOKEN, or OPENMOLT_SLACK_BOT_TOKEN (the name
		# Slack gives it, and Discord's and Telegram's key).
		BearerCredential(
			type="bearer",
			headers={"Authorization": "Bearer {{ config.token | default: config.botToken }}"},
		),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://slack.com/oauth/v2/authorize",
			token_url="https://slack.com/api/oauth.v2.access",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=_SCOPES,
			scope_separator=",",
			auth_params={"user_scope": ",".join(_USER_SCOPES)},
			# Slack's OAuth v2: comma-separated bot scopes, the client secret at oauth.v2.access,
			# no PKCE for apps with a secret, and redirect URLs that must be https (even localhost).
			pkce="unsupported",
			client_secret_required=True,
			https_redirect=True,
			scope_map={
				"read": [
					"channels:read",
					"channels:history",
					"groups:read",
					"groups:history",
					"im:read",
					"im:history",
					"mpim:read",
					"mpim:history",
					"users:read",
					"users:read.email",
				],
				"write": ["chat:write", "chat:write.public", "im:write", "reactions:write"],
				"files": ["files:write"],
				"manage": ["channels:manage", "groups:write", "channels:join"],
			},
		),
	],
	scopes={
		"read": "Read and search conversations, messages, threads, members and users; get "
		"permalinks.",
		"write": "Post, edit, schedule and delete messages, cancel scheduled ones, open DMs and "
		"add reactions.",
		"files": "Upload files and share them in conversations.",
		"manage": "Create, rename, archive and join channels, invite and remove members, set "
		"topics and purposes.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Slack integration."""
	register(INTEGRATION)
