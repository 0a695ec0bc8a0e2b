"""Gmail (API v1): search and read mail, send and draft messages, labels, threads and attachments."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.schema import obj, passthrough
from openmolt_integrations._google import PAGE_TOKEN, google_oauth2, token_guide
from openmolt_integrations._mime import MAX_ATTACHMENT_BYTES, encode_message, rfc2822

__all__ = ["INTEGRATION", "TOOLS", "register_integrations"]

_SCOPES = {
	"https://www.googleapis.com/auth/gmail.modify": "Read, send, draft, label and trash mail (no permanent deletion).",
	"https://www.googleapis.com/auth/gmail.readonly": "Read mail only (asked for an agent with just the read scope).",
	"https://www.googleapis.com/auth/gmail.send": "Send mail only (the send scope).",
	"https://www.googleapis.com/auth/gmail.compose": "Create drafts and send them (the draft scope).",
}

_SCOPE_MAP = {
	"read": ["https://www.googleapis.com/auth/gmail.readonly"],
	"send": ["https://www.googleapis.com/auth/gmail.send"],
	"draft": ["https://www.googleapis.com/auth/gmail.compose"],
	"modify": ["https://www.googleapis.com/auth/gmail.modify"],
	"delete": ["https://www.googleapis.com/auth/gmail.modify"],
}
"""The Gmail OAuth scopes each tool scope needs (``openmolt auth gmail --scopes read,send``)."""

_USER = "/gmail/v1/users/{{ input.userId | default: 'me' }}"
_USER_ID = {
	"type": "string",
	"default": "me",
	"description": "The mailbox: 'me' (default) for the signed-in account, or its email address.",
}
_MESSAGE_ID = {"type": "string", "description": "The message id (from listMessages)."}
_LABEL_IDS = {
	"type": "array",
	"items": {"type": "string"},
	"description": "Label ids: system labels INBOX, UNREAD, STARRED, IMPORTANT, SPAM, TRASH, SENT, DRAFT, CATEGORY_PERSONAL... or user label ids from listLabels.",
}
_Q = {
	"type": "string",
	"description": "Gmail search query, same syntax as the Gmail search box: 'from:ana@example.com is:unread newer_than:7d has:attachment subject:invoice'.",
}
_MAX = {
	"type": "integer",
	"minimum": 1,
	"maximum": 500,
	"default": 20,
	"description": "Results per page (max 500).",
}
_FORMAT = {
	"type": "string",
	"enum": ["full", "metadata", "minimal", "raw"],
	"default": "full",
	"description": "full: headers and decoded body parts; metadata: headers only (fast); minimal: ids and labels; raw: the whole RFC 2822 message base64url-encoded.",
}
_COMPOSE: dict[str, Any] = {
	"to": {
		"type": "string",
		"description": "Recipients, comma-separated: 'Ana <ana@example.com>, bo@example.com'.",
	},
	"cc": {"type": "string", "description": "Cc recipients, comma-separated."},
	"bcc": {"type": "string", "description": "Bcc recipients, comma-separated."},
	"subject": {
		"type": "string",
		"description": "The subject line. For a reply, 'Re: ' plus the original subject.",
	},
	"body": {"type": "string", "description": "The plain-text body."},
	"html": {"type": "string", "description": "An HTML body (sent alongside the plain-text body)."},
	"from": {
		"type": "string",
		"description": "The sender, only to use a configured send-as alias; defaults to the account.",
	},
	"inReplyTo": {
		"type": "string",
		"description": "For a reply: the Message-ID header of the message answered.",
	},
	"references": {
		"type": "string",
		"description": "For a reply: the References header (the thread's Message-IDs, space-separated).",
	},
	"threadId": {
		"type": "string",
		"description": "For a reply: the thread id, so the message joins the thread.",
	},
	"attachments": {
		"type": "array",
		"maxItems": 100,
		"items": {
			"type": "string",
			"description": "A file reference: openmolt-file:<id> from an earlier tool, a data: URL, or a path from the fileSystem integration.",
		},
		"description": f"Files to attach (their names and types travel with them), at most {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB in all.",
	},
}
# The gmail-message format turns the input object into the base64url RFC 2822 message,
# attachments read from the file store (`openmolt_integrations._mime.encode_message`).
_RAW = "{{ input }}"
_MESSAGE_OUT = obj(
	{
		"id": {"type": "string"},
		"threadId": {"type": "string"},
		"labelIds": {"type": "array", "items": {"type": "string"}},
		"snippet": {"type": "string"},
		"internalDate": {"type": "string", "description": "Epoch milliseconds."},
		"payload": {
			"type": "object",
			"description": "headers[] and parts[] (bodies base64url in body.data; attachments have body.attachmentId).",
		},
		"sizeEstimate": {"type": "integer"},
	}
)
_IDS_OUT = {
	"type": "array",
	"items": obj({"id": {"type": "string"}, "threadId": {"type": "string"}}),
}

TOOLS = [
	HttpTool(
		handle="listMessages",
		description="Search the mailbox. Returns message ids only; call getMessage (format metadata is cheapest) for headers and bodies.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/messages",
		query_params=passthrough(
			"q",
			"labelIds",
			"pageToken",
			"includeSpamTrash",
			maxResults="{{ input.maxResults | default: 20 }}",
		),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"q": _Q,
				"labelIds": {
					**_LABEL_IDS,
					"description": "Only messages with all these label ids (e.g. ['INBOX', 'UNREAD']).",
				},
				"maxResults": _MAX,
				"pageToken": PAGE_TOKEN,
				"includeSpamTrash": {"type": "boolean", "description": "Include spam and trash."},
			}
		),
		output_schema=obj(
			{
				"messages": _IDS_OUT,
				"nextPageToken": {"type": "string"},
				"resultSizeEstimate": {"type": "integer"},
			}
		),
	),
	HttpTool(
		handle="getMessage",
		description="Read one message: headers (From, To, Subject, Date, Message-ID), body parts and attachment ids.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/messages/{{{{ input.id }}}}",
		query_params=passthrough("format", "metadataHeaders"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"id": _MESSAGE_ID,
				"format": _FORMAT,
				"metadataHeaders": {
					"type": "array",
					"items": {"type": "string"},
					"description": "With format metadata: only these headers, e.g. ['From', 'Subject', 'Date'].",
				},
			},
			["id"],
		),
		output_schema=_MESSAGE_OUT,
	),
	HttpTool(
		handle="sendMessage",
		description="Send an email, with attachments if given (file references). For a reply, pass threadId, inReplyTo and references from the original message and keep its subject with 'Re: '.",
		scopes=["send"],
		method="POST",
		endpoint=f"{_USER}/messages/send",
		request_format="gmail-message",
		body=passthrough("threadId", raw=_RAW),
		# The whole input becomes the message ("raw": "{{ input }}"): name every key it reads.
		input_schema=obj({"userId": _USER_ID, **_COMPOSE}, ["to", "subject"], closed=True),
		output_schema=obj(
			{
				"id": {"type": "string"},
				"threadId": {"type": "string"},
				"labelIds": {"type": "array", "items": {"type": "string"}},
			}
		),
	),
	HttpTool(
		handle="createDraft",
		description="Save an email as a draft (for a human to review, or to send later with sendDraft).",
		scopes=["draft"],
		method="POST",
		endpoint=f"{_USER}/drafts",
		request_format="gmail-message",
		body={"message": passthrough("threadId", raw=_RAW)},
		# The whole input becomes the message ("raw": "{{ input }}"): name every key it reads.
		input_schema=obj({"userId": _USER_ID, **_COMPOSE}, ["to", "subject"], closed=True),
		output_schema=obj(
			{
				"id": {"type": "string", "description": "The draft id."},
				"message": obj({"id": {"type": "string"}, "threadId": {"type": "string"}}),
			}
		),
	),
	HttpTool(
		handle="listDrafts",
		description="List drafts (ids and their message ids).",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/drafts",
		query_params=passthrough(
			"q", "pageToken", maxResults="{{ input.maxResults | default: 20 }}"
		),
		input_schema=obj(
			{"userId": _USER_ID, "q": _Q, "maxResults": _MAX, "pageToken": PAGE_TOKEN}
		),
		output_schema=obj(
			{
				"drafts": {"type": "array", "items": {"type": "object"}},
				"nextPageToken": {"type": "string"},
			}
		),
	),
	HttpTool(
		handle="sendDraft",
		description="Send an existing draft.",
		# drafts.send accepts gmail.compose or gmail.modify, not gmail.send (discovery
		# gmail.v1): the draft scope lets Google accept it, the send scope keeps an agent given
		# only "draft" (drafts a human reviews) from sending them.
		scopes=["send", "draft"],
		method="POST",
		endpoint=f"{_USER}/drafts/send",
		body=passthrough("id"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"id": {
					"type": "string",
					"description": "The draft id (from createDraft or listDrafts).",
				},
			},
			["id"],
		),
		output_schema=obj(
			{
				"id": {"type": "string"},
				"threadId": {"type": "string"},
				"labelIds": {"type": "array", "items": {"type": "string"}},
			}
		),
	),
	HttpTool(
		handle="modifyMessageLabels",
		description="Add or remove labels on one message: mark read (remove UNREAD), archive (remove INBOX), star (add STARRED), or apply user labels.",
		scopes=["modify"],
		method="POST",
		endpoint=f"{_USER}/messages/{{{{ input.id }}}}/modify",
		body=passthrough("addLabelIds", "removeLabelIds"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"id": _MESSAGE_ID,
				"addLabelIds": {**_LABEL_IDS, "description": "Label ids to add."},
				"removeLabelIds": {**_LABEL_IDS, "description": "Label ids to remove."},
			},
			["id"],
		),
		output_schema=_MESSAGE_OUT,
	),
	HttpTool(
		handle="batchModifyMessages",
		description="Add or remove labels on up to 1000 messages at once.",
		scopes=["modify"],
		method="POST",
		endpoint=f"{_USER}/messages/batchModify",
		body=passthrough("ids", "addLabelIds", "removeLabelIds"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"ids": {
					"type": "array",
					"items": {"type": "string"},
					"maxItems": 1000,
					"description": "Message ids.",
				},
				"addLabelIds": {**_LABEL_IDS, "description": "Label ids to add."},
				"removeLabelIds": {**_LABEL_IDS, "description": "Label ids to remove."},
			},
			["ids"],
		),
	),
	HttpTool(
		handle="trashMessage",
		description="Move a message to the trash (recoverable for 30 days).",
		scopes=["delete"],
		method="POST",
		endpoint=f"{_USER}/messages/{{{{ input.id }}}}/trash",
		input_schema=obj({"userId": _USER_ID, "id": _MESSAGE_ID}, ["id"]),
		output_schema=_MESSAGE_OUT,
	),
	HttpTool(
		handle="listThreads",
		description="Search conversations (threads). Returns thread ids and snippets; call getThread for the messages.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/threads",
		query_params=passthrough(
			"q",
			"labelIds",
			"pageToken",
			"includeSpamTrash",
			maxResults="{{ input.maxResults | default: 20 }}",
		),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"q": _Q,
				"labelIds": {**_LABEL_IDS, "description": "Only threads with all these label ids."},
				"maxResults": _MAX,
				"pageToken": PAGE_TOKEN,
				"includeSpamTrash": {"type": "boolean", "description": "Include spam and trash."},
			}
		),
		output_schema=obj(
			{
				"threads": {
					"type": "array",
					"items": obj({"id": {"type": "string"}, "snippet": {"type": "string"}}),
				},
				"nextPageToken": {"type": "string"},
			}
		),
	),
	HttpTool(
		handle="getThread",
		description="Read a whole conversation: all its messages in order.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/threads/{{{{ input.id }}}}",
		query_params=passthrough("format", "metadataHeaders"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"id": {"type": "string", "description": "The thread id."},
				"format": {
					**_FORMAT,
					"enum": ["full", "metadata", "minimal"],
					"description": "full: headers and decoded body parts; metadata: headers only "
					"(fast); minimal: ids and labels. (threads.get has no raw format.)",
				},
				"metadataHeaders": {
					"type": "array",
					"items": {"type": "string"},
					"description": "With format metadata: only these headers.",
				},
			},
			["id"],
		),
		output_schema=obj(
			{"id": {"type": "string"}, "messages": {"type": "array", "items": _MESSAGE_OUT}}
		),
	),
	HttpTool(
		handle="getAttachment",
		description="Download an attachment of a message (its id is payload.parts[].body.attachmentId in getMessage). The bytes are saved as a file; the tool returns a file reference.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/messages/{{{{ input.messageId }}}}/attachments/{{{{ input.id }}}}",
		response_files=["data"],
		input_schema=obj(
			{
				"userId": _USER_ID,
				"messageId": _MESSAGE_ID,
				"id": {
					"type": "string",
					"description": "The attachment id (body.attachmentId of the part).",
				},
			},
			["messageId", "id"],
		),
		output_schema=obj(
			{
				"data": obj(
					{
						"file": {"type": "string"},
						"mediaType": {"type": "string"},
						"size": {"type": "integer"},
					},
					description="The saved attachment.",
				),
				"size": {"type": "integer"},
			}
		),
	),
	HttpTool(
		handle="listLabels",
		description="List the mailbox's labels (system and user) with their ids.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/labels",
		input_schema=obj({"userId": _USER_ID}),
		output_schema=obj(
			{
				"labels": {
					"type": "array",
					"items": obj(
						{
							"id": {"type": "string"},
							"name": {"type": "string"},
							"type": {"type": "string"},
						}
					),
				}
			}
		),
	),
	HttpTool(
		handle="createLabel",
		description="Create a user label (use '/' in the name for nesting, e.g. 'Clients/Acme').",
		scopes=["modify"],
		method="POST",
		endpoint=f"{_USER}/labels",
		body=passthrough("name", "labelListVisibility", "messageListVisibility"),
		input_schema=obj(
			{
				"userId": _USER_ID,
				"name": {"type": "string", "description": "The label name."},
				"labelListVisibility": {
					"type": "string",
					"enum": ["labelShow", "labelShowIfUnread", "labelHide"],
					"description": "Visibility in the label list.",
				},
				"messageListVisibility": {
					"type": "string",
					"enum": ["show", "hide"],
					"description": "Visibility in the message list.",
				},
			},
			["name"],
		),
		output_schema=obj({"id": {"type": "string"}, "name": {"type": "string"}}),
	),
	HttpTool(
		handle="getProfile",
		description="The account's email address and message and thread counts.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_USER}/profile",
		input_schema=obj({"userId": _USER_ID}),
		output_schema=obj(
			{
				"emailAddress": {"type": "string"},
				"messagesTotal": {"type": "integer"},
				"threadsTotal": {"type": "integer"},
				"historyId": {"type": "string"},
			}
		),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"listMessages": [],
		"createDraft": [],
		"listDrafts": [],
		"modifyMessageLabels": [],
		"batchModifyMessages": [],
		"trashMessage": [],
		"listLabels": [],
		"createLabel": [],
		"getMessage": ["private", "untrusted"],
		"listThreads": ["private", "untrusted"],
		"getThread": ["private", "untrusted"],
		"getAttachment": ["private", "untrusted"],
		"getProfile": ["private"],
		"send*": ["outbound"],
	},
	filters={"rfc2822": rfc2822},
	encoders={"gmail-message": encode_message},
	name="Gmail",
	description="Search, read, send and organize Gmail messages, threads, drafts and labels.",
	api_version="v1",
	api_setup=ApiSetup(base_url="https://gmail.googleapis.com"),
	credential_setup=[google_oauth2(*_SCOPES, scope_map=_SCOPE_MAP)],
	scopes={
		"read": "Search and read messages, threads, drafts, labels and attachments.",
		"send": "Send messages and drafts.",
		"draft": "Create drafts.",
		"modify": "Change labels on messages and create labels.",
		"delete": "Move messages to the trash.",
	},
	tools=TOOLS,
	docs=token_guide(
		"Gmail",
		"Gmail API",
		"gmail",
		_SCOPES,
		notes="""## Scopes

`gmail.modify` is a *restricted* scope: an app used by other people needs Google's verification.
For your own account in testing mode it works at once. Narrower scopes
(`gmail.readonly`, `gmail.send`, `gmail.compose`) only cover some tools; grant the agent matching
OpenMolt scopes (`["read"]`, `["send"]`...) so it only sees what it may use.

Messages are built as RFC 2822 and sent base64url-encoded in the `raw` field; the agent only gives
`to`, `subject` and `body` (and reply headers for replies).""",
	),
)
"""The Gmail integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Gmail under the id ``gmail``."""
	register(INTEGRATION, id="gmail")
