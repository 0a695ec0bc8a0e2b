"""A scripted agent uses each Google integration: exact requests through httpx.MockTransport."""

from __future__ import annotations

import base64
import email
import email.policy
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import (
	gmail,
	google_ads,
	google_calendar,
	google_drive,
	google_sheets,
	nano_banana,
	veo,
	youtube,
)

pytestmark = pytest.mark.anyio

TOKEN = "ya29.test-access-token"
OAUTH = {
	"type": "oauth2",
	"config": {
		"clientId": "client-id-123",
		"clientSecret": "client-secret-456",
		"refreshToken": "1//refresh-token-789",
		"accessToken": TOKEN,
		"expiryDate": "2099-01-01T00:00:00Z",
	},
}
GEMINI_KEY = {"type": "custom", "config": {"apiKey": "AIza-test-gemini-key"}}

Handler = Callable[[httpx.Request], httpx.Response]


async def run_agent(
	module: ModuleType,
	iid: str,
	credential: dict[str, Any],
	calls: list[dict[str, Any]],
	routes: list[Handler],
) -> tuple[list[httpx.Request], list[Any]]:
	"""Run an agent that makes ``calls`` in order; the n-th HTTP request is answered by ``routes[n]``."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		request.read()
		seen.append(request)
		if len(seen) > len(routes):
			return httpx.Response(
				500, json={"error": {"message": f"unexpected request {request.url}"}}
			)
		return routes[len(seen) - 1](request)

	model = ScriptedModel([*calls, finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[module], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="Tester", model=model, integrations=[{"integration": iid, "credential": credential}]
	)
	responses: list[Any] = []
	agent.on("tool:response", lambda e: responses.append(e))
	result = await agent.run("Go.")
	assert result.status == "success"
	model.assert_consumed()
	assert [e.error for e in responses] == [False] * len(calls), [e.response for e in responses]
	assert len(seen) == len(routes)
	await http.aclose()
	return seen, [e.response for e in responses]


def ok(payload: Any = None, **headers: str) -> Handler:
	return lambda request: httpx.Response(
		200, json=payload if payload is not None else {}, headers=headers
	)


def bearer(request: httpx.Request) -> None:
	assert request.headers["authorization"] == f"Bearer {TOKEN}"


def body(request: httpx.Request) -> Any:
	return json.loads(request.content)


def multipart_parts(request: httpx.Request) -> list[email.message.Message]:
	content_type = request.headers["content-type"]
	assert content_type.startswith("multipart/related")
	raw = f"Content-Type: {content_type}\r\n\r\n".encode() + request.content
	message = email.message_from_bytes(raw, policy=email.policy.HTTP)
	return list(message.iter_parts())


async def test_google_calendar_agent() -> None:
	"""The agent creates an event with time zones and lists events expanded by start time."""
	event = {
		"summary": "Design review",
		"start": {"dateTime": "2026-12-03T15:00:00", "timeZone": "Europe/Paris"},
		"end": {"dateTime": "2026-12-03T16:00:00", "timeZone": "Europe/Paris"},
		"attendees": [{"email": "ana@example.com"}],
	}
	seen, responses = await run_agent(
		google_calendar,
		"googleCalendar",
		OAUTH,
		[
			call_tool("googleCalendar.createEvent", **event, sendUpdates="all"),
			call_tool(
				"googleCalendar.listEvents",
				calendarId="team@example.com",
				timeMin="2026-12-01T00:00:00Z",
				timeMax="2026-12-08T00:00:00Z",
			),
		],
		[ok({"id": "evt1", "status": "confirmed"}), ok({"items": [], "nextPageToken": "p2"})],
	)
	create, listing = seen
	bearer(create)
	assert create.method == "POST"
	assert (
		str(create.url)
		== "https://www.googleapis.com/calendar/v3/calendars/primary/events?sendUpdates=all"
	)
	assert body(create) == event
	bearer(listing)
	assert listing.method == "GET"
	assert listing.url.path == "/calendar/v3/calendars/team@example.com/events"
	assert dict(listing.url.params) == {
		"timeMin": "2026-12-01T00:00:00Z",
		"timeMax": "2026-12-08T00:00:00Z",
		"singleEvents": "true",
		"orderBy": "startTime",
		"maxResults": "50",
	}
	assert responses[1] == {"items": [], "nextPageToken": "p2"}


async def test_google_calendar_agent_answers_an_invitation() -> None:
	"""respondToEvent reads the event, then patches only the guest's own entry with
	attendeesOmitted (calendar.v3 Event.attendeesOmitted: "only update the participant's
	response"), so the other guests' answers stay; the comment goes with it."""
	invitation = {
		"id": "ev1",
		"attendees": [
			{"email": "boss@example.com", "organizer": True, "responseStatus": "accepted"},
			{"email": "me@example.com", "self": True, "responseStatus": "needsAction"},
			{"email": "ana@example.com", "responseStatus": "declined"},
		],
	}
	seen, responses = await run_agent(
		google_calendar,
		"googleCalendar",
		OAUTH,
		[
			call_tool(
				"googleCalendar.respondToEvent",
				eventId="ev1",
				responseStatus="tentative",
				comment="Running late",
				sendUpdates="all",
			)
		],
		[
			ok(invitation),
			ok(
				{
					"id": "ev1",
					"htmlLink": "https://calendar.google.com/event?eid=ev1",
					"attendees": [
						{"email": "me@example.com", "self": True, "responseStatus": "tentative"}
					],
				}
			),
		],
	)
	get, patch = seen
	bearer(get)
	assert get.method == "GET"
	assert str(get.url) == "https://www.googleapis.com/calendar/v3/calendars/primary/events/ev1"
	assert get.content == b""
	bearer(patch)
	assert patch.method == "PATCH"
	assert str(patch.url) == (
		"https://www.googleapis.com/calendar/v3/calendars/primary/events/ev1?sendUpdates=all"
	)
	assert patch.headers["content-type"] == "application/json"
	assert body(patch) == {
		"attendees": [
			{"email": "me@example.com", "responseStatus": "tentative", "comment": "Running late"}
		],
		"attendeesOmitted": True,
	}
	assert responses == [
		{
			"id": "ev1",
			"htmlLink": "https://calendar.google.com/event?eid=ev1",
			"email": "me@example.com",
			"responseStatus": "tentative",
		}
	]


async def test_respond_to_event_refuses_an_event_without_an_invitation() -> None:
	"""An event where the calendar is no guest (its own event) is refused before any write."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"id": "ev2", "attendees": [{"email": "x@example.com"}]})

	model = ScriptedModel(
		[
			call_tool(
				"googleCalendar.respondToEvent",
				calendarId="team@example.com",
				eventId="ev2",
				responseStatus="accepted",
			),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_calendar], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="Tester",
		model=model,
		integrations=[{"integration": "googleCalendar", "credential": OAUTH}],
	)
	errors: list[Any] = []
	agent.on("tool:response", lambda e: errors.append(e))
	await agent.run("Go.")
	await http.aclose()
	assert [r.method for r in seen] == ["GET"]
	assert seen[0].url.path == "/calendar/v3/calendars/team@example.com/events/ev2"
	(event,) = errors
	assert event.error
	assert "eventId: calendar 'team@example.com' is not a guest of event 'ev2'" in str(
		event.response
	)


async def test_gmail_agent() -> None:
	"""The agent searches with repeated labelIds and sends an RFC 2822 message as base64url raw."""
	seen, _ = await run_agent(
		gmail,
		"gmail",
		OAUTH,
		[
			call_tool(
				"gmail.listMessages",
				q="from:bo@example.com is:unread",
				labelIds=["INBOX", "UNREAD"],
			),
			call_tool(
				"gmail.sendMessage",
				to="bo@example.com",
				subject="Re: Invoice",
				body="Paid today — thanks!",
				threadId="t-42",
				inReplyTo="<m1@example.com>",
				references="<m1@example.com>",
			),
		],
		[
			ok({"messages": [{"id": "m1", "threadId": "t-42"}]}),
			ok({"id": "m2", "threadId": "t-42"}),
		],
	)
	listing, send = seen
	bearer(listing)
	assert listing.url.path == "/gmail/v1/users/me/messages"
	assert listing.url.params.get_list("labelIds") == ["INBOX", "UNREAD"]
	assert listing.url.params["q"] == "from:bo@example.com is:unread"
	assert listing.url.params["maxResults"] == "20"
	bearer(send)
	assert send.method == "POST"
	assert str(send.url) == "https://gmail.googleapis.com/gmail/v1/users/me/messages/send"
	payload = body(send)
	assert payload["threadId"] == "t-42"
	raw = payload["raw"]
	assert "=" not in raw and "+" not in raw and "/" not in raw
	message = email.message_from_bytes(
		base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)), policy=email.policy.default
	)
	assert message["To"] == "bo@example.com"
	assert message["Subject"] == "Re: Invoice"
	assert message["In-Reply-To"] == "<m1@example.com>"
	assert message["References"] == "<m1@example.com>"
	assert (
		message.get_body(preferencelist=("plain",)).get_content().strip() == "Paid today — thanks!"
	)


async def test_google_drive_agent() -> None:
	"""The agent uploads a file as multipart/related and downloads one as a saved binary file."""
	data = b"name,total\nAna,42\n"
	ref = "data:text/csv;base64," + base64.b64encode(data).decode()
	seen, responses = await run_agent(
		google_drive,
		"googleDrive",
		OAUTH,
		[
			call_tool(
				"googleDrive.uploadFile",
				name="totals.csv",
				mimeType="text/csv",
				parents=["folder9"],
				file=ref,
			),
			call_tool("googleDrive.downloadFile", fileId="file7"),
		],
		[
			ok({"id": "new1", "name": "totals.csv"}),
			lambda request: httpx.Response(
				200, content=b"%PDF-1.7 bytes", headers={"content-type": "application/pdf"}
			),
		],
	)
	upload, download = seen
	bearer(upload)
	assert upload.method == "POST"
	assert upload.url.path == "/upload/drive/v3/files"
	assert upload.url.params["uploadType"] == "multipart"
	metadata, media = multipart_parts(upload)
	assert metadata.get_content_type() == "application/json"
	assert json.loads(metadata.get_payload(decode=True)) == {
		"name": "totals.csv",
		"mimeType": "text/csv",
		"parents": ["folder9"],
	}
	assert media.get_content_type() == "text/csv"
	assert media.get_payload(decode=True) == data
	bearer(download)
	assert download.method == "GET"
	assert download.url.path == "/drive/v3/files/file7"
	assert download.url.params["alt"] == "media"
	saved = responses[1]
	assert saved["file"].startswith("openmolt-file:")
	assert saved["size"] == len(b"%PDF-1.7 bytes")
	assert saved["mediaType"] == "application/pdf"


SESSION = "https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable&upload_id=ABC-123"
BIG = bytes(range(256)) * 1024 + b"tail of the file"  # 262144 + 16 bytes: two chunks of 256 KiB


def resume_incomplete(received: str | None) -> Handler:
	return lambda request: httpx.Response(308, headers={"Range": received} if received else {})


async def test_google_drive_uploads_a_large_file_in_chunks_and_resumes() -> None:
	"""Start a session, plan 256 KiB chunks, PUT each range (308 Range), ask the status, finish."""
	ref = "data:video/mp4;base64," + base64.b64encode(BIG).decode()
	total = len(BIG)
	seen, responses = await run_agent(
		google_drive,
		"googleDrive",
		OAUTH,
		[
			call_tool(
				"googleDrive.startResumableUpload",
				name="talk.mp4",
				mimeType="video/mp4",
				contentType="video/mp4",
				size=total,
			),
			call_tool("googleDrive.fileInfo", file=ref, chunkSize=262144),
			call_tool(
				"googleDrive.uploadResumableChunk",
				uploadUrl=SESSION,
				file=ref,
				start=0,
				end=262143,
				totalSize=total,
			),
			call_tool("googleDrive.getResumableUploadStatus", uploadUrl=SESSION, totalSize=total),
			call_tool(
				"googleDrive.uploadResumableChunk",
				uploadUrl=SESSION,
				file=ref,
				start=262144,
				end=total - 1,
				totalSize=total,
			),
		],
		[
			ok({}, Location=SESSION),
			resume_incomplete("bytes=0-262143"),
			resume_incomplete("bytes=0-262143"),
			ok({"id": "big1", "name": "talk.mp4", "size": str(total)}),
		],
	)
	start, first, status, last = seen
	bearer(start)
	assert start.method == "POST"
	assert start.url.params["uploadType"] == "resumable"
	assert start.headers["x-upload-content-type"] == "video/mp4"
	assert start.headers["x-upload-content-length"] == str(total)
	assert body(start) == {"name": "talk.mp4", "mimeType": "video/mp4"}
	for put in (first, status, last):
		bearer(put)
		assert put.method == "PUT"
		assert put.url.path == "/upload/drive/v3/files"
		assert dict(put.url.params) == {"uploadType": "resumable", "upload_id": "ABC-123"}
	assert first.headers["content-range"] == f"bytes 0-262143/{total}"
	assert first.content == BIG[:262144]
	assert first.headers["content-length"] == "262144"
	assert status.headers["content-range"] == f"bytes */{total}"
	assert status.content == b""
	assert status.headers["content-length"] == "0"
	assert last.headers["content-range"] == f"bytes 262144-{total - 1}/{total}"
	assert last.content == BIG[262144:]
	assert responses[0] == {"body": {}, "headers": {"Location": SESSION}}
	plan = responses[1]
	assert plan["size"] == total
	assert [(c["start"], c["end"]) for c in plan["chunks"]] == [(0, 262143), (262144, total - 1)]
	assert responses[2] == {"ok": True, "status": 308, "headers": {"Range": "bytes=0-262143"}}
	assert responses[3] == responses[2]
	assert responses[4] == {"id": "big1", "name": "talk.mp4", "size": str(total)}


async def test_youtube_uploads_a_video_in_chunks() -> None:
	"""The video goes up in two ranged PUTs; a status query before any byte has no Range."""
	ref = "data:video/mp4;base64," + base64.b64encode(BIG).decode()
	total = len(BIG)
	session = (
		"https://youtube.googleapis.com/upload/youtube/v3/videos?uploadType=resumable&upload_id=V9"
	)
	seen, responses = await run_agent(
		youtube,
		"youtube",
		OAUTH,
		[
			call_tool("youtube.getVideoUploadStatus", uploadUrl=session, totalSize=total),
			call_tool(
				"youtube.uploadVideoChunk",
				uploadUrl=session,
				video=ref,
				start=0,
				end=262143,
				totalSize=total,
			),
			call_tool(
				"youtube.uploadVideoChunk",
				uploadUrl=session,
				video=ref,
				start=262144,
				end=total - 1,
				totalSize=total,
			),
		],
		[
			resume_incomplete(None),
			resume_incomplete("bytes=0-262143"),
			ok({"id": "vid7", "status": {"uploadStatus": "uploaded"}}),
		],
	)
	status, first, last = seen
	for put in seen:
		bearer(put)
		assert put.method == "PUT"
		assert str(put.url).startswith(
			"https://youtube.googleapis.com/upload/youtube/v3/videos?uploadType=resumable"
		)
		assert put.url.params["upload_id"] == "V9"
	assert status.headers["content-range"] == f"bytes */{total}"
	assert first.headers["content-range"] == f"bytes 0-262143/{total}"
	assert first.content == BIG[:262144]
	assert last.headers["content-range"] == f"bytes 262144-{total - 1}/{total}"
	assert last.content == BIG[262144:]
	assert responses == [
		{"ok": True, "status": 308},
		{"ok": True, "status": 308, "headers": {"Range": "bytes=0-262143"}},
		{"id": "vid7", "status": {"uploadStatus": "uploaded"}},
	]


async def test_google_sheets_agent() -> None:
	"""The agent appends rows with USER_ENTERED and reads a range with a quoted sheet name."""
	rows = [["Ana", 42, "=B2*2"]]
	seen, _ = await run_agent(
		google_sheets,
		"googleSheets",
		OAUTH,
		[
			call_tool(
				"googleSheets.appendValues",
				spreadsheetId="sheet123",
				range="Sheet1!A1",
				values=rows,
			),
			call_tool(
				"googleSheets.getValues",
				spreadsheetId="sheet123",
				range="'Q4 sales'!A1:C10",
				valueRenderOption="UNFORMATTED_VALUE",
			),
		],
		[
			ok({"updates": {"updatedRows": 1}}),
			ok({"range": "'Q4 sales'!A1:C10", "values": [["x"]]}),
		],
	)
	append, get = seen
	bearer(append)
	assert append.method == "POST"
	assert append.url.path == "/v4/spreadsheets/sheet123/values/Sheet1!A1:append"
	assert dict(append.url.params) == {
		"valueInputOption": "USER_ENTERED",
		"insertDataOption": "INSERT_ROWS",
	}
	assert body(append) == {"range": "Sheet1!A1", "values": rows}
	bearer(get)
	assert get.url.path == "/v4/spreadsheets/sheet123/values/'Q4 sales'!A1:C10"
	assert " " not in get.url.raw_path.decode()
	assert dict(get.url.params) == {"valueRenderOption": "UNFORMATTED_VALUE"}


async def test_google_sheets_agent_finds_a_row_then_deletes_it() -> None:
	"""lookupRows gives the row number; deleteRows sends one deleteDimension over ROWS with
	0-based, end-exclusive indexes and sheetId 0 kept (sheets.v4 DimensionRange)."""
	seen, responses = await run_agent(
		google_sheets,
		"googleSheets",
		OAUTH,
		[
			call_tool(
				"googleSheets.lookupRows",
				spreadsheetId="sheet123",
				sheetName="Leads",
				lookupColumn="Email",
				lookupValue="ana@example.com",
			),
			call_tool(
				"googleSheets.deleteRows",
				spreadsheetId="sheet123",
				sheetId=0,
				startIndex=4,
				endIndex=5,
			),
		],
		[
			ok({"values": [["Email", "Name"]]}),
			ok({"values": [["x@example.com", "y@example.com", "", "ana@example.com"]]}),
			ok({"valueRanges": [{"values": [["ana@example.com", "Ana"]]}]}),
			ok({"spreadsheetId": "sheet123", "replies": [{}]}),
		],
	)
	assert responses[0]["rows"] == [
		{"rowNumber": 5, "values": {"Email": "ana@example.com", "Name": "Ana"}}
	]
	delete = seen[3]
	bearer(delete)
	assert delete.method == "POST"
	assert str(delete.url) == "https://sheets.googleapis.com/v4/spreadsheets/sheet123:batchUpdate"
	assert delete.headers["content-type"] == "application/json"
	assert body(delete) == {
		"requests": [
			{
				"deleteDimension": {
					"range": {"sheetId": 0, "dimension": "ROWS", "startIndex": 4, "endIndex": 5}
				}
			}
		]
	}


async def test_get_spreadsheet_with_grid_data_asks_for_the_grid_data() -> None:
	"""includeGridData with the default field mask returns the cells: the mask names sheets.data.

	Google returns only the fields of the ``fields`` mask (sheets.v4 ``spreadsheets.get``), so a
	mask without ``data`` dropped the grid data includeGridData asked for.
	"""
	seen, _ = await run_agent(
		google_sheets,
		"googleSheets",
		OAUTH,
		[
			call_tool(
				"googleSheets.getSpreadsheet",
				spreadsheetId="sheet123",
				ranges=["Sheet1!A1:B2", "'Q4 sales'!C3"],
				includeGridData=True,
			)
		],
		[ok({"spreadsheetId": "sheet123", "sheets": [{"data": [{"rowData": []}]}]})],
	)
	(get,) = seen
	bearer(get)
	assert get.method == "GET"
	assert get.url.path == "/v4/spreadsheets/sheet123"
	assert get.url.params.multi_items() == [
		("ranges", "Sheet1!A1:B2"),
		("ranges", "'Q4 sales'!C3"),
		("includeGridData", "true"),
		(
			"fields",
			"spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),"
			"sheets(properties(sheetId,title,index,gridProperties),data)",
		),
	]
	assert get.content == b""


async def test_get_spreadsheet_without_grid_data_leaves_the_cells_out() -> None:
	"""Without includeGridData the default mask leaves sheets.data out.

	Google ignores includeGridData once a ``fields`` mask is set (sheets.v4 ``spreadsheets.get``:
	"If a field mask is set, the includeGridData parameter is ignored"): a default mask naming
	``data`` returned every cell of every sheet, with its formatting, to each plain call.
	"""
	seen, _ = await run_agent(
		google_sheets,
		"googleSheets",
		OAUTH,
		[call_tool("googleSheets.getSpreadsheet", spreadsheetId="sheet123")],
		[ok({"spreadsheetId": "sheet123", "sheets": []})],
	)
	(get,) = seen
	assert get.url.params.multi_items() == [
		(
			"fields",
			"spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),"
			"sheets(properties(sheetId,title,index,gridProperties))",
		),
	]


async def test_youtube_agent() -> None:
	"""The agent uploads a video as multipart/related with snippet and status, then rates one."""
	video = b"\x00\x00\x00\x18ftypmp42 fake video"
	ref = "data:video/mp4;base64," + base64.b64encode(video).decode()
	seen, _ = await run_agent(
		youtube,
		"youtube",
		OAUTH,
		[
			call_tool(
				"youtube.uploadVideo",
				video=ref,
				title="Launch",
				description="Our launch.",
				tags=["launch"],
				privacyStatus="unlisted",
				selfDeclaredMadeForKids=False,
			),
			call_tool("youtube.rateVideo", id="vid42", rating="like"),
		],
		[
			ok({"id": "vid99", "status": {"uploadStatus": "uploaded"}}),
			lambda request: httpx.Response(204),
		],
	)
	upload, rate = seen
	bearer(upload)
	assert upload.url.path == "/upload/youtube/v3/videos"
	assert dict(upload.url.params) == {"uploadType": "multipart", "part": "snippet,status"}
	metadata, media = multipart_parts(upload)
	assert json.loads(metadata.get_payload(decode=True)) == {
		"snippet": {
			"title": "Launch",
			"description": "Our launch.",
			"tags": ["launch"],
			"categoryId": "22",
		},
		"status": {"privacyStatus": "unlisted", "selfDeclaredMadeForKids": False},
	}
	assert media.get_content_type() == "video/mp4"
	assert media.get_payload(decode=True) == video
	bearer(rate)
	assert rate.method == "POST"
	assert (
		str(rate.url)
		== "https://youtube.googleapis.com/youtube/v3/videos/rate?id=vid42&rating=like"
	)


async def test_youtube_agent_reads_comments_and_replies_to_one() -> None:
	"""The agent lists a video's comment threads, then replies to one (comments.insert with
	snippet.parentId and textOriginal, as youtube.v3 names them)."""
	seen, responses = await run_agent(
		youtube,
		"youtube",
		OAUTH,
		[
			call_tool("youtube.listCommentThreads", videoId="vid42", maxResults=50),
			call_tool("youtube.replyToComment", parentId="Ugz-top", textOriginal="Thanks!"),
		],
		[
			ok({"items": [{"id": "Ugz-top", "snippet": {}}], "nextPageToken": "p2"}),
			ok({"id": "Ugz-top.r2", "snippet": {"parentId": "Ugz-top"}}),
		],
	)
	threads, reply = seen
	bearer(threads)
	assert threads.method == "GET"
	assert str(threads.url) == (
		"https://youtube.googleapis.com/youtube/v3/commentThreads"
		"?videoId=vid42&part=snippet%2Creplies&textFormat=plainText&maxResults=50"
	)
	assert threads.content == b""
	bearer(reply)
	assert reply.method == "POST"
	assert str(reply.url) == "https://youtube.googleapis.com/youtube/v3/comments?part=snippet"
	assert reply.headers["content-type"] == "application/json"
	assert body(reply) == {"snippet": {"parentId": "Ugz-top", "textOriginal": "Thanks!"}}
	assert responses[0]["nextPageToken"] == "p2"


async def test_google_ads_agent() -> None:
	"""The agent runs a GAQL search and pauses a campaign with developer-token and login-customer-id."""
	credential = {
		"type": "oauth2",
		"config": {
			**OAUTH["config"],
			"developerToken": "dev-token-abc",
			"loginCustomerId": "111-222-3333",
		},
	}
	query = (
		"SELECT campaign.id, metrics.clicks FROM campaign WHERE segments.date DURING LAST_7_DAYS"
	)
	seen, _ = await run_agent(
		google_ads,
		"googleAds",
		credential,
		[
			call_tool("googleAds.search", customerId="123-456-7890", query=query),
			call_tool(
				"googleAds.setCampaignStatus",
				customerId="1234567890",
				campaignId="555",
				status="PAUSED",
			),
		],
		[
			ok({"results": [{"campaign": {"id": "555"}}]}),
			ok({"results": [{"resourceName": "customers/1234567890/campaigns/555"}]}),
		],
	)
	search, pause = seen
	for request in seen:
		bearer(request)
		assert request.headers["developer-token"] == "dev-token-abc"
		assert request.headers["login-customer-id"] == "1112223333"
	assert search.method == "POST"
	assert (
		str(search.url)
		== "https://googleads.googleapis.com/v26/customers/1234567890/googleAds:search"
	)
	assert body(search) == {"query": query}
	assert (
		str(pause.url)
		== "https://googleads.googleapis.com/v26/customers/1234567890/campaigns:mutate"
	)
	assert body(pause) == {
		"operations": [
			{
				"update": {
					"resourceName": "customers/1234567890/campaigns/555",
					"status": "PAUSED",
				},
				"updateMask": "status",
			}
		]
	}


async def test_google_ads_keyword_ideas_pick_the_seed_from_the_inputs() -> None:
	"""URL alone -> urlSeed, keywords alone -> keywordSeed, both -> keywordAndUrlSeed; none is refused."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"results": [{"text": "running shoes"}]})

	common = {"customerId": "123-456-7890", "language": "languageConstants/1000"}
	model = ScriptedModel(
		[
			call_tool("googleAds.generateKeywordIdeas", url="https://example.com/shoes", **common),
			call_tool("googleAds.generateKeywordIdeas", keywords=["running shoes"], **common),
			call_tool(
				"googleAds.generateKeywordIdeas",
				keywords=["running shoes"],
				url="https://example.com/shoes",
				pageSize=50,
				**common,
			),
			call_tool("googleAds.generateKeywordIdeas", site="example.com", **common),
			call_tool("googleAds.generateKeywordIdeas", **common),
			call_tool(
				"googleAds.generateKeywordIdeas", site="example.com", url="https://x.io", **common
			),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_ads], entry_points=False, http_client=http)
	credential = {"type": "oauth2", "config": {**OAUTH["config"], "developerToken": "dev-1"}}
	agent = om.create_agent(
		name="Planner",
		model=model,
		integrations=[{"integration": "googleAds", "credential": credential}],
	)
	responses: list[Any] = []
	agent.on("tool:response", responses.append)
	await agent.run("Find keywords.")
	await http.aclose()
	model.assert_consumed()
	assert [e.error for e in responses] == [False, False, False, False, True, True]
	assert "needs a seed" in json.dumps(responses[4].response)
	assert len(seen) == 4
	url = "https://googleads.googleapis.com/v26/customers/1234567890:generateKeywordIdeas"
	assert all(str(r.url) == url and r.method == "POST" for r in seen)
	for request in seen:
		bearer(request)
		assert request.headers["developer-token"] == "dev-1"
	language = {"language": "languageConstants/1000"}
	assert [body(r) for r in seen] == [
		{"urlSeed": {"url": "https://example.com/shoes"}, **language},
		{"keywordSeed": {"keywords": ["running shoes"]}, **language},
		{
			"keywordAndUrlSeed": {
				"keywords": ["running shoes"],
				"url": "https://example.com/shoes",
			},
			**language,
			"pageSize": 50,
		},
		{"siteSeed": {"site": "example.com"}, **language},
	]


async def test_set_campaign_status_refuses_a_resource_name_as_the_campaign_id() -> None:
	"""campaignId fills the last segment of customers/{customerId}/campaigns/{campaignId}: a whole
	resource name (what search returns as campaign.resource_name) is refused before sending,
	instead of going out as customers/1234567890/campaigns/customers/1234567890/campaigns/555."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"results": [{"resourceName": "r"}]})

	common = {"customerId": "123-456-7890", "status": "ENABLED"}
	model = ScriptedModel(
		[
			call_tool(
				"googleAds.setCampaignStatus",
				campaignId="customers/1234567890/campaigns/555",
				**common,
			),
			call_tool("googleAds.setCampaignStatus", campaignId="555", **common),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_ads], entry_points=False, http_client=http)
	credential = {"type": "oauth2", "config": {**OAUTH["config"], "developerToken": "dev-1"}}
	agent = om.create_agent(
		name="Pauser",
		model=model,
		integrations=[{"integration": "googleAds", "credential": credential}],
	)
	await agent.run("Enable campaign 555.")
	await http.aclose()
	model.assert_consumed()
	(sent,) = seen
	assert (sent.method, str(sent.url)) == (
		"POST",
		"https://googleads.googleapis.com/v26/customers/1234567890/campaigns:mutate",
	)
	assert sent.headers["developer-token"] == "dev-1"
	assert body(sent) == {
		"operations": [
			{
				"update": {
					"resourceName": "customers/1234567890/campaigns/555",
					"status": "ENABLED",
				},
				"updateMask": "status",
			}
		]
	}
	refused = json.dumps(model.requests[1].messages[-1].content)
	assert "campaignId" in refused


async def test_google_ads_retracts_and_restates_uploaded_conversions() -> None:
	"""uploadConversionAdjustments posts ConversionAdjustmentUploadService's request: the
	adjustments as given, partialFailure true (the API requires it), at the customer's path."""
	credential = {"type": "oauth2", "config": {**OAUTH["config"], "developerToken": "dev-1"}}
	action = "customers/1234567890/conversionActions/456"
	adjustments = [
		{
			"orderId": "A-1001",
			"conversionAction": action,
			"adjustmentType": "RETRACTION",
			"adjustmentDateTime": "2026-12-02 10:00:00+01:00",
		},
		{
			"gclidDateTimePair": {
				"gclid": "Cj0KCQ",
				"conversionDateTime": "2026-11-30 14:05:00+01:00",
			},
			"conversionAction": action,
			"adjustmentType": "RESTATEMENT",
			"adjustmentDateTime": "2026-12-02 10:05:00+01:00",
			"restatementValue": {"adjustedValue": 30.5, "currencyCode": "EUR"},
		},
	]
	seen, _ = await run_agent(
		google_ads,
		"googleAds",
		credential,
		[
			call_tool(
				"googleAds.uploadConversionAdjustments",
				customerId="123-456-7890",
				conversionAdjustments=adjustments,
			),
			call_tool("googleAds.listAccessibleCustomers"),
		],
		[ok({"results": [{"orderId": "A-1001"}, {}], "jobId": "7"}), ok({"resourceNames": []})],
	)
	upload, accounts = seen
	bearer(upload)
	assert upload.headers["developer-token"] == "dev-1"
	assert (upload.method, str(upload.url)) == (
		"POST",
		"https://googleads.googleapis.com/v26/customers/1234567890:uploadConversionAdjustments",
	)
	assert body(upload) == {"conversionAdjustments": adjustments, "partialFailure": True}
	assert (accounts.method, str(accounts.url)) == (
		"GET",
		"https://googleads.googleapis.com/v26/customers:listAccessibleCustomers",
	)


async def test_nano_banana_agent() -> None:
	"""The agent uploads an image, then generates one; the inline image comes back as a file."""
	png = b"\x89PNG\r\n\x1a\nfake image bytes"
	ref = "data:image/png;base64," + base64.b64encode(png).decode()
	generated = base64.b64encode(b"\x89PNG\r\n\x1a\ngenerated").decode()
	answer = {
		"candidates": [
			{
				"content": {
					"role": "model",
					"parts": [
						{"text": "Here it is."},
						{"inlineData": {"mimeType": "image/png", "data": generated}},
					],
				}
			}
		]
	}
	seen, responses = await run_agent(
		nano_banana,
		"nanoBanana",
		GEMINI_KEY,
		[
			call_tool("nanoBanana.uploadFile", file=ref, displayName="logo"),
			call_tool(
				"nanoBanana.generateImage",
				prompt="A banana-shaped rocket, watercolor",
				aspectRatio="16:9",
			),
		],
		[
			ok(
				{
					"file": {
						"name": "files/abc",
						"uri": "https://generativelanguage.googleapis.com/v1beta/files/abc",
					}
				}
			),
			ok(answer),
		],
	)
	upload, generate = seen
	for request in seen:
		assert request.headers["x-goog-api-key"] == "AIza-test-gemini-key"
		assert "authorization" not in request.headers
	assert upload.url.path == "/upload/v1beta/files"
	assert upload.url.params["uploadType"] == "multipart"
	metadata, media = multipart_parts(upload)
	assert json.loads(metadata.get_payload(decode=True)) == {"file": {"displayName": "logo"}}
	assert media.get_payload(decode=True) == png
	assert (
		str(generate.url)
		== f"https://generativelanguage.googleapis.com/v1beta/models/{nano_banana.DEFAULT_MODEL}:generateContent"
	)
	assert body(generate) == {
		"contents": [{"role": "user", "parts": [{"text": "A banana-shaped rocket, watercolor"}]}],
		"generationConfig": {
			"responseModalities": ["TEXT", "IMAGE"],
			"imageConfig": {"aspectRatio": "16:9"},
			"candidateCount": 1,
		},
	}
	part = responses[1]["candidates"][0]["content"]["parts"][1]["inlineData"]
	assert part["file"].startswith("openmolt-file:")
	assert part["mediaType"] == "image/png"
	assert generated not in json.dumps(responses[1])


async def test_veo_agent() -> None:
	"""The agent uploads a reference image, generates a video from it and saves the inline MP4."""
	png = b"\x89PNG reference"
	mp4 = b"\x00\x00\x00\x18ftypmp42 video"
	file_uri = "https://generativelanguage.googleapis.com/v1beta/files/ref1"
	blocks = [
		{"type": "image", "uri": file_uri, "mime_type": "image/png"},
		{"type": "text", "text": "This mug spins on a table, soft light"},
	]
	finished = {
		"id": "int-42",
		"status": "completed",
		"steps": [
			{"type": "user_input", "content": blocks},
			{
				"type": "model_output",
				"content": [
					{
						"type": "video",
						"data": base64.b64encode(mp4).decode(),
						"mime_type": "video/mp4",
					}
				],
			},
		],
	}
	seen, responses = await run_agent(
		veo,
		"veo",
		GEMINI_KEY,
		[
			call_tool(
				"veo.uploadFile",
				file="data:image/png;base64," + base64.b64encode(png).decode(),
				displayName="mug",
			),
			call_tool(
				"veo.generateVideo",
				input=blocks,
				task="reference_to_video",
				aspect_ratio="9:16",
				resolution="1080p",
			),
			call_tool("veo.getInteraction", id="int-42"),
		],
		[
			ok({"file": {"name": "files/ref1", "uri": file_uri, "mimeType": "image/png"}}),
			ok(finished),
			ok(finished),
		],
	)
	upload, start, poll = seen
	for request in seen:
		assert request.headers["x-goog-api-key"] == "AIza-test-gemini-key"
	assert str(upload.url).startswith(
		"https://generativelanguage.googleapis.com/upload/v1beta/files?"
	)
	assert (start.method, str(start.url)) == (
		"POST",
		"https://generativelanguage.googleapis.com/v1beta/interactions",
	)
	assert body(start) == {
		"model": "gemini-omni-1.1-flash",
		"input": blocks,
		"response_format": {"type": "video", "aspect_ratio": "9:16", "resolution": "1080p"},
		"generation_config": {"video_config": {"task": "reference_to_video"}},
	}
	assert (poll.method, str(poll.url)) == (
		"GET",
		"https://generativelanguage.googleapis.com/v1beta/interactions/int-42",
	)
	for answer in responses[1:]:
		(video,) = answer["steps"][1]["content"]
		assert video["file"].startswith("openmolt-file:") and video["mediaType"] == "video/mp4"
		assert base64.b64encode(mp4).decode() not in json.dumps(answer)


async def test_veo_edits_the_last_video_in_the_background_and_downloads_a_uri() -> None:
	"""previous_interaction_id and background are sent; a uri result is saved by downloadVideo."""
	uri = "https://generativelanguage.googleapis.com/v1beta/files/vid789:download?alt=media"
	seen, responses = await run_agent(
		veo,
		"veo",
		GEMINI_KEY,
		[
			call_tool(
				"veo.generateVideo",
				input=[{"type": "text", "text": "Make it night"}],
				previous_interaction_id="int-42",
				background=True,
				delivery="uri",
				model="gemini-omni-1.2-flash",
			),
			call_tool("veo.downloadVideo", uri=uri),
		],
		[
			ok({"id": "int-43", "status": "in_progress"}),
			lambda request: httpx.Response(
				200, content=b"mp4 bytes", headers={"content-type": "video/mp4"}
			),
		],
	)
	start, download = seen
	assert body(start) == {
		"model": "gemini-omni-1.2-flash",
		"input": [{"type": "text", "text": "Make it night"}],
		"response_format": {"type": "video", "delivery": "uri"},
		# no video settings given: generation_config is left out, not sent as {"video_config": {}}
		"previous_interaction_id": "int-42",
		"background": True,
	}
	assert responses[0]["status"] == "in_progress"
	assert download.url.path == "/v1beta/files/vid789:download"
	assert download.url.params["alt"] == "media"
	assert responses[1]["file"].startswith("openmolt-file:")


async def test_renamed_inputs_fill_the_vendors_fields() -> None:
	"""sendDraft's id, allThreadsRelatedToChannelId and textOriginal go where Google names them."""
	seen, _ = await run_agent(
		gmail,
		"gmail",
		OAUTH,
		[call_tool("gmail.sendDraft", id="r-77")],
		[ok({"id": "m9", "threadId": "t-9"})],
	)
	(send,) = seen
	assert send.url.path == "/gmail/v1/users/me/drafts/send"
	assert body(send) == {"id": "r-77"}
	seen, _ = await run_agent(
		youtube,
		"youtube",
		OAUTH,
		[
			call_tool("youtube.listCommentThreads", allThreadsRelatedToChannelId="UC123"),
			call_tool("youtube.postComment", videoId="vid7", textOriginal="Great launch!"),
		],
		[ok({"items": []}), ok({"id": "c1"})],
	)
	listing, post = seen
	assert listing.url.params["allThreadsRelatedToChannelId"] == "UC123"
	assert "channelId" not in listing.url.params
	assert post.url.params["part"] == "snippet"
	assert body(post) == {
		"snippet": {
			"videoId": "vid7",
			"topLevelComment": {"snippet": {"textOriginal": "Great launch!"}},
		}
	}


async def test_a_time_without_offset_is_refused_before_sending() -> None:
	"""timeMin carries calendar.v3's date-time format: a bare date is refused, naming the field."""
	requests: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		requests.append(request)
		return httpx.Response(200, json={})

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	model = ScriptedModel(
		[
			call_tool("googleCalendar.listEvents", timeMin="2026-12-01", timeMax="2026-12-08"),
			finish(result="done"),
		]
	)
	om = OpenMolt(plugins=[google_calendar], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="Tester",
		model=model,
		integrations=[{"integration": "googleCalendar", "credential": OAUTH}],
	)
	result = await agent.run("Go.")
	await http.aclose()
	assert result.status == "success"
	assert requests == []
	(entry,) = json.loads(model.requests[1].messages[-1].content)["results"]
	assert entry["ok"] is False
	assert "invalid input: timeMin: must be an RFC 3339 date-time" in entry["error"]


async def test_google_sheets_rows_by_key_column() -> None:
	"""lookupRows and appendOrUpdateRow read the header and key column, then read or write a row.

	The exact request sequence: values.get of the header row, values.get of the key column
	(COLUMNS), then values.batchGet of the matching rows, values.update of the first match (nulls
	for the columns not given), or values.append below the header when nothing matches.
	"""
	header = ok({"values": [["Email", "Name", "Status"]]})
	seen, responses = await run_agent(
		google_sheets,
		"googleSheets",
		OAUTH,
		[
			call_tool(
				"googleSheets.lookupRows",
				spreadsheetId="s1",
				sheetName="Leads 'A'",
				lookupColumn="email",
				lookupValue="ana@example.com",
			),
			call_tool(
				"googleSheets.appendOrUpdateRow",
				spreadsheetId="s1",
				sheetName="Leads 'A'",
				keyColumn="Email",
				row={"Email": "ana@example.com", "Status": "paid"},
			),
			call_tool(
				"googleSheets.appendOrUpdateRow",
				spreadsheetId="s1",
				sheetName="Sheet1",
				keyColumn="Email",
				row={"Email": "bo@example.com", "Name": "Bo"},
				headerRow=2,
				valueInputOption="RAW",
			),
		],
		[
			header,
			ok({"values": [["ana@example.com", "", "bo@example.com", "ana@example.com"]]}),
			ok(
				{
					"valueRanges": [
						{"values": [["ana@example.com", "Ana", "new"]]},
						{"values": [["ana@example.com"]]},
					]
				}
			),
			header,
			ok({"values": [["x@example.com", "ana@example.com"]]}),
			ok({"updatedRange": "'Leads ''A'''!A3:C3"}),
			header,
			ok({"values": [["ana@example.com"]]}),
			ok({"updates": {"updatedRange": "Sheet1!A7:B7"}}),
		],
	)
	for request in seen:
		bearer(request)
	values = "/v4/spreadsheets/s1/values/"
	sheet = "'Leads ''A'''"
	get_header, get_column, batch = seen[:3]
	assert (get_header.method, get_header.url.path) == ("GET", f"{values}{sheet}!1:1")
	assert dict(get_header.url.params) == {}
	assert get_column.url.path == f"{values}{sheet}!A2:A"
	assert dict(get_column.url.params) == {"majorDimension": "COLUMNS"}
	assert (batch.method, batch.url.path) == ("GET", "/v4/spreadsheets/s1/values:batchGet")
	assert batch.url.params.get_list("ranges") == [f"{sheet}!A2:C2", f"{sheet}!A5:C5"]
	assert responses[0] == {
		"rows": [
			{
				"rowNumber": 2,
				"values": {"Email": "ana@example.com", "Name": "Ana", "Status": "new"},
			},
			{"rowNumber": 5, "values": {"Email": "ana@example.com", "Name": "", "Status": ""}},
		],
		"matchCount": 2,
		"columns": ["Email", "Name", "Status"],
	}
	update = seen[5]
	assert seen[3].url.path == f"{values}{sheet}!1:1"
	assert seen[4].url.path == f"{values}{sheet}!A2:A"
	assert (update.method, update.url.path) == ("PUT", f"{values}{sheet}!A3:C3")
	assert dict(update.url.params) == {"valueInputOption": "USER_ENTERED"}
	assert body(update) == {
		"range": f"{sheet}!A3:C3",
		"values": [["ana@example.com", None, "paid"]],
	}
	assert responses[1] == {
		"action": "updated",
		"rowNumber": 3,
		"updatedRange": "'Leads ''A'''!A3:C3",
		"matchedRows": [3],
	}
	append = seen[8]
	assert seen[6].url.path == f"{values}'Sheet1'!2:2"
	assert seen[7].url.path == f"{values}'Sheet1'!A3:A"
	assert (append.method, append.url.path) == ("POST", f"{values}'Sheet1'!A2:C2:append")
	assert dict(append.url.params) == {"valueInputOption": "RAW", "insertDataOption": "INSERT_ROWS"}
	assert body(append) == {"range": "'Sheet1'!A2:C2", "values": [["bo@example.com", "Bo"]]}
	assert responses[2]["action"] == "appended" and responses[2]["rowNumber"] == 7


@pytest.mark.parametrize(
	("row", "key", "problem"),
	[
		({"Email": "a@x.io", "Plan": "pro"}, "Email", "row.Plan: no column 'Plan'"),
		({"Name": "Ana"}, "Email", "row: give the key column 'Email' a value"),
		({"Email": "a@x.io"}, "Mail", "keyColumn: no column 'Mail'"),
		(
			{"Email": "a@x.io", "email": "b@x.io"},
			"Email",
			"row.email: column 'Email' is given twice",
		),
	],
)
async def test_append_or_update_row_refuses_bad_columns_before_writing(row, key, problem) -> None:
	"""An unknown column, a missing key value or a twice-given column fails, naming the field;
	only the header row was read and nothing was written."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"values": [["Email", "Name"]]})

	model = ScriptedModel(
		[
			call_tool(
				"googleSheets.appendOrUpdateRow",
				spreadsheetId="s1",
				sheetName="Sheet1",
				keyColumn=key,
				row=row,
			),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_sheets], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="T", model=model, integrations=[{"integration": "googleSheets", "credential": OAUTH}]
	)
	errors: list[Any] = []
	agent.on("tool:response", lambda e: errors.append(e))
	await agent.run("Go.")
	(event,) = errors
	assert event.error and problem in json.dumps(event.response)
	assert [r.method for r in seen] == ["GET"]
	if "no column" in problem:
		assert "the columns are 'Email', 'Name'" in json.dumps(event.response)
	await http.aclose()


async def test_lookup_rows_on_an_empty_header_row_says_which_row() -> None:
	"""An empty header row is reported with its number and the fix; nothing else is read."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"range": "Sheet1!3:3"})

	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_sheets], entry_points=False, http_client=http)
	model = ScriptedModel(
		[
			call_tool(
				"googleSheets.lookupRows",
				spreadsheetId="s1",
				sheetName="Sheet1",
				lookupColumn="Email",
				lookupValue=42,
				headerRow=3,
			),
			finish(result="done"),
		]
	)
	agent = om.create_agent(
		name="T", model=model, integrations=[{"integration": "googleSheets", "credential": OAUTH}]
	)
	errors: list[Any] = []
	agent.on("tool:response", lambda e: errors.append(e))
	await agent.run("Go.")
	(event,) = errors
	assert event.error and "headerRow: row 3 of sheet 'Sheet1' is empty" in json.dumps(
		event.response
	)
	assert len(seen) == 1
	await http.aclose()


def _sha(text: str) -> str:
	import hashlib

	return hashlib.sha256(text.encode()).hexdigest()


ADS_CREDENTIAL = {
	"type": "oauth2",
	"config": {**OAUTH["config"], "developerToken": "dev-token-abc"},
}


async def test_google_ads_uploads_click_conversions_and_customer_match_contacts() -> None:
	"""Click conversions and Customer Match: exact requests, every identifier normalized and
	SHA-256 hashed, no plain email, phone or name in any request."""
	job = "customers/1234567890/offlineUserDataJobs/777"
	seen, responses = await run_agent(
		google_ads,
		"googleAds",
		ADS_CREDENTIAL,
		[
			call_tool(
				"googleAds.uploadClickConversions",
				customerId="123-456-7890",
				conversions=[
					{
						"gclid": "Cj0KCQ-abc",
						"conversionAction": "customers/1234567890/conversionActions/42",
						"conversionDateTime": "2026-11-30 14:05:00+01:00",
						"conversionValue": 49.9,
						"currencyCode": "EUR",
						"orderId": "order-1",
					},
					{
						"conversionAction": "customers/1234567890/conversionActions/42",
						"conversionDateTime": "2026-11-30 15:00:00+01:00",
						"email": "  Ana.Silva@GMAIL.com ",
						"phoneNumber": "+44 20 7946-0958",
					},
				],
			),
			call_tool(
				"googleAds.addCustomerMatchContacts",
				customerId="1234567890",
				userList="customers/1234567890/userLists/555",
				contacts=[
					{"email": "Bo@Example.com"},
					{
						"firstName": " Ana ",
						"lastName": "Silva",
						"countryCode": "pt",
						"postalCode": "1000-001",
					},
				],
				consent={"adUserData": "GRANTED", "adPersonalization": "GRANTED"},
			),
		],
		[
			ok({"results": [{"gclid": "Cj0KCQ-abc"}, {}]}),
			ok({}),  # no job of this call yet
			ok({"resourceName": job}),
			ok({}),
			ok({"name": "customers/1234567890/operations/op-1"}),
		],
	)
	upload, find, create, add, run = seen
	base = "https://googleads.googleapis.com/v26/customers/1234567890"
	for request in seen:
		bearer(request)
		assert request.method == "POST"
		assert request.headers["developer-token"] == "dev-token-abc"
		text = request.content.decode().lower()
		# The phone in no spelling (as given, or E.164); four digits alone also match by chance in
		# the job's external id, a number drawn from the run's random idempotency key.
		assert "silva" not in text and "ana" not in text
		assert "7946-0958" not in text and "79460958" not in text
	assert str(upload.url) == f"{base}:uploadClickConversions"
	assert body(upload) == {
		"conversions": [
			{
				"gclid": "Cj0KCQ-abc",
				"conversionAction": "customers/1234567890/conversionActions/42",
				"conversionDateTime": "2026-11-30 14:05:00+01:00",
				"conversionValue": 49.9,
				"currencyCode": "EUR",
				"orderId": "order-1",
			},
			{
				"conversionAction": "customers/1234567890/conversionActions/42",
				"conversionDateTime": "2026-11-30 15:00:00+01:00",
				"userIdentifiers": [
					{"hashedEmail": _sha("anasilva@gmail.com")},
					{"hashedPhoneNumber": _sha("+442079460958")},
				],
			},
		],
		"partialFailure": True,
	}
	external_id = body(create)["job"]["externalId"]  # from the call's idempotency key
	assert external_id.isdigit() and 0 <= int(external_id) < 2**63
	assert str(find.url) == f"{base}/googleAds:search"
	assert body(find)["query"].endswith(f"WHERE offline_user_data_job.external_id = {external_id}")
	assert str(create.url) == f"{base}/offlineUserDataJobs:create"
	assert body(create) == {
		"job": {
			"type": "CUSTOMER_MATCH_USER_LIST",
			"externalId": external_id,
			"customerMatchUserListMetadata": {
				"userList": "customers/1234567890/userLists/555",
				"consent": {"adUserData": "GRANTED", "adPersonalization": "GRANTED"},
			},
		}
	}
	assert str(add.url) == f"https://googleads.googleapis.com/v26/{job}:addOperations"
	assert body(add) == {
		"operations": [
			{"create": {"userIdentifiers": [{"hashedEmail": _sha("bo@example.com")}]}},
			{
				"create": {
					"userIdentifiers": [
						{
							"addressInfo": {
								"hashedFirstName": _sha("ana"),
								"hashedLastName": _sha("silva"),
								"countryCode": "PT",
								"postalCode": "1000-001",
							}
						}
					]
				}
			},
		],
		"enablePartialFailure": True,
	}
	assert str(run.url) == f"https://googleads.googleapis.com/v26/{job}:run"
	assert body(run) == {}
	assert responses[1] == {
		"job": job,
		"contacts": 2,
		"operation": "customers/1234567890/operations/op-1",
	}


@pytest.mark.parametrize(
	("tool", "args", "problem"),
	[
		(
			"uploadClickConversions",
			{"conversions": [{"phoneNumber": "415 555 0123"}]},
			"conversions[0].phoneNumber: '415 555 0123' is not an E.164 phone number",
		),
		(
			"uploadClickConversions",
			{"conversions": [{"gclid": "a", "wbraid": "b"}]},
			"conversions[0]: give one click id",
		),
		(
			"uploadClickConversions",
			{"conversions": [{}]},
			"conversions[0]: give a click id (gclid, gbraid or wbraid) or the person's email",
		),
		(
			"addCustomerMatchContacts",
			{"contacts": [{"email": "a@b.co"}, {"firstName": "Ana", "countryCode": "PT"}]},
			"contacts[1]: an address match needs firstName, lastName, countryCode and postalCode "
			"together; missing lastName, postalCode",
		),
		(
			"addCustomerMatchContacts",
			{"contacts": [{"email": "a@b.co", "hashedEmail": "0" * 64}]},
			"contacts[0]: give email or hashedEmail, not both",
		),
		(
			"addCustomerMatchContacts",
			{"contacts": [{"countryCode": "PT"}, {}]},
			"contacts[0]: an address match needs",
		),
	],
)
async def test_google_ads_refuses_bad_identifiers_before_sending(tool, args, problem) -> None:
	"""A bad phone, two click ids, no identifier or a partial address fails naming the field, and
	nothing (not even the Customer Match job) is sent."""
	seen: list[httpx.Request] = []

	def handler(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={})

	base = {
		"uploadClickConversions": {
			"conversionAction": "customers/1/conversionActions/2",
			"conversionDateTime": "2026-11-30 15:00:00+01:00",
		},
		"addCustomerMatchContacts": {},
	}[tool]
	if "conversions" in args:
		args = {"conversions": [{**base, **c} for c in args["conversions"]]}
	else:
		args = {**args, "userList": "customers/1/userLists/5"}
	model = ScriptedModel(
		[call_tool(f"googleAds.{tool}", customerId="1234567890", **args), finish(result="done")]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	om = OpenMolt(plugins=[google_ads], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[{"integration": "googleAds", "credential": ADS_CREDENTIAL}],
	)
	events: list[Any] = []
	agent.on("tool:response", lambda e: events.append(e))
	await agent.run("Go.")
	(event,) = events
	assert event.error and problem in json.dumps(event.response)
	assert seen == []
	await http.aclose()
