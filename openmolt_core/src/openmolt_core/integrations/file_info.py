"""The ``fileInfo`` tool: a file reference's size and type, and the byte ranges of its chunks.

Chunked uploads (TikTok, resumable Google uploads) need the file's size and send one byte range at
a time as ``<reference>#bytes=<start>-<end>``. Integrations with such uploads add this tool to their
tools, so the model never has to guess a size or compute offsets::

	tools = [..., file_info_tool(scopes=["upload"])]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openmolt_core.errors import ToolError
from openmolt_core.filestore import split_range
from openmolt_core.functiontools import FunctionTool
from openmolt_core.tools import ToolContext

__all__ = ["MAX_CHUNKS", "file_info_tool", "plan_chunks"]

MAX_CHUNKS = 1000
"""The most chunks `plan_chunks` lists (TikTok's limit)."""

_INPUT: dict[str, Any] = {
	"type": "object",
	"properties": {
		"file": {
			"type": "string",
			"description": "File reference: openmolt-file:<id>, data:<type>;base64,<data> or "
			"fileSystem:<path>.",
		},
		"chunkSize": {
			"type": "integer",
			"minimum": 1,
			"description": "To upload in parts: the chunk size in bytes. The answer then lists "
			"each chunk's byte range and a file reference of just those bytes.",
		},
		"mergeRemainder": {
			"type": "boolean",
			"default": False,
			"description": "Add the bytes left after the last full chunk to that chunk instead of "
			"sending them as a smaller final chunk (TikTok counts chunks as size // chunkSize).",
		},
	},
	"required": ["file"],
	"additionalProperties": False,
}

_CHUNK: dict[str, Any] = {
	"type": "object",
	"properties": {
		"index": {"type": "integer"},
		"start": {"type": "integer", "description": "Offset of the first byte."},
		"end": {"type": "integer", "description": "Offset of the last byte (inclusive)."},
		"size": {"type": "integer"},
		"file": {"type": "string", "description": "Reference of this chunk's bytes."},
	},
}

_OUTPUT: dict[str, Any] = {
	"type": "object",
	"properties": {
		"file": {"type": "string"},
		"size": {"type": "integer", "description": "Size in bytes."},
		"mediaType": {"type": "string"},
		"name": {"type": "string"},
		"chunkSize": {"type": "integer"},
		"chunkCount": {"type": "integer"},
		"chunks": {"type": "array", "items": _CHUNK},
	},
}


def plan_chunks(
	reference: str, size: int, chunk_size: int, *, merge_remainder: bool = False
) -> list[dict[str, Any]]:
	"""Split ``size`` bytes into chunks of ``chunk_size``, each with a ranged file reference.

	Args:
		reference: The file reference (without a byte range).
		size: The file's size in bytes.
		chunk_size: Bytes per chunk.
		merge_remainder: Fold the bytes after the last full chunk into it (at least one chunk).

	Raises:
		ToolError: The size is zero, or the plan would exceed `MAX_CHUNKS` chunks.
	"""
	if size <= 0:
		raise ToolError("the file is empty; there is nothing to upload")
	if chunk_size <= 0:
		raise ToolError("chunkSize must be at least 1")
	count = max(1, size // chunk_size) if merge_remainder else -(-size // chunk_size)
	if count > MAX_CHUNKS:
		raise ToolError(
			f"{count} chunks of {chunk_size} bytes; at most {MAX_CHUNKS}: use a larger chunkSize"
		)
	chunks = []
	for index in range(count):
		start = index * chunk_size
		end = size - 1 if index == count - 1 else start + chunk_size - 1
		chunks.append(
			{
				"index": index,
				"start": start,
				"end": end,
				"size": end - start + 1,
				"file": f"{reference}#bytes={start}-{end}",
			}
		)
	return chunks


async def _file_info(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	if context.files is None:
		raise ToolError("fileInfo needs a file store; use the tool through an OpenMolt agent")
	info = await context.files.info(input["file"])
	chunk_size = input.get("chunkSize")
	if chunk_size is None:
		return info
	base, span = split_range(input["file"])
	if span is not None:
		raise ToolError("give the whole file (without #bytes=...) to plan chunks")
	chunks = plan_chunks(
		base, info["size"], chunk_size, merge_remainder=bool(input.get("mergeRemainder"))
	)
	return {**info, "chunkSize": chunk_size, "chunkCount": len(chunks), "chunks": chunks}


def file_info_tool(*, handle: str = "fileInfo", scopes: Sequence[str] = ()) -> FunctionTool:
	"""A tool that tells the model a file's size and type, and plans chunked uploads.

	Args:
		handle: The tool's name inside the integration.
		scopes: The scopes it needs (usually the integration's upload scope).

	Returns:
		A `FunctionTool` answering ``{"file", "size", "mediaType", "name"}``, plus
		``chunkSize``, ``chunkCount`` and ``chunks`` (see `plan_chunks`) when asked for a chunk
		size.
	"""
	return FunctionTool(
		handle=handle,
		description="Get a file's size in bytes, media type and name. With chunkSize, also "
		"list the byte ranges for a chunked upload, each with a file reference of that chunk "
		"('<file>#bytes=<start>-<end>') to pass to the upload tool.",
		function=_file_info,
		input_schema=_INPUT,
		output_schema=_OUTPUT,
		scopes=tuple(scopes),
	)
