"""Whether a value given for a path can name a file: the one rule every path option follows.

A path option (``OpenMolt(run_store=...)``, ``instructions_path``, a durable store's file) is
text or an ``os.PathLike`` of text. The operating system cannot take a NUL character in a path:
Python raises ``ValueError: embedded null byte`` at the first use, often far from where the
value was given (the first run, a worker thread). `path_problem` says why at the option.
"""

from __future__ import annotations

import os

__all__ = ["path_problem"]


def path_problem(value: object) -> str | None:
	"""Why ``value`` cannot name a file, in words that follow "must be a file's path"; or None.

	Args:
		value: What was given for the path.
	"""
	if not isinstance(value, str | os.PathLike):
		return f"(text or a pathlib.Path), got {type(value).__name__}"
	text = os.fspath(value)
	if not isinstance(text, str):
		return "as text, not bytes"
	if "\x00" in text:
		return f"with no NUL character (it holds one at {text.index(chr(0))})"
	return None
