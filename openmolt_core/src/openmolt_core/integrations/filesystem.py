"""The FileSystem integration: files and directories, confined to the directories it was given.

Not available by default. Register it with
``om.register_integration("fileSystem", OpenMolt.FileSystemIntegration("./data"))``. Every path
goes through `openmolt_core.integrations._sandbox.Sandbox`; blocking work runs in a worker thread.
Its paths are also file references (``fileSystem:<path>``) other tools can upload.
"""

from __future__ import annotations

import datetime as dt
import errno
import mimetypes
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from openmolt_core.errors import ToolError
from openmolt_core.integrations._sandbox import (
	Sandbox,
	append_bytes,
	atomic_write,
	copy_without_following,
)
from openmolt_core.integrations.model import Integration
from openmolt_core.tools import FunctionTool, ToolContext

__all__ = ["file_system_integration", "sandbox_of"]

MAX_READ_CHARS = 100_000
"""Characters a read returns at most by default (ask with offset for more)."""

MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are skipped by search."""


@dataclass(slots=True)
class _SandboxTool(FunctionTool):
	sandbox: Sandbox | None = None


def sandbox_of(integration: Integration) -> Sandbox:
	"""The sandbox of a FileSystem integration (for ``fileSystem:`` file references).

	Raises:
		ToolError: The integration is not a FileSystem integration.
	"""
	for tool in integration.tools:
		if isinstance(tool, _SandboxTool) and tool.sandbox is not None:
			return tool.sandbox
	raise ToolError("the integration registered as 'fileSystem' is not a FileSystem integration")


def _kind(path: Path) -> str:
	if path.is_symlink():
		return "symlink"
	return "directory" if path.is_dir() else "file"


def _make_tools(box: Sandbox, max_read: int) -> dict[str, Callable[..., Any]]:
	def show(real: Path) -> str:
		return box.display(real)

	def read(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"])
		if not real.is_file():
			raise ToolError(f"no file at {i['path']!r}")
		data = real.read_bytes()
		try:
			text = data.decode("utf-8")
		except UnicodeDecodeError:
			media = mimetypes.guess_type(real.name)[0] or "application/octet-stream"
			return {
				"path": show(real),
				"binary": True,
				"file": f"fileSystem:{show(real)}",
				"mediaType": media,
				"size": len(data),
			}
		offset, limit = i.get("offset", 0), i.get("limit", max_read)
		part = text[offset : offset + limit]
		out: dict[str, Any] = {"path": show(real), "content": part, "size": len(data)}
		if offset + limit < len(text):
			out["truncated"] = True
			out["nextOffset"] = offset + limit
		return out

	def write(i: dict[str, Any], c: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"])
		if real.is_dir():
			raise ToolError(f"{i['path']!r} is a directory")
		if real.exists() and not i.get("overwrite", True):
			raise ToolError(f"{i['path']!r} exists; pass overwrite=true to replace it")
		data = i["_data"]
		real.parent.mkdir(parents=True, exist_ok=True)
		atomic_write(real, data)
		return {"path": show(real), "size": len(data)}

	def append(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"])
		if real.is_dir():
			raise ToolError(f"{i['path']!r} is a directory")
		real.parent.mkdir(parents=True, exist_ok=True)
		size = append_bytes(real, i["content"].encode("utf-8"))
		return {"path": show(real), "size": size}

	def listing(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i.get("path", "."))
		if not real.is_dir():
			raise ToolError(f"no directory at {i.get('path', '.')!r}")
		most = i.get("maxEntries", 1000)
		entries: list[dict[str, Any]] = []
		walker = os.walk(real) if i.get("recursive") else [next(os.walk(real))]
		for folder, dirs, files in walker:
			dirs.sort()
			for name in sorted(dirs) + sorted(files):
				path = Path(folder) / name
				kind = _kind(path)
				entry: dict[str, Any] = {"path": show(path), "type": kind}
				if kind == "file":
					entry["size"] = path.stat().st_size
				entries.append(entry)
				if len(entries) >= most:
					return {"entries": entries, "truncated": True}
		return {"entries": entries}

	def stat(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"])
		if not real.exists():
			raise ToolError(f"nothing at {i['path']!r}")
		st = real.stat()
		modified = dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).isoformat()
		return {"path": show(real), "type": _kind(real), "size": st.st_size, "modified": modified}

	def mkdir(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"])
		real.mkdir(parents=True, exist_ok=True)
		return {"path": show(real), "created": True}

	def delete(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i["path"], follow=False)
		if box.is_root(real):
			raise ToolError("refusing to delete an allowed directory itself")
		if real.is_dir() and not real.is_symlink():
			if i.get("recursive"):
				shutil.rmtree(real)
			else:
				try:
					real.rmdir()
				except OSError:
					raise ToolError(f"{i['path']!r} is not empty; pass recursive=true") from None
		elif os.path.lexists(real):
			real.unlink()
		else:
			raise ToolError(f"nothing at {i['path']!r}")
		return {"path": show(real), "deleted": True}

	def pair(i: dict[str, Any]) -> tuple[Path, Path]:
		source = box.resolve(i["source"], follow=False)
		target = box.resolve(i["destination"], follow=False)
		if not os.path.lexists(source):
			raise ToolError(f"nothing at {i['source']!r}")
		if box.is_root(source):
			raise ToolError("refusing to move or copy an allowed directory itself")
		if target.is_dir() and not target.is_symlink():
			target = target / source.name
		if target == source or source in target.parents:
			raise ToolError("the destination is the source or inside it; choose another place")
		box.check_followed(target, i["destination"])
		if os.path.lexists(target) and not i.get("overwrite"):
			what = "is a symlink" if target.is_symlink() else "exists"
			raise ToolError(
				f"{show(target)!r} {what}; pass overwrite=true to replace it (a symlink is "
				"replaced itself, never written through)"
			)
		target.parent.mkdir(parents=True, exist_ok=True)
		return source, target

	def move(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		source, target = pair(i)
		if target.is_symlink():
			target.unlink()
		try:
			os.replace(source, target)
		except OSError as err:
			if err.errno != errno.EXDEV:
				raise ToolError(f"cannot move onto {show(target)!r}: {err.strerror}") from None
			copy_without_following(source, target)
			if source.is_dir() and not source.is_symlink():
				shutil.rmtree(source)
			else:
				source.unlink()
		return {"source": show(source), "destination": show(target)}

	def copy(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		source, target = pair(i)
		copy_without_following(source, target)
		return {"source": show(source), "destination": show(target)}

	def search(i: dict[str, Any], _: ToolContext) -> dict[str, Any]:
		real = box.resolve(i.get("path", "."))
		query, sensitive = i["query"], i.get("caseSensitive", False)
		needle = query if sensitive else query.lower()
		most = i.get("maxResults", 100)
		found: list[dict[str, Any]] = []
		files = [(str(real), [], [real.name])] if real.is_file() else os.walk(real)
		for folder, dirs, names in files:
			dirs.sort()
			base = Path(folder) if not real.is_file() else real.parent
			for name in sorted(names):
				path = base / name
				if path.is_symlink() or path.stat().st_size > MAX_SEARCH_FILE_BYTES:
					continue
				try:
					text = path.read_text("utf-8")
				except (UnicodeDecodeError, OSError):
					continue
				for number, line in enumerate(text.splitlines(), 1):
					if needle in (line if sensitive else line.lower()):
						found.append({"path": show(path), "line": number, "text": line[:300]})
						if len(found) >= most:
							return {"matches": found, "truncated": True}
		return {"matches": found}

	return {
		"read": read,
		"write": write,
		"append": append,
		"list": listing,
		"stat": stat,
		"mkdir": mkdir,
		"delete": delete,
		"move": move,
		"copy": copy,
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
) -> Integration:
	"""Build a FileSystem integration confined to some directories.

	Args:
		paths: One directory or several (relative paths from the model use the first).
		read_only: Offer only the tools that read.
		max_read_chars: Characters a read returns unless the model asks for fewer.

	Raises:
		ValueError: A directory does not exist.
	"""
	roots = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
	box = Sandbox(roots)
	funcs = _make_tools(box, max_read_chars)
	where = ", ".join(str(r) for r in box.roots)
	tools = [
		_SandboxTool(
			handle=handle,
			description=f"{description} Allowed directories: {where}.",
			function=_threaded(funcs[handle], takes_data=handle == "write"),
			input_schema=schema,
			scopes=(scope,),
			sandbox=box,
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
	)
