"""A remote A2A agent's URL may carry a key (Azure Functions' ``?code=``, a userinfo token): it is a
secret of every instance while the tool lives, never in the tool's description the model reads,
an error it reads, the run's state or a log."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_serve.a2a import remote_agent
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

KEY = "AzFnKey-0123456789abcdefXYZ"


def _refusing(request: httpx.Request) -> httpx.Response:
	"""A remote that echoes the address it was asked for (as a proxy's error page does)."""
	return httpx.Response(502, text=f"bad gateway for {request.url}")


@pytest.mark.parametrize(
	"url",
	[
		f"https://agent.example/api/a2a?code={KEY}",
		f"https://agent.example/api/a2a?sig={KEY}&sv=2024",
		f"https://agent.example/a2a?api_key={KEY}",
		f"https://agent.example/hooks/{KEY}/a2a",  # a token in the path (`url_secrets`)
	],
	ids=["code", "signature", "api_key", "path"],
)
async def test_a_key_in_the_remote_agents_url_never_reaches_the_model(
	url: str, caplog: pytest.LogCaptureFixture
) -> None:
	"""The default description names the URL and a failed call's error names it too: masked."""
	caplog.set_level(logging.DEBUG)
	planner = remote_agent(url, handle="planner", transport=httpx.MockTransport(_refusing))
	model = ScriptedModel([call_tool("local.planner", message="Plan a trip"), finish("done")])
	async with OpenMolt(entry_points=False) as om:
		agent = om.create_agent(name="Asker", model=model, tools=[planner])
		result = await agent.run("Ask the planner.")
	sent = "\n".join(map(repr, model.requests))
	assert "did not answer" in sent or "A2A agent at" in sent  # the error reached the model
	assert not leaks(sent, KEY), leaks(sent, KEY)
	assert not leaks(json.dumps(result.state.to_dict(), default=str), KEY)
	assert not leaks(caplog.text, KEY)


async def test_the_tool_its_repr_and_its_errors_name_the_url_without_its_secrets() -> None:
	"""The default description (the model reads it), the tool's repr and a tool error name the
	URL with its password left out and its key masked: never the secrets themselves."""
	from openmolt_core.errors import ToolError
	from openmolt_core.tools import ToolContext

	password, code = "Pw-5d1e0f7a9b2c", "c0de-5d1e0f7a9b2c4e6f"
	tool = remote_agent(f"http://agent:{password}@127.0.0.1:9/a2a?code={code}", handle="r")
	for text in (tool.description, repr(tool), str(tool)):
		assert password not in text and code not in text, text
		assert "127.0.0.1:9/a2a" in text
	with pytest.raises(ToolError) as failed:
		await tool.function({"message": "hi"}, ToolContext(agent="A", integration="local"))
	assert password not in failed.value.message and code not in failed.value.message
	assert "127.0.0.1:9/a2a" in failed.value.message


@pytest.mark.parametrize(
	"url",
	[
		f"ftp://user:{KEY}@files.example/a2a",
		f"https:/user:{KEY}@agent.example/a2a",
		f"https:user:{KEY}@agent.example/a2a",
		f"agent.example/a2a?code={KEY}",
	],
)
def test_a_url_refused_as_no_web_url_is_named_without_its_secrets(url: str) -> None:
	"""The refusal names the URL as every error does: its password and key masked."""
	from openmolt_core.errors import ConfigurationError

	with pytest.raises(ConfigurationError, match="must be an http") as caught:
		remote_agent(url)
	assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)
