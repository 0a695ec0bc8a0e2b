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
	from openmolt_core.llm import Attachment

__all__ = [
	"FILE_PREFIX",
	"INPUT_FILES",
	"MAX_ATTACHMENT_BYTES",
	"WITHHELD",
	"FileAccess",
	"StoredFile",
	"keep_attachments",
	"masked_labels",
	"masked_state",
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


MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
"""The largest file a run's input takes (decoded), of the order of the providers' limits."""

INPUT_FILES = "inputFiles"
"""``RunState.ext`` key: the records of the files sent with the run's input (`keep_attachments`)."""


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
	import base64
	import binascii

	from openmolt_core._support.masking import known_secrets
	from openmolt_core.errors import ConfigurationError
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


# The store, under its old names here (loaded on first use; not in __all__).
_HOMES: Mapping[str, str] = {
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
