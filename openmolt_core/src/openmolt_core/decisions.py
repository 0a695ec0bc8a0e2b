"""The approval contract: the request an approver sees, the signed decision, the handler.

These are the types the loop, the events, the tools and the durability port share
(`openmolt_core.approvals` re-exports them, with the signer `Approvals`, the ledgers, the digest
of a call's arguments and `ApprovalUnavailable`, which only the approvals layer uses). An
`ApprovalRequest` makes its decisions with a `Signer`, which only the approvals layer implements.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from openmolt_core._support import lazy_exports
from openmolt_core.errors import ApprovalError, ConfigurationError

__all__ = [
	"ApprovalDecision",
	"ApprovalHandler",
	"ApprovalRequest",
	"Signer",
]


def _text(value: Any, most: int = 120) -> str:
	"""A field of a decision as an error shows it: cut, and a repr when it is no string."""
	from openmolt_core._support.masking import masked_excerpt

	return masked_excerpt(value if isinstance(value, str) else repr(value), most, more="...")


# requests and decisions -------------------------------------------------------------------


Action = Literal["approved", "edited", "denied"]


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
	"""A decision on one tool call, bound to that call and to its exact arguments, and signed.

	Make one with `ApprovalRequest.approve` or `ApprovalRequest.deny`; `to_dict` and `from_dict`
	carry it between processes as JSON.

	Args:
		run_id: The run the call belongs to.
		call: The call's step key (``tool:<step>:<index>:<handle>``).
		digest: The digest of the arguments the decision was made for (`openmolt_core.approvals.digest`).
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
		digest: The digest of the exact arguments (`openmolt_core.approvals.digest`); a decision is bound to it.
	"""

	run_id: str
	call: str
	agent: str
	tool: str
	input: dict[str, Any]
	reason: str
	rule: str
	digest: str
	_approvals: Signer | None = field(default=None, repr=False, compare=False)

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

	def _signer(self) -> Signer:
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
	def from_dict(cls, data: Mapping[str, Any], *, approvals: Signer) -> ApprovalRequest:
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


@runtime_checkable
class Signer(Protocol):
	"""What signs the decisions of an `ApprovalRequest` (`openmolt_core.approvals.Approvals`)."""

	def decide(
		self,
		request: ApprovalRequest,
		*,
		approved: bool,
		reason: str = "",
		input: dict[str, Any] | None = None,
	) -> ApprovalDecision:
		"""A signed decision on a request.

		Args:
			request: The call decided.
			approved: Whether it may run.
			reason: Why.
			input: The edited input (approvals only).
		"""
		...


# Moved beside the approvals that alone use them (`openmolt_core.approvals`); the old path works.
__getattr__, __dir__ = lazy_exports(
	globals(),
	{"digest": "openmolt_core.approvals", "ApprovalUnavailable": "openmolt_core.approvals"},
)
