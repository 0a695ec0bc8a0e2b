"""Meta Ads insights tools: synchronous reports and asynchronous report jobs (Graph v26.0).

Input names are the Marketing API's parameter names (``date_preset``, ``time_range``...), the
ones Meta's docs and the ``facebook-business`` SDK use.
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import array, integer, obj, passthrough, string
from openmolt_integrations._graph import fields_input, fields_param, json_param, paging

__all__ = ["AFTER", "INSIGHTS_TOOLS", "INSIGHT_FIELDS", "LIMIT"]

INSIGHT_FIELDS = "impressions,reach,clicks,spend,ctr,cpc,cpm,actions"
LIMIT = integer("Page size (default 25).", minimum=1, maximum=500)
AFTER = string("paging.cursors.after of the previous page, to get the next page.")

_INPUT: dict[str, Any] = {
	"object_id": string(
		'Whose insights: an ad account ("act_1234567890"), a campaign, ad set or ad id.'
	),
	"fields": fields_input(INSIGHT_FIELDS),
	"level": string(
		"Aggregate per account, campaign, ad set or ad.",
		enum=["account", "campaign", "adset", "ad"],
	),
	"date_preset": string(
		"A relative period; ignored when time_range is given.",
		enum=[
			"today",
			"yesterday",
			"last_3d",
			"last_7d",
			"last_14d",
			"last_28d",
			"last_30d",
			"last_90d",
			"this_month",
			"last_month",
			"this_quarter",
			"last_quarter",
			"this_year",
			"last_year",
			"maximum",
		],
	),
	# The insights docs: time_range is {'since': YYYY-MM-DD, 'until': YYYY-MM-DD}.
	"time_range": obj(
		{
			"since": string("First day, YYYY-MM-DD.", format="date"),
			"until": string("Last day, YYYY-MM-DD.", format="date"),
		},
		["since", "until"],
		description="An explicit period in the account's time zone.",
	),
	"time_increment": {
		"type": ["integer", "string"],
		"description": 'Days per row (1 = daily), "monthly", or "all_days" (default).',
	},
	"breakdowns": array(
		string(), 'Split rows by e.g. "age", "gender", "country", "publisher_platform".'
	),
	"filtering": array(
		obj(
			{
				"field": string('e.g. "campaign.name".'),
				"operator": string('e.g. "CONTAIN", "IN", "EQUAL".'),
				"value": {"description": "The value to compare with."},
			}
		),
		"Row filters.",
	),
}
_REPORT_RUN_ID = string("The report_run_id startInsightsJob returned.")

INSIGHTS_TOOLS: list[HttpTool] = [
	HttpTool(
		handle="getInsights",
		description=(
			"Get performance numbers (impressions, clicks, spend, CTR, actions...) of an ad "
			"account, campaign, ad set or ad. For big reports use startInsightsJob."
		),
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.object_id }}/insights",
		query_params={
			"fields": fields_param(INSIGHT_FIELDS),
			**passthrough("level", "date_preset", "time_increment"),
			**paging(),
			"time_range": json_param("time_range"),
			"breakdowns": "{% if input.breakdowns %}{{ input.breakdowns | join: ',' }}{% endif %}",
			"filtering": json_param("filtering"),
		},
		input_schema=obj({**_INPUT, "limit": LIMIT, "after": AFTER}, ["object_id"], closed=True),
	),
	HttpTool(
		handle="startInsightsJob",
		description=(
			"Start an asynchronous insights report for large date ranges or breakdowns. Returns "
			"report_run_id; poll getInsightsJob until async_status is 'Job Completed'."
		),
		scopes=["read"],
		method="POST",
		endpoint="/{{ input.object_id }}/insights",
		body={
			"fields": fields_param(INSIGHT_FIELDS),
			**passthrough(
				"level", "date_preset", "time_range", "time_increment", "breakdowns", "filtering"
			),
		},
		input_schema=obj(_INPUT, ["object_id"], closed=True),
	),
	HttpTool(
		handle="getInsightsJob",
		description=(
			"Check an asynchronous insights job: async_status ('Job Running', 'Job Completed', "
			"'Job Failed') and async_percent_completion."
		),
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.report_run_id }}",
		input_schema=obj({"report_run_id": _REPORT_RUN_ID}, ["report_run_id"], closed=True),
	),
	HttpTool(
		handle="getInsightsJobResults",
		description="Read the rows of a completed asynchronous insights job, page by page.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.report_run_id }}/insights",
		query_params=paging(),
		input_schema=obj(
			{"report_run_id": _REPORT_RUN_ID, "limit": LIMIT, "after": AFTER},
			["report_run_id"],
			closed=True,
		),
	),
]
