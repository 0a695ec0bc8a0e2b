"""What a streamed field's holds keep back: only what may still be a URL's login (`loginholds`).

The rule `EventEmitter.deliver` hands ``text:delta`` listeners by: a word that may still be or
become a URL whose login has not ended waits; a word that ended, and the start of a word up to
its letters that may be a scheme's, go on at once. The latency it adds is measured here in
characters held (tests/core/test_stream_url_logins_held.py holds the listener's side).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core._support.loginholds import MAX_HELD, LoginHolds, held_from
from openmolt_core.capabilities.streaming import TextDeltaEvent


@pytest.mark.parametrize(
	("text", "held"),
	[
		("Hello world, ", ""),  # a word that ended: nothing held
		("Hello world,", ""),  # ``,`` is no scheme's: the word cannot start a URL's scheme
		("Hello wor", "wor"),  # may be ``wor://``: held
		("Hello,ht", "ht"),
		("see https:", "https:"),
		("see https://app:Pa", "https://app:Pa"),
		("see R&D", "R&D"),
		("see https://app:Pa\nss", "https://app:Pa\nss"),  # a line break is inside a URL
	],
)
def test_only_what_may_be_a_url_login_is_held(text: str, held: str) -> None:
	assert text[held_from(text) :] == held


def test_a_word_past_the_bound_is_sent() -> None:
	word = "x:" + "a" * MAX_HELD
	assert held_from(f"see {word}") == len(word) + 4


def _delta(text: str, field: str = "humanMessage", **more: Any) -> TextDeltaEvent:
	event = TextDeltaEvent(agent="S", step=1, index=0, field=field, text=text, **more)
	event.run_id = "r1"
	return event


def test_prose_is_held_by_the_word_being_written_only() -> None:
	"""The latency measured: prose streamed 3 characters at a time holds at most its partial word."""
	prose = (
		"The weather in Paris is mild today, with light rain expected in the afternoon and a "
		"clear evening; take an umbrella if you go out after lunch."
	)
	holds, sent, most, total = LoginHolds(), "", 0, 0
	pieces = [prose[i : i + 3] for i in range(0, len(prose), 3)]
	for piece in pieces:
		out = holds.release(_delta(piece))
		sent += out.text if out is not None else ""
		given = sum(len(p) for p in pieces[: pieces.index(piece) + 1])
		lag = given - len(sent)
		most, total = max(most, lag), total + lag
	assert most <= max(len(w) for w in prose.split())  # never more than a word
	assert total / len(pieces) < 5
	end = holds.release(_delta(""))
	assert sent + (end.text if end is not None else "") == prose


def test_a_cut_drops_what_was_held_and_another_field_is_apart() -> None:
	holds = LoginHolds()
	assert holds.release(_delta("see https://app:Pa")).text == "see "
	assert holds.release(_delta("x. ", field="output")).text == "x. "  # apart, sent apart
	cut = holds.release(_delta("", cut=True))
	assert cut is not None and cut.cut and cut.text == ""
	assert holds.release(_delta("")) is None  # nothing held any more: no empty delta
	assert holds.release(_delta("", field="output")) is None


@pytest.mark.anyio
async def test_a_listener_added_while_a_field_streams_gets_the_login_masked_whole() -> None:
	"""The emitter holds a field's words before anyone listens: a listener added after the first
	half of a URL login (``https://app:Pa``) was emitted gets the login whole, masked, never the
	second half (``ss``) alone."""
	from openmolt_core._emitter import EventEmitter

	emitter = EventEmitter()
	got: list[str] = []
	await emitter.deliver(_delta("see https://app:Pa"))  # nobody listens yet
	emitter.on("text:delta", lambda event: got.append(event.text))
	await emitter.deliver(_delta("ss@db.example/x now"))
	await emitter.deliver(_delta(""))  # the field's end
	said = "".join(got)
	assert "Pass" not in said and "ss@db" not in said, said
	assert "db.example" in said
