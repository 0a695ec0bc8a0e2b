"""X tools for the reads and actions automations use most after posting (X's OpenAPI 2.167).

Posts and users by id, followers and followings, liked and quoting posts, bookmarks, undoing a
repost and hiding replies.

Kept apart from `x` (the integration), which lists them with its other tools.
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import array, boolean, integer, obj, passthrough, string
from openmolt_integrations._x_inputs import (
	DM_PAGINATION,
	ID_PATTERN,
	PAGINATION,
	POST_ID,
	POST_QUERY,
	POST_QUERY_SCHEMA,
	USER_FIELDS,
	USER_ID,
	joined,
)

__all__ = ["NETWORK_TOOLS"]

_ANY_USER = string("User id (any user; getUserByUsername gives it).", **ID_PATTERN)
# Follower and following pages: 1 to 1000 users, tokens of at least 16 characters.
_USERS_QUERY = {**passthrough("max_results", "pagination_token"), **joined("user.fields")}
_USERS_SCHEMA = {
	"id": _ANY_USER,
	"max_results": integer("Users per page.", minimum=1, maximum=1000),
	"pagination_token": DM_PAGINATION,
	"user_fields": USER_FIELDS,
}
_POSTS_PAGE_QUERY = {**passthrough("max_results", "pagination_token"), **POST_QUERY}


def _posts_page(minimum: int, **default: int) -> dict[str, Any]:
	"""The page inputs of a list of posts, with the least page size X's OpenAPI sets there.

	``default`` is the spec's default, where it states one (a left-out page size is not sent).
	"""
	return {
		"max_results": integer("Posts per page.", minimum=minimum, maximum=100, **default),
		"pagination_token": PAGINATION,
		**POST_QUERY_SCHEMA,
	}


NETWORK_TOOLS = [
	HttpTool(
		handle="getPosts",
		description="Get up to 100 posts by id in one request (e.g. to refresh their "
		"public_metrics), with optional fields and expansions.",
		scopes=["read"],
		method="GET",
		endpoint="/2/tweets",
		query_params={**joined("ids"), **POST_QUERY},
		input_schema=obj(
			{
				"ids": array(
					string(**ID_PATTERN),
					"Post ids, 1 to 100.",
					minItems=1,
					maxItems=100,
					uniqueItems=True,
				),
				**POST_QUERY_SCHEMA,
			},
			["ids"],
		),
	),
	HttpTool(
		handle="getUser",
		description="Look up a user by id (e.g. a post's author_id), with optional user fields.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}",
		query_params=joined("user.fields"),
		input_schema=obj({"id": _ANY_USER, "user_fields": USER_FIELDS}, ["id"]),
	),
	HttpTool(
		handle="getFollowers",
		description="The users who follow a user, most recent first; page with "
		"pagination_token (meta.next_token).",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/followers",
		query_params=_USERS_QUERY,
		input_schema=obj(_USERS_SCHEMA, ["id"]),
	),
	HttpTool(
		handle="getFollowing",
		description="The users a user follows, most recent first; page with pagination_token "
		"(meta.next_token).",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/following",
		query_params=_USERS_QUERY,
		input_schema=obj(_USERS_SCHEMA, ["id"]),
	),
	HttpTool(
		handle="getLikedPosts",
		description="The posts a user has liked, most recent first.",
		scopes=["read"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/liked_tweets",
		query_params=_POSTS_PAGE_QUERY,
		input_schema=obj({"id": _ANY_USER, **_posts_page(5)}, ["id"]),
	),
	HttpTool(
		handle="getQuotePosts",
		description="The posts that quote a post, most recent first.",
		scopes=["read"],
		method="GET",
		endpoint="/2/tweets/{{ input.id }}/quote_tweets",
		query_params=_POSTS_PAGE_QUERY,
		input_schema=obj({"id": POST_ID, **_posts_page(10, default=10)}, ["id"]),
	),
	HttpTool(
		handle="unrepostPost",
		description="Undo the authenticated user's repost of a post.",
		scopes=["engage"],
		method="DELETE",
		endpoint="/2/users/{{ input.id }}/retweets/{{ input.source_tweet_id }}",
		input_schema=obj(
			{"id": USER_ID, "source_tweet_id": string("The reposted post's id.", **ID_PATTERN)},
			["id", "source_tweet_id"],
		),
	),
	HttpTool(
		handle="getBookmarks",
		description="The authenticated user's bookmarked posts, most recent first.",
		scopes=["bookmarks"],
		method="GET",
		endpoint="/2/users/{{ input.id }}/bookmarks",
		query_params=_POSTS_PAGE_QUERY,
		input_schema=obj({"id": USER_ID, **_posts_page(1)}, ["id"]),
	),
	HttpTool(
		handle="addBookmark",
		description="Bookmark a post for the authenticated user.",
		scopes=["bookmarks"],
		method="POST",
		endpoint="/2/users/{{ input.id }}/bookmarks",
		body=passthrough("tweet_id"),
		input_schema=obj({"id": USER_ID, "tweet_id": POST_ID}, ["id", "tweet_id"]),
	),
	HttpTool(
		handle="removeBookmark",
		description="Remove a post from the authenticated user's bookmarks.",
		scopes=["bookmarks"],
		method="DELETE",
		endpoint="/2/users/{{ input.id }}/bookmarks/{{ input.tweet_id }}",
		input_schema=obj({"id": USER_ID, "tweet_id": POST_ID}, ["id", "tweet_id"]),
	),
	HttpTool(
		handle="hideReply",
		description="Hide (or unhide) a reply in a conversation the authenticated user started.",
		scopes=["moderate"],
		method="PUT",
		endpoint="/2/tweets/{{ input.tweet_id }}/hidden",
		body=passthrough("hidden"),
		input_schema=obj(
			{
				"tweet_id": string("The reply's post id.", **ID_PATTERN),
				"hidden": boolean("true hides the reply, false shows it again."),
			},
			["tweet_id", "hidden"],
		),
	),
]
"""The X tools beyond posting, timelines, DMs and uploads; `x` lists them with the others."""
