"""Google Calendar: answer an invitation (accept, decline, tentative) as the calendar's guest.

A guest answers by patching the event's ``attendees`` with ``attendeesOmitted: true`` and only
their own entry: Calendar API v3 (discovery rev 20261030, ``Event.attendeesOmitted``) says that
"when updating an event, this can be used to only update the participant's response", so the
other guests and their answers stay as they are. The guest's email comes from the event itself
(the attendee marked ``self``), so ``calendarId`` may stay ``primary``.

The module holds the logic only; its two requests go through ``send``, which runs the Google
Calendar integration's own declarative tools ``getEvent`` and ``updateEvent`` (checked against
the discovery document).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from openmolt_core.errors import ToolError

__all__ = ["RESPONSES", "Send", "respond"]

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Runs one of the integration's tools by handle with an input, returning its decoded reply."""

RESPONSES = ["accepted", "declined", "tentative"]
"""The answers a guest can give (``EventAttendee.responseStatus`` other than needsAction)."""


async def respond(input: Mapping[str, Any], send: Send) -> dict[str, Any]:
	"""Set the calendar owner's answer to an event they are invited to.

	Args:
		input: ``eventId``, ``responseStatus`` and optional ``calendarId`` (default primary),
			``comment`` and ``sendUpdates``.
		send: Runs ``getEvent`` or ``updateEvent`` (see `Send`).

	Returns:
		``{"id", "htmlLink", "email", "responseStatus"}`` as the updated event shows them.

	Raises:
		ToolError: The calendar is not a guest of the event (its organizer's own events have
			no invitation to answer).
	"""
	where = {"calendarId": input.get("calendarId") or "primary", "eventId": input["eventId"]}
	event = await send("getEvent", dict(where)) or {}
	me = next((a for a in event.get("attendees") or [] if a.get("self")), None)
	if me is None or not me.get("email"):
		raise ToolError(
			f"eventId: calendar {where['calendarId']!r} is not a guest of event "
			f"{where['eventId']!r} (no attendee of it is marked self), so there is no invitation "
			"to answer; the organizer changes the event with updateEvent instead"
		)
	answer: dict[str, Any] = {"email": me["email"], "responseStatus": input["responseStatus"]}
	if input.get("comment") is not None:
		answer["comment"] = input["comment"]
	patch: dict[str, Any] = {**where, "attendeesOmitted": True, "attendees": [answer]}
	if input.get("sendUpdates"):
		patch["sendUpdates"] = input["sendUpdates"]
	updated = await send("updateEvent", patch) or {}
	mine = next((a for a in updated.get("attendees") or [] if a.get("self")), answer)
	return {
		"id": updated.get("id", where["eventId"]),
		"htmlLink": updated.get("htmlLink"),
		"email": mine.get("email", answer["email"]),
		"responseStatus": mine.get("responseStatus", answer["responseStatus"]),
	}
