"""Inputs that clear a field with null, checked against Notion's and GitHub's references.

The HTTP engine sends an explicit null only for a top-level input whose schema takes null
(`openmolt_core.integrations.templating.null_inputs`). Each such input must be a body parameter
the reference types as nullable (@notionhq/client 5.26.0's ``icon?: PageIconRequest | null``,
@octokit/openapi 23.0.2's ``"nullable": true``), and every parameter an update's reference lets be
null is offered, where null clears something.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import httpx
import pytest

from openmolt_core.integrations.templating import null_inputs
from openmolt_integrations import github, notion

from .conftest import members

# Nullable parameters of an update that our tool sends but does not let be null, and why.
GITHUB_NOT_CLEARED = {
	("updateIssue", "title"): "an issue always has a title; null is refused by the service",
	("updateIssue", "body"): 'an empty string clears it too, and "" is already sent as is',
	("updateIssue", "state_reason"): "ignored unless state changes; null means no reason given",
}


@pytest.fixture(scope="module")
def notion_nullable() -> dict[str, set[str]]:
	"""Endpoint name → the body parameters @notionhq/client types as ``... | null``."""
	block = re.compile(
		r"^type (\w+?)BodyParameters = (.*?)^(?=export |type |declare )", re.S | re.M
	)
	field = re.compile(r"^ {4}(\w+)\??: (.*?);$", re.M)
	out: dict[str, set[str]] = {}
	for text in members("notion", "package/build/src/api-endpoints/", ".d.ts").values():
		for m in block.finditer(text.decode()):
			name = m.group(1)[0].lower() + m.group(1)[1:]
			for f in field.finditer(m.group(2)):
				if re.search(r"\|\s*null$", f.group(2)):
					out.setdefault(name, set()).add(f.group(1))
	assert out["updatePage"] >= {"icon", "cover"}, "the @notionhq/client types changed"
	return out


def _body_inputs(tool: Any) -> dict[str, str]:
	"""Body key → the input it sends as is (``"icon": "{{ input.icon }}"``)."""
	body = tool.body if isinstance(tool.body, dict) else {}
	out = {}
	for key, value in body.items():
		m = re.fullmatch(r"\{\{\s*input\.(\w+)\s*\}\}", value) if isinstance(value, str) else None
		if m:
			out[key] = m.group(1)
	return out


@pytest.mark.parametrize("tool", notion.TOOLS, ids=lambda t: t.handle)
def test_notion_null_inputs_are_the_sdks_nullable_update_params(
	tool, notion_endpoints, notion_nullable, shape
) -> None:
	"""A Notion input takes null only as a body param the SDK types ``| null``; an update (PATCH)
	takes null for every such param it sends (updatePage's icon and cover)."""
	s = shape(tool)
	(ref,) = [e for e in notion_endpoints if e["method"] == s["method"] and e["path"] == s["path"]]
	allowed = notion_nullable.get(ref["name"], set())
	sent = _body_inputs(tool)
	nulls = null_inputs(tool.input_schema)
	assert nulls <= {name for key, name in sent.items() if key in allowed}, (tool.handle, nulls)
	if tool.method == "PATCH":
		assert {sent[key] for key in allowed if key in sent} == nulls


def test_notion_update_page_clears_icon_and_cover() -> None:
	"""updatePage's icon and cover say that null removes them."""
	(tool,) = [t for t in notion.TOOLS if t.handle == "updatePage"]
	props = tool.input_schema["properties"]
	assert null_inputs(tool.input_schema) == {"icon", "cover"}
	assert "null removes the icon" in props["icon"]["description"]
	assert "null removes the cover" in props["cover"]["description"]


def _github_nullable(spec: dict[str, Any], node: Any) -> bool:
	while isinstance(node, dict) and "$ref" in node:
		target: Any = spec
		for part in node["$ref"].split("/")[1:]:
			target = target[part]
		node = target
	return isinstance(node, dict) and node.get("nullable") is True


@pytest.mark.parametrize("tool", github.TOOLS, ids=lambda t: t.handle)
def test_github_null_inputs_are_the_openapis_nullable_update_params(
	tool, github_openapi, shape
) -> None:
	"""A GitHub input takes null only as a body property the OpenAPI marks nullable; an update
	(PATCH) takes null for each such property it sends, but those listed with a reason."""
	s = shape(tool)
	paths = (
		[s["path"].replace("{type}", t) for t in github.SEARCH_TYPES]
		if "{type}" in s["path"]
		else [s["path"]]
	)
	nulls = null_inputs(tool.input_schema)
	sent = _body_inputs(tool)
	for path in paths:
		op = github_openapi["paths"][path][tool.method.lower()]
		body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
		props = body.get("schema", {}).get("properties", {}) if body else {}
		nullable = {key for key, value in props.items() if _github_nullable(github_openapi, value)}
		assert nulls <= {sent[key] for key in nullable if key in sent}, (tool.handle, nulls)
		if tool.method == "PATCH":
			offered = {sent[key] for key in nullable if key in sent}
			kept = {name for (handle, name) in GITHUB_NOT_CLEARED if handle == tool.handle}
			assert offered - kept == nulls, (tool.handle, offered - kept, nulls)


def test_github_update_issue_removes_the_milestone_with_null(github_openapi) -> None:
	"""updateIssue's milestone takes null, as the OpenAPI says ("use `null` to remove")."""
	op = github_openapi["paths"]["/repos/{owner}/{repo}/issues/{issue_number}"]["patch"]
	ref = op["requestBody"]["content"]["application/json"]["schema"]["properties"]["milestone"]
	assert ref["nullable"] is True
	assert "use `null` to remove" in json.dumps(ref)
	(tool,) = [t for t in github.TOOLS if t.handle == "updateIssue"]
	assert "milestone" in null_inputs(tool.input_schema)
	assert (
		"null removes the milestone" in tool.input_schema["properties"]["milestone"]["description"]
	)


def _sent(integration: str, config: dict[str, str], handle: str, **given: Any) -> Any:
	"""The JSON body an agent's call sends (through validation, templates and the engine)."""
	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	seen: list[httpx.Request] = []

	async def run() -> None:
		def service(request: httpx.Request) -> httpx.Response:
			seen.append(request)
			return httpx.Response(200, json={"ok": True})

		om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
		model = ScriptedModel([call_tool(f"{integration}.{handle}", **given), finish(done=True)])
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[{"integration": integration, "credential": {"config": config}}],
		)
		async with om:
			await agent.run()

	anyio.run(run)
	[request] = seen
	return json.loads(request.content)


NOTION = {"apiKey": "secret_abcdefgh123456"}
GITHUB = {"apiKey": "ghp_abcdefgh123456"}


def test_notion_update_page_sends_icon_null_and_leaves_an_absent_cover_out() -> None:
	"""{"icon": null} reaches Notion; the cover, not given, is not sent."""
	body = _sent("notion", NOTION, "updatePage", page_id="p1", icon=None)
	assert body == {"icon": None}


def test_github_update_issue_sends_milestone_null() -> None:
	"""{"milestone": null} reaches GitHub with the other fields given; none is invented."""
	body = _sent(
		"github", GITHUB, "updateIssue", owner="o", repo="r", issue_number=1, milestone=None
	)
	assert body == {"milestone": None}
	body = _sent("github", GITHUB, "updateIssue", owner="o", repo="r", issue_number=1, title="t")
	assert body == {"title": "t"}


# Stripe: the empty string is the unset value (form bodies have no null) -------------------


def _blank_inputs(schema: dict[str, Any]) -> set[str]:
	"""Inputs with an ``anyOf`` branch that is exactly Stripe's unset value ``""``."""
	return {
		name
		for name, prop in schema.get("properties", {}).items()
		if any(b.get("enum") == [""] for b in prop.get("anyOf", ()))
	}


def _stripe_blank_params(cls: type) -> set[str]:
	"""The params a stripe params TypedDict types ``Literal[''] | ...`` (cleared by "")."""
	out = set()
	for base in reversed(cls.__mro__):
		for key, value in getattr(base, "__annotations__", {}).items():
			if re.search(r"Literal\[''\]", value if isinstance(value, str) else repr(value)):
				out.add(key)
	return out


UPDATES = {
	"updateCustomer": "stripe.params._customer_update_params.CustomerUpdateParams",
	"updateSubscription": "stripe.params._subscription_update_params.SubscriptionUpdateParams",
	"updatePaymentLink": "stripe.params._payment_link_update_params.PaymentLinkUpdateParams",
}


@pytest.mark.parametrize("handle", sorted(UPDATES))
def test_stripe_updates_take_the_empty_string_where_the_sdk_does(handle: str) -> None:
	"""An update's object input takes "" exactly where the stripe package types the param
	``Literal[''] | ...`` (address, metadata); a string one takes "" as any string."""
	from importlib import import_module

	from openmolt_integrations import stripe as stripe_integration

	module, name = UPDATES[handle].rsplit(".", 1)
	blank = _stripe_blank_params(getattr(import_module(module), name))
	(tool,) = [t for t in stripe_integration.TOOLS if t.handle == handle]
	props = tool.input_schema["properties"]
	sent = _body_inputs(tool)
	offered = _blank_inputs(tool.input_schema)
	assert {sent[k] for k in offered} <= blank, handle
	for key, source in sent.items():
		plain = props[source].get("type") == "string" and "enum" not in props[source]
		if key in blank and not plain:
			assert source in offered, f'{handle}.{key}: the SDK clears it with ""'


def test_stripe_other_tools_offer_no_empty_string_branch() -> None:
	"""Only updates take Stripe's unset value as a branch of its own (a create clears nothing)."""
	from openmolt_integrations import stripe as stripe_integration

	for tool in stripe_integration.TOOLS:
		if tool.handle not in UPDATES:
			assert _blank_inputs(tool.input_schema) == set(), tool.handle


def test_stripe_update_customer_sends_an_empty_address() -> None:
	"""address: "" is sent as ``address=`` (Stripe removes the address); absent fields are not."""
	from urllib.parse import parse_qsl

	from openmolt import OpenMolt
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	seen: list[httpx.Request] = []

	async def run() -> None:
		def service(request: httpx.Request) -> httpx.Response:
			seen.append(request)
			return httpx.Response(200, json={"id": "cus_1"})

		om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
		model = ScriptedModel(
			[
				call_tool("stripe.updateCustomer", customer="cus_1", address="", metadata=""),
				finish(done=True),
			]
		)
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[
				{
					"integration": "stripe",
					"credential": {"config": {"apiKey": "sk_test_abcdef123456"}},
				}
			],
		)
		async with om:
			await agent.run()

	anyio.run(run)
	[request] = seen
	assert parse_qsl(request.content.decode(), keep_blank_values=True) == [
		("address", ""),
		("metadata", ""),
	]
