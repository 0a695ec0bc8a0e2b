"""The session ids of served conversations never let two conversations share one session."""

from __future__ import annotations

import pytest

from openmolt_serve._launch import session_id


@pytest.mark.parametrize(
	("one", "other"),
	[
		(("agui", "x", "y:z"), ("agui", "x:y", "z")),
		(("a2a", "openai:gpt-5-mini", "c"), ("a2a", "openai", "gpt-5-mini:c")),
		(("telegram", "bot", "42%3A1"), ("telegram", "bot", "42:1")),
		(("hook", "a%b", "k"), ("hook", "a%25b", "k")),
		(("hook", "bot", "k\n1"), ("hook", "bot", "k%0A1")),
	],
)
def test_two_conversations_never_share_a_session(one: tuple[str, str, str], other) -> None:
	"""A ``:`` or ``%`` in an agent's name or a conversation's key is escaped, not ambiguous."""
	assert session_id(*one) != session_id(*other)


def test_plain_names_and_keys_keep_their_session_ids() -> None:
	"""Conversations kept before (no ``:`` or ``%`` in the name or key) find their sessions."""
	assert session_id("agui", "Helper", "thread-1") == "agui:Helper:thread-1"
	assert session_id("slack", "Bot", "C123/1700000000.0001") == "slack:Bot:C123/1700000000.0001"
	assert session_id("a2a", "openai:gpt-5-mini", "c") == "a2a:openai%3Agpt-5-mini:c"


def test_a_key_with_control_characters_makes_a_session_every_store_takes() -> None:
	"""A webhook payload's key may hold a NUL or a newline: escaped, the session is made."""
	from openmolt_core.sessions import InMemorySession

	made = session_id("hook", "Bot", "issue\x00\n7")
	assert made == "hook:Bot:issue%00%0A7"
	assert InMemorySession(made).session_id == made
