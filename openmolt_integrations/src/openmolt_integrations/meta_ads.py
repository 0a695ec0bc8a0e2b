"""Meta Ads: the Marketing API on Graph v26.0 (the version of the official SDK, facebook-business 26).

Ad accounts, campaigns, ad sets, ads, creatives, copies of campaigns and ad sets, ad previews,
insights (with asynchronous jobs for large reports), targeting search and the Pages an ad can run
from. Objects are created ``PAUSED`` unless
the agent says otherwise, and budgets are in the account currency's minor units (cents).

Tool inputs carry the Marketing API's own parameter names (``special_ad_categories``,
``is_adset_budget_sharing_enabled``...), checked against the SDK's ``param_types`` by the tests.

Bodies are JSON, nested parameters (``targeting``, ``object_story_spec``) as JSON objects. Meta's
two official SDKs encode the same parameters two ways: ``facebook-business`` (Python) posts form
fields with nested values JSON-encoded as strings, and ``facebook-nodejs-business-sdk`` posts them
as one JSON body (axios ``data``); the Graph API reads both. JSON keeps integers and booleans typed
and drops a left-out optional parameter instead of sending it empty.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	FunctionTool,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.extensions import EncodedBody
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	passthrough_of,
	string,
)
from openmolt_integrations._graph import (
	GRAPH_URL,
	GRAPH_VERSION,
	fields_input,
	fields_param,
	json_param,
	paging,
)
from openmolt_integrations._meta_audiences import (
	ADD_USERS_REQUEST,
	AUDIENCE_FIELDS,
	AUDIENCE_TOOLS,
	USERS_INPUT,
	users_payload,
)
from openmolt_integrations._meta_copies import COPY_TOOLS
from openmolt_integrations._meta_insights import AFTER, INSIGHTS_TOOLS, LIMIT

if TYPE_CHECKING:
	from openmolt_core.integrations.extensions import EncodeRequest
	from openmolt_core.plugins import IntegrationRegistrar
	from openmolt_core.tools import ToolContext

__all__ = ["CAMPAIGN_FORMAT", "INTEGRATION", "campaign_body", "register_integrations"]

_ACCOUNT = "act_{{ input.ad_account_id | remove_first: 'act_' }}"

_AD_ACCOUNT_ID = string(
	'The ad account id, with or without the "act_" prefix ("act_1234567890").',
	pattern="^(act_)?[0-9]+$",
)
_STATUS = string(
	"Start PAUSED (default, nothing is spent) or ACTIVE.",
	enum=["ACTIVE", "PAUSED"],
	default="PAUSED",
)
# Effective statuses each edge filters on (the SDK's effective_status enums; ads add their own).
_CAMPAIGN_STATUSES = ["ACTIVE", "PAUSED", "DELETED", "ARCHIVED", "IN_PROCESS", "WITH_ISSUES"]
_EFFECTIVE_STATUSES = {
	"campaigns": _CAMPAIGN_STATUSES,
	"adsets": [*_CAMPAIGN_STATUSES, "CAMPAIGN_PAUSED"],
	"ads": [
		*_CAMPAIGN_STATUSES,
		"CAMPAIGN_PAUSED",
		"ADSET_PAUSED",
		"PENDING_REVIEW",
		"DISAPPROVED",
	],
}
_BID_STRATEGY = [
	"LOWEST_COST_WITHOUT_CAP",
	"LOWEST_COST_WITH_BID_CAP",
	"COST_CAP",
	"LOWEST_COST_WITH_MIN_ROAS",
]
# The SDK's AdSet.OptimizationGoal values.
_OPTIMIZATION_GOALS = [
	"ADVERTISER_SILOED_VALUE",
	"AD_RECALL_LIFT",
	"APP_INSTALLS",
	"APP_INSTALLS_AND_OFFSITE_CONVERSIONS",
	"AUTOMATIC_OBJECTIVE",
	"CONVERSATIONS",
	"DERIVED_EVENTS",
	"ENGAGED_PAGE_VIEWS",
	"ENGAGED_USERS",
	"EVENT_RESPONSES",
	"IMPRESSIONS",
	"IN_APP_VALUE",
	"LANDING_PAGE_VIEWS",
	"LEAD_GENERATION",
	"LINK_CLICKS",
	"MEANINGFUL_CALL_ATTEMPT",
	"MESSAGING_APPOINTMENT_CONVERSION",
	"MESSAGING_DEEP_CONVERSATION_AND_FOLLOW",
	"MESSAGING_PURCHASE_CONVERSION",
	"NONE",
	"OFFSITE_CONVERSIONS",
	"PAGE_LIKES",
	"POST_ENGAGEMENT",
	"PROFILE_AND_PAGE_ENGAGEMENT",
	"PROFILE_VISIT",
	"QUALITY_CALL",
	"QUALITY_LEAD",
	"REACH",
	"REMINDERS_SET",
	"SUBSCRIBERS",
	"THRUPLAY",
	"VALUE",
	"VISIT_INSTAGRAM_PROFILE",
]
_BUDGET = "In minor units of the account currency (1000 = 10.00 USD)."
_OBJECT_ID = string("The campaign, ad set or ad id.")
# Graph reads these as ISO 8601 times (the SDK types them `datetime`).
_TIME = "{}, ISO 8601 with its UTC offset (2026-12-01T09:00:00+01:00)."
# The SDK types these ids `unsigned int`; the inputs take them as digit strings.
_NUMERIC_ID = "^[0-9]+$"


def _object(description: str) -> dict[str, Any]:
	"""An object parameter the SDK types only as ``Object``: passed through as given."""
	return {"type": "object", "description": description}


def _time(what: str) -> dict[str, Any]:
	return string(_TIME.format(what), format="date-time")


def _list_tool(handle: str, what: str, edge: str, default_fields: str) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=f"List the {what} of an ad account, newest first, with paging.",
		scopes=["read"],
		method="GET",
		endpoint=f"/{_ACCOUNT}/{edge}",
		query_params={
			"fields": fields_param(default_fields),
			"effective_status": json_param("effective_status"),
			**paging(),
		},
		input_schema=obj(
			{
				"ad_account_id": _AD_ACCOUNT_ID,
				"fields": fields_input(default_fields),
				"effective_status": array(
					string(enum=_EFFECTIVE_STATUSES[edge]),
					"Only objects with one of these effective statuses.",
				),
				"limit": LIMIT,
				"after": AFTER,
			},
			["ad_account_id"],
			closed=True,
		),
	)


def _paged(
	handle: str, description: str, endpoint: str, default_fields: str, extra: dict[str, Any]
) -> HttpTool:
	"""A GET of a Graph edge with ``fields``, ``limit`` and ``after`` (and ``extra`` inputs)."""
	schema = obj(
		{**extra, "fields": fields_input(default_fields), "limit": LIMIT, "after": AFTER},
		["ad_account_id"] if "ad_account_id" in extra else (),
		closed=True,
	)
	return HttpTool(
		handle=handle,
		description=description,
		scopes=["read"],
		method="GET",
		endpoint=endpoint,
		query_params={
			"fields": fields_param(default_fields),
			**passthrough_of(schema, exclude=["ad_account_id", "fields", "limit", "after"]),
			**paging(),
		},
		input_schema=schema,
	)


_CREATE_CAMPAIGN = obj(
	{
		"ad_account_id": _AD_ACCOUNT_ID,
		"name": string("The campaign name."),
		"objective": string(
			"What the campaign optimizes for.",
			enum=[
				"OUTCOME_AWARENESS",
				"OUTCOME_TRAFFIC",
				"OUTCOME_ENGAGEMENT",
				"OUTCOME_LEADS",
				"OUTCOME_APP_PROMOTION",
				"OUTCOME_SALES",
			],
		),
		"status": _STATUS,
		"special_ad_categories": array(
			string(
				enum=[
					"NONE",
					"EMPLOYMENT",
					"HOUSING",
					"FINANCIAL_PRODUCTS_SERVICES",
					"ISSUES_ELECTIONS_POLITICS",
					"ONLINE_GAMBLING_AND_GAMING",
				]
			),
			"Regulated categories the ads fall under; [] when none.",
			default=[],
		),
		"daily_budget": integer("Campaign daily budget. " + _BUDGET, minimum=1),
		"lifetime_budget": integer(
			"Campaign total budget (needs stop_time). " + _BUDGET, minimum=1
		),
		"is_adset_budget_sharing_enabled": boolean(
			"Without a campaign budget (budgets on the ad sets), required since Graph v24: true "
			"lets ad sets share up to 20% of their budget with each other, false keeps each ad "
			"set to its own budget."
		),
		"bid_strategy": string("Bid strategy, with a campaign budget only.", enum=_BID_STRATEGY),
		"spend_cap": integer("Most the campaign may ever spend. " + _BUDGET, minimum=1),
		"start_time": _time("Start time"),
		"stop_time": _time("End time"),
	},
	["ad_account_id", "name", "objective", "special_ad_categories"],
	closed=True,
)
_UPDATE_OBJECT = obj(
	{
		"object_id": _OBJECT_ID,
		"status": string("The new status.", enum=["ACTIVE", "PAUSED", "ARCHIVED"]),
		"name": string("The new name."),
		"daily_budget": integer("New daily budget. " + _BUDGET, minimum=1),
		"lifetime_budget": integer("New lifetime budget. " + _BUDGET, minimum=1),
		"end_time": _time("New end time (ad sets)"),
		"bid_amount": integer("New bid cap. " + _BUDGET),
	},
	["object_id"],
	closed=True,
)
_CREATE_AD_SET = obj(
	{
		"ad_account_id": _AD_ACCOUNT_ID,
		"campaign_id": string("The campaign's id."),
		"name": string("The ad set name."),
		"status": _STATUS,
		"daily_budget": integer("Daily budget. " + _BUDGET, minimum=1),
		"lifetime_budget": integer("Total budget (needs end_time). " + _BUDGET, minimum=1),
		"billing_event": string(
			"What you pay for.", enum=["IMPRESSIONS", "LINK_CLICKS", "THRUPLAY", "APP_INSTALLS"]
		),
		"optimization_goal": string(
			"What delivery optimizes for, e.g. REACH, LINK_CLICKS, LANDING_PAGE_VIEWS, "
			"OFFSITE_CONVERSIONS, LEAD_GENERATION, THRUPLAY, VALUE.",
			enum=_OPTIMIZATION_GOALS,
		),
		"bid_strategy": string("Bid strategy (without a campaign budget).", enum=_BID_STRATEGY),
		"bid_amount": integer("Bid or cost cap. " + _BUDGET),
		"targeting": _object(
			(
				'Targeting spec, e.g. {"geo_locations": {"countries": ["US"]}, "age_min": 25, '
				'"age_max": 54, "flexible_spec": [{"interests": [{"id": "6003139266461"}]}], '
				'"publisher_platforms": ["facebook"]}.'
			),
		),
		"promoted_object": _object(
			('What is promoted, e.g. {"pixel_id": "...", "custom_event_type": "PURCHASE"}.'),
		),
		"start_time": _time("Start time"),
		"end_time": _time("End time"),
	},
	["ad_account_id", "campaign_id", "name", "billing_event", "optimization_goal", "targeting"],
	closed=True,
)
_CREATE_AD = obj(
	{
		"ad_account_id": _AD_ACCOUNT_ID,
		"adset_id": string("The ad set's id.", pattern=_NUMERIC_ID),
		"creative": obj(
			{"creative_id": string("The creative's id.")},
			["creative_id"],
			description='The creative to run: {"creative_id": "..."}.',
		),
		"name": string("The ad name."),
		"status": _STATUS,
	},
	["ad_account_id", "adset_id", "creative", "name"],
	closed=True,
)
_CREATE_CREATIVE = obj(
	{
		"ad_account_id": _AD_ACCOUNT_ID,
		"name": string("The creative name."),
		"object_story_spec": _object(
			(
				'The post to run, e.g. {"page_id": "...", "link_data": {"image_hash": "...", '
				'"link": "https://...", "message": "...", "name": "headline", '
				'"call_to_action": {"type": "SHOP_NOW"}}}.'
			),
		),
		"url_tags": string('Query string appended to links ("utm_source=meta").'),
	},
	["ad_account_id", "name", "object_story_spec"],
	closed=True,
)
_CAMPAIGN_BUDGET = ("daily_budget", "lifetime_budget")
_NO_CAMPAIGN_BUDGET = "is_adset_budget_sharing_enabled"
CAMPAIGN_FORMAT = "meta-campaign"
"""createCampaign's request format: JSON, refused unless the budget choice is made."""


async def campaign_body(body: Any, request: EncodeRequest) -> EncodedBody:
	"""JSON for a new campaign, after checking the budget choice Graph v24+ requires.

	Since v24 Meta refuses a campaign with neither a campaign budget nor
	``is_adset_budget_sharing_enabled``; the tool says which two ways there are before sending.

	Raises:
		ToolError: Neither a campaign budget nor ``is_adset_budget_sharing_enabled`` is given.
	"""
	fields = body if isinstance(body, dict) else {}
	if not any(fields.get(k) is not None for k in (*_CAMPAIGN_BUDGET, _NO_CAMPAIGN_BUDGET)):
		raise ToolError(
			"createCampaign needs a budget choice (Meta refuses the campaign without one since "
			"Graph v24): either give the campaign a budget, daily_budget or lifetime_budget "
			"(campaign budget optimization), or budget on its ad sets and set "
			"is_adset_budget_sharing_enabled (true: ad sets may share up to 20% of their "
			"budgets; false: each keeps its own)."
		)
	data = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
	return EncodedBody(data, "application/json")


# New objects start PAUSED unless the agent says otherwise.
_PAUSED = "{{ input.status | default: 'PAUSED' }}"

_CAMPAIGN_TOOLS: list[HttpTool] = [
	_paged(
		"listAdAccounts",
		"List the ad accounts the token can use (id, name, status, currency).",
		"/me/adaccounts",
		"id,account_id,name,account_status,currency,timezone_name",
		{},
	),
	HttpTool(
		handle="getObject",
		description="Read any Marketing API object (ad account, campaign, ad set, ad, creative) by id.",
		scopes=["read"],
		method="GET",
		endpoint="/{{ input.object_id }}",
		query_params={"fields": "{% if input.fields %}{{ input.fields | join: ',' }}{% endif %}"},
		input_schema=obj(
			{
				"object_id": string("The object's id."),
				"fields": array(
					string(), 'Fields to return (e.g. ["name", "status", "daily_budget"]).'
				),
			},
			["object_id"],
			closed=True,
		),
	),
	_list_tool(
		"listCampaigns",
		"campaigns",
		"campaigns",
		"id,name,status,effective_status,objective,daily_budget,lifetime_budget",
	),
	HttpTool(
		handle="createCampaign",
		description=(
			"Create a campaign (PAUSED by default). Either give it a budget (daily_budget or "
			"lifetime_budget: campaign budget optimization), or leave the budget to its ad sets "
			"and then set is_adset_budget_sharing_enabled (true or false). One of the two is "
			"required: Meta refuses a campaign with neither."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/campaigns",
		request_format=CAMPAIGN_FORMAT,
		body=passthrough_of(_CREATE_CAMPAIGN, exclude=["ad_account_id"], status=_PAUSED),
		input_schema=_CREATE_CAMPAIGN,
	),
	HttpTool(
		handle="updateObject",
		description=(
			"Update a campaign, ad set or ad: pause or activate it, rename it, change its "
			"budget or end time. Only the given fields change."
		),
		scopes=["manage"],
		method="POST",
		endpoint="/{{ input.object_id }}",
		body=passthrough_of(_UPDATE_OBJECT, exclude=["object_id"]),
		input_schema=_UPDATE_OBJECT,
	),
	HttpTool(
		handle="deleteObject",
		description="Delete a campaign, ad set, ad or creative (cannot be undone; prefer ARCHIVED).",
		scopes=["delete"],
		method="DELETE",
		endpoint="/{{ input.object_id }}",
		input_schema=obj(
			{"object_id": string("The id of what to delete.")}, ["object_id"], closed=True
		),
	),
	_list_tool(
		"listAdSets",
		"ad sets",
		"adsets",
		"id,name,status,effective_status,campaign_id,daily_budget,lifetime_budget,optimization_goal",
	),
	HttpTool(
		handle="createAdSet",
		description=(
			"Create an ad set in a campaign: budget (unless the campaign has one), schedule, "
			"optimization goal, billing event and targeting. PAUSED by default. Find interest "
			"and location ids for targeting with searchTargeting and searchLocations."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adsets",
		body=passthrough_of(_CREATE_AD_SET, exclude=["ad_account_id"], status=_PAUSED),
		input_schema=_CREATE_AD_SET,
	),
	_list_tool(
		"listAds",
		"ads",
		"ads",
		"id,name,status,effective_status,adset_id,campaign_id,creative",
	),
	HttpTool(
		handle="createAd",
		description="Create an ad in an ad set from an existing creative. PAUSED by default.",
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/ads",
		body=passthrough_of(_CREATE_AD, exclude=["ad_account_id"], status=_PAUSED),
		input_schema=_CREATE_AD,
	),
	_paged(
		"listCreatives",
		"List the ad creatives of an ad account.",
		f"/{_ACCOUNT}/adcreatives",
		"id,name,status,object_story_spec,thumbnail_url",
		{"ad_account_id": _AD_ACCOUNT_ID},
	),
	HttpTool(
		handle="uploadAdImage",
		description="Upload an image for ads; returns its hash to use as image_hash in a creative.",
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adimages",
		request_format="multipart",
		files=passthrough("filename"),
		input_schema=obj(
			{
				"ad_account_id": _AD_ACCOUNT_ID,
				"filename": string(
					"The image (JPG or PNG) as a file reference: openmolt-file:<id>, a data: "
					"URL, or a path from the fileSystem integration."
				),
			},
			["ad_account_id", "filename"],
			closed=True,
		),
	),
	HttpTool(
		handle="createCreative",
		description=(
			"Create an ad creative from a Page post spec (link ad with image, text and call to "
			"action). Upload the image first with uploadAdImage to get its hash; find the "
			"page_id with listPages."
		),
		scopes=["manage"],
		method="POST",
		endpoint=f"/{_ACCOUNT}/adcreatives",
		body=passthrough_of(_CREATE_CREATIVE, exclude=["ad_account_id"]),
		input_schema=_CREATE_CREATIVE,
	),
]

_TARGETING_TOOLS: list[HttpTool] = [
	HttpTool(
		handle="searchTargeting",
		description=(
			"Search interests, behaviors and demographics to target by keyword; returns their "
			"id, name, type and audience size. Put them in createAdSet's targeting, e.g. "
			'{"flexible_spec": [{"interests": [{"id": "...", "name": "..."}]}]}.'
		),
		scopes=["read"],
		method="GET",
		endpoint=f"/{_ACCOUNT}/targetingsearch",
		query_params=passthrough("q", "limit_type", "limit", countries=json_param("countries")),
		input_schema=obj(
			{
				"ad_account_id": _AD_ACCOUNT_ID,
				"q": string('Keyword ("yoga").', minLength=1),
				"limit_type": string(
					"Only this kind of targeting option.",
					enum=["interests", "behaviors", "education_schools", "work_employers"],
				),
				"countries": array(
					string(pattern="^[A-Z]{2}$"),
					'Rank for audiences in these countries ("US", "DE").',
				),
				"limit": LIMIT,
			},
			["ad_account_id", "q"],
			closed=True,
		),
	),
	HttpTool(
		handle="searchLocations",
		description=(
			"Find countries, regions, cities or postal codes by name; returns the keys to put "
			'in targeting.geo_locations, e.g. {"cities": [{"key": "2420379"}]}.'
		),
		scopes=["read"],
		method="GET",
		endpoint="/search",
		query_params={
			"type": "adgeolocation",
			**passthrough("q", location_types=json_param("location_types")),
			**passthrough("country_code", "limit"),
		},
		input_schema=obj(
			{
				"q": string('Place name ("Lyon").', minLength=1),
				"location_types": array(
					string(
						enum=[
							"country",
							"region",
							"city",
							"zip",
							"geo_market",
							"electoral_district",
						]
					),
					"Only these kinds of places (default: all).",
				),
				"country_code": string('Only places in this country ("FR").', pattern="^[A-Z]{2}$"),
				"limit": LIMIT,
			},
			["q"],
			closed=True,
		),
	),
	_paged(
		"listPages",
		"List the Facebook Pages the token can act for (id, name, category, linked Instagram "
		"account); an ad creative's object_story_spec.page_id is one of them.",
		"/me/accounts",
		"id,name,category,instagram_business_account",
		{},
	),
	_paged(
		"listPromotePages",
		"List the Pages an ad account can run ads for.",
		f"/{_ACCOUNT}/promote_pages",
		"id,name,category",
		{"ad_account_id": _AD_ACCOUNT_ID},
	),
]


async def _add_audience_users(input: dict[str, Any], context: ToolContext) -> Any:
	request = {
		"custom_audience_id": input["custom_audience_id"],
		"payload": users_payload(input["users"]),
	}
	return await execute_http_tool(ADD_USERS_REQUEST, INTEGRATION, request, context)


_AUDIENCE_TOOLS: list[HttpTool | FunctionTool] = [
	*AUDIENCE_TOOLS,
	_paged(
		"listCustomAudiences",
		"List the custom audiences of an ad account with their approximate sizes.",
		f"/{_ACCOUNT}/customaudiences",
		AUDIENCE_FIELDS,
		{"ad_account_id": _AD_ACCOUNT_ID},
	),
	FunctionTool(
		handle="addCustomAudienceUsers",
		description=(
			"Add people to a customer list audience by email, phone, name, postal code and/or "
			"country, in plain text: the tool normalizes and SHA-256 hashes every value before "
			"anything is sent, as Meta requires. Every person in a call has the same kinds of "
			"identifiers; Meta matches them to accounts within hours."
		),
		scopes=["audiences"],
		function=_add_audience_users,
		input_schema=USERS_INPUT,
	),
]

TOOLS: list[HttpTool | FunctionTool] = [
	*_CAMPAIGN_TOOLS,
	*COPY_TOOLS,
	*INSIGHTS_TOOLS,
	*_TARGETING_TOOLS,
	*_AUDIENCE_TOOLS,
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
   `ads_management` (or `ads_read` for reports only), `business_management` and, for creatives
   and listPages, `pages_show_list`, `pages_read_engagement`, `pages_manage_ads`.
4. Pass it as `accessToken`:

```python
om = OpenMolt(integrations={"metaAds": {"accessToken": "EAAB..."}})
agent = om.create_agent(name="Media buyer", model="openai:gpt-5-mini",
                        integrations=[{"integration": "metaAds", "scopes": ["read"]}])
```

A user token from the Graph API Explorer also works for tests, but expires within hours (or 60
days once exchanged with `grant_type=fb_exchange_token`). Ad account ids look like
`act_1234567890`; budgets are in cents of the account currency.

## Reference checks

Every tool's method, path, query and body names are checked by the test suite against the
official `facebook-business` SDK (26.0.3): the `FacebookRequest` each SDK call builds and its
`param_types`, the `Field` lists for default `fields`, and the SDK's enums. Inputs are named as
the SDK names its parameters, and as Graph's reference pages name the node in a path
(`act_<AD_ACCOUNT_ID>` is `ad_account_id`); an input the SDK types as an enum lists SDK values,
one it types `datetime` takes an RFC 3339 time (`format: date-time`), and a string id it types
`unsigned int` takes digits. Not checkable there:

- `searchLocations`: the SDK's `TargetingSearch.search` gives the path (`/search`) and the `type`
  values (`adgeolocation`) but no parameter list; `q`, `location_types`, `country_code` and
  `limit` follow the [targeting search docs](https://developers.facebook.com/docs/marketing-api/audiences/reference/targeting-search).
- `fields`, `limit` and `after` are Graph-wide parameters the SDK adds outside `param_types`
  ([paging docs](https://developers.facebook.com/docs/graph-api/results)).
- Shapes inside object parameters (`targeting`, `object_story_spec`, `promoted_object`) are typed
  only as `Object` by the SDK, so the tools pass them through as given; `time_range`'s days are
  dates (`YYYY-MM-DD`) per the [insights docs](https://developers.facebook.com/docs/marketing-api/insights).
- `breakdowns` lists no values: the SDK's enum has over a hundred, so the description names the
  common ones.

`addCustomAudienceUsers` takes people's email, phone, name, postal code and country in plain
text and sends only their SHA-256 digests, normalized as the SDK's own
`CustomAudience.format_params` normalizes them (the test suite compares the two digest for
digest); its request is the SDK's `CustomAudience.create_user`.
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"listAdAccounts": [],
		"listCampaigns": [],
		"createCampaign": [],
		"updateObject": [],
		"deleteObject": [],
		"listAdSets": [],
		"createAdSet": [],
		"listAds": [],
		"createAd": [],
		"listCreatives": [],
		"uploadAdImage": [],
		"createCreative": [],
		"startInsightsJob": [],
		"copyCampaign": [],
		"copyAdSet": [],
		"getAdPreview": [],
		# Names a Page post that is public already: no new data leaves with it.
		"createCreativeFromPost": [],
		"createCustomAudience": [],
		"listCustomAudiences": [],
		# People's (hashed) identifiers leave the user's hands for Meta's matching.
		"addCustomAudienceUsers": ["outbound"],
		"getInsightsJob": [],
		"searchTargeting": [],
		"searchLocations": [],
		"listPages": [],
		"listPromotePages": [],
		"getInsights": ["private"],
		"getInsightsJobResults": ["private"],
		# Others' words: any Graph object by id, a Page post or a comment too.
		"getObject": ["untrusted"],
	},
	id="metaAds",
	name="Meta Ads",
	description=(
		"Facebook and Instagram ads: campaigns, ad sets, ads, creatives, copies, previews, "
		"insights, customer list audiences, targeting search and Pages."
	),
	api_version=GRAPH_VERSION,
	api_setup=ApiSetup(base_url=GRAPH_URL),
	encoders={CAMPAIGN_FORMAT: campaign_body},
	credential_setup=[
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		)
	],
	scopes={
		"read": (
			"Read ad accounts, campaigns, ad sets, ads, creatives, insights, targeting options "
			"and Pages."
		),
		"manage": "Create, copy and change campaigns, ad sets, ads, creatives and ad images.",
		"delete": "Delete campaigns, ad sets, ads and creatives.",
		"audiences": (
			"Create customer list audiences and add people to them (their hashed email, phone, "
			"name, postal code, country)."
		),
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the Meta Ads integration."""
	register(INTEGRATION, id="metaAds")
