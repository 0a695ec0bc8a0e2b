"""Meta Ads tools that reuse what exists: copies, a creative from a Page post, previews.

Copies of campaigns and ad sets, a creative from a post already published on a Page (a "boost"),
and ad previews, on Graph v26.0.

The requests of facebook-business 26's ``Campaign.create_copy``, ``AdSet.create_copy``,
``AdAccount.create_ad_creative`` and ``Ad.get_previews``; input names are the SDK's parameter
names, and the node ids are named as Graph's reference pages name them. Kept apart from
`meta_ads`, which lists them with its tools.
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import boolean, obj, passthrough_of, string

__all__ = ["AD_FORMATS", "COPY_TOOLS"]

_DIGITS = "^[0-9]+$"
_TIME = "{}, ISO 8601 with its UTC offset (2026-12-01T09:00:00+01:00)."
# The SDK's StatusOption values; copies start PAUSED unless the agent says otherwise.
_STATUS_OPTION = string(
	"The copy's status: PAUSED (default, nothing is spent), ACTIVE, or INHERITED_FROM_SOURCE.",
	enum=["PAUSED", "ACTIVE", "INHERITED_FROM_SOURCE"],
	default="PAUSED",
)
_RENAME = {
	"type": "object",
	"description": 'How to name the copy, e.g. {"rename_strategy": "DEEP_RENAME", '
	'"rename_suffix": " - copy"} (default: Meta appends " - Copy").',
}
_DEEP_COPY = boolean("Also copy the children (a campaign's ad sets and ads, an ad set's ads).")

AD_FORMATS = [
	"DESKTOP_FEED_STANDARD",
	"MOBILE_FEED_STANDARD",
	"RIGHT_COLUMN_STANDARD",
	"MARKETPLACE_MOBILE",
	"FACEBOOK_STORY_MOBILE",
	"FACEBOOK_REELS_MOBILE",
	"INSTAGRAM_STANDARD",
	"INSTAGRAM_STORY",
	"INSTAGRAM_REELS",
	"INSTAGRAM_EXPLORE_GRID_HOME",
	"MESSENGER_MOBILE_INBOX_MEDIA",
]
"""The placements getAdPreview offers (a subset of the SDK's AdPreview.AdFormat values)."""


def _time(what: str) -> dict[str, Any]:
	return string(_TIME.format(what), format="date-time")


_COPY_CAMPAIGN = obj(
	{
		"campaign_id": string("The campaign to copy.", pattern=_DIGITS),
		"deep_copy": _DEEP_COPY,
		"status_option": _STATUS_OPTION,
		"rename_options": _RENAME,
		"start_time": _time("Start time of the copied ad sets"),
		"end_time": _time("End time of the copied ad sets"),
	},
	["campaign_id"],
	closed=True,
)
_COPY_AD_SET = obj(
	{
		"adset_id": string("The ad set to copy.", pattern=_DIGITS),
		"campaign_id": string(
			"Copy into this campaign (default: the ad set's own).", pattern=_DIGITS
		),
		"deep_copy": _DEEP_COPY,
		"status_option": _STATUS_OPTION,
		"rename_options": _RENAME,
		"start_time": _time("The copy's start time"),
		"end_time": _time("The copy's end time"),
	},
	["adset_id"],
	closed=True,
)
_PAUSED = "{{ input.status_option | default: 'PAUSED' }}"
_FROM_POST = obj(
	{
		"ad_account_id": string(
			'The ad account id, with or without the "act_" prefix ("act_1234567890").',
			pattern="^(act_)?[0-9]+$",
		),
		"name": string("The creative name."),
		"object_story_id": string(
			"The Page post to run as the ad: '<page id>_<post id>', as the Page's feed lists it.",
			pattern="^[0-9]+_[0-9]+$",
		),
		"call_to_action": {
			"type": "object",
			"description": 'A button on the post, e.g. {"type": "LEARN_MORE", "value": {"link": '
			'"https://example.com"}}.',
		},
		"url_tags": string('Query string appended to links ("utm_source=meta").'),
	},
	["ad_account_id", "name", "object_story_id"],
	closed=True,
)

COPY_TOOLS: list[HttpTool] = [
	HttpTool(
		handle="copyCampaign",
		description=(
			"Duplicate a campaign (with deep_copy, its ad sets and ads too), PAUSED by default; "
			"returns copied_campaign_id."
		),
		scopes=["manage"],
		method="POST",
		endpoint="/{{ input.campaign_id }}/copies",
		body=passthrough_of(_COPY_CAMPAIGN, exclude=["campaign_id"], status_option=_PAUSED),
		input_schema=_COPY_CAMPAIGN,
	),
	HttpTool(
		handle="copyAdSet",
		description=(
			"Duplicate an ad set, into its campaign or another (with deep_copy, its ads too), "
			"PAUSED by default; returns copied_adset_id. Change the copy with updateObject."
		),
		scopes=["manage"],
		method="POST",
		endpoint="/{{ input.adset_id }}/copies",
		body=passthrough_of(_COPY_AD_SET, exclude=["adset_id"], status_option=_PAUSED),
		input_schema=_COPY_AD_SET,
	),
	HttpTool(
		handle="createCreativeFromPost",
		description=(
			"Create an ad creative from a post already published on a Page (boost it): the ad "
			"shows the post as it is, with its likes and comments. Use it in createAd."
		),
		scopes=["manage"],
		method="POST",
		endpoint="/act_{{ input.ad_account_id | remove_first: 'act_' }}/adcreatives",
		body=passthrough_of(_FROM_POST, exclude=["ad_account_id"]),
		input_schema=_FROM_POST,
	),
	HttpTool(
		handle="getAdPreview",
		description=(
			"Preview how an ad looks in a placement: returns data[0].body, an HTML iframe "
			"whose src shows the rendered ad (valid for about 24 hours)."
		),
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.ad_id }}/previews",
		query_params={"ad_format": "{{ input.ad_format }}"},
		input_schema=obj(
			{
				"ad_id": string("The ad to preview.", pattern=_DIGITS),
				"ad_format": string("The placement to render.", enum=AD_FORMATS),
			},
			["ad_id", "ad_format"],
			closed=True,
		),
	),
]
"""The copy, boost and preview tools; `meta_ads` lists them with its other tools."""
