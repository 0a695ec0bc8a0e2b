"""The shared client's pools are closed when their event loop ends, even if `om` never is."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# A script as a user writes it: a local OpenAI-compatible server, one run, and no aclose().
SCRIPT = """
import json, socket, sys
import anyio
from openmolt import OpenMolt

with socket.socket() as probe:  # a free port, the same for every event loop of the script
	probe.bind(("127.0.0.1", 0))
	PORT = probe.getsockname()[1]
SETTINGS = {"openai": {"base_url": f"http://127.0.0.1:{PORT}/v1", "api_mode": "chat"}}

REPLY = {"choices": [{"message": {"role": "assistant", "content": json.dumps(
	{"commands": [{"type": "finish", "status": "success", "output": {"ok": True}}]}
)}, "finish_reason": "stop"}]}


async def serve(stream):
	async with stream:
		data = b""
		while b"\\r\\n\\r\\n" not in data:
			data += await stream.receive()
		head, _, body = data.partition(b"\\r\\n\\r\\n")
		length = int(next(
			line.split(b":")[1] for line in head.split(b"\\r\\n") if line.lower().startswith(b"content-length")
		))
		while len(body) < length:
			body += await stream.receive()
		reply = json.dumps(REPLY).encode()
		await stream.send(
			b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\n"
			+ f"content-length: {len(reply)}\\r\\n\\r\\n".encode() + reply
		)
		await anyio.sleep(30)  # keep the connection open: the client must close its end


async def one(om):
	result = await om.create_agent(name="A", model="openai:local-model").run("hi")
	print(result.status, flush=True)


async def main(om, runs=1):
	listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=PORT)
	async with listener, anyio.create_task_group() as tg:
		tg.start_soon(listener.serve, serve)
		async with anyio.create_task_group() as runs_group:
			for _ in range(runs):
				runs_group.start_soon(one, om)
		tg.cancel_scope.cancel()

om = OpenMolt(SETTINGS)
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
	return subprocess.run(
		[sys.executable, "-W", "always", "-c", textwrap.dedent(code)],
		capture_output=True,
		text=True,
		timeout=60,
	)


@pytest.mark.parametrize(
	"run",
	[
		"anyio.run(main, om)",
		"anyio.run(main, om, backend='trio')",
		"import asyncio; asyncio.run(main(om))",
		"anyio.run(main, om); anyio.run(main, om)",  # the same client in two event loops
	],
	ids=["anyio", "trio", "asyncio", "two-loops"],
)
def test_a_script_that_never_closes_openmolt_exits_without_warnings(run: str) -> None:
	"""No "Unclosed connector", session or socket warning when the loop ends before `om`."""
	done = _run(SCRIPT + run)
	assert done.returncode == 0, done.stderr
	assert done.stdout.split() == ["success"] * run.count("run(")
	assert "Unclosed" not in done.stderr and "unclosed" not in done.stderr, done.stderr
	assert "Warning" not in done.stderr, done.stderr


def test_aiohttp_sessions_of_a_loop_closed_by_hand_are_closed_quietly() -> None:
	"""A busy loop closed by hand (no asyncgen shutdown) leaves no unclosed aiohttp session.

	The next loop notices the dead one and closes its aiohttp sessions without I/O. (httpx's own
	pool has no public way to do that: its sockets of a loop closed by hand are left to the
	garbage collector, as with httpx alone.)
	"""
	code = (
		SCRIPT
		+ """
import asyncio, gc
from openmolt_core.integrations._client import fast_path

loop = asyncio.new_event_loop()
loop.run_until_complete(main(om, 8))  # busy: aiohttp's pool
loop.close()  # no shutdown_asyncgens(): the pools are still open
anyio.run(main, om)  # the next loop drops the old pools
gc.collect()
print(fast_path())
"""
	)
	done = _run(code)
	assert done.returncode == 0, done.stderr
	*statuses, fast = done.stdout.split()
	assert statuses == ["success"] * 9
	if fast != "True":
		pytest.skip("httpx-aiohttp is not installed")
	assert "Unclosed connector" not in done.stderr, done.stderr
	assert "Unclosed client session" not in done.stderr, done.stderr


def test_closing_openmolt_inside_the_loop_still_works() -> None:
	"""`async with OpenMolt()` closes the client in the loop; the loop's end closes nothing twice."""
	code = (
		SCRIPT
		+ """
async def closed():
	async with OpenMolt(SETTINGS) as om:
		await main(om)

anyio.run(closed)
"""
	)
	done = _run(code)
	assert done.returncode == 0, done.stderr
	assert done.stdout.split() == ["success"]
	assert "Warning" not in done.stderr and "nclosed" not in done.stderr, done.stderr
