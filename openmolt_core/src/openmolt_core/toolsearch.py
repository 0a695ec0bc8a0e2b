"""Tool search: the model sees a catalog, searches it, and loads only the tools it needs.

An agent given five integrations holds about 80 tools. Listing every description and input schema
in the first message costs some 70 kB at every step, and models choose worse as the list grows.
With ``create_agent(tool_loading="search")`` the first message lists instead:

- a catalog, one line per integration: its id, name, description and the names of its tools;
- two built-in tools, ``openmolt.searchTools`` and ``openmolt.loadTools``.

| tool | input | result |
| --- | --- | --- |
| ``openmolt.searchTools`` | ``query``; optional ``integration``, ``limit`` | the best matches: handle and a short description |
| ``openmolt.loadTools`` | ``tools``: handles, or integration ids (all of its tools) | each tool's description and input schema |

A loaded tool can be called from the next step on: its description arrives as the result of
``loadTools`` (so the system prompt and the first message stay byte-identical, and cached), and the
reply schema grows to admit it. The loaded set is part of the run's state (``RunState.loaded``), so
a resumed run keeps its tools, and compaction keeps the loaded tools' descriptions. Calling a tool
that was not loaded is refused with an error that names ``openmolt.loadTools``.

Search and load are built-in tools, not commands: a model already knows how to call a tool; they
need no change to the command protocol, the prompt or the parser; and like every tool call they
are validated at parse time, journaled through the durability port (an embedding search is I/O),
reported as ``tool:call``/``tool:response`` events and may run concurrently.

Scopes still apply: the catalog, the search and the loads hold only the tools the agent's scopes
allow, and a tool they exclude is "unknown" to a searching agent, never revealed.

Search is by keyword (`KeywordSearch`, BM25 over handles and descriptions). Anything with an async
``rank(query, entries, limit=)`` method can replace it (`ToolSearcher`); `EmbeddingSearch` ranks by
the similarity of embeddings from a function you give it, fused with the keyword ranking.

```python
agent = om.create_agent(
	name="Assistant",
	model="openai:gpt-5-mini",
	integrations=["gmail", "googleSheets", "notion", "slack", "github"],
	tool_loading=ToolSearch(searcher=EmbeddingSearch(embed), pinned=["slack.postMessage"]),
)
```
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = [
	"AUTO_SEARCH_ABOVE",
	"LOAD_TOOL",
	"MAX_LOAD",
	"SEARCH_TOOL",
	"CatalogEntry",
	"Embed",
	"EmbeddingSearch",
	"KeywordSearch",
	"ToolLoading",
	"ToolSearch",
	"ToolSearcher",
	"words",
]

SEARCH_TOOL = "openmolt.searchTools"
"""The built-in tool that searches the catalog."""

LOAD_TOOL = "openmolt.loadTools"
"""The built-in tool that loads tools from the catalog."""

AUTO_SEARCH_ABOVE = 30
"""With ``tool_loading="auto"``, an agent with more tools than this searches."""

MAX_LOAD = 20
"""The most tools one ``loadTools`` call loads (each description costs bytes at every step)."""

ToolLoading = Literal["all", "search", "auto"]
"""``all``: every tool is listed (the default); ``search``: a catalog and search; ``auto``: search
when the agent has more than `AUTO_SEARCH_ABOVE` tools."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
	"""One tool as the search sees it.

	Args:
		handle: The full handle (``gmail.sendMessage``).
		integration: The integration id (``gmail``; ``local`` for tools given as functions).
		integration_name: The integration's display name (``Gmail``).
		description: The tool's description.
	"""

	handle: str
	integration: str
	integration_name: str
	description: str

	@property
	def text(self) -> str:
		"""The text a searcher indexes: handle, integration name and description."""
		return f"{self.handle} ({self.integration_name}): {self.description}"


@runtime_checkable
class ToolSearcher(Protocol):
	"""Ranks catalog entries for a query (keyword by default; embeddings are pluggable)."""

	async def rank(self, query: str, entries: Sequence[CatalogEntry], *, limit: int) -> list[str]:
		"""The handles of the best entries for the query, best first.

		Args:
			query: What the model looks for, in its words.
			entries: The entries to rank (only tools the agent's scopes allow).
			limit: The most handles to return.

		Returns:
			Handles of ``entries``; any other handle is ignored.
		"""
		...


# keyword search -------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP = frozenset(
	"a an and are as at be by can do for from get i in into is it its me my of on or the this "
	"to use with you your".split()
)


def _stem(word: str) -> str:
	# A light stemmer: plurals and the common verb endings, enough for "messages" ~ "message",
	# "sending" ~ "send", "spreadsheets" ~ "spreadsheet".
	if len(word) > 4 and word.endswith("ies"):
		return word[:-3] + "y"
	if len(word) > 5 and word.endswith("ing"):
		return word[:-3]
	if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
		return word[:-2]
	if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
		return word[:-2]
	if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
		return word[:-1]
	return word


def words(text: str) -> list[str]:
	"""The search terms of a text: camelCase and punctuation split, lower case, stemmed.

	Args:
		text: A query, a handle or a description.
	"""
	out = []
	for match in _WORD.finditer(text):
		word = match.group().lower()
		if word not in _STOP:
			out.append(_stem(word))
	return out


@dataclass(slots=True)
class _Index:
	entries: Sequence[CatalogEntry]
	terms: list[Counter[str]]
	lengths: list[float]
	average: float
	frequency: Counter[str]
	vocabulary: frozenset[str]


class KeywordSearch:
	"""BM25 over each tool's handle, integration and description (no dependency, no I/O).

	The words of the tool's own name count three times, the integration's twice, so "send
	message" finds ``gmail.sendMessage`` before a tool that only mentions messages. A query word
	of four letters or more also matches the words it begins (``spread`` finds spreadsheets).

	Args:
		k1: BM25's term-frequency saturation.
		b: BM25's length normalization.
	"""

	__slots__ = ("_b", "_index", "_k1")

	def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
		self._k1 = k1
		self._b = b
		self._index: _Index | None = None

	def _build(self, entries: Sequence[CatalogEntry]) -> _Index:
		index = self._index
		if index is not None and index.entries is entries:
			return index
		terms: list[Counter[str]] = []
		for entry in entries:
			name = entry.handle.partition(".")[2] or entry.handle
			counts: Counter[str] = Counter()
			for word in words(name):
				counts[word] += 3
			for word in words(f"{entry.integration} {entry.integration_name}"):
				counts[word] += 2
			for word in words(entry.description):
				counts[word] += 1
			terms.append(counts)
		lengths = [float(sum(c.values())) for c in terms]
		frequency: Counter[str] = Counter()
		for counts in terms:
			frequency.update(counts.keys())
		index = _Index(
			entries,
			terms,
			lengths,
			(sum(lengths) / len(lengths)) if lengths else 0.0,
			frequency,
			frozenset(frequency),
		)
		self._index = index
		return index

	def scores(self, query: str, entries: Sequence[CatalogEntry]) -> list[float]:
		"""The BM25 score of each entry for the query (0 when nothing matches).

		Args:
			query: The query.
			entries: The entries, in order.
		"""
		index = self._build(entries)
		n = len(entries)
		out = [0.0] * n
		for word in dict.fromkeys(words(query)):
			matches = [(word, 1.0)] if word in index.vocabulary else []
			if len(word) >= 4:
				matches += [(w, 0.5) for w in index.vocabulary if w != word and w.startswith(word)]
			for term, weight in matches:
				df = index.frequency[term]
				idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
				for i, counts in enumerate(index.terms):
					tf = counts.get(term, 0)
					if tf:
						norm = 1 - self._b + self._b * index.lengths[i] / (index.average or 1.0)
						out[i] += weight * idf * tf * (self._k1 + 1) / (tf + self._k1 * norm)
		return out

	async def rank(self, query: str, entries: Sequence[CatalogEntry], *, limit: int) -> list[str]:
		"""The handles that match the query best, best first (ties keep the catalog's order)."""
		scores = self.scores(query, entries)
		order = sorted(range(len(entries)), key=lambda i: -scores[i])
		return [entries[i].handle for i in order[:limit] if scores[i] > 0]


# embedding search -----------------------------------------------------------------------------

Embed = Callable[[Sequence[str]], Awaitable[Sequence[Sequence[float]]]]
"""An async function that returns one embedding vector per text, in order."""

_RRF = 60  # reciprocal rank fusion's constant, as in Cormack et al. (2009)


class EmbeddingSearch:
	"""Ranks by the cosine similarity of embeddings, fused with `KeywordSearch`'s ranking.

	The entries are embedded once (on the first search) and kept; each search embeds its query.
	Both calls happen inside the ``searchTools`` tool call, which the durability port journals.

	Args:
		embed: Returns one vector per text (any embedding API or local model).
		keyword: Fuse with the keyword ranking (reciprocal rank fusion), so exact names still
			win; False ranks by similarity alone.
	"""

	__slots__ = ("_embed", "_keyword", "_vectors")

	def __init__(self, embed: Embed, *, keyword: bool = True) -> None:
		self._embed = embed
		self._keyword = KeywordSearch() if keyword else None
		self._vectors: dict[str, Sequence[float]] = {}

	async def _vectors_of(self, texts: Sequence[str]) -> list[Sequence[float]]:
		vectors = list(await self._embed(list(texts)))
		if len(vectors) != len(texts):
			raise ValueError(
				f"the embed function returned {len(vectors)} vectors for {len(texts)} texts"
			)
		return vectors

	async def rank(self, query: str, entries: Sequence[CatalogEntry], *, limit: int) -> list[str]:
		"""The handles most similar to the query, best first."""
		missing = [e.text for e in entries if e.text not in self._vectors]
		if missing:
			self._vectors.update(zip(missing, await self._vectors_of(missing), strict=True))
		(wanted,) = await self._vectors_of([query])
		similarity = [_cosine(wanted, self._vectors[e.text]) for e in entries]
		order = sorted(range(len(entries)), key=lambda i: -similarity[i])
		if self._keyword is None:
			return [entries[i].handle for i in order[:limit]]
		fused = [0.0] * len(entries)
		for rank, i in enumerate(order):
			fused[i] += 1 / (_RRF + rank + 1)
		scores = self._keyword.scores(query, entries)
		by_keyword = sorted(
			(i for i in range(len(entries)) if scores[i] > 0), key=lambda i: -scores[i]
		)
		for rank, i in enumerate(by_keyword):
			fused[i] += 1 / (_RRF + rank + 1)
		best = sorted(range(len(entries)), key=lambda i: -fused[i])
		return [entries[i].handle for i in best[:limit]]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
	dot = sum(x * y for x, y in zip(a, b, strict=False))
	norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
	return dot / norm if norm else 0.0


# the option -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSearch:
	"""How an agent searches and loads its tools: ``create_agent(tool_loading=ToolSearch(...))``.

	``tool_loading="search"`` is ``ToolSearch()``; ``"auto"`` is
	``ToolSearch(above=AUTO_SEARCH_ABOVE)``.

	Args:
		searcher: Ranks the catalog for a query (default: `KeywordSearch`).
		pinned: Tools callable from the first step without loading, listed in full: handles, or
			patterns such as ``"local.*"``.
		limit: How many matches a search returns when the model does not say.
		above: Search only when the agent has more tools than this (0: always); with fewer,
			every tool is listed as usual.
	"""

	searcher: ToolSearcher | None = None
	pinned: Sequence[str] = ()
	limit: int = 8
	above: int = 0

	def __post_init__(self) -> None:
		from openmolt_core.errors import ConfigurationError

		if not isinstance(self.limit, int) or isinstance(self.limit, bool) or self.limit < 1:
			raise ConfigurationError(
				f"ToolSearch.limit must be a whole number >= 1, got {self.limit!r}"
			)
		if not isinstance(self.above, int) or isinstance(self.above, bool) or self.above < 0:
			raise ConfigurationError(
				f"ToolSearch.above must be a whole number >= 0, got {self.above!r}"
			)
		if isinstance(self.pinned, str):
			raise ConfigurationError("ToolSearch.pinned must be a list of handles or patterns")
		if self.searcher is not None and not callable(getattr(self.searcher, "rank", None)):
			raise ConfigurationError(
				"ToolSearch.searcher must have an async rank(query, entries, limit=) method"
			)
