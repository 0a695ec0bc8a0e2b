"""Scripted agents drive each messaging integration through httpx.MockTransport.

Each test lets a ScriptedModel call two tools of one integration (found through its entry point)
and checks the exact requests: method, URL, authentication and body.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations._ssrf import unpinned_url
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import outlook

pytestmark = pytest.mark.anyio

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
	"""A mock service: answers from a list, in order, and keeps every request."""

	def __init__(self, *responses: httpx.Response) -> None:
		self.responses = list(responses)
		self.requests: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		request.read()
		self.requests.append(request)
		return self.responses[len(self.requests) - 1]


async def run_agent(
	integration: str,
	calls: list[dict[str, Any]],
	service: Recorder,
	*,
	config: dict[str, Any],
	credential: str | None = None,
	token_requests: int = 0,
	local_calls: int = 0,
) -> tuple[Any, ScriptedModel]:
	model = ScriptedModel([*calls, finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding: dict[str, Any] = {"integration": integration, "credential": {"config": config}}
	if credential:
		binding["credential"]["type"] = credential
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		result = await agent.run("Use the tools.")
	model.assert_consumed()
	assert result.status == "success"
	assert len(service.requests) == len(calls) + token_requests - local_calls
	return result, model


def form(request: httpx.Request) -> dict[str, list[str]]:
	assert request.headers["content-type"].startswith("application/x-www-form-urlencoded")
	return parse_qs(request.content.decode(), keep_blank_values=True)


def body(request: httpx.Request) -> Any:
	assert request.headers["content-type"].startswith("application/json")
	return json.loads(request.content)


def multipart_parts(request: httpx.Request) -> dict[str, bytes]:
	"""Field name → content of a multipart/form-data body."""
	ctype = request.headers["content-type"]
	assert ctype.startswith("multipart/form-data; boundary=")
	boundary = ctype.split("boundary=", 1)[1].encode()
	parts: dict[str, bytes] = {}
	for chunk in request.content.split(b"--" + boundary)[1:-1]:
		head, _, data = chunk.strip(b"\r\n").partition(b"\r\n\r\n")
		name = head.split(b'name="', 1)[1].split(b'"', 1)[0].decode()
		parts[name] = data
	return parts


def data_url(text: bytes, media_type: str = "text/plain") -> str:
	return f"data:{media_type};base64,{base64.b64encode(text).decode()}"


def model_saw(model: ScriptedModel) -> str:
	return json.dumps([[m.content for m in r.messages] for r in model.requests], ensure_ascii=False)


async def test_slack_agent_posts_a_message_and_reads_history() -> None:
	"""chat.postMessage goes as JSON with the bot token; conversations.history as a GET query."""
	service = Recorder(
		httpx.Response(200, json={"ok": True, "channel": "C0123456789", "ts": "1712345678.000100"}),
		httpx.Response(
			200, json={"ok": True, "messages": [{"text": "hi", "ts": "1.2"}], "has_more": False}
		),
	)
	await run_agent(
		"slack",
		[
			call_tool(
				"slack.postMessage",
				channel="C0123456789",
				text="Deploy done :rocket:",
				thread_ts="1712345000.000200",
			),
			call_tool(
				"slack.getConversationHistory",
				channel="C0123456789",
				limit=20,
				oldest="1712340000.0",
			),
		],
		service,
		config={"token": "xoxb-1111-2222-abcdef"},
	)
	post, history = service.requests
	assert (post.method, str(post.url)) == ("POST", "https://slack.com/api/chat.postMessage")
	assert post.headers["authorization"] == "Bearer xoxb-1111-2222-abcdef"
	assert body(post) == {
		"channel": "C0123456789",
		"text": "Deploy done :rocket:",
		"thread_ts": "1712345000.000200",
	}
	assert history.method == "GET"
	assert history.url.copy_with(query=None) == "https://slack.com/api/conversations.history"
	assert dict(history.url.params) == {
		"channel": "C0123456789",
		"limit": "20",
		"oldest": "1712340000.0",
	}
	assert history.headers["authorization"] == "Bearer xoxb-1111-2222-abcdef"


async def test_slack_agent_uploads_a_file_with_the_external_flow() -> None:
	"""The upload reserves a URL, sends the raw bytes there, then completes with the files JSON."""
	service = Recorder(
		httpx.Response(
			200,
			json={
				"ok": True,
				"upload_url": "https://files.slack.com/upload/v1/ABC",
				"file_id": "F123",
			},
		),
		httpx.Response(200, text="OK - 5"),
		httpx.Response(200, json={"ok": True, "files": [{"id": "F123"}]}),
	)
	await run_agent(
		"slack",
		[
			call_tool("slack.getUploadUrl", filename="notes.txt", length=5),
			call_tool(
				"slack.uploadFileBytes",
				upload_url="https://files.slack.com/upload/v1/ABC",
				file=data_url(b"hello"),
			),
			call_tool(
				"slack.completeUpload",
				files=[{"id": "F123", "title": "Notes"}],
				channel_id="C0123456789",
			),
		],
		service,
		config={"token": "xoxb-1111-2222-abcdef"},
	)
	reserve, upload, complete = service.requests
	assert str(reserve.url) == "https://slack.com/api/files.getUploadURLExternal"
	for request in (reserve, complete):
		assert request.headers["authorization"] == "Bearer xoxb-1111-2222-abcdef"
	assert form(reserve) == {"filename": ["notes.txt"], "length": ["5"]}
	assert (upload.method, str(unpinned_url(upload)), upload.content) == (
		"POST",
		"https://files.slack.com/upload/v1/ABC",
		b"hello",
	)
	assert str(complete.url) == "https://slack.com/api/files.completeUploadExternal"
	fields = form(complete)
	assert json.loads(fields["files"][0]) == [{"id": "F123", "title": "Notes"}]
	assert fields["channel_id"] == ["C0123456789"]


async def test_discord_agent_sends_an_embed_and_reacts() -> None:
	"""Messages and reactions go to API v10 with the Bot authorization and an encoded emoji."""
	service = Recorder(
		httpx.Response(
			200, json={"id": "1300000000000000001", "channel_id": "1200000000000000001"}
		),
		httpx.Response(204),
	)
	embed = {
		"title": "Build #42",
		"description": "All green",
		"color": 5814783,
		"fields": [{"name": "Time", "value": "3m", "inline": True}],
	}
	await run_agent(
		"discord",
		[
			call_tool(
				"discord.sendMessage",
				channel_id="1200000000000000001",
				content="Status",
				embeds=[embed],
			),
			call_tool(
				"discord.addReaction",
				channel_id="1200000000000000001",
				message_id="1300000000000000001",
				emoji_name="👍",
			),
		],
		service,
		config={"botToken": "MTA1.bot-token.secret"},
	)
	send, react = service.requests
	assert (send.method, str(send.url)) == (
		"POST",
		"https://discord.com/api/v10/channels/1200000000000000001/messages",
	)
	assert send.headers["authorization"] == "Bot MTA1.bot-token.secret"
	assert send.headers["user-agent"].startswith("DiscordBot (")
	assert body(send) == {
		"content": "Status",
		"embeds": [embed],
		"nonce": body(send)["nonce"],  # the call's key (test_social_agents checks it)
		"enforce_nonce": True,
	}
	assert react.method == "PUT"
	assert (
		react.url.raw_path.decode()
		== "/api/v10/channels/1200000000000000001/messages/1300000000000000001/reactions/%F0%9F%91%8D/@me"
	)
	assert react.headers["authorization"] == "Bot MTA1.bot-token.secret"


async def test_telegram_agent_sends_and_downloads_without_showing_the_token() -> None:
	"""The token sits only in the URL path; the model never sees it, and the download is a file."""
	token = "123456789:AAHsecretTokenValue"
	service = Recorder(
		httpx.Response(200, json={"ok": True, "result": {"message_id": 7, "chat": {"id": 42}}}),
		httpx.Response(200, content=b"\x89PNG-bytes", headers={"content-type": "image/png"}),
	)
	result, model = await run_agent(
		"telegram",
		[
			call_tool(
				"telegram.sendMessage",
				chat_id=42,
				text="<b>Hi</b>",
				parse_mode="HTML",
				reply_parameters={"message_id": 5},
			),
			call_tool("telegram.downloadFile", file_path="photos/file_12.png"),
		],
		service,
		config={"botToken": token},
	)
	send, download = service.requests
	assert (send.method, str(send.url)) == (
		"POST",
		f"https://api.telegram.org/bot{token}/sendMessage",
	)
	assert body(send) == {
		"chat_id": 42,
		"text": "<b>Hi</b>",
		"parse_mode": "HTML",
		"reply_parameters": {"message_id": 5},
	}
	assert (download.method, str(download.url)) == (
		"GET",
		f"https://api.telegram.org/file/bot{token}/photos/file_12.png",
	)
	assert token not in json.dumps(result.output)
	seen = model_saw(model)
	assert token not in seen and "AAHsecretTokenValue" not in seen
	assert "openmolt-file:" in seen


async def test_whatsapp_agent_updates_the_business_profile() -> None:
	"""updateBusinessProfile posts WhatsAppBusinessProfileUpdateRequest as JSON to the phone
	number's whatsapp_business_profile: messaging_product and only the given fields."""
	service = Recorder(httpx.Response(200, json={"success": True}))
	config = {"accessToken": "EAAGsystemusertoken", "phoneNumberId": "1065550001"}
	await run_agent(
		"whatsapp",
		[
			call_tool(
				"whatsapp.updateBusinessProfile",
				about="Open 9-18, Mon-Sat",
				websites=["https://shop.example.com"],
				vertical="RETAIL",
			)
		],
		service,
		config=config,
	)
	(update,) = service.requests
	assert (update.method, str(update.url)) == (
		"POST",
		"https://graph.facebook.com/v26.0/1065550001/whatsapp_business_profile",
	)
	assert body(update) == {
		"messaging_product": "whatsapp",
		"about": "Open 9-18, Mon-Sat",
		"websites": ["https://shop.example.com"],
		"vertical": "RETAIL",
	}


async def test_whatsapp_agent_sends_text_and_uploads_media() -> None:
	"""Messages go to the phone number id on Graph v26.0; media uploads are multipart."""
	service = Recorder(
		httpx.Response(
			200, json={"messaging_product": "whatsapp", "messages": [{"id": "wamid.A"}]}
		),
		httpx.Response(200, json={"id": "media-1"}),
	)
	config = {
		"accessToken": "EAAGsystemusertoken",
		"phoneNumberId": "1065550001",
		"wabaId": "1024440002",
	}
	await run_agent(
		"whatsapp",
		[
			call_tool(
				"whatsapp.sendText",
				to="15551234567",
				body="Your order shipped",
				context={"message_id": "wamid.Q"},
			),
			call_tool(
				"whatsapp.uploadMedia",
				file=data_url(b"%PDF-1.7", "application/pdf"),
				type="application/pdf",
			),
		],
		service,
		config=config,
	)
	send, upload = service.requests
	assert (send.method, str(send.url)) == (
		"POST",
		"https://graph.facebook.com/v26.0/1065550001/messages",
	)
	assert send.headers["authorization"] == "Bearer EAAGsystemusertoken"
	assert body(send) == {
		"messaging_product": "whatsapp",
		"recipient_type": "individual",
		"to": "15551234567",
		"context": {"message_id": "wamid.Q"},
		"type": "text",
		"text": {"body": "Your order shipped"},
	}
	assert str(upload.url) == "https://graph.facebook.com/v26.0/1065550001/media"
	parts = multipart_parts(upload)
	assert parts["messaging_product"] == b"whatsapp"
	assert parts["type"] == b"application/pdf"
	assert parts["file"] == b"%PDF-1.7"


async def test_twilio_agent_redacts_and_deletes_a_message_and_reads_the_balance() -> None:
	"""Redact (UpdateMessage with an empty Body), delete (DeleteMessage, 204) and the balance
	(FetchBalance) as twilio-oai's API 2010-04-01 gives them, with HTTP Basic auth."""
	account, sid = "AC" + "a" * 32, "SM" + "c" * 32
	service = Recorder(
		httpx.Response(200, json={"sid": sid, "body": ""}),
		httpx.Response(204),
		httpx.Response(200, json={"account_sid": account, "balance": "12.50", "currency": "USD"}),
	)
	await run_agent(
		"twilio",
		[
			call_tool("twilio.redactMessage", Sid=sid),
			call_tool("twilio.deleteMessage", Sid=sid),
			call_tool("twilio.getBalance"),
		],
		service,
		config={"accountSid": account, "authToken": "twilio-auth-token"},
	)
	redact, delete, balance = service.requests
	base = f"https://api.twilio.com/2010-04-01/Accounts/{account}"
	assert (redact.method, str(redact.url)) == ("POST", f"{base}/Messages/{sid}.json")
	assert redact.content == b"Body="
	assert redact.headers["content-type"] == "application/x-www-form-urlencoded"
	assert (delete.method, str(delete.url), delete.content) == (
		"DELETE",
		f"{base}/Messages/{sid}.json",
		b"",
	)
	assert (balance.method, str(balance.url)) == ("GET", f"{base}/Balance.json")
	basic = "Basic " + base64.b64encode(f"{account}:twilio-auth-token".encode()).decode()
	assert {r.headers["authorization"] for r in service.requests} == {basic}


async def test_twilio_agent_sends_an_sms_and_starts_a_verification() -> None:
	"""Core and Verify hosts, HTTP Basic auth with the account, form-encoded PascalCase fields."""
	service = Recorder(
		httpx.Response(201, json={"sid": "SM" + "0" * 32, "status": "queued"}),
		httpx.Response(201, json={"sid": "VE" + "0" * 32, "status": "pending"}),
	)
	config = {
		"accountSid": "AC" + "a" * 32,
		"authToken": "twilio-auth-token",
		"verifyServiceSid": "VA" + "b" * 32,
	}
	await run_agent(
		"twilio",
		[
			call_tool(
				"twilio.sendMessage",
				To="+15558675310",
				From="+15550001111",
				Body="Hello from OpenMolt",
				MediaUrl=["https://example.com/a.png", "https://example.com/b.jpg"],
			),
			call_tool("twilio.startVerification", To="+15558675310", Channel="sms"),
		],
		service,
		config=config,
	)
	sms, verify = service.requests
	basic = (
		"Basic " + base64.b64encode(f"{config['accountSid']}:twilio-auth-token".encode()).decode()
	)
	assert (sms.method, str(sms.url)) == (
		"POST",
		f"https://api.twilio.com/2010-04-01/Accounts/{config['accountSid']}/Messages.json",
	)
	assert sms.headers["authorization"] == basic
	assert form(sms) == {
		"To": ["+15558675310"],
		"From": ["+15550001111"],
		"Body": ["Hello from OpenMolt"],
		"MediaUrl": ["https://example.com/a.png", "https://example.com/b.jpg"],
	}
	assert "MediaUrl%5B" not in sms.content.decode()  # repeated keys, no [0]/[] suffixes
	assert (
		str(verify.url)
		== f"https://verify.twilio.com/v2/Services/{config['verifyServiceSid']}/Verifications"
	)
	assert verify.headers["authorization"] == basic
	assert form(verify) == {"To": ["+15558675310"], "Channel": ["sms"]}


async def test_outlook_agent_sends_mail_and_reads_the_calendar() -> None:
	"""Graph v1.0 with the OAuth2 access token: sendMail JSON and a calendarView query."""
	service = Recorder(
		httpx.Response(202),
		httpx.Response(200, json={"value": [{"subject": "Standup"}]}),
	)
	to = [{"emailAddress": {"address": "ada@example.com"}}]
	await run_agent(
		"outlook",
		[
			call_tool("outlook.sendMail", subject="Report", body="See attached.", toRecipients=to),
			call_tool(
				"outlook.listCalendarView",
				startDateTime="2026-12-01T00:00:00Z",
				endDateTime="2026-12-02T00:00:00Z",
				timeZone="Europe/Paris",
				top=10,
			),
		],
		service,
		config={
			"accessToken": "graph-access-token",
			"expiryDate": "2100-01-01T00:00:00Z",
			"clientId": "cid",
			"clientSecret": "csecret",
			"refreshToken": "refresh-tok",
		},
		credential="oauth2",
	)
	send, view = service.requests
	assert (send.method, str(send.url)) == ("POST", "https://graph.microsoft.com/v1.0/me/sendMail")
	assert send.headers["authorization"] == "Bearer graph-access-token"
	assert body(send) == {
		"message": {
			"subject": "Report",
			"body": {"contentType": "Text", "content": "See attached."},
			"toRecipients": to,
		}
	}
	assert view.url.copy_with(query=None) == "https://graph.microsoft.com/v1.0/me/calendarView"
	assert dict(view.url.params) == {
		"startDateTime": "2026-12-01T00:00:00Z",
		"endDateTime": "2026-12-02T00:00:00Z",
		"$top": "10",
		"$orderby": "start/dateTime",
	}
	assert view.headers["prefer"] == 'outlook.timezone="Europe/Paris"'


async def test_outlook_search_never_sends_skip_with_search() -> None:
	"""Graph refuses $skip next to $search on messages (a $search answers at most 1,000
	messages, newest first, and pages with the $skiptoken of its @odata.nextLink): a skip is
	refused before sending, and a search sends only $search, $top and $select."""
	service = Recorder(httpx.Response(200, json={"value": []}))
	_, model = await run_agent(
		"outlook",
		[
			call_tool("outlook.searchMessages", search="subject:report", skip=25),
			call_tool("outlook.searchMessages", search="subject:report", top=200),
		],
		service,
		config={"accessToken": "graph-access-token"},
		credential="bearer",
		local_calls=1,
	)
	(search,) = service.requests
	assert search.url.copy_with(query=None) == "https://graph.microsoft.com/v1.0/me/messages"
	assert dict(search.url.params) == {"$top": "200", "$search": '"subject:report"'}
	refused = json.loads(model.requests[1].messages[-1].content)["results"][0]
	assert refused["ok"] is False
	assert "skip" in json.dumps(refused)


async def test_outlook_agent_finds_a_free_slot_then_answers_an_invitation() -> None:
	"""getSchedule posts Graph's getSchedule body (schedules, dateTimeTimeZone start and end,
	the interval); respondToEvent posts comment and sendResponse to the chosen event action.

	The answers come first: getSchedule's items are untrusted (an invitation's subject), so an
	answer sent after it in the same run is gated by the taint policy."""
	service = Recorder(
		httpx.Response(202),
		httpx.Response(202),
		httpx.Response(200, json={"value": [{"availabilityView": "0020"}]}),
	)
	start = {"dateTime": "2026-12-07T09:00:00", "timeZone": "Europe/Paris"}
	end = {"dateTime": "2026-12-07T11:00:00", "timeZone": "Europe/Paris"}
	await run_agent(
		"outlook",
		[
			call_tool(
				"outlook.respondToEvent",
				event_id="AAMkAD=",
				response="tentativelyAccept",
				comment="Maybe late.",
			),
			call_tool(
				"outlook.respondToEvent", event_id="e2", response="decline", sendResponse=False
			),
			call_tool(
				"outlook.getSchedule",
				schedules=["ada@example.com", "room1@example.com"],
				startTime=start,
				endTime=end,
				availabilityViewInterval=30,
			),
		],
		service,
		config={"accessToken": "graph-access-token"},
		credential="bearer",
	)
	tentative, decline, schedule = service.requests
	assert (schedule.method, str(schedule.url)) == (
		"POST",
		"https://graph.microsoft.com/v1.0/me/calendar/getSchedule",
	)
	assert body(schedule) == {
		"schedules": ["ada@example.com", "room1@example.com"],
		"startTime": start,
		"endTime": end,
		"availabilityViewInterval": 30,
	}
	assert (tentative.method, str(tentative.url)) == (
		"POST",
		"https://graph.microsoft.com/v1.0/me/events/AAMkAD%3D/tentativelyAccept",
	)
	assert body(tentative) == {"comment": "Maybe late."}
	assert str(decline.url) == "https://graph.microsoft.com/v1.0/me/events/e2/decline"
	assert body(decline) == {"sendResponse": False}


async def test_outlook_agent_deletes_and_files_and_keeps_contacts() -> None:
	"""The Graph v1.0 paths and bodies of the event, message, folder and contact tools."""
	service = Recorder(
		httpx.Response(204),
		httpx.Response(204),
		httpx.Response(201, json={"id": "f1"}),
		httpx.Response(201, json={"id": "f2"}),
		httpx.Response(201, json={"id": "c1"}),
		httpx.Response(200, json={"value": []}),
		httpx.Response(200, json={"id": "c1"}),
		httpx.Response(200, json={"id": "c1"}),
		httpx.Response(204),
	)
	emails = [{"address": "ada@example.com", "name": "Ada"}]
	await run_agent(
		"outlook",
		[
			call_tool("outlook.deleteEvent", event_id="ev/1"),
			call_tool("outlook.deleteMessage", message_id="m1"),
			call_tool("outlook.createMailFolder", displayName="Invoices"),
			call_tool("outlook.createMailFolder", displayName="2026", mailFolder_id="f1"),
			call_tool(
				"outlook.createContact", givenName="Ada", surname="Lovelace", emailAddresses=emails
			),
			call_tool("outlook.listContacts", filter="startswith(displayName,'Ada')", top=5),
			call_tool("outlook.getContact", contact_id="c1", select=["displayName"]),
			call_tool("outlook.updateContact", contact_id="c1", jobTitle="Analyst"),
			call_tool("outlook.deleteContact", contact_id="c1"),
		],
		service,
		config={"accessToken": "graph-access-token", "expiryDate": "2100-01-01T00:00:00Z"},
		credential="oauth2",
	)
	graph = "https://graph.microsoft.com/v1.0/me"
	got = [(r.method, str(r.url.copy_with(query=None))) for r in service.requests]
	assert got == [
		("DELETE", f"{graph}/events/ev%2F1"),
		("DELETE", f"{graph}/messages/m1"),
		("POST", f"{graph}/mailFolders"),
		("POST", f"{graph}/mailFolders/f1/childFolders"),
		("POST", f"{graph}/contacts"),
		("GET", f"{graph}/contacts"),
		("GET", f"{graph}/contacts/c1"),
		("PATCH", f"{graph}/contacts/c1"),
		("DELETE", f"{graph}/contacts/c1"),
	]
	_, _, top, child, create, listing, get, update, _ = service.requests
	assert body(top) == {"displayName": "Invoices"}
	assert body(child) == {"displayName": "2026"}
	assert body(create) == {"givenName": "Ada", "surname": "Lovelace", "emailAddresses": emails}
	assert dict(listing.url.params) == {"$top": "5", "$filter": "startswith(displayName,'Ada')"}
	assert dict(get.url.params) == {"$select": "displayName"}
	assert body(update) == {"jobTitle": "Analyst"}


async def test_outlook_agent_attaches_a_file_reference_or_base64() -> None:
	"""addAttachment embeds a file reference as contentBytes, or passes given base64 through."""
	service = Recorder(httpx.Response(201, json={"id": "att1"}), httpx.Response(201, json={}))
	pdf = b"%PDF-1.7 tiny report"
	await run_agent(
		"outlook",
		[
			call_tool(
				"outlook.addAttachment",
				message_id="draft1",
				name="report.pdf",
				contentType="application/pdf",
				file=data_url(pdf, "application/pdf"),
			),
			call_tool(
				"outlook.addAttachment",
				message_id="draft1",
				name="note.txt",
				contentBytes=base64.b64encode(b"hi").decode(),
			),
		],
		service,
		config={"accessToken": "graph-access-token", "expiryDate": "2100-01-01T00:00:00Z"},
		credential="oauth2",
	)
	by_file, by_bytes = service.requests
	assert str(by_file.url) == "https://graph.microsoft.com/v1.0/me/messages/draft1/attachments"
	assert body(by_file) == {
		"@odata.type": "#microsoft.graph.fileAttachment",
		"name": "report.pdf",
		"contentType": "application/pdf",
		"contentBytes": base64.b64encode(pdf).decode(),
	}
	assert body(by_bytes)["contentBytes"] == "aGk="


async def test_slack_ok_false_reaches_the_model_as_an_error() -> None:
	"""A 200 reply with ok=false is a tool error naming Slack's error code."""
	service = Recorder(httpx.Response(200, json={"ok": False, "error": "channel_not_found"}))
	events: list[Any] = []
	model = ScriptedModel(
		[call_tool("slack.postMessage", channel="C0NOPE", text="hi"), finish(result="done")]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding = {"integration": "slack", "credential": {"config": {"token": "xoxb-1111-2222-abcdef"}}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		agent.on("tool:response", events.append)
		await agent.run("Post.")
	assert [e.error for e in events] == [True]
	assert "channel_not_found" in model_saw(model)


async def test_x_agent_posts_a_reply_and_searches() -> None:
	"""Posts go to /2/tweets as JSON; search sends comma-joined field lists; user token as Bearer."""
	service = Recorder(
		httpx.Response(201, json={"data": {"id": "1800000000000000001", "text": "Thanks!"}}),
		httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}),
	)
	await run_agent(
		"x",
		[
			call_tool(
				"x.createPost",
				text="Thanks!",
				reply={"in_reply_to_tweet_id": "1799999999999999999"},
			),
			call_tool(
				"x.searchRecent",
				query="from:openmolt -is:retweet",
				max_results=10,
				post_fields=["created_at", "public_metrics"],
			),
		],
		service,
		config={
			"accessToken": "x-user-access-token",
			"expiryDate": 4102444800,
			"clientId": "cid",
			"clientSecret": "csecret",
			"refreshToken": "r",
		},
		credential="oauth2",
	)
	post, search = service.requests
	assert (post.method, str(post.url)) == ("POST", "https://api.x.com/2/tweets")
	assert post.headers["authorization"] == "Bearer x-user-access-token"
	assert body(post) == {
		"text": "Thanks!",
		"reply": {"in_reply_to_tweet_id": "1799999999999999999"},
	}
	assert search.url.copy_with(query=None) == "https://api.x.com/2/tweets/search/recent"
	assert dict(search.url.params) == {
		"query": "from:openmolt -is:retweet",
		"max_results": "10",
		"post.fields": "created_at,public_metrics",
	}


async def test_instagram_agent_creates_and_publishes_a_container() -> None:
	"""A container from an image URL, then media_publish with its id, on the IG user of the config."""
	service = Recorder(
		httpx.Response(200, json={"id": "17900000000000001"}),
		httpx.Response(200, json={"id": "17800000000000009"}),
	)
	await run_agent(
		"instagram",
		[
			call_tool(
				"instagram.createMediaContainer",
				image_url="https://cdn.example.com/a.jpg",
				caption="Hello #openmolt",
			),
			call_tool("instagram.publishMedia", creation_id="17900000000000001"),
		],
		service,
		config={"accessToken": "EAAGinstagramtoken", "igUserId": "17841400000000000"},
	)
	create, publish = service.requests
	assert (create.method, str(create.url)) == (
		"POST",
		"https://graph.facebook.com/v26.0/17841400000000000/media",
	)
	assert create.headers["authorization"] == "Bearer EAAGinstagramtoken"
	assert form(create) == {
		"image_url": ["https://cdn.example.com/a.jpg"],
		"caption": ["Hello #openmolt"],
	}
	assert str(publish.url) == "https://graph.facebook.com/v26.0/17841400000000000/media_publish"
	assert publish.method == "POST"
	assert publish.headers["authorization"] == "Bearer EAAGinstagramtoken"
	assert form(publish) == {"creation_id": ["17900000000000001"]}


async def test_tiktok_agent_initialises_a_post_and_uploads_the_video() -> None:
	"""Direct post init as JSON, then a PUT of the bytes with Content-Range to the upload URL."""
	upload_url = "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123"
	service = Recorder(
		httpx.Response(
			200,
			json={
				"data": {"publish_id": "v_pub_1", "upload_url": upload_url},
				"error": {"code": "ok"},
			},
		),
		httpx.Response(201),
	)
	video = b"\x00\x00\x00\x18ftypmp42"
	source = {
		"source": "FILE_UPLOAD",
		"video_size": len(video),
		"chunk_size": len(video),
		"total_chunk_count": 1,
	}
	await run_agent(
		"tiktok",
		[
			call_tool(
				"tiktok.initDirectPost",
				title="Hello #fyp",
				privacy_level="SELF_ONLY",
				disable_duet=True,
				source_info=source,
			),
			call_tool(
				"tiktok.uploadVideoChunk",
				upload_url=upload_url,
				file=data_url(video, "video/mp4"),
				first_byte=0,
				last_byte=len(video) - 1,
				total_bytes=len(video),
			),
		],
		service,
		config={
			"accessToken": "act.tiktoktoken",
			"expiryDate": 4102444800,
			"clientKey": "ckey",
			"clientSecret": "csecret",
			"refreshToken": "rft.x",
		},
		credential="oauth2",
	)
	init, put = service.requests
	assert (init.method, str(init.url)) == (
		"POST",
		"https://open.tiktokapis.com/v2/post/publish/video/init/",
	)
	assert init.headers["authorization"] == "Bearer act.tiktoktoken"
	assert json.loads(init.content) == {
		"post_info": {"title": "Hello #fyp", "privacy_level": "SELF_ONLY", "disable_duet": True},
		"source_info": source,
	}
	assert (put.method, str(unpinned_url(put))) == ("PUT", upload_url)
	assert put.headers["content-range"] == f"bytes 0-{len(video) - 1}/{len(video)}"
	assert put.headers["content-type"] == "video/mp4"
	assert put.content == video


async def test_tiktok_agent_plans_chunks_and_uploads_byte_ranges() -> None:
	"""fileInfo plans TikTok's chunks (remainder merged); each PUT sends exactly its byte range."""
	upload_url = "https://open-upload.tiktokapis.com/video/?upload_id=1&upload_token=T"
	service = Recorder(httpx.Response(206), httpx.Response(201))
	video = bytes(range(25))
	ref = data_url(video, "video/mp4")
	chunk = {"upload_url": upload_url, "file": ref, "total_bytes": 25}
	_, model = await run_agent(
		"tiktok",
		[
			call_tool("tiktok.fileInfo", file=ref, chunkSize=10, mergeRemainder=True),
			call_tool("tiktok.uploadVideoChunk", **chunk, first_byte=0, last_byte=9),
			call_tool("tiktok.uploadVideoChunk", **chunk, first_byte=10, last_byte=24),
		],
		service,
		config={"accessToken": "act.tiktoktoken", "expiryDate": 4102444800},
		credential="oauth2",
		local_calls=1,
	)
	seen = model_saw(model).replace("\\", "")
	assert '"size":25' in seen and '"chunkCount":2' in seen
	assert "#bytes=10-24" in seen
	first, second = service.requests
	assert first.content == video[:10] and first.headers["content-range"] == "bytes 0-9/25"
	assert second.content == video[10:] and second.headers["content-range"] == "bytes 10-24/25"


async def test_tiktok_refresh_uses_client_key_then_lists_videos() -> None:
	"""An expired TikTok token is refreshed with client_key (TikTok's name for the client id)."""
	service = Recorder(
		httpx.Response(
			200, json={"access_token": "act.new", "expires_in": 86400, "refresh_token": "rft.new"}
		),
		httpx.Response(
			200,
			json={"data": {"videos": [], "cursor": 0, "has_more": False}, "error": {"code": "ok"}},
		),
		httpx.Response(200, json={"data": {"status": "PUBLISH_COMPLETE"}, "error": {"code": "ok"}}),
	)
	await run_agent(
		"tiktok",
		[
			call_tool("tiktok.listVideos", max_count=5),
			call_tool("tiktok.getPostStatus", publish_id="v_pub_1"),
		],
		service,
		config={
			"accessToken": "act.old",
			"expiryDate": 1000,
			"clientKey": "ckey123",
			"clientSecret": "csecret",
			"refreshToken": "rft.old",
		},
		credential="oauth2",
		token_requests=1,
	)
	refresh, listing, status = service.requests
	assert (refresh.method, str(refresh.url)) == (
		"POST",
		"https://open.tiktokapis.com/v2/oauth/token/",
	)
	assert form(refresh) == {
		"grant_type": ["refresh_token"],
		"refresh_token": ["rft.old"],
		"client_key": ["ckey123"],
		"client_secret": ["csecret"],
	}
	assert str(listing.url).startswith(
		"https://open.tiktokapis.com/v2/video/list/?fields=id%2Ctitle"
	)
	assert listing.headers["authorization"] == "Bearer act.new"
	assert body(listing) == {"max_count": 5}
	assert body(status) == {"publish_id": "v_pub_1"}


async def test_outlook_refresh_goes_to_the_tenant_token_url() -> None:
	"""The Microsoft token refresh uses the configured tenant, then the new token reaches Graph."""
	service = Recorder(
		httpx.Response(
			200,
			json={"access_token": "graph-new", "expires_in": 3600, "refresh_token": "refresh-2"},
		),
		httpx.Response(200, json={"value": []}),
	)
	await run_agent(
		"outlook",
		[call_tool("outlook.listMailFolders", top=5)],
		service,
		config={
			"tenant": "contoso.onmicrosoft.com",
			"clientId": "cid",
			"clientSecret": "csecret",
			"refreshToken": "refresh-1",
		},
		credential="oauth2",
		token_requests=1,
	)
	refresh, folders = service.requests
	assert (
		str(refresh.url)
		== "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
	)
	assert form(refresh)["client_id"] == ["cid"]
	assert str(folders.url) == "https://graph.microsoft.com/v1.0/me/mailFolders?%24top=5"
	assert folders.headers["authorization"] == "Bearer graph-new"


async def test_slack_agent_manages_a_channel_searches_and_links() -> None:
	"""Channel management goes as form posts, search and permalink as GET queries, each with the
	token; the search's default page size is sent."""
	ok = httpx.Response(200, json={"ok": True})
	service = Recorder(
		httpx.Response(200, json={"ok": True, "channel": {"id": "C0NEW000001"}}),
		ok,
		ok,
		ok,
		ok,
		ok,
		ok,
		httpx.Response(200, json={"ok": True, "messages": {"matches": [], "total": 0}}),
		httpx.Response(
			200, json={"ok": True, "permalink": "https://acme.slack.com/archives/C1/p1"}
		),
	)
	channel = "C0NEW000001"
	await run_agent(
		"slack",
		[
			call_tool("slack.createChannel", name="launch-2026", is_private=True),
			call_tool("slack.renameChannel", channel=channel, name="launch-q1"),
			call_tool("slack.inviteToChannel", channel=channel, users=["U01", "U02"]),
			call_tool("slack.removeFromChannel", channel=channel, user="U02"),
			call_tool("slack.setChannelTopic", channel=channel, topic="Ship on Friday"),
			call_tool("slack.setChannelPurpose", channel=channel, purpose="Launch planning"),
			call_tool("slack.archiveChannel", channel=channel),
			call_tool("slack.searchMessages", query="deploy in:#ops", sort="timestamp"),
			call_tool("slack.getPermalink", channel="C1", message_ts="1712345678.000100"),
		],
		service,
		config={"token": "xoxp-user-token"},
	)
	create, rename, invite, kick, topic, purpose, archive, search, link = service.requests
	expected = [
		(create, "conversations.create", {"name": ["launch-2026"], "is_private": ["true"]}),
		(rename, "conversations.rename", {"channel": [channel], "name": ["launch-q1"]}),
		(invite, "conversations.invite", {"channel": [channel], "users": ["U01,U02"]}),
		(kick, "conversations.kick", {"channel": [channel], "user": ["U02"]}),
		(topic, "conversations.setTopic", {"channel": [channel], "topic": ["Ship on Friday"]}),
		(
			purpose,
			"conversations.setPurpose",
			{"channel": [channel], "purpose": ["Launch planning"]},
		),
		(archive, "conversations.archive", {"channel": [channel]}),
	]
	for request, method, fields in expected:
		assert (request.method, str(request.url)) == ("POST", f"https://slack.com/api/{method}")
		assert request.headers["authorization"] == "Bearer xoxp-user-token"
		assert form(request) == fields
	assert search.method == "GET"
	assert search.url.copy_with(query=None) == "https://slack.com/api/search.messages"
	assert dict(search.url.params) == {
		"query": "deploy in:#ops",
		"sort": "timestamp",
		"count": "20",
	}
	assert search.headers["authorization"] == "Bearer xoxp-user-token"
	assert link.url.copy_with(query=None) == "https://slack.com/api/chat.getPermalink"
	assert dict(link.url.params) == {"channel": "C1", "message_ts": "1712345678.000100"}


async def test_slack_agent_joins_a_channel_and_lists_its_members() -> None:
	"""A bot must be a member to read a public channel's history: conversations.join is a form
	post of the channel, conversations.members a GET with its default page size (slack-sdk
	WebClient.conversations_join / conversations_members)."""
	channel = "C0123456789"
	service = Recorder(
		httpx.Response(200, json={"ok": True, "channel": {"id": channel}}),
		httpx.Response(
			200,
			json={"ok": True, "members": ["U01", "U02"], "response_metadata": {"next_cursor": ""}},
		),
	)
	await run_agent(
		"slack",
		[
			call_tool("slack.joinChannel", channel=channel),
			call_tool("slack.listChannelMembers", channel=channel, cursor="dXNlcjpVMDYx"),
		],
		service,
		config={"token": "xoxb-1111-2222-abcdef"},
	)
	join, members = service.requests
	assert (join.method, str(join.url)) == ("POST", "https://slack.com/api/conversations.join")
	assert form(join) == {"channel": [channel]}
	assert members.method == "GET"
	assert members.url.copy_with(query=None) == "https://slack.com/api/conversations.members"
	assert dict(members.url.params) == {
		"channel": channel,
		"cursor": "dXNlcjpVMDYx",
		"limit": "200",
	}
	for request in (join, members):
		assert request.headers["authorization"] == "Bearer xoxb-1111-2222-abcdef"


async def test_slack_agent_lists_and_cancels_a_scheduled_message() -> None:
	"""A message scheduleMessage queued is listed (chat.scheduledMessages.list) and deleted
	before it is posted (chat.deleteScheduledMessage), both form posts as slack-sdk sends them."""
	channel = "C0123456789"
	service = Recorder(
		httpx.Response(
			200,
			json={
				"ok": True,
				"scheduled_messages": [{"id": "Q1298393284", "channel_id": channel}],
				"response_metadata": {"next_cursor": ""},
			},
		),
		httpx.Response(200, json={"ok": True}),
	)
	await run_agent(
		"slack",
		[
			call_tool("slack.listScheduledMessages", channel=channel, limit=50),
			call_tool(
				"slack.deleteScheduledMessage", channel=channel, scheduled_message_id="Q1298393284"
			),
		],
		service,
		config={"token": "xoxb-1111-2222-abcdef"},
	)
	listed, deleted = service.requests
	assert (listed.method, str(listed.url)) == (
		"POST",
		"https://slack.com/api/chat.scheduledMessages.list",
	)
	assert form(listed) == {"channel": [channel], "limit": ["50"]}
	assert (deleted.method, str(deleted.url)) == (
		"POST",
		"https://slack.com/api/chat.deleteScheduledMessage",
	)
	assert form(deleted) == {"channel": [channel], "scheduled_message_id": ["Q1298393284"]}
	for request in (listed, deleted):
		assert request.headers["authorization"] == "Bearer xoxb-1111-2222-abcdef"


async def test_discord_agent_manages_channels_members_and_roles() -> None:
	"""Channel create, edit and delete, the member list and role changes go to their v10 routes
	with the bot token; only the given channel settings are sent."""
	guild, channel = "1100000000000000001", "1200000000000000009"
	user, role = "1400000000000000001", "1500000000000000001"
	service = Recorder(
		httpx.Response(201, json={"id": channel, "type": 0}),
		httpx.Response(200, json={"id": channel}),
		httpx.Response(204),
		httpx.Response(204),
		httpx.Response(200, json={"id": channel}),
		httpx.Response(200, json=[{"user": {"id": user}}]),
	)
	await run_agent(
		"discord",
		[
			call_tool(
				"discord.createChannel",
				guild_id=guild,
				name="launch",
				type=0,
				topic="Launch planning",
				parent_id="1300000000000000001",
			),
			call_tool("discord.updateChannel", channel_id=channel, name="launch-q1", nsfw=False),
			call_tool("discord.addMemberRole", guild_id=guild, user_id=user, role_id=role),
			call_tool("discord.removeMemberRole", guild_id=guild, user_id=user, role_id=role),
			call_tool("discord.deleteChannel", channel_id=channel),
			# last: what members wrote (nicknames) is untrusted, and outbound calls after it wait
			call_tool("discord.listGuildMembers", guild_id=guild, limit=50, after="1"),
		],
		service,
		config={"botToken": "MTA1.bot-token.secret"},
	)
	create, update, add, remove, delete, members = service.requests
	base = "https://discord.com/api/v10"
	for request in service.requests:
		assert request.headers["authorization"] == "Bot MTA1.bot-token.secret"
	assert (create.method, str(create.url)) == ("POST", f"{base}/guilds/{guild}/channels")
	assert body(create) == {
		"name": "launch",
		"type": 0,
		"topic": "Launch planning",
		"parent_id": "1300000000000000001",
	}
	assert (update.method, str(update.url)) == ("PATCH", f"{base}/channels/{channel}")
	assert body(update) == {"name": "launch-q1", "nsfw": False}
	assert members.method == "GET"
	assert members.url.copy_with(query=None) == f"{base}/guilds/{guild}/members"
	assert dict(members.url.params) == {"limit": "50", "after": "1"}
	route = f"{base}/guilds/{guild}/members/{user}/roles/{role}"
	assert (add.method, str(add.url), add.content) == ("PUT", route, b"")
	assert (remove.method, str(remove.url)) == ("DELETE", route)
	assert (delete.method, str(delete.url)) == ("DELETE", f"{base}/channels/{channel}")


async def test_discord_agent_reads_a_server_with_its_counts() -> None:
	"""getGuild is GET /guilds/{guild_id} (get_guild) with the bot token and with_counts."""
	guild = "1100000000000000001"
	service = Recorder(httpx.Response(200, json={"id": guild, "name": "Makers", "roles": []}))
	await run_agent(
		"discord",
		[call_tool("discord.getGuild", guild_id=guild, with_counts=True)],
		service,
		config={"botToken": "MTA1.bot-token.secret"},
	)
	(request,) = service.requests
	assert request.method == "GET"
	assert str(request.url) == f"https://discord.com/api/v10/guilds/{guild}?with_counts=true"
	assert request.headers["authorization"] == "Bot MTA1.bot-token.secret"


async def test_x_agent_sends_a_dm_follows_and_reads_dms() -> None:
	"""DMs go to /2/dm_conversations/with/{id}/messages as JSON, follows to /2/users/{id}/following,
	and the DM list sends X's dotted field names comma-joined; the user token is the Bearer."""
	me, them = "1000000000000000001", "2000000000000000002"
	service = Recorder(
		httpx.Response(201, json={"data": {"dm_conversation_id": f"{me}-{them}"}}),
		httpx.Response(200, json={"data": {"following": True}}),
		httpx.Response(200, json={"data": {"following": False}}),
		httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}),
	)
	await run_agent(
		"x",
		[
			call_tool(
				"x.sendDirectMessage",
				participant_id=them,
				text="Thanks for the intro!",
				attachments=[{"media_id": "1455952740635586573"}],
			),
			call_tool("x.followUser", id=me, target_user_id=them),
			call_tool("x.unfollowUser", source_user_id=me, target_user_id=them),
			call_tool(
				"x.listDirectMessages",
				max_results=20,
				event_types=["MessageCreate"],
				dm_event_fields=["created_at", "text"],
				expansions=["sender_id"],
			),
		],
		service,
		config={
			"accessToken": "x-user-access-token",
			"expiryDate": 4102444800,
			"clientId": "cid",
			"clientSecret": "csecret",
			"refreshToken": "r",
		},
		credential="oauth2",
	)
	dm, follow, unfollow, events = service.requests
	for request in service.requests:
		assert request.headers["authorization"] == "Bearer x-user-access-token"
	assert (dm.method, str(dm.url)) == (
		"POST",
		f"https://api.x.com/2/dm_conversations/with/{them}/messages",
	)
	assert body(dm) == {
		"text": "Thanks for the intro!",
		"attachments": [{"media_id": "1455952740635586573"}],
	}
	assert (follow.method, str(follow.url)) == (
		"POST",
		f"https://api.x.com/2/users/{me}/following",
	)
	assert body(follow) == {"target_user_id": them}
	assert (unfollow.method, str(unfollow.url)) == (
		"DELETE",
		f"https://api.x.com/2/users/{me}/following/{them}",
	)
	assert events.url.copy_with(query=None) == "https://api.x.com/2/dm_events"
	assert dict(events.url.params) == {
		"max_results": "20",
		"event_types": "MessageCreate",
		"dm_event.fields": "created_at,text",
		"expansions": "sender_id",
	}


async def test_telegram_agent_pins_sends_media_and_reads_members() -> None:
	"""Pins, locations, stickers, animations (by URL and uploaded) and member reads each go to
	their Bot API method with the token only in the path, as JSON or multipart."""
	token = "123456789:AAHsecretTokenValue"
	sent = httpx.Response(200, json={"ok": True, "result": {"message_id": 9, "chat": {"id": 42}}})
	done = httpx.Response(200, json={"ok": True, "result": True})
	service = Recorder(
		done,
		done,
		sent,
		sent,
		sent,
		sent,
		httpx.Response(200, json={"ok": True, "result": [{"status": "creator"}]}),
		httpx.Response(200, json={"ok": True, "result": {"status": "member"}}),
	)
	gif = data_url(b"GIF89a", "image/gif")
	result, model = await run_agent(
		"telegram",
		[
			call_tool(
				"telegram.pinChatMessage", chat_id=42, message_id=7, disable_notification=True
			),
			call_tool("telegram.unpinChatMessage", chat_id="@channel"),
			call_tool(
				"telegram.sendLocation",
				chat_id=42,
				latitude=59.9139,
				longitude=10.7522,
				live_period=900,
			),
			call_tool("telegram.sendSticker", chat_id=42, sticker="CAACAgIAAxkBAAE"),
			call_tool(
				"telegram.sendAnimation",
				chat_id=42,
				animation="https://example.com/cat.gif",
				caption="cat",
			),
			call_tool("telegram.uploadAnimation", chat_id=42, animation=gif, caption="dog"),
			call_tool("telegram.getChatAdministrators", chat_id=-1001234567890),
			call_tool("telegram.getChatMember", chat_id=-1001234567890, user_id=777),
		],
		service,
		config={"botToken": token},
	)
	pin, unpin, location, sticker, animation, upload, admins, member = service.requests
	base = f"https://api.telegram.org/bot{token}"
	expected = [
		(pin, "pinChatMessage", {"chat_id": 42, "message_id": 7, "disable_notification": True}),
		(unpin, "unpinChatMessage", {"chat_id": "@channel"}),
		(
			location,
			"sendLocation",
			{"chat_id": 42, "latitude": 59.9139, "longitude": 10.7522, "live_period": 900},
		),
		(sticker, "sendSticker", {"chat_id": 42, "sticker": "CAACAgIAAxkBAAE"}),
		(
			animation,
			"sendAnimation",
			{"chat_id": 42, "animation": "https://example.com/cat.gif", "caption": "cat"},
		),
		(admins, "getChatAdministrators", {"chat_id": -1001234567890}),
		(member, "getChatMember", {"chat_id": -1001234567890, "user_id": 777}),
	]
	for request, method, fields in expected:
		assert (request.method, str(request.url)) == ("POST", f"{base}/{method}")
		assert body(request) == fields
	assert (upload.method, str(upload.url)) == ("POST", f"{base}/sendAnimation")
	parts = multipart_parts(upload)
	assert parts["chat_id"] == b"42" and parts["caption"] == b"dog"
	assert parts["animation"] == b"GIF89a"
	assert token not in model_saw(model) and token not in json.dumps(result.output)


async def test_x_agent_replies_in_a_dm_conversation_and_reads_it() -> None:
	"""A conversation message goes to /2/dm_conversations/{id}/messages; the conversation with a
	user is read from /2/dm_conversations/with/{id}/dm_events."""
	them = "2000000000000000002"
	service = Recorder(
		httpx.Response(201, json={"data": {"dm_event_id": "1"}}),
		httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}),
	)
	await run_agent(
		"x",
		[
			call_tool(
				"x.sendConversationMessage",
				dm_conversation_id=f"1000000000000000001-{them}",
				text="On my way",
			),
			call_tool("x.getDirectMessagesWith", participant_id=them, max_results=5),
		],
		service,
		config={"accessToken": "x-user-access-token", "expiryDate": 4102444800},
		credential="oauth2",
	)
	send, read = service.requests
	assert (send.method, str(send.url)) == (
		"POST",
		f"https://api.x.com/2/dm_conversations/1000000000000000001-{them}/messages",
	)
	assert body(send) == {"text": "On my way"}
	assert read.url.copy_with(query=None) == (
		f"https://api.x.com/2/dm_conversations/with/{them}/dm_events"
	)
	assert dict(read.url.params) == {"max_results": "5"}
	assert read.headers["authorization"] == "Bearer x-user-access-token"


async def test_x_home_timeline_takes_a_page_of_one() -> None:
	"""getHomeTimeline sends max_results=1, which X's OpenAPI allows (1 to 100) on that endpoint."""
	me = "1000000000000000001"
	service = Recorder(httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}))
	await run_agent(
		"x",
		[call_tool("x.getHomeTimeline", id=me, max_results=1)],
		service,
		config={"accessToken": "x-user-access-token", "expiryDate": 4102444800},
		credential="oauth2",
	)
	(read,) = service.requests
	assert (read.method, str(read.url)) == (
		"GET",
		f"https://api.x.com/2/users/{me}/timelines/reverse_chronological?max_results=1",
	)
	assert read.headers["authorization"] == "Bearer x-user-access-token"


async def test_x_agent_reads_people_and_posts_by_id_bookmarks_and_moderates() -> None:
	"""The X tools beyond posting send the requests of X's OpenAPI (2.167): posts by ids with
	media fields, followers, bookmarks added and removed, a repost undone and a reply hidden."""
	me, them = "1000000000000000001", "2000000000000000002"
	service = Recorder(
		httpx.Response(200, json={"data": [{"id": "11", "text": "a"}]}),
		httpx.Response(200, json={"data": {"id": them, "username": "them"}}),
		httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}),
		httpx.Response(200, json={"data": {"bookmarked": True}}),
		httpx.Response(200, json={"data": {"bookmarked": False}}),
		httpx.Response(200, json={"data": {"retweeted": False}}),
		httpx.Response(200, json={"data": {"hidden": True}}),
		httpx.Response(200, json={"data": [], "meta": {"result_count": 0}}),
	)
	await run_agent(
		"x",
		[
			call_tool(
				"x.getPosts",
				ids=["11", "12"],
				expansions=["attachments.media_keys"],
				media_fields=["url", "alt_text"],
			),
			call_tool("x.getUser", id=them, user_fields=["description"]),
			call_tool("x.getFollowers", id=them, max_results=1000),
			call_tool("x.addBookmark", id=me, tweet_id="11"),
			call_tool("x.removeBookmark", id=me, tweet_id="11"),
			call_tool("x.unrepostPost", id=me, source_tweet_id="12"),
			call_tool("x.hideReply", tweet_id="13", hidden=True),
			call_tool("x.getBookmarks", id=me, max_results=1),
		],
		service,
		config={"accessToken": "x-user-access-token", "expiryDate": 4102444800},
		credential="oauth2",
	)
	posts, user, followers, add, remove, unrepost, hide, bookmarks = service.requests
	for request in service.requests:
		assert request.headers["authorization"] == "Bearer x-user-access-token"
	assert (posts.method, str(posts.url)) == (
		"GET",
		"https://api.x.com/2/tweets?ids=11%2C12&expansions=attachments.media_keys"
		"&media.fields=url%2Calt_text",
	)
	assert (user.method, str(user.url)) == (
		"GET",
		f"https://api.x.com/2/users/{them}?user.fields=description",
	)
	assert (followers.method, str(followers.url)) == (
		"GET",
		f"https://api.x.com/2/users/{them}/followers?max_results=1000",
	)
	assert (add.method, str(add.url)) == ("POST", f"https://api.x.com/2/users/{me}/bookmarks")
	assert body(add) == {"tweet_id": "11"}
	assert (remove.method, str(remove.url)) == (
		"DELETE",
		f"https://api.x.com/2/users/{me}/bookmarks/11",
	)
	assert not remove.content
	assert (unrepost.method, str(unrepost.url)) == (
		"DELETE",
		f"https://api.x.com/2/users/{me}/retweets/12",
	)
	assert (hide.method, str(hide.url)) == ("PUT", "https://api.x.com/2/tweets/13/hidden")
	assert body(hide) == {"hidden": True}
	assert (bookmarks.method, str(bookmarks.url)) == (
		"GET",
		f"https://api.x.com/2/users/{me}/bookmarks?max_results=1",
	)


async def test_outlook_events_carry_the_call_s_transaction_id_so_a_retry_creates_one() -> None:
	"""createEvent sends the call's key as Graph's event transactionId (its documented guard
	against a client's retry creating the event twice): the engine retries a 503 with the same
	id, a second call gets another; in doubt after a crash the run still asks."""
	service = Recorder(
		httpx.Response(503), httpx.Response(201, json={"id": "e1"}), httpx.Response(201, json={})
	)
	event = {
		"subject": "Standup",
		"start": {"dateTime": "2026-12-01T09:00:00", "timeZone": "UTC"},
		"end": {"dateTime": "2026-12-01T09:15:00", "timeZone": "UTC"},
	}
	create = call_tool("outlook.createEvent", **event)
	model = ScriptedModel([create, create, finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	config = {"accessToken": "graph-access-token", "expiryDate": "2100-01-01T00:00:00Z"}
	binding = {"integration": "outlook", "credential": {"type": "oauth2", "config": config}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		assert agent.in_doubt["outlook.createEvent"] == "ask"
		result = await agent.run("Book it twice.")
	assert result.status == "success"
	ids = [body(r)["transactionId"] for r in service.requests]
	assert len(ids) == 3 and ids[0] == ids[1] != ids[2]
	assert all(uuid.UUID(i).version == 5 for i in ids)
	(tool,) = [t for t in outlook.INTEGRATION.tools if t.handle == "createEvent"]
	assert "transactionId" not in tool.input_schema["properties"]
