"""File references, and what a tool and the loop use of the file store (`FileAccess`).

A *file reference* (``openmolt-file:<id>``, a ``data:`` URL or ``fileSystem:<path>``, maybe with a
byte range) is a string a model passes from one tool to another instead of the bytes
(docs/integration-authoring.md, "Files"). The store is `openmolt_core.filestore.FileStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from openmolt_core._support import lazy_exports
from openmolt_core._support.filescreen import (  # the screening of bytes: a library
	masked_labels,
	screen,
	screened_base64,
	textual,
)

if TYPE_CHECKING:
	from openmolt_core._support.secretset import Redactor
	from openmolt_core.llm import Attachment

__all__ = [
	"FILE_PREFIX",
	"INPUT_FILES",
	"WITHHELD",
	"FileAccess",
	"InstanceFiles",
	"StoredFile",
	"masked_labels",
	"save_screened",
	"screen",
	"screened_base64",
	"textual",
]

FILE_PREFIX = "openmolt-file:"
"""The prefix of references to files saved in the store."""

WITHHELD = (
	"not kept: it holds a secret of this run, and a file that is not text cannot be masked "
	"without breaking it"
)
"""Why a file is not kept (``withheld``, no reference): it is no text, and shows a secret."""

INPUT_FILES = "inputFiles"
"""``RunState.ext`` key: the records of the files sent with the run's input (`InstanceFiles`)."""


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
	"""What a tool and the loop use of the file store (``ToolContext.files``, ``Agent.files``)."""

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
		"""`open`, blocking (call it from a worker thread).

		Args:
			reference: The file reference.
			max_bytes: Refuse (before reading) a file or slice larger than this.

		Raises:
			ToolError: The reference is malformed, unknown, out of range, too large or refused.
		"""
		...

	def describe(self, reference: str) -> dict[str, Any]:
		"""`info`, blocking (call it from a worker thread).

		Args:
			reference: The file reference.

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		...

	async def info(self, reference: str) -> dict[str, Any]:
		"""Describe a file reference without reading it.

		Args:
			reference: The file reference.

		Returns:
			``{"file": <reference>, "size", "mediaType", "name"}``.

		Raises:
			ToolError: The reference is malformed, unknown, out of range or refused.
		"""
		...


class InstanceFiles(FileAccess, Protocol):
	"""An instance's file store (``Instance.files``, a `openmolt_core.filestore.FileStore`).

	Besides `FileAccess`, what the loop needs of it: its input files kept, a state masked.
	"""

	async def keep_attachments(
		self,
		attachments: Sequence[Attachment],
		*,
		files: FileAccess,
		secrets: Iterable[str] = (),
		origin: Mapping[str, Any] | None = None,
	) -> tuple[list[Attachment], list[dict[str, Any]]]:
		"""Keep a run's input files in ``files``: `openmolt_core.filestore.keep_attachments`.

		Args:
			attachments: The files, as given.
			files: The agent's view of a store.
			secrets: The agent's own secrets, besides those the process knows.
			origin: The run that keeps them (``{"run", "call", "user"}``).
		"""
		...

	def masked_state(self, state: Mapping[str, Any], redact: Redactor) -> Any:
		"""A saved state masked for a journal: `openmolt_core.filestore.masked_state`.

		Args:
			state: The state as `RunState.to_dict` gives it.
			redact: The agent's redactor.
		"""
		...


async def save_screened(
	files: FileAccess,
	data: bytes,
	*,
	media_type: str,
	name: str = "",
	secrets: Iterable[str] = (),
	origin: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
	"""Save bytes in a store, screened (`screen`) with who kept them: the one way in.

	Args:
		files: The store (or an agent's view of it).
		data: The bytes.
		media_type: Their media type.
		name: A file name.
		secrets: Secrets to mask besides those the process knows.
		origin: Who keeps the file (``{"run", "call", "user"}``): a run for another end user
			finds no such file.

	Returns:
		The store's record: ``{"file", "mediaType", "size", "name"}``, or for a file not kept
		``{"mediaType", "size", "name", "withheld"}``.
	"""
	extra = frozenset(s for s in secrets if s)
	if getattr(files, "screens", False) is True:
		save: Any = files.save  # the store's own, which takes a call's secrets and origin
		kept: dict[str, Any] = await save(
			data, media_type=media_type, name=name, secrets=extra, origin=origin
		)
		return kept
	import anyio.to_thread

	from openmolt_core._support.masking import known_secrets

	known = known_secrets() | extra
	name, media_type = masked_labels(name, media_type, known)
	screened = await anyio.to_thread.run_sync(screen, data, media_type, known)
	if screened is None:
		return {"mediaType": media_type, "size": len(data), "name": name, "withheld": WITHHELD}
	return await files.save(screened, media_type=media_type, name=name)


# The store and its work, under their old names here (loaded on first use; not in __all__).
_HOMES: Mapping[str, str] = {
	"MAX_ATTACHMENT_BYTES": "openmolt_core.filestore",
	"keep_attachments": "openmolt_core.filestore",
	"masked_state": "openmolt_core.filestore",
	"FileStore": "openmolt_core.filestore",
	"LocalFile": "openmolt_core.filestore",
	"MAX_DATA_URL_BYTES": "openmolt_core.filestore",
	"PathResolver": "openmolt_core.filestore",
	"parse_data_url": "openmolt_core.filestore",
	"split_range": "openmolt_core.filestore",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
