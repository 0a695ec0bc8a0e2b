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
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import anyio

from openmolt_core.errors import ApprovalError, ConfigurationError

__all__ = [
	"APPROVAL_KEY_ENV",
	"ApprovalDecision",
	"ApprovalHandler",
	"ApprovalLedger",
	"ApprovalRequest",
	"ApprovalUnavailable",
	"Approvals",
	"MemoryLedger",
	"SQLiteLedger",
	"digest",
]

APPROVAL_KEY_ENV = "OPENMOLT_APPROVAL_KEY"
"""The environment variable `Approvals` reads its key from when none is given."""


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


_SIGNATURE = re.compile(r"[0-9a-f]{64}")
"""The shape of a signature: the HMAC-SHA256 hex digest, 64 lowercase hex digits."""


def _text(value: Any, most: int = 120) -> str:
	"""A field of a decision as an error shows it: cut, and a repr when it is no string."""
	text = value if isinstance(value, str) else repr(value)
	return text if len(text) <= most else f"{text[:most]}..."


def _utf8(text: str) -> bytes:
	return text.encode("utf-8", "surrogatepass")


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


# requests and decisions -------------------------------------------------------------------


class ApprovalUnavailable(Exception):  # a signal, raised by handlers, not an error
	"""Raise from an approval handler when nobody can decide now: the run parks.

	The run ends with status ``approval_required``, its state holding the call;
	``agent.resume(state, decision=...)`` applies the decision later, in any process.
	"""


Action = Literal["approved", "edited", "denied"]


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
	"""A decision on one tool call, bound to that call and to its exact arguments, and signed.

	Make one with `ApprovalRequest.approve` or `ApprovalRequest.deny`; `to_dict` and `from_dict`
	carry it between processes as JSON.

	Args:
		run_id: The run the call belongs to.
		call: The call's step key (``tool:<step>:<index>:<handle>``).
		digest: The digest of the arguments the decision was made for (`digest`).
		approved: Whether the call may run.
		reason: Why (a denial's reason reaches the model).
		input: The edited input to run instead (approvals only); it must match the tool's schema.
		id: A random id, recorded in the run's history and the ledger.
		signature: The HMAC of every field above, with the key of `Approvals`.
	"""

	run_id: str
	call: str
	digest: str
	approved: bool
	reason: str = ""
	input: dict[str, Any] | None = None
	id: str = ""
	signature: str = ""

	@property
	def action(self) -> Action:
		"""``approved``, ``edited`` (approved with another input) or ``denied``."""
		if not self.approved:
			return "denied"
		return "approved" if self.input is None else "edited"

	def to_dict(self) -> dict[str, Any]:
		"""The decision as JSON-serializable data."""
		return {
			"run_id": self.run_id,
			"call": self.call,
			"digest": self.digest,
			"approved": self.approved,
			"reason": self.reason,
			"input": self.input,
			"id": self.id,
			"signature": self.signature,
		}

	@classmethod
	def from_dict(cls, data: Mapping[str, Any]) -> ApprovalDecision:
		"""Rebuild a decision from `to_dict`'s output.

		Raises:
			ApprovalError: The data is not a decision (``problem`` is ``forged``).
		"""
		if not isinstance(data, Mapping):
			raise ApprovalError(
				f"not an approval decision ({type(data).__name__}); make decisions with "
				"request.approve() or request.deny(reason)",
				problem="forged",
			)
		missing = [k for k in ("run_id", "call", "digest", "approved") if k not in data]
		if missing:
			raise ApprovalError(
				f"not an approval decision (missing {', '.join(missing)}); make decisions with "
				"request.approve() or request.deny(reason)",
				problem="forged",
			)
		decision = cls(
			run_id=data["run_id"],
			call=data["call"],
			digest=data["digest"],
			approved=data["approved"],
			reason=data.get("reason") or "",
			input=data.get("input"),
			id=data.get("id") or "",
			signature=data.get("signature") or "",
		)
		if not isinstance(decision.approved, bool) or not (
			decision.input is None or isinstance(decision.input, dict)
		):
			raise ApprovalError(
				"not an approval decision: 'approved' must be true or false and 'input' an object",
				problem="forged",
				call=_text(decision.call),
			)
		return decision


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
	"""A tool call that waits for a decision, as the approver sees it.

	Args:
		run_id: The run's id.
		call: The call's step key (``tool:<step>:<index>:<handle>``): it names the call.
		agent: The agent's name.
		tool: The tool's full handle.
		input: The call's input, with secrets redacted.
		reason: Why the agent makes the call, in its own words ("" when it gave none).
		rule: The policy rule that asks for approval.
		digest: The digest of the exact arguments (`digest`); a decision is bound to it.
	"""

	run_id: str
	call: str
	agent: str
	tool: str
	input: dict[str, Any]
	reason: str
	rule: str
	digest: str
	_approvals: Approvals | None = field(default=None, repr=False, compare=False)

	def approve(
		self, *, input: Mapping[str, Any] | None = None, reason: str = ""
	) -> ApprovalDecision:
		"""Let the call run, as it is or with an edited input.

		Args:
			input: The whole input to run instead; the loop checks it against the tool's schema.
				Secrets show as ``[redacted]`` in ``request.input``: an edit made from it sends
				that text in their place.
			reason: A note for the history.
		"""
		return self._signer().decide(
			self, approved=True, reason=reason, input=None if input is None else dict(input)
		)

	def deny(self, reason: str = "") -> ApprovalDecision:
		"""Refuse the call; the model reads the reason.

		Args:
			reason: Why, for the model (say what it should do instead).
		"""
		return self._signer().decide(self, approved=False, reason=reason)

	def _signer(self) -> Approvals:
		if self._approvals is None:
			raise ConfigurationError(
				"this approval request has no signer; get requests from "
				"agent.approval_requests(state) or ApprovalRequest.from_dict(data, approvals=...)"
			)
		return self._approvals

	def to_dict(self) -> dict[str, Any]:
		"""The request as JSON-serializable data (for a queue, a web page, a log)."""
		return {
			"run_id": self.run_id,
			"call": self.call,
			"agent": self.agent,
			"tool": self.tool,
			"input": self.input,
			"reason": self.reason,
			"rule": self.rule,
			"digest": self.digest,
		}

	@classmethod
	def from_dict(cls, data: Mapping[str, Any], *, approvals: Approvals) -> ApprovalRequest:
		"""Rebuild a request from `to_dict`'s output, signing its decisions with ``approvals``.

		Args:
			data: The request's data.
			approvals: The signer (``om.approvals`` of the process that will apply the decision,
				or one with the same key).

		Raises:
			ConfigurationError: A field is missing or has the wrong type (the request was not
				made by `to_dict`).
		"""
		names = ("run_id", "call", "agent", "tool", "digest")
		wrong = [k for k in names if not isinstance(data.get(k), str)]
		given = data.get("input") or {}
		if wrong or not isinstance(given, Mapping):
			what = ", ".join(wrong) if wrong else "input"
			raise ConfigurationError(
				f"not an approval request: {what} missing or of the wrong type; pass "
				"request.to_dict() as it was made"
			)
		fields = {k: data[k] for k in names}
		return cls(
			**fields,
			input=dict(given),
			reason=str(data.get("reason") or ""),
			rule=str(data.get("rule") or ""),
			_approvals=approvals,
		)


ApprovalHandler = Callable[[ApprovalRequest], Awaitable[ApprovalDecision] | ApprovalDecision]
"""Decides a call (sync or async): returns ``request.approve(...)`` or ``request.deny(...)``."""


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

		from openmolt_core._private import private_file

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

	__slots__ = ("_key", "ledger")

	def __init__(self, *, key: bytes | str | None = None, ledger: ApprovalLedger | None = None):
		if key is None:
			key = os.environ.get(APPROVAL_KEY_ENV) or secrets.token_bytes(32)
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
