"""Meta Ads tools checked against the official `facebook-business` SDK (endpoints, params, enums)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from facebook_business import apiconfig
from facebook_business.adobjects.ad import Ad
from facebook_business.adobjects.adaccount import AdAccount
from facebook_business.adobjects.adcreative import AdCreative
from facebook_business.adobjects.adreportrun import AdReportRun
from facebook_business.adobjects.adset import AdSet
from facebook_business.adobjects.adsinsights import AdsInsights
from facebook_business.adobjects.campaign import Campaign
from facebook_business.adobjects.user import User
from facebook_business.api import FacebookAdsApi, FacebookRequest

from openmolt_core.integrations import HttpTool
from openmolt_integrations import meta_ads

FacebookAdsApi.init(access_token="conformance-test-token")

TOOLS = {t.handle: t for t in meta_ads.INTEGRATION.tools}
PAGING = {"fields", "limit", "after"}
"""Graph-wide parameters the SDK leaves out of each edge's param_types."""

REQUESTS: dict[str, list[Callable[[], FacebookRequest]]] = {
	"listAdAccounts": [lambda: User("me").get_ad_accounts(pending=True)],
	"getObject": [lambda: Campaign("42").api_get(pending=True)],
	"listCampaigns": [lambda: AdAccount("act_1").get_campaigns(pending=True)],
	"createCampaign": [lambda: AdAccount("act_1").create_campaign(pending=True)],
	"updateObject": [
		lambda: Campaign("42").api_update(pending=True),
		lambda: AdSet("42").api_update(pending=True),
		lambda: Ad("42").api_update(pending=True),
	],
	"deleteObject": [lambda: Campaign("42").api_delete(pending=True)],
	"listAdSets": [lambda: AdAccount("act_1").get_ad_sets(pending=True)],
	"createAdSet": [lambda: AdAccount("act_1").create_ad_set(pending=True)],
	"listAds": [lambda: AdAccount("act_1").get_ads(pending=True)],
	"createAd": [lambda: AdAccount("act_1").create_ad(pending=True)],
	"listCreatives": [lambda: AdAccount("act_1").get_ad_creatives(pending=True)],
	"uploadAdImage": [lambda: AdAccount("act_1").create_ad_image(pending=True)],
	"createCreative": [lambda: AdAccount("act_1").create_ad_creative(pending=True)],
	"getInsights": [
		lambda: AdAccount("act_1").get_insights(pending=True),
		lambda: Campaign("42").get_insights(pending=True),
	],
	"startInsightsJob": [lambda: AdAccount("act_1").get_insights_async(pending=True)],
	"getInsightsJob": [lambda: AdReportRun("42").api_get(pending=True)],
	"getInsightsJobResults": [lambda: AdReportRun("42").get_insights(pending=True)],
}


def _path(tool: HttpTool, node: str) -> str:
	"""The tool's endpoint with its templated id replaced by the SDK request's node id."""
	path = tool.endpoint.replace("act_{{ input.adAccountId | remove_first: 'act_' }}", node)
	for name in ("objectId", "reportRunId"):
		path = path.replace("{{ input." + name + " }}", node)
	return path


def _sdk_path(request: FacebookRequest) -> str:
	node, edge = request._path
	return f"/{node}" + (f"/{edge}" if edge else "")


def _params(tool: HttpTool) -> set[str]:
	names = set(tool.query_params)
	if isinstance(tool.body, dict):
		names |= set(tool.body)
	return names


def test_graph_version_is_the_sdk_version() -> None:
	"""The base URL's Graph version is the SDK's API_VERSION."""
	assert meta_ads.GRAPH_VERSION == apiconfig.ads_api_config["API_VERSION"]
	assert (
		meta_ads.INTEGRATION.api_setup.base_url
		== f"https://graph.facebook.com/{meta_ads.GRAPH_VERSION}"
	)
	assert set(REQUESTS) == set(TOOLS)


@pytest.mark.parametrize("handle", list(REQUESTS))
def test_tool_matches_the_sdk_request(handle: str) -> None:
	"""Method, path and parameter names agree with the SDK's request for the same call."""
	tool = TOOLS[handle]
	allowed: set[str] = set()
	for make in REQUESTS[handle]:
		request = make()
		assert tool.method == request._method, handle
		sdk = _sdk_path(request)
		ours = _path(tool, request._path[0])
		assert ours == sdk, (handle, ours, sdk)
		allowed |= set(request._param_checker._type_check_info)
	unknown = _params(tool) - allowed - PAGING
	assert not unknown, f"{handle}: parameters unknown to the SDK: {unknown}"


def _enum(cls: Any) -> set[str]:
	return {v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, str)}


def test_enums_are_sdk_values() -> None:
	"""Objectives, statuses, bid strategies, billing events and insight enums are the SDK's values."""
	props = TOOLS["createCampaign"].input_schema["properties"]
	assert set(props["objective"]["enum"]) <= _enum(Campaign.Objective)
	assert set(props["status"]["enum"]) <= _enum(Campaign.Status)
	assert set(props["bidStrategy"]["enum"]) <= _enum(Campaign.BidStrategy)
	assert set(props["specialAdCategories"]["items"]["enum"]) <= _enum(Campaign.SpecialAdCategories)
	adset = TOOLS["createAdSet"].input_schema["properties"]
	assert set(adset["billingEvent"]["enum"]) <= _enum(AdSet.BillingEvent)
	assert set(adset["bidStrategy"]["enum"]) <= _enum(AdSet.BidStrategy)
	update = TOOLS["updateObject"].input_schema["properties"]["status"]["enum"]
	assert set(update) <= _enum(Campaign.Status) & _enum(Ad.Status)
	effective = TOOLS["listCampaigns"].input_schema["properties"]["effectiveStatus"]["items"]
	assert set(effective["enum"]) <= _enum(Campaign.EffectiveStatus) | _enum(Ad.EffectiveStatus)
	insights = TOOLS["getInsights"].input_schema["properties"]
	assert set(insights["level"]["enum"]) <= _enum(AdsInsights.Level)
	assert set(insights["datePreset"]["enum"]) <= _enum(AdsInsights.DatePreset)


@pytest.mark.parametrize(
	("handle", "cls"),
	[
		("listCampaigns", Campaign),
		("listAdSets", AdSet),
		("listAds", Ad),
		("listCreatives", AdCreative),
		("getInsights", AdsInsights),
		("listAdAccounts", AdAccount),
	],
)
def test_default_fields_exist(handle: str, cls: Any) -> None:
	"""The default `fields` each list tool asks for are fields of the SDK object."""
	template = TOOLS[handle].query_params["fields"]
	default = template.split("{% else %}")[1].split("{% endif %}")[0]
	assert default
	assert set(default.split(",")) <= _enum(cls.Field), handle


def test_new_objects_start_paused() -> None:
	"""Campaigns, ad sets and ads are created PAUSED unless the agent says otherwise."""
	for handle in ("createCampaign", "createAdSet", "createAd"):
		assert TOOLS[handle].body["status"] == "{{ input.status | default: 'PAUSED' }}"
