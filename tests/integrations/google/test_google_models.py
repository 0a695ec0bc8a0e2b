"""The Google integrations are complete, valid definitions found through their entry points."""

from __future__ import annotations

import ast
import importlib
from importlib import metadata
from pathlib import Path
from typing import Any

import liquid
import pytest
from _discovery import input_vars

from openmolt import OpenMolt
from openmolt_core._support.jsonschema import JsonSchemaValidator
from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import google_ads

MODULES = {
	"googleCalendar": "openmolt_integrations.google_calendar",
	"gmail": "openmolt_integrations.gmail",
	"googleDrive": "openmolt_integrations.google_drive",
	"googleSheets": "openmolt_integrations.google_sheets",
	"youtube": "openmolt_integrations.youtube",
	"googleAds": "openmolt_integrations.google_ads",
	"nanoBanana": "openmolt_integrations.nano_banana",
	"veo": "openmolt_integrations.veo",
}
OAUTH_IDS = ["googleCalendar", "gmail", "googleDrive", "googleSheets", "youtube", "googleAds"]
IDS = list(MODULES)


def integration(iid: str) -> Integration:
	return importlib.import_module(MODULES[iid]).INTEGRATION


def templates(tool: HttpTool) -> list[Any]:
	return [tool.endpoint, tool.query_params, tool.body, tool.headers, tool.base_url, tool.files]


def strings(value: Any) -> list[str]:
	if isinstance(value, str):
		return [value]
	if isinstance(value, dict):
		return [s for v in value.values() for s in strings(v)]
	if isinstance(value, list):
		return [s for v in value for s in strings(v)]
	return []


@pytest.mark.parametrize("iid", IDS)
def test_module_defines_a_valid_integration(iid: str) -> None:
	"""Each module exposes an Integration with a version, 5-20 HTTP tools and a token guide."""
	spec = integration(iid)
	http_tools = [t for t in spec.tools if isinstance(t, HttpTool)]
	dumped = {
		**spec.model_dump(by_alias=True, exclude={"tools"}),
		"tools": [
			t.model_dump(by_alias=True) if isinstance(t, HttpTool) else t for t in spec.tools
		],
		# The integration's own code (Google's multipart-related encoder) is not serialized.
		**{k: getattr(spec, k) for k in ("filters", "encoders", "response_checks", "auths")},
	}
	assert isinstance(Integration.model_validate(dumped), Integration)
	assert spec.api_version
	assert 5 <= len(http_tools) <= 20
	# Besides HTTP tools only the core's fileInfo, which plans chunked uploads, and composed
	# tools that send declarative requests: Google Ads' generateKeywordIdeas picks one by the
	# seed inputs; its uploads hash user identifiers first; Sheets' row tools find a row by key;
	# Calendar's respondToEvent reads the guest's own entry before it answers.
	assert {t.handle for t in spec.tools if t not in http_tools} <= {
		"fileInfo",
		"respondToEvent",
		"generateKeywordIdeas",
		"uploadClickConversions",
		"addCustomerMatchContacts",
		"lookupRows",
		"appendOrUpdateRow",
	}
	assert "## Get a token" in spec.docs
	assert spec.api_setup.base_url.startswith("https://")


@pytest.mark.parametrize("iid", IDS)
def test_every_tool_has_scopes_and_described_inputs(iid: str) -> None:
	"""Every tool needs at least one defined scope, and every input field is described."""
	spec = integration(iid)
	used: set[str] = set()
	for tool in spec.tools:
		assert tool.scopes, tool.handle
		used |= set(tool.scopes)
		assert len(tool.description) >= 10, tool.handle
		schema = tool.input_schema
		assert schema["type"] == "object"
		props = schema.get("properties", {})
		for name, field in props.items():
			assert field.get("description"), f"{tool.handle}.{name}"
		assert set(schema.get("required", [])) <= set(props), tool.handle
		JsonSchemaValidator(schema)
	assert used == set(spec.scopes), "every scope is used by some tool"


@pytest.mark.parametrize("iid", IDS)
def test_templates_parse_and_use_only_declared_inputs(iid: str) -> None:
	"""Every Liquid template parses and refers only to input fields of the tool's schema."""
	env = liquid.Environment()
	for tool in integration(iid).tools:
		if not isinstance(tool, HttpTool):
			continue
		props = set(tool.input_schema.get("properties", {}))
		for template in strings(templates(tool)):
			env.from_string(template)
		assert input_vars(templates(tool)) <= props, tool.handle


@pytest.mark.parametrize("iid", IDS)
def test_read_scope_tools_do_not_change_anything(iid: str) -> None:
	"""Tools that only need a read scope never use a write method other than read-only POSTs."""
	readonly_posts = {"queryFreeBusy", "search", "searchStream", "generateKeywordIdeas"}
	tools = list(integration(iid).tools)
	if iid == "googleAds":
		tools += google_ads.KEYWORD_IDEAS_REQUESTS.values()
	for tool in tools:
		if not isinstance(tool, HttpTool):
			continue
		if tool.scopes == ["read"] and tool.method != "GET":
			assert tool.handle in readonly_posts, tool.handle


@pytest.mark.parametrize("iid", OAUTH_IDS)
def test_google_oauth2_credential(iid: str) -> None:
	"""Google OAuth2 uses Google's endpoints and asks for an offline refresh token."""
	cred = integration(iid).credential("oauth2")
	assert cred is not None and integration(iid).credential(None) == cred
	assert cred.auth_url == "https://accounts.google.com/o/oauth2/v2/auth"
	assert cred.token_url == "https://oauth2.googleapis.com/token"
	assert cred.auth_params["access_type"] == "offline"
	assert cred.auth_params["prompt"] == "consent"
	assert cred.client_id == "{{ config.clientId }}"
	assert cred.refresh_token == "{{ config.refreshToken }}"
	assert all(s.startswith("https://") for s in cred.scopes)
	assert all(s in integration(iid).docs for s in cred.scopes)


@pytest.mark.parametrize("iid", ["nanoBanana", "veo"])
def test_gemini_api_key_credential(iid: str) -> None:
	"""Gemini integrations send the API key as x-goog-api-key and take a configurable model."""
	spec = integration(iid)
	cred = spec.credential(None)
	assert cred is not None and cred.type == "custom"
	assert cred.headers == {"x-goog-api-key": "{{ config.apiKey }}"}
	assert spec.api_setup.base_url == "https://generativelanguage.googleapis.com"
	models = [t for t in spec.tools if "model" in t.input_schema.get("properties", {})]
	# generateContent names the model in the path; the Interactions API in the body.
	assert models and all(
		"input.model" in t.endpoint or "input.model" in str(t.body) for t in models
	)


@pytest.mark.parametrize("iid", IDS)
def test_module_all_is_sorted_and_complete(iid: str) -> None:
	"""__all__ is sorted and lists the module's public names."""
	module = importlib.import_module(MODULES[iid])
	tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
	public = set()
	for node in tree.body:
		if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
			public.add(node.name)
		elif isinstance(node, ast.Assign):
			public |= {t.id for t in node.targets if isinstance(t, ast.Name)}
		elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
			public.add(node.target.id)
	public = {n for n in public if not n.startswith("_")}
	assert module.__all__ == sorted(module.__all__)
	assert set(module.__all__) == public


def test_entry_points_resolve() -> None:
	"""Each integration id is an entry point that loads its module."""
	points = {ep.name: ep for ep in metadata.entry_points(group="openmolt.integrations")}
	for iid, module in MODULES.items():
		assert points[iid].value == module
		assert points[iid].load() is importlib.import_module(module)


@pytest.mark.parametrize("iid", IDS)
def test_integrations_load_through_entry_points(iid: str) -> None:
	"""An OpenMolt instance finds each integration by id and registers it under that id."""
	om = OpenMolt()
	spec = om.plugins.integration(iid)
	assert spec.id == iid
	assert spec.name == integration(iid).name


@pytest.mark.parametrize("iid", ["gmail", "googleDrive", "youtube", "googleAds"])
def test_read_scope_hides_sending_writing_and_deleting(iid: str) -> None:
	"""With only the read scope granted, no tool that sends, writes, shares or deletes is visible."""
	visible = {t.handle for t in integration(iid).tools if set(t.scopes) <= {"read"}}
	assert visible
	dangerous = {
		"sendMessage",
		"sendDraft",
		"trashMessage",
		"uploadFile",
		"deleteFile",
		"shareFile",
		"uploadVideo",
		"deleteVideo",
		"mutate",
		"mutateCampaigns",
		"setCampaignStatus",
	}
	assert dangerous.isdisjoint(visible)


@pytest.mark.parametrize(
	("given", "taken"),
	[
		("1234567890", True),
		("123-456-7890", True),
		("customers/1234567890", False),  # listAccessibleCustomers' resource name, given whole
		("12345", False),
		("123-456-78901", False),
	],
)
def test_a_google_ads_customer_id_is_ten_digits(given: str, taken: bool) -> None:
	"""Every Ads tool's path is customers/{customerId}: anything but the id would misplace it."""
	checked = 0
	for tool in google_ads.INTEGRATION.tools:
		schema = (tool.input_schema or {}).get("properties", {}).get("customerId")
		if schema is None:
			continue
		try:
			JsonSchemaValidator(schema).validate(given)
			ok = True
		except ValueError:
			ok = False
		assert ok is taken, tool.handle
		checked += 1
	assert checked >= 8
