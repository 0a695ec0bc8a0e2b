from datetime import UTC, datetime, timedelta

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_core.schedule import (
	CronSchedule,
	DailySchedule,
	IntervalSchedule,
	describe_schedule,
	next_run,
	parse_schedule,
)


def utc(*args: int) -> datetime:
	return datetime(*args, tzinfo=UTC)


def runs(spec, start: datetime, end: datetime) -> list[datetime]:
	out, t = [], start
	while True:
		t = next_run(spec, t)
		if t > end:
			return out
		out.append(t)


def daily(hour: int, minute: int, zone: str, **extra) -> DailySchedule:
	return parse_schedule(
		{"type": "daily", "hour": hour, "minute": minute, "timeZone": zone, **extra}
	)


@pytest.mark.parametrize(
	("zone", "hour", "start", "expected"),
	[
		# New York springs forward on 2024-03-10 at 02:00 -> 03:00.
		(
			"America/New_York",
			2,
			utc(2024, 3, 9, 12),
			[utc(2024, 3, 10, 7, 30), utc(2024, 3, 11, 6, 30)],
		),
		# Berlin springs forward on 2024-03-31 at 02:00 -> 03:00.
		(
			"Europe/Berlin",
			2,
			utc(2024, 3, 30, 12),
			[utc(2024, 3, 31, 1, 30), utc(2024, 4, 1, 0, 30)],
		),
		# Sydney springs forward on 2024-10-06 at 02:00 -> 03:00 (southern hemisphere).
		(
			"Australia/Sydney",
			2,
			utc(2024, 10, 4, 18),
			[utc(2024, 10, 5, 16, 30), utc(2024, 10, 6, 15, 30)],
		),
	],
)
def test_a_time_skipped_by_spring_forward_runs_once_shifted(zone, hour, start, expected) -> None:
	"""02:30 on a spring-forward day does not exist: it runs once, shifted by the jump."""
	spec = daily(hour, 30, zone)
	assert runs(spec, start, expected[-1]) == expected


@pytest.mark.parametrize(
	("zone", "hour", "start", "expected"),
	[
		# New York falls back on 2024-11-03 at 02:00 -> 01:00: 01:30 happens twice.
		(
			"America/New_York",
			1,
			utc(2024, 11, 2, 12),
			[utc(2024, 11, 3, 5, 30), utc(2024, 11, 4, 6, 30)],
		),
		# Berlin falls back on 2024-10-27 at 03:00 -> 02:00: 02:30 happens twice.
		(
			"Europe/Berlin",
			2,
			utc(2024, 10, 26, 12),
			[utc(2024, 10, 27, 0, 30), utc(2024, 10, 28, 1, 30)],
		),
		# Sydney falls back on 2024-04-07 at 03:00 -> 02:00.
		(
			"Australia/Sydney",
			2,
			utc(2024, 4, 5, 18),
			[utc(2024, 4, 6, 15, 30), utc(2024, 4, 7, 16, 30)],
		),
	],
)
def test_a_time_repeated_by_fall_back_runs_only_once(zone, hour, start, expected) -> None:
	"""A wall time that happens twice on a fall-back day runs at its first occurrence only."""
	spec = daily(hour, 30, zone)
	assert runs(spec, start, expected[-1]) == expected


@pytest.mark.parametrize(
	("zone", "start"),
	[
		("America/New_York", utc(2024, 3, 10, 5)),
		("America/New_York", utc(2024, 11, 3, 4)),
		("Europe/Berlin", utc(2024, 10, 26, 23)),
	],
)
def test_every_15_minutes_stays_every_15_minutes_across_dst(zone, start) -> None:
	"""A cron with hour '*' keeps its elapsed-time rhythm through both DST changes."""
	spec = parse_schedule({"type": "cron", "expression": "*/15 * * * *", "time_zone": zone})
	got = runs(spec, start, start + timedelta(hours=4))
	assert got == [start + timedelta(minutes=15 * k) for k in range(1, 17)]


def test_a_fixed_hour_cron_runs_once_on_fall_back_day() -> None:
	"""'30 1 * * *' in New York runs once on the day 01:30 happens twice."""
	spec = CronSchedule(type="cron", expression="30 1 * * *", time_zone="America/New_York")
	assert runs(spec, utc(2024, 11, 2, 12), utc(2024, 11, 4, 12)) == [
		utc(2024, 11, 3, 5, 30),
		utc(2024, 11, 4, 6, 30),
	]


def test_a_cron_in_the_spring_forward_gap_runs_once() -> None:
	"""'30 2 * * *' in Berlin runs once, at 03:30 local, on the day 02:30 does not exist."""
	spec = CronSchedule(type="cron", expression="30 2 * * *", time_zone="Europe/Berlin")
	assert runs(spec, utc(2024, 3, 30, 12), utc(2024, 4, 1, 12)) == [
		utc(2024, 3, 31, 1, 30),
		utc(2024, 4, 1, 0, 30),
	]


def test_day_31_runs_on_the_last_day_of_a_30_day_month() -> None:
	"""dayOfMonth [31] runs on 30 April, then on 31 May."""
	spec = daily(9, 0, "UTC", dayOfMonth=[31])
	assert runs(spec, utc(2024, 4, 1), utc(2024, 6, 1)) == [
		utc(2024, 4, 30, 9),
		utc(2024, 5, 31, 9),
	]


def test_days_30_and_31_run_once_in_a_short_february() -> None:
	"""dayOfMonth [30, 31] gives one run on 29 February 2024 and two in March."""
	spec = daily(9, 0, "UTC", day_of_month=[30, 31])
	assert runs(spec, utc(2024, 2, 1), utc(2024, 4, 1)) == [
		utc(2024, 2, 29, 9),
		utc(2024, 3, 30, 9),
		utc(2024, 3, 31, 9),
	]


def test_day_of_week_uses_sunday_zero() -> None:
	"""dayOfWeek [0, 3] means Sunday and Wednesday."""
	spec = daily(14, 0, "America/New_York", dayOfWeek=[0, 3])
	got = runs(spec, utc(2024, 6, 3), utc(2024, 6, 10))  # Monday 3 June 2024
	assert [d.astimezone(spec_zone("America/New_York")).strftime("%a %H:%M") for d in got] == [
		"Wed 14:00",
		"Sun 14:00",
	]


def spec_zone(name: str):
	from zoneinfo import ZoneInfo

	return ZoneInfo(name)


def test_intervals_do_not_drift() -> None:
	"""100 000 steps of 0.1 s from an anchor land exactly 10 000 s later."""
	spec = IntervalSchedule(type="interval", value=0.1)
	anchor = t = utc(2024, 1, 1)
	for _ in range(100_000):
		t = next_run(spec, t, anchor=anchor)
	assert t == anchor + timedelta(seconds=10_000)


def test_an_interval_continues_its_rhythm_from_the_anchor() -> None:
	"""After a gap, the next interval run is on the anchor's grid, strictly after the time given."""
	spec = IntervalSchedule(type="interval", value=60)
	anchor = utc(2024, 1, 1)
	assert next_run(spec, anchor + timedelta(seconds=125), anchor=anchor) == anchor + timedelta(
		seconds=180
	)
	assert next_run(spec, anchor + timedelta(seconds=120), anchor=anchor) == anchor + timedelta(
		seconds=180
	)


@pytest.mark.parametrize(
	("spec", "fragment"),
	[
		({"type": "daily", "hour": 9, "dayOfWeek": [1], "dayOfMonth": [1]}, "not both"),
		({"type": "daily", "hour": 25}, "hour"),
		(
			{"type": "daily", "hour": 9, "timeZone": "Mars/Olympus"},
			"unknown time zone 'Mars/Olympus'",
		),
		({"type": "cron", "expression": "every day"}, "invalid cron expression"),
		({"type": "cron", "expression": "0 0 30 2 *"}, "never fires"),  # served, it stopped all
		({"type": "cron", "expression": "0 0 31 4,6 *"}, "never fires"),
		({"type": "interval", "value": 0}, "value"),
		({"type": "weekly"}, "type"),
		({"type": "interval", "value": 5, "missedRuns": "later"}, "missedRuns"),
	],
)
def test_invalid_schedules_say_what_is_wrong(spec, fragment) -> None:
	"""Each invalid schedule raises ConfigurationError naming the problem."""
	with pytest.raises(ConfigurationError, match="invalid schedule") as info:
		parse_schedule(spec)
	assert fragment in str(info.value)


def test_a_rare_cron_day_is_accepted() -> None:
	"""29 February is due every four years: a schedule, not an error."""
	spec = parse_schedule({"type": "cron", "expression": "0 0 29 2 *", "timeZone": "UTC"})
	assert next_run(spec, datetime(2025, 3, 1, tzinfo=UTC)) == datetime(2028, 2, 29, tzinfo=UTC)


def test_camel_and_snake_keys_give_the_same_schedule() -> None:
	"""The spec's camelCase keys and Python's snake_case keys are the same fields."""
	a = parse_schedule(
		{"type": "daily", "dayOfWeek": [1], "hour": 8, "timeZone": "UTC", "missedRuns": "run_once"}
	)
	b = parse_schedule(
		{
			"type": "daily",
			"day_of_week": [1],
			"hour": 8,
			"time_zone": "UTC",
			"missed_runs": "run_once",
		}
	)
	assert a == b
	assert a.missed_runs == "run_once"


def test_descriptions_are_readable() -> None:
	"""describe_schedule says when a schedule runs, in words."""
	assert describe_schedule(parse_schedule({"type": "interval", "value": 3600})) == "every 3600 s"
	assert (
		describe_schedule(daily(14, 0, "America/New_York", dayOfWeek=[5, 1]))
		== "daily at 14:00 on Mon, Fri (America/New_York)"
	)
	assert (
		describe_schedule(daily(9, 5, "UTC", dayOfMonth=[15, 1]))
		== "at 09:05 on day 1, 15 of each month (UTC)"
	)


def test_next_run_refuses_naive_datetimes() -> None:
	"""A naive datetime is ambiguous, so next_run refuses it."""
	with pytest.raises(ValueError, match="aware"):
		next_run(IntervalSchedule(type="interval", value=1), datetime(2024, 1, 1))


@pytest.mark.parametrize(
	"zone",
	[
		"Europe",
		"Etc",
		pytest.param("a" * 5000, id="long"),
	],  # a folder of the zone database; a name too long for a file
)
def test_a_zone_that_names_no_zone_file_is_a_clear_error_without_host_paths(zone: str) -> None:
	"""A zone naming a folder of the database, or too long, is refused like any unknown zone."""
	with pytest.raises(ConfigurationError, match="unknown time zone") as info:
		parse_schedule({"type": "daily", "hour": 9, "timeZone": zone})
	assert "zoneinfo/" not in str(info.value) and "site-packages" not in str(info.value)


@pytest.mark.parametrize("tz", ["Europe", pytest.param("b" * 5000, id="long")])
def test_a_tz_variable_that_names_no_zone_file_falls_back(monkeypatch, tz: str) -> None:
	"""TZ naming a folder of the database (or too long) is skipped like an unknown name."""
	from openmolt_core.schedule import local_zone

	monkeypatch.setenv("TZ", tz)
	assert local_zone().utcoffset(datetime(2024, 1, 1)) is not None


@pytest.mark.parametrize(
	("expression", "fragment"),
	[
		("* * * * * *", "not five"),  # croniter's seconds field: every second
		("*/5 * * * * 30", "not five"),
		("0 0 1 1 * 0 2030", "not five"),  # a year field: nothing after 2030
		("0 0 1 1 * 0 2001", "not five"),
		("R * * * *", "random"),  # a different minute in each process and each restart
		("0 R * * *", "random"),
	],
)
def test_cron_expressions_beyond_five_fields_or_random_are_refused(
	expression: str, fragment: str
) -> None:
	"""Only the five cron fields are a schedule; seconds, years and croniter's R are refused."""
	with pytest.raises(ConfigurationError, match="invalid schedule") as info:
		parse_schedule({"type": "cron", "expression": expression, "timeZone": "UTC"})
	assert fragment in str(info.value)


def test_cron_extensions_that_are_deterministic_are_accepted() -> None:
	"""Nicknames, L, W and # stay schedules: each process computes the same times."""
	after = utc(2026, 12, 5, 12)
	for expression, due in [
		("@daily", utc(2026, 12, 6)),
		("0 0 L * *", utc(2026, 12, 31)),
		("0 0 * * 5#3", utc(2026, 12, 18)),
		("0 0 15W * *", utc(2026, 12, 15)),
	]:
		spec = parse_schedule({"type": "cron", "expression": expression, "timeZone": "UTC"})
		assert next_run(spec, after) == due, expression


@pytest.mark.parametrize("value", [1e12, 1e300, float("inf"), "inf"])
def test_an_interval_too_long_to_count_is_refused(value: object) -> None:
	"""An interval past ten years is refused when made (served, its time overflowed)."""
	with pytest.raises(ConfigurationError, match=r"invalid schedule: value: "):
		parse_schedule({"type": "interval", "value": value})


def test_an_interval_of_ten_years_is_accepted() -> None:
	"""The longest interval still counts forward."""
	spec = parse_schedule({"type": "interval", "value": 10 * 365 * 86400})
	assert next_run(spec, utc(2026, 1, 1)) == utc(2026, 1, 1) + timedelta(days=3650)


def test_a_spec_object_is_validated_like_a_dict() -> None:
	"""A spec built without validation (model_construct) is checked when given, like a dict."""
	never = CronSchedule.model_construct(type="cron", expression="0 0 30 2 *", time_zone="UTC")
	with pytest.raises(ConfigurationError, match="never fires"):
		parse_schedule(never)
	huge = IntervalSchedule.model_construct(type="interval", value=float("inf"))
	with pytest.raises(ConfigurationError, match=r"invalid schedule: value: "):
		parse_schedule(huge)
	good = parse_schedule({"type": "daily", "hour": 9, "timeZone": "UTC", "id": "d"})
	assert parse_schedule(good) == good


@pytest.mark.parametrize("kind", ["daily", "cron"])
@pytest.mark.parametrize("zone", ["", "  "])
def test_an_empty_time_zone_is_refused(kind: str, zone: str) -> None:
	"""An empty timeZone names no zone: refused, where it quietly meant the machine's zone."""
	spec = {"type": kind, "hour": 9, "expression": "0 9 * * *", "timeZone": zone}
	spec.pop("expression" if kind == "daily" else "hour")
	with pytest.raises(ConfigurationError, match="timeZone is empty"):
		parse_schedule(spec)


@pytest.mark.parametrize(
	("expression", "fragment"),
	[
		("61 * * * *", "the minute field '61' is not valid (0-59, with , - and /)"),
		("0 25 * * *", "the hour field '25' is not valid (0-23,"),
		("0 9 0 * *", "the day-of-month field '0' is not valid (1-31"),
		("0 9 * 13 *", "the month field '13' is not valid (1-12 or JAN-DEC,"),
		("0 9 * * 8", "the day-of-week field '8' is not valid (0-7 or SUN-SAT"),
		("*/0 9 * * *", "the minute field '*/0' is not valid"),
		("@dayly", "'@dayly' is not one of @yearly, @annually, @monthly, @weekly, @daily"),
	],
)
def test_an_invalid_cron_expression_names_its_field_and_range(expression, fragment) -> None:
	"""A cron expression croniter refuses says which field is wrong and what it may hold."""
	with pytest.raises(ConfigurationError, match="invalid cron expression") as info:
		parse_schedule({"type": "cron", "expression": expression})
	assert fragment in str(info.value)


@pytest.mark.parametrize(
	("spec", "message"),
	[
		({"type": "daily", "hour": 25}, "hour: Input should be less than or equal to 23"),
		({"type": "cron"}, "missing key 'expression'"),
		(
			{"type": "weekly"},
			"'type' is 'weekly', not one of 'interval', 'daily', 'cron'",
		),
		({"hour": 9}, "missing key 'type', one of 'interval', 'daily', 'cron'"),
		(
			{"type": "daily", "hour": 9, "dayOfWek": [1]},
			"unknown key 'dayOfWek'; did you mean 'dayOfWeek'?",
		),
		(
			{"type": "cron", "expression": "61 * * * *"},
			"invalid cron expression '61 * * * *': the minute field '61' is not valid",
		),
	],
)
def test_a_schedule_dicts_problem_reads_in_its_own_keys(spec, message) -> None:
	"""``agent.schedule(...)``'s error names the user's key, without pydantic's tags and phrases."""
	with pytest.raises(ConfigurationError) as info:
		parse_schedule(spec)
	assert str(info.value).startswith(f"invalid schedule: {message}")
