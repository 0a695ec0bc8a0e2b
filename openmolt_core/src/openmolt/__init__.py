"""OpenMolt: programmatic AI agents. ``from openmolt import OpenMolt``."""

from __future__ import annotations

from openmolt_core import (
	Agent,
	Attachment,
	ConfigurationError,
	FunctionTool,
	HumanInputUnavailable,
	IntegrationError,
	ModelConfig,
	OpenMolt,
	OpenMoltError,
	PluginError,
	ProviderError,
	RunError,
	RunResult,
	RunState,
	ToolContext,
	ToolError,
	Usage,
	__version__,
)

__all__ = [
	"Agent",
	"Attachment",
	"ConfigurationError",
	"FunctionTool",
	"HumanInputUnavailable",
	"IntegrationError",
	"ModelConfig",
	"OpenMolt",
	"OpenMoltError",
	"PluginError",
	"ProviderError",
	"RunError",
	"RunResult",
	"RunState",
	"ToolContext",
	"ToolError",
	"Usage",
	"__version__",
]
