"""Instagram's shared input schemas and Graph field lists (used by instagram.py)."""

from __future__ import annotations

from openmolt_core.integrations.schema import integer, string

USER = "/{{ input.ig_user_id | default: config.igUserId }}"
# Direct messages (Facebook Login): the Page linked to the Instagram account.
PAGE = "/{{ input.page_id | default: config.pageId }}"
PAGE_ID = string(
	"The Facebook Page linked to the Instagram account (its id from listAccounts); defaults to "
	"the pageId config.",
	pattern="^[0-9]+$",
)
FACEBOOK_LOGIN_DM = (
	" Instagram API with Facebook Login: the messages go through the linked Facebook Page "
	"(page_id), and the access token must be that Page's token."
)
IG_USER_ID = string(
	"The Instagram account id (instagram_business_account.id from listAccounts); defaults to "
	"the igUserId config.",
	pattern="^[0-9]+$",
)
MEDIA_ID = string("Instagram media id (from listMedia).")
COMMENT_ID = string("Comment id (from listComments).")
LIMIT = integer("Items per page.", minimum=1, maximum=100, default=25)
AFTER = string("Cursor: paging.cursors.after of the previous page.")
ACCOUNT_FIELDS = "id,username,name,biography,website,followers_count,follows_count,media_count,profile_picture_url"
MEDIA_FIELDS = "id,caption,media_type,media_product_type,media_url,permalink,thumbnail_url,timestamp,like_count,comments_count"
COMMENT_FIELDS = "id,text,username,timestamp,like_count,hidden,replies{id,text,username,timestamp}"
STORY_FIELDS = "id,caption,media_type,media_url,permalink,thumbnail_url,timestamp"
HASHTAG_MEDIA_FIELDS = (
	"id,caption,media_type,media_url,permalink,timestamp,like_count,comments_count"
)
HASHTAG_USER = string(
	"The Instagram account id making the search (defaults to the igUserId config).",
	pattern="^[0-9]+$",
)
