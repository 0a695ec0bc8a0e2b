"""Google Calendar's respondToEvent logic, through a fake ``send`` (no HTTP)."""

from __future__ import annotations

import pytest

from openmolt_core.errors import ToolError
from openmolt_integrations import google_calendar
from openmolt_integrations._calendar_rsvp import respond

pytestmark = pytest.mark.anyio


async def test_only_the_guests_own_answer_is_sent(fake_send) -> None:
	"""The patch holds the self attendee's email and answer, no comment or sendUpdates unless
	given, and the calendar the event was read from."""
	event = {
		"attendees": [
			{"email": "boss@example.com", "organizer": True},
			{"email": "team@example.com", "self": True, "responseStatus": "needsAction"},
		]
	}
	sent, send = fake_send({"getEvent": [event], "updateEvent": [{"id": "ev1"}]})
	out = await respond(
		{"calendarId": "team@example.com", "eventId": "ev1", "responseStatus": "declined"}, send
	)
	assert sent == [
		("getEvent", {"calendarId": "team@example.com", "eventId": "ev1"}),
		(
			"updateEvent",
			{
				"calendarId": "team@example.com",
				"eventId": "ev1",
				"attendeesOmitted": True,
				"attendees": [{"email": "team@example.com", "responseStatus": "declined"}],
			},
		),
	]
	assert out == {
		"id": "ev1",
		"htmlLink": None,
		"email": "team@example.com",
		"responseStatus": "declined",
	}


@pytest.mark.parametrize(
	"attendees",
	[None, [], [{"email": "boss@example.com", "organizer": True, "self": False}], [{"self": True}]],
)
async def test_an_event_without_an_invitation_is_refused_before_writing(
	attendees, fake_send
) -> None:
	"""No attendee marked self (or one without an email): refused, naming eventId; no patch."""
	sent, send = fake_send({"getEvent": [{"id": "ev1", "attendees": attendees}]})
	with pytest.raises(ToolError, match="eventId: calendar 'primary' is not a guest of event"):
		await respond({"eventId": "ev1", "responseStatus": "accepted"}, send)
	assert [handle for handle, _ in sent] == ["getEvent"]


def test_respond_sends_only_declarative_tools_of_the_integration() -> None:
	"""respondToEvent's requests are Calendar HTTP tools, and the patch's fields are inputs of
	updateEvent (attendees items declare email, responseStatus and comment)."""
	handles = {t.handle for t in google_calendar.TOOLS}
	assert set(google_calendar.COMPOSED_REQUESTS["respondToEvent"]) <= handles
	update = next(t for t in google_calendar.TOOLS if t.handle == "updateEvent")
	props = update.input_schema["properties"]
	assert {"attendeesOmitted", "attendees", "sendUpdates"} <= set(props)
	assert {"email", "responseStatus", "comment"} <= set(props["attendees"]["items"]["properties"])
