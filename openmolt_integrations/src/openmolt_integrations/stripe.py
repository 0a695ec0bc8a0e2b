"""Stripe API (``/v1``): customers, products, payments, checkout, payment links, invoices, billing.

Targets ``Stripe-Version: 2026-10-28.endive`` (`STRIPE_VERSION`, the version stripe-python 16.1
pins): every request sends it, so answers do not depend on the account's default version.
Bodies are form-encoded with Stripe's nested keys (``metadata[plan]=pro``,
``line_items[0][price]=price_123``; lists of scalars with indices, ``expand[0]=...``, as
stripe-python sends them). Every POST carries an ``Idempotency-Key`` header so that a retried
request is applied only once: the engine derives one key per call from the call id
(``idempotency_header``; the same when a durable run replays the call) and reuses it when it retries; a POST tool's optional ``idempotency_key`` input sets it explicitly, so a
model that repeats a call itself can reuse the key. Lists paginate with
``starting_after`` (the last id of the previous page) while ``has_more`` is true; search pages with
``page`` (the previous ``next_page``). Amounts are integers in the currency's smallest unit.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.schema import array, boolean, integer, obj, passthrough, string

__all__ = [
	"INTEGRATION",
	"RETRIEVABLE",
	"SEARCHABLE",
	"STRIPE_VERSION",
	"TOOLS",
	"register_integrations",
]

STRIPE_VERSION = "2026-10-28.endive"
"""The ``Stripe-Version`` header every request sends."""

SEARCHABLE = [
	"charges",
	"customers",
	"invoices",
	"payment_intents",
	"prices",
	"products",
	"subscriptions",
]
"""The resources with a ``/v1/<resource>/search`` endpoint."""

RETRIEVABLE = [
	"charges",
	"checkout/sessions",
	"customers",
	"invoices",
	"payment_intents",
	"prices",
	"products",
	"refunds",
	"subscriptions",
]
"""The resources the ``retrieve`` tool reads as ``/v1/<resource>/<id>``."""


_IDEMPOTENCY = {"Idempotency-Key": "{{ input.idempotency_key }}"}
_IDEMPOTENCY_INPUT = string(
	"A unique key (e.g. a UUID) for this operation: Stripe applies a request with the same key "
	"only once, so retrying with the same key is safe. Reuse it only for a retry of the same call. "
	"Optional: without it each call gets a fresh key.",
	maxLength=255,
)
_METADATA = obj(
	{},
	description='Your own key-value data, e.g. {"order_id": "1234"} (string values).',
	additionalProperties={"type": "string"},
)
_AMOUNT = integer("Amount in the smallest currency unit (cents: 1000 = 10.00 USD).", minimum=0)
_CURRENCY = string("Three-letter ISO currency code, lowercase, e.g. usd, eur.")
_LIMIT = integer("Objects per page (1-100).", minimum=1, maximum=100, default=10)
_AFTER = string("Cursor: the id of the last object of the previous page (when has_more).")
_BEFORE = string("Cursor: the id of the first object of the previous page, to go back.")
_CUSTOMER = string("The customer id (cus_…).")
_LIST_OUTPUT = {
	"type": "object",
	"properties": {
		"data": {"type": "array", "items": {"type": "object"}},
		"has_more": {"type": "boolean", "description": "Pass the last id as starting_after."},
	},
}
_ADDRESS = obj(
	{k: {"type": "string"} for k in ("line1", "line2", "city", "state", "postal_code", "country")},
	description="Postal address.",
)
_RECURRING = obj(
	{
		"interval": {"type": "string", "enum": ["day", "week", "month", "year"]},
		"interval_count": {"type": "integer", "minimum": 1},
	},
	["interval"],
	description='Billing period for a recurring price, e.g. {"interval": "month"}.',
)
_SUB_ITEMS = array(
	{
		"type": "object",
		"properties": {
			"price": {"type": "string"},
			"quantity": {"type": "integer", "minimum": 1},
		},
		"required": ["price"],
	},
	'Prices to subscribe to, e.g. [{"price": "price_123", "quantity": 1}].',
)

_LINK_ITEMS = {
	**array(
		{
			"type": "object",
			"properties": {
				"price": {"type": "string", "description": "The price id (price_…)."},
				"quantity": {"type": "integer", "minimum": 1},
				"adjustable_quantity": obj(
					{
						"enabled": {"type": "boolean"},
						"minimum": {"type": "integer", "minimum": 0},
						"maximum": {"type": "integer", "minimum": 1},
					},
					["enabled"],
					description="Let the customer change the quantity, within bounds.",
				),
			},
			"required": ["price", "quantity"],
		},
		'What is sold (up to 20), e.g. [{"price": "price_123", "quantity": 1}].',
	),
	"minItems": 1,
	"maxItems": 20,
}
_AFTER_COMPLETION = obj(
	{
		"type": {"type": "string", "enum": ["hosted_confirmation", "redirect"]},
		"redirect": obj(
			{"url": {"type": "string", "description": "Where to send the payer."}}, ["url"]
		),
		"hosted_confirmation": obj(
			{"custom_message": {"type": "string", "description": "Shown after payment."}}
		),
	},
	["type"],
	description=(
		'After payment: {"type": "redirect", "redirect": {"url": "https://…"}} or '
		'{"type": "hosted_confirmation", "hosted_confirmation": {"custom_message": "Thanks!"}}.'
	),
)
_BILLING_ADDRESS = string(
	"Collect the billing address: auto (only when needed, default) or required.",
	enum=["auto", "required"],
)
_CUSTOMER_CREATION = string(
	"Create a Customer for each payment: always, or if_required (default).",
	enum=["always", "if_required"],
)


def _or_unset(schema: dict[str, Any], what: str) -> dict[str, Any]:
	"""A field that also takes Stripe's own unset value, the empty string (``address=``).

	The stripe package types such parameters ``Literal[''] | ...``; an object cannot say "clear"
	otherwise in a form body.
	"""
	inner = {k: v for k, v in schema.items() if k != "description"}
	return {
		"anyOf": [inner, {"type": "string", "enum": [""]}],
		"description": f'{schema["description"]} "" {what}',
	}


def _post(handle: str, description: str, scopes: list[str], endpoint: str, **kw: Any) -> HttpTool:
	"""A POST tool with the optional idempotency key every Stripe write accepts."""
	schema = kw.pop("input_schema")
	schema["properties"]["idempotency_key"] = _IDEMPOTENCY_INPUT
	return HttpTool(
		handle=handle,
		description=description,
		scopes=scopes,
		method="POST",
		endpoint=endpoint,
		headers=_IDEMPOTENCY,
		input_schema=schema,
		**kw,
	)


_CUSTOMER_FIELDS = {
	"email": string("Email address."),
	"name": string("Full name or business name."),
	"phone": string("Phone number."),
	"description": string("An internal note shown in the Dashboard."),
	"address": _ADDRESS,
	"metadata": _METADATA,
}
_CUSTOMER_BODY = passthrough(*_CUSTOMER_FIELDS)

TOOLS = [
	HttpTool(
		handle="listCustomers",
		description="List customers, newest first, optionally by exact email. Cursor-paginated.",
		scopes=["read"],
		method="GET",
		endpoint="/v1/customers",
		query_params=passthrough("email", "limit", "starting_after", "ending_before"),
		input_schema={
			"type": "object",
			"properties": {
				"email": string("Only customers with this exact email (case-sensitive)."),
				"limit": _LIMIT,
				"starting_after": _AFTER,
				"ending_before": _BEFORE,
			},
		},
		output_schema=_LIST_OUTPUT,
	),
	_post(
		"createCustomer",
		"Create a customer (returns its cus_… id).",
		["write"],
		"/v1/customers",
		body=_CUSTOMER_BODY,
		input_schema={"type": "object", "properties": dict(_CUSTOMER_FIELDS)},
	),
	_post(
		"updateCustomer",
		"Update a customer; only the given fields change (metadata keys merge).",
		["write"],
		"/v1/customers/{{ input.customer }}",
		body=_CUSTOMER_BODY,
		input_schema={
			"type": "object",
			"properties": {
				"customer": _CUSTOMER,
				**_CUSTOMER_FIELDS,
				"address": _or_unset(_ADDRESS, "removes the address."),
				"metadata": _or_unset(_METADATA, 'removes every key (a key\'s own "" removes it).'),
			},
			"required": ["customer"],
		},
	),
	HttpTool(
		handle="search",
		description=(
			"Search a resource with Stripe's query language, e.g. customers: email:'a@b.com', "
			"payment_intents: status:'succeeded' AND amount>1000, charges: customer:'cus_123', "
			"subscriptions: status:'active' AND metadata['plan']:'pro'. Results may lag writes by "
			"about a minute. Paginate with page = the previous next_page."
		),
		scopes=["read"],
		method="GET",
		endpoint="/v1/{{ input.resource }}/search",
		query_params=passthrough("query", "limit", "page"),
		input_schema={
			"type": "object",
			"properties": {
				"resource": string("What to search.", enum=SEARCHABLE),
				"query": string("The search query (Stripe search query language)."),
				"limit": _LIMIT,
				"page": string("The next_page value of the previous result."),
			},
			"required": ["resource", "query"],
		},
		output_schema={
			"type": "object",
			"properties": {
				"data": {"type": "array", "items": {"type": "object"}},
				"has_more": {"type": "boolean"},
				"next_page": {"type": ["string", "null"]},
			},
		},
	),
	HttpTool(
		handle="retrieve",
		description="Get one object by id: a customer, payment intent, charge, invoice, subscription, refund, product, price or checkout session.",
		scopes=["read"],
		method="GET",
		endpoint="/v1/{{ input.resource | path_segments }}/{{ input.id }}",
		query_params={"expand[]": "{{ input.expand }}"},
		input_schema={
			"type": "object",
			"properties": {
				"resource": string("The kind of object.", enum=RETRIEVABLE),
				"id": string(
					"The object id (cus_…, pi_…, ch_…, in_…, sub_…, re_…, prod_…, price_…, cs_…)."
				),
				"expand": array(
					{"type": "string"},
					'Related objects to include in full, e.g. ["customer", "latest_invoice"].',
				),
			},
			"required": ["resource", "id"],
		},
	),
	_post(
		"createProduct",
		"Create a product, optionally with a default price in the same call.",
		["write"],
		"/v1/products",
		body=passthrough("name", "description", "active", "default_price_data", "metadata"),
		input_schema={
			"type": "object",
			"properties": {
				"name": string("The product name shown to customers."),
				"description": string("The product description."),
				"active": boolean("Whether it can be sold.", default=True),
				"default_price_data": obj(
					{
						"currency": _CURRENCY,
						"unit_amount": _AMOUNT,
						"recurring": _RECURRING,
					},
					["currency"],
					description='A default price, e.g. {"currency": "usd", "unit_amount": 1500} or with '
					'"recurring": {"interval": "month"}.',
				),
				"metadata": _METADATA,
			},
			"required": ["name"],
		},
	),
	_post(
		"createPrice",
		"Create a price for a product: one-time, or recurring when `recurring` is given.",
		["write"],
		"/v1/prices",
		body=passthrough(
			"product", "currency", "unit_amount", "recurring", "nickname", "lookup_key", "metadata"
		),
		input_schema={
			"type": "object",
			"properties": {
				"product": string("The product id (prod_…)."),
				"currency": _CURRENCY,
				"unit_amount": _AMOUNT,
				"recurring": _RECURRING,
				"nickname": string("An internal name for the price."),
				"lookup_key": string("A stable key to find the price later."),
				"metadata": _METADATA,
			},
			"required": ["product", "currency", "unit_amount"],
		},
	),
	_post(
		"createPaymentIntent",
		"Create a payment intent to collect a payment: confirm it client-side, or charge a saved "
		"payment method at once (customer, payment_method, confirm: true, and off_session "
		"one_off or recurring when the customer is not present).",
		["payments"],
		"/v1/payment_intents",
		body=passthrough(
			"amount",
			"currency",
			"customer",
			"description",
			"receipt_email",
			"automatic_payment_methods",
			"payment_method",
			"confirm",
			"off_session",
			"return_url",
			"capture_method",
			"setup_future_usage",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"amount": _AMOUNT,
				"currency": _CURRENCY,
				"customer": _CUSTOMER,
				"description": string("Shown to the customer and in the Dashboard."),
				"receipt_email": string("Email the receipt to this address."),
				"automatic_payment_methods": obj(
					{"enabled": {"type": "boolean"}},
					["enabled"],
					description='Let Stripe pick payment methods from the Dashboard settings: {"enabled": true}.',
				),
				"payment_method": string(
					"A saved PaymentMethod (pm_…) to charge; if it is attached to a customer, give "
					"that customer too."
				),
				"confirm": boolean("Confirm (charge) at once; default false."),
				"off_session": string(
					"The customer is not present to authenticate (a charge later, with confirm): "
					"one_off (what true means) or recurring.",
					enum=["one_off", "recurring"],
				),
				"return_url": string(
					"Where to send the customer back after authenticating (with confirm, for "
					"payment methods that redirect)."
				),
				"capture_method": string(
					"automatic (default) or manual to only authorize now and capture later.",
					enum=["automatic", "automatic_async", "manual"],
				),
				"setup_future_usage": string(
					"Save the payment method for later charges.", enum=["off_session", "on_session"]
				),
				"metadata": _METADATA,
			},
			"required": ["amount", "currency"],
		},
	),
	_post(
		"createCheckoutSession",
		"Create a hosted Checkout page; send the customer to the returned `url`.",
		["payments"],
		"/v1/checkout/sessions",
		body=passthrough(
			"mode",
			"line_items",
			"success_url",
			"cancel_url",
			"customer",
			"customer_email",
			"client_reference_id",
			"allow_promotion_codes",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"mode": string(
					"payment (one-time), subscription (recurring prices) or setup (save a card).",
					enum=["payment", "subscription", "setup"],
				),
				"line_items": array(
					{
						"type": "object",
						"properties": {
							"price": {"type": "string"},
							"quantity": {"type": "integer", "minimum": 1},
						},
						"required": ["price"],
					},
					'What is bought, e.g. [{"price": "price_123", "quantity": 2}].',
				),
				"success_url": string(
					"Where to send the customer after paying; may contain {CHECKOUT_SESSION_ID}."
				),
				"cancel_url": string("Where to send the customer if they go back."),
				"customer": _CUSTOMER,
				"customer_email": string("Prefill the email when there is no customer id."),
				"client_reference_id": string("Your own reference, e.g. a cart id."),
				"allow_promotion_codes": boolean("Show a promotion code field."),
				"metadata": _METADATA,
			},
			"required": ["mode", "success_url"],
		},
	),
	_post(
		"createInvoiceItem",
		"Add a line to a customer's next invoice (or to a draft invoice given by `invoice`), from a price or an amount.",
		["billing"],
		"/v1/invoiceitems",
		body=passthrough(
			"customer",
			"invoice",
			"pricing",
			"quantity",
			"amount",
			"currency",
			"description",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"customer": _CUSTOMER,
				"invoice": string("A draft invoice id (in_…); default: the next invoice."),
				"pricing": obj(
					{"price": {"type": "string"}},
					["price"],
					description='Bill a price: {"price": "price_123"} (then give quantity, not amount).',
				),
				"quantity": integer("How many units of the price.", minimum=1),
				"amount": integer(
					"A one-off amount in the smallest currency unit (instead of pricing)."
				),
				"currency": _CURRENCY,
				"description": string("The line's description (with amount)."),
				"metadata": _METADATA,
			},
			"required": ["customer"],
		},
	),
	_post(
		"createInvoice",
		(
			"Create a draft invoice for a customer; pending invoice items are included. Then "
			"finalizeInvoice. collection_method send_invoice emails it with a due date; "
			"charge_automatically charges the default payment method."
		),
		["billing"],
		"/v1/invoices",
		body=passthrough(
			"customer",
			"collection_method",
			"days_until_due",
			"description",
			"auto_advance",
			"pending_invoice_items_behavior",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"customer": _CUSTOMER,
				"collection_method": string(
					"How the invoice is paid.",
					enum=["charge_automatically", "send_invoice"],
					default="charge_automatically",
				),
				"days_until_due": integer("Days until due (required for send_invoice).", minimum=0),
				"description": string("Memo shown on the invoice."),
				"auto_advance": boolean(
					"Let Stripe finalize, send and collect the invoice automatically."
				),
				"pending_invoice_items_behavior": string(
					"include (default) adds the customer's pending invoice items; exclude leaves them.",
					enum=["include", "exclude"],
				),
				"metadata": _METADATA,
			},
			"required": ["customer"],
		},
	),
	_post(
		"finalizeInvoice",
		(
			"Finalize a draft invoice so it can be paid. With auto_advance true, Stripe then "
			"emails (send_invoice) or charges (charge_automatically) it."
		),
		["billing"],
		"/v1/invoices/{{ input.invoice }}/finalize",
		body=passthrough("auto_advance"),
		input_schema={
			"type": "object",
			"properties": {
				"invoice": string("The draft invoice id (in_…)."),
				"auto_advance": boolean("Let Stripe send or collect it automatically."),
			},
			"required": ["invoice"],
		},
	),
	HttpTool(
		handle="listSubscriptions",
		description="List subscriptions, by customer, price or status. Cursor-paginated.",
		scopes=["read"],
		method="GET",
		endpoint="/v1/subscriptions",
		query_params=passthrough(
			"customer", "price", "status", "limit", "starting_after", "ending_before"
		),
		input_schema={
			"type": "object",
			"properties": {
				"customer": _CUSTOMER,
				"price": string("Only subscriptions to this price (price_…)."),
				"status": string(
					"Filter by status; default: all but canceled.",
					enum=[
						"active",
						"all",
						"canceled",
						"ended",
						"incomplete",
						"incomplete_expired",
						"past_due",
						"paused",
						"trialing",
						"unpaid",
					],
				),
				"limit": _LIMIT,
				"starting_after": _AFTER,
				"ending_before": _BEFORE,
			},
		},
		output_schema=_LIST_OUTPUT,
	),
	_post(
		"createSubscription",
		"Subscribe a customer to recurring prices.",
		["billing"],
		"/v1/subscriptions",
		body=passthrough(
			"customer",
			"items",
			"collection_method",
			"days_until_due",
			"trial_period_days",
			"default_payment_method",
			"payment_behavior",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"customer": _CUSTOMER,
				"items": _SUB_ITEMS,
				"collection_method": string(
					"charge_automatically (default) or send_invoice (email invoices).",
					enum=["charge_automatically", "send_invoice"],
				),
				"days_until_due": integer("Days to pay each invoice (send_invoice).", minimum=0),
				"trial_period_days": integer("Free trial length in days.", minimum=0),
				"default_payment_method": string("Payment method id (pm_…) to charge."),
				"payment_behavior": string(
					"What to do when the first payment needs action; default_incomplete leaves it "
					"for the customer to complete.",
					enum=[
						"allow_incomplete",
						"default_incomplete",
						"error_if_incomplete",
						"pending_if_incomplete",
					],
				),
				"metadata": _METADATA,
			},
			"required": ["customer", "items"],
		},
	),
	_post(
		"updateSubscription",
		(
			"Change a subscription: cancel at period end (cancel_at_period_end true) or undo it, "
			"change its items, metadata or proration."
		),
		["billing"],
		"/v1/subscriptions/{{ input.subscription_exposed_id }}",
		body=passthrough("cancel_at_period_end", "items", "proration_behavior", "metadata"),
		input_schema={
			"type": "object",
			"properties": {
				"subscription_exposed_id": string("The subscription id (sub_…)."),
				"cancel_at_period_end": boolean(
					"true cancels when the current period ends; false undoes that."
				),
				"items": array(
					{
						"type": "object",
						"properties": {
							"id": {"type": "string"},
							"price": {"type": "string"},
							"quantity": {"type": "integer"},
							"deleted": {"type": "boolean"},
						},
					},
					'Item changes, e.g. [{"id": "si_123", "price": "price_new"}] to switch price, '
					'[{"id": "si_123", "deleted": true}] to remove one.',
				),
				"proration_behavior": string(
					"How to charge for the change.",
					enum=["always_invoice", "create_prorations", "none"],
				),
				"metadata": _or_unset(_METADATA, 'removes every key (a key\'s own "" removes it).'),
			},
			"required": ["subscription_exposed_id"],
		},
	),
	HttpTool(
		handle="cancelSubscription",
		description=(
			"Cancel a subscription now (to cancel at the end of the period, use "
			"updateSubscription with cancel_at_period_end)."
		),
		scopes=["billing"],
		method="DELETE",
		endpoint="/v1/subscriptions/{{ input.subscription_exposed_id }}",
		query_params=passthrough("invoice_now", "prorate"),
		input_schema={
			"type": "object",
			"properties": {
				"subscription_exposed_id": string("The subscription id (sub_…)."),
				"invoice_now": boolean("Invoice pending usage and prorations now."),
				"prorate": boolean("Credit the unused time with a proration."),
			},
			"required": ["subscription_exposed_id"],
		},
	),
	_post(
		"createRefund",
		"Refund a payment, fully or in part, by payment intent (pi_…) or charge (ch_…).",
		["refunds"],
		"/v1/refunds",
		body=passthrough("payment_intent", "charge", "amount", "reason", "metadata"),
		input_schema={
			"type": "object",
			"properties": {
				"payment_intent": string("The payment intent to refund."),
				"charge": string("The charge to refund (instead of payment_intent)."),
				"amount": integer(
					"Amount to refund in the smallest currency unit; default: all that is left.",
					minimum=1,
				),
				"reason": string(
					"Why, for the records.",
					enum=["duplicate", "fraudulent", "requested_by_customer"],
				),
				"metadata": _METADATA,
			},
		},
	),
	_post(
		"createPaymentLink",
		(
			"Create a payment link: a shareable URL (returned as `url`) to a hosted payment page "
			"for the given prices, reusable by any number of customers."
		),
		["payments"],
		"/v1/payment_links",
		body=passthrough(
			"line_items",
			"after_completion",
			"allow_promotion_codes",
			"billing_address_collection",
			"customer_creation",
			"inactive_message",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"line_items": _LINK_ITEMS,
				"after_completion": _AFTER_COMPLETION,
				"allow_promotion_codes": boolean("Show a promotion code field."),
				"billing_address_collection": _BILLING_ADDRESS,
				"customer_creation": _CUSTOMER_CREATION,
				"inactive_message": string("Shown to customers once the link is deactivated."),
				"metadata": _METADATA,
			},
			"required": ["line_items"],
		},
	),
	_post(
		"updatePaymentLink",
		(
			"Change a payment link: deactivate it (active false) or reactivate it, change "
			"quantities, the page after payment, or metadata. Its URL stays the same."
		),
		["payments"],
		"/v1/payment_links/{{ input.payment_link }}",
		body=passthrough(
			"active",
			"line_items",
			"after_completion",
			"allow_promotion_codes",
			"billing_address_collection",
			"customer_creation",
			"inactive_message",
			"metadata",
		),
		input_schema={
			"type": "object",
			"properties": {
				"payment_link": string("The payment link id (plink_…)."),
				"active": boolean("false deactivates the link (payers see inactive_message)."),
				"line_items": array(
					{
						"type": "object",
						"properties": {
							"id": {"type": "string", "description": "The line item id (li_…)."},
							"quantity": {"type": "integer", "minimum": 1},
						},
						"required": ["id"],
					},
					'Existing line items to change, e.g. [{"id": "li_123", "quantity": 2}].',
				),
				"after_completion": _AFTER_COMPLETION,
				"allow_promotion_codes": boolean("Show a promotion code field."),
				"billing_address_collection": _BILLING_ADDRESS,
				"customer_creation": _CUSTOMER_CREATION,
				"inactive_message": string("Shown to customers once the link is deactivated."),
				"metadata": _METADATA,
			},
			"required": ["payment_link"],
		},
	),
	HttpTool(
		handle="listPaymentLinks",
		description="List payment links, newest first, optionally only active or inactive ones. Cursor-paginated.",
		scopes=["read"],
		method="GET",
		endpoint="/v1/payment_links",
		query_params=passthrough("active", "limit", "starting_after", "ending_before"),
		input_schema={
			"type": "object",
			"properties": {
				"active": boolean("Only active (true) or only inactive (false) links."),
				"limit": _LIMIT,
				"starting_after": _AFTER,
				"ending_before": _BEFORE,
			},
		},
		output_schema=_LIST_OUTPUT,
	),
	_post(
		"sendInvoice",
		(
			"Email a finalized invoice to its customer now (collection_method send_invoice; "
			"finalizeInvoice a draft first). In test mode no email is sent."
		),
		["billing"],
		"/v1/invoices/{{ input.invoice }}/send",
		input_schema={
			"type": "object",
			"properties": {"invoice": string("The finalized invoice id (in_…).")},
			"required": ["invoice"],
		},
	),
	_post(
		"voidInvoice",
		(
			"Void a finalized invoice that was not paid: it can no longer be paid and stays on "
			"record (a draft is deleted instead; a paid invoice needs a credit note). Cannot be undone."
		),
		["billing"],
		"/v1/invoices/{{ input.invoice }}/void",
		input_schema={
			"type": "object",
			"properties": {"invoice": string("The finalized, unpaid invoice id (in_…).")},
			"required": ["invoice"],
		},
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"createCustomer": [],
		"updateCustomer": [],
		"createProduct": [],
		"createPrice": [],
		"createInvoiceItem": [],
		"createInvoice": [],
		"updateSubscription": [],
		"cancelSubscription": [],
		"listSubscriptions": ["private"],
		"createPaymentIntent": ["outbound"],
		"createCheckoutSession": ["outbound"],
		"createSubscription": ["outbound"],
		"finalizeInvoice": ["outbound"],
		"createRefund": ["outbound"],
		"listPaymentLinks": ["private"],
		"createPaymentLink": ["outbound"],
		"updatePaymentLink": ["outbound"],
		"sendInvoice": ["outbound"],
		"voidInvoice": ["outbound"],
		# Others' words: names, addresses and fields customers typed in Checkout (any object
		# may carry them).
		"listCustomers": ["private", "untrusted"],
		"search": ["private", "untrusted"],
		"retrieve": ["private", "untrusted"],
	},
	id="stripe",
	name="Stripe",
	description="Customers, products and prices, payments, checkout, payment links, invoices, subscriptions and refunds on Stripe.",
	api_version=STRIPE_VERSION,
	api_setup=ApiSetup(
		base_url="https://api.stripe.com",
		headers={"Stripe-Version": STRIPE_VERSION, "Stripe-Account": "{{ config.accountId }}"},
		# form-data's indexed and bracketed keys (expand[0]=a, metadata[k]=v,
		# line_items[0][price]=p) are what stripe-python 16.1.0 sends for API version
		# 2026-10-28.endive (STRIPE_VERSION), and what Stripe's OpenAPI document asks with
		# deepObject; tests/integrations/commerce/test_stripe_form_bodies.py compares the bytes.
		request_format="form-data",
		idempotency_header="Idempotency-Key",
		# Stripe prunes a key once it is at least 24 h old and runs a request that reuses it
		# again (docs.stripe.com/api/idempotent_requests): a charge in doubt for longer is
		# not repeated with its key; a person is asked.
		idempotency_key_lifetime=24 * 3600,
	),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://connect.stripe.com/oauth/authorize",
			token_url="https://connect.stripe.com/oauth/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=["read_write"],
			auth_params={"response_type": "code"},
		),
	],
	scopes={
		"read": "Read customers, payments, invoices, subscriptions, products and prices; search.",
		"write": "Create and update customers, products and prices.",
		"payments": "Create payment intents, checkout sessions and payment links (collect money).",
		"billing": "Create, finalize, send and void invoices; create, change and cancel subscriptions.",
		"refunds": "Refund payments (money leaves the account).",
	},
	tools=TOOLS,
	docs="""## Get a token

Open <https://dashboard.stripe.com/apikeys> and create a **restricted key** (`rk_…`) with only
the permissions the agent needs (e.g. Customers write, PaymentIntents write, Checkout Sessions
write, Payment Links write, Invoices write, Subscriptions write, Refunds write, Products and
Prices write), or use the secret key (`sk_…`). Start with test-mode keys (`sk_test_…`).

Payment links (`createPaymentLink`) are shareable URLs anyone can pay through until
`updatePaymentLink` sets `active` to false. `sendInvoice` emails a finalized invoice;
`voidInvoice` voids one that is unpaid (it cannot be undone).

```python
om = OpenMolt(integrations={"stripe": {"apiKey": "rk_test_..."}})
```

To act on a connected account, add `"accountId": "acct_…"` (sent as `Stripe-Account`).
Stripe Connect OAuth (`https://connect.stripe.com/oauth/authorize`, scope `read_write`) gives a
token usable as `{"type": "oauth2", "config": {"accessToken", "refreshToken", "clientId",
"clientSecret"}}`.

Every request sends `Stripe-Version: 2026-10-28.endive`. Every write carries an `Idempotency-Key`
(one UUID per call, kept across automatic retries and across a durable run's replay after a crash;
pass `idempotency_key` to choose it), so a retry never charges twice.
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Stripe integration."""
	register(INTEGRATION)
