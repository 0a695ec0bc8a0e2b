"""Path confinement for the FileSystem integration: every operation goes through directory fds.

A path from the model is first checked as text (`check_path`): NUL and other control
characters, backslashes, percent-encoded dots or slashes, text that is not valid Unicode and any
``..`` component are refused, and so are paths over the caps: `MAX_PATH_BYTES` (PATH_MAX), names
over `MAX_NAME_BYTES` (NAME_MAX) and more than `MAX_DEPTH` levels. Length and depth are checked
again on the place the path leads to (its directory's own path included, symlinks resolved). A
relative path is taken from the first directory; an absolute one must start with one of the
directories.

Then the path is walked one component at a time, from a file descriptor of the directory down
(`Sandbox.locate`): each directory is opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to its
parent's descriptor, and each operation uses the last descriptor and a plain name
(``os.open(name, dir_fd=...)``, ``os.stat(name, dir_fd=..., follow_symlinks=False)``,
``os.replace(..., src_dir_fd=..., dst_dir_fd=...)``). No name is resolved again after it was
checked, so swapping a directory for a symlink while a tool runs (even with an atomic
``renameat2`` exchange) cannot lead outside: the swapped name fails to open, or the descriptor
already held still points at the checked directory. A symlink met on the way is read once and
its target walked the same way, inside the directories only (an absolute target must start
with one of them; ``..`` never climbs above a directory); 40 links at most. A directory itself is
opened from ``/`` down, its path resolved once when the sandbox was made and walked with
``O_NOFOLLOW``: one directory nested in another and replaced by a symlink (moved away by a tool, a
link moved in its place) is refused, not followed.

Files:

- Only regular files are read, written, appended to, copied or searched. A FIFO, socket or
  device is refused with a clear error, and files are opened with ``O_NONBLOCK | O_NOFOLLOW``
  and checked with ``fstat``, so opening one can never block.
- A regular file with more than one hard link is refused for reading, appending, copying and
  searching: the other link may be outside the directories, and its content is not the
  directory's to give. Writing is allowed, since it replaces the name (a temporary file in the
  same directory, then an atomic rename) and never changes the other link's content.
- Temporary files of writes and copies (``.openmolt-<random>.tmp``) are made in the target's own
  directory, through its descriptor, and removed when the write fails.

Every ``OSError`` becomes a `ToolError` that names the path as the model wrote it, never the
absolute directory (`os_error`).
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from openmolt_core._support.paths import folded, read_capped
from openmolt_core.errors import ToolError
from openmolt_core.integrations._paths import (
	MAX_DEPTH,
	MAX_PATH_BYTES,
	check_depth,
	check_path,
)

__all__ = [
	"APPEND_LOCK",
	"MAX_LINKS",
	"ConfinedFile",
	"Located",
	"Sandbox",
	"WatchedPlaces",
	"kind_of",
	"open_regular",
	"os_error",
	"read_all",
	"read_capped",
	"temp_name",
	"write_file",
]

MAX_LINKS = 40
"""Symlinks followed in one path at most (the kernel's own limit)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The directories above an allowed one are only passed through: O_PATH needs no read permission
# on them (a home folder may be 0711), where it exists (Linux).
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = {
	stat.S_IFREG: "file",
	stat.S_IFDIR: "directory",
	stat.S_IFLNK: "symlink",
	stat.S_IFIFO: "FIFO",
	stat.S_IFSOCK: "socket",
	stat.S_IFCHR: "character device",
	stat.S_IFBLK: "block device",
}
_MESSAGES = {
	errno.ENOENT: "{path!r} does not exist",
	errno.EEXIST: "{path!r} already exists",
	errno.ENOTDIR: "a part of {path!r} is not a directory",
	errno.EISDIR: "{path!r} is a directory",
	errno.ELOOP: "{path!r} has a symlink where none may be (or it changed while in use)",
	errno.ENAMETOOLONG: "a name in {path!r} is too long",
	errno.ENOTEMPTY: "{path!r} is not empty",
	errno.EACCES: "permission denied for {path!r}",
	errno.EPERM: "the operation is not permitted on {path!r}",
	errno.ENOSPC: "no space left to write {path!r}",
	errno.EDQUOT: "the disk quota is exceeded writing {path!r}",
	errno.EROFS: "{path!r} is on a read-only file system",
	errno.ENXIO: "{path!r} is not a regular file",
	errno.EINVAL: "the operation is not valid for {path!r}",
	errno.EBUSY: "{path!r} is busy",
	errno.EMLINK: "{path!r} has too many links",
	errno.ETXTBSY: "{path!r} is busy",
}


def kind_of(mode: int) -> str:
	"""The kind of a file from its ``st_mode``: file, directory, symlink, FIFO, socket, device."""
	return _KINDS.get(stat.S_IFMT(mode), "special file")


def os_error(err: OSError, path: str, verb: str = "use") -> ToolError:
	"""An ``OSError`` as the tool's error, naming the path as the model gave it.

	Args:
		err: The error (its file names, which are absolute host paths, are not used).
		path: The path as the model wrote it.
		verb: What was being done, for errors without a message of their own.
	"""
	shown = path[:200]
	template = _MESSAGES.get(err.errno or 0)
	if template is not None:
		return ToolError(template.format(path=shown))
	reason = os.strerror(err.errno) if err.errno else type(err).__name__
	return ToolError(f"cannot {verb} {shown!r}: {reason}")


def _not_regular(path: str, mode: int) -> ToolError:
	return ToolError(
		f"{path[:200]!r} is a {kind_of(mode)}, not a regular file; FileSystem reads and writes "
		"regular files only"
	)


def _hard_linked(path: str) -> ToolError:
	return ToolError(
		f"{path[:200]!r} has more than one hard link (another name for it may be outside the "
		"allowed directories); refused"
	)


@dataclass(slots=True)
class Located:
	"""A place inside the directories, held through open directory descriptors.

	Attributes:
		dir_fd: The descriptor of the directory that holds the entry (or of the directory
			itself, when ``name`` is None).
		name: The entry's name in that directory; None when the place is the directory itself.
		root: Which of the sandbox's directories it is in.
		parts: Its components below that directory (symlinks resolved).
		display: The path as the model should write it.
	"""

	dir_fd: int
	name: str | None
	root: int
	parts: tuple[str, ...]
	display: str

	def lstat(self) -> os.stat_result | None:
		"""``lstat`` of the entry (of the directory itself when ``name`` is None); None if absent."""
		try:
			if self.name is None:
				return os.fstat(self.dir_fd)
			return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
		except FileNotFoundError:
			return None


def open_regular(
	place: Located, given: str, *, hard_links: bool = False
) -> tuple[int, os.stat_result]:
	"""Open an existing regular file for reading without blocking and without following links.

	Args:
		place: The located file.
		given: The path as the model wrote it (for errors).
		hard_links: Allow a file with more than one hard link.

	Returns:
		The descriptor (the caller closes it) and its ``fstat``.

	Raises:
		ToolError: The path is missing, not a regular file, hard-linked, or cannot be opened.
	"""
	if place.name is None:
		raise ToolError(f"{given[:200]!r} is a directory")
	before = place.lstat()
	if before is None:
		raise ToolError(f"no file at {given[:200]!r}")
	if not stat.S_ISREG(before.st_mode):
		if stat.S_ISDIR(before.st_mode):
			raise ToolError(f"{given[:200]!r} is a directory")
		raise _not_regular(given, before.st_mode)
	try:
		fd = os.open(place.name, _READ_FLAGS, dir_fd=place.dir_fd)
	except OSError as err:
		raise os_error(err, given, "open") from None
	info = os.fstat(fd)
	if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (
		before.st_dev,
		before.st_ino,
	):
		os.close(fd)
		raise ToolError(f"{given[:200]!r} changed while it was being opened; try again")
	if info.st_nlink > 1 and not hard_links:
		os.close(fd)
		raise _hard_linked(given)
	return fd, info


def read_all(fd: int, size: int) -> bytes:
	"""Read a file descriptor to its end (at most ``size`` bytes plus what was appended)."""
	chunks: list[bytes] = []
	while True:
		chunk = os.read(fd, max(size, 65536))
		if not chunk:
			return b"".join(chunks)
		chunks.append(chunk)


class ConfinedFile:
	"""A regular file inside the directories, for ``fileSystem:`` file references.

	Each read walks the path again from the directory and checks that it is still the same
	file, so a reference never reads anything the checks would refuse.

	Args:
		box: The sandbox.
		path: The path as the model wrote it.
	"""

	__slots__ = ("box", "identity", "name", "path", "size")

	def __init__(self, box: Sandbox, path: str) -> None:
		self.box = box
		self.path = path
		with box.locate(path) as place:
			fd, info = open_regular(place, path)
			os.close(fd)
			self.name = place.name or ""
		self.size = info.st_size
		self.identity = (info.st_dev, info.st_ino)

	def read(self, start: int, stop: int) -> bytes:
		"""The bytes from ``start`` to ``stop`` (exclusive).

		Raises:
			ToolError: The file is gone, changed into another file, or cannot be read.
		"""
		with self.box.locate(self.path) as place:
			fd, info = open_regular(place, self.path)
			try:
				if (info.st_dev, info.st_ino) != self.identity:
					raise ToolError(f"{self.path[:200]!r} changed since it was checked; try again")
				return os.pread(fd, max(stop - start, 0), start)
			except OSError as err:
				raise os_error(err, self.path, "read") from None
			finally:
				os.close(fd)


WatchedPlaces = Callable[
	[], "tuple[Iterable[str | os.PathLike[str]], Iterable[str | os.PathLike[str]]] | None"
]
"""What `Sandbox.watch` asks: ``(folders, stores)`` to keep out now, or None once gone."""


_Kept = tuple[Path, ...]


def _resolved(kept: _Kept, places: Iterable[str | os.PathLike[str]]) -> _Kept:
	"""``kept`` and each of ``places`` resolved (symlinks, as far as they exist), once each."""
	return _merged(kept, _real(places))


def _real(places: Iterable[str | os.PathLike[str]]) -> _Kept:
	"""Each place resolved; one that cannot be (a NUL in it) is left out."""
	out: list[Path] = []
	for place in places:
		try:
			out.append(Path(os.path.realpath(os.fspath(place))))
		except (OSError, ValueError):
			continue
	return tuple(out)


@functools.lru_cache(maxsize=4096)
def _spelled(path: Path) -> tuple[str, ...]:
	"""A path's components, folded (`folded`): one spelling for every spelling of a place."""
	return tuple(folded(part) for part in path.parts)


def _within(place: tuple[str, ...], kept: tuple[str, ...]) -> bool:
	"""Whether a folded place is ``kept`` or lies inside it."""
	return place[: len(kept)] == kept


def _text(place: str | os.PathLike[str]) -> str:
	return os.fspath(place)


def _merged(kept: _Kept, more: _Kept) -> _Kept:
	"""``kept`` and then each of ``more`` not in it."""
	return (*kept, *dict.fromkeys(p for p in more if p not in kept))


class Sandbox:
	"""The directories a FileSystem integration may touch.

	Args:
		roots: The directories (they must exist).
		pin: Remember each directory's identity (device and inode) now, and refuse to work in
			it once its path leads to another directory (skills: a skill's folder swapped for
			a symlink is not followed); False follows the directory's path each time.

	Raises:
		ValueError: A root does not exist or is not a directory.
	"""

	def __init__(self, roots: Sequence[str | os.PathLike[str]], *, pin: bool = False) -> None:
		if not roots:
			raise ValueError("FileSystemIntegration needs at least one directory")
		resolved = []
		given = []
		for root in roots:
			real = Path(os.path.realpath(os.fspath(root)))
			if not real.is_dir():
				raise ValueError(f"FileSystemIntegration: {os.fspath(root)!r} is not a directory")
			resolved.append(real)
			given.append(Path(os.path.abspath(os.fspath(root))))
		self.roots: tuple[Path, ...] = tuple(resolved)
		self._root_bytes = tuple(len(os.fsencode(r)) for r in resolved)
		self._pins: tuple[tuple[int, int], ...] | None = None
		if pin:
			self._pins = tuple((i.st_dev, i.st_ino) for i in (os.stat(r) for r in resolved))
		# The directories as the application wrote them, also accepted in absolute paths.
		self._aliases: tuple[Path, ...] = tuple(given)
		self.reserved: tuple[Path, ...] = ()
		"""Places inside the directories no tool may touch (resolved): OpenMolt's own state."""
		self.reserved_stores: tuple[Path, ...] = ()
		"""Store files no tool may touch (resolved), nor any name beside one that begins with
		its name (SQLite's ``-wal``, ``-shm`` and ``-journal``, a ``.lock``, a ``.files`` folder)
		or with a dot and its name and a dot (the credential store's ``.credentials.enc.*.lock``)."""
		self._fixed: tuple[tuple[Path, ...], tuple[Path, ...]] = ((), ())
		self._watched: dict[int, WatchedPlaces] = {}
		self._seen: dict[int, tuple[tuple[tuple[str, ...], tuple[str, ...]], _Kept, _Kept]] = {}

	def reserve(self, places: Iterable[str | os.PathLike[str]], *, stores: bool = False) -> None:
		"""Keep more places out of every tool's reach (`reserved`, or `reserved_stores`).

		Each is resolved now (its symlinks, as far as they exist); one named twice is kept once.

		Args:
			places: Files or folders, absolute or relative to the working directory.
			stores: They are store files: the names beside each that begin with its name are
				kept out too.
		"""
		folders, files = self._fixed
		if stores:
			files = _resolved(files, places)
		else:
			folders = _resolved(folders, places)
		self._fixed = (folders, files)
		self.reserved = _resolved(self.reserved, folders)
		self.reserved_stores = _resolved(self.reserved_stores, files)

	def watch(self, key: int, places: WatchedPlaces) -> None:
		"""Keep out, at each path a tool walks, the places a function says then.

		An instance's stores change after its agents are bound (a credential store set later,
		the temporary file store made on the first save, a durable backend loaded): the places
		are asked again each time, not once.

		Args:
			key: Whose they are (one function per key: an instance binds many agents).
			places: Returns ``(folders, stores)`` as `reserve` takes them, or None once its
				owner is gone (it is then dropped).
		"""
		self._watched[key] = places
		self._refresh()

	def _refresh(self) -> None:
		"""Recompute `reserved` and `reserved_stores`: the fixed places and the watched ones now."""
		if not self._watched:
			return
		folders, files = self._fixed
		for key, places in list(self._watched.items()):
			now = places()
			if now is None:
				self._watched.pop(key, None)
				self._seen.pop(key, None)
				continue
			given = (tuple(_text(p) for p in now[0]), tuple(_text(p) for p in now[1]))
			seen = self._seen.get(key)
			if seen is None or seen[0] != given:  # resolved again only when they change
				seen = self._seen[key] = (given, _real(given[0]), _real(given[1]))
			folders = _merged(folders, seen[1])
			files = _merged(files, seen[2])
		self.reserved, self.reserved_stores = folders, files

	def reserved_at(self, root: int, parts: Sequence[str]) -> bool:
		"""Whether a place is one of the `reserved` places or inside one (or a store's).

		Compared folded (`openmolt_core._support.paths.folded`): on a case-insensitive
		file system ``RUNS.DB`` is the run store ``runs.db``.

		Args:
			root: The directory's index.
			parts: The place's components below it (symlinks resolved).
		"""
		if not self.reserved and not self.reserved_stores:
			return False
		place = _spelled(self.roots[root].joinpath(*parts))
		if any(_within(place, kept) for kept in map(_spelled, self.reserved)):
			return True
		for store in self.reserved_stores:
			# The store, or a name beside it that begins with its name, or a place inside one.
			parent, name = _spelled(store.parent), folded(store.name)
			if len(place) > len(parent) and _within(place, parent):
				if place[len(parent)].startswith((name, f".{name}.")):
					return True
		return False

	def reserves_below(self, root: int, parts: Sequence[str]) -> bool:
		"""Whether a `reserved` place lies below a place (a tree that holds one), folded.

		Args:
			root: The directory's index.
			parts: The place's components below it (symlinks resolved).
		"""
		if not self.reserved and not self.reserved_stores:
			return False
		place = _spelled(self.roots[root].joinpath(*parts))
		kept = map(_spelled, (*self.reserved, *self.reserved_stores))
		return any(len(k) > len(place) and _within(k, place) for k in kept)

	def refuse_reserved(self, path: str) -> ToolError:
		"""The error for a path that is, holds or lies in a `reserved` place.

		Args:
			path: The path as the model gave it.
		"""
		return ToolError(
			f"{path[:200]!r} is or holds OpenMolt's own state (its file taint record, stores "
			"and keys), which the file tools never read, change or remove; choose another path"
		)

	def check(self, path: str) -> None:
		"""Check a path as text and against the caps, without touching the disk.

		Raises:
			ToolError: What `check_path` refuses, a path outside the directories, or a place
				too long or too deep with its directory's own path.
		"""
		self._split(path)

	def _split(self, path: str) -> tuple[int, list[str]]:
		"""Check a path as text; return its directory's index and its components below it."""
		parts = check_path(path)
		found = (0, parts) if not path.startswith("/") else self._root_of(parts)
		if found is None:
			raise ToolError(
				f"the path {path[:120]!r} is outside the allowed directories (listed in the "
				"tool's description); use a relative path"
			)
		# Checked whole before the walk, so that a write refused for its length creates no
		# parent directories on the way; the walk checks again where symlinks lead.
		if found[1]:
			self._check_room(path, found[0], found[1][:-1], found[1][-1])
		return found

	def _root_of(self, parts: Sequence[str]) -> tuple[int, list[str]] | None:
		"""The directory an absolute path (as components) is in, longest match first."""
		best: tuple[int, int] | None = None
		for index, root in [*enumerate(self.roots), *enumerate(self._aliases)]:
			depth = len(root.parts) - 1
			if list(root.parts[1:]) == list(parts[:depth]) and (best is None or depth > best[1]):
				best = (index, depth)
		if best is None:
			return None
		return best[0], list(parts[best[1] :])

	def display(self, root: int, parts: Sequence[str]) -> str:
		"""A place as the model should write it: relative to the first directory when in it."""
		if root == 0:
			return "/".join(parts) or "."
		return str(self.roots[root].joinpath(*parts))

	@contextmanager
	def locate(
		self,
		path: str,
		*,
		follow: bool = True,
		create_parents: bool = False,
		created: list[tuple[int, tuple[str, ...]]] | None = None,
	) -> Iterator[Located]:
		"""Walk a path from its directory down, holding directory descriptors (closed after).

		Args:
			path: Relative to the first directory, or absolute inside one of them.
			follow: Follow a symlink in the last component (inside the directories only);
				False keeps the link itself (to delete or move it).
			create_parents: Create missing directories on the way (for writes).
			created: Where to add each directory made on the way (its directory's index and
				its components), for the FileSystem integration's taint marks.

		Yields:
			The place; its entry may not exist yet.

		Raises:
			ToolError: The path is malformed, leads outside the directories, or a directory on
				the way is missing (without ``create_parents``) or cannot be opened.
		"""
		root, pending = self._split(path)
		self._refresh()
		fds: list[int] = []
		try:
			fds.append(self._open_root(root))
			parts: list[str] = []
			links = 0
			name: str | None = None
			while pending:
				part = pending.pop(0)
				last = not pending
				if part in ("", "."):
					continue
				if part == "..":  # only from a symlink's target
					if not parts:
						raise self._outside(path)
					os.close(fds.pop())
					parts.pop()
					continue
				self._check_room(path, root, parts, part)
				if last and not follow:
					name = part
					break
				try:
					info = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
				except FileNotFoundError:
					if last:
						name = part
						break
					if not create_parents:
						raise ToolError(
							f"no directory {'/'.join([*parts, part])!r} for {path[:200]!r}"
						) from None
					if self.reserved_at(root, [*parts, part]):
						raise self.refuse_reserved(path) from None
					try:
						os.mkdir(part, 0o777, dir_fd=fds[-1])
					except FileExistsError:
						pass
					else:
						if created is not None:
							created.append((root, (*parts, part)))
					info = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
				if stat.S_ISLNK(info.st_mode):
					links += 1
					if links > MAX_LINKS:
						raise ToolError(
							f"{path[:200]!r} goes through more than {MAX_LINKS} symlinks"
						)
					target = os.readlink(part, dir_fd=fds[-1])
					if target.startswith("/"):
						found = self._root_of([p for p in target.split("/") if p not in ("", ".")])
						if found is None:
							raise self._outside(path)
						while fds:  # emptied as closed: the finally must not close them again
							os.close(fds.pop())
						fds.append(self._open_root(found[0]))
						root, parts = found[0], []
						pending = [*found[1], *pending]
					else:
						pending = [*target.split("/"), *pending]
					continue
				if last:
					name = part
					break
				if not stat.S_ISDIR(info.st_mode):
					raise ToolError(f"a part of {path[:200]!r} is not a directory")
				fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
				parts.append(part)
			whole = [*parts, name] if name is not None else parts
			if self.reserved_at(root, whole):
				raise self.refuse_reserved(path)
			shown = self.display(root, whole)
			yield Located(fds[-1], name, root, tuple(parts), shown)
		except OSError as err:
			raise os_error(err, path, "open") from None
		finally:
			for fd in fds:
				os.close(fd)

	def _check_room(self, path: str, root: int, parts: Sequence[str], name: str) -> None:
		"""Refuse to go to ``name`` under ``parts`` when the place would be too deep or long.

		Counted on the place itself (symlinks resolved), with the directory's absolute path.
		"""
		check_depth(path, len(parts) + 1)
		size = self._root_bytes[root] + sum(len(os.fsencode(p)) + 1 for p in (*parts, name))
		if size > MAX_PATH_BYTES:
			raise ToolError(
				f"the path {path[:60]!r}... is too long ({size} bytes with its directory's own "
				f"path); paths are limited to {MAX_PATH_BYTES} bytes in UTF-8 (PATH_MAX); use a "
				"shorter path"
			)

	def room(self, root: int, parts: Sequence[str], extra: tuple[int, int]) -> str | None:
		"""Why a tree of ``extra`` (depth, bytes) cannot go under ``parts``; None if it fits.

		Args:
			root: The directory's index.
			parts: Where the tree's top goes (its own name included).
			extra: The tree's depth below its top and its longest path below it, in bytes.
		"""
		depth = len(parts) + extra[0]
		size = self._root_bytes[root] + sum(len(os.fsencode(p)) + 1 for p in parts) + extra[1]
		if depth > MAX_DEPTH:
			return f"it would make paths {depth} levels deep (the most is {MAX_DEPTH})"
		if size > MAX_PATH_BYTES:
			return f"it would make paths {size} bytes long (the most is {MAX_PATH_BYTES})"
		return None

	def _open_root(self, index: int) -> int:
		"""A descriptor of a directory, walked from ``/`` without following any symlink.

		Its path was resolved when the sandbox was made, so a symlink on it now means a part of
		it was replaced since (one directory nested in another, moved away by a tool and a
		symlink moved in its place): refused, never followed out of the directories.
		"""
		fd = os.open("/", _WALK_FLAGS)
		try:
			for part in self.roots[index].parts[1:-1]:
				inner = os.open(part, _WALK_FLAGS, dir_fd=fd)
				os.close(fd)
				fd = inner
			if len(self.roots[index].parts) > 1:
				inner = os.open(self.roots[index].name, _DIR_FLAGS, dir_fd=fd)
				os.close(fd)
				fd = inner
			else:
				os.close(fd)
				fd = os.open("/", _DIR_FLAGS)
		except OSError as err:
			os.close(fd)
			if err.errno in (errno.ELOOP, errno.ENOTDIR):
				raise ToolError(
					"an allowed directory was replaced since it was given (a part of its path is "
					"now a symlink or a file); refused"
				) from None
			raise
		if self._pins is not None:
			info = os.fstat(fd)
			if (info.st_dev, info.st_ino) != self._pins[index]:
				os.close(fd)
				raise ToolError("the directory was replaced since it was loaded; refused")
		return fd

	def _outside(self, path: str) -> ToolError:
		return ToolError(f"the path {path[:120]!r} leads outside the allowed directories")

	def is_root(self, place: Located) -> bool:
		"""Whether a place is one of the directories themselves."""
		return place.name is None and not place.parts

	def file(self, path: str) -> ConfinedFile:
		"""A regular file for a ``fileSystem:`` reference (see `ConfinedFile`).

		Raises:
			ToolError: The path is refused, missing, or not a readable regular file.
		"""
		return ConfinedFile(self, path)


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
APPEND_LOCK = threading.Lock()
"""Serialises appends, so parallel appends all land whole."""


def temp_name() -> str:
	"""A fresh name for a temporary file next to its target."""
	return f".openmolt-{secrets.token_hex(8)}.tmp"


def write_file(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
	"""Write through a temporary file in the same directory, then rename it over ``name``.

	Args:
		dir_fd: The directory's descriptor.
		name: The target's name in it (a symlink there is replaced, never written through).
		data: The bytes.
		mode: The permission bits to keep; None: ``0o666`` less the umask.
	"""
	tmp = temp_name()
	fd = os.open(
		tmp,
		os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
		0o600,
		dir_fd=dir_fd,
	)
	try:
		try:
			view = memoryview(data)
			while view:
				view = view[os.write(fd, view) :]
			os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
		finally:
			os.close(fd)
		os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
	except BaseException:
		try:
			os.unlink(tmp, dir_fd=dir_fd)
		except OSError:
			pass
		raise
