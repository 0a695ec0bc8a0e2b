"""Integrations whose tools come from a ToolSource: listed at run start, rebound on change only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.errors import ConfigurationError, IntegrationError, RunError
from openmolt_core.integrations import FunctionTool, Integration
from openmolt_core.sources import ToolSource
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

pytestmark = pytest.mark.anyio


class FakeSource:
	"""A ToolSource whose list the test changes; counts listings and closes."""

	def __init__(self, tools: Sequence[Any], *, secret: str = "tok-123456") -> None:
		self.tools = tuple(tools)
		self.listed = 0
		self.closed = 0
		self.secrets = frozenset({secret})

	async def list_tools(self) -> Sequence[Any]:
		self.listed += 1
		return self.tools

	async def aclose(self) -> None:
		import anyio

		await (
			anyio.lowlevel.checkpoint()
		)  # a checkpoint: a cancelled caller would stop here without a shield
		self.closed += 1


def _echo(name: str, scopes: Sequence[str] = ()) -> FunctionTool:
	return FunctionTool(
		handle=name,
		description=f"Echo via {name}.",
		function=lambda input, context: {"tool": name, "got": input},
		input_schema={
			"type": "object",
			"properties": {"text": {"type": "string"}},
			"required": ["text"],
		},
		scopes=tuple(scopes),
	)


def _om(source: FakeSource, scopes: dict[str, str] | None = None) -> OpenMolt:
	om = OpenMolt(entry_points=False)
	om.register_integration("srv", Integration(name="Server", scopes=scopes or {}, source=source))
	return om


def test_the_fake_source_satisfies_the_protocol() -> None:
	"""The protocol is runtime-checkable, so a plugin class needs no base class."""
	assert isinstance(FakeSource([]), ToolSource)


async def test_tools_are_listed_at_the_first_run_and_named_integration_dot_tool() -> None:
	"""Nothing is listed by create_agent; the first run lists and the model sees srv.<tool>."""
	source = FakeSource([_echo("say")])
	om = _om(source)
	model = ScriptedModel([call_tool("srv.say", text="hi"), finish(result="done")])
	agent = om.create_agent(name="A", model=model, integrations=["srv"])
	assert source.listed == 0
	result = await agent.run("go")
	assert result.status == "success"
	assert source.listed == 1
	first = model.requests[0].messages[0].content
	tools = json.loads(first)["tools"]
	assert [t["tool"] for t in tools] == ["srv.say"]
	assert tools[0]["inputSchema"]["required"] == ["text"]
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0] == {
		"tool": "srv.say",
		"ok": True,
		"result": {"tool": "say", "got": {"text": "hi"}},
		"untrusted": True,  # the listed tool declares no labels: unknown, so untrusted
	}
	await om.aclose()
	assert source.closed == 1


async def test_input_is_validated_against_the_listed_schema_before_the_call() -> None:
	"""A call missing a required field is refused with the field named; the tool never runs."""
	calls: list[Any] = []
	tool = FunctionTool(
		handle="say",
		description="Say.",
		function=lambda input, context: calls.append(input),
		input_schema={
			"type": "object",
			"properties": {"text": {"type": "string"}},
			"required": ["text"],
		},
	)
	om = _om(FakeSource([tool]))
	model = ScriptedModel([call_tool("srv.say", wrong=1), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["srv"])
	await agent.run("go")
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0]["ok"] is False and "text" in results[0]["error"]
	assert calls == []


async def test_the_tools_are_rebound_only_when_the_list_changes_and_never_mid_run() -> None:
	"""The same list keeps the cached prefix; a new list is seen at the next run's start."""
	source = FakeSource([_echo("one")])
	om = _om(source)

	def change_list(request: Any) -> dict[str, Any]:
		source.tools = (_echo("one"), _echo("two"))  # the server's list changes mid-run
		return call_tool("srv.two", text="x")

	model = ScriptedModel(
		[
			finish(result="r1"),
			change_list,
			finish(result="r2"),
			finish(result="r3"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["srv"])
	await agent.run("first")
	prefix = agent._prefix
	await agent.run("second")
	# During run 2 the list changed: srv.two was unknown to that run.
	results = json.loads(model.requests[2].messages[-1].content)["results"]
	assert results[0]["ok"] is False and "unknown tool" in results[0]["error"]
	assert agent._prefix is prefix  # the unchanged list kept the cached prefix
	await agent.run("third")
	third = json.loads(model.requests[3].messages[0].content)["tools"]
	assert [t["tool"] for t in third] == ["srv.one", "srv.two"]
	assert agent.tools == ["srv.one", "srv.two"]


def _nobody(question: str) -> str:
	raise HumanInputUnavailable(f"no one to ask: {question}")


_PARKS: dict[str, Any] = {"on_human_input_request": _nobody}


async def test_a_resumed_run_binds_the_listed_tools_it_began_with_and_none_listed_since() -> None:
	"""A parked run resumed after its source listed one more tool never sees that tool."""
	source = FakeSource([_echo("one")])
	om = _om(source)
	model = ScriptedModel(
		[
			ask_human("Which text?"),
			call_tool("srv.two", text="x"),
			finish(result="done"),
			finish(result="next"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)
	parked = await agent.run("go")
	assert parked.status == "human_input_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	source.tools = (_echo("one"), _echo("two"))  # the server lists one more tool meanwhile
	later = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)  # elsewhere
	done = await later.resume(saved, answer="hi")
	assert done.status == "success"
	assert "unknown tool 'srv.two'" in model.requests[2].messages[-1].content
	assert "srv.two" not in json.dumps(model.requests[1].response_schema)
	await later.run("next")  # a new run binds what is listed now
	assert later.tools == ["srv.one", "srv.two"]


async def test_a_resumed_run_whose_listed_tool_is_gone_or_changed_stops_with_its_state() -> None:
	"""A tool the run began with that its source no longer lists (or changed) is named; no call."""
	for after in [(_echo("two"),), (_echo("one", ["read"]), _echo("two"))]:
		source = FakeSource([_echo("one"), _echo("two")])
		om = _om(source, scopes={"read": "Read."})
		model = ScriptedModel([ask_human("Which text?")])
		agent = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)
		parked = await agent.run("go")
		saved = parked.state.to_dict()
		source.tools = after
		with pytest.raises(RunError) as caught:
			await agent.resume(saved, answer="hi")
		assert "'srv.one'" in str(caught.value) and "resume the saved state" in str(caught.value)
		assert caught.value.result.state.pending == parked.state.pending
		assert model.calls == 1


async def test_a_run_saved_with_the_older_record_resumes_and_still_sees_a_change() -> None:
	"""A record saved before the digest named what a tool does (no ':') resumes; a tool whose
	description changed since still stops it."""
	source = FakeSource([_echo("one")])
	om = _om(source)
	model = ScriptedModel([ask_human("Which text?"), finish(result="done"), ask_human("Again?")])
	agent = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)
	parked = await agent.run("go")
	saved = parked.state.to_dict()
	listed = saved["ext"]["tool-sources"]["listed"]
	assert all(":" in digest for digest in listed.values())
	listed.update({h: d.partition(":")[0] for h, d in listed.items()})  # as saved before
	done = await agent.resume(json.loads(json.dumps(saved)), answer="hi")
	assert done.status == "success"
	from dataclasses import replace

	source.tools = (replace(_echo("one"), description="Other."),)
	with pytest.raises(RunError, match=r"changed 'srv\.one'"):
		await agent.resume(json.loads(json.dumps(saved)), answer="hi")


async def test_scopes_decide_which_listed_tools_an_agent_sees() -> None:
	"""A tool needing an ungranted scope is listed as hidden, and a call to it is refused."""
	source = FakeSource([_echo("look", ["read"]), _echo("change", ["write"])])
	om = _om(source, scopes={"read": "Read.", "write": "Write."})
	model = ScriptedModel([call_tool("srv.change", text="x"), finish(result="ok")])
	agent = om.create_agent(
		name="A", model=model, integrations=[{"integration": "srv", "scopes": ["read"]}]
	)
	await agent.run("go")
	tools = json.loads(model.requests[0].messages[0].content)["tools"]
	assert [t["tool"] for t in tools] == ["srv.look"]
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0]["ok"] is False and "scope" in results[0]["error"]


def test_an_unknown_granted_scope_fails_at_create_agent() -> None:
	"""Scopes are checked when the agent is made, as for any integration."""
	om = _om(FakeSource([]), scopes={"read": "Read."})
	with pytest.raises(ConfigurationError, match=r"srv\]\.scopes.*admin"):
		om.create_agent(
			name="A",
			model=ScriptedModel([]),
			integrations=[{"integration": "srv", "scopes": ["admin"]}],
		)


async def test_a_listed_tool_with_an_undefined_scope_is_an_integration_error() -> None:
	"""A source may only use the scopes its integration defines."""
	om = _om(FakeSource([_echo("x", ["nope"])]), scopes={"read": "Read."})
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["srv"])
	with pytest.raises(IntegrationError, match="nope"):
		await agent.run("go")


async def test_a_failing_source_fails_the_run_before_any_model_call_with_secrets_redacted() -> None:
	"""A server that cannot start is an IntegrationError naming the integration, secret masked."""

	class Broken(FakeSource):
		async def list_tools(self) -> Sequence[Any]:
			raise OSError("spawn failed with token tok-123456")

	om = _om(Broken([]))
	model = ScriptedModel([])
	agent = om.create_agent(name="A", model=model, integrations=["srv"])
	with pytest.raises(IntegrationError) as caught:
		await agent.run("go")
	assert str(caught.value).startswith("srv: ")
	assert "tok-123456" not in str(caught.value) and "[redacted]" in str(caught.value)
	assert model.requests == []


async def test_source_secrets_are_redacted_from_what_the_model_reads() -> None:
	"""A tool result echoing the source's secret reaches the model masked."""
	tool = FunctionTool(
		handle="leak",
		description="Leak.",
		function=lambda input, context: "the token is tok-123456",
	)
	om = _om(FakeSource([tool]))
	model = ScriptedModel([call_tool("srv.leak"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["srv"])
	await agent.run("go")
	last = model.requests[1].messages[-1].content
	assert "tok-123456" not in last and "[redacted]" in last


async def test_a_listed_tool_cannot_clash_with_a_local_tool() -> None:
	"""Handles stay unique across listed and static tools: no source may be named ``local``."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match="'local' is reserved"):
		om.register_integration("local", Integration(name="L", source=FakeSource([_echo("say")])))


async def test_aclose_closes_each_source_once_even_when_cancelled() -> None:
	"""Sources used by several agents are closed once, inside a cancel shield."""
	import anyio

	source = FakeSource([_echo("say")])
	om = _om(source)
	for name in ("A", "B"):
		om.create_agent(name=name, model=ScriptedModel([]), integrations=["srv"])
	with anyio.CancelScope() as scope:
		scope.cancel()
		await om.aclose()
	assert source.closed == 1


async def test_approval_rules_mark_the_listed_tools_they_select_at_run_time() -> None:
	"""The approvals capability marks tools listed at run start: a selected call parks."""
	source = FakeSource([_echo("say"), _echo("peek")])
	om = _om(source)
	ran: list[str] = []
	model = ScriptedModel([call_tool("srv.say", text="hi"), finish(result="done")])
	agent = om.create_agent(
		name="A", model=model, integrations=["srv"], requires_approval="srv.say"
	)
	agent.on("tool:call", lambda e: ran.append(e.tool))
	result = await agent.run("go")
	assert result.status == "approval_required"
	assert ran == []
	tools = json.loads(model.requests[0].messages[0].content)["tools"]
	assert {t["tool"]: t.get("approval", False) for t in tools} == {
		"srv.say": True,
		"srv.peek": False,
	}
	[request] = agent.approval_requests(result.state)
	assert (request.tool, request.rule) == ("srv.say", "srv.say")
	plain = om.create_agent(name="B", model=ScriptedModel([]), integrations=["srv"])
	assert "approvals" not in plain._hooks.by_name  # free when the agent has no rules


async def test_runs_resumed_at_once_each_bind_the_listed_tools_they_began_with(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Two runs recovered at once (a fresh process: its first run loads the provider) each bind
	their own listed tools: one never calls a tool listed after it began, the other is not
	stopped for a tool its source still lists."""
	import anyio

	from openmolt_core.agent import Agent

	calls: list[str] = []

	def counted(name: str) -> FunctionTool:
		def run(input: Any, context: Any) -> dict[str, Any]:
			calls.append(f"{name}:{input['text']}")
			return {"ok": name}

		tool = _echo(name)
		return FunctionTool(
			handle=name,
			description=tool.description,
			function=run,
			input_schema=tool.input_schema,
		)

	source = FakeSource([counted("one")])
	om = _om(source)

	def two(request: Any) -> dict[str, Any]:
		last = request.messages[-1].content
		if '"results"' in last and "srv.two" in last:
			return finish(result="done")
		answer = "A" if "hi-A" in last else "B"
		return call_tool("srv.two", text=answer)

	model = ScriptedModel([ask_human("Which?"), ask_human("Which?"), *[two] * 4])
	agent = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)
	began_with_one = (await agent.run("a")).state.to_dict()
	source.tools = (counted("one"), counted("two"))
	began_with_two = (await agent.run("b")).state.to_dict()

	prepare = Agent._prepare

	async def first_run(self: Agent) -> None:  # a first run loads its provider in a thread
		await anyio.sleep(0.01)
		await prepare(self)

	monkeypatch.setattr(Agent, "_prepare", first_run)
	later = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)  # elsewhere
	results: dict[str, Any] = {}

	async def resume(key: str, state: dict[str, Any], answer: str) -> None:
		try:
			results[key] = await later.resume(state, answer=answer)
		except RunError as exc:
			results[key] = exc

	async with anyio.create_task_group() as tg:
		tg.start_soon(resume, "A", began_with_one, "hi-A")
		await anyio.sleep(0.001)
		tg.start_soon(resume, "B", began_with_two, "hi-B")
	assert not isinstance(results["B"], RunError), results["B"]
	assert not isinstance(results["A"], RunError), results["A"]
	assert calls == ["two:B"]  # run A began without srv.two: it never ran there


async def test_a_run_that_began_with_no_listed_tools_binds_none_listed_since() -> None:
	"""An empty record is a record: the source listed nothing then, so nothing binds later."""
	source = FakeSource([])
	om = _om(source)
	model = ScriptedModel([ask_human("Which?"), call_tool("srv.one", text="x"), finish("done")])
	agent = om.create_agent(name="A", model=model, integrations=["srv"], **_PARKS)
	parked = await agent.run("go")
	assert parked.state.ext["tool-sources"] == {"listed": {}}
	source.tools = (_echo("one"),)
	done = await agent.resume(parked.state.to_dict(), answer="hi")
	assert done.status == "success"
	assert "unknown tool 'srv.one'" in model.requests[2].messages[-1].content


async def test_a_source_that_never_answers_is_bounded_by_the_run_timeout() -> None:
	"""Listing happens before the run's first step: the run's timeout bounds it too.

	A hung server used to hold ``run()`` for as long as the source allowed (or for ever, for a
	source with no timeout of its own), whatever ``timeout`` the agent was given.
	"""
	import anyio

	class Hung(FakeSource):
		async def list_tools(self) -> Sequence[Any]:
			await anyio.sleep_forever()
			raise AssertionError("unreachable")

	om = _om(Hung([]))
	model = ScriptedModel([])
	agent = om.create_agent(name="A", model=model, integrations=["srv"], timeout=0.2)
	with anyio.fail_after(5):  # without the bound the run would hang here
		with pytest.raises(IntegrationError, match=r"not listed within its run timeout \(0.2 s\)"):
			await agent.run("go")
	assert model.requests == []


async def test_a_sources_listing_taints_the_run_unless_the_source_trusts_it() -> None:
	"""Tool descriptions a source lists are untrusted content: a run starts tainted by them.

	Only a source whose ``trust_descriptions`` is True is trusted; one without the attribute, or
	with a value that is not True, is not (fail closed).
	"""
	for trust, tainted in ((None, True), ("yes", True), (True, False)):
		source = FakeSource([_echo("say")])
		if trust is not None:
			source.trust_descriptions = trust  # type: ignore[attr-defined]
		om = _om(source)
		model = ScriptedModel([finish(result="ok")])
		agent = om.create_agent(name="A", model=model, integrations=["srv"])
		result = await agent.run("go")
		await om.aclose()
		expected = [{"call": "tools:srv", "tool": "the tool list of srv", "step": 0}]
		assert result.state.taint == (expected if tainted else []), trust


async def test_the_trifecta_warning_counts_an_untrusted_tool_list_as_the_untrusted_part() -> None:
	"""A private tool, an outbound one and a source not trusted: warned, and the post is gated.

	The source's tools say they do none of the three (``labels=[]``), yet its listing taints the
	run from its first step, so the policy refuses the post. The warning said nothing: it counted
	only tools labelled ``untrusted``. Now it names the tool list, and says how to trust it.
	"""
	import warnings

	from openmolt_core.taint import LethalTrifectaWarning
	from openmolt_core.tools import tool

	sent: list[str] = []

	@tool(labels=["private"])
	def vault() -> str:
		"""Read the vault."""
		return "the vault"

	@tool(labels=["outbound"])
	def post(text: str) -> str:
		"""Post a text publicly.

		Args:
			text: The text.
		"""
		sent.append(text)
		return "posted"

	for trust in (False, True):
		source = FakeSource([_echo("say")])
		source.trust_descriptions = trust  # type: ignore[attr-defined]
		om = OpenMolt(entry_points=False)
		om.register_integration("srv", Integration(name="Server", source=source, labels={"*": []}))
		model = ScriptedModel([call_tool("local.post", text="hi"), finish(result="ok")])
		agent = om.create_agent(
			name="A",
			model=model,
			integrations=["srv"],
			tools=[vault, post],
			taint_policy="refuse",
		)
		with warnings.catch_warnings(record=True) as caught:
			warnings.simplefilter("always")
			await agent.run("go")
		await om.aclose()
		said = [str(w.message) for w in caught if issubclass(w.category, LethalTrifectaWarning)]
		if trust:
			assert said == [] and sent == ["hi"]
			continue
		assert sent == []  # gated: the run was tainted by the list from its first step
		(message,) = said
		assert "untrusted content (the tool list of srv)" in message, message
		assert "trust_descriptions=True" in message and "refused" in message


class _Binder:
	"""Only what `openmolt_core.hooks.ToolBinder` gives a tool source: no agent behind it."""

	def __init__(self, own: dict[str, Any], lists: list[Sequence[Any]]) -> None:
		self.name, self.timeout = "A", 5.0
		self.own, self.lists = own, lists
		self.bound: dict[str, Any] | None = None

	def own_tools(self) -> dict[str, Any]:
		return self.own

	def sources(self) -> list[str]:
		return ["lister"]

	async def listed(self) -> list[Sequence[Any]]:
		return self.lists

	def redact(self, text: str) -> str:
		return text.replace("tok", "***")

	def failed(self, state: Any, message: str) -> Exception:
		return RuntimeError(message)

	def rebind(self, tools: dict[str, Any]) -> None:
		self.bound = tools


async def test_sources_use_only_the_binder_protocol() -> None:
	"""`Sources` lists, binds and names its errors through the `ToolBinder` it is handed."""
	from openmolt_core.capabilities.sources import Sources

	agent = OpenMolt(entry_points=False).create_agent(
		name="A", model=ScriptedModel([finish("x")]), tools=[_echo("one"), _echo("two")]
	)
	one, two = agent._tools.values()  # bound as the agent binds them
	binder = _Binder({one.handle: one}, [[two]])
	await Sources(()).refresh_tools(binder)
	assert binder.bound == {one.handle: one, two.handle: two}
	clash = _Binder({one.handle: one}, [[one]])
	with pytest.raises(ConfigurationError, match="capability 'lister' lists a tool"):
		await Sources(()).refresh_tools(clash)
