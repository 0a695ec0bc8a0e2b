"""A subcommand shipped by a plugin: ``openmolt weather-report`` (the ``openmolt.commands`` group)."""

from __future__ import annotations

from openmolt_core import hookimpl
from openmolt_core.plugins import CommandRegistrar


def report(args: list[str]) -> int:
	"""Print the report for the places given; exit 3 without any."""
	if not args:
		print("weather-report: name a place")
		return 3
	print("sunny in " + ", ".join(args))
	return 0


@hookimpl
def register_commands(register: CommandRegistrar) -> None:
	register("weather-report", report, summary="print a made-up weather report")
