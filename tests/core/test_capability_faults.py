"""A capability that misbehaves: a hook that answers the wrong type or raises names itself and the
fix, and the run ends with its state (it never crashes the loop, nor passes as a yes)."""

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from openmolt import (
	Capability,
	OpenMolt,
	Park,
	PluginError,
	Proceed,
	Refuse,
	RunError,
	Stop,
	ToolError,
)
from openmolt_core.commands import CallTool, Finish
from openmolt_core.events import Event
from openmolt_core.hooks import Alongside, Run, ToolSpec
from openmolt_core.result import RunState
from openmolt_core.testing import ScriptedModel, call_tool, finish
from tests.core.test_capabilities import Till

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


class Answers(Capability):
	"""Each hook named in ``answers`` answers its value (or raises it, when an exception)."""

	name: ClassVar[str] = "acme-guard"

	def __init__(self, **answers: Any) -> None:
		self.answers = answers

	def _answer(self, hook: str, default: Any) -> Any:
		value = self.answers.get(hook, default)
		if isinstance(value, Exception):
			raise value
		return value

	async def on_run_start(self, run: Run) -> Any:
		return self._answer("on_run_start", None)

	async def before_first_model(self, run: Run) -> Any:
		return self._answer("before_first_model", None)

	async def after_tool(self, run: Run, call: CallTool, tool: ToolSpec, entry: Any) -> Any:
		return self._answer("after_tool", entry)

	async def before_finish(self, run: Run, finish: Finish) -> Any:
		from openmolt import Proceed

		return self._answer("before_finish", Proceed())

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> Any:
		return self._answer("visible_tools", handles)


async def run_with(cap: Capability) -> tuple[RunError, Till]:
	till = Till()
	model = ScriptedModel([call_tool("local.pay", amount=5), finish("paid")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[cap]
	)
	with pytest.raises(RunError) as caught:
		await agent.run("pay")
	return caught.value, till


@pytest.mark.parametrize(
	("hook", "answer", "fix"),
	[
		("before_finish", None, r"return Proceed\(\), a Finish, Refuse\(reason\) or Stop"),
		("before_finish", {"status": "failure"}, r"return Proceed\(\), a Finish"),
		("after_tool", None, r"return the entry \(a dict"),
		("on_run_start", "stop", r"return Stop\(reason\) or None"),
		("before_first_model", True, r"return Stop\(reason\), Alongside\(check\) or None"),
	],
)
async def test_a_wrong_answer_names_the_capability_and_the_fix(
	hook: str, answer: Any, fix: str
) -> None:
	"""A hook's answer outside its contract ends the run with the capability, hook and fix named."""
	error, _ = await run_with(Answers(**{hook: answer}))
	assert f"capability 'acme-guard': {hook} returned {type(answer).__name__}" in str(error)
	assert re.search(fix, str(error))
	saved = json.loads(json.dumps(error.result.state.to_dict()))  # the state survives
	assert RunState.from_dict(saved).run_id == error.result.state.run_id


async def test_a_finish_guard_that_answers_nothing_does_not_let_the_finish_through() -> None:
	"""``before_finish`` returning None is a bug, not a yes: the run does not end in success."""
	error, till = await run_with(Answers(before_finish=None))
	assert error.result.status == "error" and error.result.output is None
	assert till.ran == [{"amount": 5}]  # the call before it ran; its result is in the state


async def test_visible_tools_must_answer_handles() -> None:
	"""A ``visible_tools`` answering None is refused with its fix; a list is taken as a tuple."""
	om = OpenMolt(entry_points=False)
	till = Till()
	bad = om.create_agent(
		name="A",
		model=ScriptedModel([]),
		tools=till.tools,
		capabilities=[Answers(visible_tools=None)],
	)
	with pytest.raises(TypeError, match="capability 'acme-guard': visible_tools returned NoneType"):
		await bad.run("pay")
	model = ScriptedModel([call_tool("local.pay", amount=1), finish("paid")])
	listed = om.create_agent(
		name="B",
		model=model,
		tools=till.tools,
		capabilities=[Answers(visible_tools=["local.pay"])],
	)
	assert (await listed.run("pay")).status == "success"


async def test_visible_tools_may_not_add_a_tool_it_was_not_given() -> None:
	"""An unknown handle, or one an earlier capability hid, is refused naming it (it crashed the
	listing with a KeyError, or made a hidden tool callable again)."""

	class Hides(Capability):
		name = "acme-hides"

		def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
			return tuple(h for h in handles if h != "local.pay")

	om = OpenMolt(entry_points=False)
	for extra, capabilities in (
		("local.ghost", [Answers(visible_tools=("local.pay", "local.ghost"))]),
		("local.pay", [Hides(), Answers(visible_tools=("local.pay",))]),
	):
		agent = om.create_agent(
			name="A", model=ScriptedModel([]), tools=Till().tools, capabilities=capabilities
		)
		with pytest.raises(
			TypeError,
			match=rf"visible_tools returned tuple; return only handles it was given \(not {extra}\)",
		):
			await agent.run("pay")


class Raises(Capability):
	"""Raises ``error`` from the hook named ``hook``; the others do nothing."""

	name: ClassVar[str] = "acme-audit"

	def __init__(self, hook: str, error: Exception) -> None:
		self.hook = hook
		self.error = error

	def _maybe(self, hook: str) -> None:
		if hook == self.hook:
			raise self.error

	async def on_run_start(self, run: Run) -> None:
		self._maybe("on_run_start")

	async def before_model(self, run: Run) -> None:
		self._maybe("before_model")

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		from openmolt import Proceed

		self._maybe("before_tool")
		return Proceed()

	async def after_tool(self, run: Run, call: CallTool, tool: ToolSpec, entry: Any) -> Any:
		self._maybe("after_tool")
		return entry

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Any) -> None:
		self._maybe("tool_done")

	async def before_finish(self, run: Run, finish: Finish) -> Any:
		from openmolt import Proceed

		self._maybe("before_finish")
		return Proceed()

	async def on_run_end(self, run: Run, result: Any) -> None:
		self._maybe("on_run_end")


@pytest.mark.parametrize(
	"hook",
	[
		"on_run_start",
		"before_model",
		"before_tool",
		"after_tool",
		"tool_done",
		"before_finish",
		"on_run_end",
	],
)
async def test_a_hook_that_raises_names_its_capability_and_keeps_the_state(hook: str) -> None:
	"""A bug in a hook ends the run with a RunError naming the capability; the cause is kept."""
	bug = KeyError("amount")
	error, _ = await run_with(Raises(hook, bug))
	message = str(error)
	assert f"capabilities:acme-audit: its {hook} hook raised KeyError: 'amount'" in message
	assert "fix the capability 'acme-audit'" in message
	assert isinstance(error.__cause__, PluginError) and error.__cause__.__cause__ is bug
	assert error.result.state.to_dict()["run_id"] == error.result.state.run_id


class Wraps(Capability):
	"""Its ``wrap_model`` and ``wrap_run`` raise ``error`` or answer ``answer`` when named ``hook``."""

	name: ClassVar[str] = "acme-wrap"

	def __init__(self, hook: str, error: Exception | None = None, answer: Any = None) -> None:
		self.hook, self.error, self.answer = hook, error, answer

	def _after(self, hook: str, value: Any) -> Any:
		if hook != self.hook:
			return value
		if self.error is not None:
			raise self.error
		return self.answer

	async def wrap_model(self, run: Run, request: Any, call: Any) -> Any:
		return self._after("wrap_model", await call(request))

	async def wrap_run(self, run: Run, drive: Any) -> Any:
		return self._after("wrap_run", await drive())


@pytest.mark.parametrize("hook", ["wrap_model", "wrap_run"])
async def test_a_wrap_hook_that_raises_names_its_capability_and_keeps_the_state(hook: str) -> None:
	"""A bug in a wrap hook (not an error of what it wraps) names the capability and the fix, as
	every other hook's does; the run ends with its state (a wrap_model bug was a provider's
	``KeyError``, a wrap_run bug "the run failed unexpectedly: KeyError", naming nobody)."""
	bug = KeyError("amount")
	error, till = await run_with(Wraps(hook, bug))
	message = str(error)
	assert f"capabilities:acme-wrap: its {hook} hook raised KeyError: 'amount'" in message
	assert "fix the capability 'acme-wrap'" in message
	assert isinstance(error.__cause__, PluginError) and error.__cause__.__cause__ is bug
	assert error.result.state.to_dict()["run_id"] == error.result.state.run_id
	if hook == "wrap_model":
		assert till.ran == [] and error.result.state.messages  # the first turn is kept


@pytest.mark.parametrize("hook", ["wrap_model", "wrap_run"])
async def test_a_wrap_hook_that_answers_nothing_names_its_capability(hook: str) -> None:
	"""A wrap hook must return what it wrapped (or its own): None was read as a reply
	(``AttributeError: 'NoneType' object has no attribute 'model'``), or was the run's result."""
	expected = "the ModelResponse of call" if hook == "wrap_model" else "the RunResult of drive"
	error, _ = await run_with(Wraps(hook, answer=None))
	assert f"capability 'acme-wrap': {hook} returned NoneType; return {expected}" in str(error)
	assert error.result.state.run_id


async def test_errors_of_what_a_wrap_hook_wraps_pass_through_it_as_they_are() -> None:
	"""A provider's error (or an unexpected one) raised through ``call`` is not the capability's."""
	from openmolt_core.errors import ProviderError
	from openmolt_core.llm import ModelRequest

	def broken(request: ModelRequest) -> Any:
		raise ProviderError("the server broke", provider="scripted")

	def buggy(request: ModelRequest) -> Any:
		raise KeyError("in the provider")

	for reply, said in ((broken, "the server broke"), (buggy, "KeyError: 'in the provider'")):
		model = ScriptedModel([reply])
		agent = OpenMolt(entry_points=False).create_agent(
			name="A", model=model, capabilities=[Wraps("neither")]
		)
		with pytest.raises(RunError) as caught:
			await agent.run("pay")
		assert said in str(caught.value) and "acme-wrap" not in str(caught.value)
		assert not isinstance(caught.value.__cause__, PluginError)


async def test_an_openmolt_error_a_hook_raises_passes_as_it_is() -> None:
	"""A capability's own OpenMoltError is its word: it is not wrapped."""
	own = ToolError("the audit service refused the call", tool="local.pay")
	error, _ = await run_with(Raises("before_tool", own))
	assert error.__cause__ is own and "PluginError" not in str(error)


class NamedHere(Capability):
	"""Sets its name in ``__init__``, as a plugin author might."""

	def __init__(self, name: str) -> None:
		self.name = name  # type: ignore[misc]  # the mistake under test


def test_a_name_set_on_the_instance_is_refused_with_the_fix() -> None:
	"""The loop reads the class's name: a name set on the instance is refused, saying where."""
	from openmolt import ConfigurationError

	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=r"NamedHere sets its name on the instance"):
		om.create_agent(name="A", model=ScriptedModel([]), capabilities=[NamedHere("acme")])
	with pytest.raises(ConfigurationError, match=r"set it on the class instead \(name = 'acme'\)"):
		om.create_agent(name="A", model=ScriptedModel([]), capabilities=[NamedHere("acme")])


@dataclass(slots=True, kw_only=True)
class Finished(Event):
	name: str = "finish"


def test_an_event_name_is_the_loops_or_one_capabilitys() -> None:
	"""A capability may not register the loop's event names, nor another capability's."""
	from openmolt import ConfigurationError
	from openmolt_core.hooks import Hooks

	finishes = type("Finishes", (Capability,), {"name": "acme-fin", "events": {"finish": Finished}})
	with pytest.raises(
		ConfigurationError, match=r"'finish', which the loop already emits.*'acme-fin:finish'"
	):
		Hooks([finishes()])
	first = type("First", (Capability,), {"name": "acme-a", "events": {"acme:done": Finished}})
	second = type("Second", (Capability,), {"name": "acme-b", "events": {"acme:done": Finished}})
	with pytest.raises(ConfigurationError, match=r"'acme:done', which capability 'acme-a' already"):
		OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([]), capabilities=[first(), second()]
		)
	assert Hooks([first()]).event_names() == {"acme:done"}


@dataclass(slots=True, kw_only=True)
class Counted(Event):
	"""The till counted the step's coins."""

	name: str = "till-desc:counted"


def test_every_event_name_is_described_for_readers_of_stored_events() -> None:
	"""The loop's names and a capability's registered one say what happened and who emits it."""
	from openmolt_core.events import EVENT_NAMES, describe_event
	from openmolt_core.hooks import Hooks

	for name in EVENT_NAMES:
		info = describe_event(name)
		assert info is not None and info.by == "" and info.about, name
		assert "`" not in info.about and "(*," not in info.about
	assert describe_event("till-desc:counted") is None  # no agent of this process has it yet
	counts = type(
		"Counts", (Capability,), {"name": "till-desc", "events": {"till-desc:counted": Counted}}
	)
	Hooks([counts()])
	info = describe_event("till-desc:counted")
	assert info is not None
	assert (info.by, info.about) == ("till-desc", "The till counted the step's coins.")
	assert describe_event("nobody:said") is None


def _builder(hook: str, answer: Any) -> Capability:
	"""A capability whose building hook ``hook`` answers ``answer`` (or raises it)."""

	def method(self: Any, *args: Any) -> Any:
		if isinstance(answer, Exception):
			raise answer
		return answer

	method.__name__ = hook
	return type("Builds", (Capability,), {"name": "acme-build", hook: method})()


@pytest.mark.parametrize(
	("hook", "answer", "error", "message"),
	[
		("tools", None, TypeError, r"'acme-build': tools returned NoneType; return a list"),
		("tools", [42], "ConfigurationError", r"'acme-build': its tools hook returned what is not"),
		("tools", ValueError("x"), PluginError, r"acme-build: its tools hook raised ValueError"),
		("first_turn", ["x"], TypeError, r"first_turn returned list; return a dict of JSON"),
		("first_turn", KeyError("k"), PluginError, r"its first_turn hook raised KeyError"),
		("builtin_tools", None, TypeError, r"builtin_tools returned NoneType; return a list"),
		("describe_tools", RuntimeError("r"), PluginError, r"its describe_tools hook raised"),
		("fingerprint", {"tools": []}, "ConfigurationError", r"entries \['tools'\] are the agent"),
		("fingerprint", "v1", TypeError, r"fingerprint returned str; return a dict"),
	],
)
async def test_a_building_hook_that_fails_names_the_capability(
	hook: str, answer: Any, error: Any, message: str
) -> None:
	"""A building hook's bug or wrong answer is refused, when the agent is built or first runs."""
	from openmolt import ConfigurationError

	if error == "ConfigurationError":
		error = ConfigurationError
	with pytest.raises(error, match=message):
		agent = OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([finish("ok")]), capabilities=[_builder(hook, answer)]
		)
		agent.fingerprint()
		await agent.run("go")


class Lists(Capability):
	"""Lists tools at run time: ``answer`` (or raises it)."""

	name: ClassVar[str] = "acme-lists"

	def __init__(self, answer: Any) -> None:
		self.answer = answer

	async def list_tools(self) -> Any:
		if isinstance(self.answer, Exception):
			raise self.answer
		return self.answer


def _ping() -> str:
	"""Ping."""
	return "pong"


@pytest.mark.parametrize(
	("answer", "error", "message"),
	[
		(OSError("server gone"), PluginError, r"acme-lists: its list_tools hook raised OSError"),
		(None, TypeError, r"'acme-lists': list_tools returned NoneType; return a list of bound"),
		([_ping], TypeError, r"'acme-lists': list_tools returned function; return a list of bound"),
	],
)
async def test_tools_listed_at_run_time_name_the_capability_when_wrong(
	answer: Any, error: type[Exception], message: str
) -> None:
	"""A list_tools that fails or lists what is not a bound tool is refused, naming itself."""
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([finish("ok")]), capabilities=[Lists(answer)]
	)
	with pytest.raises(error, match=message):
		await agent.run("go")


@pytest.mark.parametrize("kind", [OSError, PluginError])
async def test_a_list_tools_failure_shows_no_secret(kind: type[Exception]) -> None:
	"""What a list_tools hook raised names the capability with the instance's secrets masked,
	as a run's failure does (it reaches the caller, and a durable store, as it is)."""
	key = "sk-live-7Hq2PzX9wLmN4vB"
	failure = (
		OSError(f"GET https://tools.acme.example/?key={key}: 401")
		if kind is OSError
		else PluginError(f"listing with {key} refused", plugin="acme")
	)
	om = OpenMolt(entry_points=False)
	om.secrets.add(key)
	agent = om.create_agent(
		name="A", model=ScriptedModel([finish("ok")]), capabilities=[Lists(failure)]
	)
	with pytest.raises(PluginError) as caught:
		await agent.run("go")
	assert key not in str(caught.value) and "[redacted]" in str(caught.value)
	assert key not in json.dumps(caught.value.to_dict())


@pytest.mark.parametrize(
	("decision", "message"),
	[
		(Stop("no", status="waiting"), r"Stop with status 'waiting'; give one of success"),
		(Stop("no", status="approval_required"), r"Stop with status 'approval_required'"),
		(
			Park("wait", status="paused"),
			r"Park with status 'paused'; give one of approval_",
		),  # type: ignore[arg-type]
		(Park("wait", request=["x"]), r"Park with a request that is a list; give a dict"),  # type: ignore[arg-type]
		(Refuse("no", entry="nope"), r"Refuse with an entry that is a str; give a dict or None"),  # type: ignore[arg-type]
		(Refuse(42), r"Refuse with a reason that is a int; give text"),  # type: ignore[arg-type]
		(Proceed(input="x"), r"Proceed with an input that is a str; give a dict or None"),  # type: ignore[arg-type]
	],
)
async def test_a_decision_the_loop_cannot_keep_is_refused(decision: Any, message: str) -> None:
	"""A decision with a status the run cannot end in, or fields of the wrong shape, names the fix."""
	error, till = await run_with(Decides(decision))
	assert re.search(rf"capability 'acme-decides': before_tool answered {message}", str(error))
	assert till.ran == [] and error.result.status == "error"


class Decides(Capability):
	"""Answers every call with ``decision``."""

	name: ClassVar[str] = "acme-decides"

	def __init__(self, decision: Any) -> None:
		self.decision = decision

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		return self.decision


class Guards(Capability):
	"""A guard that means to keep only its before_tool on the path, and may misspell it."""

	name: ClassVar[str] = "acme-guards"

	def __init__(self, active: Any) -> None:
		self.active = active

	def active_hooks(self) -> Any:
		return self.active

	async def before_tool(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		return Refuse("guarded")

	async def before_finish(self, run: Run, finish: Finish) -> Any:
		return Refuse("guarded")


@pytest.mark.parametrize(
	("active", "message"),
	[
		({"before_tools"}, r"names \['before_tools'\], which are not run hooks"),
		("before_tool", r"returned str; return a set of hook names"),
	],
)
def test_active_hooks_that_name_no_hook_are_refused(active: Any, message: str) -> None:
	"""A misspelt active hook would leave the guard off silently: it is refused instead."""
	from openmolt import ConfigurationError

	with pytest.raises(ConfigurationError, match=rf"Guards.active_hooks\(\) {message}"):
		OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([]), capabilities=[Guards(active)]
		)
	hooks = (
		OpenMolt(entry_points=False)
		.create_agent(name="B", model=ScriptedModel([]), capabilities=[Guards({"before_tool"})])
		._hooks
	)
	assert len(hooks.before_tool) == 1 and not any(
		type(h.__self__) is Guards for h in hooks.before_finish
	)


@pytest.mark.parametrize(
	("method", "meant"),
	[
		("before_tools", "before_tool"),
		("describe_tool", "describe_tools"),
		("on_run_started", "on_run_start"),
	],
)
def test_a_method_named_almost_like_a_hook_is_refused(method: str, meant: str) -> None:
	"""A misspelt hook would never be called (a guard left off): it is refused, with the hook meant."""
	from openmolt import ConfigurationError

	async def hook(self: Any, *args: Any) -> Any:
		return Refuse("guarded")

	misspelt = type("Misspelt", (Capability,), {"name": "acme-misspelt", method: hook})
	with pytest.raises(ConfigurationError, match=rf"Misspelt.{method} is not a hook.*'{meant}'"):
		OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([]), capabilities=[misspelt()]
		)
	helper = type("Helper", (Capability,), {"name": "acme-helper", "_before_tools": hook})
	OpenMolt(entry_points=False).create_agent(
		name="B", model=ScriptedModel([]), capabilities=[helper()]
	)


def test_a_hook_written_sync_or_async_against_its_contract_is_refused() -> None:
	"""before_tool written sync (awaited by the loop), tool_done written async (never awaited)."""
	from openmolt import ConfigurationError

	def sync_before(self: Any, run: Any, call: Any, tool: Any) -> Any:
		return Proceed()

	async def async_done(self: Any, run: Any, call: Any, index: Any, entry: Any) -> None:
		return None

	om = OpenMolt(entry_points=False)
	sync = type("SyncGuard", (Capability,), {"name": "acme-sync", "before_tool": sync_before})
	with pytest.raises(
		ConfigurationError, match=r"SyncGuard.before_tool must be written async def"
	):
		om.create_agent(name="A", model=ScriptedModel([]), capabilities=[sync()])
	late = type("LateDone", (Capability,), {"name": "acme-late", "tool_done": async_done})
	with pytest.raises(
		ConfigurationError, match=r"LateDone.tool_done must be written def \(not async"
	):
		om.create_agent(name="A", model=ScriptedModel([]), capabilities=[late()])


class Reserves(Capability):
	"""Names the steps it journals itself: ``answer``, whatever that is."""

	name: ClassVar[str] = "acme-reserves"

	def __init__(self, answer: Any) -> None:
		self.answer = answer

	def reserve_steps(self, run: Run, call: CallTool, tool: ToolSpec) -> Any:
		return self.answer


@pytest.mark.parametrize(
	"answer", [None, 3, "guard:1", ["ok", 2], {"acme:1:a", "acme:1:b"}, frozenset({"acme:1"})]
)
async def test_reserve_steps_that_answers_no_list_of_keys_names_the_capability(answer: Any) -> None:
	"""A reserve_steps that forgot its return (None) or answers no list of text is refused,
	naming the capability and the fix (None failed as 'NoneType' object is not iterable). A set
	is refused too: the port numbers the reserved steps in the order named, and a set's order
	of text changes from one process to the next (hash seeds), so a durable run recovered in
	another process would find other steps under the numbers it journaled."""
	model = ScriptedModel([[call_tool("local._ping"), call_tool("local._ping")], finish("ok")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=[_ping], capabilities=[Reserves(answer)]
	)
	with pytest.raises(RunError, match=r"'acme-reserves': reserve_steps returned \w+; return a"):
		await agent.run("go")


class Answers2(Capability):
	"""The hooks whose first non-None answer is taken, each answering ``answers[hook]``."""

	name: ClassVar[str] = "acme-first"

	def __init__(self, **answers: Any) -> None:
		self.answers = answers

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		if "why_hidden" in self.answers:
			return tuple(h for h in handles if h != "local.pay")  # so its call asks why_hidden
		return handles

	def why_hidden(self, state: RunState, handle: str) -> Any:
		return self.answers.get("why_hidden")

	def send_model(self, run: Run) -> Any:
		return self.answers.get("send_model")


@pytest.mark.parametrize(
	("hook", "answer", "fix"),
	[
		("why_hidden", 42, r"why_hidden returned int; return the reason as text, or None"),
		("why_hidden", ["no"], r"why_hidden returned list; return the reason as text"),
		("send_model", "openai", r"send_model returned str; return an async send\(provider"),
	],
)
async def test_a_first_answer_hook_of_the_wrong_kind_names_the_capability(
	hook: str, answer: Any, fix: str
) -> None:
	"""why_hidden, send_model: a wrong kind of answer is named, not used."""
	till = Till()
	pay = call_tool("local.pay", amount=5)
	model = ScriptedModel([[pay, pay], finish("paid")])  # a batch
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=model, tools=till.tools, capabilities=[Answers2(**{hook: answer})]
	)
	with pytest.raises((RunError, TypeError)) as caught:
		await agent.run("pay")
	assert "capability 'acme-first'" in str(caught.value)
	assert re.search(fix, str(caught.value))
	assert till.ran == []


class Watches(Capability):
	"""Runs ``check`` alongside the first model call (whatever ``check`` is)."""

	name: ClassVar[str] = "acme-watches"

	def __init__(self, check: Any) -> None:
		self.check = check

	async def before_first_model(self, run: Run) -> Any:
		return Alongside(self.check)


async def _raises(text: str) -> None:
	raise KeyError(text)


async def _tripped() -> Any:
	return "tripped"


async def _parked() -> Any:
	return Stop("wait", status="approval_required")  # type: ignore[arg-type]


@pytest.mark.parametrize(
	("check", "fix"),
	[
		("nope", r"'acme-watches': before_first_model returned Alongside; return "),
		(lambda: None, r"'acme-watches': before_first_model returned NoneType; return "),
		(
			lambda: _raises("boom"),
			r"capabilities:acme-watches.*before_first_model hook raised KeyError",
		),
		(_tripped, r"'acme-watches': before_first_model returned str; return Stop"),
		(_parked, r"'acme-watches': .* answered Stop with status 'approval_required'"),
	],
)
async def test_a_check_alongside_the_first_call_that_fails_names_the_capability(
	check: Any, fix: str
) -> None:
	"""A check run alongside the first model call that is no async function, raises, or answers
	what is not a Stop (or a Stop a run cannot end in) ends the run naming the capability and the
	fix; it failed as 'the run failed unexpectedly: ExceptionGroup' (or read the answer's
	``status`` off a string)."""
	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([finish("ok")]), capabilities=[Watches(check)]
	)
	with pytest.raises(RunError) as raised:
		await agent.run("go")
	assert re.search(fix, f"{raised.value} {raised.value.__cause__!r}"), (
		f"{raised.value} / {raised.value.__cause__!r}"
	)
	assert "ExceptionGroup" not in str(raised.value)
