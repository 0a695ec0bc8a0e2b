"""Scrub secret values from text, JSON-like values and log records before anyone sees them.

A `Redactor` knows the secrets of some tool contexts (config values, and tokens their auths learn
later) and, for an agent, its instance's `openmolt_core.secrets.SecretSet` (provider keys, MCP
and bot secrets...). It masks every spelling of each (`openmolt_core.secrets.spellings`: raw,
percent-encoded, base64, JSON-escaped). Every live redactor and secret set also feeds
`RedactingFilter` (kept in `openmolt_core.secrets`, beside the sets), a ``logging.Filter`` installed on the loggers of OpenMolt, of the HTTP stack
it drives and of the MCP SDK (`LOGGERS`: ``openmolt``, ``httpx``, ``httpcore.*``, ``aiohttp.*``,
``hpack``, ``botocore``, ``mcp.*``), and on the handlers the ``openmolt`` commands install, at
every level: a record's message, arguments, traceback and stack text are rendered and masked
before any handler sees them, so an API key in a query string (httpx's ``HTTP Request:`` line), a
bot token in a URL path, a raw header value in httpcore's trace, or a secret in a failing tool's
traceback never reaches a log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.secrets import (  # the logging filter is the secrets'; re-exported here
	LOGGERS,
	MASK,
	RedactingFilter,
	install_log_redaction,
	mask,
	redact_handler,
	watch,
)

if TYPE_CHECKING:
	from openmolt_core.secrets import SecretSet
	from openmolt_core.tools import ToolContext

__all__ = [
	"LOGGERS",
	"MASK",
	"RedactingFilter",
	"Redactor",
	"install_log_redaction",
	"redact_handler",
	"redactor_for",
]


class Redactor:
	"""Replaces every known secret, in every spelling, with ``[redacted]``.

	Args:
		secrets: The secret strings known up front (API keys, client secrets).
		sources: Callables returning secrets learned later (OAuth2 tokens obtained by a refresh);
			asked at every use, so a new token is masked as soon as it exists.
		known: The instance's secret set (``OpenMolt.secrets``), read at every use.
	"""

	__slots__ = ("__weakref__", "_known", "_sources", "_static")

	def __init__(
		self,
		secrets: frozenset[str] = frozenset(),
		sources: Sequence[Callable[[], Iterable[str]]] = (),
		known: SecretSet | None = None,
	) -> None:
		# A key pasted with a newline is sent stripped: mask both spellings.
		stripped = {s.strip() for s in secrets}
		self._static = frozenset({*secrets, *(s for s in stripped if len(s) >= 6)} - {""})
		self._sources = tuple(sources)
		self._known = known
		if self._static or self._sources:
			watch(self)

	def __repr__(self) -> str:
		return f"Redactor({len(self._static)} secrets, {len(self._sources)} sources)"

	def _current(self) -> frozenset[str]:
		if not self._sources:
			if self._known is None:
				return self._static
			known = self._known.values()
			return self._static | known if self._static else known
		current = set(self._static)
		for source in self._sources:
			current.update(v for v in source() if v)
		if self._known is not None:
			current |= self._known.values()
		return frozenset(current)

	@property
	def secrets(self) -> tuple[str, ...]:
		"""Every secret known now, longest first (so a secret containing another is masked whole)."""
		return tuple(sorted(self._current(), key=len, reverse=True))

	def __bool__(self) -> bool:
		return bool(self._static or self._sources or self._known)

	def __call__(self, text: str) -> str:
		"""Return the text with every secret masked."""
		if not self:
			return text
		return mask(text, self._current())

	def deep(self, value: Any) -> Any:
		"""Return a copy of a JSON-like value with secrets masked in every string (and key)."""
		if not self:
			return value
		secrets = self._current()
		return _deep(value, secrets) if secrets else value


def _deep(value: Any, secrets: frozenset[str]) -> Any:
	if isinstance(value, str):
		return mask(value, secrets)
	if isinstance(value, dict):
		return {
			(mask(k, secrets) if isinstance(k, str) else k): _deep(v, secrets)
			for k, v in value.items()
		}
	if isinstance(value, (list, tuple)):
		return [_deep(v, secrets) for v in value]
	return value


def redactor_for(contexts: Iterable[ToolContext], known: SecretSet | None = None) -> Redactor:
	"""The redactor for tool contexts: their config secrets, and what their auths learn later.

	Args:
		contexts: The contexts whose secrets must never show (one tool's, or all of an agent's).
		known: The instance's secret set (``OpenMolt.secrets``), read at every use.
	"""
	unique = {id(c): c for c in contexts}.values()
	sources = []
	for context in unique:
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			sources.append(learned)
	return Redactor(frozenset().union(*(c.redact for c in unique)), sources, known)
