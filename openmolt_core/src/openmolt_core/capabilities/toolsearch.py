"""Tool search as a capability: a catalog in the first turn, built-in tools to search and load.

``create_agent(tool_loading="search" | "auto" | ToolSearch(...))`` adds one `ToolCatalog` to
the agent (after the others, offload included, so a capability that hides one of its own tools
says why first). Its hooks:

- `ToolCatalog.builtin_tools`: ``openmolt.searchTools`` and ``openmolt.loadTools``, listed before
  the agent's tools (``builtins_lead``), over a `Catalog` of the agent's tools, built again
  whenever the agent's tool set is (a source listed new tools);
- `ToolCatalog.first_turn`: the ``catalog`` field, right after the tools (``first_turn_lead``);
- `ToolCatalog.visible_tools`: a catalog tool is callable once loaded (``RunState.loaded``);
- `ToolCatalog.why_hidden`: a tool not loaded yet, or unknown, is refused naming the load tool;
- `ToolCatalog.tool_done`: a ``loadTools`` call's entry loads its tools, outside the journaled
  call, so a replay loads the same;
- `ToolCatalog.fingerprint`: the ``tool_search`` entry (search changes the steps a run asks for).

The searchers and the option live in `openmolt_core.toolsearch`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core._support.suggest import suggestion
from openmolt_core.capabilities import load_tools
from openmolt_core.errors import ToolError
from openmolt_core.hooks import BUILTIN, Capability
from openmolt_core.toolsearch import (
	LOAD_TOOL,
	MAX_LOAD,
	SEARCH_TOOL,
	CatalogEntry,
	KeywordSearch,
	ToolSearch,
)

if TYPE_CHECKING:
	from openmolt_core.commands import CallTool
	from openmolt_core.hooks import AgentInfo, Run, ToolSpec
	from openmolt_core.result import RunState
	from openmolt_core.tools import Tool, ToolContext

__all__ = ["Catalog", "LoadToolsTool", "SearchToolsTool", "ToolCatalog"]

_DESCRIPTION = 160  # characters of a description in search results


class Catalog:
	"""The tools a searching agent loads on demand, as one of its tool sets holds them.

	Args:
		records: The agent's tools its scopes allow, in the agent's order.
		pinned: Patterns of tools listed from the first step instead (never loaded).
	"""

	__slots__ = ("entries", "handles", "integrations", "listed", "records")

	def __init__(self, records: Sequence[ToolSpec], pinned: Sequence[str]) -> None:
		self.handles: tuple[str, ...] = tuple(r.handle for r in records)
		"""The handles it was built from (the agent's tools its scopes allow)."""
		kept = [r.handle for r in records if any(fnmatchcase(r.handle, p) for p in pinned)]
		self.listed: tuple[str, ...] = (SEARCH_TOOL, LOAD_TOOL, *kept)
		"""The tools the first turn lists: the built-in ones, then the pinned ones."""
		self.records: dict[str, ToolSpec] = {r.handle: r for r in records if r.handle not in kept}
		"""The loadable tools by handle, in order."""
		self.entries: tuple[CatalogEntry, ...] = tuple(
			CatalogEntry(
				handle=r.handle,
				integration=r.handle.partition(".")[0],
				integration_name=r.integration_name,
				description=r.description,
			)
			for r in self.records.values()
		)
		"""The loadable tools as the searcher sees them."""
		self.integrations: dict[str, list[str]] = {}
		"""The loadable tools' handles by integration id, in order."""
		for entry in self.entries:
			self.integrations.setdefault(entry.integration, []).append(entry.handle)

	def lines(self) -> list[str]:
		"""One line per integration: id, name, description and the names of its tools."""
		lines = []
		for integration, handles in self.integrations.items():
			record = self.records[handles[0]]
			about = record.integration_description
			about = f": {about.rstrip('.')}" if about else ""
			names = ", ".join(h.partition(".")[2] for h in handles)
			lines.append(f"{integration} ({record.integration_name}){about}. Tools: {names}")
		return lines


# the built-in tools -------------------------------------------------------------------------

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


class SearchToolsTool:
	"""The built-in ``openmolt.searchTools`` tool: ranks the catalog for what the model wants.

	Args:
		catalog: The agent's catalog.
		search: The agent's tool-search setting (its searcher and default limit).
	"""

	handle = SEARCH_TOOL.removeprefix(f"{BUILTIN}.")
	labels: tuple[str, ...] = ()  # reads the agent's own tool catalog (`openmolt_core.taint`)
	description = (
		"Search the tool catalog by what you want to do; returns matching tool handles to load "
		"with openmolt.loadTools."
	)
	input_schema = _SEARCH_SCHEMA
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	def __init__(self, catalog: Catalog, search: ToolSearch) -> None:
		self._catalog = catalog
		self._limit = search.limit
		self._ranker = search.searcher if search.searcher is not None else KeywordSearch()

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""The best matches: handle and a short description."""
		entries = self._catalog.entries
		integration = input.get("integration")
		if integration:
			entries = tuple(e for e in entries if e.integration == integration)
			if not entries:
				known = sorted(self._catalog.integrations)
				raise ToolError(
					f"no integration {integration!r} in the catalog; "
					+ suggestion(str(integration), known, noun="integrations")
				)
		limit = int(input.get("limit") or self._limit)
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


class LoadToolsTool:
	"""The built-in ``openmolt.loadTools`` tool: describes tools the next step may call.

	Its result names the tools it loaded; `ToolCatalog.tool_done` makes them callable.

	Args:
		catalog: The agent's catalog.
	"""

	handle = LOAD_TOOL.removeprefix(f"{BUILTIN}.")
	labels: tuple[str, ...] = ()  # loads the agent's own tools' schemas (`openmolt_core.taint`)
	description = (
		f"Load tools from the catalog by handle (or an integration id for all its tools, at most "
		f"{MAX_LOAD} at once); returns their input schemas; call them from your next step."
	)
	input_schema = _LOAD_SCHEMA
	output_schema: dict[str, Any] | None = None
	scopes: Sequence[str] = ()

	def __init__(self, catalog: Catalog) -> None:
		self._catalog = catalog

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""The tools loaded and their descriptions (those not found are named)."""
		catalog = self._catalog
		chosen: list[str] = []
		unknown: list[str] = []
		for name in input["tools"]:
			name = str(name)
			if name in catalog.records:
				chosen.append(name)
			elif name in catalog.integrations:
				chosen.extend(catalog.integrations[name])
			else:
				unknown.append(name)
		chosen = list(dict.fromkeys(chosen))
		if len(chosen) > MAX_LOAD:
			raise ToolError(
				f"that is {len(chosen)} tools; load at most {MAX_LOAD} at once (the ones you need "
				f"now), or search with {SEARCH_TOOL}"
			)
		problems = [
			f"{name!r}: {suggestion(name, list(catalog.records), noun='tools')}" for name in unknown
		]
		if not chosen:
			raise ToolError(
				f"no such tool in the catalog: {'; '.join(problems)}; search with {SEARCH_TOOL}"
			)
		out: dict[str, Any] = {
			"loaded": chosen,
			"tools": [catalog.records[h].describe() for h in chosen],
			"next": "call them from your next step",
		}
		if problems:
			out["notFound"] = problems
		return out


def _short(text: str) -> str:
	first = text.split(". ")[0].strip()
	return first if len(first) <= _DESCRIPTION else first[: _DESCRIPTION - 1] + "…"


# the capability ------------------------------------------------------------------------------


class ToolCatalog(Capability):
	"""List a catalog instead of every tool; the model searches it and loads what it needs.

	One per agent: it keeps the catalog of the agent's latest tool set (`builtin_tools`).

	Args:
		search: The setting (`openmolt_core.toolsearch.ToolSearch`).
		own: The names of the agent's capabilities: their tools stay listed, as pinned ones
			(the first turn names the skills, so ``skills.load`` must be callable).
	"""

	__slots__ = ("_catalog", "_pinned", "search")

	name = "tool-search"
	in_fingerprint: ClassVar[bool] = False  # named through its fingerprint() entry
	builtins_lead: ClassVar[bool] = True
	first_turn_lead: ClassVar[bool] = True

	def __init__(self, search: ToolSearch, *, own: Sequence[str] = ()) -> None:
		self.search: ToolSearch = search
		"""How the agent searches and loads its tools."""
		self._pinned = (*search.pinned, *(f"{name}.*" for name in own))
		self._catalog: Catalog | None = None  # of the agent's latest tool set

	def searches(self, tools: Sequence[str]) -> bool:
		"""Whether an agent with these tools searches (more than ``search.above`` of them).

		Args:
			tools: The handles of the agent's tools its scopes allow.
		"""
		return len(tools) > self.search.above

	@property
	def catalog(self) -> Catalog | None:
		"""The catalog of the agent's latest tool set (None: not built yet, or not searching)."""
		return self._catalog

	def _catalog_for(self, agent: AgentInfo) -> Catalog | None:
		if not self.searches(agent.tools):
			return None
		catalog = self._catalog
		if catalog is None or catalog.handles != agent.tools:
			catalog = self._catalog = Catalog(agent.records, self._pinned)
		return catalog

	def builtin_tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""``openmolt.searchTools`` and ``openmolt.loadTools`` over a new catalog of the tools."""
		self._catalog = None  # the tool set is built again: its tools may have changed
		catalog = self._catalog_for(agent)
		if catalog is None:
			return ()
		return [SearchToolsTool(catalog, self.search), LoadToolsTool(catalog)]

	def first_turn(self, agent: AgentInfo) -> Mapping[str, Any]:
		"""``"catalog": [line, ...]``: one line per integration (see `Catalog.lines`)."""
		catalog = self._catalog_for(agent)
		return {} if catalog is None else {"catalog": catalog.lines()}

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The built-in and pinned tools, and the catalog's tools this run loaded."""
		catalog = self._catalog
		if catalog is None:
			return handles
		records = catalog.records
		loaded = state.loaded
		return tuple(h for h in handles if h not in records or h in loaded)

	def why_hidden(self, state: RunState, handle: str) -> str | None:
		"""A catalog tool not loaded yet; any other tool is unknown (scopes are never revealed)."""
		catalog = self._catalog
		if catalog is None:
			return None
		if handle in catalog.records:
			return (
				f"tool {handle!r} is not loaded yet; load it with {LOAD_TOOL} "
				f'{{"tools": ["{handle}"]}}, then call it from the next step'
			)
		hint = suggestion(handle, [*catalog.records, *catalog.listed], noun="tools")
		return (
			f"unknown tool {handle!r}; {hint}; find tools with {SEARCH_TOOL} and load them with "
			f"{LOAD_TOOL}"
		)

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""A ``loadTools`` call that succeeded: its tools are callable from the next step."""
		catalog = self._catalog
		if call.tool != LOAD_TOOL or catalog is None or not entry.get("ok"):
			return
		result = entry.get("result")
		if isinstance(result, dict):
			loaded = [h for h in result.get("loaded") or () if h in catalog.records]
			load_tools(run.state, loaded, run.tools)

	def fingerprint(self) -> Mapping[str, Any]:
		"""``tool_search``: the pinned tools, the limit, the threshold and the searcher's class."""
		search = self.search
		searcher = type(search.searcher).__name__ if search.searcher is not None else None
		return {"tool_search": [sorted(search.pinned), search.limit, search.above, searcher]}
