"""What the log tests share: httpx's records, formatted as a handler would write them."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from openmolt_core import secrets

__all__ = ["Keep", "httpx_kept"]


class Keep(logging.Handler):
	"""Keeps the formatted messages."""

	def __init__(self) -> None:
		super().__init__()
		self.messages: list[str] = []

	def emit(self, record: logging.LogRecord) -> None:
		"""Keep the record's message as a handler would format it (the filter ran before)."""
		self.messages.append(record.getMessage())


@contextmanager
def httpx_kept() -> Iterator[Keep]:
	"""The ``httpx`` logger's INFO records, with OpenMolt's log redaction installed."""
	secrets.install_log_redaction()
	handler = Keep()
	log = logging.getLogger("httpx")
	log.addHandler(handler)
	level = log.level
	log.setLevel(logging.INFO)
	try:
		yield handler
	finally:
		log.removeHandler(handler)
		log.setLevel(level)
