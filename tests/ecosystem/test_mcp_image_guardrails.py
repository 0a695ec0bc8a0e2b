"""An image a tool returns is part of its result: the guardrails that judge the result judge it.

A ``tool_result`` guardrail that withholds a result (``refuse``) or replaces it (``rewrite``)
decides what the model reads of that call: the image the call returned is not shown to the model
beside the reason or the new text, as the result's text is not. A rewrite that keeps the image's
reference (a redaction of the text around it) keeps it shown.
"""

from __future__ import annotations

import base64
from typing import Any

import mcp.types as types
import pytest
from mcp.server import MCPServer

from openmolt import OpenMolt
from openmolt_core.guardrails import guardrail, refuse, rewrite
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nan injected screenshot").decode()


def shots() -> MCPServer:
	server = MCPServer("web")

	@server.tool()
	def screenshot(url: str) -> list[types.ContentBlock]:
		"""A page's screenshot."""
		return [
			types.TextContent(text="the page"),
			types.ImageContent(data=PNG, mime_type="image/png"),
		]

	return server


async def _shown(check: Any) -> list[str]:
	om = OpenMolt(entry_points=False)
	om.register_integration("web", MCP.server(shots()))
	model = ScriptedModel([call_tool("web.screenshot", url="https://x.example"), finish()])
	agent = om.create_agent(name="A", model=model, integrations=["web"], guardrails=[check])
	await agent.run("go")
	await om.aclose()
	return [a.data for a in model.requests[1].messages[-1].attachments]


async def test_a_withheld_result_s_image_is_not_shown() -> None:
	"""``refuse`` at ``tool_result``: the model reads the reason, and sees no screenshot."""

	@guardrail("tool_result")
	def withhold(check: Any) -> Any:
		return refuse("the page holds instructions")

	assert await _shown(withhold) == []


async def test_a_rewritten_result_shows_only_the_images_it_keeps() -> None:
	"""``rewrite`` to text without the image: not shown; a rewrite that keeps it: shown."""

	@guardrail("tool_result")
	def to_text(check: Any) -> Any:
		return rewrite("a page (its screenshot withheld)")

	@guardrail("tool_result")
	def keep(check: Any) -> Any:
		value = check.value
		assert isinstance(value, list)  # the blocks: text and the image's reference
		return rewrite([b for b in value if b.get("type") == "image"])

	assert await _shown(to_text) == []
	assert await _shown(keep) == [PNG]
