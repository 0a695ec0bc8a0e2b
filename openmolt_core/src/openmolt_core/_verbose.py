"""``verbose`` per OpenMolt instance (and per agent), not per process.

The loop logs through the ``openmolt`` logger. A verbose instance must see its steps on stderr
without making every other instance of the process log too, and without changing what the
application's own logging configuration receives. So:

- a run marks its task (and the tasks it starts) verbose or not with a context variable (the
  run observers' capability every agent has, `openmolt_core.capabilities.Observers`, around
  each drive);
- one stderr handler, added once, prints only records made while a verbose run is in progress;
- the logger's level is lowered to INFO for that handler, and a filter on the logger drops the
  INFO records of runs that are not verbose, unless the application had enabled INFO itself.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["NotVerbose", "enable", "is_verbose", "scope"]

log = logging.getLogger("openmolt")

_VERBOSE: ContextVar[bool] = ContextVar("openmolt_verbose", default=False)
_state: dict[str, int] = {}  # "level": the logger's effective level before we lowered it


def is_verbose() -> bool:
	"""Whether the current task runs a verbose agent."""
	return _VERBOSE.get()


@contextmanager
def scope(verbose: bool) -> Iterator[None]:
	"""Mark the code inside (and the tasks it starts) as a verbose run, or as a quiet one."""
	token = _VERBOSE.set(verbose)
	try:
		yield
	finally:
		_VERBOSE.reset(token)


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]  # generic only in typeshed
	"""Writes to whatever ``sys.stderr`` is now (tests and apps replace it)."""

	@property
	def stream(self) -> object:
		return sys.stderr

	@stream.setter
	def stream(self, value: object) -> None:
		pass


class _VerboseOnly(logging.Filter):
	def filter(self, record: logging.LogRecord) -> bool:
		return _VERBOSE.get()


class NotVerbose(logging.Filter):
	"""For a command's own stderr handler: leaves out the records of verbose runs.

	The handler `enable` installs prints those; without this filter, a command that shows the
	``openmolt`` logger itself (``openmolt serve --verbose``, ``openmolt worker --verbose``)
	would print each of a verbose run's lines twice.
	"""

	def filter(self, record: logging.LogRecord) -> bool:
		"""Whether the record was made outside a verbose run."""
		return not _VERBOSE.get()


class _QuietRuns(logging.Filter):
	"""Drops the INFO records of quiet runs that only our lowered level let through."""

	def filter(self, record: logging.LogRecord) -> bool:
		if record.levelno >= logging.WARNING or _VERBOSE.get():
			return True
		return record.levelno >= _state.get("level", logging.WARNING)


def enable() -> None:
	"""Install the stderr handler and the filters, once per process (cheap afterwards)."""
	if "level" in _state:
		return
	_state["level"] = log.getEffectiveLevel()
	from openmolt_core.secrets import redact_handler

	handler = redact_handler(_Stderr())  # a record of any logger it shows is masked here too
	handler.setFormatter(logging.Formatter("openmolt: %(message)s"))
	handler.addFilter(_VerboseOnly())
	log.addHandler(handler)
	log.addFilter(_QuietRuns())
	if log.getEffectiveLevel() > logging.INFO:
		log.setLevel(logging.INFO)
