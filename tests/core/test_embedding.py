"""OpenMolt embedded in an anyio app: exceptions, cancellation and per-instance verbosity."""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

pytestmark = pytest.mark.anyio


async def test_an_exception_from_the_block_comes_out_as_itself() -> None:
	"""`except ValueError` around `async with om:` catches the block's ValueError."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ValueError, match="from the body") as info:
		async with om:
			raise ValueError("from the body")
	assert not isinstance(info.value, BaseExceptionGroup)


async def test_an_exception_after_a_served_run_comes_out_as_itself() -> None:
	"""The same with a schedule served in the block: still no ExceptionGroup."""
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(name="A", model=ScriptedModel([finish(ok=True)]))
	agent.schedule({"type": "interval", "value": 3600})
	try:
		async with om:
			raise KeyError("k")
	except KeyError as exc:
		assert exc.args == ("k",)


@pytest.fixture
def local_url():
	"""A tiny HTTP server on 127.0.0.1 that keeps connections alive."""

	class Handler(BaseHTTPRequestHandler):
		protocol_version = "HTTP/1.1"

		def do_GET(self) -> None:
			self.send_response(200)
			self.send_header("Content-Length", "2")
			self.end_headers()
			self.wfile.write(b"ok")

		def log_message(self, *args) -> None:
			pass

	httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
	thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
	thread.start()
	yield f"http://127.0.0.1:{httpd.server_address[1]}/"
	httpd.shutdown()
	httpd.server_close()


async def test_a_cancelled_block_leaves_the_instance_usable(local_url) -> None:
	"""Cancelling `async with om:` with a connection open closes the client; the next use works."""
	om = OpenMolt(entry_points=False)
	with anyio.CancelScope() as scope:
		async with om:
			first = om.http()
			assert (await first.get(local_url)).text == "ok"  # a pooled connection to close
			scope.cancel()
			await anyio.sleep(5)
	assert first.is_closed
	second = om.http()
	assert second is not first and not second.is_closed
	assert (await second.get(local_url)).text == "ok"
	async with om:
		assert (await om.http().get(local_url)).text == "ok"
	await om.aclose()


VERBOSE = """
import io, json, logging, sys
import anyio
from openmolt import OpenMolt
from openmolt_core.testing import ScriptedModel, finish

seen = []
class Root(logging.Handler):
	def emit(self, record):
		seen.append(record.getMessage())
logging.getLogger().addHandler(Root())   # the application's own handler, root left at WARNING

def run(om, name, **options):
	agent = om.create_agent(name=name, model=ScriptedModel([finish(ok=True)]), **options)
	err, sys.stderr = sys.stderr, io.StringIO()
	try:
		anyio.run(agent.run, "x")
		return sys.stderr.getvalue()
	finally:
		sys.stderr = err

loud = OpenMolt(entry_points=False, verbose=True)
quiet = OpenMolt(entry_points=False)
out = {
	"loud": run(loud, "Loud"),
	"quiet": run(quiet, "Quiet"),
	"quiet_after": run(OpenMolt(entry_points=False), "Later"),
	"agent_loud": run(quiet, "Chatty", config={"verbose": True}),
	"sibling": run(quiet, "Sibling"),
	"muted": run(loud, "Muted", config={"verbose": False}),
	"root": seen,
}
print(json.dumps(out))
"""


def test_verbose_belongs_to_its_instance_and_agent() -> None:
	"""One verbose instance logs its own steps; later and other instances stay quiet."""
	done = subprocess.run(
		[sys.executable, "-c", VERBOSE], capture_output=True, text=True, check=True, timeout=60
	)
	out = json.loads(done.stdout)
	assert "openmolt: Loud step 1: model replied" in out["loud"]
	assert out["quiet"] == out["quiet_after"] == out["sibling"] == out["muted"] == ""
	assert "openmolt: Chatty step 1: model replied" in out["agent_loud"]
	# The app's handlers get the verbose runs' records, never a quiet run's.
	assert {m.split()[0] for m in out["root"]} == {"Loud", "Chatty"}
