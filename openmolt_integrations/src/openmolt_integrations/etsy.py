"""Etsy Open API v3: the shop, listings, inventory, images, receipts and shop policies.

Every request carries ``x-api-key: <keystring>:<shared secret>`` (Etsy requires the shared secret
in the header since 2025) and, for shop data, an OAuth 2.0 bearer token obtained with PKCE.
Listing and return policy writes are form-encoded; inventory updates and receipt tracking are
JSON. Lists page with ``limit`` and ``offset`` and answer ``{count, results}``.
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
from openmolt_core.integrations.schema import array, boolean, integer, number, passthrough, string

__all__ = ["INTEGRATION", "TOOLS", "register_integrations"]

_API_KEY = "{{ config.apiKey }}{% if config.sharedSecret %}:{{ config.sharedSecret }}{% endif %}"


_SHOP = integer("The numeric shop id (getMe returns it as shop_id).", minimum=1)
_LISTING = integer("The numeric listing id.", minimum=1)
_RECEIPT = integer("The numeric receipt (order) id.", minimum=1)
_LIMIT = integer("Results per page (1-100).", minimum=1, maximum=100, default=25)
_OFFSET = integer("How many results to skip (page × limit).", minimum=0, default=0)
_EARLIEST = 946684800
"""The earliest creation time Etsy accepts as a filter: 2000-01-01 (Unix time)."""
_MIN_CREATED = integer(
	"Created at or after this Unix time (seconds, 946684800 = 2000-01-01 or later).",
	minimum=_EARLIEST,
)
_MAX_CREATED = integer(
	"Created at or before this Unix time (seconds, 946684800 = 2000-01-01 or later).",
	minimum=_EARLIEST,
)
_SORT_ORDER = string("Sort direction.", enum=["asc", "desc"], default="desc")
_PAGED_OUTPUT = {
	"type": "object",
	"properties": {
		"count": {"type": "integer", "description": "Total results across all pages."},
		"results": {"type": "array", "items": {"type": "object"}},
	},
}
_WHO_MADE = string("Who made the item.", enum=["i_did", "someone_else", "collective"])
_WHEN_MADE = string(
	"When it was made: made_to_order, a range (2020_2026, 2010_2019, 2007_2009, 2000_2006, "
	"before_2007), a decade (1990s ... 1900s), a century (1800s, 1700s) or before_1700.",
	enum=[
		"made_to_order",
		"2020_2026",
		"2010_2019",
		"2007_2009",
		"before_2007",
		"2000_2006",
		"1990s",
		"1980s",
		"1970s",
		"1960s",
		"1950s",
		"1940s",
		"1930s",
		"1920s",
		"1910s",
		"1900s",
		"1800s",
		"1700s",
		"before_1700",
	],
)
_TAGS = string("Comma-separated tags (up to 13), e.g. mug,ceramic,gift for her.")
_MATERIALS = string("Comma-separated materials, e.g. stoneware,glaze.")
_LISTING_FIELDS = {
	"title": string("The listing title."),
	"description": string("The listing description (plain text)."),
	"who_made": _WHO_MADE,
	"when_made": _WHEN_MADE,
	"is_supply": boolean("true for a craft supply, false for a finished product."),
	"taxonomy_id": integer("The seller taxonomy id (see getSellerTaxonomyNodes).", minimum=1),
	"shipping_profile_id": integer(
		"Shipping profile id (see listShippingProfiles); required for physical items.", minimum=1
	),
	"return_policy_id": integer("Return policy id.", minimum=1),
	"shop_section_id": integer("Shop section id.", minimum=1),
	"tags": _TAGS,
	"materials": _MATERIALS,
	"should_auto_renew": boolean("Renew the listing automatically when it expires."),
	"type": string("physical, download (digital) or both.", enum=["physical", "download", "both"]),
}


_RETURN_POLICY_ID = integer("The numeric return policy id.", minimum=1)
_RETURN_POLICY = {
	"accepts_returns": boolean("Whether the buyer may return items for a refund."),
	"accepts_exchanges": boolean("Whether the buyer may exchange items."),
	"return_deadline": integer(
		"Days the buyer has to return or exchange (one of 7, 14, 21, 30, 45, 60, 90).",
		enum=[7, 14, 21, 30, 45, 60, 90],
	),
}


TOOLS = [
	HttpTool(
		handle="getMe",
		description="Get the authorized user's user_id and shop_id.",
		scopes=["shopRead"],
		method="GET",
		endpoint="/v3/application/users/me",
	),
	HttpTool(
		handle="getShop",
		description="Get a shop: name, title, currency, counts, policies and status.",
		scopes=["shopRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}",
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP},
			"required": ["shop_id"],
		},
	),
	HttpTool(
		handle="listShopListings",
		description="List a shop's listings in one state (active by default), paginated.",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/listings",
		query_params=passthrough("state", "limit", "offset", "sort_on", "sort_order", "includes"),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"state": string(
					"Listing state.",
					enum=["active", "inactive", "sold_out", "draft", "expired"],
					default="active",
				),
				"limit": _LIMIT,
				"offset": _OFFSET,
				"sort_on": string(
					"Sort field.", enum=["created", "price", "updated", "score"], default="created"
				),
				"sort_order": _SORT_ORDER,
				"includes": array(
					{
						"type": "string",
						"enum": [
							"Shipping",
							"Images",
							"Shop",
							"User",
							"Translations",
							"Inventory",
							"Videos",
						],
					},
					"Associations to include with each listing.",
				),
			},
			"required": ["shop_id"],
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="getListing",
		description="Get one listing, optionally with its images, inventory, shipping and shop.",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/listings/{{ input.listing_id }}",
		query_params=passthrough("includes"),
		input_schema={
			"type": "object",
			"properties": {
				"listing_id": _LISTING,
				"includes": array(
					{
						"type": "string",
						"enum": [
							"Shipping",
							"Images",
							"Shop",
							"User",
							"Translations",
							"Inventory",
							"Videos",
						],
					},
					"Associations to include.",
				),
			},
			"required": ["listing_id"],
		},
	),
	HttpTool(
		handle="searchActiveListings",
		description="Search active listings across all of Etsy by keywords, price and category.",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/listings/active",
		query_params=passthrough(
			"keywords",
			"limit",
			"offset",
			"sort_on",
			"sort_order",
			"min_price",
			"max_price",
			"taxonomy_id",
			"shop_location",
		),
		input_schema={
			"type": "object",
			"properties": {
				"keywords": string("Search words."),
				"limit": _LIMIT,
				"offset": _OFFSET,
				"sort_on": string(
					"Sort field.", enum=["created", "price", "updated", "score"], default="created"
				),
				"sort_order": _SORT_ORDER,
				"min_price": number("Lowest price, in the shop currency.", minimum=0),
				"max_price": number("Highest price.", minimum=0),
				"taxonomy_id": integer("Only this category (seller taxonomy id).", minimum=1),
				"shop_location": string("Only shops in this place, e.g. Brooklyn, NY."),
			},
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="createDraftListing",
		description=(
			"Create a draft listing (physical by default) in a shop. It stays a draft until it "
			"has an image (uploadListingImage) and is activated with updateListing state=active."
		),
		scopes=["listingsWrite"],
		method="POST",
		endpoint="/v3/application/shops/{{ input.shop_id }}/listings",
		request_format="form-data",
		body=passthrough("quantity", "price", *_LISTING_FIELDS),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"quantity": integer("How many are for sale.", minimum=1),
				"price": number("Price in the shop currency, e.g. 24.5.", exclusiveMinimum=0),
				**_LISTING_FIELDS,
			},
			"required": [
				"shop_id",
				"quantity",
				"title",
				"description",
				"price",
				"who_made",
				"when_made",
				"taxonomy_id",
			],
		},
	),
	HttpTool(
		handle="updateListing",
		description=(
			"Update a listing's details, or publish (state active) / deactivate (state inactive) "
			"it. Prices and quantities live in the inventory: use updateListingInventory."
		),
		scopes=["listingsWrite"],
		method="PATCH",
		endpoint="/v3/application/shops/{{ input.shop_id }}/listings/{{ input.listing_id }}",
		request_format="form-data",
		body=passthrough("state", *_LISTING_FIELDS),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"listing_id": _LISTING,
				"state": string("active publishes, inactive hides.", enum=["active", "inactive"]),
				**_LISTING_FIELDS,
			},
			"required": ["shop_id", "listing_id"],
		},
	),
	HttpTool(
		handle="deleteListing",
		description="Delete a listing permanently.",
		scopes=["listingsDelete"],
		method="DELETE",
		endpoint="/v3/application/listings/{{ input.listing_id }}",
		input_schema={
			"type": "object",
			"properties": {"listing_id": _LISTING},
			"required": ["listing_id"],
		},
	),
	HttpTool(
		handle="getListingInventory",
		description="Get a listing's inventory: products (variations), SKUs, prices and quantities.",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/listings/{{ input.listing_id }}/inventory",
		input_schema={
			"type": "object",
			"properties": {"listing_id": _LISTING},
			"required": ["listing_id"],
		},
	),
	HttpTool(
		handle="updateListingInventory",
		description=(
			"Replace a listing's whole inventory (every product must be listed, changed or not). "
			"Read it with getListingInventory first and send it back edited."
		),
		scopes=["listingsWrite"],
		method="PUT",
		endpoint="/v3/application/listings/{{ input.listing_id }}/inventory",
		request_format="json",
		body=passthrough(
			"products", "price_on_property", "quantity_on_property", "sku_on_property"
		),
		input_schema={
			"type": "object",
			"properties": {
				"listing_id": _LISTING,
				"products": array(
					{
						"type": "object",
						"properties": {
							"sku": {"type": "string"},
							"property_values": {"type": "array", "items": {"type": "object"}},
							"offerings": {
								"type": "array",
								"items": {
									"type": "object",
									"properties": {
										"price": {"type": "number"},
										"quantity": {"type": "integer"},
										"is_enabled": {"type": "boolean"},
									},
									"required": ["price", "quantity", "is_enabled"],
								},
							},
						},
						"required": ["offerings"],
					},
					'Products, e.g. [{"sku": "MUG-1", "property_values": [], "offerings": '
					'[{"price": 24.5, "quantity": 10, "is_enabled": true}]}].',
					minItems=1,
				),
				"price_on_property": array(
					{"type": "integer"}, "Property ids that change the price."
				),
				"quantity_on_property": array(
					{"type": "integer"}, "Property ids that change the quantity."
				),
				"sku_on_property": array({"type": "integer"}, "Property ids that change the SKU."),
			},
			"required": ["listing_id", "products"],
		},
	),
	HttpTool(
		handle="uploadListingImage",
		description="Upload an image to a listing (JPEG, PNG or GIF; rank 1 is the main image).",
		scopes=["listingsWrite"],
		method="POST",
		endpoint="/v3/application/shops/{{ input.shop_id }}/listings/{{ input.listing_id }}/images",
		request_format="multipart",
		files=passthrough("image"),
		body=passthrough("rank", "alt_text", "overwrite"),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"listing_id": _LISTING,
				"image": string(
					"A file reference: openmolt-file:<id> or a data: URL of the image."
				),
				"rank": integer("Position among the listing's images, 1 = main.", minimum=1),
				"alt_text": string(
					"Alt text describing the image (up to 500 characters).", maxLength=500
				),
				"overwrite": boolean("Replace the image already at that rank."),
			},
			"required": ["shop_id", "listing_id", "image"],
		},
	),
	HttpTool(
		handle="listListingImages",
		description="List a listing's images in rank order: listing_image_id, rank, alt_text and "
		"URLs at several sizes (url_fullxfull the largest).",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/listings/{{ input.listing_id }}/images",
		input_schema={
			"type": "object",
			"properties": {"listing_id": _LISTING},
			"required": ["listing_id"],
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="deleteListingImage",
		description="Remove an image from a listing (Etsy keeps a copy: uploadListingImage with "
		"its listing_image_id attaches it again).",
		scopes=["listingsWrite"],
		method="DELETE",
		endpoint="/v3/application/shops/{{ input.shop_id }}/listings/{{ input.listing_id }}"
		"/images/{{ input.listing_image_id }}",
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"listing_id": _LISTING,
				"listing_image_id": integer("The image's id (from listListingImages).", minimum=1),
			},
			"required": ["shop_id", "listing_id", "listing_image_id"],
		},
	),
	HttpTool(
		handle="listReceipts",
		description=(
			"List a shop's receipts (orders), newest first, filtered by paid/shipped status and "
			"creation time (Unix seconds)."
		),
		scopes=["transactionsRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/receipts",
		query_params=passthrough(
			"was_paid",
			"was_shipped",
			"was_delivered",
			"min_created",
			"max_created",
			"limit",
			"offset",
			"sort_on",
			"sort_order",
		),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"was_paid": boolean("Only paid (true) or unpaid (false) receipts."),
				"was_shipped": boolean("Only shipped (true) or unshipped (false) receipts."),
				"was_delivered": boolean("Only delivered (true) or undelivered receipts."),
				"min_created": _MIN_CREATED,
				"max_created": _MAX_CREATED,
				"limit": _LIMIT,
				"offset": _OFFSET,
				"sort_on": string(
					"Sort field.", enum=["created", "updated", "receipt_id"], default="created"
				),
				"sort_order": _SORT_ORDER,
			},
			"required": ["shop_id"],
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="getReceipt",
		description="Get one receipt: buyer, address, items (transactions), totals and shipments.",
		scopes=["transactionsRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/receipts/{{ input.receipt_id }}",
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP, "receipt_id": _RECEIPT},
			"required": ["shop_id", "receipt_id"],
		},
	),
	HttpTool(
		handle="createReceiptShipment",
		description="Add tracking to a receipt and mark it shipped; Etsy notifies the buyer.",
		scopes=["transactionsWrite"],
		method="POST",
		endpoint="/v3/application/shops/{{ input.shop_id }}/receipts/{{ input.receipt_id }}/tracking",
		# The one Etsy write here whose body the document types as application/json.
		request_format="json",
		body=passthrough("tracking_code", "carrier_name", "send_bcc", "note_to_buyer"),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"receipt_id": _RECEIPT,
				"tracking_code": string("The carrier's tracking number."),
				"carrier_name": string("The carrier, e.g. usps, ups, fedex, royal-mail."),
				"send_bcc": boolean("Send a copy of the buyer notification to the seller."),
				"note_to_buyer": string("A message included in the shipping notification."),
			},
			"required": ["shop_id", "receipt_id"],
		},
	),
	HttpTool(
		handle="listShopReviews",
		description="List a shop's reviews (rating, text, listing), newest first.",
		scopes=["shopRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/reviews",
		query_params=passthrough("limit", "offset", "min_created", "max_created"),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"limit": _LIMIT,
				"offset": _OFFSET,
				"min_created": _MIN_CREATED,
				"max_created": _MAX_CREATED,
			},
			"required": ["shop_id"],
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="listShippingProfiles",
		description="List a shop's shipping profiles (their ids are needed to create physical listings).",
		scopes=["shopRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/shipping-profiles",
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP},
			"required": ["shop_id"],
		},
	),
	HttpTool(
		handle="listReturnPolicies",
		description="List a shop's return policies (a physical listing needs a return_policy_id to be activated).",
		scopes=["shopRead"],
		method="GET",
		endpoint="/v3/application/shops/{{ input.shop_id }}/policies/return",
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP},
			"required": ["shop_id"],
		},
		output_schema=_PAGED_OUTPUT,
	),
	HttpTool(
		handle="createReturnPolicy",
		description="Create a return policy; returns its return_policy_id for createDraftListing or updateListing. A shop cannot have two policies with the same settings.",
		scopes=["shopWrite"],
		method="POST",
		endpoint="/v3/application/shops/{{ input.shop_id }}/policies/return",
		body=passthrough(*_RETURN_POLICY),
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP, **_RETURN_POLICY},
			"required": ["shop_id", "accepts_returns", "accepts_exchanges"],
		},
	),
	HttpTool(
		handle="updateReturnPolicy",
		description="Change a return policy's settings (every listing using it follows). If another policy already has these settings, Etsy refuses: move its listings with consolidateReturnPolicies instead.",
		scopes=["shopWrite"],
		method="PUT",
		endpoint="/v3/application/shops/{{ input.shop_id }}/policies/return/{{ input.return_policy_id }}",
		body=passthrough(*_RETURN_POLICY),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"return_policy_id": _RETURN_POLICY_ID,
				**_RETURN_POLICY,
			},
			"required": ["shop_id", "return_policy_id", "accepts_returns", "accepts_exchanges"],
		},
	),
	HttpTool(
		handle="consolidateReturnPolicies",
		description="Move every listing of one return policy to another and delete the first.",
		scopes=["shopWrite"],
		method="POST",
		endpoint="/v3/application/shops/{{ input.shop_id }}/policies/return/consolidate",
		body=passthrough("source_return_policy_id", "destination_return_policy_id"),
		input_schema={
			"type": "object",
			"properties": {
				"shop_id": _SHOP,
				"source_return_policy_id": integer(
					"The policy whose listings move; it is deleted.", minimum=1
				),
				"destination_return_policy_id": integer(
					"The policy the listings move to.", minimum=1
				),
			},
			"required": ["shop_id", "source_return_policy_id", "destination_return_policy_id"],
		},
	),
	HttpTool(
		handle="deleteReturnPolicy",
		description="Delete a return policy that no listing uses.",
		scopes=["shopWrite"],
		method="DELETE",
		endpoint="/v3/application/shops/{{ input.shop_id }}/policies/return/{{ input.return_policy_id }}",
		input_schema={
			"type": "object",
			"properties": {"shop_id": _SHOP, "return_policy_id": _RETURN_POLICY_ID},
			"required": ["shop_id", "return_policy_id"],
		},
	),
	HttpTool(
		handle="getSellerTaxonomyNodes",
		description="Get Etsy's seller category tree (ids for taxonomy_id).",
		scopes=["listingsRead"],
		method="GET",
		endpoint="/v3/application/seller-taxonomy/nodes",
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"getMe": [],
		"getShop": [],
		"listShopListings": [],
		"getListing": [],
		"createDraftListing": [],
		"deleteListing": [],
		"getListingInventory": [],
		"updateListingInventory": [],
		"uploadListingImage": [],
		"listListingImages": [],
		"deleteListingImage": [],
		"listShippingProfiles": [],
		"listReturnPolicies": [],
		"createReturnPolicy": [],
		"updateReturnPolicy": [],
		"consolidateReturnPolicies": [],
		"deleteReturnPolicy": [],
		"getSellerTaxonomyNodes": [],
		"listReceipts": ["private", "untrusted"],
		"getReceipt": ["private", "untrusted"],
		"listShopReviews": ["untrusted"],
		"searchActiveListings": ["untrusted"],
		"createReceiptShipment": ["outbound"],
		"updateListing": ["outbound"],
	},
	id="etsy",
	name="Etsy",
	description="Run an Etsy shop: listings, inventory, images, orders (receipts) and shipments.",
	api_version="v3",
	api_setup=ApiSetup(base_url="https://api.etsy.com", request_format="form-data"),
	credential_setup=[
		OAuth2Credential(
			type="oauth2",
			auth_url="https://www.etsy.com/oauth/connect",
			token_url="https://api.etsy.com/v3/public/oauth/token",
			client_id="{{ config.apiKey }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=[
				"email_r",
				"listings_r",
				"listings_w",
				"listings_d",
				"shops_r",
				"shops_w",
				"transactions_r",
				"transactions_w",
			],
			headers={"x-api-key": _API_KEY},
			# Etsy Open API v3: PKCE required, no client secret (the keystring is the client id).
			pkce="required",
			client_secret_required=False,
		),
		CustomCredential(type="custom", headers={"x-api-key": _API_KEY}),
	],
	scopes={
		"shopRead": "Read the user, the shop, its reviews, shipping profiles and return policies (shops_r).",
		"shopWrite": "Create, change and delete return policies (shops_w).",
		"listingsRead": "Read listings, their inventory and categories (listings_r).",
		"listingsWrite": "Create and edit listings, inventory and images (listings_w).",
		"listingsDelete": "Delete listings (listings_d).",
		"transactionsRead": "Read receipts (orders) (transactions_r).",
		"transactionsWrite": "Add tracking and mark orders shipped (transactions_w).",
	},
	tools=TOOLS,
	docs="""## Get a token

1. Create an app at <https://www.etsy.com/developers/your-apps>. Note its **keystring** (the
   API key and OAuth client id) and its **shared secret**, and add your callback URL.
2. Authorize the shop owner with OAuth 2.0 and PKCE: send them to
   `https://www.etsy.com/oauth/connect?response_type=code&client_id=<keystring>&redirect_uri=…&scope=listings_r%20listings_w%20transactions_r%20transactions_w%20shops_r&state=…&code_challenge=…&code_challenge_method=S256`,
   then exchange the code at `https://api.etsy.com/v3/public/oauth/token`
   (`grant_type=authorization_code`, `client_id`, `redirect_uri`, `code`, `code_verifier`).
   Access tokens last 1 hour, refresh tokens 90 days; the token already has the form
   `<user id>.<token>`.

```python
agent = om.create_agent(..., integrations=[{"integration": "etsy", "credential": {
    "type": "oauth2",
    "config": {"apiKey": "<keystring>", "sharedSecret": "<shared secret>",
               "accessToken": "...", "refreshToken": "..."}}}])
```

A physical listing can be activated only with a shipping profile and a return policy: find them
with `listShippingProfiles` and `listReturnPolicies` (or create one with `createReturnPolicy`)
and pass their ids to `createDraftListing` or `updateListing`.

Every request sends `x-api-key: <keystring>:<shared secret>`. Public data (searchActiveListings,
getShop, getListing) also works with the `custom` credential: just `apiKey` and `sharedSecret`.

## Checked against

Every tool's method, path, query and body names, the body fields Etsy requires, the
string-literal enums, the numeric types and bounds (`@min`/`@max`) and each body's encoding
(form, multipart or JSON) are checked by the test
suite against Etsy's Open API v3 document as the `etsy-ts` npm package (8.0.1, generated from
it) types it, and pinned to its reference page. `tags` and `materials` are sent as one
comma-separated string, as the document describes the form field (it types them as arrays).
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Etsy integration."""
	register(INTEGRATION)
