"""Tools listed at run time as a capability: the integrations that carry a `ToolSource`.

An integration whose tools only a running service knows (an MCP server: ``openmolt_mcp`` makes
them) carries a source instead of tools (`openmolt_core.sources`). ``create_agent`` makes one
`SourceBinding` per such integration of the agent (the scope checks of any binding, and the tool
context) and gives them to one `Sources` capability. Its `Sources.list_tools` hook lists every
source at the start of each run, before the first turn is built, and binds the tools again only
when a list changed (a source returns the same sequence while its list holds). `close_sources`
stops the sources when the OpenMolt instance closes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from openmolt_core._binding import BoundTool, secret_values
from openmolt_core.errors import ConfigurationError, IntegrationError, OpenMoltError
from openmolt_core.hooks import Capability
from openmolt_core.secrets import Redactor
from openmolt_core.tools import Tool, ToolContext

if TYPE_CHECKING:
	import httpx

	from openmolt_core.files import FileAccess
	from openmolt_core.integrations.binding import IntegrationBinding
	from openmolt_core.integrations.model import Integration
	from openmolt_core.sources import ToolSource

__all__ = ["SourceBinding", "Sources", "bind_source", "close_sources"]


@dataclass(slots=True)
class SourceBinding:
	"""One agent's use of an integration whose tools come from a `ToolSource`.

	Args:
		integration: The integration (with its id set).
		source: Its tool source.
		binding: The agent's entry for it (granted scopes).
		context: The context its tools run in (config, secrets, file store).
	"""

	integration: Integration
	source: ToolSource
	binding: IntegrationBinding
	context: ToolContext

	@property
	def id(self) -> str:
		"""The integration id, the prefix of its tools' handles."""
		return self.binding.integration

	def bind(self, tools: Sequence[Tool]) -> list[BoundTool]:
		"""Bind listed tools: full handles, and the scopes this agent was granted.

		Raises:
			IntegrationError: A tool needs a scope the integration does not define.
		"""
		spec = self.integration
		granted = None if self.binding.scopes is None else set(self.binding.scopes)
		out = []
		for tool in tools:
			unknown = [s for s in tool.scopes if s not in spec.scopes]
			if unknown:
				raise IntegrationError(
					f"the source listed tool {tool.handle!r} with scope(s) {unknown} that the "
					f"integration does not define (known: {sorted(spec.scopes)})",
					integration=self.id,
				)
			missing = [] if granted is None else [s for s in tool.scopes if s not in granted]
			out.append(
				BoundTool(
					handle=f"{self.id}.{tool.handle}",
					tool=tool,
					context=self.context,
					allowed=not missing,
					missing_scopes=missing,
					integration=spec,
				)
			)
		return out


def bind_source(
	spec: Integration,
	binding: IntegrationBinding,
	*,
	agent: str,
	instance_config: Mapping[str, Any],
	http: Callable[[], httpx.AsyncClient],
	files: FileAccess | None = None,
) -> SourceBinding:
	"""Check an agent's entry for a source integration and make its tool context.

	Args:
		spec: The integration; ``spec.source`` is set.
		binding: The agent's entry for it.
		agent: The agent's name.
		instance_config: Config from ``OpenMolt(integrations={id: {...}})``; the agent's wins.
		http: Getter for the shared HTTP client.
		files: The agent's view of the file store (images and resources the tools return).

	Raises:
		ConfigurationError: A granted scope is unknown to the integration.
	"""
	iid = binding.integration
	source = spec.source
	if source is None:  # pragma: no cover - create_agent only calls this for sources
		raise ConfigurationError(f"integrations[{iid}] lists its tools; it has no source")
	from openmolt_core.integrations.binding import check_scopes

	check_scopes(binding, spec)
	config = {**instance_config, **binding.config}
	context = ToolContext(
		agent=agent,
		integration=iid,
		config=config,
		http=http,
		redact=frozenset(secret_values(config)) | frozenset(source.secrets),
		files=files,
	)
	return SourceBinding(integration=spec, source=source, binding=binding, context=context)


class Sources(Capability):
	"""List the tools of an agent's source integrations at the start of each run, and bind them.

	Args:
		bindings: One `SourceBinding` per source integration, in the agent's order.
	"""

	__slots__ = ("_bindings", "_bound", "_listed")

	name = "tool-sources"
	# The tools it lists are in the fingerprint (schemas, handles) once listed.
	in_fingerprint: ClassVar[bool] = False

	def __init__(self, bindings: Sequence[SourceBinding]) -> None:
		self._bindings = tuple(bindings)
		self._listed: list[Sequence[Tool]] | None = None
		self._bound: Sequence[BoundTool] = ()

	@property
	def bindings(self) -> tuple[SourceBinding, ...]:
		"""The source integrations, in the agent's order."""
		return self._bindings

	async def list_tools(self) -> Sequence[BoundTool]:
		"""List every source's tools (at once); bind them again if a list changed.

		Returns:
			The bound tools: the same sequence as last time when no list changed.

		Raises:
			IntegrationError: A source could not list its tools (the message is redacted).
		"""
		lists: list[Sequence[Tool]] = [()] * len(self._bindings)

		async def one(index: int, binding: SourceBinding) -> None:
			lists[index] = await _list(binding)

		if len(self._bindings) == 1:
			await one(0, self._bindings[0])
		else:
			async with anyio.create_task_group() as tg:
				for index, binding in enumerate(self._bindings):
					tg.start_soon(one, index, binding)
		previous = self._listed
		if previous is not None and all(a is b for a, b in zip(lists, previous, strict=True)):
			return self._bound
		bound: list[BoundTool] = []
		for binding, listed in zip(self._bindings, lists, strict=True):
			bound.extend(binding.bind(listed))
		self._listed, self._bound = lists, bound
		return bound


async def _list(binding: SourceBinding) -> Sequence[Tool]:
	try:
		return await binding.source.list_tools()
	except IntegrationError as exc:
		message = str(exc).removeprefix(f"{exc.integration}: ")
		raise IntegrationError(_redacted(binding, message), integration=binding.id) from None
	except OpenMoltError as exc:
		raise IntegrationError(_redacted(binding, str(exc)), integration=binding.id) from None
	except Exception as exc:
		message = f"its tools could not be listed: {type(exc).__name__}: {exc}"
		raise IntegrationError(_redacted(binding, message), integration=binding.id) from None


def _redacted(binding: SourceBinding, text: str) -> str:
	return Redactor(binding.context.redact)(text)


async def close_sources(sources: Iterable[ToolSource]) -> None:
	"""Close tool sources, shielded from cancellation so no service outlives its instance.

	A source that fails to close is logged and the others are still closed.
	"""
	import logging

	with anyio.CancelScope(shield=True):
		for source in list(sources):
			try:
				await source.aclose()
			except Exception:
				logging.getLogger("openmolt").exception("a tool source failed to close")
