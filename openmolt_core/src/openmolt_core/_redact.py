"""Moved: `openmolt_core.secrets` (the redactors live beside the secret sets and the logging filter they feed); re-exported here."""

from __future__ import annotations

from openmolt_core.secrets import (
	LOGGERS,
	MASK,
	RedactingFilter,
	Redactor,
	install_log_redaction,
	redact_handler,
	redactor_for,
)

__all__ = [
	"LOGGERS",
	"MASK",
	"RedactingFilter",
	"Redactor",
	"install_log_redaction",
	"redact_handler",
	"redactor_for",
]
