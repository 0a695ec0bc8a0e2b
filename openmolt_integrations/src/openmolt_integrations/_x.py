"""The fixed values X's OpenAPI allows for the field, expansion and event-type lists the X tools send.

Kept apart from `x` (the tools), which reads them into its input schemas' enums.
"""

from __future__ import annotations

__all__ = [
	"DM_EVENT_FIELD_VALUES",
	"DM_EVENT_TYPE_VALUES",
	"DM_EXPANSION_VALUES",
	"MEDIA_FIELD_VALUES",
	"POST_EXPANSION_VALUES",
	"POST_FIELD_VALUES",
	"USER_FIELD_VALUES",
]

# The values X's OpenAPI (2.167, as the xdk SDK ships it) allows for post.fields, user.fields and
# the expansions of post endpoints; the test suite checks the inputs against it. author_id,
# in_reply_to_user_id and referenced_posts are expansions there, not post fields.
POST_FIELD_VALUES = [
	"article",
	"article_title",
	"attachments",
	"card_uri",
	"community_id",
	"context_annotations",
	"conversation_id",
	"created_at",
	"display_text_range",
	"edit_controls",
	"entities",
	"geo",
	"id",
	"lang",
	"matched_media_notes",
	"media_metadata",
	"non_public_metrics",
	"note_post",
	"note_request_suggestions",
	"organic_metrics",
	"paid_partnership",
	"possibly_sensitive",
	"promoted_metrics",
	"public_metrics",
	"reply_settings",
	"scopes",
	"source",
	"suggested_source_links",
	"suggested_source_links_with_counts",
	"text",
	"withheld",
]
USER_FIELD_VALUES = [
	"confirmed_email",
	"connection_status",
	"created_at",
	"description",
	"entities",
	"id",
	"is_identity_verified",
	"location",
	"name",
	"parody",
	"profile_banner_url",
	"profile_image_url",
	"protected",
	"public_metrics",
	"receives_your_dm",
	"subscribes_to_you",
	"subscription",
	"subscription_type",
	"url",
	"username",
	"verified",
	"verified_followers_count",
	"verified_type",
	"withheld",
]
POST_EXPANSION_VALUES = [
	"article.cover_media",
	"article.media_entities",
	"attachments.media_keys",
	"attachments.media_source_tweet",
	"attachments.poll_ids",
	"author_id",
	"edit_history_post_ids",
	"entities.mentions.username",
	"geo.place_id",
	"in_reply_to_user_id",
	"referenced_posts",
	"username",
]
# The same document's values for media.fields, the fields of the media a post includes.
MEDIA_FIELD_VALUES = [
	"alt_text",
	"duration_ms",
	"height",
	"media_key",
	"non_public_metrics",
	"organic_metrics",
	"preview_image_url",
	"promoted_metrics",
	"public_metrics",
	"type",
	"url",
	"variants",
	"width",
]
# The same document's values for dm_event.fields, the expansions of DM events and event_types.
DM_EVENT_FIELD_VALUES = [
	"attachments",
	"created_at",
	"dm_conversation_id",
	"entities",
	"event_type",
	"id",
	"text",
]
DM_EXPANSION_VALUES = ["attachments.media_keys", "participant_ids", "referenced_posts", "sender_id"]
DM_EVENT_TYPE_VALUES = ["MessageCreate", "ParticipantsJoin", "ParticipantsLeave"]
