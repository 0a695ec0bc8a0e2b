"""Google Calendar (API v3): calendars, events with time zones, recurring instances and free/busy."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, FunctionTool, HttpTool, Integration
from openmolt_core.integrations.extensions import EncodedBody
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._calendar_rsvp import RESPONSES, respond
from openmolt_integrations._google import PAGE_TOKEN, google_oauth2, token_guide

if TYPE_CHECKING:
	from openmolt_core.integrations.extensions import EncodeRequest
	from openmolt_core.tools import ToolContext

__all__ = ["COMPOSED_REQUESTS", "COMPOSED_TOOLS", "INTEGRATION", "TOOLS", "register_integrations"]

_SCOPES = {
	"https://www.googleapis.com/auth/calendar.events": "Read and write events on all calendars.",
	"https://www.googleapis.com/auth/calendar.readonly": "List calendars and read free/busy.",
	# calendars.insert (createCalendar) accepts calendar, calendar.calendars or this one, the
	# narrowest (discovery rev 20261030); calendar.events does not authorize it.
	"https://www.googleapis.com/auth/calendar.app.created": "Create secondary calendars.",
}

_SCOPE_MAP = {
	"read": ["https://www.googleapis.com/auth/calendar.readonly"],
	"write": [
		"https://www.googleapis.com/auth/calendar.events",
		"https://www.googleapis.com/auth/calendar.app.created",
	],
	"delete": ["https://www.googleapis.com/auth/calendar.events"],
}
"""The Calendar OAuth scopes each tool scope needs (``openmolt auth googleCalendar --scopes read``
asks for reading only; each is one its tools' methods accept in calendar.v3's discovery)."""

_CALENDAR_ID = {
	"type": "string",
	"description": "Calendar id: 'primary' for the user's main calendar, or an id from listCalendars (often an email address).",
	"default": "primary",
}
_EVENT_ID = {"type": "string", "description": "The event id (from listEvents or createEvent)."}
_TIME_ZONE = {
	"type": "string",
	"description": "IANA time zone name such as 'Europe/Paris' or 'America/New_York'.",
}
_SEND_UPDATES = {
	"type": "string",
	"enum": ["all", "externalOnly", "none"],
	"description": "Who gets an email about the change: all guests, only non-Google-Calendar guests, or nobody (default none).",
}
_WHEN = obj(
	{
		"dateTime": {
			"type": "string",
			"description": "RFC 3339 date-time, e.g. '2026-12-03T15:00:00' (with timeZone) or '2026-12-03T15:00:00+01:00'. Use for timed events.",
		},
		"date": {
			"type": "string",
			"format": "date",
			"description": "A date 'YYYY-MM-DD' for all-day events (the end date is exclusive). Use instead of dateTime.",
		},
		"timeZone": {
			**_TIME_ZONE,
			"description": "IANA time zone of dateTime, e.g. 'Europe/Paris'; required for recurring events.",
		},
	},
)
_ATTENDEES = array(
	obj(
		{
			"email": {"type": "string", "description": "The guest's email address."},
			"displayName": {"type": "string", "description": "The guest's name."},
			"optional": {"type": "boolean", "description": "Whether attendance is optional."},
			"responseStatus": {
				"type": "string",
				"enum": ["needsAction", "accepted", "declined", "tentative"],
				"description": "The guest's answer (needsAction for a new guest; to answer your own invitation use respondToEvent).",
			},
			"comment": {"type": "string", "description": "The guest's comment with the answer."},
		},
		["email"],
	),
	"Guests to invite.",
)
_EVENT_FIELDS: dict[str, Any] = {
	"summary": {"type": "string", "description": "The event title."},
	"description": {"type": "string", "description": "Notes shown in the event (HTML allowed)."},
	"location": {"type": "string", "description": "Where it happens, free text or an address."},
	"start": {**_WHEN, "description": "When the event starts: dateTime (+ timeZone) or date."},
	"end": {**_WHEN, "description": "When the event ends: dateTime (+ timeZone) or date."},
	"attendees": _ATTENDEES,
	"recurrence": array(
		{"type": "string"},
		"RRULE/EXRULE/RDATE/EXDATE lines (RFC 5545), e.g. ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10'].",
	),
	"reminders": obj(
		{
			"useDefault": {
				"type": "boolean",
				"description": "Use the calendar's default reminders.",
			},
			"overrides": array(
				obj(
					{
						"method": {
							"type": "string",
							"enum": ["email", "popup"],
							"description": "How to remind.",
						},
						"minutes": {"type": "integer", "description": "Minutes before the start."},
					},
					["method", "minutes"],
				),
				"Custom reminders (with useDefault false).",
			),
		},
		description="Reminders for this event.",
	),
	"colorId": {"type": "string", "description": "Event color id '1' to '11'."},
	"visibility": {
		"type": "string",
		"enum": ["default", "public", "private", "confidential"],
		"description": "Who can see the event details.",
	},
	"transparency": {
		"type": "string",
		"enum": ["opaque", "transparent"],
		"description": "'opaque' blocks time (busy), 'transparent' does not (free).",
	},
	"conferenceData": {
		"type": "object",
		"description": "To add a Google Meet link pass {'createRequest': {'requestId': '<any unique string>', 'conferenceSolutionKey': {'type': 'hangoutsMeet'}}}.",
	},
}
_EVENT_BODY = {name: f"{{{{ input.{name} }}}}" for name in _EVENT_FIELDS}

_PATCH_FORMAT = "calendar-event-patch"
"""updateEvent's request format: JSON where a new kind of start/end clears the other kind."""


async def _patch_body(body: Any, request: EncodeRequest) -> EncodedBody:
	"""JSON for events.patch whose ``start``/``end`` switch cleanly between timed and all-day.

	Checked against Calendar API v3 (discovery rev 20261030, ``calendar.events.patch``): a patch
	merges the ``EventDateTime`` objects into the stored event, so an all-day event patched with
	only ``dateTime`` would keep its ``date`` too, and Calendar refuses an event with both. A
	given ``dateTime`` therefore sends ``date: null`` and a given ``date`` sends
	``dateTime: null``, as Google's patch semantics require to clear a field.
	"""
	fields = dict(body) if isinstance(body, dict) else {}
	for key in ("start", "end"):
		when = fields.get(key)
		if isinstance(when, dict):
			when = dict(when)
			if "dateTime" in when:
				when.setdefault("date", None)
			elif "date" in when:
				when.setdefault("dateTime", None)
			fields[key] = when
	data = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
	return EncodedBody(data, "application/json")


_EVENT_OUT = obj(
	{
		"id": {"type": "string"},
		"status": {"type": "string"},
		"htmlLink": {"type": "string"},
		"summary": {"type": "string"},
		"description": {"type": "string"},
		"location": {"type": "string"},
		"start": {"type": "object"},
		"end": {"type": "object"},
		"attendees": {"type": "array", "items": {"type": "object"}},
		"recurrence": {"type": "array", "items": {"type": "string"}},
		"recurringEventId": {"type": "string"},
		"hangoutLink": {"type": "string"},
		"organizer": {"type": "object"},
	}
)
_EVENTS_OUT = obj(
	{
		"items": {"type": "array", "items": _EVENT_OUT},
		"timeZone": {"type": "string", "description": "The calendar's time zone."},
		"nextPageToken": {"type": "string", "description": "Pass as pageToken for more results."},
		"nextSyncToken": {"type": "string"},
	}
)
_LIST_WINDOW: dict[str, Any] = {
	"timeMin": {
		"type": "string",
		"format": "date-time",
		"description": "Only events ending after this RFC 3339 time with offset, e.g. '2026-12-01T00:00:00Z'.",
	},
	"timeMax": {
		"type": "string",
		"format": "date-time",
		"description": "Only events starting before this RFC 3339 time with offset, e.g. '2026-12-08T00:00:00Z'.",
	},
	"timeZone": {
		**_TIME_ZONE,
		"description": "Time zone used in the response (default: the calendar's).",
	},
	"maxResults": {
		"type": "integer",
		"minimum": 1,
		"maximum": 2500,
		"default": 50,
		"description": "Events per page (max 2500).",
	},
	"pageToken": PAGE_TOKEN,
}

TOOLS = [
	HttpTool(
		handle="listCalendars",
		description="List the calendars in the user's calendar list, with their ids, names, time zones and access roles.",
		scopes=["read"],
		method="GET",
		endpoint="/users/me/calendarList",
		query_params=passthrough(
			"pageToken", "minAccessRole", maxResults="{{ input.maxResults | default: 100 }}"
		),
		input_schema=obj(
			{
				"maxResults": {
					"type": "integer",
					"minimum": 1,
					"maximum": 250,
					"default": 100,
					"description": "Calendars per page (max 250).",
				},
				"pageToken": PAGE_TOKEN,
				"minAccessRole": {
					"type": "string",
					"enum": ["freeBusyReader", "reader", "writer", "owner"],
					"description": "Only calendars where the user has at least this role.",
				},
			}
		),
		output_schema=obj(
			{
				"items": {
					"type": "array",
					"items": obj(
						{
							"id": {"type": "string"},
							"summary": {"type": "string"},
							"timeZone": {"type": "string"},
							"accessRole": {"type": "string"},
							"primary": {"type": "boolean"},
						}
					),
				},
				"nextPageToken": {"type": "string"},
			}
		),
	),
	HttpTool(
		handle="listEvents",
		description="List or search events of a calendar in a time window. Recurring events are expanded into single occurrences sorted by start time unless singleEvents is false.",
		scopes=["read"],
		method="GET",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events",
		query_params=passthrough(
			"timeMin",
			"timeMax",
			"q",
			"timeZone",
			"pageToken",
			"showDeleted",
			singleEvents="{% if input.singleEvents == false %}false{% else %}true{% endif %}",
			orderBy="{% if input.singleEvents == false %}{{ input.orderBy }}{% else %}{{ input.orderBy | default: 'startTime' }}{% endif %}",
			maxResults="{{ input.maxResults | default: 50 }}",
		),
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				**_LIST_WINDOW,
				"q": {
					"type": "string",
					"description": "Free-text search in title, description, location and guests.",
				},
				"singleEvents": {
					"type": "boolean",
					"default": True,
					"description": "Expand recurring events into occurrences (default true).",
				},
				"orderBy": {
					"type": "string",
					"enum": ["startTime", "updated"],
					"description": "Sort order; startTime (default) needs singleEvents true.",
				},
				"showDeleted": {"type": "boolean", "description": "Include cancelled events."},
			}
		),
		output_schema=_EVENTS_OUT,
	),
	HttpTool(
		handle="getEvent",
		description="Get one event with all its details.",
		scopes=["read"],
		method="GET",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/{{ input.eventId }}",
		query_params=passthrough("timeZone"),
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				"eventId": _EVENT_ID,
				"timeZone": {**_TIME_ZONE, "description": "Time zone used in the response."},
			},
			["eventId"],
		),
		output_schema=_EVENT_OUT,
	),
	HttpTool(
		handle="createEvent",
		description="Create an event. Give start and end as {dateTime, timeZone} for timed events or {date} for all-day events; add attendees to invite guests and conferenceData for a Meet link.",
		scopes=["write"],
		method="POST",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events",
		query_params=passthrough(
			"sendUpdates", conferenceDataVersion="{% if input.conferenceData %}1{% endif %}"
		),
		body=_EVENT_BODY,
		input_schema=obj(
			{"calendarId": _CALENDAR_ID, **_EVENT_FIELDS, "sendUpdates": _SEND_UPDATES},
			["start", "end"],
		),
		output_schema=_EVENT_OUT,
	),
	HttpTool(
		handle="quickAddEvent",
		description="Create an event from a natural-language sentence such as 'Lunch with Ana tomorrow 12:30-13:30 at Café Central'.",
		scopes=["write"],
		method="POST",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/quickAdd",
		query_params=passthrough("text", "sendUpdates"),
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				"text": {"type": "string", "description": "The sentence describing the event."},
				"sendUpdates": _SEND_UPDATES,
			},
			["text"],
		),
		output_schema=_EVENT_OUT,
	),
	HttpTool(
		handle="updateEvent",
		description="Change some fields of an event (a patch: fields left out stay as they are). Replacing attendees replaces the whole guest list.",
		scopes=["write"],
		method="PATCH",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/{{ input.eventId }}",
		query_params=passthrough(
			"sendUpdates", conferenceDataVersion="{% if input.conferenceData %}1{% endif %}"
		),
		request_format=_PATCH_FORMAT,
		body={**_EVENT_BODY, **passthrough("attendeesOmitted")},
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				"eventId": _EVENT_ID,
				**_EVENT_FIELDS,
				"attendeesOmitted": {
					"type": "boolean",
					"description": "true: attendees holds only your own entry, and only your answer changes (respondToEvent does this).",
				},
				"sendUpdates": _SEND_UPDATES,
			},
			["eventId"],
		),
		output_schema=_EVENT_OUT,
	),
	HttpTool(
		handle="deleteEvent",
		description="Delete (cancel) an event.",
		scopes=["delete"],
		method="DELETE",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/{{ input.eventId }}",
		query_params=passthrough("sendUpdates"),
		input_schema=obj(
			{"calendarId": _CALENDAR_ID, "eventId": _EVENT_ID, "sendUpdates": _SEND_UPDATES},
			["eventId"],
		),
	),
	HttpTool(
		handle="moveEvent",
		description="Move an event to another calendar (changes its organizer).",
		scopes=["write"],
		method="POST",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/{{ input.eventId }}/move",
		query_params=passthrough("destination", "sendUpdates"),
		input_schema=obj(
			{
				"calendarId": {
					**_CALENDAR_ID,
					"description": "The calendar the event is in now ('primary' by default).",
				},
				"eventId": _EVENT_ID,
				"destination": {
					"type": "string",
					"description": "Id of the calendar to move the event to.",
				},
				"sendUpdates": _SEND_UPDATES,
			},
			["eventId", "destination"],
		),
		output_schema=_EVENT_OUT,
	),
	HttpTool(
		handle="listEventInstances",
		description="List the occurrences of a recurring event in a time window (to change or cancel one occurrence, use its id with updateEvent or deleteEvent).",
		scopes=["read"],
		method="GET",
		endpoint="/calendars/{{ input.calendarId | default: 'primary' }}/events/{{ input.eventId }}/instances",
		query_params=passthrough(
			"timeMin",
			"timeMax",
			"timeZone",
			"pageToken",
			maxResults="{{ input.maxResults | default: 50 }}",
		),
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				"eventId": {**_EVENT_ID, "description": "Id of the recurring event."},
				**_LIST_WINDOW,
			},
			["eventId"],
		),
		output_schema=_EVENTS_OUT,
	),
	HttpTool(
		handle="queryFreeBusy",
		description="Find when calendars are busy between two times (to pick a meeting slot). Returns busy intervals per calendar.",
		scopes=["read"],
		method="POST",
		endpoint="/freeBusy",
		body=passthrough("timeMin", "timeMax", "timeZone", "items"),
		input_schema=obj(
			{
				"timeMin": {
					"type": "string",
					"format": "date-time",
					"description": "Start of the window, RFC 3339 with offset, e.g. '2026-12-01T08:00:00+01:00'.",
				},
				"timeMax": {
					"type": "string",
					"format": "date-time",
					"description": "End of the window, RFC 3339 with offset.",
				},
				"timeZone": {
					**_TIME_ZONE,
					"description": "Time zone of the response (default UTC).",
				},
				"items": array(
					obj(
						{
							"id": {
								"type": "string",
								"description": "A calendar id or an email address.",
							}
						},
						["id"],
					),
					"The calendars to check, e.g. [{'id': 'primary'}, {'id': 'ana@example.com'}].",
				),
			},
			["timeMin", "timeMax", "items"],
		),
		output_schema=obj(
			{
				"timeMin": {"type": "string"},
				"timeMax": {"type": "string"},
				"calendars": {
					"type": "object",
					"description": "Calendar id to {busy: [{start, end}], errors}.",
				},
			}
		),
	),
	HttpTool(
		handle="createCalendar",
		description="Create a new secondary calendar owned by the user.",
		scopes=["write"],
		method="POST",
		endpoint="/calendars",
		body=passthrough("summary", "description", "timeZone"),
		input_schema=obj(
			{
				"summary": {"type": "string", "description": "The calendar's name."},
				"description": {"type": "string", "description": "What the calendar is for."},
				"timeZone": {**_TIME_ZONE, "description": "The calendar's time zone."},
			},
			["summary"],
		),
		output_schema=obj(
			{
				"id": {"type": "string"},
				"summary": {"type": "string"},
				"timeZone": {"type": "string"},
			}
		),
	),
]

COMPOSED_REQUESTS = {"respondToEvent": ("getEvent", "updateEvent")}
"""The declarative tools each composed tool sends its requests through, by handle."""


async def _respond(input: dict[str, Any], context: ToolContext) -> Any:
	allowed = {t.handle: t for t in TOOLS if t.handle in COMPOSED_REQUESTS["respondToEvent"]}

	async def send(name: str, request: dict[str, Any]) -> Any:
		if name not in allowed:
			raise ToolError(f"respondToEvent sends only getEvent and updateEvent, not {name}")
		return await execute_http_tool(allowed[name], INTEGRATION, request, context)

	return await respond(input, send)


COMPOSED_TOOLS = [
	FunctionTool(
		handle="respondToEvent",
		description="Answer an invitation on the user's calendar: accept, decline or tentative, with an optional comment to the organizer. Only your own answer changes; the other guests stay as they are.",
		scopes=["write"],
		function=_respond,
		input_schema=obj(
			{
				"calendarId": _CALENDAR_ID,
				"eventId": {
					**_EVENT_ID,
					"description": "The event (or one occurrence's id from listEventInstances).",
				},
				"responseStatus": {
					"type": "string",
					"enum": RESPONSES,
					"description": "Your answer.",
				},
				"comment": {
					"type": "string",
					"description": "A note to the organizer with the answer.",
				},
				"sendUpdates": {
					**_SEND_UPDATES,
					"description": "Who gets an email about the answer: all (the organizer and guests), externalOnly or none (default: Google's, which notifies the organizer).",
				},
			},
			["eventId", "responseStatus"],
		),
		output_schema=obj(
			{
				"id": {"type": "string"},
				"htmlLink": {"type": ["string", "null"]},
				"email": {"type": "string", "description": "The guest who answered (you)."},
				"responseStatus": {"type": "string"},
			}
		),
	)
]
"""The composed tools: an invitation answered through getEvent and updateEvent."""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"quickAddEvent": [],
		"deleteEvent": [],
		"moveEvent": [],
		"createCalendar": [],
		"listEvents": ["private", "untrusted"],
		"getEvent": ["private", "untrusted"],
		"listEventInstances": ["private", "untrusted"],
		"queryFreeBusy": ["private"],
		"createEvent": ["outbound"],
		"updateEvent": ["outbound"],
		# Sends the answer (and its comment) to the organizer; returns no event content.
		"respondToEvent": ["outbound"],
		# Others' words: names and descriptions of calendars others share.
		"listCalendars": ["untrusted"],
	},
	name="Google Calendar",
	description="Read and manage Google Calendar events, calendars and free/busy times.",
	api_version="v3",
	api_setup=ApiSetup(base_url="https://www.googleapis.com/calendar/v3"),
	credential_setup=[google_oauth2(*_SCOPES, scope_map=_SCOPE_MAP)],
	scopes={
		"read": "List calendars, read events and free/busy times.",
		"write": "Create, change and move events; create calendars.",
		"delete": "Delete events.",
	},
	tools=[*TOOLS, *COMPOSED_TOOLS],
	encoders={_PATCH_FORMAT: _patch_body},
	docs=token_guide(
		"Google Calendar",
		"Google Calendar API",
		"googleCalendar",
		_SCOPES,
		notes="""## Times and time zones

Timed events take `{"dateTime": "2026-12-03T15:00:00", "timeZone": "Europe/Paris"}` (or a
date-time with an offset); all-day events take `{"date": "2026-12-03"}` with an exclusive end
date. Recurring events need a `timeZone`. `updateEvent` switches an event between timed and
all-day: a new `dateTime` clears the stored `date` (sent as `null`), and a new `date` clears
`dateTime`. `timeMin`/`timeMax` filters need an offset or `Z`.

## Answering invitations

`respondToEvent` accepts, declines or tentatively accepts an event the calendar is invited to. It
reads the event to find the guest marked `self`, then patches only that entry with
`attendeesOmitted: true`, which Calendar reads as "update only this participant's response": the
other guests and their answers are left alone.""",
	),
)
"""The Google Calendar integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Google Calendar under the id ``googleCalendar``."""
	register(INTEGRATION, id="googleCalendar")
