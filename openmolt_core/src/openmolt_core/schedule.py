"""Schedule specifications, and when each one fires next.

Three types, in the spec's shape (camelCase keys accepted):

```python
agent.schedule({"type": "interval", "value": 3600})                    # every hour
agent.schedule({"type": "daily", "dayOfWeek": [1, 3, 5], "hour": 14, "minute": 0,
                "timeZone": "America/New_York"})                         # Mon, Wed, Fri at 14:00
agent.schedule({"type": "cron", "expression": "*/15 9-17 * * 1-5", "timeZone": "Europe/Berlin"})
```

Times follow the wall clock of the schedule's zone (the machine's zone by default):

- A time that does not exist on a spring-forward day (02:30 when clocks jump from 02:00 to 03:00)
  runs once, shifted by the jump (03:30).
- A time that happens twice on a fall-back day runs once, at its first occurrence. Only a cron
  expression whose hour field is ``*`` also runs during the repeated hour, so "every 15 minutes"
  keeps going every 15 minutes.
- ``dayOfMonth`` days that a month lacks run on its last day: ``[31]`` runs on 30 April, and
  ``[30, 31]`` runs once on 29 February 2024.
- Intervals count elapsed seconds from an anchor, so they never drift and ignore DST.
"""

from __future__ import annotations

import calendar
import math
import os
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Protocol

import anyio
from pydantic import (
	BaseModel,
	ConfigDict,
	Field,
	TypeAdapter,
	ValidationError,
	field_validator,
	model_validator,
)

from openmolt_core.errors import ConfigurationError

__all__ = [
	"MAX_INTERVAL",
	"Clock",
	"CronSchedule",
	"DailySchedule",
	"IntervalSchedule",
	"ScheduleSpec",
	"SystemClock",
	"describe_schedule",
	"local_zone",
	"next_run",
	"parse_schedule",
	"schedule_zone",
]

MAX_INTERVAL = 10 * 365 * 86_400
"""The longest interval in seconds (ten years); a longer one could not be counted in dates."""

_DAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
# croniter's random field (R, R(0-30), R/5): a different time in each process and each restart.
_RANDOM = re.compile(r"r(?:\(\d+-\d+\))?(?:/\d+)?", re.I | re.ASCII)
_MAX_DST_SHIFT = timedelta(hours=3)  # larger than any real DST jump


class _Spec(BaseModel):
	"""Base of the schedule models: frozen, closed, fields by name or by alias."""

	# Built on first use: a process whose agents have no schedule never builds one.
	model_config: ClassVar[ConfigDict] = ConfigDict(
		extra="forbid", populate_by_name=True, frozen=True, defer_build=True
	)

	id: str | None = Field(
		default=None,
		description="A stable id (default: derived from the agent's name and the schedule).",
	)
	input: Any = Field(default=None, description="Input of each scheduled run.")
	missed_runs: Literal["skip", "run_once"] = Field(
		default="skip",
		alias="missedRuns",
		description="Runs missed while the process was down or asleep: skip them, or run once.",
	)
	paused: bool = Field(default=False, description="Start paused.")

	@field_validator("id")
	@classmethod
	def _check_id(cls, value: str | None) -> str | None:
		# It names the schedule in logs, events, the history file and durable workflow ids.
		if value is None:
			return None
		if not value.strip():
			raise ValueError("an id must not be empty; leave it out for one derived from the agent")
		if len(value) > 200:
			raise ValueError(f"an id is at most 200 characters, this one has {len(value)}")
		if any(ord(c) < 32 or ord(c) == 127 for c in value):
			raise ValueError("an id must not hold control characters such as a line break")
		return value


class IntervalSchedule(_Spec):
	"""Run every ``value`` seconds, counted from when the schedule starts."""

	type: Literal["interval"]
	value: float = Field(
		ge=0.1,
		le=MAX_INTERVAL,
		description="Seconds between runs (at least 0.1, at most ten years: 315,360,000).",
	)


class DailySchedule(_Spec):
	"""Run at ``hour:minute`` on some days of the week, or some days of the month, or every day."""

	type: Literal["daily"]
	day_of_week: list[Annotated[int, Field(ge=0, le=6)]] | None = Field(
		default=None, alias="dayOfWeek", description="Days of the week, Sun=0 to Sat=6."
	)
	day_of_month: list[Annotated[int, Field(ge=1, le=31)]] | None = Field(
		default=None,
		alias="dayOfMonth",
		description="Days of the month, 1 to 31; a day the month lacks runs on its last day.",
	)
	hour: int = Field(ge=0, le=23, description="Hour, 0 to 23.")
	minute: int = Field(default=0, ge=0, le=59, description="Minute, 0 to 59.")
	time_zone: str | None = Field(
		default=None, alias="timeZone", description="IANA zone (default: the machine's)."
	)

	@model_validator(mode="after")
	def _check(self) -> DailySchedule:
		if self.day_of_week and self.day_of_month:
			raise ValueError("give dayOfWeek or dayOfMonth, not both")
		_check_zone(self.time_zone)
		return self


_CRON_FIELDS = (
	("minute", "0-59"),
	("hour", "0-23"),
	("day-of-month", "1-31, L or W"),
	("month", "1-12 or JAN-DEC"),
	("day-of-week", "0-7 or SUN-SAT, # and L"),
)
_CRON_ALIASES = "@yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly"


def _cron_fault(fields: list[str]) -> str:
	"""Which field of a cron expression croniter refuses, and what it may hold ('' if none alone)."""
	from croniter import croniter  # type: ignore[import-untyped]  # the package ships no stubs

	if len(fields) == 1:
		return f": {fields[0]!r} is not one of {_CRON_ALIASES}"
	for n, (name, values) in enumerate(_CRON_FIELDS):
		alone = ["*"] * 5
		alone[n] = fields[n]
		if not croniter.is_valid(" ".join(alone)):
			return f": the {name} field {fields[n]!r} is not valid ({values}, with , - and /)"
	return ""


class CronSchedule(_Spec):
	"""Run on a cron expression (minute hour day-of-month month day-of-week), in a time zone."""

	type: Literal["cron"]
	expression: str = Field(description="A cron expression, e.g. '0 9 * * 1-5'.")
	time_zone: str | None = Field(
		default=None, alias="timeZone", description="IANA zone (default: the machine's)."
	)

	@model_validator(mode="after")
	def _check(self) -> CronSchedule:
		from croniter import (  # (no stubs: ignored above, where mypy meets it first)
			CroniterBadDateError,
			croniter,
		)

		fields = self.expression.split()
		if len(fields) != 5 and not (len(fields) == 1 and fields[0].startswith("@")):
			raise ValueError(
				f"invalid cron expression {self.expression!r}: it has {len(fields)} fields, not "
				"five; give minute hour day-of-month month day-of-week (seconds and years are not "
				"supported; for runs more often than once a minute, use an interval)"
			)
		if any(_RANDOM.fullmatch(part) for field in fields for part in field.split(",")):
			raise ValueError(
				f"invalid cron expression {self.expression!r}: a random field (R) gives each "
				"process and "
				"each restart another time; write the minute or hour"
			)
		if not croniter.is_valid(self.expression):
			raise ValueError(f"invalid cron expression {self.expression!r}{_cron_fault(fields)}")
		try:  # 30 February: valid, and never due (serving it would stop every schedule)
			croniter(self.expression, datetime(2000, 1, 1)).get_next(datetime)
		except CroniterBadDateError:
			raise ValueError(
				f"cron expression {self.expression!r} never fires (no month has that day)"
			) from None
		_check_zone(self.time_zone)
		return self


ScheduleSpec = Annotated[
	IntervalSchedule | DailySchedule | CronSchedule, Field(discriminator="type")
]
"""One schedule: `IntervalSchedule`, `DailySchedule` or `CronSchedule`, told apart by ``type``."""


@cache
def _adapter() -> TypeAdapter[IntervalSchedule | DailySchedule | CronSchedule]:
	"""The validator of a schedule given as a dict (built on the first one)."""
	return TypeAdapter(ScheduleSpec)


def parse_schedule(
	spec: Mapping[str, Any] | IntervalSchedule | DailySchedule | CronSchedule,
) -> IntervalSchedule | DailySchedule | CronSchedule:
	"""Validate a schedule given as a dict (snake_case or camelCase keys) or a spec object.

	A spec object is validated again, so one built without validation is refused here too.

	Raises:
		ConfigurationError: The schedule is invalid; the message names the field.
	"""
	if isinstance(spec, IntervalSchedule | DailySchedule | CronSchedule):
		# Checked again: ``model_construct`` (or a copy with ``update``) skips the validators.
		# Its fields as they are (an input object stays that object, not its dump).
		spec = dict(spec)
	if not isinstance(spec, Mapping):
		raise ConfigurationError(
			f"a schedule must be a dict, got {type(spec).__name__}: e.g. {{'type': 'interval', "
			"'value': 300}, {'type': 'daily', 'hour': 9} or {'type': 'cron', 'expression': "
			"'0 9 * * 1-5'}"
		)
	try:
		return _adapter().validate_python(dict(spec))
	except ValidationError as exc:
		problems = "; ".join(dict.fromkeys(_problem(e, spec) for e in exc.errors()))
		raise ConfigurationError(f"invalid schedule: {problems}") from exc
	except TypeError as exc:
		raise ConfigurationError(f"a schedule must be a dict, got {type(spec).__name__}") from exc


def _problem(error: Any, spec: Mapping[Any, Any]) -> str:
	"""One of pydantic's errors in the schedule dict's own keys (no union tag, no pydantic phrase)."""
	import difflib

	kinds = "'interval', 'daily', 'cron'"
	loc = [str(p) for p in error["loc"]]
	if loc and loc[0] == spec.get("type"):
		loc = loc[1:]  # the tag pydantic puts first
	key = ".".join(loc)
	kind = error["type"]
	if kind == "union_tag_invalid":
		return f"'type' is {spec.get('type')!r}, not one of {kinds}"
	if kind == "union_tag_not_found":
		return f"missing key 'type', one of {kinds}"
	if kind == "missing":
		return f"missing key {key!r}"
	if kind == "extra_forbidden":
		models: dict[str, type[_Spec]] = {
			"interval": IntervalSchedule,
			"daily": DailySchedule,
			"cron": CronSchedule,
		}
		fields = models[str(spec.get("type"))].model_fields.items()
		known = [k for name, f in fields for k in (f.alias, name) if k]
		close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
		return f"unknown key {key!r}" + (f"; did you mean {close[0]!r}?" if close else "")
	message = str(error["msg"]).removeprefix("Value error, ")
	return f"{key}: {message}" if key else message


# time zones -------------------------------------------------------------------------------


def local_zone() -> tzinfo:
	"""The machine's time zone as a DST-aware zone (``TZ``, then ``/etc/localtime``), else UTC."""
	from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

	candidates = [os.environ.get("TZ", "").lstrip(":")]
	try:
		target = str(Path("/etc/localtime").resolve())
		if "zoneinfo/" in target:
			candidates.append(target.split("zoneinfo/", 1)[1])
	except OSError:
		pass
	try:
		candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
	except OSError:
		pass
	for name in candidates:
		if name:
			try:
				return ZoneInfo(name)
			except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, too long
				continue
	return UTC


def _check_zone(name: str | None) -> None:
	"""Refuse a spec's ``timeZone`` that names no zone (an empty one too)."""
	if name is not None and not name.strip():
		raise ValueError(
			"timeZone is empty; leave it out for the machine's zone, or give an IANA name like "
			"'Europe/Berlin'"
		)
	_zone(name)


def _zone(name: str | None) -> tzinfo:
	if not name:
		return local_zone()
	from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

	try:
		return ZoneInfo(name)
	except (ZoneInfoNotFoundError, ValueError, OSError):
		# OSError: a folder of the database ("Europe"), or a name too long for a file; its
		# message names the host's path to the database.
		shown = name if len(name) <= 100 else f"{name[:100]}..."
		raise ValueError(
			f"unknown time zone {shown!r}; use an IANA name like 'Europe/Berlin'"
		) from None


def schedule_zone(spec: IntervalSchedule | DailySchedule | CronSchedule) -> tzinfo:
	"""The zone a schedule's times are read in: its ``timeZone``, else the machine's zone.

	Intervals have no zone of their own; their times are shown in the machine's zone.
	"""
	return _zone(getattr(spec, "time_zone", None))


def _instants(naive: datetime, zone: tzinfo, *, repeat: bool) -> list[datetime]:
	# The UTC instants of a wall-clock time: one normally, the shifted one in a gap, and both
	# occurrences in a fall-back overlap only when `repeat` is set.
	first = naive.replace(tzinfo=zone, fold=0).astimezone(UTC)
	if not repeat:
		return [first]
	second = naive.replace(tzinfo=zone, fold=1).astimezone(UTC)
	if second == first or second.astimezone(zone).replace(tzinfo=None) != naive:
		return [first]  # not ambiguous (or a gap, where fold=1 would go back in time)
	return [first, second]


# the timetable ----------------------------------------------------------------------------


def next_run(
	spec: IntervalSchedule | DailySchedule | CronSchedule,
	after: datetime,
	*,
	anchor: datetime | None = None,
) -> datetime:
	"""The first time strictly after ``after`` when the schedule fires, in UTC.

	Args:
		spec: The schedule.
		after: An aware datetime.
		anchor: For intervals, the instant the count starts from (default: ``after``).

	Returns:
		An aware UTC datetime.
	"""
	if after.tzinfo is None:
		raise ValueError("next_run needs an aware datetime")
	after = after.astimezone(UTC)
	if isinstance(spec, IntervalSchedule):
		start = (anchor or after).astimezone(UTC)
		elapsed = (after - start).total_seconds()
		k = max(math.floor(elapsed / spec.value) + 1, 1)
		due = start + timedelta(seconds=k * spec.value)
		while due <= after:  # float rounding at exact multiples
			k += 1
			due = start + timedelta(seconds=k * spec.value)
		return due
	if isinstance(spec, DailySchedule):
		return _next_daily(spec, after)
	return _next_cron(spec, after)


def _day_matches(spec: DailySchedule, day: date) -> bool:
	if spec.day_of_week:
		return (day.weekday() + 1) % 7 in spec.day_of_week
	if spec.day_of_month:
		last = calendar.monthrange(day.year, day.month)[1]
		return day.day in {min(d, last) for d in spec.day_of_month}
	return True


def _next_daily(spec: DailySchedule, after: datetime) -> datetime:
	zone = _zone(spec.time_zone)
	day = after.astimezone(zone).date() - timedelta(days=1)
	for _ in range(400):
		if _day_matches(spec, day):
			naive = datetime(day.year, day.month, day.day, spec.hour, spec.minute)
			due = _instants(naive, zone, repeat=False)[0]
			if due > after:
				return due
		day += timedelta(days=1)
	raise AssertionError("a daily schedule fires at least once a month")  # pragma: no cover


def _next_cron(spec: CronSchedule, after: datetime) -> datetime:
	from croniter import croniter

	zone = _zone(spec.time_zone)
	local_after = after.astimezone(zone).replace(tzinfo=None)
	hours = croniter(spec.expression).expanded[1]
	repeat = hours == ["*"] or len(hours) == 24
	# Away from a DST change (the same offset from before `after` to past the next candidate,
	# within a day: changes are weeks apart), the next candidate is the next run.
	candidate: datetime = croniter(spec.expression, local_after).get_next(datetime)
	instant = candidate.replace(tzinfo=zone).astimezone(UTC)
	if (
		instant - after <= timedelta(days=1)
		and (after - _MAX_DST_SHIFT).astimezone(zone).utcoffset()
		== (instant + _MAX_DST_SHIFT).astimezone(zone).utcoffset()
	):
		return instant
	# Wall-clock candidates are walked in local time, starting early enough to see the second
	# pass of a repeated hour; the earliest instant after `after` wins.
	it = croniter(spec.expression, local_after - _MAX_DST_SHIFT)
	best: datetime | None = None
	best_local: datetime | None = None
	for _ in range(100_000):
		naive = it.get_next(datetime)
		if best_local is not None and naive > best_local + _MAX_DST_SHIFT:
			break
		for instant in _instants(naive, zone, repeat=repeat):
			if instant > after and (best is None or instant < best):
				best, best_local = instant, naive
	if best is None:
		raise ValueError(f"cron expression {spec.expression!r} never fires")
	return best


def describe_schedule(spec: IntervalSchedule | DailySchedule | CronSchedule) -> str:
	"""A short human description: ``every 3600 s``, ``daily at 14:00 on Mon, Fri (Europe/Paris)``."""
	if isinstance(spec, IntervalSchedule):
		return f"every {spec.value:g} s"
	zone = spec.time_zone or f"machine zone {getattr(local_zone(), 'key', 'UTC')}"
	if isinstance(spec, CronSchedule):
		return f"cron {spec.expression!r} ({zone})"
	when = f"{spec.hour:02d}:{spec.minute:02d}"
	if spec.day_of_week:
		days = ", ".join(_DAY_NAMES[d] for d in sorted(set(spec.day_of_week)))
		return f"daily at {when} on {days} ({zone})"
	if spec.day_of_month:
		days = ", ".join(str(d) for d in sorted(set(spec.day_of_month)))
		return f"at {when} on day {days} of each month ({zone})"
	return f"daily at {when} ({zone})"


# clocks -----------------------------------------------------------------------------------


class Clock(Protocol):
	"""Where the scheduler reads the time and waits; tests pass `openmolt_core.testing.FakeClock`.

	A clock may also have ``working()``, a context manager the scheduler enters around the work
	its SQLite store does in a thread (`FakeClock.working`: its ``advance`` waits for it).
	"""

	def now(self) -> datetime:
		"""The current time, aware, in UTC."""
		...

	async def sleep_until(self, when: datetime) -> None:
		"""Return once ``now() >= when``."""
		...


class SystemClock:
	"""The real clock. Sleeps in short slices so a suspended machine notices the time on waking."""

	slice: float = 30.0

	def now(self) -> datetime:
		"""The current time, aware, in UTC."""
		return datetime.now(UTC)

	async def sleep_until(self, when: datetime) -> None:
		"""Sleep until the wall clock reaches ``when``."""
		while True:
			remaining = (when - self.now()).total_seconds()
			if remaining <= 0:
				return
			await anyio.sleep(min(remaining, self.slice))
