"""File references, and what a tool and the loop use of the file store (`FileAccess`).

A *file reference* is a string a model can pass from one tool to another instead of the bytes:

- ``openmolt-file:<id>``: a file saved in the store (a binary HTTP response, a generated image);
- ``data:<media type>;base64,<data>``: small inline data the model produced;
- ``fileSystem:<path>``: a path inside the directories of the registered FileSystem integration.

Any of them may end with a byte range, ``#bytes=<start>-<end>`` (both offsets inclusive, as in an
HTTP ``Range`` header; ``#bytes=<start>-`` runs to the end): it resolves to that slice of the file,
which is how chunked uploads send one part of a large file.

This module is the contract: the reference prefix, the bytes a reference resolves to
(`StoredFile`) and the methods tools call on the store (`FileAccess`, ``ToolContext.files``). The
store itself, which each `OpenMolt` instance owns, is `openmolt_core.filestore.FileStore`; its
names here (`FileStore`, `split_range`, `parse_data_url`, `MAX_DATA_URL_BYTES`) still import, on
first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from openmolt_core._support import lazy_exports

__all__ = [
	"FILE_PREFIX",
	"FileAccess",
	"LocalFile",
	"StoredFile",
]

FILE_PREFIX = "openmolt-file:"
"""The prefix of references to files saved in the store."""


class LocalFile(Protocol):
	"""A confined local file (`openmolt_core.integrations._sandbox.ConfinedFile`)."""

	name: str
	size: int

	def read(self, start: int, stop: int) -> bytes:
		"""The bytes from ``start`` to ``stop`` (exclusive), checked again as they are read."""
		...


@dataclass(frozen=True, slots=True)
class StoredFile:
	"""The bytes behind a file reference.

	Args:
		data: The content.
		media_type: Its media type (``application/octet-stream`` when unknown).
		name: A file name for uploads and downloads.
	"""

	data: bytes
	media_type: str
	name: str


class FileAccess(Protocol):
	"""What a tool and the loop use of the file store (``ToolContext.files``, ``Agent.files``).

	The instance's store (`openmolt_core.filestore.FileStore`) is one; a test may pass another.
	A reference is ``openmolt-file:<id>``, a ``data:`` URL or ``fileSystem:<path>``, each
	optionally followed by ``#bytes=<start>-<end>`` (a slice).
	"""

	async def save(
		self, data: bytes, *, media_type: str = "application/octet-stream", name: str = ""
	) -> dict[str, Any]:
		"""Save bytes and return the reference the model sees.

		Args:
			data: The content.
			media_type: Its media type.
			name: A file name (kept for uploads).

		Returns:
			``{"file": "openmolt-file:<id>", "mediaType", "size", "name"}``.
		"""
		...

	async def open(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference to bytes.

		Args:
			reference: The file reference.
			max_bytes: Refuse (before reading) a file or slice larger than this.

		Raises:
			ToolError: The reference is malformed, unknown, out of range, too large or refused.
		"""
		...

	def read(self, reference: str, *, max_bytes: int | None = None) -> StoredFile:
		"""Resolve a file reference to bytes, blocking (call it from a worker thread).

		Args:
			reference: The file reference.
			max_bytes: Refuse (before reading) a file or slice larger than this.

		Raises:
			ToolError: The reference is malformed, unknown, out of range, too large or refused.
		"""
		...

	def describe(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference without reading it, blocking (call it from a worker thread).

		Args:
			reference: The file reference.

		Returns:
			``{"file": <reference>, "size", "mediaType", "name"}``.

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		...

	async def info(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference without reading it (see `describe`).

		Args:
			reference: The file reference.

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		...


# The store and its helpers, under their old names here (loaded on first use; not in __all__: a
# star import does not load the store).
_HOMES: Mapping[str, str] = {
	"FileStore": "openmolt_core.filestore",
	"MAX_DATA_URL_BYTES": "openmolt_core.filestore",
	"PathResolver": "openmolt_core.filestore",
	"parse_data_url": "openmolt_core.filestore",
	"split_range": "openmolt_core.filestore",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
