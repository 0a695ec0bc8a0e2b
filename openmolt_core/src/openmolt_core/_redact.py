"""Scrub secret values from text, JSON-like values and log records before anyone sees them.

A `Redactor` knows the secrets of some tool contexts (config values, and tokens their auths learn
later). Every live redactor also feeds `RedactingFilter`, a ``logging.Filter`` installed on the
loggers of OpenMolt and of the HTTP stack it drives (`LOGGERS`: ``openmolt``, ``httpx``,
``httpcore.*``, ``aiohttp.*``, ``hpack``, ``botocore``), at every level: a record's message, arguments,
traceback and stack text are rendered and masked before any handler sees them, so an API key in
a query string (httpx's ``HTTP Request:`` line), a raw header value in httpcore's trace, or a
secret in a failing tool's traceback never reaches a log.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
	from openmolt_core.tools import ToolContext

__all__ = [
	"LOGGERS",
	"MASK",
	"RedactingFilter",
	"Redactor",
	"install_log_redaction",
	"redactor_for",
]

MASK = "[redacted]"

LOGGERS = (
	"openmolt",
	"httpx",
	"httpcore",
	"httpcore.connection",
	"httpcore.http11",
	"httpcore.http2",
	"httpcore.proxy",
	"httpcore.socks",
	"aiohttp",
	"aiohttp.access",
	"aiohttp.client",
	"aiohttp.internal",
	"aiohttp.server",
	"aiohttp.web",
	"aiohttp.websocket",
	"hpack",
	"hpack.hpack",
	"hpack.table",
	"h2",
	"botocore",  # aws_sigv4 signing: botocore.auth logs the canonical request at DEBUG
	"botocore.auth",
)
"""The loggers the redacting filter is installed on (and any existing logger below them)."""

_LIVE: weakref.WeakSet[Redactor] = weakref.WeakSet()
_LOCK = threading.Lock()


class Redactor:
	"""Replaces every known secret with ``[redacted]``.

	Args:
		secrets: The secret strings known up front (API keys, client secrets).
		sources: Callables returning secrets learned later (OAuth2 tokens obtained by a refresh);
			asked at every use, so a new token is masked as soon as it exists.
	"""

	__slots__ = ("__weakref__", "_sources", "_static")

	def __init__(
		self,
		secrets: frozenset[str] = frozenset(),
		sources: Sequence[Callable[[], set[str]]] = (),
	) -> None:
		# A key pasted with a newline is sent stripped: mask both spellings.
		stripped = {s.strip() for s in secrets}
		self._static = frozenset({*secrets, *(s for s in stripped if len(s) >= 6)})
		self._sources = tuple(sources)
		if self:
			with _LOCK:
				_LIVE.add(self)
			install_log_redaction()

	def __repr__(self) -> str:
		return f"Redactor({len(self._static)} secrets, {len(self._sources)} sources)"

	@property
	def secrets(self) -> tuple[str, ...]:
		"""Every secret known now, longest first (so a secret containing another is masked whole)."""
		current = set(self._static)
		for source in self._sources:
			current |= source()
		return tuple(sorted(current, key=len, reverse=True))

	def __bool__(self) -> bool:
		return bool(self._static or self._sources)

	def __call__(self, text: str) -> str:
		"""Return the text with every secret masked."""
		if not self:
			return text
		for secret in self.secrets:
			if secret in text:
				text = text.replace(secret, MASK)
		return text

	def deep(self, value: Any) -> Any:
		"""Return a copy of a JSON-like value with secrets masked in every string."""
		if not self:
			return value
		return _deep(value, self.secrets)


def _deep(value: Any, secrets: tuple[str, ...]) -> Any:
	if isinstance(value, str):
		for secret in secrets:
			if secret in value:
				value = value.replace(secret, MASK)
		return value
	if isinstance(value, dict):
		return {k: _deep(v, secrets) for k, v in value.items()}
	if isinstance(value, (list, tuple)):
		return [_deep(v, secrets) for v in value]
	return value


def _live_secrets() -> tuple[str, ...]:
	with _LOCK:
		redactors = list(_LIVE)
	found: set[str] = set()
	for redactor in redactors:
		try:
			found.update(redactor.secrets)
		except Exception:  # a broken source must not break logging
			continue
	return tuple(sorted(found, key=len, reverse=True))


def _mask(text: str, secrets: tuple[str, ...]) -> str:
	for secret in secrets:
		if secret in text:
			text = text.replace(secret, MASK)
	return text


_PLAIN = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
	"message",
	"asctime",
}


class RedactingFilter(logging.Filter):
	"""Masks every secret a live `Redactor` knows in a log record (message, args, traceback)."""

	def filter(self, record: logging.LogRecord) -> bool:
		"""Rewrite the record with secrets masked; never drops a record."""
		secrets = _live_secrets()
		if not secrets:
			return True
		try:
			message = record.getMessage()
		except Exception:  # a record whose args do not fit its format: show the format
			message = str(record.msg)
		record.msg, record.args = _mask(message, secrets), None
		if record.exc_info:
			text = record.exc_text or logging.Formatter().formatException(record.exc_info)
			record.exc_text, record.exc_info = _mask(text, secrets), None
		elif record.exc_text:
			record.exc_text = _mask(record.exc_text, secrets)
		if record.stack_info:
			record.stack_info = _mask(record.stack_info, secrets)
		for key, value in list(record.__dict__.items()):
			if key not in _PLAIN and isinstance(value, str):
				setattr(record, key, _mask(value, secrets))
		return True


_FILTER = RedactingFilter()
_SEEN = -1  # how many loggers existed at the last install


def install_log_redaction() -> None:
	"""Install the redacting filter on `LOGGERS` and the existing loggers below them (idempotent).

	Called whenever a redactor with secrets is made, so loggers created since are covered too.
	"""
	global _SEEN
	known = logging.root.manager.loggerDict
	if len(known) == _SEEN:  # no logger was made since the last call
		return
	prefixes = tuple(f"{name}." for name in LOGGERS)
	names = [*LOGGERS, *(n for n in list(known) if n.startswith(prefixes))]
	for name in names:
		logger = logging.getLogger(name)
		if _FILTER not in logger.filters:
			logger.addFilter(_FILTER)
	_SEEN = len(known)


def redactor_for(contexts: Iterable[ToolContext]) -> Redactor:
	"""The redactor for tool contexts: their config secrets, and what their auths learn later.

	Args:
		contexts: The contexts whose secrets must never show (one tool's, or all of an agent's).
	"""
	unique = {id(c): c for c in contexts}.values()
	sources = []
	for context in unique:
		learned = getattr(context.auth, "secrets", None)  # OAuth2 tokens obtained by a refresh
		if callable(learned):
			sources.append(learned)
	return Redactor(frozenset().union(*(c.redact for c in unique)), sources)
