"""WhatsApp phone-number and media tools against Meta's OpenAPI for the WhatsApp Business Platform.

Meta publishes the Cloud API as an OpenAPI document on GitHub only (``facebook/openapi``,
``business-messaging-api_v23.0.yaml``; no PyPI or npm package). whatsapp_openapi_v23.json is its
extract for the requests the tools make (refs resolved, allOf merged; source and commit inside):
the messages request per message type (the ``type`` discriminator's mapping, and the read
receipt's payload), media upload, the media node (URL, delete) and the business profile (read
and update). Each
tool is checked for its method and path, its query names (and the profile fields it asks for),
and its body: every name at every level a name of the spec (or one of the documented extras
below), the spec's required names sent (from required inputs), constants within the spec's
enums, and each input's enums, required names and bounds within the spec's.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _edit import pop_at, with_input_schema, with_tool
from _openapi import merge_alternatives, schema_errors

from openmolt_core.integrations import HttpTool, Integration
from openmolt_integrations import whatsapp

_REF = Path(__file__).with_name("whatsapp_openapi_v23.json")
_MESSAGES = "POST /{Version}/{Phone-Number-ID}/messages"
# Our path templates and the spec's names for the same path parameters.
_PATH_NAMES = {"config.phoneNumberId": "Phone-Number-ID", "input.media_id": "Media-ID"}
# Names the Cloud API documentation gives that the OpenAPI leaves out, by tool and body path:
# https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#media-object
# (caption, filename), .../reference/media#upload-media (type), and the typing indicator of
# .../typing-indicators (also in the OpenAPI's "Send typing indicator and read receipt" example).
DOCUMENTED_EXTRAS = {
	("sendMedia", "image.caption"),
	("sendMedia", "video.caption"),
	("sendMedia", "document.caption"),
	("sendMedia", "document.filename"),
	("markAsRead", "typing_indicator"),
	("uploadMedia", "type"),
}
_FORMATS = {"json": "application/json", "multipart": "multipart/form-data"}


@cache
def reference() -> dict[str, Any]:
	"""The pinned extract of Meta's OpenAPI."""
	loaded: dict[str, Any] = json.loads(_REF.read_text())
	return loaded


def operation(tool: HttpTool) -> str:
	"""The spec's ``METHOD /{Version}/...`` key of a tool's request."""
	if tool.base_url == "{{ input.url }}":
		# downloadMedia GETs the URL getMediaUrl returns, which the spec writes as a path.
		return f"{tool.method} /{{Version}}/{{Media-URL}}"
	assert tool.base_url is None, tool.handle
	path = re.sub(
		r"\{\{ ([\w.]+) \}\}", lambda m: "{" + _PATH_NAMES[m.group(1)] + "}", tool.endpoint
	)
	return f"{tool.method} /{{Version}}{path}"


def body_errors(
	tool: HttpTool, body: dict[str, Any], spec: dict[str, Any], where: str = ""
) -> list[str]:
	"""Where a body template leaves the spec: unknown or missing names, constants, inputs."""
	spec = merge_alternatives(spec)
	inputs = tool.input_schema["properties"]
	required = set(tool.input_schema.get("required", []))
	errors = []
	for name in spec.get("required", []):
		value = body.get(name)
		source = re.fullmatch(r"\{\{ input\.(\w+) \}\}", str(value))
		# sendMedia sends the object its input `type` names: the spec's discriminator.
		chosen = tool.handle == "sendMedia" and name == str(spec["properties"]["type"]["enum"][0])
		if value is None or (source and source.group(1) not in required and not chosen):
			errors.append(f"{tool.handle}: the spec requires {where}{name}")
	for name, value in body.items():
		path = f"{where}{name}"
		if name not in spec.get("properties", {}):
			if (tool.handle, path) not in DOCUMENTED_EXTRAS:
				errors.append(f"{tool.handle}.{path}: not in the spec")
			continue
		sub = spec["properties"][name]
		source = re.fullmatch(r"\{\{ input\.(\w+) \}\}", str(value))
		if isinstance(value, dict):
			errors += body_errors(tool, value, sub, f"{path}.")
		elif source:
			errors += schema_errors(
				tool.handle, path, inputs[source.group(1)], sub, DOCUMENTED_EXTRAS
			)
		elif "enum" in sub and value not in sub["enum"]:
			errors.append(f"{tool.handle}.{path}: {value!r} not in {sub['enum']}")
	return errors


def _variants(tool: HttpTool) -> list[str]:
	"""The spec's message types a messages tool sends: its constant ``type``, or its input's."""
	if "status" in tool.body:
		return ["read"]
	kind = tool.body["type"]
	if kind == "{{ input.type }}":
		return list(tool.input_schema["properties"]["type"]["enum"])
	return [kind]


def whatsapp_errors(integration: Integration) -> list[str]:
	"""Every way the WhatsApp phone-number and media tools leave Meta's OpenAPI."""
	ops = reference()["operations"]
	errors = []
	for tool in integration.tools:
		if not isinstance(tool, HttpTool) or "config.wabaId" in tool.endpoint:
			continue  # the Business Account tools: test_whatsapp_sdk_reference.py
		key = operation(tool)
		if key not in ops:
			errors.append(f"{tool.handle}: {key} is not in the spec")
			continue
		op = ops[key]
		query = {n for n, p in op["parameters"].items() if p["in"] == "query"}
		errors += [
			f"{tool.handle}: query {n} not in the spec" for n in set(tool.query_params) - query
		]
		if "responseFields" in op:
			asked = set(tool.query_params.get("fields", "").split(","))
			errors += [
				f"{tool.handle}: no field {f}" for f in sorted(asked - set(op["responseFields"]))
			]
		if not tool.body:
			continue
		media = _FORMATS.get(tool.request_format or integration.api_setup.request_format)
		content = op.get("requestBody", {}).get(media or "")
		if content is None:
			errors.append(f"{tool.handle}: the spec takes no {tool.request_format} body")
		elif key == _MESSAGES:
			for kind in _variants(tool):
				if kind not in content:
					errors.append(f"{tool.handle}: no message type {kind} in the spec")
					continue
				# each type the input allows, sent as that type's request: sendMedia's other
				# media objects are optional inputs, left out unless given
				others = set(_variants(tool)) - {kind}
				body = {k: v for k, v in tool.body.items() if k not in others}
				errors += body_errors(
					tool, {**body, "type": kind} if "type" in body else body, content[kind]
				)
		else:
			body = {**tool.body, **dict.fromkeys(tool.files or {}, "{{ file }}")}
			errors += body_errors(tool, body, content)
	return errors


def test_whatsapp_tools_are_the_openapi_requests() -> None:
	"""The phone-number and media tools send what Meta's OpenAPI describes."""
	assert reference()["version"] == "v23.0"
	assert whatsapp_errors(whatsapp.INTEGRATION) == []
	checked = [
		t.handle
		for t in whatsapp.INTEGRATION.tools
		if isinstance(t, HttpTool) and "config.wabaId" not in t.endpoint
	]
	assert len(checked) == 12, checked


def test_the_template_language_carries_its_policy() -> None:
	"""TemplateMessage requires language.policy ("deterministic") beside the code."""
	tool = next(t for t in whatsapp.INTEGRATION.tools if t.handle == "sendTemplate")
	assert tool.body["template"]["language"] == {
		"policy": "deterministic",
		"code": "{{ input.language }}",
	}


def _set(path: str, key: str, value: Any) -> Any:
	def change(schema: dict[str, Any]) -> None:
		for step in path.split("."):
			schema = schema["properties"][step]
		schema[key] = value

	return change


@pytest.mark.parametrize(
	("handle", "change"),
	[
		# a body name the spec does not have
		("sendInteractive", _set("interactive.footer", "properties", {"note": {"type": "string"}})),
		# bounds looser than the spec's
		("sendInteractive", _set("interactive.action.buttons", "maxItems", 4)),
		("sendInteractive", _set("interactive.action.button", "maxLength", 40)),
		# an enum value outside the spec's
		("sendInteractive", _set("interactive.type", "enum", ["button", "list", "carousel"])),
		("sendMedia", _set("type", "enum", ["image", "gif"])),
		# a name the spec requires left optional
		("sendInteractive", _set("interactive.header", "required", ["text"])),
		("sendText", lambda s: s.update(required=["body"])),
	],
)
def test_a_whatsapp_tool_leaving_the_spec_fails_the_check(handle: str, change: Any) -> None:
	"""Unknown names, loose bounds, foreign enum values and optional required names are caught."""
	broken = with_input_schema(whatsapp.INTEGRATION, handle, change)
	assert whatsapp_errors(broken)


@pytest.mark.parametrize(
	("handle", "change"),
	[
		("sendTemplate", {"body": {"type": "template", "template": {"name": "{{ input.name }}"}}}),
		("sendReaction", {"body": {"to": "{{ input.to }}", "type": "reaction", "react": {}}}),
		("getMediaUrl", {"query_params": {"phone_id": "{{ config.phoneNumberId }}"}}),
		("getBusinessProfile", {"query_params": {"fields": "about,opening_hours"}}),
		("deleteMedia", {"method": "POST"}),
		("uploadMedia", {"request_format": "form-data"}),
	],
)
def test_a_whatsapp_request_leaving_the_spec_fails_the_check(
	handle: str, change: dict[str, Any]
) -> None:
	"""A wrong body, query name, profile field, method or format is caught."""
	assert whatsapp_errors(with_tool(whatsapp.INTEGRATION, handle, lambda _: change))


def test_a_documented_limit_dropped_is_caught_here_too() -> None:
	"""Dropping the 1024-character body limit of an interactive message fails the check."""
	broken = with_input_schema(
		whatsapp.INTEGRATION, "sendInteractive", pop_at("interactive.body.text", "maxLength")
	)
	assert whatsapp_errors(broken)
