"""`MCPTool`: one tool of an MCP server, and how its results become what the model reads.

A result maps to the tool result this way:

- ``isError: true`` raises a `ToolError` with the result's text, which the model reads;
- ``structuredContent`` is the result when present (its text copy is dropped, as the
  specification asks servers to send both);
- text blocks become strings (one block: the string itself);
- images, audio and embedded binary resources are saved to the file store and replaced by file
  references (``{"type": "image", "file": "openmolt-file:...", "mediaType", "size", "name"}``), so
  large media never reach the model but can be passed to other tools. Their bytes are the
  server's and may hold a secret of the run (a config file it read, its token in an image's
  metadata): the file store screens every file it is given, as it does any tool's
  (`openmolt_core.files.screen`). Text (``text/*``, JSON, XML, YAML, CSV) is kept masked; any
  other file in which a secret shows is not kept, since a masked image or archive is broken, and
  the block says so (``{"type": "image", "mediaType", "size", "name", "withheld": "..."}``);
- embedded text resources and resource links keep their URI, type and text.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from openmolt_core.errors import ToolError
from openmolt_core.files import WITHHELD

if TYPE_CHECKING:
	from mcp.types import CallToolResult

	from openmolt_core.tools import ToolContext
	from openmolt_mcp._source import MCPToolSource

__all__ = ["WITHHELD", "MCPTool", "to_result"]


@dataclass(frozen=True, slots=True, eq=False)
class MCPTool:
	"""A tool an MCP server listed, as an OpenMolt `openmolt_core.tools.Tool`.

	Args:
		handle: The tool's name inside its integration (the server's name, made safe).
		description: The server's description.
		input_schema: The server's input schema (validated before each call).
		output_schema: The server's output schema, if any.
		scopes: The integration scopes an agent needs to see and call it.
		name: The server's own name for the tool.
		source: The source that calls the server.
		labels: What it does with data (`openmolt_core.taint`): the server config's
			``labels`` entry for the tool when one matches; else from its annotations (an
			open-world tool is ``untrusted`` and ``outbound``, a closed-world one ``untrusted``,
			and ``outbound`` too on a remote server); None when it has neither, which the taint policy treats as unknown (``untrusted``
			and ``outbound`` by default).
		repeatable: A server the user trusts (``trustDescriptions``) marks it read-only
			(``readOnlyHint``) or idempotent (``idempotentHint``): a second call with the same
			arguments has no further effect. An untrusted server's claim is not believed.
		declared_in_doubt: Its in-doubt policy from the server config's ``inDoubt``, if an entry
			matches.
		claims_local: A server the user trusts marks it closed-world (``openWorldHint:
			false``) on a local transport: with ``repeatable``, a call found in doubt runs again
			(the server that ran it once gets the same arguments again).
	"""

	handle: str
	description: str
	input_schema: dict[str, Any]
	output_schema: dict[str, Any] | None
	scopes: tuple[str, ...]
	name: str
	source: MCPToolSource = field(repr=False)
	labels: frozenset[str] | None = None
	repeatable: bool = False
	declared_in_doubt: Literal["retry", "ask", "fail"] | None = None
	claims_local: bool = False

	@property
	def in_doubt(self) -> Literal["retry", "ask", "fail"] | None:
		"""What a durable run does with a call of it found started but unfinished after a crash.

		The config's ``inDoubt`` entry when one matches. Else ``ask`` (a person says whether it
		took effect) unless a server the user trusts marks the tool read-only or idempotent
		(an untrusted server's annotations are claims, never a reason to act): an MCP call
		carries no idempotency key, so running a write again blindly could repeat its effect,
		whatever its labels say of where its data goes (a closed-world tool that appends a row
		appends it twice). None for a read-only or idempotent tool: its labels decide, as for any
		tool (``outbound``: ``ask``; else ``retry``), or ``retry`` when the server also claims it
		closed-world on a local transport (a repeat goes to the server that ran it once).
		"""
		if self.declared_in_doubt is not None:
			return self.declared_in_doubt
		if self.repeatable and self.claims_local:
			return "retry"
		return None if self.repeatable and self.labels is not None else "ask"

	async def execute(self, input: dict[str, Any], context: ToolContext) -> Any:
		"""Call the tool on its server and map the result (see the module docstring).

		A call that was sent and got no answer (a timeout, a server that died) is in doubt: unless
		repeating the tool is safe (a server the user trusts marks it read-only or idempotent,
		or the config's ``inDoubt`` says ``retry``), the model reads that it may have taken
		effect and to check before calling again, and the error is not retryable.

		Raises:
			ToolError: The server reported an error, failed, or did not answer in time.
		"""
		from openmolt_mcp._source import CallCutOff

		handle = f"{context.integration}.{self.handle}"
		try:
			result = await self.source.call(self.name, input, tool=handle)
		except CallCutOff as exc:
			if self.declared_in_doubt == "retry" or (
				self.declared_in_doubt is None and self.repeatable
			):
				raise
			# No answer is no news: the server may have run it (its effect taken, then a crash).
			raise ToolError(
				f"{exc.message}. The call was sent and no answer came, so it may or may not have "
				"taken effect: check whether it did (with a tool that reads) before calling it "
				"again",
				tool=handle,
			) from None
		return await to_result(result, context, tool=handle)


async def to_result(result: CallToolResult, context: ToolContext, *, tool: str) -> Any:
	"""Map an MCP ``CallToolResult`` to a tool result (media saved to the file store).

	Args:
		result: The server's result.
		context: The calling tool's context (its file store).
		tool: The tool's handle, for errors.

	Raises:
		ToolError: The result has ``isError`` set, or media could not be decoded or saved.
	"""
	if result.is_error:
		texts = [str(getattr(c, "text", "")) for c in result.content if c.type == "text"]
		message = "\n".join(t for t in texts if t) or "the tool reported an error"
		details = result.structured_content
		raise ToolError(message, tool=tool, details=details)
	blocks = [await _block(c, context, tool) for c in result.content]
	if result.structured_content is not None:
		media = [b for b in blocks if b.get("type") != "text"]
		if not media:
			return result.structured_content
		return {"structuredContent": result.structured_content, "content": media}
	if blocks and all(b.get("type") == "text" for b in blocks):
		texts = [b["text"] for b in blocks]
		return texts[0] if len(texts) == 1 else texts
	if len(blocks) == 1:
		return blocks[0]
	return blocks


async def _save(data: str, media_type: str, kind: str, context: ToolContext, tool: str) -> Any:
	if context.files is None:
		raise ToolError(f"{tool} returned {kind} data, but there is no file store to keep it")
	try:
		raw = base64.b64decode(data, validate=True)
	except (binascii.Error, ValueError):
		raise ToolError(f"{tool} returned {kind} data that is not valid base64") from None
	media_type = media_type or "application/octet-stream"
	extension = mimetypes.guess_extension(media_type) or ""
	# The store screens what it keeps (`openmolt_core.files.screen`): masked, or withheld.
	return await context.files.save(raw, media_type=media_type, name=f"{kind}{extension}")


async def _block(content: Any, context: ToolContext, tool: str) -> dict[str, Any]:
	kind = getattr(content, "type", "")
	if kind == "text":
		return {"type": "text", "text": content.text}
	if kind in ("image", "audio"):
		saved = await _save(content.data, content.mime_type, kind, context, tool)
		return {"type": kind, **saved}
	if kind == "resource":
		resource = content.resource
		out: dict[str, Any] = {"type": "resource", "uri": str(resource.uri)}
		if resource.mime_type:
			out["mimeType"] = resource.mime_type
		text = getattr(resource, "text", None)
		if text is not None:
			out["text"] = text
		else:
			saved = await _save(resource.blob, resource.mime_type or "", "resource", context, tool)
			out.update({k: v for k, v in saved.items() if k != "name"})
		return out
	if kind == "resource_link":
		link = {
			"type": "resource_link",
			"uri": str(content.uri),
			"name": content.name,
			"mimeType": content.mime_type,
			"description": content.description,
		}
		return {k: v for k, v in link.items() if v is not None}
	return {"type": kind or "unknown"}
