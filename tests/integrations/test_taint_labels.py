"""The taint labels of every built-in integration (keyed by module): families, not examples.

A tool that sends, posts, publishes, shares, replies, forwards or creates something others read
is ``outbound``; a tool that reads messages, comments, threads, issues, posts, reviews, events,
schedules (an invitation's subject), commits, workflow runs (a run carries its head commit's
message and the pull request's title: GitHub's workflow-run schema) or releases returns what
someone else wrote and is ``untrusted``. Exceptions say why.

Beyond those families, every read tool is ``untrusted`` unless `FIRST_PARTY` says what it returns
instead of someone else's words: customers' names (Shopify, Stripe), members' profiles and
channel topics (Slack, Discord), a chat's pinned message (Telegram), a caller's name (Twilio).
"""

import fnmatch
import importlib
import pkgutil
import re
from typing import Any

import pytest

import openmolt_integrations
from openmolt_core.integrations.model import Integration

SENDS = re.compile(
	r"^(send|post|publish|reply|forward|share|makeCall|comment|create\w*(Post|Comment|Message|Mail|"
	r"Shipment|Fulfillment|Refund|Payment|Checkout|SharedLink|Pull|Issue|Release|Event))"
)
READS = re.compile(
	r"^(get|list|search)\w*(Message|Comment|Thread|Conversation|Issue|Pull|Post|Mention|Timeline|"
	r"Update|Review|Hashtag|Event|CalendarView|Schedule|Commit|WorkflowRun|Release)"
)
NOT_OUTBOUND = {
	"airtable.createComment": "a comment stays inside the base",
	"meta_ads.createCreativeFromPost": "names a Page post already public; carries no new data",
	"notion.createComment": "a comment stays inside the workspace",
	"notion.sendFileUpload": "the bytes go to the workspace's own upload",
	"outlook.createMailFolder": "a folder in the user's own mailbox",
	"telegram.sendChatAction": "a typing indicator carries no data",
	"whatsapp.sendReaction": "an emoji on a message carries no data",
}
# Every read tool (an HTTP GET or HEAD, or a handle that reads: get, list, search, query, lookup,
# download, export, retrieve, fetch) is untrusted unless it is here, with what it returns instead
# of text a third party wrote (a customer, a member, a sender, a commenter, a reviewer, another
# channel's owner). A new read tool is untrusted until someone says why not: the rule enumerates,
# no list of kinds can forget one.
FIRST_PARTY = {
	"airtable.whoami": "the token's own user id and scopes",
	"airtable.listBases": "base names and permission levels",
	"browser_use.getTaskLogs": "a download URL only",
	"browser_use.getTaskOutputFile": "a download URL only",
	"browser_use.listSessions": "session ids, status and live URLs",
	"discord.listMyGuilds": "server names, icons and ids",
	"dropbox.listFolder": "names and metadata; content comes from download",
	"dropbox.listFolderContinue": "names and metadata",
	"dropbox.getMetadata": "names and metadata",
	"dropbox.search": "names and metadata",
	"dropbox.searchContinue": "names and metadata",
	"dropbox.getTemporaryLink": "a link to a file, not its content",
	"dropbox.listSharedLinks": "the account's own links",
	"dropbox.getCurrentAccount": "the signed-in account",
	"dropbox.getSpaceUsage": "figures",
	"etsy.getMe": "the user's own ids",
	"etsy.getShop": "the seller's own shop",
	"etsy.listShopListings": "the seller's own listings",
	"etsy.getListing": "the seller's own listing",
	"etsy.getListingInventory": "the seller's own inventory",
	"etsy.listListingImages": "the seller's own images",
	"etsy.listShippingProfiles": "the seller's own profiles",
	"etsy.listReturnPolicies": "the seller's own policies",
	"etsy.getSellerTaxonomyNodes": "Etsy's category tree",
	"github.listBranches": "branch names and shas, no free text",
	"gmail.listMessages": "ids only",
	"gmail.listDrafts": "ids only",
	"gmail.listLabels": "the mailbox's own labels",
	"gmail.getProfile": "the account's address and counts",
	"google_ads.listAccessibleCustomers": "resource names",
	"google_calendar.queryFreeBusy": "busy intervals",
	"google_drive.listFiles": "names and metadata; content comes from downloadFile",
	"google_drive.getFile": "names and metadata",
	"google_drive.listPermissions": "who has access",
	"google_drive.getAbout": "the signed-in user and the quota",
	"google_drive.getResumableUploadStatus": "the bytes received so far",
	"google_sheets.getSpreadsheet": "titles and tab names; cells come from getValues",
	"instagram.getAccount": "the account's own profile",
	"instagram.listMedia": "the account's own posts and captions",
	"instagram.getMedia": "the account's own post",
	"instagram.getContainerStatus": "a status",
	"instagram.getPublishingLimit": "figures",
	"instagram.getMediaInsights": "figures",
	"instagram.getAccountInsights": "figures",
	"instagram.listAccounts": "the token's own Pages and accounts",
	"instagram.listStories": "the account's own stories",
	"instagram.searchHashtag": "a hashtag id only",
	"meta_ads.listAdAccounts": "the token's own ad accounts",
	"meta_ads.listCampaigns": "the account's own campaigns",
	"meta_ads.listAdSets": "the account's own ad sets",
	"meta_ads.listAds": "the account's own ads",
	"meta_ads.listCreatives": "the account's own creatives",
	"meta_ads.getAdPreview": "the account's own ad, rendered",
	"meta_ads.getInsights": "figures",
	"meta_ads.getInsightsJob": "a job's status",
	"meta_ads.getInsightsJobResults": "figures",
	"meta_ads.searchTargeting": "Meta's own targeting catalogue",
	"meta_ads.searchLocations": "Meta's own location catalogue",
	"meta_ads.listPages": "the token's own Pages",
	"meta_ads.listPromotePages": "the account's own Pages",
	"meta_ads.listCustomAudiences": "the account's own audiences",
	"nano_banana.getFile": "an uploaded file's uri and state",
	"nano_banana.listModels": "Google's model list",
	"outlook.listMailFolders": "the mailbox's own folders",
	"outlook.listContacts": "the user's own address book",
	"outlook.getContact": "the user's own address book",
	"s3.listBuckets": "the account's bucket names",
	"s3.listObjects": "keys and metadata; content comes from getObject",
	"s3.headObject": "metadata",
	"s3.headBucket": "a region",
	"shopify.getShop": "the merchant's own shop",
	"shopify.listProducts": "the merchant's own catalogue",
	"shopify.getProduct": "the merchant's own catalogue",
	"shopify.listLocations": "the merchant's own locations",
	"shopify.getInventoryItem": "stock figures",
	"slack.getUploadUrl": "an upload URL",
	"slack.getPermalink": "a link",
	"slack.listChannelMembers": "user ids only",
	"stripe.listSubscriptions": "the account's own subscriptions (customer ids, prices)",
	"stripe.listPaymentLinks": "the account's own links",
	"telegram.getMe": "the bot itself",
	"telegram.getFile": "a file path",
	"telegram.downloadFile": "a file reference, not its text",
	"telegram.getWebhookInfo": "the webhook's status",
	"tiktok.getUserInfo": "the user's own profile",
	"tiktok.queryCreatorInfo": "the user's own settings",
	"tiktok.getPostStatus": "a status only",
	"tiktok.getInboxUploadStatus": "a status only",
	"tiktok.listVideos": "the user's own videos",
	"tiktok.queryVideos": "the user's own videos",
	"twilio.listMessageMedia": "media metadata",
	"twilio.listRecordings": "recording metadata",
	"twilio.listPhoneNumbers": "the account's own numbers",
	"twilio.getBalance": "a figure",
	"veo.getInteraction": "a generation's status and the video it made",
	"veo.downloadVideo": "a file reference, not its text",
	"veo.listModels": "Google's model list",
	"whatsapp.getMediaUrl": "a URL and a type",
	"whatsapp.downloadMedia": "a file reference, not its text",
	"whatsapp.listTemplates": "the business's own templates",
	"whatsapp.listPhoneNumbers": "the business's own numbers",
	"whatsapp.getBusinessProfile": "the business's own profile",
	"x.getMe": "the user itself",
	"x.getMediaUploadStatus": "a status",
	"youtube.getVideoUploadStatus": "the bytes received so far",
}


def _integrations() -> list[Any]:
	out = []
	for module in pkgutil.iter_modules(openmolt_integrations.__path__):
		if not module.name.startswith("_"):
			mod = importlib.import_module(f"openmolt_integrations.{module.name}")
			out.append(pytest.param(module.name, mod.INTEGRATION, id=module.name))
	return out


def labels_of(integration: Integration, name: str) -> set[str]:
	out: set[str] = set()
	for pattern, labels in integration.labels.items():
		if fnmatch.fnmatchcase(name, pattern):
			out.update(labels)
	return out


@pytest.mark.parametrize(("key", "integration"), _integrations())
def test_senders_are_outbound_and_readers_of_others_words_untrusted(
	key: str, integration: Integration
) -> None:
	problems = []
	for t in integration.tools:
		handle = f"{key}.{t.handle}"
		labels = labels_of(integration, t.handle)
		if SENDS.match(t.handle) and "outbound" not in labels and handle not in NOT_OUTBOUND:
			problems.append(f"{handle} sends data out but is not labelled outbound")
		if READS.match(t.handle) and "untrusted" not in labels and handle not in FIRST_PARTY:
			problems.append(f"{handle} returns others' words but is not labelled untrusted")
	assert problems == []


READ_VERB = re.compile(r"^(get|list|search|query|lookup|download|export|retrieve|fetch|head)")


def _reads(tool: Any) -> bool:
	"""Whether a tool reads: an HTTP GET or HEAD, or a handle that says it reads."""
	return getattr(tool, "method", None) in ("GET", "HEAD") or bool(READ_VERB.match(tool.handle))


@pytest.mark.parametrize(("key", "integration"), _integrations())
def test_every_read_tool_is_untrusted_unless_it_returns_no_one_else_s_words(
	key: str, integration: Integration
) -> None:
	"""A read tool returns text a third party wrote (a customer's name, a member's profile, a
	channel's topic, a caller's name) unless FIRST_PARTY says what it returns instead."""
	missing = [
		f"{key}.{t.handle}"
		for t in integration.tools
		if _reads(t)
		and "untrusted" not in labels_of(integration, t.handle)
		and f"{key}.{t.handle}" not in FIRST_PARTY
	]
	assert missing == [], (
		f"label these untrusted, or add them to FIRST_PARTY with what they return: {missing}"
	)


def test_first_party_reads_are_reads_and_not_untrusted() -> None:
	"""No stale entry: each names a read tool that is not labelled untrusted."""
	found = {}
	for param in _integrations():
		key, integration = param.values
		for t in integration.tools:
			found[f"{key}.{t.handle}"] = (_reads(t), labels_of(integration, t.handle))
	stale = [
		h for h in FIRST_PARTY if h not in found or not found[h][0] or "untrusted" in found[h][1]
	]
	assert stale == []


def test_the_exceptions_name_real_tools() -> None:
	handles = set()
	for param in _integrations():
		key, integration = param.values
		handles |= {f"{key}.{t.handle}" for t in integration.tools}
	assert set(NOT_OUTBOUND) <= handles


def test_the_generic_http_tool_is_both_untrusted_and_outbound() -> None:
	from openmolt_core.integrations.http_request import http_request_integration

	assert labels_of(http_request_integration(), "request") == {"untrusted", "outbound"}


def _declared(integration: Integration, key: str) -> dict[str, Any]:
	from openmolt_core._binding import BoundTool
	from openmolt_core.taint import declared_labels
	from openmolt_core.tools import ToolContext

	context = ToolContext(agent="a", integration=key)
	return {
		t.handle: declared_labels(BoundTool(f"{key}.{t.handle}", t, context, True, [], integration))
		for t in integration.tools
	}


def _core_integrations() -> list[Any]:
	from openmolt_core.integrations.filesystem import file_system_integration
	from openmolt_core.integrations.http_request import http_request_integration

	return [
		pytest.param("fileSystem", file_system_integration("."), id="fileSystem"),
		pytest.param("httpRequest", http_request_integration(), id="httpRequest"),
	]


@pytest.mark.parametrize(("key", "integration"), [*_integrations(), *_core_integrations()])
def test_every_built_in_tool_declares_its_labels(key: str, integration: Integration) -> None:
	"""No built-in tool is unknown: each would otherwise count as untrusted and outbound."""
	unknown = [h for h, labels in _declared(integration, key).items() if labels is None]
	assert unknown == [], f"declare labels for {key}: {unknown} (labels=[] for none)"


def test_the_file_system_reads_are_private_and_its_writes_declare_none() -> None:
	from openmolt_core.integrations.filesystem import file_system_integration

	declared = _declared(file_system_integration("."), "fileSystem")
	assert {h for h, labels in declared.items() if labels} == {"read", "list", "search"}
	assert all(labels == {"private"} for labels in declared.values() if labels)


STORE_READERS = {
	# A store a run can write and a later run reads: what a tainted run wrote there comes back as
	# the reader's labels say, so the readers of its content are untrusted (others write there
	# too: a shared folder, a form, a collaborator). Names and metadata are not content here.
	"airtable": ("listRecords", "getRecord"),
	"dropbox": ("download",),
	"github": ("getContent",),
	"gmail": ("getMessage", "getThread", "getAttachment"),
	"google_calendar": ("listEvents", "getEvent"),
	"google_drive": ("downloadFile", "exportFile"),
	"google_sheets": ("getValues", "batchGetValues", "lookupRows"),
	"notion": ("getPage", "getPageMarkdown", "listBlockChildren", "queryDataSource", "search"),
	"outlook": ("getMessage", "listMessages", "getAttachment"),
	"s3": ("getObject",),
	"slack": ("getConversationHistory", "getThreadReplies", "searchMessages"),
}


@pytest.mark.parametrize(("key", "readers"), sorted(STORE_READERS.items()))
def test_the_readers_of_a_store_a_run_writes_are_untrusted(
	key: str, readers: tuple[str, ...]
) -> None:
	"""Taint is not laundered through a store: reading back what a tainted run wrote taints."""
	integration = importlib.import_module(f"openmolt_integrations.{key}").INTEGRATION
	handles = {t.handle for t in integration.tools}
	for name in readers:
		assert name in handles, f"{key}.{name} is not a tool"
		assert "untrusted" in labels_of(integration, name), f"{key}.{name} reads clean"
