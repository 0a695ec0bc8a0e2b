"""Untrusted content and exfiltration: tool labels, the taint policy and the lethal trifecta.

Each tool may carry labels that say what it does with data:

| label | the tool |
| --- | --- |
| ``private`` | reads the user's private data: an inbox, files, customers, payments |
| ``untrusted`` | returns content that someone other than the user wrote: an email body, a web page, an issue, a chat message |
| ``outbound`` | can send data out of the user's hands: an email, a chat post, a public post, any HTTP request, a payment, a share link |

Integrations declare them in one table (``Integration(labels={"getMessage": ["private",
"untrusted"], "send*": ["outbound"]})``, see docs/integration-authoring.md); Python tools with
``@tool(labels=[...])`` or ``FunctionTool(labels=...)``; any `openmolt_core.tools.Tool` may have a
``labels`` attribute; an MCP server's config a ``labels`` table; an OpenAPI import labels each
operation by its method and input (one that sends model input, a GET's query too, is
``outbound``). A tool that runs an agent (``agent.as_tool()``, or any tool with an
``agent``) carries the labels of that agent's tools too. The policy's
rules add labels (``untrusted=["mcp.fetch"]``) or take them away (``outbound=["!slack.addReaction"]``).

Labels are resolved in one place, `declared_labels`, for every kind of tool, and fail closed: a
tool that declares nothing (no ``labels``, or None, and no key of its integration's table) counts
as ``untrusted`` and ``outbound`` (`TaintPolicy.unknown_labels`). To declare that a tool does none
of the three things, give it ``labels=[]`` (or a table entry with ``[]``).

A run is *tainted* once a call of an ``untrusted`` tool has run and its result reached the model:
from then on the model may be following instructions that someone else wrote. `RunState.taint
<openmolt_core.result.RunState>` records those calls, the result entry the model reads carries
``"untrusted": true``, and a ``taint`` event is emitted the first time. While a run is tainted,
calls of ``outbound`` tools go through the policy (`TaintPolicy.on_outbound`): they wait for an
approval (the approvals gate: `openmolt_core.approvals`), are refused (the model reads why), or
run. By default the policy applies to agents that hold the *lethal trifecta*: private data,
untrusted content and an outbound channel together (`TaintPolicy.only_trifecta`).

Such an agent is also reported when it is created: a `LethalTrifectaWarning` (Python's
``warnings``) and a warning on the ``openmolt`` logger name its tools.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, get_args

from openmolt_core._support.masking import warn
from openmolt_core.errors import ConfigurationError
from openmolt_core.tools import (
	LABELS,
	UNKNOWN,
	UNKNOWN_LABELS,
	InDoubt,
	Label,
	check_labels,
	declared_labels,
	strictest,
)

if TYPE_CHECKING:
	from openmolt_core._binding import BoundTool
	from openmolt_core.policy import ApprovalPolicy
	from openmolt_core.result import RunState

__all__ = [
	"LABELS",
	"LISTING",
	"MAX_TAINT_RECORDS",
	"UNKNOWN_LABELS",
	"Label",
	"LethalTrifectaWarning",
	"TaintPolicy",
	"check_labels",
	"declared_labels",
	"gated",
	"guard_agents",
	"nested_agents",
	"nested_in_doubt",
	"nested_labels",
	"snake_options",
	"trifecta",
	"trusts_descriptions",
	"unlabelled",
	"untrusted_input",
	"untrusted_listings",
	"warn_trifecta",
]

log: logging.Logger = logging.getLogger("openmolt")

MAX_TAINT_RECORDS = 20
"""``RunState.taint`` keeps the first this many calls that tainted the run."""

OnOutbound = Literal["approve", "refuse", "allow"]


class LethalTrifectaWarning(UserWarning):
	"""An agent combines private data, untrusted content and an outbound channel.

	Content someone else wrote can then ask the model to send the user's data out. Make such
	calls wait for approval (the default `TaintPolicy`), refuse them (``on_outbound="refuse"``),
	or split the work between agents that do not hold all three. Silence it for one agent with
	``TaintPolicy(warn=False)``.
	"""


def unlabelled(tools: Iterable[BoundTool]) -> list[str]:
	"""The handles of the visible tools that declare no labels (`declared_labels` is None).

	Args:
		tools: The agent's bound tools.
	"""
	return [t.handle for t in tools if t.allowed and declared_labels(t) is None]


_NO_LABELS: frozenset[str] = frozenset()


def nested_labels(tool: Any) -> frozenset[str]:
	"""The labels of the agent a tool runs (a `NestedRunTool`'s ``agent``); empty for other tools.

	What a run of that agent may do with data, from every tool that can run inside it: the
	labels of the agent's visible tools (each resolved by that agent's policy, so one that
	declares none counts as ``untrusted`` and ``outbound``; its built-in tools too),
	`UNKNOWN_LABELS` when some of its tools are listed at run time (what they do is not known in
	advance) or when the agent does not say what its tools do (no ``labels`` table: an agent of
	another framework behind `openmolt_core.subagents.SubAgent`), and the same of each agent
	nested in its runs (`nested_agents`: a guardrail agent judging the run's words may read or
	send with tools of its own). The policy adds them to whatever the tool itself declares
	(`TaintPolicy.labels_for`).

	Args:
		tool: A tool.
	"""
	agent = getattr(tool, "agent", None)
	if agent is None:  # most tools: no agent to ask (and no ABC check of a None)
		return _NO_LABELS
	return _agent_labels(agent, set())


def nested_in_doubt(agent: Any) -> InDoubt:
	"""The in-doubt policy of a run of ``agent`` nested in one journaled step of a durable run.

	The nested run (an agent tool's, a guardrail agent's, one a tool's code starts with
	``parent=context.run``) is not journaled step by step: found under way after a crash, it
	would start again from its first step, its model asked again and its tool calls made again.
	So it is as strict as its strictest tool (``fail`` over ``ask`` over ``retry``), and ``ask``
	at least when it may send data out (``outbound`` in its tools' labels, or tools listed at run
	time). The agents nested in its runs (`nested_agents`) run again with it, so their policies
	count too. The safety capability gives it to the loop
	(`openmolt_core.hooks.Capability.nested_in_doubt`), which weighs no agent's labels.
	(`openmolt_core.subagents` re-exports it.)

	Args:
		agent: The agent the step runs (its ``in_doubt``: its tools' policies by handle).
	"""
	return _nested_in_doubt(agent, set())


def _nested_in_doubt(agent: Any, seen: set[int]) -> InDoubt:
	seen.add(id(agent))
	policies: list[InDoubt] = list(getattr(agent, "in_doubt", {}).values())
	if "outbound" in _agent_labels(agent, set()):
		policies.append("ask")
	for judge in nested_agents(agent):  # the agents nested in it run again with it
		if id(judge) not in seen:
			policies.append(_nested_in_doubt(judge, seen))
	return strictest(policies)


def _agent_labels(agent: Any, seen: set[int]) -> frozenset[str]:
	"""`nested_labels` of one agent; ``seen``: the agents counted already (a loop of nested agents)."""
	seen.add(id(agent))
	labels = getattr(agent, "labels", None)
	if not isinstance(labels, Mapping):  # an agent that does not say what its tools do
		return UNKNOWN  # (another framework's, wrapped): what it reads and sends is unknown
	out = {label for found in labels.values() for label in found}
	builtins = getattr(agent, "builtin_labels", None)  # an Agent's (a SubAgent need not have it)
	if isinstance(builtins, Mapping):
		out.update(label for found in builtins.values() for label in found)
	if getattr(agent, "lists_tools_at_run_time", False):
		out.update(UNKNOWN_LABELS)
	for judge in nested_agents(agent):
		if id(judge) not in seen and not LABELS <= out:
			out.update(_agent_labels(judge, seen))
	return frozenset(out & LABELS)


def nested_agents(agent: Any) -> list[Any]:
	"""The agents a run of ``agent`` runs nested in it, besides its tools' (each once).

	Its capabilities say which (`openmolt_core.hooks.Capability.nested_agents`: the safety
	capability's guardrail agents): each runs inside the run that asks it, with tools of its
	own, so what those tools do counts as the run's (`nested_labels`), and so does their
	in-doubt policy (`nested_in_doubt`).

	Args:
		agent: An agent (its ``capabilities``).
	"""
	out: list[Any] = []
	for cap in getattr(agent, "capabilities", ()):
		found = getattr(cap, "nested_agents", None)
		for judge in found() if callable(found) else ():
			if all(judge is not o for o in out):
				out.append(judge)
	return out


guard_agents = nested_agents
"""`nested_agents` under its old name (the agents a run's guardrails run)."""


def _rules(value: Any, where: str) -> tuple[str, ...]:
	if value is None or (isinstance(value, tuple | list) and not value):
		return ()  # the common case: the rules module (`openmolt_core.policy`) is not loaded
	if isinstance(value, str):
		value = [value]
	if not isinstance(value, Sequence):
		raise ConfigurationError(f"{where} must be a rule or a list of rules")
	from openmolt_core.policy import ApprovalPolicy

	return ApprovalPolicy.of(list(value), where=where).rules


_SWITCHES = ("only_trifecta", "warn")
"""The fields of `TaintPolicy` that are True or False."""


def snake_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
	"""A dict's keys in snake_case, for an option class that is no `Options` model (a dataclass).

	The same rule as `openmolt_core.options.Options`: ``onOutbound`` and ``on_outbound`` name one
	option; giving both with different values is refused. `TaintPolicy.of` reads its fields so
	(`openmolt_core.options` re-exports it under its old name).

	Args:
		options: The options, in either spelling.
		where: Where they were given, for the message (``create_agent: taint_policy``).

	Raises:
		ConfigurationError: One key spelled both ways with different values.
	"""
	from pydantic.alias_generators import to_snake

	out: dict[str, Any] = {}
	given: dict[str, str] = {}
	for key, value in options.items():
		name = to_snake(str(key))
		if name in out and out[name] != value:
			raise ConfigurationError(
				f"{where}: give {given[name]!r} or {key!r}, not both (they are one option)"
			)
		out[name] = value
		given[name] = str(key)
	return out


@dataclass(frozen=True, slots=True)
class TaintPolicy:
	"""What a tainted run may still send out, and which tools count as what.

	Args:
		on_outbound: What happens to a call of an ``outbound`` tool once the run is tainted:
			``approve`` (it waits for a decision, like a call a ``requires_approval`` rule
			selects: the approval handler decides, or the run parks with status
			``approval_required``), ``refuse`` (it does not run; the model reads why) or
			``allow`` (it runs; the taint is still recorded).
		only_trifecta: Apply ``on_outbound`` only in agents that also read private data (they
			hold the lethal trifecta); False applies it to every agent (a run whose input holds
			secrets, say).
		untrusted: Rules (the syntax of `openmolt_core.policy`: ``"mcp.fetch"``,
			``"local.*"``, ``"!httpRequest.request"``) for tools whose results taint a run,
			added to the labels; a ``!`` rule takes the label away.
		private: Rules for tools that read private data, likewise.
		outbound: Rules for tools that can send data out, likewise.
		warn: Warn when an agent holding the trifecta is created (`LethalTrifectaWarning`).
		unknown_labels: The labels of a tool that declares none (`declared_labels`): by
			default ``untrusted`` and ``outbound``: a tool nobody described taints the run and
			is gated as an outbound call where the agent holds private data (fail closed). Not
			``private`` by default: every agent of two plain functions would then hold the
			trifecta and ask for approval at its second call; an agent whose undeclared tool
			reads private data gets ``unknown_labels=("private", "untrusted", "outbound")``, or
			better, that tool's ``labels``. Declare a tool's labels rather than change this
			(``labels=[]`` on a tool, a ``labels`` table on an integration or an MCP server);
			``()`` trusts every undeclared tool.
	"""

	on_outbound: OnOutbound = "approve"
	only_trifecta: bool = True
	untrusted: tuple[str, ...] = ()
	private: tuple[str, ...] = ()
	outbound: tuple[str, ...] = ()
	warn: bool = True
	unknown_labels: tuple[str, ...] = UNKNOWN_LABELS
	_active: tuple[tuple[str, ApprovalPolicy, ApprovalPolicy], ...] = field(
		init=False, repr=False, compare=False
	)  # the labels whose rules add or take away something
	_unknown: frozenset[str] = field(init=False, repr=False, compare=False)

	def __post_init__(self) -> None:
		if self.on_outbound not in get_args(OnOutbound):
			raise ConfigurationError(
				f"taint_policy: on_outbound must be 'approve', 'refuse' or 'allow', got "
				f"{self.on_outbound!r}"
			)
		for switch in _SWITCHES:  # "no" is truthy: it would be taken as True
			if not isinstance(getattr(self, switch), bool):
				raise ConfigurationError(
					f"taint_policy: {switch} must be True or False, got {getattr(self, switch)!r}"
				)
		object.__setattr__(
			self,
			"unknown_labels",
			check_labels(self.unknown_labels, "taint_policy: unknown_labels"),
		)
		active = []
		for label in ("untrusted", "private", "outbound"):
			rules = _rules(getattr(self, label), f"taint_policy: {label}")
			object.__setattr__(self, label, rules)
			if rules:
				from openmolt_core.policy import ApprovalPolicy

				add = ApprovalPolicy(tuple(r for r in rules if not r.startswith("!")))
				remove = ApprovalPolicy(tuple(r[1:] for r in rules if r.startswith("!")))
				active.append((label, add, remove))
		object.__setattr__(self, "_active", tuple(active))
		object.__setattr__(self, "_unknown", frozenset(self.unknown_labels))

	@classmethod
	def of(cls, value: Any, *, where: str = "taint_policy") -> TaintPolicy:
		"""Read a ``taint_policy`` option.

		Args:
			value: A `TaintPolicy`; its fields as a dict (camelCase accepted); ``"approve"``,
				``"refuse"`` or ``"allow"`` (``on_outbound``); None (the default policy); False
				(``allow``).
			where: The option's name, for messages.

		Raises:
			ConfigurationError: An unknown key, action, label rule or malformed rule.
		"""
		if isinstance(value, TaintPolicy):
			return value
		if isinstance(value, str) and value not in get_args(OnOutbound):
			raise ConfigurationError(
				f'{where}: "approve", "refuse" or "allow" (or an object of its fields), not "{value}"'
			)
		if value is None or isinstance(value, bool | str):
			key = (type(value), value)  # the policies every agent of an instance shares
			shared = _SHARED.get(key)
			if shared is None:
				if isinstance(value, str):
					on_outbound = value
				else:
					on_outbound = "allow" if value is False else "approve"
				shared = _SHARED[key] = cls(on_outbound=on_outbound)  # type: ignore[arg-type]  # checked in __post_init__
			return shared
		if not isinstance(value, Mapping):
			raise ConfigurationError(
				f"{where} must be a TaintPolicy, a dict of its fields, or 'approve', 'refuse' "
				f"or 'allow'; got {type(value).__name__}"
			)
		names = {f.name for f in fields(cls) if not f.name.startswith("_")}
		from pydantic.alias_generators import to_snake

		options = snake_options(value, where)
		unknown = sorted(k for k in options if k not in names)
		if unknown:
			raise ConfigurationError(
				f"{where}: unknown key(s) {unknown}; allowed: {', '.join(sorted(names))}"
			)
		for key, given in value.items():  # named as given: "warn": "no" in an agent file
			name = to_snake(str(key))
			if name in _SWITCHES and not isinstance(given, bool):
				wanted = "true or false"
			elif name == "on_outbound" and given not in get_args(OnOutbound):
				wanted = '"approve", "refuse" or "allow"'
			else:
				continue
			import json

			shown = json.dumps(given, ensure_ascii=False, default=repr)
			raise ConfigurationError(f"{where}: {key}: {wanted}, not {shown}")
		return cls(**options)

	def labels_for(
		self, bound: BoundTool, *, described: frozenset[str] | None = None
	) -> frozenset[str]:
		"""A tool's labels under this policy: the declared ones, with the rules applied.

		A tool that runs an agent (`openmolt_core.tools.NestedRunTool`) also gets that agent's
		labels (`openmolt_core.taint.nested_labels`), whatever it declares itself.

		Args:
			bound: The tool as an agent sees it.
			described: The labels a capability set on its record (`Capability.describe_tools`),
				which stand for the declared ones; None: what the tool declares.
		"""
		found = declared_labels(bound) if described is None else described
		declared = self._unknown if found is None else found
		nested = nested_labels(bound.tool)  # a tool that runs an agent: what the agent does
		if nested - declared:
			declared = declared | nested
		if not self._active:
			return declared
		out = set(declared)
		tool = bound.tool
		for label, add, remove in self._active:
			if add and add.rule_for(bound.handle, tool) is not None:
				out.add(label)
			if remove and remove.rule_for(bound.handle, tool) is not None:
				out.discard(label)
		return frozenset(out)


_SHARED: dict[tuple[type, Any], TaintPolicy] = {}
"""The policies of the shorthand options (None, True, False, an action), parsed once: frozen."""


def gated(tools: Iterable[BoundTool], policy: TaintPolicy) -> bool:
	"""Whether ``on_outbound`` applies to an agent with these tools once its run is tainted.

	With ``only_trifecta``, it applies when the agent reads private data and can send data out:
	a tainted run has the third part, untrusted content, whether it came from one of its tools
	or with the input (`untrusted_input`).

	Args:
		tools: The agent's bound tools (their ``labels`` set).
		policy: Its policy.
	"""
	if policy.on_outbound == "allow":
		return False
	if not policy.only_trifecta:
		return True
	held = {label for t in tools if t.allowed for label in t.labels}
	return {"private", "outbound"} <= held


def untrusted_input(source: str) -> RunState:
	"""A fresh run state that starts tainted: for a run whose input someone else wrote.

	A webhook payload, an inbound chat message or an email handed over as the input is outside
	content like a tool's result: ``agent.run(payload, history=untrusted_input("webhook"))``
	makes the taint policy apply from the first step.

	Args:
		source: Where the input came from (``"webhook:whatsapp"``), recorded in ``state.taint``.
	"""
	from openmolt_core.result import RunState

	return RunState(taint=[{"call": "input", "tool": source, "step": 0}])


_SORTED_LABELS = tuple(sorted(LABELS))


LISTING = "the tool list of "
"""How `trifecta` names an untrusted tool list among the untrusted content (then its id), as the
run's taint record does (``{"call": "tools:<id>", "tool": "the tool list of <id>"}``)."""


def trusts_descriptions(source: object) -> bool:
	"""Whether a source says the names, descriptions and schemas it lists are trusted.

	Read from its optional ``trust_descriptions`` attribute, True only when its user said so (an
	MCP server's ``trust_descriptions`` option); a source without it is not trusted. A run of an
	agent that may call a tool of a source not trusted is tainted from its first model call
	(`openmolt_core.capabilities.sources.Sources.on_run_start`), and the source's tool list is
	the untrusted part of the lethal trifecta (`trifecta`). (`openmolt_core.sources` and
	`openmolt_core.capabilities.sources` re-export it.)

	Args:
		source: The tool source.
	"""
	return getattr(source, "trust_descriptions", False) is True


def untrusted_listings(tools: Iterable[BoundTool]) -> list[str]:
	"""The integrations whose tool list is untrusted content the agent reads, by id, in order.

	A tool source that does not trust what it lists (`trusts_descriptions`) lists names,
	descriptions and schemas someone else wrote, which the model reads before any call: a run
	of an agent that may call one of its tools is tainted from its first model call
	(`openmolt_core.capabilities.sources.Sources.on_run_start`), whatever its tools' labels.

	Args:
		tools: The agent's bound tools.
	"""
	found: list[str] = []
	for t in tools:
		source = getattr(t.integration, "source", None) if t.allowed else None
		if source is not None and not trusts_descriptions(source):
			iid = t.handle.partition(".")[0]
			if iid not in found:
				found.append(iid)
	return found


def trifecta(tools: Iterable[BoundTool]) -> dict[str, list[str]] | None:
	"""The agent's visible tools per label, when they hold all three labels (else None).

	An untrusted tool list (`untrusted_listings`) is untrusted content as a tool labelled
	``untrusted`` is: it is named under ``untrusted`` as ``the tool list of <integration>``,
	since it taints the run as such a tool's result does, from the first step.

	Args:
		tools: The agent's bound tools (their ``labels`` set).
	"""
	tools = list(tools)
	listings = untrusted_listings(tools)
	labelled = [t for t in tools if t.labels]
	if not labelled and not listings:  # most agents: nothing labelled, no trifecta
		return None
	found: dict[str, list[str]] = {label: [] for label in _SORTED_LABELS}
	for t in labelled:
		if t.allowed:
			for label in t.labels:
				found[label].append(t.handle)
	found["untrusted"].extend(f"{LISTING}{iid}" for iid in listings)
	return found if all(found.values()) else None


def warn_trifecta(
	agent: str,
	held: Mapping[str, Sequence[str]],
	policy: TaintPolicy,
	unknown: Sequence[str] = (),
) -> None:
	"""Report an agent that holds the trifecta (a `LethalTrifectaWarning` and a log line).

	Args:
		agent: The agent's name.
		held: Its tools per label (`trifecta`).
		policy: Its policy (the message says what it does about it).
		unknown: The tools that declare no labels (`unlabelled`): the message names them and
			says how to declare them.
	"""

	def few(handles: Sequence[str]) -> str:
		more = f" and {len(handles) - 3} more" if len(handles) > 3 else ""
		return ", ".join(handles[:3]) + more

	effect = {
		"approve": "its outbound calls after untrusted content wait for approval",
		"refuse": "its outbound calls after untrusted content are refused",
		"allow": "nothing stops its outbound calls after untrusted content "
		"(taint_policy on_outbound='allow')",
	}[policy.on_outbound]
	from openmolt_core._support.docs import docs_url  # only a message that names a page

	message = (
		f"agent {agent!r} combines private data ({few(held['private'])}), untrusted content "
		f"({few(held['untrusted'])}) and an outbound channel ({few(held['outbound'])}): content "
		f"someone else wrote could make it send private data out; {effect}. See "
		f"{docs_url('guides/safety.md')}; TaintPolicy(warn=False) silences this"
	)
	listed = [h.removeprefix(LISTING) for h in held["untrusted"] if h.startswith(LISTING)]
	if listed:
		message += (
			f". The tool list of {few(listed)} is text its server wrote, which the model reads "
			"before any call: each run is tainted from its first step, whatever its tools' "
			"labels; a server you trust says so (an MCP server's trust_descriptions=True)"
		)
	if unknown and policy.unknown_labels:
		message += (
			f". {few(list(unknown))} declare(s) no labels, so they count as "
			f"{' and '.join(policy.unknown_labels)}: declare what each does with data "
			"(@tool(labels=[...]), FunctionTool(labels=...), a tool's labels attribute, "
			"Integration(labels={...}), an MCP server's 'labels'; labels=[] for none)"
		)
	log.warning("%s", message)
	warn(message, LethalTrifectaWarning, stacklevel=6, at_caller=True)
