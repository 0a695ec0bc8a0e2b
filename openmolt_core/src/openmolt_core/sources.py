"""Tools listed at run time: the `ToolSource` an integration can carry instead of fixed tools.

Most integrations list their tools as data. Some only learn them from a running service: an MCP
server answers ``tools/list`` once it is started, and may change its list later. Such an
integration carries a `ToolSource` (``Integration(name=..., source=...)``) and no ``tools``.

The source is asked for its tools at the start of each run of an agent that uses the integration,
before the first message is built; the first call starts the service. The agent binds the tools it
gets (``<integration>.<tool>`` handles, scopes granted as for any other tool) and keeps them until a
later run receives a different list: the tools never change in the middle of a run, so the prompt
prefix stays the same for a run's whole life (a resumed or recovered run binds the tools its state
records it began with: `openmolt_core._listed`). `OpenMolt.aclose` closes every source its agents used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from openmolt_core.tools import Tool

__all__ = ["ToolSource", "source_gates", "trusts_descriptions"]


@runtime_checkable
class ToolSource(Protocol):
	"""Where an integration's tools come from when they are only known at run time.

	A source caches what it lists: `list_tools` returns the *same* sequence object for as long as
	the list has not changed (that identity is how agents know they can keep their tools), and a
	new one after a change (an MCP server's ``notifications/tools/list_changed``).

	What it lists (names, descriptions, schemas) is text from outside that the model reads: a
	run of an agent that may call one of its tools is tainted from its first model call
	(`openmolt_core.taint`), unless the source has a ``trust_descriptions`` attribute that is
	True, which it sets only when its user said to (an MCP server's ``trust_descriptions``
	option). Without the attribute, the listing is not trusted.
	"""

	secrets: frozenset[str]
	"""Values the source holds that must never be shown (tokens in its environment or headers)."""

	async def list_tools(self) -> Sequence[Tool]:
		"""The tools available now (the first call may start the service).

		Each tool's ``scopes`` must be scopes its integration defines.

		Raises:
			IntegrationError: The service could not be started or did not list its tools.
		"""
		...

	async def aclose(self) -> None:
		"""Stop the service and release what the source holds; a later use may start it again."""
		...


# A source may also have ``gates``, a mapping of the settings that decide what its tools' calls
# may do (JSON: in-doubt policies, labels, scopes), read by `source_gates`.
# A source may also have ``named(id: str) -> None``: ``register_integration`` calls it with the
# id its integration is registered under when that differs from the one it was made with, so the
# source's messages and logs name the integration as the agents know it.


def trusts_descriptions(source: ToolSource) -> bool:
	"""Whether a source says the names, descriptions and schemas it lists are trusted.

	Read from its optional ``trust_descriptions`` attribute, True only when its user said so (an
	MCP server's ``trust_descriptions`` option); a source without it is not trusted. A run of an
	agent that may call a tool of a source not trusted is tainted from its first model call
	(`openmolt_core.capabilities.sources.Sources.on_run_start`), and the source's tool list is
	the untrusted part of the lethal trifecta (`openmolt_core.taint.trifecta`).

	Args:
		source: The tool source.
	"""
	return getattr(source, "trust_descriptions", False) is True


def source_gates(source: ToolSource) -> Mapping[str, Any]:
	"""The settings of a source that decide what its tools' calls may do, as JSON.

	Read from its optional ``gates`` attribute (an MCP server's ``inDoubt``, ``labels``,
	``scopes`` and ``trustDescriptions``), with whether it is trusted (`trusts_descriptions`).
	Its tools are listed only at run time, so an agent's definition cannot read their in-doubt
	policies and labels from its tools: a durable engine reads them here, and keeps a run for a
	worker whose sources say the same (a laxer ``inDoubt`` would make a call in doubt again).

	Args:
		source: The tool source.
	"""
	gates = getattr(source, "gates", None)
	found = dict(gates) if isinstance(gates, Mapping) else {}
	return {**found, "trusted": trusts_descriptions(source)}
