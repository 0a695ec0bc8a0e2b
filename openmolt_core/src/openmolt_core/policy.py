"""Approval policies: which tool calls wait for a decision before they run.

A policy (``requires_approval``: on `openmolt_core.openmolt.OpenMolt` for every agent, on
``create_agent`` for one) is a list of rules (decisions themselves: `openmolt_core.approvals`):

| rule | selects |
| --- | --- |
| ``"*"`` | every tool |
| ``"stripe"`` | every tool of the integration ``stripe`` (``local`` for ``create_agent(tools=...)``) |
| ``"stripe.createRefund"``, ``"github.delete*"`` | tools by handle (shell-style patterns, in both parts) |
| ``"stripe:refunds"`` | the tools that need the scope ``refunds`` |
| ``"stripe:writes"``, ``"*:writes"`` | the tools that can change something (see `writes`) |
| ``"!stripe.createCustomer"`` | exempts what it selects, whatever the other rules say |
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from openmolt_core._support.suggest import suggestion
from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core._binding import ToolDefinition

__all__ = ["ApprovalPolicy", "is_read_method", "is_read_scope", "writes"]

_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_WRITE_METHODS = frozenset({"DELETE", "PUT", "PATCH"})
_READ_SCOPE = re.compile(r"read|.*Read|read[._:-].+|.+[._:-]read")


def is_read_scope(name: str) -> bool:
	"""Whether a scope's name says it only reads.

	``read``, names ending in ``Read`` (``shopRead``) and names with a ``read`` part (``read:user``,
	``read_orders``, ``guilds.members.read``) are read scopes, unless they also say ``write``
	(``read_write``); every other scope may write.

	Args:
		name: The scope's name.
	"""
	return _READ_SCOPE.fullmatch(name) is not None and "write" not in name.lower()


def is_read_method(method: str) -> bool:
	"""Whether an HTTP method only reads: ``GET``, ``HEAD`` and ``OPTIONS``.

	They are RFC 9110's safe methods, less ``TRACE`` (its reply echoes the request).

	Args:
		method: The method, in capitals.
	"""
	return method in _READ_METHODS


def writes(tool: ToolDefinition) -> bool:
	"""Whether a tool can change something, for the ``writes`` rules.

	A tool only reads when it is an HTTP tool with method ``GET``, ``HEAD`` or ``OPTIONS``
	(`is_read_method`), or when every scope it needs is a read scope (`is_read_scope`; a trusted
	MCP server's read-only tools are in ``read``). An HTTP tool with method ``DELETE``, ``PUT`` or
	``PATCH`` writes whatever its scopes are called: the method is what the request does, a
	scope's name is someone's word. An imported OpenAPI operation with any other method (a
	``POST``) whose document names only read scopes, or none, also needs the scope ``write``,
	which the importer adds (`openmolt_core.integrations.openapi`); a built-in ``POST`` search in ``read``
	only reads. Every other tool writes, Python tools without scopes included: exempt the ones
	that only read with a ``!`` rule.

	Args:
		tool: The tool (declarative HTTP tool or a tool with ``execute``).
	"""
	method = getattr(tool, "method", None)
	if isinstance(method, str) and is_read_method(method):
		return False
	if method in _WRITE_METHODS:
		return True
	scopes = list(tool.scopes)
	return not scopes or not all(is_read_scope(s) for s in scopes)


class _Rule(NamedTuple):
	text: str
	exempt: bool
	integration: str  # "*" for any
	kind: Literal["all", "tool", "scope", "writes"]
	value: str


_RULE = re.compile(r"(?P<exempt>!)?(?P<integration>[^.:!\s]+)(?:(?P<sep>[.:])(?P<value>\S+))?")


def _parse_rule(text: str, where: str) -> _Rule:
	match = _RULE.fullmatch(text) if isinstance(text, str) else None
	if match is None:
		raise ConfigurationError(
			f"{where}: {text!r} is not a rule; write '*', an integration ('stripe'), a tool "
			"('stripe.createRefund', patterns allowed), a scope ('stripe:refunds'), "
			"'stripe:writes', or any of these after '!' to exempt it"
		)
	sep, value = match["sep"], match["value"] or ""
	kind: Literal["all", "tool", "scope", "writes"]
	if sep is None:
		kind = "all"
	elif sep == ".":
		kind = "tool"
	else:
		kind = "writes" if value == "writes" else "scope"
	return _Rule(text, bool(match["exempt"]), match["integration"], kind, value)


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
	"""Which tool calls wait for a decision: a list of rules (see the module's table).

	Args:
		rules: The rules, as written. Exemptions (``!...``) win over every other rule.
	"""

	rules: tuple[str, ...] = ()
	_parsed: tuple[_Rule, ...] = field(init=False, repr=False, compare=False)

	def __post_init__(self) -> None:
		parsed = tuple(_parse_rule(r, f"requires_approval[{i}]") for i, r in enumerate(self.rules))
		object.__setattr__(self, "_parsed", parsed)

	@classmethod
	def of(cls, value: Any, *, where: str) -> ApprovalPolicy:
		"""Read a ``requires_approval`` option: True (every tool), a rule, a list of rules.

		Args:
			value: The option's value (None and False: no rule).
			where: The option's name, for error messages.

		Raises:
			ConfigurationError: A rule is malformed; the message names it and shows the forms.
		"""
		if isinstance(value, ApprovalPolicy):
			return value
		if value is None or value is False:
			return cls()
		if value is True:
			value = ["*"]
		elif isinstance(value, str):
			value = [value]
		elif not isinstance(value, Sequence):
			raise ConfigurationError(
				f"{where} must be True, a rule such as 'stripe:writes', or a list of rules; "
				f"got {type(value).__name__}"
			)
		parsed = [_parse_rule(r, f"{where}[{i}]") for i, r in enumerate(value)]
		return cls(tuple(r.text for r in parsed))

	def __add__(self, other: ApprovalPolicy) -> ApprovalPolicy:
		"""Both policies' rules (an instance's defaults, then an agent's)."""
		return ApprovalPolicy(self.rules + other.rules)

	def __bool__(self) -> bool:
		return bool(self._parsed)

	def rule_for(self, handle: str, tool: ToolDefinition) -> str | None:
		"""The rule that makes a call of this tool wait for a decision, or None.

		Args:
			handle: The tool's full handle (``integration.tool``).
			tool: The tool.
		"""
		if not self._parsed:
			return None
		integration, _, name = handle.partition(".")
		found = None
		for rule in self._parsed:
			if _matches(rule, integration, name, tool):
				if rule.exempt:
					return None
				found = found or rule.text
		return found

	def check(
		self,
		integrations: Mapping[str, tuple[Iterable[str], Iterable[str] | None]],
		*,
		where: str,
		strict: bool,
		elsewhere: Callable[[str], bool] | None = None,
	) -> None:
		"""Refuse rules that name a scope or a tool an agent's integration does not have.

		Args:
			integrations: For each integration the agent uses, its scopes and its tool names
				(None when the tools are only known at run time, from an MCP server).
			where: The option's name, for error messages.
			strict: Also refuse rules naming an integration the agent does not use (an agent's
				own rules; an instance's defaults may name integrations other agents use).
			elsewhere: Whether an integration of that id exists for other agents (registered
				or installed): an instance's bare word that is also one of this agent's tool
				names then means that integration, as written. Asked only then.

		Raises:
			ConfigurationError: The message names the rule and what exists.
		"""
		for index, rule in enumerate(self._parsed):
			label = f"{where}[{index}] {rule.text!r}"
			if rule.integration == "*":
				continue
			known = _integration(rule.integration, integrations)
			if known is None:
				# `refund` for `local.refund`: a bare word reads as an integration, so a tool
				# named alone selects nothing. Refused even among an instance's rules (which may
				# name other agents' integrations): a safety rule that silently selects nothing
				# leaves the tool it meant unguarded. `refund.*` names the integration; so does
				# an instance's bare word that is an integration's id (`github`, other agents').
				owner = rule.kind == "all" and next(
					(i for i, (_, t) in integrations.items() if t and rule.integration in t), None
				)
				if owner and not (
					not strict and elsewhere is not None and elsewhere(rule.integration)
				):
					raise ConfigurationError(
						f"{label}: {rule.integration!r} is a tool: did you mean "
						f"'{owner}.{rule.integration}'? (a bare word names an integration: "
						f"'{rule.integration}.*' for one this agent does not use)"
					)
				if strict:
					hint = suggestion(rule.integration, integrations, noun="integrations")
					raise ConfigurationError(
						f"{label}: this agent uses no integration {rule.integration!r}; {hint}"
					)
				continue
			scopes, tools = known
			if rule.kind == "scope" and rule.value not in set(scopes):
				hint = suggestion(rule.value, scopes, noun="scopes")
				raise ConfigurationError(
					f"{label}: {rule.integration} defines no scope {rule.value!r}; {hint} (or "
					f"'{rule.integration}:writes' for every tool that writes)"
				)
			if rule.kind == "tool" and tools is not None:
				names = list(tools)
				if not any(fnmatch.fnmatchcase(n, rule.value) for n in names):
					hint = suggestion(rule.value, names, noun="tools")
					raise ConfigurationError(
						f"{label}: no tool of {rule.integration} matches {rule.value!r}; {hint}"
					)


def _integration(
	pattern: str, integrations: Mapping[str, tuple[Iterable[str], Iterable[str] | None]]
) -> tuple[Iterable[str], Iterable[str] | None] | None:
	"""The scopes and tools of the integrations a rule's pattern selects, or None for none."""
	if pattern in integrations:
		return integrations[pattern]
	chosen = [known for name, known in integrations.items() if fnmatch.fnmatchcase(name, pattern)]
	if not chosen:
		return None
	scopes = [s for known in chosen for s in known[0]]
	lists = [known[1] for known in chosen]
	tools = None if any(t is None for t in lists) else [n for t in lists if t for n in t]
	return scopes, tools


def _matches(rule: _Rule, integration: str, name: str, tool: ToolDefinition) -> bool:
	# The integration part is a shell-style pattern too ("*", "git*"), as the tool part is.
	if rule.integration != integration and not fnmatch.fnmatchcase(integration, rule.integration):
		return False
	match rule.kind:
		case "all":
			return True
		case "tool":
			return fnmatch.fnmatchcase(name, rule.value)
		case "scope":
			return rule.value in tool.scopes
		case "writes":
			return writes(tool)
