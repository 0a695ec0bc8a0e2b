"""``openmolt sessions prune``: keep the conversations' store small.

The CLI's and ``openmolt serve``'s sessions live in one SQLite file (`openmolt_core.sessions.
default_path`: ``$OPENMOLT_SESSIONS``, else ``~/.local/state/openmolt/sessions.db``), or, for a
server given a ``postgresql://`` store, in that database. Pruning removes the turns a summary
covers (no run reads them again) and, with ``--idle DAYS``, the sessions nobody wrote in for
that long; ``--dry-run`` only counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from openmolt_core._support.words import quantity
from openmolt_core.cli._argparse import CommandParser
from openmolt_core.cli._logs import _days

__all__ = ["main"]


async def _prune(ns: argparse.Namespace) -> int:
	from openmolt_core.sessions import SQLAlchemySession, SQLiteSession, default_path

	store = ns.store or str(default_path())
	if store.startswith(("postgresql://", "postgres://", "sqlite://")):
		url = store.replace("postgres://", "postgresql://", 1)
		report = await SQLAlchemySession.prune_store(url, idle_days=ns.idle, dry_run=ns.dry_run)
		where = "the database"
	else:
		report = await SQLiteSession.prune_store(store, idle_days=ns.idle, dry_run=ns.dry_run)
		where = store
	if ns.json:
		found: dict[str, Any] = {
			"sessions": report.sessions,
			"items": report.items,
			"deleted": list(report.deleted),
			"busy": list(report.busy),
			"dryRun": report.dry_run,
		}
		sys.stdout.write(json.dumps(found, ensure_ascii=False) + "\n")
		return 0
	verb = "would remove" if ns.dry_run else "removed"
	lines = [
		f"{verb} {quantity(report.items, 'item')} that summaries cover, from "
		f"{quantity(report.sessions, 'session')} in {where}"
	]
	if ns.idle is not None:
		lines.append(
			f"{'would delete' if ns.dry_run else 'deleted'} "
			f"{quantity(len(report.deleted), 'session')} idle longer than {ns.idle:g} days"
		)
		lines += [f"  {sid}" for sid in report.deleted]
		if report.busy:
			lines.append(
				f"kept {quantity(len(report.busy), 'idle session')} a run still needs "
				"(a turn under way, or a durable turn pending):"
			)
			lines += [f"  {sid}" for sid in report.busy]
	from openmolt_core.cli._terminal import printable

	sys.stdout.write(printable("\n".join(lines) + "\n"))
	return 0


def main(args: list[str]) -> int:
	"""Run ``openmolt sessions``.

	Args:
		args: The arguments after ``sessions``.
	"""
	parser = CommandParser(
		prog="openmolt sessions",
		description="The conversations' store (--session, -c, openmolt serve's chats).",
	)
	sub = parser.add_subparsers(dest="action", required=True, metavar="prune")
	prune = sub.add_parser(
		"prune",
		help="remove turns summaries cover, and sessions idle longer than --idle DAYS",
		description="Remove the turns a summary covers (no run reads them again), and with "
		"--idle the sessions nobody wrote in for that long. A session a run holds, or with a "
		"durable turn pending, is kept.",
	)
	prune.add_argument(
		"--store",
		metavar="PATH|URL",
		help="the sessions' SQLite file or database URL (default: $OPENMOLT_SESSIONS, else "
		"~/.local/state/openmolt/sessions.db)",
	)
	prune.add_argument(
		"--idle",
		type=_days,
		metavar="DAYS",
		help="also delete the sessions idle longer than DAYS days (30, 1.5 or 30d)",
	)
	prune.add_argument("--dry-run", action="store_true", help="only count what would go")
	prune.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args)
	if ns.idle is not None and ns.idle < 0:
		parser.error("--idle needs a number of days of at least 0")
	return anyio.run(_prune, ns)
