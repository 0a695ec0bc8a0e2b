"""`Viewer`: the run viewer's server, bound to 127.0.0.1 with a random token.

```python
om = OpenMolt(run_store="runs.db")
agent = om.create_agent(..., on_human_input_request=viewer.ask)   # the page answers
async with Viewer(om) as viewer:
    print(viewer.url)                   # http://127.0.0.1:PORT/?token=...
    await agent.run("...")
```

The viewer serves in the caller's event loop (asyncio: uvicorn needs it), so the runs it shows
live and the questions they ask are plain objects of the same process. Runs of other processes
come from the run store (`openmolt_core.runstore`), which it polls.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
import uvicorn
from anyio.abc import TaskGroup

from openmolt_core import runstore
from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.observe import describe_event
from openmolt_core.openmolt import OpenMolt
from openmolt_core.runstore import RunStore, caller_of
from openmolt_core.secrets import register_key
from openmolt_core.triggers import strong_enough
from openmolt_ui._conn import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, guarded_protocol
from openmolt_ui._listen import EmbeddedServer, check_remote, is_loopback, listen
from openmolt_ui._live import (
	ApprovalDecision,
	LiveRuns,
	PendingApproval,
	by_model,
	clean_start,
	tainted_by,
	tainted_calls,
)
from openmolt_ui._waiting import capability_waits, waiting_for

if TYPE_CHECKING:
	from openmolt_core.agent import Agent

__all__ = ["SIGN_IN_TTL", "SignIn", "Viewer"]

log: logging.Logger = logging.getLogger("openmolt")

_RESUMING = {"status": "cannot", "error": "this run is being resumed already"}
_ENDED_KEEP = 64  # ended runs whose saved state's facts the viewer keeps (taint, usage per model)


_REFUSED_WITHIN = 3.0  # seconds a resume is awaited for a refusal (another surface answered)


class Viewer:
	"""Serves the live run viewer on a local port, with a random token every request must carry.

	Args:
		om: An OpenMolt instance whose runs to show live (its run store is used too); more can be
			added with `watch`.
		store: The run store to show history from (a path or a `RunStore`); default: the
			instance's ``run_store``.
		agents: Agents whose parked runs (from the store) the page may resume with an answer.
		host: The address to bind (default 127.0.0.1; another address is refused unless
			``allow_remote``: it exposes the runs and approvals to the network, and the token
			travels in clear over plain HTTP).
		allow_remote: Allow a non-loopback ``host``.
		port: The port (0: any free port; see `url`).
		token: The token (default: 32 random bytes, URL-safe); one given has at least 8
			characters (`openmolt_core.triggers.strong_enough`).
		poll: Seconds between reads of the run store for runs of other processes.
		max_connections: The most connections open at once (past it: ``503``, closed).
		header_timeout: Seconds a request's headers may take to arrive (else ``408``).
		body_timeout: Seconds a request's body may take to arrive (else ``408``).

	Raises:
		ConfigurationError: A limit is not positive, or a token given is too short.
	"""

	def __init__(
		self,
		om: OpenMolt | None = None,
		*,
		store: RunStore | str | Path | None = None,
		agents: Sequence[Agent] = (),
		host: str = "127.0.0.1",
		port: int = 0,
		token: str | None = None,
		poll: float = 1.0,
		allow_remote: bool = False,
		max_connections: int = DEFAULT_MAX_CONNECTIONS,
		header_timeout: float = DEFAULT_HEADER_TIMEOUT,
		body_timeout: float = 10.0,
	) -> None:
		for name, value in (
			("max_connections", max_connections),
			("header_timeout", header_timeout),
			("body_timeout", body_timeout),
		):
			if not value > 0:
				raise ConfigurationError(f"Viewer: {name} must be more than 0, not {value!r}")
		self.allow_remote = allow_remote
		self.max_connections = max_connections
		self.header_timeout = header_timeout
		self.body_timeout = body_timeout
		self.live = LiveRuns()
		self.page: int = 5000
		"""The most of a run's stored events read at once (its stream reads them a page at a
		time, without waiting between full pages)."""
		# A token given must be one no log would show and nobody would guess (random: 43).
		self.token: str = (
			strong_enough(token, what="the viewer's token (Viewer(token=...))")
			if token
			else secrets.token_urlsafe(32)
		)
		register_key(self, self.token)  # masked in logs (an access line's ?token=) and runs
		self.host = host
		self.port = port
		self.options: tuple[str, str] = ("--host", "--port")
		"""The command's options for `host` and `port`, named when the address cannot be used
		(``openmolt serve`` sets ``--ui-host`` and ``--ui-port``)."""
		self.poll = poll
		self.store: RunStore | None = (
			store if isinstance(store, RunStore) or store is None else RunStore(store)
		)
		self.agents: dict[str, Agent] = {a.name: a for a in agents}
		self.closing = False
		self._tg: TaskGroup | None = None
		self._server: EmbeddedServer | None = None
		self._resuming: set[str] = set()
		self._ended: dict[str, tuple[str, dict[str, Any]]] = {}
		self._stopped: anyio.Event | None = None
		if om is not None:
			self.watch(om)

	# wiring -----------------------------------------------------------------------------

	@property
	def loopback(self) -> bool:
		"""Whether the viewer binds a loopback address only."""
		return is_loopback(self.host)

	def watch(self, om: OpenMolt) -> None:
		"""Show the runs of another OpenMolt instance live (and use its run store if none is set)."""
		if self.live not in om.observers:
			om.observers.append(self.live)
		if self.store is None and om.run_store is not None:
			self.store = om.run_store

	def add_agent(self, agent: Agent) -> None:
		"""Let the page resume parked runs of this agent (matched by name)."""
		self.agents[agent.name] = agent

	async def ask(self, message: str) -> str:
		"""A human-input handler for ``create_agent(on_human_input_request=viewer.ask)``.

		The question shows in the page and the run waits for the answer typed there.
		"""
		return await self.live.ask(message)

	async def approve(self, request: Any) -> Any:
		"""An approval handler: ``create_agent(on_approval_request=viewer.approve)``.

		The call waits in the page (tool, redacted input, the agent's reason, the rule); the
		person's choice comes back as ``request.approve()``, ``request.approve(input=...)`` or
		``request.deny(reason)`` (`openmolt_core.approvals.ApprovalRequest`).
		"""
		decision = await self.live.approvals.ask(
			PendingApproval(
				tool=request.tool,
				input=dict(request.input),
				reason=request.reason,
				run_id=request.run_id,
				agent=request.agent,
				step=_step_of(request.call),
				rule=getattr(request, "rule", ""),
			)
		)
		return _apply(request, decision)

	async def request_approval(self, pending: PendingApproval) -> ApprovalDecision:
		"""Ask a person in the page to approve a tool call, and wait for the decision.

		This is the interface an approval handler calls: give it the pending call (tool,
		redacted input, reason); it returns approve, deny with a reason, or approve with an
		edited input.
		"""
		return await self.live.approvals.ask(pending)

	# what the page reads ----------------------------------------------------------------

	async def runs(self, limit: int = 100, **filters: str | None) -> list[dict[str, Any]]:
		"""Runs of this process and of the store, newest first.

		The runs nested in others (a tool call's, a guardrail agent's) are on their caller's
		page (`nested`), not in the list, unless a filter that finds runs is given (``agent``,
		``status``, ``search``, ``trigger``: the ``agent`` origin is theirs): then they are
		listed as `openmolt logs` lists them, each with its own cost (``caller`` names the run
		it nests in, whose cost holds it when its caller counts it).

		Args:
			limit: The most runs to return.
			**filters: `RunStore.runs`'s filters (``agent``, ``status``, ``search``, ``before``,
				``since``, ``trigger``, ``user``); a live run is kept when it matches the ones it
				can be checked for.
		"""
		rows: dict[str, dict[str, Any]] = {}
		wanted = filters.get("status")
		asked = {**filters, "status": "running" if wanted == "killed" else wanted}
		nested = any(filters.get(k) for k in ("agent", "status", "search", "trigger"))
		if self.store is not None:
			try:
				for stored in await self.store.runs(limit, **asked, top_level=not nested):
					row = _checked(stored.to_dict())
					if not wanted or row["status"] == wanted:
						rows[stored.run_id] = row
			except Exception:
				log.exception("the run viewer could not read the run store %s", self.store.path)
		for live in self.live.runs.values():
			stored_row = rows.get(live.run.run_id)
			if stored_row is None and live.run.resumed and self.store is not None:
				# resumed here, started long ago (or elsewhere): its first start is in the store
				found = await self.store.run(live.run.run_id)
				stored_row = _checked(found.to_dict()) if found is not None else None
			row = _merged(live.summary(), stored_row)
			if row["run_id"] in rows or _matches(row, filters):
				rows[row["run_id"]] = row
		ordered = sorted(
			(
				r
				for r in rows.values()
				if nested or caller_of(r["run_id"], r.get("trigger")) is None
			),
			key=lambda r: r["started"],
			reverse=True,
		)
		return [_shown(r) for r in ordered[:limit]]

	async def snapshot(self) -> dict[str, Any]:
		"""Runs, questions (live and parked) and approvals waiting: what the page's list shows."""
		runs = await self.runs()
		questions = [q.to_dict() for q in self.live.questions.values()]
		for row in runs:
			pending = row.get("pending")
			if (
				row["status"] == "human_input_required"
				and isinstance(pending, dict)
				and pending.get("kind") == "human_input"
			):
				questions.append(
					{
						"id": f"parked:{row['run_id']}",
						"kind": "parked",
						"run_id": row["run_id"],
						"agent": row["agent"],
						"message": pending.get("message", ""),
						"asked": row.get("ended") or row["updated"],
						"can_answer": self._agent_for(row) is not None
						and row["run_id"] not in self._resuming,
						"origin": _origin(row),
					}
				)
		for row in runs:  # runs waiting for an end user to connect an account: shown, not answered
			pending = row.get("pending")
			if row["status"] == "authorization_required" and isinstance(pending, dict):
				questions.extend(_authorizations(row, pending))
		for row in runs:  # calls a capability (or another gate) parked: shown, the app resumes
			questions.extend(capability_waits(row))
		approvals = self.live.approvals.pending
		for row in runs:
			pending = row.get("pending")
			if (
				row["status"] == "approval_required"
				and isinstance(pending, dict)
				and pending.get("kind") == "approval"
			):
				approvals.extend(self._parked_calls(row, pending))
		return {"runs": runs, "questions": questions, "approvals": approvals}

	def _parked_calls(self, row: dict[str, Any], pending: dict[str, Any]) -> list[dict[str, Any]]:
		commands = pending.get("commands") or []
		can = self._agent_for(row) is not None and row["run_id"] not in self._resuming
		out = []
		for call in pending.get("calls") or []:
			index = call.get("index", -1)
			command = commands[index] if 0 <= index < len(commands) else {}
			out.append(
				{
					"id": f"parked:{row['run_id']}:{call.get('call', '')}",
					"kind": "parked",
					"run_id": row["run_id"],
					"agent": row["agent"],
					"step": pending.get("step", 0),
					"tool": call.get("tool", command.get("tool", "")),
					"input": command.get("input", {}),
					"reason": call.get("reason", ""),
					"rule": call.get("rule", ""),
					"asked": row.get("ended") or row["updated"],
					"can_answer": can,
					"origin": _origin(row),
				}
			)
		return out

	async def run_view(self, run_id: str) -> dict[str, Any] | None:
		"""One run with all its events, or None."""
		return await self.run_events(run_id, after=0)

	async def run_events(self, run_id: str, *, after: int) -> dict[str, Any] | None:
		"""A run's summary (its nested runs' rows in it: `nested`) and its events after ``after``.

		The summary's ``nested_more`` says whether the run has more nested runs than it lists.
		The store holds every event of a run, across its resumes and processes, so its events
		come from there when it has the run; only a run it does not know (no store) is read
		from this process's memory. The summary is the live one when the run is live here.
		"""
		live = self.live.runs.get(run_id)
		stored = await self.store.run(run_id) if self.store is not None else None
		if stored is None:
			if live is None:
				return None
			events = [described(e) for e in live.events if e["id"] > after]
			nested, more = await self._nested(run_id)
			row = {**live.summary(), "nested": nested, "nested_more": more}
			return {"source": "live", "run": _shown(row), "events": events}
		assert self.store is not None
		stored_events = await self.store.events(run_id, after=after, limit=self.page)
		summary = _checked(stored.to_dict())
		if live is not None:
			summary = _merged(live.summary(), summary)
		elif stored.ended:
			summary.update(await self._from_state(run_id, stored.ended, stored.trigger))
		summary["nested"], summary["nested_more"] = await self._nested(run_id)
		return {
			"source": "store",
			"run": _shown(summary),
			"events": [described(e.to_dict()) for e in stored_events],
		}

	async def nested(self, run_id: str) -> list[dict[str, Any]]:
		"""The runs nested in a run, at any depth, oldest first (the newest `runstore.NESTED_SHOWN`).

		A tool call's runs (an agent tool's, or those a tool's code ran with
		``parent=context.run``) and its guardrail agents' runs are rows of their own in the
		store, as ``openmolt logs`` lists them, each with its own usage. A guardrail agent's
		events stay its own (the judged run has only the verdict), so its run is found here, by
		its id: the judged run's followed by ``.guard...`` (`callers`).

		Each row says what it is (``kind``: ``call`` or ``guardrail``; the ``step``, the call's
		``index``, the call's ``nth`` run, the guardrail's ``stage`` and name), its ``caller``,
		and whether its spend is in its caller's totals (``counted``: True for a guardrail
		agent's, whose usage the kernel adds; None for a call's, which only an agent tool adds:
		the page compares the totals).

		Args:
			run_id: The run's id.
		"""
		return (await self._nested(run_id))[0]

	async def _nested(self, run_id: str) -> tuple[list[dict[str, Any]], bool]:
		"""`nested`'s rows, and whether there are more than it lists (``nested_more``)."""
		prefix = f"{run_id}."
		rows: dict[str, dict[str, Any]] = {}
		if self.store is not None:
			try:  # one more than listed: whether there are more
				for stored in await self.store.runs(runstore.NESTED_SHOWN + 1, nested_in=run_id):
					rows[stored.run_id] = _checked(stored.to_dict())
			except Exception:
				log.exception("the run viewer could not read the run store %s", self.store.path)
		for live_id, live in list(self.live.runs.items()):
			if live_id.startswith(prefix):
				rows[live_id] = _merged(live.summary(), rows.get(live_id))
		# a run of its own whose id merely starts so (one the application chose) is left out
		found = [r for r in rows.values() if caller_of(r["run_id"], r.get("trigger")) is not None]
		ordered = sorted(found, key=lambda r: str(r["started"]))
		return [_nested_row(r) for r in ordered[-runstore.NESTED_SHOWN :]], len(
			ordered
		) > runstore.NESTED_SHOWN

	async def _from_state(self, run_id: str, ended: str, trigger: Any) -> dict[str, Any]:
		"""What an ended run's saved state adds to its row (read once per end, kept for a few).

		The calls whose results were untrusted (``taint``), what else tainted it from its start
		(``tainted_by``) or why its outside input did not (``clean_start``), the run's tokens
		and cost per model (``usage_by_model``: a fallback's models each count their own calls),
		its end user (``user``) and the results stored because too large (``stored``).
		A run that did not start has no state: nothing is added.
		"""
		known = self._ended.get(run_id)
		if known is not None and known[0] == ended:
			return known[1]
		assert self.store is not None
		state = await self.store.state(run_id)
		facts: dict[str, Any] = {"taint": [], "usage_by_model": {}}
		if state is not None:
			facts = {
				"user": state.user,  # masked as the store keeps the state
				"taint": tainted_calls(state.taint),
				"tainted_by": tainted_by(state.taint, state.user),
				"clean_start": clean_start(trigger or state.trigger, state.taint),
				"usage_by_model": by_model(state.usage_by_model),
				"stored": [dict(s) for s in state.stored],  # results too large for the model
			}
		self._ended[run_id] = (ended, facts)
		while len(self._ended) > _ENDED_KEEP:  # the page asks again at each poll: keep a few
			del self._ended[next(iter(self._ended))]
		return facts

	async def export(self, run_id: str) -> dict[str, Any] | None:
		"""One run as a JSON document: its row, every event, and its sub-agents' runs' rows."""
		view = await self.run_events(run_id, after=0)
		if view is None:
			return None
		events = list(view["events"])
		while self.store is not None and events and len(events) % self.page == 0:
			more = await self.store.events(run_id, after=events[-1]["id"], limit=self.page)
			if not more:
				break
			events += [described(e.to_dict()) for e in more]
		subs = {e["data"]["sub_run_id"] for e in events if e["data"].get("sub_run_id")}
		# a guardrail agent's run too: no event names it
		subs |= {n["run_id"] for n in view["run"]["nested"]}
		sub_runs = []
		for sub in sorted(subs):
			found = await self.store.run(sub) if self.store is not None else None
			if found is not None:
				sub_runs.append(_checked(found.to_dict()))
		return {
			"format": "openmolt-run/1",
			"run": view["run"],
			"events": events,
			"sub_runs": sub_runs,
		}

	async def overview(self, days: int) -> dict[str, Any]:
		"""Runs, tokens and cost per day and per agent over the last ``days`` days (UTC)."""
		today = datetime.now(UTC).date()
		first = today - timedelta(days=days - 1)
		rows = await self.store.totals(first.isoformat()) if self.store is not None else []
		per_day: dict[str, dict[str, Any]] = {}
		per_agent: dict[str, dict[str, Any]] = {}
		for n in range(days):
			day = (first + timedelta(days=n)).isoformat()
			per_day[day] = _zero(day=day)
		for row in rows:
			for key, group, name in (
				(row["day"], per_day, "day"),
				(row["agent"], per_agent, "agent"),
			):
				into = group.setdefault(key, _zero(**{name: key}))
				into["runs"] += row["runs"]
				into["input_tokens"] += row["input_tokens"]
				into["output_tokens"] += row["output_tokens"]
				into["tokens"] = into["input_tokens"] + into["output_tokens"]
				if row["cost_usd"] is not None:
					into["cost_usd"] = (into["cost_usd"] or 0.0) + row["cost_usd"]
				# The calls the cost leaves out: a cost beside them is a lower bound.
				into["unpriced_calls"] += row.get("unpriced_calls") or 0
		agents = sorted(per_agent.values(), key=lambda a: (-(a["cost_usd"] or 0), -a["tokens"]))
		return {"since": first.isoformat(), "days": list(per_day.values()), "agents": agents}

	# what the page does -----------------------------------------------------------------

	async def answer(self, question_id: str, answer: str) -> dict[str, Any]:
		"""Answer a live question, or resume a parked run with the answer."""
		if not question_id.startswith("parked:"):
			if self.live.answer(question_id, answer):
				return {"status": "answered"}
			return {"status": "unknown", "error": "no question waits with that id"}
		run_id = question_id.removeprefix("parked:")
		if run_id in self._resuming:
			return dict(_RESUMING)
		row = next((r for r in await self.runs() if r["run_id"] == run_id), None)
		if row is None or row["status"] != "human_input_required":
			return {"status": "unknown", "error": _gone(row, "an answer")}
		agent = self._agent_for(row)
		if agent is None:
			return {
				"status": "cannot",
				"error": f"agent {row['agent']!r} is not loaded here: start `openmolt ui "
				"AGENT_FILE` with its file to answer",
			}
		state = await self._parked_state(run_id)
		if state is None or state.pending is None:
			return {"status": "cannot", "error": "the run's saved state is not available"}
		if self._tg is None:
			return {"status": "cannot", "error": "the viewer is not serving"}
		if run_id in self._resuming:  # another answer took it while this one read the store
			return dict(_RESUMING)
		self._resuming.add(run_id)
		self.live.touch()
		return await self._resumed(agent, state, {"answer": answer}) or {"status": "resuming"}

	async def decide(self, approval_id: str, decision: ApprovalDecision) -> dict[str, Any]:
		"""Decide a live call, or resume a run parked on approvals with the decision."""
		if not approval_id.startswith("parked:"):
			if self.live.approvals.decide(approval_id, decision):
				return {"status": "answered", "action": decision.action}
			return {
				"status": "unknown",
				"error": "no call waits for that decision (decided already?)",
			}
		run_id, _, call = approval_id.removeprefix("parked:").partition(":")
		if run_id in self._resuming:
			return dict(_RESUMING)
		row = next((r for r in await self.runs() if r["run_id"] == run_id), None)
		if row is None or row["status"] != "approval_required":
			return {"status": "unknown", "error": _gone(row, "a decision")}
		agent = self._agent_for(row)
		if agent is None or not hasattr(agent, "approval_requests"):
			return {
				"status": "cannot",
				"error": f"agent {row['agent']!r} is not loaded here: start `openmolt ui "
				"AGENT_FILE` with its file to decide",
			}
		state = await self._parked_state(run_id)
		if state is None or self._tg is None:
			return {"status": "cannot", "error": "the run's saved state is not available"}
		request = next((r for r in agent.approval_requests(state) if r.call == call), None)
		if request is None:
			return {"status": "unknown", "error": "that call waits for no decision"}
		if run_id in self._resuming:  # another decision took it while this one read the store
			return dict(_RESUMING)
		self._resuming.add(run_id)
		self.live.touch()
		made = _apply(request, decision)
		refused = await self._resumed(agent, state, {"decision": made})
		return refused or {"status": "resuming", "action": decision.action}

	async def _parked_state(self, run_id: str) -> Any:
		live = self.live.runs.get(run_id)
		if live is not None and live.run.state.pending:
			return live.run.state
		if self.store is not None:
			return await self.store.state(run_id)
		return None

	def _agent_for(self, row: dict[str, Any]) -> Agent | None:
		live = self.live.runs.get(row["run_id"])
		if live is not None:
			return live.run.agent
		return self.agents.get(row["agent"])

	async def sign_in(self, run_id: str, index: str) -> SignIn | str:
		"""A fresh consent link for a parked run's authorization request, bound to this browser.

		The viewer has no sessions, so a link finishes only in the browser that started it
		here: the state holds the keyed digest of a random secret this browser gets as a cookie
		(`openmolt_core.accounts.Accounts.browser_cookie`), and the link lasts `SIGN_IN_TTL`
		seconds. The run's own link (its request's ``url``) is bound to no browser, so this
		viewer's callback refuses it: whoever obtained it cannot connect an account with it.

		Args:
			run_id: The parked run.
			index: The parked call's ``index`` (`openmolt_core.accounts.authorization_requests`).

		Returns:
			The link and the cookie to set, or why there is none (for the page).
		"""
		from openmolt_core.accounts import authorization_requests

		state = await self._parked_state(run_id)
		rows = [r for r in await self.runs() if r["run_id"] == run_id]
		agent = self._agent_for(rows[0]) if rows else None
		if state is None or agent is None:
			return "that run is not parked here, or its agent is not loaded in this viewer"
		found = [
			r
			for r in authorization_requests(state)
			if str(r.get("index")) == index and r.get("user") and r.get("integration")
		]
		if not found:
			return "that run waits for no account (it was connected, or the run went on)"
		request = found[0]
		om = OpenMolt.of(agent)
		integration, user = str(request["integration"]), str(request["user"])
		secret = secrets.token_urlsafe(32)
		spec = om.plugins.integration(integration)

		def make() -> str:
			return om.accounts.consent(
				spec,
				integration,
				user,
				[str(s) for s in request.get("scopes") or ()],
				run_id=run_id,
				agent=agent.name,
				browser=secret,
				ttl=SIGN_IN_TTL,
			)

		try:
			url = await anyio.to_thread.run_sync(make)
		except ConfigurationError as exc:
			return str(exc)
		body = om.accounts.state_of(url)
		return SignIn(
			url=url,
			cookie=om.accounts.browser_cookie(body),
			secret=secret,
			integration=integration,
			user=user,
			agent=agent.name,
			ttl=SIGN_IN_TTL,
		)

	async def connect(
		self, answer: str, cookies: Mapping[str, str] | None = None
	) -> tuple[bool, str, str]:
		"""An end user comes back from a service's consent page: store their account, go on.

		The answer's signed state names the run (`openmolt_core.accounts`); a run parked here on
		``authorization_required`` whose agent is loaded resumes in the background. Only a link
		this browser started here (`sign_in`) is finished: its cookie must hold the secret the
		state is bound to. A link the run made, or one sent in a chat (a live run's or a
		recovered durable run's), is refused before anything is used up.

		Args:
			answer: The redirect's query string.
			cookies: The browser's cookies.

		Returns:
			Whether the account was connected, what to tell the user, and the name of the
			cookie to clear (empty: none).
		"""
		from openmolt_core.accounts import ForeignConsentError, authorization_requests
		from openmolt_core.errors import OpenMoltError
		from openmolt_ui._consent import masked

		instances = {id(a.om): OpenMolt.of(a) for a in self.agents.values()}
		problem = "this sign-in link is not for this viewer"
		jar = dict(cookies or {})
		for om in instances.values():
			try:
				name = om.accounts.browser_cookie(om.accounts.state_of(answer))
			except OpenMoltError:
				name = ""  # a state not ours, or damaged: `complete` says why
			try:
				connected = await om.accounts.complete(answer, browser=jar.get(name, ""))
			except ForeignConsentError as exc:  # another instance's state: try the next one
				problem = masked(str(exc), answer)
				continue
			except OpenMoltError as exc:
				problem = masked(str(exc), answer)  # a refusal may echo the code or state
				return False, f"The account was not connected: {problem}", ""
			said = f"Your {connected.integration} account is connected. You can close this window"
			run_id = connected.run_id
			state = await self._parked_state(run_id) if run_id else None
			pending = getattr(state, "pending", None) or {}
			row = next((r for r in await self.runs() if r["run_id"] == run_id), None)
			agent = self._agent_for(row) if row is not None else None
			if (
				authorization_requests({"pending": pending})
				and agent is not None
				and self._tg is not None
				and run_id not in self._resuming
			):
				self._resuming.add(run_id)
				self._tg.start_soon(self._resume, agent, state, {}, name=f"resume {run_id}")
				return True, f"{said}; the agent goes on.", name
			return True, f"{said}.", name
		return False, f"The account was not connected: {problem}", ""

	async def _resumed(
		self, agent: Agent, state: Any, given: dict[str, Any]
	) -> dict[str, Any] | None:
		"""Resume a parked run in the background; a refusal of the delivery, if it comes at once.

		Another surface may have answered or decided the run meanwhile (a durable run's
		``openmolt answer``, a chat, A2A, a second viewer): the resume is then refused before
		anything runs (`AlreadyAnsweredError`, `ApprovalError`), and the page is told so instead
		of "resuming".
		"""
		assert self._tg is not None
		refused: list[Exception] = []
		settled = anyio.Event()

		async def resume() -> None:
			try:
				await self._resume(agent, state, given, refused)
			finally:
				settled.set()

		self._tg.start_soon(resume, name=f"resume {state.run_id}")
		with anyio.move_on_after(_REFUSED_WITHIN):
			await settled.wait()
		if refused:
			return {"status": "cannot", "error": str(refused[0])}
		return None

	async def _resume(
		self,
		agent: Agent,
		state: Any,
		given: dict[str, Any],
		refused: list[Exception] | None = None,
	) -> None:
		try:
			om = OpenMolt.of(agent)
			if self.live not in om.observers:
				self.watch(om)
			await agent.resume(state, **given)
		except RunError as exc:
			log.warning("the resumed run %s failed: %s", state.run_id, exc)
		except Exception as exc:
			if refused is None:
				log.exception("the resumed run %s failed", state.run_id)
			else:  # refused (answered elsewhere): the page says why
				log.warning("the resume of run %s was refused: %s", state.run_id, exc)
				refused.append(exc)
		finally:
			self._resuming.discard(state.run_id)
			self.live.touch()

	# serving ----------------------------------------------------------------------------

	@property
	def url(self) -> str:
		"""The page's address, token included (known once serving: the port may be picked)."""
		host = f"[{self.host}]" if ":" in self.host else self.host
		return f"http://{host}:{self.port}/?token={self.token}"

	def _socket(self) -> socket.socket:
		sock = listen(self.host, self.port, who="the run viewer", options=self.options)
		self.port = sock.getsockname()[1]
		return sock

	async def __aenter__(self) -> Viewer:
		"""Start serving in a task group of its own; the page is at `url` on return."""
		from openmolt_ui.app import create_app

		if self._tg is not None:
			raise RuntimeError("this viewer is already serving")
		check_remote(self.host, allow_remote=self.allow_remote, who="the run viewer")
		sock = self._socket()
		config = uvicorn.Config(
			create_app(self),
			http=guarded_protocol(
				header_timeout=self.header_timeout,
				max_connections=self.max_connections,
				who="the run viewer",
			),
			timeout_keep_alive=5,
			ws="none",  # the page speaks no WebSocket: an upgrade must not leave the limits
			lifespan="off",
			log_level="warning",
			access_log=False,
			timeout_graceful_shutdown=2,
		)
		self._server = EmbeddedServer(config)
		self._server.ready = anyio.Event()
		tg = anyio.create_task_group()
		await tg.__aenter__()
		self._tg = tg
		self.closing = False
		self._stopped = anyio.Event()
		tg.start_soon(self._serve, sock, name="openmolt run viewer")
		await self._server.ready.wait()
		return self

	async def _serve(self, sock: socket.socket) -> None:
		assert self._server is not None
		try:
			await self._server.serve(sockets=[sock])
		finally:
			sock.close()
			if self._stopped is not None:
				self._stopped.set()

	async def __aexit__(
		self,
		exc_type: type[BaseException] | None,
		exc: BaseException | None,
		tb: TracebackType | None,
	) -> bool | None:
		"""Stop: end the page's streams, stop the server, cancel resumed runs still going."""
		tg, self._tg = self._tg, None
		self.closing = True
		self.live.touch()
		if self._server is not None:
			self._server.should_exit = True
		if tg is None:
			return None
		with anyio.move_on_after(5, shield=True):  # the page's streams end; the server stops
			if self._stopped is not None:
				await self._stopped.wait()
		tg.cancel_scope.cancel()
		return await tg.__aexit__(exc_type, exc, tb)

	async def serve_forever(self) -> None:
		"""Serve until cancelled (``openmolt ui`` does this)."""
		async with self:
			await anyio.sleep_forever()


SIGN_IN_TTL = 600.0
"""Seconds a sign-in link started in the viewer stays valid (`Viewer.sign_in`)."""


@dataclass(frozen=True, slots=True)
class SignIn:
	"""A consent link the viewer started for one browser (`Viewer.sign_in`).

	Args:
		url: The service's consent URL.
		cookie: The name of the cookie that binds it to the browser.
		secret: The cookie's value (never shown, never logged).
		integration: The integration being connected.
		user: The end user it is connected for.
		agent: The agent whose run asked.
		ttl: Seconds it stays valid.
	"""

	url: str = field(repr=False)
	cookie: str
	secret: str = field(repr=False)
	integration: str
	user: str
	agent: str
	ttl: float


def _authorizations(row: dict[str, Any], pending: dict[str, Any]) -> list[dict[str, Any]]:
	"""A parked run's authorization requests as the list's items (`openmolt_core.accounts`)."""
	from openmolt_core.accounts import authorization_requests

	out = []
	for call in authorization_requests({"pending": pending}):
		out.append(
			{
				"id": f"parked:{row['run_id']}:{call.get('index', '')}",
				"kind": "parked",
				"run_id": row["run_id"],
				"agent": row["agent"],
				# The run's own link is bound to no browser: this viewer's callback refuses it.
				# The page offers one it starts in the browser that opens it (`Viewer.sign_in`).
				"message": f"{call.get('tool')} waits for {call.get('user')} to connect "
				f"{call.get('integration')}",
				"connect": f"/auth/start?run={quote(row['run_id'])}"
				f"&index={quote(str(call.get('index', '')))}",
				"asked": row.get("ended") or row["updated"],
				"can_answer": False,  # the user connects; the application resumes the run
			}
		)
	return out


def described(event: dict[str, Any]) -> dict[str, Any]:
	"""An event as the page reads it: with what its name stands for and who emits it, if known.

	Its data is masked with the story's rule (`mask_urls`: a URL's login and its secret query
	values), which the run store wrote it with: again, for an event an older writer kept. Its
	data is cut past 64 levels (`openmolt_core._support.jsonsafe.shallow`): masking and
	encoding it recurse once per level, and one event nested deeper (a capability's own fields)
	must not make its whole run fail to load.

	``about`` is ``{"what", "by"}`` from the core's registry of event names
	(`openmolt_core.observe.describe_event`): the loop's, and those the capabilities of this
	process's agents register. A name it does not know is shown by its name and data alone.

	Args:
		event: The event (``name``, ``data``...).
	"""
	from openmolt_core._support.jsonsafe import shallow
	from openmolt_core._support.masking import mask_urls

	# Masked and encoded as it is served, with the rule the store writes events with.
	event = {**event, "data": mask_urls(shallow(event.get("data")))}
	info = describe_event(event["name"])
	return event if info is None else {**event, "about": {"what": info.about, "by": info.by}}


def _zero(**key: str) -> dict[str, Any]:
	return {
		**key,
		"runs": 0,
		"input_tokens": 0,
		"output_tokens": 0,
		"tokens": 0,
		"cost_usd": None,
		"unpriced_calls": 0,
	}


def _shown(row: dict[str, Any]) -> dict[str, Any]:
	"""A run's row as the list and the run page read it: with what it waits for, if parked.

	Its output and its error are shown to a person: a URL's login masked, its links kept
	(`openmolt_core._support.masking.mask_url_logins_deep`; a run stored before that rule too).
	"""
	from openmolt_core._support.jsonsafe import shallow
	from openmolt_core._support.masking import mask_url_logins_deep

	caller = caller_of(str(row["run_id"]), row.get("trigger"))
	out = {**shallow(row), "waiting_for": waiting_for(row), "caller": caller}
	for key in ("output", "error"):
		if out.get(key) is not None:
			out[key] = mask_url_logins_deep(out[key])
	return out


def _gone(row: Mapping[str, Any] | None, what: str) -> str:
	"""Why a parked run's answer or decision is not taken: no such run, or it went on."""
	if row is None:
		return "no parked run waits with that id"
	return (
		f"that run waits for {what} no more: it is {row['status']} now (another surface, "
		"a chat, an A2A caller, a server or another viewer, went on with it or cancelled it)"
	)


def _origin(row: Mapping[str, Any]) -> str:
	"""The kind of trigger that started a run (``a2a``, ``chat``...), or ``""``."""
	trigger = row.get("trigger")
	kind = trigger.get("kind") if isinstance(trigger, Mapping) else None
	return kind if isinstance(kind, str) else ""


def _nested_row(row: dict[str, Any]) -> dict[str, Any]:
	"""A nested run as its caller's page lists it: what it is, where it nests, what it cost."""
	shown = _shown(row)  # it names the caller (`caller_of`)
	caller = shown["caller"] or ""
	tail = str(row["run_id"])[len(caller) + 1 :].split(".")

	def number(at: int) -> int | None:
		return _whole(tail[at]) if len(tail) > at else None

	guard = tail[0] == "guard" and len(tail) >= 6
	where = (
		{"kind": "guardrail", "step": number(1), "stage": tail[2], "index": number(3)}
		| {"nth": None, "guardrail": ".".join(tail[5:]), "counted": True}
		if guard
		else {"kind": "call", "step": number(0), "index": number(1), "stage": "", "guardrail": ""}
		| {"nth": number(2) or 1, "counted": None}
	)
	keep = ("run_id", "agent", "model", "status", "started", "ended", "steps", "usage", "error")
	return {**{k: shown.get(k) for k in keep}, **where, "caller": caller}


def _merged(live: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
	"""A live run's row, with what the store knows better: when it first started, its trigger."""
	if stored is None:
		return live
	trigger = stored.get("trigger") or live.get("trigger")  # where it first started
	return {
		**stored,
		**live,
		"started": min(stored["started"], live["started"]),
		"trigger": trigger,
	}


def _checked(row: dict[str, Any]) -> dict[str, Any]:
	"""A stored row as the page shows it: a run whose process died shows as ``killed``."""
	row = {**row, "live": False}
	if row["status"] == "running" and not _alive(row.get("pid")):
		row["status"] = "killed"
		row["error"] = (
			f"its process (pid {row.get('pid')}) ended before the run did: killed or crashed"
		)
	return row


def _alive(pid: Any) -> bool:
	if not isinstance(pid, int) or pid <= 0:
		return True  # nothing to check: believe the row
	if pid == os.getpid():
		return True
	try:
		os.kill(pid, 0)
	except ProcessLookupError:
		return False
	except PermissionError:
		return True  # another user's process
	return True


def _matches(row: dict[str, Any], filters: Mapping[str, str | None]) -> bool:
	"""Whether a live row passes the list's filters (the store applies them to its rows)."""
	agent, status, search = filters.get("agent"), filters.get("status"), filters.get("search")
	before, since, trigger = filters.get("before"), filters.get("since"), filters.get("trigger")
	if (agent and row["agent"] != agent) or (status and row["status"] != status):
		return False
	if filters.get("user") and row.get("user") != filters.get("user"):
		return False
	if trigger and (row.get("trigger") or {}).get("kind") != trigger:
		return False
	if (before and row["started"] >= before) or (since and row["started"] < since):
		return False
	if search:
		text = json.dumps([row.get("input"), row.get("output"), row.get("error")], default=str)
		return search.lower() in text.lower()
	return True


def _step_of(call: str) -> int:
	# A call's key reads tool:<step>:<index>:<handle> (openmolt_core.durability.step_key).
	parts = call.split(":")
	return (_whole(parts[1]) if len(parts) > 1 else None) or 0


def _whole(text: str) -> int | None:
	"""A step's or an index's number as an id holds it (ASCII digits, bounded), else None."""
	return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def _apply(request: Any, decision: ApprovalDecision) -> Any:
	"""The page's decision as the loop's: ``request.approve(...)`` or ``request.deny(...)``.

	An approval without a reason says who made it (``approved in the run viewer``), as the
	terminal's do; a denial's reason is the person's own (the model reads it).
	"""
	if decision.action == "deny":
		return request.deny(decision.reason)
	if decision.action == "edit":
		reason = decision.reason or "edited in the run viewer"
		return request.approve(input=dict(decision.input or {}), reason=reason)
	return request.approve(reason=decision.reason or "approved in the run viewer")
