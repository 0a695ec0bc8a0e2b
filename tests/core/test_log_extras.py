"""A log record's extras are masked whatever their type (a JSON formatter or OpenTelemetry's
logging handler shows them as they are)."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from openmolt_core.secrets import Redactor

SECRET = "CANARYextra0001"


class Kept(logging.Handler):
	def __init__(self) -> None:
		super().__init__()
		self.records: list[logging.LogRecord] = []

	def emit(self, record: logging.LogRecord) -> None:
		self.records.append(record)


@dataclasses.dataclass
class Hidden:
	user: str
	token: str = dataclasses.field(repr=False)


class Opaque:
	def __repr__(self) -> str:
		return f"Opaque(token={SECRET})"


@pytest.fixture
def kept() -> Kept:
	handler = Kept()
	log = logging.getLogger("an.app.with.json.logs")
	log.addHandler(handler)
	log.setLevel(logging.DEBUG)
	yield handler
	log.removeHandler(handler)


def test_extras_of_every_type_are_masked(kept: Kept) -> None:
	import gc

	gc.collect()  # instances other tests left in cycles: what they knew is masked until then
	keep = Redactor(frozenset({SECRET}))
	span = object()
	logging.getLogger("an.app.with.json.logs").info(
		"request sent",
		extra={
			"request": {"headers": {"Authorization": f"Bearer {SECRET}"}, "n": 1},
			"tokens": (SECRET, "public"),
			"raw": SECRET.encode(),
			"thing": Opaque(),
			"span": span,
			"count": 3,
			"hidden": Hidden("u", SECRET),
			"note": f"sent with {SECRET}",
		},
	)
	record = kept.records[0]
	assert record.request == {"headers": {"Authorization": "Bearer [redacted]"}, "n": 1}
	assert record.tokens == ["[redacted]", "public"]
	assert record.note == "sent with [redacted]"
	assert record.raw == "[redacted]" and record.thing == "Opaque(token=[redacted])"
	assert record.hidden == {"user": "u", "token": "[redacted]"}  # repr=False: its data checked
	assert record.span is span and record.count == 3  # what shows no secret is left as it was
	assert SECRET not in repr(record.__dict__)
	del keep
