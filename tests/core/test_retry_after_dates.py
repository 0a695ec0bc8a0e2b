"""Retry-After as an HTTP date is UTC in all three of RFC 9110's formats, whatever the host's zone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from openmolt_core.retry import retry_after

FORMATS = [
	"%a, %d %b %Y %H:%M:%S GMT",  # IMF-fixdate
	"%A, %d-%b-%y %H:%M:%S GMT",  # obsolete RFC 850
	"%a %b %e %H:%M:%S %Y",  # obsolete asctime: no zone, and UTC all the same
	"%a, %d %b %Y %H:%M:%S -0000",  # RFC 5322's "UTC, source zone unknown"
	"%a, %d %b %Y %H:%M:%S +0000",
]


@pytest.fixture(params=["America/New_York", "Asia/Tokyo", "UTC"])
def zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
	"""The host's local time zone for the test (restored after it)."""
	monkeypatch.setenv("TZ", request.param)
	time.tzset()
	yield request.param
	monkeypatch.undo()
	time.tzset()


@pytest.mark.parametrize("form", FORMATS)
def test_a_date_in_any_http_format_is_read_as_utc(zone: str, form: str) -> None:
	"""A date 60 s ahead is a wait of about 60 s: read as local time, the asctime and ``-0000``
	forms were hours off (a wait past max_wait, so no retry, or none at all)."""
	when = datetime.now(UTC) + timedelta(seconds=60)
	wait = retry_after({"retry-after": when.strftime(form)})
	assert wait is not None and 55 <= wait <= 61, (zone, form, wait)
