"""A secret another program cut short, or cut the middle out of, is masked like the whole one.

A server that echoes the request's ``Authorization`` header up to a width shows the first part
of a Basic token; pydantic shows a long value as its start and end around ``...``. With every
logger at DEBUG, neither reaches a log record, an event, the run's result or the model; and
ordinary text (an ellipsis, a short piece of a secret) is left as it was.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pydantic
import pytest
from anyio.abc import SocketAttribute, SocketStream

from openmolt import OpenMolt
from openmolt_core._support.masking import MASK, mask
from openmolt_core.events import EVENT_NAMES
from openmolt_core.integrations import (
	ApiSetup,
	BasicCredential,
	FunctionTool,
	HttpTool,
	Integration,
)
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_core.tools import ToolContext
from tests._leaks import leaks

pytestmark = pytest.mark.anyio

PASSWORD = "CANARYcutPassword-0123456789"
KEY = "sk-CANARYelided-AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789"


class Kept(logging.Handler):
	def __init__(self) -> None:
		super().__init__(logging.DEBUG)
		self.texts: list[str] = []

	def emit(self, record: logging.LogRecord) -> None:
		self.texts.append(logging.Formatter("%(name)s %(message)s").format(record))
		self.texts.append(repr({k: v for k, v in record.__dict__.items() if k != "exc_info"}))


@pytest.fixture
def debug() -> Iterator[Kept]:
	"""Every logger at DEBUG (``basicConfig(level=DEBUG)``), every record kept at the root."""
	kept = Kept()
	root = logging.getLogger()
	level = root.level
	root.setLevel(logging.DEBUG)
	root.addHandler(kept)
	try:
		yield kept
	finally:
		root.removeHandler(kept)
		root.setLevel(level)


async def _echo_cut(stream: SocketStream) -> None:
	"""Answer 401 with the request's Authorization header echoed, cut at 60 characters."""
	async with stream:
		raw = b""
		while b"\r\n\r\n" not in raw:
			raw += await stream.receive()
		head = raw.split(b"\r\n\r\n")[0].decode("latin-1")
		auth = next(line for line in head.split("\r\n") if line.lower().startswith("authorization"))
		body = json.dumps({"error": f"bad credentials: {auth[:60]}"}).encode()
		lines = [
			"HTTP/1.1 401 Unauthorized",
			"Content-Type: application/json",
			f"Content-Length: {len(body)}",
			f"WWW-Authenticate: Basic realm=x, got={auth[:58]}",
			"Connection: close",
		]
		await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body)


@asynccontextmanager
async def echo_cut_server() -> AsyncIterator[int]:
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
	async with listener, anyio.create_task_group() as group:
		group.start_soon(listener.serve, _echo_cut)
		try:
			yield listener.extra(SocketAttribute.local_port)
		finally:
			group.cancel_scope.cancel()


class _Config(pydantic.BaseModel):
	retries: int


async def _configure(i: dict[str, Any], context: ToolContext) -> Any:
	"""A library that validates the value it was given and says what it got, as pydantic does."""
	try:
		_Config.model_validate({"retries": context.config["apiKey"]})
	except pydantic.ValidationError as exc:
		raise RuntimeError(f"the client could not start: {exc}") from None
	return "started"


async def test_a_cut_basic_token_and_an_elided_key_never_show(debug: Kept) -> None:
	"""Echoed cut short by a server, shown as start...end by pydantic: masked everywhere."""
	token = base64.b64encode(f"AC123:{PASSWORD}".encode()).decode()
	seen: list[str] = []
	async with echo_cut_server() as port:
		spec = Integration(
			name="Echo",
			api_setup=ApiSetup(base_url=f"http://127.0.0.1:{port}", timeout=5),
			credential_setup=[
				BasicCredential(
					type="basic", username="{{ config.sid }}", password="{{ config.pw }}"
				)
			],
			tools=[
				HttpTool(handle="denied", description="d", endpoint="/denied"),
				FunctionTool(handle="configure", description="d", function=_configure),
			],
		)
		om = OpenMolt(entry_points=False, http_client=httpx.AsyncClient())
		om.register_integration("echo", spec)
		model = ScriptedModel(
			[call_tool("echo.denied"), call_tool("echo.configure"), finish(result="done")]
		)
		config = {"sid": "AC123", "pw": PASSWORD, "apiKey": KEY}
		agent = om.create_agent(
			name="Cut",
			model=model,
			integrations=[{"integration": "echo", "credential": {"config": config}}],
		)
		for event in EVENT_NAMES:
			if event != "schedule":
				agent.on(event, lambda e: seen.append(repr(e)))
		result = await agent.run("go")
		await om.aclose()
	seen += [repr(result), repr(result.state)]
	seen += [repr(m) for request in model.requests for m in request.messages]
	told = "\n".join(repr(m) for m in model.requests[1].messages)
	assert "401" in told and "the client could not start" in "\n".join(seen)
	shown = "\n".join(seen + debug.texts)
	assert "WWW-Authenticate" in shown and "bad credentials: Authorization: Basic" in shown
	assert leaks(shown, PASSWORD, KEY, token) == []
	assert not _readable(shown, PASSWORD)


def _readable(text: str, secret: str) -> bool:
	"""Whether a base64 run of the text decodes to two thirds of the secret, read at each offset."""
	part = secret[: len(secret) * 2 // 3].encode()
	for run in re.findall(r"[A-Za-z0-9+/]{8,}", text):
		for skip in range(4):
			chunk = run[skip:]
			chunk = chunk[: len(chunk) // 4 * 4]
			if part in base64.b64decode(chunk):
				return True
	return False


@pytest.mark.parametrize(
	("text", "masked"),
	[
		(f"Basic {base64.b64encode(f'AC123:{PASSWORD}'.encode()).decode()[:40]}')", True),
		(f"key={KEY[:40]}", True),  # two thirds and more
		(f"input_value='{KEY[:24]}...{KEY[-24:]}', input_type=str", True),
		(f"value {KEY[:20]}\u2026{KEY[-20:]} end", True),
		(json.dumps({"v": f"{KEY[:20]}\u2026{KEY[-20:]}"}), True),
		(f"key={KEY[:20]} and ...{KEY[-8:]}", False),  # a third, and a piece apart
		("Loading... done... ok", False),
		(f"the key starts with {KEY[:12]}...", False),
	],
)
def test_what_is_masked_of_a_cut_or_elided_secret(text: str, masked: bool) -> None:
	"""A start of two thirds, or a start and an end that together show as much, is masked."""
	secrets = frozenset({PASSWORD, KEY})
	out = mask(text, secrets)
	assert (out != text) is masked, out
	if masked:
		assert leaks(out, PASSWORD, KEY) == [] and MASK in out
