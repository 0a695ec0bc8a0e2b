"""The caps and text checks of the paths FileSystem and skills take (no disk access here).

`check_path` refuses, before anything touches the disk: what is not a string or not valid
Unicode, control characters (NUL, C0, DEL, C1, line and paragraph separators, bidirectional
controls), backslashes, percent-encoded dots, slashes, backslashes or NULs, ``..``, a path over
`MAX_PATH_BYTES` (PATH_MAX) and a name over `MAX_NAME_BYTES` (NAME_MAX). `check_depth` caps the
levels below a directory (`MAX_DEPTH`). `openmolt_core.integrations._sandbox` checks length
and depth again on the place a path leads to, with its directory's own path.
"""

from __future__ import annotations

import re

from openmolt_core.errors import ToolError

__all__ = ["MAX_DEPTH", "MAX_NAME_BYTES", "MAX_PATH_BYTES", "check_depth", "check_path"]

MAX_PATH_BYTES = 4095
"""The longest path, in UTF-8 bytes: PATH_MAX (4,096) less its NUL.

Both the path as given and the place it leads to, counted with its directory's absolute path
(``/srv/data/a/b.txt``), must fit, so every file FileSystem makes can be opened by name by any
other program.
"""

MAX_NAME_BYTES = 255
"""The longest name of one path component, in UTF-8 bytes (NAME_MAX)."""

MAX_DEPTH = 64
"""The most components a path may have below its directory (``a/b/c`` has 3)."""

# Control characters (C0, DEL, C1), line and paragraph separators, the bidirectional controls
# that make a name read differently than it is, backslashes, and percent-encoded dots, slashes,
# backslashes and NULs.
_ODD = re.compile(
	r"[\x00-\x1f\x7f-\x9f\\\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
	r"|%(2e|2f|5c|00)",
	re.IGNORECASE,
)


def check_path(path: object) -> list[str]:
	"""Check a path as text, before anything touches the disk; return its components.

	Refused: what is not a string or not valid Unicode, a path over `MAX_PATH_BYTES`, a name
	over `MAX_NAME_BYTES`, control characters (NUL, C0, DEL, C1, line separators, bidirectional
	controls), backslashes, percent-encoded dots, slashes or NULs, and ``..``.

	Args:
		path: The path as the model (or a skill's caller) wrote it.

	Returns:
		Its components, without empty ones and ``.``.

	Raises:
		ToolError: What is wrong and how to write the path instead; never the host's path.
	"""
	if not isinstance(path, str):
		raise ToolError(f"a path must be a string, not {type(path).__name__}")
	try:
		size = len(path.encode("utf-8"))
	except UnicodeEncodeError:
		raise ToolError("the path is not valid Unicode (it has a lone surrogate)") from None
	if size > MAX_PATH_BYTES:
		raise ToolError(
			f"the path {path[:60]!r}... is too long ({size} bytes); paths are limited to "
			f"{MAX_PATH_BYTES} bytes in UTF-8 (PATH_MAX); use a shorter path"
		)
	if _ODD.search(path):
		raise ToolError(
			f"the path {path[:120]!r} has control characters, backslashes or percent-encoding; "
			"write plain paths with '/'"
		)
	parts = [p for p in path.split("/") if p not in ("", ".")]
	for part in parts:
		_check_name(path, part)
	if ".." in parts:
		raise ToolError("'..' is not allowed in paths; give a path inside the directory")
	return parts


def _check_name(path: str, name: str) -> None:
	size = len(name.encode("utf-8", "surrogatepass"))
	if size > MAX_NAME_BYTES:
		raise ToolError(
			f"a name in the path {path[:60]!r}... is too long ({name[:40]!r}...: {size} bytes); "
			f"each name is limited to {MAX_NAME_BYTES} bytes in UTF-8 (NAME_MAX); use a shorter "
			"name"
		)


def check_depth(path: str, depth: int) -> None:
	"""Refuse a place more than `MAX_DEPTH` levels below its directory.

	Raises:
		ToolError: It is too deep (the path as given, cut).
	"""
	if depth > MAX_DEPTH:
		raise ToolError(
			f"the path {path[:60]!r}... is too deep (it leads {depth} levels down); paths are "
			f"limited to {MAX_DEPTH} levels below the directory; use a shallower path"
		)
