"""Meta Ads insights tools: synchronous reports and asynchronous report jobs (Graph v26.0).

Input names are the Marketing API's parameter names (``date_preset``, ``time_range``...), the
ones Meta's docs and the ``facebook-business`` SDK use.
"""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations import HttpTool
from openmolt_integrations._graph import (
	fields_input,
	fields_param,
	graph_schema,
	json_param,
	pass_through,
)

__all__ = ["AFTER", "INSIGHTS_TOOLS", "INSIGHT_FIELDS", "LIMIT"]

INSIGHT_FIELDS = "impressions,reach,clicks,spend,ctr,cpc,cpm,actions"
LIMIT = {
	"type": "integer",
	"minimum": 1,
	"maximum": 500,
	"description": "Page size (default 25).",
}
AFTER = {
	"type": "string",
	"description": "paging.cursors.after of the previous page, to get the next page.",
}

_INPUT: dict[str, Any] = {
	"object_id": {
		"type": "string",
		"description": (
			'Whose insights: an ad account ("act_1234567890"), a campaign, ad set or ad id.'
		),
	},
	"fields": fields_input(INSIGHT_FIELDS),
	"level": {
		"type": "string",
		"enum": ["account", "campaign", "adset", "ad"],
		"description": "Aggregate per account, campaign, ad set or ad.",
	},
	"date_preset": {
		"type": "string",
		"enum": [
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
		"description": "A relative period; ignored when time_range is given.",
	},
	"time_range": {
		"type": "object",
		"properties": {
			"since": {"type": "string", "description": "First day, YYYY-MM-DD."},
			"until": {"type": "string", "description": "Last day, YYYY-MM-DD."},
		},
		"required": ["since", "until"],
		"description": "An explicit period in the account's time zone.",
	},
	"time_increment": {
		"type": ["integer", "string"],
		"description": 'Days per row (1 = daily), "monthly", or "all_days" (default).',
	},
	"breakdowns": {
		"type": "array",
		"items": {"type": "string"},
		"description": 'Split rows by e.g. "age", "gender", "country", "publisher_platform".',
	},
	"filtering": {
		"type": "array",
		"items": {
			"type": "object",
			"properties": {
				"field": {"type": "string", "description": 'e.g. "campaign.name".'},
				"operator": {"type": "string", "description": 'e.g. "CONTAIN", "IN", "EQUAL".'},
				"value": {"description": "The value to compare with."},
			},
		},
		"description": "Row filters.",
	},
}
_REPORT_RUN_ID = {"type": "string", "description": "The report_run_id startInsightsJob returned."}

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
			**pass_through("level", "date_preset", "time_increment", "limit", "after"),
			"time_range": json_param("time_range"),
			"breakdowns": "{% if input.breakdowns %}{{ input.breakdowns | join: ',' }}{% endif %}",
			"filtering": json_param("filtering"),
		},
		input_schema=graph_schema({**_INPUT, "limit": LIMIT, "after": AFTER}, ["object_id"]),
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
			**pass_through(
				"level", "date_preset", "time_range", "time_increment", "breakdowns", "filtering"
			),
		},
		input_schema=graph_schema(dict(_INPUT), ["object_id"]),
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
		input_schema=graph_schema({"report_run_id": _REPORT_RUN_ID}, ["report_run_id"]),
	),
	HttpTool(
		handle="getInsightsJobResults",
		description="Read the rows of a completed asynchronous insights job, page by page.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.report_run_id }}/insights",
		query_params=pass_through("limit", "after"),
		input_schema=graph_schema(
			{"report_run_id": _REPORT_RUN_ID, "limit": LIMIT, "after": AFTER}, ["report_run_id"]
		),
	),
]
