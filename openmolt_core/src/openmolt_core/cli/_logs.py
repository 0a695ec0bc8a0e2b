"""``openmolt logs``: the runs the command recorded, readable without the viewer.

Every ``openmolt`` run is recorded in the run store (`openmolt_core.runstore.default_path`:
``~/.local/state/openmolt/runs.db``, or ``$OPENMOLT_RUN_STORE``; ``OPENMOLT_RUN_STORE=off``
records nothing). ``openmolt logs`` lists the newest runs, ``openmolt logs RUN_ID`` shows one with
its events, ``openmolt logs search TEXT`` (``-q TEXT``) the runs whose input, output or error has
the text, ``--prune DAYS`` deletes runs older than that.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import anyio

from openmolt_core._support.masking import mask_url_logins_deep, mask_urls, masked_excerpt
from openmolt_core._support.words import quantity
from openmolt_core.cli._argparse import CommandParser, count
from openmolt_core.cli._terminal import excerpt, printable
from openmolt_core.errors import ConfigurationError
from openmolt_core.result import RunStatus

__all__ = ["STATUSES", "main"]

STATUSES: tuple[str, ...] = (*get_args(RunStatus), "running", "cancelled")
"""What ``--status`` accepts: how a run ended, or ``running``, or ``cancelled`` (Ctrl-C)."""


def _days(text: str) -> float:
	"""``--prune``'s value: a number of days, ``30`` or ``30d``."""
	try:
		return float(text.strip().lower().removesuffix("d"))
	except ValueError:
		raise argparse.ArgumentTypeError(
			f"{text!r} is not a number of days (30, 1.5 or 30d)"
		) from None


def _store() -> Any:
	from openmolt_core.runstore import RunStore, default_path

	path = default_path()
	if path is None:
		raise ConfigurationError(
			"the run store is off (OPENMOLT_RUN_STORE=off): nothing is recorded to show"
		)
	return RunStore(path)


def _short(value: Any, width: int) -> str:
	value = mask_url_logins_deep(value)  # a stored run's words for a person: a URL's login too
	text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
	text = " ".join((text or "").split())
	if len(text) <= width:
		return text  # the whole output is masked when it is written
	return masked_excerpt(text, width - 1, more="…")  # masked before the cut


def _row(run: Any) -> dict[str, Any]:
	"""A stored run as ``--json`` prints it: a URL's login masked in its output and its error.

	As a person is shown a run's output everywhere (`mask_url_logins_deep`): a run stored
	before the run store masked it too.
	"""
	row: dict[str, Any] = mask_url_logins_deep(run.to_dict())  # its error too
	return row


def _when(iso: str) -> str:
	try:
		moment = datetime.fromisoformat(iso)
	except ValueError:
		return iso
	return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _cost(usage: dict[str, Any] | None) -> str:
	"""``1,234 tokens, $0.0012``, or ``..., cost unknown`` as a run's summary says it.

	A run that used no token (it failed before the model answered) has no cost to tell:
	``0 tokens``, as its summary says it, not "cost unknown".
	"""
	usage = usage or {}
	tokens = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
	from openmolt_core._support.words import money

	unpriced = usage.get("unpriced_calls")
	said = money(usage.get("cost_usd"), unpriced if isinstance(unpriced, int) else 0)
	if said is None and not tokens:
		return quantity(tokens, "token")
	return f"{quantity(tokens, 'token')}, {said or 'cost unknown'}"


def _list(runs: list[Any]) -> str:
	from openmolt_core.runstore import caller_of

	lines = []
	for run in runs:
		lines.append(
			f"{_when(run.started)}  {run.run_id}  {run.agent}  {run.status}  {quantity(run.steps, 'step')}, "
			f"{_cost(run.usage)}"
		)
		caller = caller_of(run.run_id, run.trigger)
		if caller:  # listed when a filter finds it: its caller's `openmolt logs ID` lists it
			lines.append(f"    nested in {caller}")
		if run.user:
			lines.append(f"    for end user {_short(run.user, 100)}")
		lines.append(f"    input: {_short(run.input, 100)}")
		if run.error:
			lines.append(f"    error: {_short(run.error, 100)}")
		elif run.output is not None:
			lines.append(f"    output: {_short(run.output, 100)}")
	return "\n".join(lines) + "\n"


async def _nested_rows(store: Any, run: Any) -> tuple[list[Any], bool]:
	"""The runs nested in a run, oldest first, and whether it has more than it lists.

	Only the latest `openmolt_core.runstore.NESTED_SHOWN` are listed.
	"""
	from openmolt_core.runstore import NESTED_SHOWN

	rows = await store.runs(NESTED_SHOWN + 1, nested_in=run.run_id)  # one more: are there more
	return sorted(rows[:NESTED_SHOWN], key=lambda r: r.started), len(rows) > NESTED_SHOWN


async def _nested(store: Any, run: Any) -> str:
	"""The runs nested in a run, a line each, oldest first (``""``: none).

	Only the latest `openmolt_core.runstore.NESTED_SHOWN`, and a line that says so when there
	are more.
	"""
	from openmolt_core.runstore import NESTED_SHOWN

	rows, more = await _nested_rows(store, run)
	if not rows:
		return ""
	lines = [
		"",
		"nested runs (a tool call's, a guardrail agent's; each its own cost, which its caller's "
		"holds when it counts it: `openmolt logs ID` shows one):",
	]
	for nested in rows:
		lines.append(
			f"  {nested.run_id}  {nested.agent}  {nested.status}  "
			f"{quantity(nested.steps, 'step')}, {_cost(nested.usage)}"
		)
	if more:  # the newest are listed: the others are found by a filter
		lines.append(
			f"  (the latest {NESTED_SHOWN:,} only; `openmolt logs --agent NAME -n 1000` lists a "
			"nested agent's runs, each marked with the run it nests in)"
		)
	return "\n".join(lines) + "\n"


_PAGE = 1000
"""How many of a run's events ``openmolt logs RUN`` reads at once (it writes each page as read)."""


async def _pages(store: Any, run_id: str) -> AsyncIterator[list[Any]]:
	"""A run's events, a page at a time, to its last (memory holds one page, whatever the run)."""
	after = 0
	while True:
		page = await store.events(run_id, after=after, limit=_PAGE)
		if page:
			yield page
		if len(page) < _PAGE:
			return
		after = page[-1].id


def _story(event: Any) -> dict[str, Any]:
	"""A stored event as JSON, its data read with the story's rule again (`mask_urls`).

	The store masked it as it wrote it, with the rule of its writer's version: an older one,
	or another process's, may have kept a ``?code=`` or a double encoding the rule masks now.
	"""
	return {**event.to_dict(), "data": mask_urls(event.data)}


def _event_line(event: Any) -> str:
	detail = {
		k: v
		for k, v in mask_urls(event.data).items()
		if k not in ("run_id", "agent", "step")
		and not (k in ("parent_run_id", "replayed") and not v)
	}
	return f"  {event.step:>3}  {event.name:<20} {_short(detail, 110)}\n"


def _head(run: Any) -> str:
	"""What ``openmolt logs RUN`` says of a run before its events: who, how, where, for whom."""
	lines = [
		f"run {run.run_id}: {run.agent}"
		+ (f" with {run.model}" if run.model != run.agent else "")  # -m's agent is its model
		+ f", {run.status}",
		f"started {_when(run.started)}"
		+ (f", ended {_when(run.ended)}" if run.ended else "")
		+ f", {quantity(run.steps, 'step')}, {_cost(run.usage)}",
	]
	from openmolt_core.runstore import caller_of

	caller = caller_of(run.run_id, run.trigger)
	if caller:  # as the list's row and the viewer's run page say it
		lines.append(f"nested in {caller}: `openmolt logs {caller}` lists its nested runs")
	if run.user:
		lines.append(f"for end user {_short(run.user, 200)}")
	lines.append(f"input: {_short(run.input, 400)}")
	if run.output is not None:
		lines.append(f"output: {_short(run.output, 400)}")
	if run.error:  # bounded: an error may be a service's page, thousands of lines long
		whole = f"`openmolt logs {run.run_id} --json` prints it whole"
		lines.append(f"error: {excerpt(run.error, whole=whole)}")
	lines.append("")
	lines.append("events:")
	return "\n".join(lines) + "\n"


async def _show_one(store: Any, run: Any, *, as_json: bool) -> None:
	"""Write one run, its events (a page at a time: `_pages`) and the runs nested in it.

	As JSON: the run's row with ``nested`` (the nested runs' rows, as `_nested` lists them),
	``nested_more`` (whether it has more) and ``events``.
	"""
	if not as_json:
		_show(_head(run))
		async for page in _pages(store, run.run_id):
			_show("".join(_event_line(e) for e in page))
		_show(await _nested(store, run))
		return
	# The document `json.dumps({**row, "nested": [...], "nested_more": more, "events": [...]},
	# indent=2)` makes, written in pieces: the nested runs' rows are those `_nested` lists.
	nested, more = await _nested_rows(store, run)
	document = {
		**_row(run),
		"nested": [_row(n) for n in nested],
		"nested_more": more,
		"events": [],
	}
	head = json.dumps(document, indent=2, ensure_ascii=False, default=str)
	_show(head.removesuffix("[]\n}") + "[")
	first = True
	async for page in _pages(store, run.run_id):
		items = [
			textwrap.indent(
				json.dumps(_story(e), indent=2, ensure_ascii=False, default=str), "    "
			)
			for e in page
		]
		_show(("\n" if first else ",\n") + ",\n".join(items))
		first = False
	_show("]\n}\n" if first else "\n  ]\n}\n")


async def _main(ns: argparse.Namespace) -> int:
	store = _store()
	if not store.path.exists():
		if ns.run_id:  # one run asked for: none is there, as `logs ID` says once runs exist
			raise ConfigurationError(f"no run {ns.run_id!r}: no runs recorded yet ({store.path})")
		sys.stdout.write("[]\n" if ns.json else f"no runs recorded yet ({store.path})\n")
		return 0
	store.check()  # another kind of file (OPENMOLT_RUN_STORE=agent.json): one line, not a crash
	if ns.prune is not None:
		cut = (datetime.now(UTC) - timedelta(days=ns.prune)).isoformat()
		removed = await store.prune(cut)
		days = "day" if ns.prune == 1 else "days"
		print(
			f"removed {quantity(removed, 'run')} older than {ns.prune:g} {days} from {store.path}"
		)
		return 0
	if ns.run_id:
		from openmolt_core.cli._runids import ENOUGH, resolve_run_id

		run = await store.run(ns.run_id)
		if run is None:  # a prefix, as the summary's id shortened by hand
			ids = await store.run_ids(ns.run_id, limit=ENOUGH)
			if not ids:  # `openmolt logs Ada`: a word to look for, not an id
				agents = {row["agent"] for row in await store.totals("")}
				named = [a for a in sorted(agents) if a.casefold() == ns.run_id.casefold()]
				import shlex

				if named:  # `openmolt logs Greeter`: an agent's name
					raise ConfigurationError(
						f"no run {ns.run_id!r} in {store.path}; `openmolt logs --agent "
						f"{shlex.quote(named[0])}` lists that agent's runs"
					)
				if ns.run_id == "search":  # `openmolt logs search`, the text forgotten
					raise ConfigurationError(
						"`openmolt logs search` needs the text to find: `openmolt logs search "
						"TEXT` (or -q TEXT) lists the runs whose input, output or error has it"
					)
				raise ConfigurationError(
					f"no run {ns.run_id!r} in {store.path}; `openmolt logs search "
					f"{shlex.quote(ns.run_id)}` finds the runs whose input, output or error has it"
				)
			run = await store.run(resolve_run_id(ns.run_id, ids, where=f"in {store.path}"))
		if run is None:  # pruned meanwhile
			raise ConfigurationError(f"no run {ns.run_id!r} in {store.path}")
		await _show_one(store, run, as_json=ns.json)
		return 0
	# The runs nested in others are listed on their caller (`logs ID`), as in the run viewer,
	# unless a filter finds them (`--agent Judge`: a guardrail agent's runs).
	found = ns.agent is not None or ns.status is not None or ns.search is not None
	runs = await store.runs(
		ns.count + 1,  # one more: whether -n left some out, said as `sessions list` says it
		agent=ns.agent,
		status=ns.status,
		search=ns.search,
		user=ns.user,
		top_level=not found,
	)
	more, runs = len(runs) > ns.count, runs[: ns.count]
	if ns.json:
		_show(json.dumps([_row(r) for r in runs], indent=2, ensure_ascii=False, default=str) + "\n")
	elif runs:
		shown = _list(runs)
		if more:
			shown += f"(the {ns.count:,} latest; -n {ns.count * 2} shows more)\n"
		_show(shown)
	else:  # said on stderr: stdout stays the list, empty, for scripts
		filters = [
			f"{name} {value!r}"
			for name, value in (
				("-q", ns.search),
				("--agent", ns.agent),
				("--status", ns.status),
				("--user", ns.user),
			)
			if value is not None
		]
		said = (
			f"no recorded run matches {', '.join(filters)}" if filters else "no runs recorded yet"
		)
		if ns.agent is not None:  # `--agent Greter`: the agent it mistypes, if one ran
			from openmolt_core._support.suggest import typo_of

			agents = {row["agent"] for row in await store.totals("")} - {ns.agent}
			near = typo_of(ns.agent, sorted(agents))
			said += f"; did you mean --agent {near!r}?" if near else ""
		print(f"openmolt: {said} ({store.path})", file=sys.stderr)
	return 0


def _show(text: str) -> None:
	"""Write what the store holds, masked again with the secrets known now (the environment's).

	A run recorded by a process that did not know a secret yet holds it as it was.
	"""
	from openmolt_core._support.masking import mask_known

	sys.stdout.write(printable(mask_known(text)))


def main(args: list[str]) -> int:
	"""Run ``openmolt logs``.

	Args:
		args: The arguments after ``logs``.
	"""
	parser = CommandParser(
		prog="openmolt logs",
		description="The runs the openmolt command recorded (newest first), or one run's events.",
	)
	parser.add_argument(
		"run_id",
		nargs="*",
		metavar="RUN_ID | search TEXT",
		help="show this run with its events (its id, or a unique prefix); `search TEXT` is -q TEXT",
	)
	parser.add_argument("-n", "--count", type=count, default=10, help="how many runs (default 10)")
	parser.add_argument(
		"-q",
		"--search",
		help="only runs whose input, output or error has this (also: openmolt logs search TEXT)",
	)
	parser.add_argument("--agent", help="only this agent's runs")
	parser.add_argument("--user", help="only the runs for this end user (agent.run(user=...))")
	parser.add_argument(
		"--status",
		choices=STATUSES,
		metavar="STATUS",
		help=f"only runs with this status: {', '.join(STATUSES)}",
	)
	parser.add_argument("--json", action="store_true", help="print JSON")
	parser.add_argument(
		"--prune",
		type=_days,
		metavar="DAYS",
		help="delete the runs older than DAYS days (30, 1.5, or 30d)",
	)
	ns = parser.parse_intermixed_args(args)  # `search -n 5 Ada`: the words around the options
	words = ns.run_id
	if len(words) > 1 and words[0] == "search":  # `openmolt logs search Ada`: -q Ada
		if ns.search is not None:
			parser.error("give the text once: `search TEXT` or -q TEXT")
		ns.search = " ".join(words[1:])  # `search hello world`, unquoted: the words as typed
		words = []
	elif len(words) > 1:
		parser.error(
			f"give one run id, not {len(words)} words; `openmolt logs search TEXT` (or -q TEXT) "
			"finds the runs whose input, output or error has a text"
		)
	ns.run_id = words[0] if words else None  # `openmolt logs search` alone: a run id, as before
	if ns.prune is not None and ns.prune < 0:
		parser.error("--prune needs a number of days of at least 0")
	return anyio.run(_main, ns)
