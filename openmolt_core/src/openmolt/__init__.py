"""OpenMolt: programmatic AI agents. ``from openmolt import OpenMolt``.

Names resolve on first use: ``import openmolt`` alone loads nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core import __version__
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
	from openmolt_core.llm import Attachment, ModelConfig, Usage
	from openmolt_core.openmolt import OpenMolt
	from openmolt_core.options import AgentMemory, MemoryPart
	from openmolt_core.result import RunResult, RunState
	from openmolt_core.retry import RetryPolicy
	from openmolt_core.runstream import RunStream
	from openmolt_core.sessions import InMemorySession, Session, SQLiteSession
	from openmolt_core.tools import ToolContext

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
	"InMemorySession",
	"IntegrationCredential",
	"IntegrationEntry",
	"IntegrationError",
	"MemoryPart",
	"ModelConfig",
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
	"SQLiteSession",
	"Session",
	"Stop",
	"ToolContext",
	"ToolError",
	"Usage",
	"__version__",
]

_EXPORTS = {
	"Agent": "openmolt_core.agent",
	"ApprovalDecision": "openmolt_core.approvals",
	"ApprovalError": "openmolt_core.errors",
	"ApprovalRequest": "openmolt_core.approvals",
	"ApprovalUnavailable": "openmolt_core.approvals",
	"Approvals": "openmolt_core.approvals",
	"Capability": "openmolt_core.hooks",
	"Park": "openmolt_core.hooks",
	"Proceed": "openmolt_core.hooks",
	"Refuse": "openmolt_core.hooks",
	"Stop": "openmolt_core.hooks",
	"Attachment": "openmolt_core.llm",
	"ConfigurationError": "openmolt_core.errors",
	"FunctionTool": "openmolt_core.functiontools",
	"HumanInputUnavailable": "openmolt_core.agent",
	"IntegrationError": "openmolt_core.errors",
	"ModelConfig": "openmolt_core.llm",
	"OpenMolt": "openmolt_core.openmolt",
	"OpenMoltError": "openmolt_core.errors",
	"PluginError": "openmolt_core.errors",
	"ProviderError": "openmolt_core.errors",
	"RunCancelledError": "openmolt_core.errors",
	"RunError": "openmolt_core.errors",
	"RunResult": "openmolt_core.result",
	"RunState": "openmolt_core.result",
	"RunStream": "openmolt_core.runstream",
	"RetryPolicy": "openmolt_core.retry",
	"AgentConfig": "openmolt_core.agentconfig",
	"AgentMemory": "openmolt_core.options",
	"IntegrationCredential": "openmolt_core.agentconfig",
	"IntegrationEntry": "openmolt_core.agentconfig",
	"MemoryPart": "openmolt_core.options",
	"InMemorySession": "openmolt_core.sessions",
	"SQLiteSession": "openmolt_core.sessions",
	"Session": "openmolt_core.sessions",
	"ToolContext": "openmolt_core.tools",
	"ToolError": "openmolt_core.errors",
	"Usage": "openmolt_core.llm",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
