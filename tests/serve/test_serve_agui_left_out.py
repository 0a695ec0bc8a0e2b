"""Every event the core emits is either sent on an AG-UI stream or left out with a reason.

An event added to the core (a verdict's, a stranded run's) must be placed: mapped to AG-UI events
(`MAPPED`) or said not to be sent, and why (`LEFT_OUT`); none is forgotten, none is both.
"""

from __future__ import annotations

from openmolt_core.events import EVENT_NAMES
from openmolt_serve._agui_events import LEFT_OUT, MAPPED


def test_each_core_event_is_sent_or_left_out_with_a_reason() -> None:
	assert not set(MAPPED) & set(LEFT_OUT)
	assert set(MAPPED) | set(LEFT_OUT) == EVENT_NAMES
	assert all(why.strip() for why in LEFT_OUT.values())
