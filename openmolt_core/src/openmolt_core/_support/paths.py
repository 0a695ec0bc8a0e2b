"""Paths a user gives: whether a value can name a file, and reading such a file within bounds.

A path option (``OpenMolt(run_store=...)``, ``instructions_path``, a durable store's file) is
text or an ``os.PathLike`` of text. The operating system cannot take a NUL character in a path:
Python raises ``ValueError: embedded null byte`` at the first use, often far from where the
value was given (the first run, a worker thread). `path_problem` says why at the option.

A file a user names is read whole by `read_file` (or `read_text`), the one way OpenMolt reads
one: agent files, ``instructions_path``, ``.env`` files, the key and credential stores, eval
datasets and reports, OpenAPI documents. It refuses, before reading anything, what is not a
regular file (a folder, a device such as ``/dev/zero``, which never ends, or a named pipe,
which blocks until something writes to it) and a file larger than the reader's limit, which
each reader sets for its use. The SQLite stores check their file with `check_regular` before
they narrow its mode or open it. Each raises `FileRefused`, an ``OSError``, so a reader's
``except OSError`` names its option and the path as it does for a missing file.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata

__all__ = [
	"FileRefused",
	"check_regular",
	"folded",
	"path_problem",
	"read_capped",
	"read_file",
	"read_text",
]


class FileRefused(OSError):
	"""A path names no regular file, or a file larger than its reader takes; nothing was read.

	``strerror`` says why (``it is a named pipe (FIFO), not a regular file``), ``filename`` is
	the path, and ``errno`` is ``EISDIR`` for a folder, ``EFBIG`` for a file too large and
	``EINVAL`` for another kind of file.
	"""

	def __str__(self) -> str:
		return f"{self.filename}: {self.strerror}"


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


def _size(count: int) -> str:
	"""A number of bytes as people read it (``17 bytes``, ``12.0 KiB``, ``600.0 MiB``)."""
	if count < 1024:
		return f"{count} bytes"
	if count < 1024**2:
		return f"{count / 1024:.1f} KiB"
	if count < 1024**3:
		return f"{count / 1024**2:.1f} MiB"
	return f"{count / 1024**3:.1f} GiB"


def _kind(mode: int) -> str | None:
	"""What a file that is not a regular file is, in words; None for a regular file."""
	if stat.S_ISREG(mode):
		return None
	if stat.S_ISDIR(mode):
		return "a folder"
	if stat.S_ISFIFO(mode):
		return "a named pipe (FIFO)"
	if stat.S_ISCHR(mode):
		return "a character device"
	if stat.S_ISBLK(mode):
		return "a block device"
	if stat.S_ISSOCK(mode):
		return "a socket"
	return "not a regular file"


def _refuse(info: os.stat_result, path: str, limit: int | None) -> None:
	"""Raise `FileRefused` unless ``info`` is of a regular file within ``limit`` bytes."""
	kind = _kind(info.st_mode)
	if kind == "a folder":
		raise FileRefused(errno.EISDIR, "it is a folder, not a file", path)
	if kind is not None:
		raise FileRefused(errno.EINVAL, f"it is {kind}, not a regular file", path)
	if limit is not None and info.st_size > limit:
		raise FileRefused(
			errno.EFBIG, f"it is {_size(info.st_size)}, more than the {_size(limit)} read", path
		)


def check_regular(path: str | os.PathLike[str]) -> None:
	"""Refuse a path that names something other than a regular file; a missing one is fine.

	Nothing is opened: opening a device or a named pipe may block or act on it.

	Args:
		path: The file (a symlink is followed).

	Raises:
		FileRefused: It is a folder, a device, a named pipe or a socket.
	"""
	text = os.fspath(path)
	try:
		info = os.stat(text)
	except OSError:
		return  # missing, or not reachable: whoever opens it says so
	_refuse(info, text, None)


def read_file(path: str | os.PathLike[str], *, limit: int) -> bytes:
	"""Read a regular file whole, refusing anything else and any file over ``limit`` bytes.

	The path is checked before it is opened (a device is never opened), and what was opened
	is checked again (the path may have changed in between); the size is checked before
	reading, and the read stops after ``limit`` bytes, for a file that grows or states no size.

	Args:
		path: The file (a symlink is followed).
		limit: The most bytes read; a larger file is refused.

	Returns:
		The file's bytes.

	Raises:
		FileRefused: It is a folder, a device, a named pipe or a socket, or larger than
			``limit``.
		OSError: It cannot be read (``FileNotFoundError``, ``PermissionError``, ...).
	"""
	text = os.fspath(path)
	_refuse(os.stat(text), text, limit)
	flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
	# A named pipe swapped in after the check would block an open without O_NONBLOCK.
	fd = os.open(text, flags | getattr(os, "O_NONBLOCK", 0))
	try:
		_refuse(os.fstat(fd), text, limit)
		data = read_capped(fd, limit)
	finally:
		os.close(fd)
	if data is None:
		raise FileRefused(errno.EFBIG, f"it holds more than the {_size(limit)} read", text)
	return data


def read_capped(fd: int, most: int) -> bytes | None:
	"""Read a descriptor to its end, never more than ``most`` bytes; None when it holds more.

	For files whose size was checked with ``fstat`` before: a file that grows while it is read
	(appended to by another process), or states no size (``/proc``), still costs at most
	``most + 1`` bytes of memory.
	"""
	chunks: list[bytes] = []
	total = 0
	while True:
		chunk = os.read(fd, min(1 << 20, most + 1 - total))
		if not chunk:
			return b"".join(chunks)
		chunks.append(chunk)
		total += len(chunk)
		if total > most:
			return None


def read_text(path: str | os.PathLike[str], *, limit: int, encoding: str = "utf-8") -> str:
	r"""Read a regular file whole as text, as `read_file` reads it (its newlines made ``\n``).

	Line ends are read as ``Path.read_text`` reads them: ``\r\n`` and ``\r`` become ``\n``.

	Args:
		path: The file.
		limit: The most bytes read; a larger file is refused.
		encoding: Its encoding (``utf-8-sig`` takes off a BOM, as Notepad saves).

	Raises:
		FileRefused: As `read_file`.
		OSError: It cannot be read.
		UnicodeDecodeError: It is not text in ``encoding``.
	"""
	text = read_file(path, limit=limit).decode(encoding)
	if "\r" in text:
		text = text.replace("\r\n", "\n").replace("\r", "\n")
	return text


def folded(path: str) -> str:
	"""A path as every file system OpenMolt runs on may spell it: case folded, Unicode composed.

	Two places with one folded spelling count as one wherever a place is checked for safety
	(the taint marks, the stores the file tools keep out): on a case- or normalization-
	insensitive file system they are one file, and where they are two, treating them as one
	only refuses or taints more (fail closed).

	Args:
		path: The path (``str``; undecodable bytes as the file system's escapes).
	"""
	return unicodedata.normalize("NFC", unicodedata.normalize("NFD", path).casefold())
