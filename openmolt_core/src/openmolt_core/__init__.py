"""OpenMolt's core: the contract plugins build on, and the runtime.

Applications import from `openmolt`; plugins import from `openmolt_core`. Names resolve on first
use, so importing this package loads none of the heavier modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.agent import Agent, HumanInputUnavailable
	from openmolt_core.agentconfig import AgentConfig, IntegrationCredential, IntegrationEntry
	from openmolt_core.approvals import (
		ApprovalDecision,
		ApprovalRequest,
		Approvals,
		ApprovalUnavailable,
	)
	from openmolt_core.errors import (
		ApprovalError,
		ConfigurationError,
		IntegrationError,
		OpenMoltError,
		PluginError,
		ProviderError,
		RunCancelledError,
		RunError,
		ToolError,
	)
	from openmolt_core.functiontools import FunctionTool
	from openmolt_core.hooks import Capability, Park, Proceed, Refuse, Stop
	from openmolt_core.hookspecs import hookimpl
	from openmolt_core.llm import (
		Attachment,
		LLMProvider,
		Message,
		ModelConfig,
		ModelRequest,
		ModelResponse,
		Usage,
	)
	from openmolt_core.openmolt import OpenMolt
	from openmolt_core.options import AgentMemory, MemoryPart
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.runstream import RunStream
	from openmolt_core.streaming import StreamingProvider, TextDelta
	from openmolt_core.tools import Tool, ToolContext

__all__ = [
	"Agent",
	"AgentConfig",
	"AgentMemory",
	"ApprovalDecision",
	"ApprovalError",
	"ApprovalRequest",
	"ApprovalUnavailable",
	"Approvals",
	"Attachment",
	"Capability",
	"ConfigurationError",
	"FunctionTool",
	"HumanInputUnavailable",
	"IntegrationCredential",
	"IntegrationEntry",
	"IntegrationError",
	"LLMProvider",
	"MemoryPart",
	"Message",
	"ModelConfig",
	"ModelRequest",
	"ModelResponse",
	"OpenMolt",
	"OpenMoltError",
	"Park",
	"PluginError",
	"Proceed",
	"ProviderError",
	"Refuse",
	"RetryPolicy",
	"RunCancelledError",
	"RunError",
	"RunResult",
	"RunState",
	"RunStream",
	"Stop",
	"StreamingProvider",
	"TextDelta",
	"Tool",
	"ToolContext",
	"ToolError",
	"Usage",
	"__version__",
	"hookimpl",
]

__version__ = "0.1.0"

_EXPORTS = {
	"Agent": "openmolt_core.agent",
	"HumanInputUnavailable": "openmolt_core.agent",
	"ApprovalDecision": "openmolt_core.approvals",
	"ApprovalRequest": "openmolt_core.approvals",
	"ApprovalUnavailable": "openmolt_core.approvals",
	"Approvals": "openmolt_core.approvals",
	"ApprovalError": "openmolt_core.errors",
	"ConfigurationError": "openmolt_core.errors",
	"IntegrationError": "openmolt_core.errors",
	"OpenMoltError": "openmolt_core.errors",
	"PluginError": "openmolt_core.errors",
	"ProviderError": "openmolt_core.errors",
	"RunCancelledError": "openmolt_core.errors",
	"RunError": "openmolt_core.errors",
	"ToolError": "openmolt_core.errors",
	"hookimpl": "openmolt_core.hookspecs",
	"Capability": "openmolt_core.hooks",
	"Park": "openmolt_core.hooks",
	"Proceed": "openmolt_core.hooks",
	"Refuse": "openmolt_core.hooks",
	"Stop": "openmolt_core.hooks",
	"Attachment": "openmolt_core.llm",
	"LLMProvider": "openmolt_core.llm",
	"Message": "openmolt_core.llm",
	"ModelConfig": "openmolt_core.llm",
	"ModelRequest": "openmolt_core.llm",
	"ModelResponse": "openmolt_core.llm",
	"Usage": "openmolt_core.llm",
	"OpenMolt": "openmolt_core.openmolt",
	"RunResult": "openmolt_core.result",
	"RunState": "openmolt_core.result",
	"RunStream": "openmolt_core.runstream",
	"StreamingProvider": "openmolt_core.streaming",
	"TextDelta": "openmolt_core.streaming",
	"RetryPolicy": "openmolt_core.retry",
	"AgentConfig": "openmolt_core.agentconfig",
	"AgentMemory": "openmolt_core.options",
	"IntegrationCredential": "openmolt_core.agentconfig",
	"IntegrationEntry": "openmolt_core.agentconfig",
	"MemoryPart": "openmolt_core.options",
	"FunctionTool": "openmolt_core.functiontools",
	"Tool": "openmolt_core.tools",
	"ToolContext": "openmolt_core.tools",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
