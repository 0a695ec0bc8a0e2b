"""Scripted agents call two tools of each integration; the exact HTTP requests are checked.

These run through the HTTP engine (``openmolt_core.integrations.http``), following the contract
in docs/integration-authoring.md.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from urllib.parse import parse_qsl

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.integrations.http import RetryPolicy, execute_http_tool
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext
from openmolt_integrations import airtable, etsy, github, notion, shopify, stripe

pytestmark = pytest.mark.anyio


def _recorder(replies: list[dict]) -> tuple[list[httpx.Request], Callable]:
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json=replies[len(seen) - 1])

	return seen, handler


async def _run(module, config: dict, steps: list[dict], replies: list[dict]) -> list[httpx.Request]:
	seen, handler = _recorder(replies)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(
		plugins=[module],
		entry_points=False,
		http_client=http,
		integrations={module.INTEGRATION.id: config},
	)
	model = ScriptedModel([*steps, finish(result="done")])
	# These tests check requests; a read then a write would wait for approval under the default
	# taint policy (tests/core/test_taint.py), so they allow it.
	agent = om.create_agent(
		name="Tester", model=model, integrations=[module.INTEGRATION.id], taint_policy="allow"
	)
	result = await agent.run("Do the job.")
	assert result.output == {"result": "done"}
	model.assert_consumed()
	await http.aclose()
	return seen


def _json(request: httpx.Request) -> object:
	return json.loads(request.content)


async def test_notion_agent_searches_then_appends_blocks() -> None:
	"""Notion: a search and a block append send the bearer token, the version and exact JSON."""
	blocks = [{"type": "paragraph", "paragraph": {"rich_text": [{"text": {"content": "Hi"}}]}}]
	seen = await _run(
		notion,
		{"apiKey": "ntn_secret_123"},
		[
			call_tool(
				"notion.search", query="Roadmap", filter={"property": "object", "value": "page"}
			),
			call_tool("notion.appendBlockChildren", block_id="abc123", children=blocks),
		],
		[{"results": [], "has_more": False}, {"results": []}],
	)
	first, second = seen
	assert (first.method, str(first.url)) == ("POST", "https://api.notion.com/v1/search")
	assert first.headers["Authorization"] == "Bearer ntn_secret_123"
	assert first.headers["Notion-Version"] == "2026-03-11"
	assert _json(first) == {"query": "Roadmap", "filter": {"property": "object", "value": "page"}}
	assert (second.method, str(second.url)) == (
		"PATCH",
		"https://api.notion.com/v1/blocks/abc123/children",
	)
	assert second.headers["Authorization"] == "Bearer ntn_secret_123"
	assert second.headers["Notion-Version"] == "2026-03-11"
	assert _json(second) == {"children": blocks}


async def test_notion_agent_builds_a_database_and_reads_a_long_property() -> None:
	"""Notion: createDatabase nests the columns in initial_data_source; getPageProperty puts
	Notion's URL-encoded property id in the path encoded once (@notionhq/client 5.26.0,
	Notion-Version 2026-03-11)."""
	title = [{"type": "text", "text": {"content": "Tasks"}}]
	columns = {"Name": {"title": {}}, "Status": {"select": {"options": [{"name": "Todo"}]}}}
	seen = await _run(
		notion,
		{"apiKey": "ntn_secret_123"},
		[
			call_tool(
				"notion.createDatabase",
				parent={"type": "page_id", "page_id": "page1"},
				title=title,
				properties=columns,
				is_inline=True,
			),
			call_tool(
				"notion.getPageProperty", page_id="page2", property_id="p%3Ax~", page_size=50
			),
		],
		[{"id": "db1", "data_sources": [{"id": "ds1"}]}, {}],
	)
	for request in seen:
		assert request.headers["Authorization"] == "Bearer ntn_secret_123"
		assert request.headers["Notion-Version"] == "2026-03-11"
	create, prop = seen
	assert (create.method, str(create.url)) == ("POST", "https://api.notion.com/v1/databases")
	assert create.headers["Content-Type"] == "application/json"
	assert _json(create) == {
		"parent": {"type": "page_id", "page_id": "page1"},
		"title": title,
		"is_inline": True,
		"initial_data_source": {"properties": columns},
	}
	assert (prop.method, str(prop.url)) == (
		"GET",
		"https://api.notion.com/v1/pages/page2/properties/p%3Ax~?page_size=50",
	)
	assert prop.content == b""


async def test_airtable_agent_lists_then_deletes_records() -> None:
	"""Airtable: listRecords POSTs its options as JSON (a 16,000-character formula keeps the URL
	short), records[] query keys on delete, bearer token."""
	formula = "OR(" + ",".join(f"{{Name}} = 'task {i:05}'" for i in range(800)) + ")"
	assert len(formula) > 16000
	seen = await _run(
		airtable,
		{"apiKey": "patSecret123"},
		[
			call_tool(
				"airtable.listRecords",
				baseId="appX",
				tableIdOrName="Tasks",
				fields=["Name", "Status"],
				sort=[{"field": "Due", "direction": "desc"}],
				filterByFormula=formula,
				pageSize=50,
				timeZone="Europe/Paris",
			),
			call_tool(
				"airtable.deleteRecords",
				baseId="appX",
				tableIdOrName="Tasks",
				records=["rec1", "rec2"],
			),
		],
		[{"records": []}, {"records": []}],
	)
	first, second = seen
	# https://airtable.com/developers/web/api/list-records: URLs must be under 16,000 characters;
	# POST .../listRecords takes the options in the body.
	assert first.method == "POST" and first.url.path == "/v0/appX/Tasks/listRecords"
	assert parse_qsl(first.url.query.decode()) == [("timeZone", "Europe/Paris")]
	assert len(str(first.url)) < 16000
	assert _json(first) == {
		"fields": ["Name", "Status"],
		"sort": [{"field": "Due", "direction": "desc"}],
		"filterByFormula": formula,
		"pageSize": 50,
	}
	assert first.headers["Authorization"] == "Bearer patSecret123"
	assert second.method == "DELETE" and second.url.path == "/v0/appX/Tasks"
	assert second.url.host == first.url.host == "api.airtable.com"
	assert second.headers["Authorization"] == "Bearer patSecret123"
	assert parse_qsl(second.url.query.decode()) == [("records[]", "rec1"), ("records[]", "rec2")]


async def test_airtable_agent_uploads_an_attachment_then_renames_a_field() -> None:
	"""Airtable: the file goes base64 to the content host; updateField PATCHes the schema."""
	pdf = b"%PDF-1.4 tiny"
	ref = "data:application/pdf;base64," + base64.b64encode(pdf).decode()
	seen = await _run(
		airtable,
		{"apiKey": "patSecret123"},
		[
			call_tool(
				"airtable.uploadAttachment",
				baseId="appB",
				recordId="rec1",
				attachmentFieldIdOrName="Files",
				file=ref,
				filename="invoice.pdf",
			),
			call_tool(
				"airtable.updateField",
				baseId="appB",
				tableId="tblT",
				columnId="fldF",
				name="Invoices",
			),
		],
		[{"id": "rec1", "fields": {}}, {"id": "fldF", "name": "Invoices"}],
	)
	upload, rename = seen
	assert (upload.method, str(upload.url)) == (
		"POST",
		"https://content.airtable.com/v0/appB/rec1/Files/uploadAttachment",
	)
	assert upload.headers["Authorization"] == "Bearer patSecret123"
	assert _json(upload) == {
		"contentType": "application/pdf",
		"file": base64.b64encode(pdf).decode(),
		"filename": "invoice.pdf",
	}
	assert (rename.method, str(rename.url)) == (
		"PATCH",
		"https://api.airtable.com/v0/meta/bases/appB/tables/tblT/fields/fldF",
	)
	assert _json(rename) == {"name": "Invoices"}


async def test_shopify_agent_lists_products_then_adds_tags() -> None:
	"""Shopify: GraphQL JSON bodies to the shop's 2026-10 endpoint with the access token header."""
	seen = await _run(
		shopify,
		{"shop": "acme.myshopify.com", "accessToken": "shpat_secret"},
		[
			call_tool("shopify.listProducts", query="status:active", first=5),
			call_tool("shopify.addOrderTags", id="gid://shopify/Order/1", tags=["vip"]),
		],
		[{"data": {"products": {"nodes": []}}}, {"data": {"tagsAdd": {"userErrors": []}}}],
	)
	first, second = seen
	assert str(first.url) == "https://acme.myshopify.com/admin/api/2026-10/graphql.json"
	assert first.headers["X-Shopify-Access-Token"] == "shpat_secret"
	body = _json(first)
	assert body["query"] == shopify.TOOLS[1].body["query"]
	assert body["variables"] == {"first": 5, "query": "status:active"}
	assert _json(second)["variables"] == {"id": "gid://shopify/Order/1", "tags": ["vip"]}


async def test_shopify_agent_orders_drafts_and_updates() -> None:
	"""The typed order, draft order, product and customer mutations send their input objects
	under the schema's argument names, without the inputs the model left out."""
	line = [{"variantId": "gid://shopify/ProductVariant/9", "quantity": 2}]
	seen = await _run(
		shopify,
		{"shop": "acme", "accessToken": "shpat_secret"},
		[
			call_tool(
				"shopify.createOrder",
				lineItems=line,
				email="ada@example.com",
				financialStatus="PAID",
				sendReceipt=True,
			),
			call_tool("shopify.updateOrder", id="gid://shopify/Order/1", note="Gift"),
			call_tool(
				"shopify.createDraftOrder",
				lineItems=line,
				purchasingEntity={"customerId": "gid://shopify/Customer/3"},
			),
			call_tool("shopify.updateDraftOrder", id="gid://shopify/DraftOrder/4", tags=["b2b"]),
			call_tool("shopify.deleteProduct", id="gid://shopify/Product/5"),
			call_tool("shopify.updateCustomer", id="gid://shopify/Customer/3", lastName="King"),
		],
		[{"data": {}}] * 6,
	)
	variables = [_json(r)["variables"] for r in seen]
	assert variables == [
		{
			"order": {"lineItems": line, "email": "ada@example.com", "financialStatus": "PAID"},
			"options": {"sendReceipt": True},
		},
		{"input": {"id": "gid://shopify/Order/1", "note": "Gift"}},
		{
			"input": {
				"lineItems": line,
				"purchasingEntity": {"customerId": "gid://shopify/Customer/3"},
			}
		},
		{"id": "gid://shopify/DraftOrder/4", "input": {"tags": ["b2b"]}},
		{"input": {"id": "gid://shopify/Product/5"}},
		{"input": {"id": "gid://shopify/Customer/3", "lastName": "King"}},
	]
	queries = [_json(r)["query"].split("(")[0] for r in seen]
	assert queries == [
		"mutation CreateOrder",
		"mutation UpdateOrder",
		"mutation CreateDraftOrder",
		"mutation UpdateDraftOrder",
		"mutation DeleteProduct",
		"mutation UpdateCustomer",
	]


async def test_shopify_agent_reads_a_customer_and_closes_a_draft_order() -> None:
	"""Get a customer, invoice a draft order, complete it, mark an order paid:
	the Admin API 2026-10 root fields (customer, draftOrderInvoiceSend, draftOrderComplete,
	orderMarkAsPaid) with their argument names, nothing the model left out."""
	from graphql import parse as parse_graphql

	seen = await _run(
		shopify,
		{"shop": "acme", "accessToken": "shpat_secret"},
		[
			call_tool("shopify.getCustomer", id="gid://shopify/Customer/3"),
			call_tool(
				"shopify.sendDraftOrderInvoice",
				id="gid://shopify/DraftOrder/4",
				email={"to": "ada@example.com", "customMessage": "Your quote"},
			),
			call_tool(
				"shopify.completeDraftOrder", id="gid://shopify/DraftOrder/4", sourceName="phone"
			),
			call_tool("shopify.markOrderAsPaid", id="gid://shopify/Order/7"),
		],
		[{"data": {}}] * 4,
	)
	for request in seen:
		assert str(request.url) == "https://acme.myshopify.com/admin/api/2026-10/graphql.json"
		assert request.headers["X-Shopify-Access-Token"] == "shpat_secret"
	assert [_json(r)["variables"] for r in seen] == [
		{"id": "gid://shopify/Customer/3"},
		{
			"id": "gid://shopify/DraftOrder/4",
			"email": {"to": "ada@example.com", "customMessage": "Your quote"},
		},
		{"id": "gid://shopify/DraftOrder/4", "sourceName": "phone"},
		{"input": {"id": "gid://shopify/Order/7"}},
	]
	roots = [
		parse_graphql(_json(r)["query"]).definitions[0].selection_set.selections[0].name.value
		for r in seen
	]
	assert roots == ["customer", "draftOrderInvoiceSend", "draftOrderComplete", "orderMarkAsPaid"]


async def test_shopify_agent_refunds_a_line_item_to_the_original_payment() -> None:
	"""getOrder gives the transactions a refund goes back through (id, gateway); createRefund
	sends refundCreate's RefundInput (Admin API 2026-10) with the line items, the shipping and
	the refund transaction, nothing the model left out, and the @idempotent key it requires."""
	from graphql import parse as parse_graphql

	refund = {
		"orderId": "gid://shopify/Order/7",
		"refundLineItems": [
			{"lineItemId": "gid://shopify/LineItem/9", "quantity": 1, "restockType": "RETURN"}
		],
		"shipping": {"fullRefund": True},
		"transactions": [
			{
				"orderId": "gid://shopify/Order/7",
				"parentId": "gid://shopify/OrderTransaction/5",
				"gateway": "shopify_payments",
				"kind": "REFUND",
				"amount": "24.99",
			}
		],
		"notify": True,
	}
	seen = await _run(
		shopify,
		{"shop": "acme", "accessToken": "shpat_secret"},
		[
			call_tool("shopify.getOrder", id="gid://shopify/Order/7"),
			call_tool("shopify.createRefund", **refund),
		],
		[{"data": {}}] * 2,
	)
	order, created = seen
	(selection,) = parse_graphql(_json(order)["query"]).definitions[0].selection_set.selections
	fields = {f.name.value: f for f in selection.selection_set.selections}
	transaction = {f.name.value for f in fields["transactions"].selection_set.selections}
	assert {"id", "kind", "status", "gateway"} <= transaction
	body = _json(created)
	(mutation,) = parse_graphql(body["query"]).definitions[0].selection_set.selections
	assert mutation.name.value == "refundCreate"
	assert [d.name.value for d in mutation.directives] == ["idempotent"]
	key = body["variables"].pop("idempotencyKey")
	assert body["variables"] == {"input": refund}
	assert uuid.UUID(key).version == 5  # the call's key (ToolContext.idempotency_key)


async def test_stripe_agent_creates_a_customer_then_a_checkout_session() -> None:
	"""Stripe: form-encoded nested bodies, version header, idempotency key, bearer key."""
	seen = await _run(
		stripe,
		{"apiKey": "sk_test_secret"},
		[
			call_tool(
				"stripe.createCustomer",
				email="ada@example.com",
				metadata={"plan": "pro"},
				idempotency_key="key-1",
			),
			call_tool(
				"stripe.createCheckoutSession",
				mode="payment",
				line_items=[{"price": "price_1", "quantity": 2}],
				success_url="https://example.com/ok",
			),
		],
		[{"id": "cus_1"}, {"id": "cs_1", "url": "https://checkout.stripe.com/x"}],
	)
	first, second = seen
	assert (first.method, str(first.url)) == ("POST", "https://api.stripe.com/v1/customers")
	assert first.headers["Authorization"] == "Bearer sk_test_secret"
	assert first.headers["Stripe-Version"] == "2026-10-28.endive"
	assert first.headers["Idempotency-Key"] == "key-1"
	assert "Stripe-Account" not in first.headers
	assert first.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
	assert parse_qsl(first.content.decode()) == [
		("email", "ada@example.com"),
		("metadata[plan]", "pro"),
	]
	assert str(second.url) == "https://api.stripe.com/v1/checkout/sessions"
	# made by the engine from the run's call id (uuid5), so a replayed call sends the same key
	assert uuid.UUID(second.headers["Idempotency-Key"]).version == 5
	assert parse_qsl(second.content.decode()) == [
		("mode", "payment"),
		("line_items[0][price]", "price_1"),
		("line_items[0][quantity]", "2"),
		("success_url", "https://example.com/ok"),
	]


async def test_stripe_retries_a_failed_write_with_the_same_key() -> None:
	"""A 500 on a Stripe POST is retried once with the same generated Idempotency-Key."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		if len(seen) == 1:
			return httpx.Response(500, json={"error": {"message": "try again"}})
		return httpx.Response(200, json={"id": "cus_1"})

	async def no_sleep(_: float) -> None:
		return None

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	tool = next(t for t in stripe.TOOLS if t.handle == "createCustomer")
	context = ToolContext(
		agent="a",
		integration="stripe",
		config={"apiKey": "sk_test_secret"},
		http=lambda: client,
		extras={"retry_policy": RetryPolicy(sleep=no_sleep)},
	)
	out = await execute_http_tool(tool, stripe.INTEGRATION, {"email": "a@example.com"}, context)
	assert out == {"id": "cus_1"}
	assert len(seen) == 2
	assert seen[0].headers["Idempotency-Key"] == seen[1].headers["Idempotency-Key"]


async def test_shopify_graphql_errors_and_oauth_token_header() -> None:
	"""Shopify: top-level GraphQL errors fail the tool; OAuth sends the token only in its header."""
	seen: list[httpx.Request] = []
	replies = [
		httpx.Response(200, json={"errors": [{"message": "Throttled"}]}),
		httpx.Response(200, json={"data": {"shop": {"name": "Acme"}}}),
	]

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return replies[len(seen) - 1]

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[shopify], entry_points=False, http_client=http)
	config = {
		"shop": "acme",
		"accessToken": "shpat_oauth_token",
		"expiryDate": "2100-01-01T00:00:00Z",
		"clientId": "cid",
		"clientSecret": "csecret",
		"refreshToken": "refresh-tok",
	}
	model = ScriptedModel(
		[
			call_tool("shopify.getShop"),
			call_tool("shopify.getShop"),
			finish(result="done"),
		]
	)
	events: list = []
	agent = om.create_agent(
		name="Tester",
		model=model,
		integrations=[
			{"integration": "shopify", "credential": {"type": "oauth2", "config": config}}
		],
	)
	agent.on("tool:response", events.append)
	await agent.run("Shop name?")
	await http.aclose()
	assert [e.error for e in events] == [True, False]
	assert "Throttled" in json.dumps(events[0].response)
	for request in seen:
		assert request.headers["X-Shopify-Access-Token"] == "shpat_oauth_token"
		assert "authorization" not in request.headers


async def test_etsy_agent_reads_receipts_then_adds_tracking() -> None:
	"""Etsy: x-api-key keystring:secret plus the OAuth bearer; the shipment is JSON, as Etsy's
	document types createReceiptShipment's body (application/json)."""
	config = {
		"apiKey": "keystring1",
		"sharedSecret": "secret1",
		"accessToken": "12345678.tokenabc",
		"expiryDate": 4102444800000,
	}
	seen = await _run(
		etsy,
		config,
		[
			call_tool("etsy.listReceipts", shop_id=42, was_shipped=False, limit=10),
			call_tool(
				"etsy.createReceiptShipment",
				shop_id=42,
				receipt_id=7,
				tracking_code="1Z999",
				carrier_name="ups",
			),
		],
		[{"count": 0, "results": []}, {"receipt_id": 7}],
	)
	first, second = seen
	assert first.url.path == "/v3/application/shops/42/receipts"
	assert parse_qsl(first.url.query.decode()) == [("was_shipped", "false"), ("limit", "10")]
	assert first.headers["x-api-key"] == "keystring1:secret1"
	assert first.headers["Authorization"] == "Bearer 12345678.tokenabc"
	assert (second.method, second.url.path) == (
		"POST",
		"/v3/application/shops/42/receipts/7/tracking",
	)
	assert second.headers["Content-Type"] == "application/json"
	assert json.loads(second.content) == {"tracking_code": "1Z999", "carrier_name": "ups"}


async def test_etsy_agent_lists_a_listings_images_then_deletes_one() -> None:
	"""getListingImages and deleteListingImage (Etsy Open API v3): the images of a listing, then
	a DELETE of one under its shop, with no body."""
	config = {"apiKey": "keystring1", "sharedSecret": "secret1", "accessToken": "1.tok"}
	seen = await _run(
		etsy,
		config,
		[
			call_tool("etsy.listListingImages", listing_id=99),
			call_tool("etsy.deleteListingImage", shop_id=42, listing_id=99, listing_image_id=555),
		],
		[{"count": 1, "results": [{"listing_image_id": 555, "rank": 2}]}, {}],
	)
	images, delete = seen
	assert (images.method, str(images.url)) == (
		"GET",
		"https://api.etsy.com/v3/application/listings/99/images",
	)
	assert (delete.method, str(delete.url), delete.content) == (
		"DELETE",
		"https://api.etsy.com/v3/application/shops/42/listings/99/images/555",
		b"",
	)
	assert delete.headers["x-api-key"] == "keystring1:secret1"


async def test_etsy_agent_creates_a_return_policy_and_lists_with_includes() -> None:
	"""Etsy: includes repeats its key; a return policy is form-encoded, then set on a listing."""
	config = {"apiKey": "keystring1", "sharedSecret": "secret1", "accessToken": "1.tok"}
	seen = await _run(
		etsy,
		config,
		[
			call_tool("etsy.listShopListings", shop_id=42, includes=["Images", "Shop"]),
			call_tool(
				"etsy.createReturnPolicy",
				shop_id=42,
				accepts_returns=True,
				accepts_exchanges=False,
				return_deadline=30,
			),
			call_tool("etsy.updateListing", shop_id=42, listing_id=9, return_policy_id=77),
		],
		[{"count": 0, "results": []}, {"return_policy_id": 77}, {"listing_id": 9}],
	)
	listings, policy, update = seen
	query = parse_qsl(listings.url.query.decode())
	assert [v for k, v in query if k == "includes"] == ["Images", "Shop"]
	assert (policy.method, policy.url.path) == ("POST", "/v3/application/shops/42/policies/return")
	assert parse_qsl(policy.content.decode()) == [
		("accepts_returns", "true"),
		("accepts_exchanges", "false"),
		("return_deadline", "30"),
	]
	assert policy.headers["x-api-key"] == "keystring1:secret1"
	assert (update.method, update.url.path) == ("PATCH", "/v3/application/shops/42/listings/9")
	assert parse_qsl(update.content.decode()) == [("return_policy_id", "77")]


async def test_github_agent_reads_then_writes_a_file() -> None:
	"""GitHub: version headers, path kept with slashes, text content base64-encoded on PUT."""
	seen = await _run(
		github,
		{"apiKey": "github_pat_secret"},
		[
			call_tool(
				"github.getContent", owner="octo", repo="site", path="docs/index.md", ref="main"
			),
			call_tool(
				"github.putFile",
				owner="octo",
				repo="site",
				path="docs/index.md",
				message="Update docs",
				content="Hello",
				sha="abc",
			),
		],
		[{"sha": "abc", "content": "SGk="}, {"commit": {"sha": "def"}}],
	)
	first, second = seen
	assert (
		str(first.url) == "https://api.github.com/repos/octo/site/contents/docs/index.md?ref=main"
	)
	assert first.headers["X-GitHub-Api-Version"] == "2026-03-10"
	assert first.headers["Accept"] == "application/vnd.github+json"
	assert first.headers["Authorization"] == "Bearer github_pat_secret"
	assert second.method == "PUT"
	assert str(second.url) == "https://api.github.com/repos/octo/site/contents/docs/index.md"
	assert second.headers["Authorization"] == "Bearer github_pat_secret"
	assert second.headers["X-GitHub-Api-Version"] == "2026-03-10"
	assert _json(second) == {"message": "Update docs", "content": "SGVsbG8=", "sha": "abc"}


async def test_stripe_agent_creates_lists_and_deactivates_a_payment_link() -> None:
	"""Stripe payment links: create (nested line items and redirect), list, deactivate."""
	seen = await _run(
		stripe,
		{"apiKey": "sk_test_secret"},
		[
			call_tool(
				"stripe.createPaymentLink",
				line_items=[
					{
						"price": "price_1",
						"quantity": 1,
						"adjustable_quantity": {"enabled": True, "maximum": 5},
					}
				],
				after_completion={"type": "redirect", "redirect": {"url": "https://a.example/ok"}},
				metadata={"campaign": "spring"},
			),
			call_tool("stripe.listPaymentLinks", active=True, limit=5),
			call_tool("stripe.updatePaymentLink", payment_link="plink_1", active=False),
		],
		[
			{"id": "plink_1", "url": "https://buy.stripe.com/x"},
			{"data": [], "has_more": False},
			{"id": "plink_1", "active": False},
		],
	)
	create, listed, update = seen
	assert (create.method, str(create.url)) == ("POST", "https://api.stripe.com/v1/payment_links")
	assert create.headers["Authorization"] == "Bearer sk_test_secret"
	assert create.headers["Stripe-Version"] == stripe.STRIPE_VERSION
	assert uuid.UUID(create.headers["Idempotency-Key"]).version == 5
	assert parse_qsl(create.content.decode()) == [
		("line_items[0][price]", "price_1"),
		("line_items[0][quantity]", "1"),
		("line_items[0][adjustable_quantity][enabled]", "true"),
		("line_items[0][adjustable_quantity][maximum]", "5"),
		("after_completion[type]", "redirect"),
		("after_completion[redirect][url]", "https://a.example/ok"),
		("metadata[campaign]", "spring"),
	]
	assert (listed.method, listed.url.path) == ("GET", "/v1/payment_links")
	assert parse_qsl(listed.url.query.decode()) == [("active", "true"), ("limit", "5")]
	assert listed.content == b""
	assert (update.method, str(update.url)) == (
		"POST",
		"https://api.stripe.com/v1/payment_links/plink_1",
	)
	assert parse_qsl(update.content.decode()) == [("active", "false")]


async def test_stripe_agent_sends_then_voids_an_invoice() -> None:
	"""Stripe invoices: send and void are bodiless POSTs to the invoice's action paths."""
	seen = await _run(
		stripe,
		{"apiKey": "sk_test_secret", "accountId": "acct_9"},
		[
			call_tool("stripe.sendInvoice", invoice="in_1", idempotency_key="send-1"),
			call_tool("stripe.voidInvoice", invoice="in_1"),
		],
		[{"id": "in_1", "status": "open"}, {"id": "in_1", "status": "void"}],
	)
	send, void = seen
	assert (send.method, str(send.url)) == ("POST", "https://api.stripe.com/v1/invoices/in_1/send")
	assert send.headers["Idempotency-Key"] == "send-1"
	assert send.headers["Stripe-Account"] == "acct_9"
	assert send.headers["Authorization"] == "Bearer sk_test_secret"
	assert (void.method, str(void.url)) == ("POST", "https://api.stripe.com/v1/invoices/in_1/void")
	assert uuid.UUID(void.headers["Idempotency-Key"]).version == 5
	assert parse_qsl(send.content.decode()) == parse_qsl(void.content.decode()) == []


async def test_github_agent_branches_reviews_and_deletes() -> None:
	"""GitHub: list commits, create a branch from the head, review a pull, submit, delete a file."""
	seen = await _run(
		github,
		{"apiKey": "github_pat_secret"},
		[
			call_tool(
				"github.listCommits",
				owner="octo",
				repo="site",
				sha="main",
				since="2026-01-01T00:00:00Z",
				per_page=1,
			),
			call_tool(
				"github.createBranch", owner="octo", repo="site", ref="refs/heads/fix", sha="c0ffee"
			),
			call_tool(
				"github.createPullReview",
				owner="octo",
				repo="site",
				pull_number=7,
				body="Looks good",
				comments=[{"path": "docs/a.md", "line": 3, "side": "RIGHT", "body": "Typo"}],
			),
			call_tool("github.listPullReviews", owner="octo", repo="site", pull_number=7),
			call_tool(
				"github.submitPullReview",
				owner="octo",
				repo="site",
				pull_number=7,
				review_id=42,
				event="APPROVE",
			),
			call_tool(
				"github.deleteFile",
				owner="octo",
				repo="site",
				path="docs/old page.md",
				message="Remove old page",
				sha="b10b",
				branch="fix",
			),
		],
		[[{"sha": "c0ffee"}], {"ref": "refs/heads/fix"}, {"id": 42}, [], {"id": 42}, {}],
	)
	commits, branch, review, reviews, submit, delete = seen
	base = "https://api.github.com/repos/octo/site"
	assert (commits.method, str(commits.url)) == (
		"GET",
		f"{base}/commits?sha=main&since=2026-01-01T00%3A00%3A00Z&per_page=1",
	)
	for request in seen:
		assert request.headers["Authorization"] == "Bearer github_pat_secret"
		assert request.headers["X-GitHub-Api-Version"] == github.GITHUB_API_VERSION
	assert (branch.method, str(branch.url)) == ("POST", f"{base}/git/refs")
	assert _json(branch) == {"ref": "refs/heads/fix", "sha": "c0ffee"}
	assert (review.method, str(review.url)) == ("POST", f"{base}/pulls/7/reviews")
	assert _json(review) == {
		"body": "Looks good",
		"comments": [{"path": "docs/a.md", "line": 3, "side": "RIGHT", "body": "Typo"}],
	}
	assert (reviews.method, str(reviews.url)) == ("GET", f"{base}/pulls/7/reviews")
	assert (submit.method, str(submit.url)) == ("POST", f"{base}/pulls/7/reviews/42/events")
	assert _json(submit) == {"event": "APPROVE"}
	assert (delete.method, str(delete.url)) == ("DELETE", f"{base}/contents/docs/old%20page.md")
	assert _json(delete) == {"message": "Remove old page", "sha": "b10b", "branch": "fix"}


async def test_github_agent_triages_a_pull_and_follows_its_checks() -> None:
	"""GitHub: label an issue and take a label off, ask for reviewers, list a pull's files, get
	a workflow run: each request as GitHub's OpenAPI (2026-03-10) gives it (issues/add-labels,
	issues/remove-label, pulls/request-reviewers, pulls/list-files, actions/get-workflow-run)."""
	seen = await _run(
		github,
		{"apiKey": "github_pat_secret"},
		[
			call_tool(
				"github.addLabels", owner="octo", repo="site", issue_number=7, labels=["bug", "ui"]
			),
			call_tool(
				"github.removeLabel", owner="octo", repo="site", issue_number=7, name="needs/triage"
			),
			call_tool(
				"github.requestReviewers",
				owner="octo",
				repo="site",
				pull_number=7,
				reviewers=["ada"],
				team_reviewers=["docs"],
			),
			call_tool(
				"github.listPullFiles", owner="octo", repo="site", pull_number=7, per_page=100
			),
			call_tool("github.getWorkflowRun", owner="octo", repo="site", run_id=30433642),
		],
		[[{"name": "bug"}], [], {"number": 7}, [{"filename": "a.md"}], {"status": "completed"}],
	)
	add, remove, reviewers, files, run = seen
	base = "https://api.github.com/repos/octo/site"
	for request in seen:
		assert request.headers["Authorization"] == "Bearer github_pat_secret"
		assert request.headers["X-GitHub-Api-Version"] == github.GITHUB_API_VERSION
		assert request.headers["Accept"] == "application/vnd.github+json"
	assert (add.method, str(add.url)) == ("POST", f"{base}/issues/7/labels")
	assert _json(add) == {"labels": ["bug", "ui"]}
	assert (remove.method, str(remove.url)) == ("DELETE", f"{base}/issues/7/labels/needs%2Ftriage")
	assert remove.content == b""
	assert (reviewers.method, str(reviewers.url)) == ("POST", f"{base}/pulls/7/requested_reviewers")
	assert _json(reviewers) == {"reviewers": ["ada"], "team_reviewers": ["docs"]}
	assert (files.method, str(files.url)) == ("GET", f"{base}/pulls/7/files?per_page=100")
	assert (run.method, str(run.url)) == ("GET", f"{base}/actions/runs/30433642")


async def test_github_agent_lists_branches_and_releases() -> None:
	"""GitHub: the branches (repos/list-branches, with protected) and the releases
	(repos/list-releases, repos/get-latest-release), paged lists returning their Link header."""
	link = '<https://api.github.com/repositories/1/branches?page=2>; rel="next"'
	replies = [
		httpx.Response(200, json=[{"name": "main"}], headers={"Link": link}),
		httpx.Response(200, json=[{"tag_name": "v1.2.0"}]),
		httpx.Response(200, json={"tag_name": "v1.2.0"}),
	]
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return replies[len(seen) - 1]

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(
		plugins=[github],
		entry_points=False,
		http_client=http,
		integrations={"github": {"apiKey": "github_pat_secret"}},
	)
	model = ScriptedModel(
		[
			call_tool("github.listBranches", owner="octo", repo="site", protected=True),
			call_tool("github.listReleases", owner="octo", repo="site", per_page=5),
			call_tool("github.getLatestRelease", owner="octo", repo="site"),
			finish(result="done"),
		]
	)
	agent = om.create_agent(name="Tester", model=model, integrations=["github"])
	await agent.run("List.")
	await http.aclose()
	branches, releases, latest = seen
	base = "https://api.github.com/repos/octo/site"
	assert (branches.method, str(branches.url)) == ("GET", f"{base}/branches?protected=true")
	assert (releases.method, str(releases.url)) == ("GET", f"{base}/releases?per_page=5")
	assert (latest.method, str(latest.url)) == ("GET", f"{base}/releases/latest")
	(result,) = json.loads(model.requests[1].messages[-1].content)["results"]
	assert result["result"]["headers"]["Link"] == link


async def test_github_create_branch_refuses_a_short_ref() -> None:
	"""A branch name without refs/heads/ is refused before any request, naming the field."""
	seen, handler = _recorder([])
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(
		plugins=[github],
		entry_points=False,
		http_client=http,
		integrations={"github": {"apiKey": "github_pat_secret"}},
	)
	model = ScriptedModel(
		[
			call_tool("github.createBranch", owner="o", repo="r", ref="fix", sha="c0ffee"),
			finish(result="done"),
		]
	)
	agent = om.create_agent(name="T", model=model, integrations=["github"], taint_policy="allow")
	await agent.run("Branch.")
	assert seen == []
	turn = json.dumps(model.last_turn())
	assert "ref: String should match pattern" in turn and "refs/heads/" in turn
	await http.aclose()


def _throttled(requested: float, available: float, restore: float) -> httpx.Response:
	"""Shopify's throttled reply: HTTP 200, THROTTLED in errors, the bucket in extensions.cost.

	https://shopify.dev/docs/api/usage/limits and the Admin API's status and error codes
	("THROTTLED: The client has exceeded the rate limit. Similar to 429 Too Many Requests").
	"""
	return httpx.Response(
		200,
		json={
			"errors": [
				{
					"message": "Throttled",
					"extensions": {
						"code": "THROTTLED",
						"documentation": "https://shopify.dev/api/usage/limits",
					},
				}
			],
			"extensions": {
				"cost": {
					"requestedQueryCost": requested,
					"actualQueryCost": None,
					"throttleStatus": {
						"maximumAvailable": 2000.0,
						"currentlyAvailable": available,
						"restoreRate": restore,
					},
				}
			},
		},
	)


def _shopify_context(handler: Callable[[httpx.Request], httpx.Response], waits: list[float]):
	async def sleep(seconds: float) -> None:
		waits.append(seconds)

	client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return ToolContext(
		agent="a",
		integration="shopify",
		config={"shop": "acme", "accessToken": "shpat_x"},
		http=lambda: client,
		extras={"retry_policy": RetryPolicy(sleep=sleep)},
	)


@pytest.mark.parametrize("handle", ["getShop", "markOrderAsPaid"])
async def test_shopify_throttled_reply_is_retried_after_the_bucket_refills(handle: str) -> None:
	"""A THROTTLED 200 ran nothing (actualQueryCost null): the query or mutation is sent again
	after the wait its cost needs at the restore rate, like a 429."""
	seen: list[httpx.Request] = []
	waits: list[float] = []
	replies = [_throttled(752, 666, 50.0), httpx.Response(200, json={"data": {"ok": True}})]

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return replies[len(seen) - 1]

	tool = next(t for t in shopify.TOOLS if t.handle == handle)
	args = {"id": "gid://shopify/Order/1"} if handle == "markOrderAsPaid" else {}
	out = await execute_http_tool(tool, shopify.INTEGRATION, args, _shopify_context(handler, waits))
	assert out == {"data": {"ok": True}}
	assert len(seen) == 2 and seen[0].content == seen[1].content
	assert waits == [pytest.approx((752 - 666) / 50.0)]


async def test_shopify_throttling_that_lasts_is_a_retryable_tool_error() -> None:
	"""When every attempt is throttled, the error says so and is retryable, as a 429's is."""
	seen: list[httpx.Request] = []
	waits: list[float] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return _throttled(100, 0, 100.0)

	tool = next(t for t in shopify.TOOLS if t.handle == "getShop")
	with pytest.raises(ToolError) as caught:
		await execute_http_tool(tool, shopify.INTEGRATION, {}, _shopify_context(handler, waits))
	assert len(seen) == RetryPolicy().attempts
	assert caught.value.retryable
	assert "Throttled" in caught.value.message


async def test_shopify_keys_each_refund_and_adjustment_by_its_own_call() -> None:
	"""Two identical createRefund (or adjustInventory) calls are two refunds: each sends its own
	@idempotent key, so Shopify applies both; the model has no key to give, and one it gives
	anyway is refused rather than sent."""
	refund = {"orderId": "gid://shopify/Order/7", "shipping": {"fullRefund": True}}
	change = {
		"name": "available",
		"reason": "correction",
		"changes": [
			{
				"inventoryItemId": "gid://shopify/InventoryItem/1",
				"locationId": "gid://shopify/Location/1",
				"delta": 1,
				"changeFromQuantity": None,
			}
		],
	}
	seen = await _run(
		shopify,
		{"shop": "acme", "accessToken": "shpat_secret"},
		[
			[call_tool("shopify.createRefund", **refund)] * 2,
			[call_tool("shopify.adjustInventory", **change)] * 2,
		],
		[{"data": {}}] * 4,
	)
	keys = [_json(r)["variables"]["idempotencyKey"] for r in seen]
	assert len(set(keys)) == 4
	for handle in ("createRefund", "adjustInventory"):
		(tool,) = [t for t in shopify.TOOLS if t.handle == handle]
		assert "idempotencyKey" not in tool.input_schema["properties"]
		assert tool.checked_input_schema()["additionalProperties"] is False
