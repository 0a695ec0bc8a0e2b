"""Microsoft Outlook through Microsoft Graph v1.0: mail, folders, calendar events and contacts.

Tools act on the signed-in user (``/me``). Tokens come from the Microsoft identity platform v2.0
(``https://login.microsoftonline.com/{tenant}/oauth2/v2.0/...``); ``offline_access`` yields a
refresh token. Lists page through ``@odata.nextLink``: pass its ``$skip`` back. A ``$search``
pages only with the opaque ``$skiptoken`` of its next link and answers 1,000 messages at most, so
searchMessages takes a larger ``top`` instead of a skip.

Inputs carry Graph's names: properties as Graph spells them (``toRecipients``, ``isRead``), OData
query options without their ``$`` (``top``, ``filter``, ``search``), and path parameters as the
Graph OpenAPI description (and msgraph-sdk) names them, ``message-id`` written ``message_id``.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.schema import IDEMPOTENCY_KEY as _CALL_KEY
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	passthrough_of,
	string,
)

__all__ = ["INTEGRATION", "register_integrations"]

_LOGIN = "https://login.microsoftonline.com/{{ config.tenant | default: 'common' }}/oauth2/v2.0"
_ID = string("Message id (from listMessages or searchMessages).")
_RECIPIENTS = array(
	obj(
		{
			"emailAddress": obj(
				{
					"address": string("Email address.", format="email"),
					"name": string("Display name."),
				},
				["address"],
				description="The recipient.",
			)
		},
		["emailAddress"],
	),
	'Recipients: [{"emailAddress": {"address": "ada@example.com", "name": "Ada"}}].',
)
_CONTENT_TYPE = string("Format of the body.", enum=["Text", "HTML"], default="Text")
_SELECT = array(
	string(), "Properties to return, e.g. id, subject, from, receivedDateTime, bodyPreview, isRead."
)
_TOP = integer("Items per page.", minimum=1, maximum=1000, default=25)
_SKIP = integer("Items to skip (paging: the $skip of @odata.nextLink).", minimum=0)
_TEXT_BODY = boolean("Return bodies as HTML instead of plain text.", default=False)
_PREFER_TEXT = '{% unless input.bodyAsHtml %}outlook.body-content-type="text"{% endunless %}'
_DATETIME_TZ = obj(
	{
		"dateTime": string("Local date and time, e.g. 2026-12-01T09:00:00."),
		"timeZone": string("Windows or IANA time zone, e.g. Europe/Paris or UTC."),
	},
	["dateTime", "timeZone"],
	description="A time with its zone.",
)
_ATTENDEES = array(
	obj(
		{
			"emailAddress": obj(
				{"address": string("Email address."), "name": string("Display name.")},
				["address"],
				description="The attendee.",
			),
			"type": string("Attendance.", enum=["required", "optional", "resource"]),
		},
		["emailAddress"],
	),
	'Attendees: [{"emailAddress": {"address": "ada@example.com"}, "type": "required"}].',
)
_LIST_QUERY = {
	"$top": "{{ input.top | default: 25 }}",
	"$skip": "{{ input.skip }}",
	"$select": "{{ input.select | join: ',' }}",
}

_DOCS = """\
## Get a token

1. In the [Microsoft Entra admin center](https://entra.microsoft.com) → **App registrations** →
   **New registration**, choose who may sign in (any account: tenant `common`; work/school only:
   `organizations`; personal only: `consumers`; one organisation: its tenant id) and add a
   redirect URI (platform **Web**).
2. **API permissions** → **Microsoft Graph** → **Delegated**: `offline_access`, `User.Read`,
   `Mail.ReadWrite`, `Mail.Send`, `Calendars.ReadWrite`, `Contacts.ReadWrite`.
3. **Certificates & secrets** → **New client secret**; copy the value.
4. Send the user to
   `https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=…&response_type=code&redirect_uri=…&scope=offline_access%20User.Read%20Mail.ReadWrite%20Mail.Send%20Calendars.ReadWrite%20Contacts.ReadWrite`,
   then exchange the `code` at `https://login.microsoftonline.com/common/oauth2/v2.0/token`
   (`grant_type=authorization_code`). Keep the `refresh_token`.

```python
agent = om.create_agent(..., integrations=[{"integration": "outlook", "credential": {
    "type": "oauth2",
    "config": {"tenant": "common", "clientId": "...", "clientSecret": "...", "refreshToken": "..."},
    "onTokenRefresh": save_tokens,
}}])
```

OpenMolt refreshes the access token (about an hour) with the refresh token. A ready access token
can also be given with the `bearer` credential (`accessToken`). Graph throttles with 429 and
`Retry-After`, which OpenMolt honours.
"""

_MESSAGE_FIELDS = {
	"subject": string("Subject line."),
	"body": string("Message body."),
	"contentType": _CONTENT_TYPE,
	"toRecipients": _RECIPIENTS,
	"ccRecipients": _RECIPIENTS,
	"bccRecipients": _RECIPIENTS,
	"importance": string("Importance.", enum=["low", "normal", "high"]),
}
# Graph's itemBody from the body and contentType inputs.
_ITEM_BODY = {
	"contentType": "{{ input.contentType | default: 'Text' }}",
	"content": "{{ input.body }}",
}
_MESSAGE_BODY = {
	**passthrough("subject"),
	"body": _ITEM_BODY,
	**passthrough("toRecipients", "ccRecipients", "bccRecipients", "importance"),
}

_UPDATE_MESSAGE = obj(
	{
		"message_id": _ID,
		"isRead": boolean("Read state."),
		"categories": array(string(), "Category names (replaces the current ones)."),
		"importance": string("Importance.", enum=["low", "normal", "high"]),
		"flag": obj(
			{"flagStatus": string("Flag state.", enum=["notFlagged", "flagged", "complete"])},
			["flagStatus"],
			description="Follow-up flag.",
		),
	},
	["message_id"],
)
_UPDATE_EVENT = obj(
	{
		"event_id": string("Event id (from listCalendarView)."),
		"subject": string("New title."),
		"start": _DATETIME_TZ,
		"end": _DATETIME_TZ,
		"location": obj(
			{"displayName": string("Place name.")}, ["displayName"], description="New location."
		),
		"attendees": _ATTENDEES,
		"showAs": string(
			"Free/busy status.",
			enum=["free", "tentative", "busy", "oof", "workingElsewhere"],
		),
	},
	["event_id"],
)

_EMAIL_ADDRESSES = array(
	obj(
		{
			"address": string("Email address.", format="email"),
			"name": string("Display name."),
		},
		["address"],
	),
	'Email addresses (up to 3): [{"address": "ada@example.com", "name": "Ada Lovelace"}].',
	maxItems=3,
)
_PHYSICAL_ADDRESS = obj(
	{
		"street": string("Street and number."),
		"city": string("City."),
		"state": string("State or province."),
		"postalCode": string("Postal code."),
		"countryOrRegion": string("Country or region."),
	},
	description="A postal address.",
)
# Graph's contact properties (microsoft.graph.contact) a tool writes, by their Graph names.
_CONTACT_FIELDS = {
	"givenName": string("First name."),
	"surname": string("Last name."),
	"displayName": string("Name as shown; Outlook builds it from the names when omitted."),
	"emailAddresses": _EMAIL_ADDRESSES,
	"businessPhones": array(string(), "Business phone numbers."),
	"homePhones": array(string(), "Home phone numbers."),
	"mobilePhone": string("Mobile phone number."),
	"companyName": string("Company."),
	"jobTitle": string("Job title."),
	"department": string("Department."),
	"businessAddress": _PHYSICAL_ADDRESS,
	"homeAddress": _PHYSICAL_ADDRESS,
	"birthday": string("Birthday, ISO 8601 (e.g. 1990-12-10T00:00:00Z).", format="date-time"),
	"personalNotes": string("Notes about the contact."),
	"categories": array(string(), "Category names."),
}
_CONTACT_ID = string("Contact id (from listContacts or createContact).")
_UPDATE_CONTACT = obj({"contact_id": _CONTACT_ID, **_CONTACT_FIELDS}, ["contact_id"])

_TOOLS = [
	HttpTool(
		handle="listMessages",
		description="List messages in a folder (inbox by default), newest first; filter with an "
		'OData $filter such as "isRead eq false" or "from/emailAddress/address eq \'a@b.com\'".',
		scopes=["read"],
		method="GET",
		endpoint="/me/mailFolders/{{ input.mailFolder_id | default: 'inbox' }}/messages",
		query_params={
			**_LIST_QUERY,
			"$filter": "{{ input.filter }}",
			# Graph refuses $orderby on a property the $filter does not start with
			# (InefficientFilter), so the default order applies only without a filter.
			"$orderby": "{% if input.orderby %}{{ input.orderby }}{% elsif input.filter %}{% else %}receivedDateTime desc{% endif %}",
		},
		headers={"Prefer": _PREFER_TEXT},
		input_schema=obj(
			{
				"mailFolder_id": string(
					"Folder id or well-known name: inbox, drafts, sentitems, deleteditems, archive, junkemail.",
					default="inbox",
				),
				"filter": string(
					"OData filter, e.g. isRead eq false. With `orderby`, the filter must start with "
					"the sorted property: receivedDateTime ge 2026-11-01T00:00:00Z and isRead eq false."
				),
				"orderby": string(
					"Sort order; without a filter, newest first (receivedDateTime desc). Its "
					"property must come first in `filter`."
				),
				"select": _SELECT,
				"top": _TOP,
				"skip": _SKIP,
				"bodyAsHtml": _TEXT_BODY,
			}
		),
	),
	HttpTool(
		handle="searchMessages",
		description="Search all mail with keywords or KQL (subject:report, from:ada, "
		"hasAttachments:true, received>=2026-11-01). Results come newest first (by the date "
		"sent), 1,000 at most: for more in one answer raise top, or narrow the search.",
		scopes=["read"],
		method="GET",
		endpoint="/me/messages",
		# Graph refuses $skip next to $search (a search pages with the opaque $skiptoken of
		# its @odata.nextLink), and one search answers at most 1,000 messages, which $top
		# (up to 1000) reaches in one call: the tool takes no skip.
		query_params={
			"$top": _LIST_QUERY["$top"],
			"$select": _LIST_QUERY["$select"],
			"$search": '"{{ input.search }}"',
		},
		headers={"Prefer": _PREFER_TEXT},
		input_schema=obj(
			{
				"search": string("Search words or KQL; do not include double quotes."),
				"select": _SELECT,
				"top": _TOP,
				"bodyAsHtml": _TEXT_BODY,
			},
			["search"],
		),
	),
	HttpTool(
		handle="getMessage",
		description="Get a message with its body, recipients and, with expandAttachments, "
		"attachment metadata.",
		scopes=["read"],
		method="GET",
		endpoint="/me/messages/{{ input.message_id }}",
		query_params={
			"$select": "{{ input.select | join: ',' }}",
			"$expand": "{% if input.expandAttachments %}attachments($select=id,name,contentType,size){% endif %}",
		},
		headers={"Prefer": _PREFER_TEXT},
		input_schema=obj(
			{
				"message_id": _ID,
				"select": _SELECT,
				"expandAttachments": boolean("Include the attachments' names, types and sizes."),
				"bodyAsHtml": _TEXT_BODY,
			},
			["message_id"],
		),
	),
	HttpTool(
		handle="sendMail",
		description="Send a new email at once (saved to Sent Items). Attach small files inline "
		"with `attachments`; for a reviewable message use createDraft.",
		scopes=["send"],
		method="POST",
		endpoint="/me/sendMail",
		body={
			"message": {**_MESSAGE_BODY, **passthrough("attachments")},
			**passthrough("saveToSentItems"),
		},
		input_schema=obj(
			{
				**_MESSAGE_FIELDS,
				"attachments": array(
					{"type": "object"},
					'Files up to 3 MB each: [{"@odata.type": "#microsoft.graph.fileAttachment", '
					'"name": "a.pdf", "contentType": "application/pdf", "contentBytes": "<base64>"}].',
				),
				"saveToSentItems": boolean("Keep a copy in Sent Items.", default=True),
			},
			["subject", "body", "toRecipients"],
		),
	),
	HttpTool(
		handle="createDraft",
		description="Create a draft in Drafts; returns its id for addAttachment and sendDraft.",
		scopes=["write"],
		method="POST",
		endpoint="/me/messages",
		body=_MESSAGE_BODY,
		input_schema=obj(_MESSAGE_FIELDS, ["subject"]),
	),
	HttpTool(
		handle="sendDraft",
		description="Send a draft created with createDraft.",
		scopes=["send"],
		method="POST",
		endpoint="/me/messages/{{ input.message_id }}/send",
		input_schema=obj({"message_id": string("Id of the draft.")}, ["message_id"]),
	),
	HttpTool(
		handle="replyToMessage",
		description="Reply to the sender (or everyone with replyAll) with a comment above the "
		"quoted message; sent at once.",
		scopes=["send"],
		method="POST",
		endpoint="/me/messages/{{ input.message_id }}/{% if input.replyAll %}replyAll{% else %}reply{% endif %}",
		body=passthrough("comment"),
		input_schema=obj(
			{
				"message_id": _ID,
				"comment": string("Reply text (HTML or plain)."),
				"replyAll": boolean("Reply to all recipients.", default=False),
			},
			["message_id", "comment"],
		),
	),
	HttpTool(
		handle="forwardMessage",
		description="Forward a message to recipients with a comment; sent at once.",
		scopes=["send"],
		method="POST",
		endpoint="/me/messages/{{ input.message_id }}/forward",
		body=passthrough("comment", "toRecipients"),
		input_schema=obj(
			{
				"message_id": _ID,
				"comment": string("Text above the forwarded message."),
				"toRecipients": _RECIPIENTS,
			},
			["message_id", "toRecipients"],
		),
	),
	HttpTool(
		handle="updateMessage",
		description="Mark a message read or unread, flag it, categorise it or change importance.",
		scopes=["write"],
		method="PATCH",
		endpoint="/me/messages/{{ input.message_id }}",
		body=passthrough_of(_UPDATE_MESSAGE, exclude=["message_id"]),
		input_schema=_UPDATE_MESSAGE,
	),
	HttpTool(
		handle="moveMessage",
		description="Move a message to another folder (deleteditems deletes it, archive archives "
		"it); returns the moved message with its new id.",
		scopes=["write"],
		method="POST",
		endpoint="/me/messages/{{ input.message_id }}/move",
		body=passthrough("destinationId"),
		input_schema=obj(
			{
				"message_id": _ID,
				"destinationId": string(
					"Folder id or well-known name: inbox, archive, deleteditems, junkemail."
				),
			},
			["message_id", "destinationId"],
		),
	),
	HttpTool(
		handle="listMailFolders",
		description="List the mail folders with their ids, unread and total counts.",
		scopes=["read"],
		method="GET",
		endpoint="/me/mailFolders",
		query_params={
			"$top": "{{ input.top | default: 25 }}",
			"$skip": "{{ input.skip }}",
			**passthrough("includeHiddenFolders"),
		},
		input_schema=obj(
			{"top": _TOP, "skip": _SKIP, "includeHiddenFolders": boolean("Include hidden folders.")}
		),
	),
	HttpTool(
		handle="listAttachments",
		description="List a message's attachments (names, types, sizes; no content).",
		scopes=["read"],
		method="GET",
		endpoint="/me/messages/{{ input.message_id }}/attachments",
		query_params={"$select": "id,name,contentType,size,isInline"},
		input_schema=obj({"message_id": _ID}, ["message_id"]),
	),
	HttpTool(
		handle="getAttachment",
		description="Get one attachment; a file attachment's bytes (`contentBytes`) are saved as a "
		"file: you get a file reference (openmolt-file:...) with its type and size to pass to "
		"other tools.",
		scopes=["read"],
		method="GET",
		endpoint="/me/messages/{{ input.message_id }}/attachments/{{ input.attachment_id }}",
		response_files=["contentBytes"],
		input_schema=obj(
			{"message_id": _ID, "attachment_id": string("Attachment id from listAttachments.")},
			["message_id", "attachment_id"],
		),
	),
	HttpTool(
		handle="addAttachment",
		description="Attach a file (up to 3 MB) to a draft: give file (a file reference) or "
		"contentBytes (base64).",
		scopes=["write"],
		method="POST",
		endpoint="/me/messages/{{ input.message_id }}/attachments",
		body={
			"@odata.type": "#microsoft.graph.fileAttachment",
			**passthrough("name", "contentType"),
			"contentBytes": "{% if input.file %}{{ input.file | file_base64: 3145728 }}"
			"{% else %}{{ input.contentBytes }}{% endif %}",
		},
		input_schema=obj(
			{
				"message_id": string("Id of the draft."),
				"name": string("File name, e.g. report.pdf."),
				"contentType": string("MIME type, e.g. application/pdf."),
				"file": string(
					"The file as a file reference (openmolt-file:<id>, data:<type>;base64,<data> "
					"or fileSystem:<path>), up to 3 MB. Use this or contentBytes."
				),
				"contentBytes": string(
					"The file's content, base64-encoded (instead of file).",
					contentEncoding="base64",
				),
			},
			["message_id", "name"],
		),
	),
	HttpTool(
		handle="listCalendarView",
		description="List calendar events (recurring ones expanded) between two times, in start "
		"order.",
		scopes=["calendar.read"],
		method="GET",
		endpoint="/me/calendarView",
		query_params={
			**passthrough("startDateTime", "endDateTime"),
			"$top": "{{ input.top | default: 25 }}",
			"$skip": "{{ input.skip }}",
			"$orderby": "start/dateTime",
			"$select": "{{ input.select | join: ',' }}",
		},
		headers={
			"Prefer": '{% if input.timeZone %}outlook.timezone="{{ input.timeZone }}"{% endif %}'
		},
		input_schema=obj(
			{
				"startDateTime": string(
					"Start of the range, ISO 8601 (e.g. 2026-12-01T00:00:00Z).", format="date-time"
				),
				"endDateTime": string("End of the range, ISO 8601.", format="date-time"),
				"timeZone": string(
					"Time zone for the returned times, e.g. Europe/Paris (default UTC)."
				),
				"select": array(
					string(),
					"Event properties, e.g. subject, start, end, location, attendees, organizer.",
				),
				"top": _TOP,
				"skip": _SKIP,
			},
			["startDateTime", "endDateTime"],
		),
	),
	HttpTool(
		handle="createEvent",
		description="Create a calendar event; attendees get invitations. isOnlineMeeting adds a "
		"Teams link.",
		scopes=["calendar.write"],
		method="POST",
		endpoint="/me/events",
		body={
			**passthrough("subject"),
			"body": _ITEM_BODY,
			**passthrough("start", "end"),
			"location": {"displayName": "{{ input.location }}"},
			**passthrough(
				"attendees",
				"isAllDay",
				"isOnlineMeeting",
				"reminderMinutesBeforeStart",
				"showAs",
			),
			# Graph's event.transactionId: "a custom identifier specified by a client app for
			# the server to avoid redundant POST operations in case of client retries to create
			# the same event". The call's key: a retry creates one event, another call another.
			"transactionId": _CALL_KEY,
		},
		# Graph documents the key's purpose but not how long it is kept: a durable run that
		# finds the call in doubt after a crash asks rather than risk a second invitation.
		in_doubt="ask",
		input_schema=obj(
			{
				"subject": string("Title."),
				"body": string("Description."),
				"contentType": _CONTENT_TYPE,
				"start": _DATETIME_TZ,
				"end": _DATETIME_TZ,
				"location": string("Place name."),
				"attendees": _ATTENDEES,
				"isAllDay": boolean("All-day event (start and end at midnight)."),
				"isOnlineMeeting": boolean("Add an online meeting link."),
				"reminderMinutesBeforeStart": integer(
					"Reminder, minutes before the start.", minimum=0
				),
				"showAs": string(
					"Free/busy status.",
					enum=["free", "tentative", "busy", "oof", "workingElsewhere"],
				),
			},
			["subject", "start", "end"],
		),
	),
	HttpTool(
		handle="updateEvent",
		description="Change an event (only the given fields): reschedule, rename, move, update "
		"attendees. Attendees are notified.",
		scopes=["calendar.write"],
		method="PATCH",
		endpoint="/me/events/{{ input.event_id }}",
		body=passthrough_of(_UPDATE_EVENT, exclude=["event_id"]),
		input_schema=_UPDATE_EVENT,
	),
	HttpTool(
		handle="deleteEvent",
		description="Delete a calendar event. Deleting a meeting you organise sends its "
		"attendees a cancellation.",
		scopes=["calendar.write"],
		method="DELETE",
		endpoint="/me/events/{{ input.event_id }}",
		input_schema=obj(
			{"event_id": string("Event id (from listCalendarView or createEvent).")},
			["event_id"],
		),
	),
	HttpTool(
		handle="respondToEvent",
		description="Answer a meeting invitation: accept, tentativelyAccept or decline, with an "
		"optional comment; the organiser gets the answer unless sendResponse is false.",
		scopes=["calendar.write"],
		method="POST",
		# Graph's three event actions, named by the input (an enum of exactly those names).
		endpoint="/me/events/{{ input.event_id }}/{{ input.response }}",
		body=passthrough("comment", "sendResponse"),
		input_schema=obj(
			{
				"event_id": string("Event id of the invitation (from listCalendarView)."),
				"response": string("The answer.", enum=["accept", "tentativelyAccept", "decline"]),
				"comment": string("A note to the organiser."),
				"sendResponse": boolean("Send the answer to the organiser.", default=True),
			},
			["event_id", "response"],
		),
	),
	HttpTool(
		handle="getSchedule",
		description="Free/busy of people, rooms or distribution lists over a time range: each "
		"schedule's availabilityView (one digit per interval: 0 free, 1 tentative, 2 busy, 3 "
		"away, 4 working elsewhere), its busy items and working hours. Use it to find a slot "
		"before createEvent.",
		scopes=["calendar.read"],
		method="POST",
		endpoint="/me/calendar/getSchedule",
		body=passthrough("schedules", "startTime", "endTime", "availabilityViewInterval"),
		input_schema=obj(
			{
				"schedules": array(
					string("An email address.", format="email"),
					"Email addresses of the users, rooms or distribution lists.",
					minItems=1,
				),
				"startTime": _DATETIME_TZ,
				"endTime": _DATETIME_TZ,
				"availabilityViewInterval": integer(
					"Minutes per digit of availabilityView (default 30).",
					minimum=5,
					maximum=1440,
				),
			},
			["schedules", "startTime", "endTime"],
		),
	),
	HttpTool(
		handle="deleteMessage",
		description="Delete a message: it moves to Deleted Items (recoverable there). To file it "
		"elsewhere use moveMessage.",
		scopes=["write"],
		method="DELETE",
		endpoint="/me/messages/{{ input.message_id }}",
		input_schema=obj({"message_id": _ID}, ["message_id"]),
	),
	HttpTool(
		handle="createMailFolder",
		description="Create a mail folder, at the top level or inside another folder "
		"(mailFolder_id); returns its id for moveMessage and listMessages.",
		scopes=["write"],
		method="POST",
		endpoint="/me/mailFolders{% if input.mailFolder_id %}/{{ input.mailFolder_id }}"
		"/childFolders{% endif %}",
		body=passthrough("displayName", "isHidden"),
		input_schema=obj(
			{
				"displayName": string("Folder name."),
				"mailFolder_id": string(
					"Parent folder id or well-known name (inbox, archive...); omit for a "
					"top-level folder."
				),
				"isHidden": boolean("Create it hidden (cannot be changed later).", default=False),
			},
			["displayName"],
		),
	),
	HttpTool(
		handle="listContacts",
		description="List the contacts of the default contacts folder, by name; filter with "
		"OData, e.g. \"emailAddresses/any(a:a/address eq 'ada@example.com')\".",
		scopes=["contacts.read"],
		method="GET",
		endpoint="/me/contacts",
		query_params={
			**_LIST_QUERY,
			"$filter": "{{ input.filter }}",
			"$orderby": "{{ input.orderby }}",
		},
		input_schema=obj(
			{
				"filter": string("OData filter, e.g. startswith(displayName,'Ada')."),
				"orderby": string("Sort order, e.g. displayName."),
				"select": array(
					string(),
					"Properties to return, e.g. displayName, emailAddresses, mobilePhone.",
				),
				"top": _TOP,
				"skip": _SKIP,
			}
		),
	),
	HttpTool(
		handle="getContact",
		description="Get one contact with its names, email addresses, phones and addresses.",
		scopes=["contacts.read"],
		method="GET",
		endpoint="/me/contacts/{{ input.contact_id }}",
		query_params={"$select": "{{ input.select | join: ',' }}"},
		input_schema=obj(
			{"contact_id": _CONTACT_ID, "select": array(string(), "Properties to return.")},
			["contact_id"],
		),
	),
	HttpTool(
		handle="createContact",
		description="Create a contact in the default contacts folder; returns it with its id.",
		scopes=["contacts.write"],
		method="POST",
		endpoint="/me/contacts",
		body=passthrough(*_CONTACT_FIELDS),
		input_schema=obj(_CONTACT_FIELDS),
	),
	HttpTool(
		handle="updateContact",
		description="Change a contact (only the given fields; a list replaces the current one).",
		scopes=["contacts.write"],
		method="PATCH",
		endpoint="/me/contacts/{{ input.contact_id }}",
		body=passthrough_of(_UPDATE_CONTACT, exclude=["contact_id"]),
		input_schema=_UPDATE_CONTACT,
	),
	HttpTool(
		handle="deleteContact",
		description="Delete a contact (it moves to Deleted Items).",
		scopes=["contacts.write"],
		method="DELETE",
		endpoint="/me/contacts/{{ input.contact_id }}",
		input_schema=obj({"contact_id": _CONTACT_ID}, ["contact_id"]),
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"createDraft": [],
		"updateMessage": [],
		"moveMessage": [],
		# In the user's own mailbox and address book: nothing leaves it.
		"deleteMessage": [],
		"createMailFolder": [],
		"createContact": [],
		"updateContact": [],
		"deleteContact": [],
		"listMailFolders": [],
		"addAttachment": [],
		"listMessages": ["private", "untrusted"],
		"searchMessages": ["private", "untrusted"],
		"getMessage": ["private", "untrusted"],
		"getAttachment": ["private", "untrusted"],
		"listCalendarView": ["private", "untrusted"],
		"sendMail": ["outbound"],
		"sendDraft": ["outbound"],
		"replyToMessage": ["outbound"],
		"forwardMessage": ["outbound"],
		"createEvent": ["outbound"],
		"updateEvent": ["outbound"],
		# The answer goes to the organiser (with the comment).
		"respondToEvent": ["outbound"],
		# Other people's free/busy and busy items, whose subject and location (Graph's
		# scheduleItem) whoever sent the invitation wrote.
		"getSchedule": ["private", "untrusted"],
		# The organiser's delete sends the attendees a cancellation.
		"deleteEvent": ["outbound"],
		"listContacts": ["private"],
		"getContact": ["private"],
		# Others' words: attachment names the sender chose.
		"listAttachments": ["untrusted"],
	},
	name="Microsoft Outlook",
	description="Read, search, send, reply to and organise Outlook mail; drafts, attachments, "
	"calendar events and contacts.",
	api_version="Microsoft Graph v1.0",
	api_setup=ApiSetup(base_url="https://graph.microsoft.com/v1.0"),
	credential_setup=[
		OAuth2Credential(
			type="oauth2",
			auth_url=f"{_LOGIN}/authorize",
			token_url=f"{_LOGIN}/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=[
				"offline_access",
				"User.Read",
				"Mail.ReadWrite",
				"Mail.Send",
				"Calendars.ReadWrite",
				"Contacts.ReadWrite",
			],
			# Microsoft identity platform: PKCE (S256) supported; a "mobile and desktop" (public)
			# registration needs no client secret, a web one sends it.
			pkce="supported",
			client_secret_required=False,
			device_url=f"{_LOGIN}/devicecode",
		),
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		),
	],
	scopes={
		"read": "Read and search mail, folders and attachments.",
		"write": "Create drafts and mail folders, add attachments, move, flag, mark and delete "
		"messages.",
		"send": "Send mail, drafts, replies and forwards.",
		"calendar.read": "Read calendar events and free/busy schedules.",
		"calendar.write": "Create, change, answer and delete calendar events.",
		"contacts.read": "Read contacts.",
		"contacts.write": "Create, change and delete contacts.",
	},
	tools=_TOOLS,
	docs=_DOCS,
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Microsoft Outlook integration."""
	register(INTEGRATION)
