"""Integrations as data, and the engine that turns their HTTP tools into requests."""

from __future__ import annotations

from openmolt_core.integrations.model import (
	ApiSetup,
	Credential,
	CredentialType,
	HttpTool,
	Integration,
	RequestFormat,
	ResponseFormat,
)
from openmolt_core.tools import FunctionTool

__all__ = [
	"ApiSetup",
	"Credential",
	"CredentialType",
	"FunctionTool",
	"HttpTool",
	"Integration",
	"RequestFormat",
	"ResponseFormat",
]
