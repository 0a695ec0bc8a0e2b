"""The tools of one agent as its runs see them: listed, callable now, loadable, and built in.

An agent's first message lists some tools (all of them, or with tool search the built-in search and
load tools and the pinned ones); a run may load more (``RunState.loaded``): tools picked from the
catalog with ``openmolt.loadTools``, and the capabilities' built-in tools they make visible
(`openmolt_core.hooks.Capability.visible_tools`: ``openmolt.readResult`` once a result was
stored). `ToolSet` answers, for a run's state, which tools are callable, the reply envelope that
admits exactly those, why a call is refused, and what a finished call changes in the state. The
loop calls `ToolSet.absorb` with each tool call's journaled entry, outside the journaled step, so a
replayed run rebuilds the same loaded set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from openmolt_core._approve import has_approvals
from openmolt_core._binding import BoundTool, describe_tools
from openmolt_core._suggest import suggestion
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.errors import ToolError
from openmolt_core.hooks import BUILTIN, NO_HOOKS, AgentInfo, Hooks, builds, load_tools
from openmolt_core.prompt import dumps
from openmolt_core.result import RunState
from openmolt_core.tools import ToolContext
from openmolt_core.toolsearch import (
	LOAD_TOOL,
	MAX_LOAD,
	SEARCH_TOOL,
	CatalogEntry,
	KeywordSearch,
	ToolSearch,
)

if TYPE_CHECKING:
	from openmolt_core.files import FileStore

__all__ = ["ToolSet"]

_ENVELOPES = 32  # envelopes kept per agent (one per loaded set seen)
_DESCRIPTION = 160  # characters of a description in search results


_SEARCH_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"query": {"type": "string", "description": "What the tool should do, in a few words."},
		"integration": {"type": "string", "description": "Only this integration's tools."},
		"limit": {"type": "integer", "minimum": 1, "maximum": 25},
	},
	"required": ["query"],
	"additionalProperties": False,
}


class _SearchTool:
	handle = "searchTools"
	labels: tuple[str, ...] = ()  # reads the agent's own tool catalog (`openmolt_core.taint`)
	description = (
		"Search the tool catalog by what you want to do; returns matching tool handles to load "
		"with openmolt.loadTools."
	)
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	def __init__(self, toolset: ToolSet, search: ToolSearch) -> None:
		self.input_schema = _SEARCH_SCHEMA
		self._toolset = toolset
		self._search = search
		self._ranker = search.searcher if search.searcher is not None else KeywordSearch()

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		entries = self._toolset.entries
		integration = input.get("integration")
		if integration:
			entries = tuple(e for e in entries if e.integration == integration)
			if not entries:
				known = sorted({e.integration for e in self._toolset.entries})
				raise ToolError(
					f"no integration {integration!r} in the catalog; "
					+ suggestion(str(integration), known, noun="integrations")
				)
		limit = int(input.get("limit") or self._search.limit)
		ranked = await self._ranker.rank(str(input["query"]), entries, limit=limit)
		by_handle = {e.handle: e for e in entries}
		# A custom searcher could return anything: only catalog entries (scopes allowed) go out.
		matches = [
			{"tool": h, "description": _short(by_handle[h].description)}
			for h in dict.fromkeys(ranked)
			if h in by_handle
		][:limit]
		if not matches:
			return {
				"matches": [],
				"note": "nothing matched; try other words, or load tools by name from the catalog",
			}
		return {"matches": matches, "next": f"load the ones you need with {LOAD_TOOL}"}


_LOAD_SCHEMA: dict[str, Any] = {
	"type": "object",
	"properties": {
		"tools": {
			"type": "array",
			"items": {"type": "string"},
			"minItems": 1,
			"description": "Tool handles (integration.tool) or integration ids.",
		}
	},
	"required": ["tools"],
	"additionalProperties": False,
}


class _LoadTool:
	handle = "loadTools"
	labels: tuple[str, ...] = ()  # loads the agent's own tools' schemas (`openmolt_core.taint`)
	description = (
		f"Load tools from the catalog by handle (or an integration id for all its tools, at most "
		f"{MAX_LOAD} at once); returns their input schemas; call them from your next step."
	)
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	def __init__(self, toolset: ToolSet) -> None:
		self.input_schema = _LOAD_SCHEMA
		self._toolset = toolset

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		toolset = self._toolset
		chosen: list[str] = []
		unknown: list[str] = []
		for name in input["tools"]:
			name = str(name)
			if name in toolset.loadable:
				chosen.append(name)
			elif name in toolset.integrations:
				chosen.extend(toolset.integrations[name])
			else:
				unknown.append(name)
		chosen = list(dict.fromkeys(chosen))
		if len(chosen) > MAX_LOAD:
			raise ToolError(
				f"that is {len(chosen)} tools; load at most {MAX_LOAD} at once (the ones you need "
				f"now), or search with {SEARCH_TOOL}"
			)
		problems = [
			f"{name!r}: {suggestion(name, list(toolset.loadable), noun='tools')}"
			for name in unknown
		]
		if not chosen:
			raise ToolError(
				f"no such tool in the catalog: {'; '.join(problems)}; search with {SEARCH_TOOL}"
			)
		out: dict[str, Any] = {
			"loaded": chosen,
			"tools": [toolset.tools[h].describe() for h in chosen],
			"next": "call them from your next step",
		}
		if problems:
			out["notFound"] = problems
		return out


def _short(text: str) -> str:
	first = text.split(". ")[0].strip()
	return first if len(first) <= _DESCRIPTION else first[: _DESCRIPTION - 1] + "…"


class ToolSet:
	"""Which of an agent's tools a run may call at each step, and the envelope that admits them.

	Args:
		tools: The agent's bound tools by handle (allowed by its scopes or not).
		agent: The agent's name (the built-in tools' context).
		search: The tool-search setting, or None to list every tool.
		hooks: The agent's capabilities: their built-in tools, and which tools they leave
			visible at a step (`openmolt_core.hooks.Capability.visible_tools`).
		files: The agent's view of the file store.
		output_schema: The finish output's schema (for the envelopes).
		human_input: Whether ``requestHumanInput`` is allowed (for the envelopes).
		always: Patterns of tools callable even when searching: the capabilities' own tools
			(the skill loader: the first turn lists the skills, so it stays callable).
		model: The model id the capabilities see (`openmolt_core.hooks.AgentInfo`).
	"""

	__slots__ = (
		"_allowed",
		"_approvals",
		"_base",
		"_envelopes",
		"_fresh",
		"_hooks",
		"_human_input",
		"_order",
		"_output_schema",
		"entries",
		"integrations",
		"loadable",
		"search",
		"tools",
	)

	def __init__(
		self,
		tools: Mapping[str, BoundTool],
		*,
		agent: str,
		search: ToolSearch | None,
		hooks: Hooks = NO_HOOKS,
		files: FileStore | None,
		output_schema: dict[str, Any] | None,
		human_input: bool,
		always: Sequence[str] = (),
		model: str = "",
	) -> None:
		allowed = [t for t in tools.values() if t.allowed]
		if search is not None and len(allowed) <= search.above:
			search = None
		self.search: ToolSearch | None = search
		self._hooks = hooks
		self._output_schema = output_schema
		self._human_input = human_input
		context = ToolContext(agent=agent, integration=BUILTIN, files=files)

		def builtin(tool: Any) -> BoundTool:
			return BoundTool(f"{BUILTIN}.{tool.handle}", tool, context, True, [])

		builtins = [builtin(_SearchTool(self, search)), builtin(_LoadTool(self))] if search else []
		lead: list[BoundTool] = []
		trail: list[BoundTool] = []
		info = AgentInfo(agent, tuple(t.handle for t in allowed), model)
		for cap in hooks.capabilities:
			if builds(cap, "builtin_tools"):
				given = [builtin(t) for t in cap.builtin_tools(info)]
				(lead if type(cap).builtins_lead else trail).extend(given)
		self.tools: dict[str, BoundTool] = {
			**{b.handle: b for b in (*builtins, *lead)},
			**tools,
			**{b.handle: b for b in trail},
		}
		self._order = {h: i for i, h in enumerate(self.tools)}
		# Every tool a run could call, in order: the capabilities hide some at each step.
		self._allowed = tuple(h for h, t in self.tools.items() if t.allowed)
		if search is None:
			self._base: frozenset[str] = frozenset()
			self.loadable: frozenset[str] = frozenset()
		else:
			pinned = {
				t.handle
				for t in allowed
				if any(fnmatchcase(t.handle, p) for p in (*search.pinned, *always))
			}
			self._base = frozenset(b.handle for b in builtins) | pinned
			self.loadable = frozenset(t.handle for t in allowed) - pinned
		self.entries: tuple[CatalogEntry, ...] = tuple(
			_entry(t) for t in allowed if t.handle in self.loadable
		)
		self.integrations: dict[str, list[str]] = {}
		for entry in self.entries:
			self.integrations.setdefault(entry.integration, []).append(entry.handle)
		self._envelopes: dict[tuple[str, ...], Envelope] = {}
		self._fresh = RunState()  # what the first turn lists: a run that loaded nothing
		# Whether callTool carries a reason: some tool of the agent waits for approval (loaded or
		# not, so the reply schema's shape and the prompt stay the same for the whole run).
		self._approvals = has_approvals(tools.values())

	# what the model sees ----------------------------------------------------------------------

	def listing(self, *, schemas_for: Callable[[str], bool] | None = None) -> str:
		"""The first message's tool part: ``"tools":[...]`` (and ``"catalog":[...]`` when searching).

		Args:
			schemas_for: Whether a tool's ``inputSchema`` is listed (default: every tool's); see
				`openmolt_core._binding.describe_tools`.
		"""
		listed = describe_tools([self.tools[h] for h in self.callable()], schemas_for=schemas_for)
		text = f'"tools":{listed}'
		if self.search is None:
			return text
		return f'{text},"catalog":{dumps(self.catalog())}'

	def catalog(self) -> list[str]:
		"""One line per integration: id, name, description and the names of its tools."""
		lines = []
		for integration, handles in self.integrations.items():
			bound = self.tools[handles[0]]
			spec = bound.integration
			name = spec.name if spec is not None else integration
			about = (
				f": {spec.description.rstrip('.')}" if spec is not None and spec.description else ""
			)
			names = ", ".join(h.partition(".")[2] for h in handles)
			lines.append(f"{integration} ({name}){about}. Tools: {names}")
		return lines

	def callable(self, state: RunState | None = None) -> tuple[str, ...]:
		"""The handles a run in this state may call, in the agent's order.

		Args:
			state: The run's state (None: a run that loaded nothing, as the first turn lists).
		"""
		if state is None:
			state = self._fresh
		handles = self._allowed
		if self.search is not None:
			loaded = state.loaded
			handles = tuple(h for h in handles if h not in self.loadable or h in loaded)
		if self._hooks.visible_tools:
			handles = self._hooks.visible(state, handles)
		return handles

	def envelope(self, state: RunState | None = None) -> tuple[tuple[str, ...], Envelope]:
		"""The reply envelope for a run's state, and its key (the callable handles).

		Args:
			state: The run's state (None: a run that loaded nothing).
		"""
		key = self.callable(state)
		envelope = self._envelopes.get(key)
		if envelope is None:
			if len(self._envelopes) >= _ENVELOPES:
				self._envelopes.clear()
			envelope = Envelope.build(
				[ToolSchema(h, self.tools[h].tool.input_schema) for h in key],
				output_schema=self._output_schema,
				human_input=self._human_input,
				approvals=self._approvals,
			)
			self._envelopes[key] = envelope
		return key, envelope

	def kept(self, state: RunState) -> dict[str, Any]:
		"""What compaction must keep of this run's tools: the loaded ones' descriptions.

		The results that carried them (``loadTools``'s) may be summarised away; the tools stay
		callable, so the model must still read their inputs: every tool callable now that the
		first turn did not list.
		"""
		first = set(self.callable())
		loaded = [h for h in self.callable(state) if h not in first]
		if not loaded:
			return {}
		return {"loadedTools": [self.tools[h].describe() for h in loaded]}

	# checking and absorbing -------------------------------------------------------------------

	def refuse(self, handle: str, state: RunState) -> str | None:
		"""Why a call to ``handle`` is refused in this run's state (None: the usual checks apply).

		A searching agent hears of a tool its scopes exclude as of an unknown one.
		"""
		visible = self.callable(state)
		if handle in visible:
			return None
		hidden = self._hooks.hidden(state, handle) if self._hooks.why_hidden else None
		if hidden is not None:
			return hidden
		if self.search is None:
			if handle in self.tools:
				return None  # not granted: the usual message
			hint = suggestion(handle, visible, noun="tools")
			return f"unknown tool {handle!r}; {hint}"
		if handle in self.loadable:
			return (
				f"tool {handle!r} is not loaded yet; load it with {LOAD_TOOL} "
				f'{{"tools": ["{handle}"]}}, then call it from the next step'
			)
		hint = suggestion(handle, [*self.loadable, *self._base], noun="tools")
		return (
			f"unknown tool {handle!r}; {hint}; find tools with {SEARCH_TOOL} and load them with "
			f"{LOAD_TOOL}"
		)

	def absorb(self, state: RunState, handle: str, entry: Any) -> None:
		"""Apply a finished tool call to the run's state: the tools it loaded.

		Called with the journaled entry, outside the journaled step, so a replay does the same.
		"""
		if handle != LOAD_TOOL or not isinstance(entry, dict) or not entry.get("ok"):
			return
		result = entry.get("result")
		if isinstance(result, dict):
			loaded = [h for h in result.get("loaded") or () if h in self.loadable]
			load_tools(state, loaded, self._order)


def _entry(bound: BoundTool) -> CatalogEntry:
	integration, _, _ = bound.handle.partition(".")
	spec = bound.integration
	return CatalogEntry(
		handle=bound.handle,
		integration=integration,
		integration_name=spec.name if spec is not None else integration,
		description=bound.tool.description,
	)
