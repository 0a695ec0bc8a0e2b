"""Guardrails and the taint policy as a capability: what the agent's runs check, and what they read.

``create_agent(guardrails=..., taint_policy=...)`` builds it (every agent has one: the default
policy labels every tool and taints a run that read untrusted content). It attaches through:

- `Safety.describe_tools`: the taint policy labels each tool (`openmolt_core.taint`), and an
  agent that holds the lethal trifecta is reported when it is built;
- `Safety.before_first_model`: the input guardrails run before the first model call (reading
  the input back from the first turn), and the parallel ones alongside it;
- `Safety.before_tool`: the tool-call guardrails, then the taint policy, which refuses the call
  or hands it to the approvals gate under its rule (`openmolt_core.hooks.Approve`);
- `Safety.after_tool`: the tool-result guardrails, and untrusted content taints the run;
- `Safety.before_finish`: the output guardrails on a ``finish``;
- `Safety.before_words`: those that judge the text people read (``message=True``) on a
  question and on a call's reason for its approver;
- `Safety.hand_down`: a tainted run's records (`TaintedStart`) and its message guardrails
  (`CallerWords`) go to the runs its calls start (a sub-agent's words reach its callers' people).
- `Safety.memory_updated`, `Safety.memory_option`, `Safety.on_run_start`: memory a tainted run
  wrote is marked (in process, and told to an ``on_update`` callback that takes ``untrusted``),
  and a run that starts from marked memory starts tainted (`MEMORY`).

Its decisions are a pure function of the state and of its own journaled steps: every verdict
goes through the run's port under ``guard:<step>:<stage>:<index>:<n>``, so the loop does not
journal them again (``journal_decisions = False``). What is not ``allow`` is logged, emitted as
a ``guardrail`` event and kept in ``state.audit``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core._support import lazy_exports
from openmolt_core._support.sync import takes
from openmolt_core.capabilities import READ_TOOL, record_spent, spent_before
from openmolt_core.durability import call_started, keeps_spent, step_key
from openmolt_core.hooks import (
	PROCEED,
	Alongside,
	Approve,
	Capability,
	Proceed,
	Refuse,
	Stop,
)
from openmolt_core.taint import (
	MAX_TAINT_RECORDS,
	TaintPolicy,
	gated,
	nested_in_doubt,
	trifecta,
	unlabelled,
	warn_trifecta,
)
from openmolt_core.tools import LABELS, InDoubt, strictest

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core._execute import RunContext
	from openmolt_core.commands import CallTool, Finish
	from openmolt_core.events import Event
	from openmolt_core.guardrails.base import Guardrail, GuardrailCheck, Stage, Verdict
	from openmolt_core.hooks import (
		AgentInfo,
		FinishDecision,
		Run,
		ToolDecision,
		ToolRecord,
		ToolSpec,
		Words,
		WordsDecision,
	)
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunState
	from openmolt_core.tools import CallingRun

__all__ = ["MAX_AUDIT", "MEMORY", "POLICY", "CallerWords", "Safety", "TaintedStart", "taint"]

# Its events are built only when a handler listens: defined apart (`_safety_events`), so that a
# run nobody listens to does not define them, and re-exported here on first use (not in __all__:
# a star import does not load them).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(
	globals(),
	{
		"GuardrailEvent": "openmolt_core.capabilities._safety_events",
		"TaintEvent": "openmolt_core.capabilities._safety_events",
	},
)

log: logging.Logger = logging.getLogger("openmolt")

MAX_AUDIT = 200
"""``state.audit`` keeps the first this many entries."""

POLICY = "taint_policy"
"""The name the taint policy's actions go by in results, events and the audit."""

MEMORY = "memory:"
"""What the taint record of a run that starts from memory a tainted run wrote names its call by,
then the memory (``{"call": "memory:longTerm", "tool": "the agent's long-term memory"}``)."""

_MEMORY_NAMES = {
	"longTerm": "the agent's long-term memory",
	"shortTerm": "the agent's short-term memory",
}

_MARKED = "memory"
"""Where ``state.ext["safety"]`` notes, as a new run's state is made (`Safety.new_run`), that its
long-term memory is the text a tainted run of the agent wrote last in this process: saved or
journaled with the first state, so a replay elsewhere (which has no such mark) reads the same."""


class Safety(Capability):
	"""An agent's guardrails and taint policy, attached to its runs.

	Agents with the same guardrails and policy share one (`OpenMolt` does): it keeps nothing of
	an agent but the trifecta warning's memory, and only when it is the agent's own.

	Args:
		guardrails: The guardrails, the instance's first.
		policy: The taint policy.
		shared: Whether several agents share it: each describes its tools once, when it is
			created (no capability lists tools at run time), so it remembers no warning. One
			agent's own (the default) warns again only when a new tool set completes the
			trifecta.
	"""

	__slots__ = (
		"_active",
		"_by_stage",
		"_down",
		"_memory",
		"_readers",
		"_warned",
		"guardrails",
		"policy",
	)

	name = "safety"
	in_fingerprint: ClassVar[bool] = False  # its own steps are journaled (guard:...)
	journal_decisions: ClassVar[bool] = False  # a pure function of the state and its steps

	def __init__(
		self,
		guardrails: Sequence[Guardrail] = (),
		policy: TaintPolicy | None = None,
		*,
		shared: bool = False,
	) -> None:
		self.guardrails: tuple[Guardrail, ...] = tuple(guardrails)
		"""The guardrails, in the order they run."""
		self.policy: TaintPolicy = policy or TaintPolicy()
		"""The taint policy."""
		self._warned: bool | None = None if shared else False  # None: remembers nothing
		# Per agent name and whose memory it is (a user's; None: the agent's own): the digest
		# of the long-term memory a tainted run wrote last (`memory_updated`); a clean run's
		# write takes it away.
		self._memory: dict[tuple[str, str | None], str] = {}
		self._by_stage: dict[str, list[Guardrail]] = {}
		for g in self.guardrails:
			self._by_stage.setdefault(g.on, []).append(g)
		gates = self.policy.on_outbound != "allow"
		self._readers = [g for g in self._by_stage.get("output", ()) if g.message]
		# What its runs hand down with their readers, by what their caller handed them (None:
		# a top-level run): made once per chain, so a replay hands down the same.
		self._down: dict[CallerWords | None, CallerWords] = {}
		self._active = _hooks_needed(
			frozenset(self._by_stage),
			gates,
			approves=self.policy.on_outbound == "approve",
			words=bool(self._readers),
		)

	def nested_agents(self) -> list[Any]:
		"""The agents its guardrails run (`openmolt_core.guardrails.Guardrail`), each once.

		A guardrail agent runs inside the run it judges, with tools of its own: what those tools
		do counts as the run's, and so does their in-doubt policy. A guardrail that is a function
		is the application's code, not an agent: it is not listed.
		"""
		out: list[Any] = []
		for guard in self.guardrails:
			judge = guard.check
			if callable(getattr(judge, "execute", None)) and all(judge is not o for o in out):
				out.append(judge)
		return out

	def nested_in_doubt(self, agent: Any) -> InDoubt:
		"""``ask`` at least for a nested run that may send data out (`openmolt_core.taint.nested_in_doubt`).

		What its tools do (their labels: one that declares none may send), what tools listed
		at run time may do, and what the agents nested in its runs do count.

		Args:
			agent: The agent whose run is nested in a durable call.
		"""
		return nested_in_doubt(agent)

	def nested_result_labels(
		self, run: Run, link: CallingRun, labels: tuple[str, ...]
	) -> tuple[str, ...]:
		"""Label a call's result ``untrusted`` when a run nested in it read untrusted content.

		Content its caller had not handed down (a taint record of its own, as it ended): what
		the call returns may carry it, whatever the tool's own labels say.
		"""
		if _read_untrusted(link) and "untrusted" not in labels:
			return (*labels, "untrusted")
		return labels

	def gates(self, tools: Iterable[ToolSpec]) -> bool:
		"""Whether the policy's ``on_outbound`` applies to an agent with these tools.

		It does when the agent holds the trifecta, or the policy applies everywhere; never for
		``allow`` (`openmolt_core.taint.gated`). The built-in tools (``openmolt.<handle>``: a
		capability's `Capability.builtin_tools`) count as the agent's own: a run calls them as
		it calls its own, and one that declares no labels is ``untrusted`` and ``outbound`` like
		any other (the core's declare none of the three).

		Args:
			tools: The run's tools, labelled, its built-in ones among them.
		"""
		return gated(tools, self.policy)  # type: ignore[arg-type]  # the loop's records

	def _gated(self, run: Run) -> bool:
		"""Whether the policy gates this run's outbound calls after untrusted content.

		It does when its tools hold the trifecta, or when its caller may have handed it private
		data (``CallingRun.private``) and it can send out.
		"""
		if self.gates(run.tools.values()):
			return True
		link = run.link
		return link is not None and link.private and self.policy.on_outbound != "allow"

	def at(self, stage: Stage, *, parallel: bool = False) -> list[Guardrail]:
		"""The guardrails of a stage (for the input: those that run before, or alongside)."""
		return [g for g in self._by_stage.get(stage, ()) if g.parallel == parallel]

	# building the agent -----------------------------------------------------------------

	def active_hooks(self) -> frozenset[str]:
		"""The hooks its settings need: labels and taint always, a stage's hook with guardrails.

		``before_tool`` also without tool-call guardrails while the policy may gate outbound
		calls (``on_outbound`` other than ``allow``).
		"""
		return self._active

	def describe_tools(self, agent: AgentInfo, tools: Sequence[ToolRecord]) -> None:
		"""Label each tool by the policy, and say how its calls found in doubt are handled.

		An agent's tool is at least as strict in doubt as the guardrail agents that judge that
		agent's words (``in_doubt_at_least``): they would run again.
		An agent that holds the lethal trifecta is reported once.

		Args:
			agent: The agent being built.
			tools: Its bound tools.
		"""
		bound: Sequence[BoundTool] = tools  # type: ignore[assignment]  # the loop's records
		policy = self.policy
		labels: set[str] = set()  # those of the tools it may call
		# Its guardrails on words for people judge the words of the runs its calls start
		# (`CallerWords`), inside those calls: a call found in doubt would run them again.
		words = strictest(g.in_doubt for g in self._readers) if self._readers else "retry"
		for t in bound:
			t.labels = found = policy.labels_for(t, described=t.described_labels)
			if t.allowed:
				labels.update(found)
			if words != "retry" and getattr(t.tool, "agent", None) is not None:
				t.in_doubt_at_least = strictest((t.in_doubt_at_least, words))
		# Most agents do not hold all three; an untrusted tool list is the untrusted part too.
		held = trifecta(bound) if {"private", "outbound"} <= labels else None
		if held and policy.warn and not self._warned:
			warn_trifecta(agent.name, held, policy, unlabelled(bound))
		if self._warned is not None:
			self._warned = held is not None

	# judging ------------------------------------------------------------------------------

	async def _judge(
		self, ctx: RunContext, g: Guardrail, check: GuardrailCheck, key: str
	) -> Verdict:
		from openmolt_core.capabilities.spend import (  # loaded by agents with guardrails only
			add_spent,
			passed_up,
			read_spent,
			spend_cut_off,
			spent_entry,
			summed,
		)
		from openmolt_core.guardrails.base import Verdict

		policy = g.in_doubt

		async def ask() -> dict[str, Any]:
			# What an earlier execution's guardrail agent spent before a crash stopped it (a
			# durable port keeps it as the agent makes its calls): it counts once, with this
			# verdict, as a sub-agent call's does (`openmolt_core.capabilities.spend`).
			keeps = keeps_spent(ctx.port)
			before = await spent_before(ctx.port, key) if keeps else {}
			# The start is this execution's: a call parked for approval is judged again,
			# rightly, by the segment that resumes it (it begins at a later `began`).
			if policy != "retry" and await call_started(ctx.port, f"{key}@{ctx.began}"):
				# Under way when the run stopped (a crash): a guardrail agent that may have
				# acted is not run again, and what it checks is not let through unjudged.
				return {
					**Verdict(
						"refuse" if check.tool else "trip",
						f"in doubt: the guardrail agent {g.name!r} was under way when the run "
						"stopped (its worker died), and its tools may have taken effect; it is "
						"not run again",
					).to_dict(),
					**before,
				}
			parent = _judged_by(ctx, g, check, key)
			earlier = read_spent(before)
			if keeps and parent is not None:

				async def spending(usage: Usage, by_model: Mapping[str, Usage]) -> None:
					await record_spent(
						ctx.port, key, spent_entry(*summed(earlier, (usage, by_model)))
					)

				parent.spending = spending
			elif parent is not None:  # a nested run's port: its caller keeps it
				parent.spending = passed_up(ctx.link, ctx.state, parent)
			try:
				verdict, run = await g.judge(check, parent)
			except BaseException:  # cut off, or failed without a result: the agent's calls
				if before:  # were billed all the same, an earlier execution's too
					add_spent(ctx.state, before)
				spend_cut_off(ctx.state, parent)
				raise
			out = verdict.to_dict()
			if parent is not None and _read_untrusted(parent) and verdict.action != "allow":
				# The agent read untrusted content of its own: its words (a rewrite, a reason
				# the model reads) may carry it into the judged run.
				out[_UNTRUSTED_VERDICT] = True
			ran: tuple[Usage | None, Mapping[str, Usage]] = (None, {})
			if run is not None:
				ran = (run.usage, run.usage_by_model)
			out.update(spent_entry(*summed(earlier, ran)))
			asked.append(True)
			return out

		asked: list[bool] = []  # the verdict was given here (not read from the journal)
		data = add_spent(ctx.state, await ctx.port.step(key, ask))
		if data.get(_UNTRUSTED_VERDICT) is True:
			await taint(ctx, key, f"guardrail {g.name}", live=bool(asked))
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
		field: str = "",
		about: str = "",
		keyed: str = "",
		labels: frozenset[str] | None = None,
		part: str = "",
	) -> tuple[Any, Verdict | None, str]:
		"""Run guardrails in order (``field``: at the output stage, what the value is).

		``about``: the tool of the call the value is about, for the audit, when ``bound`` is
		not given (a call's reason, judged at the output stage). ``keyed``: what the verdicts'
		journal keys start their stage with (`CallerWords`: ``caller.``), "" for its own.
		``labels``: the labels of what is judged, when not ``bound``'s (a ``readResult``
		slice: its tool's). ``part``: what a verdict's event and audit entry name as judged
		when ``field`` names no words (``error``: a failed call's error, at the ``tool_result``
		stage); the checks and their journal keys are those of the stage.

		Returns:
			The value let through; the verdict that stopped it, or None; the name of the
			guardrail that stopped it, or else of the last one that rewrote it ("" for none).
		"""
		from openmolt_core.guardrails.base import GuardrailCheck, Verdict

		last = ""
		judged = (
			labels if labels is not None else bound.labels if bound is not None else frozenset()
		)
		for n, g in enumerate(guards):
			check = GuardrailCheck(
				stage=stage,
				value=value,
				agent=ctx.agent,
				run_id=ctx.state.run_id,
				step=step,
				tool=bound.handle if bound is not None else "",
				labels=judged,
				tainted=ctx.state.tainted,
				field=field,
			)
			# The output's steps keep their keys; the words' are apart (``output.humanMessage``,
			# ``output.message`` for a question, ``output.reason`` for a call's reason).
			at = keyed + (stage if field in ("", "output") else f"{stage}.{field}")
			verdict = await self._judge(ctx, g, check, _guard_key(step, at, index, n))
			if verdict.action == "allow":
				continue
			if parallel and verdict.action == "rewrite":
				verdict = Verdict("trip", "a parallel guardrail cannot rewrite the input")
			tool = bound.handle if bound is not None else about
			words = field if field not in ("", "output") else part
			await self.record(
				ctx, g.name, stage, verdict.action, verdict.reason, tool, call, field=words
			)
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
		*,
		field: str = "",
	) -> None:
		"""Log, audit and emit what a guardrail or the policy did.

		``field``: the words for a person judged at the output stage (`GuardrailEvent.field`),
		named in the log line and the audit entry too.
		"""
		reason = ctx.redact(reason)
		where = f" ({tool})" if tool else ""
		if field:
			where += f" ({field})"
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
			if field:  # a verdict on words for a person, not on the output (a reader tells them)
				entry["field"] = field
			audit.append(entry)
		if ctx.wants("guardrail"):
			from openmolt_core.capabilities._safety_events import GuardrailEvent

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
					field=field,
				)
			)
		else:
			ctx.skip_event()

	# memory -------------------------------------------------------------------------------

	def memory_updated(self, run: Run, memory: str, data: str) -> None:
		"""Mark the agent's long-term memory when a tainted run writes it; unmark on a clean write.

		Long-term memory outlives the run: the agent's next runs start from it, and read it in
		their first turn. What a tainted run writes there may be someone else's instructions,
		so those runs start tainted (`on_run_start`), until a clean run writes it again (the
		whole text is then the clean run's: its write replaces what it started from).
		"""
		if memory != "longTerm":
			return
		from openmolt_core.capabilities.memory import memory_owner

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		key = (run.agent, memory_owner(ctx.memory, run.state.user))  # each user's memory its own
		if run.state.tainted:
			self._memory[key] = _digest(data)
		else:
			self._memory.pop(key, None)

	def memory_option(self, state: RunState, memory: Any) -> Any:
		"""The agent's memory option, its ``on_update`` callbacks told whether the run is tainted.

		A callback with an ``untrusted`` parameter is called with it: True when the run that
		wrote the text had read untrusted content. Kept with the text and given back as the
		memory's ``untrusted`` (another process, a restart), the mark outlives the process.
		"""
		from openmolt_core.options import AgentMemory, MemoryPart, parse_options

		parsed = parse_options(AgentMemory, memory, "memory")
		update = {}
		for key in ("long_term", "short_term"):
			part = getattr(parsed, key)
			if isinstance(part, MemoryPart) and part.on_update is not None:
				if takes(part.on_update, "untrusted", kwargs=False):
					told = _telling(part.on_update, state)
					update[key] = part.model_copy(update={"on_update": told})
		return parsed.model_copy(update=update) if update else memory

	async def on_run_start(self, run: Run) -> Stop | None:
		"""Taint a new run whose memory a tainted run wrote, from its first model call.

		Its long-term memory is marked when a tainted run of the agent wrote it last, in this
		process (`memory_updated`; noted in the run's first state by `new_run`, so a replay
		elsewhere decides the same), or when it is the memory option's ``data`` given back with
		``untrusted``; its
		short-term memory when it is such ``data``. The record is ``{"call": "memory:<memory>",
		"tool": "the agent's long-term memory"}`` (`MEMORY`).
		"""
		state = run.state
		memory = state.memory
		if state.steps or state.pending is not None:
			return None  # it goes on: it started tainted, or not
		if not memory.get("longTerm") and not memory.get("shortTerm"):
			return None  # most runs
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		for key in ("longTerm", "shortTerm"):
			text = memory.get(key)
			call = MEMORY + key
			if not text or any(t.get("call") == call for t in state.taint):
				continue
			if _given_untrusted(ctx.memory, key, text) or (key == "longTerm" and self._wrote(ctx)):
				await taint(ctx, call, _MEMORY_NAMES[key])
		return None

	def new_run(self, agent: str, state: RunState) -> None:
		"""Note in a new run's state that its long-term memory is what a tainted run wrote.

		Only this process knows it (`memory_updated`); noted in the first state, which the run
		saves or journals, a replay elsewhere taints the run the same (`on_run_start`). The
		run's memory is its user's, or the agent's (a run for no user, a shared memory): the
		marks of both are looked at, so a text one of them holds marked taints the run.
		"""
		text = state.memory.get("longTerm")
		if not text:
			return
		digest = _digest(text)
		if any(self._memory.get((agent, owner)) == digest for owner in {state.user, None}):
			state.ext.setdefault(Safety.name, {})[_MARKED] = True

	@staticmethod
	def _wrote(ctx: RunContext) -> bool:
		"""Whether the run's first state noted its long-term memory as a tainted run's (`new_run`)."""
		kept = ctx.state.ext.get(Safety.name)
		return isinstance(kept, dict) and kept.get(_MARKED) is True

	# the input ----------------------------------------------------------------------------

	async def before_first_model(self, run: Run) -> Stop | Alongside | None:
		"""Run the input guardrails of a run that has made no model call yet.

		The input is read back from the first turn, so a run started anywhere (``run``, a
		durable workflow, a recovered one) is checked the same way; a rewrite renders the first
		turn again (the agent's ``first_message``). A run given back its state before its first
		model call is checked again (rewrites are idempotent, tripwires trip).

		Returns:
			`Stop` when one tripped (or refused); the parallel guardrails, to run alongside the
			first model call; or None.
		"""
		if not self._by_stage.get("input"):
			return None
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		state = ctx.state
		found, value = _first_input(state)
		if not found:
			return None
		new, stop = value, None
		guards = self.at("input")
		if guards:
			new, verdict, name = await self._stage(ctx, guards, "input", value, step=0)
			if verdict is not None:
				stop = _tripped(name, "the input", verdict)
		if new != value:
			owner = ctx.owner
			assert owner is not None  # the context of an agent's run (the kernel makes it)
			state.messages[0].content = owner.first_message(new, state)
		if stop is not None:
			return stop
		if not self.at("input", parallel=True):
			return None

		async def watch() -> Stop | None:
			guards = self.at("input", parallel=True)
			_, verdict, name = await self._stage(ctx, guards, "input", new, step=0, parallel=True)
			return None if verdict is None else _tripped(name, "the input", verdict)

		return Alongside(watch)

	# tool calls ---------------------------------------------------------------------------

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> list[str]:
		"""The steps of a call of a concurrent batch its guardrails and the approvals gate take.

		The guardrails' verdicts, on its call and its result, are journaled while the calls
		run; reserved in command order, they keep their numbers on a durable replay whichever
		call ends first. An outbound call of a tainted run may go to the approvals gate
		(`before_tool` answers `Approve`): its ``approval`` step, asked from the run's state
		when the batch began (taint a sibling call brings is settled after the batch).
		"""
		bound: BoundTool = tool  # type: ignore[assignment]  # the loop's record of a bound tool
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		index = ctx.command_index
		keys = []
		for stage in ("tool_call", "tool_result"):
			# A result may carry labels of its own (`LabelledResult`), and a slice a stored
			# result's: the guardrails its labels may select are reserved too (a step reserved
			# and not used is skipped).
			labels = bound.labels if stage == "tool_call" else LABELS
			guards = [g for g in self._by_stage.get(stage, ()) if g.applies(bound, labels)]
			keys += [_guard_key(ctx.step, stage, index, n) for n in range(len(guards))]
		outbound = run.state.tainted and "outbound" in tool.labels
		if outbound and self.policy.on_outbound == "approve" and self._gated(run):
			keys.append(step_key("approval", ctx.step, index, call.tool))
		if call.reason and self._readers:  # its reason, judged if it goes to an approver
			keys += [_guard_key(ctx.step, _REASON, index, n) for n in range(len(self._readers))]
		return keys

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""Check a tool call before approvals: its guardrails, then the taint policy.

		A rewritten input is checked against the tool's schema (the loop runs the call with it,
		and a parked step saves it, so the decision is bound to it).
		"""
		bound: BoundTool = tool  # type: ignore[assignment]  # the loop's record of a bound tool
		guards = self._by_stage.get("tool_call")
		checked = [g for g in guards if g.applies(bound)] if guards else None
		outbound = run.state.tainted and "outbound" in bound.labels
		if outbound:  # the rare case: worked out from the run's tools
			outbound = self._gated(run)
		if not checked and not outbound:
			return PROCEED
		from openmolt_core._support.jsonschema import ValidationError, format_errors

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		index = ctx.command_index
		key = step_key("tool", ctx.step, index, call.tool)
		new = None
		if checked:
			value, verdict, name = await self._stage(
				ctx,
				checked,
				"tool_call",
				call.input,
				step=ctx.step,
				index=index,
				bound=bound,
				call=key,
			)
			if verdict is not None:
				return _refused(call, name, verdict)
			if value != call.input:  # equal after a journal replay: no rewrite
				try:
					new = bound.validator().validate(value)
				except ValidationError as exc:
					why = f"the rewritten input does not match the tool's schema: {format_errors(exc)}"
					await self.record(
						ctx, name or "guardrail", "tool_call", "refuse", why, call.tool, key
					)
					return Refuse(why, {"tool": call.tool, "ok": False, "error": f"not run: {why}"})
		if not outbound:
			return PROCEED if new is None else Proceed(new)
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
			await ctx.error("policy", f"{key}: {why}", call=key)
			entry = {
				"tool": call.tool,
				"ok": False,
				"error": f"refused by policy: {why}",
				"policy": {
					"rule": "untrusted content",
					"after": [t["call"] for t in ctx.state.taint],
				},
			}
			return Refuse(why, entry)
		rule = f"taint: after untrusted content from {read}"
		await self.record(ctx, POLICY, "tool_call", "approve", rule, call.tool, key)
		return Approve(rule, new)

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""What the runs a run's calls start take: its taint, and its guardrails on words for people.

		A tainted run hands its taint records and `TaintedStart`; a run that may hold private
		data says so; a run with guardrails that judge the text people read (``message=True``),
		or that was handed some, hands `CallerWords`: the question and the calls' reasons of a
		sub-agent reach the caller's people (its approver decides the sub-agent's calls, its
		events reach the caller's handlers), so its callers' guardrails judge them too, after
		its own. Asked at a call's start (once before a concurrent batch: the same for all its
		calls, on a replay too). A clean run without such guardrails hands down nothing.
		"""
		handed = _handed(run)
		# Most runs: no reader of their own, and no caller (nothing handed to them).
		words = self._handed_words(run) if self._readers or run.link is not None else None
		if words is not None:
			handed["capabilities"] = (*handed.get("capabilities", ()), words)
		return [handed] * len(tools) if handed else ()

	def _handed_words(self, run: Run) -> CallerWords | None:
		"""The `CallerWords` a run hands down: its own readers, then those it was handed."""
		link = run.link
		given = None
		if link is not None:
			given = next((c for c in link.capabilities if isinstance(c, CallerWords)), None)
		if not self._readers:
			return given  # CallerWords hands itself down as well
		down = self._down.get(given)
		if down is None:
			down = self._down[given] = CallerWords(
				(*self._readers, *(given.guardrails if given is not None else ()))
			)
		return down

	async def after_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, entry: dict[str, Any]
	) -> dict[str, Any] | Stop:
		"""Check a tool's result before the model reads it, and taint the run if it is untrusted.

		A withheld result taints nothing: the model never read it. A call answered from the
		journal taints the state again, but its ``taint`` event went out when it ran: like the
		call's own events, it is not emitted twice. A result with labels of its own
		(`openmolt_core.tools.LabelledResult`: a file a tainted run wrote) counts with them too;
		the model reads ``"untrusted": true``, not the labels.
		"""
		bound: BoundTool = tool  # type: ignore[assignment]  # the loop's record of a bound tool
		guards = self._by_stage.get("tool_result")
		# A slice ``readResult`` reads back is the content of the tool that returned it: judged
		# by the guardrails that judge that tool's results, under its labels (and the result's).
		read = _read_from(run, call) if call.tool == READ_TOOL else None
		labels = bound.labels if read is None else read[0]
		own = entry.get("labels")
		if own is not None:  # labels of this result's own (`openmolt_core.tools.LabelledResult`)
			entry = {k: v for k, v in entry.items() if k != "labels"}
			if isinstance(own, list):
				added = {x for x in own if x in LABELS}
				if added - labels:
					labels = labels | added
					_keep_labels(run, entry.get("result"), labels)
		checked = [g for g in guards if _applies(g, bound, read, labels)] if guards else None
		untrusted = "untrusted" in labels
		if not checked and not untrusted:
			return entry
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		index = ctx.command_index
		key = step_key("tool", ctx.step, index, call.tool)
		if checked:
			# A failed call's error (and its details) is what the model reads of it: text the
			# tool's source wrote as much as a result is (a page's error body, a server's
			# message), judged the same.
			failed = not entry.get("ok")
			judged = _error_of(entry) if failed else entry.get("result")
			what = "error" if failed else "result"
			value, verdict, name = await self._stage(
				ctx,
				checked,
				"tool_result",
				judged,
				step=ctx.step,
				index=index,
				bound=bound,
				call=key,
				labels=labels,
				part=what if failed else "",
			)
			if verdict is not None:
				if verdict.action == "trip":
					error = (
						f"{what} withheld: guardrail {name!r} stopped the run ({verdict.reason})"
					)
					withheld = {"tool": call.tool, "ok": False, "error": error, "guardrail": name}
					why = (
						f"guardrail {name!r} tripped on the {what} of {call.tool}: {verdict.reason}"
					)
					return Stop(why, entry=withheld)
				error = f"{what} withheld by guardrail {name!r}: {verdict.reason}"
				return {"tool": call.tool, "ok": False, "error": error, "guardrail": name}
			if value != judged:
				entry = _with_error(entry, value) if failed else {**entry, "result": value}
		if untrusted:
			entry = {**entry, "untrusted": True}
			await taint(ctx, key, call.tool, live=not ctx.call_from_journal)
		return entry

	# the output ---------------------------------------------------------------------------

	async def before_finish(self, run: Run, finish: Finish) -> FinishDecision | Finish:
		"""Run the output guardrails on a finish.

		Returns:
			The finish to end with (its output rewritten), `Proceed`, `Refuse` (the model reads
			why) or `Stop` (a guardrail tripped).
		"""
		guards = self.at("output")
		if not guards:
			return PROCEED
		from openmolt_core._support.jsonschema import ValidationError, format_errors
		from openmolt_core.guardrails.base import Verdict

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		dump = getattr(finish.output, "model_dump", None)
		value = dump(mode="json") if callable(dump) else finish.output
		new, verdict, name = await self._stage(
			ctx, guards, "output", value, step=ctx.step, index=ctx.command_index, field="output"
		)
		update: dict[str, Any] = {}
		if verdict is None and new != value:
			try:
				update["output"] = ctx.output(new)
			except ValidationError as exc:
				verdict = Verdict(
					"trip",
					f"it rewrote the output into one that does not match the output schema: "
					f"{format_errors(exc)}",
				)
		if verdict is not None:
			return _finish_stopped(verdict, name, "output")
		if update:
			finish = finish.model_copy(update=update)
		said = await self._message(ctx, finish)
		return said if said is not PROCEED or not update else finish

	async def _message(
		self, ctx: RunContext, finish: Finish, keyed: str = ""
	) -> FinishDecision | Finish:
		"""Judge a finish's ``humanMessage`` by the readers, as the output is.

		It is the text people read: a chat's reply, a sub-agent's finish its callers' pages
		show (`CallerWords`: ``keyed``).

		Returns:
			The finish with the message rewritten, `Proceed`, `Refuse` or `Stop`.
		"""
		if not self._readers or not finish.human_message:
			return PROCEED
		from openmolt_core.guardrails.base import Verdict

		said, verdict, name = await self._stage(
			ctx,
			self._readers,
			"output",
			finish.human_message,
			step=ctx.step,
			index=ctx.command_index,
			field="humanMessage",
			keyed=keyed,
		)
		if verdict is None:
			if said == finish.human_message:
				return PROCEED
			if isinstance(said, str):
				return finish.model_copy(update={"human_message": said})
			verdict = Verdict("trip", "it rewrote the humanMessage into something not text")
		return _finish_stopped(verdict, name, "humanMessage")

	async def before_words(self, run: Run, words: Words) -> WordsDecision | str:
		"""Judge the model's other words for a person by the guardrails that judge the humanMessage.

		The output guardrails made with ``message=True`` judge a question before whoever answers
		it reads it, and a call's reason before its approver does, as they judge a finish's
		``humanMessage`` (`GuardrailCheck.field` ``message`` or ``reason``): a rewrite replaces
		the text, a refusal is the model's to fix (nobody is asked; a call is not run), a
		tripwire stops the run. Verdicts are journaled under ``guard:<step>:output.<field>:...``.

		Returns:
			The text to say instead, `Proceed`, `Refuse` or `Stop`.
		"""
		return await self._words(run, words)

	async def _words(self, run: Run, words: Words, keyed: str = "") -> WordsDecision | str:
		"""Judge words for a person by the readers (`before_words`; `CallerWords`: ``keyed``)."""
		readers = self._readers
		if not readers or not words.text:
			return PROCEED
		from openmolt_core.guardrails.base import Verdict

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		index = ctx.command_index
		call = step_key("tool", ctx.step, index, words.tool) if words.tool else ""
		said, verdict, name = await self._stage(
			ctx,
			readers,
			"output",
			words.text,
			step=ctx.step,
			index=index,
			call=call,
			field=words.field,
			about=words.tool,
			keyed=keyed,
		)
		what = _WHAT[words.field]
		if verdict is None:
			if said == words.text:
				return PROCEED
			if isinstance(said, str):
				return said
			verdict = Verdict("trip", f"it rewrote the {what} into something not text")
		key = {"tool": words.tool} if words.tool else {"command": words.command}
		if verdict.action == "refuse":
			fix = _FIX[words.field]
			error = f"refused by guardrail {name!r}: {verdict.reason}; {fix}"
			if words.tool:
				error = f"not run: {error}"
			return Refuse(error, {**key, "ok": False, "error": error, "guardrail": name})
		error = f"stopped: guardrail {name!r} tripped ({verdict.reason})"
		entry = {**key, "ok": False, "error": error, "guardrail": name}
		return Stop(f"guardrail {name!r} tripped on the {what}: {verdict.reason}", entry=entry)


_REASON = "output.reason"
"""Where the verdicts on a call's reason go (``guard:<step>:output.reason:<index>:<n>``)."""

_CALLER = "caller."
"""What the keys of the callers' verdicts on a called run's words start their stage with
(``guard:<step>:caller.output.<field>:<index>:<n>``), apart from the run's own."""

_WHAT = {"message": "question", "reason": "reason", "plan": "plan"}
"""How a reason or a verdict names the words judged (`Words.field`)."""

_FIX = {
	"message": "fix it and ask again",
	"reason": "fix the reason and call again",
	"plan": "fix it and update the plan again",
}
"""What the model reads it should do when a guardrail refused its words (`Words.field`)."""


def _finish_stopped(verdict: Verdict, name: str, judged: str) -> Refuse | Stop:
	"""`Refuse` or `Stop` for a finish whose ``judged`` part a guardrail refused or tripped on.

	``judged``: ``output`` or ``humanMessage``; on a refusal the model fixes it and finishes again.
	"""
	if verdict.action == "refuse":
		error = (
			f"refused by guardrail {name!r}: {verdict.reason}; fix the {judged} and finish again"
		)
		return Refuse(error, {"command": "finish", "ok": False, "error": error, "guardrail": name})
	error = f"stopped: guardrail {name!r} tripped ({verdict.reason})"
	entry = {"command": "finish", "ok": False, "error": error, "guardrail": name}
	return Stop(f"guardrail {name!r} tripped on the {judged}: {verdict.reason}", entry=entry)


_LABELLED = "labelled"
"""Where ``state.ext["safety"]`` keeps the labels of stored results that carried labels of their
own, by the stored result's reference (``{"openmolt-file:...": ["private", "untrusted"]}``)."""


def _read_untrusted(link: CallingRun) -> bool:
	"""Whether a run nested in a call read untrusted content its caller had not handed down.

	A taint record of its own in a nested run's last state (``link.ended``): what the call
	returns may carry it. Kept in ``link.untrusted`` once found.
	"""
	if not link.untrusted and link.ended:
		handed = {t.get("call") for t in link.taint}
		link.untrusted = any(
			t.get("call") not in handed for state in link.ended for t in state.taint
		)
	return link.untrusted


_UNTRUSTED_VERDICT = "untrusted"
"""Set in a guardrail agent's journaled verdict whose run read untrusted content of its own
(`openmolt_core.tools.CallingRun.untrusted`) and changed what the judged run reads: that run is
tainted by the verdict's step."""


def _error_of(entry: Mapping[str, Any]) -> Any:
	"""What the model reads of a failed call, as its result guardrails judge it.

	Its ``error`` text; with the ``details`` the tool gave (`openmolt_core.errors.ToolError`: a
	reply's status and body), ``{"error": ..., "details": ...}``.
	"""
	error = entry.get("error", "")
	details = entry.get("details")
	return error if details is None else {"error": error, "details": details}


def _with_error(entry: dict[str, Any], value: Any) -> dict[str, Any]:
	"""A failed call's entry with its error rewritten by a guardrail (`_error_of`'s shape).

	Text replaces the error; ``{"error": text, "details": ...}`` both; anything else (a flag's
	``{"warning", "content"}``) is the error, as compact JSON, without the details it replaced.
	"""
	if isinstance(value, str) and "details" not in entry:
		return {**entry, "error": value}
	out = {k: v for k, v in entry.items() if k != "details"}
	if (
		isinstance(value, Mapping)
		and isinstance(value.get("error"), str)
		and set(value) <= {"error", "details"}
	):
		out["error"] = value["error"]
		if value.get("details") is not None:
			out["details"] = value["details"]
		return out
	out["error"] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
	return out


def _keep_labels(run: Run, result: Any, labels: frozenset[str]) -> None:
	"""Note the labels of a result stored for ``readResult`` that carried labels of its own.

	Its slices are its content: they carry its labels, not only its tool's (`_read_from`). Set
	from the journaled entry, so a replay notes the same.
	"""
	from openmolt_core.capabilities import is_stored

	if is_stored(result):
		kept = run.state.ext.setdefault(Safety.name, {}).setdefault(_LABELLED, {})
		kept[result["stored"]] = sorted(labels)


def _read_from(run: Run, call: CallTool) -> tuple[frozenset[str], BoundTool | None] | None:
	"""What a ``readResult`` call reads: its result's labels and its tool (None: not a stored one).

	Its slice is that result's content, so the model reads it with the same marker, and the
	guardrails that judge that tool's results judge it: its tool's labels, and those the result
	carried of its own (`_keep_labels`: a marked file's read). A result of a tool the run no
	longer has reads as untrusted content, of no tool.
	"""
	ref = call.input.get("result")
	for record in run.state.stored:
		if record.get("file") == ref:
			source: BoundTool | None = run.tools.get(str(record.get("tool")))  # type: ignore[assignment]  # the loop's bound tools
			if source is None:
				return frozenset({"untrusted"}), None
			labels = frozenset(source.labels)
			kept = run.state.ext.get(Safety.name, {}).get(_LABELLED, {}).get(ref)
			if isinstance(kept, list):
				labels = labels | {x for x in kept if x in LABELS}
			return labels, source
	return None


def _applies(
	g: Guardrail,
	bound: BoundTool,
	read: tuple[frozenset[str], BoundTool | None] | None,
	labels: frozenset[str],
) -> bool:
	"""Whether a tool_result guardrail judges a call's result (a slice: as its tool's, too).

	``labels``: the result's, its tool's and its own (a slice: those of the result it reads).
	"""
	if g.applies(bound, labels | bound.labels):
		return True
	if read is None:
		return False
	_, source = read
	if source is None:  # its tool is gone: judged by the guardrails of such labels
		return bool(set(g.labels) & labels)
	return g.applies(source, labels)


async def taint(ctx: RunContext, key: str, tool: str, *, live: bool = True) -> None:
	"""Record that untrusted content reached the run's model, and say so the first time.

	The record (``{"call", "tool", "step"}``) joins ``state.taint`` once per ``key`` (at most
	`MAX_TAINT_RECORDS`); the first one is logged and emitted as a ``taint`` event.

	Args:
		ctx: The run.
		key: What brought the content: a call's step key, or ``tools:<integration>`` for the
			tool descriptions a source listed (`openmolt_core.capabilities.sources`).
		tool: Where it came from, as messages name it (a tool's handle).
		live: False for a call answered from the journal: its event went out when it ran.
	"""
	records = ctx.state.taint
	first = not records
	if len(records) < MAX_TAINT_RECORDS and all(t.get("call") != key for t in records):
		records.append({"call": key, "tool": tool, "step": ctx.step})
	if not first:
		return
	if not live:  # answered from the journal: the event went out when the call ran
		ctx.skip_event()
		return
	log.info("%s step %d: untrusted content from %s taints the run", ctx.agent, ctx.step, tool)
	if ctx.wants("taint"):
		from openmolt_core.capabilities._safety_events import TaintEvent

		await ctx.emit(TaintEvent(agent=ctx.agent, step=ctx.step, tool=tool, call=key))
	else:
		ctx.skip_event()


@functools.cache
def _guard_key(step: int, stage: str, index: int, n: int) -> str:
	"""The journal step of guardrail ``n`` of a stage, on command ``index`` of ``step``."""
	return f"guard:{step}:{stage}:{index}:{n}"


class TaintedStart(Capability):
	"""Starts a nested run tainted: what a tainted run hands down to the runs its calls start.

	The caller read untrusted content, and the task may carry its instructions: every nested
	run (an agent tool's, or any tool's ``run(parent=context.run)``) starts with the caller's
	records (``run.link.taint``), so its outbound calls go through its own taint policy. Only
	a new run takes them (one resumed keeps its own), so a replay starts the same.
	"""

	__slots__ = ()

	name = "tainted-start"
	in_fingerprint: ClassVar[bool] = False  # a pure function of the calling run's state

	async def on_run_start(self, run: Run) -> Stop | None:
		"""Copy the calling run's taint records into a new run's state."""
		state, link = run.state, run.link
		if link is not None and link.taint and not state.taint and not state.steps:
			if state.pending is None:
				state.taint = [dict(t) for t in link.taint]
		return None

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""Hand the run's taint down again, so a chain of runs stays tainted to its end.

		The nested run may belong to an agent without a `Safety` capability (an `Agent` built
		by hand); the runs its own calls start must still begin tainted. Where `Safety` hands
		down too, the kernel keeps one `TaintedStart` per call (`openmolt_core.hooks.Hooks.handed`).
		"""
		return _tainted_calls(run, tools)


_TAINTED_START = TaintedStart()


class CallerWords(Capability):
	"""Judges a called run's words for people by its callers' message guardrails.

	What a run with guardrails that judge the text people read (``message=True``) hands down to
	the runs its calls start (`Safety.hand_down`): a sub-agent's question, its calls'
	reasons and its finish's ``humanMessage`` reach the caller's people (the caller's approver decides the sub-agent's calls when
	it has none of its own; the sub-agent's events, a question it parks on, reach the caller's
	handlers, a chat, a viewer), so they are judged as the caller's own words are. The called
	run's own guardrails judge first (its agent's capabilities come first), then these: the
	nearest caller's first, the outermost caller's last, through any depth of nesting. A
	rewrite replaces the text, a refusal is the called run's model's to fix, a tripwire stops
	the called run (and so fails its call). The verdicts are the called run's: journaled
	under its ``guard:<step>:caller.output.<field>:<index>:<n>`` (``n`` counts these
	guardrails, in order), its ``guardrail`` events (passed up to the callers' handlers) and
	its audit. A guardrail agent's run (`openmolt_core.guardrails.Guardrail`) is not handed
	them: it would judge its own words.

	Args:
		guardrails: The callers' message guardrails, the nearest caller's first.
	"""

	__slots__ = ("_by", "guardrails")

	name = "caller-words"
	in_fingerprint: ClassVar[bool] = False  # its own steps are journaled (guard:...)

	def __init__(self, guardrails: Sequence[Guardrail]) -> None:
		self.guardrails: tuple[Guardrail, ...] = tuple(guardrails)
		"""The callers' message guardrails, in the order they judge."""
		self._by = Safety(self.guardrails, shared=True)  # judges and records as the caller's

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> list[str]:
		"""A call's reason, in a concurrent batch: the steps of its verdicts, in command order."""
		if not call.reason:
			return []
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		at = _CALLER + _REASON
		return [_guard_key(ctx.step, at, ctx.command_index, n) for n in range(len(self.guardrails))]

	async def before_words(self, run: Run, words: Words) -> WordsDecision | str:
		"""Judge a question or a call's reason by the callers' guardrails, after the run's own."""
		return await self._by._words(run, words, _CALLER)

	async def before_finish(self, run: Run, finish: Finish) -> FinishDecision | Finish:
		"""Judge a called run's ``humanMessage`` by the callers' guardrails, after the run's own.

		A sub-agent's finish reaches its callers' people as its ``finish`` event (a chat's
		page shows a failing sub-agent's message); its output is its caller's tool result,
		which the caller's own guardrails judge where it goes.
		"""
		return await self._by._message(run, finish, _CALLER)  # type: ignore[arg-type]  # the loop's context

	def hand_down(self, run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
		"""Hand the callers' guardrails down again, so a chain of runs is judged to its end.

		The called run may belong to an agent without a `Safety` capability (an `Agent` built by
		hand). Where its `Safety` hands down its own guardrails with these after them, that
		one is first, and the called run takes it (one capability of a name per run).
		"""
		return [{"capabilities": (self,)}] * len(tools)


def _tainted_calls(run: Run, tools: Sequence[ToolSpec]) -> Sequence[Mapping[str, Any]]:
	"""What a run hands each call (`Safety.hand_down`).

	A tainted run hands its records and `TaintedStart`; a run that may hold private data
	(`_holds_private`) says so; a clean run without any, nothing.
	"""
	handed = _handed(run)
	return [handed] * len(tools) if handed else ()


def _handed(run: Run) -> dict[str, Any]:
	"""What a run hands each run its calls start (`_tainted_calls`), or a guardrail agent's.

	A tainted run hands its records and `TaintedStart`; a run that may hold private data
	(`_holds_private`) says so; a clean run without any, nothing.
	"""
	private = _holds_private(run)
	if not run.state.taint:
		return {"private": True} if private else {}
	handed: dict[str, Any] = {"taint": run.state.taint, "capabilities": (_TAINTED_START,)}
	if private:
		handed["private"] = True
	return handed


def _judged_by(ctx: RunContext, g: Guardrail, check: GuardrailCheck, key: str) -> CallingRun | None:
	"""The judged run as its guardrail agent's run sees it: a caller, as a sub-agent's run sees one.

	What the agent reads (the output, a call's input or result, the words for a person) may
	hold what the judged run holds, so its run takes what that run hands a sub-agent's
	(`_handed`: its taint records, and whether it may hold private data; the budget's caps:
	what the judged run has left, since the agent's spend is that run's), and it may hold
	private data when it is shown a private tool's result. Its events stay its own (the
	verdict is the judged run's event); the judged run's approver decides its calls when its
	agent has none, as a sub-agent's. None for a guardrail that is a function.

	Args:
		ctx: The judged run.
		g: The guardrail.
		check: What it judges.
		key: The verdict's journal step (``guard:...``): the call the agent's run nests in.
	"""
	if not callable(getattr(g.check, "execute", None)):  # a function: the application's code
		return None
	from openmolt_core.llm import Usage
	from openmolt_core.tools import CallingRun

	# What the judged run hands a sub-agent's run (`Safety.hand_down` among them: `_handed`),
	# its budget's caps too (the agent's spend is the judged run's), but not its message
	# guardrails (`CallerWords`): the agent would judge its own words.
	handed = ctx.hooks.handed(ctx, (g.check,))[0]  # type: ignore[arg-type]  # an agent: a spender
	caps = tuple(c for c in handed.pop("capabilities", ()) if not isinstance(c, CallerWords))
	if caps:
		handed["capabilities"] = caps
	if "private" in check.labels:
		handed["private"] = True
	return CallingRun(
		ctx.state.run_id,
		key,
		check.step,
		ctx.command_index,
		Usage(),
		_nobody,
		_unheard,
		user=ctx.state.user,
		caller=ctx,
		depth=1 if ctx.link is None else ctx.link.depth + 1,
		**handed,
	)


def _nobody(name: str) -> bool:
	"""A guardrail agent's events go to its own handlers only: nobody up the chain wants them."""
	return False


async def _unheard(event: Event) -> None:
	"""Where a guardrail agent's run would pass its events up: nowhere (`_nobody`)."""


def _holds_private(run: Run) -> bool:
	"""Whether a run may hold private data: a tool of its agent reads some, or its caller may.

	A sub-agent with untrusted and outbound tools but none private is the trifecta's other half:
	what its caller hands it may be private (the caller read its vault, then called it).
	"""
	link = run.link
	if link is not None and link.private:
		return True
	return any("private" in t.labels for t in run.tools.values())


def _hooks_needed(
	stages: frozenset[str], gates: bool, *, approves: bool, words: bool = False
) -> frozenset[str]:
	"""The hooks a safety capability needs (labels and taint always, a stage's with guardrails).

	``before_tool`` also while the policy may gate outbound calls, and ``reserve_steps`` while
	it may send them to the approvals gate (their ``approval`` steps, in a concurrent batch).
	``words``: some output guardrail judges the text people read (``message=True``): it judges
	the questions and the calls' reasons too (``before_words``; a reason's verdicts are steps
	of a concurrent batch).
	"""
	# Every tool's labels; untrusted results taint; a tainted run's nested runs start tainted.
	# What a run nested in a call read reaches the caller through the call's result; a run
	# nested in a durable call that may send data out is not made again blindly.
	hooks = {"describe_tools", "after_tool", "hand_down", "nested_result_labels", "nested_in_doubt"}
	# Memory a tainted run wrote taints the runs that start from it.
	hooks.update(("new_run", "memory_updated", "memory_option", "on_run_start"))
	if "input" in stages:
		hooks.add("before_first_model")
	if "tool_call" in stages or gates:
		hooks.add("before_tool")
	if approves:
		hooks.add("reserve_steps")
	if "output" in stages:
		hooks.add("before_finish")
	if "tool_call" in stages or "tool_result" in stages:
		hooks.add("reserve_steps")  # their verdicts' steps, in a concurrent batch
	if words:
		hooks.update(("before_words", "reserve_steps"))
	return frozenset(hooks)


def _refused(call: CallTool, name: str, verdict: Verdict) -> Refuse | Stop:
	"""What a tool-call guardrail's refusal or tripwire answers (the entry the model reads)."""
	if verdict.action == "trip":
		error = f"not run: guardrail {name!r} stopped the run ({verdict.reason})"
		entry = {"tool": call.tool, "ok": False, "error": error, "guardrail": name}
		return Stop(
			f"guardrail {name!r} tripped on the call of {call.tool}: {verdict.reason}", entry=entry
		)
	error = f"refused by guardrail {name!r}: {verdict.reason}"
	return Refuse(error, {"tool": call.tool, "ok": False, "error": error, "guardrail": name})


def _tripped(name: str, what: str, verdict: Verdict) -> Stop:
	return Stop(f"guardrail {name!r} tripped on {what}: {verdict.reason}")


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


def _digest(text: str) -> str:
	"""The SHA-256 of a memory's text (what `Safety` keeps of it: never the text)."""
	import hashlib

	return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _telling(callback: Callable[..., Any], state: RunState) -> Callable[..., Any]:
	"""An ``on_update`` callback that calls ``callback`` with ``untrusted``: the run's taint.

	It takes what ``callback`` takes of what the loop gives (``update_id``, ``user``: the loop
	reads its signature, `openmolt_core._support.sync.takes`), and hands it on.
	"""
	return _Told(callback, state)


class _Told:
	"""``callback`` told the run's taint (`_telling`), with its signature as the loop reads it."""

	__slots__ = ("callback", "state")

	def __init__(self, callback: Callable[..., Any], state: RunState) -> None:
		self.callback = callback
		self.state = state

	@property
	def __signature__(self) -> Any:
		"""The callback's: the loop gives it ``update_id`` and ``user`` when it takes them."""
		import inspect

		return inspect.signature(self.callback)

	async def __call__(self, data: str, **given: Any) -> Any:
		"""Call the callback with what the loop gave, and ``untrusted``."""
		from openmolt_core._support.sync import call

		return await call(self.callback, data, **given, untrusted=self.state.tainted)


def _given_untrusted(memory: Any, key: str, text: str) -> bool:
	"""Whether ``text`` is a memory option's ``data`` given back with ``untrusted``."""
	if not memory:
		return False
	from openmolt_core.capabilities.memory import memory_part
	from openmolt_core.options import AgentMemory, MemoryPart, parse_options

	name = "long_term" if key == "longTerm" else "short_term"
	parsed = parse_options(AgentMemory, memory, "memory")
	part = getattr(parsed, name)
	if not isinstance(part, MemoryPart) or not part.untrusted:
		return False
	data, _ = memory_part(parsed, name)
	return data == text
