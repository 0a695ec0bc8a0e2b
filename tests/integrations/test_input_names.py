"""Tool input names follow one rule: the vendor's own names (`openmolt_core.integrations.schema`).

An HTTP tool that forwards an input unchanged (``"k": "{{ input.x }}"``, in its query or body, at
any depth) must name the input after the vendor's field: ``x == input_name(k)``. The few tools
that compose a vendor structure from a differently named input are listed below with the reason.
Every input name of every built-in tool is also a plain identifier, which every model provider
accepts as a property name and Liquid reads after a dot.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import Any

import pytest

from openmolt_core.integrations import HttpTool, Integration
from openmolt_core.integrations.schema import input_name

_EXACT = re.compile(r'^\{\{\s*input(?:\.([A-Za-z_][A-Za-z0-9_]*)|\["([^"]+)"\])\s*\}\}$')
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# (integration, tool, vendor key): why the input has another name.
_FILE_PART = "a multipart upload's media part holds the stored file named by the file input"
_ITEM_BODY = "Graph's itemBody/location: the input is the vendor's object, sent as its text field"
_COMPOSED: dict[tuple[str, str, str], str] = {
	("Google Drive", "uploadFile", "media"): _FILE_PART,
	("Nano Banana", "uploadFile", "media"): _FILE_PART,
	("Veo", "uploadFile", "media"): _FILE_PART,
	("YouTube", "uploadVideo", "media"): _FILE_PART,
	("Nano Banana", "generateImage", "text"): "the prompt is the text part of the one content",
	("Microsoft Outlook", "sendMail", "content"): _ITEM_BODY,
	("Microsoft Outlook", "createDraft", "content"): _ITEM_BODY,
	("Microsoft Outlook", "createEvent", "content"): _ITEM_BODY,
	("Microsoft Outlook", "createEvent", "displayName"): _ITEM_BODY,
	("Microsoft Outlook", "getMessage", "$expand"): (
		"expandAttachments is a yes/no composed into $expand=attachments($select=...)"
	),
	("WhatsApp", "sendTemplate", "code"): "the template's language object is sent from its code",
	("Amazon S3", "putObject", "metadata"): "the s3-object encoder sends Metadata as x-amz-meta-*",
}


def _forwarded(value: Any) -> Iterator[tuple[str, str]]:
	if isinstance(value, dict):
		for key, item in value.items():
			if isinstance(item, str):
				match = _EXACT.match(item)
				if match:
					yield key, match.group(1) or match.group(2)
			else:
				yield from _forwarded(item)
	elif isinstance(value, list):
		for item in value:
			yield from _forwarded(item)


def _tools() -> list[tuple[str, Any]]:
	found: list[Integration] = []
	for entry in entry_points(group="openmolt.integrations"):
		if entry.dist is not None and entry.dist.name == "openmolt-integrations":
			module = importlib.import_module(entry.value)
			module.register_integrations(
				register=lambda integration, **_: found.append(integration)
			)
	return [(integration.name, tool) for integration in found for tool in integration.tools]


def test_forwarded_inputs_carry_the_vendors_names() -> None:
	wrong = [
		f"{name}.{tool.handle}: sends input {given!r} as {key!r}; name it {input_name(key)!r}"
		for name, tool in _tools()
		if isinstance(tool, HttpTool)
		for part in (tool.query_params, tool.body)
		for key, given in _forwarded(part)
		if given != input_name(key) and (name, tool.handle, key) not in _COMPOSED
	]
	assert not wrong, "\n".join(wrong)


def test_every_input_name_is_a_plain_identifier() -> None:
	wrong = [
		f"{name}.{tool.handle}: {prop!r}"
		for name, tool in _tools()
		for prop in ((tool.input_schema or {}).get("properties") or {})
		if not _NAME.match(prop)
	]
	assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
	("vendor", "expected"),
	[
		("$top", "top"),
		("expand[]", "expand"),
		("DateSent>", "DateSentAfter"),
		("StartTime<", "StartTimeBefore"),
		("EndTime>=", "EndTimeOnOrAfter"),  # not EndTime, which would push EndTime aside
		("EndTime<=", "EndTimeOnOrBefore"),
		("Status!=", "StatusNot"),
		("max-keys", "max_keys"),
		("tweet.fields", "tweet_fields"),
		("pageToken", "pageToken"),
	],
)
def test_input_name_spells_vendor_names(vendor: str, expected: str) -> None:
	assert input_name(vendor) == expected
