"""Plain typed functions are tools: schema from the signature, context only when asked for."""

import dataclasses
import functools
import inspect
import json
import threading
from datetime import date
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python
from typing_extensions import TypedDict

from openmolt import ConfigurationError, FunctionTool, OpenMolt, ToolContext, ToolError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def add(a: int, b: int = 0) -> int:
	"""Add two integers.

	Args:
		a: The first number.
		b: The second number,
			zero when left out.
	"""
	return a + b


class Address(BaseModel):
	city: str
	zip: str | None = None


async def ship(
	to: Address, on: date, speed: Literal["fast", "slow"] = "slow", *, context: ToolContext
) -> dict[str, Any]:
	"""Ship a parcel.

	:param to: Where it goes.
	:param on: The shipping day.
	"""
	return {"city": to.city, "weekday": on.isoweekday(), "speed": speed, "agent": context.agent}


def results(model: ScriptedModel, call: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[call].messages[-1].content)["results"]


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
	"""Types, defaults, required fields and Google-style descriptions make the input schema."""
	made = tool(add)
	assert made.handle == "add" and made.description == "Add two integers."
	assert made.input_schema == {
		"additionalProperties": False,
		"properties": {
			"a": {"description": "The first number.", "type": "integer"},
			"b": {
				"default": 0,
				"description": "The second number, zero when left out.",
				"type": "integer",
			},
		},
		"required": ["a"],
		"type": "object",
	}
	assert made.output_schema == {"type": "integer"}


def test_nested_models_context_and_sphinx_docstrings() -> None:
	"""A pydantic parameter is inlined, a ToolContext parameter is not input, Sphinx :param: works."""
	made = tool(ship)
	props = made.input_schema["properties"]
	assert set(props) == {"to", "on", "speed"}
	assert props["to"]["properties"]["city"] == {"type": "string"}
	assert props["on"] == {"description": "The shipping day.", "format": "date", "type": "string"}
	assert props["to"]["description"] == "Where it goes."
	assert made.input_schema["required"] == ["to", "on"]


async def test_plain_functions_run_in_an_agent_sync_and_async() -> None:
	"""tools=[fn] works for sync and async functions; pydantic coerces the JSON input."""
	model = ScriptedModel(
		[
			[
				call_tool("local.add", a=2, b=40),
				call_tool("local.ship", to={"city": "Oslo"}, on="2026-12-01"),
			],
			finish("ok"),
		]
	)
	om = OpenMolt(entry_points=False)
	# add declares that it does nothing with data; ship, a plain function, declares nothing,
	# so its result counts as untrusted (fail closed: openmolt_core.taint).
	agent = om.create_agent(name="F", model=model, tools=[tool(labels=[])(add), ship])
	result = await agent.run()
	assert result.status == "success"
	assert results(model, 1) == [
		{"tool": "local.add", "ok": True, "result": 42},
		{
			"tool": "local.ship",
			"ok": True,
			"result": {"city": "Oslo", "weekday": 2, "speed": "slow", "agent": "F"},
			"untrusted": True,
		},
	]


async def test_a_sync_function_runs_off_the_event_loop_thread() -> None:
	"""A blocking sync tool runs in a worker thread."""
	seen: list[str] = []

	def where() -> str:
		"""Report the thread."""
		seen.append(threading.current_thread().name)
		return "ok"

	model = ScriptedModel([call_tool("local.where"), finish("ok")])
	agent = OpenMolt(entry_points=False).create_agent(name="T", model=model, tools=[where])
	await agent.run()
	assert seen and seen[0] != threading.main_thread().name


async def test_wrong_input_is_refused_before_the_function_runs() -> None:
	"""Input that fails the signature's schema never reaches the function."""
	called: list[Any] = []

	@tool(name="double", description="Double a number.")
	def twice(n: int) -> int:
		called.append(n)
		return 2 * n

	model = ScriptedModel([call_tool("local.double", n="four"), finish("x")])
	agent = OpenMolt(entry_points=False).create_agent(name="W", model=model, tools=[twice])
	await agent.run()
	assert called == []
	assert "n: Input should be a valid integer" in results(model, 1)[0]["error"]


async def test_the_input_context_form_still_works() -> None:
	"""FunctionTool(handle, description, function(input, context), input_schema) is unchanged."""
	legacy = FunctionTool(
		handle="echo",
		description="Echo.",
		function=lambda input, context: {"got": input["x"], "by": context.integration},
		input_schema={"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
		labels=[],
	)
	model = ScriptedModel([call_tool("local.echo", x="hi"), finish("x")])
	await OpenMolt(entry_points=False).create_agent(name="L", model=model, tools=[legacy]).run()
	assert results(model, 1) == [
		{"tool": "local.echo", "ok": True, "result": {"got": "hi", "by": "local"}}
	]


def test_things_that_are_not_tools_are_refused_clearly() -> None:
	"""A non-callable, *args, or an unnamed lambda is a ConfigurationError naming the entry."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"tools\[0\] is a int"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[5])  # type: ignore[list-item]

	def spread(*values: int) -> int:
		return sum(values)

	with pytest.raises(ConfigurationError, match=r"tools\[1\].*\*args"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[add, spread])
	with pytest.raises(ConfigurationError, match="lambda needs a name"):
		om.create_agent(name="x", model=ScriptedModel([]), tools=[lambda a: a])


# every documented form, against pydantic-ai and the OpenAI Agents SDK --------------------------


class Point(BaseModel):
	x: int
	y: int = 0


@dataclasses.dataclass
class Size:
	width: int
	unit: str = "cm"


class Movie(TypedDict):
	title: str
	year: int


def seen(**values: Any) -> dict[str, Any]:
	"""What a function got: each value's type name and its JSON form."""
	return {k: [type(v).__name__, to_jsonable_python(v)] for k, v in values.items()}


def plain(a: int, b: str = "x") -> dict[str, Any]:
	"""Plain parameters.

	Args:
		a: A number.
		b: A word.
	"""
	return seen(a=a, b=b)


def field_defaults(
	a: int = Field(3, ge=1, description="At least one."),
	tags: list[str] = Field(default_factory=list, max_length=3),  # noqa: B008 - the point
	note: str = Field(default="n", max_length=5),
) -> dict[str, Any]:
	"""Defaults given as Field(...)."""
	return seen(a=a, tags=tags, note=note)


def annotated(
	n: Annotated[int, Field(ge=2, description="Two or more.")],
	s: Annotated[str, Field(max_length=5)] = "ab",
) -> dict[str, Any]:
	"""Annotated parameters."""
	return seen(n=n, s=s)


def optionals(a: Optional[int] = None, b: int | None = 3, c: float = 1.5) -> dict[str, Any]:  # noqa: UP045 - both spellings on purpose
	"""Optional parameters."""
	return seen(a=a, b=b, c=c)


def objects(at: Point, size: Size, movie: Movie, when: date | None = None) -> dict[str, Any]:
	"""A pydantic model, a dataclass and a TypedDict as parameters."""
	return seen(at=at, size=size, movie=movie, when=when)


def positional_only(a: int, b: int = 2, /, c: int = 3) -> dict[str, Any]:
	"""Positional-only parameters."""
	return seen(a=a, b=b, c=c)


def keyword_only(*, a: int, mode: Literal["fast", "slow"] = "slow") -> dict[str, Any]:
	"""Keyword-only parameters."""
	return seen(a=a, mode=mode)


async def asynchronous(a: int, b: Annotated[int, Field(le=10)] = 1) -> dict[str, Any]:
	"""An async function."""
	return seen(a=a, b=b)


SIGNATURES: list[tuple[Any, dict[str, Any]]] = [
	(plain, {"a": 1}),
	(field_defaults, {"tags": ["t"]}),
	(annotated, {"n": 4}),
	(optionals, {"a": 2}),
	(
		objects,
		{
			"at": {"x": 1},
			"size": {"width": 3},
			"movie": {"title": "M", "year": 1999},
			"when": "2026-12-01",
		},
	),
	(positional_only, {"a": 1, "c": 5}),
	(keyword_only, {"a": 7}),
	(asynchronous, {"a": 2}),
]
IDS = [f.__name__ for f, _ in SIGNATURES]


def normalised(schema: dict[str, Any]) -> dict[str, Any]:
	"""A schema without titles, with $refs inlined and no top-level additionalProperties."""
	from openmolt_core.functiontools import _clean

	out = dict(_clean(schema))
	out.pop("additionalProperties", None)
	return out


@pytest.mark.parametrize(("function", "args"), SIGNATURES, ids=IDS)
def test_the_schema_matches_pydantic_ai_and_the_agents_sdk(function: Any, args: Any) -> None:
	"""The same signature gives the same input schema as pydantic-ai and the OpenAI Agents SDK."""
	from agents.function_schema import function_schema
	from pydantic_ai import Tool

	ours = normalised(tool(function).input_schema)
	assert ours == normalised(Tool(function, takes_ctx=False).tool_def.parameters_json_schema)
	assert ours == normalised(
		function_schema(function, strict_json_schema=False).params_json_schema
	)
	assert tool(function).input_schema["additionalProperties"] is False


@pytest.mark.parametrize(("function", "args"), SIGNATURES, ids=IDS)
async def test_the_function_gets_what_the_other_frameworks_give_it(
	function: Any, args: Any
) -> None:
	"""Validated input reaches the function as the same values of the same types."""
	from agents.function_schema import function_schema
	from pydantic_ai import Tool

	ours = await tool(function).execute(dict(args), ToolContext(agent="A", integration="local"))
	schema = Tool(function, takes_ctx=False).function_schema
	theirs = await schema.call(schema.validator.validate_python(dict(args)), None)  # type: ignore[arg-type]
	sdk = function_schema(function, strict_json_schema=False)
	call_args, call_kwargs = sdk.to_call_args(sdk.params_pydantic_model(**args))
	direct = function(*call_args, **call_kwargs)
	if inspect.isawaitable(direct):
		direct = await direct
	assert ours == theirs == direct


async def test_field_constraints_hold_in_a_run() -> None:
	"""A Field(...) default's constraint refuses bad input; its default fills a missing one."""
	model = ScriptedModel(
		[call_tool("local.field_defaults", a=0), call_tool("local.field_defaults"), finish("x")]
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="F", model=model, tools=[tool(field_defaults, labels=[])]
	)
	await agent.run()
	(refused,), (ran,) = results(model, 1), results(model, 2)
	assert refused["ok"] is False and "greater than or equal to 1" in refused["error"]
	assert ran == {
		"tool": "local.field_defaults",
		"ok": True,
		"result": {"a": ["int", 3], "tags": ["list", []], "note": ["str", "n"]},
	}


def _ctx_union(a: int, context: ToolContext | None = None) -> str:
	return f"{a}:{context.agent if context else '-'}"


def _ctx_optional(a: int, context: Optional[ToolContext] = None) -> str:  # noqa: UP045
	return f"{a}:{context.agent if context else '-'}"


def _ctx_annotated(context: Annotated[ToolContext, "the run"], a: int) -> str:
	return f"{a}:{context.agent}"


def _ctx_positional(context: ToolContext, a: int, /) -> str:
	return f"{a}:{context.agent}"


@pytest.mark.parametrize("function", [_ctx_union, _ctx_optional, _ctx_annotated, _ctx_positional])
async def test_every_spelling_of_a_context_parameter_receives_the_context(function: Any) -> None:
	"""ToolContext, ToolContext | None, Optional[...], Annotated[...] and positional-only."""
	made = tool(function)
	assert set(made.input_schema["properties"]) == {"a"}
	got = await made.execute({"a": 4}, ToolContext(agent="Ctx", integration="local"))
	assert got == "4:Ctx"


def _spread(*values: int) -> int:
	return sum(values)


def _options(**options: str) -> int:
	return len(options)


def _mixed(a: ToolContext | int) -> int:
	return 0


def _twice(a: ToolContext, b: ToolContext) -> int:
	return 0


class _Conn:  # a class pydantic knows no schema for (a socket, a database connection)
	pass


def _socket(name: str, conn: _Conn) -> int:
	return 0


@pytest.mark.parametrize(
	("function", "message"),
	[
		(  # pydantic's paragraph about arbitrary_types_allowed was the message
			_socket,
			r"^tool '_socket': parameter 'conn': \S*_Conn has no JSON Schema, and a model "
			r"sends JSON; type it with str, int, float, bool, a list or dict of them, a "
			r"dataclass, a TypedDict or a pydantic model$",
		),
		(_spread, r"parameter \*values: \*args and \*\*kwargs cannot be tool input"),
		(_options, r"parameter \*\*options: \*args and \*\*kwargs cannot be tool input"),
		(_mixed, r"parameter 'a': a ToolContext is given as the whole parameter"),
		(_twice, r"parameters 'a' and 'b' both take the ToolContext"),
	],
)
def test_signatures_that_cannot_be_tools_are_refused_clearly(function: Any, message: str) -> None:
	"""Each refusal names the parameter and says what to do."""
	with pytest.raises(TypeError, match=message):
		tool(function)
	with pytest.raises(ConfigurationError, match=r"tools\[0\]"):
		OpenMolt(entry_points=False).create_agent(
			name="x", model=ScriptedModel([]), tools=[function]
		)


def test_parameter_names_pydantic_reserves_are_input_like_any_other() -> None:
	"""model_config, json, schema: the schema and the call use the parameter's own name."""

	def odd(model_config: str, json: int = 1, schema: bool = False) -> list[Any]:
		return [model_config, json, schema]

	made = tool(odd)
	assert set(made.input_schema["properties"]) == {"model_config", "json", "schema"}
	assert made.input_schema["required"] == ["model_config"]


async def test_reserved_names_reach_the_function() -> None:
	def odd(model_config: str, json: int = 1) -> list[Any]:
		return [model_config, json]

	got = await tool(odd).execute({"model_config": "m", "json": 2}, ToolContext("A", "local"))
	assert got == ["m", 2]


class Refund(BaseModel):
	order: int = Field(ge=1)
	reason: str = "n/a"


async def test_a_pydantic_model_as_input_schema_is_converted_and_validates() -> None:
	"""FunctionTool(input_schema=Model): the schema is the model's, the input goes through it."""
	got: list[Any] = []

	def refund(input: dict[str, Any], context: ToolContext) -> str:
		got.append(input)
		return "ok"

	made = FunctionTool(
		handle="refund", description="Refund.", function=refund, input_schema=Refund, labels=[]
	)
	assert made.input_schema == {
		"properties": {
			"order": {"minimum": 1, "type": "integer"},
			"reason": {"default": "n/a", "type": "string"},
		},
		"required": ["order"],
		"type": "object",
	}
	model = ScriptedModel(
		[call_tool("local.refund", order=5), call_tool("local.refund", order=0), finish("x")]
	)
	await OpenMolt(entry_points=False).create_agent(name="R", model=model, tools=[made]).run()
	(ok,), (refused,) = results(model, 1), results(model, 2)
	with pytest.raises(ToolError, match="greater than or equal to 1"):  # called directly
		await made.execute({"order": -1}, ToolContext("R", "local"))
	assert ok == {"tool": "local.refund", "ok": True, "result": "ok"}
	assert refused["ok"] is False and "order" in refused["error"]
	assert got == [{"order": 5, "reason": "n/a"}]


def test_a_wrong_input_schema_is_refused_naming_it() -> None:
	with pytest.raises(TypeError, match=r"FunctionTool 'x': input_schema must be a JSON Schema"):
		FunctionTool(handle="x", description="", function=lambda i, c: 0, input_schema="{}")  # type: ignore[arg-type]


async def test_results_that_are_not_json_become_json() -> None:
	"""A dataclass, a model or a date returned by a function reaches the model as JSON."""

	def make() -> list[Any]:
		return [Size(2), Point(x=1), date(2026, 1, 2)]

	got = await tool(make).execute({}, ToolContext("A", "local"))
	assert got == [{"width": 2, "unit": "cm"}, {"x": 1, "y": 0}, "2026-01-02"]


class Counter:
	"""Counts things."""

	def __call__(self, n: int, step: int = 1) -> int:
		return n + step

	def double(self, n: int) -> int:
		"""Double it."""
		return 2 * n

	async def triple(self, n: int) -> int:
		"""Triple it."""
		return 3 * n


class AsyncCounter:
	"""Counts, awaiting."""

	async def __call__(self, n: int) -> int:
		return n + 100


@pytest.mark.parametrize(
	("function", "handle", "description", "expected"),
	[
		(functools.partial(add, b=5), "add", "Add two integers.", 7),
		(Counter(), "Counter", "Counts things.", 3),
		(Counter().double, "double", "Double it.", 4),
		(Counter().triple, "triple", "Triple it.", 6),
		(AsyncCounter(), "AsyncCounter", "Counts, awaiting.", 102),
	],
	ids=["partial", "callable_object", "bound_method", "async_bound_method", "async_callable"],
)
async def test_partials_methods_and_callable_objects_are_tools(
	function: Any, handle: str, description: str, expected: int
) -> None:
	"""Their name, docstring and hints come from the function that does the work."""
	made = tool(function)
	assert (made.handle, made.description) == (handle, description)
	arg = "a" if handle == "add" else "n"
	assert made.input_schema["required"] == [arg]
	assert await made.execute({arg: 2}, ToolContext("A", "local")) == expected


def test_tool_of_a_function_takes_the_same_options_as_the_decorator() -> None:
	"""tool(fn, labels=[], ...) applies its options (they were silently dropped)."""

	def ping() -> str:
		"""Ping."""
		return "pong"

	made = tool(ping, name="pinger", labels=[], scopes=["read"], timeout=2, in_doubt="fail")
	assert made.handle == "pinger" and made.labels == () and tuple(made.scopes) == ("read",)
	assert made.timeout == 2 and made.in_doubt == "fail"


def test_a_calls_context_copies_every_field_of_the_bindings() -> None:
	"""`for_call` is ``dataclasses.replace`` (memory, run, the call's files), subclasses too."""
	from openmolt_core._binding import CallFiles, for_call

	base = ToolContext(
		**{f.name: object() for f in dataclasses.fields(ToolContext)}  # each field its own value
	)
	memory, run = {"longTerm": "x"}, object()
	made = for_call(base, memory, run)  # type: ignore[arg-type]
	want = dataclasses.replace(base, memory=memory, run=run)
	for f in dataclasses.fields(ToolContext):
		if f.name == "files":  # the store as this call sees it: it screens what the call keeps
			assert isinstance(made.files, CallFiles) and made.files._files is base.files
			continue
		assert getattr(made, f.name) is getattr(want, f.name), f.name

	@dataclasses.dataclass(slots=True)
	class Wider(ToolContext):
		more: int = 0

	wider = for_call(Wider(agent="a", integration="local", more=3), memory, None)
	assert type(wider) is Wider and wider.more == 3 and wider.memory is memory


async def test_a_generator_s_items_are_the_result_sync_or_async() -> None:
	"""An async generator's items reach the model as a list, as a sync generator's do.

	The model was sent "<async_generator object ... at 0x...>", a repr, as a successful result.
	"""

	def countdown(n: int) -> Any:
		"""Count down."""
		yield from range(n, 0, -1)

	async def acountdown(n: int) -> Any:
		"""Count down, async."""
		for i in range(n, 0, -1):
			yield i

	for function in (countdown, acountdown):
		model = ScriptedModel([call_tool(f"local.{function.__name__}", n=3), finish(result="done")])
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(name="A", model=model, tools=[function])
		result = await agent.run("go")
		await om.aclose()
		assert result.status == "success"
		entry = json.loads(model.requests[1].messages[-1].content)["results"][0]
		assert entry["ok"] is True and entry["result"] == [3, 2, 1], (function.__name__, entry)
