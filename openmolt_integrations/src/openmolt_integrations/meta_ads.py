"""Meta Ads: the Marketing API on Graph v26.0.

Ad accounts, campaigns, ad sets, ads, creatives, insights, and asynchronous insights jobs for large
reports. Objects are created ``PAUSED`` unless the agent says otherwise, and budgets are in the account
currency's minor units (cents). Nested parameters (``targeting``, ``object_story_spec``) are sent
as JSON objects in a JSON body, which the Graph API accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, Credential, HttpTool, Integration

if TYPE_CHECKING:
	from openmolt_core.plugins import IntegrationRegistrar

__all__ = ["GRAPH_VERSION", "INTEGRATION", "register_integrations"]

GRAPH_VERSION = "v26.0"
_ACCOUNT = "act_{{ input.adAccountId | remove_first: 'act_' }}"

_AD_ACCOUNT_ID = {
	"type": "string",
	"pattern": "^(act_)?[0-9]+$",
	"description": 'The ad account id, with or without the "act_" prefix ("act_1234567890").',
}
_STATUS = {
	"type": "string",
	"enum": ["ACTIVE", "PAUSED"],
	"default": "PAUSED",
	"description": "Start PAUSED (default, nothing is spent) or ACTIVE.",
}
_EFFECTIVE_STATUS = {
	"type": "array",
	"items": {
		"type": "string",
		"enum": [
			"ACTIVE",
			"PAUSED",
			"DELETED",
			"ARCHIVED",
			"IN_PROCESS",
			"WITH_ISSUES",
			"CAMPAIGN_PAUSED",
			"ADSET_PAUSED",
			"PENDING_REVIEW",
			"DISAPPROVED",
		],
	},
	"description": "Only objects with one of these effective statuses.",
}
_LIMIT = {
	"type": "integer",
	"minimum": 1,
	"maximum": 500,
	"description": "Page size (default 25).",
}
_AFTER = {
	"type": "string",
	"description": "paging.cursors.after of the previous page, to get the next page.",
}
_BUDGET = "In minor units of the account currency (1000 = 10.00 USD)."
_INSIGHT_FIELDS = "impressions,reach,clicks,spend,ctr,cpc,cpm,actions"


def _fields(default: str) -> dict[str, Any]:
	return {
		"type": "array",
		"items": {"type": "string"},
		"description": f"Fields to return (default: {default}).",
	}


def _fields_param(default: str) -> str:
	return "{% if input.fields %}{{ input.fields | join: ',' }}{% else %}" + default + "{% endif %}"


_JSON_IF = "{% if input.NAME %}{{ input.NAME | json }}{% endif %}"


def _json_param(name: str) -> str:
	return _JSON_IF.replace("NAME", name)


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
	schema: dict[str, Any] = {"type": "object", "properties": properties}
	if required:
		schema["required"] = required
	schema["additionalProperties"] = False
	return schema


def _list_tool(
	handle: str, what: str, edge: str, default_fields: str, scopes: list[str]
) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=f"List the {what} of an ad account, newest first, with paging.",
		scopes=scopes,
		method="GET",
		endpoint=f"/{_ACCOUNT}/{edge}",
		query_params={
			"fields": _fields_param(default_fields),
			"effective_status": _json_param("effectiveStatus"),
			"limit": "{{ input.pageSize }}",
			"after": "{{ input.after }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"fields": _fields(default_fields),
				"effectiveStatus": _EFFECTIVE_STATUS,
				"pageSize": _LIMIT,
				"after": _AFTER,
			},
			["adAccountId"],
		),
	)


_INSIGHTS_PARAMS = {
	"fields": _fields_param(_INSIGHT_FIELDS),
	"level": "{{ input.level }}",
	"date_preset": "{{ input.datePreset }}",
	"time_range": _json_param("timeRange"),
	"time_increment": "{{ input.timeIncrement }}",
	"breakdowns": "{% if input.breakdowns %}{{ input.breakdowns | join: ',' }}{% endif %}",
	"filtering": _json_param("filtering"),
}
_INSIGHTS_INPUT: dict[str, Any] = {
	"objectId": {
		"type": "string",
		"description": (
			'Whose insights: an ad account ("act_1234567890"), a campaign, ad set or ad id.'
		),
	},
	"fields": _fields(_INSIGHT_FIELDS),
	"level": {
		"type": "string",
		"enum": ["account", "campaign", "adset", "ad"],
		"description": "Aggregate per account, campaign, ad set or ad.",
	},
	"datePreset": {
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
		"description": "A relative period; ignored when timeRange is given.",
	},
	"timeRange": {
		"type": "object",
		"properties": {
			"since": {"type": "string", "description": "First day, YYYY-MM-DD."},
			"until": {"type": "string", "description": "Last day, YYYY-MM-DD."},
		},
		"required": ["since", "until"],
		"description": "An explicit period in the account's time zone.",
	},
	"timeIncrement": {
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

TOOLS: list[HttpTool] = [
	HttpTool(
		handle="listAdAccounts",
		description="List the ad accounts the token can use (id, name, status, currency).",
		scopes=["read"],
		method="GET",
		endpoint="/me/adaccounts",
		query_params={
			"fields": _fields_param("id,account_id,name,account_status,currency,timezone_name"),
			"limit": "{{ input.pageSize }}",
			"after": "{{ input.after }}",
		},
		input_schema=_schema(
			{
				"fields": _fields("id,account_id,name,account_status,currency,timezone_name"),
				"pageSize": _LIMIT,
				"after": _AFTER,
			}
		),
	),
	HttpTool(
		handle="getObject",
		description="Read any Marketing API object (ad account, campaign, ad set, ad, creative) by id.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.objectId }}",
		query_params={"fields": "{% if input.fields %}{{ input.fields | join: ',' }}{% endif %}"},
		input_schema=_schema(
			{
				"objectId": {"type": "string", "description": "The object's id."},
				"fields": {
					"type": "array",
					"items": {"type": "string"},
					"description": 'Fields to return (e.g. ["name", "status", "daily_budget"]).',
				},
			},
			["objectId"],
		),
	),
	_list_tool(
		"listCampaigns",
		"campaigns",
		"campaigns",
		"id,name,status,effective_status,objective,daily_budget,lifetime_budget",
		["read"],
	),
	HttpTool(
		handle="createCampaign",
		description=(
			"Create a campaign (PAUSED by default). Set a budget here for campaign budget "
			"optimization, or on each ad set."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/campaigns",
		body={
			"name": "{{ input.name }}",
			"objective": "{{ input.objective }}",
			"status": "{{ input.status | default: 'PAUSED' }}",
			"special_ad_categories": "{{ input.specialAdCategories }}",
			"daily_budget": "{{ input.dailyBudget }}",
			"lifetime_budget": "{{ input.lifetimeBudget }}",
			"bid_strategy": "{{ input.bidStrategy }}",
			"start_time": "{{ input.startTime }}",
			"stop_time": "{{ input.stopTime }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"name": {"type": "string", "description": "The campaign name."},
				"objective": {
					"type": "string",
					"enum": [
						"OUTCOME_AWARENESS",
						"OUTCOME_TRAFFIC",
						"OUTCOME_ENGAGEMENT",
						"OUTCOME_LEADS",
						"OUTCOME_APP_PROMOTION",
						"OUTCOME_SALES",
					],
					"description": "What the campaign optimizes for.",
				},
				"status": _STATUS,
				"specialAdCategories": {
					"type": "array",
					"items": {
						"type": "string",
						"enum": [
							"NONE",
							"EMPLOYMENT",
							"HOUSING",
							"FINANCIAL_PRODUCTS_SERVICES",
							"ISSUES_ELECTIONS_POLITICS",
							"ONLINE_GAMBLING_AND_GAMING",
						],
					},
					"default": [],
					"description": "Regulated categories the ads fall under; [] when none.",
				},
				"dailyBudget": {"type": "integer", "description": "Daily budget. " + _BUDGET},
				"lifetimeBudget": {"type": "integer", "description": "Total budget. " + _BUDGET},
				"bidStrategy": {
					"type": "string",
					"enum": [
						"LOWEST_COST_WITHOUT_CAP",
						"LOWEST_COST_WITH_BID_CAP",
						"COST_CAP",
						"LOWEST_COST_WITH_MIN_ROAS",
					],
					"description": "Bid strategy, with a campaign budget only.",
				},
				"startTime": {"type": "string", "description": "ISO 8601 start time."},
				"stopTime": {"type": "string", "description": "ISO 8601 end time."},
			},
			["adAccountId", "name", "objective", "specialAdCategories"],
		),
	),
	HttpTool(
		handle="updateObject",
		description=(
			"Update a campaign, ad set or ad: pause or activate it, rename it, change its "
			"budget or end time. Only the given fields change."
		),
		scopes=["manage"],
		method="POST",
		endpoint="/{{ input.objectId }}",
		body={
			"status": "{{ input.status }}",
			"name": "{{ input.name }}",
			"daily_budget": "{{ input.dailyBudget }}",
			"lifetime_budget": "{{ input.lifetimeBudget }}",
			"end_time": "{{ input.endTime }}",
			"bid_amount": "{{ input.bidAmount }}",
		},
		input_schema=_schema(
			{
				"objectId": {"type": "string", "description": "The campaign, ad set or ad id."},
				"status": {
					"type": "string",
					"enum": ["ACTIVE", "PAUSED", "ARCHIVED"],
					"description": "The new status.",
				},
				"name": {"type": "string", "description": "The new name."},
				"dailyBudget": {"type": "integer", "description": "New daily budget. " + _BUDGET},
				"lifetimeBudget": {
					"type": "integer",
					"description": "New lifetime budget. " + _BUDGET,
				},
				"endTime": {"type": "string", "description": "New ISO 8601 end time (ad sets)."},
				"bidAmount": {"type": "integer", "description": "New bid cap. " + _BUDGET},
			},
			["objectId"],
		),
	),
	HttpTool(
		handle="deleteObject",
		description="Delete a campaign, ad set, ad or creative (cannot be undone; prefer ARCHIVED).",
		scopes=["delete"],
		method="DELETE",
		endpoint="/{{ input.objectId }}",
		input_schema=_schema(
			{"objectId": {"type": "string", "description": "The id of what to delete."}},
			["objectId"],
		),
	),
	_list_tool(
		"listAdSets",
		"ad sets",
		"adsets",
		"id,name,status,effective_status,campaign_id,daily_budget,lifetime_budget,optimization_goal",
		["read"],
	),
	HttpTool(
		handle="createAdSet",
		description=(
			"Create an ad set in a campaign: budget (unless the campaign has one), schedule, "
			"optimization goal, billing event and targeting. PAUSED by default."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adsets",
		body={
			"name": "{{ input.name }}",
			"campaign_id": "{{ input.campaignId }}",
			"status": "{{ input.status | default: 'PAUSED' }}",
			"daily_budget": "{{ input.dailyBudget }}",
			"lifetime_budget": "{{ input.lifetimeBudget }}",
			"billing_event": "{{ input.billingEvent }}",
			"optimization_goal": "{{ input.optimizationGoal }}",
			"bid_strategy": "{{ input.bidStrategy }}",
			"bid_amount": "{{ input.bidAmount }}",
			"targeting": "{{ input.targeting }}",
			"promoted_object": "{{ input.promotedObject }}",
			"start_time": "{{ input.startTime }}",
			"end_time": "{{ input.endTime }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"campaignId": {"type": "string", "description": "The campaign's id."},
				"name": {"type": "string", "description": "The ad set name."},
				"status": _STATUS,
				"dailyBudget": {"type": "integer", "description": "Daily budget. " + _BUDGET},
				"lifetimeBudget": {
					"type": "integer",
					"description": "Total budget (needs endTime). " + _BUDGET,
				},
				"billingEvent": {
					"type": "string",
					"enum": ["IMPRESSIONS", "LINK_CLICKS", "THRUPLAY", "APP_INSTALLS"],
					"description": "What you pay for.",
				},
				"optimizationGoal": {
					"type": "string",
					"description": (
						'What delivery optimizes for: "REACH", "IMPRESSIONS", "LINK_CLICKS", '
						'"LANDING_PAGE_VIEWS", "OFFSITE_CONVERSIONS", "LEAD_GENERATION", '
						'"THRUPLAY", "POST_ENGAGEMENT", "APP_INSTALLS", "VALUE"...'
					),
				},
				"bidStrategy": {
					"type": "string",
					"enum": [
						"LOWEST_COST_WITHOUT_CAP",
						"LOWEST_COST_WITH_BID_CAP",
						"COST_CAP",
						"LOWEST_COST_WITH_MIN_ROAS",
					],
					"description": "Bid strategy (without a campaign budget).",
				},
				"bidAmount": {"type": "integer", "description": "Bid or cost cap. " + _BUDGET},
				"targeting": {
					"type": "object",
					"description": (
						'Targeting spec, e.g. {"geo_locations": {"countries": ["US"]}, '
						'"age_min": 25, "age_max": 54, "publisher_platforms": ["facebook"]}.'
					),
				},
				"promotedObject": {
					"type": "object",
					"description": 'What is promoted, e.g. {"pixel_id": "...", "custom_event_type": "PURCHASE"}.',
				},
				"startTime": {"type": "string", "description": "ISO 8601 start time."},
				"endTime": {"type": "string", "description": "ISO 8601 end time."},
			},
			["adAccountId", "campaignId", "name", "billingEvent", "optimizationGoal", "targeting"],
		),
	),
	_list_tool(
		"listAds",
		"ads",
		"ads",
		"id,name,status,effective_status,adset_id,campaign_id,creative",
		["read"],
	),
	HttpTool(
		handle="createAd",
		description="Create an ad in an ad set from an existing creative. PAUSED by default.",
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/ads",
		body={
			"name": "{{ input.name }}",
			"adset_id": "{{ input.adSetId }}",
			"creative": {"creative_id": "{{ input.creativeId }}"},
			"status": "{{ input.status | default: 'PAUSED' }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"adSetId": {"type": "string", "description": "The ad set's id."},
				"creativeId": {"type": "string", "description": "The creative's id."},
				"name": {"type": "string", "description": "The ad name."},
				"status": _STATUS,
			},
			["adAccountId", "adSetId", "creativeId", "name"],
		),
	),
	HttpTool(
		handle="listCreatives",
		description="List the ad creatives of an ad account.",
		scopes=["read"],
		method="GET",
		endpoint=f"/{_ACCOUNT}/adcreatives",
		query_params={
			"fields": _fields_param("id,name,status,object_story_spec,thumbnail_url"),
			"limit": "{{ input.pageSize }}",
			"after": "{{ input.after }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"fields": _fields("id,name,status,object_story_spec,thumbnail_url"),
				"pageSize": _LIMIT,
				"after": _AFTER,
			},
			["adAccountId"],
		),
	),
	HttpTool(
		handle="uploadAdImage",
		description="Upload an image for ads; returns its hash to use as image_hash in a creative.",
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adimages",
		request_format="multipart",
		files={"filename": "{{ input.file }}"},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"file": {
					"type": "string",
					"description": (
						"The image (JPG or PNG) as a file reference: openmolt-file:<id>, a data: "
						"URL, or a path from the fileSystem integration."
					),
				},
			},
			["adAccountId", "file"],
		),
	),
	HttpTool(
		handle="createCreative",
		description=(
			"Create an ad creative from a Page post spec (link ad with image, text and call to "
			"action). Upload the image first with uploadAdImage to get its hash."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adcreatives",
		body={
			"name": "{{ input.name }}",
			"object_story_spec": "{{ input.objectStorySpec }}",
			"url_tags": "{{ input.urlTags }}",
		},
		input_schema=_schema(
			{
				"adAccountId": _AD_ACCOUNT_ID,
				"name": {"type": "string", "description": "The creative name."},
				"objectStorySpec": {
					"type": "object",
					"description": (
						'The post to run, e.g. {"page_id": "...", "link_data": {"image_hash": "...", '
						'"link": "https://...", "message": "...", "name": "headline", '
						'"call_to_action": {"type": "SHOP_NOW"}}}.'
					),
				},
				"urlTags": {
					"type": "string",
					"description": 'Query string appended to links ("utm_source=meta").',
				},
			},
			["adAccountId", "name", "objectStorySpec"],
		),
	),
	HttpTool(
		handle="getInsights",
		description=(
			"Get performance numbers (impressions, clicks, spend, CTR, actions...) of an ad "
			"account, campaign, ad set or ad. For big reports use startInsightsJob."
		),
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.objectId }}/insights",
		query_params={
			**_INSIGHTS_PARAMS,
			"limit": "{{ input.pageSize }}",
			"after": "{{ input.after }}",
		},
		input_schema=_schema(
			{**_INSIGHTS_INPUT, "pageSize": _LIMIT, "after": _AFTER},
			["objectId"],
		),
	),
	HttpTool(
		handle="startInsightsJob",
		description=(
			"Start an asynchronous insights report for large date ranges or breakdowns. Returns "
			"report_run_id; poll getInsightsJob until async_status is 'Job Completed'."
		),
		scopes=["read"],
		method="POST",
		endpoint="/{{ input.objectId }}/insights",
		body={
			"fields": _fields_param(_INSIGHT_FIELDS),
			"level": "{{ input.level }}",
			"date_preset": "{{ input.datePreset }}",
			"time_range": "{{ input.timeRange }}",
			"time_increment": "{{ input.timeIncrement }}",
			"breakdowns": "{{ input.breakdowns }}",
			"filtering": "{{ input.filtering }}",
		},
		input_schema=_schema(dict(_INSIGHTS_INPUT), ["objectId"]),
	),
	HttpTool(
		handle="getInsightsJob",
		description=(
			"Check an asynchronous insights job: async_status ('Job Running', 'Job Completed', "
			"'Job Failed') and async_percent_completion."
		),
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.reportRunId }}",
		input_schema=_schema(
			{"reportRunId": {"type": "string", "description": "The report_run_id."}},
			["reportRunId"],
		),
	),
	HttpTool(
		handle="getInsightsJobResults",
		description="Read the rows of a completed asynchronous insights job, page by page.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.reportRunId }}/insights",
		query_params={"limit": "{{ input.pageSize }}", "after": "{{ input.after }}"},
		input_schema=_schema(
			{
				"reportRunId": {"type": "string", "description": "The report_run_id."},
				"pageSize": _LIMIT,
				"after": _AFTER,
			},
			["reportRunId"],
		),
	),
]

DOCS = """\
## Get a token

Use a **system user** token: it does not expire and is not tied to a person.

1. In [Meta Business Settings](https://business.facebook.com/settings) → **Users → System users**,
   add a system user (Admin for write access) and **Assign assets**: the ad accounts (and Pages
   used in creatives) with the needed permissions.
2. Create an app at [developers.facebook.com](https://developers.facebook.com/apps) (type
   Business), add the **Marketing API** product, and connect it to the business.
3. Back on the system user, **Generate new token** for that app with the permissions
   `ads_management` (or `ads_read` for reports only), `business_management` and, for creatives,
   `pages_show_list`, `pages_read_engagement`, `pages_manage_ads`.
4. Pass it as `accessToken`:

```python
om = OpenMolt(integrations={"metaAds": {"accessToken": "EAAB..."}})
agent = om.create_agent(name="Media buyer", model="openai:gpt-5-mini",
                        integrations=[{"integration": "metaAds", "scopes": ["read"]}])
```

A user token from the Graph API Explorer also works for tests, but expires within hours (or 60
days once exchanged with `grant_type=fb_exchange_token`). Ad account ids look like
`act_1234567890`; budgets are in cents of the account currency.
"""

INTEGRATION = Integration(
	id="metaAds",
	name="Meta Ads",
	description="Facebook and Instagram ads: campaigns, ad sets, ads, creatives and insights.",
	api_version=GRAPH_VERSION,
	api_setup=ApiSetup(base_url=f"https://graph.facebook.com/{GRAPH_VERSION}"),
	credential_setup=[
		Credential(type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"})
	],
	scopes={
		"read": "Read ad accounts, campaigns, ad sets, ads, creatives and insights.",
		"manage": "Create and change campaigns, ad sets, ads, creatives and ad images.",
		"delete": "Delete campaigns, ad sets, ads and creatives.",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the Meta Ads integration."""
	register(INTEGRATION, id="metaAds")
