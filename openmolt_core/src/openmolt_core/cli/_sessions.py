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
	url = "://" in store
	if url and not store.startswith(("postgresql://", "postgres://", "sqlite://")):
		# Not taken for a file named 'mysql:/...' (which would be made, empty, and "pruned").
		return _refused(
			f"{_shown(store)} is no store sessions are kept in: give a SQLite file or a postgresql:// URL"
		)
	try:
		if url:
			database = store.replace("postgres://", "postgresql://", 1)
			report = await SQLAlchemySession.prune_store(
				database, idle_days=ns.idle, dry_run=ns.dry_run
			)
			where = "the database"
		else:
			report = await SQLiteSession.prune_store(store, idle_days=ns.idle, dry_run=ns.dry_run)
			where = store
	except Exception as exc:
		if not _unreadable(exc):
			raise
		lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
		reason = (lines[0] if lines else type(exc).__name__).removeprefix(f"{store}: ")
		return _refused(f"cannot open the store {_shown(store)}: {reason}")
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


def _shown(store: str) -> str:
	"""The store as said in a message: a URL's password left out."""
	head, sep, rest = store.partition("://")
	if sep and "@" in rest.split("/", 1)[0]:
		auth, _, host = rest.partition("@")
		rest = f"{auth.split(':', 1)[0]}@{host}"
	return f"{head}{sep}{rest}"


def _unreadable(exc: BaseException) -> bool:
	"""Whether ``exc`` says the store cannot be read (a folder, no database, a server down)."""
	import sqlite3

	if isinstance(exc, OSError | sqlite3.Error):
		return True
	sa_errors = sys.modules.get("sqlalchemy.exc")
	return sa_errors is not None and isinstance(exc, sa_errors.SQLAlchemyError)


def _refused(message: str) -> int:
	"""Say why the store was refused, in one line; the exit code of a usage error."""
	from openmolt_core.cli._terminal import printable

	sys.stderr.write(printable(f"openmolt sessions prune: --store: {message}") + "\n")
	return 2


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
