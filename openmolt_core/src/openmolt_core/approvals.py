"""Approvals for dangerous tools: which calls wait for a person, and decisions nobody can forge.

A policy (`openmolt_core.policy`: ``requires_approval`` on ``OpenMolt`` and ``create_agent``)
says which tool calls wait for a decision, with rules such as ``"stripe:writes"``.

The approval handler (``on_approval_request``) gets an `ApprovalRequest` and answers with
``request.approve()``, ``request.approve(input={...})`` or ``request.deny("why")``. Without a
handler, or when it raises `ApprovalUnavailable`, the run parks with status ``approval_required``;
``agent.approval_requests(state)`` lists what waits and ``agent.resume(state, decision=...)`` goes
on, later and in any process.

Decisions cannot be forged or replayed. An `ApprovalDecision` names its run and its call (the
call's step key ``tool:<step>:<index>:<handle>``), carries the digest of the exact arguments it was
made for, and is signed with the key of `Approvals` (HMAC-SHA256 from the standard library: a
keyed digest is all that is needed, so no dependency). Before the call runs, the loop checks the
signature, the run, the call and the digest of the arguments it is about to send, then claims the
call in the ledger, so that each call is decided once. The decision is recorded in the result the
model reads (its ``approval`` entry) and emitted as an ``approval:decision`` event.

The request, the decision and the handler's type are the contract's (`openmolt_core.decisions`),
re-exported here; this module adds the signer, the ledgers, the digest of a call's arguments and
`ApprovalUnavailable`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio

from openmolt_core.decisions import (
	ApprovalDecision,
	ApprovalHandler,
	ApprovalRequest,
	_text,
)
from openmolt_core.errors import ApprovalError, ConfigurationError
from openmolt_core.events import Event
from openmolt_core.secrets import register_key

if TYPE_CHECKING:
	from openmolt_core.secrets import Redactor

__all__ = [
	"APPROVAL_KEY_ENV",
	"ApprovalDecision",
	"ApprovalDecisionEvent",
	"ApprovalHandler",
	"ApprovalLedger",
	"ApprovalRequest",
	"ApprovalRequestEvent",
	"ApprovalUnavailable",
	"Approvals",
	"MemoryLedger",
	"SQLiteLedger",
	"digest",
]

APPROVAL_KEY_ENV = "OPENMOLT_APPROVAL_KEY"
"""The environment variable `Approvals` reads its key from when none is given."""


class ApprovalUnavailable(Exception):  # a signal, raised by handlers, not an error
	"""Raise from an approval handler when nobody can decide now: the run parks.

	The run ends with status ``approval_required``, its state holding the call;
	``agent.resume(state, decision=...)`` applies the decision later, in any process.
	"""


def digest(tool: str, input: Mapping[str, Any]) -> str:
	"""The digest of a call's exact arguments: what a decision approves.

	Args:
		tool: The tool's full handle.
		input: The input the tool would run with.

	Returns:
		``sha256:`` and the hex digest of the canonical JSON (sorted keys, no spaces).
	"""
	text = json.dumps(
		{"tool": tool, "input": input}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
	)
	return "sha256:" + hashlib.sha256(_utf8(text)).hexdigest()


def _utf8(text: str) -> bytes:
	return text.encode("utf-8", "surrogatepass")


_SIGNATURE = re.compile(r"[0-9a-f]{64}")
"""The shape of a signature: the HMAC-SHA256 hex digest, 64 lowercase hex digits."""


def _malformed(decision: ApprovalDecision) -> bool:
	"""Whether a decision has a field of the wrong type, or a signature of the wrong shape.

	Such a decision was not made by `Approvals.decide` (whatever it claims): it is forged.
	"""
	if not all(
		isinstance(getattr(decision, name), str) for name in ("run_id", "call", "digest", "id")
	):
		return True
	if not isinstance(decision.reason, str) or not isinstance(decision.approved, bool):
		return True
	if decision.input is not None and not isinstance(decision.input, dict):
		return True
	signature = decision.signature
	return not isinstance(signature, str) or _SIGNATURE.fullmatch(signature) is None


# the ledger -------------------------------------------------------------------------------


@runtime_checkable
class ApprovalLedger(Protocol):
	"""Where decided calls are recorded, so that each call is decided (and run) at most once.

	A call is named ``<run id>/<call step key>``.
	"""

	async def claim(self, call: str, decision: str) -> bool:
		"""Record that ``decision`` decides ``call``; False if the call was decided before."""
		...

	async def claimed(self, call: str) -> str | None:
		"""The id of the decision that decided ``call``, or None."""
		...


class MemoryLedger:
	"""A ledger in memory: single use within one process (the default)."""

	__slots__ = ("_calls",)

	def __init__(self) -> None:
		self._calls: dict[str, str] = {}

	async def claim(self, call: str, decision: str) -> bool:
		"""Record the decision; False if the call was decided before."""
		if call in self._calls:
			return False
		self._calls[call] = decision
		return True

	async def claimed(self, call: str) -> str | None:
		"""The decision that decided the call, or None."""
		return self._calls.get(call)


class SQLiteLedger:
	"""A ledger in a SQLite file: single use across the processes of one machine.

	Args:
		path: The database file (made on first use).
	"""

	__slots__ = ("_lock", "path")

	def __init__(self, path: str | Path) -> None:
		self.path = Path(path)
		self._lock: anyio.Lock | None = None

	def _claim(self, call: str, decision: str) -> bool:
		import sqlite3  # here: a run without approvals never loads it

		from openmolt_core._support.private import private_file

		private_file(self.path)  # 0600 in a 0700 folder
		with sqlite3.connect(self.path, timeout=30) as db:
			db.execute(
				"CREATE TABLE IF NOT EXISTS decided "
				"(call TEXT PRIMARY KEY, decision TEXT NOT NULL, at REAL NOT NULL)"
			)
			cursor = db.execute(
				"INSERT OR IGNORE INTO decided VALUES (?, ?, ?)", (call, decision, time.time())
			)
			return cursor.rowcount == 1

	def _claimed(self, call: str) -> str | None:
		import sqlite3

		if not self.path.exists():
			return None
		with sqlite3.connect(self.path, timeout=30) as db:
			try:
				row = db.execute("SELECT decision FROM decided WHERE call = ?", (call,)).fetchone()
			except sqlite3.OperationalError:  # no table yet
				return None
			return None if row is None else str(row[0])

	async def claim(self, call: str, decision: str) -> bool:
		"""Record the decision (in a worker thread); False if the call was decided before."""
		return await anyio.to_thread.run_sync(self._claim, call, decision)

	async def claimed(self, call: str) -> str | None:
		"""The decision that decided the call, or None."""
		return await anyio.to_thread.run_sync(self._claimed, call)


# signing ----------------------------------------------------------------------------------


class Approvals:
	"""Signs and checks decisions, and keeps the ledger of decided calls (``om.approvals``).

	Args:
		key: The secret that signs decisions, 16 bytes or more. Processes that apply each other's
			decisions (a web page deciding for a worker) need the same key. Default: the
			``OPENMOLT_APPROVAL_KEY`` environment variable, else a random key per instance
			(decisions are then only valid in this process).
		ledger: Where decided calls are recorded (default: `MemoryLedger`). Use `SQLiteLedger`,
			or a durable engine's ledger, when runs resume in other processes.

	Raises:
		ConfigurationError: The key is shorter than 16 bytes.
	"""

	__slots__ = ("__weakref__", "_key", "ledger")

	def __init__(self, *, key: bytes | str | None = None, ledger: ApprovalLedger | None = None):
		if key is None:
			key = os.environ.get(APPROVAL_KEY_ENV) or None
		if key is not None:  # a random key is never written down: nothing to mask
			register_key(self, key)  # masked by every instance and in the logs
		else:
			key = secrets.token_bytes(32)
		raw = key.encode() if isinstance(key, str) else bytes(key)
		if len(raw) < 16:
			raise ConfigurationError(
				f"Approvals(key=...) must be at least 16 bytes (check {APPROVAL_KEY_ENV}); "
				'make one with: python -c "import secrets; print(secrets.token_hex(32))"'
			)
		self._key = raw
		self.ledger: ApprovalLedger = ledger if ledger is not None else MemoryLedger()

	def _sign(self, d: ApprovalDecision) -> str:
		body = json.dumps(
			[1, d.run_id, d.call, d.digest, d.approved, d.reason, d.input, d.id],
			sort_keys=True,
			separators=(",", ":"),
			ensure_ascii=False,
		)
		return hmac.new(
			self._key, body.encode("utf-8", "surrogatepass"), hashlib.sha256
		).hexdigest()

	def decide(
		self,
		request: ApprovalRequest,
		*,
		approved: bool,
		reason: str = "",
		input: dict[str, Any] | None = None,
	) -> ApprovalDecision:
		"""A signed decision on a request (what `ApprovalRequest.approve` and ``deny`` call).

		Args:
			request: The call decided.
			approved: Whether it may run.
			reason: Why.
			input: The edited input (approvals only).

		Raises:
			ConfigurationError: A denial was given an input.
		"""
		if input is not None and not approved:
			raise ConfigurationError("a denial cannot carry an edited input")
		unsigned = ApprovalDecision(
			run_id=request.run_id,
			call=request.call,
			digest=request.digest,
			approved=approved,
			reason=reason,
			input=input,
			id=secrets.token_hex(8),
		)
		return ApprovalDecision(**{**unsigned.to_dict(), "signature": self._sign(unsigned)})

	def check_signature(self, decision: ApprovalDecision) -> None:
		"""Check that a decision is well formed and signed with this instance's key.

		Every malformed decision (a signature that is not 64 lowercase hex digits: non-ASCII,
		too short or too long, empty, None, bytes; a field of the wrong type; an input that is
		not JSON) is refused the same way as a wrong signature, never with a crash.

		Args:
			decision: The decision, as it arrived (from code, a dict, another process).

		Raises:
			ApprovalError: ``forged``: it was not signed here, or was altered since.
		"""
		if not self._signed(decision):
			raise ApprovalError(
				f"decision {_text(decision.id) or '(no id)'} for {_text(decision.call)} is not "
				"signed by this instance's approval key: it was forged or altered, or made by a "
				f"process with another key (give both the same Approvals(key=...) or "
				f"{APPROVAL_KEY_ENV})",
				problem="forged",
				call=_text(decision.call, 200),
			)

	def verify(self, decision: ApprovalDecision, *, run_id: str, call: str, digest: str) -> None:
		"""Check that a decision was signed here and is for this call with these arguments.

		Args:
			decision: The decision.
			run_id: The run of the call about to run.
			call: Its step key.
			digest: The digest of the arguments it is about to run with.

		Raises:
			ApprovalError: ``forged`` (see `check_signature`), ``replayed`` (another run or
				call) or ``stale`` (other arguments); the message says which.
		"""
		self.check_signature(decision)
		if decision.run_id != run_id or decision.call != call:
			raise ApprovalError(
				f"decision {decision.id} was made for {decision.call} of run {decision.run_id}, "
				f"not for {call} of run {run_id}; a decision serves only its own call",
				problem="replayed",
				call=decision.call,
			)
		if not hmac.compare_digest(_utf8(decision.digest), _utf8(digest)):
			raise ApprovalError(
				f"decision {decision.id} approved other arguments than {call} now has: the "
				"arguments changed after approval; ask for a new decision",
				problem="stale",
				call=call,
			)

	def masked(self, decision: ApprovalDecision, redact: Redactor) -> ApprovalDecision:
		"""The decision with every secret its reason and edited input show masked, for a store.

		A run reads a decision's reason and edited input masked (its history, its events, and a
		durable run's journal keep them so, and a durable run calls the tool with the journaled
		input); a store that keeps the decision itself (a durable run's workflow input) keeps it
		masked too. A decision signed here is signed again over its masked fields, so it is
		accepted where the run uses it, once, as before (same id, call and digest); one that is
		not comes back unsigned, and is refused there as it would have been.

		Args:
			decision: The decision, as delivered.
			redact: The run's agent's redactor (`openmolt_core.agent.Agent.redact`).

		Returns:
			``decision`` itself when neither field shows a secret.
		"""
		reason = redact(decision.reason) if isinstance(decision.reason, str) else decision.reason
		edited = decision.input if decision.input is None else redact.deep(decision.input)
		if reason == decision.reason and edited == decision.input:
			return decision
		unsigned = replace(decision, reason=reason, input=edited, signature="")
		if not self._signed(decision):
			return unsigned
		return replace(unsigned, signature=self._sign(unsigned))

	def _signed(self, decision: ApprovalDecision) -> bool:
		"""Whether a decision is well formed and its signature is this key's (constant time)."""
		if _malformed(decision):
			return False
		try:
			expected = self._sign(decision)
		except (TypeError, ValueError, RecursionError):  # an input that is no JSON
			return False
		return hmac.compare_digest(decision.signature.encode("ascii"), expected.encode("ascii"))

	def __repr__(self) -> str:
		return f"Approvals(ledger={type(self.ledger).__name__})"


# events ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ApprovalRequestEvent(Event):
	"""A tool call waits for a decision; ``request`` is what the approver sees (input redacted)."""

	request: ApprovalRequest
	name: str = "approval:request"


@dataclass(slots=True, kw_only=True)
class ApprovalDecisionEvent(Event):
	"""A decision on a call: ``action`` is ``approved``, ``edited``, ``denied`` or ``refused``.

	``refused`` means no valid decision came (a forged, replayed or stale one, or a handler that
	failed): the call did not run and ``reason`` says why. ``decision_id`` is the decision's id;
	``input`` the edited input the call runs with (``edited`` only, redacted).
	"""

	tool: str
	call: str
	action: str
	reason: str = ""
	decision_id: str = ""
	input: dict[str, Any] | None = None
	name: str = "approval:decision"
