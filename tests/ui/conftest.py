"""The viewer on 127.0.0.1 in a background event loop, and headless Chromium driven by Playwright.

The viewer and the runs it shows live in one asyncio loop on a thread (an anyio blocking portal);
the test drives Debian's Chromium (``/usr/bin/chromium``, never a downloaded browser) with
Playwright's sync API from the test thread. Browser tests run serially (one xdist group) and every
wait has a timeout. CI installs Chromium (``.ci/run``); elsewhere the browser tests are skipped
when it is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from openmolt import OpenMolt
from openmolt_ui import Viewer

CHROMIUM = os.environ.get("OPENMOLT_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
]
"""Chromium flags that work on this machine (Playwright adds --headless and a new empty profile)."""

TIMEOUT_MS = 15_000


def chromium_available() -> bool:
	return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


def need_chromium() -> None:
	if not chromium_available():
		if os.environ.get("CI"):
			pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
		pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium chromium-driver)")


@dataclass
class Served:
	"""A viewer serving in the portal's loop, with its instance."""

	portal: BlockingPortal
	viewer: Viewer
	om: OpenMolt
	store_path: Path
	started: list[Any] = field(default_factory=list)

	def call(self, fn: Callable[..., Any], *args: Any) -> Any:
		"""Run an async function in the viewer's loop and wait for it (with a timeout)."""

		async def bounded() -> Any:
			with anyio.fail_after(TIMEOUT_MS / 1000):
				return await fn(*args)

		return self.portal.call(bounded)

	def start(self, fn: Callable[..., Any], *args: Any) -> Any:
		"""Start an async function in the viewer's loop; returns a concurrent future."""
		future = self.portal.start_task_soon(fn, *args)
		self.started.append(future)
		return future

	def event(self) -> anyio.Event:
		"""An anyio event made in the viewer's loop (for gates a tool waits on)."""

		async def make() -> anyio.Event:
			return anyio.Event()

		event: anyio.Event = self.portal.call(make)
		return event

	def set(self, event: anyio.Event) -> None:
		self.portal.call(_set, event)


async def _set(event: anyio.Event) -> None:
	event.set()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
	"""A viewer of a fresh instance with a run store, serving on 127.0.0.1."""
	with ExitStack() as stack:
		portal = stack.enter_context(start_blocking_portal("asyncio"))
		store = tmp_path / "runs.db"
		om = OpenMolt(entry_points=False, run_store=store)
		viewer = Viewer(om, poll=0.2)
		stack.enter_context(portal.wrap_async_context_manager(viewer))
		served = Served(portal, viewer, om, store)
		stack.callback(portal.call, om.aclose)
		stack.callback(lambda: [f.cancel() for f in served.started])  # a failed test's run
		yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
	"""Debian's headless Chromium, through Playwright (one per test module).

	Playwright's sync API keeps an event loop running in this thread while it is started, so it
	stops at the end of the browser tests' module: the anyio tests after it need the thread free.
	"""
	need_chromium()
	from playwright.sync_api import sync_playwright

	with sync_playwright() as p:
		browser = p.chromium.launch(
			executable_path=CHROMIUM, headless=True, args=FLAGS, timeout=TIMEOUT_MS * 2
		)
		try:
			yield browser
		finally:
			browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
	"""A new page in a fresh browser context (no cookies from other tests)."""
	context = browser.new_context(viewport={"width": 1280, "height": 900})
	page = context.new_page()
	page.set_default_timeout(TIMEOUT_MS)
	try:
		yield page
	finally:
		context.close()


ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts" / "ui"
"""Where the browser tests save a screenshot of each page they check (git-ignored); the ones the
docs show are copied to docs/guides/ by ``uv run python tests/ui/copy_screenshots.py``."""


def shoot(page: Any, name: str) -> Path:
	"""Save a full-page screenshot of ``page`` as ``.artifacts/ui/<name>.png``."""
	ARTIFACTS.mkdir(parents=True, exist_ok=True)
	path = ARTIFACTS / f"{name}.png"
	page.screenshot(path=str(path), full_page=True)
	return path


def no_horizontal_scroll(page: Any) -> None:
	"""The page is no wider than its viewport (usable on a phone without scrolling sideways)."""
	widths = page.evaluate(
		"[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
	)
	assert widths[0] <= widths[1], f"the page scrolls sideways: {widths[0]} px in {widths[1]} px"


def seed_runs(
	store: Path, rows: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]] = ()
) -> None:
	"""Write runs (and events) straight into a run store's file, as another process would have.

	Each row needs ``run_id``, ``agent``, ``status`` and ``started``; the rest has defaults. Each
	event needs ``run_id``, ``name``, ``time`` and ``data``; ``seq`` is its place by default.
	"""
	import json
	import sqlite3
	import threading

	import anyio

	from openmolt_core.runstore import RunStore

	# the store makes its file and tables (in a thread: Playwright's loop runs in this one)
	maker = threading.Thread(target=anyio.run, args=(RunStore(store).runs,))
	maker.start()
	maker.join()
	conn = sqlite3.connect(store)
	with conn:
		conn.executemany(
			"INSERT INTO agent_runs (run_id, agent, model, status, started, updated, ended, input,"
			" steps, usage, output, error, pending, pid, trigger) VALUES"
			" (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[
				(
					r["run_id"],
					r["agent"],
					r.get("model", "scripted"),
					r["status"],
					r["started"],
					r.get("updated", r["started"]),
					r.get("ended", r["started"]),
					json.dumps(r.get("input", "")),
					r.get("steps", 1),
					json.dumps(r.get("usage", {"input_tokens": 10, "output_tokens": 5})),
					json.dumps(r.get("output")),
					r.get("error"),
					json.dumps(r["pending"]) if r.get("pending") else None,
					r.get("pid", 1),
					json.dumps(r.get("trigger", {"kind": "cli"})),
				)
				for r in rows
			],
		)
		conn.executemany(
			"INSERT INTO run_events (run_id, seq, name, step, time, data) VALUES (?, ?, ?, ?, ?, ?)",
			[
				(
					e["run_id"],
					e.get("seq", i + 1),
					e["name"],
					e.get("step", 1),
					e["time"],
					json.dumps(e["data"]),
				)
				for i, e in enumerate(events)
			],
		)
	conn.close()


class OneModel:
	"""A provider object of one model (``<name>:m``): it blocks the conversation or answers.

	A blocked reply is billed (900 in, 12 out, $0.009); the fallback moves the step on to the
	agent's next model, whose answer (100 in, 10 out, $0.0001) finishes the run.
	"""

	def __init__(self, name: str, *, blocks: bool = False) -> None:
		self.name, self.model, self.blocks = name, "m", blocks

	async def generate(self, request: Any) -> Any:
		import json

		from openmolt_core.llm import ModelResponse, Usage
		from openmolt_core.testing import finish

		if self.blocks:
			usage = Usage(900, 12, cost_usd=0.009, calls=1)
			return ModelResponse(text="", usage=usage, finish_reason="blocked")
		text = json.dumps({"commands": [finish("done")]})
		usage = Usage(100, 10, cost_usd=0.0001, calls=1)
		return ModelResponse(text=text, usage=usage, finish_reason="stop")


def fallback_models(first: str = "a") -> list[OneModel]:
	"""Two models: ``<first>:m`` blocks the conversation, ``b:m`` answers (after a fallback)."""
	return [OneModel(first, blocks=True), OneModel("b")]
