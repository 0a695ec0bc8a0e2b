"""The one set of secrets an OpenMolt instance knows, and every spelling they can take.

``OpenMolt.secrets`` is a `SecretSet`: the provider keys (settings and ``OPENMOLT_*`` environment
variables), the integration credentials agents bind (and the tokens a refresh brings later), the
MCP servers' secrets and those ``openmolt serve`` reads. Every agent's `Redactor`, and so the run
store, the events, the viewer, the spans and the logging filter (`RedactingFilter`), reads it; a
new source of secrets registers into it (``om.secrets.add(value)``,
``om.secrets.add_source(callable)``). The masking in every spelling and the loggers it covers are
`openmolt_core._support.masking`'s; the sets, the keys given in code and the redactors
`openmolt_core._support.secretset`'s; both re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openmolt_core._support import lazy_exports
from openmolt_core._support.masking import (
	LOGGERS,
	MASK,
	MIN_KEY,
	RedactingFilter,
	StreamMask,
	environment_secrets,
	environment_secrets_now,
	held_back,
	install_log_redaction,
	known_secrets,
	live_secrets,
	mask,
	mask_bytes,
	masked_excerpt,
	named_secrets,
	redact_handler,
	settings_secrets,
	spellings,
	url_secrets,
)
from openmolt_core._support.secretset import (  # the sets, the keys, the redactors: a library
	Redactor,
	SecretSet,
	default_credentials_path,
	redactor_for,
	register_key,
	registered_keys,
	watch,
)

__all__ = [
	"LOGGERS",
	"MASK",
	"MIN_KEY",
	"RedactingFilter",
	"Redactor",
	"SecretSet",
	"StreamMask",
	"default_credentials_path",
	"environment_secrets",
	"environment_secrets_now",
	"held_back",
	"install_log_redaction",
	"known_secrets",
	"live_secrets",
	"mask",
	"mask_bytes",
	"masked_excerpt",
	"named_secrets",
	"redact_handler",
	"redactor_for",
	"register_key",
	"registered_keys",
	"settings_secrets",
	"spellings",
	"url_secrets",
	"watch",
]


# The servers' rule for their secrets, under its old name (loaded on first use, not in __all__).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), {"strong_enough": "openmolt_core.triggers"})
