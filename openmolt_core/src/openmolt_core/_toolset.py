"""The tools of one agent as its runs see them: listed, callable now, and built in.

The capabilities decide which tools a run sees (`openmolt_core.hooks.Capability.visible_tools`;
a run may load more: ``RunState.loaded``). `ToolSet` answers, for a run's state, which tools are
callable, the reply envelope that admits exactly those, and why a call is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openmolt_core._binding import BoundTool, describe_tools
from openmolt_core.envelope import Envelope, ToolSchema
from openmolt_core.hooks import BUILTIN, NO_HOOKS, AgentInfo, Hooks, builds, built, first_answer
from openmolt_core.result import RunState
from openmolt_core.tools import ToolContext

if TYPE_CHECKING:
	from openmolt_core.files import FileAccess

__all__ = ["ToolSet"]

_ENVELOPES = 32  # envelopes kept per agent (one per loaded set seen)


class ToolSet:
	"""Which of an agent's tools a run may call at each step, and the envelope that admits them.

	Args:
		tools: The agent's bound tools by handle (allowed by its scopes or not).
		agent: The agent's name (the built-in tools' context).
		hooks: The agent's capabilities: their built-in tools, and which tools they leave
			visible at a step (`openmolt_core.hooks.Capability.visible_tools`).
		files: The agent's view of the file store.
		output_schema: The finish output's schema (for the envelopes).
		human_input: Whether ``requestHumanInput`` is allowed (for the envelopes).
		model: The model id the capabilities see (`openmolt_core.hooks.AgentInfo`).
	"""

	__slots__ = (
		"_allowed",
		"_envelopes",
		"_fresh",
		"_hooks",
		"_human_input",
		"_output_schema",
		"reasons",
		"tools",
	)

	def __init__(
		self,
		tools: Mapping[str, BoundTool],
		*,
		agent: str,
		hooks: Hooks = NO_HOOKS,
		files: FileAccess | None,
		output_schema: dict[str, Any] | None,
		human_input: bool,
		model: str = "",
	) -> None:
		allowed = tuple(t for t in tools.values() if t.allowed)
		self._hooks = hooks
		self._output_schema = output_schema
		self._human_input = human_input
		context = ToolContext(agent=agent, integration=BUILTIN, files=files)
		lead: list[BoundTool] = []
		trail: list[BoundTool] = []
		info = AgentInfo(agent, tuple(t.handle for t in allowed), model, allowed)
		for cap in hooks.capabilities:
			if builds(cap, "builtin_tools"):
				given = [
					BoundTool(f"{BUILTIN}.{t.handle}", t, context, True, [])
					for t in built(cap, "builtin_tools", info)
				]
				(lead if type(cap).builtins_lead else trail).extend(given)
		self.tools: dict[str, BoundTool] = {
			**{b.handle: b for b in lead},
			**tools,
			**{b.handle: b for b in trail},
		}
		"""Every tool a run could call, by handle: the agent's and the built-in ones, in order."""
		# Every tool a run could call, in order: the capabilities hide some at each step.
		self._allowed = tuple(h for h, t in self.tools.items() if t.allowed)
		self._envelopes: dict[tuple[str, ...], Envelope] = {}
		self._fresh = RunState()  # what the first turn lists: a run that loaded nothing
		self.reasons: bool = any(t.approval is not None for t in allowed)
		"""Whether callTool carries a ``reason``: some tool of the agent waits for approval
		(loaded or not, so the reply schema's shape and the prompt stay the same all run)."""

	# what the model sees ----------------------------------------------------------------------

	def listing(self, *, schemas_for: Callable[[str], bool] | None = None) -> str:
		"""The first message's tool part: ``"tools":[...]``, the tools a fresh run may call.

		Args:
			schemas_for: Whether a tool's ``inputSchema`` is listed (default: every tool's); see
				`openmolt_core._binding.describe_tools`.
		"""
		listed = describe_tools([self.tools[h] for h in self.callable()], schemas_for=schemas_for)
		return f'"tools":{listed}'

	def callable(self, state: RunState | None = None) -> tuple[str, ...]:
		"""The handles a run in this state may call, in the agent's order.

		Args:
			state: The run's state (None: a run that loaded nothing, as the first turn lists).
		"""
		if state is None:
			state = self._fresh
		if self._hooks.visible_tools:
			return self._hooks.visible(state, self._allowed)
		return self._allowed

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
				[ToolSchema(h, self.tools[h].listed_input_schema) for h in key],
				output_schema=self._output_schema,
				human_input=self._human_input,
				approvals=self.reasons,
			)
			self._envelopes[key] = envelope
		return key, envelope

	# checking ---------------------------------------------------------------------------------------

	def refuse(self, handle: str, state: RunState) -> str | None:
		"""Why a call to ``handle`` is refused in this run's state (None: the usual checks apply).

		A tool a capability hides is refused with its reason (`Capability.why_hidden`).
		"""
		visible = self.callable(state)
		if handle in visible:
			return None
		hidden = (
			first_answer(self._hooks.why_hidden, state, handle) if self._hooks.why_hidden else None
		)
		if hidden is not None:
			return hidden
		if handle in self.tools:
			return None  # not granted: the usual message
		from openmolt_core._support.suggest import suggestion  # only a call that went wrong

		hint = suggestion(handle, visible, noun="tools")
		return f"unknown tool {handle!r}; {hint}"
