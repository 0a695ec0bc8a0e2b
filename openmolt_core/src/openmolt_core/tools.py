"""The tool contract: the `Tool` protocol, the context a tool runs in, and tools' labels.

Tools made from Python functions (`FunctionTool`, `tool`) are `openmolt_core.functiontools`'s;
their names here import it on first use.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

from openmolt_core._support import LazyPattern, lazy_exports
from openmolt_core._support.sync import cancelled

if TYPE_CHECKING:
	import httpx
	from tenacity import AsyncRetrying

	from openmolt_core.decisions import ApprovalHandler
	from openmolt_core.events import Event
	from openmolt_core.files import FileAccess
	from openmolt_core.llm import Usage
	from openmolt_core.result import RunState

__all__ = [
	"IDEMPOTENCY_NAMESPACE",
	"LABELS",
	"MAX_NESTING",
	"UNKNOWN",
	"UNKNOWN_LABELS",
	"CallingRun",
	"InDoubt",
	"Label",
	"LabelledResult",
	"NestedRunTool",
	"Retries",
	"Tool",
	"ToolContext",
	"cancelled",
	"check_in_doubt",
	"check_labels",
	"declared_labels",
	"strictest",
]


@dataclass(slots=True)
class CallingRun:
	"""The run that calls a tool, as the tool sees it (``context.run``; None outside a run).

	A run nested in the call (``agent.run(..., parent=context.run)``) takes its id, events,
	usage, budgets, user and capabilities from it. The loop sets `LOOP_FIELDS`.

	Args:
		run_id: The calling run's id.
		call: The call's step key (``tool:<step>:<index>:<handle>``).
		step: The calling run's step.
		index: The call's index in the step's reply.
		usage: Add a nested run's usage here; the calling run adds it to its own when the call ends.
		usage_by_model: The same per model id.
		wants: Whether a handler of the calling agent (or of its own callers) wants an event.
		emit: Passes a nested run's event to those handlers.
		on_approval_request: An approval handler for nested agents without one (None: the caller's).
		cost_left: What the calling run may still spend in USD (None: no cost budget).
		tokens_left: The tokens the calling run may still use (None: no ``max_tokens``).
		taint: The calling run's taint records: a nested run starts tainted (`openmolt_core.taint`).
		private: Whether the calling run may hold private data (`openmolt_core.taint`).
		user: The end user the calling run acts for (None: the operator).
		depth: How deep a run started with this parent nests (1 under a top-level run).
		caller: The calling run's context, for the nested run's capabilities.
		capabilities: Capabilities the nested run attaches besides its agent's
			(`openmolt_core.hooks.Capability.hand_down`).
		spending: Awaited by a nested run after each model call with its usage so far (and per
			model), so a durable calling run keeps it (None: nobody keeps it).
		nesting: Awaited by a nested run as it starts, with its agent's name and the in-doubt
			policies of its tools and capabilities; a durable calling run raises
			``NestedRunInDoubt`` when an earlier, crashed execution of the call began it
			(`openmolt_core.capabilities.indoubt`).
		passes: Whether an exception a tool raised is the calling run's own (what ``nesting``
			raised): it passes through the call's work to the capabilities around it instead of
			failing the call.
		runs: How many runs were nested in this call so far (they number their ids by it).
		untrusted: Whether a run nested in this call read untrusted content its caller had not
			handed down (the call's result then counts as untrusted).
		ended: The last states of the runs nested in this call that ended, in that order.
	"""

	run_id: str
	call: str
	step: int
	index: int
	usage: Usage
	wants: Callable[[str], bool]
	emit: Callable[[Event], Awaitable[None]]
	on_approval_request: ApprovalHandler | None = None
	cost_left: float | None = None
	tokens_left: int | None = None
	taint: Sequence[Mapping[str, Any]] = ()
	user: str | None = None
	caller: Any = field(default=None, repr=False)  # the calling run: never in a log line
	depth: int = 1
	capabilities: tuple[Any, ...] = ()
	usage_by_model: dict[str, Usage] = field(default_factory=dict)
	private: bool = False
	spending: Callable[[Usage, Mapping[str, Usage]], Awaitable[None]] | None = field(
		default=None, repr=False
	)
	nesting: Callable[[str, Sequence[InDoubt | None]], Awaitable[None]] | None = field(
		default=None, repr=False
	)
	passes: Callable[[Exception], bool] | None = field(default=None, repr=False)
	runs: int = 0
	untrusted: bool = False
	ended: tuple[RunState, ...] = ()


LOOP_FIELDS = frozenset(
	"run_id call step index usage usage_by_model wants emit user caller depth spending "
	"nesting passes runs untrusted ended".split()
)
"""The fields of `CallingRun` the loop sets for each call; a capability hands down the others."""


MAX_NESTING = 10
"""The deepest runs nest (a sub-agent's sub-agent's ...): a run started deeper is refused."""


InDoubt = Literal["retry", "ask", "fail"]
"""What a durable run does with a tool call found started, not finished, after a crash."""


_STRICTNESS: tuple[InDoubt, ...] = get_args(InDoubt)  # laxest first


def strictest(policies: Iterable[InDoubt]) -> InDoubt:
	"""The strictest of some in-doubt policies (``fail`` over ``ask`` over ``retry``; none: ``retry``).

	Args:
		policies: The policies of what one call would make again if it ran again.
	"""
	return max(policies, key=_STRICTNESS.index, default="retry")


def check_in_doubt(value: Any, where: str) -> InDoubt | None:
	"""A declared in-doubt policy, checked (None: the default for the tool's kind).

	Args:
		value: ``retry``, ``ask``, ``fail`` or None.
		where: The tool, for the message.

	Raises:
		ConfigurationError: Not ``retry``, ``ask`` or ``fail``.
	"""
	if value is None or value in get_args(InDoubt):
		return value  # type: ignore[no-any-return]
	from openmolt_core._support.docs import docs_url  # only a message that names a page
	from openmolt_core.errors import ConfigurationError

	raise ConfigurationError(
		f"{where}: in_doubt must be 'retry', 'ask' or 'fail', got {value!r} (what happens to a "
		f"call found started but not finished after a crash; see {docs_url('guides/durable.md')})"
	)


IDEMPOTENCY_NAMESPACE = uuid.UUID("6f0d2a4e-8c1b-5e3f-9a7d-0b4c6e8f1a2d")
"""The UUID5 namespace of idempotency keys (`ToolContext.idempotency_key`): never change it."""


class Retries(Protocol):
	"""A tool's retry policy for HTTP calls (``ToolContext.retry``): `openmolt_core.RetryPolicy`."""

	def retrying(
		self,
		retry: Callable[[BaseException], bool],
		hint: Callable[[BaseException], float | None],
		*,
		attempts: int | None = None,
	) -> AsyncRetrying:
		"""A tenacity ``AsyncRetrying`` loop that follows the policy.

		Args:
			retry: Whether an exception is worth another attempt.
			hint: The wait an exception's reply asks for (None: back off).
			attempts: Tries in all, when not the policy's own.
		"""
		...


@dataclass(slots=True, repr=False)  # its own __repr__: none to generate
class ToolContext:
	"""What a tool can see while it runs.

	Args:
		agent: The agent's name.
		integration: The id of the integration the tool belongs to.
		config: The integration's credential config (secrets included; never send it to a model).
		memory: The agent's memory as ``{"longTerm": ..., "shortTerm": ...}`` at call time.
		http: Returns the shared ``httpx.AsyncClient`` (created on first use).
		auth: The ``httpx.Auth`` built from the agent's credential, for HTTP tools.
		redact: Secret values to scrub from anything the tool reports.
		files: The instance's file store: save binary results, resolve file references.
		extras: Anything the integration or the application passes along.
		run: The run making this call (set per call by the loop); `call_id` derives from it.
		retry: The instance's retry policy for HTTP calls (None: the default one).
		config_from_user: The config holds an end user's stored record: a host it names is
			theirs, so the HTTP engine checks its address too (SSRF guard).
	"""

	agent: str
	integration: str
	config: Mapping[str, Any] = field(default_factory=dict)
	memory: Mapping[str, str] = field(default_factory=dict)
	http: Callable[[], httpx.AsyncClient] | None = None
	auth: httpx.Auth | None = None
	redact: frozenset[str] = frozenset()
	files: FileAccess | None = None
	extras: dict[str, Any] = field(default_factory=dict)
	run: CallingRun | None = None
	retry: Retries | None = None
	config_from_user: bool = False

	def __repr__(self) -> str:
		# The config holds secrets: only its keys are shown, never its values.
		return (
			f"ToolContext(agent={self.agent!r}, integration={self.integration!r}, "
			f"config keys={sorted(self.config)!r}, auth={type(self.auth).__name__ if self.auth else None})"
		)

	@property
	def call_id(self) -> str:
		"""This call's id, ``<run id>/<step key>`` (empty outside a run), the same on replay."""
		run = self.run
		return f"{run.run_id}/{run.call}" if run is not None else ""

	@property
	def idempotency_key(self) -> str:
		"""This call's idempotency key: a UUID derived from `call_id` (a fresh one outside a run).

		A durable run that replays the call after a crash gives the same key (docs/guides/durable.md).
		"""
		call_id = self.call_id
		return str(uuid.uuid5(IDEMPOTENCY_NAMESPACE, call_id) if call_id else uuid.uuid4())


@runtime_checkable
class Tool(Protocol):
	"""Something an agent can call: a handle, a description, schemas, scopes and ``execute``."""

	handle: str
	"""The tool's name inside its integration (``getForecast``)."""
	description: str
	"""What the tool does, written for a model."""
	input_schema: dict[str, Any]
	"""JSON Schema of the input object."""
	output_schema: dict[str, Any] | None
	"""JSON Schema of the output, a guide for the model (not enforced)."""
	scopes: Sequence[str]
	"""The integration scopes an agent needs to see and call this tool.

	A tool may also have ``labels`` (`Label`s, `openmolt_core.taint`): without them it is
	treated as ``untrusted`` and ``outbound``; ``labels = ()`` declares none.
	"""

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Run the tool.

		Args:
			input: The input, already validated against ``input_schema``.
			context: The agent, integration and credential the call runs for.

		Returns:
			A JSON-serializable result.

		Raises:
			ToolError: The tool failed in a way the model should hear about.
		"""
		...


@runtime_checkable
class NestedRunTool(Tool, Protocol):
	"""A tool whose calls run an agent, nested in the calling run: all the kernel knows of sub-agents.

	Its ``execute`` runs ``agent.run(..., parent=context.run)``; a true ``spends_budget`` makes
	calls made at once share the calling run's cost budget (`openmolt_core.subagents.AgentTool`).
	"""

	agent: Any
	"""The agent (an `openmolt_core.agent.Agent`) each call runs."""


Label = Literal["private", "untrusted", "outbound"]
"""What a tool does with data (the taint policy reads it: `openmolt_core.taint`)."""

LABELS: frozenset[str] = frozenset(get_args(Label))
"""Every label."""

UNKNOWN_LABELS: tuple[Label, ...] = ("untrusted", "outbound")
"""The labels of a tool that declares none, under the default policy (fail closed)."""

UNKNOWN: frozenset[str] = frozenset(UNKNOWN_LABELS)
"""`UNKNOWN_LABELS` as a set: what a tool record holds until a policy resolves its labels."""

_NO_LABELS: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class LabelledResult:
	"""A tool's result that carries labels of its own, beyond the tool's (this call only).

	The model reads ``value``; the labels only add to the tool's (docs/guides/safety.md).

	Args:
		value: The result itself.
		labels: Labels this result carries (`LABELS`; an unknown one is refused).
	"""

	value: Any
	labels: tuple[Label, ...]

	def __post_init__(self) -> None:
		object.__setattr__(self, "labels", check_labels(self.labels, "LabelledResult: labels"))


def check_labels(labels: Iterable[str], where: str) -> tuple[Label, ...]:
	"""Read a list of labels, refusing unknown ones.

	Args:
		labels: The labels as given.
		where: The option's name, for the message.

	Raises:
		ConfigurationError: A label is not one of `LABELS`.
	"""
	if isinstance(labels, str):
		labels = [labels]
	out: list[Label] = []
	for label in labels:
		if label not in LABELS:
			from openmolt_core.errors import ConfigurationError

			raise ConfigurationError(
				f"{where}: {label!r} is not a label; use {', '.join(sorted(LABELS))}"
			)
		out.append(label)  # type: ignore[arg-type]  # checked against LABELS just above
	return tuple(out)


def declared_labels(bound: Any) -> frozenset[str] | None:
	"""The labels a bound tool declares: its own ``labels`` and its integration's table.

	The one place a tool's labels come from; a key of the table is a tool name or a shell-style
	pattern (``send*``), and ``()`` declares none.

	Args:
		bound: The tool as an agent sees it (`openmolt_core._binding.BoundTool`: its ``tool``,
			``integration`` and ``handle``).

	Returns:
		The declared labels, or None when the tool declares nothing.

	Raises:
		ConfigurationError: The tool's own ``labels`` hold something that is not a label.
	"""
	own = getattr(bound.tool, "labels", None)
	table: Mapping[str, Sequence[str]] = getattr(bound.integration, "labels", None) or {}
	if own is None and not table:  # most function tools: nothing declared
		return None
	declared = own is not None
	out: set[str] = set()
	if own:
		out.update(check_labels(own, f"tool {bound.handle!r}: labels"))
	if table:
		name = bound.tool.handle
		exact = table.get(name)
		if exact is not None:
			declared = True
			out.update(exact)
		for pattern in _patterns(table):
			if pattern != name and fnmatchcase(name, pattern):
				declared = True
				out.update(table[pattern])
	if not declared:
		return None
	return frozenset(out & LABELS) if out else _NO_LABELS


_WILDCARD = LazyPattern(r"[*?\[]")
_PATTERNS: dict[int, tuple[Mapping[str, Sequence[str]], int, tuple[str, ...]]] = {}


def _patterns(table: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
	"""The keys of a labels table that are shell-style patterns, found once per table."""
	entry = _PATTERNS.get(id(table))
	if entry is None or entry[0] is not table or entry[1] != len(table):
		if len(_PATTERNS) > 1024:  # tables made on the fly (tests): keep the cache small
			_PATTERNS.clear()
		entry = (table, len(table), tuple(k for k in table if _WILDCARD().search(k)))
		_PATTERNS[id(table)] = entry
	return entry[2]


# Names that live above the contract, under their old names here (loaded on first use; not in
# __all__: a star import does not load them).
_HOMES: Mapping[str, str] = {
	"ExecuteFn": "openmolt_core.functiontools",
	"FunctionTool": "openmolt_core.functiontools",
	"tool": "openmolt_core.functiontools",
	"schema_of": "openmolt_core.integrations._httptool",
	"guard_agents": "openmolt_core.taint",
	"nested_agents": "openmolt_core.taint",
	"nested_in_doubt": "openmolt_core.taint",
	"nested_labels": "openmolt_core.taint",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
