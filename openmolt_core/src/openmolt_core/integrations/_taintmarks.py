"""Which files a tainted run wrote: the FileSystem integration's record, kept across processes.

A run that has read untrusted content (`openmolt_core.taint`) may write what that content told it
to; a later run that reads the file back would read those words as its own user's files. So
every path a tainted run writes, appends to, creates, moves or copies to is *marked* here, and a
read, a listing or a search that shows a marked path is labelled ``untrusted``
(`openmolt_core.tools.LabelledResult`): the run that reads it is tainted. A clean run that
replaces a whole file (``write``, a ``copy`` or ``move`` of a clean file over it) clears its
mark; a move or copy carries the source's marks to the destination.

The record is one small JSON file (``$OPENMOLT_FILE_TAINT``, else
``$XDG_STATE_HOME/openmolt/file-taint.json``; ``file_system_integration(taint_record=...)``
names another): 0600 in a 0700 folder, replaced atomically (a temporary file, then a rename)
under an exclusive lock, so processes that share the directories share the marks. It holds no
file content and no path: each marked place is the SHA-256 digest of its absolute path, folded
(`openmolt_core._support.paths.folded`: one mark for every spelling of a place). A
record that exists but cannot be read (corrupt, unreadable) is treated as marking every path it
may cover (fail closed: every path in its FileSystems' folders; any path for the default record,
which any process may keep), and a warning says so; a tainted write whose mark cannot be kept is
not made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path

from openmolt_core._support.paths import folded
from openmolt_core._support.private import (
	FILE_MODE,
	locked_file,
	private_dir,
	state_file,
)
from openmolt_core.errors import ConfigurationError, ToolError

__all__ = [
	"RECORD_VARIABLE",
	"TaintMarks",
	"default_record",
	"keep_marks",
	"kept_records",
	"refuse_tainted",
	"written_by_tainted",
]

log: logging.Logger = logging.getLogger("openmolt")

RECORD_VARIABLE = "OPENMOLT_FILE_TAINT"
"""The environment variable that names the record (``off``: keep none, reads are not labelled)."""

_VERSION = 2
"""The record's version: 2 marks folded paths (`TaintMarks.key`), 1 marked paths as spelled."""


def default_record() -> Path | None:
	"""``$OPENMOLT_FILE_TAINT``, else ``file-taint.json`` in OpenMolt's state folder (None: off)."""
	return state_file(RECORD_VARIABLE, "file-taint.json", refused=ConfigurationError)


_WRITERS: weakref.WeakKeyDictionary[TaintMarks, tuple[Path, ...]] = weakref.WeakKeyDictionary()
"""The records of this process's FileSystem integrations, each with the folders it writes in."""


def keep_marks(marks: TaintMarks, roots: Sequence[Path]) -> None:
	"""Say that ``marks`` keeps the marks of writes under ``roots`` (`written_by_tainted` reads it).

	Args:
		marks: A FileSystem integration's record.
		roots: Its allowed directories (resolved).
	"""
	if marks.path is not None:
		_WRITERS[marks] = tuple(roots)


def kept_records() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
	"""Every record this process's FileSystem integrations keep, as stores to keep out.

	For `openmolt_core.integrations._sandbox.Sandbox.watch` (``(folders, stores)``): a
	FileSystem whose folder holds another's record must not remove or rewrite it (every mark of
	what tainted runs wrote through the other would go), whichever was made first.
	"""
	return (), tuple(m.path for m in list(_WRITERS) if m.path is not None)


def written_by_tainted(root: Path, places: Iterable[Sequence[str]]) -> bool:
	"""Whether a tainted run wrote any of these places, by the records FileSystems keep.

	For what reads files outside the FileSystem integration (a skill's folder, which a
	FileSystem may write into): the records of this process's FileSystem integrations whose
	folders hold ``root`` or lie in it, and the default one (another process's), each read
	once. An unreadable record marks every place it may cover: one of this process's, every
	place in its FileSystems' folders (a file beside them, which none could write, stays
	clean); the default one, every place (any process's FileSystem may keep it).

	Args:
		root: The folder the places are in (resolved, as the FileSystem resolves its own).
		places: Their components below ``root``.
	"""
	return _verdict(root, places)[0]


def _verdict(root: Path, places: Iterable[Sequence[str]]) -> tuple[bool, tuple[Path, str] | None]:
	"""`written_by_tainted`, and the unreadable record that decided it with why (None: marks)."""
	places = [tuple(parts) for parts in places]
	keys = [TaintMarks.key(root, parts) for parts in places]
	if not keys:
		return False, None
	for marks, folders in _records_over(root):
		held = marks.read()
		if isinstance(held, str):  # unreadable: every place it may cover counts as marked
			if folders is None or any(_within(root, parts, folders) for parts in places):
				assert marks.path is not None
				return True, (marks.path, held)
		elif any(_held(k, held) for k in keys):
			return True, None
	return False, None


def _within(root: Path, parts: Sequence[str], folders: Sequence[Path]) -> bool:
	"""Whether a place may be in one of ``folders``: as written, or where its links lead.

	A ``..`` in it, or a place whose links cannot be followed, may be anywhere: it is.
	"""
	if any(p in ("", ".", "..") for p in parts):
		return True
	place = root.joinpath(*parts)
	try:
		real = Path(os.path.realpath(place))
	except (OSError, ValueError):
		return True
	return any(place.is_relative_to(f) or real.is_relative_to(f) for f in folders)


def _records_over(root: Path) -> list[tuple[TaintMarks, tuple[Path, ...] | None]]:
	"""The records that may mark places in ``root`` (`written_by_tainted`), one per file.

	Each with the folders its FileSystems write in, as far as this process knows them; None
	for the default record, which any process's FileSystem may keep marks in.
	"""
	records: dict[Path, tuple[TaintMarks, tuple[Path, ...] | None]] = {}
	for marks, folders in list(_WRITERS.items()):
		if marks.path is not None and any(
			root.is_relative_to(f) or f.is_relative_to(root) for f in folders
		):
			kept = records.setdefault(marks.path, (marks, ()))
			records[marks.path] = (kept[0], (*(kept[1] or ()), *folders))
	try:
		default = default_record()
	except ConfigurationError:  # said where a FileSystem integration is made
		default = None
	if default is not None:
		records[default] = (records.get(default, (TaintMarks(default),))[0], None)
	return list(records.values())


def refuse_tainted(path: str | os.PathLike[str], what: str) -> None:
	"""Refuse configuration or code a run that had read untrusted content wrote.

	What OpenMolt reads from a file it is told of (an agent file, its instructions, a ``.env``
	file, a ``--tool`` module) is the application's word, read before any run: a base URL or a
	proxy there receives the API keys, and a Python file runs. A FileSystem integration that may
	write there (its directories hold the file) lets a tainted run write it; such a file, marked
	by the FileSystem's taint record (`written_by_tainted`), is refused.

	Args:
		path: The file.
		what: What it is, for the message (``the .env file``).

	Raises:
		ConfigurationError: A tainted run wrote it; the message names it and what to do.
	"""
	try:
		real = Path(os.path.realpath(os.fspath(path)))
	except (OSError, ValueError):
		return  # said by the reader, which cannot read it either
	marked, unreadable = _verdict(real.parent, [(real.name,)])
	if not marked:
		return
	if unreadable:  # every place it covers counts as marked: say so, not that a run wrote this
		record, why = unreadable
		raise ConfigurationError(
			f"{what} {os.fspath(path)!r} is refused: the FileSystem taint record {str(record)!r} "
			f"cannot be read ({why}), so no file it may cover is known to be clean. Fix the "
			"record, or remove it (removing it forgets every mark)"
		)
	raise ConfigurationError(
		f"{what} {os.fspath(path)!r} was written by a run that had read untrusted content (the "
		"FileSystem taint record marks it), so what it says may be someone else's words: "
		"refused. Read it; if it is as you want it, write it again with a run that has not read "
		"untrusted content, or remove the taint record (removing it forgets every mark)"
	)


def _held(key: str, marks: set[str]) -> bool:
	"""Whether a place (`TaintMarks.key`) is marked, by its folded digest or as spelled."""
	return any(d in marks for d in key.split(":"))


class _Unreadable(Exception):
	"""The record exists but cannot be read: every path counts as marked."""


class TaintMarks:
	"""The marks of the paths tainted runs wrote, in one record file.

	Args:
		path: The record file (None: keep no marks; nothing is labelled).
	"""

	__slots__ = ("__weakref__", "_lock", "_warned", "path")

	def __init__(self, path: Path | None) -> None:
		self.path: Path | None = path
		"""The record file, or None."""
		self._lock = threading.Lock()
		self._warned: set[str] = set()

	@staticmethod
	def key(root: Path, parts: Sequence[str]) -> str:
		"""The mark of a place: digests of its absolute path, folded (no path is kept).

		Folded (`openmolt_core._support.paths.folded`): on a case-insensitive file system
		(macOS, Windows) ``notes.md`` opens the ``Notes.md`` a tainted run wrote, and on macOS
		``café`` with a combining accent opens the composed one; every spelling of a place has
		one mark. Where two such names are two files, a mark on one marks the other too (fail
		closed). The key also holds the digest of the path as spelled, which a record of
		version 1 marked: such a mark still marks its place, and a clean write clears it. The
		record keeps only the folded digest of a mark made now.

		Args:
			root: The allowed directory it is in (resolved).
			parts: Its components below that directory.
		"""
		whole = os.path.join(os.fspath(root), *parts)
		now = hashlib.sha256(os.fsencode(folded(whole))).hexdigest()
		spelled = hashlib.sha256(os.fsencode(whole)).hexdigest()
		return now if now == spelled else f"{now}:{spelled}"

	def _read(self) -> set[str]:
		"""The marks in the record (empty when it does not exist yet)."""
		assert self.path is not None
		try:
			raw = self.path.read_bytes()
		except (FileNotFoundError, NotADirectoryError):  # no record there: nothing is marked
			return set()
		except OSError as exc:
			raise _Unreadable(f"{type(exc).__name__}: {exc.strerror or exc}") from None
		try:
			data = json.loads(raw)
		except ValueError:
			raise _Unreadable("it is not JSON") from None
		marks = data.get("marks") if isinstance(data, dict) else None
		if not isinstance(marks, list) or not all(isinstance(m, str) for m in marks):
			raise _Unreadable("it has no list of marks")
		return set(marks)

	def _warn(self, why: str) -> None:
		if why in self._warned:
			return
		self._warned.add(why)
		log.warning(
			"the FileSystem taint record %s cannot be read (%s): every file is treated as "
			"written by a tainted run, so each read, listing and search taints the run that "
			"makes it. Fix or remove the record (removing it forgets every mark)",
			self.path,
			why,
		)

	def read(self) -> set[str] | str:
		"""The marks in the record, or why it cannot be read (with a warning, once per reason)."""
		if self.path is None:
			return set()
		try:
			with self._lock:
				return self._read()
		except _Unreadable as exc:
			self._warn(str(exc))
			return str(exc)

	def marked(self, keys: Iterable[str]) -> bool:
		"""Whether any of these places is marked (True for all when the record is unreadable).

		Args:
			keys: Places (`key`).
		"""
		if self.path is None:
			return False
		keys = list(keys)
		if not keys:
			return False
		try:
			with self._lock:
				marks = self._read()
		except _Unreadable as exc:
			self._warn(str(exc))
			return True
		return any(_held(k, marks) for k in keys)

	def unreadable(self) -> str | None:
		"""Why the record cannot be read (every place then counts as marked), or None."""
		if self.path is None:
			return None
		try:
			with self._lock:
				self._read()
		except _Unreadable as exc:
			return str(exc)
		return None

	def which(self, keys: Iterable[str]) -> set[str]:
		"""The marked ones among these places (all of them when the record is unreadable).

		Args:
			keys: Places (`key`).
		"""
		keys = set(keys)
		if self.path is None or not keys:
			return set()
		try:
			with self._lock:
				marks = self._read()
		except _Unreadable as exc:
			self._warn(str(exc))
			return keys
		return {k for k in keys if _held(k, marks)}

	def update(self, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
		"""Mark some places and clear others, in one atomic replacement of the record.

		A place in both is marked. Clearing is best effort: when the record cannot be read or
		written, a mark stays (fail closed) and a warning says so.

		Args:
			add: Places to mark.
			remove: Places to clear.

		Raises:
			ToolError: A mark could not be kept (the record is unreadable, or cannot be
				written): the caller does not make the write it was for.
		"""
		add = {k.split(":")[0] for k in add}  # the folded digest (`key`)
		remove = {d for k in remove for d in k.split(":")} - add  # a version 1 mark too
		if self.path is None or not (add or remove):
			return
		try:
			with self._lock, locked_file(self.path.with_name(self.path.name + ".lock")):
				marks = self._read()
				before = len(marks)
				marks -= remove
				if len(marks) == before and add <= marks:
					return  # nothing changes: no write
				marks |= add
				self._write(marks)
		except (_Unreadable, OSError) as exc:
			why = str(exc) if isinstance(exc, _Unreadable) else f"{type(exc).__name__}: {exc}"
			if add:
				raise ToolError(
					f"not done: this run has read untrusted content, and the FileSystem taint "
					f"record, which keeps that mark on what it writes, cannot be kept ({why}); "
					"tell the user"
				) from None
			self._warn(why)

	def _write(self, marks: set[str]) -> None:
		assert self.path is not None
		private_dir(self.path.parent)
		body = json.dumps({"version": _VERSION, "marks": sorted(marks)}).encode()
		tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
		fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
		try:
			os.fchmod(fd, FILE_MODE)
			view = memoryview(body)
			while view:
				view = view[os.write(fd, view) :]
			os.fsync(fd)
		except BaseException:
			os.close(fd)
			with contextlib.suppress(OSError):
				os.unlink(tmp)
			raise
		os.close(fd)
		try:
			os.replace(tmp, self.path)
		except BaseException:
			with contextlib.suppress(OSError):
				os.unlink(tmp)
			raise
