"""Requests the live APIs would get wrong without care: defaults, partial updates, sorting rules."""

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio


async def one_request(
	integration: str, tool: str, config: dict[str, Any], **input: Any
) -> httpx.Request:
	"""Run an agent that calls one tool; return the request the service received."""
	seen: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"ok": True})

	om = OpenMolt(http_client=httpx.AsyncClient(transport=httpx.MockTransport(service)))
	model = ScriptedModel([call_tool(f"{integration}.{tool}", **input), finish(done=True)])
	agent = om.create_agent(
		name="T",
		model=model,
		integrations=[{"integration": integration, "credential": {"config": config}}],
	)
	await agent.run()
	[request] = seen
	return request


async def test_youtube_title_edit_leaves_the_status_alone() -> None:
	"""Editing only the snippet sends part=snippet and no status, so privacy is not reset."""
	request = await one_request(
		"youtube",
		"updateVideo",
		{"accessToken": "ya29.token-123456"},
		id="vid123",
		title="New",
		categoryId="22",
	)
	assert request.url.params["part"] == "snippet"
	assert json.loads(request.content) == {
		"id": "vid123",
		"snippet": {"title": "New", "categoryId": "22"},
	}


async def test_youtube_status_change_sends_the_status_part() -> None:
	"""Giving status sends part=snippet,status and exactly that status."""
	request = await one_request(
		"youtube",
		"updateVideo",
		{"accessToken": "ya29.token-123456"},
		id="vid123",
		title="New",
		categoryId="22",
		status={"privacyStatus": "public"},
	)
	assert request.url.params["part"] == "snippet,status"
	assert json.loads(request.content)["status"] == {"privacyStatus": "public"}


async def test_outlook_filters_without_the_default_order() -> None:
	"""A $filter goes without $orderby (Graph refuses InefficientFilter); no filter sorts newest first."""
	config = {"accessToken": "eyJ0eXAi-token"}
	filtered = await one_request("outlook", "listMessages", config, filter="isRead eq false")
	assert filtered.url.params["$filter"] == "isRead eq false"
	assert "$orderby" not in filtered.url.params
	assert filtered.url.params["$top"] == "25"
	plain = await one_request("outlook", "listMessages", config)
	assert plain.url.params["$orderby"] == "receivedDateTime desc"


async def test_discord_member_search_sends_the_documented_page_size() -> None:
	"""Discord's own default is 1 member; the tool sends the 10 its schema promises."""
	request = await one_request(
		"discord",
		"searchGuildMembers",
		{"botToken": "bot-token-123456"},
		guild_id="123456789012345678",
		query="ada",
	)
	assert request.url.params["limit"] == "10"


async def test_slack_channel_list_sends_its_defaults_and_keeps_false() -> None:
	"""exclude_archived defaults to true and limit to 200; an explicit false is sent as false."""
	config = {"token": "xoxb-123456"}
	default = await one_request("slack", "listConversations", config)
	assert default.url.params["exclude_archived"] == "true"
	assert default.url.params["limit"] == "200"
	archived = await one_request("slack", "listConversations", config, exclude_archived=False)
	assert archived.url.params["exclude_archived"] == "false"
	users = await one_request("slack", "listUsers", config)
	assert users.url.params["limit"] == "200"


async def test_calendar_patch_to_timed_clears_the_all_day_date() -> None:
	"""A patched start/end with dateTime sends date null (and date sends dateTime null).

	events.patch merges the EventDateTime objects, so an all-day event patched with only dateTime
	would hold both date and dateTime, which Calendar v3 refuses.
	"""
	config = {"accessToken": "ya29.token-123456"}
	timed = await one_request(
		"googleCalendar",
		"updateEvent",
		config,
		eventId="e1",
		start={"dateTime": "2026-12-03T15:00:00", "timeZone": "Europe/Paris"},
		end={"dateTime": "2026-12-03T16:00:00", "timeZone": "Europe/Paris"},
	)
	assert timed.method == "PATCH"
	assert json.loads(timed.content) == {
		"start": {"dateTime": "2026-12-03T15:00:00", "timeZone": "Europe/Paris", "date": None},
		"end": {"dateTime": "2026-12-03T16:00:00", "timeZone": "Europe/Paris", "date": None},
	}
	all_day = await one_request(
		"googleCalendar",
		"updateEvent",
		config,
		eventId="e1",
		start={"date": "2026-12-24"},
		end={"date": "2026-12-25"},
		summary="Off",
	)
	assert json.loads(all_day.content) == {
		"summary": "Off",
		"start": {"date": "2026-12-24", "dateTime": None},
		"end": {"date": "2026-12-25", "dateTime": None},
	}
	assert all_day.headers["content-type"] == "application/json"


async def test_notion_create_page_at_the_top_sends_page_start() -> None:
	"""createPage places a page with page_start/page_end (PagePositionSchema), not start/end."""
	request = await one_request(
		"notion",
		"createPage",
		{"apiKey": "ntn_123456789"},
		parent={"type": "page_id", "page_id": "p1"},
		markdown="# Hi",
		position={"type": "page_start"},
	)
	assert request.url.path == "/v1/pages"
	assert request.headers["Notion-Version"] == "2026-03-11"
	assert json.loads(request.content) == {
		"parent": {"type": "page_id", "page_id": "p1"},
		"markdown": "# Hi",
		"position": {"type": "page_start"},
	}
