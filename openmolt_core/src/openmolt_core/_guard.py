"""Guardrails and the taint policy inside a run: what the loop and the approvals gate call.

`RunGuards` is the run's side of `openmolt_core.guardrails` and `openmolt_core.taint`:

- `RunGuards.start` runs the input guardrails before the first model call (reading the input
  back from the first turn), and `RunGuards.alongside` runs the parallel ones with it;
- `RunGuards.call` is the first part of the approvals gate (`openmolt_core._approve.gate`): the
  tool-call guardrails, then the taint policy, which refuses the call or names the rule that
  makes it wait for a decision;
- `RunGuards.result` runs the tool-result guardrails and marks the run tainted;
- `RunGuards.finish` runs the output guardrails on a ``finish``.

Every verdict goes through the run's port under ``guard:<step>:<stage>:<index>:<n>``; what is
not ``allow`` is logged, emitted as a ``guardrail`` event and kept in ``state.audit``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from openmolt_core.durability import step_key
from openmolt_core.events import GuardrailEvent, TaintEvent
from openmolt_core.guardrails.base import Guardrail, GuardrailCheck, Stage, Verdict
from openmolt_core.llm import Usage
from openmolt_core.taint import MAX_TAINT_RECORDS, TaintPolicy

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core._execute import RunContext, RunEnd, StepRecord
	from openmolt_core.commands import CallTool, Finish
	from openmolt_core.result import RunState

__all__ = ["MAX_AUDIT", "POLICY", "RunGuards", "Screened", "stop", "tripped"]

log: logging.Logger = logging.getLogger("openmolt")

MAX_AUDIT = 200
"""``state.audit`` keeps the first this many entries."""

POLICY = "taint_policy"
"""The name the taint policy's actions go by in results, events and the audit."""

T = TypeVar("T")


@dataclass(slots=True)
class Screened:
	"""What the guardrails and the policy make of a tool call, before approvals.

	Args:
		call: The call to go on with (its input rewritten or not).
		entry: The result the model reads when the call does not run (refused or stopped).
		rule: The taint policy's rule when the call must wait for a decision.
	"""

	call: CallTool
	entry: dict[str, Any] | None = None
	rule: str | None = None


def stop(record: StepRecord, message: str) -> None:
	"""End the step with status ``guardrail_tripped``; calls parked in it do not run.

	Args:
		record: The step's record.
		message: What tripped, and why.
	"""
	from openmolt_core._execute import RunEnd

	record.end = RunEnd("guardrail_tripped", None, message)
	record.pending = None


def tripped(record: StepRecord) -> bool:
	"""Whether a guardrail stopped this step."""
	return record.end is not None and record.end.status == "guardrail_tripped"


@dataclass(slots=True)
class RunGuards:
	"""An agent's guardrails and taint policy, as one run applies them.

	Args:
		guardrails: The guardrails, the instance's first.
		policy: The taint policy.
		gated: Whether the policy's ``on_outbound`` applies to this agent (it holds the
			trifecta, or the policy applies everywhere; never for ``allow``).
	"""

	guardrails: Sequence[Guardrail] = ()
	policy: TaintPolicy = field(default_factory=TaintPolicy)
	gated: bool = False
	_by_stage: dict[str, list[Guardrail]] = field(default_factory=dict)

	def __post_init__(self) -> None:
		for g in self.guardrails:
			self._by_stage.setdefault(g.on, []).append(g)

	def at(self, stage: Stage, *, parallel: bool = False) -> list[Guardrail]:
		"""The guardrails of a stage (for the input: those that run before, or alongside)."""
		return [g for g in self._by_stage.get(stage, ()) if g.parallel == parallel]

	def gates(self, bound: BoundTool) -> bool:
		"""Whether calls of this tool go through the gate (a guardrail or the policy applies)."""
		if self.gated and "outbound" in bound.labels:
			return True
		return any(g.applies(bound) for g in self._by_stage.get("tool_call", ()))

	def screens(self, bound: BoundTool) -> bool:
		"""Whether results of this tool are checked or taint the run."""
		if "untrusted" in bound.labels:
			return True
		return any(g.applies(bound) for g in self._by_stage.get("tool_result", ()))

	# judging ------------------------------------------------------------------------------

	async def _judge(
		self, ctx: RunContext, g: Guardrail, check: GuardrailCheck, key: str
	) -> Verdict:
		async def ask() -> dict[str, Any]:
			verdict, usage = await g.judge(check)
			out = verdict.to_dict()
			if usage is not None and usage.calls:
				out["_usage"] = usage.to_dict()
			return out

		data: dict[str, Any] = await ctx.port.step(key, ask)
		if "_usage" in data:
			ctx.state.usage.add(Usage.from_dict(data["_usage"]))
		try:
			return Verdict.from_dict(data)
		except ValueError as exc:  # a journal written by something else
			return Verdict("refuse" if check.tool else "trip", f"unreadable verdict: {exc}")

	async def _stage(
		self,
		ctx: RunContext,
		guards: Sequence[Guardrail],
		stage: Stage,
		value: Any,
		*,
		step: int,
		index: int = 0,
		bound: BoundTool | None = None,
		call: str = "",
		parallel: bool = False,
	) -> tuple[Any, Verdict | None, str]:
		"""Run guardrails in order.

		Returns:
			The value let through; the verdict that stopped it, or None; the name of the
			guardrail that stopped it, or else of the last one that rewrote it ("" for none).
		"""
		last = ""
		for n, g in enumerate(guards):
			check = GuardrailCheck(
				stage=stage,
				value=value,
				agent=ctx.agent,
				run_id=ctx.state.run_id,
				step=step,
				tool=bound.handle if bound is not None else "",
				labels=bound.labels if bound is not None else frozenset(),
				tainted=ctx.state.tainted,
			)
			verdict = await self._judge(ctx, g, check, f"guard:{step}:{stage}:{index}:{n}")
			if verdict.action == "allow":
				continue
			if parallel and verdict.action == "rewrite":
				verdict = Verdict("trip", "a parallel guardrail cannot rewrite the input")
			tool = bound.handle if bound is not None else ""
			await self.record(ctx, g.name, stage, verdict.action, verdict.reason, tool, call)
			if verdict.action == "rewrite":
				value, last = verdict.value, g.name
				continue
			return value, verdict, g.name
		return value, None, last

	async def record(
		self,
		ctx: RunContext,
		by: str,
		stage: str,
		action: str,
		reason: str,
		tool: str = "",
		call: str = "",
	) -> None:
		"""Log, audit and emit what a guardrail or the policy did."""
		reason = ctx.redact(reason)
		where = f" ({tool})" if tool else ""
		log.info(
			"%s step %d: %s %s at %s%s: %s", ctx.agent, ctx.step, by, action, stage, where, reason
		)
		audit = ctx.state.audit
		if len(audit) < MAX_AUDIT:
			entry: dict[str, Any] = {
				"by": by,
				"stage": stage,
				"action": action,
				"reason": reason,
				"step": ctx.step,
			}
			if tool:
				entry.update(tool=tool, call=call)
			audit.append(entry)
		if ctx.wants("guardrail"):
			await ctx.emit(
				GuardrailEvent(
					agent=ctx.agent,
					step=ctx.step,
					guardrail=by,
					stage=stage,
					action=action,
					reason=reason,
					tool=tool,
					call=call,
				)
			)
		else:
			ctx.skip_event()

	# the input ----------------------------------------------------------------------------

	async def input(self, ctx: RunContext, value: Any) -> tuple[Any, RunEnd | None]:
		"""Run the input guardrails that run before the first model call.

		Returns:
			The input to run with, and the run's end when one tripped (or refused).
		"""
		guards = self.at("input")
		if not guards:
			return value, None
		value, verdict, name = await self._stage(ctx, guards, "input", value, step=0)
		return value, None if verdict is None else _end(name, "the input", verdict)

	async def start(
		self, ctx: RunContext, render: Callable[[Any, RunState], str]
	) -> tuple[RunEnd | None, tuple[Any] | None]:
		"""Run the input guardrails of a run that has made no model call yet.

		The input is read back from the first turn, so a run started anywhere (``run``, a
		durable workflow, a recovered one) is checked the same way; a rewrite renders the first
		turn again with ``render`` (the agent's ``first_message``). A run given back its state
		before its first model call is checked again (rewrites are idempotent, tripwires trip).

		Returns:
			The run's end when one tripped, and the input for the parallel guardrails (None
			when there are none).
		"""
		if not self._by_stage.get("input"):
			return None, None
		state = ctx.state
		found, value = _first_input(state)
		if not found:
			return None, None
		new, end = await self.input(ctx, value)
		if new != value:
			state.messages[0].content = render(new, state)
		if end is not None:
			return end, None
		return None, ((new,) if self.at("input", parallel=True) else None)

	async def alongside(
		self, ctx: RunContext, value: Any, call: Callable[[], Awaitable[T]]
	) -> tuple[T | None, RunEnd | None]:
		"""Run the parallel input guardrails while ``call`` (the first model call) runs.

		A tripwire cancels the call. The step's commands run only once every guardrail passed.

		Returns:
			The call's result (None when cancelled), and the run's end when one tripped.
		"""
		guards = self.at("input", parallel=True)
		out: dict[str, Any] = {}
		async with anyio.create_task_group() as tg:

			async def watch() -> None:
				_, verdict, name = await self._stage(
					ctx, guards, "input", value, step=0, parallel=True
				)
				if verdict is not None:
					out["end"] = _end(name, "the input", verdict)
					tg.cancel_scope.cancel()

			tg.start_soon(watch)
			try:
				out["response"] = await call()
			except Exception as exc:  # raised after the guardrails are done with
				out["error"] = exc
		if "end" in out:
			return None, out["end"]
		if "error" in out:
			raise out["error"]
		return out.get("response"), None

	# tool calls ---------------------------------------------------------------------------

	async def call(
		self, ctx: RunContext, record: StepRecord, index: int, call: CallTool, bound: BoundTool
	) -> Screened:
		"""Check a tool call before approvals: its guardrails, then the taint policy.

		A rewritten input is checked against the tool's schema and replaces the command in the
		step (so a parked step saves the input that will run, and the decision is bound to it).
		"""
		from openmolt_core._jsonschema import ValidationError, format_errors

		key = step_key("tool", ctx.step, index, call.tool)
		guards = [g for g in self._by_stage.get("tool_call", ()) if g.applies(bound)]
		if guards:
			value, verdict, name = await self._stage(
				ctx,
				guards,
				"tool_call",
				call.input,
				step=ctx.step,
				index=index,
				bound=bound,
				call=key,
			)
			if verdict is not None:
				return Screened(call, entry=self._refused(record, call, name, verdict))
			if value != call.input:  # equal after a journal replay: no rewrite
				try:
					value = bound.validator().validate(value)
				except ValidationError as exc:
					why = f"the rewritten input does not match the tool's schema: {format_errors(exc)}"
					await self.record(
						ctx, name or "guardrail", "tool_call", "refuse", why, call.tool, key
					)
					return Screened(
						call, entry={"tool": call.tool, "ok": False, "error": f"not run: {why}"}
					)
				call = call.model_copy(update={"input": value})
				record.commands[index] = call
		if not (self.gated and "outbound" in bound.labels and ctx.state.tainted):
			return Screened(call)
		sources = sorted({t["tool"] for t in ctx.state.taint})
		read = ", ".join(sources[:3]) + (
			f" and {len(sources) - 3} more" if len(sources) > 3 else ""
		)
		if self.policy.on_outbound == "refuse":
			why = (
				f"this run read untrusted content ({read}), and {call.tool} can send data out: "
				"the policy refuses such calls now. Do not retry it; finish and tell the user "
				"what you wanted to send"
			)
			await self.record(ctx, POLICY, "tool_call", "refuse", why, call.tool, key)
			await ctx.error("policy", f"{key}: {why}")
			entry = {
				"tool": call.tool,
				"ok": False,
				"error": f"refused by policy: {why}",
				"policy": {
					"rule": "untrusted content",
					"after": [t["call"] for t in ctx.state.taint],
				},
			}
			return Screened(call, entry=entry)
		rule = f"taint: after untrusted content from {read}"
		await self.record(ctx, POLICY, "tool_call", "approve", rule, call.tool, key)
		return Screened(call, rule=rule)

	def _refused(
		self, record: StepRecord, call: CallTool, name: str, verdict: Verdict
	) -> dict[str, Any]:
		if verdict.action == "trip":
			stop(record, f"guardrail {name!r} tripped on the call of {call.tool}: {verdict.reason}")
			error = f"not run: guardrail {name!r} stopped the run ({verdict.reason})"
		else:
			error = f"refused by guardrail {name!r}: {verdict.reason}"
		return {"tool": call.tool, "ok": False, "error": error, "guardrail": name}

	async def result(
		self,
		ctx: RunContext,
		record: StepRecord,
		index: int,
		call: CallTool,
		bound: BoundTool,
		entry: dict[str, Any],
		*,
		live: bool = True,
	) -> dict[str, Any]:
		"""Check a tool's result before the model reads it, and taint the run if it is untrusted.

		A withheld result taints nothing: the model never read it.

		Args:
			ctx: The run.
			record: The step's record.
			index: The call's index in the step.
			call: The call.
			bound: Its tool.
			entry: The result entry the model would read.
			live: Whether the call ran in this execution (its step's result was just journaled).
				A call answered from the journal taints the state again, but its ``taint``
				event went out when it ran: like the call's own events, it is not emitted twice.
		"""
		key = step_key("tool", ctx.step, index, call.tool)
		guards = [g for g in self._by_stage.get("tool_result", ()) if g.applies(bound)]
		if guards and entry.get("ok"):
			value, verdict, name = await self._stage(
				ctx,
				guards,
				"tool_result",
				entry.get("result"),
				step=ctx.step,
				index=index,
				bound=bound,
				call=key,
			)
			if verdict is not None:
				if verdict.action == "trip":
					stop(
						record,
						f"guardrail {name!r} tripped on the result of {call.tool}: {verdict.reason}",
					)
					error = (
						f"result withheld: guardrail {name!r} stopped the run ({verdict.reason})"
					)
				else:
					error = f"result withheld by guardrail {name!r}: {verdict.reason}"
				return {"tool": call.tool, "ok": False, "error": error, "guardrail": name}
			if value != entry.get("result"):
				entry = {**entry, "result": value}
		if "untrusted" in bound.labels:
			entry = {**entry, "untrusted": True}
			await self._taint(ctx, key, call.tool, live)
		return entry

	async def _taint(self, ctx: RunContext, key: str, tool: str, live: bool) -> None:
		taint = ctx.state.taint
		first = not taint
		if len(taint) < MAX_TAINT_RECORDS and all(t.get("call") != key for t in taint):
			taint.append({"call": key, "tool": tool, "step": ctx.step})
		if not first:
			return
		if not live:  # answered from the journal: the event went out when the call ran
			ctx.skip_event()
			return
		log.info("%s step %d: untrusted content from %s taints the run", ctx.agent, ctx.step, tool)
		if ctx.wants("taint"):
			await ctx.emit(TaintEvent(agent=ctx.agent, step=ctx.step, tool=tool, call=key))
		else:
			ctx.skip_event()

	# the output ---------------------------------------------------------------------------

	async def finish(
		self, ctx: RunContext, record: StepRecord, index: int, command: Finish
	) -> Finish | None:
		"""Run the output guardrails on a finish.

		Returns:
			The finish to end with (its output rewritten or not), or None when it was refused
			(the model reads why) or a guardrail stopped the run; the record says which.
		"""
		from openmolt_core._jsonschema import ValidationError, format_errors

		guards = self.at("output")
		if not guards:
			return command
		dump = getattr(command.output, "model_dump", None)
		value = dump(mode="json") if callable(dump) else command.output
		new, verdict, name = await self._stage(
			ctx, guards, "output", value, step=ctx.step, index=index
		)
		if verdict is None and new != value:
			try:
				return command.model_copy(update={"output": ctx.output(new)})
			except ValidationError as exc:
				verdict = Verdict(
					"trip",
					f"it rewrote the output into one that does not match the output schema: "
					f"{format_errors(exc)}",
				)
		if verdict is None:
			return command
		if verdict.action == "refuse":
			error = (
				f"refused by guardrail {name!r}: {verdict.reason}; fix the output and finish again"
			)
		else:
			stop(record, f"guardrail {name!r} tripped on the output: {verdict.reason}")
			error = f"stopped: guardrail {name!r} tripped ({verdict.reason})"
		record.results[index] = {
			"command": "finish",
			"ok": False,
			"error": error,
			"guardrail": name,
		}
		return None


def _first_input(state: RunState) -> tuple[bool, Any]:
	"""The input a run's first turn carries (whether there is one, and its value)."""
	import json

	if not state.messages or state.messages[0].role != "user":
		return False, None
	try:
		first = json.loads(state.messages[0].content)
	except ValueError:
		return False, None
	if not isinstance(first, dict) or "input" not in first:
		return False, None
	return True, first["input"]


def _end(name: str, what: str, verdict: Verdict) -> RunEnd:
	from openmolt_core._execute import RunEnd

	return RunEnd(
		"guardrail_tripped", None, f"guardrail {name!r} tripped on {what}: {verdict.reason}"
	)
