"""Scrub secret values from text, JSON-like values and log records before anyone sees them.

A `Redactor` knows the secrets of some tool contexts (config values, and tokens their auths learn
later) and, for an agent, its instance's `openmolt_core.secrets.SecretSet` (provider keys, MCP
and bot secrets...). It masks every spelling of each (`openmolt_core.secrets.spellings`: raw,
percent-encoded, base64, JSON-escaped). Every live redactor and secret set also feeds
`RedactingFilter`, a ``logging.Filter`` installed on the loggers of OpenMolt, of the HTTP stack
it drives and of the MCP SDK (`LOGGERS`: ``openmolt``, ``httpx``, ``httpcore.*``, ``aiohttp.*``,
``hpack``, ``botocore``, ``mcp.*``), and on the handlers the ``openmolt`` commands install, at
every level: a record's message, arguments, traceback and stack text are rendered and masked
before any handler sees them, so an API key in a query string (httpx's ``HTTP Request:`` line), a
bot token in a URL path, a raw header value in httpcore's trace, or a secret in a failing tool's
traceback never reaches a log.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from openmolt_core.secrets import MASK, _live_sets, mask

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
	"mcp",  # the MCP SDK: a server's command line, URL and messages
	"mcp.client",
	"mcp.client.stdio",
	"mcp.client.streamable_http",
	"mcp.client.session",
	"mcp.shared",
	"mcp.shared.session",
	"mcp.os",
)
"""The loggers the redacting filter is installed on (and any existing logger below them)."""

_LIVE: weakref.WeakSet[Redactor] = weakref.WeakSet()
_LOCK = threading.Lock()


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
			with _LOCK:
				_LIVE.add(self)
			install_log_redaction()

	def __repr__(self) -> str:
		return f"Redactor({len(self._static)} secrets, {len(self._sources)} sources)"

	def _current(self) -> frozenset[str]:
		if not self._sources and self._known is None:
			return self._static
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


def _live_secrets() -> frozenset[str]:
	with _LOCK:
		redactors = list(_LIVE)
	found: set[str] = set()
	for redactor in redactors:
		try:
			found.update(redactor.secrets)
		except Exception:  # a broken source must not break logging
			continue
	for known in _live_sets():
		found |= known.values()
	return frozenset(found)


_BUSY = threading.local()  # set while the filter reads the secrets (a source that logs)

_PLAIN = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
	"message",
	"asctime",
}


class RedactingFilter(logging.Filter):
	"""Masks every secret a live `Redactor` knows in a log record (message, args, traceback)."""

	def filter(self, record: logging.LogRecord) -> bool:
		"""Rewrite the record with secrets masked; never drops a record."""
		if getattr(record, "_openmolt_masked", False) or getattr(_BUSY, "on", False):
			return True  # masked when it was made, or logged by a secret source while masking
		_BUSY.on = True
		try:
			secrets = _live_secrets()
		finally:
			_BUSY.on = False
		if not secrets:
			return True
		record._openmolt_masked = True
		try:
			message = record.getMessage()
		except Exception:  # a record whose args do not fit its format: show the format
			message = str(record.msg)
		record.msg, record.args = mask(message, secrets), None
		if record.exc_info:
			text = record.exc_text or logging.Formatter().formatException(record.exc_info)
			record.exc_text, record.exc_info = mask(text, secrets), None
		elif record.exc_text:
			record.exc_text = mask(record.exc_text, secrets)
		if record.stack_info:
			record.stack_info = mask(record.stack_info, secrets)
		for key, value in list(record.__dict__.items()):
			if key not in _PLAIN and isinstance(value, str):
				setattr(record, key, mask(value, secrets))
		return True


_FILTER = RedactingFilter()
_SEEN = -1  # how many loggers existed at the last install
_FACTORY: list[Callable[..., logging.LogRecord]] = []  # the record factory we wrapped


def _masking_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
	"""Make a record, masked at once when its logger is one of `LOGGERS` or below them.

	A logger made after the last install (a module imported late, inside a tool) has no filter
	of its own, and a parent's filters do not see a child's records; the record factory does.
	"""
	record = _FACTORY[0](*args, **kwargs)
	name = record.name
	if name.startswith(_ROOTS) and (name in LOGGERS or name.startswith(_PREFIXES)):
		_FILTER.filter(record)
	return record


_ROOTS = tuple({name.split(".")[0] for name in LOGGERS})
_PREFIXES = tuple(f"{name}." for name in LOGGERS)


def install_log_redaction() -> None:
	"""Install the redacting filter on `LOGGERS` and the existing loggers below them (idempotent).

	Called whenever a redactor or a secret set gets secrets, so loggers created since are
	covered too; the record factory is wrapped once, so a logger made later is covered as well.
	"""
	global _SEEN
	if not _FACTORY:
		with _LOCK:
			if not _FACTORY:
				_FACTORY.append(logging.getLogRecordFactory())
				logging.setLogRecordFactory(_masking_factory)
	known = logging.root.manager.loggerDict
	if len(known) == _SEEN:  # no logger was made since the last call
		return
	names = [*LOGGERS, *(n for n in list(known) if n.startswith(_PREFIXES))]
	for name in names:
		logger = logging.getLogger(name)
		if _FILTER not in logger.filters:
			logger.addFilter(_FILTER)
	_SEEN = len(known)


def redact_handler(handler: logging.Handler) -> logging.Handler:
	"""Put the redacting filter on a handler, so records of any logger it shows are masked.

	The ``openmolt`` commands call this for the handlers they install (a record from a logger
	made after the last `install_log_redaction`, such as a library imported late, is masked at
	the handler).

	Args:
		handler: The handler.

	Returns:
		The same handler.
	"""
	if _FILTER not in handler.filters:
		handler.addFilter(_FILTER)
	return handler


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
