"""The file store: where binary tool results live, and how file references become bytes.

The references and what tools use of the store are the contract's (`openmolt_core.files`:
`FILE_PREFIX`, `StoredFile`, `FileAccess`); this module is the store itself, and its work the
loop reaches through `InstanceFiles`: a run's input files kept (`keep_attachments`), a saved
state's files screened as bytes (`masked_state`).

Each `OpenMolt` instance owns one store, created on first use; its directory is ``files_dir`` or a
temporary directory made on the first save (and removed by ``OpenMolt.aclose``). Each agent sees the
store through `FileStore.for_agent`: ``fileSystem:`` references resolve only for an agent granted
the FileSystem integration with its read scope. Files are written readable by their user only.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import mimetypes
import os
import re
import secrets as secrets_module
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol
from urllib.parse import unquote_to_bytes

import anyio
import anyio.to_thread

from openmolt_core.errors import ConfigurationError, ToolError
from openmolt_core.files import (
	FILE_PREFIX,
	WITHHELD,
	FileAccess,
	StoredFile,
	masked_labels,
	save_screened,
	screen,
	screened_base64,
	textual,
)

if TYPE_CHECKING:
	from openmolt_core._support.secretset import Redactor
	from openmolt_core.llm import Attachment

__all__ = [
	"MAX_ATTACHMENT_BYTES",
	"MAX_DATA_URL_BYTES",
	"MAX_READ_BYTES",
	"TEMP_PREFIX",
	"FileStore",
	"LocalFile",
	"PathResolver",
	"keep_attachments",
	"masked_state",
	"parse_data_url",
	"split_range",
]

MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
"""The largest file a run's input takes (decoded), of the order of the providers' limits."""

MAX_DATA_URL_BYTES = 20 * 1024 * 1024
"""The largest ``data:`` URL payload accepted, decoded."""

MAX_READ_BYTES = 512 * 1024 * 1024
"""The most bytes one read of a reference brings into memory when the caller sets no cap (a
request body, a file written from a reference); a larger file is sent in byte ranges."""

log: logging.Logger = logging.getLogger("openmolt")

_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_RANGE = re.compile(r"#bytes=(\d+)-(\d*)$", re.ASCII)


TEMP_PREFIX = "openmolt-files-"
"""How the temporary folder a store makes without a ``root`` begins (the file tools keep out)."""


class LocalFile(Protocol):
	"""A confined local file (`openmolt_core.integrations._sandbox.ConfinedFile`), as a resolver gives it.

	(`openmolt_core.files` re-exports it, its old home.)
	"""

	name: str
	size: int

	def read(self, start: int, stop: int) -> bytes:
		"""The bytes from ``start`` to ``stop`` (exclusive), checked again as they are read."""
		...


PathResolver = Callable[[str], "LocalFile | Path"]
"""Turns a ``fileSystem:`` path into a confined file (raises ToolError when refused).

The FileSystem integration gives a `LocalFile`, read through directory descriptors; a resolver
an application writes may give a plain path, which is read by name.
"""


class FileStore:
	"""Saves binary results and resolves file references to bytes.

	Args:
		root: The directory to keep files in; None for a temporary one made on the first save.
		file_system: Resolves ``fileSystem:`` paths (OpenMolt wires the registered FileSystem
			integration here); None refuses such references.
	"""

	def __init__(
		self, root: str | Path | None = None, *, file_system: PathResolver | None = None
	) -> None:
		self._root = Path(root) if root is not None else None
		self._own_root = root is None
		self._making = threading.Lock()  # saves run in worker threads: one makes the folder
		self._views: dict[bool, FileStore] = {}
		self._file_system = file_system

	_file_system_allowed = True

	@property
	def root(self) -> Path | None:
		"""The directory the files are kept in; None until a temporary one is made."""
		return self._root

	def for_agent(self, *, allow_file_system: bool) -> FileStore:
		"""This store as one agent sees it: same files, ``fileSystem:`` allowed or refused.

		Args:
			allow_file_system: Whether the agent may read ``fileSystem:`` references (it was
				granted the FileSystem integration with its read scope).

		Returns:
			A view sharing this store's directory; closing it does nothing.
		"""
		view = self._views.get(allow_file_system)
		if view is None:  # two views at most, shared by every agent of the instance
			view = self._views[allow_file_system] = _AgentView(self, allow_file_system)
		return view

	def _dir(self) -> Path:
		if self._root is None:
			with self._making:
				if self._root is None:
					self._root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
		from openmolt_core._support.private import private_dir

		return private_dir(self._root)  # a folder made here is 0700

	screens: ClassVar[bool] = True
	"""Its `save` screens what it keeps and takes the ``secrets`` and ``origin`` of a call."""

	async def save(
		self,
		data: bytes,
		*,
		media_type: str = "application/octet-stream",
		name: str = "",
		secrets: Iterable[str] = (),
		origin: Mapping[str, Any] | None = None,
	) -> dict[str, Any]:
		"""Save bytes and return the reference the model sees; the one way bytes enter the store.

		What is kept is screened first (`openmolt_core.files.screen`) with every secret the
		process knows (`openmolt_core.secrets.known_secrets`: each instance's set, every live
		redactor, the keys given in code, the environment's) and ``secrets``: a text file is kept
		masked, and any other file that shows a secret is not kept at all, which the returned
		record says (``withheld``) where the reference would be, and a warning logs. Its name
		and media type are kept, and returned, masked with the same secrets
		(`openmolt_core.files.masked_labels`).

		Args:
			data: The content.
			media_type: Its media type.
			name: A file name (kept for uploads; not used on disk).
			secrets: More secrets to mask: the calling tool's (its context's ``redact``).
			origin: The call that keeps it (``{"run", "call", "user"}``), written beside the
				file, never shown: `origin` reads it back (the tool sources' images are shown
				only by the call that made them), and a run for another end user finds no such
				file (`openmolt_core._binding.CallFiles`).

		Returns:
			``{"file": "openmolt-file:<id>", "mediaType", "size", "name"}``; for a file not
			kept, ``{"mediaType", "size", "name", "withheld": <why>}``.
		"""
		from openmolt_core._support.masking import known_secrets

		known = known_secrets() | frozenset(s for s in secrets if s)
		name, media_type = masked_labels(name, media_type, known)  # kept and shown as the bytes
		file_id = secrets_module.token_urlsafe(12)

		def write() -> bytes | None:
			kept = screen(data, media_type, known)
			if kept is None:
				return None
			meta: dict[str, Any] = {"mediaType": media_type, "name": name, "size": len(kept)}
			if origin is not None:
				meta["origin"] = dict(origin)
			folder = self._dir()
			_write_private(folder / file_id, kept)
			_write_private(folder / f"{file_id}.json", json.dumps(meta).encode("utf-8"))
			return kept

		kept = await anyio.to_thread.run_sync(write)
		if kept is None:
			log.warning(
				"a file (%s, %d bytes) was not kept: it shows a secret, and it is not text",
				media_type,
				len(data),
			)
			return {"mediaType": media_type, "size": len(data), "name": name, "withheld": WITHHELD}
		return {
			"file": f"{FILE_PREFIX}{file_id}",
			"mediaType": media_type,
			"name": name,
			"size": len(kept),
		}

	async def keep_attachments(
		self,
		attachments: Sequence[Attachment],
		*,
		files: FileAccess | None = None,
		secrets: Iterable[str] = (),
		origin: Mapping[str, Any] | None = None,
	) -> tuple[list[Attachment], list[dict[str, Any]]]:
		"""The files sent with a run's input, kept in ``files``: see `keep_attachments`.

		Args:
			attachments: The files, as given.
			files: The store to keep them in (default: this one).
			secrets: The agent's own secrets, besides those the process knows.
			origin: The run that keeps them (``{"run", "call", "user"}``).
		"""
		return await keep_attachments(
			self if files is None else files, attachments, secrets=secrets, origin=origin
		)

	def masked_state(self, state: Mapping[str, Any], redact: Redactor) -> Any:
		"""A saved run state masked for a store or a journal: see `masked_state`.

		Args:
			state: The state as `RunState.to_dict` gives it.
			redact: The agent's redactor.
		"""
		return masked_state(state, redact)

	def origin(self, reference: str) -> dict[str, Any] | None:
		"""The call that kept a stored file (see `save`), blocking; None when unknown.

		None too for a reference that is not ``openmolt-file:``, is malformed, or names no file
		of the store, and for a file kept outside a run (the application's, an upload).

		Args:
			reference: ``openmolt-file:<id>``, optionally with a byte range.
		"""
		try:
			path = self.path_of(split_range(reference)[0] if isinstance(reference, str) else "")
			meta = json.loads(path.with_name(f"{path.name}.json").read_text("utf-8"))
		except (ToolError, OSError, ValueError):
			return None
		found = meta.get("origin") if isinstance(meta, dict) else None
		return found if isinstance(found, dict) else None

	def path_of(self, reference: str) -> Path:
		"""The local path of an ``openmolt-file:`` reference.

		Only a file the store kept is one: a regular file (not a symlink) with its record beside
		it (``<id>.json``, which `save` writes after the bytes), so another file of the folder
		(``files_dir`` named a folder that holds a ``Dockerfile``, a symlink) is unknown.

		Raises:
			ToolError: The reference is malformed or unknown.
		"""
		file_id = reference.removeprefix(FILE_PREFIX) if isinstance(reference, str) else ""
		if (
			not reference.startswith(FILE_PREFIX)
			or not _ID.fullmatch(file_id)
			or self._root is None
		):
			raise ToolError(f"unknown file reference {reference[:80]!r}")
		path = self._root / file_id
		try:
			kept = os.lstat(path).st_mode
			record = os.lstat(path.with_name(f"{file_id}.json")).st_mode
		except (OSError, ValueError):
			raise ToolError(f"unknown file reference {reference[:80]!r}") from None
		if not (stat.S_ISREG(kept) and stat.S_ISREG(record)):
			raise ToolError(f"unknown file reference {reference[:80]!r}")
		return path

	def _locate(self, reference: str) -> tuple[int, str, str, Callable[[int, int], bytes]]:
		"""A reference without range: its size, media type, name, and a reader of a slice."""
		if reference.startswith("data:"):
			decoded = parse_data_url(reference)
			data = decoded.data
			return len(data), decoded.media_type, decoded.name, lambda a, b: data[a:b]
		if reference.startswith(FILE_PREFIX):
			path = self.path_of(reference)
			meta_path = path.with_name(f"{path.name}.json")
			meta = json.loads(meta_path.read_text("utf-8")) if meta_path.exists() else {}
			media_type = meta.get("mediaType") or "application/octet-stream"
			name = meta.get("name") or path.name
		elif reference.startswith("fileSystem:"):
			if not self._file_system_allowed:
				raise ToolError(
					"fileSystem: references are only for agents given the 'fileSystem' "
					"integration with its read scope; this agent was not"
				)
			if self._file_system is None:
				raise ToolError(
					"fileSystem: references need the FileSystem integration registered as "
					"'fileSystem'"
				)
			found = self._file_system(reference.removeprefix("fileSystem:"))
			media_type = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
			if not isinstance(found, Path):
				return found.size, media_type, found.name, found.read
			path, name = found, found.name
		else:
			raise ToolError(
				f"not a file reference: {reference[:80]!r}; use 'openmolt-file:<id>', a data: "
				"URL, or 'fileSystem:<path>'"
			)
		if not path.is_file():
			raise ToolError(f"no file at {reference[:80]!r}")
		size = path.stat().st_size

		# The store's own files are read without following a symlink (see `path_of`).
		flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
		if reference.startswith(FILE_PREFIX):
			flags |= os.O_NOFOLLOW | os.O_NONBLOCK

		def read_slice(start: int, stop: int) -> bytes:
			try:
				with os.fdopen(os.open(path, flags), "rb") as handle:
					handle.seek(start)
					return handle.read(stop - start)
			except OSError as exc:
				raise ToolError(f"cannot read {reference[:80]!r}: {exc.strerror}") from None

		return size, media_type, name, read_slice

	def read(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference to bytes, blocking (call it from a worker thread).

		Args:
			reference: ``openmolt-file:<id>``, a ``data:`` URL or ``fileSystem:<path>``, each
				optionally followed by ``#bytes=<start>-<end>``.
			max_bytes: Refuse (before reading) a file or slice larger than this; default
				`MAX_READ_BYTES`.

		Raises:
			ToolError: The reference is malformed, unknown, refused, out of range or too large.
		"""
		if not isinstance(reference, str):
			raise ToolError("a file reference must be a string")
		base, span = split_range(reference)
		size, media_type, name, read_slice = self._locate(base)
		start, stop = _slice(span, size, base)
		limit = MAX_READ_BYTES if max_bytes is None else max_bytes
		if stop - start > limit:
			raise ToolError(
				f"{base[:80]!r} is {stop - start} bytes, more than the {limit} allowed here; "
				f"send it in parts ('{base[:80]}#bytes=<start>-<end>') with a tool that uploads "
				"in chunks"
			)
		return StoredFile(read_slice(start, stop), media_type, name)

	async def open(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference (store id, ``data:`` URL or ``fileSystem:`` path) to bytes.

		A trailing ``#bytes=<start>-<end>`` (inclusive) selects a slice.

		Args:
			reference: The file reference.
			max_bytes: Refuse (before reading) a file or slice larger than this.

		Raises:
			ToolError: The reference is malformed, unknown, out of range, too large or refused.
		"""
		return await anyio.to_thread.run_sync(lambda: self.read(reference, max_bytes=max_bytes))

	def describe(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference without reading it, blocking (call it from a worker thread).

		Returns:
			``{"file": <reference>, "size", "mediaType", "name"}``; for a reference with a range,
			``size`` is the slice's.

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		if not isinstance(reference, str):
			raise ToolError("a file reference must be a string")
		base, span = split_range(reference)
		size, media_type, name, _ = self._locate(base)
		start, stop = _slice(span, size, base)
		return {"file": reference, "size": stop - start, "mediaType": media_type, "name": name}

	async def info(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference without reading it (see `describe`).

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		return await anyio.to_thread.run_sync(self.describe, reference)

	resolve = open

	def close(self) -> None:
		"""Remove the temporary directory, if the store made one."""
		if self._own_root and self._root is not None:
			shutil.rmtree(self._root, ignore_errors=True)
			self._root = None

	def __repr__(self) -> str:
		return f"FileStore(root={str(self._root) if self._root else None!r})"


class _AgentView(FileStore):
	"""A `FileStore` seen by one agent: shares the store, may refuse ``fileSystem:``."""

	def __init__(self, store: FileStore, allow_file_system: bool) -> None:
		self._store = store
		self._file_system_allowed = allow_file_system
		self._own_root = False
		self._views = store._views

	@property
	def _root(self) -> Path | None:  # type: ignore[override]
		return self._store._root

	@property
	def _file_system(self) -> PathResolver | None:  # type: ignore[override]
		return self._store._file_system

	def _dir(self) -> Path:
		return self._store._dir()

	def close(self) -> None:
		"""Do nothing: the store belongs to the OpenMolt instance."""

	def __repr__(self) -> str:
		return f"{self._store!r}.for_agent(allow_file_system={self._file_system_allowed})"


def split_range(reference: str) -> tuple[str, tuple[int, int | None] | None]:
	"""Split a trailing ``#bytes=<start>-<end>`` off a file reference.

	Returns:
		The reference without the range, and ``(start, end)`` (``end`` inclusive, None for "to
		the end of the file"), or None when there is no range.

	Raises:
		ToolError: The range ends before it starts.
	"""
	match = _RANGE.search(reference) if isinstance(reference, str) else None
	if match is None:
		return reference, None
	start, end = int(match.group(1)), int(match.group(2)) if match.group(2) else None
	if end is not None and end < start:
		raise ToolError(f"byte range {match.group(0)[1:]!r} ends before it starts")
	return reference[: match.start()], (start, end)


def _slice(span: tuple[int, int | None] | None, size: int, what: str) -> tuple[int, int]:
	"""A range as ``(start, stop)`` offsets into a file of ``size`` bytes, checked."""
	if span is None:
		return 0, size
	start, end = span
	if start >= size or (end is not None and end >= size):
		raise ToolError(
			f"byte range {start}-{'' if end is None else end} is outside {what[:80]!r}, which "
			f"has {size} bytes (offsets 0 to {size - 1})"
		)
	return start, size if end is None else end + 1


def parse_data_url(url: str) -> StoredFile:
	"""Decode a ``data:`` URL (RFC 2397).

	Raises:
		ToolError: It is malformed or larger than `MAX_DATA_URL_BYTES`.
	"""
	head, sep, payload = url[5:].partition(",")
	if not sep:
		raise ToolError("malformed data: URL: no ',' before the data")
	params = head.split(";")
	is_base64 = params[-1].lower() == "base64"
	if is_base64:
		params = params[:-1]
	media_type = params[0] or "text/plain"
	if len(payload) > MAX_DATA_URL_BYTES * 4 // 3 + 4:
		raise ToolError(f"data: URL larger than {MAX_DATA_URL_BYTES} bytes; save it as a file")
	try:
		data = base64.b64decode(payload, validate=True) if is_base64 else unquote_to_bytes(payload)
	except (binascii.Error, ValueError) as exc:
		raise ToolError(f"malformed base64 in data: URL: {exc}") from exc
	if len(data) > MAX_DATA_URL_BYTES:  # percent-encoded: up to the payload's length
		raise ToolError(f"data: URL larger than {MAX_DATA_URL_BYTES} bytes; save it as a file")
	ext = mimetypes.guess_extension(media_type) or ""
	return StoredFile(data, media_type, f"file{ext}")


async def keep_attachments(
	files: FileAccess,
	attachments: Sequence[Attachment],
	*,
	secrets: Iterable[str] = (),
	origin: Mapping[str, Any] | None = None,
) -> tuple[list[Attachment], list[dict[str, Any]]]:
	"""The files sent with a run's input, saved through `save_screened`: the model sees what was kept.

	Args:
		files: The agent's view of the store.
		attachments: The files, as given.
		secrets: The agent's own secrets, besides those the process knows.
		origin: The run that keeps them (``{"run", "call", "user"}``).

	Returns:
		The attachments for the model, and each file's record in the order given (its
		reference, or why it was withheld).

	Raises:
		ConfigurationError: A file's data is not base64, or larger than `MAX_ATTACHMENT_BYTES`.
	"""
	from openmolt_core._support.masking import known_secrets
	from openmolt_core.llm import Attachment

	shown: list[Attachment] = []
	records: list[dict[str, Any]] = []
	secret_list = list(secrets)
	known = known_secrets() | frozenset(s for s in secret_list if s)
	for i, given in enumerate(attachments):
		# What the model, the state and the session are shown of its labels: masked.
		name, media_type = masked_labels(given.name or "", given.media_type, known)
		what = f"attachments[{i}]" + (f" ({name!r})" if name else "")
		if len(given.data) > MAX_ATTACHMENT_BYTES * 4 // 3 + 4:
			raise ConfigurationError(
				f"{what}: more than the {MAX_ATTACHMENT_BYTES} bytes a run's input takes; send a "
				"smaller file, or give the agent a tool that fetches it"
			)
		try:
			data = base64.b64decode(given.data, validate=True)
		except (binascii.Error, ValueError):
			raise ConfigurationError(
				f"{what}.data: not base64; give the file's bytes as base64.b64encode(data).decode()"
			) from None
		record = await save_screened(
			files, data, media_type=media_type, name=name, secrets=secret_list, origin=origin
		)
		records.append(record)
		if "withheld" in record:
			continue
		kept = data
		if textual(media_type):  # kept masked, maybe: the model sees what was kept
			kept = (await files.open(str(record["file"]))).data
		encoded = given.data if kept is data else base64.b64encode(kept).decode("ascii")
		shown.append(Attachment(media_type, encoded, name if given.name else given.name))
	return shown, records


def masked_state(state: Mapping[str, Any], redact: Any) -> Any:
	"""A saved run state (`RunState.to_dict`) masked for a store, its files' bytes as bytes.

	Every string is masked as text but the base64 of the files sent with a turn, screened as
	bytes (`screened_base64`): kept, kept masked (a text), or left out of the state.

	Args:
		state: The state as `RunState.to_dict` gives it.
		redact: The agent's `openmolt_core.secrets.Redactor`.

	Returns:
		The masked state (a new object; ``state`` is left as it is).
	"""
	messages = state.get("messages")
	if not isinstance(messages, list) or not any(
		isinstance(m, dict) and m.get("attachments") for m in messages
	):
		return redact.deep(state)
	secrets = frozenset(redact.secrets)
	bare = [
		{k: v for k, v in m.items() if k != "attachments"} if isinstance(m, dict) else m
		for m in messages
	]
	masked: dict[str, Any] = redact.deep({**state, "messages": bare})
	for given, out in zip(messages, masked["messages"], strict=True):
		files = given.get("attachments") if isinstance(given, dict) else None
		if not files:
			continue
		kept_files: list[Any] = []
		for file in files:
			if not isinstance(file, dict):
				continue  # not a file: nothing a model could read either
			kept = screened_base64(file.get("data"), str(file.get("media_type") or ""), secrets)
			if kept is None:
				continue
			rest = redact.deep({k: v for k, v in file.items() if k != "data"})
			kept_files.append({**rest, "data": kept})
		out["attachments"] = kept_files
	return masked


def _write_private(path: Path, data: bytes) -> None:
	"""Write a new file readable by its user only (0600, whatever the umask)."""
	fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
	with os.fdopen(fd, "wb") as out:
		os.fchmod(out.fileno(), 0o600)
		out.write(data)
