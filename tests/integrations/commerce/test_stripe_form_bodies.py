"""Stripe's form bodies, built-in and imported, are the bytes stripe-python sends.

The reference is the stripe PyPI package (16.1.0, API version 2026-10-28.endive, the version the
built-in integration pins): its requestor sends ``urlencode(list(_api_encode(params)))`` for a
form body and a GET's query, and ``_api_encode``'s names as multipart part names; every list is
written with indices (``expand[0]``), every object with brackets (``metadata[k]``).
stripe_openapi_invoiceitems.json is an extract of Stripe's OpenAPI document (source and commit
inside), which declares ``style: deepObject, explode: true`` for every structured form field and
query parameter: imported operations must send what the SDK sends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from stripe._encode import _api_encode

from openmolt import OpenMolt
from openmolt_core.integrations import HttpTool, Integration
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.integrations.templating import render
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import stripe

pytestmark = pytest.mark.anyio

_DOC = Path(__file__).with_name("stripe_openapi_invoiceitems.json")


def _sdk(params: dict[str, Any]) -> bytes:
	"""What stripe-python's requestor sends for these params (a form body or a GET query)."""
	return urlencode(list(_api_encode(params))).encode()


async def _send(integration: Integration, handle: str, arguments: dict[str, Any]) -> httpx.Request:
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={"id": "x"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	# The built-in integration reads apiKey; the imported one, its bearer scheme's token.
	config = {"apiKey": "sk_test_x", "token": "sk_test_x"}
	om = OpenMolt(entry_points=False, http_client=http, integrations={"s": config})
	om.register_integration("s", integration)
	model = ScriptedModel([call_tool(f"s.{handle}", **arguments), finish(result="ok")])
	await om.create_agent(name="A", model=model, integrations=["s"]).run("go")
	await om.aclose()
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert len(sent) == 1, results
	return sent[0]


def _imported() -> Integration:
	imported = from_openapi(_DOC, id="s", allow_hosts=["files.stripe.com"])
	# The document offers basic and bearer auth; the test sends with the bearer token.
	bearer = [c for c in imported.credential_setup if c.type == "bearer"]
	return imported.model_copy(update={"credential_setup": bearer})


async def test_an_imported_stripe_form_body_is_the_sdk_s_bytes() -> None:
	"""PostInvoiceitems: deepObject arrays and objects (expand[0], discounts[0][coupon],
	metadata[order]) and plain scalars, byte for byte (the engine used to write deepObject only
	for this format by luck: form-data ignored the document's encoding)."""
	params = {  # in the document's order, which the tool's input keeps
		"amount": 500,
		"currency": "usd",
		"customer": "cus_1",
		"discountable": True,
		"discounts": [{"coupon": "c1"}, {"discount": "di_2"}],
		"expand": ["invoice", "customer"],
		"metadata": {"order": "7 8", "note": "a&b=c"},
		"period": {"end": 2, "start": 1},
		"price_data": {"currency": "usd", "product": "prod_1", "unit_amount_decimal": "1.5"},
		"tax_rates": ["txr_1"],
	}
	request = await _send(_imported(), "postInvoiceitems", {"body": params})
	assert request.headers["content-type"] == "application/x-www-form-urlencoded"
	assert request.content == _sdk(params)
	assert request.content.startswith(b"amount=500&currency=usd&customer=cus_1&discountable=true")
	# Stripe's "unset" value: an empty metadata is sent as the empty string.
	request = await _send(
		_imported(), "postInvoiceitems", {"body": {"customer": "c", "metadata": ""}}
	)
	assert request.content == b"customer=c&metadata=" == _sdk({"customer": "c", "metadata": ""})


async def test_an_imported_stripe_query_is_the_sdk_s_bytes() -> None:
	"""GetInvoiceitems: expand[0]=... (it was expand=a&expand=b, which Stripe reads as one
	string) and created[gte]=..."""
	params = {"created": {"gte": 10}, "expand": ["data.invoice", "data.customer"], "limit": 3}
	request = await _send(_imported(), "getInvoiceitems", params)
	assert request.url.query == _sdk(params)
	assert (
		request.url.query
		== b"created%5Bgte%5D=10&expand%5B0%5D=data.invoice&expand%5B1%5D=data.customer&limit=3"
	)


async def test_an_imported_stripe_multipart_upload_names_its_parts_as_the_sdk_does() -> None:
	"""PostFiles: file_link_data[create] and expand[0] parts, as stripe-python's
	MultipartDataGenerator names them (the deepObject encoding applied to multipart)."""
	params = {
		"expand": ["links"],
		"file": "text",
		"file_link_data": {"create": True, "metadata": {"k": "v"}},
		"purpose": "dispute_evidence",
	}
	request = await _send(_imported(), "postFiles", {"body": params})
	assert request.headers["host"] == "files.stripe.com" and request.url.path == "/v1/files"
	parts = re.findall(rb'name="([^"]+)"\r\n\r\n([^\r]*)\r\n', request.content)
	assert [(k.decode(), v.decode()) for k, v in parts] == list(_api_encode(params))


def _full(schema: dict[str, Any]) -> Any:
	"""A value filling every property of an input schema, two items per array."""
	if "anyOf" in schema:
		return _full(next(b for b in schema["anyOf"] if b.get("type") != "null"))
	if schema.get("enum"):
		return schema["enum"][0]
	kind = schema.get("type")
	if kind == "object" or "properties" in schema:
		props = schema.get("properties") or {}
		if not props:
			return {"plan": "pro", "note": "a b&c"}
		return {k: _full(v) for k, v in props.items() if k != "idempotency_key"}
	if kind == "array":
		item = _full(schema.get("items") or {"type": "string"})
		return [item, item]
	if kind == "integer":
		return max(int(schema.get("minimum", 1)), 1)
	if kind == "number":
		return 1.5
	if kind == "boolean":
		return True
	return "x y"


_POSTS = [t for t in stripe.TOOLS if isinstance(t, HttpTool) and t.method == "POST" and t.body]


@pytest.mark.parametrize("tool", _POSTS, ids=lambda t: t.handle)
async def test_each_built_in_stripe_form_body_is_the_sdk_s_bytes(tool: HttpTool) -> None:
	"""Every built-in POST with every field given (lists, nested objects): form-data's indices
	and brackets are what stripe-python sends for the pinned API version, so they stay."""
	arguments = _full(tool.input_schema)
	request = await _send(stripe.INTEGRATION, tool.handle, arguments)
	rendered = render(tool.body, {"input": arguments, "config": {}})
	assert request.content == _sdk(rendered)
	if any(not isinstance(v, (str, int, float)) for v in rendered.values()):
		assert b"%5B" in request.content, "a list or object was sent without brackets"
