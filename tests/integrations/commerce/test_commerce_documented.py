"""Airtable and Etsy publish no machine-readable reference: their tools are pinned to the official
documentation's endpoint pages, cited per entry (method, path, query and body parameter names).
"""

from __future__ import annotations

import pytest

from openmolt_integrations import airtable, etsy

AT = "https://airtable.com/developers/web/api/"
ETSY = "https://developers.etsy.com/documentation/reference#operation/"

# handle: (doc URL, method, path, allowed query params, allowed body params)
AIRTABLE_DOCS = {
	"whoami": (AT + "get-user-id-scopes", "GET", "/v0/meta/whoami", set(), set()),
	"listBases": (AT + "list-bases", "GET", "/v0/meta/bases", {"offset"}, set()),
	"getBaseSchema": (
		AT + "get-base-schema",
		"GET",
		"/v0/meta/bases/{baseId}/tables",
		{"include"},
		set(),
	),
	# The page's POST form ("make a POST request to /v0/{baseId}/{tableIdOrName}/listRecords
	# while passing the parameters within the body"), for its 16,000-character URL limit.
	"listRecords": (
		AT + "list-records",
		"POST",
		"/v0/{baseId}/{tableIdOrName}/listRecords",
		{"timeZone", "userLocale"},
		{
			"pageSize",
			"maxRecords",
			"offset",
			"view",
			"sort",
			"filterByFormula",
			"cellFormat",
			"fields",
			"returnFieldsByFieldId",
			"recordMetadata",
		},
	),
	"getRecord": (
		AT + "get-record",
		"GET",
		"/v0/{baseId}/{tableIdOrName}/{recordId}",
		{"cellFormat", "returnFieldsByFieldId"},
		set(),
	),
	"createRecords": (
		AT + "create-records",
		"POST",
		"/v0/{baseId}/{tableIdOrName}",
		set(),
		{"fields", "records", "returnFieldsByFieldId", "typecast"},
	),
	"updateRecords": (
		AT + "update-multiple-records",
		"PATCH",
		"/v0/{baseId}/{tableIdOrName}",
		set(),
		{"performUpsert", "returnFieldsByFieldId", "typecast", "records"},
	),
	"upsertRecords": (
		AT + "update-multiple-records",
		"PATCH",
		"/v0/{baseId}/{tableIdOrName}",
		set(),
		{"performUpsert", "returnFieldsByFieldId", "typecast", "records"},
	),
	"deleteRecords": (
		AT + "delete-multiple-records",
		"DELETE",
		"/v0/{baseId}/{tableIdOrName}",
		{"records"},
		set(),
	),
	"createTable": (
		AT + "create-table",
		"POST",
		"/v0/meta/bases/{baseId}/tables",
		set(),
		{"name", "description", "fields"},
	),
	"createField": (
		AT + "create-field",
		"POST",
		"/v0/meta/bases/{baseId}/tables/{tableId}/fields",
		set(),
		{"name", "type", "description", "options"},
	),
	"updateTable": (
		AT + "update-table",
		"PATCH",
		"/v0/meta/bases/{baseId}/tables/{tableIdOrName}",
		set(),
		{"name", "description", "dateDependencySettings"},
	),
	"updateField": (
		AT + "update-field",
		"PATCH",
		"/v0/meta/bases/{baseId}/tables/{tableId}/fields/{columnId}",
		set(),
		{"name", "description"},
	),
	"uploadAttachment": (
		AT + "upload-attachment",
		"POST",
		"/v0/{baseId}/{recordId}/{attachmentFieldIdOrName}/uploadAttachment",
		set(),
		{"contentType", "file", "filename"},
	),
	"listComments": (
		AT + "list-comments",
		"GET",
		"/v0/{baseId}/{tableIdOrName}/{recordId}/comments",
		{"pageSize", "offset"},
		set(),
	),
	"createComment": (
		AT + "create-comment",
		"POST",
		"/v0/{baseId}/{tableIdOrName}/{recordId}/comments",
		set(),
		{"text", "parentCommentId"},
	),
}

_LISTING_FORM = {
	"quantity",
	"title",
	"description",
	"price",
	"who_made",
	"when_made",
	"taxonomy_id",
	"shipping_profile_id",
	"return_policy_id",
	"materials",
	"shop_section_id",
	"processing_min",
	"processing_max",
	"tags",
	"styles",
	"is_supply",
	"is_customizable",
	"should_auto_renew",
	"is_taxable",
	"type",
}

ETSY_DOCS = {
	"getMe": (ETSY + "getMe", "GET", "/v3/application/users/me", set(), set()),
	"getShop": (ETSY + "getShop", "GET", "/v3/application/shops/{shop_id}", set(), set()),
	"listShopListings": (
		ETSY + "getListingsByShop",
		"GET",
		"/v3/application/shops/{shop_id}/listings",
		{"state", "limit", "offset", "sort_on", "sort_order", "includes", "legacy"},
		set(),
	),
	"getListing": (
		ETSY + "getListing",
		"GET",
		"/v3/application/listings/{listing_id}",
		{"includes", "language", "legacy"},
		set(),
	),
	"searchActiveListings": (
		ETSY + "findAllListingsActive",
		"GET",
		"/v3/application/listings/active",
		{
			"limit",
			"offset",
			"keywords",
			"sort_on",
			"sort_order",
			"min_price",
			"max_price",
			"taxonomy_id",
			"shop_location",
			"legacy",
		},
		set(),
	),
	"createDraftListing": (
		ETSY + "createDraftListing",
		"POST",
		"/v3/application/shops/{shop_id}/listings",
		{"legacy"},
		_LISTING_FORM,
	),
	"updateListing": (
		ETSY + "updateListing",
		"PATCH",
		"/v3/application/shops/{shop_id}/listings/{listing_id}",
		{"legacy"},
		(_LISTING_FORM - {"quantity", "price"}) | {"state", "featured_rank"},
	),
	"deleteListing": (
		ETSY + "deleteListing",
		"DELETE",
		"/v3/application/listings/{listing_id}",
		set(),
		set(),
	),
	"getListingInventory": (
		ETSY + "getListingInventory",
		"GET",
		"/v3/application/listings/{listing_id}/inventory",
		{"show_deleted", "includes", "legacy"},
		set(),
	),
	"updateListingInventory": (
		ETSY + "updateListingInventory",
		"PUT",
		"/v3/application/listings/{listing_id}/inventory",
		{"legacy"},
		{
			"products",
			"price_on_property",
			"quantity_on_property",
			"sku_on_property",
			"readiness_state_on_property",
		},
	),
	"uploadListingImage": (
		ETSY + "uploadListingImage",
		"POST",
		"/v3/application/shops/{shop_id}/listings/{listing_id}/images",
		set(),
		{"image", "listing_image_id", "rank", "overwrite", "is_watermarked", "alt_text"},
	),
	"listListingImages": (
		ETSY + "getListingImages",
		"GET",
		"/v3/application/listings/{listing_id}/images",
		set(),
		set(),
	),
	"deleteListingImage": (
		ETSY + "deleteListingImage",
		"DELETE",
		"/v3/application/shops/{shop_id}/listings/{listing_id}/images/{listing_image_id}",
		set(),
		set(),
	),
	"listReceipts": (
		ETSY + "getShopReceipts",
		"GET",
		"/v3/application/shops/{shop_id}/receipts",
		{
			"min_created",
			"max_created",
			"min_last_modified",
			"max_last_modified",
			"limit",
			"offset",
			"sort_on",
			"sort_order",
			"was_paid",
			"was_shipped",
			"was_delivered",
			"was_canceled",
			"legacy",
		},
		set(),
	),
	"getReceipt": (
		ETSY + "getShopReceipt",
		"GET",
		"/v3/application/shops/{shop_id}/receipts/{receipt_id}",
		{"legacy"},
		set(),
	),
	"createReceiptShipment": (
		ETSY + "createReceiptShipment",
		"POST",
		"/v3/application/shops/{shop_id}/receipts/{receipt_id}/tracking",
		{"legacy"},
		{"tracking_code", "carrier_name", "send_bcc", "note_to_buyer"},
	),
	"listShopReviews": (
		ETSY + "getReviewsByShop",
		"GET",
		"/v3/application/shops/{shop_id}/reviews",
		{"limit", "offset", "min_created", "max_created"},
		set(),
	),
	"listShippingProfiles": (
		ETSY + "getShopShippingProfiles",
		"GET",
		"/v3/application/shops/{shop_id}/shipping-profiles",
		set(),
		set(),
	),
	"listReturnPolicies": (
		ETSY + "getShopReturnPolicies",
		"GET",
		"/v3/application/shops/{shop_id}/policies/return",
		set(),
		set(),
	),
	"createReturnPolicy": (
		ETSY + "createShopReturnPolicy",
		"POST",
		"/v3/application/shops/{shop_id}/policies/return",
		set(),
		{"accepts_returns", "accepts_exchanges", "return_deadline"},
	),
	"updateReturnPolicy": (
		ETSY + "updateShopReturnPolicy",
		"PUT",
		"/v3/application/shops/{shop_id}/policies/return/{return_policy_id}",
		set(),
		{"accepts_returns", "accepts_exchanges", "return_deadline"},
	),
	"consolidateReturnPolicies": (
		ETSY + "consolidateShopReturnPolicies",
		"POST",
		"/v3/application/shops/{shop_id}/policies/return/consolidate",
		set(),
		{"source_return_policy_id", "destination_return_policy_id"},
	),
	"deleteReturnPolicy": (
		ETSY + "deleteShopReturnPolicy",
		"DELETE",
		"/v3/application/shops/{shop_id}/policies/return/{return_policy_id}",
		set(),
		set(),
	),
	"getSellerTaxonomyNodes": (
		ETSY + "getSellerTaxonomyNodes",
		"GET",
		"/v3/application/seller-taxonomy/nodes",
		set(),
		set(),
	),
}


def _check(tool, documented, shape) -> None:
	url, method, path, query, body = documented
	s = shape(tool)
	assert (s["method"], s["path"]) == (method, path), f"{tool.handle} disagrees with {url}"
	assert s["query"] <= query, f"{tool.handle}: {s['query'] - query} not documented at {url}"
	assert (s["body"] | s["files"]) <= body, f"{tool.handle}: {s['body'] - body} not at {url}"


@pytest.mark.parametrize("tool", airtable.TOOLS, ids=lambda t: t.handle)
def test_airtable_tool_matches_the_docs(tool, shape) -> None:
	"""Each Airtable tool's method, path and parameter names match its documentation page."""
	assert tool.handle in AIRTABLE_DOCS, f"pin {tool.handle} to its documentation page"
	_check(tool, AIRTABLE_DOCS[tool.handle], shape)


@pytest.mark.parametrize("tool", etsy.TOOLS, ids=lambda t: t.handle)
def test_etsy_tool_matches_the_docs(tool, shape) -> None:
	"""Each Etsy tool's method, path and parameter names match the Open API v3 reference."""
	assert tool.handle in ETSY_DOCS, f"pin {tool.handle} to its reference entry"
	_check(tool, ETSY_DOCS[tool.handle], shape)


def test_airtable_uploads_go_to_the_content_host_with_the_5_mb_cap() -> None:
	"""uploadAttachment posts to content.airtable.com and reads at most 5 MB of the file."""
	(tool,) = [t for t in airtable.TOOLS if t.handle == "uploadAttachment"]
	assert tool.base_url == airtable.CONTENT_URL == "https://content.airtable.com"
	assert tool.body["file"] == "{{ input.file | file_base64: 5242880 }}"
	assert tool.body["contentType"] == "{{ input.file | file_media_type }}"
	assert tool.scopes == ["write"]


def test_airtable_table_and_field_descriptions_hold_1_to_20000_characters() -> None:
	"""Every table or field description input is non-empty and at most 20,000 characters.

	https://airtable.com/developers/web/api/create-table, create-field, update-table and
	update-field: "If present, must be a non-empty string no longer than 20,000 characters."
	"""
	tools = {t.handle: t.input_schema["properties"] for t in airtable.TOOLS}
	descriptions = [
		tools["createTable"]["description"],
		tools["createTable"]["fields"]["items"]["properties"]["description"],
		tools["createField"]["description"],
		tools["updateTable"]["description"],
		tools["updateField"]["description"],
	]
	for schema in descriptions:
		assert (schema.get("minLength"), schema.get("maxLength")) == (1, 20000), schema


def test_airtable_only_lists_page_with_offset() -> None:
	"""Only listRecords promises an offset; create and update answer their records, no paging.

	https://airtable.com/developers/web/api/list-records ("offset" in the response) against
	create-records and update-multiple-records (a "records" array only).
	"""
	tools = {t.handle: t for t in airtable.TOOLS}
	assert "offset" in tools["listRecords"].output_schema["properties"]
	for handle in ("createRecords", "updateRecords"):
		assert set(tools[handle].output_schema["properties"]) == {"records"}, handle


def test_airtable_uses_bracketed_query_keys() -> None:
	"""Airtable query arrays use its bracket syntax (records[]); listRecords sends fields and sort
	as JSON in its POST body."""
	tools = {t.handle: t for t in airtable.TOOLS}
	assert tools["listRecords"].body["fields"] == "{{ input.fields }}"
	assert tools["listRecords"].body["sort"] == "{{ input.sort }}"
	assert "records[]" in tools["deleteRecords"].query_params
	assert "include[]" in tools["getBaseSchema"].query_params


def test_etsy_sends_the_api_key_with_the_shared_secret() -> None:
	"""Every Etsy credential sends x-api-key as keystring:shared_secret next to its auth."""
	for cred in etsy.INTEGRATION.credential_setup:
		assert cred.headers["x-api-key"].startswith("{{ config.apiKey }}")
		assert ":{{ config.sharedSecret }}" in cred.headers["x-api-key"]
	(oauth,) = [c for c in etsy.INTEGRATION.credential_setup if c.type == "oauth2"]
	assert oauth.pkce == "required" and not oauth.client_secret_required
	assert oauth.token_url == "https://api.etsy.com/v3/public/oauth/token"


# Query parameters the Open API v3 reference declares as arrays (style form, explode true: the
# key repeats, ``includes=Images&includes=Shop``); none may be joined into one value.
ETSY_ARRAY_QUERY = {"includes"}


def test_etsy_array_query_parameters_repeat_the_key() -> None:
	"""includes is sent as the input list (one pair per value), never comma-joined."""
	checked = 0
	for tool in etsy.TOOLS:
		for name, template in tool.query_params.items():
			assert "join" not in str(template), f"{tool.handle}.{name} is joined"
			if name in ETSY_ARRAY_QUERY:
				assert template == f"{{{{ input.{name} }}}}"
				assert tool.input_schema["properties"][name]["type"] == "array"
				checked += 1
	assert checked == 2


def test_etsy_return_policy_deadline_is_the_references_enum() -> None:
	"""return_deadline takes only the days the reference lists."""
	for handle in ("createReturnPolicy", "updateReturnPolicy"):
		(tool,) = [t for t in etsy.TOOLS if t.handle == handle]
		prop = tool.input_schema["properties"]["return_deadline"]
		assert prop["enum"] == [7, 14, 21, 30, 45, 60, 90]
		assert tool.scopes == ["shopWrite"]
	oauth = next(c for c in etsy.INTEGRATION.credential_setup if c.type == "oauth2")
	assert "shops_w" in oauth.scopes
