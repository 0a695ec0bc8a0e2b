"""Every Slack tool sends the arguments slack-sdk's WebClient sends for the same call.

The reference is slack-sdk (PyPI, the official Python SDK; Slack's Web API is unversioned). Its
client is stopped before the network: each WebClient method hands ``_urllib_api_call`` the JSON
body or the arguments it sends, already shaped (a list of users joined with commas, completeUpload's
``files`` as JSON text). Each tool's request (its JSON body, form body or query) must carry the
same arguments. Two differences are Slack's and not compared: slack-sdk posts every method
(``http_verb`` GET included; Slack reads a GET's query the same way, and the method check in
test_messaging_conformance.py compares the verbs), and it writes a boolean as ``1``/``0`` where
the tools write ``true``/``false`` (Slack reads both); JSON text in a field is compared as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import anyio
import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.web.slack_response import SlackResponse

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import slack


class _Stopped(WebClient):
	"""slack-sdk's WebClient, stopped where it would send: keeps the JSON body or the arguments."""

	def __init__(self) -> None:
		super().__init__(token="xoxb-1111-2222-abcdef")
		self.sent: list[tuple[str, Any]] = []

	def _urllib_api_call(  # type: ignore[override]
		self, *, url: str, json_body: Any, body_params: Any, **_: Any
	) -> SlackResponse:
		method = url.rsplit("/", 1)[1]
		self.sent.append((method, ("json", json_body) if json_body else ("args", body_params)))
		return SlackResponse(
			client=self,
			http_verb="POST",
			api_url=url,
			req_args={},
			data={"ok": True},
			headers={},
			status_code=200,
		)


C, TS = "C0123456789", "1712345678.000100"
BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Hi*"}}]
Sdk = Callable[[WebClient], Any]

# Each tool (but uploadFileBytes, which posts bytes to a URL Slack hands out) with an input, and
# the WebClient call that sends the same. The tools send their promised defaults (a page size,
# exclude_archived), so the SDK call gives them too.
CALLS: dict[str, tuple[dict[str, Any], Sdk]] = {
	"postMessage": (
		{"channel": C, "text": "Hi", "blocks": BLOCKS, "thread_ts": TS, "unfurl_links": False},
		lambda c: c.chat_postMessage(
			channel=C, text="Hi", blocks=BLOCKS, thread_ts=TS, unfurl_links=False
		),
	),
	"updateMessage": (
		{"channel": C, "ts": TS, "text": "Edited"},
		lambda c: c.chat_update(channel=C, ts=TS, text="Edited"),
	),
	"deleteMessage": ({"channel": C, "ts": TS}, lambda c: c.chat_delete(channel=C, ts=TS)),
	"scheduleMessage": (
		{"channel": C, "post_at": 1799999999, "text": "Later"},
		lambda c: c.chat_scheduleMessage(channel=C, post_at=1799999999, text="Later"),
	),
	"listScheduledMessages": (
		{"channel": C, "limit": 50, "cursor": "abc"},
		lambda c: c.chat_scheduledMessages_list(channel=C, limit=50, cursor="abc"),
	),
	"deleteScheduledMessage": (
		{"channel": C, "scheduled_message_id": "Q1298393284"},
		lambda c: c.chat_deleteScheduledMessage(channel=C, scheduled_message_id="Q1298393284"),
	),
	"postEphemeral": (
		{"channel": C, "user": "U01", "text": "Only you"},
		lambda c: c.chat_postEphemeral(channel=C, user="U01", text="Only you"),
	),
	"listConversations": (
		{"types": ["public_channel", "private_channel"], "cursor": "abc"},
		lambda c: c.conversations_list(
			types=["public_channel", "private_channel"],
			exclude_archived=True,
			limit=200,
			cursor="abc",
		),
	),
	"getConversationHistory": (
		{"channel": C, "oldest": "1712340000.0", "inclusive": True},
		lambda c: c.conversations_history(
			channel=C, oldest="1712340000.0", inclusive=True, limit=100
		),
	),
	"getThreadReplies": (
		{"channel": C, "ts": TS},
		lambda c: c.conversations_replies(channel=C, ts=TS, limit=100),
	),
	"getConversationInfo": (
		{"channel": C, "include_num_members": True},
		lambda c: c.conversations_info(channel=C, include_num_members=True),
	),
	"openConversation": (
		{"users": ["U01", "U02"], "return_im": True},
		lambda c: c.conversations_open(users=["U01", "U02"], return_im=True),
	),
	"listUsers": (
		{"cursor": "abc", "include_locale": True},
		lambda c: c.users_list(cursor="abc", include_locale=True, limit=200),
	),
	"getUserInfo": ({"user": "U01"}, lambda c: c.users_info(user="U01")),
	"lookupUserByEmail": (
		{"email": "ada@example.com"},
		lambda c: c.users_lookupByEmail(email="ada@example.com"),
	),
	"addReaction": (
		{"channel": C, "timestamp": TS, "name": "tada"},
		lambda c: c.reactions_add(channel=C, timestamp=TS, name="tada"),
	),
	"getUploadUrl": (
		{"filename": "notes.txt", "length": 5, "alt_txt": "Notes"},
		lambda c: c.files_getUploadURLExternal(filename="notes.txt", length=5, alt_txt="Notes"),
	),
	"completeUpload": (
		{"files": [{"id": "F123", "title": "Notes"}], "channel_id": C, "thread_ts": TS},
		lambda c: c.files_completeUploadExternal(
			files=[{"id": "F123", "title": "Notes"}], channel_id=C, thread_ts=TS
		),
	),
	"searchMessages": (
		{"query": "deploy in:#ops", "sort": "timestamp", "sort_dir": "desc"},
		lambda c: c.search_messages(
			query="deploy in:#ops", sort="timestamp", sort_dir="desc", count=20
		),
	),
	"getPermalink": (
		{"channel": C, "message_ts": TS},
		lambda c: c.chat_getPermalink(channel=C, message_ts=TS),
	),
	"joinChannel": ({"channel": C}, lambda c: c.conversations_join(channel=C)),
	"listChannelMembers": (
		{"channel": C, "cursor": "abc"},
		lambda c: c.conversations_members(channel=C, cursor="abc", limit=200),
	),
	"createChannel": (
		{"name": "launch-2026", "is_private": True},
		lambda c: c.conversations_create(name="launch-2026", is_private=True),
	),
	"renameChannel": (
		{"channel": C, "name": "launch-q1"},
		lambda c: c.conversations_rename(channel=C, name="launch-q1"),
	),
	"archiveChannel": ({"channel": C}, lambda c: c.conversations_archive(channel=C)),
	"inviteToChannel": (
		{"channel": C, "users": ["U01", "U02"], "force": True},
		lambda c: c.conversations_invite(channel=C, users=["U01", "U02"], force=True),
	),
	"removeFromChannel": (
		{"channel": C, "user": "U02"},
		lambda c: c.conversations_kick(channel=C, user="U02"),
	),
	"setChannelTopic": (
		{"channel": C, "topic": "Ship Friday"},
		lambda c: c.conversations_setTopic(channel=C, topic="Ship Friday"),
	),
	"setChannelPurpose": (
		{"channel": C, "purpose": "Launch"},
		lambda c: c.conversations_setPurpose(channel=C, purpose="Launch"),
	),
}


def _text(value: Any) -> Any:
	"""An argument as a form or query carries it (a boolean as the tools write it), and JSON text
	(completeUpload's ``files``) as its value, whatever its spacing."""
	if isinstance(value, bool):
		return "true" if value else "false"
	text = str(value)
	return json.loads(text) if text[:1] in ("[", "{") else text


def _sdk(call: Sdk) -> tuple[str, tuple[str, Any]]:
	client = _Stopped()
	call(client)
	(sent,) = client.sent
	method, (kind, payload) = sent
	if kind == "args":
		payload = {name: _text(value) for name, value in payload.items()}
	return method, (kind, payload)


def _ours(handle: str, arguments: dict[str, Any]) -> tuple[str, tuple[str, Any]]:
	seen: list[httpx.Request] = []

	async def run() -> None:
		def service(request: httpx.Request) -> httpx.Response:
			seen.append(request)
			return httpx.Response(200, json={"ok": True})

		om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
		model = ScriptedModel([call_tool(f"slack.{handle}", **arguments), finish(done=True)])
		agent = om.create_agent(
			name="T",
			model=model,
			integrations=[{"integration": "slack", "credential": {"config": {"token": "xoxb-1"}}}],
		)
		async with om:
			await agent.run()

	anyio.run(run)
	(request,) = seen
	method = request.url.path.rsplit("/", 1)[1]
	ctype = request.headers.get("content-type", "")
	if ctype.startswith("application/json"):
		return method, ("json", json.loads(request.content))
	pairs = parse_qsl(
		request.content.decode() if request.method == "POST" else request.url.query.decode()
	)
	assert len({name for name, _ in pairs}) == len(pairs), pairs  # no argument twice
	return method, ("args", {name: _text(value) for name, value in pairs})


def test_every_slack_tool_has_an_sdk_call() -> None:
	"""The table names every tool but the raw upload: a new tool is compared with slack-sdk too."""
	handles = {t.handle for t in slack.INTEGRATION.tools}
	assert set(CALLS) == handles - {"uploadFileBytes"}


@pytest.mark.parametrize("handle", sorted(CALLS))
def test_each_slack_tool_sends_the_sdks_arguments(handle: str) -> None:
	"""The Web API method and its arguments (JSON body, or form or query fields) are slack-sdk's."""
	arguments, call = CALLS[handle]
	assert _ours(handle, arguments) == _sdk(call)
