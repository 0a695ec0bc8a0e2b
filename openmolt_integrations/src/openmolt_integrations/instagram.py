"""Instagram: the Instagram Graph API (Meta Graph v26.0) for professional accounts.

Publishing is two-step: create a media container from a public image or video URL, wait until its
``status_code`` is ``FINISHED``, then publish it. Comments can be read, answered, hidden and
deleted; insights report reach, views and engagement; stories, hashtag search and direct messages
are covered too. Lists page with ``paging.cursors.after``.

The Instagram account id comes from the token (``listAccounts``: the Pages it manages and their
linked Instagram accounts), from each call's ``ig_user_id``, or from the ``igUserId`` config.

The credential is a Facebook Login token (``graph.facebook.com``: "Instagram API with Facebook
Login"), not an Instagram Login one (``graph.instagram.com``). With Facebook Login, direct messages
go through the Messenger Platform on the linked Facebook Page: ``GET /<PAGE_ID>/conversations
?platform=instagram`` and ``POST /<PAGE_ID>/messages`` with a Page access token (Meta's
Conversations API and Send API references); ``/<IG_ID>/conversations`` is the Instagram Login
form and refuses this token.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
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
from openmolt_integrations._graph import GRAPH_URL, GRAPH_VERSION, paging
from openmolt_integrations._instagram import (
	ACCOUNT_FIELDS,
	AFTER,
	COMMENT_FIELDS,
	COMMENT_ID,
	FACEBOOK_LOGIN_DM,
	HASHTAG_MEDIA_FIELDS,
	HASHTAG_USER,
	IG_USER_ID,
	LIMIT,
	MEDIA_FIELDS,
	MEDIA_ID,
	PAGE,
	PAGE_ID,
	STORY_FIELDS,
	USER,
)

__all__ = ["INTEGRATION", "register_integrations"]

_DOCS = """\
## Get a token

The account must be an Instagram **professional** account (Business or Creator) linked to a
Facebook Page.

1. In [Meta for Developers](https://developers.facebook.com/apps), create an app (type
   **Business**) and add **Instagram** (API setup with Facebook login).
2. Request the permissions `instagram_basic`, `instagram_content_publish`,
   `instagram_manage_comments`, `instagram_manage_insights`, `instagram_manage_messages` and
   `pages_manage_metadata` (direct messages), `pages_show_list` and `pages_read_engagement` (Advanced Access needs App Review for
   accounts you do not manage).
3. Get a user token with those permissions: in the Graph API Explorer, or through the OAuth
   dialog `https://www.facebook.com/v26.0/dialog/oauth?client_id=…&redirect_uri=…&scope=…` and
   `https://graph.facebook.com/v26.0/oauth/access_token`. Exchange it for a 60-day token
   (`grant_type=fb_exchange_token`), or better, create a **system user** token in Business
   Settings that does not expire.
4. The Instagram account id comes from the token: the agent calls `listAccounts` (the Pages the
   token manages, each with its `instagram_business_account`) and passes `ig_user_id`. To fix
   one account for every call, set `igUserId`:

```python
om = OpenMolt(integrations={"instagram": {"accessToken": "EAAG..."}})
# or, always the same account:
om = OpenMolt(integrations={"instagram": {"accessToken": "EAAG...", "igUserId": "1784..."}})
```

**Direct messages** (`listConversations`, `sendMessage`): this integration uses the Instagram API
with Facebook Login, where messaging goes through the linked Facebook Page (`/<PAGE_ID>/
conversations?platform=instagram`, `/<PAGE_ID>/messages`) and needs that **Page's access token**
(`GET /<PAGE_ID>?fields=access_token` with the user token, or a system user's Page token; it
serves the other tools too) and `pages_manage_metadata`. Give the Page id per call (`page_id`,
the `id` listAccounts returns) or once as `pageId`:

```python
om = OpenMolt(integrations={"instagram": {"accessToken": "EAAG...(Page token)", "pageId": "1234..."}})
```

Meta issues no refresh tokens: renew 60-day tokens before they expire. Media to publish must be
at a public HTTPS URL (JPEG images; MP4/MOV videos). An account may publish 100 posts per 24 hours
through the API (`getPublishingLimit`). Direct messages can only answer a user who wrote to the
account in the last 24 hours.

## Reference checks

Every tool's method, node/edge path and parameter names are checked by the test suite against
the official `facebook-business` SDK (26.0.3): the `FacebookRequest` of the same `IGUser`,
`IGMedia`, `IGComment`, `ShadowIGHashtag`, `UnifiedThread` or `User` call and its
`param_types`, and the default `fields` against each target class's `Field` list. Node ids in
paths are named as Graph's reference pages write them (`<IG_MEDIA_ID>` is `ig_media_id`), and an
input the SDK types as an enum lists SDK values. Not checkable there:

- `searchHashtag` (`GET /ig_hashtag_search?user_id=&q=`): a root-level search the SDK has no
  call for; it follows the [hashtag search docs](https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-hashtag-search).
- `sendMessage`: the SDK's `Page` `/messages` call types `recipient` and `message` only as
  `Object`; their shapes follow the [Send API docs](https://developers.facebook.com/docs/messenger-platform/instagram/features/send-message).
- `listMessages`: the SDK gives the edge (`UnifiedThread` `/messages`) but no class for a message,
  so its `fields` (`id,created_time,from,to,message`) follow the [conversations docs](https://developers.facebook.com/docs/messenger-platform/instagram/features/conversations).
- `getAccountInsights`: the SDK gives the account's insights the metric, period and breakdown
  enums of media insights, so those values follow the [account insights docs](https://developers.facebook.com/documentation/instagram-platform/api-reference/instagram-user/insights/);
  its `since`/`until` (and `listMedia`'s) are Unix timestamps there, not RFC 3339 times.
- `fields`, `limit`, `after` are Graph-wide parameters outside `param_types`; hashtag media pages
  hold at most 50 ([hashtag docs](https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-hashtag/top-media)).
"""


def _hashtag_media(handle: str, edge: str, which: str) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=f"The {which} public posts with a hashtag (id from searchHashtag).",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.ig_hashtag_id }}/" + edge,
		query_params={
			"user_id": "{{ input.user_id | default: config.igUserId }}",
			"fields": HASHTAG_MEDIA_FIELDS,
			**paging(),
		},
		input_schema=obj(
			{
				"ig_hashtag_id": string("Hashtag id from searchHashtag.", pattern="^[0-9]+$"),
				"user_id": HASHTAG_USER,
				# The hashtag media docs: "a maximum limit of 50 results per page".
				"limit": integer("Items per page.", minimum=1, maximum=50, default=25),
				"after": AFTER,
			},
			["ig_hashtag_id"],
		),
	)


def _account_input(tool: HttpTool) -> HttpTool:
	"""Add the optional ig_user_id input to a tool whose path starts at the account."""
	if not tool.endpoint.startswith(USER):
		return tool
	schema = dict(tool.input_schema)
	schema["properties"] = {"ig_user_id": IG_USER_ID, **schema.get("properties", {})}
	return tool.model_copy(update={"input_schema": schema})


# The SDK types creation_id `unsigned int`; the input takes it as a digit string.
_NUMERIC_ID = "^[0-9]+$"
# The IG User media docs: since and until take Unix timestamps or strtotime() dates.
_LIST_MEDIA = obj(
	{
		"limit": LIMIT,
		"after": AFTER,
		"since": string("Only media published after this time (Unix seconds or ISO date)."),
		"until": string("Only media published before this time."),
	}
)
_CREATE_MEDIA = obj(
	{
		"image_url": string("Public HTTPS URL of a JPEG image (for an image post or story)."),
		"video_url": string(
			"Public HTTPS URL of an MP4/MOV video (reels, stories, carousel items)."
		),
		"media_type": string(
			"Omit for a feed image.",
			enum=["REELS", "STORIES", "CAROUSEL", "VIDEO", "IMAGE"],
		),
		"caption": string(
			"Caption with #hashtags and @mentions, up to 2200 characters.", maxLength=2200
		),
		"children": string(
			"CAROUSEL: 2 to 10 item container ids, comma-separated (id1,id2,id3).",
			pattern="^[0-9]+(,[0-9]+){1,9}$",
		),
		"is_carousel_item": boolean("This container is an item of a carousel."),
		"cover_url": string("REELS: public URL of a cover image."),
		"thumb_offset": integer("REELS: cover frame position in milliseconds.", minimum=0),
		"share_to_feed": boolean("REELS: also show the reel in the feed."),
		"alt_text": string("Image alt text for accessibility."),
		"location_id": string("Facebook Page id of a place to tag."),
	}
)

_TOOLS = [
	HttpTool(
		handle="getAccount",
		description="Get the Instagram account: username, name, bio, follower and media counts.",
		scopes=["read"],
		method="GET",
		endpoint=USER,
		query_params={"fields": ACCOUNT_FIELDS},
		input_schema=obj({}),
	),
	HttpTool(
		handle="listMedia",
		description="List the account's posts, reels and carousels, newest first, with captions, "
		"links and like/comment counts.",
		scopes=["read"],
		method="GET",
		endpoint=f"{USER}/media",
		query_params={"fields": MEDIA_FIELDS, **paging(), **passthrough("since", "until")},
		input_schema=_LIST_MEDIA,
	),
	HttpTool(
		handle="getMedia",
		description="Get one media item with caption, type, URL, permalink and counts.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.ig_media_id }}",
		query_params={"fields": MEDIA_FIELDS},
		input_schema=obj({"ig_media_id": MEDIA_ID}, ["ig_media_id"]),
	),
	HttpTool(
		handle="createMediaContainer",
		description="Step 1 of publishing: create a container from a public image_url (JPEG) or "
		"video_url. media_type REELS for video, STORIES for a story, CAROUSEL with children "
		"(container ids created with is_carousel_item). Returns the container id.",
		scopes=["publish"],
		method="POST",
		endpoint=f"{USER}/media",
		request_format="form-data",
		body=passthrough_of(_CREATE_MEDIA),
		input_schema=_CREATE_MEDIA,
	),
	HttpTool(
		handle="getContainerStatus",
		description="Step 2: check a container; publish when status_code is FINISHED (IN_PROGRESS: "
		"wait about a minute and check again; ERROR or EXPIRED: create a new one).",
		scopes=["publish"],
		method="GET",
		endpoint="/{{ input.ig_container_id }}",
		query_params={"fields": "id,status_code,status"},
		input_schema=obj(
			{"ig_container_id": string("Container id from createMediaContainer.")},
			["ig_container_id"],
		),
	),
	HttpTool(
		handle="publishMedia",
		description="Step 3: publish a FINISHED container; returns the new media id.",
		scopes=["publish"],
		method="POST",
		endpoint=f"{USER}/media_publish",
		request_format="form-data",
		body=passthrough("creation_id"),
		input_schema=obj(
			{"creation_id": string("Container id to publish.", pattern=_NUMERIC_ID)},
			["creation_id"],
		),
	),
	HttpTool(
		handle="getPublishingLimit",
		description="How many API posts the account published in the last 24 hours and its quota.",
		scopes=["read"],
		method="GET",
		endpoint=f"{USER}/content_publishing_limit",
		query_params={"fields": "quota_usage,config"},
		input_schema=obj({}),
	),
	HttpTool(
		handle="listComments",
		description="List comments on a media item, with their replies.",
		scopes=["comments"],
		method="GET",
		endpoint="/{{ input.ig_media_id }}/comments",
		query_params={"fields": COMMENT_FIELDS, **paging()},
		input_schema=obj(
			{"ig_media_id": MEDIA_ID, "limit": LIMIT, "after": AFTER}, ["ig_media_id"]
		),
	),
	HttpTool(
		handle="commentOnMedia",
		description="Post a comment on a media item as the account.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.ig_media_id }}/comments",
		request_format="form-data",
		body=passthrough("message"),
		input_schema=obj(
			{"ig_media_id": MEDIA_ID, "message": string("Comment text.")},
			["ig_media_id", "message"],
		),
	),
	HttpTool(
		handle="replyToComment",
		description="Reply to a comment on the account's media.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.ig_comment_id }}/replies",
		request_format="form-data",
		body=passthrough("message"),
		input_schema=obj(
			{"ig_comment_id": COMMENT_ID, "message": string("Reply text.")},
			["ig_comment_id", "message"],
		),
	),
	HttpTool(
		handle="hideComment",
		description="Hide or unhide a comment on the account's media.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.ig_comment_id }}",
		request_format="form-data",
		body=passthrough("hide"),
		input_schema=obj(
			{
				"ig_comment_id": COMMENT_ID,
				"hide": boolean("true hides, false shows again.", default=True),
			},
			["ig_comment_id", "hide"],
		),
	),
	HttpTool(
		handle="deleteComment",
		description="Delete a comment on the account's media.",
		scopes=["comments"],
		method="DELETE",
		endpoint="/{{ input.ig_comment_id }}",
		input_schema=obj({"ig_comment_id": COMMENT_ID}, ["ig_comment_id"]),
	),
	HttpTool(
		handle="getMediaInsights",
		description="Metrics of one media item, e.g. reach, views, likes, comments, saved, shares, "
		"total_interactions (available metrics depend on the media type).",
		scopes=["insights"],
		method="GET",
		endpoint="/{{ input.ig_media_id }}/insights",
		query_params={"metric": "{{ input.metric | join: ',' }}"},
		input_schema=obj(
			{
				"ig_media_id": MEDIA_ID,
				"metric": array(
					string(
						enum=[
							"reach",
							"views",
							"likes",
							"comments",
							"saved",
							"shares",
							"total_interactions",
							"follows",
							"profile_visits",
							"ig_reels_avg_watch_time",
						]
					),
					"Metrics to return.",
					minItems=1,
				),
			},
			["ig_media_id", "metric"],
		),
	),
	HttpTool(
		handle="getAccountInsights",
		description="Account metrics over a period, e.g. reach, views, accounts_engaged, "
		"follower_count; total_value metrics need metric_type=total_value.",
		scopes=["insights"],
		method="GET",
		endpoint=f"{USER}/insights",
		query_params={
			"metric": "{{ input.metric | join: ',' }}",
			**passthrough("period", "metric_type", "since", "until", "breakdown"),
		},
		input_schema=obj(
			{
				"metric": array(
					string(
						enum=[
							"reach",
							"views",
							"accounts_engaged",
							"total_interactions",
							"likes",
							"comments",
							"shares",
							"saves",
							"replies",
							"follower_count",
							"follows_and_unfollows",
							"profile_links_taps",
							"online_followers",
						]
					),
					"Metrics to return.",
					minItems=1,
				),
				"period": string(
					"Aggregation period.",
					enum=["day", "week", "days_28", "lifetime"],
					default="day",
				),
				"metric_type": string(
					"time_series or total_value.", enum=["time_series", "total_value"]
				),
				"since": string("Start, Unix seconds."),
				"until": string("End, Unix seconds (at most 30 days after since)."),
				"breakdown": string(
					"With total_value: split by media_product_type, follow_type or contact_button_type."
				),
			},
			["metric", "period"],
		),
	),
	HttpTool(
		handle="listAccounts",
		description="Find the Instagram accounts the token can use: the Facebook Pages it manages "
		"and the Instagram account linked to each (instagram_business_account.id is the "
		"ig_user_id of the other tools).",
		scopes=["read"],
		method="GET",
		endpoint="/me/accounts",
		query_params={
			"fields": "id,name,instagram_business_account{id,username,name}",
			**paging(),
		},
		input_schema=obj({"limit": LIMIT, "after": AFTER}),
	),
	HttpTool(
		handle="listStories",
		description="List the account's stories of the last 24 hours (to publish one, use "
		"createMediaContainer with media_type STORIES).",
		scopes=["read"],
		method="GET",
		endpoint=f"{USER}/stories",
		query_params={"fields": STORY_FIELDS},
		input_schema=obj({}),
	),
	HttpTool(
		handle="searchHashtag",
		description="Find a hashtag's id by name (without #); then read its media with "
		"getHashtagTopMedia or getHashtagRecentMedia. An account may look up 30 hashtags per "
		"7 days.",
		scopes=["read"],
		method="GET",
		endpoint="/ig_hashtag_search",
		query_params={
			"user_id": "{{ input.user_id | default: config.igUserId }}",
			**passthrough("q"),
		},
		input_schema=obj(
			{"user_id": HASHTAG_USER, "q": string("Hashtag name without #.", minLength=1)},
			["q"],
		),
	),
	_hashtag_media("getHashtagTopMedia", "top_media", "most popular"),
	_hashtag_media("getHashtagRecentMedia", "recent_media", "most recent (last 24 hours)"),
	HttpTool(
		handle="listConversations",
		description="List the account's Instagram direct-message conversations, newest first "
		"(needs instagram_manage_messages)." + FACEBOOK_LOGIN_DM,
		scopes=["messages"],
		method="GET",
		endpoint=f"{PAGE}/conversations",
		query_params={
			"platform": "instagram",
			"fields": "id,updated_time,participants",
			**passthrough("user_id"),
			**paging(),
		},
		input_schema=obj(
			{
				"page_id": PAGE_ID,
				"user_id": string("Only the conversation with this Instagram-scoped user id."),
				"limit": LIMIT,
				"after": AFTER,
			}
		),
	),
	HttpTool(
		handle="listMessages",
		description="Read the messages of a conversation, newest first.",
		scopes=["messages"],
		method="GET",
		endpoint="/{{ input.conversation_id }}/messages",
		query_params={"fields": "id,created_time,from,to,message", **paging()},
		input_schema=obj(
			{
				"conversation_id": string("Conversation id from listConversations."),
				"limit": LIMIT,
				"after": AFTER,
			},
			["conversation_id"],
		),
	),
	HttpTool(
		handle="sendMessage",
		description="Send a direct message to a user who wrote to the account in the last 24 "
		"hours (recipient.id: their Instagram-scoped id from a conversation or webhook)."
		+ FACEBOOK_LOGIN_DM,
		scopes=["messages"],
		method="POST",
		endpoint=f"{PAGE}/messages",
		request_format="json",
		body=passthrough("recipient", "message"),
		input_schema=obj(
			{
				"page_id": PAGE_ID,
				"recipient": obj(
					{"id": string("The user's Instagram-scoped id (IGSID).")},
					["id"],
					description="Who receives the message.",
				),
				"message": obj(
					{
						"text": string(
							"Message text, up to 1000 characters (UTF-8 bytes).",
							minLength=1,
							maxLength=1000,
						),
						"attachment": obj(
							{
								"type": string(
									"Media kind.", enum=["image", "video", "audio", "file"]
								),
								"payload": obj(
									{"url": string("Public URL of the media.", format="uri")},
									["url"],
									description="Where the media is.",
								),
							},
							["type", "payload"],
							description="Send media instead of text.",
						),
					},
					description="The message: text, or an attachment.",
					minProperties=1,
				),
			},
			["recipient", "message"],
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"getAccount": [],
		"listMedia": [],
		"getMedia": [],
		"getContainerStatus": [],
		"getPublishingLimit": [],
		"hideComment": [],
		"deleteComment": [],
		"listAccounts": [],
		"listStories": [],
		"searchHashtag": [],
		"listComments": ["untrusted"],
		"listConversations": ["private", "untrusted"],
		"listMessages": ["private", "untrusted"],
		"getHashtagTopMedia": ["untrusted"],
		"getHashtagRecentMedia": ["untrusted"],
		"getMediaInsights": ["private"],
		"getAccountInsights": ["private"],
		"createMediaContainer": ["outbound"],
		"publishMedia": ["outbound"],
		"commentOnMedia": ["outbound"],
		"replyToComment": ["outbound"],
		"sendMessage": ["outbound"],
	},
	name="Instagram",
	description="Publish Instagram posts, reels, stories and carousels; read media, manage comments, read insights, search hashtags, send direct messages.",
	api_version=f"Graph API {GRAPH_VERSION}",
	api_setup=ApiSetup(base_url=GRAPH_URL),
	credential_setup=[
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		),
	],
	scopes={
		"read": "Read the account, its media and the publishing quota.",
		"publish": "Create media containers and publish them.",
		"comments": "Read, post, reply to, hide and delete comments.",
		"insights": "Read media and account insights.",
		"messages": "Read direct-message conversations and send messages.",
	},
	tools=[_account_input(tool) for tool in _TOOLS],
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Instagram integration."""
	register(INTEGRATION)
