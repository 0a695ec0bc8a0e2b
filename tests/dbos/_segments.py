"""What the tests of failed durable segments share: a model that fails for good, tools, a clerk.

A segment is what one delivery (a run, a resume) runs; these tests make one fail after it did
something with effects and check that nothing makes it do that again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from openmolt import Capability
from openmolt_core.errors import ProviderError
from openmolt_core.hooks import Park, Proceed, Refuse, Run
from openmolt_core.testing import finish
from openmolt_core.tools import tool

Reply = Callable[[Any], Any]


def down(request: Any = None) -> Any:
	"""A model reply that fails the run for good (a 401 is not retried)."""
	raise ProviderError("provider down for good", provider="x", status_code=401, retryable=False)


def down_once() -> Reply:
	"""A reply that fails the run for good the first time, and finishes ("done") after that."""
	return after_reading("", None)


def after_reading(text: str, until: Any) -> Reply:
	"""A reply that answers ``until`` while the model has not read ``text``; its first call after
	reading it fails the run for good, and later ones finish ("done")."""
	failures = {"n": 0}

	def reply(request: Any) -> Any:
		if text not in str(request.messages):
			return until
		failures["n"] += 1
		return down() if failures["n"] == 1 else finish("done")

	return reply


@tool
def look(what: str) -> str:
	"""Look.

	Args:
		what: What.
	"""
	return "seen"


def pay_tool(paid: list[int] | None = None, *, labels: list[str] | None = None) -> Any:
	"""A ``pay`` tool that records each amount it paid in ``paid``."""

	def pay(amount: int) -> str:
		"""Pay.

		Args:
			amount: How much.
		"""
		if paid is not None:
			paid.append(amount)
		return "paid"

	return tool(pay, labels=labels)


class Clerk(Capability):
	"""Parks each call (of ``only``, when given) until given a word: "yes" lets it run, anything
	else refuses it."""

	name: ClassVar[str] = "clerk"

	def __init__(self, only: str | None = None) -> None:
		self.only = only

	async def before_tool(self, run: Run, call: Any, tool: Any) -> Any:
		if self.only is not None and call.tool != self.only:
			return Proceed()
		said = run.state.ext.get("clerk")
		if said is None:
			return Park("the clerk decides", {"ticket": 1})
		return Proceed() if said == "yes" else Refuse("the clerk said no")

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		run.state.ext["clerk"] = given


PAID: list[str] = []
"""The invoices `pay` paid (a test clears it before its run)."""


def pay(invoice: str) -> str:
	"""Pay an invoice.

	Args:
		invoice: The invoice.
	"""
	PAID.append(invoice)
	return "paid"
