"""Google Ads API (v26): GAQL reporting, mutates, keyword ideas, offline conversions, Customer Match.

Every tool is one declarative request except three small functions that send declarative
requests through the HTTP engine (each checked against the google-ads protos):
``generateKeywordIdeas`` picks one of `KEYWORD_IDEAS_REQUESTS` by the seed inputs given (its seed
is a oneof); ``uploadClickConversions`` and ``addCustomerMatchContacts`` first normalize and
SHA-256 hash the people's email, phone and name (`openmolt_integrations._ads_user_data`), as
Google requires, then send `CLICK_CONVERSIONS_REQUEST` or the three `CUSTOMER_MATCH_REQUESTS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, FunctionTool, HttpTool, Integration
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations import _ads_inputs, _ads_uploads
from openmolt_integrations._ads_inputs import (
	CUSTOMER,
	CUSTOMER_ID,
	QUERY,
	VALIDATE_ONLY,
)
from openmolt_integrations._ads_uploads import (
	ADJUSTMENTS_TOOL,
	CLICK_FIELDS,
	CLICK_REQUIRED,
	CONSENT,
)
from openmolt_integrations._ads_user_data import (
	CONTACT_FIELDS,
	click_conversions,
	contact_operations,
	customer_match_upload,
)
from openmolt_integrations._google import PAGE_TOKEN, google_oauth2, token_guide

if TYPE_CHECKING:
	from openmolt_core.tools import ToolContext

__all__ = [
	"API_VERSION",
	"CLICK_CONVERSIONS_REQUEST",
	"CUSTOMER_MATCH_REQUESTS",
	"INTEGRATION",
	"KEYWORD_IDEAS_REQUESTS",
	"TOOLS",
	"register_integrations",
]

API_VERSION = _ads_inputs.API_VERSION
"""The Google Ads API version the tools target (versions are sunset about a year after release)."""
CLICK_CONVERSIONS_REQUEST = _ads_uploads.CLICK_CONVERSIONS_REQUEST
"""The request ``uploadClickConversions`` sends once it has hashed the user identifiers."""
CUSTOMER_MATCH_REQUESTS = _ads_uploads.CUSTOMER_MATCH_REQUESTS
"""The requests ``addCustomerMatchContacts`` sends in order (find, create, add, run)."""

_SCOPES = {
	"https://www.googleapis.com/auth/adwords": "Manage the Google Ads accounts the user can access."
}

_PARTIAL = {
	"type": "boolean",
	"description": "Apply the valid operations even if some fail (failures are listed in partialFailureError).",
}
_RESPONSE_TYPE = {
	"type": "string",
	"enum": ["RESOURCE_NAME_ONLY", "MUTABLE_RESOURCE"],
	"description": "Return only resource names (default) or the whole changed resources.",
}


def _operations(resource: str, example: str) -> dict[str, Any]:
	return array(
		obj(
			{
				"create": {"type": "object", "description": f"A new {resource} (no resourceName)."},
				"update": {
					"type": "object",
					"description": f"Fields to change on a {resource}; must include resourceName.",
				},
				"updateMask": {
					"type": "string",
					"description": "Comma-separated camelCase field paths changed by update, e.g. 'status,name'.",
				},
				"remove": {
					"type": "string",
					"description": f"Resource name of the {resource} to remove.",
				},
			}
		),
		f"Operations, each with exactly one of create, update (with updateMask) or remove. Example: {example}",
	)


def _mutate(handle: str, path: str, resource: str, example: str, notes: str) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=f"Create, update or remove {resource}s. {notes}",
		scopes=["write"],
		method="POST",
		endpoint=f"{CUSTOMER}/{path}:mutate",
		body=passthrough("operations", "partialFailure", "validateOnly", "responseContentType"),
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"operations": _operations(resource, example),
				"partialFailure": _PARTIAL,
				"validateOnly": VALIDATE_ONLY,
				"responseContentType": _RESPONSE_TYPE,
			},
			["customerId", "operations"],
		),
		output_schema=obj(
			{
				"results": {"type": "array", "items": obj({"resourceName": {"type": "string"}})},
				"partialFailureError": {"type": "object"},
			}
		),
	)


_IDEAS_COMMON = passthrough(
	"language",
	"geoTargetConstants",
	"keywordPlanNetwork",
	"includeAdultKeywords",
	"pageSize",
	"pageToken",
)
_IDEAS_INPUT = obj(
	{
		"customerId": CUSTOMER_ID,
		"keywords": {
			**array(
				{"type": "string"},
				"Seed keywords (1-20), e.g. ['running shoes'] (keywordSeed, or keywordAndUrlSeed with url).",
			),
			"minItems": 1,
			"maxItems": 20,
		},
		"url": {
			"type": "string",
			"description": "A page to draw ideas from, e.g. 'https://example.com/shoes' (urlSeed, or keywordAndUrlSeed with keywords).",
		},
		"site": {
			"type": "string",
			"description": "A whole site, e.g. 'example.com' (siteSeed; not with keywords or url).",
		},
		"language": {
			"type": "string",
			"description": "Language constant resource name, e.g. 'languageConstants/1000' (English).",
		},
		"geoTargetConstants": array(
			{"type": "string"},
			"Location resource names (max 10), e.g. ['geoTargetConstants/2840'] for the United States.",
			maxItems=10,  # GenerateKeywordIdeasRequest.geo_target_constants: "Maximum is 10."
		),
		"keywordPlanNetwork": {
			"type": "string",
			"enum": ["GOOGLE_SEARCH", "GOOGLE_SEARCH_AND_PARTNERS"],
			"description": "Network the metrics are for (default GOOGLE_SEARCH_AND_PARTNERS).",
		},
		"includeAdultKeywords": {"type": "boolean", "description": "Include adult keywords."},
		"pageSize": {
			"type": "integer",
			"minimum": 1,
			"maximum": 10000,
			"description": "Ideas per page.",
		},
		"pageToken": PAGE_TOKEN,
	},
	["customerId"],
)
_IDEAS_OUTPUT = obj(
	{
		"results": {
			"type": "array",
			"items": obj({"text": {"type": "string"}, "keywordIdeaMetrics": {"type": "object"}}),
		},
		"nextPageToken": {"type": "string"},
		"totalSize": {"type": "string"},
	}
)


def _ideas_request(seed: str, fields: dict[str, str]) -> HttpTool:
	return HttpTool(
		handle="generateKeywordIdeas",
		description=f"KeywordPlanIdeaService.GenerateKeywordIdeas with {seed}.",
		scopes=["read"],
		method="POST",
		endpoint=f"{CUSTOMER}:generateKeywordIdeas",
		body={seed: fields, **_IDEAS_COMMON},
		input_schema=_IDEAS_INPUT,
		output_schema=_IDEAS_OUTPUT,
	)


KEYWORD_IDEAS_REQUESTS = {
	("keywords",): _ideas_request("keywordSeed", passthrough("keywords")),
	("url",): _ideas_request("urlSeed", passthrough("url")),
	("keywords", "url"): _ideas_request("keywordAndUrlSeed", passthrough("keywords", "url")),
	("site",): _ideas_request("siteSeed", passthrough("site")),
}
"""The request ``generateKeywordIdeas`` sends for each combination of seed inputs.

``GenerateKeywordIdeasRequest.seed`` is a oneof: ``keywordAndUrlSeed`` "requires at least one
keyword", so a URL alone goes in ``urlSeed`` and keywords alone in ``keywordSeed``. The seed
follows from the inputs given, so the tool picks the request; any other combination (none, or
``site`` with another seed) is refused before anything is sent.
"""


async def _keyword_ideas(input: dict[str, Any], context: ToolContext) -> Any:
	given = tuple(k for k in ("keywords", "url", "site") if input.get(k) not in (None, "", []))
	tool = KEYWORD_IDEAS_REQUESTS.get(given)
	if tool is None:
		raise ToolError(
			"generateKeywordIdeas needs a seed: give keywords, url, or both, or site alone "
			f"(got {', '.join(given) or 'none'})",
			tool="generateKeywordIdeas",
		)
	return await execute_http_tool(tool, INTEGRATION, input, context)


# Offline click conversions and Customer Match -------------------------------------------------


async def _upload_click_conversions(input: dict[str, Any], context: ToolContext) -> Any:
	request = {**input, "conversions": click_conversions(input["conversions"])}
	return await execute_http_tool(CLICK_CONVERSIONS_REQUEST, INTEGRATION, request, context)


async def _add_customer_match_contacts(input: dict[str, Any], context: ToolContext) -> Any:
	operations = contact_operations(input["contacts"])

	async def send(step: str, request: dict[str, Any]) -> Any:
		tool = CUSTOMER_MATCH_REQUESTS[step]
		return await execute_http_tool(tool, INTEGRATION, request, context)

	return await customer_match_upload(input, operations, send, context.idempotency_key)


_ROWS = {
	"type": "array",
	"items": {"type": "object"},
	"description": "Rows keyed by resource: {campaign: {...}, metrics: {...}}.",
}
_SUMMARY_ROW = {
	"type": "object",
	"description": "The metrics summed over all rows, when asked for (returnSummaryRow).",
}
_SEARCH_OUT = obj(
	{
		"results": _ROWS,
		"nextPageToken": {
			"type": "string",
			"description": "Pass as pageToken for the next 10,000 rows.",
		},
		"totalResultsCount": {"type": "string"},
		"summaryRow": _SUMMARY_ROW,
		"fieldMask": {"type": "string"},
	}
)
"""A ``SearchGoogleAdsResponse``: one page of rows."""
_STREAM_OUT = obj(
	{
		"results": _ROWS,
		"fieldMask": {"type": "string"},
		"requestId": {"type": "string"},
	}
)
"""One ``SearchGoogleAdsStreamResponse`` batch: a stream has no pages (no page token, no count)."""

TOOLS = [
	HttpTool(
		handle="listAccessibleCustomers",
		description="List the Google Ads accounts the signed-in user can access directly (resource names 'customers/<id>'). Use a manager account id as loginCustomerId to reach its client accounts.",
		scopes=["read"],
		method="GET",
		endpoint=f"/{API_VERSION}/customers:listAccessibleCustomers",
		output_schema=obj({"resourceNames": {"type": "array", "items": {"type": "string"}}}),
	),
	HttpTool(
		handle="search",
		description="Run a GAQL query (reports, campaign settings, account hierarchy through customer_client). Returns up to 10,000 rows per page.",
		scopes=["read"],
		method="POST",
		endpoint=f"{CUSTOMER}/googleAds:search",
		body=passthrough("query", "pageToken", "searchSettings"),
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"query": QUERY,
				"pageToken": PAGE_TOKEN,
				"searchSettings": obj(
					{
						"returnTotalResultsCount": {
							"type": "boolean",
							"description": "Also return the total row count.",
						},
						"returnSummaryRow": {
							"type": "boolean",
							"description": "Also return a summary row of the metrics.",
						},
					},
					description="Optional extras, e.g. {'returnTotalResultsCount': true}.",
				),
			},
			["customerId", "query"],
		),
		output_schema=_SEARCH_OUT,
	),
	HttpTool(
		handle="searchStream",
		description="Run a GAQL query and get all rows in one response (no paging; best for full reports). The response is a list of batches, each with results.",
		scopes=["read"],
		method="POST",
		endpoint=f"{CUSTOMER}/googleAds:searchStream",
		body=passthrough("query"),
		input_schema=obj({"customerId": CUSTOMER_ID, "query": QUERY}, ["customerId", "query"]),
		output_schema={"type": "array", "items": _STREAM_OUT},
	),
	HttpTool(
		handle="mutate",
		description="Apply operations on several resource types in one atomic request (e.g. a budget and the campaign using it, with temporary ids like 'customers/123/campaignBudgets/-1').",
		scopes=["write"],
		method="POST",
		endpoint=f"{CUSTOMER}/googleAds:mutate",
		body=passthrough(
			"mutateOperations", "partialFailure", "validateOnly", "responseContentType"
		),
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"mutateOperations": array(
					{"type": "object"},
					"Operations keyed by type: {'campaignBudgetOperation': {'create': {...}}}, {'campaignOperation': {'update': {...}, 'updateMask': 'status'}}, {'adGroupOperation': ...}, {'adGroupAdOperation': ...}, {'adGroupCriterionOperation': ...}.",
				),
				"partialFailure": _PARTIAL,
				"validateOnly": VALIDATE_ONLY,
				"responseContentType": _RESPONSE_TYPE,
			},
			["customerId", "mutateOperations"],
		),
		output_schema=obj(
			{
				"mutateOperationResponses": {"type": "array", "items": {"type": "object"}},
				"partialFailureError": {"type": "object"},
			}
		),
	),
	HttpTool(
		handle="setCampaignStatus",
		description="Pause, enable or remove one campaign.",
		scopes=["write"],
		method="POST",
		endpoint=f"{CUSTOMER}/campaigns:mutate",
		body={
			"operations": [
				{
					"update": passthrough(
						"status",
						resourceName="customers/{{ input.customerId | remove: '-' }}/campaigns/{{ input.campaignId }}",
					),
					"updateMask": "status",
				}
			],
			**passthrough("validateOnly"),
		},
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"campaignId": {
					"type": "string",
					# The last segment of the resourceName: a whole name would be nested in it.
					"pattern": "^[0-9]+$",
					"description": "The numeric campaign id (campaign.id, e.g. '555'; not the resource name 'customers/.../campaigns/...').",
				},
				"status": {
					"type": "string",
					"enum": ["ENABLED", "PAUSED", "REMOVED"],
					"description": "The new status.",
				},
				"validateOnly": VALIDATE_ONLY,
			},
			["customerId", "campaignId", "status"],
		),
		output_schema=obj(
			{"results": {"type": "array", "items": obj({"resourceName": {"type": "string"}})}}
		),
	),
	_mutate(
		"mutateCampaigns",
		"campaigns",
		"campaign",
		"[{'update': {'resourceName': 'customers/123/campaigns/456', 'status': 'PAUSED'}, 'updateMask': 'status'}] or a create with name, advertisingChannelType 'SEARCH', status, campaignBudget (resource name), a bidding strategy such as manualCpc: {} and networkSettings.",
		"New campaigns should start PAUSED; EU political advertising status must be set on create (containsEuPoliticalAdvertising).",
	),
	_mutate(
		"mutateCampaignBudgets",
		"campaignBudgets",
		"campaign budget",
		"[{'create': {'name': 'Daily 50', 'amountMicros': '50000000', 'deliveryMethod': 'STANDARD', 'explicitlyShared': false}}] or [{'update': {'resourceName': 'customers/123/campaignBudgets/789', 'amountMicros': '80000000'}, 'updateMask': 'amountMicros'}].",
		"amountMicros is the average daily budget in micros.",
	),
	_mutate(
		"mutateAdGroups",
		"adGroups",
		"ad group",
		"[{'create': {'name': 'Shoes', 'campaign': 'customers/123/campaigns/456', 'status': 'ENABLED', 'type': 'SEARCH_STANDARD', 'cpcBidMicros': '1000000'}}].",
		"",
	),
	_mutate(
		"mutateAdGroupAds",
		"adGroupAds",
		"ad",
		"[{'create': {'adGroup': 'customers/123/adGroups/321', 'status': 'PAUSED', 'ad': {'finalUrls': ['https://example.com'], 'responsiveSearchAd': {'headlines': [{'text': 'Fast shoes'}, {'text': 'Free returns'}, {'text': 'Shop now'}], 'descriptions': [{'text': 'Run further.'}, {'text': 'Ships in 24h.'}]}}}}].",
		"Responsive search ads need 3-15 headlines (max 30 characters) and 2-4 descriptions (max 90).",
	),
	_mutate(
		"mutateAdGroupCriteria",
		"adGroupCriteria",
		"ad group criterion (keyword, audience...)",
		"[{'create': {'adGroup': 'customers/123/adGroups/321', 'status': 'ENABLED', 'keyword': {'text': 'running shoes', 'matchType': 'PHRASE'}}}]; negative keywords add 'negative': true.",
		"Keywords are criteria with keyword {text, matchType EXACT|PHRASE|BROAD}.",
	),
	FunctionTool(
		handle="generateKeywordIdeas",
		description=(
			"Keyword ideas with search volume, competition and bid ranges (Keyword Planner), from "
			"seed keywords, a page URL, both, or a whole site. Give keywords and/or url, or site."
		),
		scopes=["read"],
		function=_keyword_ideas,
		input_schema=_IDEAS_INPUT,
		output_schema=_IDEAS_OUTPUT,
	),
	FunctionTool(
		handle="uploadClickConversions",
		description=(
			"Upload offline conversions of ad clicks (a lead became a sale in your CRM): each "
			"with its gclid (or gbraid/wbraid) and/or the person's email, phone or address "
			"(enhanced conversions for leads). Emails, phone numbers and names are normalized "
			"and SHA-256 hashed by the tool before anything is sent; give them in plain text. "
			"Up to 2000 per call; each succeeds or fails on its own (see partialFailureError)."
		),
		scopes=["upload"],
		function=_upload_click_conversions,
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"conversions": {
					**array(
						obj({**CLICK_FIELDS, **CONTACT_FIELDS}, CLICK_REQUIRED),
						"The conversions, e.g. [{'gclid': 'Cj0K...', 'conversionAction': 'customers/123/conversionActions/456', 'conversionDateTime': '2026-11-30 14:05:00+01:00', 'conversionValue': 49.9, 'currencyCode': 'EUR'}].",
					),
					"minItems": 1,
					"maxItems": 2000,
				},
				"validateOnly": VALIDATE_ONLY,
			},
			["customerId", "conversions"],
		),
		output_schema=obj(
			{
				"results": {"type": "array", "items": {"type": "object"}},
				"partialFailureError": {"type": "object"},
				"jobId": {"type": "string"},
			}
		),
	),
	ADJUSTMENTS_TOOL,
	FunctionTool(
		handle="addCustomerMatchContacts",
		description=(
			"Add people to a Customer Match user list (CRM-based audience) by email, phone "
			"and/or name with address. Emails, phone numbers and names are normalized and "
			"SHA-256 hashed by the tool before anything is sent; give them in plain text. Runs "
			"an offline user data job (create, add, run); Google matches the list within hours."
		),
		scopes=["upload"],
		function=_add_customer_match_contacts,
		# Made again after a crash, the call finds the job its first attempt created (by the
		# call's idempotency key) and goes on with it: safe to retry, no person needs asking.
		in_doubt="retry",
		input_schema=obj(
			{
				"customerId": CUSTOMER_ID,
				"userList": {
					"type": "string",
					"pattern": "^customers/[0-9]+/userLists/[0-9]+$",
					"description": "Resource name of the Customer Match list, e.g. 'customers/1234567890/userLists/555' (GAQL: SELECT user_list.resource_name FROM user_list WHERE user_list.type = CRM_BASED).",
				},
				"contacts": {
					**array(
						obj(CONTACT_FIELDS),
						"The people, e.g. [{'email': 'ana@example.com', 'phoneNumber': '+14155550123'}].",
					),
					"minItems": 1,
					"maxItems": 10000,
				},
				"consent": CONSENT,
			},
			["customerId", "userList", "contacts"],
		),
		output_schema=obj(
			{
				"job": {"type": "string", "description": "The offline user data job."},
				"contacts": {"type": "integer"},
				"operation": {"type": "string", "description": "The long-running run operation."},
				"partialFailureError": {"type": "object"},
				"status": {
					"type": "string",
					"description": "The job's status when an earlier attempt of the call ran it.",
				},
				"earlierAttempt": {
					"type": "boolean",
					"description": "True when the job was run by an earlier attempt of the call.",
				},
			}
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"listAccessibleCustomers": [],
		"mutate": [],
		"setCampaignStatus": [],
		"mutateCampaigns": [],
		"mutateCampaignBudgets": [],
		"mutateAdGroups": [],
		"mutateAdGroupAds": [],
		"mutateAdGroupCriteria": [],
		"generateKeywordIdeas": [],
		"uploadConversionAdjustments": [],
		"uploadClickConversions": ["outbound"],
		"addCustomerMatchContacts": ["outbound"],
		# Others' words: GAQL rows may hold what people typed (search_term_view.search_term).
		"search": ["private", "untrusted"],
		"searchStream": ["private", "untrusted"],
	},
	name="Google Ads",
	description="Report on and manage Google Ads accounts: GAQL queries, campaigns, budgets, ad groups, ads, keywords, keyword ideas, offline conversions and their adjustments, and Customer Match.",
	api_version=API_VERSION,
	api_setup=ApiSetup(
		base_url="https://googleads.googleapis.com",
		# Sent when set: only a manager account's clients need it.
		headers={"login-customer-id": "{{ config.loginCustomerId | remove: '-' }}"},
	),
	# Every request needs the developer token: the credential's header, checked before a run.
	credential_setup=[
		google_oauth2(*_SCOPES).model_copy(
			update={"headers": {"developer-token": "{{ config.developerToken }}"}}
		)
	],
	scopes={
		"read": "List accounts, run GAQL reports and get keyword ideas.",
		"write": "Create, change, pause and remove campaigns, budgets, ad groups, ads and keywords.",
		"upload": "Upload offline click conversions, their retractions and restatements, and Customer Match contacts (people's hashed email, phone, name).",
	},
	tools=TOOLS,
	docs=token_guide(
		"Google Ads",
		"Google Ads API",
		"googleAds",
		_SCOPES,
		more_config=("developerToken",),
		notes="""## Developer token and manager accounts

Every request also needs a **developer token**: in a Google Ads *manager* account open Admin →
API Center and apply for one (a new token works on test accounts only until Google approves
Basic access). Put it in the config as `developerToken`. When the agent works on client accounts
through a manager account, also set `loginCustomerId` to the manager's id (dashes are removed):

```python
"config": {"clientId": "...", "clientSecret": "...", "refreshToken": "...",
           "developerToken": "...", "loginCustomerId": "123-456-7890"}
```

Google Ads sunsets each API version about a year after release; this integration targets
`v26`.

## Offline conversions and Customer Match

`uploadClickConversions` (ConversionUploadService) and `addCustomerMatchContacts` (an offline
user data job: create, add operations, run) take people's email, phone number and name in plain
text and **normalize and SHA-256 hash them before anything is sent**, as Google requires:
emails trimmed and lowercased (dots before `@gmail.com`/`@googlemail.com` removed), phone
numbers in E.164 (`+14155550123`; a number without its `+` country code is refused), names
trimmed and lowercased; country and postal codes are sent unhashed. Values hashed already go in
`hashedEmail`/`hashedPhoneNumber`. Both need the `upload` scope, the account's acceptance of the
customer data terms, and (for users in the EU) `consent`.

`uploadConversionAdjustments` (ConversionAdjustmentUploadService) retracts an uploaded
conversion (a refund) or restates its value, naming it by `orderId` or by `gclid` and
`conversionDateTime`; it carries no people's data.

## Checked against

Every request (method, path, body field names, nested ones included) is checked by the test
suite against Google's own references: the RPCs and request messages of the `google-ads`
package (v26), and the HTTP rules of the googleapis protos in the `google-proto-files` npm
package. Not machine-checked, and why:

- The HTTP rules come from v25, the newest version `google-proto-files` ships (`google-ads`
  ships gRPC only); Ads paths have kept the same shape across versions.
- What the model passes inside `operations`, `mutateOperations` and the GAQL `query` is the
  model's input, checked by the API itself, not by the tool definitions.
- The `developer-token` and `login-customer-id` headers are documented, not in the protos.""",
	),
)
"""The Google Ads integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Google Ads under the id ``googleAds``."""
	register(INTEGRATION, id="googleAds")
