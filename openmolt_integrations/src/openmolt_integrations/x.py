"""X (formerly Twitter): API v2 for posts, search, users, timelines, likes, bookmarks, DMs and media.

Tools act as the user who authorised the app (OAuth 2.0 authorization code with PKCE; the
``offline.access`` scope yields a refresh token). Responses are minimal unless fields are asked
for (``post.fields``, ``user.fields``, ``expansions``); lists page with ``meta.next_token``.
Media is uploaded through the v2 endpoints (``/2/media/upload``); the v1.1 upload is gone.
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
from openmolt_integrations._x import (
	DM_EVENT_FIELD_VALUES,
	DM_EVENT_TYPE_VALUES,
	DM_EXPANSION_VALUES,
)
from openmolt_integrations._x_inputs import (
	DM_PAGINATION,
	ID_PATTERN,
	LIST,
	PAGINATION,
	POST_ID,
	POST_QUERY,
	POST_QUERY_SCHEMA,
	TIME,
	TIMELINE_QUERY,
	TIMELINE_SCHEMA,
	USER_FIELDS,
	USER_ID,
	joined,
)
from openmolt_integrations._x_network import NETWORK_TOOLS

__all__ = ["INTEGRATION", "register_integrations"]

_MEDIA_CATEGORIES = [
	"tweet_image",
	"tweet_gif",
	"tweet_video",
	"amplify_video",
	"dm_image",
	"dm_gif",
	"dm_video",
	"subtitles",
]
# A chunked upload takes every category; the one-request upload all but amplify_video.
_MEDIA_CATEGORY = string("What the media is for.", enum=_MEDIA_CATEGORIES)
_SIMPLE_MEDIA_CATEGORY = string(
	"What the media is for.", enum=[c for c in _MEDIA_CATEGORIES if c != "amplify_video"]
)
_FILE = string(
	"File reference: openmolt-file:<id>, data:<type>;base64,<data> or fileSystem:<path>."
)

_SCOPES = [
	"tweet.read",
	"tweet.write",
	"users.read",
	"like.read",
	"like.write",
	"media.write",
	"dm.read",
	"dm.write",
	"follows.read",
	"follows.write",
	"bookmark.read",
	"bookmark.write",
	"tweet.moderate.write",
	"offline.access",
]
_READ = ["tweet.read", "users.read"]
# Each tool scope's OAuth 2.0 scopes: those X's OpenAPI (2.167) requires of its tools'
# operations, so a read-only agent is not asked to let OpenMolt post, send DMs or bookmark.
# offline.access (the refresh token) is in no entry: it is asked always.
_SCOPE_MAP = {
	"read": [*_READ, "follows.read", "like.read"],
	"write": [*_READ, "tweet.write"],
	"engage": [*_READ, "tweet.write", "like.write", "follows.write"],
	"bookmarks": [*_READ, "bookmark.read", "bookmark.write"],
	"moderate": [*_READ, "tweet.moderate.write"],
	"dm": [*_READ, "dm.read", "dm.write"],
	"media": ["media.write"],
}
_DM_FIELDS = array(
	string(enum=DM_EVENT_FIELD_VALUES),
	"Extra DM event fields, e.g. created_at, dm_conversation_id; the sender comes with the "
	"sender_id expansion.",
	**LIST,
)
_DM_EXPANSIONS = array(
	string(enum=DM_EXPANSION_VALUES),
	"Objects to include in `includes`, e.g. sender_id (the sender's user object).",
	**LIST,
)
_DM_EVENT_TYPES = array(
	string(enum=DM_EVENT_TYPE_VALUES), "Event types to return; default all.", **LIST
)
_DM_QUERY = {
	**passthrough("max_results", "pagination_token"),
	**joined("event_types", "dm_event.fields", "expansions", "user.fields"),
}
_DM_QUERY_SCHEMA = {
	"max_results": integer("Events per page.", minimum=1, maximum=100, default=100),
	"pagination_token": DM_PAGINATION,
	"event_types": _DM_EVENT_TYPES,
	"dm_event_fields": _DM_FIELDS,
	"expansions": _DM_EXPANSIONS,
	"user_fields": USER_FIELDS,
}
# X's CreateDirectMessages…Request: at least one of text and attachments, neither required alone.
_DM_MESSAGE = {
	"text": string(
		"Message text, up to 10000 characters. Required unless `attachments` is given.",
		minLength=1,
		maxLength=10000,
	),
	"attachments": array(
		obj(
			{
				"media_id": string(
					"Media id from uploadMedia (dm_image, dm_gif, dm_video).", **ID_PATTERN
				)
			},
			["media_id"],
		),
		"One media attachment. Required unless `text` is given.",
		maxItems=1,
	),
}

_DOCS = """\
## Get a token

1. In the [X Developer Console](https://console.x.com), create a project and an app.
2. In the app's **User authentication settings**, enable **OAuth 2.0**, type **Web App**
   (confidential client), and add your callback URL. Copy the **Client ID** and **Client Secret**.
3. Authorise a user with PKCE: send them to
   `https://x.com/i/oauth2/authorize?response_type=code&client_id=…&redirect_uri=…&scope={scopes}&state=…&code_challenge=…&code_challenge_method=S256`,
   then POST the `code` and `code_verifier` to `https://api.x.com/2/oauth2/token`
   (`grant_type=authorization_code`, HTTP Basic auth with the client id and secret). Keep the
   `refresh_token` (from `offline.access`).

```python
agent = om.create_agent(..., integrations=[{"integration": "x", "credential": {
    "type": "oauth2",
    "config": {"clientId": "...", "clientSecret": "...", "refreshToken": "...", "accessToken": "..."},
    "onTokenRefresh": save_tokens,
}}])
```

Access tokens last two hours and refresh tokens are single-use: store the new config that
`onTokenRefresh` receives. An app-only Bearer token (`bearer` credential, `bearerToken`) can read
public posts and users but cannot post, like, follow, upload, read likes or bookmarks, or touch
direct messages. Direct messages need `dm.read` and `dm.write`, following `follows.write`,
followers and followings `follows.read`, bookmarks `bookmark.read` and `bookmark.write`, hiding
replies `tweet.moderate.write` (each with `tweet.read` and `users.read`); `openmolt auth x
--scopes read` asks only for what the agent's tool scopes need. Rate limits are per
endpoint per 15 minutes; 429 answers carry `x-rate-limit-reset`, which OpenMolt honours.
""".replace("{scopes}", "%20".join(_SCOPES))

_TOOLS = [
	HttpTool(
		handle="createPost",
		description="Publish a post: text, optionally a reply, a quote, media (media_ids from an "
		"upload) or a poll.",
		scopes=["write"],
		method="POST",
		endpoint="/2/tweets",
		body=passthrough(
			"text",
			"reply",
			"quote_tweet_id",
			"media",
			"poll",
			"reply_settings",
			"made_with_ai",
		),
		input_schema=obj(
			{
				"text": string("Post text, up to 280 characters for most accounts."),
				"reply": obj(
					{"in_reply_to_tweet_id": POST_ID},
					["in_reply_to_tweet_id"],
					description="Post as a reply to this post.",
				),
				"quote_tweet_id": string("Quote this post.", **ID_PATTERN),
				"media": obj(
					{
						"media_ids": array(
							string(**ID_PATTERN),
							"1 to 4 media ids from the upload tools.",
							minItems=1,
							maxItems=4,
						)
					},
					["media_ids"],
					description="Attached media.",
				),
				"poll": obj(
					{
						"options": array(
							string(minLength=1, maxLength=25),
							"2 to 4 choices, 1-25 characters each.",
							minItems=2,
							maxItems=4,
						),
						"duration_minutes": integer(
							"Poll length in minutes.", minimum=5, maximum=10080
						),
					},
					["options", "duration_minutes"],
					description="A poll (not with media).",
				),
				"reply_settings": string(
					"Who can reply.",
					enum=["following", "mentionedUsers", "subscribers", "verified"],
				),
				"made_with_ai": boolean("Label the post as made with AI."),
			},
		),
	),
	HttpTool(
		handle="deletePost",
		description="Delete one of the user's posts.",
		scopes=["write"],
		method="DELETE",
		endpoint="/2/tweets/{{ input.id }}",
		input_schema=obj({"id": POST_ID}, ["id"]),
	),
	HttpTool(
		handle="getPost",
		description="Get a post by id, with optional fields and expansions.",
		scopes=["read"],
		method="GET",
		endpoint="/2/tweets/{{ input.id }}",
		query_params=POST_QUERY,
		input_schema=obj({"id": POST_ID, **POST_QUERY_SCHEMA}, ["id"]),
	),
	HttpTool(
		handle="searchRecent",
		description="Search posts from the last 7 days with X's query syntax (from:user, "
		'#tag, "exact phrase", -is:retweet, has:media, lang:en).',
		scopes=["read"],
		method="GET",
		endpoint="/2/tweets/search/recent",
		query_params={
			**passthrough(
				"query", "max_results", "next_token", "start_time", "end_time", "sort_order"
			),
			**POST_QUERY,
		},
		input_schema=obj(
			{
				"query": string(
					"Search query (512 characters on basic access, 4096 with higher tiers).",
					minLength=1,
					maxLength=4096,
				),
				"max_results": integer("Posts per page.", minimum=10, maximum=100, default=10),
				"next_token": PAGINATION,
				"start_time": TIME,
				"end_time": TIME,
				"sort_order": string("Order of results.", enum=["recency", "relevancy"]),
				**POST_QUERY_SCHEMA,
			},
			["query"],
		),
	),
	HttpTool(
		handle="getMe",
		description="Get the authenticated user (id, name, username); the id is needed by the "
		"timeline, like and repost tools.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/me",
		query_params=joined("user.fields"),
		input_schema=obj({"user_fields": USER_FIELDS}),
	),
	HttpTool(
		handle="getUserByUsername",
		description="Look up a user by @username (without the @).",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/by/username/{{ input.username }}",
		query_params=joined("user.fields"),
		input_schema=obj(
			{
				"username": string("Username without @.", pattern="^[A-Za-z0-9_]{1,15}$"),
				"user_fields": USER_FIELDS,
			},
			["username"],
		),
	),
	HttpTool(
		handle="getUserPosts",
		description="A user's own posts, newest first.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/tweets",
		query_params={**TIMELINE_QUERY, **joined("exclude")},
		input_schema=obj(
			{
				**TIMELINE_SCHEMA,
				"id": string("User id (any user).", **ID_PATTERN),
				"exclude": array(
					{"type": "string", "enum": ["replies", "retweets"]},
					"Leave out replies and/or reposts.",
					**LIST,
				),
			},
			["id"],
		),
	),
	HttpTool(
		handle="getMentions",
		description="Posts that mention a user, newest first.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/mentions",
		query_params=TIMELINE_QUERY,
		input_schema=obj({**TIMELINE_SCHEMA, "id": string("User id.", **ID_PATTERN)}, ["id"]),
	),
	HttpTool(
		handle="getHomeTimeline",
		description="The authenticated user's home timeline (posts from accounts they follow and "
		"their own), newest first.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/timelines/reverse_chronological",
		query_params={**TIMELINE_QUERY, **joined("exclude")},
		input_schema=obj(
			{
				**TIMELINE_SCHEMA,
				# X's OpenAPI: 1 to 100 here, where the user's posts and mentions take 5 to 100.
				"max_results": integer("Posts per page.", minimum=1, maximum=100),
				"exclude": array(
					{"type": "string", "enum": ["replies", "retweets"]},
					"Leave out replies and/or reposts.",
					**LIST,
				),
			},
			["id"],
		),
	),
	HttpTool(
		handle="likePost",
		description="Like a post as the authenticated user.",
		scopes=["engage"],
		method="POST",
		endpoint="/2/users/{{ input.id }}/likes",
		body=passthrough("tweet_id"),
		input_schema=obj({"id": USER_ID, "tweet_id": POST_ID}, ["id", "tweet_id"]),
	),
	HttpTool(
		handle="unlikePost",
		description="Remove the authenticated user's like from a post.",
		scopes=["engage"],
		method="DELETE",
		endpoint="/2/users/{{ input.id }}/likes/{{ input.tweet_id }}",
		input_schema=obj({"id": USER_ID, "tweet_id": POST_ID}, ["id", "tweet_id"]),
	),
	HttpTool(
		handle="repostPost",
		description="Repost (retweet) a post as the authenticated user.",
		scopes=["engage"],
		method="POST",
		endpoint="/2/users/{{ input.id }}/retweets",
		body=passthrough("tweet_id"),
		input_schema=obj({"id": USER_ID, "tweet_id": POST_ID}, ["id", "tweet_id"]),
	),
	HttpTool(
		handle="uploadMedia",
		description="Upload an image (or small GIF) in one request; returns data.id to use in "
		"createPost media.media_ids. For video use initializeMediaUpload.",
		scopes=["media"],
		method="POST",
		endpoint="/2/media/upload",
		request_format="multipart",
		body=passthrough("media_category"),
		files=passthrough("media"),
		input_schema=obj(
			{"media": _FILE, "media_category": _SIMPLE_MEDIA_CATEGORY}, ["media", "media_category"]
		),
	),
	HttpTool(
		handle="initializeMediaUpload",
		description="Start a chunked upload (video, large GIF): returns data.id. Then "
		"appendMediaUpload each chunk (segment_index 0, 1, …), finalizeMediaUpload, and poll "
		"getMediaUploadStatus until state is succeeded.",
		scopes=["media"],
		method="POST",
		endpoint="/2/media/upload/initialize",
		body=passthrough(
			"media_type",
			"total_bytes",
			"media_category",
		),
		input_schema=obj(
			{
				"media_type": string(
					"MIME type.",
					enum=[
						"video/mp4",
						"video/webm",
						"video/quicktime",
						"image/gif",
						"image/jpeg",
						"image/png",
						"image/webp",
						"text/srt",
						"text/vtt",
					],
				),
				"total_bytes": integer(
					"Total file size in bytes (up to 16 GiB).", minimum=1, maximum=17179869184
				),
				"media_category": _MEDIA_CATEGORY,
			},
			["media_type", "total_bytes", "media_category"],
		),
	),
	HttpTool(
		handle="appendMediaUpload",
		description="Send one chunk (up to 4 MB) of a chunked upload.",
		scopes=["media"],
		method="POST",
		endpoint="/2/media/upload/{{ input.id }}/append",
		request_format="multipart",
		body=passthrough("segment_index"),
		files=passthrough("media"),
		input_schema=obj(
			{
				"id": string("Media id from initializeMediaUpload.", **ID_PATTERN),
				"segment_index": integer("Chunk number, from 0.", minimum=0, maximum=999),
				"media": _FILE,
			},
			["id", "segment_index", "media"],
		),
	),
	HttpTool(
		handle="finalizeMediaUpload",
		description="Finish a chunked upload; if processing_info is returned, poll "
		"getMediaUploadStatus before posting.",
		scopes=["media"],
		method="POST",
		endpoint="/2/media/upload/{{ input.id }}/finalize",
		input_schema=obj(
			{"id": string("Media id from initializeMediaUpload.", **ID_PATTERN)}, ["id"]
		),
	),
	HttpTool(
		handle="getMediaUploadStatus",
		description="Processing state of an uploaded video or GIF (pending, in_progress, "
		"succeeded, failed) and check_after_secs.",
		scopes=["media"],
		method="GET",
		endpoint="/2/media/upload",
		query_params=passthrough("media_id", command="STATUS"),
		input_schema=obj({"media_id": string("Media id.", **ID_PATTERN)}, ["media_id"]),
	),
	HttpTool(
		handle="sendDirectMessage",
		description="Send a direct message (text, one attachment, or both) to a user (opens the "
		"one-to-one conversation if needed). Returns dm_conversation_id and dm_event_id.",
		scopes=["dm"],
		method="POST",
		endpoint="/2/dm_conversations/with/{{ input.participant_id }}/messages",
		body=passthrough("text", "attachments"),
		input_schema=obj(
			{"participant_id": string("Recipient's user id.", **ID_PATTERN), **_DM_MESSAGE},
			["participant_id"],
		),
	),
	HttpTool(
		handle="sendConversationMessage",
		description="Send a message (text, one attachment, or both) to an existing DM "
		"conversation (one-to-one or group) by its dm_conversation_id.",
		scopes=["dm"],
		method="POST",
		endpoint="/2/dm_conversations/{{ input.dm_conversation_id }}/messages",
		body=passthrough("text", "attachments"),
		input_schema=obj(
			{
				"dm_conversation_id": string(
					"Conversation id, e.g. 123-456 (one-to-one) or digits (group).",
					pattern="^([0-9]{1,19}-)?[0-9]{1,19}$",
				),
				**_DM_MESSAGE,
			},
			["dm_conversation_id"],
		),
	),
	HttpTool(
		handle="listDirectMessages",
		description="The user's recent direct message events (last 30 days), newest first, "
		"across conversations; page with pagination_token.",
		scopes=["dm"],
		method="GET",
		endpoint="/2/dm_events",
		query_params=_DM_QUERY,
		input_schema=obj(_DM_QUERY_SCHEMA),
	),
	HttpTool(
		handle="getDirectMessagesWith",
		description="The direct message events of the one-to-one conversation with a user, "
		"newest first.",
		scopes=["dm"],
		method="GET",
		endpoint="/2/dm_conversations/with/{{ input.participant_id }}/dm_events",
		query_params=_DM_QUERY,
		input_schema=obj(
			{"participant_id": string("The other user's id.", **ID_PATTERN), **_DM_QUERY_SCHEMA},
			["participant_id"],
		),
	),
	HttpTool(
		handle="followUser",
		description="Follow a user as the authenticated user (a protected account gets a "
		"follow request: `pending_follow`).",
		scopes=["engage"],
		method="POST",
		endpoint="/2/users/{{ input.id }}/following",
		body=passthrough("target_user_id"),
		input_schema=obj(
			{"id": USER_ID, "target_user_id": string("Id of the user to follow.", **ID_PATTERN)},
			["id", "target_user_id"],
		),
	),
	HttpTool(
		handle="unfollowUser",
		description="Stop following a user as the authenticated user.",
		scopes=["engage"],
		method="DELETE",
		endpoint="/2/users/{{ input.source_user_id }}/following/{{ input.target_user_id }}",
		input_schema=obj(
			{
				"source_user_id": USER_ID,
				"target_user_id": string("Id of the user to unfollow.", **ID_PATTERN),
			},
			["source_user_id", "target_user_id"],
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"deletePost": [],
		"getMe": [],
		"likePost": [],
		"unlikePost": [],
		"repostPost": [],
		"uploadMedia": [],
		"initializeMediaUpload": [],
		"appendMediaUpload": [],
		"finalizeMediaUpload": [],
		"getMediaUploadStatus": [],
		"getPost": ["untrusted"],
		"searchRecent": ["untrusted"],
		"getUserByUsername": ["untrusted"],
		"getUserPosts": ["untrusted"],
		"getMentions": ["untrusted"],
		"getHomeTimeline": ["untrusted"],
		"createPost": ["outbound"],
		"send*Message": ["outbound"],
		"listDirectMessages": ["private", "untrusted"],
		"getDirectMessagesWith": ["private", "untrusted"],
		"followUser": ["outbound"],
		"unfollowUser": ["outbound"],
		"unrepostPost": [],
		"addBookmark": [],
		"removeBookmark": [],
		"hideReply": [],
		"getPosts": ["untrusted"],
		"getUser": ["untrusted"],
		"getFollowers": ["untrusted"],
		"getFollowing": ["untrusted"],
		"getLikedPosts": ["untrusted"],
		"getQuotePosts": ["untrusted"],
		"getBookmarks": ["private", "untrusted"],
	},
	name="X",
	description="Post, reply, delete, search recent posts, read posts, users, timelines, "
	"followers and quotes, like, repost, follow, bookmark, hide replies, send and read direct "
	"messages, and upload media on X.",
	api_version="API v2",
	api_setup=ApiSetup(base_url="https://api.x.com"),
	credential_setup=[
		OAuth2Credential(
			type="oauth2",
			auth_url="https://x.com/i/oauth2/authorize",
			token_url="https://api.x.com/2/oauth2/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=_SCOPES,
			scope_map=_SCOPE_MAP,
			token_auth="basic",
			# X OAuth 2.0: PKCE required; a public client sends no secret.
			pkce="required",
			client_secret_required=False,
		),
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.bearerToken }}"}
		),
	],
	scopes={
		"read": "Read posts, users, timelines, followers, likes and quotes, and search.",
		"write": "Publish and delete posts.",
		"engage": "Like, unlike, repost and undo reposts; follow and unfollow users.",
		"bookmarks": "Read, add and remove the user's bookmarks.",
		"moderate": "Hide and unhide replies to the user's posts.",
		"dm": "Send and read direct messages.",
		"media": "Upload images and videos.",
	},
	tools=[*_TOOLS, *NETWORK_TOOLS],
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the X integration."""
	register(INTEGRATION)
