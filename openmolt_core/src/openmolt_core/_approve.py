"""The approval gate in the tool-call path: ask, park, check decisions, and resume a parked step.

`gate` runs before a tool call whose tool a policy rule selects (`openmolt_core.policy`), before
a call that was parked, whatever the current policy says (a parked call never runs without a
valid decision), and before a call a capability hands it under a rule of its own
(`openmolt_core.hooks.Approve`: the taint policy's, `openmolt_core.capabilities.safety`). The
handler's answer and the ledger claim go through the port under
``approval:<step>:<index>:<handle>``, so a replayed run neither asks twice nor claims twice.

`gate` answers as any capability's ``before_tool`` does: `Proceed` (the decision noted under
``approval``), `Refuse`, or `Park` under the gate's kind. A step parked on approvals keeps every
command of the reply (the loop saves it as ``state.pending``, kind ``approval``,
`openmolt_core._park`). On ``agent.resume``, `receive` reads
the decisions given; `resume` checks each of them against the rebuilt step before anything runs (a
refused decision raises and leaves the state as it was), and the loop runs the step on from the
first parked call. `pending_requests` lists what waits (``agent.approval_requests``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openmolt_core._parse import DEFAULT_MAX_DEPTH
from openmolt_core._support.jsonsafe import problem
from openmolt_core._support.jsonschema import ValidationError, format_errors
from openmolt_core._support.masking import masked_excerpt
from openmolt_core._support.sync import call as call_app
from openmolt_core.approvals import ApprovalDecisionEvent, ApprovalRequestEvent
from openmolt_core.decisions import ApprovalDecision, ApprovalHandler, ApprovalRequest
from openmolt_core.durability import journaled, step_key
from openmolt_core.errors import ApprovalError, ConfigurationError
from openmolt_core.hooks import Park, Proceed, Refuse, Words

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core._execute import RunContext
	from openmolt_core.approvals import Approvals
	from openmolt_core.commands import CallTool
	from openmolt_core.hooks import ToolDecision

__all__ = [
	"ASKED",
	"DECIDE_IN_PYTHON",
	"KIND",
	"REASON_CHARS",
	"RunApprovals",
	"approver",
	"decisions_of",
	"gate",
	"pending_requests",
	"receive",
	"resume",
	"run_approvals",
]

log: logging.Logger = logging.getLogger("openmolt")

KIND = "approval"
"""``state.pending["kind"]`` of a step parked on approvals."""

ASKED = "asked"
"""The field of a journaled approval step's value that says the approval handler was asked: a
person got a message. A decision delivered with the resume asks nobody, and a run whose segment
failed after one may be delivered again from its park (a durable backend's check of what the
failed segment ran, `openmolt_dbos`); after a person was asked, it may not: they would be asked
again."""

REASON_CHARS = 1_000
"""An agent's reason longer than this is cut for the approver."""

DECIDE_IN_PYTHON = (
	"decide with agent.approval_requests(state) and agent.resume(state, decision=...)"
)
"""The end of a parked run's error: how Python code decides (the command says its own way)."""


@dataclass(slots=True)
class RunApprovals:
	"""The approval side of one run.

	Args:
		handler: Decides calls; None parks the run on the first call that needs a decision.
		signer: Returns the signer and ledger (``om.approvals``); made on first use.
		decisions: Decisions delivered on resume, by call key; each is used once.
		parked: The calls a resumed step parked on, by call key (tool, reason, rule...).
		parking: The calls parked at this run's steps, (step, index, tool) each.
		scope: What the ledger's names of this run's decided calls end with: empty for a
			top-level run in process; for a nested run (a sub-agent's, a guardrail agent's) and
			a durable run, its own execution's mark (`nested_scope`).
	"""

	handler: ApprovalHandler | None = None
	signer: Callable[[], Approvals] | None = None
	decisions: dict[str, ApprovalDecision] = field(default_factory=dict)
	parked: dict[str, dict[str, Any]] = field(default_factory=dict)
	parking: list[tuple[int, int, str]] = field(default_factory=list)
	scope: str = ""
	_own: Approvals | None = None

	def authority(self) -> Approvals:
		"""The signer and ledger of this run."""
		if self.signer is not None:
			return self.signer()
		if self._own is None:  # here: a run that decides nothing never loads the signer
			from openmolt_core.approvals import Approvals

			self._own = Approvals()
		return self._own


def approver(ctx: RunContext) -> ApprovalHandler | None:
	"""Who decides a run's calls: its agent's ``on_approval_request``, else its caller's."""
	handler = None if ctx.owner is None else ctx.owner.on_approval_request
	link = ctx.link
	if handler is None and link is not None:  # a sub-agent asks its caller's approver
		handler = link.on_approval_request
		if handler is None and link.caller is not None:
			handler = approver(link.caller)
	return handler


def run_approvals(ctx: RunContext) -> RunApprovals:
	"""The approval side of a run, made on first use from its approver and its agent's signer."""
	approvals: RunApprovals | None = ctx.scratch.get(KIND)
	if approvals is None:
		om = getattr(ctx.owner, "om", None)
		approvals = ctx.scratch[KIND] = RunApprovals(
			approver(ctx),
			None if om is None else lambda: om.approvals,
			scope="" if ctx.link is None and not journaled(ctx.port) else nested_scope(),
		)
	return approvals


def nested_scope() -> str:
	"""The mark of one execution of a nested run, which its decided calls are claimed under.

	A nested run lives inside one step of its caller and journals nothing of its own: a caller
	that runs that step again (a call retried after a crash: `openmolt_core.capabilities.indoubt`) runs it
	from its start under the same run id, and its approver is asked again, as a top-level
	run's journaled decision lets its retried call run. Claimed under the run id and call
	alone, that new decision would be refused as a replay of the first execution's, and the
	call approved again would not run. A decision still decides one call of one execution
	once; a nested run takes no decision from outside (its state is not resumed alone).

	A durable run's execution is marked so too: its engine keeps each delivery single use (a
	decision delivered again is refused before any of it runs), and an execution run again from
	its journal (in the worker that ran it, its lease back; in another sharing a ledger file)
	reads its own decisions again, which a claim under the run id and call alone refused as used
	(the approved step failed, "already decided").
	"""
	import uuid

	return "@" + uuid.uuid4().hex


def _request(ctx: RunContext, key: str, call: CallTool, rule: str, reason: str) -> ApprovalRequest:
	signer = run_approvals(ctx).authority()
	from openmolt_core.approvals import digest  # loaded with the signer

	return ApprovalRequest(
		run_id=ctx.state.run_id,
		call=key,
		agent=ctx.agent,
		tool=call.tool,
		input=ctx.redact.deep(call.input),
		reason=masked_excerpt(reason, REASON_CHARS, ctx.redact.secrets),
		rule=rule,
		digest=digest(call.tool, call.input),
		_approvals=signer,
	)


async def _accept(
	signer: Approvals,
	decision: ApprovalDecision,
	request: ApprovalRequest,
	bound: BoundTool | None,
	*,
	claim: bool,
	scope: str = "",
) -> dict[str, Any] | None:
	"""Check a decision against the call; returns the edited input, validated, if any.

	Raises:
		ApprovalError: Forged, replayed, stale, or an invalid edited input.
	"""
	edited = None
	if decision.input is not None and bound is not None:
		# A model's reply with NaN or a lone surrogate, or nested past its bound, runs nothing
		# (docs/guides/replies.md); an edit (a handler's, the run viewer's JSON) is held to the
		# same, before the schema, and before its digest is computed (which recurses).
		unsafe = problem(decision.input, DEFAULT_MAX_DEPTH)
		if unsafe is not None:
			raise ApprovalError(
				f"decision {decision.id}: the edited input of {request.tool} cannot be held by "
				f"a run's state ({unsafe}); decide again with a valid input",
				problem="invalid",
				call=request.call,
			)
	signer.verify(decision, run_id=request.run_id, call=request.call, digest=request.digest)
	if decision.input is not None and bound is not None:
		try:
			edited = bound.validator().validate(decision.input)
		except ValidationError as exc:
			raise ApprovalError(
				f"decision {decision.id}: the edited input does not match the input schema of "
				f"{request.tool}: {format_errors(exc)}; decide again with a valid input",
				problem="invalid",
				call=request.call,
			) from None
	name = f"{request.run_id}/{request.call}{scope}"
	ledger = signer.ledger
	if claim:
		fresh = await ledger.claim(name, decision.id)
		prior = None if fresh else (await ledger.claimed(name) or "unknown")
	else:
		prior = await ledger.claimed(name)
	if prior is not None:
		raise ApprovalError(
			f"{request.call} of run {request.run_id} was already decided (decision {prior}); a "
			"call is decided once, and a decision is used once",
			problem="replayed",
			call=request.call,
		)
	return edited


async def gate(
	ctx: RunContext,
	index: int,
	call: CallTool,
	bound: BoundTool,
	rule: str | None = None,
) -> ToolDecision:
	"""Decide whether a call runs: the one gate every tool call that may not run goes through.

	For a call that waits: ask the handler, use a delivered decision, or park the step.

	Args:
		ctx: The run.
		index: The call's index in the reply.
		call: The call, as the capabilities let it through (its input maybe rewritten).
		bound: Its tool.
		rule: The rules capabilities make the call wait under (`openmolt_core.hooks.Approve`).

	Returns:
		`Proceed` (with the edited input, and the decision noted under ``approval``), `Refuse`
		(the entry the model reads), or `Park` (under the gate's kind, ``approval``); a call's
		reason goes to the approver as the capabilities let it through
		(`openmolt_core.hooks.Capability.before_words`), which may also refuse the call or
		`Stop` the run.
	"""
	approvals = run_approvals(ctx)
	key = step_key("tool", ctx.step, index, call.tool)
	parked = approvals.parked.pop(key, None)
	if bound.approval is None and parked is None and rule is None:
		return Proceed()
	delivered = approvals.decisions.pop(key, None)
	own = "; ".join(r for r in (bound.approval, rule) if r)
	rule = (parked or {}).get("rule") or own
	if parked is not None:  # its reason went through the capabilities when the call parked
		reason = str(parked.get("reason") or "")
	else:
		reason = call.reason
		if reason and ctx.hooks.before_words:  # words for the approver (an output guardrail's)
			reason, judged = await ctx.hooks.decide_words(ctx, Words("reason", reason, call.tool))
			if not isinstance(judged, Proceed):
				return judged  # refused (the call does not run) or stopped
	request = _request(ctx, key, call, rule, reason)
	if delivered is None:
		if ctx.wants("approval:request"):
			await ctx.emit(ApprovalRequestEvent(agent=ctx.agent, step=ctx.step, request=request))
		else:
			ctx.skip_event()
		if approvals.handler is None:
			return _park(ctx, index, request, "nobody can decide now")
	handler = approvals.handler
	signer = approvals.authority()

	async def decide() -> dict[str, Any]:
		if delivered is not None or handler is None:
			return await _decided(delivered)
		# The handler asks a person (a message, a notification): the journal says so, and a
		# durable run that failed after it is not delivered again from the park before it,
		# which would ask them again (`openmolt_dbos`, ``ASKED``).
		return {**await _decided(None), ASKED: True}

	async def _decided(decision: ApprovalDecision | None) -> dict[str, Any]:
		from openmolt_core.approvals import ApprovalUnavailable  # loaded with the signer

		if decision is None and handler is not None:
			try:
				answer = await call_app(handler, request)  # sync: in a worker thread
			except ApprovalUnavailable as exc:
				return {"parked": str(exc) or "nobody can decide now"}
			except Exception as exc:
				log.exception("the approval handler failed; the call does not run")
				return {"refused": f"the approver could not be asked ({type(exc).__name__})"}
			if not isinstance(answer, ApprovalDecision):
				return {
					"refused": f"the approval handler returned {type(answer).__name__}, not "
					"request.approve() or request.deny(reason)"
				}
			decision = answer
		if decision is None:  # pragma: no cover - delivered or asked above
			return {"refused": "no decision"}
		try:
			edited = await _accept(
				signer, decision, request, bound, claim=True, scope=approvals.scope
			)
		except ApprovalError as exc:
			return {"refused": str(exc), "problem": exc.problem}
		return {
			"action": decision.action,
			"reason": decision.reason,
			"input": edited,
			"id": decision.id,
		}

	outcome: dict[str, Any] = await ctx.port.step(
		step_key(KIND, ctx.step, index, call.tool), decide
	)
	if "parked" in outcome:
		return _park(ctx, index, request, outcome["parked"])
	action = outcome.get("action", "refused")
	reason = ctx.redact(str(outcome.get("refused") or outcome.get("reason") or ""))
	if ctx.wants("approval:decision"):
		await ctx.emit(
			ApprovalDecisionEvent(
				agent=ctx.agent,
				step=ctx.step,
				tool=call.tool,
				call=key,
				action=action,
				reason=reason,
				decision_id=str(outcome.get("id") or ""),
				input=ctx.redact.deep(outcome["input"])
				if action == "edited" and isinstance(outcome.get("input"), dict)
				else None,
			)
		)
	else:
		ctx.skip_event()
	if action == "refused":
		await ctx.error("approval", f"{key}: {reason}", call=key)
		problem = outcome.get("problem")
		why = f"its decision was refused ({problem})" if problem else reason
		return Refuse(why, {"tool": call.tool, "ok": False, "error": f"not run: {why}"})
	audit: dict[str, Any] = {"decision": action, "id": outcome["id"], "digest": request.digest}
	if rule:
		audit["rule"] = rule
	if action == "denied":
		said = f": {reason}" if reason else " (no reason given)"
		error = f"denied by the approver{said}"
		return Refuse(error, {"tool": call.tool, "ok": False, "error": error, "approval": audit})
	if reason:
		audit["reason"] = reason
	return Proceed(outcome.get("input"), {"approval": audit})


def _park(ctx: RunContext, index: int, request: ApprovalRequest, why: str) -> Park:
	# The step parks under the gate's kind (the loop records the call: `Capability.parks`); the
	# run's message names every call of the step parked so far.
	parking = run_approvals(ctx).parking
	parking.append((ctx.step, index, request.tool))
	tools = [t for s, _, t in sorted(parking) if s == ctx.step]
	call = {
		"call": request.call,
		"tool": request.tool,
		"reason": request.reason,
		"rule": request.rule,
		"digest": request.digest,
	}
	waits = "waits" if len(tools) == 1 else "wait"
	return Park(f"{', '.join(tools)} {waits} for approval ({why}); {DECIDE_IN_PYTHON}", call)


def decisions_of(value: Any, signer: Approvals | None = None) -> list[ApprovalDecision]:
	"""Read ``resume(decision=...)``: one decision or several, objects or their dicts.

	Args:
		value: What ``resume`` was given.
		signer: When given, each decision's signature is checked here, before the run is
			touched (and before a durable backend starts the run's next segment).

	Raises:
		ApprovalError: A dict that is not a decision, or (with ``signer``) a forged decision.
		ConfigurationError: Something else than decisions.
	"""
	if value is None:
		return []
	items = [value] if isinstance(value, (ApprovalDecision, Mapping)) else value
	if not isinstance(items, Sequence) or isinstance(items, (str, bytes, bytearray)):
		raise ConfigurationError(
			"resume: decision must be a decision (request.approve() / request.deny(reason)), "
			"its dict, or a list of them"
		)
	out = []
	for item in items:
		if isinstance(item, ApprovalDecision):
			out.append(item)
		elif isinstance(item, Mapping):
			out.append(ApprovalDecision.from_dict(item))
		else:
			raise ConfigurationError(
				f"resume: decision: {type(item).__name__} is not a decision; give "
				"request.approve() or request.deny(reason)"
			)
	if signer is not None:
		for decision in out:
			signer.check_signature(decision)
	return out


def receive(ctx: RunContext, given: Any, answer: str | None) -> list[ApprovalDecision]:
	"""Read what ``agent.resume`` gives a run parked on approvals: its decisions, signatures checked.

	Args:
		ctx: The parked run.
		given: ``decision=...``: one decision or several, objects or their dicts, or None.
		answer: ``answer=...``: refused (the run waits for decisions).

	Raises:
		ApprovalError: A forged decision, or a dict that is not a decision.
		ConfigurationError: Something else than decisions, an answer, or no decision for a run
			nobody can decide (no ``on_approval_request``).
	"""
	decisions = decisions_of(given, run_approvals(ctx).authority())
	if answer is not None:
		raise ConfigurationError(
			"resume: this run waits for approval decisions, not an answer; give "
			"decision=request.approve() or request.deny(reason)"
		)
	if not decisions and run_approvals(ctx).handler is None:
		raise ConfigurationError(
			"resume: this run waits for approval decisions: give decision=... (see "
			"agent.approval_requests(state)), or set on_approval_request"
		)
	return decisions


def pending_requests(ctx: RunContext, pending: Mapping[str, Any]) -> list[ApprovalRequest]:
	"""The requests of a step parked on approvals, signed by this run's signer.

	Args:
		ctx: The parked run.
		pending: ``state.pending``: the parked step.
	"""
	from openmolt_core._park import saved_commands
	from openmolt_core.commands import CallTool

	commands = saved_commands(pending)
	out = []
	for info in pending.get("calls", []):
		call = commands[info["index"]]
		if isinstance(call, CallTool):
			out.append(
				_request(ctx, info["call"], call, info.get("rule", ""), info.get("reason", ""))
			)
	return out


async def resume(ctx: RunContext, pending: Mapping[str, Any], given: Any) -> None:
	"""Check the decisions for a step parked on approvals, and hand them to the gate; nothing runs.

	The step is rebuilt as the loop rebuilds it (every command still to run is checked again
	in this agent's context: its tools may differ), so each decision is checked against the
	call that will run.

	Args:
		ctx: The resumed run (``ctx.step`` is the parked step).
		pending: ``state.pending``.
		given: The decisions `receive` read, or the answer ``run(input, history=state)`` gives.

	Raises:
		ConfigurationError: An answer was given, or the saved step is damaged.
		ApprovalError: A decision is forged, replayed, stale or invalid; the state is untouched.
	"""
	if isinstance(given, str):
		raise ConfigurationError(
			"this run waits for approval decisions, not an answer: use "
			"agent.resume(state, decision=...)"
		)
	decisions: Sequence[ApprovalDecision] = given or ()
	from openmolt_core._execute import check
	from openmolt_core._park import restore_step
	from openmolt_core.commands import CallTool

	commands, results, _, _ = restore_step(pending, check(ctx))
	waiting = {c["call"]: c for c in pending.get("calls", [])}
	for info in waiting.values():
		at = info["index"]
		parked = commands[at] if isinstance(at, int) and 0 <= at < len(commands) else None
		tool = parked.tool if isinstance(parked, CallTool) else ""
		if info["call"] != step_key("tool", ctx.step, info["index"], tool):
			raise ConfigurationError(
				f"resume: the saved state's pending step is damaged (call {info['call']!r} does "
				"not match its command); it cannot be resumed"
			)
	run_id = ctx.state.run_id
	approvals = run_approvals(ctx)
	signer = approvals.authority()
	chosen: dict[str, ApprovalDecision] = {}
	for decision in decisions:
		signer.check_signature(decision)  # first: a forged decision's fields may be anything
		info = waiting.get(decision.call)
		if info is None or decision.run_id != run_id:
			signer.verify(decision, run_id=run_id, call=decision.call, digest=decision.digest)
			raise ApprovalError(
				f"decision {decision.id} is for {decision.call}, which does not wait for a "
				f"decision: it is stale (this run waits for: {', '.join(waiting) or 'nothing'})",
				problem="stale",
				call=decision.call,
			)
		if decision.call in chosen:
			raise ApprovalError(
				f"two decisions for {decision.call}; give one per call",
				problem="replayed",
				call=decision.call,
			)
		command = commands[info["index"]]
		if isinstance(command, CallTool) and results[info["index"]] is None:
			request = _request(ctx, decision.call, command, info.get("rule", ""), "")
			bound = ctx.tools.get(command.tool)
			await _accept(signer, decision, request, bound, claim=False, scope=approvals.scope)
		chosen[decision.call] = decision
	approvals.decisions = chosen
	approvals.parked = waiting
