"""Scripted agents drive Meta Ads, Instagram, Telegram, TikTok and Discord through MockTransport.

Each test lets a ScriptedModel call tools of one integration (found through its entry point) and
checks the exact requests: method, URL, query, authentication and body.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

Handler = Callable[[httpx.Request], httpx.Response]
GRAPH = "https://graph.facebook.com/v26.0"


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
) -> tuple[Any, ScriptedModel]:
	"""Run a scripted agent bound to one integration; every call must reach the service."""
	model = ScriptedModel([*calls, finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding: dict[str, Any] = {"integration": integration, "credential": {"config": config}}
	if credential:
		binding["credential"]["type"] = credential
	async with OpenMolt(http_client=http) as om:
		# Requests are checked here; the taint policy (which would make a read then a post
		# wait for approval) in tests/core/test_taint.py.
		agent = om.create_agent(
			name="Tester", model=model, integrations=[binding], taint_policy="allow"
		)
		result = await agent.run("Use the tools.")
	model.assert_consumed()
	assert result.status == "success", result
	assert len(service.requests) == len(calls)
	return result, model


def tool_results(model: ScriptedModel) -> list[dict[str, Any]]:
	"""Every tool result the model was shown, in order."""
	out = []
	for message in model.requests[-1].messages:
		if message.role != "user":
			continue
		turn = json.loads(message.content)
		if isinstance(turn, dict):
			out.extend(turn.get("results", []))
	return out


def ok(payload: Any = None) -> httpx.Response:
	return httpx.Response(200, json=payload if payload is not None else {"id": "1"})


def params(request: httpx.Request) -> dict[str, str]:
	return dict(request.url.params)


# Meta Ads ---------------------------------------------------------------------------------------


async def test_meta_ads_builds_a_campaign_with_ad_set_budgets_and_searched_targeting() -> None:
	"""The agent finds targeting and a Page, then creates a campaign without a campaign budget."""
	service = Recorder(
		ok({"data": [{"id": "6003139266461", "name": "Yoga", "type": "interests"}]}),
		ok({"data": [{"key": "2420379", "name": "Lyon", "type": "city"}]}),
		ok({"data": [{"id": "1122", "name": "Studio", "category": "Gym"}]}),
		ok({"id": "238"}),
		ok({"id": "239"}),
	)
	targeting = {
		"geo_locations": {"cities": [{"key": "2420379"}]},
		"flexible_spec": [{"interests": [{"id": "6003139266461"}]}],
	}
	await run_agent(
		"metaAds",
		[
			call_tool("metaAds.searchTargeting", ad_account_id="123", q="yoga", countries=["FR"]),
			call_tool(
				"metaAds.searchLocations", q="Lyon", location_types=["city"], country_code="FR"
			),
			call_tool("metaAds.listPages", limit=5),
			call_tool(
				"metaAds.createCampaign",
				ad_account_id="act_123",
				name="Autumn",
				objective="OUTCOME_TRAFFIC",
				special_ad_categories=[],
				is_adset_budget_sharing_enabled=False,
			),
			call_tool(
				"metaAds.createAdSet",
				ad_account_id="123",
				campaign_id="238",
				name="Lyon yoga",
				daily_budget=2000,
				billing_event="IMPRESSIONS",
				optimization_goal="LINK_CLICKS",
				targeting=targeting,
			),
		],
		service,
		config={"accessToken": "EAAB-token"},
	)
	search, places, pages, campaign, adset = service.requests
	assert all(r.headers["Authorization"] == "Bearer EAAB-token" for r in service.requests)
	assert (search.method, search.url.path) == ("GET", "/v26.0/act_123/targetingsearch")
	assert params(search) == {"q": "yoga", "countries": '["FR"]'}
	assert (places.method, places.url.path) == ("GET", "/v26.0/search")
	assert params(places) == {
		"type": "adgeolocation",
		"q": "Lyon",
		"location_types": '["city"]',
		"country_code": "FR",
	}
	assert str(pages.url) == (
		f"{GRAPH}/me/accounts?fields=id%2Cname%2Ccategory%2Cinstagram_business_account&limit=5"
	)
	assert (campaign.method, str(campaign.url)) == ("POST", f"{GRAPH}/act_123/campaigns")
	assert campaign.headers["Content-Type"] == "application/json"
	assert json.loads(campaign.content) == {
		"name": "Autumn",
		"objective": "OUTCOME_TRAFFIC",
		"status": "PAUSED",
		"special_ad_categories": [],
		"is_adset_budget_sharing_enabled": False,
	}
	assert (adset.method, str(adset.url)) == ("POST", f"{GRAPH}/act_123/adsets")
	assert json.loads(adset.content) == {
		"name": "Lyon yoga",
		"campaign_id": "238",
		"status": "PAUSED",
		"daily_budget": 2000,
		"billing_event": "IMPRESSIONS",
		"optimization_goal": "LINK_CLICKS",
		"targeting": targeting,
	}


async def test_meta_ads_lists_campaigns_and_reads_insights() -> None:
	"""List filters go out JSON-encoded in the query; insights join breakdowns with commas."""
	service = Recorder(
		ok({"data": [{"id": "1", "name": "Spring"}], "paging": {"cursors": {"after": "x"}}}),
		ok({"data": [{"impressions": "100"}]}),
	)
	await run_agent(
		"metaAds",
		[
			call_tool(
				"metaAds.listCampaigns",
				ad_account_id="act_123",
				effective_status=["ACTIVE"],
				limit=10,
			),
			call_tool(
				"metaAds.getInsights",
				object_id="238",
				date_preset="last_7d",
				breakdowns=["age", "gender"],
				time_range={"since": "2026-11-01", "until": "2026-11-07"},
			),
		],
		service,
		config={"accessToken": "EAAB-token"},
	)
	listing, insights = service.requests
	assert params(listing) == {
		"fields": "id,name,status,effective_status,objective,daily_budget,lifetime_budget",
		"effective_status": '["ACTIVE"]',
		"limit": "10",
	}
	assert insights.url.path == "/v26.0/238/insights"
	assert params(insights) == {
		"fields": "impressions,reach,clicks,spend,ctr,cpc,cpm,actions",
		"date_preset": "last_7d",
		"time_range": '{"since":"2026-11-01","until":"2026-11-07"}',
		"breakdowns": "age,gender",
	}


async def test_meta_ads_copies_a_campaign_and_an_ad_set_paused_then_previews_an_ad() -> None:
	"""Copies go to POST /{id}/copies with the SDK's parameters, PAUSED unless asked; a preview is
	GET /{ad_id}/previews with its ad_format; a Page post becomes a creative by object_story_id."""
	service = Recorder(
		ok({"copied_campaign_id": "901"}),
		ok({"copied_adset_id": "902"}),
		ok(
			{
				"data": [
					{"body": "<iframe src='https://www.facebook.com/ads/api/preview_iframe.php'>"}
				]
			}
		),
		ok({"id": "903"}),
	)
	await run_agent(
		"metaAds",
		[
			call_tool("metaAds.copyCampaign", campaign_id="120", deep_copy=True),
			call_tool(
				"metaAds.copyAdSet",
				adset_id="230",
				campaign_id="901",
				status_option="INHERITED_FROM_SOURCE",
				rename_options={"rename_suffix": " B"},
			),
			call_tool("metaAds.getAdPreview", ad_id="340", ad_format="INSTAGRAM_STORY"),
			call_tool(
				"metaAds.createCreativeFromPost",
				ad_account_id="123",
				name="Boost spring post",
				object_story_id="111_222",
			),
		],
		service,
		config={"accessToken": "EAAB-token"},
	)
	campaign, adset, preview, boost = service.requests
	for request in service.requests:
		assert request.headers["authorization"] == "Bearer EAAB-token"
	assert (campaign.method, str(campaign.url)) == ("POST", f"{GRAPH}/120/copies")
	assert json.loads(campaign.content) == {"deep_copy": True, "status_option": "PAUSED"}
	assert (adset.method, str(adset.url)) == ("POST", f"{GRAPH}/230/copies")
	assert json.loads(adset.content) == {
		"campaign_id": "901",
		"status_option": "INHERITED_FROM_SOURCE",
		"rename_options": {"rename_suffix": " B"},
	}
	assert (preview.method, str(preview.url)) == (
		"GET",
		f"{GRAPH}/340/previews?ad_format=INSTAGRAM_STORY",
	)
	assert (boost.method, str(boost.url)) == ("POST", f"{GRAPH}/act_123/adcreatives")
	assert json.loads(boost.content) == {"name": "Boost spring post", "object_story_id": "111_222"}


async def test_meta_ads_creates_a_customer_list_and_adds_hashed_people() -> None:
	"""createCustomAudience posts a CUSTOM audience; addCustomAudienceUsers posts the people's
	normalized SHA-256 digests to /{custom_audience_id}/users, never their plain values."""
	service = Recorder(
		ok({"id": "23850000000000001"}),
		ok({"audience_id": "23850000000000001", "num_received": 1, "num_invalid_entries": 0}),
	)
	await run_agent(
		"metaAds",
		[
			call_tool(
				"metaAds.createCustomAudience",
				ad_account_id="act_123",
				name="CRM buyers",
				customer_file_source="USER_PROVIDED_ONLY",
			),
			call_tool(
				"metaAds.addCustomAudienceUsers",
				custom_audience_id="23850000000000001",
				users=[{"email": " Ana@Example.com", "phone": "+1 415-555-0123"}],
			),
		],
		service,
		config={"accessToken": "EAAB-token"},
	)
	create, add = service.requests
	assert (create.method, str(create.url)) == ("POST", f"{GRAPH}/act_123/customaudiences")
	assert json.loads(create.content) == {
		"subtype": "CUSTOM",
		"name": "CRM buyers",
		"customer_file_source": "USER_PROVIDED_ONLY",
	}
	assert (add.method, str(add.url)) == ("POST", f"{GRAPH}/23850000000000001/users")
	assert add.headers["authorization"] == "Bearer EAAB-token"
	assert json.loads(add.content) == {
		"payload": {
			"schema": ["EMAIL", "PHONE"],
			"is_raw": True,
			"data": [
				[
					hashlib.sha256(b"ana@example.com").hexdigest(),
					hashlib.sha256(b"14155550123").hexdigest(),
				]
			],
		}
	}
	assert b"example.com" not in add.content and b"555" not in add.content


# Instagram --------------------------------------------------------------------------------------


async def test_instagram_finds_its_account_from_the_token_then_reads_stories() -> None:
	"""With no igUserId configured, the agent reads the account id from listAccounts and uses it."""
	service = Recorder(
		ok(
			{
				"data": [
					{
						"id": "1122",
						"name": "Studio",
						"instagram_business_account": {"id": "17841400", "username": "studio"},
					}
				]
			}
		),
		ok({"data": [{"id": "9001", "media_type": "IMAGE"}]}),
	)
	await run_agent(
		"instagram",
		[
			call_tool("instagram.listAccounts"),
			call_tool("instagram.listStories", ig_user_id="17841400"),
		],
		service,
		config={"accessToken": "EAAG-token"},
	)
	accounts, stories = service.requests
	assert accounts.headers["Authorization"] == "Bearer EAAG-token"
	assert (accounts.method, accounts.url.path) == ("GET", "/v26.0/me/accounts")
	assert params(accounts) == {"fields": "id,name,instagram_business_account{id,username,name}"}
	assert stories.url.path == "/v26.0/17841400/stories"
	assert params(stories) == {
		"fields": "id,caption,media_type,media_url,permalink,thumbnail_url,timestamp"
	}


async def test_meta_ads_campaign_without_a_budget_choice_is_refused_before_sending() -> None:
	"""Graph v24+ refuses a campaign with neither a campaign budget nor
	is_adset_budget_sharing_enabled: the tool says both ways and sends nothing; a campaign with
	either is sent (false counts as a choice)."""
	service = Recorder(ok({"id": "240"}), ok({"id": "241"}))
	base = {
		"ad_account_id": "act_123",
		"name": "Winter",
		"objective": "OUTCOME_SALES",
		"special_ad_categories": [],
	}
	model = ScriptedModel(
		[
			call_tool("metaAds.createCampaign", **base),
			call_tool("metaAds.createCampaign", **base, daily_budget=5000),
			call_tool("metaAds.createCampaign", **base, is_adset_budget_sharing_enabled=False),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding = {"integration": "metaAds", "credential": {"config": {"accessToken": "EAAB-tok"}}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(
			name="Tester", model=model, integrations=[binding], taint_policy="allow"
		)
		result = await agent.run("Create campaigns.")
	assert result.status == "success"
	refused, _, _ = tool_results(model)
	text = json.dumps(refused)
	for name in ("daily_budget", "lifetime_budget", "is_adset_budget_sharing_enabled"):
		assert name in text, text
	assert "EAAB-tok" not in text
	assert len(service.requests) == 2
	assert json.loads(service.requests[0].content)["daily_budget"] == 5000
	assert json.loads(service.requests[1].content)["is_adset_budget_sharing_enabled"] is False
	assert service.requests[0].headers["Content-Type"] == "application/json"


async def test_instagram_searches_a_hashtag_and_answers_a_message() -> None:
	"""Hashtag search and media use the configured account; a DM is a JSON body to /messages."""
	service = Recorder(
		ok({"data": [{"id": "17843853986012965"}]}),
		ok({"data": [{"id": "1", "caption": "#bluebottle"}]}),
		ok({"recipient_id": "6543", "message_id": "m_1"}),
	)
	await run_agent(
		"instagram",
		[
			call_tool("instagram.searchHashtag", q="bluebottle"),
			call_tool(
				"instagram.getHashtagRecentMedia", ig_hashtag_id="17843853986012965", limit=5
			),
			call_tool(
				"instagram.sendMessage",
				recipient={"id": "6543"},
				message={"text": "Thanks for writing!"},
			),
		],
		service,
		config={"accessToken": "EAAG-token", "igUserId": "17841400", "pageId": "1122"},
	)
	search, media, message = service.requests
	assert str(search.url) == f"{GRAPH}/ig_hashtag_search?user_id=17841400&q=bluebottle"
	assert media.url.path == "/v26.0/17843853986012965/recent_media"
	assert params(media) == {
		"user_id": "17841400",
		"fields": "id,caption,media_type,media_url,permalink,timestamp,like_count,comments_count",
		"limit": "5",
	}
	# Facebook Login: the message goes through the linked Page, not the IG user.
	assert (message.method, str(message.url)) == ("POST", f"{GRAPH}/1122/messages")
	assert message.headers["Content-Type"] == "application/json"
	assert json.loads(message.content) == {
		"recipient": {"id": "6543"},
		"message": {"text": "Thanks for writing!"},
	}


async def test_instagram_account_tool_without_any_account_id_is_refused() -> None:
	"""Without ig_user_id and igUserId, an account tool fails with a message, not a bad request."""
	service = Recorder()
	model = ScriptedModel([call_tool("instagram.getAccount"), finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding = {"integration": "instagram", "credential": {"config": {"accessToken": "EAAG"}}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		result = await agent.run("Use the tools.")
	assert service.requests == []
	(shown,) = tool_results(model)
	assert "error" in json.dumps(shown).lower()
	assert result.status == "success"


async def test_instagram_direct_messages_without_a_page_id_are_refused() -> None:
	"""Without page_id and pageId, listConversations fails with a message, sends nothing, and
	never falls back to the IG user's edge (the Instagram Login form this token cannot use)."""
	service = Recorder()
	model = ScriptedModel([call_tool("instagram.listConversations"), finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	config = {"accessToken": "EAAG", "igUserId": "17841400"}
	binding = {"integration": "instagram", "credential": {"config": config}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		result = await agent.run("Use the tools.")
	assert service.requests == []
	(shown,) = tool_results(model)
	assert "error" in json.dumps(shown).lower()
	assert result.status == "success"


async def test_instagram_lists_conversations_of_the_linked_page() -> None:
	"""listConversations is GET /<PAGE_ID>/conversations?platform=instagram."""
	service = Recorder(ok({"data": []}))
	await run_agent(
		"instagram",
		[call_tool("instagram.listConversations", page_id="1122", limit=5)],
		service,
		config={"accessToken": "EAAG-page-token", "igUserId": "17841400"},
	)
	(listing,) = service.requests
	assert listing.url.path == "/v26.0/1122/conversations"
	assert params(listing) == {
		"platform": "instagram",
		"fields": "id,updated_time,participants",
		"limit": "5",
	}


# Telegram ---------------------------------------------------------------------------------------

TOKEN = "123456:AAH-secret"
BOT = f"https://api.telegram.org/bot{TOKEN}"
PNG = "data:image/png;base64,iVBORw0KGgo="


def tg(result: Any) -> httpx.Response:
	return httpx.Response(200, json={"ok": True, "result": result})


async def test_telegram_sends_albums_copies_and_edits_buttons() -> None:
	"""Albums go as JSON (by URL) or multipart (uploads named attach://file<i>); edits are exact."""
	service = Recorder(
		tg([{"message_id": 10}, {"message_id": 11}]),
		tg([{"message_id": 12}, {"message_id": 13}]),
		tg({"message_id": 14}),
		tg({"message_id": 14}),
		tg({"url": "", "pending_update_count": 0}),
	)
	album = [
		{"type": "photo", "media": "https://example.com/a.jpg", "caption": "A"},
		{"type": "video", "media": "https://example.com/b.mp4"},
	]
	keyboard = {"inline_keyboard": [[{"text": "Done", "callback_data": "done"}]]}
	await run_agent(
		"telegram",
		[
			call_tool("telegram.sendMediaGroup", chat_id=-100200, media=album),
			call_tool(
				"telegram.uploadMediaGroup",
				chat_id=42,
				media=[
					{"type": "photo", "media": "attach://file0"},
					{"type": "photo", "media": "attach://file1", "caption": "two"},
				],
				files=[PNG, PNG],
			),
			call_tool("telegram.copyMessage", chat_id=42, from_chat_id=-100200, message_id=10),
			call_tool(
				"telegram.editMessageReplyMarkup", chat_id=42, message_id=14, reply_markup=keyboard
			),
			call_tool("telegram.getWebhookInfo"),
		],
		service,
		config={"botToken": TOKEN},
	)
	json_album, upload, copy, edit, webhook = service.requests
	assert (json_album.method, str(json_album.url)) == ("POST", f"{BOT}/sendMediaGroup")
	assert json.loads(json_album.content) == {"chat_id": -100200, "media": album}
	assert str(upload.url) == f"{BOT}/sendMediaGroup"
	assert upload.headers["Content-Type"].startswith("multipart/form-data; boundary=")
	body = upload.content.decode("latin-1")
	assert 'name="chat_id"\r\n\r\n42\r\n' in body
	media = body.split('name="media"\r\n\r\n')[1].split("\r\n")[0]
	assert json.loads(media)[1] == {"type": "photo", "media": "attach://file1", "caption": "two"}
	assert body.count('filename="') == 2
	assert 'name="file0"; filename=' in body and 'name="file1"; filename=' in body
	assert json.loads(copy.content) == {"chat_id": 42, "from_chat_id": -100200, "message_id": 10}
	assert str(copy.url) == f"{BOT}/copyMessage"
	assert json.loads(edit.content) == {"chat_id": 42, "message_id": 14, "reply_markup": keyboard}
	assert str(edit.url) == f"{BOT}/editMessageReplyMarkup"
	assert (webhook.method, str(webhook.url), webhook.content) == (
		"POST",
		f"{BOT}/getWebhookInfo",
		b"{}",
	)


async def test_telegram_sends_video_and_uploads_audio() -> None:
	"""sendVideo posts the URL as JSON; uploadAudio puts the bytes in the audio part."""
	service = Recorder(tg({"message_id": 20}), tg({"message_id": 21}))
	_, model = await run_agent(
		"telegram",
		[
			call_tool(
				"telegram.sendVideo",
				chat_id=42,
				video="https://example.com/clip.mp4",
				supports_streaming=True,
			),
			call_tool(
				"telegram.uploadAudio", chat_id=42, audio=PNG, title="Theme", performer="Ana"
			),
		],
		service,
		config={"botToken": TOKEN},
	)
	video, audio = service.requests
	assert json.loads(video.content) == {
		"chat_id": 42,
		"video": "https://example.com/clip.mp4",
		"supports_streaming": True,
	}
	body = audio.content.decode("latin-1")
	assert str(audio.url) == f"{BOT}/sendAudio"
	assert 'name="title"\r\n\r\nTheme\r\n' in body and 'name="performer"\r\n\r\nAna\r\n' in body
	assert 'name="audio"; filename=' in body
	assert TOKEN not in json.dumps([m.content for m in model.requests[-1].messages])


# TikTok -----------------------------------------------------------------------------------------


def tt(data: Any) -> httpx.Response:
	return httpx.Response(200, json={"data": data, "error": {"code": "ok", "message": ""}})


async def test_tiktok_basic_profile_then_photo_posts_to_inbox_and_profile() -> None:
	"""getUserInfo asks for basic fields only; inbox and direct photo posts send their modes."""
	service = Recorder(
		tt({"user": {"open_id": "o1", "display_name": "Ana"}}),
		tt({"publish_id": "p_inbox"}),
		tt({"publish_id": "p_direct"}),
	)
	photos = ["https://cdn.example.com/1.jpg", "https://cdn.example.com/2.jpg"]
	await run_agent(
		"tiktok",
		[
			call_tool("tiktok.getUserInfo"),
			call_tool(
				"tiktok.uploadPhotosToInbox",
				title="Sunday",
				photo_images=photos,
				photo_cover_index=0,
			),
			call_tool(
				"tiktok.initPhotoPost",
				title="Spring",
				privacy_level="SELF_ONLY",
				brand_content_toggle=False,
				brand_organic_toggle=True,
				photo_images=photos,
				photo_cover_index=1,
			),
		],
		service,
		config={"accessToken": "act.token"},
		credential="bearer",
	)
	user, inbox, direct = service.requests
	assert user.headers["Authorization"] == "Bearer act.token"
	assert str(user.url) == (
		"https://open.tiktokapis.com/v2/user/info/?fields="
		"open_id%2Cunion_id%2Cavatar_url%2Cavatar_url_100%2Cavatar_large_url%2Cdisplay_name"
	)
	source = {"source": "PULL_FROM_URL", "photo_images": photos}
	assert str(inbox.url) == "https://open.tiktokapis.com/v2/post/publish/content/init/"
	assert json.loads(inbox.content) == {
		"post_info": {"title": "Sunday"},
		"source_info": {**source, "photo_cover_index": 0},
		"post_mode": "MEDIA_UPLOAD",
		"media_type": "PHOTO",
	}
	assert json.loads(direct.content) == {
		"post_info": {
			"title": "Spring",
			"privacy_level": "SELF_ONLY",
			"brand_content_toggle": False,
			"brand_organic_toggle": True,
		},
		"source_info": {**source, "photo_cover_index": 1},
		"post_mode": "DIRECT_POST",
		"media_type": "PHOTO",
	}


# Discord ----------------------------------------------------------------------------------------


async def test_discord_refuses_a_bad_embed_url_and_sends_a_good_one() -> None:
	"""A non-URI embed url or a non-snowflake id never reaches Discord; the model sees why."""
	service = Recorder(httpx.Response(200, json={"id": "1500000000000000001"}))
	embed = {"title": "Release", "url": "https://example.com/notes"}
	model = ScriptedModel(
		[
			call_tool(
				"discord.sendMessage",
				channel_id="1400000000000000000",
				embeds=[{"title": "Release", "url": "notes page"}],
			),
			call_tool(
				"discord.sendMessage",
				channel_id="1400000000000000000",
				content="Out now",
				embeds=[embed],
				allowed_mentions={"users": ["@everyone"]},
			),
			call_tool(
				"discord.sendMessage",
				channel_id="1400000000000000000",
				content="Out now",
				embeds=[embed],
				allowed_mentions={"parse": [], "users": ["1300000000000000000"]},
				sticker_ids=["1200000000000000000"],
			),
			finish(result="done"),
		]
	)
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding = {"integration": "discord", "credential": {"config": {"botToken": "bot-token"}}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		result = await agent.run("Announce the release.")
	assert result.status == "success"
	(sent,) = service.requests
	assert str(sent.url) == "https://discord.com/api/v10/channels/1400000000000000000/messages"
	assert sent.headers["Authorization"] == "Bot bot-token"
	sent_body = json.loads(sent.content)
	assert len(sent_body.pop("nonce")) == 25 and sent_body.pop("enforce_nonce") is True
	assert sent_body == {
		"content": "Out now",
		"embeds": [embed],
		"allowed_mentions": {"parse": [], "users": ["1300000000000000000"]},
		"sticker_ids": ["1200000000000000000"],
	}
	bad_url, bad_id, good = tool_results(model)
	assert not bad_url["ok"] and "url" in bad_url["error"]
	assert not bad_id["ok"] and "users" in bad_id["error"]
	assert good["ok"]


async def test_discord_messages_carry_the_call_s_nonce_so_a_retry_posts_once() -> None:
	"""sendMessage sends the call's key as Discord's nonce (25 characters at most) with
	enforce_nonce, so the engine's retry after a 5xx returns the message already posted; two
	calls with the same text are two messages (two nonces). Discord checks nonces only for a few
	minutes, so a call in doubt after a crash still asks rather than posting again."""
	replies = [httpx.Response(502), *[httpx.Response(200, json={"id": "1"})] * 2]
	sent: list[httpx.Request] = []

	def service(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return replies[len(sent) - 1]

	send = call_tool("discord.sendMessage", channel_id="1400000000000000000", content="Hi")
	model = ScriptedModel([send, send, finish(result="done")])
	http = httpx.AsyncClient(transport=httpx.MockTransport(service))
	binding = {"integration": "discord", "credential": {"config": {"botToken": "bot-token"}}}
	async with OpenMolt(http_client=http) as om:
		agent = om.create_agent(name="Tester", model=model, integrations=[binding])
		assert agent.in_doubt["discord.sendMessage"] == "ask"
		result = await agent.run("Say hi twice.")
	assert result.status == "success"
	nonces = [json.loads(r.content)["nonce"] for r in sent]
	assert len(sent) == 3 and nonces[0] == nonces[1] != nonces[2]
	assert all(re.fullmatch(r"[0-9a-f]{25}", n) for n in nonces)
	assert all(json.loads(r.content)["enforce_nonce"] is True for r in sent)
