"""Meta Ads and Instagram tools against Meta's official SDKs, read at test time.

For each tool the test builds the same call with the official ``facebook-business`` SDK (26.0.3,
``pending=True``: nothing is sent) and compares the HTTP method, the node/edge path, the parameter
names (the SDK's ``param_types``), the default ``fields`` (the target class's ``Field`` list) and
the enums. The Node.js SDK (npm) shows how Meta encodes request bodies.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from _edit import with_input_schema, with_tool
from _social_refs import npm_member
from facebook_business import apiconfig
from facebook_business.adobjects.abstractcrudobject import AbstractCrudObject
from facebook_business.adobjects.ad import Ad
from facebook_business.adobjects.adaccount import AdAccount
from facebook_business.adobjects.adaccounttargetingunified import AdAccountTargetingUnified
from facebook_business.adobjects.adcreative import AdCreative
from facebook_business.adobjects.adimage import AdImage
from facebook_business.adobjects.adreportrun import AdReportRun
from facebook_business.adobjects.adset import AdSet
from facebook_business.adobjects.adsinsights import AdsInsights
from facebook_business.adobjects.campaign import Campaign
from facebook_business.adobjects.customaudience import CustomAudience
from facebook_business.adobjects.igcomment import IGComment
from facebook_business.adobjects.igmedia import IGMedia
from facebook_business.adobjects.iguser import IGUser
from facebook_business.adobjects.page import Page
from facebook_business.adobjects.shadowighashtag import ShadowIGHashtag
from facebook_business.adobjects.shadowigmediabuilder import ShadowIGMediaBuilder
from facebook_business.adobjects.targetingsearch import TargetingSearch
from facebook_business.adobjects.unifiedthread import UnifiedThread
from facebook_business.adobjects.user import User
from facebook_business.api import FacebookAdsApi, FacebookRequest

from openmolt_core.errors import ToolError
from openmolt_core.integrations import FunctionTool, HttpTool, Integration
from openmolt_integrations import _graph, _meta_audiences, instagram, meta_ads, whatsapp

FacebookAdsApi.init(access_token="conformance-test-token")

PAGING = {"fields", "limit", "after", "before"}
"""Graph-wide parameters (field selection, cursor paging) the SDK leaves out of param_types."""

_ID = re.compile(r"\{\{[^}]*\}\}")
Calls = dict[str, list[Callable[[], FacebookRequest]]]

META_CALLS: Calls = {
	"listAdAccounts": [lambda: User("me").get_ad_accounts(pending=True)],
	"getObject": [lambda: Campaign("42").api_get(pending=True)],
	"listCampaigns": [lambda: AdAccount("act_42").get_campaigns(pending=True)],
	"createCampaign": [lambda: AdAccount("act_42").create_campaign(pending=True)],
	"updateObject": [
		lambda: Campaign("42").api_update(pending=True),
		lambda: AdSet("42").api_update(pending=True),
		lambda: Ad("42").api_update(pending=True),
	],
	"deleteObject": [lambda: Campaign("42").api_delete(pending=True)],
	"listAdSets": [lambda: AdAccount("act_42").get_ad_sets(pending=True)],
	"createAdSet": [lambda: AdAccount("act_42").create_ad_set(pending=True)],
	"listAds": [lambda: AdAccount("act_42").get_ads(pending=True)],
	"createAd": [lambda: AdAccount("act_42").create_ad(pending=True)],
	"listCreatives": [lambda: AdAccount("act_42").get_ad_creatives(pending=True)],
	"uploadAdImage": [lambda: AdAccount("act_42").create_ad_image(pending=True)],
	"createCreative": [lambda: AdAccount("act_42").create_ad_creative(pending=True)],
	"getInsights": [
		lambda: AdAccount("act_42").get_insights(pending=True),
		lambda: Campaign("42").get_insights(pending=True),
	],
	"startInsightsJob": [lambda: AdAccount("act_42").get_insights_async(pending=True)],
	"getInsightsJob": [lambda: AdReportRun("42").api_get(pending=True)],
	"getInsightsJobResults": [lambda: AdReportRun("42").get_insights(pending=True)],
	"searchTargeting": [lambda: AdAccount("act_42").get_targeting_search(pending=True)],
	"listPages": [lambda: User("me").get_accounts(pending=True)],
	"listPromotePages": [lambda: AdAccount("act_42").get_promote_pages(pending=True)],
	"copyCampaign": [lambda: Campaign("42").create_copy(pending=True)],
	"copyAdSet": [lambda: AdSet("42").create_copy(pending=True)],
	"getAdPreview": [lambda: Ad("42").get_previews(pending=True)],
	"createCreativeFromPost": [lambda: AdAccount("act_42").create_ad_creative(pending=True)],
	"createCustomAudience": [lambda: AdAccount("act_42").create_custom_audience(pending=True)],
	"listCustomAudiences": [lambda: AdAccount("act_42").get_custom_audiences(pending=True)],
	"addCustomAudienceUsers": [lambda: CustomAudience("42").create_user(pending=True)],
}
COMPOSED_REQUESTS = {"addCustomAudienceUsers": _meta_audiences.ADD_USERS_REQUEST}
"""Tools that hash before sending (FunctionTools): the declarative request each one sends."""
FILE_PARAMS = {
	"uploadAdImage": {name for name, kind in AdImage._field_types.items() if kind == "file"}
}
"""Upload fields: the SDK types them on the object (AdImage.filename is a 'file'), not the edge."""
META_UNCHECKABLE = {"searchLocations"}
"""Tools the SDK has no FacebookRequest for (checked below against what the SDK does say)."""


def ours_path(tool: HttpTool, node: str) -> str:
	"""The tool's endpoint with its templated id written as the SDK request's node id."""
	return _ID.sub(node.removeprefix("act_") if "act_{{" in tool.endpoint else node, tool.endpoint)


def sdk_path(request: FacebookRequest) -> str:
	node, edge = request._path
	return f"/{node}" + (f"/{edge}" if edge else "")


def param_names(tool: HttpTool) -> set[str]:
	names = set(tool.query_params) | set(tool.files)
	if isinstance(tool.body, dict):
		names |= set(tool.body)
	return names


def check_graph(integration: Integration, calls: Calls, skip: set[str] = frozenset()) -> int:  # type: ignore[assignment]
	"""Assert each tool is its SDK request (method, path, parameter names); return checks made."""
	checked = 0
	for tool in integration.tools:
		if isinstance(tool, FunctionTool):
			tool = COMPOSED_REQUESTS[tool.handle]
		assert isinstance(tool, HttpTool)
		if tool.handle in skip:
			continue
		assert tool.handle in calls, f"{tool.handle}: no SDK call to compare with"
		allowed: set[str] = set()
		for make in calls[tool.handle]:
			request = make()
			assert tool.method == request._method, f"{tool.handle}: {request._method} in the SDK"
			assert ours_path(tool, request._path[0]) == sdk_path(request), (
				tool.handle,
				sdk_path(request),
			)
			allowed |= set(request._param_checker._type_check_info)
		allowed |= FILE_PARAMS.get(tool.handle, set())
		unknown = param_names(tool) - allowed - PAGING
		assert not unknown, f"{tool.handle}: parameters unknown to the SDK: {unknown}"
		checked += 1
	return checked


def default_fields(tool: HttpTool) -> set[str]:
	"""The comma-separated fields a tool asks for when the model gives none."""
	template = tool.query_params.get("fields", "")
	if "{% else %}" in template:
		template = template.split("{% else %}")[1].split("{% endif %}")[0]
	if "{{" in template or "{%" in template:
		return set()
	return {f.split("{")[0] for f in re.sub(r"\{[^{}]*\}", "", template).split(",") if f}


def _values(cls: Any) -> set[str]:
	return {v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, str)}


def _tools(integration: Integration) -> dict[str, HttpTool]:
	"""Each tool's request by handle: an HttpTool, or the request a FunctionTool sends."""
	return {
		t.handle: COMPOSED_REQUESTS[t.handle] if isinstance(t, FunctionTool) else t
		for t in integration.tools
		if isinstance(t, HttpTool) or t.handle in COMPOSED_REQUESTS
	}


# Meta Ads ---------------------------------------------------------------------------------------


def test_graph_version_is_the_sdk_version() -> None:
	"""Meta Ads, Instagram and WhatsApp call the Graph version the SDK targets, from one
	constant."""
	assert apiconfig.ads_api_config["API_VERSION"] == _graph.GRAPH_VERSION
	assert meta_ads.INTEGRATION.api_setup.base_url == _graph.GRAPH_URL
	assert instagram.INTEGRATION.api_setup.base_url == _graph.GRAPH_URL
	assert whatsapp.INTEGRATION.api_setup.base_url == _graph.GRAPH_URL
	assert whatsapp.INTEGRATION.api_version == f"Graph API {_graph.GRAPH_VERSION}"
	assert meta_ads.INTEGRATION.api_version == _graph.GRAPH_VERSION


def test_meta_ads_tools_are_sdk_requests() -> None:
	"""Every Meta Ads tool but one has the method, path and parameter names of its SDK call."""
	tools = {t.handle for t in meta_ads.INTEGRATION.tools}
	assert set(META_CALLS) | META_UNCHECKABLE == tools
	assert check_graph(meta_ads.INTEGRATION, META_CALLS, META_UNCHECKABLE) == len(META_CALLS)


def test_search_locations_is_the_sdk_targeting_search() -> None:
	"""searchLocations calls the path and type of TargetingSearch.search (its params are in DOCS)."""
	tool = _tools(meta_ads.INTEGRATION)["searchLocations"]
	source = (TargetingSearch.search.__code__.co_consts, TargetingSearch.search.__code__.co_names)
	assert "search" in source[0]  # "/".join((GRAPH, API_VERSION, 'search'))
	assert (tool.method, tool.endpoint) == ("GET", "/search")
	assert tool.query_params["type"] == TargetingSearch.TargetingSearchTypes.geolocation
	assert "`searchLocations`" in meta_ads.DOCS


def test_meta_ads_enums_are_sdk_values() -> None:
	"""Objectives, statuses, bid strategies, billing events and insight enums are the SDK's values."""
	tools = _tools(meta_ads.INTEGRATION)
	props = tools["createCampaign"].input_schema["properties"]
	assert set(props["objective"]["enum"]) <= _values(Campaign.Objective)
	assert set(props["status"]["enum"]) <= _values(Campaign.Status)
	assert set(props["bid_strategy"]["enum"]) <= _values(Campaign.BidStrategy)
	categories = props["special_ad_categories"]["items"]["enum"]
	assert set(categories) <= _values(Campaign.SpecialAdCategories)
	adset = tools["createAdSet"].input_schema["properties"]
	assert set(adset["billing_event"]["enum"]) <= _values(AdSet.BillingEvent)
	assert set(adset["bid_strategy"]["enum"]) <= _values(AdSet.BidStrategy)
	update = tools["updateObject"].input_schema["properties"]["status"]["enum"]
	assert set(update) <= _values(Campaign.Status) & _values(Ad.Status)
	effective = tools["listCampaigns"].input_schema["properties"]["effective_status"]["items"]
	assert set(effective["enum"]) <= _values(Campaign.EffectiveStatus) | _values(Ad.EffectiveStatus)
	insights = tools["getInsights"].input_schema["properties"]
	assert set(insights["level"]["enum"]) <= _values(AdsInsights.Level)
	assert set(insights["date_preset"]["enum"]) <= _values(AdsInsights.DatePreset)
	search = tools["searchTargeting"].input_schema["properties"]["limit_type"]["enum"]
	assert set(search) <= _values(AdAccountTargetingUnified.LimitType)


@pytest.mark.parametrize(
	("handle", "cls"),
	[
		("listCampaigns", Campaign),
		("listAdSets", AdSet),
		("listAds", Ad),
		("listCreatives", AdCreative),
		("getInsights", AdsInsights),
		("listAdAccounts", AdAccount),
		("listPages", Page),
		("listPromotePages", Page),
		("listCustomAudiences", CustomAudience),
	],
)
def test_meta_ads_default_fields_exist(handle: str, cls: Any) -> None:
	"""The default `fields` each list tool asks for are fields of the SDK object."""
	fields = default_fields(_tools(meta_ads.INTEGRATION)[handle])
	assert fields
	assert fields <= _values(cls.Field), handle


def test_meta_ads_inputs_are_the_vendor_parameter_names() -> None:
	"""Each input a tool sends under a name is sent under its own name (no renamed parameters)."""
	for tool in _tools(meta_ads.INTEGRATION).values():
		entries = {**tool.query_params, **(tool.body or {}), **tool.files}
		for name, template in entries.items():
			used = set(re.findall(r"input(?:\.(\w+)|\[\"(\w+)\"\])", str(template)))
			used = {a or b for a, b in used}
			assert used <= {name}, f"{tool.handle}: {name} is sent from {used}"


def test_create_campaign_can_leave_budgets_to_ad_sets() -> None:
	"""createCampaign sends is_adset_budget_sharing_enabled, an SDK bool since Graph v24."""
	tool = _tools(meta_ads.INTEGRATION)["createCampaign"]
	request = AdAccount("act_42").create_campaign(pending=True)
	assert request._param_checker._type_check_info["is_adset_budget_sharing_enabled"] == "bool"
	assert tool.body["is_adset_budget_sharing_enabled"] == (
		"{{ input.is_adset_budget_sharing_enabled }}"
	)
	prop = tool.input_schema["properties"]["is_adset_budget_sharing_enabled"]
	assert prop["type"] == "boolean"


def test_new_objects_start_paused() -> None:
	"""Campaigns, ad sets and ads are created PAUSED unless the agent says otherwise."""
	tools = _tools(meta_ads.INTEGRATION)
	for handle in ("createCampaign", "createAdSet", "createAd"):
		assert tools[handle].body["status"] == "{{ input.status | default: 'PAUSED' }}"


def test_bodies_are_json_as_the_official_node_sdk_sends_them() -> None:
	"""Meta's Node.js SDK posts Graph parameters as one JSON body (axios data), as the tools do."""
	http = npm_member("fb-node", "src/http.js")
	assert "json: !useMultipartFormData" in http
	assert "options.data = data;" in http
	api = npm_member("fb-node", "src/api.js")
	assert re.search(r"if \(method === 'POST' \|\| method === 'PUT'\) \{\s*data = params;", api)
	for tool in _tools(meta_ads.INTEGRATION).values():
		if tool.method == "POST":
			fmt = tool.request_format or meta_ads.INTEGRATION.api_setup.request_format
			# createCampaign's format is JSON after a check of the budget choice.
			fmt = "json" if fmt == meta_ads.CAMPAIGN_FORMAT else fmt
			assert fmt == ("multipart" if tool.files else "json"), tool.handle
	assert meta_ads.INTEGRATION.encoders[meta_ads.CAMPAIGN_FORMAT] is meta_ads.campaign_body


# Negative checks -----------------------------------------------------------------------------

_BREAKS: dict[str, Callable[[HttpTool], dict[str, Any]]] = {
	"method": lambda t: {"method": "PUT" if t.method != "PUT" else "PATCH"},
	"path": lambda t: {"endpoint": t.endpoint + "/nonexistent"},
	"query": lambda t: {"query_params": {**t.query_params, "nonexistent_param": "1"}},
	"body": lambda t: {"body": {**(t.body or {}), "nonexistent_field": "1"}},
}


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize("handle", ["createCampaign", "listCampaigns", "searchTargeting"])
def test_a_wrong_meta_ads_request_fails_the_check(handle: str, broken: str) -> None:
	"""A wrong method, path, query name or body name of a Meta Ads tool fails its SDK check."""
	with pytest.raises(AssertionError):
		check_graph(
			with_tool(meta_ads.INTEGRATION, handle, _BREAKS[broken]), META_CALLS, META_UNCHECKABLE
		)


# Instagram --------------------------------------------------------------------------------------

IG_CALLS: Calls = {
	"getAccount": [lambda: IGUser("42").api_get(pending=True)],
	"listMedia": [lambda: IGUser("42").get_media(pending=True)],
	"getMedia": [lambda: IGMedia("42").api_get(pending=True)],
	"createMediaContainer": [lambda: IGUser("42").create_media(pending=True)],
	"getContainerStatus": [lambda: ShadowIGMediaBuilder("42").api_get(pending=True)],
	"publishMedia": [lambda: IGUser("42").create_media_publish(pending=True)],
	"getPublishingLimit": [lambda: IGUser("42").get_content_publishing_limit(pending=True)],
	"listComments": [lambda: IGMedia("42").get_comments(pending=True)],
	"commentOnMedia": [lambda: IGMedia("42").create_comment(pending=True)],
	"replyToComment": [lambda: IGComment("42").create_reply(pending=True)],
	"hideComment": [lambda: IGComment("42").api_update(pending=True)],
	"deleteComment": [lambda: IGComment("42").api_delete(pending=True)],
	"getMediaInsights": [lambda: IGMedia("42").get_insights(pending=True)],
	"getAccountInsights": [lambda: IGUser("42").get_insights(pending=True)],
	"listAccounts": [lambda: User("me").get_accounts(pending=True)],
	"listStories": [lambda: IGUser("42").get_stories(pending=True)],
	"getHashtagTopMedia": [lambda: ShadowIGHashtag("42").get_top_media(pending=True)],
	"getHashtagRecentMedia": [lambda: ShadowIGHashtag("42").get_recent_media(pending=True)],
	# Facebook Login: direct messages are the linked Page's edges (Messenger Platform).
	"listConversations": [lambda: Page("42").get_conversations(pending=True)],
	"listMessages": [lambda: UnifiedThread("42").get_messages(pending=True)],
	"sendMessage": [lambda: Page("42").create_message(pending=True)],
}
IG_UNCHECKABLE = {"searchHashtag"}
# The SDK types these edges' results as AbstractCrudObject; their object classes list the fields.
IG_FIELD_CLASSES: dict[str, Any] = {"listConversations": UnifiedThread}
IG_FIELDS_UNCHECKABLE = {"listMessages"}
"""The SDK has no class for a conversation's messages (listed in the integration's docs)."""


def _known_fields(cls: Any) -> set[str]:
	"""A class's fields and, since Graph field expansion may name them, its edges."""
	names = _values(cls.Field)
	for attr in vars(cls).values():
		endpoint = getattr(attr, "__code__", None)
		if endpoint is not None:
			names |= {
				c.strip("/") for c in endpoint.co_consts if isinstance(c, str) and c[:1] == "/"
			}
	return names


def test_instagram_tools_are_sdk_requests() -> None:
	"""Every Instagram tool but searchHashtag has the method, path and params of its SDK call."""
	tools = _tools(instagram.INTEGRATION)
	assert set(IG_CALLS) | IG_UNCHECKABLE == set(tools)
	assert check_graph(instagram.INTEGRATION, IG_CALLS, IG_UNCHECKABLE) == len(IG_CALLS)


@pytest.mark.parametrize("handle", sorted(set(IG_CALLS) - IG_FIELDS_UNCHECKABLE))
def test_instagram_fields_are_sdk_fields(handle: str) -> None:
	"""The fields each Instagram tool asks for are fields (or edges) of the SDK's result class."""
	tool = _tools(instagram.INTEGRATION)[handle]
	asked = default_fields(tool)
	if not asked:
		return
	request = IG_CALLS[handle][0]()
	cls = IG_FIELD_CLASSES.get(handle) or request._target_class
	if cls is AbstractCrudObject or cls is None:
		pytest.fail(f"{handle}: the SDK gives no result class; add one to IG_FIELD_CLASSES")
	assert asked <= _known_fields(cls), f"{handle}: {asked - _known_fields(cls)}"


def test_instagram_account_id_comes_from_the_token_or_the_call() -> None:
	"""listAccounts reads the linked account ids; account tools take ig_user_id, else the config."""
	tools = _tools(instagram.INTEGRATION)
	accounts = tools["listAccounts"]
	assert "instagram_business_account" in default_fields(accounts)
	assert "instagram_business_account" in _values(Page.Field)
	for tool in tools.values():
		if tool.endpoint.startswith("/{{ input.ig_user_id"):
			assert tool.endpoint.split("}}")[0] + "}}" == (
				"/{{ input.ig_user_id | default: config.igUserId }}"
			)
			assert "ig_user_id" in tool.input_schema["properties"], tool.handle
			assert "ig_user_id" not in tool.input_schema.get("required", []), tool.handle


def test_instagram_conversations_use_the_sdk_platform_value() -> None:
	"""listConversations asks for the instagram platform, an SDK enum value of the edge."""
	tool = _tools(instagram.INTEGRATION)["listConversations"]
	request = IG_CALLS["listConversations"][0]()
	enum = request._param_checker._enum_data["platform_enum"]  # Page's: a class __dict__
	platforms = {v.lower() for v in enum if isinstance(v, str) and not v.startswith("__")}
	assert "instagram" in platforms
	assert tool.query_params["platform"] in platforms


@pytest.mark.parametrize("handle", ["listConversations", "sendMessage"])
def test_instagram_direct_messages_go_through_the_linked_page(handle: str) -> None:
	"""The credential is a Facebook Login token (graph.facebook.com), so direct messages use the
	Page's /conversations and /messages (Page access token), never the IG user's edges (the
	Instagram Login form); the tool says so to the model."""
	tool = _tools(instagram.INTEGRATION)[handle]
	edge = "messages" if handle == "sendMessage" else "conversations"
	assert tool.endpoint == f"/{{{{ input.page_id | default: config.pageId }}}}/{edge}"
	assert "ig_user_id" not in tool.input_schema["properties"]
	assert tool.input_schema["properties"]["page_id"]["pattern"] == "^[0-9]+$"
	assert "Facebook Login" in tool.description and "Page" in tool.description
	assert instagram.INTEGRATION.api_setup.base_url.startswith("https://graph.facebook.com/")


@pytest.mark.parametrize("broken", sorted(_BREAKS))
@pytest.mark.parametrize("handle", ["createMediaContainer", "listMedia", "sendMessage"])
def test_a_wrong_instagram_request_fails_the_check(handle: str, broken: str) -> None:
	"""A wrong method, path, query name or body name of an Instagram tool fails its SDK check."""
	with pytest.raises(AssertionError):
		check_graph(
			with_tool(instagram.INTEGRATION, handle, _BREAKS[broken]), IG_CALLS, IG_UNCHECKABLE
		)


# Input schemas carry what the SDK declares ----------------------------------------------------

ENUMS_NOT_CARRIED = {
	("getInsights", "breakdowns"): "102 SDK values; the description names the common ones",
	("startInsightsJob", "breakdowns"): "102 SDK values; the description names the common ones",
	# The SDK gives IGUser.get_insights the enums of InstagramInsightsResult (media metrics),
	# which lack the account metrics (accounts_engaged, follower_count) and breakdowns
	# (media_product_type, contact_button_type) of the IG User insights docs.
	("getAccountInsights", "metric"): "the SDK's enum is the media metrics'",
	("getAccountInsights", "period"): "the SDK's enum is the media periods'",
	("getAccountInsights", "breakdown"): "the SDK's enum is the media breakdowns'",
}
UNIX_TIMES = {
	("listMedia", "since"): "the IG User media docs: a Unix timestamp or a strtotime() date",
	("listMedia", "until"): "the IG User media docs: a Unix timestamp or a strtotime() date",
	("getAccountInsights", "since"): "the IG User insights docs: a Unix timestamp",
	("getAccountInsights", "until"): "the IG User insights docs: a Unix timestamp",
}
"""SDK ``datetime`` parameters whose documented values are not RFC 3339 times."""


def _sdk_params(calls: Calls, handle: str) -> dict[str, tuple[str, set[str] | None]]:
	"""A tool's SDK parameters: name to (SDK type, enum values or None)."""
	out: dict[str, tuple[str, set[str] | None]] = {}
	for make in calls[handle]:
		checker = make()._param_checker
		for name, kind in checker._type_check_info.items():
			enum = kind.removeprefix("list<").removesuffix(">")
			values = checker._enum_data.get(enum)
			out[name] = (
				kind,
				None
				if values is None
				else {
					v
					for v in values
					if isinstance(v, str) and not v.startswith("facebook_business")
				},
			)
	return out


def _declared(
	integration: Integration, calls: Calls
) -> list[tuple[str, str, dict[str, Any], str, set[str] | None]]:
	"""(tool, input, its schema, SDK type, SDK enum) for every input that is an SDK parameter."""
	rows = []
	for handle, tool in _tools(integration).items():
		if handle not in calls:
			continue
		sdk = _sdk_params(calls, handle)
		for name, prop in tool.input_schema.get("properties", {}).items():
			if name in sdk:
				rows.append((handle, name, prop, *sdk[name]))
	return rows


@pytest.mark.parametrize(
	("integration", "calls"),
	[(meta_ads.INTEGRATION, META_CALLS), (instagram.INTEGRATION, IG_CALLS)],
	ids=["meta_ads", "instagram"],
)
def test_inputs_carry_the_sdk_enums(integration: Integration, calls: Calls) -> None:
	"""An input the SDK types as an enum lists allowed values, each one an SDK value."""
	checked = 0
	for handle, name, prop, _kind, values in _declared(integration, calls):
		if values is None or (handle, name) in ENUMS_NOT_CARRIED:
			continue
		ours = prop.get("enum") or prop.get("items", {}).get("enum")
		assert ours, f"{handle}.{name}: the SDK lists its values; the input has no enum"
		assert set(ours) <= values, f"{handle}.{name}: not SDK values: {set(ours) - values}"
		checked += 1
	assert checked >= (10 if integration is meta_ads.INTEGRATION else 1)


@pytest.mark.parametrize(
	("integration", "calls"),
	[(meta_ads.INTEGRATION, META_CALLS), (instagram.INTEGRATION, IG_CALLS)],
	ids=["meta_ads", "instagram"],
)
def test_inputs_carry_the_sdk_formats(integration: Integration, calls: Calls) -> None:
	"""SDK ``datetime`` parameters are date-time inputs; string ``unsigned int`` ids are digits;
	integer ``unsigned int`` inputs (budgets, spend caps) have a minimum of 0 or more."""
	checked = 0
	for handle, name, prop, kind, _values in _declared(integration, calls):
		if kind == "datetime" and (handle, name) not in UNIX_TIMES:
			assert prop.get("format") == "date-time", f"{handle}.{name}: format date-time"
			checked += 1
		if kind == "unsigned int" and prop.get("type") == "string":
			assert prop.get("pattern") == "^[0-9]+$", f"{handle}.{name}: a digits pattern"
			checked += 1
		if kind == "unsigned int" and prop.get("type") == "integer":
			assert prop.get("minimum", -1) >= 0, f"{handle}.{name}: unsigned, a minimum"
			checked += 1
	assert checked >= (5 if integration is meta_ads.INTEGRATION else 1)


def test_a_signed_budget_fails_the_format_check() -> None:
	"""An ad set budget input without its minimum (a negative budget allowed) is reported."""
	broken = with_input_schema(
		meta_ads.INTEGRATION,
		"createAdSet",
		lambda schema: schema["properties"]["daily_budget"].pop("minimum"),
	)
	with pytest.raises(AssertionError, match=r"createAdSet\.daily_budget: unsigned"):
		test_inputs_carry_the_sdk_formats(broken, META_CALLS)


def test_insights_time_range_days_are_dates() -> None:
	"""time_range is {since, until} in YYYY-MM-DD (insights docs; the SDK types it only `map`)."""
	for handle in ("getInsights", "startInsightsJob"):
		prop = _tools(meta_ads.INTEGRATION)[handle].input_schema["properties"]["time_range"]
		assert (
			AdAccount("act_42")
			.get_insights(pending=True)
			._param_checker._type_check_info["time_range"]
			== "map"
		)
		assert {k: v.get("format") for k, v in prop["properties"].items()} == {
			"since": "date",
			"until": "date",
		}


# Path parameters: the placeholders of Graph's reference pages (<IG_MEDIA_ID>, {ig-media-id}...).
PATH_NAMES = {
	"act_<AD_ACCOUNT_ID>": "ad_account_id",
	"<IG_USER_ID>": "ig_user_id",
	"<IG_MEDIA_ID>": "ig_media_id",
	"<IG_COMMENT_ID>": "ig_comment_id",
	"<IG_CONTAINER_ID>": "ig_container_id",
	"<IG_HASHTAG_ID>": "ig_hashtag_id",
	"<CONVERSATION_ID>": "conversation_id",
	"<REPORT_RUN_ID>": "report_run_id",
	"<PAGE_ID>": "page_id",
	"<CAMPAIGN_ID>": "campaign_id",
	"<AD_SET_ID>": "adset_id",
	"<AD_ID>": "ad_id",
	"<CUSTOM_AUDIENCE_ID>": "custom_audience_id",
}
NODE_PLACEHOLDERS = {
	AdAccount: "act_<AD_ACCOUNT_ID>",
	IGUser: "<IG_USER_ID>",
	IGMedia: "<IG_MEDIA_ID>",
	IGComment: "<IG_COMMENT_ID>",
	ShadowIGMediaBuilder: "<IG_CONTAINER_ID>",
	ShadowIGHashtag: "<IG_HASHTAG_ID>",
	UnifiedThread: "<CONVERSATION_ID>",
	AdReportRun: "<REPORT_RUN_ID>",
	Page: "<PAGE_ID>",
	Campaign: "<CAMPAIGN_ID>",
	AdSet: "<AD_SET_ID>",
	Ad: "<AD_ID>",
	CustomAudience: "<CUSTOM_AUDIENCE_ID>",
}
"""The node class of each call and the placeholder Graph's reference page writes for its id."""
GENERIC_NODES = {"getObject", "updateObject", "deleteObject", "getInsights", "startInsightsJob"}
"""Tools for any node (campaign, ad set, ad, account): their input is the Graph-wide object_id."""


def _node_class(make: Callable[[], FacebookRequest]) -> Any:
	"""The SDK class the call is made on (the first name the lambda's code calls)."""
	name = make.__code__.co_names[0]
	return globals()[name]


@pytest.mark.parametrize(
	("integration", "calls"),
	[(meta_ads.INTEGRATION, META_CALLS), (instagram.INTEGRATION, IG_CALLS)],
	ids=["meta_ads", "instagram"],
)
def test_path_inputs_are_named_as_graph_names_the_node(
	integration: Integration, calls: Calls
) -> None:
	"""A tool's node id input is named after the reference's placeholder for that node's id."""
	checked = 0
	for handle, tool in _tools(integration).items():
		used = re.findall(r"input\.(\w+)", tool.endpoint.split("}}")[0])
		if not used or handle not in calls:
			continue
		if handle in GENERIC_NODES:
			assert used == ["object_id"], handle
			continue
		cls = _node_class(calls[handle][0])
		assert used[0] == PATH_NAMES[NODE_PLACEHOLDERS[cls]], f"{handle}: {used[0]}"
		checked += 1
	assert checked >= 5


def test_hashtag_media_pages_hold_at_most_50() -> None:
	"""The hashtag top/recent media docs page by at most 50 (no SDK bound; pinned to the docs)."""
	tools = _tools(instagram.INTEGRATION)
	for handle in ("getHashtagTopMedia", "getHashtagRecentMedia"):
		assert tools[handle].input_schema["properties"]["limit"]["maximum"] == 50


def test_direct_message_text_holds_at_most_1000_characters() -> None:
	"""sendMessage refuses text over 1000 characters (no SDK bound; pinned to the docs).

	https://developers.facebook.com/docs/messenger-platform/instagram/features/send-message:
	"Text message must be less than 1000 characters", "Message text must be UTF-8 and be a
	1000 bytes or less".
	"""
	tool = _tools(instagram.INTEGRATION)["sendMessage"]
	text = tool.input_schema["properties"]["message"]["properties"]["text"]
	assert text["maxLength"] == 1000
	assert text["minLength"] == 1


# Inputs without an SDK parameter of their name, and why.
NOT_SDK_PARAMS = {
	(
		"uploadAdImage",
		"filename",
	): "the image file, sent as the multipart part AdImage types `file`",
	("searchLocations", "q"): "targeting search docs (no SDK parameter list)",
	("searchLocations", "location_types"): "targeting search docs (no SDK parameter list)",
	("searchLocations", "country_code"): "targeting search docs (no SDK parameter list)",
	("searchHashtag", "q"): "hashtag search docs (no SDK call)",
	("searchHashtag", "user_id"): "hashtag search docs (no SDK call)",
}


@pytest.mark.parametrize(
	("integration", "calls"),
	[(meta_ads.INTEGRATION, META_CALLS), (instagram.INTEGRATION, IG_CALLS)],
	ids=["meta_ads", "instagram"],
)
def test_every_input_is_an_sdk_parameter_a_node_id_or_paging(
	integration: Integration, calls: Calls
) -> None:
	"""No input has a name of its own: each is an SDK parameter, the path's node id, or paging."""
	nodes = set(PATH_NAMES.values()) | {"object_id"}
	for handle, tool in _tools(integration).items():
		sdk = _sdk_params(calls, handle) if handle in calls else {}
		for name in tool.input_schema.get("properties", {}):
			known = name in sdk or name in PAGING or (handle, name) in NOT_SDK_PARAMS
			if name in nodes and name not in sdk:
				# A node id (not also a parameter, as createAdSet's campaign_id) fills the path.
				known = f"input.{name}" in tool.endpoint
			assert known, f"{handle}.{name}: not an SDK parameter, node id or paging input"


# Customer list audiences: hashed as the SDK hashes -------------------------------------------

PEOPLE = [
	{
		"email": "  Ana.Lima@Example.COM ",
		"phone": "+1 (415) 555-0123",
		"firstName": " José-María ",
		"lastName": "O'Neil",
		"zip": "94043-1351",
		"country": "us",
	},
	{
		"email": "bo@example.org.",
		"phone": "+44 20 7946 0958",
		"firstName": "Bo",
		"lastName": "Li",
		"zip": "SW1A 1AA",
		"country": "GB",
	},
]


def test_audience_users_are_hashed_as_the_sdk_hashes_them() -> None:
	"""users_payload gives the schema and digests of facebook-business's format_params (is_raw,
	multi-key): the same normalization (trim, lowercase, phone digits, name letters, zip before
	the dash, two-letter country) and SHA-256, so Meta matches the same people."""
	keys = _meta_audiences.SCHEMA_KEYS
	schema = [keys[n] for n in keys]
	rows = [[person[n] for n in keys] for person in PEOPLE]
	expected = CustomAudience.format_params(schema, rows, is_raw=True)["payload"]
	assert _meta_audiences.users_payload(PEOPLE) == expected
	assert expected["schema"] == ["EMAIL", "PHONE", "FN", "LN", "ZIP", "COUNTRY"]


def test_audience_users_with_fewer_identifiers_are_hashed_as_the_sdk_hashes_them() -> None:
	"""Emails alone give a one-key schema, hashed as the SDK hashes it."""
	people = [{"email": p["email"]} for p in PEOPLE]
	expected = CustomAudience.format_params(["EMAIL"], [[p["email"]] for p in people], is_raw=True)[
		"payload"
	]
	assert _meta_audiences.users_payload(people) == expected


def test_audience_users_need_the_same_identifiers() -> None:
	"""A person with other identifiers than the first is refused with the fix, nothing hashed."""
	with pytest.raises(ToolError, match=r"users\[1\]: every person needs the same identifiers"):
		_meta_audiences.users_payload([{"email": "a@b.co"}, {"phone": "+14155550123"}])
	with pytest.raises(ToolError, match=r"users\[0\]: give at least one of"):
		_meta_audiences.users_payload([{}])
