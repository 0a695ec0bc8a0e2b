"""Tool search: a catalog, built-in search and load tools, a reply schema that grows per run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from openmolt import ConfigurationError, FunctionTool, HumanInputUnavailable, OpenMolt, RunState
from openmolt_core._execute import check
from openmolt_core._parse import parse_reply
from openmolt_core.durability import LOCAL_PORT
from openmolt_core.prompt import dumps
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish
from openmolt_core.toolsearch import (
	AUTO_SEARCH_ABOVE,
	LOAD_TOOL,
	MAX_LOAD,
	SEARCH_TOOL,
	CatalogEntry,
	EmbeddingSearch,
	KeywordSearch,
	ToolSearch,
	words,
)

from ._many import FIVE, instance, slack_ok
from ._schema_strategy import instances

pytestmark = pytest.mark.anyio


def tool_results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
	"""The results the model read in its ``request``-th call (0-based)."""
	return json.loads(model.requests[request].messages[-1].content)["results"]


def variants(schema: dict[str, Any] | None) -> set[str]:
	"""The tool handles a reply schema admits."""
	assert schema is not None
	items = schema["properties"]["commands"]["items"]["anyOf"]
	return {v["properties"]["tool"]["const"] for v in items if "tool" in v.get("properties", {})}


async def test_the_model_searches_loads_calls_and_is_refused_a_tool_it_never_loaded() -> None:
	"""Search, load, call; a call to a tool never loaded is refused naming the load command."""
	seen: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return slack_ok(request)

	model = ScriptedModel(
		[
			call_tool(SEARCH_TOOL, query="post a message to a channel"),
			call_tool(LOAD_TOOL, tools=["slack.postMessage"]),
			call_tool("slack.postMessage", channel="C123", text="Hi"),
			call_tool("gmail.sendMessage", to="a@example.com"),
			finish(result="done"),
		]
	)
	om = instance(api)
	agent = om.create_agent(name="A", model=model, integrations=FIVE, tool_loading="search")
	result = await agent.run("Tell #general hi")
	assert result.status == "success"
	model.assert_consumed()

	matches = tool_results(model, 1)[0]["result"]["matches"]
	assert matches[0]["tool"] == "slack.postMessage"
	loaded = tool_results(model, 2)[0]["result"]
	assert loaded["loaded"] == ["slack.postMessage"]
	assert loaded["tools"][0]["inputSchema"]["required"] == ["channel"]
	assert tool_results(model, 3)[0]["ok"] is True
	assert [str(r.url) for r in seen] == ["https://slack.com/api/chat.postMessage"]
	[refused] = tool_results(model, 4)
	assert refused["ok"] is False
	assert "'gmail.sendMessage' is not loaded yet" in refused["error"]
	assert LOAD_TOOL in refused["error"]
	assert result.state.loaded == ["slack.postMessage"]


async def test_the_first_message_lists_a_catalog_not_the_tools() -> None:
	"""The first message holds one line per integration and the built-ins, no tool schemas."""
	om = instance()
	full = om.create_agent(name="A", model=ScriptedModel([]), integrations=FIVE)
	lean = om.create_agent(
		name="A", model=ScriptedModel([]), integrations=FIVE, tool_loading="search"
	)
	first = json.loads(lean.first_message("go", RunState()))
	assert [t["tool"] for t in first["tools"]] == [SEARCH_TOOL, LOAD_TOOL]
	assert len(first["catalog"]) == 5
	gmail = next(line for line in first["catalog"] if line.startswith("gmail "))
	assert gmail.startswith("gmail (Gmail): Search, read, send") and "sendMessage" in gmail
	assert len(lean.first_message("go", RunState())) * 4 < len(full.first_message("go", RunState()))
	assert variants(lean.envelope.schema()) == {SEARCH_TOOL, LOAD_TOOL}
	every = {f"{i}.{t.handle}" for i in FIVE for t in om.plugins.integration(i).tools}
	assert len(every) >= 77
	assert variants(full.envelope.schema()) == every


async def test_the_prefix_stays_byte_identical_while_the_schema_grows() -> None:
	"""Loading tools changes the reply schema from the next step, never the prompt or first turn."""
	model = ScriptedModel(
		[
			call_tool(LOAD_TOOL, tools=["slack.postMessage", "notion"]),
			call_tool("slack.postMessage", channel="C1", text="x"),
			finish(result="ok"),
		]
	)
	om = instance(slack_ok)
	agent = om.create_agent(name="A", model=model, integrations=FIVE, tool_loading="search")
	result = await agent.run("go")
	assert result.status == "success"
	systems = {r.system for r in model.requests}
	firsts = {r.messages[0].content for r in model.requests}
	assert len(systems) == 1 and len(firsts) == 1
	for earlier, later in zip(model.requests, model.requests[1:], strict=False):
		sent = [m.content for m in earlier.messages]
		assert [m.content for m in later.messages[: len(sent)]] == sent
	before, after, _ = (variants(r.response_schema) for r in model.requests)
	assert before == {SEARCH_TOOL, LOAD_TOOL}
	notion = {h for h in after if h.startswith("notion.")}
	everything = {f"notion.{t.handle}" for t in om.plugins.integration("notion").tools}
	assert notion == everything and 0 < len(notion) <= MAX_LOAD and "slack.postMessage" in after
	assert result.state.loaded[0] == "notion.search"  # the agent's order, not the call's


async def test_scopes_hide_tools_from_the_catalog_search_load_and_calls() -> None:
	"""A tool the scopes exclude is never listed, found, loaded, nor named as existing."""
	model = ScriptedModel(
		[
			call_tool(SEARCH_TOOL, query="send email message"),
			call_tool(LOAD_TOOL, tools=["gmail.sendMessage", "gmail"]),
			call_tool("gmail.sendMessage", raw="eA"),
			finish(result="x"),
		]
	)
	agent = instance().create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "gmail", "scopes": ["read"]}, "slack"],
		tool_loading="search",
	)
	first = agent.first_message("go", RunState())
	assert "sendMessage" not in first and "listMessages" in first
	await agent.run("go")
	found = [m["tool"] for m in tool_results(model, 1)[0]["result"]["matches"]]
	assert found and not any(h in found for h in ("gmail.sendMessage", "gmail.sendDraft"))
	loaded = tool_results(model, 2)[0]["result"]
	assert "gmail.sendMessage" not in loaded["loaded"] and "gmail.listMessages" in loaded["loaded"]
	assert "'gmail.sendMessage'" in loaded["notFound"][0]
	[refused] = tool_results(model, 3)
	assert "unknown tool 'gmail.sendMessage'" in refused["error"]
	assert "scope" not in refused["error"]


async def test_a_custom_searcher_cannot_reveal_what_the_scopes_exclude() -> None:
	"""Handles a searcher returns outside the agent's catalog are dropped."""

	class Leaky:
		async def rank(
			self, query: str, entries: Sequence[CatalogEntry], *, limit: int
		) -> list[str]:
			return ["gmail.sendMessage", "gmail.trashMessage", entries[0].handle]

	model = ScriptedModel([call_tool(SEARCH_TOOL, query="anything"), finish(result="x")])
	agent = instance().create_agent(
		name="A",
		model=model,
		integrations=[{"integration": "gmail", "scopes": ["read"]}],
		tool_loading=ToolSearch(searcher=Leaky()),
	)
	await agent.run("go")
	matches = tool_results(model, 1)[0]["result"]["matches"]
	assert [m["tool"] for m in matches] == ["gmail.listMessages"]


async def test_loaded_tools_survive_a_resume_from_json() -> None:
	"""A run parked after loading a tool resumes, from JSON, with the tool still callable."""
	answers: list[str] = []

	def park(question: str) -> str:
		raise HumanInputUnavailable("later")

	model = ScriptedModel(
		[
			[call_tool(LOAD_TOOL, tools=["slack.postMessage"]), ask_human("Which channel?")],
			lambda request: (
				answers.append(request.messages[-1].content)
				or call_tool("slack.postMessage", channel="C9", text="hi")
			),
			finish(result="sent"),
		]
	)
	om = instance(slack_ok)
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=FIVE,
		tool_loading="search",
		on_human_input_request=park,
	)
	parked = await agent.run("go")
	assert parked.status == "human_input_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	assert saved["loaded"] == ["slack.postMessage"]
	again = om.create_agent(
		name="A",
		model=model,
		integrations=FIVE,
		tool_loading="search",
		on_human_input_request=park,
	)
	result = await again.resume(saved, answer="C9")
	assert result.status == "success", result.error
	assert "slack.postMessage" in variants(model.requests[1].response_schema)
	assert tool_results(model, 2)[0]["ok"] is True


async def test_load_by_integration_and_its_limits() -> None:
	"""An integration id loads its tools; too many at once, or only unknown names, are refused."""
	model = ScriptedModel(
		[
			call_tool(LOAD_TOOL, tools=["gmail", "notion"]),
			call_tool(LOAD_TOOL, tools=["nothing.here"]),
			call_tool(LOAD_TOOL, tools=["notion"]),
			finish(result="x"),
		]
	)
	agent = instance().create_agent(name="A", model=model, integrations=FIVE, tool_loading="search")
	result = await agent.run("go")
	too_many = tool_results(model, 1)[0]
	assert not too_many["ok"] and f"at most {MAX_LOAD}" in too_many["error"]
	unknown = tool_results(model, 2)[0]
	assert not unknown["ok"] and SEARCH_TOOL in unknown["error"]
	notion = [h for h in agent.tools if h.startswith("notion.")]
	assert len(tool_results(model, 3)[0]["result"]["loaded"]) == len(notion) <= MAX_LOAD
	assert result.state.loaded == notion


async def test_pinned_tools_are_callable_from_the_first_step() -> None:
	"""Pinned tools are listed in full and callable without loading."""
	model = ScriptedModel(
		[call_tool("slack.postMessage", channel="C1", text="x"), finish(result="x")]
	)
	agent = instance(slack_ok).create_agent(
		name="A",
		model=model,
		integrations=FIVE,
		tool_loading=ToolSearch(pinned=["slack.postM*"]),
	)
	first = json.loads(agent.first_message("go", RunState()))
	assert [t["tool"] for t in first["tools"]] == [SEARCH_TOOL, LOAD_TOOL, "slack.postMessage"]
	assert "postMessage," not in " ".join(first["catalog"])
	await agent.run("go")
	assert tool_results(model, 1)[0]["ok"] is True


@pytest.mark.parametrize(
	("pinned", "message"),
	[
		("postMessage", r"'postMessage' is a tool: did you mean 'slack.postMessage'\?"),
		("slack.postMesage", "did you mean 'slack.postMessage'"),
		("slak.*", "selects none of this agent's tools"),
	],
)
def test_a_pinned_pattern_that_selects_nothing_is_refused(pinned: str, message: str) -> None:
	"""A pin naming no tool of the agent (a bare name, a typo) is an error, not a silent no-op."""
	with pytest.raises(ConfigurationError, match=rf"tool_loading: pinned: .*{message}"):
		instance().create_agent(
			name="A",
			model=ScriptedModel([]),
			integrations=["slack"],
			tool_loading=ToolSearch(pinned=[pinned]),
		)


def test_a_pattern_of_a_capabilitys_run_time_tools_is_taken_as_it_is() -> None:
	"""A capability listing tools at run time (its own handles): its pins and thresholds stand."""
	from openmolt_core._binding import BoundTool
	from openmolt_core.hooks import Capability

	class Lister(Capability):
		name = "lister"

		async def list_tools(self) -> Sequence[BoundTool]:
			return ()

	om = instance()
	for option in (
		{"tool_loading": ToolSearch(pinned=["lister.*"])},
		{"config": {"max_result_chars_per_tool": {"lister.big": 100}}},
	):
		om.create_agent(name="A", model=ScriptedModel([]), capabilities=[Lister()], **option)
	with pytest.raises(ConfigurationError, match="'postMessage' is a tool"):  # still checked
		om.create_agent(
			name="A",
			model=ScriptedModel([]),
			integrations=["slack"],
			tool_loading=ToolSearch(pinned=["postMessage"]),
		)


async def test_auto_searches_only_above_the_threshold() -> None:
	"""tool_loading='auto' lists a few tools as usual and searches many."""
	om = instance()
	few = om.create_agent(
		name="A", model=ScriptedModel([]), integrations=["slack"], tool_loading="auto"
	)
	many = om.create_agent(
		name="A", model=ScriptedModel([]), integrations=FIVE, tool_loading="auto"
	)
	assert len(variants(few.envelope.schema())) == len(few.tools) <= AUTO_SEARCH_ABOVE
	assert variants(many.envelope.schema()) == {SEARCH_TOOL, LOAD_TOOL}


async def test_a_wrong_tool_loading_is_refused_clearly() -> None:
	"""An unknown tool_loading value names the allowed ones."""
	from openmolt import ConfigurationError

	with pytest.raises(ConfigurationError, match="tool_loading must be 'all', 'search', 'auto'"):
		OpenMolt(entry_points=False).create_agent(
			name="A",
			model=ScriptedModel([]),
			tool_loading="lazy",  # type: ignore[arg-type]
		)


async def test_the_id_openmolt_is_reserved() -> None:
	"""No integration may take the built-in tools' prefix."""
	from openmolt import ConfigurationError

	with pytest.raises(ConfigurationError, match="reserved"):
		OpenMolt(entry_points=False).register_integration("openmolt", {"name": "x"})


# ranking ------------------------------------------------------------------------------------


def catalog() -> list[CatalogEntry]:
	from openmolt_core.capabilities.toolsearch import ToolCatalog

	agent = instance().create_agent(
		name="A", model=ScriptedModel([]), integrations=FIVE, tool_loading="search"
	)
	assert agent.envelope  # the tool set is built: the capability holds its catalog
	[search] = [c for c in agent.capabilities if isinstance(c, ToolCatalog)]
	assert search.catalog is not None
	return list(search.catalog.entries)


@pytest.mark.parametrize(
	("query", "expected"),
	[
		("send an email", "gmail.sendMessage"),
		("read spreadsheet cell values", "googleSheets.getValues"),
		("post a message in a slack channel", "slack.postMessage"),
		("open a pull request", "github.createPull"),
		("query a notion database", "notion.queryDataSource"),
		("add a comment on a page", "notion.createComment"),
		("list my repositories", "github.listMyRepos"),
	],
)
async def test_keyword_search_finds_the_obvious_tool(query: str, expected: str) -> None:
	"""BM25 over handles and descriptions puts the tool one would pick in the top three."""
	ranked = await KeywordSearch().rank(query, catalog(), limit=3)
	assert expected in ranked, ranked


def test_words_split_camel_case_and_stem() -> None:
	"""Handles split at camelCase; plurals and verb endings are folded."""
	assert words("gmail.sendMessages") == ["gmail", "send", "message"]
	assert words("Listing the Spreadsheets") == ["list", "spreadsheet"]


async def test_embedding_search_is_pluggable_and_embeds_the_catalog_once() -> None:
	"""A fake embedder ranks by similarity; the entries are embedded on the first search only."""
	vocabulary = ["mail", "sheet", "chat", "code", "note"]
	synonyms = {
		"mail": ("gmail", "email", "inbox"),
		"sheet": ("sheets", "spreadsheet", "cells"),
		"chat": ("slack", "channel"),
		"code": ("github", "repository", "pull"),
		"note": ("notion", "page"),
	}
	calls: list[int] = []

	async def embed(texts: Sequence[str]) -> list[list[float]]:
		calls.append(len(texts))
		out = []
		for text in texts:
			lowered = text.lower()
			out.append([float(any(s in lowered for s in synonyms[w])) for w in vocabulary])
		return out

	searcher = EmbeddingSearch(embed, keyword=False)
	entries = catalog()
	ranked = await searcher.rank("something in my inbox", entries, limit=5)
	assert all(h.startswith("gmail.") for h in ranked)
	await searcher.rank("a spreadsheet", entries, limit=5)
	assert calls == [len(entries), 1, 1]
	fused = await EmbeddingSearch(embed).rank("inbox sendMessage", entries, limit=3)
	assert fused[0] == "gmail.sendMessage"


# the schema and the parser agree per state ---------------------------------------------------


def _searching_state() -> tuple[Any, RunState]:
	tools = [
		FunctionTool(
			handle=f"t{i}",
			description=f"tool {i}",
			function=lambda i, c: i,
			input_schema={
				"type": "object",
				"properties": {"n": {"type": "integer"}},
				"required": ["n"],
				"additionalProperties": False,
			},
		)
		for i in range(4)
	]
	agent = OpenMolt(entry_points=False).create_agent(
		name="P", model=ScriptedModel([]), tools=tools, tool_loading="search"
	)
	state = RunState(loaded=["local.t1", "local.t3"])
	return agent, state


AGENT, STATE = _searching_state()
_, ENVELOPE = AGENT._tool_set().envelope(STATE)
VALIDATOR = jsonschema.Draft202012Validator(ENVELOPE.schema())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(ENVELOPE.schema()))
def test_every_reply_a_runs_schema_accepts_the_parser_accepts(reply: Any) -> None:
	"""With tools loaded, what the grown schema admits the parser runs (and only those tools)."""
	ctx = AGENT._context(STATE, LOCAL_PORT)
	parsed = parse_reply(json.dumps(reply), dumps=dumps, check=check(ctx))
	assert not parsed.errors, (reply, parsed.errors)


@pytest.mark.parametrize(
	("tool", "why"),
	[
		("local.t0", "is not loaded yet"),
		("local.t2", "is not loaded yet"),
		("openmolt.readResult", "no result of this run was stored yet"),  # offload answers first
		("local.nope", "unknown tool"),
	],
)
def test_a_tool_outside_the_runs_schema_is_refused_by_the_parser(tool: str, why: str) -> None:
	"""Tools not loaded (and readResult before a stored result) are refused, as the schema does."""
	reply = {"commands": [{"type": "callTool", "tool": tool, "input": {"n": 1}}]}
	assert not VALIDATOR.is_valid(reply)
	ctx = AGENT._context(STATE, LOCAL_PORT)
	parsed = parse_reply(json.dumps(reply), dumps=dumps, check=check(ctx))
	assert parsed.errors and tool in parsed.errors[0] and why in parsed.errors[0]


async def test_a_searching_agent_can_always_load_its_skills() -> None:
	"""The skill loader stays listed and callable: the first turn names the skills."""
	from openmolt_core.skills import Skill

	skill = Skill(name="posting", description="How we post.", instructions="Be brief.")
	model = ScriptedModel([call_tool("skills.load", name="posting"), finish(result="x")])
	agent = instance().create_agent(
		name="A", model=model, integrations=FIVE, tool_loading="search", skills=[skill]
	)
	first = json.loads(agent.first_message("go", RunState()))
	assert [t["tool"] for t in first["tools"]] == [SEARCH_TOOL, LOAD_TOOL, "skills.load"]
	assert first["skills"][0]["name"] == "posting"
	await agent.run("go")
	assert tool_results(model, 1)[0]["result"]["instructions"] == "Be brief."


async def test_a_replayed_run_rebuilds_the_same_loaded_tools() -> None:
	"""Loads are applied outside the journaled call: replaying from the journal loads the same."""
	from ._journal import Journal, drive

	def make() -> Any:
		model = ScriptedModel(
			[
				[
					call_tool(LOAD_TOOL, tools=["slack.postMessage"]),
					call_tool(LOAD_TOOL, tools=["gmail.listMessages"]),
				],
				call_tool("slack.postMessage", channel="C1", text="x"),
				finish(result="ok"),
			]
		)
		return instance(slack_ok).create_agent(
			name="A", model=model, integrations=FIVE, tool_loading="search"
		)

	journal = Journal()
	live = await drive(make(), journal, "run-1")
	assert live.loaded == ["gmail.listMessages", "slack.postMessage"]
	replayed = await drive(make(), Journal(replay=journal.values), "run-1")
	assert replayed.to_dict() == live.to_dict()


async def test_compaction_keeps_the_loaded_tools_descriptions() -> None:
	"""When the steps that loaded tools are summarised, their descriptions stay in the block."""
	from openmolt_core.compaction import CompactionConfig
	from openmolt_core.llm import ModelResponse, Usage

	class Summariser:
		name = "summariser"

		async def generate(self, request: Any) -> ModelResponse:
			return ModelResponse(text="summary", usage=Usage(10, 5, calls=1))

	steps = [call_tool(LOAD_TOOL, tools=["slack.postMessage"])]
	steps += [call_tool("slack.postMessage", channel="C1", text="x" * 400) for _ in range(12)]
	# Each call reports a prompt over the threshold, so every step that can compacts.
	model = ScriptedModel([*steps, finish(result="ok")], usage=Usage(5_000, 5))
	agent = instance(slack_ok).create_agent(
		name="A",
		model=model,
		integrations=FIVE,
		tool_loading="search",
		max_steps=20,
		compaction=CompactionConfig(threshold_tokens=4_000, keep_steps=2),
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	result = await agent.run("go")
	assert result.status == "success", result.error
	block = json.loads(result.state.messages[0].content)["compacted"]
	[kept] = block["loadedTools"]
	assert kept["tool"] == "slack.postMessage" and "inputSchema" in kept
	assert all(LOAD_TOOL not in m.content for m in result.state.messages[1:])


async def test_a_strict_provider_gets_a_lean_catalog() -> None:
	"""Under a constraining dialect the built-ins are listed without input schemas too."""
	from openmolt_core.structured import SchemaDialect

	class Strict(ScriptedModel):
		def schema_dialect(self, model: str) -> SchemaDialect:
			return SchemaDialect("test")

	agent = instance().create_agent(
		name="A", model=Strict([]), integrations=FIVE, tool_loading="search"
	)
	first = json.loads(agent.first_message("go", RunState()))
	assert [t["tool"] for t in first["tools"]] == [SEARCH_TOOL, LOAD_TOOL]
	assert all("inputSchema" not in t for t in first["tools"])
	assert agent.structured_output().mode == "strict"


async def test_a_loaded_tool_that_needs_approval_waits_for_its_decision() -> None:
	"""Loading grants nothing: a loaded tool under an approval rule still asks before it runs."""
	asked: list[str] = []

	async def decide(request: Any) -> Any:
		asked.append(request.tool)
		return request.approve()

	model = ScriptedModel(
		[
			call_tool(LOAD_TOOL, tools=["slack.postMessage"]),
			{**call_tool("slack.postMessage", channel="C1", text="hi"), "reason": "greet"},
			finish(result="ok"),
		]
	)
	agent = instance(slack_ok).create_agent(
		name="A",
		model=model,
		integrations=FIVE,
		tool_loading="search",
		requires_approval=["slack.postMessage"],
		on_approval_request=decide,
	)
	result = await agent.run("go")
	assert result.status == "success", result.error
	assert asked == ["slack.postMessage"]
	assert tool_results(model, 2)[0]["ok"] is True
