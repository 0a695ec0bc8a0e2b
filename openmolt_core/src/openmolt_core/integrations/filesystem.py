"""The FileSystem integration: files and directories, confined to the directories it was given.

Not available by default. Register it with
``om.register_integration("fileSystem", OpenMolt.FileSystemIntegration("./data"))``. Every path
goes through `openmolt_core.integrations._sandbox.Sandbox`, which walks it through directory
descriptors and never resolves a checked name again; only regular files are read or written,
and a file with more than one hard link is not read, appended to, copied or searched (see that
module). Blocking work runs in a worker thread. Paths are also file references
(``fileSystem:<path>``) other tools can upload.

Taint is not laundered through files (`openmolt_core.integrations._taintmarks`): what a run that
read untrusted content writes, appends, creates, moves or copies is marked in a small record that
outlives the process, and a read, listing or search that shows a marked path is labelled
``untrusted`` for that call (`openmolt_core.tools.LabelledResult`), so the run reading it is
tainted. A clean run replacing a whole file clears its mark; a move or copy carries it.
"""

from __future__ import annotations

import datetime as dt
import errno
import mimetypes
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from openmolt_core._support.masking import masked_excerpt
from openmolt_core.errors import ToolError
from openmolt_core.functiontools import FunctionTool
from openmolt_core.integrations._paths import MAX_DEPTH, MAX_PATH_BYTES
from openmolt_core.integrations._sandbox import (
	APPEND_LOCK,
	Located,
	Sandbox,
	WatchedPlaces,
	kind_of,
	open_regular,
	os_error,
	read_all,
	read_capped,
	temp_name,
	write_file,
)
from openmolt_core.integrations._taintmarks import (
	TaintMarks,
	default_record,
	keep_marks,
	kept_records,
)
from openmolt_core.integrations.model import Integration
from openmolt_core.tools import Label, LabelledResult, ToolContext

__all__ = ["file_system_integration", "keep_out", "sandbox_of"]

MAX_READ_CHARS = 100_000
"""Characters a read returns at most by default (ask with offset for more)."""

MAX_READ_BYTES = 64 * 1024 * 1024
"""Files larger than this are not read as text; read returns them as a file reference."""

MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are skipped by search."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_APPEND_FLAGS = (
	os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
)


@dataclass(slots=True)
class _SandboxTool(FunctionTool):
	sandbox: Sandbox | None = None
	marks: TaintMarks | None = None


_UNTRUSTED: tuple[Label, ...] = ("untrusted",)


def _tainted(context: ToolContext) -> bool:
	"""Whether the calling run has read untrusted content (its taint, handed to each call)."""
	run = context.run
	return run is not None and bool(run.taint)


def _reserved(record: Path | None) -> list[str | Path]:
	"""OpenMolt's own state, which no file tool touches, wherever the directories are.

	A tainted run that could rewrite or remove the taint record would clear every mark, and
	the stores and keys hold other runs' data, sessions' taint and API keys: the record and its
	lock, OpenMolt's state folder (the run store, sessions, schedules: ``$XDG_STATE_HOME/openmolt``)
	and its configuration folder (the key store and the credential store), wherever named.
	"""
	from openmolt_core._support.private import state_folder
	from openmolt_core.secrets import default_credentials_path

	config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
	places: list[str | Path] = [
		state_folder(),
		Path(config) / "openmolt",
		default_credentials_path(),
	]
	keys = os.environ.get("OPENMOLT_KEYS_FILE")
	if keys:
		places.append(keys)
	if record is not None:
		places += [record, record.with_name(record.name + ".lock")]
	return places


def _temporary_stores() -> list[Path]:
	"""The file stores every instance of every process makes in the temporary folder.

	``OpenMolt()`` without ``files_dir`` keeps its files in a folder made there on the first
	save (`openmolt_core.filestore.TEMP_PREFIX`): kept out as a store's name, so every folder
	whose name begins with it is, made now or later, by this process or another.
	"""
	import tempfile

	from openmolt_core.filestore import TEMP_PREFIX

	return [Path(tempfile.gettempdir()) / TEMP_PREFIX]


def _tree(fd: int, name: str) -> list[tuple[str, ...]]:
	"""Every place in a tree, relative to its top (``()``: the top); a file is only ``[()]``."""
	info = os.stat(name, dir_fd=fd, follow_symlinks=False)
	if not stat.S_ISDIR(info.st_mode):
		return [()]
	found: list[tuple[str, ...]] = [()]
	top = os.open(name, _DIR_FLAGS, dir_fd=fd)
	try:
		for folder, dirs, files, _ in os.fwalk(".", dir_fd=top, follow_symlinks=False):
			rel = tuple(p for p in folder.split("/") if p not in ("", "."))
			found.extend((*rel, entry) for entry in (*dirs, *files))
	finally:
		os.close(top)
	return found


def keep_out(
	integration: Integration,
	folders: Iterable[str | os.PathLike[str]],
	stores: Iterable[str | os.PathLike[str]],
	*,
	watch: tuple[int, WatchedPlaces] | None = None,
) -> bool:
	"""Keep an instance's own state out of the reach of an integration's file tools, if any.

	The assembly calls it for each integration an agent binds, with the places its instance
	keeps state in (`openmolt_core.assembly.own_state`): a FileSystem allowed a project folder
	that holds ``run_store="runs.db"`` must not rewrite the run history. An integration shared
	by several instances keeps every instance's places out.

	Args:
		integration: Any integration (one without file tools is left alone).
		folders: Folders no tool may touch (nor anything inside).
		stores: Store files no tool may touch, nor a name beside one beginning with its name.
		watch: A key and a function asked again at each path a tool walks
			(`openmolt_core.integrations._sandbox.Sandbox.watch`): places that change after
			binding (a credential store set later, the file store's temporary folder).

	Returns:
		Whether the integration has file tools.
	"""
	folders, stores = list(folders), list(stores)
	boxes = {
		id(t.sandbox): t.sandbox
		for t in integration.tools
		if isinstance(t, _SandboxTool) and t.sandbox is not None
	}
	for box in boxes.values():
		box.reserve(folders)
		box.reserve(stores, stores=True)
		if watch is not None:
			box.watch(*watch)
	return bool(boxes)


def sandbox_of(integration: Integration) -> Sandbox:
	"""The sandbox of a FileSystem integration (for ``fileSystem:`` file references).

	Raises:
		ToolError: The integration is not a FileSystem integration.
	"""
	for tool in integration.tools:
		if isinstance(tool, _SandboxTool) and tool.sandbox is not None:
			return tool.sandbox
	raise ToolError("the integration registered as 'fileSystem' is not a FileSystem integration")


def _shown(path: str) -> str:
	return repr(path[:200])


def _open_dir(place: Located, given: str) -> int:
	"""A descriptor of the directory at a place (the caller closes it)."""
	try:
		if place.name is None:
			return os.dup(place.dir_fd)
		return os.open(place.name, _DIR_FLAGS, dir_fd=place.dir_fd)
	except OSError as err:
		if err.errno in (errno.ENOTDIR, errno.ENOENT, errno.ELOOP):
			raise ToolError(f"no directory at {_shown(given)}") from None
		raise os_error(err, given, "open") from None


def _parts_of(place: Located) -> tuple[str, ...]:
	return place.parts if place.name is None else (*place.parts, place.name)


def _walk(fd: int) -> Iterator[tuple[tuple[str, ...], list[str], list[str], int]]:
	"""``os.fwalk`` below a directory descriptor (symlinks never followed), sorted."""
	for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
		dirs.sort()
		rel = tuple(p for p in folder.split("/") if p not in ("", "."))
		yield rel, dirs, sorted(files), folder_fd


def _copy_file(src_fd: int, src_name: str, dst_fd: int, dst_name: str, shown: str) -> None:
	target = _lstat(dst_fd, dst_name)
	if target is not None and stat.S_ISDIR(target.st_mode):
		raise ToolError(f"cannot replace the directory {dst_name!r} with a file")
	place = Located(src_fd, src_name, 0, (), shown)
	fd, info = open_regular(place, shown)
	try:
		data = read_all(fd, info.st_size)
	finally:
		os.close(fd)
	write_file(dst_fd, dst_name, data, stat.S_IMODE(info.st_mode))
	os.utime(
		dst_name, ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=dst_fd, follow_symlinks=False
	)


def _lstat(fd: int, name: str) -> os.stat_result | None:
	try:
		return os.stat(name, dir_fd=fd, follow_symlinks=False)
	except FileNotFoundError:
		return None


def _copy(src_fd: int, src_name: str, dst_fd: int, dst_name: str, shown: str) -> None:
	"""Copy a file, symlink or directory tree through descriptors, merging into a directory.

	Nothing is written through a symlink at or under the destination: such a link is replaced
	by what is copied. Symlinks under the source are copied as symlinks.
	"""
	info = os.stat(src_name, dir_fd=src_fd, follow_symlinks=False)
	if stat.S_ISLNK(info.st_mode):
		target = _lstat(dst_fd, dst_name)
		if target is not None and stat.S_ISDIR(target.st_mode):
			raise ToolError(f"cannot replace the directory {dst_name!r} with a link")
		tmp = temp_name()
		os.symlink(os.readlink(src_name, dir_fd=src_fd), tmp, dir_fd=dst_fd)
		try:
			os.replace(tmp, dst_name, src_dir_fd=dst_fd, dst_dir_fd=dst_fd)
		except BaseException:
			os.unlink(tmp, dir_fd=dst_fd)
			raise
		return
	if stat.S_ISREG(info.st_mode):
		_copy_file(src_fd, src_name, dst_fd, dst_name, shown)
		return
	if not stat.S_ISDIR(info.st_mode):
		raise ToolError(
			f"{shown!r} is a {kind_of(info.st_mode)}, not a regular file; it cannot be copied"
		)
	target = _lstat(dst_fd, dst_name)
	if target is not None and not stat.S_ISDIR(target.st_mode):
		os.unlink(dst_name, dir_fd=dst_fd)
		target = None
	if target is None:
		os.mkdir(dst_name, 0o700, dir_fd=dst_fd)
	inner_src = os.open(src_name, _DIR_FLAGS, dir_fd=src_fd)
	try:
		inner_dst = os.open(dst_name, _DIR_FLAGS, dir_fd=dst_fd)
		try:
			for name in sorted(os.listdir(inner_src)):
				_copy(inner_src, name, inner_dst, name, f"{shown}/{name}")
			os.fchmod(inner_dst, stat.S_IMODE(info.st_mode))
			os.utime(inner_dst, ns=(info.st_atime_ns, info.st_mtime_ns))
		finally:
			os.close(inner_dst)
	finally:
		os.close(inner_src)


def _extent(fd: int, name: str) -> tuple[int, int]:
	"""How deep a tree goes below its top, and its longest path below it, in bytes.

	A file is ``(0, 0)``. Stops early once either is over the caps (it is refused then).
	"""
	if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
		return 0, 0
	deepest = longest = 0
	top = os.open(name, _DIR_FLAGS, dir_fd=fd)
	try:
		for folder, dirs, files, _ in os.fwalk(".", dir_fd=top, follow_symlinks=False):
			rel = [p for p in folder.split("/") if p not in ("", ".")]
			base = sum(len(os.fsencode(p)) + 1 for p in rel)
			for entry in (*dirs, *files):
				deepest = max(deepest, len(rel) + 1)
				longest = max(longest, base + len(os.fsencode(entry)) + 1)
			if deepest > MAX_DEPTH or longest > MAX_PATH_BYTES:
				break
	finally:
		os.close(top)
	return deepest, longest


def _remove(fd: int, name: str) -> None:
	info = os.stat(name, dir_fd=fd, follow_symlinks=False)
	if stat.S_ISDIR(info.st_mode):
		shutil.rmtree(name, dir_fd=fd)  # the descriptor-based rmtree: safe against symlink swaps
	else:
		os.unlink(name, dir_fd=fd)


def _make_tools(box: Sandbox, max_read: int, marks: TaintMarks) -> dict[str, Callable[..., Any]]:
	def where(root: int, parts: Iterable[str]) -> str:
		return marks.key(box.roots[root], tuple(parts))

	def labelled(out: dict[str, Any], keys: Iterable[str]) -> Any:
		"""The result, labelled untrusted when it shows a place a tainted run wrote."""
		return LabelledResult(out, _UNTRUSTED) if marks.marked(keys) else out

	def made(created: list[tuple[int, tuple[str, ...]]]) -> list[str]:
		return [where(root, parts) for root, parts in created]

	def read(i: dict[str, Any], _: ToolContext) -> Any:
		given = i["path"]
		with box.locate(given) as place:
			fd, info = open_regular(place, given)
			try:
				# Capped while reading too: the file may grow after fstat (None: a reference).
				data = read_capped(fd, MAX_READ_BYTES) if info.st_size <= MAX_READ_BYTES else None
			except OSError as err:
				raise os_error(err, given, "read") from None
			finally:
				os.close(fd)
			shown, name = place.display, place.name or ""
			key = where(place.root, _parts_of(place))
		try:
			text = data.decode("utf-8") if data is not None else None
		except UnicodeDecodeError:
			text = None
		if text is None:
			media = mimetypes.guess_type(name)[0] or "application/octet-stream"
			binary = {
				"path": shown,
				"binary": True,
				"file": f"fileSystem:{shown}",
				"mediaType": media,
				"size": info.st_size,
			}
			return labelled(binary, [key])
		offset, limit = i.get("offset", 0), i.get("limit", max_read)
		part = text[offset : offset + limit]
		out: dict[str, Any] = {"path": shown, "content": part, "size": info.st_size}
		if offset + limit < len(text):
			out["truncated"] = True
			out["nextOffset"] = offset + limit
		return labelled(out, [key])

	def write(i: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		given, data = i["path"], i["_data"]
		tainted = _tainted(context)
		created: list[tuple[int, tuple[str, ...]]] = []
		with box.locate(given, create_parents=True, created=created) as place:
			info = place.lstat()
			if place.name is None or (info is not None and stat.S_ISDIR(info.st_mode)):
				raise ToolError(f"{_shown(given)} is a directory")
			mode = None
			if info is not None:
				if not i.get("overwrite", True):
					raise ToolError(f"{_shown(given)} exists; pass overwrite=true to replace it")
				if not stat.S_ISREG(info.st_mode):
					raise ToolError(
						f"{_shown(given)} is a {kind_of(info.st_mode)}, not a regular file; refused"
					)
				mode = stat.S_IMODE(info.st_mode)
			key = where(place.root, (*place.parts, place.name))
			if tainted:  # marked first: a mark that cannot be kept stops the write
				marks.update(add=[key, *made(created)])
			try:
				write_file(place.dir_fd, place.name, data, mode)
			except OSError as err:
				raise os_error(err, given, "write") from None
			if not tainted:  # every byte replaced by a clean run
				marks.update(remove=[key])
			return {"path": place.display, "size": len(data)}

	def append(i: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		given = i["path"]
		data = i["content"].encode("utf-8")
		tainted = _tainted(context)
		created: list[tuple[int, tuple[str, ...]]] = []
		with APPEND_LOCK, box.locate(given, create_parents=True, created=created) as place:
			info = place.lstat()
			if place.name is None or (info is not None and stat.S_ISDIR(info.st_mode)):
				raise ToolError(f"{_shown(given)} is a directory")
			if info is not None and not stat.S_ISREG(info.st_mode):
				raise ToolError(
					f"{_shown(given)} is a {kind_of(info.st_mode)}, not a regular file; refused"
				)
			if tainted:  # the earlier bytes stay: a clean append leaves a mark as it is
				marks.update(add=[where(place.root, (*place.parts, place.name)), *made(created)])
			try:
				fd = os.open(place.name, _APPEND_FLAGS, 0o666, dir_fd=place.dir_fd)
			except OSError as err:
				raise os_error(err, given, "append to") from None
			try:
				opened = os.fstat(fd)
				if not stat.S_ISREG(opened.st_mode):
					raise ToolError(f"{_shown(given)} is not a regular file; refused")
				if opened.st_nlink > 1:
					raise ToolError(
						f"{_shown(given)} has more than one hard link (another name for it may "
						"be outside the allowed directories); refused"
					)
				view = memoryview(data)
				while view:
					view = view[os.write(fd, view) :]
				return {"path": place.display, "size": os.fstat(fd).st_size}
			except OSError as err:
				raise os_error(err, given, "append to") from None
			finally:
				os.close(fd)

	def listing(i: dict[str, Any], _: ToolContext) -> Any:
		given = i.get("path", ".")
		most = i.get("maxEntries", 1000)
		entries: list[dict[str, Any]] = []
		keys: list[str] = []  # a name a tainted run chose is text the model reads
		with box.locate(given) as place:
			fd = _open_dir(place, given)
			base = _parts_of(place)
			try:
				for rel, dirs, files, folder_fd in _walk(fd):
					for name in [*dirs, *files]:
						info = _lstat(folder_fd, name)
						if info is None:
							continue
						kind = kind_of(info.st_mode)
						entry: dict[str, Any] = {
							"path": box.display(place.root, [*base, *rel, name]),
							"type": kind,
						}
						if kind == "file":
							entry["size"] = info.st_size
						entries.append(entry)
						keys.append(where(place.root, (*base, *rel, name)))
						if len(entries) >= most:
							return labelled({"entries": entries, "truncated": True}, keys)
					if not i.get("recursive"):
						break
			except OSError as err:
				raise os_error(err, given, "list") from None
			finally:
				os.close(fd)
		return labelled({"entries": entries}, keys)

	def stat_(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		given = i["path"]
		with box.locate(given) as place:
			info = place.lstat()
			if info is None:
				raise ToolError(f"nothing at {_shown(given)}")
			modified = dt.datetime.fromtimestamp(info.st_mtime, dt.UTC).isoformat()
			return {
				"path": place.display,
				"type": kind_of(info.st_mode),
				"size": info.st_size,
				"modified": modified,
			}

	def mkdir(i: dict[str, Any], context: ToolContext) -> dict[str, Any]:
		given = i["path"]
		tainted = _tainted(context)
		parents: list[tuple[int, tuple[str, ...]]] = []
		with box.locate(given, create_parents=True, created=parents) as place:
			created = False
			if place.name is not None:
				if tainted:  # its name (and its new parents') is the tainted run's text
					marks.update(
						add=[where(place.root, (*place.parts, place.name)), *made(parents)]
					)
				try:
					os.mkdir(place.name, 0o777, dir_fd=place.dir_fd)
					created = True
				except FileExistsError:
					info = place.lstat()
					if info is None or not stat.S_ISDIR(info.st_mode):
						raise ToolError(f"{_shown(given)} exists and is not a directory") from None
				except OSError as err:
					raise os_error(err, given, "create") from None
			return {"path": place.display, "created": created}

	def delete(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		given = i["path"]
		with box.locate(given, follow=False) as place:
			if place.name is None:
				raise ToolError("refusing to delete an allowed directory itself")
			if box.reserves_below(place.root, (*place.parts, place.name)):
				raise box.refuse_reserved(given)
			info = place.lstat()
			if info is None:
				raise ToolError(f"nothing at {_shown(given)}")
			try:
				if stat.S_ISDIR(info.st_mode) and not i.get("recursive"):
					try:
						os.rmdir(place.name, dir_fd=place.dir_fd)
					except OSError as err:
						if err.errno in (errno.ENOTEMPTY, errno.EEXIST):
							raise ToolError(
								f"{_shown(given)} is not empty; pass recursive=true"
							) from None
						raise
				else:
					_remove(place.dir_fd, place.name)
			except OSError as err:
				raise os_error(err, given, "delete") from None
			marks.update(remove=[where(place.root, (*place.parts, place.name))])
			return {"path": place.display, "deleted": True}

	def transfer(i: dict[str, Any], context: ToolContext, *, move: bool) -> dict[str, Any]:
		src_given, dst_given = i["source"], i["destination"]
		tainted = _tainted(context)
		created: list[tuple[int, tuple[str, ...]]] = []
		with box.locate(src_given, follow=False) as src:
			if src.name is None:
				raise ToolError("refusing to move or copy an allowed directory itself")
			if box.reserves_below(src.root, (*src.parts, src.name)):
				raise box.refuse_reserved(src_given)
			info = src.lstat()
			if info is None:
				raise ToolError(f"nothing at {_shown(src_given)}")
			with box.locate(dst_given, follow=False, create_parents=True, created=created) as dst:
				dst_fd = os.dup(dst.dir_fd)
				try:
					name, parts = dst.name, dst.parts
					existing = dst.lstat()
					if name is None or (existing is not None and stat.S_ISDIR(existing.st_mode)):
						# Into an existing directory, under the source's name.
						os.close(dst_fd)
						dst_fd = _open_dir(dst, dst_given)
						parts, name = _parts_of(dst), src.name
					source = (src.root, (*src.parts, src.name))
					target = (dst.root, (*parts, name))
					if target[0] == source[0] and target[1][: len(source[1])] == source[1]:
						raise ToolError(
							"the destination is the source or inside it; choose another place"
						)
					shown = box.display(dst.root, target[1])
					why = box.room(dst.root, target[1], _extent(src.dir_fd, src.name))
					if why is not None:
						raise ToolError(
							f"cannot {'move' if move else 'copy'} {_shown(src_given)} to "
							f"{shown[:200]!r}: {why}; choose a shorter or shallower destination"
						)
					present = _lstat(dst_fd, name)
					if present is not None and stat.S_ISLNK(present.st_mode):
						_refuse_outside_link(shown)
					if present is not None and not i.get("overwrite"):
						what = "is a symlink" if stat.S_ISLNK(present.st_mode) else "exists"
						raise ToolError(
							f"{shown!r} {what}; pass overwrite=true to replace it (a symlink is "
							"replaced itself, never written through)"
						)
					# The destination's marks are the source's (every place under it), or all
					# of them in a tainted run: kept before the move or copy, cleared after it.
					rels = _tree(src.dir_fd, src.name)
					if any(box.reserved_at(target[0], (*target[1], *rel)) for rel in rels):
						raise box.refuse_reserved(dst_given)  # merged into a folder that holds it
					olds = [where(src.root, (*source[1], *rel)) for rel in rels]
					news = [where(target[0], (*target[1], *rel)) for rel in rels]
					if tainted:
						carried = set(news)
					else:
						held = marks.which(olds)  # one reading of the record
						carried = {n for o, n in zip(olds, news, strict=True) if o in held}
					marks.update(add=[*carried, *(made(created) if tainted else ())])
					try:
						if move:
							_move(src.dir_fd, src.name, dst_fd, name, src_given)
						else:
							_copy(src.dir_fd, src.name, dst_fd, name, src.display)
					except OSError as err:
						raise os_error(
							err, dst_given, "move onto" if move else "copy onto"
						) from None
					cleared = [n for n in news if n not in carried]
					marks.update(remove=[*cleared, *(olds if move else ())])
				finally:
					os.close(dst_fd)
			return {"source": src.display, "destination": shown}

	def _refuse_outside_link(shown: str) -> None:
		try:
			with box.locate(shown, follow=True):
				pass
		except ToolError as exc:
			if "outside" in exc.message:
				raise ToolError(
					f"{shown!r} is a symlink leading outside the allowed directories; refused"
				) from None

	def _move(src_fd: int, src_name: str, dst_fd: int, dst_name: str, given: str) -> None:
		present = _lstat(dst_fd, dst_name)
		if present is not None and stat.S_ISLNK(present.st_mode):
			os.unlink(dst_name, dir_fd=dst_fd)
		try:
			os.replace(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
		except OSError as err:
			if err.errno != errno.EXDEV:
				raise
			_copy(src_fd, src_name, dst_fd, dst_name, given)
			_remove(src_fd, src_name)

	def search(i: dict[str, Any], _: ToolContext) -> Any:
		given = i.get("path", ".")
		query, sensitive = i["query"], i.get("caseSensitive", False)
		needle = query if sensitive else query.lower()
		most = i.get("maxResults", 100)
		found: list[dict[str, Any]] = []
		keys: list[str] = []  # the files its lines came from, and the folders in their paths
		named: set[str] = set()

		def scan(folder_fd: int, name: str, parts: Sequence[str], given: int) -> bool:
			"""Its matching lines; ``given``: how many of ``parts`` the path searched names."""
			info = _lstat(folder_fd, name)
			if (
				info is None
				or box.reserved_at(place.root, parts)
				or not stat.S_ISREG(info.st_mode)
				or info.st_nlink > 1
				or info.st_size > MAX_SEARCH_FILE_BYTES
			):
				return False  # links, FIFOs, sockets, devices, hard links, large files
			try:
				fd = os.open(name, _READ_FLAGS, dir_fd=folder_fd)
			except OSError:
				return False
			try:
				opened = os.fstat(fd)
				if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
					return False
				data = read_capped(fd, MAX_SEARCH_FILE_BYTES)
				if data is None:
					return False  # it grew past the cap after it was checked
				text = data.decode("utf-8")
			except (OSError, UnicodeDecodeError):
				return False
			finally:
				os.close(fd)
			first = True
			for number, line in enumerate(text.splitlines(), 1):
				if needle in (line if sensitive else line.lower()):
					if (
						first
					):  # its path shows the file's name, and its folders' below the one given
						first = False
						for end in range(given + 1, len(parts) + 1):
							key = where(place.root, parts[:end])
							if key not in named:
								named.add(key)
								keys.append(key)
					path = box.display(place.root, parts)
					shown = line if len(line) <= 300 else masked_excerpt(line, 300)  # masked, cut
					found.append({"path": path, "line": number, "text": shown})
					if len(found) >= most:
						return True
			return False

		with box.locate(given) as place:
			info = place.lstat()
			if info is None:
				raise ToolError(f"nothing at {_shown(given)}")
			if stat.S_ISREG(info.st_mode) and place.name is not None:
				parts = _parts_of(place)
				full = scan(place.dir_fd, place.name, parts, len(parts) - 1)
				out = {"matches": found, "truncated": True} if full else {"matches": found}
				return labelled(out, keys)
			if not stat.S_ISDIR(info.st_mode):
				raise ToolError(
					f"{_shown(given)} is a {kind_of(info.st_mode)}, not a file or directory"
				)
			fd = _open_dir(place, given)
			base = _parts_of(place)
			try:
				for rel, _dirs, files, folder_fd in _walk(fd):
					for name in files:
						if scan(folder_fd, name, [*base, *rel, name], len(base)):
							return labelled({"matches": found, "truncated": True}, keys)
			finally:
				os.close(fd)
		return labelled({"matches": found}, keys)

	return {
		"read": read,
		"write": write,
		"append": append,
		"list": listing,
		"stat": stat_,
		"mkdir": mkdir,
		"delete": delete,
		"move": lambda i, context: transfer(i, context, move=True),
		"copy": lambda i, context: transfer(i, context, move=False),
		"search": search,
	}


def _threaded(func: Callable[..., Any], *, takes_data: bool) -> Callable[..., Any]:
	async def run(i: dict[str, Any], context: ToolContext) -> Any:
		if takes_data:
			i = {**i, "_data": await _write_data(i, context)}
		return await anyio.to_thread.run_sync(func, i, context)

	return run


async def _write_data(i: dict[str, Any], context: ToolContext) -> bytes:
	if ("content" in i) == ("file" in i):
		raise ToolError("give either 'content' (text) or 'file' (a file reference), not both")
	if "content" in i:
		return str(i["content"]).encode("utf-8")
	if context.files is None:
		raise ToolError("'file' needs the OpenMolt file store; use the tool through an agent")
	return (await context.files.open(i["file"])).data


def _obj(props: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
	return {
		"type": "object",
		"properties": props,
		"required": list(required),
		"additionalProperties": False,
	}


_PATH = {"type": "string", "description": "Path relative to the first directory."}
_OVERWRITE = {"type": "boolean", "default": False, "description": "Replace an existing target."}
_SPECS: dict[str, tuple[str, str, dict[str, Any]]] = {
	"read": ("read", "Read a text file (binary files come back as a file reference).", _obj({"path": _PATH, "offset": {"type": "integer", "minimum": 0, "default": 0}, "limit": {"type": "integer", "minimum": 1, "description": "Characters to return."}}, ["path"])),
	"write": ("write", "Create or replace a file with text content, or with the bytes of a file reference (openmolt-file:..., data:...). Parent directories are created.", _obj({"path": _PATH, "content": {"type": "string"}, "file": {"type": "string", "description": "A file reference to save."}, "overwrite": {"type": "boolean", "default": True}}, ["path"])),
	"append": ("write", "Append text to a file (created when missing).", _obj({"path": _PATH, "content": {"type": "string"}}, ["path", "content"])),
	"list": ("read", "List a directory.", _obj({"path": {**_PATH, "default": "."}, "recursive": {"type": "boolean", "default": False}, "maxEntries": {"type": "integer", "minimum": 1, "default": 1000}}, [])),
	"stat": ("read", "Type, size and modification time of a path.", _obj({"path": _PATH}, ["path"])),
	"mkdir": ("write", "Create a directory (and its parents).", _obj({"path": _PATH}, ["path"])),
	"delete": ("write", "Delete a file, a symlink, or a directory (recursive=true if not empty).", _obj({"path": _PATH, "recursive": {"type": "boolean", "default": False}}, ["path"])),
	"move": ("write", "Move or rename a file or directory (into the destination when it is an existing directory).", _obj({"source": _PATH, "destination": _PATH, "overwrite": _OVERWRITE}, ["source", "destination"])),
	"copy": ("write", "Copy a file or directory (into the destination when it is an existing directory; directories merge with overwrite=true).", _obj({"source": _PATH, "destination": _PATH, "overwrite": _OVERWRITE}, ["source", "destination"])),
	"search": ("read", "Find lines containing a text in the files under a path.", _obj({"query": {"type": "string", "minLength": 1}, "path": {**_PATH, "default": "."}, "caseSensitive": {"type": "boolean", "default": False}, "maxResults": {"type": "integer", "minimum": 1, "default": 100}}, ["query"])),
}  # fmt: skip


def file_system_integration(
	paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
	*,
	read_only: bool = False,
	max_read_chars: int = MAX_READ_CHARS,
	taint_record: str | os.PathLike[str] | None = None,
) -> Integration:
	"""Build a FileSystem integration confined to some directories.

	Args:
		paths: One directory or several (relative paths from the model use the first).
		read_only: Offer only the tools that read.
		max_read_chars: Characters a read returns unless the model asks for fewer.
		taint_record: The file that keeps which paths tainted runs wrote
			(`openmolt_core.integrations._taintmarks`); None: ``$OPENMOLT_FILE_TAINT``, else
			``file-taint.json`` in OpenMolt's state folder (``~/.local/state/openmolt``).
			Integrations over the same directories should share it.

	Raises:
		ValueError: A directory does not exist.
	"""
	roots = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
	box = Sandbox(roots)
	if taint_record is not None:
		from openmolt_core._support.paths import path_problem

		problem = path_problem(taint_record)
		if problem is not None:
			raise ValueError(f"FileSystemIntegration: taint_record must be a file's path {problem}")
		record: Path | None = Path(taint_record)
	else:
		record = default_record()
	box.reserve(_reserved(record))
	box.reserve(_temporary_stores(), stores=True)
	marks = TaintMarks(record)
	keep_marks(marks, box.roots)  # a skill's folder it writes in reads its marks too
	box.watch(id(kept_records), kept_records)  # every FileSystem's record, made before or after
	funcs = _make_tools(box, max_read_chars, marks)
	where = ", ".join(str(r) for r in box.roots)
	tools = [
		_SandboxTool(
			handle=handle,
			description=f"{description} Allowed directories: {where}.",
			function=_threaded(funcs[handle], takes_data=handle == "write"),
			input_schema=schema,
			scopes=(scope,),
			sandbox=box,
			marks=marks,
		)
		for handle, (scope, description, schema) in _SPECS.items()
		if not (read_only and scope == "write")
	]
	return Integration(
		name="FileSystem",
		description=f"Read and manage files in {where}.",
		scopes={
			"read": "Read files and list directories.",
			"write": "Create, change, move and delete files.",
		},
		tools=tools,
		# Every tool declares its labels (`openmolt_core.taint`): reading is private; the others
		# stay inside the allowed directories, so they declare none.
		labels={"*": [], "read": ["private"], "list": ["private"], "search": ["private"]},
	)
