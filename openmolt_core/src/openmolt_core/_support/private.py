"""State kept on disk is its user's alone: directories 0700, files 0600, whatever the umask.

Every store of OpenMolt (the run store, the run history, the file store, the approval ledger,
the durable store's SQLite file) makes its folder and file through these helpers, so a run's
inputs, outputs and events are never readable by another local user. A file made earlier with
a wider mode is narrowed when a store opens it again. SQLite makes its ``-wal``, ``-shm`` and
``-journal`` files with the mode of the database file, so they are 0600 too. What a store
deletes from its SQLite file (a cleared session, a forgotten task) is overwritten, not left in
the file's free pages (`erasing`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from openmolt_core._support.paths import check_regular

if TYPE_CHECKING:
	import sqlite3

__all__ = [
	"DIR_MODE",
	"FILE_MODE",
	"erasing",
	"locked_file",
	"private_dir",
	"private_file",
	"state_file",
	"state_folder",
]

_OFF = ("", "off", "0", "false", "no", "none", "disabled")
"""What a store's variable says to keep no file (never a file named "none")."""


def state_folder() -> Path:
	"""OpenMolt's own state folder: ``$XDG_STATE_HOME/openmolt`` (``~/.local/state/openmolt``).

	Where the ``openmolt`` command keeps its run store, sessions, schedules and plugin record.
	"""
	state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
	return Path(state_home) / "openmolt"


def state_file(
	variable: str, name: str, *, refused: Callable[[str], Exception] = ValueError
) -> Path | None:
	"""A store of the ``openmolt`` command: ``$<variable>``, else ``name`` in `state_folder`.

	Args:
		variable: The environment variable that names the file, or turns it ``off`` (also
			empty, ``0``, ``false``, ``no``, ``none``, ``disabled``: then None).
		name: The file's name in the state folder.
		refused: Makes the error raised for a variable that holds a URL (the callers give
			``ConfigurationError``, which this layer does not import).

	Raises:
		Exception: ``refused``'s: the variable holds a URL (``postgresql://...``), not a path
			(it made a ``postgresql:`` folder).
	"""
	value = os.environ.get(variable)
	if value is not None:
		if value.strip().lower() in _OFF:
			return None
		if "://" in value:
			scheme = value.split("://", 1)[0][:20]
			raise refused(
				f"{variable}: give a file's path (or off), not a URL ({scheme}://...): this "
				f"store is a local file, {name} by default"
			)
		return Path(value)
	return state_folder() / name


DIR_MODE = 0o700
FILE_MODE = 0o600
_SIDECARS = ("-wal", "-shm", "-journal")


def private_dir(path: str | os.PathLike[str], *, own: bool = False) -> Path:
	"""Make a directory and its missing parents with mode 0700 (umask-independent).

	Args:
		path: The directory.
		own: The directory is OpenMolt's own (``~/.local/state/openmolt``, a folder of the file
			store): narrow it to 0700 even when it exists. A folder the user named, such as the
			one holding ``run_store="runs.db"``, keeps its mode when it exists.

	Returns:
		The directory.
	"""
	folder = Path(path)
	missing = []
	probe = folder
	while not probe.exists() and probe != probe.parent:
		missing.append(probe)
		probe = probe.parent
	folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
	for made in missing:  # mkdir's mode goes through the umask, and parents get the default
		with contextlib.suppress(OSError):
			os.chmod(made, DIR_MODE)
	if own and not missing:
		with contextlib.suppress(OSError):
			os.chmod(folder, DIR_MODE)
	return folder


def private_file(path: str | os.PathLike[str], *, own_dir: bool = False) -> Path:
	"""Create a file with mode 0600 if it is missing, and narrow it (and SQLite's files) to 0600.

	The folder is made with `private_dir`. The file's content is left as it is.

	Args:
		path: The file.
		own_dir: Its folder is OpenMolt's own (see `private_dir`).

	Returns:
		The file.

	Raises:
		FileRefused: The path names a folder, a device, a named pipe or a socket (an
			``OSError``, as a folder that cannot be made is).
	"""
	file = Path(path)
	if str(file) == ":memory:" or str(file).startswith("file:"):
		return file  # SQLite's in-memory database, or a URI: nothing to make here
	# A folder, a device (/dev/null), a pipe or a socket is no store: refused before its mode,
	# and the mode of its sidecars, are changed (a store at /dev/null, run as root, made the
	# device 0600 for every other user and left /dev/null-journal behind).
	check_regular(file)
	private_dir(file.parent, own=own_dir)
	# Never open (and close) a file that exists: closing any descriptor of a file drops every
	# POSIX lock this process holds on it, and SQLite's locks are POSIX locks; a store opened
	# twice in one process would lose them ("disk I/O error", a corrupt journal). chmod by path.
	try:
		fd = os.open(
			file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE
		)
	except FileExistsError:
		with contextlib.suppress(OSError):
			os.chmod(file, FILE_MODE)
	else:
		try:
			os.fchmod(fd, FILE_MODE)  # whatever the umask
		finally:
			os.close(fd)
	for suffix in _SIDECARS:
		with contextlib.suppress(OSError):
			os.chmod(f"{file}{suffix}", FILE_MODE)
	return file


@contextlib.contextmanager
def locked_file(lock: Path, *, own_dir: bool = False) -> Iterator[None]:
	"""Hold an exclusive ``flock`` on the lock file ``lock`` (0600 in a 0700 folder) while the block runs.

	Every process that takes the same file waits for the holder; the lock goes with a process
	that dies. Without ``fcntl`` (Windows) nothing is locked.

	Args:
		lock: The lock file (made if missing; never followed if a symlink).
		own_dir: The folder is OpenMolt's own: narrowed to 0700 if it is wider (`private_dir`).
	"""
	try:
		import fcntl
	except ImportError:  # pragma: no cover - Windows
		yield
		return
	private_dir(lock.parent, own=own_dir)
	fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
	try:
		fcntl.flock(fd, fcntl.LOCK_EX)
		yield
	finally:
		fcntl.flock(fd, fcntl.LOCK_UN)
		os.close(fd)


def erasing(conn: sqlite3.Connection) -> sqlite3.Connection:
	"""The connection, set to overwrite with zeros what it deletes (``secure_delete``).

	SQLite's default leaves a deleted row's bytes in the file until its page is used again, and
	whether a build turns it on differs (Debian's does; SQLite's own default, which many builds
	keep, does not): a cleared session or a forgotten task would stay readable in the file's bytes
	(a backup, a copied disk). Every store of OpenMolt sets it on each connection it opens.

	Args:
		conn: A connection just opened.
	"""
	conn.execute("PRAGMA secure_delete = ON")
	return conn
