"""Gmail sends and drafts mail with attachments: one RFC 2822 multipart message in ``raw``."""

from __future__ import annotations

import base64
import email
import json
from email import policy
from typing import Any

import httpx
import pytest
from _discovery import discovery_document, discovery_method

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 4
CSV = b"name,total\nAna,12\n"
PDF_URL = "data:application/pdf;base64," + base64.b64encode(PDF).decode()
CSV_URL = "data:text/csv;base64," + base64.b64encode(CSV).decode()


def test_raw_is_the_whole_rfc2822_message_base64url() -> None:
	"""The reference: Message.raw is the entire RFC 2822 message, base64url (format byte)."""
	raw = discovery_document("gmail.v1")["schemas"]["Message"]["properties"]["raw"]
	assert raw["format"] == "byte"
	assert "RFC 2822" in raw["description"]
	assert discovery_method("gmail.v1", "gmail.users.messages.send")["request"] == {
		"$ref": "Message"
	}


async def _sent(tool: str, **input: Any) -> dict[str, Any]:
	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"id": "m1", "threadId": "t1"})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
	model = ScriptedModel([call_tool(f"gmail.{tool}", **input), finish(done=True)])
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[
			{"integration": "gmail", "credential": {"config": {"accessToken": "ya29.t-1"}}}
		],
	)
	async with om:
		await agent.run()
	[request] = seen
	sent: dict[str, Any] = json.loads(request.content)
	return sent


def _message(raw: str) -> email.message.EmailMessage:
	data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
	parsed = email.message_from_bytes(data, policy=policy.default)
	assert isinstance(parsed, email.message.EmailMessage)
	return parsed


@pytest.mark.parametrize("tool", ["sendMessage", "createDraft"])
async def test_attachments_travel_in_the_message(tool: str) -> None:
	"""Each attachment is a part with its bytes, media type and file name; the body stays."""
	body = await _sent(
		tool,
		to="ana@example.com",
		subject="Q3 report",
		body="Attached.",
		attachments=[PDF_URL, CSV_URL],
		threadId="t0",
	)
	message = body["message"] if tool == "createDraft" else body
	assert message["threadId"] == "t0"
	assert set(message) == {"threadId", "raw"}
	parsed = _message(message["raw"])
	assert parsed["To"] == "ana@example.com"
	assert parsed["Subject"] == "Q3 report"
	assert parsed.get_content_type() == "multipart/mixed"
	text = parsed.get_body(("plain",))
	assert text is not None and text.get_content().strip() == "Attached."
	parts = list(parsed.iter_attachments())
	assert [p.get_content_type() for p in parts] == ["application/pdf", "text/csv"]
	assert parts[0].get_content() == PDF
	assert parts[1].get_payload(decode=True) == CSV
	assert all(p.get_filename() for p in parts)


async def test_a_message_without_attachments_is_one_text_part() -> None:
	"""No attachments: a plain text message, as before (no empty multipart)."""
	body = await _sent("sendMessage", to="bo@example.com", subject="Hi", body="Hello")
	assert set(body) == {"raw"}
	parsed = _message(body["raw"])
	assert parsed.get_content_type() == "text/plain"
	assert parsed.get_content().strip() == "Hello"
