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
replaces a symlink planted at the target instead of writing through it. Appends open the checked
path with ``O_APPEND | O_NOFOLLOW`` (one lock serialises them), and copies never write through a
symlink found at or under the destination: the link itself is replaced.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from openmolt_core.errors import ToolError

__all__ = ["Sandbox", "append_bytes", "atomic_write", "copy_without_following"]

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

	def check_followed(self, real: Path, given: str) -> None:
		"""Refuse a resolved path whose symlinks, followed, lead outside the directories.

		Args:
			real: A path from `resolve` (possibly with ``follow=False``).
			given: The path as the model wrote it (for the message).

		Raises:
			ToolError: Following the path's symlinks leaves the directories.
		"""
		if not self._inside(_real(real)):
			raise ToolError(
				f"the path {given[:120]!r} is a symlink leading outside the allowed directories "
				f"({', '.join(str(r) for r in self.roots)})"
			)

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


def _umask() -> int:
	try:
		with open("/proc/self/status", encoding="ascii") as status:
			for line in status:
				if line.startswith("Umask:"):
					return int(line.split()[1], 8)
	except (OSError, ValueError):
		pass
	with _UMASK_LOCK:
		mask = os.umask(0o022)
		os.umask(mask)
	return mask


_UMASK_LOCK = threading.Lock()
_APPEND_LOCK = threading.Lock()


def atomic_write(target: Path, data: bytes) -> None:
	"""Write through a temporary file in the same directory, then rename it over the target.

	An existing file keeps its mode; a new file (or one replacing a symlink) gets ``0o666`` less
	the umask, like a file created with ``open``.

	Args:
		target: The resolved, checked path.
		data: The bytes to write.
	"""
	fd, tmp = tempfile.mkstemp(prefix=".openmolt-", dir=target.parent)
	try:
		with os.fdopen(fd, "wb") as handle:
			handle.write(data)
		if target.exists() and not target.is_symlink():
			os.chmod(tmp, target.stat().st_mode & 0o7777)
		else:
			os.chmod(tmp, 0o666 & ~_umask())
		os.replace(tmp, target)
	except BaseException:
		Path(tmp).unlink(missing_ok=True)
		raise


def append_bytes(target: Path, data: bytes) -> int:
	"""Append to a file (created when missing) without following a symlink at the target.

	Appends are serialised by a lock, so parallel appends all land whole.

	Args:
		target: The resolved, checked path.
		data: The bytes to append.

	Returns:
		The size of the file afterwards.

	Raises:
		ToolError: A symlink was planted at the target after the check.
	"""
	flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
	with _APPEND_LOCK:
		try:
			fd = os.open(target, flags, 0o666)
		except OSError as err:
			if err.errno == errno.ELOOP:
				raise ToolError(
					f"{target.name!r} is a symlink; refusing to append through it"
				) from None
			raise
		try:
			view = memoryview(data)
			while view:
				view = view[os.write(fd, view) :]
			return os.fstat(fd).st_size
		finally:
			os.close(fd)


def _replace_with_link(src: Path, dst: Path) -> None:
	tmp = dst.parent / f".openmolt-{secrets.token_hex(8)}"
	os.symlink(os.readlink(src), tmp)
	try:
		os.replace(tmp, dst)
	except BaseException:
		tmp.unlink(missing_ok=True)
		raise


def _replace_with_file(src: Path, dst: Path) -> None:
	fd, tmp = tempfile.mkstemp(prefix=".openmolt-", dir=dst.parent)
	os.close(fd)
	try:
		shutil.copy2(src, tmp)
		os.replace(tmp, dst)
	except BaseException:
		Path(tmp).unlink(missing_ok=True)
		raise


def copy_without_following(src: Path, dst: Path) -> None:
	"""Copy a file, symlink or directory tree, merging into an existing directory.

	Nothing is written through a symlink at or under ``dst``: such a link is replaced by what is
	copied. Symlinks under ``src`` are copied as symlinks.

	Args:
		src: The checked source (a symlink is copied as a link).
		dst: The checked destination; its parent exists.

	Raises:
		ToolError: A file or link would replace a real directory.
	"""
	dst_is_dir = dst.is_dir() and not dst.is_symlink()
	if src.is_symlink() or not src.is_dir():
		if dst_is_dir:
			raise ToolError(f"cannot replace the directory {dst.name!r} with a file")
		(_replace_with_link if src.is_symlink() else _replace_with_file)(src, dst)
		return
	if os.path.lexists(dst) and not dst_is_dir:
		dst.unlink()
	dst.mkdir(exist_ok=True)
	for name in sorted(os.listdir(src)):
		copy_without_following(src / name, dst / name)
	shutil.copystat(src, dst, follow_symlinks=False)
