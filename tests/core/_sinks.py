"""Every sink a secret may reach in one run: log records (httpx's INFO line too), a tool's error,
the events, the run store and what the model reads.

A tool of the integration ``leaky`` sends a request to the URL it is given (httpx logs it),
logs the text it is given, and returns it; another raises with it. `sink_texts` runs an agent
that calls both, and returns every text each sink holds.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.events import EVENT_NAMES
from openmolt_core.integrations import ApiSetup, FunctionTool, Integration
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext

__all__ = ["LOGGERS", "instance", "sink_texts"]

LOGGERS = ("openmolt", "httpx", "httpcore", "mcp", "app")


def _leaky(url: str, text: str) -> Integration:
	async def leak(i: dict[str, Any], context: ToolContext) -> Any:
		"""Call the URL (httpx logs it), log the text, return both."""
		await context.http().get(url)
		logging.getLogger("app.tool").warning("the tool saw %s", text)
		return {"url": url, "text": text}

	async def fail(i: dict[str, Any], context: ToolContext) -> Any:
		"""Fail with the URL and the text in the message, and in a note."""
		error = ToolError(f"could not post to {url}: {text}")
		error.add_note(f"url was {url}")
		raise error

	return Integration(
		name="Leaky",
		api_setup=ApiSetup(base_url="https://api.example"),
		tools=[
			FunctionTool(handle="leak", description="d", function=leak),
			FunctionTool(handle="fail", description="d", function=fail),
		],
	)


def instance(tmp_path: Path, settings: dict[str, Any] | None = None, **options: Any) -> OpenMolt:
	"""An instance whose HTTP client answers every request with 200, with a run store."""

	def answer(request: httpx.Request) -> httpx.Response:
		return httpx.Response(200, json={"ok": True})

	return OpenMolt(
		settings or {},
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
		run_store=tmp_path / "runs.db",
		**options,
	)


async def sink_texts(
	om: OpenMolt,
	url: str,
	text: str,
	caplog: pytest.LogCaptureFixture,
	tmp_path: Path,
	**agent_options: Any,
) -> list[str]:
	"""Run an agent whose tools call ``url`` and show ``text``; every text of every sink."""
	for name in LOGGERS:
		caplog.set_level(logging.DEBUG, logger=name)
	caplog.set_level(logging.INFO)
	om.register_integration("leaky", _leaky(url, text))
	model = ScriptedModel([call_tool("leaky.leak"), call_tool("leaky.fail"), finish("done")])
	agent = om.create_agent(name="Sink", model=model, integrations=["leaky"], **agent_options)
	seen: list[str] = []
	for event in EVENT_NAMES:
		if event != "schedule":
			agent.on(event, lambda e: seen.append(repr(e)))
	result = await agent.run("go")
	seen += [repr(result), json.dumps(result.state.to_dict())]
	seen += [m.content for request in model.requests for m in request.messages]
	with sqlite3.connect(tmp_path / "runs.db") as db:
		tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
		for table in tables:
			seen += [repr(row) for row in db.execute(f"SELECT * FROM {table}")]
	await om.aclose()
	for record in caplog.records:
		seen.append(record.getMessage())
		if record.exc_info:
			seen.append(logging.Formatter().formatException(record.exc_info))
	seen.append(caplog.text)
	assert any("HTTP Request: GET" in t for t in seen), "httpx logged no request"
	assert any("could not post to" in t for t in seen), "the tool's error was not seen"
	return seen
