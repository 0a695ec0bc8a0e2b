"""YouTube Data API v3: search, video upload and metadata, playlists, comments, ratings and thumbnails."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	HttpTool,
	Integration,
	file_info_tool,
)
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._google import (
	ENCODERS,
	PAGE_TOKEN,
	UPLOAD_ID,
	google_oauth2,
	resumable_session_tools,
	token_guide,
)

__all__ = ["INTEGRATION", "TOOLS", "register_integrations"]

_SCOPES = {
	"https://www.googleapis.com/auth/youtube.force-ssl": "Manage the YouTube account: videos, playlists, comments, ratings.",
	"https://www.googleapis.com/auth/youtube.upload": "Upload videos.",
}
_FORCE_SSL = "https://www.googleapis.com/auth/youtube.force-ssl"
_SCOPE_MAP = {
	# commentThreads.list accepts only youtube.force-ssl (discovery youtube.v3), so reading
	# comments needs it; youtube.readonly would leave listCommentThreads refused.
	"read": [_FORCE_SSL],
	# videos.insert and thumbnails.set accept youtube.upload, the narrowest.
	"upload": ["https://www.googleapis.com/auth/youtube.upload"],
	"write": [_FORCE_SSL],
	"comment": [_FORCE_SSL],
	"delete": [_FORCE_SSL],
}
"""The YouTube OAuth scopes each tool scope needs (``openmolt auth youtube --scopes upload`` asks
only for youtube.upload); each authorizes every method its tools call."""

_V3 = "/youtube/v3"
_VIDEO_ID = {"type": "string", "description": "The video id (the v= part of a watch URL)."}
_MAX = {
	"type": "integer",
	"minimum": 0,
	"maximum": 50,
	"default": 25,
	"description": "Results per page (max 50).",
}


def _part(default: str, choices: list[str]) -> dict[str, Any]:
	return {
		"type": "array",
		"items": {"type": "string", "enum": choices},
		"description": f"Which parts of each resource to return (default {default.split(',')}). Each part costs quota.",
	}


def _part_query(default: str) -> str:
	return f"{{{{ input.part | join: ',' | default: '{default}' }}}}"


_FILE_REF = {
	"type": "string",
	"description": "The file as a reference: 'openmolt-file:<id>' from an earlier tool, 'data:<type>;base64,<data>' or a 'fileSystem:<path>'.",
}
_PRIVACY = {
	"type": "string",
	"enum": ["private", "unlisted", "public"],
	"description": "Who can watch it (default private). To schedule, upload as private with publishAt.",
}
_SNIPPET_FIELDS: dict[str, Any] = {
	"title": {
		"type": "string",
		"maxLength": 100,
		"description": "The title (max 100 characters, no '<' or '>').",
	},
	"description": {
		"type": "string",
		"maxLength": 5000,
		"description": "The description (max 5000 bytes).",
	},
	"tags": array({"type": "string"}, "Keyword tags."),
	"categoryId": {
		"type": "string",
		"description": "Video category id, e.g. '22' People & Blogs, '27' Education, '28' Science & Technology, '10' Music, '20' Gaming, '24' Entertainment (default 22).",
	},
	"defaultLanguage": {
		"type": "string",
		"description": "Language of title and description, e.g. 'en'.",
	},
}
_STATUS_FIELDS: dict[str, Any] = {
	"privacyStatus": _PRIVACY,
	"publishAt": {
		"type": "string",
		"format": "date-time",
		"description": "RFC 3339 time to publish a private video automatically, e.g. '2026-12-24T09:00:00Z'.",
	},
	"selfDeclaredMadeForKids": {
		"type": "boolean",
		"description": "Whether the video is made for kids (COPPA); required by YouTube policy.",
	},
	"embeddable": {"type": "boolean", "description": "Whether it can be embedded on other sites."},
	"license": {
		"type": "string",
		"enum": ["youtube", "creativeCommon"],
		"description": "The video's license.",
	},
}
_VIDEO_METADATA = {
	"snippet": passthrough(
		"title",
		"description",
		"tags",
		"defaultLanguage",
		categoryId="{{ input.categoryId | default: '22' }}",
	),
	"status": passthrough(
		"publishAt",
		"selfDeclaredMadeForKids",
		"embeddable",
		"license",
		privacyStatus="{{ input.privacyStatus | default: 'private' }}",
	),
}
_LIST_OUT = obj(
	{
		"items": {"type": "array", "items": {"type": "object"}},
		"nextPageToken": {"type": "string", "description": "Pass as pageToken for more results."},
		"pageInfo": obj(
			{"totalResults": {"type": "integer"}, "resultsPerPage": {"type": "integer"}}
		),
	}
)
_VIDEO_OUT = obj(
	{
		"id": {"type": "string"},
		"snippet": {"type": "object"},
		"status": obj({"uploadStatus": {"type": "string"}, "privacyStatus": {"type": "string"}}),
	}
)

TOOLS = [
	HttpTool(
		handle="search",
		description="Search YouTube for videos, channels or playlists. Costs 100 quota units per call (of 10,000 a day): prefer listVideos/listPlaylistItems when ids are known.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/search",
		query_params=passthrough(
			"q",
			"channelId",
			"forMine",
			"order",
			"publishedAfter",
			"publishedBefore",
			"regionCode",
			"relevanceLanguage",
			"videoDuration",
			"pageToken",
			part="snippet",
			type="{{ input.type | join: ',' }}",
			maxResults="{{ input.maxResults | default: 25 }}",
		),
		input_schema=obj(
			{
				"q": {
					"type": "string",
					"description": "Search terms; use | for OR and - to exclude ('cats -dogs').",
				},
				"type": {
					"type": "array",
					"items": {"type": "string", "enum": ["video", "channel", "playlist"]},
					"description": "Resource types to return (default all).",
				},
				"channelId": {"type": "string", "description": "Only results from this channel."},
				"forMine": {
					"type": "boolean",
					"description": "Only the authenticated user's videos (type must be video).",
				},
				"order": {
					"type": "string",
					"enum": ["relevance", "date", "rating", "title", "videoCount", "viewCount"],
					"description": "Sort order (default relevance).",
				},
				"publishedAfter": {
					"type": "string",
					"format": "date-time",
					"description": "RFC 3339 time, e.g. '2026-11-01T00:00:00Z'.",
				},
				"publishedBefore": {
					"type": "string",
					"format": "date-time",
					"description": "RFC 3339 time.",
				},
				"regionCode": {
					"type": "string",
					"description": "ISO 3166-1 country code, e.g. 'US'.",
				},
				"relevanceLanguage": {
					"type": "string",
					"description": "ISO 639-1 language to favour, e.g. 'en'.",
				},
				"videoDuration": {
					"type": "string",
					"enum": ["any", "short", "medium", "long"],
					"description": "With type video: <4 min, 4-20 min or >20 min.",
				},
				"maxResults": _MAX,
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="listVideos",
		description="Get videos by id (details, statistics, status), the most popular chart, or the videos the user liked. 1 quota unit.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/videos",
		query_params={
			"part": _part_query("snippet,contentDetails,statistics,status"),
			"id": "{{ input.id | join: ',' }}",
			**passthrough("chart", "myRating", "regionCode", "maxResults", "pageToken"),
		},
		input_schema=obj(
			{
				"id": {
					"type": "array",
					"items": {"type": "string"},
					"maxItems": 50,
					"description": "Video ids (give id, chart or myRating).",
				},
				"chart": {
					"type": "string",
					"enum": ["mostPopular"],
					"description": "The most popular videos (with regionCode).",
				},
				"myRating": {
					"type": "string",
					"enum": ["like", "dislike"],
					"description": "Videos the user rated so.",
				},
				"regionCode": {"type": "string", "description": "ISO country code for the chart."},
				"part": _part(
					"snippet,contentDetails,statistics,status",
					[
						"snippet",
						"contentDetails",
						"statistics",
						"status",
						"player",
						"topicDetails",
						"recordingDetails",
						"liveStreamingDetails",
						"localizations",
					],
				),
				"maxResults": {
					**_MAX,
					"minimum": 1,
					"default": 5,
					"description": "With chart or myRating: results per page (max 50; YouTube's default 5).",
				},
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="uploadVideo",
		description="Upload a video with its title, description and privacy in one request (best for files up to a few hundred MB; use startResumableVideoUpload for large ones). Costs about 100 quota units. Unverified API projects can only upload private videos.",
		scopes=["upload"],
		method="POST",
		endpoint="/upload/youtube/v3/videos",
		query_params=passthrough(
			"notifySubscribers", uploadType="multipart", part="snippet,status"
		),
		request_format="multipart-related",
		body={"metadata": _VIDEO_METADATA, "media": "{{ input.video }}"},
		input_schema=obj(
			{
				"video": {
					**_FILE_REF,
					"description": "The video file (mp4, mov, webm...) as a file reference.",
				},
				**_SNIPPET_FIELDS,
				**_STATUS_FIELDS,
				"notifySubscribers": {
					"type": "boolean",
					"description": "Notify subscribers of a public video (default true).",
				},
			},
			["video", "title"],
		),
		output_schema=_VIDEO_OUT,
	),
	HttpTool(
		handle="startResumableVideoUpload",
		description="Start a resumable upload for a large video: sends the metadata and returns the session URL in 'Location'; then send the video with uploadVideoContent (one request) or in chunks with uploadVideoChunk (getVideoUploadStatus resumes after an interruption).",
		scopes=["upload"],
		method="POST",
		endpoint="/upload/youtube/v3/videos",
		query_params=passthrough(
			"notifySubscribers", uploadType="resumable", part="snippet,status"
		),
		headers={
			"X-Upload-Content-Type": "{{ input.contentType }}",
			"X-Upload-Content-Length": "{{ input.size }}",
		},
		body=_VIDEO_METADATA,
		response_headers=["Location"],
		input_schema=obj(
			{
				**_SNIPPET_FIELDS,
				**_STATUS_FIELDS,
				"notifySubscribers": {
					"type": "boolean",
					"description": "Notify subscribers of a public video (default true).",
				},
				"contentType": {
					"type": "string",
					"description": "Media type of the video, e.g. 'video/mp4'.",
				},
				"size": {"type": "integer", "description": "Size of the video in bytes, if known."},
			},
			["title"],
		),
		output_schema=obj(
			{"Location": {"type": "string", "description": "The upload session URL."}}
		),
	),
	HttpTool(
		handle="uploadVideoContent",
		description="Send the video bytes to a resumable upload session from startResumableVideoUpload; returns the created video.",
		scopes=["upload"],
		method="PUT",
		endpoint="/upload/youtube/v3/videos",
		query_params={"uploadType": "resumable", "upload_id": UPLOAD_ID},
		request_format="binary",
		body="{{ input.video }}",
		input_schema=obj(
			{
				"uploadUrl": {
					"type": "string",
					"description": "The Location URL from startResumableVideoUpload (or its upload_id).",
				},
				"video": {**_FILE_REF, "description": "The video file as a file reference."},
			},
			["uploadUrl", "video"],
		),
		output_schema=_VIDEO_OUT,
	),
	HttpTool(
		handle="updateVideo",
		description=(
			"Change a video's title, description, tags and category, and optionally its status. "
			"YouTube replaces each part sent as a whole: always give title and categoryId (read "
			"them with listVideos first). Give `status` only to change privacy or other status "
			"settings, and then give every status field you want to keep."
		),
		scopes=["write"],
		method="PUT",
		endpoint=f"{_V3}/videos",
		# Without `status` only the snippet part is sent, so privacy and the other status
		# settings stay as they are (videos.update clears fields of any part it is given).
		query_params={"part": "snippet{% if input.status %},status{% endif %}"},
		body={"snippet": _VIDEO_METADATA["snippet"], **passthrough("id", "status")},
		input_schema=obj(
			{
				"id": _VIDEO_ID,
				**_SNIPPET_FIELDS,
				"status": obj(
					dict(_STATUS_FIELDS),
					["privacyStatus"],
					description=(
						"The video's new status, replacing the current one as a whole: give "
						"privacyStatus and every other status field to keep."
					),
				),
			},
			["id", "title", "categoryId"],
		),
		output_schema=_VIDEO_OUT,
	),
	HttpTool(
		handle="deleteVideo",
		description="Delete a video from the user's channel (cannot be undone).",
		scopes=["delete"],
		method="DELETE",
		endpoint=f"{_V3}/videos",
		query_params=passthrough("id"),
		input_schema=obj({"id": _VIDEO_ID}, ["id"]),
	),
	HttpTool(
		handle="rateVideo",
		description="Like or dislike a video, or remove the rating.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_V3}/videos/rate",
		query_params=passthrough("id", "rating"),
		input_schema=obj(
			{
				"id": _VIDEO_ID,
				"rating": {
					"type": "string",
					"enum": ["like", "dislike", "none"],
					"description": "The rating.",
				},
			},
			["id", "rating"],
		),
	),
	HttpTool(
		handle="setThumbnail",
		description="Set a custom thumbnail for a video (JPEG or PNG, max 2 MB, 1280x720 recommended; the channel must be verified).",
		scopes=["write"],
		method="POST",
		endpoint="/upload/youtube/v3/thumbnails/set",
		query_params=passthrough("videoId", uploadType="media"),
		request_format="binary",
		body="{{ input.image }}",
		input_schema=obj(
			{
				"videoId": _VIDEO_ID,
				"image": {
					**_FILE_REF,
					"description": "The image (JPEG or PNG) as a file reference.",
				},
			},
			["videoId", "image"],
		),
		output_schema=obj({"items": {"type": "array", "items": {"type": "object"}}}),
	),
	HttpTool(
		handle="listChannels",
		description="Get channels: the user's own (mine), by id, or by @handle. Includes the uploads playlist id in contentDetails.relatedPlaylists.uploads.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/channels",
		query_params={
			"part": _part_query("snippet,contentDetails,statistics"),
			"id": "{{ input.id | join: ',' }}",
			**passthrough("mine", "forHandle", "maxResults", "pageToken"),
		},
		input_schema=obj(
			{
				"mine": {"type": "boolean", "description": "The authenticated user's channel(s)."},
				"id": {
					"type": "array",
					"items": {"type": "string"},
					"description": "Channel ids (UC...).",
				},
				"forHandle": {
					"type": "string",
					"description": "A channel handle, e.g. '@GoogleDevelopers'.",
				},
				"part": _part(
					"snippet,contentDetails,statistics",
					[
						"snippet",
						"contentDetails",
						"statistics",
						"status",
						"brandingSettings",
						"topicDetails",
						"localizations",
					],
				),
				"maxResults": {
					**_MAX,
					"default": 5,
					"description": "Channels per page (max 50; YouTube's default 5); not with id or forHandle.",
				},
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="listPlaylists",
		description="List playlists of the user (mine), of a channel, or by id.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/playlists",
		query_params={
			"part": _part_query("snippet,status,contentDetails"),
			"id": "{{ input.id | join: ',' }}",
			"maxResults": "{{ input.maxResults | default: 25 }}",
			**passthrough("mine", "channelId", "pageToken"),
		},
		input_schema=obj(
			{
				"mine": {"type": "boolean", "description": "The authenticated user's playlists."},
				"channelId": {"type": "string", "description": "Playlists of this channel."},
				"id": {
					"type": "array",
					"items": {"type": "string"},
					"description": "Playlist ids.",
				},
				"part": _part(
					"snippet,status,contentDetails",
					["snippet", "status", "contentDetails", "player", "localizations"],
				),
				"maxResults": _MAX,
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="createPlaylist",
		description="Create a playlist on the user's channel.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_V3}/playlists",
		query_params={"part": "snippet,status"},
		body={
			"snippet": passthrough("title", "description", "defaultLanguage"),
			"status": {"privacyStatus": "{{ input.privacyStatus | default: 'private' }}"},
		},
		input_schema=obj(
			{
				"title": {"type": "string", "maxLength": 150, "description": "The playlist title."},
				"description": {"type": "string", "description": "The playlist description."},
				"defaultLanguage": {
					"type": "string",
					"description": "Language of title and description, e.g. 'en'.",
				},
				"privacyStatus": {**_PRIVACY, "description": "Who can see it (default private)."},
			},
			["title"],
		),
		output_schema=obj(
			{"id": {"type": "string"}, "snippet": {"type": "object"}, "status": {"type": "object"}}
		),
	),
	HttpTool(
		handle="listPlaylistItems",
		description="List the videos in a playlist (a channel's uploads playlist lists all its videos cheaply).",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/playlistItems",
		query_params={
			"part": _part_query("snippet,contentDetails"),
			"maxResults": "{{ input.maxResults | default: 25 }}",
			**passthrough("playlistId", "pageToken"),
		},
		input_schema=obj(
			{
				"playlistId": {
					"type": "string",
					"description": "The playlist id (PL..., or UU... for a channel's uploads).",
				},
				"part": _part(
					"snippet,contentDetails", ["snippet", "contentDetails", "status", "id"]
				),
				"maxResults": _MAX,
				"pageToken": PAGE_TOKEN,
			},
			["playlistId"],
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="addToPlaylist",
		description="Add a video to a playlist, optionally at a position.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_V3}/playlistItems",
		query_params={"part": "snippet"},
		body={
			"snippet": {
				"resourceId": passthrough("videoId", kind="youtube#video"),
				**passthrough("playlistId", "position"),
			}
		},
		input_schema=obj(
			{
				"playlistId": {"type": "string", "description": "The playlist id."},
				"videoId": _VIDEO_ID,
				"position": {
					"type": "integer",
					"minimum": 0,
					"description": "0-based position (default: the end).",
				},
			},
			["playlistId", "videoId"],
		),
		output_schema=obj({"id": {"type": "string"}, "snippet": {"type": "object"}}),
	),
	HttpTool(
		handle="listCommentThreads",
		description="List top-level comments (with replies) of a video, or of all of a channel's videos.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_V3}/commentThreads",
		query_params=passthrough(
			"videoId",
			"allThreadsRelatedToChannelId",
			"searchTerms",
			"order",
			"pageToken",
			part="snippet,replies",
			textFormat="plainText",
			maxResults="{{ input.maxResults | default: 20 }}",
		),
		input_schema=obj(
			{
				"videoId": {
					**_VIDEO_ID,
					"description": (
						"Comments of this video (give videoId or allThreadsRelatedToChannelId)."
					),
				},
				"allThreadsRelatedToChannelId": {
					"type": "string",
					"description": "A channel id: the comments on all videos of this channel.",
				},
				"searchTerms": {
					"type": "string",
					"description": "Only comments containing these words.",
				},
				"order": {
					"type": "string",
					"enum": ["time", "relevance"],
					"description": "Sort order (default time).",
				},
				"maxResults": {
					"type": "integer",
					"minimum": 1,
					"maximum": 100,
					"default": 20,
					"description": "Threads per page (max 100).",
				},
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=_LIST_OUT,
	),
	HttpTool(
		handle="postComment",
		description="Post a new top-level comment on a video.",
		scopes=["comment"],
		method="POST",
		endpoint=f"{_V3}/commentThreads",
		query_params={"part": "snippet"},
		body={
			"snippet": {
				"topLevelComment": {"snippet": passthrough("textOriginal")},
				**passthrough("videoId"),
			}
		},
		input_schema=obj(
			{
				"videoId": _VIDEO_ID,
				"textOriginal": {"type": "string", "description": "The comment text."},
			},
			["videoId", "textOriginal"],
		),
		output_schema=obj({"id": {"type": "string"}, "snippet": {"type": "object"}}),
	),
	HttpTool(
		handle="replyToComment",
		description="Reply to a top-level comment (its id from listCommentThreads: the thread's topLevelComment.id, or the thread id). The thread's replies are in listCommentThreads' replies part.",
		scopes=["comment"],
		method="POST",
		endpoint=f"{_V3}/comments",
		query_params={"part": "snippet"},
		body={"snippet": passthrough("parentId", "textOriginal")},
		input_schema=obj(
			{
				"parentId": {
					"type": "string",
					"description": "The id of the top-level comment to reply to.",
				},
				"textOriginal": {"type": "string", "description": "The reply text."},
			},
			["parentId", "textOriginal"],
		),
		output_schema=obj({"id": {"type": "string"}, "snippet": {"type": "object"}}),
	),
	*resumable_session_tools(
		endpoint="/upload/youtube/v3/videos",
		scope="upload",
		start_handle="startResumableVideoUpload",
		chunk_handle="uploadVideoChunk",
		status_handle="getVideoUploadStatus",
		file_field="video",
		file_schema={**_FILE_REF, "description": "The video file as a file reference."},
		done_schema=_VIDEO_OUT,
	),
	file_info_tool(scopes=["upload"]),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"uploadVideoContent": [],
		"deleteVideo": [],
		"rateVideo": [],
		"setThumbnail": [],
		"createPlaylist": [],
		"addToPlaylist": [],
		"uploadVideoChunk": [],
		"getVideoUploadStatus": [],
		"fileInfo": [],
		"search": ["untrusted"],
		"listVideos": ["untrusted"],
		"listPlaylistItems": ["untrusted"],
		"listCommentThreads": ["untrusted"],
		"replyToComment": ["outbound"],
		"uploadVideo": ["outbound"],
		"startResumableVideoUpload": ["outbound"],
		"updateVideo": ["outbound"],
		"postComment": ["outbound"],
		# Others' words: other people's channels and playlists (titles, descriptions).
		"listChannels": ["untrusted"],
		"listPlaylists": ["untrusted"],
	},
	encoders=ENCODERS,
	name="YouTube",
	description="Search YouTube, upload and manage videos, playlists, comments, ratings and thumbnails.",
	api_version="v3",
	api_setup=ApiSetup(base_url="https://youtube.googleapis.com"),
	credential_setup=[
		google_oauth2(*_SCOPES, scope_map=_SCOPE_MAP),
		CustomCredential(type="custom", query_params={"key": "{{ config.apiKey }}"}),
	],
	scopes={
		"read": "Search and read videos, channels, playlists and comments.",
		"upload": "Upload videos.",
		"write": "Update videos, set thumbnails, rate videos, create and fill playlists.",
		"comment": "Post comments.",
		"delete": "Delete videos.",
	},
	tools=TOOLS,
	docs=token_guide(
		"YouTube",
		"YouTube Data API v3",
		"youtube",
		_SCOPES,
		notes="""## Public data with an API key

For public reads only (search, videos, channels, playlists, comments), a plain API key is
enough: create one under APIs & Services → Credentials and use
`{"type": "custom", "config": {"apiKey": "..."}}` with `scopes: ["read"]`.

## Quota

A project gets 10,000 units a day: most reads cost 1, `search` 100, an upload about 100. Videos
uploaded by projects that have not passed Google's API audit are locked to private.

## Large videos

`startResumableVideoUpload` opens an upload session. Send the video in one request with
`uploadVideoContent`, or in chunks: `fileInfo` (with `chunkSize` a multiple of 256 KiB, e.g.
8388608) plans them, `uploadVideoChunk` sends each one (YouTube answers `308` with the `Range`
received until the last chunk), and `getVideoUploadStatus` tells where to resume after an
interruption.""",
	),
)
"""The YouTube integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register YouTube under the id ``youtube``."""
	register(INTEGRATION, id="youtube")
