"""Model-level checks of the media integrations: definitions, schemas, docs, entry points."""

from __future__ import annotations

import ast
import inspect
import re
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.integrations import FunctionTool, HttpTool, Integration
from openmolt_integrations import browser_use, dropbox, fal, meta_ads, openai_image, s3

MODULES: dict[str, ModuleType] = {
	"dropbox": dropbox,
	"s3": s3,
	"metaAds": meta_ads,
	"openaiImage": openai_image,
	"fal": fal,
	"browserUse": browser_use,
}

cases = pytest.mark.parametrize(("iid", "module"), MODULES.items(), ids=list(MODULES))


def _properties(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
	out = []
	for name, prop in (schema.get("properties") or {}).items():
		out.append((f"{path}{name}", prop))
		if isinstance(prop, dict):
			out.extend(_properties(prop, f"{path}{name}."))
			items = prop.get("items")
			if isinstance(items, dict):
				out.extend(_properties(items, f"{path}{name}[]."))
	return out


@cases
def test_module_defines_a_valid_integration(iid: str, module: ModuleType) -> None:
	"""Each module's INTEGRATION validates again from its own dump and has id, version and docs."""
	spec = module.INTEGRATION
	assert isinstance(spec, Integration)
	assert spec.id == iid
	assert spec.api_version
	assert spec.credential_setup, "every integration names how to authenticate"
	assert "## Get a token" in spec.docs
	# Tools and the integration's own code (encoders, auths...) are not serialized: pass them.
	code = {k: getattr(spec, k) for k in ("filters", "encoders", "response_checks", "auths")}
	again = Integration.model_validate(
		{**spec.model_dump(exclude={"tools"}), "tools": spec.tools, **code}
	)
	assert [t.handle for t in again.tools] == [t.handle for t in spec.tools]


@cases
def test_tool_count_and_scopes(iid: str, module: ModuleType) -> None:
	"""Every tool needs at least one defined scope, and every defined scope is used by a tool."""
	spec = module.INTEGRATION
	assert 2 <= len(spec.tools) <= 30  # a sanity bound: a few dozen tools at most
	used: set[str] = set()
	for tool in spec.tools:
		assert tool.scopes, f"{iid}.{tool.handle} has no scopes"
		assert set(tool.scopes) <= set(spec.scopes)
		used |= set(tool.scopes)
	assert used == set(spec.scopes), f"unused scopes: {set(spec.scopes) - used}"


@cases
def test_every_input_property_is_described(iid: str, module: ModuleType) -> None:
	"""A model reads the schemas: each input property, nested ones too, carries a description."""
	for tool in module.INTEGRATION.tools:
		assert tool.description.strip()
		schema = tool.input_schema
		assert schema.get("type") == "object"
		for required in schema.get("required", []):
			assert required in schema["properties"], f"{tool.handle}: {required} not a property"
		for name, prop in _properties(schema):
			assert isinstance(prop, dict) and prop.get("description"), f"{iid}.{tool.handle}.{name}"


@cases
def test_templates_only_use_declared_inputs(iid: str, module: ModuleType) -> None:
	"""Every input.<name> an HTTP tool template uses is a property of its input schema."""
	import re

	for tool in module.INTEGRATION.tools:
		if not isinstance(tool, HttpTool):
			continue
		text = repr(
			(tool.endpoint, tool.query_params, tool.body, tool.headers, tool.base_url, tool.files)
		)
		used = set(re.findall(r"input\.([A-Za-z_][A-Za-z0-9_]*)", text))
		assert used <= set(tool.input_schema["properties"]), (tool.handle, used)


@cases
def test_entry_point_resolves_to_the_module(iid: str, module: ModuleType) -> None:
	"""The installed entry point named after the integration id loads this module."""
	found = {ep.name: ep for ep in entry_points(group="openmolt.integrations")}
	assert iid in found
	assert found[iid].load() is module


@cases
def test_plugin_hook_registers_under_the_id(iid: str, module: ModuleType) -> None:
	"""Passing the module as a plugin makes the integration available under its id."""
	om = OpenMolt(plugins=[module], entry_points=False)
	spec = om.plugins.integration(iid)
	assert spec.id == iid
	assert [t.handle for t in spec.tools] == [t.handle for t in module.INTEGRATION.tools]


@cases
def test_all_is_sorted_and_complete(iid: str, module: ModuleType) -> None:
	"""__all__ is sorted and names only things the module defines at top level."""
	assert module.__all__ == sorted(module.__all__)
	tree = ast.parse(inspect.getsource(module))
	defined = set()
	for node in tree.body:
		if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
			defined.add(node.name)
		elif isinstance(node, ast.Assign):
			defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
	assert set(module.__all__) <= defined
	assert {"INTEGRATION", "register_integrations"} <= set(module.__all__)


def test_function_tools_are_where_the_api_needs_code() -> None:
	"""Images, fal, S3 presigning and Meta's audience hashing are functions; the rest is HTTP."""
	kinds = {
		iid: {type(t).__name__ for t in module.INTEGRATION.tools} for iid, module in MODULES.items()
	}
	assert kinds["openaiImage"] == {"FunctionTool"}
	assert kinds["fal"] == {"FunctionTool"}
	assert kinds["s3"] == {"HttpTool", "FunctionTool"}
	assert [t.handle for t in s3.INTEGRATION.tools if isinstance(t, FunctionTool)] == ["presignUrl"]
	# Dropbox's FunctionTool is the core fileInfo, which plans upload-session chunks.
	assert kinds["dropbox"] == {"HttpTool", "FunctionTool"}
	assert [t.handle for t in dropbox.INTEGRATION.tools if isinstance(t, FunctionTool)] == [
		"fileInfo"
	]
	# Meta Ads' one FunctionTool hashes people's identifiers, which a template cannot do.
	assert kinds["metaAds"] == {"HttpTool", "FunctionTool"}
	assert [t.handle for t in meta_ads.INTEGRATION.tools if isinstance(t, FunctionTool)] == [
		"addCustomAudienceUsers"
	]
	assert kinds["browserUse"] == {"HttpTool"}


def test_dropbox_offers_offline_oauth_and_bearer() -> None:
	"""Dropbox's OAuth2 credential asks for a refresh token (token_access_type=offline)."""
	oauth, bearer = dropbox.INTEGRATION.credential_setup
	assert oauth.type == "oauth2"
	assert oauth.auth_params == {"token_access_type": "offline"}
	assert oauth.token_url == "https://api.dropboxapi.com/oauth2/token"
	assert "files.content.write" in oauth.scopes
	assert bearer.type == "bearer"


def test_s3_credential_is_sigv4_for_the_s3_service() -> None:
	"""S3 signs with aws_sigv4, service s3, region from config defaulting to us-east-1."""
	(cred,) = s3.INTEGRATION.credential_setup
	assert cred.type == "aws_sigv4"
	assert "aws_sigv4" in s3.INTEGRATION.auths
	assert cred.params["service"] == "s3"
	assert "config.region" in cred.params["region"]
	assert "us-east-1" in cred.params["region"]
	assert set(cred.secret_params) == {"secret_access_key", "session_token"}


def _strings(value: Any) -> list[str]:
	if isinstance(value, str):
		return [value]
	if isinstance(value, dict):
		return [s for v in value.values() for s in _strings(v)]
	if isinstance(value, (list, tuple)):
		return [s for v in value for s in _strings(v)]
	return []


@cases
def test_every_template_parses_as_liquid(iid: str, module: ModuleType) -> None:
	"""Every template string parses with python-liquid (input names avoid Liquid keywords).

	An exact ``{{ input.x }}`` is exempt: the engine substitutes it without Liquid (rule 1 of
	docs/integration-authoring.md), so vendor names such as Dropbox's ``limit`` stay readable.
	"""
	import liquid

	env = liquid.Environment()
	for name in ("json", "base64", "base64url", "path_segments", "rfc2822"):
		env.filters[name] = lambda value, *args: value
	spec = module.INTEGRATION
	texts = _strings(spec.api_setup.model_dump()) + _strings(
		[c.model_dump() for c in spec.credential_setup]
	)
	for tool in spec.tools:
		if isinstance(tool, HttpTool):
			texts += _strings(
				[
					tool.endpoint,
					tool.query_params,
					tool.body,
					tool.headers,
					tool.base_url,
					tool.files,
				]
			)
	exact = re.compile(r"^\{\{\s*input\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$")
	for text in texts:
		if not exact.match(text):
			env.from_string(text)
