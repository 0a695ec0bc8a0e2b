"""Path confinement for the FileSystem integration.

A path from the model is checked before any file operation:

1. refused outright: NUL and other control characters, backslashes, percent-encoded dots or
   slashes, characters that are not valid Unicode, and any ``..`` component;
2. a relative path is taken from the first directory; an absolute one must name a place inside
   one of the directories;
3. the path is resolved with symlinks followed (``os.path.realpath``). For a path that does not
   exist yet (a file about to be written), the deepest existing ancestor is resolved and the
   remaining components, which cannot be symlinks since they do not exist, are appended;
4. the resolved path must be inside one of the resolved directories.

Writes then go through a temporary file in the checked parent and an atomic ``os.replace``, which
replaces a symlink planted at the target instead of writing through it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from openmolt_core.errors import ToolError

__all__ = ["Sandbox", "atomic_write"]

_ODD = re.compile(r"[\x00-\x1f\x7f\\]|%(2e|2f|5c|00)", re.IGNORECASE)


class Sandbox:
	"""The directories a FileSystem integration may touch.

	Args:
		roots: The directories (they must exist).

	Raises:
		ValueError: A root does not exist or is not a directory.
	"""

	def __init__(self, roots: Sequence[str | os.PathLike[str]]) -> None:
		if not roots:
			raise ValueError("FileSystemIntegration needs at least one directory")
		resolved = []
		for root in roots:
			real = Path(os.path.realpath(os.fspath(root)))
			if not real.is_dir():
				raise ValueError(f"FileSystemIntegration: {os.fspath(root)!r} is not a directory")
			resolved.append(real)
		self.roots: tuple[Path, ...] = tuple(resolved)

	def _inside(self, real: Path) -> bool:
		return any(real == root or root in real.parents for root in self.roots)

	def resolve(self, path: str, *, follow: bool = True) -> Path:
		"""Resolve a path from the model to a real path inside the directories.

		Args:
			path: Relative to the first directory, or absolute inside one of them.
			follow: Resolve a symlink in the last component; False keeps the link itself (to
				delete or move it), resolving only its parent.

		Returns:
			The real path (it may not exist yet).

		Raises:
			ToolError: The path is malformed or leads outside the directories.
		"""
		if not isinstance(path, str):
			raise ToolError("a path must be a string")
		try:
			path.encode("utf-8")
		except UnicodeEncodeError:
			raise ToolError("the path is not valid Unicode") from None
		if _ODD.search(path):
			raise ToolError(
				f"the path {path[:120]!r} has control characters, backslashes or percent-encoding; "
				"write plain paths with '/'"
			)
		parts = [p for p in path.split("/") if p not in ("", ".")]
		if ".." in parts:
			raise ToolError("'..' is not allowed in paths; give a path inside the directory")
		base = Path("/") if path.startswith("/") else self.roots[0]
		candidate = base.joinpath(*parts)
		if follow or not parts:
			real = _real(candidate)
		else:
			real = _real(candidate.parent) / candidate.name
		if not self._inside(real):
			raise ToolError(
				f"the path {path[:120]!r} is outside the allowed directories "
				f"({', '.join(str(r) for r in self.roots)})"
			)
		return real

	def is_root(self, real: Path) -> bool:
		"""Whether a resolved path is one of the directories themselves."""
		return real in self.roots

	def display(self, real: Path) -> str:
		"""A path as the model should write it: relative to the first directory when inside it."""
		first = self.roots[0]
		if real == first:
			return "."
		if first in real.parents:
			return real.relative_to(first).as_posix()
		return real.as_posix()


def _real(candidate: Path) -> Path:
	existing = candidate
	rest: list[str] = []
	while not os.path.lexists(existing) and existing != existing.parent:
		rest.append(existing.name)
		existing = existing.parent
	real = Path(os.path.realpath(existing))
	for name in reversed(rest):
		real = real / name
	return real


def atomic_write(target: Path, data: bytes, *, append: bool = False) -> None:
	"""Write through a temporary file in the same directory, then rename it over the target.

	Args:
		target: The resolved, checked path.
		data: The bytes to write (appended to the current content when ``append``).
		append: Keep the current content first.
	"""
	prefix = target.read_bytes() if append and target.is_file() else b""
	fd, tmp = tempfile.mkstemp(prefix=".openmolt-", dir=target.parent)
	try:
		with os.fdopen(fd, "wb") as handle:
			handle.write(prefix)
			handle.write(data)
		if target.exists() and not target.is_symlink():
			os.chmod(tmp, target.stat().st_mode & 0o7777)
		os.replace(tmp, target)
	except BaseException:
		Path(tmp).unlink(missing_ok=True)
		raise
