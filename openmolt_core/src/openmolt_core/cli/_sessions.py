"""``openmolt sessions``: the conversations' store, listed, shown and kept small.

The CLI's and ``openmolt serve``'s sessions live in one SQLite file (`openmolt_core.sessions.
default_path`: ``$OPENMOLT_SESSIONS``, else ``~/.local/state/openmolt/sessions.db``), or, for a
server given a ``postgresql://`` store, in that database. ``list`` shows the sessions, the latest
active first, with how many items each keeps and pruning removed; ``show ID`` one session's
items as a transcript (or JSON), masked again with the secrets known now. Pruning removes the
turns a summary covers (no run reads them again) and, with ``--idle DAYS``, the sessions nobody
wrote in for that long; ``--dry-run`` only counts. Listing and showing only read: a store that is
missing or another program's is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import anyio

from openmolt_core._support.words import quantity
from openmolt_core.cli._argparse import CommandParser, count
from openmolt_core.cli._logs import _days

__all__ = ["ACTIONS", "main"]

ACTIONS = ("list", "show", "prune")
"""The actions of ``openmolt sessions``, as its help and completion list them."""


class _Refused(Exception):
	"""The store given cannot be read: said in one line, with the exit code of a usage error."""


def _target(ns: argparse.Namespace) -> tuple[str, str | None]:
	"""The store as given (or the default file), and its database URL (None: a SQLite file)."""
	from openmolt_core.sessions import default_path

	store = ns.store or str(default_path())
	if "://" not in store:
		return store, None
	if not store.startswith(("postgresql://", "postgres://", "sqlite://")):
		# Not taken for a file named 'mysql:/...' (which would be made, empty, and "pruned").
		raise _Refused(
			f"{_shown(store)} is no store sessions are kept in: give a SQLite file or a postgresql:// URL"
		)
	return store, store.replace("postgres://", "postgresql://", 1)


async def _reading(store: str, read: Callable[[], Awaitable[Any]]) -> Any:
	"""What ``read`` reads of the store; a store that cannot be read is `_Refused`."""
	try:
		return await read()
	except Exception as exc:
		if not _unreadable(exc):
			raise
		lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
		reason = (lines[0] if lines else type(exc).__name__).removeprefix(f"{store}: ")
		raise _Refused(f"cannot open the store {_shown(store)}: {reason}") from None


async def _prune(ns: argparse.Namespace) -> int:
	from openmolt_core.sessions import SQLAlchemySession, SQLiteSession

	store, url = _target(ns)
	if url is not None:
		report = await _reading(
			store,
			lambda: SQLAlchemySession.prune_store(url, idle_days=ns.idle, dry_run=ns.dry_run),
		)
		where = "the database"
	else:
		report = await _reading(
			store, lambda: SQLiteSession.prune_store(store, idle_days=ns.idle, dry_run=ns.dry_run)
		)
		where = store
	if ns.json:
		found: dict[str, Any] = {
			"sessions": report.sessions,
			"items": report.items,
			"deleted": list(report.deleted),
			"busy": list(report.busy),
			"dryRun": report.dry_run,
		}
		_write(json.dumps(found, ensure_ascii=False) + "\n")
		return 0
	verb = "would remove" if ns.dry_run else "removed"
	_write(
		f"{verb} {quantity(report.items, 'item')} that summaries cover, from "
		f"{quantity(report.sessions, 'session')} in {where}\n"
	)
	lines = []
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
	_write("".join(f"{line}\n" for line in lines))
	return 0


async def _listed(
	store: str, url: str | None, limit: int | None, session_ids: list[str] | None = None
) -> list[Any]:
	"""The store's sessions (those of ``session_ids``), the latest active first (`list_store`)."""
	from openmolt_core.sessions import SQLAlchemySession, SQLiteSession

	def read() -> Awaitable[list[Any]]:
		if url is not None:
			return SQLAlchemySession.list_store(url, limit=limit, session_ids=session_ids)
		return SQLiteSession.list_store(store, limit=limit, session_ids=session_ids)

	return list(await _reading(store, read))


def _iso(moment: float) -> str:
	return datetime.fromtimestamp(moment, UTC).isoformat()


def _local(moment: float) -> str:
	return datetime.fromtimestamp(moment).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def ago(moment: float, now: float | None = None) -> str:
	"""How long ago ``moment`` was, as people say it: ``just now``, ``3 days ago``.

	Args:
		moment: The time, in seconds since the epoch.
		now: The time now (default: the clock's).
	"""
	seconds = (time.time() if now is None else now) - moment
	if seconds < 60:  # a clock set back says "just now", not "-5 seconds ago"
		return "just now"
	for size, unit in ((365 * 86400, "year"), (30 * 86400, "month"), (7 * 86400, "week")):
		if seconds >= 2 * size:  # "2 weeks", not "1 week" for 13 days
			return f"{quantity(int(seconds // size), unit)} ago"
	for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
		if seconds >= size:
			return f"{quantity(int(seconds // size), unit)} ago"
	return "just now"  # pragma: no cover - less than a minute is said above


async def _list(ns: argparse.Namespace) -> int:
	store, url = _target(ns)
	found = await _listed(store, url, ns.count + 1)  # one more: whether there are more
	shown, more = found[: ns.count], len(found) > ns.count
	if ns.json:
		rows = [
			{
				"sessionId": s.session_id,
				"items": s.items,
				"pruned": s.pruned,
				"lastActive": _iso(s.last_active),
			}
			for s in shown
		]
		_write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
		return 0
	if not shown:  # said on stderr: stdout stays the list, empty
		from openmolt_core.cli._terminal import printable

		said = f"openmolt: no sessions in {_shown(store)}"
		print(printable(said), file=sys.stderr)
		return 0
	now = time.time()
	when = [f"{_local(s.last_active)} ({ago(s.last_active, now)})" for s in shown]
	width = max(len("LAST ACTIVE"), *map(len, when))
	lines = [f"{'LAST ACTIVE':<{width}}  {'ITEMS':>7}  {'PRUNED':>7}  SESSION"]
	lines += [
		f"{w:<{width}}  {s.items:>7,}  {s.pruned:>7,}  {s.session_id}"
		for w, s in zip(when, shown, strict=True)
	]
	if more:
		lines.append(f"(the {ns.count:,} latest; -n {ns.count * 2} shows more)")
	_write("\n".join(lines) + "\n")
	return 0


def _content(value: Any) -> str:
	"""An item's content as text: text as it is, anything else as indented JSON."""
	if isinstance(value, str):
		return value
	return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _body(text: str) -> list[str]:
	return [f"    {line}".rstrip() for line in text.splitlines() or [""]]


def _listed_in(item: dict[str, Any], key: str) -> list[dict[str, Any]]:
	"""The dicts of an item's list ``key`` (``attachments``, ``notes``); none if it is no list."""
	found = item.get(key)
	return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []


def _said(item: dict[str, Any], position: int) -> list[str]:
	"""One item as the transcript shows it: a heading (who, which run, how), then its words."""
	role = item.get("role")
	notes: list[str] = []
	if item.get("run_id") is not None:
		notes.append(f"run {item['run_id']}")
	if role == "agent" and item.get("status"):
		notes.append(str(item["status"]))
	if item.get("user") is not None:
		notes.append(f"for {item['user']}")
	if item.get("private"):
		notes.append("its user's runs only")
	if item.get("tainted"):
		notes.append("untrusted")
	through = item.get("through")
	covered = f" of items 1-{through}" if isinstance(through, int) and through > 0 else ""
	heading = {
		"user": "user",
		"agent": "agent",
		"memory": "notes",
		"summary": f"summary{covered}",
		"pending": "a durable run's turn, under way",
		"settled": "a durable run's turn, appended later",
	}.get(str(role), f"{role}")
	lines = [f"#{position} {heading}" + (f" ({', '.join(notes)})" if notes else "") + ":"]
	if role in ("pending", "settled"):
		lines[0] = lines[0].removesuffix(":")
		return lines
	content = item.get("content")
	if role == "agent" and content is None:
		lines.append("    (said nothing)")
	elif content is not None and content != "":
		lines += _body(_content(content))
	elif role == "summary":
		lines.append("    (the items it covers were dropped)")
	for attached in _listed_in(item, "attachments"):
		name = attached.get("name") or "a file"
		lines.append(f"    [attached: {name}, {attached.get('mediaType') or 'of no stated type'}]")
	if "output" in item:
		lines.append("    output:")
		lines += [f"    {line}" for line in _body(_content(item["output"]))]
	for note in _listed_in(item, "notes") if role == "summary" else []:
		if note.get("content"):
			who = f" of {note['user']}" if note.get("user") is not None else ""
			lines.append(f"    notes{who}:")
			lines += [f"    {line}" for line in _body(_content(note["content"]))]
	return lines


async def _show(ns: argparse.Namespace) -> int:
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.sessions import SQLAlchemySession, SQLiteSession

	store, url = _target(ns)
	asked = await _listed(store, url, None, [ns.session_id])
	found = asked[0] if asked else None
	if found is None:  # every id read only now, for the ones it may mistype
		from openmolt_core._support.suggest import suggestion

		known = await _listed(store, url, None)
		where = _shown(store)
		if not known:
			raise ConfigurationError(f"no session {ns.session_id!r}: no sessions in {where}")
		hint = suggestion(ns.session_id, [s.session_id for s in known], noun="sessions")
		raise ConfigurationError(
			f"no session {ns.session_id!r} in {where}; {hint} (`openmolt sessions list` lists them)"
		)
	session: Any = (
		SQLAlchemySession(found.session_id, url)
		if url is not None
		else SQLiteSession(found.session_id, store)
	)
	items: list[dict[str, Any]] = await _reading(store, session.get_items)
	if ns.json:
		whole = {
			"sessionId": found.session_id,
			"pruned": found.pruned,
			"lastActive": _iso(found.last_active),
			"items": items,
		}
		_write(json.dumps(whole, indent=2, ensure_ascii=False, default=str) + "\n")
		return 0
	lines = [
		f"session {found.session_id}: {quantity(len(items), 'item')}"
		+ (f" ({found.pruned:,} before them pruned: a summary covers them)" if found.pruned else "")
		+ f", last active {_local(found.last_active)} ({ago(found.last_active)})",
	]
	for index, item in enumerate(items):
		lines.append("")
		lines += _said(item, found.pruned + index + 1)
	_write("\n".join(lines) + "\n")
	return 0


def _write(text: str) -> None:
	"""Write what the store holds, masked again with the secrets known now, made printable.

	A turn stored by a process that did not know a secret yet holds it as it was; a session id
	or an item may hold characters a terminal would obey.

	Args:
		text: The text.
	"""
	from openmolt_core._support.masking import mask_known
	from openmolt_core.cli._terminal import printable

	sys.stdout.write(printable(mask_known(text)))


def _shown(store: str) -> str:
	"""The store as said in a message: a URL's password left out (`shown_url`), a path as given."""
	from openmolt_core._support.masking import shown_url

	return shown_url(store) if "://" in store else store


def _unreadable(exc: BaseException) -> bool:
	"""Whether ``exc`` says the store cannot be read (a folder, no database, a server down)."""
	import sqlite3

	if isinstance(exc, OSError | sqlite3.Error):
		return True
	sa_errors = sys.modules.get("sqlalchemy.exc")
	return sa_errors is not None and isinstance(exc, sa_errors.SQLAlchemyError)


def _store_option(parser: argparse.ArgumentParser) -> None:
	parser.add_argument(
		"--store",
		metavar="PATH|URL",
		help="the sessions' SQLite file or database URL (default: $OPENMOLT_SESSIONS, else "
		"~/.local/state/openmolt/sessions.db)",
	)


def main(args: list[str]) -> int:
	"""Run ``openmolt sessions``.

	Args:
		args: The arguments after ``sessions``.
	"""
	parser = CommandParser(
		prog="openmolt sessions",
		description="The conversations' store (--session, -c, openmolt serve's chats): list its "
		"sessions, show one, prune it.",
	)
	sub = parser.add_subparsers(dest="action", required=True, metavar="|".join(ACTIONS))
	listing = sub.add_parser(
		"list",
		help="the sessions, the latest active first, with their items kept and pruned",
		description="List the sessions, the latest active first: when each was last written "
		"in, how many items it keeps, and how many pruning removed. Only reads the store.",
	)
	listing.add_argument(
		"-n", "--count", type=count, default=20, help="how many sessions (default 20)"
	)
	listing.add_argument("--json", action="store_true", help="print JSON")
	_store_option(listing)
	show = sub.add_parser(
		"show",
		help="one session's items as a transcript (--json: as stored)",
		description="Show one session's items, oldest first, as a transcript (masked with the "
		"secrets known now), or as stored with --json. Only reads the store.",
	)
	show.add_argument("session_id", metavar="ID", help="the session's id, as `list` shows it")
	show.add_argument("--json", action="store_true", help="print JSON")
	_store_option(show)
	prune = sub.add_parser(
		"prune",
		help="remove turns summaries cover, and sessions idle longer than --idle DAYS",
		description="Remove the turns a summary covers (no run reads them again), and with "
		"--idle the sessions nobody wrote in for that long. A session a run holds, or with a "
		"durable turn pending, is kept.",
	)
	_store_option(prune)
	prune.add_argument(
		"--idle",
		type=_days,
		metavar="DAYS",
		help="also delete the sessions idle longer than DAYS days (30, 1.5 or 30d)",
	)
	prune.add_argument("--dry-run", action="store_true", help="only count what would go")
	prune.add_argument("--json", action="store_true", help="print JSON")
	ns = parser.parse_args(args)
	if ns.action == "prune" and ns.idle is not None and ns.idle < 0:
		prune.error("--idle needs a number of days of at least 0")
	act = {"list": _list, "show": _show, "prune": _prune}[ns.action]
	try:
		return anyio.run(act, ns)
	except _Refused as refused:
		from openmolt_core.cli._terminal import printable

		said = f"openmolt sessions {ns.action}: --store: {refused}"
		sys.stderr.write(printable(said) + "\n")
		return 2
