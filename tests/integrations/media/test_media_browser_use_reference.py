"""browser-use tools checked against the official `browser-use-sdk` v2 routes and models."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from openmolt_core.integrations import HttpTool
from openmolt_integrations import browser_use

# The SDK is imported by these tests only, in the sdk-types xdist group: one worker imports it,
# not each of the four at its collection.
pytestmark = pytest.mark.xdist_group("sdk-types")


@functools.cache
def _sdk() -> Path:
	"""The SDK's package folder."""
	import browser_use_sdk

	return Path(browser_use_sdk.__file__).parent


@functools.cache
def _resources() -> Path:
	"""The SDK's v2 resources, whose sources name the routes it calls."""
	return _sdk() / "v2" / "resources"


@functools.cache
def _models() -> Any:
	"""The SDK's v2 models (generated from the service's OpenAPI document)."""
	from browser_use_sdk.generated.v2 import models

	return models


TOOLS = {t.handle: t for t in browser_use.INTEGRATION.tools}

_CALL = re.compile(r'request\(\s*"(GET|POST|PATCH|PUT|DELETE)",\s*f?"([^"]+)"')


def _routes() -> set[tuple[str, str]]:
	routes = set()
	for source in _resources().glob("*.py"):
		for method, path in _CALL.findall(source.read_text()):
			routes.add((method, re.sub(r"\{[^}]+\}", "{}", path)))
	return routes


def _ours(tool: HttpTool) -> tuple[str, str]:
	return tool.method, re.sub(r"\{\{[^}]+\}\}", "{}", tool.endpoint)


def _aliases(model: Any) -> set[str]:
	return {field.alias or name for name, field in model.model_fields.items()}


def _values(enum: Any) -> set[str]:
	return {member.value for member in enum}


def test_base_url_and_auth_header_are_the_sdks() -> None:
	"""The default base URL is the SDK's v2 URL and the key goes in X-Browser-Use-API-Key."""
	from browser_use_sdk.v2 import client as v2_client

	assert v2_client._V2_BASE_URL == browser_use.BASE_URL
	assert browser_use.BASE_URL in browser_use.INTEGRATION.api_setup.base_url
	(cred,) = browser_use.INTEGRATION.credential_setup
	assert set(cred.headers) == {"X-Browser-Use-API-Key"}
	assert '"X-Browser-Use-API-Key"' in (_sdk() / "_core" / "http.py").read_text()


@pytest.mark.parametrize("handle", list(TOOLS))
def test_tool_is_an_sdk_route(handle: str) -> None:
	"""Method and path (ids as placeholders) are a route the SDK calls."""
	assert _ours(TOOLS[handle]) in _routes()


def test_request_bodies_use_the_api_field_names() -> None:
	"""Body keys are aliases of the SDK's request models (camelCase)."""
	assert set(TOOLS["createTask"].body) <= _aliases(_models().CreateTaskRequest)
	assert set(TOOLS["createSession"].body) <= _aliases(_models().CreateSessionRequest)
	assert set(TOOLS["stopTask"].body) == {"action"}
	assert TOOLS["stopSession"].body == {"action": "stop"}
	assert "stop" in _values(_models().SessionUpdateAction)


def test_enums_are_the_sdk_values() -> None:
	"""Task actions and status filters use the SDK's enum values."""
	action = TOOLS["stopTask"].input_schema["properties"]["action"]["enum"]
	assert set(action) == _values(_models().TaskUpdateAction)
	status = TOOLS["listTasks"].input_schema["properties"]["filterBy"]["enum"]
	assert set(status) == _values(_models().TaskStatus)
	sessions = TOOLS["listSessions"].input_schema["properties"]["filterBy"]["enum"]
	assert set(sessions) == _values(_models().SessionStatus)
	out = TOOLS["getTaskStatus"].output_schema["properties"]["status"]["enum"]
	assert set(out) == _values(_models().TaskStatus)


def test_create_inputs_carry_the_api_enums_and_limits() -> None:
	"""llm takes the API's model names, proxyCountryCode its lowercase codes, metadata 10 keys.

	The API's own models (browser-use-sdk generated/v2/models.py, from the service's OpenAPI):
	CreateTaskRequest.llm is a SupportedLLMs (default browser-use-2.0), metadata "Up to 10
	key-value pairs", CreateSessionRequest.proxyCountryCode a lowercase ProxyCountryCode.
	"""
	task = TOOLS["createTask"].input_schema["properties"]
	assert set(task["llm"]["enum"]) == _values(_models().SupportedLLMs)
	default = _models().CreateTaskRequest.model_fields["llm"].default
	assert f'"{default.value}"' in task["llm"]["description"]
	assert "Up to 10 key-value pairs" in str(
		_models().CreateTaskRequest.model_fields["metadata"].description
	)
	assert task["metadata"]["maxProperties"] == 10
	proxy = TOOLS["createSession"].input_schema["properties"]["proxyCountryCode"]
	for code in _values(_models().ProxyCountryCode):
		jsonschema.validate(code, proxy)
	for wrong in ("US", "usa", "u"):
		with pytest.raises(jsonschema.ValidationError):
			jsonschema.validate(wrong, proxy)


def test_list_query_names_are_the_sdks() -> None:
	"""Paging and filter query names are the ones the SDK sends."""
	tasks = (_resources() / "tasks.py").read_text()
	sessions = (_resources() / "sessions.py").read_text()
	for name in TOOLS["listTasks"].query_params:
		assert f'"{name}":' in tasks, name
	for name in TOOLS["listSessions"].query_params:
		assert f'"{name}":' in sessions, name


def test_structured_output_is_a_json_schema_string() -> None:
	"""structuredOutput is a string (a JSON Schema serialized), as the API model declares."""
	field = _models().CreateTaskRequest.model_fields["structured_output"]
	assert field.alias == "structuredOutput"
	assert "str" in str(field.annotation)
	prop = TOOLS["createTask"].input_schema["properties"]["structuredOutput"]
	assert prop["type"] == "string"
	max_steps = TOOLS["createTask"].input_schema["properties"]["maxSteps"]
	limits = {
		type(m).__name__: m for m in _models().CreateTaskRequest.model_fields["max_steps"].metadata
	}
	assert max_steps["maximum"] == limits["Le"].le
	assert max_steps["minimum"] == limits["Ge"].ge


_PATH_PARAM = re.compile(r"\{(\w+)\}")


def _sdk_path_params() -> dict[tuple[str, str], list[str]]:
	"""(method, path with {} placeholders) → the SDK's path parameter names, in order."""
	out = {}
	for source in _resources().glob("*.py"):
		for method, path in _CALL.findall(source.read_text()):
			out[(method, re.sub(r"\{[^}]+\}", "{}", path))] = _PATH_PARAM.findall(path)
	return out


@pytest.mark.parametrize("handle", list(TOOLS))
def test_path_inputs_are_the_sdks_path_parameters(handle: str) -> None:
	"""Path inputs are named as the SDK (and the API reference) name the path parameters: task_id,
	session_id, file_id; the ids are UUIDs, as the SDK's view models type them."""
	tool = TOOLS[handle]
	ours = re.findall(r"\{\{ input\.(\w+) \}\}", tool.endpoint)
	assert ours == _sdk_path_params()[_ours(tool)]
	for name in ours:
		assert tool.input_schema["properties"][name]["format"] == "uuid", (handle, name)
	assert "UUID" in str(_models().TaskView.model_fields["id"].annotation)
	assert "UUID" in str(_models().SessionView.model_fields["id"].annotation)


_BODY_MODELS = {"createTask": "CreateTaskRequest", "createSession": "CreateSessionRequest"}


@pytest.mark.parametrize("handle", list(_BODY_MODELS))
def test_body_inputs_carry_the_model_constraints(handle: str) -> None:
	"""Each body input has its request model field's name and its length, range and uuid format."""
	model = getattr(_models(), _BODY_MODELS[handle])
	fields = {field.alias or name: field for name, field in model.model_fields.items()}
	tool = TOOLS[handle]
	props = tool.input_schema["properties"]
	for key, template in tool.body.items():
		assert template == f"{{{{ input.{key} }}}}", key
		field, schema = fields[key], props[key]
		limits = {type(m).__name__: m for m in field.metadata}
		if "MinLen" in limits:
			assert schema["minLength"] == limits["MinLen"].min_length, key
		if "MaxLen" in limits:
			assert schema["maxLength"] == limits["MaxLen"].max_length, key
		if "Ge" in limits:
			assert schema["minimum"] == limits["Ge"].ge, key
		if "Le" in limits:
			assert schema["maximum"] == limits["Le"].le, key
		if "UUID" in str(field.annotation):
			assert schema["format"] == "uuid", key
