"""Gemini (Nano Banana, Veo) and Google Ads tools conform to Google's GAPIC packages and protos."""

from __future__ import annotations

import re

import pytest
from _discovery import (
	ProtoIndex,
	camel_to_snake,
	http_rule_problems,
	package_file,
	proto_http_rules,
	rest_rules,
	sdk_model_fields,
)

from openmolt_core.integrations import HttpTool
from openmolt_integrations import google_ads, nano_banana, veo

GL = "google-ai-generativelanguage"
GL_PKG = "google/ai/generativelanguage_v1beta"
GL_TYPES = "google.ai.generativelanguage_v1beta.types"


def _gl_rules(service: str) -> set[tuple[str, str]]:
	return rest_rules(GL, f"{GL_PKG}/services/{service}/transports/rest_base.py")


def _genai_image_config() -> set[str]:
	return sdk_model_fields("google-genai", "google/genai/types.py", "ImageConfig")


GEMINI = ProtoIndex(GL, extra={"ImageConfig": _genai_image_config()})

# handle -> (service, http rule, request message module, request message, body field)
NANO_BANANA = {
	"generateImage": (
		"generative_service",
		("POST", "/v1beta/{model=models/*}:generateContent"),
		"generative_service",
		"GenerateContentRequest",
	),
	"editImage": (
		"generative_service",
		("POST", "/v1beta/{model=models/*}:generateContent"),
		"generative_service",
		"GenerateContentRequest",
	),
	"uploadFile": ("file_service", ("POST", "/v1beta/files"), "file_service", "CreateFileRequest"),
	"getFile": (
		"file_service",
		("GET", "/v1beta/{name=files/*}"),
		"file_service",
		"GetFileRequest",
	),
	"deleteFile": (
		"file_service",
		("DELETE", "/v1beta/{name=files/*}"),
		"file_service",
		"DeleteFileRequest",
	),
	"listModels": (
		"model_service",
		("GET", "/v1beta/models"),
		"model_service",
		"ListModelsRequest",
	),
}
VEO = {
	"generateVideo": (
		"prediction_service",
		("POST", "/v1beta/{model=models/*}:predictLongRunning"),
		"prediction_service",
		"PredictLongRunningRequest",
	),
	"getOperation": (
		"prediction_service",
		("GET", "/v1beta/{name=models/*/operations/*}"),
		None,
		None,
	),
	"listOperations": (
		"prediction_service",
		("GET", "/v1beta/{name=models/*}/operations"),
		None,
		None,
	),
	"downloadVideo": (
		"file_service",
		("GET", "/v1beta/{name=files/*}:download"),
		"file_service",
		"DownloadFileRequest",
	),
	"listModels": (
		"model_service",
		("GET", "/v1beta/models"),
		"model_service",
		"ListModelsRequest",
	),
}


@pytest.mark.parametrize(
	("integration", "mapping"),
	[(nano_banana.INTEGRATION, NANO_BANANA), (veo.INTEGRATION, VEO)],
	ids=["nanoBanana", "veo"],
)
def test_every_gemini_tool_is_mapped(integration, mapping) -> None:
	"""Each Gemini tool names the REST rule it calls."""
	assert {t.handle for t in integration.tools} == set(mapping)


GEMINI_CASES = [
	pytest.param(integration, tool.handle, mapping[tool.handle], id=f"{iid}.{tool.handle}")
	for iid, integration, mapping in [
		("nanoBanana", nano_banana.INTEGRATION, NANO_BANANA),
		("veo", veo.INTEGRATION, VEO),
	]
	for tool in integration.tools
]


@pytest.mark.parametrize(("integration", "handle", "target"), GEMINI_CASES)
def test_gemini_tool_conforms_to_rest_rules(integration, handle: str, target) -> None:
	"""Method, path and request fields match google-ai-generativelanguage's REST transport."""
	service, rule, module, message = target
	tool = next(t for t in integration.tools if t.handle == handle)
	request = (GEMINI, f"{GL_TYPES}.{module}", message) if message else None
	assert (
		http_rule_problems(tool, integration, rule, rules=_gl_rules(service), request=request) == []
	)


def test_image_response_files_path_exists() -> None:
	"""The inline image path saved as files is a real path of GenerateContentResponse."""
	for tool in nano_banana.TOOLS:
		for path in tool.response_files:
			assert (
				GEMINI.path_problems(
					path, f"{GL_TYPES}.generative_service", "GenerateContentResponse"
				)
				== []
			)
			assert path.endswith("inlineData")


def _veo_names() -> tuple[set[str], set[str]]:
	text = package_file("google-genai", "google/genai/models.py").read_text(encoding="utf-8")
	instance = set(re.findall(r"\['instances\[0\]', '(\w+)'\]", text))
	parameters = set(re.findall(r"\['parameters', '(\w+)'\]", text))
	return instance, parameters


def test_veo_instance_and_parameter_names_are_the_sdks() -> None:
	"""Veo's instances[0] and parameters keys are ones google-genai sends to predictLongRunning."""
	instance, parameters = _veo_names()
	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	assert set(tool.body) == {"instances", "parameters"}
	assert set(tool.body["instances"][0]) <= instance
	assert set(tool.body["parameters"]) <= parameters
	assert {"prompt", "video"} <= instance and "durationSeconds" in parameters
	text = package_file("google-genai", "google/genai/models.py").read_text(encoding="utf-8")
	image = text[text.index("def _Image_to_vertex(") :][:1200]
	for frame in ("image", "lastFrame"):
		assert set(tool.body["instances"][0][frame]) == {"bytesBase64Encoded", "mimeType"}
		assert "['bytesBase64Encoded']" in image and "['mimeType']" in image


def test_veo_output_schema_matches_the_operation_converter() -> None:
	"""The operation's response path the tools document is the one google-genai reads."""
	text = package_file("google-genai", "google/genai/_operations_converters.py").read_text(
		encoding="utf-8"
	)
	assert "['response', 'generateVideoResponse']" in text and "['generatedSamples']" in text
	tool = next(t for t in veo.TOOLS if t.handle == "getOperation")
	response = tool.output_schema["properties"]["response"]["properties"]
	assert "generatedSamples" in response["generateVideoResponse"]["properties"]


def test_default_models_are_known_to_google_genai() -> None:
	"""The default model ids appear in google-genai (model list or its Veo tests)."""
	genai = package_file(
		"google-genai", "google/genai/_gaos/types/interactions/model.py"
	).read_text(encoding="utf-8")
	assert f'"{nano_banana.DEFAULT_MODEL}"' in genai
	veo_tests = package_file(
		"google-genai", "google/genai/tests/models/test_generate_videos.py"
	).read_text(encoding="utf-8")
	assert f'"{veo.DEFAULT_MODEL}"' in veo_tests


# Google Ads -----------------------------------------------------------------------------------

ADS = "google-ads"
V = google_ads.API_VERSION
ADS_SERVICES = f"google/ads/googleads/{V}/services/services"
ADS_TYPES = f"google.ads.googleads.{V}.services.types"
INDEX = ProtoIndex(ADS)
PROTO_VERSION = "v25"
"""The newest Google Ads version in google-proto-files 6.0.1; its HTTP rules are the v26 ones."""

# handle -> (service, rpc, types module). The request message and the google.api.http rule come
# from the googleapis protos (google-proto-files); the RPC and the message's fields from the
# google-ads package, which ships the v26 gRPC stubs and proto-plus types but no HTTP rules.
ADS_RPCS = {
	"listAccessibleCustomers": ("CustomerService", "ListAccessibleCustomers", "customer_service"),
	"search": ("GoogleAdsService", "Search", "google_ads_service"),
	"searchStream": ("GoogleAdsService", "SearchStream", "google_ads_service"),
	"mutate": ("GoogleAdsService", "Mutate", "google_ads_service"),
	"setCampaignStatus": ("CampaignService", "MutateCampaigns", "campaign_service"),
	"mutateCampaigns": ("CampaignService", "MutateCampaigns", "campaign_service"),
	"mutateCampaignBudgets": (
		"CampaignBudgetService",
		"MutateCampaignBudgets",
		"campaign_budget_service",
	),
	"mutateAdGroups": ("AdGroupService", "MutateAdGroups", "ad_group_service"),
	"mutateAdGroupAds": ("AdGroupAdService", "MutateAdGroupAds", "ad_group_ad_service"),
	"mutateAdGroupCriteria": (
		"AdGroupCriterionService",
		"MutateAdGroupCriteria",
		"ad_group_criterion_service",
	),
	"generateKeywordIdeas": (
		"KeywordPlanIdeaService",
		"GenerateKeywordIdeas",
		"keyword_plan_idea_service",
	),
}


def _snake(name: str) -> str:
	return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _ads_rule(protos, service: str, rpc: str) -> tuple[str, tuple[str, str], str]:
	"""(request message, (METHOD, v26 uri), body) of an RPC, from the googleapis protos."""
	text = protos(f"google/ads/googleads/{PROTO_VERSION}/services/{_snake(service)}.proto")
	rules = proto_http_rules(text)
	assert rpc in rules, f"{service}.{rpc} has no google.api.http rule"
	message, method, uri, body = rules[rpc]
	assert uri.startswith(f"/{PROTO_VERSION}/")
	return message, (method, f"/{V}/" + uri.removeprefix(f"/{PROTO_VERSION}/")), body or "*"


def _ads_tools(handle: str) -> list[HttpTool]:
	"""The declarative request(s) of a tool: generateKeywordIdeas has one per seed."""
	if handle == "generateKeywordIdeas":
		return list(google_ads.KEYWORD_IDEAS_REQUESTS.values())
	(tool,) = [t for t in google_ads.TOOLS if t.handle == handle]
	assert isinstance(tool, HttpTool)
	return [tool]


def _ads_problems(tool: HttpTool, handle: str, protos) -> list[str]:
	service, rpc, module = ADS_RPCS[handle]
	message, rule, body = _ads_rule(protos, service, rpc)
	request = (INDEX, f"{ADS_TYPES}.{module}", message)
	return http_rule_problems(tool, google_ads.INTEGRATION, rule, request=request, body_field=body)


def test_every_ads_tool_is_mapped() -> None:
	"""Each Google Ads tool names its RPC."""
	assert {t.handle for t in google_ads.TOOLS} == set(ADS_RPCS)


def test_ads_version_is_supported_by_the_client_library() -> None:
	"""The targeted version is one the official google-ads library supports."""
	text = package_file(ADS, "google/ads/googleads/client.py").read_text(encoding="utf-8")
	versions = re.search(r"_VALID_API_VERSIONS = \[([^\]]*)\]", text)
	assert versions is not None and f'"{V}"' in versions.group(1)


def test_the_protos_are_the_newest_google_ads_version_they_ship(googleapis_protos) -> None:
	"""PROTO_VERSION is the newest Google Ads version in google-proto-files (bump both together)."""
	found = {
		int(m.group(1))
		for name in googleapis_protos.names
		if (m := re.match(r"package/google/ads/googleads/v(\d+)/services/", name))
	}
	assert f"v{max(found)}" == PROTO_VERSION
	assert int(PROTO_VERSION[1:]) <= int(V[1:])


@pytest.mark.parametrize("handle", list(ADS_RPCS))
def test_ads_tool_conforms(handle: str, googleapis_protos) -> None:
	"""The RPC exists in google-ads; method, path and body fields match its proto rule and request."""
	service, rpc, _ = ADS_RPCS[handle]
	grpc = package_file(ADS, f"{ADS_SERVICES}/{_snake(service)}/transports/grpc.py").read_text(
		encoding="utf-8"
	)
	assert f'"/google.ads.googleads.{V}.services.{service}/{rpc}"' in grpc
	for tool in _ads_tools(handle):
		assert _ads_problems(tool, handle, googleapis_protos) == []


def test_ads_checker_catches_a_wrong_field(googleapis_protos) -> None:
	"""A body field the request message lacks is reported."""
	(tool,) = _ads_tools("search")
	bad = tool.model_copy(update={"body": {"query": "x", "pageSize": 5, "sortOrder": "x"}})
	assert _ads_problems(bad, "search", googleapis_protos) == [
		"body.sortOrder is not a field of SearchGoogleAdsRequest"
	]


def test_ads_checker_catches_a_wrong_nested_field_path_and_method(googleapis_protos) -> None:
	"""A seed field in the wrong seed message, a wrong path and a wrong method are reported."""
	tool = google_ads.KEYWORD_IDEAS_REQUESTS[("keywords",)]
	nested = tool.model_copy(update={"body": {"keywordSeed": {"url": "{{ input.url }}"}}})
	assert _ads_problems(nested, "generateKeywordIdeas", googleapis_protos) == [
		"body.keywordSeed.url is not a field of KeywordSeed"
	]
	path = tool.model_copy(update={"endpoint": tool.endpoint + "/ideas"})
	assert any(
		"does not match" in p
		for p in _ads_problems(path, "generateKeywordIdeas", googleapis_protos)
	)
	get = tool.model_copy(update={"method": "GET"})
	assert "method GET but the reference says POST" in _ads_problems(
		get, "generateKeywordIdeas", googleapis_protos
	)


def test_each_keyword_idea_seed_is_a_branch_of_the_seed_oneof() -> None:
	"""keywordSeed, urlSeed, keywordAndUrlSeed and siteSeed are the request's seed oneof."""
	text = package_file(
		ADS, f"google/ads/googleads/{V}/services/types/keyword_plan_idea_service.py"
	).read_text(encoding="utf-8")
	oneof = set(
		re.findall(r'^    (\w+): "?[\w.]+"? = proto\.Field\([^)]*?oneof="seed"', text, re.M | re.S)
	)
	seeds = {
		camel_to_snake(next(k for k in t.body if k.endswith("Seed")))
		for t in google_ads.KEYWORD_IDEAS_REQUESTS.values()
	}
	assert seeds == oneof == {"keyword_and_url_seed", "keyword_seed", "url_seed", "site_seed"}


def test_ads_headers_carry_developer_token_and_login_customer() -> None:
	"""developer-token and login-customer-id are sent with every request."""
	headers = google_ads.INTEGRATION.api_setup.headers
	assert headers["developer-token"] == "{{ config.developerToken }}"
	assert "config.loginCustomerId" in headers["login-customer-id"]
