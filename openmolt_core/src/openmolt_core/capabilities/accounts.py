"""End users' accounts as a capability: a call waits until its user has connected the account.

``create_agent`` adds it when the agent binds an integration per end user
(``integrations=[{"integration": "gmail", "account": "user"}]``; `openmolt_core.accounts`). Before
each call of such a tool (`before_tool`, journaled by the loop as ``hook:<step>:<index>:<tool>``)
it asks the tool's account whether the run's user (``run.state.user``) has connected it with the
scopes the call needs. When not (never connected, a scope missing, the grant revoked), it parks the
call (`openmolt_core.hooks.Park`, status ``authorization_required``) with the authorization request
(integration, user, scopes, consent URL, tool, reason: plain JSON, never a secret). Once the user
has connected, ``agent.resume(state)`` goes on: nothing is delivered, the call is asked about
again. A run without a user, or a user without the credential an API key needs, is refused with a
reason the model reads.

When a run ends parked on it, the ``authorization:request`` event tells each request
(`on_run_end`: it runs on every drive, replays too, so the event's number is deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.accounts import CAPABILITY_NAME, authorization_requests
from openmolt_core.hooks import Capability, Park, Proceed, Refuse

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.accounts import UserAccounts
	from openmolt_core.commands import CallTool
	from openmolt_core.hooks import Run, ToolDecision, ToolSpec
	from openmolt_core.result import RunResult

__all__ = ["RESUME_IN_PYTHON", "EndUserAccounts", "park_message"]

RESUME_IN_PYTHON = (
	"once connected, go on with agent.resume(state) "
	"(openmolt_core.accounts.authorization_requests(state) lists them)"
)
"""The end of `park_message`: how Python code goes on (the command says its own way)."""


class EndUserAccounts(Capability):
	"""Park a call until the run's end user has connected the account its tool acts with."""

	name = CAPABILITY_NAME
	# Its decisions are journaled steps (hook:...) that a run of the same tools bound for the
	# operator does not have: a durable worker must know it from the fingerprint.
	in_fingerprint: ClassVar[bool] = True

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""Proceed when the tool acts for the operator or the user is connected; else park.

		Args:
			run: The run (its ``state.user`` and ``state.run_id``).
			call: The call.
			tool: The tool's record: a tool bound per end user has an ``account``.
		"""
		account: UserAccounts | None = getattr(tool, "account", None)  # made by the accounts
		if account is None:
			return Proceed()
		bound: BoundTool = tool  # type: ignore[assignment]  # the loop's record of a bound tool
		found = await account.authorize(run.state.user, bound, run.state.run_id)
		if found is None:
			return Proceed()
		if "authorize" in found:
			request = dict(found["authorize"])
			return Park(park_message(request), request, status="authorization_required")
		return Refuse(str(found.get("error") or f"{call.tool} is not authorized"))

	async def on_run_end(self, run: Run, result: RunResult) -> None:
		"""Emit ``authorization:request`` for each call the run is parked on here."""
		requests = authorization_requests(result.state)
		if not requests:
			return
		from openmolt_core.accounts import AuthorizationRequestEvent

		step = int((result.state.pending or {}).get("step") or result.state.steps)
		for request in requests:
			if run.wants("authorization:request"):
				event = AuthorizationRequestEvent(agent=run.agent, step=step, request=request)
				await run.emit(event)
			else:
				run.skip_event()


def park_message(request: Mapping[str, Any]) -> str:
	"""What a parked run's result says (its ``error``): who must connect what, and where.

	Args:
		request: The authorization request.
	"""
	return (
		f"{request.get('tool')} waits for {request.get('user')} to connect "
		f"{request.get('integration')}: {request.get('url')}; {RESUME_IN_PYTHON}"
	)
