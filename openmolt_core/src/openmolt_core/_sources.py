"""Bind the tools of integrations whose tools are listed at run time (see `openmolt_core.sources`).

``create_agent`` makes one `SourceBinding` per such integration (the scope and credential checks of
any binding, and the tool context); `AgentSources` lists and binds their tools at the start of each
run, returning the agent's new tools only when a list changed. `close_sources` stops them when the
OpenMolt instance closes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core._binding import BoundTool, secret_values
from openmolt_core._redact import Redactor
from openmolt_core.errors import ConfigurationError, IntegrationError, OpenMoltError
from openmolt_core.tools import Tool, ToolContext

if TYPE_CHECKING:
	import httpx

	from openmolt_core._binding import IntegrationBinding
	from openmolt_core.files import FileStore
	from openmolt_core.integrations.model import Integration
	from openmolt_core.sources import ToolSource

__all__ = ["AgentSources", "SourceBinding", "bind_source", "close_sources"]


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
	files: FileStore | None = None,
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
	if binding.scopes is not None:
		unknown = [s for s in binding.scopes if s not in spec.scopes]
		if unknown:
			raise ConfigurationError(
				f"integrations[{iid}].scopes: unknown scope(s) {unknown}; "
				f"{iid} defines: {', '.join(sorted(spec.scopes)) or '(none)'}"
			)
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


class AgentSources:
	"""The source integrations of one agent, and the tools they listed last.

	Args:
		static: The agent's other tools (listed as data), kept first.
		bindings: One `SourceBinding` per source integration, in the agent's order.
	"""

	__slots__ = ("_bindings", "_listed", "_static")

	def __init__(self, static: Mapping[str, BoundTool], bindings: Sequence[SourceBinding]) -> None:
		self._static = dict(static)
		self._bindings = list(bindings)
		self._listed: list[Sequence[Tool]] | None = None

	async def refresh(self) -> dict[str, BoundTool] | None:
		"""List every source's tools (at the start of a run); bind them again if a list changed.

		Returns:
			The agent's whole tool table when it changed (static tools first), else None.

		Raises:
			IntegrationError: A source could not list its tools (the message is redacted).
			ConfigurationError: Two tools would have the same handle.
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
			return None
		tools = dict(self._static)
		for binding, listed in zip(self._bindings, lists, strict=True):
			for bound in binding.bind(listed):
				if bound.handle in tools:
					raise ConfigurationError(
						f"create_agent: tool handle {bound.handle!r} given twice (the source of "
						f"{binding.id!r} lists a tool another integration already has)"
					)
				tools[bound.handle] = bound
		self._listed = lists
		return tools


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
