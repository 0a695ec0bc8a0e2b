"""What a durable store keeps of a run outside its step values is masked too, and still works.

A failed step is journaled with its error (`RedactedPort` masks it first), and a durable run's
workflow keeps the approval decisions delivered to it: `Approvals.masked` masks a decision's
reason and edited input and signs it again, so the run still accepts it.
"""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from openmolt_core._redacted_port import RedactedPort
from openmolt_core.approvals import ApprovalDecision, Approvals
from openmolt_core.durability import LOCAL_PORT, ForwardingPort
from openmolt_core.errors import ApprovalError, ProviderError
from openmolt_core.filestore import FileStore
from openmolt_core.secrets import Redactor
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

SECRET = "sk-live-kept-masked-0123456789"


class Journal(ForwardingPort):
	"""Keeps each step's error as DBOS does: pickled, when the step raises."""

	def __init__(self) -> None:
		super().__init__(LOCAL_PORT)
		self.errors: list[bytes] = []

	async def step(
		self,
		key: str,
		fn: Callable[[], Awaitable[Any]],
		*,
		encode: Callable[[Any], Any] | None = None,
		decode: Callable[[Any], Any] | None = None,
	) -> Any:
		try:
			return await fn()
		except Exception as exc:
			self.errors.append(pickle.dumps(exc))
			raise


async def test_a_failed_step_is_journaled_with_its_error_masked() -> None:
	"""A provider error quoting a key: the journal keeps it masked; its type and status stay."""
	journal = Journal()
	port = RedactedPort(journal, lambda: Redactor(frozenset({SECRET})), FileStore)

	async def call() -> Any:
		raise ProviderError(f"401: bad key {SECRET}", provider="x", status_code=401)

	with pytest.raises(ProviderError) as caught:
		await port.step("model:1", call)
	assert caught.value.status_code == 401 and "[redacted]" in str(caught.value)
	[kept] = journal.errors
	assert leaks(kept, SECRET) == []
	assert isinstance(pickle.loads(kept), ProviderError)


def _decision(approvals: Approvals, reason: str, edited: dict[str, Any] | None) -> ApprovalDecision:
	unsigned = ApprovalDecision(
		run_id="run-1",
		call="tool:1:0:local.send",
		digest="d" * 64,
		approved=True,
		reason=reason,
		input=edited,
		id="0123456789abcdef",
	)
	return ApprovalDecision(**{**unsigned.to_dict(), "signature": approvals._sign(unsigned)})


def test_a_masked_decision_is_signed_again_for_the_same_call() -> None:
	"""Reason and edited input masked; same id, call and digest; its signature checks."""
	approvals = Approvals(key="k" * 32)
	decision = _decision(approvals, f"ok, {SECRET}", {"text": f"with {SECRET}", "n": 2})
	masked = approvals.masked(decision, Redactor(frozenset({SECRET})))
	assert masked.reason == "ok, [redacted]" and masked.input == {"text": "with [redacted]", "n": 2}
	assert (masked.id, masked.call, masked.digest, masked.run_id) == (
		decision.id,
		decision.call,
		decision.digest,
		decision.run_id,
	)
	assert leaks(repr(masked.to_dict()), SECRET) == []
	approvals.verify(masked, run_id="run-1", call=decision.call, digest=decision.digest)


def test_a_decision_showing_no_secret_is_kept_as_it_is() -> None:
	"""Nothing to mask: the very decision comes back."""
	approvals = Approvals(key="k" * 32)
	decision = _decision(approvals, "fine", None)
	assert approvals.masked(decision, Redactor(frozenset({SECRET}))) is decision


def test_a_decision_not_signed_here_is_masked_but_not_signed() -> None:
	"""Another key's decision: masked, and still refused as forged (masking signs nothing new)."""
	mine, theirs = Approvals(key="k" * 32), Approvals(key="t" * 32)
	decision = _decision(theirs, f"ok, {SECRET}", None)
	masked = mine.masked(decision, Redactor(frozenset({SECRET})))
	assert masked.reason == "ok, [redacted]" and masked.signature == ""
	with pytest.raises(ApprovalError) as caught:
		mine.check_signature(masked)
	assert caught.value.problem == "forged"
