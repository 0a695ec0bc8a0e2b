"""``openmolt schedules FILE``: when each schedule of an agent file fires next, in its own zone.

Nothing runs and no model is called: the file's schedules (and those its Python code adds with
``agent.schedule(...)``) are computed from now with the same timetable the scheduler uses.
"""

from __future__ import annotations

import json
import sys
import warnings
from datetime import datetime
from typing import Any

from openmolt_core.cli._exit import ExitCode
from openmolt_core.schedule import describe_schedule, next_run, schedule_zone

__all__ = ["fire_times", "list_schedules"]


def fire_times(spec: Any, start: datetime, count: int) -> list[datetime]:
	"""The next ``count`` fire times of a schedule after ``start``, in the schedule's zone.

	Args:
		spec: A parsed schedule.
		start: An aware datetime; intervals count from it, as when serving starts then.
		count: How many times.
	"""
	zone = schedule_zone(spec)
	times: list[datetime] = []
	after = start
	for _ in range(count):
		after = next_run(spec, after, anchor=start)
		times.append(after.astimezone(zone))
	return times


def list_schedules(
	file: str, *, count: int, as_json: bool, env_file: str | None, now: datetime | None = None
) -> int:
	"""Print the next ``count`` fire times of each schedule of an agent file.

	Args:
		file: The agent file.
		count: Fire times per schedule.
		as_json: Print JSON instead of text.
		env_file: The ``.env`` file to read.
		now: The time to count from (default: now).

	Returns:
		The exit code.

	Raises:
		OpenMoltError: The file cannot be loaded.
	"""
	from openmolt_core.cli._run import load, schedule_specs
	from openmolt_core.taint import LethalTrifectaWarning

	with warnings.catch_warnings():
		# Said where the agent runs (`openmolt FILE`, --dry-run): listing runs nothing.
		warnings.simplefilter("ignore", LethalTrifectaWarning)
		loaded = load(file, env_file=env_file, verbose=False)
		for spec in schedule_specs(loaded, loaded.input):  # the ids the runs use
			loaded.agent.schedule(spec)
	start = now or loaded.om.scheduler.clock.now()
	rows = []
	shown: list[list[datetime]] = []
	for schedule in loaded.om.schedules:
		spec = schedule.spec
		zone = schedule_zone(spec)
		times = [] if schedule.paused else fire_times(spec, start, count)
		shown.append(times)
		rows.append(
			{
				"id": schedule.id,
				"agent": schedule.agent.name,
				"description": describe_schedule(spec),
				"timeZone": getattr(zone, "key", str(zone)),
				"paused": schedule.paused,
				"missedRuns": spec.missed_runs,
				"next": [t.isoformat() for t in times],
			}
		)
	for schedule in loaded.om.schedules:
		schedule.cancel()  # listed, not served: nothing to warn about
	out = sys.stdout
	if as_json:
		out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
		return ExitCode.SUCCESS
	if not rows:
		out.write(f"{file}: no schedules\n")
		return ExitCode.SUCCESS
	for row, times in zip(rows, shown, strict=True):
		out.write(f"{row['id']} ({row['agent']}): {row['description']}\n")
		if row["paused"]:
			out.write("  paused: no runs until resumed\n")
		for moment in times:
			out.write(f"  {moment.strftime('%a %Y-%m-%d %H:%M:%S %Z')}\n")
	return ExitCode.SUCCESS
