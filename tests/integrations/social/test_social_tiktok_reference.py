"""TikTok tools against the official documentation, page by page (TikTok publishes no spec).

The Content Posting and Display APIs have no OpenAPI file or SDK in a package registry
(``tiktok-business-api-sdk`` is the Marketing API), so each request is pinned to its
documentation page, cited next to it: method, URL (with the trailing slash), query and body
names, nested post_info/source_info names, and the Login Kit scope each tool needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from _edit import pop_at, with_input_schema, with_tool

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import tiktok


def _tools(integration: Integration) -> list[HttpTool]:
	return [t for t in integration.tools if isinstance(t, HttpTool)]


def _url(integration: Integration, tool: HttpTool) -> str:
	return (tool.base_url or integration.api_setup.base_url) + tool.endpoint


# Requests of the official documentation, page by page.
TIKTOK_DOCS = {
	# https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info
	"getUserInfo": ("GET", "https://open.tiktokapis.com/v2/user/info/", {"fields"}, set()),
	# https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info
	"queryCreatorInfo": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/creator_info/query/",
		set(),
		set(),
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-direct-post
	"initDirectPost": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/video/init/",
		set(),
		{"post_info", "source_info"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-upload-video
	"initInboxUpload": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/inbox/video/init/",
		set(),
		{"source_info"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-photo-post
	"initPhotoPost": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/content/init/",
		set(),
		{"post_info", "source_info", "post_mode", "media_type"},
	),
	# the same page, post_mode MEDIA_UPLOAD ("Scope: video.publish or video.upload")
	"uploadPhotosToInbox": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/content/init/",
		set(),
		{"post_info", "source_info", "post_mode", "media_type"},
	),
	# https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status
	"getPostStatus": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/status/fetch/",
		set(),
		{"publish_id"},
	),
	# the same page and request: "Scope video.upload/video.publish", one tool per tool scope
	"getInboxUploadStatus": (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/status/fetch/",
		set(),
		{"publish_id"},
	),
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-list
	"listVideos": (
		"POST",
		"https://open.tiktokapis.com/v2/video/list/",
		{"fields"},
		{"max_count", "cursor"},
	),
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-query
	"queryVideos": ("POST", "https://open.tiktokapis.com/v2/video/query/", {"fields"}, {"filters"}),
}
# https://developers.tiktok.com/doc/content-posting-api-reference-direct-post (post_info, source_info)
TIKTOK_POST_INFO = {
	"title",
	"privacy_level",
	"disable_duet",
	"disable_stitch",
	"disable_comment",
	"video_cover_timestamp_ms",
	"brand_content_toggle",
	"brand_organic_toggle",
	"is_aigc",
}
TIKTOK_SOURCE_INFO = {"source", "video_size", "chunk_size", "total_chunk_count", "video_url"}


# https://developers.tiktok.com/doc/content-posting-api-reference-photo-post (post_info)
TIKTOK_PHOTO_POST_INFO = {
	"title",
	"description",
	"privacy_level",
	"disable_comment",
	"auto_add_music",
	"brand_content_toggle",
	"brand_organic_toggle",
}
TIKTOK_PHOTO_SOURCE_INFO = {"source", "photo_images", "photo_cover_index"}
# https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info: the fields each scope grants.
TIKTOK_USER_FIELDS = {
	"user.info.basic": {
		"open_id",
		"union_id",
		"avatar_url",
		"avatar_url_100",
		"avatar_large_url",
		"display_name",
	},
	"user.info.profile": {"bio_description", "profile_deep_link", "is_verified", "username"},
	"user.info.stats": {"follower_count", "following_count", "likes_count", "video_count"},
}
# The Login Kit scope each tool scope stands for (https://developers.tiktok.com/doc/scopes-overview):
# direct posts need video.publish; inbox uploads (video or photo MEDIA_UPLOAD) need video.upload.
TIKTOK_TOOL_SCOPES = {
	"initDirectPost": "publish",
	"queryCreatorInfo": "publish",
	"initPhotoPost": "publish",
	"initInboxUpload": "upload",
	"uploadVideoChunk": "upload",
	"uploadPhotosToInbox": "upload",
	# https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status:
	# "Scope video.upload/video.publish"; a tool needs all its tool scopes, so each flow has its
	# own status tool, and a read-only agent (user.info.*, video.list) has none.
	"getPostStatus": "publish",
	"getInboxUploadStatus": "upload",
}


def check_tiktok(integration: Integration) -> int:
	"""Assert each TikTok tool is its documented request; return the checks made."""
	checked = 0
	for tool in _tools(integration):
		if tool.handle == "uploadVideoChunk":
			# https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide:
			# PUT {UPLOAD_URL}, Content-Range: bytes {FIRST_BYTE}-{LAST_BYTE}/{TOTAL_BYTE_LENGTH}
			assert (tool.method, tool.base_url, tool.request_format) == (
				"PUT",
				"{{ input.upload_url }}",
				"binary",
			)
			assert (
				tool.headers["Content-Range"]
				== "bytes {{ input.first_byte }}-{{ input.last_byte }}/{{ input.total_bytes }}"
			)
			checked += 1
			continue
		assert tool.handle in TIKTOK_DOCS, f"{tool.handle}: no documented request"
		method, url, query, body = TIKTOK_DOCS[tool.handle]
		assert (tool.method, _url(integration, tool)) == (method, url), tool.handle
		assert set(tool.query_params) == query, tool.handle
		assert (set(tool.body) if isinstance(tool.body, dict) else set()) == body, tool.handle
		checked += 1
	tools = {t.handle: t for t in _tools(integration)}
	assert set(tools["initDirectPost"].body["post_info"]) == TIKTOK_POST_INFO
	source = tools["initDirectPost"].input_schema["properties"]["source_info"]["properties"]
	assert set(source) == TIKTOK_SOURCE_INFO
	for handle in ("initPhotoPost", "uploadPhotosToInbox"):
		assert set(tools[handle].body["post_info"]) <= TIKTOK_PHOTO_POST_INFO, handle
		assert set(tools[handle].body["source_info"]) == TIKTOK_PHOTO_SOURCE_INFO, handle
	return checked


def test_tiktok_tools_follow_the_official_documentation() -> None:
	"""Each TikTok tool sends the method, URL (with trailing slash) and fields of the documented request."""
	assert check_tiktok(tiktok.INTEGRATION) == len(_tools(tiktok.INTEGRATION))
	oauth = tiktok.INTEGRATION.credential("oauth2")
	assert oauth is not None
	# https://developers.tiktok.com/doc/oauth-user-access-token-management
	assert oauth.token_url == "https://open.tiktokapis.com/v2/oauth/token/"
	# TikTok's token requests name the client id client_key: its own oauth2 auth says so.
	auth = tiktok.INTEGRATION.auths["oauth2"](
		oauth, {"clientKey": "k"}, "tiktok", on_token_refresh=None, http=lambda: None
	)
	assert auth.client_id_param == "client_key"
	# https://developers.tiktok.com/doc/login-kit-web
	assert oauth.auth_url == "https://www.tiktok.com/v2/auth/authorize/"
	assert oauth.scope_separator == ","  # "comma (,) separated" in Login Kit for Web


def test_photo_posts_carry_the_brand_disclosure_toggles() -> None:
	"""A direct photo post sends both brand toggles, and the model must decide them."""
	tool = next(t for t in _tools(tiktok.INTEGRATION) if t.handle == "initPhotoPost")
	info = tool.body["post_info"]
	for name in ("brand_content_toggle", "brand_organic_toggle"):
		assert info[name] == "{{ input." + name + " }}"
		assert tool.input_schema["properties"][name]["type"] == "boolean"
		assert name in tool.input_schema["required"]
	assert tool.body["post_mode"] == "DIRECT_POST"


def test_inbox_photo_uploads_need_only_the_upload_scope() -> None:
	"""Tools that only put content in the inbox need the upload scope, direct posts publish."""
	tools = {t.handle: t for t in _tools(tiktok.INTEGRATION)}
	for handle, scope in TIKTOK_TOOL_SCOPES.items():
		assert tools[handle].scopes == [scope], handle
	assert tools["uploadPhotosToInbox"].body["post_mode"] == "MEDIA_UPLOAD"
	assert "video.upload" in tiktok.INTEGRATION.scopes["upload"]
	assert "video.publish" in tiktok.INTEGRATION.scopes["publish"]


def test_default_user_fields_work_with_a_basic_token() -> None:
	"""getUserInfo asks by default only for user.info.basic fields; the others are offered by name."""
	tool = next(t for t in _tools(tiktok.INTEGRATION) if t.handle == "getUserInfo")
	default = re.search(r"default: '([^']+)'", tool.query_params["fields"])
	assert default is not None
	assert set(default.group(1).split(",")) <= TIKTOK_USER_FIELDS["user.info.basic"]
	offered = set(tool.input_schema["properties"]["fields"]["items"]["enum"])
	assert offered <= set().union(*TIKTOK_USER_FIELDS.values())


# The body fields each page marks "Required: true" (post_info and source_info are objects).
TIKTOK_REQUIRED_BODY = {
	"initDirectPost": {"post_info", "source_info"},
	"initInboxUpload": {"source_info"},
	"initPhotoPost": {"post_info", "source_info", "post_mode", "media_type"},
	"uploadPhotosToInbox": {"post_info", "source_info", "post_mode", "media_type"},
	"getPostStatus": {"publish_id"},
}


def _always_sent(value: Any, required: set[str]) -> bool:
	"""Whether a body template always renders to something: a constant, a required input, or an
	object with one such value (an object whose values are all missing optionals is left out)."""
	if isinstance(value, dict):
		return any(_always_sent(v, required) for v in value.values())
	if isinstance(value, str):
		used = re.fullmatch(r"\{\{ input\.(\w+) \}\}", value)
		return used is None or used.group(1) in required
	return True


def required_body_errors(integration: Integration) -> list[str]:
	"""The documented required body fields a tool may leave out (or could send empty)."""
	errors = []
	for tool in _tools(integration):
		required = set(tool.input_schema.get("required", []))
		body = tool.body if isinstance(tool.body, dict) else {}
		for name in sorted(TIKTOK_REQUIRED_BODY.get(tool.handle, set())):
			if name not in body or not _always_sent(body[name], required):
				errors.append(f"{tool.handle}.{name} is required but may be left out")
	return errors


def test_required_body_objects_are_never_sent_empty_or_left_out() -> None:
	"""Every body field a page requires is always sent; post_info always has something in it."""
	assert required_body_errors(tiktok.INTEGRATION) == []


@pytest.mark.parametrize(
	("handle", "field"),
	[
		("uploadPhotosToInbox", "title"),
		("initDirectPost", "privacy_level"),
		("initInboxUpload", "source_info"),
	],
)
def test_an_optional_input_that_fills_a_required_object_fails_the_check(
	handle: str, field: str
) -> None:
	"""Making the input that fills a required body object optional makes the check fail."""
	broken = with_input_schema(
		tiktok.INTEGRATION,
		handle,
		lambda s: s.update(required=[r for r in s["required"] if r != field]),
	)
	assert required_body_errors(broken)


# Constraints the documentation pages set on the fields, by tool and input path (TikTok has no
# machine-readable reference): the inputs must carry them (equal, or stricter).
_PRIVACY_LEVELS = [
	"PUBLIC_TO_EVERYONE",
	"MUTUAL_FOLLOW_FRIENDS",
	"FOLLOWER_OF_CREATOR",
	"SELF_ONLY",
]
TIKTOK_LIMITS: dict[tuple[str, str], dict[str, Any]] = {
	# https://developers.tiktok.com/doc/content-posting-api-reference-direct-post: post_info.title
	# up to 2200 UTF-16 runes, privacy_level "Enum of", source_info.source FILE_UPLOAD or
	# PULL_FROM_URL.
	("initDirectPost", "title"): {"maxLength": 2200},
	("initDirectPost", "privacy_level"): {"enum": _PRIVACY_LEVELS},
	("initDirectPost", "source_info.source"): {"enum": ["FILE_UPLOAD", "PULL_FROM_URL"]},
	# https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide: "a minimum of 1
	# chunk and a maximum of 1000 chunks".
	("initDirectPost", "source_info.total_chunk_count"): {"minimum": 1, "maximum": 1000},
	("initInboxUpload", "source_info.total_chunk_count"): {"minimum": 1, "maximum": 1000},
	# https://developers.tiktok.com/doc/content-posting-api-reference-photo-post: title 90 and
	# description 4000 UTF-16 runes, privacy_level's enum, "up to 35 photo content URLs".
	("initPhotoPost", "title"): {"maxLength": 90},
	("initPhotoPost", "description"): {"maxLength": 4000},
	("initPhotoPost", "privacy_level"): {"enum": _PRIVACY_LEVELS},
	("initPhotoPost", "photo_images"): {"maxItems": 35},
	("uploadPhotosToInbox", "title"): {"maxLength": 90},
	("uploadPhotosToInbox", "description"): {"maxLength": 4000},
	("uploadPhotosToInbox", "photo_images"): {"maxItems": 35},
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-list: max_count "Maximum is 20".
	("listVideos", "max_count"): {"maximum": 20},
	# https://developers.tiktok.com/doc/tiktok-api-v2-video-query: "Up to 20 video IDs can be included per
	# request".
	("queryVideos", "video_ids"): {"maxItems": 20},
}


def limit_errors(integration: Integration) -> list[str]:
	"""The documented constraints an input schema leaves open."""
	tools = {t.handle: t for t in _tools(integration)}
	errors = []
	for (handle, path), limits in TIKTOK_LIMITS.items():
		schema: dict[str, Any] = tools[handle].input_schema
		for step in path.split("."):
			schema = schema["properties"][step]
		for key, value in limits.items():
			ours = schema.get(key)
			if key == "enum":
				ok = ours is not None and set(ours) <= set(value)
			elif key.startswith("max"):
				ok = ours is not None and ours <= value
			else:
				ok = ours is not None and ours >= value
			if not ok:
				errors.append(f"{handle}.{path}: {key} {value} (ours {ours})")
	return errors


def test_tiktok_inputs_carry_the_documented_limits() -> None:
	"""Lengths, counts, ranges and enums the documentation sets are in the input schemas."""
	assert limit_errors(tiktok.INTEGRATION) == []


@pytest.mark.parametrize("case", sorted(f"{h}.{p}" for h, p in TIKTOK_LIMITS))
def test_a_tiktok_input_without_its_limit_fails_the_check(case: str) -> None:
	"""Dropping a documented constraint from an input makes the check fail."""
	handle, path = case.split(".", 1)
	change = pop_at(path, *TIKTOK_LIMITS[(handle, path)])
	assert limit_errors(with_input_schema(tiktok.INTEGRATION, handle, change))


_BREAKS: dict[str, Callable[[HttpTool], dict[str, Any]]] = {
	"method": lambda t: {"method": "PUT" if t.method != "PUT" else "PATCH"},
	"path": lambda t: {"endpoint": t.endpoint + "nonexistent/"},
	"query": lambda t: {"query_params": {**t.query_params, "nonexistent_param": "1"}},
	"body": lambda t: {"body": {**(t.body or {}), "nonexistent_field": "1"}},
}


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize("handle", ["initPhotoPost", "listVideos", "getUserInfo"])
def test_a_wrong_tiktok_request_fails_the_check(handle: str, broken: str) -> None:
	"""A wrong method, path, query name or body name of a TikTok tool fails its check."""
	with pytest.raises(AssertionError):
		check_tiktok(with_tool(tiktok.INTEGRATION, handle, _BREAKS[broken]))


# The defaults the documentation states, for inputs the tools leave out when not given (TikTok
# then applies its own): https://developers.tiktok.com/doc/tiktok-api-v2-video-list, max_count
# "Default is 10. Maximum is 20."
TIKTOK_DEFAULTS = {("listVideos", "max_count"): 10}


def default_errors(integration: Integration) -> list[str]:
	"""Inputs whose schema default is not TikTok's, or that are sent with a default of ours."""
	tools = {t.handle: t for t in _tools(integration)}
	errors = []
	for (handle, name), documented in TIKTOK_DEFAULTS.items():
		tool = tools[handle]
		ours = tool.input_schema["properties"][name].get("default")
		template = str({**tool.query_params, **(tool.body if isinstance(tool.body, dict) else {})})
		if ours != documented or f"input.{name} |" in template:
			errors.append(f"{handle}.{name}: default {ours}, TikTok's {documented}")
	return errors


def test_tiktok_schema_defaults_are_tiktoks() -> None:
	"""A page size left out is not sent, so the default the model is told is TikTok's own."""
	assert default_errors(tiktok.INTEGRATION) == []


def test_no_read_tool_calls_the_content_posting_api() -> None:
	"""Every Content Posting API endpoint (/v2/post/publish/...) takes video.upload or
	video.publish (TikTok's reference, page by page), which the read scope does not stand for:
	a read-only agent is given none of them."""
	posting = [t for t in _tools(tiktok.INTEGRATION) if t.endpoint.startswith("/v2/post/")]
	assert {t.handle for t in posting} >= {"getPostStatus", "getInboxUploadStatus"}
	for tool in posting:
		assert tool.scopes in (["upload"], ["publish"]), tool.handle
	assert "status" not in tiktok.INTEGRATION.scopes["read"]
