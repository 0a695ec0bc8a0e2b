"""Guardrails: checks that run around a run's input, its tool calls, their results and its output.

A guardrail is a plain function (sync or async) or an agent. It gets a `GuardrailCheck` (the
stage, the value, the tool, the run) and returns a `Verdict`, or None to let the value through:

| verdict | input | tool_call | tool_result | output |
| --- | --- | --- | --- | --- |
| `allow` | goes on | the call runs | the model reads the result | the run finishes |
| `rewrite` | the model reads the new input | the call runs with the new input | the model reads the new result | the run finishes with the new output |
| `refuse` | the run stops (as `trip`) | the call does not run; the model reads the reason | the model reads that the result was withheld, and why | the finish is refused; the model reads why and tries again |
| `trip` | the run stops | the run stops | the run stops | the run stops |

A tripwire ends the run gracefully with status ``guardrail_tripped``: what the step did is
recorded, every command it did not run says so, the state is a valid conversation, and the
verdict is in ``state.audit``. ``run(history=result.state)`` would go on from there: that is a
person's decision to override the guardrail, never the loop's.

```python
from openmolt_core.guardrails import guardrail, refuse


@guardrail("tool_call", tools=["gmail.sendMessage"])
def only_our_domain(check):
	if not check.value.get("to", "").endswith("@example.com"):
		return refuse("mail goes to @example.com addresses only; ask the user first")


agent = om.create_agent(..., guardrails=[only_our_domain])
```

Input guardrails run before the first model call, or with ``parallel=True`` alongside it (the
call is cancelled if one trips; a parallel guardrail can only allow or trip, and no tool runs
before it has passed). Guardrails of one stage run in order, each seeing the value the previous
ones let through. A guardrail that raises fails closed: a tool call or result is refused, an
input or output trips. Verdicts go through the run's port (`openmolt_core.durability`), so a
replayed run does not ask a guardrail agent again.

Rewrites should be idempotent (redacting twice gives the same text): a call parked for approval
is checked again when the run resumes, and the decision is bound to the input that will run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from openmolt_core._support import loaded
from openmolt_core._support.sync import call as call_app
from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.policy import ApprovalPolicy
	from openmolt_core.result import RunResult
	from openmolt_core.tools import CallingRun, InDoubt

__all__ = [
	"STAGES",
	"VERDICT_SCHEMA",
	"Action",
	"GuardAgent",
	"GuardFunction",
	"Guardrail",
	"GuardrailCheck",
	"Stage",
	"Verdict",
	"allow",
	"guardrail",
	"refuse",
	"rewrite",
	"trip",
]

Stage = Literal["input", "tool_call", "tool_result", "output"]
"""Where a guardrail runs: the run's input, a tool call's input, a tool's result, the output."""

STAGES: tuple[str, ...] = get_args(Stage)
"""Every stage."""

Action = Literal["allow", "rewrite", "refuse", "trip"]
"""What a verdict does (see the module's table)."""

_TOOL_STAGES = ("tool_call", "tool_result")


@dataclass(frozen=True, slots=True)
class Verdict:
	"""A guardrail's answer. Make one with `allow`, `rewrite`, `refuse` or `trip`.

	Args:
		action: What happens (see the module's table).
		reason: Why, in words the model (refuse) or a person (trip) can act on.
		value: The new value, for ``rewrite``.
	"""

	action: Action
	reason: str = ""
	value: Any = None

	def to_dict(self) -> dict[str, Any]:
		"""The verdict as JSON-serializable data."""
		out: dict[str, Any] = {"action": self.action, "reason": self.reason}
		if self.action == "rewrite":
			out["value"] = self.value
		return out

	@classmethod
	def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
		"""Read a verdict from `to_dict`'s output (or a guardrail agent's output).

		Raises:
			ValueError: The data is not a verdict.
		"""
		action = data.get("action") if isinstance(data, Mapping) else None
		if action not in get_args(Action):
			raise ValueError(
				f"a verdict needs 'action': one of {', '.join(get_args(Action))}; got {action!r}"
			)
		if action == "rewrite" and "value" not in data:
			raise ValueError("a 'rewrite' verdict needs the new 'value'")
		return cls(
			action,  # type: ignore[arg-type]  # one of Action: checked above
			str(data.get("reason") or ""),
			data.get("value"),
		)


def allow() -> Verdict:
	"""Let the value through unchanged (returning None does the same)."""
	return Verdict("allow")


def rewrite(value: Any, reason: str = "") -> Verdict:
	"""Go on with another value: a redacted input, a shortened result.

	Args:
		value: The new value (a tool call's new input must still match the tool's schema; a new
			output, the output schema).
		reason: What was changed, for the audit.
	"""
	return Verdict("rewrite", reason, value)


def refuse(reason: str) -> Verdict:
	"""Refuse this one value: the call does not run, the result is withheld, the finish is refused.

	Args:
		reason: Why, for the model: say what it should do instead.
	"""
	return Verdict("refuse", reason)


def trip(reason: str) -> Verdict:
	"""Stop the run (status ``guardrail_tripped``), its state kept.

	Args:
		reason: Why, for the person who reads the result.
	"""
	return Verdict("trip", reason)


VERDICT_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"action": {"enum": list(get_args(Action))},
		"reason": {"type": "string"},
		"value": {},
	},
	"required": ["action", "reason"],
}
"""The output schema of an agent used as a guardrail: a verdict as JSON."""


@dataclass(frozen=True, slots=True)
class GuardrailCheck:
	"""What a guardrail is asked to judge.

	Args:
		stage: Where it runs (`Stage`).
		value: The run's input, a tool call's input, a tool's result (as the model would read
			it; for a call that failed, its error text, or ``{"error", "details"}`` when the
			tool gave details), or the finish output.
		agent: The agent's name.
		run_id: The run's id.
		step: The step (0 for the input).
		tool: The tool's full handle, at the tool stages ("" otherwise).
		labels: The tool's labels (`openmolt_core.taint`), at the tool stages.
		tainted: Whether the run has read untrusted content so far.
		field: At the output stage, what ``value`` is: ``"output"`` (the finish's output), or,
			for a guardrail made with ``message=True``, words the model wrote for a person (a
			string): ``"humanMessage"`` (the finish's message), ``"message"`` (a
			``requestHumanInput``'s question, before whoever answers it reads it) or
			``"reason"`` (a ``callTool``'s reason, before the person who approves the call reads
			it) or ``"plan"`` (an ``updatePlan``'s plan as JSON text, before a page or a viewer
			shows it; a rewrite must still be a plan); "" at the other stages.
	"""

	stage: Stage
	value: Any
	agent: str
	run_id: str
	step: int
	tool: str = ""
	labels: frozenset[str] = frozenset()
	tainted: bool = False
	field: str = ""

	def payload(self) -> dict[str, Any]:
		"""The check as JSON, the input of a guardrail agent."""
		out: dict[str, Any] = {"stage": self.stage, "value": self.value}
		if self.tool:
			out["tool"] = self.tool
			out["labels"] = sorted(self.labels)
		if self.tainted:
			out["tainted"] = True
		if self.field not in ("", "output"):  # the words for a person: which ones
			out["field"] = self.field
		return out


GuardFunction = Callable[[GuardrailCheck], Verdict | Awaitable[Verdict | None] | None]
"""A guardrail written as a function (sync or async)."""


class GuardAgent(Protocol):
	"""An agent that judges (`openmolt_core.agent.Agent`, made with ``om.create_agent``).

	Its output schema is `Verdict`'s: the guardrail runs it once per check, in this process.
	"""

	@property
	def name(self) -> str:
		"""The agent's name (the guardrail's, unless given)."""
		...

	async def execute(
		self,
		state: Any,
		*,
		port: Any,
		input: Any = None,
		run_id: str | None = None,
		parent: CallingRun | None = None,
	) -> RunResult:
		"""Run the agent on ``input``, nested in ``parent`` (`openmolt_core.agent.Agent.execute`)."""
		...


@dataclass(frozen=True, slots=True)
class Guardrail:
	"""A check at one stage of a run (see the module's table).

	Args:
		check: A function taking a `GuardrailCheck` and returning a `Verdict` or None, or an
			agent. An agent gets `GuardrailCheck.payload` as its input and must finish with a
			verdict as output (give it ``output_schema=VERDICT_SCHEMA``); a run that does not
			succeed fails closed. Its usage counts in the calling run's.
		on: The stage.
		name: The name in results, events and the audit (default: the function's or agent's).
		tools: At the tool stages, rules selecting the tools it checks (the syntax of
			`openmolt_core.policy`: ``"gmail.send*"``, ``"slack"``, ``"*:writes"``, ``"!..."``);
			default: every tool.
		labels: At the tool stages, check only tools with one of these labels
			(``["untrusted"]``).
		parallel: For the input stage: run alongside the first model call instead of before it.
		message: For the output stage: also judge the words the model writes for people: the
			finish's ``humanMessage`` (a chat's reply, an AG-UI or A2A message), in a second
			check whose value is that text (`GuardrailCheck.field` ``"humanMessage"``), and,
			before anyone reads them, a ``requestHumanInput``'s question (``"message"``) and a
			``callTool``'s reason for its approver (``"reason"``). A rewrite replaces the text;
			a refusal is the model's to fix (the finish is refused, the question not asked, the
			call not run); a tripwire stops the run. For checks of text (the PII redaction at
			the output stage does it by default); a guardrail that reads the output's fields
			leaves it off.

	Raises:
		ConfigurationError: An unknown stage, tools or labels outside the tool stages, parallel
			outside the input stage, message outside the output stage, or a malformed rule.
	"""

	check: GuardFunction | GuardAgent
	on: Stage = "input"
	name: str = ""
	tools: tuple[str, ...] = ()
	labels: tuple[str, ...] = ()
	parallel: bool = False
	message: bool = False
	_rules: ApprovalPolicy | None = field(default=None, init=False, repr=False, compare=False)

	def __post_init__(self) -> None:
		from openmolt_core.policy import ApprovalPolicy
		from openmolt_core.tools import check_labels

		name = self.name or _name_of(self.check)
		where = f"guardrail {name!r}"
		if self.on not in STAGES:
			raise ConfigurationError(f"{where}: on must be one of {', '.join(STAGES)}")
		if not callable(self.check) and not _is_agent(self.check):
			raise ConfigurationError(f"{where}: check must be a function or an agent")
		if (self.tools or self.labels) and self.on not in _TOOL_STAGES:
			raise ConfigurationError(
				f"{where}: tools and labels select tools, so they are for the tool_call and "
				f"tool_result stages, not {self.on}"
			)
		if self.parallel and self.on != "input":
			raise ConfigurationError(f"{where}: parallel is for input guardrails only")
		if self.message and self.on != "output":
			raise ConfigurationError(
				f"{where}: message judges a finish's humanMessage, so it is for output "
				f"guardrails only, not {self.on}"
			)
		tools = (self.tools,) if isinstance(self.tools, str) else tuple(self.tools)
		rules = ApprovalPolicy.of(list(tools), where=f"{where}: tools") if tools else None
		object.__setattr__(self, "name", name)
		object.__setattr__(self, "tools", tools)
		object.__setattr__(self, "labels", check_labels(self.labels, f"{where}: labels"))
		object.__setattr__(self, "_rules", rules)

	@property
	def in_doubt(self) -> InDoubt:
		"""What a durable run does with this guardrail's check found under way after a crash.

		``retry`` for a function (the application's code, at least once, as a handler). For an
		agent, the policy of its run (`openmolt_core.subagents.nested_in_doubt`): its run would
		start again and make its tool calls again, so one that may send or declares ``ask`` or
		``fail`` is not run again; its verdict fails closed instead (the call refused, the input
		or output tripped).
		"""
		if not _is_agent(self.check):
			return "retry"
		from openmolt_core.subagents import nested_in_doubt

		return nested_in_doubt(self.check)  # an agent: checked above

	def applies(self, bound: BoundTool, labels: Collection[str] | None = None) -> bool:
		"""Whether this guardrail checks calls of a tool (at the tool stages).

		Args:
			bound: The tool as the agent sees it.
			labels: The labels of what is judged, when not the tool's: a result's own
				(`openmolt_core.tools.LabelledResult`: a marked file's read) added to them.
		"""
		if self.labels and set(self.labels).isdisjoint(bound.labels if labels is None else labels):
			return False
		rules = self._rules
		return rules is None or rules.rule_for(bound.handle, bound.tool) is not None

	async def judge(
		self, check: GuardrailCheck, parent: CallingRun | None = None
	) -> tuple[Verdict, RunResult | None]:
		"""Ask the guardrail; an exception or a bad answer becomes a failing verdict.

		Args:
			check: What to judge.
			parent: For a guardrail agent: the judged run, as a sub-agent's run sees its caller
				(the safety capability makes it). The agent's run nests in it for taint: it
				starts with the caller's taint records (and tainted by what it is shown when that
				is an untrusted tool's result), and, when the caller may hold private data (or it
				is shown a private tool's result), its outbound calls after untrusted content are
				gated by its taint policy as a sub-agent's are (`openmolt_core.taint`).

		Returns:
			The verdict, and a guardrail agent's run (None for a function), whose usage counts
			in the calling run's, in total and per model.
		"""
		fails: Action = "refuse" if check.stage in _TOOL_STAGES else "trip"
		if _is_agent(self.check):
			return await self._ask_agent(check, fails, parent)
		try:
			# A sync function runs in a worker thread, so a budget running out interrupts it.
			answer = await call_app(self.check, check)  # type: ignore[arg-type]  # a function: checked above
		except Exception as exc:
			return Verdict(fails, f"the guardrail failed ({type(exc).__name__}: {exc})"), None
		if answer is None:
			return Verdict("allow"), None
		if not isinstance(answer, Verdict):
			return (
				Verdict(
					fails,
					f"the guardrail returned {type(answer).__name__}, not a Verdict (allow(), "
					"rewrite(value), refuse(reason) or trip(reason)) or None",
				),
				None,
			)
		return answer, None

	async def _ask_agent(
		self, check: GuardrailCheck, fails: Action, parent: CallingRun | None
	) -> tuple[Verdict, RunResult | None]:
		from openmolt_core.durability import LOCAL_PORT
		from openmolt_core.errors import RunError
		from openmolt_core.taint import MAX_TAINT_RECORDS
		from openmolt_core.tools import MAX_NESTING

		agent: Any = self.check
		# Its run's id names the verdict's journal step (``guard:<step>:<stage>:<index>:<n>``):
		# each check has its own, so the calls of the runs judging two calls of one step do not
		# share idempotency keys, and a check judged again (a crash) keeps its keys.
		where = parent.call.replace(":", ".") if parent is not None else f"guard.{check.step}"
		run_id = f"{check.run_id}.{where}.{self.name}"
		state = None
		if parent is not None and parent.depth > MAX_NESTING:
			why = f"runs nest more than {MAX_NESTING} deep (a guardrail agent judged by itself?)"
			return Verdict(fails, f"the guardrail agent was not run: {why}"), None
		taint = [dict(t) for t in parent.taint] if parent is not None else []
		shown = "untrusted" in check.labels or (check.tainted and not taint)
		if shown and len(taint) < MAX_TAINT_RECORDS:
			# It starts with its caller's taint records (handed down, as a sub-agent's run
			# does); and what it judges may be content someone else wrote (an untrusted tool's
			# result, a tainted run's words): its run starts tainted, so its own outbound calls
			# go through its taint policy as a sub-agent's would.
			taint.append({"call": "input", "tool": f"guardrail:{check.stage}", "step": 0})
		if taint:
			from openmolt_core.result import RunState

			# It acts for the judged run's user from its start (its long-term memory is theirs).
			user = parent.user if parent is not None else None
			state = RunState(run_id=run_id, taint=taint, user=user)
			agent._start(state, check.payload(), (), parent)  # nested: no root run
		try:
			# In this process, whatever the instance's durability: the verdict is one journaled
			# step of the calling run, as a sub-agent's run lives inside its caller's step.
			result = await agent.execute(
				state, port=LOCAL_PORT, input=check.payload(), run_id=run_id, parent=parent
			)
		except RunError as exc:
			return Verdict(fails, f"the guardrail agent failed: {exc}"), exc.result
		if result.status != "success":
			why = result.error or result.human_message or "no message"
			return (
				Verdict(fails, f"the guardrail agent ended with {result.status}: {why}"),
				result,
			)
		output = result.output
		dump = getattr(output, "model_dump", None)
		try:
			return Verdict.from_dict(dump(mode="json") if callable(dump) else output), result
		except ValueError as exc:
			return Verdict(fails, f"the guardrail agent's output is no verdict: {exc}"), result


def guardrail(
	on: Stage = "input",
	*,
	name: str | None = None,
	tools: Sequence[str] = (),
	labels: Sequence[str] = (),
	parallel: bool = False,
	message: bool = False,
) -> Callable[[GuardFunction], Guardrail]:
	"""Make a `Guardrail` of a function: ``@guardrail("tool_call", tools=["slack.postMessage"])``.

	Args:
		on: The stage.
		name: Its name (default: the function's).
		tools: At the tool stages, rules selecting the tools it checks.
		labels: At the tool stages, the labels of the tools it checks.
		parallel: For the input stage: run alongside the first model call.
		message: For the output stage: also judge the words the model writes for people (the
			finish's humanMessage, a question, a call's reason: `Guardrail`).
	"""

	def make(function: GuardFunction) -> Guardrail:
		return Guardrail(
			function,
			on=on,
			name=name or "",
			tools=tuple(tools),
			labels=tuple(labels),
			parallel=parallel,
			message=message,
		)

	return make


def _is_agent(value: Any) -> bool:
	agent = loaded("openmolt_core.agent", "Agent")  # none if never imported: no agent exists
	return agent is not None and isinstance(value, agent)


def _name_of(check: Any) -> str:
	if _is_agent(check):
		return str(check.name)
	return str(getattr(check, "__name__", "") or type(check).__name__)
