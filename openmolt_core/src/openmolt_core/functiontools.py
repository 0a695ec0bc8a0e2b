"""Tools made from Python functions, and what ``create_agent(tools=[...])`` accepts.

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

This module is a feature: the kernel knows only the `openmolt_core.tools.Tool` protocol. The
assembly turns the entries of ``create_agent(tools=[...])`` into tools here (`as_tools`), and
`openmolt_core.tools` re-exports `FunctionTool` and `tool` on first use.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, overload

from pydantic import BaseModel

from openmolt_core._support import LazyPattern
from openmolt_core._support.sync import call as _call
from openmolt_core.errors import ConfigurationError
from openmolt_core.tools import LabelledResult, Tool, ToolContext, check_in_doubt, check_labels

__all__ = ["AsTool", "ExecuteFn", "FunctionTool", "as_tools", "tool"]


class AsTool(Protocol):
	"""Something that makes itself a tool (an agent: ``agent.as_tool()``)."""

	def as_tool(self) -> Tool:
		"""The tool that runs it."""
		...


def as_tools(entries: Sequence[Tool | AsTool | Callable[..., Any]]) -> list[Tool]:
	"""The entries of ``create_agent(tools=[...])`` as tools, in order.

	A `Tool` stays as given, an agent becomes ``agent.as_tool()``, a plain function (or any
	callable) a `FunctionTool` (`FunctionTool.from_function`).

	Args:
		entries: The tools as given.

	Raises:
		ConfigurationError: An entry is neither a tool, an agent nor a function that can be a
			tool, or is a tool that runs only with its integration (a declarative HTTP tool).
	"""
	out: list[Tool] = []
	for index, entry in enumerate(entries):
		# A declarative (HTTP) tool runs with its integration's base URL and credential.
		if getattr(type(entry), "needs_integration", False):
			raise ConfigurationError(
				f"create_agent: tools[{index}] is a {type(entry).__name__}, which runs with its "
				"integration's base URL and credential; give it in an integration "
				"(integrations=[...] or om.register_integration) or give a Tool or a function"
			)
		# The protocol check reads every member: a FunctionTool need not pass it.
		if isinstance(entry, (FunctionTool, Tool)):
			out.append(entry)
		elif callable(getattr(entry, "as_tool", None)):  # an agent
			out.append(cast("AsTool", entry).as_tool())
		elif callable(entry):
			try:
				out.append(FunctionTool.from_function(entry))
			except TypeError as exc:
				raise ConfigurationError(f"create_agent: tools[{index}]: {exc}") from exc
		else:
			raise ConfigurationError(
				f"create_agent: tools[{index}] is a {type(entry).__name__}; give a Tool "
				"(handle, description, input_schema, execute), an agent or a plain function"
			)
	return out


ExecuteFn = Callable[[dict[str, Any], ToolContext], Awaitable[Any] | Any]
"""The ``function(input, context)`` of a `FunctionTool`, sync or async."""


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
			its worker thread, where `openmolt_core.tools.cancelled` turns True.
		in_doubt: What a durable run does with a call of it found started but not finished
			after a crash: ``retry``, ``ask`` or ``fail`` (default: ``ask`` for ``outbound``
			tools, else ``retry``; see `openmolt_core.capabilities.indoubt`).
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
		if not isinstance(self.handle, str) or not self.handle.strip():
			raise TypeError(
				f"FunctionTool: handle must be the tool's name (text), got {self.handle!r}"
			)
		if not isinstance(self.description, str):
			raise TypeError(
				f"FunctionTool {self.handle!r}: description must be text (what the tool does, for "
				f"the model), got {type(self.description).__name__}"
			)
		if not callable(self.function):
			raise TypeError(
				f"FunctionTool {self.handle!r}: function must be callable as function(input, "
				f"context), sync or async; got {type(self.function).__name__}"
			)
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
		elif not _GENERATED.get():
			_check_schemas(self.handle, schema, self.output_schema)
		if self.labels is not None:
			self.labels = check_labels(self.labels, f"tool {self.handle!r}: labels")
		if self.in_doubt is not None:
			check_in_doubt(self.in_doubt, f"tool {self.handle!r}")

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Call the function: awaited when async, in a worker thread when sync."""
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
				started but not finished after a crash (`openmolt_core.capabilities.indoubt`).

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


def _check_schemas(handle: str, given: dict[str, Any], output: Any) -> None:
	"""Refuse an input schema (or output schema) that is not JSON Schema, naming the mistake.

	A schema the model is shown and its calls are checked against: ``{"type": "objekt"}`` would
	reach the model as is, and every call would then fail its check.
	"""
	from openmolt_core._support.metaschema import check_schema

	for what, schema in (("input_schema", given), ("output_schema", output)):
		if schema is None or (what == "output_schema" and not isinstance(schema, dict)):
			continue
		if problems := check_schema(schema):
			raise TypeError(
				f"FunctionTool {handle!r}: {what} is not a valid JSON Schema: "
				+ "; ".join(f"{what}: {p}" for p in problems)
			)


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


_SECTION = LazyPattern(
	r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$"
)
_GOOGLE_ARG = LazyPattern(r"^\s+(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$")
_SPHINX_ARG = LazyPattern(r"^\s*:param\s+(?:\S+\s+)?(\w+):\s*(.*)$")


def _docstring(doc: str) -> tuple[str, dict[str, str]]:
	"""The first paragraph and the parameter descriptions of a Google or Sphinx docstring."""
	text = inspect.cleandoc(doc)
	summary = text.split("\n\n", 1)[0].strip()
	if summary.startswith(":param") or _SECTION().match(summary.splitlines()[0] if summary else ""):
		summary = ""
	params: dict[str, str] = {}
	current: str | None = None
	in_args = False
	arg_indent: int | None = None  # the indentation of the first argument line
	for line in text.splitlines():
		indent = len(line) - len(line.lstrip())
		section = _SECTION().match(line)
		if section:
			in_args = section.group(1) in ("Args", "Arguments", "Parameters")
			current, arg_indent = None, None
			continue
		sphinx = _SPHINX_ARG().match(line)
		if sphinx:
			current = sphinx.group(1)
			params[current] = sphinx.group(2).strip()
			continue
		google = _GOOGLE_ARG().match(line) if in_args else None
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


def _no_schema(
	handle: str,
	fields: dict[str, tuple[Any, Any]],
	slots: Sequence[tuple[str | None, str, bool]],
	exc: BaseException,
) -> str:
	"""Why a function's parameters have no JSON Schema: the parameter whose type has none.

	pydantic's own message is a paragraph about ``arbitrary_types_allowed`` and
	``__get_pydantic_core_schema__``, advice for pydantic models; a tool's author needs the
	parameter and what a model can send instead.
	"""
	from pydantic import TypeAdapter

	names = {key: name for key, name, _ in slots if key is not None}
	for key, (annotation, _) in fields.items():
		try:
			TypeAdapter(annotation).json_schema()
		except Exception:
			shown = getattr(annotation, "__qualname__", None) or repr(annotation)
			module = getattr(annotation, "__module__", "builtins")
			shown = shown if module in ("builtins", "typing") else f"{module}.{shown}"
			return (
				f"tool {handle!r}: parameter {names.get(key, key)!r}: {shown} has no JSON Schema, "
				"and a model sends JSON; type it with str, int, float, bool, a list or dict of "
				"them, a dataclass, a TypedDict or a pydantic model"
			)
	first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
	return f"tool {handle!r}: its parameters have no JSON Schema: {first}"


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

	if not callable(function):
		raise TypeError(
			f"a tool is made from a function (sync or async), got {type(function).__name__}"
		)
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
		raise TypeError(_no_schema(handle, fields, slots, exc)) from exc
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
		result = await _call(function, *args, **kwargs)
		if inspect.isasyncgen(result):  # its items, as a sync generator's (not its repr)
			result = [item async for item in result]
		if type(result) is LabelledResult:  # the labels stay the loop's to read
			return LabelledResult(_jsonable(result.value), result.labels)
		return _jsonable(result)

	token = _GENERATED.set(True)  # its schemas come from pydantic: valid, not checked again
	try:
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
	finally:
		_GENERATED.reset(token)


_GENERATED: ContextVar[bool] = ContextVar("openmolt_generated_schemas", default=False)
"""Whether the `FunctionTool` being made has schemas pydantic generated (`from_function`)."""


def _jsonable(value: Any) -> Any:
	"""A function's result as JSON values (models, dataclasses, dates...); as is when it fails."""
	if value is None or isinstance(value, str | int | float | bool):
		return value
	from pydantic_core import to_jsonable_python

	try:
		return to_jsonable_python(value)
	except Exception:
		return value
