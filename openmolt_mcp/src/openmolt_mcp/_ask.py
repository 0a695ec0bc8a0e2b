"""The served agent's questions, asked of the calling client's user (MCP elicitation).

``openmolt mcp`` answers the agent's ``requestHumanInput`` by asking the client that called it,
when the client declared elicitation, as a form with one text field (`ANSWER_SCHEMA`):

- on a connection of MCP 2026-07-28 or later, the question travels in the call's result: the run
  parks, the call returns an ``InputRequiredResult`` whose ``requestState`` names the parked run
  (`Questions`), and the client's retry with the answer resumes it;
- on an older one, the server sends ``elicitation/create`` while the call waits.

A client that did not declare elicitation is answered `NOBODY`, and the run goes on.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	import mcp.types as types

	from openmolt_core.result import RunState
	from openmolt_core.secrets import Redactor

__all__ = [
	"ANSWER_SCHEMA",
	"DECLINED",
	"MAX_PARKED",
	"NOBODY",
	"Questions",
	"asking",
	"asks_client",
]

ANSWER_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {"answer": {"type": "string", "title": "Answer"}},
	"required": ["answer"],
}
"""The form a question is asked with: one text field."""

MAX_PARKED = 1_000
"""The most runs kept parked on a question sent in a call's result; past it the oldest goes."""

DECLINED = "(the person chose not to answer)"
"""The answer the run reads when the client's user declines or dismisses the question."""

NOBODY = "nobody can answer: the client that called this agent cannot ask its user; go on without"
"""The answer the run reads when the client cannot ask (it declared no elicitation)."""

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


def answer_of(reply: Any) -> str:
	"""The run's answer from the client's elicitation reply (`DECLINED` unless accepted)."""
	content = getattr(reply, "content", None)
	if getattr(reply, "action", None) != "accept" or not isinstance(content, dict):
		return DECLINED
	return str(content.get("answer", ""))


def asks_client(redact: Redactor) -> Callable[[str], Awaitable[str]]:
	"""A human-input handler that asks the calling client's user.

	Args:
		redact: Masks the instance's secrets in the question (it leaves the instance).
	"""

	async def ask(question: str) -> str:
		ctx = _CALL.get()
		if ctx is None or not _elicits(ctx):
			return NOBODY
		if in_result(ctx):
			from openmolt_core.agent import HumanInputUnavailable

			raise HumanInputUnavailable(question)  # the run parks: `Questions.park` asks
		return answer_of(await ctx.session.elicit_form(redact(question), ANSWER_SCHEMA))

	return ask


class Questions:
	"""The runs parked on a question sent in a call's result, by its ``requestState``.

	Args:
		most: The most kept (the oldest goes first).
	"""

	def __init__(self, most: int = MAX_PARKED) -> None:
		self.most = most
		self.parked: OrderedDict[str, RunState] = OrderedDict()

	def park(self, state: RunState, question: str) -> types.InputRequiredResult:
		"""Keep a parked run; the result that asks its question (the client retries with it).

		Args:
			state: The run parked on the question.
			question: The question, redacted.
		"""
		import mcp.types as types

		token = secrets.token_urlsafe(24)  # unguessable: it alone resumes the run
		self.parked[token] = state
		while len(self.parked) > self.most:
			self.parked.popitem(last=False)
		form = types.ElicitRequestFormParams(message=question, requested_schema=ANSWER_SCHEMA)
		return types.InputRequiredResult(
			input_requests={"answer": types.ElicitRequest(params=form)}, request_state=token
		)

	def take(self, params: types.CallToolRequestParams) -> tuple[RunState, str] | None:
		"""The parked run a retry names, with the client's answer (once), or None."""
		state = self.parked.pop(params.request_state or "", None)
		if state is None:
			return None
		return state, answer_of((params.input_responses or {}).get("answer"))
