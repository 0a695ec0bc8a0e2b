"""TikTok: Content Posting API and Display API v2 (``https://open.tiktokapis.com/v2/...``).

Posting a video: query the creator's settings, plan the chunks with ``fileInfo`` (size and byte
ranges), initialise a post (direct post or upload to the creator's inbox) to get an ``upload_url``
and a ``publish_id``, PUT each chunk (``<file>#bytes=<first>-<last>``) to the upload URL, then poll
the publish status. Every answer has the envelope ``{"data": ..., "error": {"code",
"message", "log_id"}}``; ``error.code`` is ``ok`` on success. Paths end with a slash.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
	file_info_tool,
)
from openmolt_core.integrations.credentials import OAuth2Auth
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	string,
)

__all__ = ["INTEGRATION", "register_integrations"]

_PRIVACY = string(
	"Who can see the post; must be one of creator_info's privacy_level_options. Apps that have "
	"not passed TikTok's audit can only use SELF_ONLY.",
	enum=["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
)
_SOURCE_INFO = obj(
	{
		"source": string(
			"FILE_UPLOAD: send the bytes with uploadVideoChunk. PULL_FROM_URL: TikTok downloads video_url (domain must be verified).",
			enum=["FILE_UPLOAD", "PULL_FROM_URL"],
		),
		"video_size": integer("FILE_UPLOAD: video size in bytes.", minimum=1),
		"chunk_size": integer(
			"FILE_UPLOAD: chunk size in bytes; the whole size for videos under 64 MB (required under 5 MB), else 5–64 MB (fileInfo with mergeRemainder plans the chunks).",
			minimum=1,
		),
		"total_chunk_count": integer(
			"FILE_UPLOAD: video_size / chunk_size rounded down (1 for a single chunk).",
			minimum=1,
			maximum=1000,
		),
		"video_url": string("PULL_FROM_URL: HTTPS URL of the video on a verified domain."),
	},
	["source"],
	description="How the video reaches TikTok.",
)
# Fields per Login Kit scope (https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info):
# asking for a field whose scope the token lacks fails the whole call, so the default is basic.
_FIELDS_BASIC = "open_id,union_id,avatar_url,avatar_url_100,avatar_large_url,display_name"
_FIELDS_PROFILE = "bio_description,profile_deep_link,is_verified,username"
_FIELDS_STATS = "follower_count,following_count,likes_count,video_count"
_FIELDS_USER = f"{_FIELDS_BASIC},{_FIELDS_PROFILE},{_FIELDS_STATS}"
_FIELDS_VIDEO = "id,title,video_description,create_time,cover_image_url,share_url,duration,height,width,like_count,comment_count,share_count,view_count"

_PHOTO_SOURCE = {"source": "PULL_FROM_URL", **passthrough("photo_images", "photo_cover_index")}
_PHOTO_TITLE = string("Title, up to 90 characters.", maxLength=90)
_PHOTO_DESCRIPTION = string(
	"Description with #hashtags and @mentions, up to 4000 characters.", maxLength=4000
)
_PHOTO_IMAGES = array(
	string(format="uri"),
	"Public URLs of the photos (JPEG/WebP) on a verified domain.",
	minItems=1,
	maxItems=35,
)
_PHOTO_COVER = integer("Index of the cover photo.", minimum=0, default=0)

_DOCS = """\
## Get a token

1. On [TikTok for Developers](https://developers.tiktok.com/apps), create an app, add the
   products **Login Kit**, **Content Posting API** (enable **Direct Post** to publish) and
   **Display API**, and request the scopes `user.info.basic`, `user.info.profile`,
   `user.info.stats`, `video.list`, `video.upload` and `video.publish`. Copy the **Client key**
   and **Client secret**.
2. Send the user to
   `https://www.tiktok.com/v2/auth/authorize/?client_key=…&response_type=code&scope=user.info.basic,video.list,video.upload,video.publish&redirect_uri=…&state=…`
   (scopes are comma-separated; add PKCE for desktop and mobile apps).
3. Exchange the `code` at `https://open.tiktokapis.com/v2/oauth/token/` (form body:
   `client_key`, `client_secret`, `code`, `grant_type=authorization_code`, `redirect_uri`).
   Keep `access_token` (24 hours) and `refresh_token` (365 days).

```python
agent = om.create_agent(..., integrations=[{"integration": "tiktok", "credential": {
    "type": "oauth2",
    "config": {"clientKey": "...", "clientSecret": "...", "refreshToken": "...", "accessToken": "..."},
    "onTokenRefresh": save_tokens,
}}])
```

OpenMolt refreshes with TikTok's naming (`client_key`, not `client_id`). Until the app passes
TikTok's content posting audit, direct posts are private (`SELF_ONLY`). Limits: 6 init calls and
30 status calls per minute per user.

## Reference checks

TikTok publishes no machine-readable reference for the Content Posting and Display APIs (no
OpenAPI file, no SDK in a package registry), so nothing here is checked against one. The test
suite pins each tool to its documentation page instead (method, URL with its trailing slash,
query and body names, `post_info`/`source_info` fields, the scope each tool needs, the fields
each scope grants, and the lengths, item counts, ranges and enums the pages set on the inputs),
with the page cited next to each entry.
"""


def _status_tool(handle: str, description: str, scope: str) -> HttpTool:
	"""TikTok's status fetch for the flow of one tool scope.

	Its reference gives the endpoint "Scope video.upload/video.publish", either one; a tool
	needs all its tool scopes, so each flow (upload, publish) has its own status tool.
	"""
	return HttpTool(
		handle=handle,
		description=description + " Poll every few seconds (limit 30 per minute).",
		scopes=[scope],
		method="POST",
		endpoint="/v2/post/publish/status/fetch/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		body=passthrough("publish_id"),
		input_schema=obj({"publish_id": string("publish_id from an init tool.")}, ["publish_id"]),
	)


_TOOLS = [
	HttpTool(
		handle="getUserInfo",
		description="Get the authorised user's profile: open_id, display name and avatar (scope "
		"user.info.basic, the default fields); ask for username, bio_description, is_verified "
		"(user.info.profile) or follower, like and video counts (user.info.stats) in fields.",
		scopes=["read"],
		method="GET",
		endpoint="/v2/user/info/",
		query_params={
			"fields": "{{ input.fields | join: ',' | default: '" + _FIELDS_BASIC + "' }}"
		},
		input_schema=obj(
			{
				"fields": array(
					string(enum=_FIELDS_USER.split(",")),
					f"Fields to return (default: {_FIELDS_BASIC}). {_FIELDS_PROFILE} need "
					f"user.info.profile; {_FIELDS_STATS} need user.info.stats.",
				)
			}
		),
	),
	HttpTool(
		handle="queryCreatorInfo",
		description="Before posting: the creator's nickname, allowed privacy_level_options, "
		"whether comments/duet/stitch are disabled, and max_video_post_duration_sec.",
		scopes=["publish"],
		method="POST",
		endpoint="/v2/post/publish/creator_info/query/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		input_schema=obj({}),
	),
	HttpTool(
		handle="initDirectPost",
		description="Start a direct video post with caption and settings. Returns publish_id and, "
		"for FILE_UPLOAD, upload_url for uploadVideoChunk. Then poll getPostStatus.",
		scopes=["publish"],
		method="POST",
		endpoint="/v2/post/publish/video/init/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		body={
			"post_info": passthrough(
				"title",
				"privacy_level",
				"disable_duet",
				"disable_stitch",
				"disable_comment",
				"video_cover_timestamp_ms",
				"brand_content_toggle",
				"brand_organic_toggle",
				"is_aigc",
			),
			**passthrough("source_info"),
		},
		input_schema=obj(
			{
				"title": string(
					"Caption with #hashtags and @mentions, up to 2200 characters.", maxLength=2200
				),
				"privacy_level": _PRIVACY,
				"disable_duet": boolean("Turn off duets."),
				"disable_stitch": boolean("Turn off stitches."),
				"disable_comment": boolean("Turn off comments."),
				"video_cover_timestamp_ms": integer(
					"Frame used as cover, in milliseconds.", minimum=0
				),
				"brand_content_toggle": boolean("Paid partnership promoting a third-party brand."),
				"brand_organic_toggle": boolean("Promotes the creator's own business."),
				"is_aigc": boolean("The video is AI-generated."),
				"source_info": _SOURCE_INFO,
			},
			["privacy_level", "source_info"],
		),
	),
	HttpTool(
		handle="initInboxUpload",
		description="Upload a video to the creator's TikTok inbox as a draft they finish in the "
		"app (needs only video.upload). Returns publish_id and upload_url; then send the bytes "
		"with uploadVideoChunk and poll getInboxUploadStatus.",
		scopes=["upload"],
		method="POST",
		endpoint="/v2/post/publish/inbox/video/init/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		body=passthrough("source_info"),
		input_schema=obj({"source_info": _SOURCE_INFO}, ["source_info"]),
	),
	HttpTool(
		handle="uploadVideoChunk",
		description="PUT one chunk of the video to the upload_url from an init tool: give the "
		"whole video file and the chunk's byte range (fileInfo with chunkSize and mergeRemainder "
		"lists them). A single-chunk upload sends first_byte 0 and last_byte total_bytes-1; "
		"chunks must be sent in order.",
		scopes=["upload"],
		method="PUT",
		base_url="{{ input.upload_url }}",
		input_origins=["https://*.tiktokapis.com"],
		endpoint="",
		request_format="binary",
		headers={
			"Content-Type": "{{ input.content_type | default: 'video/mp4' }}",
			"Content-Range": "bytes {{ input.first_byte }}-{{ input.last_byte }}/{{ input.total_bytes }}",
		},
		body="{{ input.file }}#bytes={{ input.first_byte }}-{{ input.last_byte }}",
		input_schema=obj(
			{
				"upload_url": string(
					"upload_url from initDirectPost or initInboxUpload.",
					pattern="^https://[a-z0-9.-]+\\.tiktokapis\\.com/",
				),
				"file": string(
					"File reference of the whole video: openmolt-file:<id>, data:<type>;base64,<data> or fileSystem:<path> (without #bytes=; the range comes from first_byte and last_byte)."
				),
				"first_byte": integer("Offset of the chunk's first byte.", minimum=0),
				"last_byte": integer("Offset of the chunk's last byte (inclusive).", minimum=0),
				"total_bytes": integer("Size of the whole video (video_size).", minimum=1),
				"content_type": string(
					"Video MIME type.",
					enum=["video/mp4", "video/quicktime", "video/webm"],
					default="video/mp4",
				),
			},
			["upload_url", "file", "first_byte", "last_byte", "total_bytes"],
		),
	),
	HttpTool(
		handle="initPhotoPost",
		description="Publish a photo post (1 to 35 photos from URLs on a verified domain) "
		"directly to the profile (scope video.publish; query creator info first). Returns "
		"publish_id; poll getPostStatus. To let the creator finish it in the app, use "
		"uploadPhotosToInbox.",
		scopes=["publish"],
		method="POST",
		endpoint="/v2/post/publish/content/init/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		body={
			"post_info": passthrough(
				"title",
				"description",
				"privacy_level",
				"disable_comment",
				"auto_add_music",
				"brand_content_toggle",
				"brand_organic_toggle",
			),
			"source_info": _PHOTO_SOURCE,
			"post_mode": "DIRECT_POST",
			"media_type": "PHOTO",
		},
		input_schema=obj(
			{
				"title": _PHOTO_TITLE,
				"description": _PHOTO_DESCRIPTION,
				"privacy_level": _PRIVACY,
				"disable_comment": boolean("Turn off comments."),
				"auto_add_music": boolean("Let TikTok add music."),
				"brand_content_toggle": boolean(
					"Paid partnership promoting a third-party brand (shown as 'Paid "
					"partnership'); such posts cannot be SELF_ONLY."
				),
				"brand_organic_toggle": boolean(
					"Promotes the creator's own business (shown as 'Promotional content')."
				),
				"photo_images": _PHOTO_IMAGES,
				"photo_cover_index": _PHOTO_COVER,
			},
			[
				"privacy_level",
				"brand_content_toggle",
				"brand_organic_toggle",
				"photo_images",
				"photo_cover_index",
			],
		),
	),
	HttpTool(
		handle="uploadPhotosToInbox",
		description="Send photos (1 to 35, from URLs on a verified domain) to the creator's "
		"TikTok inbox, where they finish and post them in the app (scope video.upload only). "
		"Returns publish_id; poll getInboxUploadStatus (SEND_TO_USER_INBOX).",
		scopes=["upload"],
		method="POST",
		endpoint="/v2/post/publish/content/init/",
		headers={"Content-Type": "application/json; charset=UTF-8"},
		body={
			"post_info": passthrough("title", "description"),
			"source_info": _PHOTO_SOURCE,
			"post_mode": "MEDIA_UPLOAD",
			"media_type": "PHOTO",
		},
		input_schema=obj(
			{
				"title": _PHOTO_TITLE,
				"description": _PHOTO_DESCRIPTION,
				"photo_images": _PHOTO_IMAGES,
				"photo_cover_index": _PHOTO_COVER,
			},
			# post_info is required on this endpoint and an empty one is not sent: the title
			# (which the creator can still change in the app) is what always fills it.
			["title", "photo_images", "photo_cover_index"],
		),
	),
	_status_tool(
		"getPostStatus",
		"Status of a direct post (initDirectPost, initPhotoPost) by publish_id: "
		"PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, PUBLISH_COMPLETE or FAILED (with fail_reason).",
		"publish",
	),
	_status_tool(
		"getInboxUploadStatus",
		"Status of an inbox upload (initInboxUpload, uploadPhotosToInbox) by publish_id: "
		"PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, SEND_TO_USER_INBOX (the creator finishes it in "
		"the app) or FAILED (with fail_reason).",
		"upload",
	),
	HttpTool(
		handle="listVideos",
		description="List the user's public videos, newest first; page with cursor while has_more.",
		scopes=["read"],
		method="POST",
		endpoint="/v2/video/list/",
		query_params={"fields": _FIELDS_VIDEO},
		body=passthrough("max_count", "cursor"),
		input_schema=obj(
			{
				"max_count": integer("Videos per page.", minimum=1, maximum=20, default=10),
				"cursor": integer("The cursor returned by the previous page."),
			}
		),
	),
	HttpTool(
		handle="queryVideos",
		description="Get the user's videos by id (up to 20), e.g. to refresh counts or cover URLs.",
		scopes=["read"],
		method="POST",
		endpoint="/v2/video/query/",
		query_params={"fields": _FIELDS_VIDEO},
		body={"filters": passthrough("video_ids")},
		input_schema=obj(
			{"video_ids": array(string(), "Video ids.", minItems=1, maxItems=20)},
			["video_ids"],
		),
	),
	file_info_tool(scopes=["upload"]),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"getUserInfo": [],
		"queryCreatorInfo": [],
		"initInboxUpload": [],
		"uploadVideoChunk": [],
		"uploadPhotosToInbox": [],
		"getPostStatus": [],
		"getInboxUploadStatus": [],
		"listVideos": [],
		"queryVideos": [],
		"fileInfo": [],
		"initDirectPost": ["outbound"],
		"initPhotoPost": ["outbound"],
	},
	name="TikTok",
	description="Post videos and photos to TikTok, check publish status, read the profile and videos.",
	api_version="v2 (Content Posting API, Display API)",
	api_setup=ApiSetup(base_url="https://open.tiktokapis.com"),
	# TikTok names the client id client_key in its token requests.
	auths={"oauth2": partial(OAuth2Auth, client_id_param="client_key")},
	credential_setup=[
		OAuth2Credential(
			type="oauth2",
			auth_url="https://www.tiktok.com/v2/auth/authorize/",
			token_url="https://open.tiktokapis.com/v2/oauth/token/",
			client_id="{{ config.clientKey }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scope_separator=",",
			# TikTok Login Kit for web: client_key, comma-separated scopes, the client secret
			# at the token URL; its PKCE is for desktop and mobile apps only.
			client_id_param="client_key",
			pkce="unsupported",
			client_secret_required=True,
			scopes=[
				"user.info.basic",
				"user.info.profile",
				"user.info.stats",
				"video.list",
				"video.upload",
				"video.publish",
			],
		),
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		),
	],
	scopes={
		"read": "Read the profile and videos.",
		"upload": "Upload videos and photos to the creator's inbox (TikTok scope video.upload).",
		"publish": "Post videos and photos directly (TikTok scope video.publish).",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the TikTok integration."""
	register(INTEGRATION)
