"""What a stdio server writes is read within a bound: one message is one line, of at most N bytes.

The SDK reads a line whole however long it is: a real SDK server (``hostile_stdio_server.py``)
that wrote 400 MB without a newline had grown the client by 145 MB after 43 s, still reading
(its pieces are joined again at each one), and every call of the server timed out meanwhile.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import anyio
import pytest
from _ecosystem import children

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError, IntegrationError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP, MCPToolSource, StdioServer
from tests._results import results_at

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SERVER = [str(HERE / "hostile_stdio_server.py")]
MiB = 1024 * 1024


async def test_a_line_without_end_fails_its_call_and_the_run_goes_on(
	caplog: pytest.LogCaptureFixture,
) -> None:
	"""64 MiB without a newline: the call fails naming the server and the limit, memory stays low.

	The server is stopped and started again: the run's next call of it answers, and the run ends
	as it would have. The operator's log says it too.
	"""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"h", MCP.stdio(sys.executable, SERVER, max_message_bytes=MiB, timeout=30)
	)
	model = ScriptedModel(
		[
			call_tool("h.echo", text="warm"),  # a first run: the modules a run loads, loaded
			finish(result="ok"),
			call_tool("h.flood", size=64 * MiB),
			call_tool("h.echo", text="still here"),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(60):
			await agent.run("warm up")
			tracemalloc.start()
			try:
				result = await agent.run("go")
				_, peak = tracemalloc.get_traced_memory()
			finally:
				tracemalloc.stop()
	finally:
		await om.aclose()
	assert not children("hostile_stdio_server")
	(cut,) = results_at(model, 3)
	assert cut["ok"] is False
	assert "hostile_stdio_server.py" in cut["error"] and f"longer than {MiB} bytes" in cut["error"]
	assert "maxMessageBytes" in cut["error"]
	(echo,) = results_at(model, 4)
	assert echo["ok"] is True and "still here" in json.dumps(echo["result"]), echo
	assert result.status == "success" and result.state.steps == 3
	assert peak < 4 * MiB, peak  # the line is dropped as it comes, not held
	assert f"sent a message longer than {MiB} bytes" in caplog.text


async def test_a_well_formed_answer_past_the_limit_is_refused_unless_the_limit_is_raised() -> None:
	"""A 3 MiB answer fails under a 1 MiB limit and arrives whole under maxMessageBytes 4 MiB.

	(The SDK sends a text answer twice: as text and as structured content.)
	"""
	for limit, ok in ((MiB, False), (4 * MiB, True)):
		om = OpenMolt(entry_points=False)
		om.register_integration(
			"h",
			MCP.from_config(
				"h", {"command": sys.executable, "args": SERVER, "maxMessageBytes": limit}
			),
		)
		model = ScriptedModel([call_tool("h.huge", size=3 * MiB // 2), finish(result="ok")])
		agent = om.create_agent(name="A", model=model, integrations=["h"])
		try:
			with anyio.fail_after(60):
				await agent.run("go")
		finally:
			await om.aclose()
		(entry,) = results_at(model, 1)
		assert entry["ok"] is ok, str(entry)[:300]
		if ok:
			assert entry["result"]["chars"] > 3 * MiB // 2  # whole, and stored (it is large)
		else:
			assert f"longer than {limit} bytes" in entry["error"]


async def test_a_listing_past_the_limit_fails_the_run_start_naming_the_limit() -> None:
	"""The tools' listing is a message too: over the limit, the run does not start, and says why."""
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.stdio(sys.executable, SERVER, max_message_bytes=1024))
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["h"])
	try:
		with anyio.fail_after(60), pytest.raises(IntegrationError) as caught:
			await agent.run("go")
	finally:
		await om.aclose()
	assert "longer than 1024 bytes" in str(caught.value)
	assert "maxMessageBytes" in str(caught.value)


def test_the_limit_is_checked_where_it_is_given() -> None:
	"""maxMessageBytes below 1 KiB, or not a number, names the field."""
	for wrong, why in ((10, "greater than or equal to 1024"), ("lots", "valid integer")):
		with pytest.raises(ConfigurationError, match=f"mcpServers.h.maxMessageBytes: .*{why}"):
			MCP.from_config("h", {"command": "server", "maxMessageBytes": wrong})
	source = MCP.from_config("h", {"command": "server"}).source
	assert isinstance(source, MCPToolSource)
	assert isinstance(source.options, StdioServer) and source.options.max_message_bytes == 16 * MiB
