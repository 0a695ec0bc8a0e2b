"""WhatsApp Business Account tools against Meta's official ``facebook-business`` SDK.

The SDK (PyPI, already a test dependency for Meta Ads and Instagram) has the WhatsApp Business
Account node: its ``/message_templates`` and ``/phone_numbers`` edges, with their parameter
types and enums. listTemplates, createTemplate and listPhoneNumbers are checked against those
``FacebookRequest``s built with ``pending=True`` (nothing is sent): method, edge, parameter names
and the category enum. The SDK has no phone-number node (``/<PHONE_NUMBER_ID>/messages``,
``/media``, ``/whatsapp_business_profile``) nor media node, so those tools stay pinned to the
Cloud API documentation (test_messaging_conformance.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from facebook_business.adobjects.whatsappbusinessaccount import WhatsAppBusinessAccount
from facebook_business.api import FacebookAdsApi, FacebookRequest

from openmolt_core.integrations import HttpTool
from openmolt_integrations import whatsapp

# Graph-wide parameters every edge accepts (field selection and cursor paging).
_GRAPH_COMMON = {"fields", "limit", "after", "before"}

SDK_CALLS: dict[str, Callable[[], FacebookRequest]] = {
	"listTemplates": lambda: WhatsAppBusinessAccount("42").get_message_templates(pending=True),
	"createTemplate": lambda: WhatsAppBusinessAccount("42").create_message_template(pending=True),
	"listPhoneNumbers": lambda: WhatsAppBusinessAccount("42").get_phone_numbers(pending=True),
}


@pytest.fixture(autouse=True, scope="module")
def _sdk_api() -> None:
	FacebookAdsApi.init(access_token="test-token")


def _tool(handle: str) -> HttpTool:
	tool = next(t for t in whatsapp.INTEGRATION.tools if t.handle == handle)
	assert isinstance(tool, HttpTool)
	return tool


def check(tool: HttpTool, request: FacebookRequest) -> None:
	"""Method, ``/<WABA_ID>/<edge>`` and parameter names of a tool are the SDK request's."""
	assert tool.method == request._method, f"{tool.handle}: {request._method} in the SDK"
	node, edge = request._path
	ours = re.sub(r"\{\{[^}]*\}\}", node, tool.endpoint)
	assert ours == f"/{node}/{edge}", f"{tool.handle}: {ours} is not /{node}/{edge}"
	assert "config.wabaId" in tool.endpoint, tool.handle
	names = set(tool.query_params) | (set(tool.body) if isinstance(tool.body, dict) else set())
	unknown = names - set(request._param_checker._type_check_info) - _GRAPH_COMMON
	assert not unknown, f"{tool.handle}: parameters unknown to the SDK: {unknown}"


@pytest.mark.parametrize("handle", sorted(SDK_CALLS))
def test_whatsapp_account_tool_is_the_sdk_request(handle: str) -> None:
	check(_tool(handle), SDK_CALLS[handle]())


def test_whatsapp_template_category_is_the_sdk_enum() -> None:
	"""createTemplate's category offers only values of the SDK's category enum."""
	request = SDK_CALLS["createTemplate"]()
	allowed = {
		v
		for v in request._param_checker._enum_data["category_enum"]
		if isinstance(v, str) and not v.startswith("__") and v.isupper()
	}
	category = _tool("createTemplate").input_schema["properties"]["category"]
	assert set(category["enum"]) <= allowed, set(category["enum"]) - allowed


@pytest.mark.parametrize(
	"change",
	[
		{"endpoint": "/{{ config.wabaId }}/templates"},
		{"method": "PUT"},
		{"query_params": {"template_name": "{{ input.name }}"}},
	],
	ids=["edge", "method", "param"],
)
def test_a_wrong_whatsapp_account_request_fails_the_check(change: dict[str, object]) -> None:
	"""A wrong edge, method or parameter name fails the SDK check."""
	tool = _tool("listTemplates").model_copy(update=change)
	with pytest.raises(AssertionError):
		check(tool, SDK_CALLS["listTemplates"]())
