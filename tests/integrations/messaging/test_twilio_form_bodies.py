"""Twilio's requests, built-in and imported, are the ones twilio-python sends.

The reference is the twilio PyPI package (9.13.0, generated from twilio-oai; API 2010-04-01):
its resources pass a list parameter as a list (``serialize.map``) and booleans as ``true`` /
``false``, and its HTTP client has requests encode the form, which repeats a list's key
(``StatusCallbackEvent=initiated&StatusCallbackEvent=ringing``; Twilio's reference: "specify each
one in a separate status_callback_event parameter"). twilio_oai_form_bodies.json is the extract of
twilio-oai's document for CreateCall and CreateMessage (source and commit inside); it declares
no ``encoding``, so OpenAPI's defaults apply, which are the same repeated keys. Every built-in
tool is also compared whole (method, host, path, query, form) with the SDK call that does the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import pytest
import requests
from twilio.http.http_client import TwilioHttpClient
from twilio.http.response import Response
from twilio.rest import Client

from openmolt import OpenMolt
from openmolt_core.integrations import Integration
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import twilio

pytestmark = pytest.mark.anyio

_DOC = Path(__file__).with_name("twilio_oai_form_bodies.json")
_ACCOUNT = "AC" + "0" * 32
_LOGIN = "AC" + "1" * 32


class _Captured(TwilioHttpClient):
	"""twilio-python's HTTP client, stopped before the network: keeps the body requests makes."""

	def __init__(self) -> None:
		super().__init__()
		self.bodies: list[bytes] = []

	def request(
		self, method: str, url: str, params: Any = None, data: Any = None, **_: Any
	) -> Response:
		prepared = requests.Request(method.upper(), url, params=params, data=data).prepare()
		body = prepared.body
		self.bodies.append(body.encode() if isinstance(body, str) else body or b"")
		return Response(201, json.dumps({"sid": "CA" + "0" * 32, "account_sid": _ACCOUNT}))


def _sdk_calls(**kwargs: Any) -> bytes:
	client = _Captured()
	Client(_ACCOUNT, "token", http_client=client).calls.create(**kwargs)
	return client.bodies[0]


def _sdk_messages(**kwargs: Any) -> bytes:
	client = _Captured()
	Client(_ACCOUNT, "token", http_client=client).messages.create(**kwargs)
	return client.bodies[0]


async def _send(
	integration: Integration,
	handle: str,
	arguments: dict[str, Any],
	extra: dict[str, Any] | None = None,
) -> httpx.Request:
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(201, json={"sid": "CA1"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	# Another account than the one the model names: a config value is a secret, masked in input.
	config = {
		"accountSid": _LOGIN,
		"authToken": "auth-token",
		"username": _LOGIN,
		"password": "password",
		**(extra or {}),
	}
	om = OpenMolt(entry_points=False, http_client=http, integrations={"t": config})
	om.register_integration("t", integration)
	model = ScriptedModel([call_tool(f"t.{handle}", **arguments), finish(result="ok")])
	await om.create_agent(name="A", model=model, integrations=["t"]).run("go")
	await om.aclose()
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert len(sent) == 1, results
	return sent[0]


def _pairs(body: bytes) -> list[bytes]:
	"""The encoded pairs of a form body, in order of name (the SDK orders them its own way)."""
	return sorted(body.split(b"&"), key=lambda pair: pair.split(b"=")[0])


async def test_an_imported_create_call_repeats_status_callback_event() -> None:
	"""CreateCall from twilio-oai: the array is its key repeated, as twilio-python sends it (it was
	StatusCallbackEvent[0]=initiated, a parameter Twilio does not read)."""
	integration = from_openapi(_DOC, id="t")
	body = {  # in the document's order, which the tool's input keeps
		"To": "+15558675310",
		"From": "+15017122661",
		"StatusCallbackEvent": ["initiated", "ringing", "answered"],
		"Timeout": 30,
		"Record": True,
		"Url": "https://example.com/twiml?a=1&b=2",
	}
	request = await _send(integration, "createCall", {"AccountSid": _ACCOUNT, "body": body})
	assert request.url.path == f"/2010-04-01/Accounts/{_ACCOUNT}/Calls.json"
	assert request.content == (
		b"To=%2B15558675310&From=%2B15017122661&StatusCallbackEvent=initiated"
		b"&StatusCallbackEvent=ringing&StatusCallbackEvent=answered&Timeout=30&Record=true"
		b"&Url=https%3A%2F%2Fexample.com%2Ftwiml%3Fa%3D1%26b%3D2"
	)
	expected = _sdk_calls(
		to=body["To"],
		from_=body["From"],
		url=body["Url"],
		status_callback_event=body["StatusCallbackEvent"],
		record=True,
		timeout=30,
	)
	assert _pairs(request.content) == _pairs(expected)


async def test_an_imported_create_message_repeats_media_url_and_persistent_action() -> None:
	"""CreateMessage from twilio-oai: MediaUrl and PersistentAction repeat their keys."""
	integration = from_openapi(_DOC, id="t")
	body = {
		"To": "+15558675310",
		"From": "+15017122661",
		"Body": "Hello there",
		"MediaUrl": ["https://example.com/a.png", "https://example.com/b.png"],
		"PersistentAction": ["mailto:a@example.com"],
	}
	request = await _send(integration, "createMessage", {"AccountSid": _ACCOUNT, "body": body})
	expected = _sdk_messages(
		to=body["To"],
		from_=body["From"],
		body=body["Body"],
		media_url=body["MediaUrl"],
		persistent_action=body["PersistentAction"],
	)
	assert _pairs(request.content) == _pairs(expected)
	assert request.content.count(b"MediaUrl=") == 2


async def test_the_built_in_twilio_tools_send_what_the_sdk_sends() -> None:
	"""sendMessage and makeCall (API 2010-04-01): the built-in repeat encoder is the SDK's bytes."""
	request = await _send(
		twilio.INTEGRATION,
		"sendMessage",
		{
			"To": "+15558675310",
			"Body": "Hi there",
			"MediaUrl": ["https://e.com/a", "https://e.com/b"],
		},
	)
	expected = _sdk_messages(
		to="+15558675310", body="Hi there", media_url=["https://e.com/a", "https://e.com/b"]
	)
	assert _pairs(request.content) == _pairs(expected)
	request = await _send(
		twilio.INTEGRATION,
		"makeCall",
		{"To": "+15558675310", "From": "+15017122661", "Twiml": "<Response/>", "Record": True},
	)
	expected = _sdk_calls(to="+15558675310", from_="+15017122661", twiml="<Response/>", record=True)
	assert _pairs(request.content) == _pairs(expected)


class _Requests(TwilioHttpClient):
	"""twilio-python's HTTP client, stopped before the network: keeps each prepared request."""

	def __init__(self) -> None:
		super().__init__()
		self.sent: list[requests.PreparedRequest] = []

	def request(
		self, method: str, url: str, params: Any = None, data: Any = None, **_: Any
	) -> Response:
		self.sent.append(requests.Request(method.upper(), url, params=params, data=data).prepare())
		if method.upper() == "DELETE":
			return Response(204, "")
		# An empty page of every list the tools read, and a record for the rest.
		lists = ("messages", "calls", "recordings", "incoming_phone_numbers", "media_list")
		payload = {"sid": "SM" + "0" * 32, "account_sid": _ACCOUNT, "meta": {"key": "items"}}
		return Response(200, json.dumps({**payload, **{key: [] for key in lists}, "items": []}))


_SM, _CA, _VA = "SM" + "a" * 32, "CA" + "b" * 32, "VA" + "2" * 32

# Each built-in tool with an input, and the twilio-python call that makes the same request.
# Dates go to the SDK as the tool's text (serialize.iso8601_* passes a string through).
_SDK_CALLS: dict[str, tuple[dict[str, Any], Any]] = {
	"sendMessage": (
		{"To": "+15558675310", "From": "+15017122661", "Body": "Hi", "ValidityPeriod": 60},
		lambda c: c.messages.create(
			to="+15558675310", from_="+15017122661", body="Hi", validity_period=60
		),
	),
	"listMessages": (
		{"To": "+15558675310", "DateSentAfter": "2026-01-01", "PageSize": 10},
		lambda c: c.messages.page(to="+15558675310", date_sent_after="2026-01-01", page_size=10),
	),
	"getMessage": ({"Sid": _SM}, lambda c: c.messages(_SM).fetch()),
	"cancelMessage": ({"Sid": _SM}, lambda c: c.messages(_SM).update(status="canceled")),
	"redactMessage": ({"Sid": _SM}, lambda c: c.messages(_SM).update(body="")),
	"deleteMessage": ({"Sid": _SM}, lambda c: c.messages(_SM).delete()),
	"listMessageMedia": (
		{"MessageSid": _SM, "PageSize": 5},
		lambda c: c.messages(_SM).media.page(page_size=5),
	),
	"makeCall": (
		{"To": "+15558675310", "From": "+15017122661", "Url": "https://e.com/t", "Timeout": 30},
		lambda c: c.calls.create(
			to="+15558675310", from_="+15017122661", url="https://e.com/t", timeout=30
		),
	),
	"getCall": ({"Sid": _CA}, lambda c: c.calls(_CA).fetch()),
	"updateCall": (
		{"Sid": _CA, "Status": "completed"},
		lambda c: c.calls(_CA).update(status="completed"),
	),
	"listCalls": (
		{"Status": "busy", "StartTimeBefore": "2026-02-01"},
		lambda c: c.calls.page(status="busy", start_time_before="2026-02-01"),
	),
	"listRecordings": (
		{"CallSid": _CA, "DateCreatedAfter": "2026-01-01T00:00:00Z"},
		lambda c: c.recordings.page(call_sid=_CA, date_created_after="2026-01-01T00:00:00Z"),
	),
	"listPhoneNumbers": (
		{"PhoneNumber": "555", "PageSize": 20},
		lambda c: c.incoming_phone_numbers.page(phone_number="555", page_size=20),
	),
	"getBalance": ({}, lambda c: c.balance.fetch()),
	"lookupPhoneNumber": (
		{"PhoneNumber": "+15558675310", "Fields": ["caller_name", "validation"]},
		lambda c: c.lookups.v2.phone_numbers("+15558675310").fetch(fields="caller_name,validation"),
	),
	"startVerification": (
		{"To": "+15558675310", "Channel": "sms", "Locale": "fr"},
		lambda c: c.verify.v2.services(_VA).verifications.create(
			to="+15558675310", channel="sms", locale="fr"
		),
	),
	"checkVerification": (
		{"To": "+15558675310", "Code": "123456"},
		lambda c: c.verify.v2.services(_VA).verification_checks.create(
			to="+15558675310", code="123456"
		),
	),
}


def _wire(method: str, url: str, body: bytes | str | None) -> tuple[str, str, str, list, list]:
	"""A request as the service reads it: method, host, decoded path, query and form pairs (sorted;
	each side orders them its own way)."""
	parts = urlsplit(url)
	raw = body.encode() if isinstance(body, str) else body or b""
	return (
		method,
		parts.netloc,
		unquote(parts.path),
		sorted(parse_qsl(parts.query, keep_blank_values=True)),
		sorted(parse_qsl(raw.decode(), keep_blank_values=True)),
	)


def test_every_built_in_twilio_tool_has_an_sdk_call() -> None:
	"""The table below names every tool: a new tool is compared with twilio-python too."""
	assert set(_SDK_CALLS) == {t.handle for t in twilio.INTEGRATION.tools}


@pytest.mark.parametrize("handle", sorted(_SDK_CALLS))
async def test_each_built_in_twilio_tool_sends_the_sdks_request(handle: str) -> None:
	"""Method, host, path, query and form body of each tool are what twilio-python 9.13.0
	(generated from twilio-oai, API 2010-04-01, Verify v2, Lookup v2) sends for the same call."""
	arguments, call = _SDK_CALLS[handle]
	sdk = _Requests()
	call(Client(_LOGIN, "auth-token", http_client=sdk))
	(expected,) = sdk.sent
	assert expected.method and expected.url
	ours = await _send(twilio.INTEGRATION, handle, arguments, {"verifyServiceSid": _VA})
	assert _wire(ours.method, str(ours.url), ours.content) == _wire(
		expected.method, expected.url, expected.body
	)
