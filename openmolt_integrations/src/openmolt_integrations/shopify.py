"""Shopify Admin GraphQL API: shop, products, orders and draft orders, customers, inventory.

Every tool is one GraphQL document POSTed as JSON ``{query, variables}`` to
``https://<shop>.myshopify.com/admin/api/2026-10/graphql.json``; the shop comes from the
credential config. Shopify answers HTTP 200 even when something went wrong: a mutation reports
problems in its payload's ``userErrors`` (nothing was changed when it is non-empty), and a query
error arrives in a top-level ``errors`` list (with no ``data``, the API setup's
the ``graphql_errors`` response check makes it a tool error). Every mutation here selects ``userErrors`` and every
tool's description tells the model to check them. A request turned away by the rate limit
(``THROTTLED``, in a 200, nothing run) is sent again after the wait its cost needs
(`openmolt_integrations._shopify.throttled`). Lists are Relay connections: pass ``after`` =
``pageInfo.endCursor`` while ``pageInfo.hasNextPage``.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.extensions import graphql_errors
from openmolt_core.integrations.schema import IDEMPOTENCY_KEY as _CALL_KEY
from openmolt_core.integrations.schema import array, boolean, integer, obj, passthrough, string
from openmolt_integrations._shopify import throttled

__all__ = ["INTEGRATION", "SHOPIFY_API_VERSION", "TAGGABLE", "TOOLS", "register_integrations"]

SHOPIFY_API_VERSION = "2026-10"
"""The Admin API version in every request URL."""


_USER_ERRORS_NOTE = (
	" Check `userErrors` in the result: if it is not empty, nothing was changed and each entry "
	"says which field was wrong and why. A top-level `errors` list means the request itself failed."
)
_USER_ERRORS_SCHEMA = {
	"type": "array",
	"description": "Validation problems; empty on success.",
	"items": {
		"type": "object",
		"properties": {
			"field": {"type": ["array", "null"], "items": {"type": "string"}},
			"message": {"type": "string"},
		},
	},
}


def _mutation_output(field: str) -> dict[str, Any]:
	return {
		"type": "object",
		"properties": {
			"data": {
				"type": "object",
				"properties": {
					field: {
						"type": "object",
						"properties": {"userErrors": _USER_ERRORS_SCHEMA},
					}
				},
			},
			"errors": {
				"type": "array",
				"description": "Request-level GraphQL errors (e.g. THROTTLED, access denied).",
				"items": {"type": "object"},
			},
		},
	}


_CONNECTION_OUTPUT = {
	"type": "object",
	"properties": {
		"data": {"type": "object"},
		"errors": {"type": "array", "items": {"type": "object"}},
		"extensions": {
			"type": "object",
			"description": "cost.throttleStatus shows the remaining query budget.",
		},
	},
}

_FIRST = integer("How many to return (1-250).", minimum=1, maximum=250, default=20)
_AFTER = string("pageInfo.endCursor of the previous page, to get the next page.")
_REVERSE = boolean("Reverse the sort order.", default=False)


def _gid(kind: str) -> dict[str, Any]:
	return string(f"The {kind} global id, e.g. gid://shopify/{kind}/1234567890.")


def _graphql(
	handle: str,
	description: str,
	scopes: list[str],
	query: str,
	variables: dict[str, Any],
	properties: dict[str, Any],
	required: list[str] | None = None,
	output: dict[str, Any] | None = None,
) -> HttpTool:
	schema: dict[str, Any] = {"type": "object", "properties": properties}
	if required:
		schema["required"] = required
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method="POST",
		endpoint="/graphql.json",
		body={"query": " ".join(query.split()), "variables": variables},
		input_schema=schema,
		output_schema=output,
	)


_MONEY = "shopMoney { amount currencyCode }"
_PRODUCT_FIELDS = (
	"id title handle status vendor productType tags totalInventory createdAt updatedAt "
	"variants(first: 10) { nodes { id title sku price inventoryQuantity } }"
)
_PRODUCT_INPUT = {
	"title": string("Product title."),
	"descriptionHtml": string("Description, as HTML."),
	"vendor": string("Vendor or brand."),
	"productType": string("Product type, for grouping and search."),
	"tags": array({"type": "string"}, "Tags (replace all existing tags)."),
	"status": string(
		"ACTIVE (sellable), DRAFT (hidden) or ARCHIVED.", enum=["ACTIVE", "DRAFT", "ARCHIVED"]
	),
	"handle": string("URL handle; default: derived from the title."),
}

_MAILING_ADDRESS = obj(
	{
		"firstName": string("First name."),
		"lastName": string("Last name."),
		"company": string("Company."),
		"address1": string("Street address."),
		"address2": string("Apartment, suite, etc."),
		"city": string("City."),
		"provinceCode": string("Province or state code, e.g. ON or CA."),
		"zip": string("Postal or ZIP code."),
		"countryCode": string("Two-letter country code, e.g. CA.", pattern="^[A-Z]{2}$"),
		"phone": string("Phone number in E.164 format."),
	},
	description="A postal address (MailingAddressInput).",
)
_MONEY_INPUT = obj(
	{
		"amount": string("Decimal amount, e.g. 19.99."),
		"currencyCode": string("Three-letter currency code, e.g. USD.", pattern="^[A-Z]{3}$"),
	},
	["amount", "currencyCode"],
	description='An amount, e.g. {"amount": "19.99", "currencyCode": "USD"}.',
)
_ATTRIBUTES = array(
	obj({"key": string("Name."), "value": string("Value.")}, ["key", "value"]),
	'Custom attributes, e.g. [{"key": "gift", "value": "yes"}].',
)
_ORDER_LINE_ITEMS = array(
	obj(
		{
			"variantId": string("The variant's global id (or give title and priceSet)."),
			"quantity": integer("How many.", minimum=1),
			"title": string("Title of a custom item (no variant)."),
			"priceSet": obj(
				{"shopMoney": _MONEY_INPUT},
				["shopMoney"],
				description="Unit price of a custom item, in the shop's currency.",
			),
			"sku": string("SKU."),
			"requiresShipping": boolean("Whether the item needs shipping."),
			"taxable": boolean("Whether the item is taxable."),
		},
		["quantity"],
	),
	'Items, e.g. [{"variantId": "gid://shopify/ProductVariant/1", "quantity": 2}] or a custom '
	'item [{"title": "Gift wrap", "quantity": 1, "priceSet": {"shopMoney": {"amount": "5.00", '
	'"currencyCode": "USD"}}}].',
	minItems=1,
)
_DRAFT_LINE_ITEMS = array(
	obj(
		{
			"variantId": string("The variant's global id (or give title and the price)."),
			"quantity": integer("How many.", minimum=1),
			"title": string("Title of a custom item (no variant)."),
			"originalUnitPriceWithCurrency": _MONEY_INPUT,
			"sku": string("SKU."),
			"requiresShipping": boolean("Whether the item needs shipping."),
			"taxable": boolean("Whether the item is taxable."),
		},
		["quantity"],
	),
	'Items, e.g. [{"variantId": "gid://shopify/ProductVariant/1", "quantity": 1}] or a custom '
	'item [{"title": "Engraving", "quantity": 1, "originalUnitPriceWithCurrency": '
	'{"amount": "10.00", "currencyCode": "USD"}}].',
	minItems=1,
)
# DraftOrderInput fields the draft order tools write (create and update take the same input).
_DRAFT_ORDER_INPUT = {
	"lineItems": _DRAFT_LINE_ITEMS,
	"purchasingEntity": obj(
		{"customerId": string("The customer's global id, e.g. gid://shopify/Customer/1.")},
		description='Who buys: {"customerId": "gid://shopify/Customer/1"}.',
	),
	"email": string("The customer's email address."),
	"phone": string("The customer's phone number."),
	"note": string("Note on the draft order."),
	"tags": array({"type": "string"}, "Tags (replace all existing tags)."),
	"shippingAddress": _MAILING_ADDRESS,
	"billingAddress": _MAILING_ADDRESS,
	"discountCodes": array({"type": "string"}, "Discount codes to apply."),
	"poNumber": string("Purchase order number."),
	"reserveInventoryUntil": string(
		"Hold the items' stock until this time (ISO 8601).", format="date-time"
	),
	"taxExempt": boolean("Whether no tax applies."),
	"visibleToCustomer": boolean("Show the draft order in the customer's account."),
	"customAttributes": _ATTRIBUTES,
}
_DRAFT_ORDER_SELECTION = (
	"draftOrder { id name status invoiceUrl totalPriceSet { "
	+ _MONEY
	+ " } customer { id displayName } } userErrors { field message }"
)
# CustomerInput fields updateCustomer writes.
_CUSTOMER_UPDATE = {
	"email": string("Email address."),
	"phone": string("Phone number in E.164 format, e.g. +16135551111."),
	"firstName": string("First name."),
	"lastName": string("Last name."),
	"note": string("Internal note about the customer."),
	"tags": array({"type": "string"}, "Tags (replace all existing tags)."),
	"locale": string("Preferred language, e.g. en or fr-CA."),
	"taxExempt": boolean("Whether the customer is exempt from taxes."),
}

TAGGABLE = [
	("Product", "product", "write_products"),
	("Order", "order", "write_orders"),
	("Customer", "customer", "write_customers"),
]
"""The resources the tag tools cover: (GraphQL type, label, the Shopify scope writing it).

``tagsAdd`` takes any taggable id, but the access scope it needs is the one writing that
resource. Tool scopes are static, so there is one tool per resource (``addProductTags``...),
each gated on its own scope and refusing ids of other types by pattern: an agent granted only
``write_products`` sees and can call ``addProductTags``.
"""

TOOLS = [
	_graphql(
		"getShop",
		"Get the shop's name, domains, email, currency, time zone and plan.",
		["read_shop"],
		"""query GetShop { shop { id name email myshopifyDomain primaryDomain { url }
		currencyCode ianaTimezone plan { publicDisplayName } } }""",
		{},
		{},
	),
	_graphql(
		"listProducts",
		(
			"List products with their first variants. Filter with Shopify search syntax in "
			"`query`, e.g. status:active, title:*shirt*, vendor:Acme, tag:sale, sku:ABC-1, "
			"updated_at:>2026-11-01."
		),
		["read_products"],
		"""query ListProducts($first: Int = 20, $after: String, $query: String,
		$sortKey: ProductSortKeys = UPDATED_AT, $reverse: Boolean = false) {
		products(first: $first, after: $after, query: $query, sortKey: $sortKey, reverse: $reverse) {
		nodes { """
		+ _PRODUCT_FIELDS
		+ """ } pageInfo { hasNextPage endCursor } } }""",
		passthrough("first", "after", "query", "sortKey", "reverse"),
		{
			"first": _FIRST,
			"after": _AFTER,
			"query": string("Shopify search query, e.g. status:active vendor:Acme."),
			"sortKey": string(
				"Sort field (default UPDATED_AT).",
				enum=[
					"CREATED_AT",
					"ID",
					"INVENTORY_TOTAL",
					"PRODUCT_TYPE",
					"RELEVANCE",
					"TITLE",
					"UPDATED_AT",
					"VENDOR",
				],
			),
			"reverse": _REVERSE,
		},
		output=_CONNECTION_OUTPUT,
	),
	_graphql(
		"getProduct",
		"Get a product with its options, up to 100 variants (price, SKU, stock, inventory item id) and its online store URL.",
		["read_products"],
		"""query GetProduct($id: ID!) { product(id: $id) { id title handle descriptionHtml
		status vendor productType tags totalInventory onlineStoreUrl createdAt updatedAt
		options { id name values } variants(first: 100) { nodes { id title sku barcode price
		compareAtPrice inventoryQuantity selectedOptions { name value }
		inventoryItem { id tracked } } } } }""",
		passthrough("id"),
		{"id": _gid("Product")},
		["id"],
	),
	_graphql(
		"createProduct",
		(
			"Create a product (with one default variant, or with options such as Size and "
			"Color; set prices with updateVariants)." + _USER_ERRORS_NOTE
		),
		["write_products"],
		"""mutation CreateProduct($product: ProductCreateInput!) { productCreate(product: $product) {
		product { id title handle status variants(first: 10) { nodes { id title sku price } } }
		userErrors { field message } } }""",
		{"product": passthrough(*_PRODUCT_INPUT, "productOptions")},
		{
			**_PRODUCT_INPUT,
			"productOptions": array(
				{
					"type": "object",
					"properties": {
						"name": {"type": "string"},
						"values": {
							"type": "array",
							"items": {
								"type": "object",
								"properties": {"name": {"type": "string"}},
							},
						},
					},
				},
				'Options and their values, e.g. [{"name": "Size", "values": [{"name": "S"}, {"name": "M"}]}].',
			),
		},
		["title"],
		_mutation_output("productCreate"),
	),
	_graphql(
		"updateProduct",
		"Update a product's title, description, vendor, type, tags, status or handle."
		+ _USER_ERRORS_NOTE,
		["write_products"],
		"""mutation UpdateProduct($product: ProductUpdateInput!) { productUpdate(product: $product) {
		product { id title handle status tags updatedAt } userErrors { field message } } }""",
		{"product": passthrough("id", *_PRODUCT_INPUT)},
		{"id": _gid("Product"), **_PRODUCT_INPUT},
		["id"],
		_mutation_output("productUpdate"),
	),
	_graphql(
		"updateVariants",
		"Update prices, compare-at prices, barcodes or SKUs of a product's variants."
		+ _USER_ERRORS_NOTE,
		["write_products"],
		"""mutation UpdateVariants($productId: ID!, $variants: [ProductVariantsBulkInput!]!) {
		productVariantsBulkUpdate(productId: $productId, variants: $variants) {
		productVariants { id title sku price compareAtPrice } userErrors { field message } } }""",
		passthrough("productId", "variants"),
		{
			"productId": _gid("Product"),
			"variants": array(
				{
					"type": "object",
					"properties": {
						"id": {"type": "string"},
						"price": {"type": "string"},
						"compareAtPrice": {"type": ["string", "null"]},
						"barcode": {"type": "string"},
						"inventoryItem": {
							"type": "object",
							"properties": {
								"sku": {"type": "string"},
								"tracked": {"type": "boolean"},
							},
						},
					},
					"required": ["id"],
				},
				'Changes, e.g. [{"id": "gid://shopify/ProductVariant/1", "price": "19.99", '
				'"compareAtPrice": "24.99", "inventoryItem": {"sku": "TS-S"}}]. Prices are decimal strings.',
				minItems=1,
			),
		},
		["productId", "variants"],
		_mutation_output("productVariantsBulkUpdate"),
	),
	_graphql(
		"listOrders",
		(
			"List orders, newest first by default. Filter with Shopify search syntax in `query`, "
			"e.g. financial_status:paid, fulfillment_status:unfulfilled, "
			"created_at:>2026-11-01, email:ada@example.com, name:#1001. Without the "
			"read_all_orders access scope, only the last 60 days are visible."
		),
		["read_orders"],
		"""query ListOrders($first: Int = 20, $after: String, $query: String,
		$sortKey: OrderSortKeys = PROCESSED_AT, $reverse: Boolean = true) {
		orders(first: $first, after: $after, query: $query, sortKey: $sortKey, reverse: $reverse) {
		nodes { id name createdAt processedAt cancelledAt displayFinancialStatus
		displayFulfillmentStatus currentTotalPriceSet { """
		+ _MONEY
		+ """ } customer { id displayName } } pageInfo { hasNextPage endCursor } } }""",
		passthrough("first", "after", "query", "sortKey", "reverse"),
		{
			"first": _FIRST,
			"after": _AFTER,
			"query": string("Shopify search query, e.g. financial_status:paid."),
			"sortKey": string(
				"Sort field (default PROCESSED_AT).",
				enum=[
					"CREATED_AT",
					"ID",
					"ORDER_NUMBER",
					"PROCESSED_AT",
					"TOTAL_PRICE",
					"UPDATED_AT",
				],
			),
			"reverse": boolean("Newest first when true (default).", default=True),
		},
		output=_CONNECTION_OUTPUT,
	),
	_graphql(
		"getOrder",
		(
			"Get an order: totals, customer, shipping address, line items, fulfillments, its "
			"fulfillment orders (whose ids and line item ids createFulfillment needs) and its "
			"payment transactions (whose id and gateway createRefund needs)."
		),
		["read_orders"],
		"""query GetOrder($id: ID!) { order(id: $id) { id name email createdAt cancelledAt
		displayFinancialStatus displayFulfillmentStatus note tags
		currentTotalPriceSet { """
		+ _MONEY
		+ """ } customer { id displayName }
		shippingAddress { name address1 address2 city provinceCode zip countryCodeV2 phone }
		lineItems(first: 100) { nodes { id title sku quantity variant { id }
		originalUnitPriceSet { """
		+ _MONEY
		+ """ } } }
		fulfillments(first: 20) { id status trackingInfo { company number url } }
		fulfillmentOrders(first: 20) { nodes { id status assignedLocation { name location { id } }
		lineItems(first: 100) { nodes { id remainingQuantity lineItem { id title } } } } }
		refundable totalReceivedSet { """
		+ _MONEY
		+ """ } totalRefundedSet { """
		+ _MONEY
		+ """ } transactions(first: 20) { id kind status gateway createdAt amountSet { """
		+ _MONEY
		+ """ } } } }""",
		passthrough("id"),
		{"id": _gid("Order")},
		["id"],
	),
	_graphql(
		"cancelOrder",
		(
			"Cancel an order (cannot be undone), optionally refunding to the original payment "
			"methods and restocking. Runs as a background job." + _USER_ERRORS_NOTE
		),
		["write_orders"],
		"""mutation CancelOrder($orderId: ID!, $reason: OrderCancelReason!, $restock: Boolean!,
		$refundMethod: OrderCancelRefundMethodInput, $notifyCustomer: Boolean = false,
		$staffNote: String) { orderCancel(orderId: $orderId, reason: $reason, restock: $restock,
		refundMethod: $refundMethod, notifyCustomer: $notifyCustomer, staffNote: $staffNote) {
		job { id done } orderCancelUserErrors { field message code } } }""",
		passthrough("orderId", "reason", "restock", "refundMethod", "notifyCustomer", "staffNote"),
		{
			"orderId": _gid("Order"),
			"reason": string(
				"Why the order is cancelled.",
				enum=["CUSTOMER", "DECLINED", "FRAUD", "INVENTORY", "OTHER", "STAFF"],
			),
			"restock": boolean("Put the items back in stock."),
			"refundMethod": obj(
				{"originalPaymentMethodsRefund": {"type": "boolean"}},
				description='How to refund; {"originalPaymentMethodsRefund": true} refunds to the original '
				"payment methods. Omit to cancel without a refund.",
			),
			"notifyCustomer": boolean("Email the customer.", default=False),
			"staffNote": string("Internal note (not shown to the customer)."),
		},
		["orderId", "reason", "restock"],
		{
			"type": "object",
			"properties": {
				"data": {
					"type": "object",
					"properties": {
						"orderCancel": {
							"type": "object",
							"properties": {"orderCancelUserErrors": _USER_ERRORS_SCHEMA},
						}
					},
				}
			},
		},
	),
	_graphql(
		"createRefund",
		(
			"Refund an order: line items (restocked or not), shipping, and the money back through "
			"the order's payment: one REFUND transaction per payment, its parentId the SALE or "
			"CAPTURE transaction's id and its gateway from getOrder, the amounts together at most "
			"its totalReceivedSet less totalRefundedSet. Without transactions nothing is paid "
			"back. Cannot be undone." + _USER_ERRORS_NOTE
		),
		["write_orders"],
		# refundCreate requires @idempotent since 2026-04 (its Admin API reference): the key is
		# the call's own, so a retry or a durable replay refunds once and another call anew.
		"""mutation CreateRefund($input: RefundInput!, $idempotencyKey: String!) {
		refundCreate(input: $input) @idempotent(key: $idempotencyKey) { refund {
		id createdAt note totalRefundedSet { """
		+ _MONEY
		+ """ } } order { id displayFinancialStatus } userErrors { field message } } }""",
		{
			"idempotencyKey": _CALL_KEY,
			"input": passthrough(
				"orderId", "refundLineItems", "shipping", "transactions", "note", "notify"
			),
		},
		{
			"orderId": _gid("Order"),
			"refundLineItems": array(
				obj(
					{
						"lineItemId": string("The order line item's global id (getOrder)."),
						"quantity": integer("How many to refund.", minimum=1),
						"restockType": string(
							"What happens to the stock: RETURN (restock after a return), "
							"CANCEL (restock, never shipped) or NO_RESTOCK.",
							enum=["RETURN", "CANCEL", "NO_RESTOCK"],
						),
						"locationId": string("Where to restock (a location's global id)."),
					},
					["lineItemId", "quantity"],
				),
				'Items, e.g. [{"lineItemId": "gid://shopify/LineItem/1", "quantity": 1, '
				'"restockType": "RETURN"}].',
			),
			"shipping": obj(
				{
					"fullRefund": {"type": "boolean"},
					"amount": string("A decimal amount, e.g. 4.99."),
				},
				description='Shipping to refund: {"fullRefund": true} or {"amount": "4.99"}.',
			),
			"transactions": array(
				obj(
					{
						"orderId": string("The order's global id."),
						"parentId": string("The SALE or CAPTURE transaction's id (getOrder)."),
						"gateway": string("That transaction's gateway, e.g. shopify_payments."),
						"kind": string("REFUND.", enum=["REFUND"]),
						"amount": string("The decimal amount to pay back, e.g. 24.99."),
					},
					["orderId", "gateway", "kind", "amount"],
				),
				"The money to pay back, one entry per payment.",
			),
			"note": string("A note on the refund."),
			"notify": boolean("Email the customer a refund notice.", default=False),
		},
		["orderId"],
		_mutation_output("refundCreate"),
	),
	_graphql(
		"listCustomers",
		(
			"List customers. Filter with Shopify search syntax in `query`, e.g. "
			"email:ada@example.com, country:France, tag:vip, orders_count:>5."
		),
		["read_customers"],
		"""query ListCustomers($first: Int = 20, $after: String, $query: String) {
		customers(first: $first, after: $after, query: $query) { nodes { id displayName firstName
		lastName defaultEmailAddress { emailAddress } defaultPhoneNumber { phoneNumber }
		numberOfOrders amountSpent { amount currencyCode } tags createdAt }
		pageInfo { hasNextPage endCursor } } }""",
		passthrough("first", "after", "query"),
		{
			"first": _FIRST,
			"after": _AFTER,
			"query": string("Shopify search query, e.g. email:ada@example.com."),
		},
		output=_CONNECTION_OUTPUT,
	),
	_graphql(
		"getCustomer",
		(
			"Get a customer: name, email, phone, default address, note, tags, order count, "
			"amount spent and the last 10 orders."
		),
		["read_customers"],
		"""query GetCustomer($id: ID!) { customer(id: $id) { id displayName firstName lastName
		defaultEmailAddress { emailAddress marketingState } defaultPhoneNumber { phoneNumber }
		defaultAddress { address1 address2 city provinceCode zip countryCodeV2 }
		note tags locale taxExempt numberOfOrders amountSpent { amount currencyCode } createdAt
		updatedAt orders(first: 10, sortKey: PROCESSED_AT, reverse: true) { nodes { id name
		processedAt displayFinancialStatus displayFulfillmentStatus currentTotalPriceSet { """
		+ _MONEY
		+ """ } } } } }""",
		passthrough("id"),
		{"id": _gid("Customer")},
		["id"],
	),
	_graphql(
		"createCustomer",
		"Create a customer. Email or phone must be unique in the shop." + _USER_ERRORS_NOTE,
		["write_customers"],
		"""mutation CreateCustomer($input: CustomerInput!) { customerCreate(input: $input) {
		customer { id displayName defaultEmailAddress { emailAddress } tags }
		userErrors { field message } } }""",
		{"input": passthrough("email", "phone", "firstName", "lastName", "note", "tags")},
		{
			"email": string("Email address."),
			"phone": string("Phone number in E.164 format, e.g. +16135551111."),
			"firstName": string("First name."),
			"lastName": string("Last name."),
			"note": string("Internal note about the customer."),
			"tags": array({"type": "string"}, "Tags."),
		},
		output=_mutation_output("customerCreate"),
	),
	_graphql(
		"listLocations",
		(
			"List the shop's locations (warehouses, stores) with their ids, needed for inventory "
			"changes. When pageInfo.hasNextPage is true, pass pageInfo.endCursor as after."
		),
		["read_inventory"],
		"""query ListLocations($first: Int = 50, $after: String) {
		locations(first: $first, after: $after) { nodes { id name isActive fulfillsOnlineOrders
		address { city countryCode } } pageInfo { hasNextPage endCursor } } }""",
		passthrough("first", "after"),
		{
			"first": integer("How many locations (1-250).", minimum=1, maximum=250, default=50),
			"after": _AFTER,
		},
	),
	_graphql(
		"getInventoryItem",
		(
			"Get an inventory item (a variant's stock record: see getProduct) with its "
			"available, on-hand and committed quantities at each location."
		),
		["read_inventory"],
		"""query GetInventoryItem($id: ID!) { inventoryItem(id: $id) { id sku tracked
		variants(first: 10) { nodes { id displayName } } inventoryLevels(first: 50) { nodes { id
		location { id name } quantities(names: ["available", "on_hand", "committed", "incoming"]) {
		name quantity } } } } }""",
		passthrough("id"),
		{"id": _gid("InventoryItem")},
		["id"],
	),
	_graphql(
		"adjustInventory",
		(
			"Add or remove stock: each change is a delta for one inventory item at one location."
			+ _USER_ERRORS_NOTE
		),
		["write_inventory"],
		"""mutation AdjustInventory($input: InventoryAdjustQuantitiesInput!, $idempotencyKey: String!) {
		inventoryAdjustQuantities(input: $input) @idempotent(key: $idempotencyKey) {
		inventoryAdjustmentGroup { createdAt reason changes { name delta quantityAfterChange
		item { id } location { id name } } } userErrors { field message } } }""",
		# The call's own key, as for refundCreate above.
		{
			"idempotencyKey": _CALL_KEY,
			"input": passthrough("name", "reason", "referenceDocumentUri", "changes"),
		},
		{
			"name": string(
				"Which quantity to change: available (default) or damaged, quality_control, "
				"reserved, safety_stock.",
				enum=["available", "damaged", "quality_control", "reserved", "safety_stock"],
				default="available",
			),
			"reason": string(
				"Why, e.g. correction, received, restock, damaged, shrinkage, cycle_count_available."
			),
			"referenceDocumentUri": string(
				"A URI of your document behind the change, e.g. a purchase order."
			),
			"changes": array(
				{
					"type": "object",
					"properties": {
						"inventoryItemId": {"type": "string"},
						"locationId": {"type": "string"},
						"delta": {"type": "integer"},
						"changeFromQuantity": {"type": ["integer", "null"]},
					},
					"required": ["inventoryItemId", "locationId", "delta", "changeFromQuantity"],
				},
				'Changes, e.g. [{"inventoryItemId": "gid://shopify/InventoryItem/1", '
				'"locationId": "gid://shopify/Location/1", "delta": 5, "changeFromQuantity": null}]. '
				"changeFromQuantity is the quantity you expect before the change (the change fails "
				"if it differs) or null to skip that check.",
				minItems=1,
			),
		},
		["name", "reason", "changes"],
		_mutation_output("inventoryAdjustQuantities"),
	),
	_graphql(
		"createFulfillment",
		(
			"Mark items of an order as fulfilled (shipped), with optional tracking. Get the "
			"fulfillment order ids and their line item ids from getOrder; omit "
			"fulfillmentOrderLineItems to fulfil everything remaining." + _USER_ERRORS_NOTE
		),
		["write_fulfillments"],
		"""mutation CreateFulfillment($fulfillment: FulfillmentInput!, $message: String) {
		fulfillmentCreate(fulfillment: $fulfillment, message: $message) { fulfillment { id status
		trackingInfo { company number url } } userErrors { field message } } }""",
		{
			**passthrough("message"),
			"fulfillment": passthrough(
				"lineItemsByFulfillmentOrder", "trackingInfo", "notifyCustomer"
			),
		},
		{
			"lineItemsByFulfillmentOrder": array(
				{
					"type": "object",
					"properties": {
						"fulfillmentOrderId": {"type": "string"},
						"fulfillmentOrderLineItems": {
							"type": "array",
							"items": {
								"type": "object",
								"properties": {
									"id": {"type": "string"},
									"quantity": {"type": "integer", "minimum": 1},
								},
								"required": ["id", "quantity"],
							},
						},
					},
					"required": ["fulfillmentOrderId"],
				},
				'What to fulfil, e.g. [{"fulfillmentOrderId": "gid://shopify/FulfillmentOrder/1", '
				'"fulfillmentOrderLineItems": [{"id": "gid://shopify/FulfillmentOrderLineItem/1", "quantity": 1}]}].',
				minItems=1,
			),
			"trackingInfo": obj(
				{
					"company": {"type": "string"},
					"number": {"type": "string"},
					"url": {"type": "string", "format": "uri"},
				},
				description='Tracking, e.g. {"company": "UPS", "number": "1Z999", "url": "https://..."}.',
			),
			"notifyCustomer": boolean("Email the customer a shipping confirmation."),
			"message": string("An internal message about the fulfillment."),
		},
		["lineItemsByFulfillmentOrder"],
		_mutation_output("fulfillmentCreate"),
	),
	_graphql(
		"deleteProduct",
		"Delete a product with its variants and media (cannot be undone). It waits until the "
		"product is gone; with synchronous false the deletion runs as a background operation "
		"(productDeleteOperation)." + _USER_ERRORS_NOTE,
		["write_products"],
		"""mutation DeleteProduct($input: ProductDeleteInput!, $synchronous: Boolean) {
		productDelete(input: $input, synchronous: $synchronous) { deletedProductId
		productDeleteOperation { id status } userErrors { field message } } }""",
		{"input": passthrough("id"), **passthrough("synchronous")},
		{
			"id": _gid("Product"),
			"synchronous": boolean(
				"Wait until the product is deleted (Shopify's default); false returns at once.",
				default=True,
			),
		},
		["id"],
		_mutation_output("productDelete"),
	),
	_graphql(
		"createOrder",
		(
			"Create an order directly (e.g. imported or sold elsewhere; for an order the customer "
			"pays later use createDraftOrder). Give lineItems; financialStatus PAID records it as "
			"paid, with no payment taken. sendReceipt emails the customer." + _USER_ERRORS_NOTE
		),
		["write_orders"],
		"""mutation CreateOrder($order: OrderCreateOrderInput!, $options: OrderCreateOptionsInput) {
		orderCreate(order: $order, options: $options) { order { id name createdAt
		displayFinancialStatus displayFulfillmentStatus totalPriceSet { """
		+ _MONEY
		+ """ } customer { id displayName } } userErrors { field message } } }""",
		{
			"order": passthrough(
				"lineItems",
				"customer",
				"email",
				"phone",
				"financialStatus",
				"fulfillmentStatus",
				"shippingAddress",
				"billingAddress",
				"note",
				"tags",
				"poNumber",
				"processedAt",
				"sourceName",
				"test",
			),
			"options": passthrough("sendReceipt", "sendFulfillmentReceipt", "inventoryBehaviour"),
		},
		{
			"lineItems": _ORDER_LINE_ITEMS,
			"customer": obj(
				{
					"toAssociate": obj(
						{
							"id": string("The customer's global id."),
							"email": string("The customer's email address."),
						},
						description="An existing customer, by id or email.",
					)
				},
				description='The buyer, e.g. {"toAssociate": {"id": "gid://shopify/Customer/1"}}.',
			),
			"email": string("The customer's email address."),
			"phone": string("The customer's phone number."),
			"financialStatus": string(
				"Payment state to record (default PENDING).",
				enum=[
					"AUTHORIZED",
					"EXPIRED",
					"PAID",
					"PARTIALLY_PAID",
					"PARTIALLY_REFUNDED",
					"PENDING",
					"REFUNDED",
					"VOIDED",
				],
			),
			"fulfillmentStatus": string(
				"Fulfillment state to record (default unfulfilled).",
				enum=["FULFILLED", "PARTIAL", "RESTOCKED"],
			),
			"shippingAddress": _MAILING_ADDRESS,
			"billingAddress": _MAILING_ADDRESS,
			"note": string("Note on the order."),
			"tags": array({"type": "string"}, "Tags."),
			"poNumber": string("Purchase order number."),
			"processedAt": string(
				"When the order was placed (ISO 8601); default now.", format="date-time"
			),
			"sourceName": string("Where the order came from, e.g. a marketplace's name."),
			"test": boolean("A test order."),
			"sendReceipt": boolean("Email the customer an order confirmation.", default=False),
			"sendFulfillmentReceipt": boolean(
				"Email the customer a shipping confirmation.", default=False
			),
			"inventoryBehaviour": string(
				"How stock changes (default BYPASS: not at all).",
				enum=["BYPASS", "DECREMENT_IGNORING_POLICY", "DECREMENT_OBEYING_POLICY"],
			),
		},
		["lineItems"],
		_mutation_output("orderCreate"),
	),
	_graphql(
		"updateOrder",
		"Update an order's email, phone, note, tags, PO number, shipping address or custom "
		"attributes." + _USER_ERRORS_NOTE,
		["write_orders"],
		"""mutation UpdateOrder($input: OrderInput!) { orderUpdate(input: $input) { order { id
		name email phone note tags poNumber updatedAt } userErrors { field message } } }""",
		{
			"input": passthrough(
				"id",
				"email",
				"phone",
				"note",
				"tags",
				"poNumber",
				"shippingAddress",
				"customAttributes",
			)
		},
		{
			"id": _gid("Order"),
			"email": string("The customer's email address for this order."),
			"phone": string("The customer's phone number for this order."),
			"note": string("Note on the order."),
			"tags": array({"type": "string"}, "Tags (replace all existing tags)."),
			"poNumber": string("Purchase order number."),
			"shippingAddress": _MAILING_ADDRESS,
			"customAttributes": _ATTRIBUTES,
		},
		["id"],
		_mutation_output("orderUpdate"),
	),
	_graphql(
		"createDraftOrder",
		"Create a draft order (a quote or an order the customer pays later through its "
		"invoiceUrl)." + _USER_ERRORS_NOTE,
		["write_draft_orders"],
		"""mutation CreateDraftOrder($input: DraftOrderInput!) { draftOrderCreate(input: $input)
		{ """
		+ _DRAFT_ORDER_SELECTION
		+ """ } }""",
		{"input": passthrough(*_DRAFT_ORDER_INPUT)},
		_DRAFT_ORDER_INPUT,
		["lineItems"],
		_mutation_output("draftOrderCreate"),
	),
	_graphql(
		"updateDraftOrder",
		"Update a draft order (only the given fields; lineItems replaces all its items)."
		+ _USER_ERRORS_NOTE,
		["write_draft_orders"],
		"""mutation UpdateDraftOrder($id: ID!, $input: DraftOrderInput!) {
		draftOrderUpdate(id: $id, input: $input) { """
		+ _DRAFT_ORDER_SELECTION
		+ """ } }""",
		{**passthrough("id"), "input": passthrough(*_DRAFT_ORDER_INPUT)},
		{"id": _gid("DraftOrder"), **_DRAFT_ORDER_INPUT},
		["id"],
		_mutation_output("draftOrderUpdate"),
	),
	_graphql(
		"sendDraftOrderInvoice",
		(
			"Email a draft order's invoice (its checkout link) to the customer, or to `email.to`; "
			"the customer pays through it." + _USER_ERRORS_NOTE
		),
		["write_draft_orders"],
		"""mutation SendDraftOrderInvoice($id: ID!, $email: EmailInput) {
		draftOrderInvoiceSend(id: $id, email: $email) { draftOrder { id name status invoiceUrl
		invoiceSentAt } userErrors { field message } } }""",
		passthrough("id", "email"),
		{
			"id": _gid("DraftOrder"),
			"email": obj(
				{
					"to": string("Recipient; default: the draft order's email."),
					"from": string("Sender: the shop's or a staff member's email."),
					"bcc": array({"type": "string"}, "Blind copies."),
					"subject": string("Subject line."),
					"customMessage": string("A message shown above the invoice."),
				},
				description="The email; omit for Shopify's invoice email to the draft order's "
				"address.",
			),
		},
		["id"],
		_mutation_output("draftOrderInvoiceSend"),
	),
	_graphql(
		"completeDraftOrder",
		(
			"Turn a draft order into an order, recorded as paid (no payment is taken). For a "
			"customer who pays later, send the invoice (sendDraftOrderInvoice) instead, or give "
			"the draft order payment terms." + _USER_ERRORS_NOTE
		),
		["write_draft_orders"],
		# paymentPending is deprecated in 2026-10 (payment terms replace it): not offered.
		"""mutation CompleteDraftOrder($id: ID!, $sourceName: String) {
		draftOrderComplete(id: $id, sourceName: $sourceName) { draftOrder { id name status
		order { id name displayFinancialStatus } } userErrors { field message } } }""",
		passthrough("id", "sourceName"),
		{
			"id": _gid("DraftOrder"),
			"sourceName": string("Where the order came from, e.g. a sales channel's name."),
		},
		["id"],
		_mutation_output("draftOrderComplete"),
	),
	_graphql(
		"markOrderAsPaid",
		(
			"Mark an order as paid (a payment received outside Shopify, e.g. a bank transfer); "
			"it records a manual payment for the outstanding amount." + _USER_ERRORS_NOTE
		),
		["write_orders"],
		"""mutation MarkOrderAsPaid($input: OrderMarkAsPaidInput!) { orderMarkAsPaid(input: $input)
		{ order { id name displayFinancialStatus totalOutstandingSet { """
		+ _MONEY
		+ """ } } userErrors { field message } } }""",
		{"input": passthrough("id")},
		{"id": _gid("Order")},
		["id"],
		_mutation_output("orderMarkAsPaid"),
	),
	_graphql(
		"updateCustomer",
		"Update a customer's name, email, phone, note, tags, locale or tax exemption (only the "
		"given fields)." + _USER_ERRORS_NOTE,
		["write_customers"],
		"""mutation UpdateCustomer($input: CustomerInput!) { customerUpdate(input: $input) {
		customer { id displayName defaultEmailAddress { emailAddress } tags updatedAt }
		userErrors { field message } } }""",
		{"input": passthrough("id", *_CUSTOMER_UPDATE)},
		{"id": _gid("Customer"), **_CUSTOMER_UPDATE},
		["id"],
		_mutation_output("customerUpdate"),
	),
	*(
		_graphql(
			f"add{kind}Tags",
			f"Add tags to a {label} (tagsAdd)." + _USER_ERRORS_NOTE,
			[scope],
			f"""mutation Add{kind}Tags($id: ID!, $tags: [String!]!) {{ tagsAdd(id: $id, tags: $tags) {{
			node {{ id }} userErrors {{ field message }} }} }}""",
			passthrough("id", "tags"),
			{
				"id": string(
					f"The {label}'s global id, e.g. gid://shopify/{kind}/123.",
					pattern=f"^gid://shopify/{kind}/[0-9]+$",
				),
				"tags": array({"type": "string"}, "Tags to add.", minItems=1),
			},
			["id", "tags"],
			_mutation_output("tagsAdd"),
		)
		for kind, label, scope in TAGGABLE
	),
	HttpTool(
		handle="graphql",
		description=(
			"Run any Admin GraphQL (2026-10) query or mutation, for what the other tools do not "
			"cover. Use variables for values; select `userErrors { field message }` in mutations."
			+ _USER_ERRORS_NOTE
		),
		scopes=["graphql"],
		method="POST",
		endpoint="/graphql.json",
		body=passthrough("query", "variables"),
		input_schema={
			"type": "object",
			"properties": {
				"query": string("The GraphQL document."),
				"variables": obj({}, description="Values for the document's variables."),
			},
			"required": ["query"],
		},
		output_schema=_CONNECTION_OUTPUT,
	),
]

_ACCESS_SCOPES = [
	"read_products",
	"write_products",
	"read_orders",
	"write_orders",
	"read_customers",
	"write_customers",
	"write_draft_orders",
	"read_inventory",
	"write_inventory",
	# Location's fields (name, address...) need read_locations: listLocations, and the location
	# names getInventoryItem and adjustInventory select.
	"read_locations",
	"read_merchant_managed_fulfillment_orders",
	"write_merchant_managed_fulfillment_orders",
]
# The access scopes each tool scope's documents select, nested fields included (Admin API
# 2026-10's per-field access scopes; a write scope grants its read scope): getOrder reads the
# customer, the variants, the fulfillment orders and their locations. The consent asks only
# for those of the agent's tool scopes; the raw graphql tool may select anything.
_SCOPE_MAP = {
	"read_shop": [],
	"read_products": ["read_products"],
	"write_products": ["write_products"],
	"read_orders": [
		"read_orders",
		"read_customers",
		"read_products",
		"read_merchant_managed_fulfillment_orders",
		"read_locations",
	],
	"write_orders": ["write_orders", "read_customers"],
	"read_customers": ["read_customers", "read_orders"],
	"write_customers": ["write_customers"],
	"read_inventory": ["read_inventory", "read_locations", "read_products"],
	"write_inventory": ["write_inventory", "read_locations"],
	"write_fulfillments": ["write_merchant_managed_fulfillment_orders"],
	"write_draft_orders": ["write_draft_orders", "read_customers", "read_orders"],
	"graphql": _ACCESS_SCOPES,
}

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"getShop": [],
		"listProducts": [],
		"getProduct": [],
		"createCustomer": [],
		"updateCustomer": [],
		"listLocations": [],
		"getInventoryItem": [],
		"adjustInventory": [],
		"addProductTags": [],
		"addOrderTags": [],
		"addCustomerTags": [],
		"listOrders": ["private", "untrusted"],
		"getOrder": ["private", "untrusted"],
		# Any query or mutation: it may read orders (customers' words) and change the store.
		"graphql": ["private", "untrusted", "outbound"],
		"cancelOrder": ["outbound"],
		"createFulfillment": ["outbound"],
		# Money (and a notice) goes to the customer.
		"createRefund": ["outbound"],
		# An order or a draft order is what the customer sees (receipts, invoices, their
		# account); a product's title, description and prices are on the public storefront, and a
		# deleted one leaves it.
		"createProduct": ["outbound"],
		"updateProduct": ["outbound"],
		"updateVariants": ["outbound"],
		"createOrder": ["outbound"],
		"updateOrder": ["outbound"],
		"createDraftOrder": ["outbound"],
		"updateDraftOrder": ["outbound"],
		"deleteProduct": ["outbound"],
		"sendDraftOrderInvoice": ["outbound"],
		"completeDraftOrder": ["outbound"],
		"markOrderAsPaid": ["outbound"],
		# Others' words: names and addresses customers typed (at checkout, in their account).
		"listCustomers": ["private", "untrusted"],
		"getCustomer": ["private", "untrusted"],
	},
	response_checks=[graphql_errors],
	# THROTTLED comes in a 200 that ran nothing: retried after the bucket refills, like a 429.
	throttle_checks=[throttled],
	id="shopify",
	name="Shopify",
	description="Manage a Shopify store through the Admin GraphQL API: products, orders, draft "
	"orders, customers, inventory, fulfillment.",
	api_version=SHOPIFY_API_VERSION,
	api_setup=ApiSetup(
		base_url=(
			"https://{{ config.shop | remove: 'https://' | remove: '.myshopify.com' }}"
			f".myshopify.com/admin/api/{SHOPIFY_API_VERSION}"
		),
	),
	credential_setup=[
		CustomCredential(
			type="custom", headers={"X-Shopify-Access-Token": "{{ config.accessToken }}"}
		),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://{{ config.shop | remove: 'https://' | remove: '.myshopify.com' }}.myshopify.com/admin/oauth/authorize",
			token_url="https://{{ config.shop | remove: 'https://' | remove: '.myshopify.com' }}.myshopify.com/admin/oauth/access_token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=_ACCESS_SCOPES,
			scope_map=_SCOPE_MAP,
			# getShop's fields need no access scope, but the authorization code grant refuses a
			# consent that asks for none (invalid_scope): a read_shop-only agent is asked for
			# the least one, the catalogue its storefront already shows.
			minimum_scopes=["read_products"],
			# A write scope grants its read scope, and the token reply then lists only the
			# write one (the compressed form @shopify/shopify-api's AuthScopes compares).
			implied_scopes={
				s: ["read_" + s.removeprefix("write_")]
				for s in _ACCESS_SCOPES
				if s.startswith("write_")
			},
			# Shopify's own library joins scopes with commas; ``expiring=1`` belongs to the code
			# exchange (POST .../admin/oauth/access_token), not to this URL. The authorize URL
			# Shopify documents carries client_id, scope, redirect_uri, state (and
			# grant_options[]), no response_type.
			scope_separator=",",
			auth_params={"response_type": None},
			headers={"X-Shopify-Access-Token": "{{ config.accessToken }}"},
		),
	],
	scopes={
		"read_shop": "Read the shop's settings.",
		"read_products": "Read products and variants (Shopify scope read_products).",
		"write_products": "Create, update and delete products and variants (write_products).",
		"read_orders": "Read orders (read_orders; read_all_orders for older than 60 days).",
		"write_orders": "Create, update, cancel, refund, tag and mark paid orders (write_orders).",
		"write_draft_orders": "Create, update, invoice and complete draft orders "
		"(write_draft_orders).",
		"read_customers": "Read customers (read_customers).",
		"write_customers": "Create, update and tag customers (write_customers).",
		"read_inventory": "Read locations and stock levels (read_inventory, read_locations).",
		"write_inventory": "Adjust stock (write_inventory).",
		"write_fulfillments": "Fulfil orders (write_merchant_managed_fulfillment_orders).",
		"graphql": "Run arbitrary Admin GraphQL documents (anything the token allows).",
	},
	tools=TOOLS,
	docs="""## Get a token

**Your own store (custom app).** In the Shopify admin open *Settings → Apps and sales channels →
Develop apps* (or the Dev Dashboard), create an app, choose the Admin API access scopes
(`read_products`, `write_products`, `read_orders`, `write_orders`, `write_draft_orders`,
`read_customers`, `write_customers`, `read_inventory`, `write_inventory`, `read_locations`,
`write_merchant_managed_fulfillment_orders`), install it, and copy the Admin API access token
(`shpat_…`, shown once).

```python
om = OpenMolt(integrations={"shopify": {"shop": "my-store", "accessToken": "shpat_..."}})
```

`shop` is the store's myshopify subdomain (`my-store` or `my-store.myshopify.com`).

**Public app (OAuth).** Send the merchant to
`https://{shop}.myshopify.com/admin/oauth/authorize?client_id=…&scope=read_products,write_products…&redirect_uri=…&state=…`
(scopes joined with commas; `openmolt auth shopify --scopes read_orders` asks only for the access
scopes those tools read, here `read_orders`, `read_customers`, `read_products`,
`read_merchant_managed_fulfillment_orders` and `read_locations`) and exchange the code with a POST to
`https://{shop}.myshopify.com/admin/oauth/access_token` carrying `client_id`, `client_secret`,
`code` and `expiring=1`: Shopify then returns an expiring offline token (one hour) and a refresh
token, which public apps must use from January 1, 2027. Use
`{"type": "oauth2", "config": {"shop", "accessToken", "refreshToken", "clientId", "clientSecret"}}`.
The token travels in the `X-Shopify-Access-Token` header, not `Authorization`.

Requests target Admin API version 2026-10. Mutations report problems in `userErrors` with
HTTP 200; queries are rate-limited by calculated cost (`extensions.cost`), and a request turned
away (`THROTTLED`) is sent again once the bucket holds its cost.
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Shopify integration."""
	register(INTEGRATION)
