"""Every event the core can store has one way the page reads it, and a label; deep data loads.

The page's `VIEWS` table (``static/app.js``) is the one place that maps event names to how they
are shown; a name missing there is shown as its raw data. These tests need no browser.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sqlite3
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

import openmolt_core.capabilities
from openmolt_core.events import EVENT_NAMES, describe_event
from openmolt_core.hooks import Capability
from openmolt_core.runstore import RunStore
from openmolt_ui import Viewer

from .conftest import seed_runs


def _views() -> set[str]:
	script = resources.files("openmolt_ui").joinpath("static/app.js").read_text("utf-8")
	table = script[
		script.index("const VIEWS = {") : script.index("\n};\n", script.index("const VIEWS = {"))
	]
	return {m.group(1) or m.group(2) for m in re.finditer(r'^  (?:"([^"]+)"|(\w+)):', table, re.M)}


def test_every_event_name_the_core_emits_has_a_view_and_a_label() -> None:
	"""A name added to EVENT_NAMES without a view in app.js (or a docstring) fails here."""
	views = _views()
	assert {"llmOutput", "error", "compaction"} <= views  # the table was read
	assert sorted(EVENT_NAMES - views) == []
	for name in EVENT_NAMES:
		info = describe_event(name)
		assert info is not None and info.about, f"{name} has no line saying what it is"


def test_only_the_streaming_previews_are_read_as_nothing() -> None:
	"""A view that draws nothing drops its event silently: only the never-stored previews may."""
	from openmolt_core.events import STREAM_EVENTS

	script = resources.files("openmolt_ui").joinpath("static/app.js").read_text("utf-8")
	table = script[
		script.index("const VIEWS = {") : script.index("\n};\n", script.index("const VIEWS = {"))
	]
	silent = re.findall(r'^  "?([\w:]+)"?: \{ read: \(\) => \{\} \}', table, re.M)
	assert set(silent) == STREAM_EVENTS


def test_every_built_in_capabilitys_event_has_a_label() -> None:
	"""A capability of the core that registers an event class without a docstring fails here."""
	package = openmolt_core.capabilities
	for module in pkgutil.iter_modules(package.__path__):
		importlib.import_module(f"{package.__name__}.{module.name}")
	stack = list(Capability.__subclasses__())
	while stack:
		cls = stack.pop()
		stack.extend(cls.__subclasses__())
		if not cls.__module__.startswith("openmolt_core."):
			continue
		for name, event in cls.events.items():
			doc = (event.__doc__ or "").strip()
			assert doc and not doc.startswith(f"{event.__name__}("), (
				f"{name} ({cls.name}) has no docstring"
			)


@pytest.mark.anyio
async def test_an_event_nested_thousands_deep_does_not_stop_its_run_loading(
	tmp_path: Path,
) -> None:
	"""A 500-deep event made the run a 500 (masking recursed); one 100,000 deep broke the read."""
	store = tmp_path / "runs.db"
	now = datetime.now(UTC).isoformat()
	seed_runs(
		store,
		[{"run_id": "deep", "agent": "Deep", "status": "success", "started": now}],
		[
			{"run_id": "deep", "name": "acme:deep", "time": now, "data": {}},
			{"run_id": "deep", "name": "acme:deeper", "time": now, "data": {}},
			{
				"run_id": "deep",
				"name": "tool:call",
				"time": now,
				"data": {"tool": "t", "input": {}},
			},
		],
	)
	conn = sqlite3.connect(store)
	with conn:
		for name, depth in (("acme:deep", 500), ("acme:deeper", 100_000)):
			text = '{"nest": ' + '{"a":' * depth + "1" + "}" * depth + "}"
			conn.execute("UPDATE run_events SET data = ? WHERE name = ?", (text, name))
	conn.close()
	stored = await RunStore(store).events("deep")
	assert "nested too deep to read" in stored[1].data["unreadable"]
	async with Viewer(store=store) as viewer, httpx.AsyncClient(timeout=30) as http:
		headers = {"x-openmolt-token": viewer.token}
		base = f"http://127.0.0.1:{viewer.port}/api/runs/deep"
		for url in (base, f"{base}/export"):
			got = await http.get(url, headers=headers)
			assert got.status_code == 200, url
			events = got.json()["events"]
			assert [e["name"] for e in events] == ["acme:deep", "acme:deeper", "tool:call"]
			assert "levels deep: cut" in got.text


@pytest.mark.xdist_group("browser")
def test_a_run_in_doubt_a_nested_runs_spend_and_hostile_text_read_right(
	served: Any, page: Any
) -> None:
	"""In-doubt calls say so (were 'waiting', 'not run', 'running'), a nested run's spend missing
	from the totals is not called counted, and text from tools and events stays text."""
	from playwright.sync_api import expect

	evil = '<img src=x onerror="window.pwned=1"><svg onload="window.pwned=1"></svg>'
	now = datetime.now(UTC).isoformat()
	used = {"input_tokens": 100, "output_tokens": 10}
	call = {"type": "callTool", "tool": f"local.send{evil}", "input": {"to": evil}}

	def event(name: str, data: dict[str, Any], step: int = 1) -> dict[str, Any]:
		return {"run_id": "doubt", "name": name, "time": now, "step": step, "data": data}

	seed_runs(
		served.store_path,
		[
			{
				"run_id": "doubt",
				"agent": f"Doubt{evil}",
				"status": "human_input_required",
				"started": now,
				"usage": used,
				"pending": {"kind": "human_input", "message": f"In doubt {evil}"},
			}
		],
		[
			event("llmOutput", {"output": evil, "usage": used}),
			event("commandsQueued", {"commands": [call, {**call, "tool": "local.settle"}]}),
			event("tool:call", {"tool": "local.settle", "input": {}}),
			event("tool:call", {"tool": call["tool"], "input": call["input"]}),
			event(
				"llmOutput",
				{
					"usage": used,
					"sub_run_id": "doubt.1.1",
					"sub_agent": "Payer",
					"parent_run_id": "doubt",
				},
			),
			event(
				"finish",
				{
					"result": {"status": "success"},
					"sub_run_id": "doubt.1.1",
					"parent_run_id": "doubt",
				},
			),
			event("error", {"kind": "in_doubt", "message": "in doubt: may", "call": "tool:1:0:x"}),
			event("error", {"kind": "in_doubt", "message": "in doubt: may", "call": "tool:1:1:x"}),
			event(
				"authorization:request",
				{"request": {"tool": evil, "url": "javascript:window.pwned=1", "index": 0}},
			),
			event("acme:odd", {"link": "javascript:window.pwned=1", "html": evil}),
			event("finish", {"result": {"status": "human_input_required"}}),
		],
	)
	problems: list[str] = []
	page.on("pageerror", lambda error: problems.append(str(error)))
	page.goto(f"{served.viewer.url}#run=doubt")
	view = page.get_by_test_id("run-view")
	expect(view.get_by_test_id("run-agent")).to_have_text(f"Doubt{evil}")
	calls = view.locator("[data-testid=tool-call]")
	expect(calls).to_have_count(2)
	for n in range(2):
		expect(calls.nth(n)).to_have_attribute("data-status", "in_doubt")
		expect(calls.nth(n).get_by_test_id("note-in_doubt")).to_contain_text("in doubt: may")
	expect(view.locator("[data-testid=bar][data-kind=tool][data-status=running]")).to_have_count(0)
	expect(view.get_by_test_id("sub-usage")).to_have_attribute("data-counted", "no")
	expect(view.get_by_test_id("sub-usage")).to_contain_text("not in this run's totals")
	expect(view.locator("[data-event='acme:odd']")).to_contain_text("javascript:")
	page.wait_for_timeout(300)
	assert page.evaluate("window.pwned") is None
	assert page.locator("#run img, #run svg, #run script, #run iframe").count() == 0
	hrefs = page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
	assert not any(h and h.lower().startswith("javascript:") for h in hrefs)
	assert problems == []
