"""The features that attach to runs as capabilities (`openmolt_core.hooks.Capability`).

Each module holds one feature and what builds it from ``create_agent``'s keyword options; the
loop never imports them. See docs/guides/capabilities.md and Architecture.md.

Here are the capabilities every agent of ``create_agent`` has, whole when they are light (the
instance's run observers and its verbose log, `Observers`; the approvals gate, `ApprovalGate`;
what the runs a tool call nests spend, `NestedSpend`),
or in their part that runs at every step (`Compaction`: whether the request is near the
threshold; `OffloadResults`: whether a result is too large, and the ``openmolt.readResult``
listing; `Streaming`: whether anything listens to the reply's text; `Sessions`: whether a call
gives a session, and whether a run is a session's), so a plain run loads no feature module: each
loads its feature (`openmolt_core._verbose`, `openmolt_core.observe`, `openmolt_core._approve`,
`openmolt_core.capabilities.compaction`, `openmolt_core.capabilities.offload`,
`openmolt_core.capabilities.streaming`, `openmolt_core.capabilities.sessions`) when a run uses
it. Their features' modules re-export them (same objects). `load_tools` makes tools callable
from the next step, for the capabilities that do (tool search, offload).
"""

from __future__ import annotations

import functools
import json
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, ClassVar, cast

from anyio import get_cancelled_exc_class

from openmolt_core._chain import split_id
from openmolt_core._cost import estimate_tokens
from openmolt_core.durability import keeps_spent
from openmolt_core.hooks import PROCEED, Capability
from openmolt_core.llm import DEFAULT_CONTEXT_WINDOW
from openmolt_core.prompt import dumps
from openmolt_core.result import (
	SESSION_KEY,  # the state's key, re-exported here
	TRIGGER_KEY,
)

if TYPE_CHECKING:
	from openmolt_core._execute import RunContext
	from openmolt_core._support.schemafit import SchemaDialect
	from openmolt_core.agent import Agent
	from openmolt_core.capabilities.sessions import RunConversation
	from openmolt_core.commands import CallTool
	from openmolt_core.conversation import Session
	from openmolt_core.decisions import ApprovalDecision, ApprovalRequest
	from openmolt_core.durability import RunPort
	from openmolt_core.envelope import Envelope, FittedSchema
	from openmolt_core.files import FileAccess
	from openmolt_core.hooks import (
		AgentInfo,
		Call,
		CallDrive,
		ModelSend,
		Run,
		RunOwner,
		ToolDecision,
		ToolSpec,
		ToolStep,
		ToolWork,
	)
	from openmolt_core.llm import CompactionConfig, LLMProvider
	from openmolt_core.observe import RunObserver
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.tools import CallingRun, Tool, ToolContext

__all__ = [
	"READ_TOOL",
	"SESSION_KEY",
	"ApprovalGate",
	"Compaction",
	"Memory",
	"NestedSpend",
	"ObservedOutside",
	"Observers",
	"Offload",
	"OffloadResults",
	"ReadResultTool",
	"Sessions",
	"Streaming",
	"StructuredOutput",
	"in_session",
	"is_stored",
	"load_tools",
	"needs_compaction",
	"record_spent",
	"spent_before",
	"summary_provider",
]


def load_tools(state: RunState, handles: Sequence[str], order: Mapping[str, Any]) -> None:
	"""Make tools callable from the next step: add them to ``state.loaded``, in the tools' order.

	A capability's `Capability.visible_tools` reads the loaded set (tool search, offload).

	Args:
		state: The run's state.
		handles: The tools to add.
		order: The run's tools by handle, in the agent's order (``run.tools``).
	"""
	merged = set(state.loaded) | set(handles)
	if len(merged) == len(state.loaded):
		return
	position = {h: i for i, h in enumerate(order)}
	end = len(position)
	state.loaded = sorted(merged, key=lambda h: (position.get(h, end), h))


READ_TOOL = "openmolt.readResult"
"""The built-in tool that reads a slice of a stored result."""


_CLAIMED: ContextVar[tuple[int, str, int] | None] = ContextVar(
	"openmolt_resume_claimed", default=None
)
"""The parked state whose step `Observers.claim_resume` took for the resume going on in this
context (its object's id, run id and steps), which the drive it watches does not take again."""


async def _given_back(release: Callable[[], Awaitable[None]]) -> None:
	# A claim given back (the resume refused before it went on): the next drive claims again.
	_CLAIMED.set(None)
	await release()


class Observers(Capability):
	"""Tell the instance's observers about each drive of an agent's runs; mark it verbose or quiet.

	The verbose log (`openmolt_core._verbose`) is the instance's own observer: a drive's log
	records reach stderr only if its agent (``config={"verbose": ...}``) or, by default, its
	instance (``OpenMolt(verbose=...)``, read at each drive) is verbose; a quiet run nested in a
	verbose one stays quiet. While no agent of the process was ever verbose the module is not
	loaded and every run is quiet already.

	Args:
		observers: Returns the instance's observers (read at each drive: they may be added
			after the agent was created).
	"""

	__slots__ = ("observers",)

	name = "run-observers"
	in_fingerprint: ClassVar[bool] = False  # observing changes nothing a run journals

	def __init__(self, observers: Callable[[], Sequence[RunObserver]]) -> None:
		self.observers = observers

	def new_root_run(self, agent: str, state: RunState) -> None:
		"""Mark a new run with the trigger it is started under (`openmolt_core.observe.started_by`).

		The mark (``state.ext["trigger"]``) is saved or journaled with the run's first state: a
		process that goes on with the run (a durable worker that recovers it) drives it under
		the same trigger (`wrap_run`).
		"""
		observe = sys.modules.get("openmolt_core.observe")  # not loaded: no trigger was set
		trigger = None if observe is None else observe.current_trigger()
		if trigger is not None and TRIGGER_KEY not in state.ext:
			state.ext[TRIGGER_KEY] = trigger

	async def wrap_run(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		"""Run the drive under its run's trigger, verbose or quiet, watched by the observers.

		A run marked with its trigger (`new_root_run`) that this context does not say (a durable
		run another process recovers) is driven under its mark.
		"""
		mark = run.state.ext.get(TRIGGER_KEY) if run.state.ext else None
		if isinstance(mark, dict) and mark.get("kind"):
			from openmolt_core.observe import driven_as

			with driven_as(mark):
				return await self._verbose(run, drive)
		return await self._verbose(run, drive)

	async def _verbose(self, run: Run, drive: Callable[[], Awaitable[RunResult]]) -> RunResult:
		# The drive marked verbose or quiet, watched by the observers if there are any.
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		agent = cast("Agent | None", ctx.owner)  # the kernel's context names its Agent
		if agent is None:
			return await drive()
		verbose = bool(agent.config.get("verbose", agent.om.verbose))
		if not verbose and "openmolt_core._verbose" not in sys.modules:
			return await self._watched(ctx, agent, drive)
		from openmolt_core import _verbose

		if verbose:
			_verbose.enable()  # once per process: the instance may have become verbose since
		with _verbose.scope(verbose):
			return await self._watched(ctx, agent, drive)

	async def _watched(
		self, ctx: RunContext, agent: Agent, drive: Callable[[], Awaitable[RunResult]]
	) -> RunResult:
		# The drive watched by the observers (`openmolt_core.observe`), if there are any.
		observers = self.observers()
		if not observers:
			return await drive()
		state = ctx.state
		claimed = _CLAIMED.get() == (id(state), state.run_id, state.steps)
		_CLAIMED.set(None)  # read once: a later drive of the context claims its own
		if claimed or state.pending is None or ctx.link is not None or agent.om.durability:
			return await self._watch(ctx, agent, observers, drive)
		# A parked state gone on from by `agent.run(history=...)` (with or without an answer),
		# not by `resume`, which took its step already: taken the same way, else a copy of the
		# park that another process resumed would run its calls again here.
		release = await self.claim_resume(agent.name, state)
		_CLAIMED.set(None)
		if release is None:
			return await self._watch(ctx, agent, observers, drive)
		from openmolt_core.errors import ApprovalError, ConfigurationError

		try:
			return await self._watch(ctx, agent, observers, drive)
		except (ConfigurationError, ApprovalError):  # refused before it went on: given back
			await release()
			raise

	async def _watch(
		self,
		ctx: RunContext,
		agent: Agent,
		observers: Sequence[RunObserver],
		drive: Callable[[], Awaitable[RunResult]],
	) -> RunResult:
		from openmolt_core.observe import watch_run

		link = ctx.link
		watch = watch_run(
			agent,
			ctx.state,
			observers,
			redact=ctx.redact,
			parent=link.run_id if link is not None else None,
		)
		return await watch.drive(ctx, drive)

	async def claim_resume(
		self, agent: str, state: RunState
	) -> Callable[[], Awaitable[None]] | None:
		"""Take the parked step in the run store for this resume, or refuse it.

		The processes that share a run store (the viewer, ``openmolt serve``) resume a step once
		(`openmolt_core.runstore.RunStore.claim_resume`): the second resume of one step is
		refused, as a durable backend refuses it, so its calls never run twice. It runs before
		the drive this capability watches (``wrap_run``), so a refused resume records nothing.

		Returns:
			What gives the step back (`RunStore.release_parked`), or None: the instance has no
			run store, or it has no row of the run.
		"""
		for observer in self.observers():
			store: Any = observer  # a run store (`RunStore`) claims; other observers do not
			if getattr(store, "claim_resume", None) is None:
				continue
			status: str = await store.claim_resume(
				state.run_id, state.steps, agent, pending=state.pending
			)
			if status:
				# The drive of this very state, which `_watched` then does not claim again.
				_CLAIMED.set((id(state), state.run_id, state.steps))
				taken = functools.partial(store.release_parked, state.run_id, state.steps, status)
				return functools.partial(_given_back, taken)
		return None


class ObservedOutside:
	"""An agent's emitter's sink (`openmolt_core.events.EventEmitter.outside`): its observers.

	What emits on an agent outside a drive of a run (a schedule's fire or skip, a durable
	worker's ``run:stranded``) reaches the instance's observers through it
	(`openmolt_core.observe.tell_outside`, loaded at the first such event).

	Args:
		agent: The agent whose emitter it serves.
		observers: Returns the instance's observers (read at each event).
	"""

	__slots__ = ("agent", "observers")

	def __init__(self, agent: Agent, observers: Callable[[], Sequence[RunObserver]]) -> None:
		self.agent: Agent = agent
		"""The agent whose emitter it serves."""
		self.observers: Callable[[], Sequence[RunObserver]] = observers
		"""Returns the instance's observers."""

	def listening(self) -> bool:
		"""Whether the instance has observers."""
		return bool(self.observers())

	async def __call__(self, event: Any) -> None:
		"""Tell the observers about the event, masked (`openmolt_core.observe.tell_outside`)."""
		from openmolt_core.observe import tell_outside

		await tell_outside(self.agent, self.observers(), event)


class ApprovalGate(Capability):
	"""The approvals gate: asks, uses delivered decisions, or parks (`openmolt_core._approve`)."""

	__slots__ = ()

	name = "approval-gate"
	journal_decisions: ClassVar[bool] = False  # it journals its own steps (``approval:``)
	in_fingerprint: ClassVar[bool] = False  # its steps are the journal's ``approval:`` keys
	parks: ClassVar[str] = "approval"  # `openmolt_core._approve.KIND`; also its journal steps

	def _holds(self, run: Run, tool: ToolSpec) -> bool:
		# Whether the gate decides a call of this tool whatever the capabilities say: its tool
		# is marked, or a resumed run still holds calls the gate parked (whatever their tool).
		if tool.approval is not None:
			return True
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		approvals = ctx.scratch.get(self.parks)
		return approvals is not None and bool(approvals.parked)

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Sequence[str]:
		"""The gate's journal step (``approval:<step>:<index>:<tool>``) for a call it decides.

		Args:
			run: The run.
			call: The call.
			tool: Its tool's record.
		"""
		if not self._holds(run, tool):
			return ()
		from openmolt_core.durability import step_key

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return [step_key(self.parks, ctx.step, ctx.command_index, call.tool)]

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> ToolDecision:
		"""Decide whether a call that waits for approval runs: ask, use a decision, or park.

		Asked last, after every capability (`openmolt_core.assembly` adds it after safety), for
		a marked tool's call, one a capability holds under its rule (`Approve`: ``run.held``),
		and any call while a resumed run holds calls it parked; the others pass as they are.

		Args:
			run: The run.
			call: The call, as the capabilities let it through.
			tool: Its tool's record.
		"""
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		rule = ctx.held
		if rule is None and not self._holds(run, tool):  # nothing waits: it runs as it is
			return PROCEED
		from openmolt_core import _approve  # here: a run that gates nothing never loads it

		return await _approve.gate(ctx, ctx.command_index, call, tool, rule)  # type: ignore[arg-type]

	def receive(
		self, run: Run, parked: Mapping[str, Any], given: Any, answer: str | None
	) -> list[ApprovalDecision]:
		"""Read ``agent.resume(state, decision=...)``: the decisions, their signatures checked.

		Args:
			run: The parked run.
			parked: ``state.pending``.
			given: One decision or several, objects or their dicts, or None.
			answer: Refused: the run waits for decisions.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.receive(ctx, given, answer)

	async def resume(self, run: Run, parked: Mapping[str, Any], given: Any) -> None:
		"""Check each decision against the call it decides; the gate uses them as the step goes on.

		Args:
			run: The resumed run.
			parked: ``state.pending``: the parked step.
			given: The decisions `receive` read.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		await _approve.resume(ctx, parked, given)

	def requests(self, run: Run, parked: Mapping[str, Any]) -> list[ApprovalRequest]:
		"""The calls that wait for a decision, as requests signed by the instance's signer.

		Args:
			run: The parked run.
			parked: ``state.pending``: the parked step.
		"""
		from openmolt_core import _approve

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's run context
		return _approve.pending_requests(ctx, parked)


class NestedSpend(Capability):
	"""Counts what the runs nested in a tool call spent in the calling run (`capabilities.spend`).

	Around each call's step (`Capability.wrap_tool`): a run whose spend is kept against a crash
	(a durable port, or a caller that keeps it) goes through `openmolt_core.capabilities.spend`;
	otherwise what the call's nested runs handed up rides its journaled entry, and is counted
	once the step answers, a replay's too. A call that nests no run loads nothing.
	"""

	__slots__ = ()

	name = "nested-spend"
	in_fingerprint: ClassVar[bool] = False  # its fields are the journal's, as they always were

	async def wrap_tool(
		self, run: Run, call: CallTool, tool: ToolSpec, step: ToolStep
	) -> dict[str, Any]:
		"""The call's step with its nested runs' spend in the journaled entry, then counted.

		Args:
			run: The calling run.
			call: The call.
			tool: The tool's record.
			step: Runs the call's journaled step.
		"""
		link = run.link
		if keeps_spent(run.port) or (link is not None and link.spending is not None):
			from openmolt_core.capabilities.spend import kept_step

			return await kept_step(run, step)
		entry = await step(functools.partial(_unkept, run.state))
		if _SPENT in entry:  # what its nested runs spent
			from openmolt_core.capabilities.spend import add_spent

			return add_spent(run.state, entry)
		return entry


_SPENT = "_usage"
"""The key of a journaled entry (a tool's result, a guardrail's verdict) that carries what its
nested runs spent, in total (`capabilities.spend`), so a replay counts it too."""


async def _unkept(state: RunState, calling: CallingRun, work: ToolWork) -> dict[str, Any]:
	"""A call's work whose spend nobody keeps: what its nested runs handed up rides its entry."""
	try:
		entry = await work()
	except get_cancelled_exc_class():
		if calling.usage.calls:  # cut off: its nested runs' calls were billed all the same
			from openmolt_core.capabilities.spend import spend_cut_off

			spend_cut_off(state, calling)
		raise
	if not calling.usage.calls:
		return entry
	from openmolt_core.capabilities.spend import spent_entry, summed

	return {**entry, **spent_entry(*summed((calling.usage, calling.usage_by_model)))}


async def spent_before(port: RunPort, key: str) -> dict[str, Any]:
	"""What earlier executions of the tool call ``key`` recorded as spent (empty: nothing).

	Through the port's optional ``async def spent_before(key) -> Mapping | None``: a durable
	port keeps a call's spend so a call a crash interrupts still counts what it was billed.

	Args:
		port: The run's port.
		key: The tool call's step key.
	"""
	read = getattr(port, "spent_before", None)
	if read is None:
		return {}
	found = await read(key)
	return dict(found) if found else {}


async def record_spent(port: RunPort, key: str, entry: Mapping[str, Any]) -> None:
	"""Record what the tool call ``key`` spent so far, earlier executions' included.

	Through the port's optional ``async def record_spent(key, entry)``, which replaces the
	call's last record; a port without it keeps nothing.

	Args:
		port: The run's port.
		key: The tool call's step key.
		entry: The spend (`openmolt_core.capabilities.spend.spent_entry`).
	"""
	write = getattr(port, "record_spent", None)
	if write is not None:
		await write(key, entry)


class Compaction(Capability):
	"""Summarise older steps when a run's context grows past the threshold.

	The check runs before each step's model call; the summary, when one is due, is written by
	`openmolt_core.capabilities.compaction` (loaded then). The agent's ``compaction`` and
	``compactor`` read and replace it (`configured`, `changed`).

	Args:
		config: The settings (`openmolt_core.compaction.CompactionConfig`).
		compactor: Returns the provider and model name that write summaries; None: the agent's
			own models.
		rebuild: Builds the capability for other settings whose summary model is another, as
			``create_agent`` resolves it (the assembly's); None (a capability made by hand):
			the compactor is kept.
	"""

	__slots__ = ("compactor", "config", "rebuild")

	name = "compaction"
	in_fingerprint: ClassVar[bool] = False  # it journals its own steps; the agent's are unchanged

	def __init__(
		self,
		config: CompactionConfig,
		compactor: Callable[[], tuple[LLMProvider, str]] | None = None,
		rebuild: Callable[[Any, CompactionConfig], Compaction] | None = None,
	) -> None:
		self.config = config
		self.compactor = compactor
		self.rebuild = rebuild

	def changed(self, **settings: Any) -> Compaction:
		"""A copy with some settings changed (``config``, ``compactor``): agents share one.

		Args:
			**settings: The settings to change.
		"""
		kept = {"config": self.config, "compactor": self.compactor, "rebuild": self.rebuild}
		return type(self)(**{**kept, **settings})

	def configured(self, agent: Any, config: CompactionConfig) -> Compaction:
		"""The capability for ``agent.compaction = config`` (replaced, never changed in place).

		Another summary model gets its own compactor (`rebuild`): the one kept would write the
		summaries with the model before.

		Args:
			agent: The agent whose ``compaction`` is set.
			config: The new settings.
		"""
		if self.rebuild is not None and config.model != self.config.model:
			return self.rebuild(agent, config)
		return self.changed(config=config)

	@property
	def summary_provider(self) -> str | None:
		"""The provider the summaries' calls go to, when not the agent's own models'.

		For ``provider_options`` keyed by provider (the agent's check of them, and a summary
		call's own part: `summary_provider`), with no summary model named, a compactor's calls
		go to its provider's name.
		"""
		model = self.config.model
		made = self.compactor()[0] if self.compactor is not None and model is None else None
		return summary_provider(model, made)

	async def before_model(self, run: Run) -> None:
		"""Compact the state's older steps if the coming request would be too large."""
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		models = ctx.models
		if models is None:  # pragma: no cover - the loop always gives it
			return
		threshold = self.config.threshold_tokens
		if threshold is None:
			size = models.context_window()
			threshold = int((size or DEFAULT_CONTEXT_WINDOW) * self.config.share)
		refused = (ctx.state.compaction or {}).get("refused_at")
		if refused:  # the model refused a request this large: its window is smaller than said
			threshold = min(threshold, int(refused * self.config.share))
		# After a call, the check counts the provider's tokens and what came since: no prompt.
		system = "" if ctx.state.context_tokens else models.system()
		if not needs_compaction(ctx.state, threshold, system):
			return
		system = system or models.system()
		from openmolt_core.capabilities.compaction import compact_run

		await compact_run(self, ctx, threshold, system)

	async def context_exceeded(self, run: Run) -> bool:
		"""The model refused the step's request as too long: summarise the older steps now.

		Whatever the estimate said (a local server's real window may be smaller than the one
		configured, a tokenizer may count more than the estimate): the step is then asked
		once more. False when too few steps are left to summarise.
		"""
		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		models = ctx.models
		if models is None:  # pragma: no cover - the loop always gives it
			return False
		from openmolt_core.capabilities.compaction import compact_run

		return await compact_run(self, ctx, 0, models.system(), again=True)


def summary_provider(model: Any, provider: Any = None) -> str | None:
	"""The provider name a summary call is routed under, for ``provider_options`` keyed by provider.

	One rule for the check of the options (`Compaction.summary_provider`, which the agent reads)
	and the call's own part of them (`openmolt_core.capabilities.compaction`): a
	``"provider:model"`` id's prefix, else the provider object's ``name`` (the summary model
	given as one, or the compactor's when no summary model is named), ``custom`` for a provider
	without a name.

	Args:
		model: The compaction's summary model (``CompactionConfig.model``): an id, a provider
			object, or None.
		provider: The provider the compactor returns, when one is set; None for none.

	Returns:
		The name, or None when summaries are the agent's own models' calls.
	"""
	if isinstance(model, str):
		return split_id(model)[0]
	named = model if model is not None else provider
	if named is None:
		return None
	return str(getattr(named, "name", "") or "custom")


def needs_compaction(state: RunState, threshold: int, system: str) -> bool:
	"""Whether the next call's prompt would pass the threshold (`openmolt_core.compaction`).

	The last call's input tokens (the provider's own count) plus the turns appended since; before
	any call, the estimate of the whole prompt.
	"""
	appended = state.messages[-1:] if state.context_tokens else state.messages
	base = state.context_tokens or 0
	return base + estimate_tokens(appended, "" if base else system) > threshold


class Streaming(Capability):
	"""Stream each model call to the run's ``text:delta`` and ``command:ready`` listeners.

	While nothing listens, the call is the provider's ``generate``; otherwise it streams, read
	by `openmolt_core.capabilities.streaming` (loaded then).
	"""

	__slots__ = ()

	name = "reply-stream"
	in_fingerprint: ClassVar[bool] = False  # its events are previews: nothing journaled changes

	def send_model(self, run: Run) -> ModelSend | None:
		"""The step's streaming sender while anything listens to the reply's text, else None."""
		if not (run.wants("text:delta") or run.wants("command:ready")):
			return None
		from openmolt_core.capabilities.streaming import sender

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		return sender(ctx)


# structured output --------------------------------------------------------------------------


class StructuredOutput(Capability):
	"""Fit the reply schema to each model's structured-output dialect, so its provider enforces it.

	Every agent of ``create_agent`` has it. The loop asks it once per model and tool set, for a
	model whose provider declares a dialect (`openmolt_core.capabilities.structured.fit`, loaded
	then); an agent without it sends the canonical schema as a guide (mode ``off``), and one
	built by hand with an output schema is refused without it.
	"""

	__slots__ = ()

	name = "structured-output"
	in_fingerprint: ClassVar[bool] = False  # the schema sent is the provider's form of the agent's

	def fit_reply(self, envelope: Envelope, dialect: SchemaDialect) -> FittedSchema:
		"""The envelope fitted to the dialect (`openmolt_core.capabilities.structured.fit`)."""
		from openmolt_core.capabilities.structured import fit

		return fit(envelope, dialect)


# memory -------------------------------------------------------------------------------------


class Memory(Capability):
	"""Memory beyond a run's state: what a new run starts from, and where an update is kept.

	A new run starts from the agent's memory option and from the long-term memory its earlier
	runs wrote in this process, each end user's apart; an update is kept for the agent's next
	runs and told to the option's ``on_update`` callback (`openmolt_core.capabilities.memory`,
	loaded when an agent has a memory option or a run writes its memory). One object serves
	every agent: what it keeps of one is dropped with the agent.
	"""

	__slots__ = ("_kept", "_warned")

	name = "agent-memory"
	in_fingerprint: ClassVar[bool] = False  # a run asks for the same steps with it

	def __init__(self) -> None:
		self._kept: weakref.WeakKeyDictionary[RunOwner, dict[str | None, str]] = (
			weakref.WeakKeyDictionary()
		)
		self._warned: weakref.WeakSet[RunOwner] = weakref.WeakSet()

	def kept(self, agent: RunOwner) -> dict[str | None, str]:
		"""The long-term memory ``agent``'s runs wrote in this process, by owner (None: its own)."""
		return dict(self._kept.get(agent) or {})

	def first_memory(self, agent: RunOwner, memory: Any, state: RunState) -> Mapping[str, str]:
		"""A new run's memory (`openmolt_core.capabilities.memory.first_memory`)."""
		kept = self._kept.get(agent)
		if not memory:  # most agents: no option to read
			long_term = kept.get(state.user) if kept else None
			return {"longTerm": long_term or "", "shortTerm": ""}
		from openmolt_core.capabilities.memory import first_memory

		return first_memory(memory, state.user, kept)

	async def memory_written(self, run: Run, memory: str, index: int) -> None:
		"""Keep the update and tell the callback (`openmolt_core.capabilities.memory.written`)."""
		from openmolt_core.capabilities.memory import written

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		agent = ctx.owner
		kept = None if agent is None else self._kept.setdefault(agent, {})

		def warn() -> bool:  # once per agent
			if agent is None or agent in self._warned:
				return agent is None
			self._warned.add(agent)
			return True

		await written(ctx, memory, index, kept, warn)


# sessions -----------------------------------------------------------------------------------


def in_session(state: RunState) -> bool:
	"""Whether a run belongs to a session (marked as it is driven in one).

	The mark is the session's id, whatever it is (``""`` and ``"0"`` too), or ``True`` for a run
	saved before runs named their session.

	Args:
		state: The run's state.
	"""
	mark = state.ext.get(SESSION_KEY)
	return mark is True or isinstance(mark, str)


class Sessions(Capability):
	"""Runs in sessions: the calls that give ``session=``, and whose notes their runs keep.

	A call with a session goes through `openmolt_core.capabilities.sessions` (loaded then),
	which opens and closes the run's turn in the conversation and marks the run (`SESSION_KEY`);
	a marked run's short-term memory is the session's in any process that drives it.

	Args:
		conversation: Makes a run's part in a session (``OpenMolt.conversation``).
	"""

	__slots__ = ("_conversation",)

	name = "sessions"
	takes: ClassVar[str] = "session"
	in_fingerprint: ClassVar[bool] = False  # the steps a run asks for are the same

	def __init__(self, conversation: Callable[[Agent, Session], RunConversation]) -> None:
		self._conversation = conversation

	def __repr__(self) -> str:
		return f"Sessions({self._conversation!r})"

	async def wrap_call(self, call: Call, drive: CallDrive) -> RunResult:
		"""The run's turn in the session, around its drive (`capabilities.sessions.session_call`)."""
		from openmolt_core.capabilities.sessions import session_call, turns_here

		return await session_call(self._conversation, call, drive, turns=turns_here())

	def memory_option(self, state: RunState, memory: Any) -> Any:
		"""The agent's memory option, without ``short_term`` in a session's run.

		A session's run says so in its state (`SESSION_KEY`), so a process that goes on with it
		without the session (a durable worker recovering it) keeps its notes from the agent's
		callback too.
		"""
		if not in_session(state):
			return memory
		from openmolt_core.capabilities.sessions import session_memory

		return session_memory(memory)


# offload ------------------------------------------------------------------------------------


def is_stored(value: Any) -> bool:
	"""Whether a result as the model saw it is the preview of a stored result."""
	if not (isinstance(value, dict) and isinstance(value.get("stored"), str) and "read" in value):
		return False
	from openmolt_core.files import FILE_PREFIX  # a preview: the store is loaded already

	stored: str = value["stored"]
	return stored.startswith(FILE_PREFIX)


_SCALAR = 32
"""Characters the JSON of a `_scalar` takes at most (a float's: 24, ``-1.2345678901234567e-308``)."""


def _scalar(value: Any) -> bool:
	"""Whether ``value`` is a float, a bool, None or an int of at most 16 digits."""
	kind = type(value)
	if kind is float or kind is bool or value is None:
		return True
	return kind is int and -(10**16) < value < 10**16


class Offload:
	"""Stores the large results of one agent and reads slices of them back.

	The check every result goes through is here; storing a large one and reading slices are in
	`openmolt_core.capabilities.offload` (loaded when a run stores a result).

	Args:
		files: The file store to keep results in; None shortens them instead (`trim`).
		limit: The agent's threshold: results whose JSON is longer are stored.
		per_tool: Thresholds by tool handle or pattern (``"notion.*"``); the most specific wins
			(an exact handle, then the longest matching pattern).
	"""

	__slots__ = ("_exact", "_lock", "_parsed", "_patterns", "files", "limit")

	def __init__(
		self, files: FileAccess | None, *, limit: int, per_tool: Mapping[str, int] | None = None
	) -> None:
		self.files: FileAccess | None = files
		"""Where large results are stored (None: they are shortened)."""
		self.limit: int = limit
		"""The agent's threshold (characters of JSON)."""
		per_tool = per_tool or {}
		self._exact = {k: v for k, v in per_tool.items() if not any(c in k for c in "*?[")}
		self._patterns = sorted(
			((k, v) for k, v in per_tool.items() if k not in self._exact),
			key=lambda kv: -len(kv[0]),
		)
		self._parsed: OrderedDict[str, Any] = OrderedDict()
		self._lock = threading.Lock()

	def threshold(self, handle: str) -> int:
		"""The threshold for one tool: its own, a matching pattern's, or the agent's."""
		exact = self._exact.get(handle)
		if exact is not None:
			return exact
		for pattern, value in self._patterns:
			if fnmatchcase(handle, pattern):
				return value
		return self.limit

	async def shrink(
		self,
		handle: str,
		value: Any,
		*,
		redact: Callable[[Any], Any] | None = None,
		origin: Mapping[str, Any] | None = None,
	) -> Any:
		"""The result as the model sees it: itself when small enough, else a stored preview.

		Args:
			handle: The tool's handle (for its threshold and the stored file's name).
			value: The tool's result.
			redact: Masks the run's secrets in a JSON value: a result stored is masked first,
				as everything the run hands on is (a tool that uploads the handle sends it).
			origin: The call whose result it is (``{"run", "call", "user"}``), written beside
				the stored file as any file a call keeps: a run for another end user finds no
				such file (`openmolt_core._binding.CallFiles`). None: the instance's.
		"""
		limit = self.threshold(handle)
		# The loop gives the result as the state can hold it (`encodable`: no lone surrogate,
		# NaN, cycle or depth past a reply's), so it is written as it is.
		if limit >= _SCALAR and _scalar(value):  # short enough without writing its JSON
			return value
		binary = isinstance(value, bytes | bytearray)
		text = "" if binary else dumps(value)
		if not binary and len(text) <= limit:
			return value
		if redact is not None and not binary:
			masked = redact(value)
			if masked != value:
				value, text = masked, dumps(masked)
		from openmolt_core.capabilities.offload import store

		return await store(self, handle, value, text, limit, origin)

	async def read(self, input: Mapping[str, Any], files: FileAccess | None) -> Any:
		"""Read a slice of a stored result (the ``openmolt.readResult`` tool's work).

		Args:
			input: ``result`` (the handle) and at most one of ``pointer``, ``path``,
				``lines``, ``bytes``.
			files: The agent's view of the file store.

		Raises:
			ToolError: The handle is unknown, the selector malformed or it selects nothing.
		"""
		from openmolt_core.capabilities.offload import read

		return await read(self, input, files)

	def document(self, ref: str, data: bytes, parsed: int) -> Any:
		"""A stored JSON result, parsed; the last ``parsed`` ones are kept (reads run in threads).

		Args:
			ref: Its handle.
			data: Its bytes.
			parsed: How many parsed documents to keep.
		"""
		with self._lock:
			if ref in self._parsed:
				self._parsed.move_to_end(ref)
				return self._parsed[ref]
		document = json.loads(data)
		with self._lock:
			self._parsed[ref] = document
			while len(self._parsed) > parsed:
				self._parsed.popitem(last=False)
		return document


_READ_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"result": {"type": "string", "description": "The stored result's handle, openmolt-file:…"},
		"pointer": {
			"type": "string",
			"description": "JSON Pointer into a JSON result: /items/0/id",
		},
		"path": {
			"type": "string",
			"description": "JSONPath into a JSON result: $.items[0:20].id, $.rows[*][0], $..title",
		},
		"lines": {"type": "string", "description": "Lines, 1-based and inclusive: 1-200"},
		"bytes": {"type": "string", "description": "Bytes, 0-based and inclusive: 0-4095"},
	},
	"required": ["result"],
	"additionalProperties": False,
}


class ReadResultTool:
	"""The built-in ``openmolt.readResult`` tool: reads a slice of a stored result.

	Args:
		offload: The agent's `Offload` (thresholds, parsed documents).
	"""

	handle = "readResult"
	# It reads back a result the run already has: whatever that result's tool is labelled was
	# counted when the call ran (`openmolt_core.taint`).
	labels: tuple[str, ...] = ()
	description = (
		"Read part of a result that was too large to show: give its handle and one of pointer "
		"(JSON Pointer), path (JSONPath), lines or bytes; without one, the start."
	)
	input_schema = _READ_SCHEMA
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	def __init__(self, offload: Offload) -> None:
		self._offload = offload

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Read the slice the input selects, of a result this run stored.

		Raises:
			ToolError: The handle is not one of the run's stored results (another run's, an
				uploaded file, a ``fileSystem:`` path, a slice written into the handle): what it
				holds was never counted by this run's taint policy nor gated as its tool's call.
		"""
		caller = context.run.caller if context.run is not None else None
		stored = getattr(getattr(caller, "state", None), "stored", None) or ()
		ref = input.get("result")
		if not any(ref == record.get("file") for record in stored):
			from openmolt_core.errors import ToolError

			handles = ", ".join(str(record.get("file")) for record in stored[-5:]) or "none"
			raise ToolError(
				f"{str(ref)[:80]!r} is not a result this run stored; {READ_TOOL} reads only those "
				f"(the last: {handles}), and selects a part with pointer, path, lines or bytes"
			)
		return await self._offload.read(input, context.files)


class OffloadResults(Capability):
	"""Store results too large for the model and offer ``openmolt.readResult`` to read them.

	Args:
		offload: The store, thresholds and reader (`openmolt_core.offload.Offload`).
	"""

	__slots__ = ("_hidden", "offload")

	name = "offload"
	in_fingerprint: ClassVar[bool] = False  # its tool is built in; its previews are journaled

	def __init__(self, offload: Offload) -> None:
		self.offload: Offload = offload
		"""Where large results go, and how slices of them are read."""
		self._hidden: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # the last answer

	def _without_reader(self, handles: tuple[str, ...]) -> tuple[str, ...]:
		# Asked several times a step with the same handles (the agent's tool set): the last
		# answer is kept, as one tuple (agents share this capability, maybe across threads).
		last = self._hidden
		if last[0] is handles:
			return last[1]
		found = tuple(h for h in handles if h != READ_TOOL)
		self._hidden = (handles, found)
		return found

	def builtin_tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""The ``openmolt.readResult`` reader (callable once a result was stored)."""
		return [ReadResultTool(self.offload)]

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The reader from the step after the run's first stored result."""
		if READ_TOOL in state.loaded:
			return handles
		return self._without_reader(handles)

	def why_hidden(self, state: RunState, handle: str) -> str | None:
		"""The reader called before anything was stored."""
		if handle != READ_TOOL:
			return None
		return (
			f"{READ_TOOL} reads results that were stored because they were too large; no "
			"result of this run was stored yet"
		)

	async def replace_result(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		"""The result itself when small enough, else stored (masked) with a preview in its place.

		Stored, it is the run's user's, as every file a call keeps (`openmolt_core._binding.CallFiles`).
		"""
		from openmolt_core.durability import step_key  # loaded with the loop

		ctx: RunContext = run  # type: ignore[assignment]  # the loop's context (kernel-built)
		state = ctx.state
		key = step_key("tool", ctx.step, ctx.command_index, call.tool)
		origin = {"run": state.run_id, "call": key, "user": state.user}
		return await self.offload.shrink(call.tool, value, redact=ctx.redact.deep, origin=origin)

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""A stored result: the reader loads, and ``state.stored`` lists the handle in order."""
		if not entry.get("ok"):
			return
		result = entry.get("result")
		if not (isinstance(result, dict) and is_stored(result)):
			return
		state = run.state
		load_tools(state, [READ_TOOL], run.tools)
		state.stored.append(
			{"file": result["stored"], "tool": call.tool, "step": run.step, "index": index}
		)
		state.stored.sort(key=lambda s: (s.get("step", 0), s.get("index", 0)))
