"""An agent served over MCP (`openmolt_mcp.server`): no answer carries a secret of the instance."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest
from mcp import Client

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import tool
from openmolt_mcp.server import agent_server

pytestmark = pytest.mark.anyio

SECRET = "sk-live-served-secret-7a6b5c"
SPELLINGS = [SECRET, base64.b64encode(SECRET.encode()).decode()]
SAID = " / ".join(SPELLINGS)


def leaky(model: ScriptedModel, **agent: Any) -> tuple[OpenMolt, Any]:
	"""An agent whose tool echoes the secret (its model repeats it, in every spelling)."""
	om = OpenMolt(entry_points=False)
	om.secrets.add(SECRET)

	@tool(labels=[])
	def leak() -> str:
		"""Echo the key."""
		return f"the key is {SECRET}"

	return om, om.create_agent(name="Helper", model=model, tools=[leak], **agent)


def assert_clean(text: str) -> None:
	for spelling in SPELLINGS:
		assert spelling not in text
	assert "[redacted]" in text


async def test_the_answer_text_and_structured_content_are_redacted() -> None:
	"""A model that repeats a tool-echoed secret: the client reads it masked, in both forms."""
	model = ScriptedModel([call_tool("local.leak"), finish({"result": f"key {SAID}"})])
	schema = {"type": "object", "properties": {"result": {"type": "string"}}}
	om, agent = leaky(model, output_schema=schema)
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			result = await client.call_tool("Helper", {"input": "go"})
	await om.aclose()
	assert result.is_error is False
	assert_clean(result.content[0].text)
	assert_clean(json.dumps(result.structured_content))


async def test_a_failed_runs_message_is_redacted() -> None:
	"""The agent's own words on a failure (and a text output) reach the client masked."""
	model = ScriptedModel(
		[call_tool("local.leak"), finish("x", status="failure", human_message=f"no: {SAID}")]
	)
	om, agent = leaky(model)
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			failed = await client.call_tool("Helper", {"input": "go"})
	await om.aclose()
	assert failed.is_error is True
	assert_clean(failed.content[0].text)


async def test_the_tool_description_masks_a_secret_in_the_instructions() -> None:
	"""The instructions become the tool's description: a secret in them is not published."""
	om, agent = leaky(ScriptedModel([]), instructions=f"Use the key {SECRET} for the lookups.")
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			(listed,) = (await client.list_tools()).tools
	await om.aclose()
	assert_clean(listed.description or "")


async def test_a_failed_runs_message_masks_a_url_s_login_and_keeps_its_link() -> None:
	"""A password in a connection string no source knows (the model read it in a document)
	reaches the client masked, as AG-UI's, A2A's and a chat's text does; a presigned link
	in the same words still works (`mask_url_logins`)."""
	password = "Pw-7f3a9e21c4d8"
	link = "https://b.s3.example/k.pdf?X-Amz-Signature=5d1e0f7a9b2c4e6f8a0b"
	words = f"could not connect to postgresql://app:{password}@db.example/runs; see {link}"
	model = ScriptedModel([finish("x", status="failure", human_message=words)])
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="Helper", model=model)
	with anyio.fail_after(30):
		async with Client(agent_server(agent), cache=None) as client:
			failed = await client.call_tool("Helper", {"input": "go"})
	await om.aclose()
	assert failed.is_error is True
	text = failed.content[0].text
	assert password not in text and link in text, text
