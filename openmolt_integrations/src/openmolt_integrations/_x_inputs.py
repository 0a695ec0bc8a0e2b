"""The input schemas and query templates the X tools share (x and _x_network read them).

Each follows X's OpenAPI (2.167, as the xdk SDK ships it); the test suite checks every input
against the parameter or body field it fills.
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations.schema import array, input_name, integer, passthrough, string
from openmolt_integrations._x import (
	MEDIA_FIELD_VALUES,
	POST_EXPANSION_VALUES,
	POST_FIELD_VALUES,
	USER_FIELD_VALUES,
)

__all__ = [
	"DM_PAGINATION",
	"EXPANSIONS",
	"ID_PATTERN",
	"LIST",
	"MAX",
	"MEDIA_FIELDS",
	"PAGINATION",
	"POST_FIELDS",
	"POST_ID",
	"POST_QUERY",
	"POST_QUERY_SCHEMA",
	"TIME",
	"TIMELINE_QUERY",
	"TIMELINE_SCHEMA",
	"USER_FIELDS",
	"USER_ID",
	"joined",
]

ID_PATTERN = {"pattern": "^[0-9]{1,19}$"}
# X's OpenAPI lists (fields, expansions, event types, exclude): at least one value, no repeats.
LIST: dict[str, Any] = {"minItems": 1, "uniqueItems": True}
POST_ID = string("Post id (digits).", **ID_PATTERN)
USER_ID = string("The authenticated user's id (from getMe).", **ID_PATTERN)
POST_FIELDS = array(
	string(enum=POST_FIELD_VALUES),
	"Extra post fields, e.g. created_at, public_metrics, conversation_id, entities, note_post. "
	"author_id, in_reply_to_user_id and referenced_posts come with the expansions of those names.",
	**LIST,
)
USER_FIELDS = array(
	string(enum=USER_FIELD_VALUES),
	"Extra user fields, e.g. description, public_metrics, created_at, verified, profile_image_url.",
	**LIST,
)
MEDIA_FIELDS = array(
	string(enum=MEDIA_FIELD_VALUES),
	"Fields of the media objects that the attachments.media_keys expansion includes, e.g. url "
	"(photos), preview_image_url and variants (videos), alt_text.",
	**LIST,
)
EXPANSIONS = array(
	string(enum=POST_EXPANSION_VALUES),
	"Objects to include in `includes`, e.g. author_id, attachments.media_keys, referenced_posts.",
	**LIST,
)
# No default: X's OpenAPI states none for these timelines, and a left-out page size is not sent.
MAX = integer("Posts per page.", minimum=5, maximum=100)
PAGINATION = string("meta.next_token of the previous page.", minLength=1)
# DM event and follower pages: X's OpenAPI gives their pagination_token at least 16 characters.
DM_PAGINATION = string("meta.next_token of the previous page.", minLength=16)
TIME = string("ISO 8601 time, e.g. 2026-11-30T00:00:00Z.", format="date-time")


def joined(*names: str) -> dict[str, str]:
	"""List parameters sent comma-joined, each from the input `input_name` spells.

	X names them ``post.fields``, ``user.fields``...; the inputs are ``post_fields``, ``user_fields``.
	"""
	return {name: f"{{{{ input.{input_name(name)} | join: ',' }}}}" for name in names}


POST_QUERY = joined("post.fields", "expansions", "user.fields", "media.fields")
"""The query of a request that returns posts: their fields, expansions and included objects."""
POST_QUERY_SCHEMA = {
	"post_fields": POST_FIELDS,
	"expansions": EXPANSIONS,
	"user_fields": USER_FIELDS,
	"media_fields": MEDIA_FIELDS,
}
TIMELINE_QUERY = {
	**passthrough("max_results", "pagination_token", "start_time", "end_time"),
	**POST_QUERY,
}
TIMELINE_SCHEMA = {
	"id": USER_ID,
	"max_results": MAX,
	"pagination_token": PAGINATION,
	"start_time": TIME,
	"end_time": TIME,
	**POST_QUERY_SCHEMA,
}
