"""OpenMolt's core: the contract plugins build on, and the runtime.

Applications import from `openmolt`; plugins import from `openmolt_core`.
"""

from __future__ import annotations

import logging

from openmolt_core.agent import Agent, HumanInputUnavailable
from openmolt_core.errors import (
	ConfigurationError,
	IntegrationError,
	OpenMoltError,
	PluginError,
	ProviderError,
	RunError,
	ToolError,
)
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
from openmolt_core.result import RunResult, RunState
from openmolt_core.tools import FunctionTool, Tool, ToolContext

__all__ = [
	"Agent",
	"Attachment",
	"ConfigurationError",
	"FunctionTool",
	"HumanInputUnavailable",
	"IntegrationError",
	"LLMProvider",
	"Message",
	"ModelConfig",
	"ModelRequest",
	"ModelResponse",
	"OpenMolt",
	"OpenMoltError",
	"PluginError",
	"ProviderError",
	"RunError",
	"RunResult",
	"RunState",
	"Tool",
	"ToolContext",
	"ToolError",
	"Usage",
	"__version__",
	"hookimpl",
]

__version__ = "0.1.0"

logging.getLogger("openmolt").addHandler(logging.NullHandler())
