"""An image a tool returns is part of its result: taint and the guardrails treat it as one.

Taint goes by where a result comes from, not by what it is: an untrusted tool that returns only
an image (a screenshot of a page someone else wrote: text in it can instruct the model) taints
the run like a page's text would, and its result entry says ``untrusted``. A ``tool_result``
guardrail chosen by the tool's labels sees the result as the model reads it: the blocks, the
image as its file reference (no guardrail reads text inside an image: docs/guides/guardrails.md).
A guardrail that withholds a result (``refuse``) or replaces it (``rewrite``) decides what the
model reads of that call: the image is not shown beside the reason or the new text, as the
result's text is not. A rewrite that keeps the image's reference keeps it shown.
"""

from __future__ import annotations

import base64
import json
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


async def test_an_untrusted_tool_s_image_taints_the_run_and_its_guardrails_see_it() -> None:
	"""A screenshot alone from a server nobody vouched for: the run is tainted from it."""
	seen: list[Any] = []

	@guardrail("tool_result", labels=["untrusted"])
	def look(check: Any) -> None:
		seen.append(check.value)

	server = MCPServer("web")

	@server.tool()
	def screenshot(url: str) -> list[types.ContentBlock]:
		"""A page's screenshot, nothing else."""
		return [types.ImageContent(data=PNG, mime_type="image/png")]

	om = OpenMolt(entry_points=False)
	om.register_integration("web", MCP.server(server, trust_descriptions=True))
	model = ScriptedModel([call_tool("web.screenshot", url="https://x.example"), finish()])
	agent = om.create_agent(name="A", model=model, integrations=["web"], guardrails=[look])
	result = await agent.run("go")
	await om.aclose()
	assert [t["tool"] for t in result.state.taint] == ["web.screenshot"]
	turn = model.requests[1].messages[-1]
	(entry,) = json.loads(turn.content)["results"]
	assert entry["untrusted"] is True
	assert [a.data for a in turn.attachments] == [PNG]
	(value,) = seen
	assert value["type"] == "image" and value["file"].startswith("openmolt-file:")
