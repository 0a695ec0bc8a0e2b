"""The taint labels of every built-in integration (keyed by module): families, not examples.

A tool that sends, posts, publishes, shares, replies, forwards or creates something others read
is ``outbound``; a tool that reads messages, comments, threads, issues, posts, reviews, events,
schedules (an invitation's subject), commits, workflow runs (a run carries its head commit's
message and the pull request's title: GitHub's workflow-run schema) or releases returns what
someone else wrote and is ``untrusted``. Exceptions say why.
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
NOT_UNTRUSTED = {
	"gmail.listMessages": "ids only",
	"instagram.searchHashtag": "a hashtag id only",
	"slack.listConversations": "channel metadata; messages come from getConversationHistory",
	"slack.getConversationInfo": "channel metadata",
	"tiktok.getPostStatus": "a status only",
	"twilio.listMessageMedia": "media metadata",
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
		if READS.match(t.handle) and "untrusted" not in labels and handle not in NOT_UNTRUSTED:
			problems.append(f"{handle} returns others' words but is not labelled untrusted")
	assert problems == []


def test_the_exceptions_name_real_tools() -> None:
	handles = set()
	for param in _integrations():
		key, integration = param.values
		handles |= {f"{key}.{t.handle}" for t in integration.tools}
	assert set(NOT_OUTBOUND) | set(NOT_UNTRUSTED) <= handles


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
