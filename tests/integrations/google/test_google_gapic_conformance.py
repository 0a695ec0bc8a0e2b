"""Gemini media (Nano Banana, Veo) and Google Ads tools conform to Google's packages and protos.

References: google-ai-generativelanguage (REST rules and request messages), google-genai (the
Interactions API client and its pydantic types; ImageConfig), google-ads (gRPC stubs and
proto-plus messages) and google-proto-files (the googleapis protos with their HTTP rules).
"""

from __future__ import annotations

import json
import re
from importlib import import_module

import pytest
from _discovery import (
	ProtoIndex,
	camel_to_snake,
	http_rule_problems,
	model_candidates,
	package_file,
	proto_http_rules,
	pydantic_problems,
	rest_rules,
	sdk_model_fields,
)

from openmolt_core.integrations import HttpTool
from openmolt_integrations import google_ads, nano_banana, veo

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = pytest.mark.xdist_group("sdk-types")

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
	"uploadFile": ("file_service", ("POST", "/v1beta/files"), "file_service", "CreateFileRequest"),
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
"""Veo's tools on google.ai.generativelanguage REST rules; the others are Interactions API calls."""

# handle -> (METHOD, path in google-genai's Interactions client, request model or None)
VEO_INTERACTIONS = {
	"generateVideo": ("POST", "/{api_version}/interactions", "CreateModelInteraction"),
	"getInteraction": ("GET", "/{api_version}/interactions/{interactionsId}", None),
}
GAOS = "google/genai/_gaos"
GAOS_TYPES = "google.genai._gaos.types.interactions"


def _interaction_paths() -> set[tuple[str, str]]:
	"""(METHOD, path) of every call google-genai's Interactions client makes."""
	text = package_file("google-genai", f"{GAOS}/interactions.py").read_text(encoding="utf-8")
	pairs = re.findall(r'method="(\w+)",\s*path="([^"]+)"', text)
	assert len(pairs) >= 4, "the google-genai Interactions client changed; update the parser"
	return set(pairs)


def _interaction_type(name: str) -> type:
	module = import_module(f"{GAOS_TYPES}.{name.lower()}")
	return getattr(module, name)


def _interaction_problems(tool: HttpTool, method: str, path: str, model: str | None) -> list[str]:
	problems = []
	if (method, path) not in _interaction_paths():
		problems.append(f"{method} {path} is not a call of the Interactions client")
	if tool.method != method:
		problems.append(f"method {tool.method} but the reference says {method}")
	ours = re.sub(r"\{\{[^}]*\}\}", "{}", tool.endpoint)
	theirs = re.sub(r"\{[^}]+\}", "{}", path.replace("{api_version}", veo.INTEGRATION.api_version))
	if ours != theirs:
		problems.append(f"path {tool.endpoint} does not match {path}")
	if model is not None:
		problems += pydantic_problems(tool.body, _interaction_type(model))
	elif tool.body is not None:
		problems.append(f"{method} {path} takes no body")
	return problems


@pytest.mark.parametrize(
	("integration", "mapping"),
	[(nano_banana.INTEGRATION, NANO_BANANA), (veo.INTEGRATION, {**VEO, **VEO_INTERACTIONS})],
	ids=["nanoBanana", "veo"],
)
def test_every_gemini_tool_is_mapped(integration, mapping) -> None:
	"""Each Gemini tool names the REST rule or Interactions call it makes."""
	assert {t.handle for t in integration.tools} == set(mapping)


GEMINI_CASES = [
	pytest.param(integration, tool.handle, mapping[tool.handle], id=f"{iid}.{tool.handle}")
	for iid, integration, mapping in [
		("nanoBanana", nano_banana.INTEGRATION, NANO_BANANA),
		("veo", veo.INTEGRATION, VEO),
	]
	for tool in integration.tools
	if tool.handle in mapping
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


@pytest.mark.parametrize("handle", list(VEO_INTERACTIONS))
def test_veo_tool_conforms_to_the_interactions_api(handle: str) -> None:
	"""Method, path and every body name match google-genai's Interactions client and types."""
	tool = next(t for t in veo.TOOLS if t.handle == handle)
	assert _interaction_problems(tool, *VEO_INTERACTIONS[handle]) == []


def test_veo_interactions_checker_catches_wrong_names_paths_and_methods() -> None:
	"""A camelCase or unknown body name, a nested wrong name, a wrong path or method fail."""
	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	target = VEO_INTERACTIONS["generateVideo"]
	camel = tool.model_copy(update={"body": {**tool.body, "previousInteractionId": "x"}})
	assert _interaction_problems(camel, *target) == [
		"body.previousInteractionId is not a field of CreateModelInteraction"
	]
	nested = dict(tool.body, response_format={"type": "video", "aspectRatio": "16:9"})
	problems = _interaction_problems(tool.model_copy(update={"body": nested}), *target)
	assert problems and all("aspectRatio" in p for p in problems)
	deep = dict(tool.body, generation_config={"video_config": {"mode": "edit"}})
	assert _interaction_problems(tool.model_copy(update={"body": deep}), *target) == [
		"body.generation_config.video_config.mode is not a field of VideoConfig"
	]
	path = tool.model_copy(update={"endpoint": "/v1beta/models/x:generateVideo"})
	assert any("does not match" in p for p in _interaction_problems(path, *target))
	get = tool.model_copy(update={"method": "GET"})
	assert "method GET but the reference says POST" in _interaction_problems(get, *target)


def test_veo_rendered_request_validates_as_a_create_interaction() -> None:
	"""A full generateVideo body, rendered from sample input, is a valid CreateModelInteraction."""
	from openmolt_core.integrations.templating import render

	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	sample = {
		"input": [
			{
				"type": "image",
				"uri": "https://generativelanguage.googleapis.com/v1beta/files/a",
				"mime_type": "image/png",
			},
			{"type": "text", "text": "The fox runs"},
		],
		"task": "image_to_video",
		"aspect_ratio": "9:16",
		"resolution": "1080p",
		"duration": "8s",
		"delivery": "uri",
		"previous_interaction_id": "int-1",
		"background": True,
	}
	body = render(tool.body, {"input": sample, "config": {}})
	parsed = _interaction_type("CreateModelInteraction").model_validate(body)
	assert parsed.model == veo.DEFAULT_MODEL and parsed.background is True
	assert parsed.generation_config.video_config.task == "image_to_video"
	(fmt,) = model_candidates(type(parsed.response_format))
	assert fmt.__name__ == "VideoResponseFormat"
	assert parsed.response_format.aspect_ratio == "9:16"


def test_veo_input_blocks_use_the_content_types_names() -> None:
	"""Each property of an input block is a field of Text-, Image- or VideoContent."""
	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	block = tool.input_schema["properties"]["input"]["items"]["properties"]
	names: set[str] = set()
	for kind in ("TextContent", "ImageContent", "VideoContent"):
		names |= {(f.alias or n) for n, f in _interaction_type(kind).model_fields.items()}
	assert set(block) <= names
	assert set(block["type"]["enum"]) == {"text", "image", "video"}
	task = set(tool.input_schema["properties"]["task"]["enum"])
	hints = package_file("google-genai", f"{GAOS}/types/interactions/videoconfig.py").read_text()
	assert all(f'"{t}"' in hints for t in task)


def test_veo_offers_every_video_task_and_says_what_replaced_veo_3_1_tools() -> None:
	"""The task enum is google-genai's whole VideoConfig Task literal (a new mode is not
	dropped); scene extension is task extend, and the tool and docs say that Veo 3.1's last
	frame has no Gemini API successor (no input claims one)."""
	import typing

	from google.genai._gaos.types.interactions import videoconfig

	literal = next(a for a in typing.get_args(videoconfig.Task) if typing.get_origin(a))
	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	assert set(tool.input_schema["properties"]["task"]["enum"]) == set(typing.get_args(literal))
	assert "task extend" in tool.description and "last frame" in tool.description
	assert "no successor" in tool.description
	assert not [p for p in tool.input_schema["properties"] if "last" in p.lower()]
	assert "Veo 3.1's extension and last-frame tools" in veo.INTEGRATION.docs
	for t in veo.TOOLS:
		assert "veo-3" not in json.dumps(t.input_schema), t.handle


def test_veo_response_files_paths_exist_in_the_interaction() -> None:
	"""steps[].content[] and output_video are Interaction fields holding VideoContent (data)."""
	interaction = _interaction_type("Interaction")
	fields = {(f.alias or n): f.annotation for n, f in interaction.model_fields.items()}
	assert "output_video" in fields and "steps" in fields
	steps = {m.__name__: m for m in model_candidates(fields["steps"])}
	content = steps["ModelOutputStep"].model_fields["content"].annotation
	video = {m.__name__: m for m in model_candidates(content)}["VideoContent"]
	assert {"data", "mime_type", "uri"} <= set(video.model_fields)
	for tool in veo.TOOLS:
		if tool.response_files:
			assert tool.response_files == ["steps[].content[]", "output_video"]


def test_default_models_are_known_to_google_genai() -> None:
	"""The default model ids are in google-genai's model list; no shut-down Veo preview remains."""
	genai = package_file(
		"google-genai", "google/genai/_gaos/types/interactions/model.py"
	).read_text(encoding="utf-8")
	assert f'"{nano_banana.DEFAULT_MODEL}"' in genai
	assert f'"{veo.DEFAULT_MODEL}"' in genai
	for tool in veo.TOOLS:
		assert "veo-3" not in json.dumps(tool.model_dump(by_alias=True))


def test_generate_videos_is_vertex_only_in_google_genai() -> None:
	"""google-genai refuses generate_videos on the Gemini API, which is why Veo uses Interactions."""
	text = package_file("google-genai", "google/genai/models.py").read_text(encoding="utf-8")
	body = text[text.index("  def _generate_videos(") :][:1500]
	assert "if not self._api_client.vertexai:" in body and "raise ValueError(" in body


def _literals(annotation) -> set[str]:
	"""The Literal values an annotation allows (through Optional, Union and type aliases)."""
	import typing

	found: set[str] = set()
	stack = [annotation]
	while stack:
		item = stack.pop()
		value = getattr(item, "__value__", None)
		if value is not None:
			stack.append(value)
		elif typing.get_origin(item) is typing.Literal:
			found |= {a for a in typing.get_args(item) if isinstance(a, str)}
		else:
			stack.extend(typing.get_args(item))
	return found


def _interaction_enum_problems(body, annotation, props: dict, where: str = "body") -> list[str]:
	"""Each body field filled from an input with an enum: the values are the field's Literals.

	A dict is checked against the models of the annotation that declare all its keys (the
	variant of a union it is), and the one with fewest problems is reported.
	"""
	if not isinstance(body, dict):
		return []
	best: list[str] | None = None
	for model in model_candidates(annotation):
		fields = {(f.alias or n): f.annotation for n, f in model.model_fields.items()}
		if not set(body) <= set(fields):
			continue
		problems = []
		for key, value in body.items():
			exact = (
				re.match(r"^\{\{\s*input\.(\w+)\s*\}\}$", value) if isinstance(value, str) else None
			)
			if exact and "enum" in props.get(exact.group(1), {}):
				allowed = _literals(fields[key])
				extra = sorted(set(props[exact.group(1)]["enum"]) - allowed)
				if not allowed:
					problems.append(f"{where}.{key}: the reference declares no values")
				elif extra:
					problems.append(f"{where}.{key}: {extra} are not values of the reference")
			elif isinstance(value, dict):
				problems += _interaction_enum_problems(value, fields[key], props, f"{where}.{key}")
		if best is None or len(problems) < len(best):
			best = problems
	return best or []


def test_veo_enums_are_the_interactions_api_values() -> None:
	"""aspect_ratio, resolution, delivery and task offer only values google-genai's types declare."""
	tool = next(t for t in veo.TOOLS if t.handle == "generateVideo")
	props = tool.input_schema["properties"]
	model = _interaction_type("CreateModelInteraction")
	assert _interaction_enum_problems(tool.body, model, props) == []
	wrong = {
		**props,
		"resolution": {**props["resolution"], "enum": ["720p", "8k"]},
		"task": {**props["task"], "enum": ["edit", "remix"]},
	}
	assert _interaction_enum_problems(tool.body, model, wrong) == [
		"body.response_format.resolution: ['8k'] are not values of the reference",
		"body.generation_config.video_config.task: ['remix'] are not values of the reference",
	]


NANO_BANANA_SHUT_DOWN = {"gemini-2.5-flash-image"}
"""Image models listed for shutdown (Gemini deprecations page: gemini-2.5-flash-image, 2026-10-02)."""


def test_nano_banana_offers_only_current_image_models() -> None:
	"""Every model id the Nano Banana tools mention is in google-genai's list and not shut down."""
	genai = package_file(
		"google-genai", "google/genai/_gaos/types/interactions/model.py"
	).read_text(encoding="utf-8")
	known = set(re.findall(r'^\s+"([\w.-]+)",', genai, re.M))
	for tool in nano_banana.TOOLS:
		text = json.dumps(tool.model_dump(by_alias=True))
		mentioned = set(re.findall(r"'(gemini-[\w.-]+|nano-banana[\w.-]*)'", text))
		assert not mentioned & NANO_BANANA_SHUT_DOWN, tool.handle
		assert mentioned <= known, mentioned - known
	assert "gemini-2.5-flash-image" not in nano_banana.INTEGRATION.docs


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
	"uploadClickConversions": (
		"ConversionUploadService",
		"UploadClickConversions",
		"conversion_upload_service",
	),
	"uploadConversionAdjustments": (
		"ConversionAdjustmentUploadService",
		"UploadConversionAdjustments",
		"conversion_adjustment_upload_service",
	),
}
_JOBS = ("OfflineUserDataJobService", "offline_user_data_job_service")
ADS_STEPS = {
	"addCustomerMatchContacts": {
		"find": ("GoogleAdsService", "Search", "google_ads_service"),
		"create": (_JOBS[0], "CreateOfflineUserDataJob", _JOBS[1]),
		"add": (_JOBS[0], "AddOfflineUserDataJobOperations", _JOBS[1]),
		"run": (_JOBS[0], "RunOfflineUserDataJob", _JOBS[1]),
	}
}
"""Tools that send several RPCs in order: each step's declarative request and its RPC."""


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
	if handle == "uploadClickConversions":
		return [google_ads.CLICK_CONVERSIONS_REQUEST]
	(tool,) = [t for t in google_ads.TOOLS if t.handle == handle]
	assert isinstance(tool, HttpTool)
	return [tool]


def _ads_problems(tool: HttpTool, handle: str, protos, target=None) -> list[str]:
	service, rpc, module = target or ADS_RPCS[handle]
	message, rule, body = _ads_rule(protos, service, rpc)
	request = (INDEX, f"{ADS_TYPES}.{module}", message)
	return http_rule_problems(tool, google_ads.INTEGRATION, rule, request=request, body_field=body)


def test_every_ads_tool_is_mapped() -> None:
	"""Each Google Ads tool names its RPC (or its RPCs, in order)."""
	assert {t.handle for t in google_ads.TOOLS} == set(ADS_RPCS) | set(ADS_STEPS)
	assert set(google_ads.CUSTOMER_MATCH_REQUESTS) == set(ADS_STEPS["addCustomerMatchContacts"])


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


def _camel(name: str) -> str:
	return re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)


def ads_output_problems(handle: str, output: dict, protos) -> list[str]:
	"""Output properties that are no field (in JSON, camelCase) of the RPC's response message;
	for a server stream (searchStream) the output is the list of its messages."""
	service, rpc, module = ADS_RPCS[handle]
	text = protos(f"google/ads/googleads/{PROTO_VERSION}/services/{_snake(service)}.proto")
	found = re.search(rf"rpc {rpc}\(\w+\)\s*returns\s*\((stream )?(\w+)\)", text)
	assert found, f"{service}.{rpc} has no response in the protos"
	if found.group(1):
		assert output.get("type") == "array", f"{handle}: a stream is a list of messages"
		output = output["items"]
	message = getattr(import_module(f"{ADS_TYPES}.{module}"), found.group(2))
	fields = {_camel(f) for f in message.meta.fields}
	return [
		f"{handle}: {name} is not a field of {found.group(2)}"
		for name in sorted(set(output.get("properties", {})) - fields)
	]


@pytest.mark.parametrize("handle", list(ADS_RPCS))
def test_ads_outputs_are_response_fields(handle: str, googleapis_protos) -> None:
	"""What a tool says it returns is its RPC's response: searchStream a list of
	SearchGoogleAdsStreamResponse batches (no page token), search a page with its token."""
	(tool,) = [t for t in google_ads.TOOLS if t.handle == handle]
	assert tool.output_schema, f"{handle} describes no output"
	assert ads_output_problems(handle, tool.output_schema, googleapis_protos) == []


def test_a_paged_stream_output_fails_the_output_check(googleapis_protos) -> None:
	"""A searchStream output with a page token (search's page shape) is reported."""
	(search,) = [t for t in google_ads.TOOLS if t.handle == "search"]
	paged = {"type": "array", "items": search.output_schema}
	assert ads_output_problems("searchStream", paged, googleapis_protos) == [
		"searchStream: nextPageToken is not a field of SearchGoogleAdsStreamResponse",
		"searchStream: totalResultsCount is not a field of SearchGoogleAdsStreamResponse",
	]


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


_EXACT_INPUT = re.compile(r"^\{\{\s*input\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


def _is_proto_plus(message) -> bool:
	"""A proto-plus message class (a well-known protobuf type such as FieldMask has no meta)."""
	return isinstance(message, type) and hasattr(message, "meta")


def _input_field_problems(schema: dict, field, where: str) -> list[str]:
	"""How an input's schema departs from the proto-plus field it fills: names and enum values."""
	problems = []
	if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
		schema = schema["items"]
	if field.enum is not None and "enum" in schema:
		members = {member.name for member in field.enum}
		extra = sorted(set(schema["enum"]) - members)
		if extra:
			problems.append(f"{where}: {extra} are not values of {field.enum.__name__}")
	if _is_proto_plus(field.message):
		fields = field.message.meta.fields
		for name, sub in (schema.get("properties") or {}).items():
			if camel_to_snake(name) not in fields:
				problems.append(f"{where}.{name} is not a field of {field.message.__name__}")
			else:
				problems += _input_field_problems(
					sub, fields[camel_to_snake(name)], f"{where}.{name}"
				)
	return problems


def _body_input_problems(tool: HttpTool, request_cls) -> list[str]:
	"""Each body field filled from an input: the input's nested names and enum values fit it."""
	props = tool.input_schema.get("properties", {})
	problems: list[str] = []

	def walk(body, cls, where: str) -> None:
		if isinstance(body, list):
			for item in body:
				walk(item, cls, where + "[]")
			return
		if not isinstance(body, dict):
			return
		for key, value in body.items():
			field = cls.meta.fields.get(camel_to_snake(key))
			if field is None:
				continue  # an unknown name: test_ads_tool_conforms reports it
			exact = _EXACT_INPUT.match(value) if isinstance(value, str) else None
			if exact and exact.group(1) in props:
				problems.extend(
					_input_field_problems(props[exact.group(1)], field, f"{where}.{key}")
				)
			elif _is_proto_plus(field.message):
				walk(value, field.message, f"{where}.{key}")

	walk(tool.body, request_cls, "body")
	return problems


@pytest.mark.parametrize("handle", [h for h in ADS_RPCS if h != "listAccessibleCustomers"])
def test_ads_inputs_fit_the_fields_they_fill(handle: str, googleapis_protos) -> None:
	"""Nested input names are fields of the message they fill, and enum values are its values."""
	service, rpc, module = ADS_RPCS[handle]
	message, _, _ = _ads_rule(googleapis_protos, service, rpc)
	request_cls = getattr(import_module(f"{ADS_TYPES}.{module}"), message)
	for tool in _ads_tools(handle):
		assert _body_input_problems(tool, request_cls) == []


@pytest.mark.parametrize("handle", ["generateImage", "editImage"])
def test_nano_banana_inputs_fit_the_fields_they_fill(handle: str) -> None:
	"""The parts input's names (text, fileData.fileUri...) are fields of the Part message."""
	request_cls = import_module(f"{GL_TYPES}.generative_service").GenerateContentRequest
	tool = next(t for t in nano_banana.TOOLS if t.handle == handle)
	assert _body_input_problems(tool, request_cls) == []


def test_the_input_field_check_rejects_wrong_names_and_enum_values(googleapis_protos) -> None:
	"""An enum value the proto lacks, or a nested name that is not a field, is reported."""
	(tool,) = _ads_tools("mutateCampaigns")
	props = dict(tool.input_schema["properties"])
	props["responseContentType"] = {"type": "string", "enum": ["MUTABLE_RESOURCE", "EVERYTHING"]}
	items = props["operations"]["items"]
	props["operations"] = {
		**props["operations"],
		"items": {**items, "properties": {**items["properties"], "updateMaks": {"type": "string"}}},
	}
	bad = tool.model_copy(update={"input_schema": {**tool.input_schema, "properties": props}})
	service, rpc, module = ADS_RPCS["mutateCampaigns"]
	message, _, _ = _ads_rule(googleapis_protos, service, rpc)
	request_cls = getattr(import_module(f"{ADS_TYPES}.{module}"), message)
	assert _body_input_problems(bad, request_cls) == [
		"body.operations.updateMaks is not a field of CampaignOperation",
		"body.responseContentType: ['EVERYTHING'] are not values of ResponseContentType",
	]


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
	(credential,) = google_ads.INTEGRATION.credential_setup
	assert credential.headers["developer-token"] == "{{ config.developerToken }}"  # type: ignore[union-attr]
	assert "config.loginCustomerId" in google_ads.INTEGRATION.api_setup.headers["login-customer-id"]


# Offline conversions and Customer Match --------------------------------------------------------

STEP_CASES = [
	pytest.param(handle, step, target, id=f"{handle}.{step}")
	for handle, steps in ADS_STEPS.items()
	for step, target in steps.items()
]


@pytest.mark.parametrize(("handle", "step", "target"), STEP_CASES)
def test_ads_step_request_conforms(handle: str, step: str, target, googleapis_protos) -> None:
	"""Each step of a multi-RPC tool: the RPC exists; method, path, body fields and nested input
	names and enum values match its proto rule and request message."""
	service, rpc, module = target
	grpc = package_file(ADS, f"{ADS_SERVICES}/{_snake(service)}/transports/grpc.py").read_text(
		encoding="utf-8"
	)
	assert f'"/google.ads.googleads.{V}.services.{service}/{rpc}"' in grpc
	tool = google_ads.CUSTOMER_MATCH_REQUESTS[step]
	assert _ads_problems(tool, handle, googleapis_protos, target) == []
	message, _, _ = _ads_rule(googleapis_protos, service, rpc)
	request_cls = getattr(import_module(f"{ADS_TYPES}.{module}"), message)
	assert _body_input_problems(tool, request_cls) == []


def _required_fields(protos, service: str, message: str) -> set[str]:
	"""Fields of a request message marked ``(google.api.field_behavior) = REQUIRED``."""
	text = protos(f"google/ads/googleads/{PROTO_VERSION}/services/{_snake(service)}.proto")
	block = re.search(rf"^message {message} \{{(.*?)^\}}", text, re.M | re.S)
	assert block is not None, f"{message} is not in {service}'s proto"
	fields = re.findall(
		r"^\s*(?:optional |repeated )?[\w.]+ (\w+) = \d+\s*\[[^\]]*REQUIRED", block.group(1), re.M
	)
	return set(fields)


def required_problems(tool: HttpTool, protos, target) -> list[str]:
	"""Required request fields that the tool's URL or body does not always send."""
	service, rpc, _ = target
	message, _, _ = _ads_rule(protos, service, rpc)
	url_vars = {camel_to_snake(v) for v in re.findall(r"input\.(\w+)", tool.endpoint)}
	if "resource_name" in url_vars:
		url_vars.add("resource_name")
	sent = {camel_to_snake(k) for k in (tool.body or {})} | url_vars
	needed = set(tool.input_schema.get("required", []))
	problems = []
	for field in sorted(_required_fields(protos, service, message)):
		if field not in sent:
			problems.append(f"{tool.handle}: required {field} is not sent")
			continue
		value = (tool.body or {}).get(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), field))
		# An exact {{ input.x }} is dropped when x is missing; a constant or an object is sent.
		exact = _EXACT_INPUT.match(value) if isinstance(value, str) else None
		if exact and exact.group(1) not in needed:
			problems.append(f"{tool.handle}: required {field} comes from an optional input")
	return problems


REQUIRED_CASES = [
	pytest.param(tool, ADS_RPCS[handle], id=f"{handle}.{tool.handle}")
	for handle in ADS_RPCS
	for tool in _ads_tools(handle)
] + [
	pytest.param(google_ads.CUSTOMER_MATCH_REQUESTS[step], target, id=f"{handle}.{step}")
	for handle, steps in ADS_STEPS.items()
	for step, target in steps.items()
]


@pytest.mark.parametrize(("tool", "target"), REQUIRED_CASES)
def test_ads_requests_send_every_required_field(tool: HttpTool, target, googleapis_protos) -> None:
	"""Every REQUIRED field of the request message (customer_id, conversions, partial_failure,
	job, operations, resource_name...) is in the URL or body, from a required input or a constant."""
	assert required_problems(tool, googleapis_protos, target) == []


def test_the_required_check_rejects_a_dropped_or_optional_field(googleapis_protos) -> None:
	"""Dropping partialFailure, or making conversions optional, is reported."""
	tool = google_ads.CLICK_CONVERSIONS_REQUEST
	target = ADS_RPCS["uploadClickConversions"]
	body = {k: v for k, v in tool.body.items() if k != "partialFailure"}
	assert required_problems(tool.model_copy(update={"body": body}), googleapis_protos, target) == [
		"uploadClickConversions: required partial_failure is not sent"
	]
	loose = tool.model_copy(update={"input_schema": {**tool.input_schema, "required": []}})
	assert required_problems(loose, googleapis_protos, target) == [
		"uploadClickConversions: required conversions comes from an optional input"
	]


def _render_request(tool: HttpTool, input: dict) -> dict:
	from openmolt_core.integrations.templating import render

	return render(tool.body, {"input": input, "config": {}})


def test_rendered_click_conversions_parse_as_the_request_message() -> None:
	"""What uploadClickConversions sends (identifiers hashed) parses as UploadClickConversionsRequest,
	with no unknown field, and holds no plain email or phone number."""
	from openmolt_integrations._ads_user_data import click_conversions

	conversions = click_conversions(
		[
			{
				"gclid": "Cj0KCQ",
				"conversionAction": "customers/1/conversionActions/2",
				"conversionDateTime": "2026-11-30 14:05:00+01:00",
				"conversionValue": 49.9,
				"currencyCode": "EUR",
				"orderId": "o-1",
				"consent": {"adUserData": "GRANTED", "adPersonalization": "DENIED"},
				"email": " Ana.Silva@Gmail.com ",
				"phoneNumber": "+1 (415) 555-0123",
				"firstName": "Ana",
				"lastName": "Silva",
				"countryCode": "us",
				"postalCode": "94043",
			}
		]
	)
	body = _render_request(
		google_ads.CLICK_CONVERSIONS_REQUEST, {"customerId": "1", "conversions": conversions}
	)
	cls = import_module(f"{ADS_TYPES}.conversion_upload_service").UploadClickConversionsRequest
	parsed = cls.from_json(json.dumps(body), ignore_unknown_fields=False)
	assert parsed.partial_failure is True
	(conversion,) = parsed.conversions
	assert conversion.gclid == "Cj0KCQ" and conversion.order_id == "o-1"
	kinds = [type(i).pb(i).WhichOneof("identifier") for i in conversion.user_identifiers]
	assert kinds == ["hashed_email", "hashed_phone_number", "address_info"]
	text = json.dumps(body)
	assert "Gmail" not in text and "ana" not in text.lower().replace("conversionaction", "")
	assert "555" not in text and "Silva" not in text


@pytest.mark.parametrize("step", ["find", "create", "add", "run"])
def test_rendered_customer_match_requests_parse_as_their_messages(step: str) -> None:
	"""The find, create, add and run requests, rendered, parse as their request messages."""
	from openmolt_integrations._ads_user_data import contact_operations, job_external_id

	module = import_module(
		f"{ADS_TYPES}.{'google_ads_service' if step == 'find' else 'offline_user_data_job_service'}"
	)
	name = "customers/1/offlineUserDataJobs/9"
	external_id = job_external_id("3f1c0a4e-0000-5000-8000-000000000000")
	inputs = {
		"find": {"customerId": "1", "query": "SELECT offline_user_data_job.status FROM x"},
		"create": {
			"customerId": "1",
			"userList": "customers/1/userLists/5",
			"externalId": external_id,
			"consent": {"adUserData": "GRANTED"},
		},
		"add": {
			"resourceName": name,
			"operations": contact_operations(
				[{"email": "a@example.com"}, {"hashedPhoneNumber": "A" * 64}]
			),
		},
		"run": {"resourceName": name},
	}
	message = {
		"find": "SearchGoogleAdsRequest",
		"create": "CreateOfflineUserDataJobRequest",
		"add": "AddOfflineUserDataJobOperationsRequest",
		"run": "RunOfflineUserDataJobRequest",
	}[step]
	body = _render_request(google_ads.CUSTOMER_MATCH_REQUESTS[step], inputs[step])
	parsed = getattr(module, message).from_json(json.dumps(body), ignore_unknown_fields=False)
	if step == "create":
		assert parsed.job.type_.name == "CUSTOMER_MATCH_USER_LIST"
		assert parsed.job.customer_match_user_list_metadata.user_list == "customers/1/userLists/5"
		assert parsed.job.external_id == int(external_id)
	elif step == "add":
		assert parsed.enable_partial_failure is True
		assert [len(op.create.user_identifiers) for op in parsed.operations] == [1, 1]
		assert parsed.operations[1].create.user_identifiers[0].hashed_phone_number == "a" * 64


def test_consent_enum_is_the_consent_status_values() -> None:
	"""The consent inputs offer GRANTED and DENIED, values of ConsentStatus."""
	from google.ads.googleads.v26.enums.types.consent_status import ConsentStatusEnum

	members = {m.name for m in ConsentStatusEnum.ConsentStatus}
	tool = next(t for t in google_ads.TOOLS if t.handle == "addCustomerMatchContacts")
	consent = tool.input_schema["properties"]["consent"]["properties"]
	for field in ("adUserData", "adPersonalization"):
		assert set(consent[field]["enum"]) <= members
