"""The served agent's questions and approvals, asked of the calling client's user (MCP elicitation).

``openmolt mcp`` answers the agent's ``requestHumanInput`` by asking the client that called it,
when the client declared elicitation, as a form with one text field (`ANSWER_SCHEMA`), and a
tool call that waits for approval (the agent's ``requiresApproval`` rules) as a form with a yes
or no and a reason (`APPROVAL_SCHEMA`), one form per call:

- on a connection of MCP 2026-07-28 or later, the form travels in the call's result: the run
  parks, the call returns an ``InputRequiredResult`` whose ``requestState`` names the parked run
  (`Questions`), and the client's retry with the answers resumes it;
- on an older one, the server sends ``elicitation/create`` while the call waits.

A client that did not declare elicitation is answered `NOBODY`, and a call that waits for its
approval is denied (`NO_APPROVER`): nothing it would do is done, and the run goes on, so the
model can say what it could not do. An approval is the client's user's own decision: a declined
or dismissed form, or a form accepted without ``approve: true``, denies the call. A client that
goes away while its user is asked (the connection closes before the form is answered) decided
nothing: the run parks on the question or the approval, as when nobody can be asked now, rather
than read a refusal and go on without the client (`elicited`).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	import mcp.types as types

	from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
	from openmolt_core.result import RunState

__all__ = [
	"ANSWER_SCHEMA",
	"APPROVAL_SCHEMA",
	"DECLINED",
	"MAX_PARKED",
	"NOBODY",
	"NO_APPROVER",
	"Parked",
	"Questions",
	"approval_message",
	"approves_client",
	"asking",
	"asks_client",
	"decision_of",
]

ANSWER_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {"answer": {"type": "string", "title": "Answer"}},
	"required": ["answer"],
}
"""The form a question is asked with: one text field."""

APPROVAL_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"approve": {"type": "boolean", "title": "Approve", "description": "Let this call run"},
		"reason": {"type": "string", "title": "Reason", "description": "Optional, for the agent"},
	},
	"required": ["approve"],
}
"""The form a tool call waiting for approval is asked with: yes or no, and an optional reason."""

MAX_PARKED = 1_000
"""The most runs kept parked on a form sent in a call's result; past it the oldest goes."""

DECLINED = "(the person chose not to answer)"
"""The answer the run reads when the client's user declines or dismisses the question."""

NOBODY = "nobody can answer: the client that called this agent cannot ask its user; go on without"
"""The answer the run reads when the client cannot ask (it declared no elicitation)."""

NO_APPROVER = (
	"nobody could approve this call: the client that called this agent cannot ask its user, "
	"so it was not made; do not try it again, say what you could not do"
)
"""The reason a call is denied with when the client cannot ask its user for the approval."""

_DENIED = "the person did not approve this call"
"""The reason a call is denied with when the client's user declines it and gives no reason."""

_GONE = "the client that called this agent went away before its user answered"
"""Why a run parks when the connection closes while a form waits for the client's user."""

_MESSAGE_CHARS = 2_000
"""The longest approval message a form shows (the call's input is cut to fit)."""

_IN_RESULT = "2026-07-28"
"""The first MCP version whose questions travel in the call's result (``InputRequiredResult``)."""

_CALL: ContextVar[Any] = ContextVar("openmolt_mcp_call", default=None)


@contextmanager
def asking(ctx: Any) -> Iterator[None]:
	"""Within the block, the run's questions go to the client of this tool call.

	Args:
		ctx: The call's request context (the SDK's ``ServerRequestContext``).
	"""
	token = _CALL.set(ctx)
	try:
		yield
	finally:
		_CALL.reset(token)


def in_result(ctx: Any) -> bool:
	"""Whether questions travel in the call's result on this connection (2026-07-28 and later)."""
	from mcp_types.version import is_version_at_least

	version = getattr(ctx, "protocol_version", None)
	return isinstance(version, str) and is_version_at_least(version, _IN_RESULT)


def _elicits(ctx: Any) -> bool:
	import mcp.types as types

	wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
	return bool(ctx.session.check_client_capability(wanted))


async def elicited(ctx: Any, message: str, schema: dict[str, Any], gone: Exception) -> Any:
	"""The client's reply to a form sent as ``elicitation/create``.

	Args:
		ctx: The call's request context.
		message: The form's message (redacted).
		schema: The form's schema.
		gone: Raised when the connection closes before the reply comes: the run parks on the
			question or the call (`HumanInputUnavailable`, `ApprovalUnavailable`), its state
			kept, rather than take the closed connection for the user's answer and go on.
	"""
	from mcp import MCPError
	from mcp_types import CONNECTION_CLOSED

	try:
		return await ctx.session.elicit_form(message, schema)
	except MCPError as exc:
		if exc.code == CONNECTION_CLOSED:
			raise gone from None
		raise


def answer_of(reply: Any) -> str:
	"""The run's answer from the client's elicitation reply (`DECLINED` unless accepted)."""
	content = getattr(reply, "content", None)
	if getattr(reply, "action", None) != "accept" or not isinstance(content, dict):
		return DECLINED
	return str(content.get("answer", ""))


def asks_client(redact: Callable[[str], str]) -> Callable[[str], Awaitable[str]]:
	"""A human-input handler that asks the calling client's user.

	Args:
		redact: Masks the instance's secrets in the question (it leaves the instance).
	"""

	async def ask(question: str) -> str:
		ctx = _CALL.get()
		if ctx is None or not _elicits(ctx):
			return NOBODY
		from openmolt_core.agent import HumanInputUnavailable

		if in_result(ctx):
			raise HumanInputUnavailable(question)  # the run parks: `Questions.park` asks
		asked = redact(question)
		gone = HumanInputUnavailable(_GONE)
		return answer_of(await elicited(ctx, asked, ANSWER_SCHEMA, gone))

	return ask


def approval_message(request: ApprovalRequest, redact: Callable[[str], str]) -> str:
	"""What the client's user reads about a call that waits for approval: who, what, with what.

	Args:
		request: The call (its input has the run's secrets redacted already).
		redact: Masks the instance's secrets as well (the message leaves the instance).
	"""
	import json

	why = request.reason  # the agent's own words; the rule is the operator's, not the user's
	head = f"{request.agent} wants to call {request.tool}" + (f" ({why})" if why else "")
	shown = json.dumps(request.input, ensure_ascii=False, default=str)
	room = max(_MESSAGE_CHARS - len(head) - 30, 100)
	if len(shown) > room:
		shown = shown[: room - 1] + "…"
	return redact(f"{head} with {shown}. Approve it?")


def decision_of(request: ApprovalRequest, reply: Any) -> ApprovalDecision:
	"""The decision an elicitation reply makes: approved only when accepted with ``approve`` true.

	Args:
		request: The call the form asked about.
		reply: The client's ``ElicitResult`` (or None when it sent none).
	"""
	content = getattr(reply, "content", None)
	if getattr(reply, "action", None) != "accept" or not isinstance(content, dict):
		return request.deny(_DENIED)
	reason = str(content.get("reason") or "")[:_MESSAGE_CHARS]
	if content.get("approve") is True:
		return request.approve(reason=reason)
	return request.deny(reason or _DENIED)


def approves_client(
	redact: Callable[[str], str],
) -> Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]:
	"""An approval handler that asks the calling client's user (see the module's text).

	Args:
		redact: Masks the instance's secrets in the form's message (it leaves the instance).
	"""

	async def decide(request: ApprovalRequest) -> ApprovalDecision:
		ctx = _CALL.get()
		if ctx is None or not _elicits(ctx):
			return request.deny(NO_APPROVER)
		from openmolt_core.approvals import ApprovalUnavailable

		if in_result(ctx):
			raise ApprovalUnavailable  # the run parks: `Questions.park_approvals` asks
		message = approval_message(request, redact)
		reply = await elicited(ctx, message, APPROVAL_SCHEMA, ApprovalUnavailable(_GONE))
		return decision_of(request, reply)

	return decide


@dataclass(frozen=True, slots=True)
class Parked:
	"""A parked run a client's retry resumes, with what the client's user gave it.

	Args:
		state: The parked run's state.
		answer: The answer to its question (a run parked on ``human_input_required``).
		replies: The client's reply to each call's form, by the call's key (a run parked on
			``approval_required``); None for a question.
	"""

	state: RunState
	answer: str | None = None
	replies: dict[str, Any] | None = None


class Questions:
	"""The runs parked on a form sent in a call's result, by its ``requestState``.

	Args:
		most: The most kept (the oldest goes first).
	"""

	def __init__(self, most: int = MAX_PARKED) -> None:
		self.most = most
		self.parked: OrderedDict[str, tuple[RunState, dict[str, str] | None]] = OrderedDict()

	def _keep(self, state: RunState, calls: dict[str, str] | None) -> str:
		token = secrets.token_urlsafe(24)  # unguessable: it alone resumes the run
		self.parked[token] = (state, calls)
		while len(self.parked) > self.most:
			self.parked.popitem(last=False)
		return token

	def park(self, state: RunState, question: str) -> types.InputRequiredResult:
		"""Keep a parked run; the result that asks its question (the client retries with it).

		Args:
			state: The run parked on the question.
			question: The question, redacted.
		"""
		import mcp.types as types

		form = types.ElicitRequestFormParams(message=question, requested_schema=ANSWER_SCHEMA)
		return types.InputRequiredResult(
			input_requests={"answer": types.ElicitRequest(params=form)},
			request_state=self._keep(state, None),
		)

	def park_approvals(
		self, state: RunState, requests: list[ApprovalRequest], redact: Callable[[str], str]
	) -> types.InputRequiredResult:
		"""Keep a run parked on approvals; the result that asks one form per call.

		Args:
			state: The run parked on ``approval_required``.
			requests: The calls it waits for (``agent.approval_requests(state)``).
			redact: Masks the instance's secrets in the forms' messages.
		"""
		import mcp.types as types

		calls = {f"approve-{i}": request.call for i, request in enumerate(requests)}
		forms = {
			key: types.ElicitRequest(
				params=types.ElicitRequestFormParams(
					message=approval_message(request, redact), requested_schema=APPROVAL_SCHEMA
				)
			)
			for key, request in zip(calls, requests, strict=True)
		}
		return types.InputRequiredResult(
			input_requests=forms, request_state=self._keep(state, calls)
		)

	def take(self, params: types.CallToolRequestParams) -> Parked | None:
		"""The parked run a retry names, with what the client's user gave it (once), or None."""
		kept = self.parked.pop(params.request_state or "", None)
		if kept is None:
			return None
		state, calls = kept
		responses = params.input_responses or {}
		if calls is None:
			return Parked(state, answer=answer_of(responses.get("answer")))
		return Parked(state, replies={call: responses.get(key) for key, call in calls.items()})
