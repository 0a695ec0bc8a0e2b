"""Offload of large results as a capability: stored whole, previewed, read back in slices.

``create_agent(config={"max_result_chars": ..., "max_result_chars_per_tool": {...}})`` sets its
thresholds; every agent has it (`openmolt_core.offload` holds the store, the preview and the
reader). A result longer than its threshold is replaced inside the journaled tool call
(`Capability.replace_result`: the journal keeps the preview, so a replay gets the same handle);
once one is stored, the built-in ``openmolt.readResult`` becomes callable from the next step
(`Capability.visible_tools`), and ``RunState.stored`` lists the handle (`Capability.tool_done`,
outside the journaled call, so a replay rebuilds the same state).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from openmolt_core.hooks import Capability, load_tools
from openmolt_core.offload import READ_TOOL, ReadResultTool, is_stored

if TYPE_CHECKING:
	from openmolt_core.commands import CallTool
	from openmolt_core.hooks import AgentInfo, Run, ToolSpec
	from openmolt_core.offload import Offload
	from openmolt_core.result import RunState
	from openmolt_core.tools import Tool

__all__ = ["OffloadResults"]


class OffloadResults(Capability):
	"""Store results too large for the model and offer ``openmolt.readResult`` to read them.

	Args:
		offload: The store, thresholds and reader (`openmolt_core.offload.Offload`).
	"""

	__slots__ = ("offload",)

	name = "offload"
	in_fingerprint: ClassVar[bool] = False  # its tool is built in; its previews are journaled

	def __init__(self, offload: Offload) -> None:
		self.offload: Offload = offload
		"""Where large results go, and how slices of them are read."""

	def builtin_tools(self, agent: AgentInfo) -> Sequence[Tool]:
		"""The ``openmolt.readResult`` reader (callable once a result was stored)."""
		return [ReadResultTool(self.offload)]

	def visible_tools(self, state: RunState, handles: tuple[str, ...]) -> tuple[str, ...]:
		"""The reader from the step after the run's first stored result."""
		if READ_TOOL in state.loaded:
			return handles
		return tuple(h for h in handles if h != READ_TOOL)

	def why_hidden(self, state: RunState, handle: str) -> str | None:
		"""The reader called before anything was stored."""
		if handle != READ_TOOL:
			return None
		return (
			f"{READ_TOOL} reads results that were stored because they were too large; no "
			"result of this run was stored yet"
		)

	async def replace_result(self, run: Run, call: CallTool, tool: ToolSpec, value: Any) -> Any:
		"""The result itself when small enough, else stored with a preview in its place."""
		return await self.offload.shrink(call.tool, value)

	def tool_done(self, run: Run, call: CallTool, index: int, entry: Mapping[str, Any]) -> None:
		"""A stored result: the reader loads, and ``state.stored`` lists the handle in order."""
		if not entry.get("ok"):
			return
		result = entry.get("result")
		if not (isinstance(result, dict) and is_stored(result)):
			return
		state = run.state
		load_tools(state, [READ_TOOL], run.tools)
		state.stored.append(
			{"file": result["stored"], "tool": call.tool, "step": run.step, "index": index}
		)
		state.stored.sort(key=lambda s: (s.get("step", 0), s.get("index", 0)))
