"""Instagram: the Instagram Graph API (Meta Graph v26.0) for professional accounts.

Publishing is two-step: create a media container from a public image or video URL, wait until its
``status_code`` is ``FINISHED``, then publish it. Comments can be read, answered, hidden and
deleted; insights report reach, views and engagement. Lists page with ``paging.cursors.after``.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, Credential, HttpTool, Integration
from openmolt_integrations._msgschema import array, boolean, integer, obj, string

__all__ = ["INTEGRATION", "register_integrations"]

_USER = "/{{ config.igUserId }}"
_MEDIA_ID = string("Instagram media id (from listMedia).")
_COMMENT_ID = string("Comment id (from listComments).")
_LIMIT = integer("Items per page.", minimum=1, maximum=100, default=25)
_AFTER = string("Cursor: paging.cursors.after of the previous page.")
_ACCOUNT_FIELDS = "id,username,name,biography,website,followers_count,follows_count,media_count,profile_picture_url"
_MEDIA_FIELDS = "id,caption,media_type,media_product_type,media_url,permalink,thumbnail_url,timestamp,like_count,comments_count"
_COMMENT_FIELDS = "id,text,username,timestamp,like_count,hidden,replies{id,text,username,timestamp}"

_DOCS = """\
## Get a token

The account must be an Instagram **professional** account (Business or Creator) linked to a
Facebook Page.

1. In [Meta for Developers](https://developers.facebook.com/apps), create an app (type
   **Business**) and add **Instagram** (API setup with Facebook login).
2. Request the permissions `instagram_basic`, `instagram_content_publish`,
   `instagram_manage_comments`, `instagram_manage_insights`, `pages_show_list` and
   `pages_read_engagement` (Advanced Access needs App Review for accounts you do not manage).
3. Get a user token with those permissions: in the Graph API Explorer, or through the OAuth
   dialog `https://www.facebook.com/v26.0/dialog/oauth?client_id=…&redirect_uri=…&scope=…` and
   `https://graph.facebook.com/v26.0/oauth/access_token`. Exchange it for a 60-day token
   (`grant_type=fb_exchange_token`), or better, create a **system user** token in Business
   Settings that does not expire.
4. Find the Instagram account id: `GET /me/accounts?fields=instagram_business_account`.

```python
om = OpenMolt(integrations={"instagram": {"accessToken": "EAAG...", "igUserId": "1784..."}})
```

Meta issues no refresh tokens: renew 60-day tokens before they expire. Media to publish must be
at a public HTTPS URL (JPEG images; MP4/MOV videos). An account may publish 100 posts per 24 hours
through the API (`getPublishingLimit`).
"""

_TOOLS = [
	HttpTool(
		handle="getAccount",
		description="Get the Instagram account: username, name, bio, follower and media counts.",
		scopes=["read"],
		method="GET",
		endpoint=_USER,
		query_params={"fields": _ACCOUNT_FIELDS},
		input_schema=obj({}),
	),
	HttpTool(
		handle="listMedia",
		description="List the account's posts, reels and carousels, newest first, with captions, "
		"links and like/comment counts.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/media",
		query_params={
			"fields": _MEDIA_FIELDS,
			"limit": "{{ input.limit }}",
			"after": "{{ input.after }}",
			"since": "{{ input.since }}",
			"until": "{{ input.until }}",
		},
		input_schema=obj(
			{
				"limit": _LIMIT,
				"after": _AFTER,
				"since": string("Only media published after this time (Unix seconds or ISO date)."),
				"until": string("Only media published before this time."),
			}
		),
	),
	HttpTool(
		handle="getMedia",
		description="Get one media item with caption, type, URL, permalink and counts.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.media_id }}",
		query_params={"fields": _MEDIA_FIELDS},
		input_schema=obj({"media_id": _MEDIA_ID}, ["media_id"]),
	),
	HttpTool(
		handle="createMediaContainer",
		description="Step 1 of publishing: create a container from a public image_url (JPEG) or "
		"video_url. media_type REELS for video, STORIES for a story, CAROUSEL with children "
		"(container ids created with is_carousel_item). Returns the container id.",
		scopes=["publish"],
		method="POST",
		endpoint=f"{_USER}/media",
		request_format="form-data",
		body={
			"image_url": "{{ input.image_url }}",
			"video_url": "{{ input.video_url }}",
			"media_type": "{{ input.media_type }}",
			"caption": "{{ input.caption }}",
			"children": "{{ input.children }}",
			"is_carousel_item": "{{ input.is_carousel_item }}",
			"cover_url": "{{ input.cover_url }}",
			"thumb_offset": "{{ input.thumb_offset }}",
			"share_to_feed": "{{ input.share_to_feed }}",
			"alt_text": "{{ input.alt_text }}",
			"location_id": "{{ input.location_id }}",
		},
		input_schema=obj(
			{
				"image_url": string(
					"Public HTTPS URL of a JPEG image (for an image post or story)."
				),
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
		),
	),
	HttpTool(
		handle="getContainerStatus",
		description="Step 2: check a container; publish when status_code is FINISHED (IN_PROGRESS: "
		"wait about a minute and check again; ERROR or EXPIRED: create a new one).",
		scopes=["publish"],
		method="GET",
		endpoint="/{{ input.container_id }}",
		query_params={"fields": "id,status_code,status"},
		input_schema=obj(
			{"container_id": string("Container id from createMediaContainer.")}, ["container_id"]
		),
	),
	HttpTool(
		handle="publishMedia",
		description="Step 3: publish a FINISHED container; returns the new media id.",
		scopes=["publish"],
		method="POST",
		endpoint=f"{_USER}/media_publish",
		request_format="form-data",
		body={"creation_id": "{{ input.creation_id }}"},
		input_schema=obj({"creation_id": string("Container id to publish.")}, ["creation_id"]),
	),
	HttpTool(
		handle="getPublishingLimit",
		description="How many API posts the account published in the last 24 hours and its quota.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/content_publishing_limit",
		query_params={"fields": "quota_usage,config"},
		input_schema=obj({}),
	),
	HttpTool(
		handle="listComments",
		description="List comments on a media item, with their replies.",
		scopes=["comments"],
		method="GET",
		endpoint="/{{ input.media_id }}/comments",
		query_params={
			"fields": _COMMENT_FIELDS,
			"limit": "{{ input.limit }}",
			"after": "{{ input.after }}",
		},
		input_schema=obj({"media_id": _MEDIA_ID, "limit": _LIMIT, "after": _AFTER}, ["media_id"]),
	),
	HttpTool(
		handle="commentOnMedia",
		description="Post a comment on a media item as the account.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.media_id }}/comments",
		request_format="form-data",
		body={"message": "{{ input.message }}"},
		input_schema=obj(
			{"media_id": _MEDIA_ID, "message": string("Comment text.")}, ["media_id", "message"]
		),
	),
	HttpTool(
		handle="replyToComment",
		description="Reply to a comment on the account's media.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.comment_id }}/replies",
		request_format="form-data",
		body={"message": "{{ input.message }}"},
		input_schema=obj(
			{"comment_id": _COMMENT_ID, "message": string("Reply text.")}, ["comment_id", "message"]
		),
	),
	HttpTool(
		handle="hideComment",
		description="Hide or unhide a comment on the account's media.",
		scopes=["comments"],
		method="POST",
		endpoint="/{{ input.comment_id }}",
		request_format="form-data",
		body={"hide": "{{ input.hide }}"},
		input_schema=obj(
			{
				"comment_id": _COMMENT_ID,
				"hide": boolean("true hides, false shows again.", default=True),
			},
			["comment_id", "hide"],
		),
	),
	HttpTool(
		handle="deleteComment",
		description="Delete a comment on the account's media.",
		scopes=["comments"],
		method="DELETE",
		endpoint="/{{ input.comment_id }}",
		input_schema=obj({"comment_id": _COMMENT_ID}, ["comment_id"]),
	),
	HttpTool(
		handle="getMediaInsights",
		description="Metrics of one media item, e.g. reach, views, likes, comments, saved, shares, "
		"total_interactions (available metrics depend on the media type).",
		scopes=["insights"],
		method="GET",
		endpoint="/{{ input.media_id }}/insights",
		query_params={"metric": "{{ input.metric | join: ',' }}"},
		input_schema=obj(
			{
				"media_id": _MEDIA_ID,
				"metric": array(
					"Metrics to return.",
					{
						"type": "string",
						"enum": [
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
						],
					},
					minItems=1,
				),
			},
			["media_id", "metric"],
		),
	),
	HttpTool(
		handle="getAccountInsights",
		description="Account metrics over a period, e.g. reach, views, accounts_engaged, "
		"follower_count; total_value metrics need metric_type=total_value.",
		scopes=["insights"],
		method="GET",
		endpoint=f"{_USER}/insights",
		query_params={
			"metric": "{{ input.metric | join: ',' }}",
			"period": "{{ input.period }}",
			"metric_type": "{{ input.metric_type }}",
			"since": "{{ input.since }}",
			"until": "{{ input.until }}",
			"breakdown": "{{ input.breakdown }}",
		},
		input_schema=obj(
			{
				"metric": array(
					"Metrics to return.",
					{
						"type": "string",
						"enum": [
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
						],
					},
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
]

INTEGRATION = Integration(
	name="Instagram",
	description="Publish Instagram posts, reels, stories and carousels; read media, manage comments, read insights.",
	api_version="Graph API v26.0",
	api_setup=ApiSetup(base_url="https://graph.facebook.com/v26.0"),
	credential_setup=[
		Credential(type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}),
	],
	scopes={
		"read": "Read the account, its media and the publishing quota.",
		"publish": "Create media containers and publish them.",
		"comments": "Read, post, reply to, hide and delete comments.",
		"insights": "Read media and account insights.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Instagram integration."""
	register(INTEGRATION)
