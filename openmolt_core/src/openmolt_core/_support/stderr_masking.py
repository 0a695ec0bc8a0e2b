"""Mask what Python itself prints to ``sys.stderr`` about an exception: the last sinks of a log.

A record is masked when it is made (`openmolt_core._support.masking.install_log_redaction`), but
some text about an exception never becomes a record: a handler that fails prints the exception
being handled, its chain and notes included (``logging.Handler.handleError``); an uncaught
exception (``sys.excepthook``), one in a thread (``threading.excepthook``) and one Python could
not raise (``sys.unraisablehook``, a ``__del__`` or an abandoned generator) are printed by their
hooks. `masked_stderr` wraps such a printer: what it writes to ``sys.stderr`` is collected, masked
(with ``openmolt_core._support.masking.mask_known``: the secrets known now) and then written.
``install_log_redaction`` wraps ``handleError``; the ``openmolt`` commands install the three
hooks (`install_masked_hooks`).
"""

from __future__ import annotations

import functools
import io
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install_masked_hooks", "masked_stderr", "uninstall_masked_hooks"]

_LOCK = threading.RLock()
"""Held while ``sys.stderr`` is swapped: two printers at once would restore each other's buffer."""


def masked_stderr(show: Callable[..., Any], mask: Callable[[str], str]) -> Callable[..., None]:
	"""``show``, with what it writes to ``sys.stderr`` masked before it reaches the stream.

	Another thread writing to ``sys.stderr`` meanwhile is masked too, and shown after.

	Args:
		show: A function that prints to ``sys.stderr`` (a hook, ``Handler.handleError``).
		mask: Masks a text (``masking.mask_known``).
	"""
	if getattr(show, "__openmolt_masked__", False):
		return show

	@functools.wraps(show)
	def masked(*args: Any, **kwargs: Any) -> None:
		with _LOCK:
			real = sys.stderr
			if real is None:  # no stream (pythonw): nothing is shown
				show(*args, **kwargs)
				return
			buffer = io.StringIO()
			sys.stderr = buffer
			try:
				show(*args, **kwargs)
			finally:
				sys.stderr = real
		text = buffer.getvalue()
		if text:
			try:
				real.write(mask(text))
				real.flush()
			except (OSError, ValueError):  # a closed stream, as the printers themselves allow
				pass

	masked.__openmolt_masked__ = True  # type: ignore[attr-defined]
	return masked


_HOOKS = (
	(sys, "excepthook"),
	(threading, "excepthook"),
	(sys, "unraisablehook"),
)
_SAVED: list[tuple[object, str, Any, Any]] = []  # (owner, name, the hook, our wrapper)


def install_masked_hooks(mask: Callable[[str], str]) -> None:
	"""Have the process's exception hooks print masked (idempotent; `uninstall_masked_hooks`).

	``sys.excepthook``, ``threading.excepthook`` and ``sys.unraisablehook``, whatever they are
	now (Python's own or an application's), are wrapped with `masked_stderr`.

	Args:
		mask: Masks a text (``masking.mask_known``).
	"""
	with _LOCK:
		for owner, name in _HOOKS:
			hook = getattr(owner, name)
			if not getattr(hook, "__openmolt_masked__", False):
				wrapped = masked_stderr(hook, mask)
				_SAVED.append((owner, name, hook, wrapped))
				setattr(owner, name, wrapped)


def uninstall_masked_hooks() -> None:
	"""Put back the hooks `install_masked_hooks` wrapped (the commands, called from code).

	A hook set by someone else since is left as it is.
	"""
	with _LOCK:
		while _SAVED:
			owner, name, hook, wrapped = _SAVED.pop()
			if getattr(owner, name) is wrapped:
				setattr(owner, name, hook)
