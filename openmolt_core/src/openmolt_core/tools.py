"""The tool contract, the context a tool runs in, and tools made from Python functions.

A plain function is a tool: give it to ``create_agent(tools=[fn])`` or decorate it with `tool`. Its
input schema comes from its signature through pydantic (parameter types, defaults, and the
descriptions of a Google- or Sphinx-style docstring), its description from the docstring's first
paragraph, and a parameter annotated `ToolContext` receives the context instead of model input:

```python
@tool
async def add(a: int, b: int = 0) -> int:
	'''Add two integers.

Args:
		a: The first number.
		b: The second number.
	'''
	return a + b
```

Sync functions run in a worker thread, so a blocking one never stalls the event loop. The older
``FunctionTool(handle, description, function, input_schema)`` form, where ``function`` takes
``(input, context)``, works as before.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, overload, runtime_checkable

from pydantic import BaseModel

from openmolt_core._support.sync import call as _call
from openmolt_core._support.sync import cancelled

if TYPE_CHECKING:
	import httpx
	from tenacity import AsyncRetrying

	from openmolt_core.decisions import ApprovalHandler
	from openmolt_core.events import Event
	from openmolt_core.files import FileStore
	from openmolt_core.llm import Usage

__all__ = [
	"IDEMPOTENCY_NAMESPACE",
	"LABELS",
	"UNKNOWN",
	"UNKNOWN_LABELS",
	"CallingRun",
	"FunctionTool",
	"InDoubt",
	"Label",
	"NestedRunTool",
	"Retries",
	"Tool",
	"ToolContext",
	"cancelled",
	"check_in_doubt",
	"check_labels",
	"declared_labels",
	"schema_of",
	"tool",
]


@dataclass(slots=True)
class CallingRun:
	"""The run that calls a tool, as the tool sees it (``context.run``; None outside a run).

	Sub-agents (`openmolt_core.subagents`) use it to nest their runs: their events go to the
	calling agent's handlers, their usage is added to the calling run's.

	Args:
		run_id: The calling run's id.
		call: The call's step key (``tool:<step>:<index>:<handle>``).
		step: The calling run's step.
		index: The call's index in the step's reply.
		usage: Add a sub-run's usage here; the calling run adds it to its own when the call ends.
		wants: Whether a handler of the calling agent (or of its own callers) wants an event.
		emit: Passes a sub-run's event to those handlers.
		on_approval_request: An approval handler for sub-agents without one (None: the caller's).
		cost_left: What the calling run may still spend in USD (None: no cost budget); a
			sub-agent's run stops there too.
		taint: The calling run's taint records (`openmolt_core.taint`): a sub-agent called by a
			tainted run starts tainted.
		user: The end user the calling run acts for (None: the operator); a sub-agent's run
			acts for the same user (`openmolt_core.accounts`).
		caller: The calling run's context, for what the called run's capabilities take from it
			(the approvals gate: the caller's approver).
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
	taint: Sequence[Mapping[str, Any]] = ()
	user: str | None = None
	caller: Any = field(default=None, repr=False)  # the calling run: never in a log line


InDoubt = Literal["retry", "ask", "fail"]
"""What a durable run does with a tool call found started but not finished after a crash
(`openmolt_core._indoubt`)."""


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
	from openmolt_core.errors import ConfigurationError

	raise ConfigurationError(
		f"{where}: in_doubt must be 'retry', 'ask' or 'fail', got {value!r} (what happens to a "
		"call found started but not finished after a crash; see docs/guides/durable.md)"
	)


IDEMPOTENCY_NAMESPACE = uuid.UUID("6f0d2a4e-8c1b-5e3f-9a7d-0b4c6e8f1a2d")
"""The UUID5 namespace of idempotency keys (`ToolContext.idempotency_key`): never change it."""


class Retries(Protocol):
	"""How a tool's HTTP calls that may succeed later are retried (``ToolContext.retry``).

	`openmolt_core.RetryPolicy` (`openmolt_core.retry`) is the one OpenMolt gives tools: the
	instance's policy, which the HTTP engine and the built-in providers share.
	"""

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


@dataclass(slots=True)
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
		retry: The instance's retry policy for HTTP calls (a `Retries`: the instance's
			`openmolt_core.retry.RetryPolicy`; None: the default one).
	"""

	agent: str
	integration: str
	config: Mapping[str, Any] = field(default_factory=dict)
	memory: Mapping[str, str] = field(default_factory=dict)
	http: Callable[[], httpx.AsyncClient] | None = None
	auth: httpx.Auth | None = None
	redact: frozenset[str] = frozenset()
	files: FileStore | None = None
	extras: dict[str, Any] = field(default_factory=dict)
	run: CallingRun | None = None
	retry: Retries | None = None

	def __repr__(self) -> str:
		# The config holds secrets: only its keys are shown, never its values.
		return (
			f"ToolContext(agent={self.agent!r}, integration={self.integration!r}, "
			f"config keys={sorted(self.config)!r}, auth={type(self.auth).__name__ if self.auth else None})"
		)

	@property
	def call_id(self) -> str:
		"""This call's id, ``<run id>/<step key>`` (empty outside a run).

		It is the same when a durable run replays the call after a crash: HTTP idempotency keys
		derive from it (a uuid5), so a service applies a repeated call once.
		"""
		run = self.run
		return f"{run.run_id}/{run.call}" if run is not None else ""

	@property
	def idempotency_key(self) -> str:
		"""This call's idempotency key: a UUID derived from `call_id` (a fresh one outside a run).

		HTTP tools send it in their integration's idempotency header. A function tool with side
		effects passes it to the service it calls (a payment API's ``Idempotency-Key``), or keeps
		it to skip work already done: a durable run that replays the call after a crash gives the
		same key, so the effect happens once where the service honours keys.
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

	A tool may also have a ``labels`` attribute (``private``, ``untrusted``, ``outbound``: see
	`openmolt_core.taint`); it is optional, so it is not part of the protocol. A tool without
	one (or with ``labels = None``) declares nothing and is treated as ``untrusted`` and
	``outbound``; ``labels = ()`` declares that it does none of these.
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

	Its ``execute`` runs ``agent.run(..., parent=context.run)`` (`CallingRun`), so the nested
	run's id, events, usage, cost budget, approver and end user come from the calling run; a
	true ``spends_budget`` makes calls made at once share the calling run's cost budget.
	``Agent.sub_agents`` lists the ``agent`` of such tools (``create_agent`` refuses a cycle).
	`openmolt_core.subagents.AgentTool` is the one ``agent.as_tool()`` makes.
	"""

	agent: Any
	"""The agent (an `openmolt_core.agent.Agent`) each call runs."""


def schema_of(schema: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any] | None:
	"""Return a JSON Schema for a pydantic model class or a JSON Schema dict.

	Args:
		schema: A pydantic model class, a JSON Schema dict, or None.
	"""
	if schema is None:
		return None
	if isinstance(schema, dict):
		return schema
	if isinstance(schema, type) and issubclass(schema, BaseModel):
		return schema.model_json_schema()
	raise TypeError(f"expected a pydantic model class or a JSON Schema dict, got {schema!r}")


ExecuteFn = Callable[[dict[str, Any], ToolContext], Awaitable[Any] | Any]


@dataclass(slots=True)
class FunctionTool:
	"""A tool whose work is a Python function (sync or async), as the spec's ``execute`` form.

	Args:
		handle: The tool's name inside its integration.
		description: What the tool does, for the model.
		function: Called as ``function(input, context)``; may be sync or async.
		input_schema: JSON Schema of the input (a pydantic model class is converted).
		output_schema: JSON Schema of the output, if known.
		scopes: Scopes needed to see and call the tool.
		labels: What it does with data: ``private``, ``untrusted``, ``outbound`` (see
			`openmolt_core.taint`). None (the default) declares nothing: the taint policy then
			treats the tool as ``untrusted`` and ``outbound`` (fail closed); ``labels=[]``
			declares that it does none of these.
		timeout: Seconds one call may take (None: only the run's budget bounds it). A call
			still running then is an error result the model reads; a sync function is left to
			its worker thread, where `cancelled` turns True.
		in_doubt: What a durable run does with a call of it found started but not finished
			after a crash: ``retry``, ``ask`` or ``fail`` (default: ``ask`` for ``outbound``
			tools, else ``retry``; see `openmolt_core._indoubt`).
	"""

	handle: str
	description: str
	function: ExecuteFn
	input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()
	labels: Sequence[str] | None = None
	timeout: float | None = None
	in_doubt: str | None = None

	def __post_init__(self) -> None:
		if self.timeout is not None and (
			not isinstance(self.timeout, int | float)
			or isinstance(self.timeout, bool)
			or not 0 < self.timeout < float("inf")
		):
			raise TypeError(
				f"FunctionTool {self.handle!r}: timeout must be seconds > 0, got {self.timeout!r}"
			)
		schema: Any = self.input_schema
		if isinstance(schema, type) and issubclass(schema, BaseModel):
			self.input_schema = _clean(schema.model_json_schema(by_alias=True))
			self.function = _through_model(schema, self.function)
		elif not isinstance(schema, dict):
			raise TypeError(
				f"FunctionTool {self.handle!r}: input_schema must be a JSON Schema dict or a "
				f"pydantic model class, got {type(schema).__name__}"
			)
		if self.labels is not None:
			self.labels = check_labels(self.labels, f"tool {self.handle!r}: labels")
		if self.in_doubt is not None:
			check_in_doubt(self.in_doubt, f"tool {self.handle!r}")

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Call the function: awaited when async, in a worker thread when sync (`cancelled`)."""
		if self.timeout is None:
			result = await _call(self.function, input, context)
		else:
			import anyio

			with anyio.move_on_after(self.timeout) as scope:
				result = await _call(self.function, input, context)
			if scope.cancelled_caught:
				from openmolt_core.errors import ToolError

				raise ToolError(
					f"the tool did not finish within its {self.timeout:g} s timeout",
					tool=self.handle,
					retryable=True,
				)
		if isinstance(result, BaseModel):
			return result.model_dump(mode="json")
		return result

	@classmethod
	def from_function(
		cls,
		function: Callable[..., Any],
		*,
		name: str | None = None,
		description: str | None = None,
		scopes: Sequence[str] = (),
		labels: Sequence[str] | None = None,
		timeout: float | None = None,
		in_doubt: str | None = None,
	) -> FunctionTool:
		"""A tool from a plain (sync or async) function, its schema from the signature.

		Args:
			function: The function. Each parameter is a field of the input, except one annotated
				`ToolContext`, which receives the context.
			name: The tool's handle (default: the function's name).
			description: What the tool does (default: the docstring's first paragraph).
			scopes: Scopes needed to see and call the tool.
			labels: What it does with data (`openmolt_core.taint`); None declares nothing
				(treated as ``untrusted`` and ``outbound``), ``[]`` declares none.
			timeout: Seconds one call may take (None: only the run's budget bounds it).
			in_doubt: ``retry``, ``ask`` or ``fail``: a durable run's way with a call found
				started but not finished after a crash (`openmolt_core._indoubt`).

		Raises:
			TypeError: The function takes ``*args``/``**kwargs``, or a parameter's type has no
				JSON Schema.
		"""
		made = _from_function(
			function,
			name=name,
			description=description,
			scopes=scopes,
			labels=labels,
			timeout=timeout,
		)
		if in_doubt is not None:
			made.in_doubt = check_in_doubt(in_doubt, f"tool {made.handle!r}")
		return made


def _through_model(model: type[BaseModel], function: ExecuteFn) -> ExecuteFn:
	"""Validate the input with the model (defaults, coercion, validators) before ``function``.

	The function still receives a dict (the validated model, dumped by alias), as in the
	``function(input, context)`` form with a JSON Schema dict.
	"""

	async def validated(input: dict[str, Any], context: ToolContext) -> Any:
		from pydantic import ValidationError

		from openmolt_core.errors import ToolError

		try:
			parsed = model.model_validate(input)
		except ValidationError as exc:
			raise ToolError(f"invalid input: {exc.errors(include_url=False)}") from exc
		return await _call(function, parsed.model_dump(by_alias=True), context)

	return validated


@overload
def tool(
	function: Callable[..., Any],
	/,
	*,
	name: str | None = None,
	description: str | None = None,
	scopes: Sequence[str] = (),
	labels: Sequence[str] | None = None,
	timeout: float | None = None,
	in_doubt: str | None = None,
) -> FunctionTool: ...


@overload
def tool(
	*,
	name: str | None = None,
	description: str | None = None,
	scopes: Sequence[str] = (),
	labels: Sequence[str] | None = None,
	timeout: float | None = None,
	in_doubt: str | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
	function: Callable[..., Any] | None = None,
	/,
	*,
	name: str | None = None,
	description: str | None = None,
	scopes: Sequence[str] = (),
	labels: Sequence[str] | None = None,
	timeout: float | None = None,
	in_doubt: str | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
	"""Make a tool of a plain function: ``@tool``, ``@tool(name=...)`` or ``tool(fn)``.

	Args:
		function: The function (when used without arguments).
		name: The tool's handle (default: the function's name).
		description: What the tool does (default: the docstring's first paragraph).
		scopes: Scopes needed to see and call the tool.
		labels: What it does with data: ``@tool(labels=["untrusted"])`` for a tool that
			returns outside content, ``@tool(labels=[])`` for one that reads nothing private,
			returns nothing outside and sends nothing out (see `openmolt_core.taint`). Without
			labels the taint policy treats the tool as ``untrusted`` and ``outbound``.
		timeout: Seconds one call may take: ``@tool(timeout=5)`` (None: only the run's budget).
		in_doubt: ``retry``, ``ask`` or ``fail``: a durable run's way with a call found started
			but not finished after a crash (``@tool(in_doubt="fail")``; docs/guides/durable.md).

	Returns:
		A `FunctionTool`, or a decorator that makes one.
	"""

	def decorate(fn: Callable[..., Any]) -> FunctionTool:
		return FunctionTool.from_function(
			fn,
			name=name,
			description=description,
			scopes=scopes,
			labels=labels,
			timeout=timeout,
			in_doubt=in_doubt,
		)

	if function is not None:  # tool(fn) or tool(fn, labels=[]): the options apply too
		return decorate(function)
	return decorate


_SECTION = re.compile(
	r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$"
)
_GOOGLE_ARG = re.compile(r"^\s+(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:\S+\s+)?(\w+):\s*(.*)$")


def _docstring(doc: str) -> tuple[str, dict[str, str]]:
	"""The first paragraph and the parameter descriptions of a Google or Sphinx docstring."""
	text = inspect.cleandoc(doc)
	summary = text.split("\n\n", 1)[0].strip()
	if summary.startswith(":param") or _SECTION.match(summary.splitlines()[0] if summary else ""):
		summary = ""
	params: dict[str, str] = {}
	current: str | None = None
	in_args = False
	arg_indent: int | None = None  # the indentation of the first argument line
	for line in text.splitlines():
		indent = len(line) - len(line.lstrip())
		section = _SECTION.match(line)
		if section:
			in_args = section.group(1) in ("Args", "Arguments", "Parameters")
			current, arg_indent = None, None
			continue
		sphinx = _SPHINX_ARG.match(line)
		if sphinx:
			current = sphinx.group(1)
			params[current] = sphinx.group(2).strip()
			continue
		google = _GOOGLE_ARG.match(line) if in_args else None
		if google and (arg_indent is None or indent <= arg_indent):
			arg_indent = indent
			current = google.group(1).lstrip("*")
			params[current] = google.group(2).strip()
		elif current is not None and line.strip() and indent > 0:
			params[current] = f"{params[current]} {line.strip()}".strip()
		elif not line.strip() and not in_args:
			current = None
	return " ".join(summary.split()), params


def _clean(schema: Any) -> Any:
	"""A pydantic JSON Schema without titles and with local ``$ref``s inlined."""
	defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

	def walk(node: Any, seen: tuple[str, ...]) -> Any:
		if isinstance(node, list):
			return [walk(n, seen) for n in node]
		if not isinstance(node, dict):
			return node
		ref = node.get("$ref")
		if isinstance(ref, str) and ref.startswith("#/$defs/"):
			target = ref.rsplit("/", 1)[1]
			if target in seen:  # recursive: keep the reference and its definition
				return node
			rest = {k: v for k, v in node.items() if k != "$ref"}
			return {**walk(defs[target], (*seen, target)), **walk(rest, seen)}
		return {
			k: (v if k in ("enum", "const", "default", "required", "properties") else walk(v, seen))
			if k != "properties"
			else {p: walk(s, seen) for p, s in v.items()}
			for k, v in node.items()
			if k not in ("title", "$defs")
		}

	out = walk(schema, ())
	if isinstance(out, dict) and "$ref" in str(out):
		out["$defs"] = {k: walk(v, (k,)) for k, v in defs.items()}
	return out


def _is_context(annotation: Any) -> bool:
	"""Whether a parameter receives the context: ``ToolContext``, optional or annotated."""
	if annotation is ToolContext:
		return True
	origin = typing.get_origin(annotation)
	if origin is typing.Annotated:
		return _is_context(typing.get_args(annotation)[0])
	if origin is typing.Union or origin is types.UnionType:
		args = [a for a in typing.get_args(annotation) if a is not type(None)]
		return len(args) == 1 and _is_context(args[0])
	return False


def _mentions_context(annotation: Any) -> bool:
	return annotation is ToolContext or any(
		_mentions_context(a) for a in typing.get_args(annotation)
	)


def _field(annotation: Any, default: Any, doc: str | None, alias: str) -> tuple[Any, Any]:
	"""A pydantic field for one parameter: its default may be a ``Field(...)`` of its own."""
	from pydantic import Field
	from pydantic.fields import FieldInfo

	extra: dict[str, Any] = {"alias": alias}
	if doc:
		extra["description"] = doc
	if isinstance(default, FieldInfo):  # ``= Field(3, ge=1)``: its default and constraints hold
		if default.description is not None:
			extra.pop("description", None)
		return typing.Annotated[annotation, default], Field(**extra)
	return annotation, Field(default, **extra)


def _from_function(
	function: Callable[..., Any],
	*,
	name: str | None,
	description: str | None,
	scopes: Sequence[str],
	labels: Sequence[str] | None = None,
	timeout: float | None = None,
) -> FunctionTool:
	from pydantic import ConfigDict, TypeAdapter, create_model

	# What carries the name, docstring and hints: a partial's function, a callable's __call__.
	target: Any = function
	while isinstance(target, functools.partial):
		target = target.func
	inner: Any = target
	if not (inspect.isfunction(target) or inspect.ismethod(target)) and callable(target):
		call_method = getattr(type(target), "__call__", None)  # noqa: B004 - the class's method
		if inspect.isfunction(call_method):
			inner = call_method
	default_name = type(target).__name__ if inner is not target else getattr(target, "__name__", "")
	handle = name or default_name
	if not handle or handle == "<lambda>":
		raise TypeError("a tool made from a lambda needs a name: tool(name='...')(fn)")
	doc = inner.__doc__ or (type(target).__doc__ if inner is not target else None)
	summary, param_docs = _docstring(doc or "")
	try:
		hints = typing.get_type_hints(inner, include_extras=True)
	except Exception as exc:
		raise TypeError(f"tool {handle!r}: its type hints cannot be read: {exc}") from exc
	try:
		params = list(inspect.signature(function).parameters.values())
	except (TypeError, ValueError) as exc:
		raise TypeError(f"tool {handle!r}: its signature cannot be read: {exc}") from exc
	context_param: str | None = None
	fields: dict[str, Any] = {}
	# Parameters become fields under safe names (``p0``...) with the parameter's name as alias, so
	# a parameter named ``model_config``, ``json`` or ``_private`` is input like any other.
	# (field, parameter, positional-only) in signature order; the context's field is None
	slots: list[tuple[str | None, str, bool]] = []
	for param in params:
		if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
			star = "*" if param.kind is param.VAR_POSITIONAL else "**"
			raise TypeError(
				f"tool {handle!r}: parameter {star}{param.name}: *args and **kwargs cannot be tool "
				"input (the model sends named fields); name each parameter, or take one "
				"parameter typed with a pydantic model"
			)
		annotation = hints.get(param.name, Any)
		if _is_context(annotation):
			if context_param is not None:
				raise TypeError(
					f"tool {handle!r}: parameters {context_param!r} and {param.name!r} both take "
					"the ToolContext; keep one"
				)
			context_param = param.name
			slots.append((None, param.name, param.kind is param.POSITIONAL_ONLY))
			continue
		if _mentions_context(annotation):
			raise TypeError(
				f"tool {handle!r}: parameter {param.name!r}: a ToolContext is given as the whole "
				"parameter (ToolContext, ToolContext | None); it cannot be part of other input"
			)
		key = f"p{len(fields)}"
		default = ... if param.default is param.empty else param.default
		fields[key] = _field(annotation, default, param_docs.get(param.name), param.name)
		slots.append((key, param.name, param.kind is param.POSITIONAL_ONLY))
	try:
		model = create_model(
			f"{handle}_input",
			# Unknown keys are refused at the top level only (below), as pydantic-ai and the
			# OpenAI Agents SDK do: a forbid here would reach nested dataclasses and TypedDicts.
			__config__=ConfigDict(populate_by_name=False),
			**fields,
		)
		schema = _clean(model.model_json_schema(by_alias=True))
		schema["additionalProperties"] = False
	except Exception as exc:
		raise TypeError(f"tool {handle!r}: its parameters have no JSON Schema: {exc}") from exc
	returns = hints.get("return")
	output_schema = None
	if returns not in (None, Any, type(None)):
		try:
			output_schema = _clean(TypeAdapter(returns).json_schema())
		except Exception:
			output_schema = None  # a guide only: a return type without a schema is fine

	known = {name for key, name, _ in slots if key is not None}

	async def call(input: dict[str, Any], context: ToolContext) -> Any:
		from pydantic import ValidationError

		from openmolt_core.errors import ToolError

		unknown = sorted(set(input) - known)
		if unknown:
			raise ToolError(f"invalid input: unknown field(s) {unknown}; allowed: {sorted(known)}")
		try:
			parsed = model.model_validate(input)
		except ValidationError as exc:
			raise ToolError(f"invalid input: {exc.errors(include_url=False)}") from exc
		args: list[Any] = []
		kwargs: dict[str, Any] = {}
		for key, name, positional in slots:
			value = context if key is None else getattr(parsed, key)
			if positional:
				args.append(value)
			else:
				kwargs[name] = value
		return _jsonable(await _call(function, *args, **kwargs))

	return FunctionTool(
		handle=handle,
		description=description or summary or handle,
		function=call,
		input_schema=schema,
		output_schema=output_schema,
		scopes=tuple(scopes),
		labels=None if labels is None else tuple(labels),
		timeout=timeout,
	)


def _jsonable(value: Any) -> Any:
	"""A function's result as JSON values (models, dataclasses, dates...); as is when it fails."""
	if value is None or isinstance(value, str | int | float | bool):
		return value
	from pydantic_core import to_jsonable_python

	try:
		return to_jsonable_python(value)
	except Exception:
		return value


# labels: what a tool does with data (the taint policy reads them: `openmolt_core.taint`) ---

Label = Literal["private", "untrusted", "outbound"]
"""What a tool does with data (see `openmolt_core.taint`)."""

LABELS: frozenset[str] = frozenset(get_args(Label))
"""Every label."""

UNKNOWN_LABELS: tuple[Label, ...] = ("untrusted", "outbound")
"""The labels of a tool that declares none, under the default policy (fail closed)."""

UNKNOWN: frozenset[str] = frozenset(UNKNOWN_LABELS)
"""`UNKNOWN_LABELS` as a set: what a tool record holds until a policy resolves its labels."""

_NO_LABELS: frozenset[str] = frozenset()


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

	This is the one place a tool's labels come from, whatever its source (an integration, a
	function, an MCP server, an OpenAPI import, an agent used as a tool, a skill, a
	capability's tool). A tool declares labels when it has a ``labels`` attribute that is not
	None (``()`` declares that it does none of the three things) or when a key of its
	integration's table matches it (a tool name or a shell-style pattern such as ``send*``;
	``[]`` declares none). A tool that declares nothing gives None: the policy treats it as
	`UNKNOWN_LABELS`.

	Args:
		bound: The tool as an agent sees it (`openmolt_core._binding.BoundTool`: its ``tool``,
			``integration`` and ``handle``).

	Returns:
		The declared labels, or None when the tool declares nothing.

	Raises:
		ConfigurationError: The tool's own ``labels`` hold something that is not a label (a
			misspelt label must not pass for "none").
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


_WILDCARD = re.compile(r"[*?\[]")
_PATTERNS: dict[int, tuple[Mapping[str, Sequence[str]], int, tuple[str, ...]]] = {}


def _patterns(table: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
	"""The keys of a labels table that are shell-style patterns, found once per table.

	A table is usually one integration's, read by every agent created with it: the plain keys
	are looked up directly, and only the patterns are matched one by one.
	"""
	entry = _PATTERNS.get(id(table))
	if entry is None or entry[0] is not table or entry[1] != len(table):
		if len(_PATTERNS) > 1024:  # tables made on the fly (tests): keep the cache small
			_PATTERNS.clear()
		entry = (table, len(table), tuple(k for k in table if _WILDCARD.search(k)))
		_PATTERNS[id(table)] = entry
	return entry[2]
