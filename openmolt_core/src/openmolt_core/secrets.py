"""The one set of secrets an OpenMolt instance knows, and every spelling they can take.

``OpenMolt.secrets`` is a `SecretSet`: the provider keys (``llm_providers`` settings and the
``OPENMOLT_*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET`` environment variables), the integration
credentials an agent binds (and the OAuth2 tokens a refresh brings later), the MCP servers'
env, headers, ``${VAR}`` arguments and URL secrets, and the webhook and chat-bot secrets
``openmolt serve`` reads. Every agent's redactor, and so the run store, the events, the viewer,
the OpenTelemetry spans and the logging filter, reads this set; a new source of secrets registers
into it (``om.secrets.add(value)`` or ``om.secrets.add_source(callable)``) instead of each feature
remembering its own.

A secret is masked in every spelling it can take on the way out (`spellings`: as is, stripped,
percent-encoded, base64, JSON- and ``repr``-escaped); the masking itself, a library with no agent
concept, is `openmolt_core._support.masking`, re-exported here, as are the secrets it finds by
their names in the environment and in settings (`environment_secrets`, `settings_secrets`), and
in a URL (`url_secrets`: its password, its query values named like secrets). A text shown in
part (an error body, a service's reason) is masked whole before it is cut (`masked_excerpt`).

A `Redactor` knows the secrets of some tool contexts (config values, and tokens their auths learn
later: `redactor_for`) and, for an agent, its instance's `SecretSet`; it masks every spelling of
each in text and in JSON-like values. The set, the keys given in code (`register_key`), the
redactors and the default credential store's file (`default_credentials_path`) are a library
with no agent concept, `openmolt_core._support.secretset`, re-exported here (the loop imports
them from there: a plain run never loads this module).

Every live redactor and secret set feeds the logging filter (`RedactingFilter`, beside the
masking in `openmolt_core._support.masking`, re-exported here). It sees every record of the
process, whatever its logger: the log record factory is wrapped, and the filter is also
installed on the loggers of OpenMolt, of the HTTP stacks it drives and of the MCP SDK
(`LOGGERS`: ``openmolt``, ``httpx``, ``httpcore.*``, ``httpx2``, ``httpcore2.*``, ``aiohttp.*``,
``hpack``, ``botocore``, ``mcp.*``) and on the handlers the ``openmolt`` commands install. A
logger nobody listed (an SDK's, a server's, asyncio's "exception was never retrieved", the
application's own) is masked too: what is unknown is treated as able to show a secret. A
record's message, arguments, traceback and stack text are rendered and masked before any handler
sees them, so an API key in a query string (httpx's ``HTTP Request:`` line), a bot token in a
URL path, a raw header value in httpcore's trace, or a secret in a failing tool's traceback never
reaches a log; a record that shows no secret is left as it was made.
A set turns it on when it gets its first secrets. (`openmolt_core._redact`, the redactor's old
home, re-exports it all.)
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


# The rule of the secrets a server checks requests with, beside the servers' settings: its old
# name here (loaded on first use, not in __all__).
__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), {"strong_enough": "openmolt_core.triggers"})
