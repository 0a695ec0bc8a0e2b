"""Shopify: the scope a tag call needs follows the resource, and the OAuth URL is Shopify's."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from graphql import parse

from openmolt import OpenMolt
from openmolt_core.integrations.credentials import authorization_url
from openmolt_core.integrations.schema import IDEMPOTENCY_KEY
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import shopify

pytestmark = pytest.mark.anyio

TAG_TOOLS = [t for t in shopify.TOOLS if t.handle.endswith("Tags")]


def test_there_is_one_tag_tool_per_resource_with_its_own_scope() -> None:
	"""addProductTags, addOrderTags and addCustomerTags each need exactly one write scope."""
	assert {t.handle: t.scopes for t in TAG_TOOLS} == {
		"addProductTags": ["write_products"],
		"addOrderTags": ["write_orders"],
		"addCustomerTags": ["write_customers"],
	}


@pytest.mark.parametrize("tool", TAG_TOOLS, ids=lambda t: t.handle)
def test_tag_tool_scope_is_the_write_scope_of_its_resource(tool, shopify_introspection) -> None:
	"""The resource type's read scope in the Admin API reference has the tool's scope as writer."""
	kind = tool.handle.removeprefix("add").removesuffix("Tags")
	(item,) = [
		i
		for i in shopify_introspection["offline_scopes"]["items"]
		if i["type"] == "type" and i["typeName"] == kind
	]
	(scope,) = tool.scopes
	assert scope.replace("write_", "read_", 1) in item["offlineScopes"]
	(op,) = parse(tool.body["query"]).definitions
	assert [s.name.value for s in op.selection_set.selections] == ["tagsAdd"]


@pytest.mark.parametrize("tool", TAG_TOOLS, ids=lambda t: t.handle)
def test_tag_tool_ids_are_limited_to_their_resource(tool) -> None:
	"""The id pattern accepts the tool's own gid and refuses another resource's."""
	pattern = re.compile(tool.input_schema["properties"]["id"]["pattern"])
	kind = tool.handle.removeprefix("add").removesuffix("Tags")
	assert pattern.match(f"gid://shopify/{kind}/123")
	other = "Order" if kind != "Order" else "Product"
	assert not pattern.match(f"gid://shopify/{other}/123")


async def test_an_agent_with_only_write_products_tags_a_product_not_an_order() -> None:
	"""Granted write_products only: addProductTags is sent, addOrderTags is refused unsent."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"data": {"tagsAdd": {"userErrors": []}}})

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(
		plugins=[shopify],
		entry_points=False,
		http_client=http,
		integrations={"shopify": {"shop": "acme", "accessToken": "shpat_secret"}},
	)
	model = ScriptedModel(
		[
			call_tool("shopify.addOrderTags", id="gid://shopify/Order/1", tags=["vip"]),
			call_tool("shopify.addProductTags", id="gid://shopify/Order/1", tags=["vip"]),
			call_tool("shopify.addProductTags", id="gid://shopify/Product/7", tags=["sale"]),
			finish(result="done"),
		]
	)
	agent = om.create_agent(
		name="Tagger",
		model=model,
		integrations=[{"integration": "shopify", "scopes": ["write_products"]}],
	)
	await agent.run("Tag things.")
	await http.aclose()
	model.assert_consumed()
	told = [" ".join(str(m.content) for m in request.messages) for request in model.requests]
	assert "needs scope(s) ['write_orders']" in told[1]
	assert "gid://shopify/Product/[0-9]+" in told[2]
	assert len(seen) == 1
	body = json.loads(seen[0].content)
	assert body["variables"] == {"id": "gid://shopify/Product/7", "tags": ["sale"]}
	assert body["query"].startswith("mutation AddProductTags(")


def test_authorize_url_joins_scopes_with_commas_and_leaves_expiring_to_the_exchange() -> None:
	"""The authorize URL has comma-joined scopes and no expiring parameter."""
	(oauth,) = [c for c in shopify.INTEGRATION.credential_setup if c.type == "oauth2"]
	url = authorization_url(oauth, {"shop": "acme", "clientId": "cid"}, "https://app/cb", "st")
	parts = urlsplit(url)
	assert (parts.netloc, parts.path) == ("acme.myshopify.com", "/admin/oauth/authorize")
	query = dict(parse_qsl(parts.query))
	# Exactly the parameters of Shopify's authorization code grant documentation
	# (shopify.dev/docs/apps/build/authentication-authorization/access-tokens/authorization-code-grant).
	assert set(query) == {"client_id", "scope", "redirect_uri", "state"}
	assert query["scope"] == ",".join(oauth.scopes)
	assert "expiring" not in query
	assert "expiring=1" in shopify.INTEGRATION.docs


_IDEMPOTENCY_REQUIRED = re.compile(r"As of (\d{4}-\d{2}), the idempotency key is required")


def _mutation_fields(introspection) -> dict[str, str]:
	schema = introspection.get("data", introspection)["__schema"]
	(mutation,) = [t for t in schema["types"] if t["name"] == "Mutation"]
	return {f["name"]: f.get("description") or "" for f in mutation["fields"]}


# Every tool but the one whose document the model writes (the raw GraphQL tool).
_DOCUMENTED = [t for t in shopify.TOOLS if "{{" not in t.body["query"]]


@pytest.mark.parametrize("tool", _DOCUMENTED, ids=lambda t: t.handle)
def test_a_mutation_that_requires_an_idempotency_key_is_sent_with_one(
	tool, shopify_introspection
) -> None:
	"""A root mutation whose reference says "As of 2026-04, the idempotency key is required"
	(refundCreate, inventoryAdjustQuantities) carries @idempotent(key:) in 2026-10 (without it
	Shopify refuses the mutation), and the key is the call's, not one the model invents: a key
	reused across two refunds would make Shopify answer the second with the first's result."""
	fields = _mutation_fields(shopify_introspection)
	document = parse(tool.body["query"])
	for definition in document.definitions:
		if (
			getattr(definition, "operation", None) is None
			or definition.operation.value != "mutation"
		):
			continue
		for selection in definition.selection_set.selections:
			found = _IDEMPOTENCY_REQUIRED.search(fields.get(selection.name.value, ""))
			if not found or found.group(1) > shopify.SHOPIFY_API_VERSION:
				continue
			directives = {d.name.value: d for d in selection.directives or ()}
			assert "idempotent" in directives, (
				f"{tool.handle}: {selection.name.value} needs @idempotent(key:) since "
				f"{found.group(1)}"
			)
			(key,) = directives["idempotent"].arguments
			variable = key.value.name.value
			# The call's own key (the same on a replay, another per call), never the model's.
			assert tool.body["variables"][variable] == IDEMPOTENCY_KEY, tool.handle
			assert variable not in tool.input_schema.get("properties", {}), tool.handle
			assert tool.sends_call_key


def test_a_get_shop_only_consent_still_asks_for_one_access_scope() -> None:
	"""getShop's fields need no access scope (read_shop maps to none), but Shopify's
	authorization code grant refuses a consent that asks for none (invalid_scope): an agent given
	only read_shop is asked for the least one, read_products (the catalogue its storefront already
	shows), and an agent whose tools need some is asked for those alone."""
	from openmolt_core.integrations.oauth import requested_scopes

	oauth = shopify.INTEGRATION.credential("oauth2")
	assert oauth is not None
	asked = requested_scopes(shopify.INTEGRATION, oauth, ["read_shop"])
	assert asked == ["read_products"]
	url = authorization_url(
		oauth, {"shop": "acme", "clientId": "cid"}, "https://app/cb", "st", scopes=asked
	)
	assert dict(parse_qsl(urlsplit(url).query))["scope"] == "read_products"
	assert requested_scopes(shopify.INTEGRATION, oauth, ["read_shop", "write_customers"]) == [
		"write_customers"
	]
