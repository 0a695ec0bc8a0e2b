"""MCP servers over stdio: published reference servers (PyPI, npm) and an SDK server of ours.

- ``mcp-server-time`` (PyPI, the reference servers' Python SDK, 2026-07-28 protocol);
- ``@modelcontextprotocol/server-everything`` (npm, the TypeScript SDK, initialize handshake);
- ``tests/ecosystem/stdio_server.py`` (the Python SDK), for pids, secrets and cancellation.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _ecosystem import children, node_bin, zombies

from openmolt import OpenMolt
from openmolt_core.errors import IntegrationError
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_mcp import MCP
from tests._results import results_at

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SECRET = "sk-demo-0123456789abcdef"


def _tools(model: ScriptedModel) -> list[str]:
	return [t["tool"] for t in json.loads(model.requests[0].messages[0].content)["tools"]]


async def test_the_published_time_server_from_pypi_answers_through_an_agent() -> None:
	"""mcp-server-time, started with `python -m`, lists its tools and converts a time."""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"time", MCP.stdio(sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"])
	)
	model = ScriptedModel(
		[
			call_tool("time.get_current_time", timezone="Europe/Paris"),
			call_tool(
				"time.convert_time",
				source_timezone="UTC",
				time="12:00",
				target_timezone="Asia/Tokyo",
			),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="Clock", model=model, integrations=["time"])
	try:
		await agent.run("what time is it in Paris?")
		assert {"time.get_current_time", "time.convert_time"} <= set(_tools(model))
		(now,) = results_at(model, 1)
		assert now["ok"] is True, now
		assert now["result"]["timezone"] == "Europe/Paris"
		(converted,) = results_at(model, 2)
		assert converted["ok"] is True, converted
		assert converted["result"]["target"]["datetime"].endswith("T21:00:00+09:00")
		assert children("mcp_server_time")
	finally:
		await om.aclose()
	assert not children("mcp_server_time")
	assert not zombies()


async def test_server_everything_from_npm_media_structured_and_text() -> None:
	"""The TypeScript reference server: text, structured content and an image saved as a file."""
	everything = node_bin("mcp-server-everything")
	om = OpenMolt(entry_points=False)
	om.register_integration("ev", MCP.stdio(everything))
	model = ScriptedModel(
		[
			call_tool("ev.echo", message="hello"),
			call_tool("ev.get-sum", a=2, b=40),
			call_tool("ev.get-tiny-image"),
			call_tool("ev.get-resource-reference", resourceType="Text", resourceId=1),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="Everything", model=model, integrations=["ev"])
	try:
		await agent.run("try everything")
		(echo,) = results_at(model, 1)
		assert echo["ok"] is True and "hello" in json.dumps(echo["result"])
		(total,) = results_at(model, 2)
		assert total["ok"] is True and "42" in json.dumps(total["result"])
		(image,) = results_at(model, 3)
		assert image["ok"] is True, image
		files = [b for b in image["result"] if isinstance(b, dict) and b.get("type") == "image"]
		assert files and files[0]["file"].startswith("openmolt-file:")
		stored = await om.files.open(files[0]["file"])
		assert stored.media_type == "image/png" and stored.data.startswith(b"\x89PNG")
		shown = model.requests[3].messages[-1].attachments  # the model sees the image too
		assert [a.media_type for a in shown] == ["image/png"]
		assert base64.b64decode(shown[0].data) == stored.data
		(resource,) = results_at(model, 4)
		assert resource["ok"] is True, resource
		embedded = [
			b for b in resource["result"] if isinstance(b, dict) and b.get("type") == "resource"
		]
		assert embedded and embedded[0]["uri"].startswith("demo://resource/")
	finally:
		await om.aclose()
	assert not children("mcp-server-everything")


async def test_secrets_in_env_are_redacted_from_everything_the_model_reads() -> None:
	"""server-everything's get-env returns its environment: the token reaches the model masked."""
	everything = node_bin("mcp-server-everything")
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"ev", MCP.stdio(everything, env={"DEMO_API_TOKEN": SECRET, "LOG_LEVEL": "info"})
	)
	events: list[Any] = []
	model = ScriptedModel([call_tool("ev.get-env"), finish(result="ok")])
	agent = om.create_agent(name="Env", model=model, integrations=["ev"])
	agent.on("tool:response", events.append)
	try:
		await agent.run("show env")
	finally:
		await om.aclose()
	sent = model.requests[1].messages[-1].content
	assert "DEMO_API_TOKEN" in sent  # the server did echo its environment
	assert SECRET not in sent and "[redacted]" in sent
	assert SECRET not in json.dumps(events[0].response)
	assert SECRET not in repr(om.plugins.integration("ev"))


async def test_a_slow_call_on_a_real_server_times_out_and_the_run_goes_on() -> None:
	"""trigger-long-running-operation (10 s) against a 1 s timeout: an error entry, no hang."""
	everything = node_bin("mcp-server-everything")
	om = OpenMolt(entry_points=False)
	om.register_integration("ev", MCP.stdio(everything, timeout=1))
	model = ScriptedModel(
		[call_tool("ev.trigger-long-running-operation", duration=10, steps=5), finish(result="x")]
	)
	agent = om.create_agent(name="Slow", model=model, integrations=["ev"])
	try:
		with anyio.fail_after(8):
			await agent.run("go")
	finally:
		await om.aclose()
	(entry,) = results_at(model, 1)
	assert entry["ok"] is False and "did not answer within 1 s" in entry["error"]


def _ours(**env: str) -> Any:
	return MCP.stdio(sys.executable, [str(HERE / "stdio_server.py")], env=env)


async def test_the_server_starts_on_first_use_and_aclose_stops_it_without_zombies() -> None:
	"""No process before the first run; one during; none (and no zombie) after aclose."""
	om = OpenMolt(entry_points=False)
	om.register_integration("ours", _ours(DEMO_TOKEN=SECRET))
	model = ScriptedModel([call_tool("ours.whoami"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["ours"])
	assert not children("stdio_server.py")
	await agent.run("who")
	(entry,) = results_at(model, 1)
	pid = entry["result"]["pid"]
	assert children("stdio_server.py") == [pid]
	assert entry["result"]["token"] == "[redacted]"  # the server read it; the model never does
	await om.aclose()
	assert not children("stdio_server.py") and not zombies()
	assert not Path(f"/proc/{pid}").exists()  # noqa: ASYNC240  # /proc, no I/O wait


async def test_a_cancelled_run_leaves_no_process_after_aclose() -> None:
	"""Cancelling a run in the middle of a call, then closing, stops the server."""
	om = OpenMolt(entry_points=False)
	om.register_integration("ours", _ours())
	model = ScriptedModel([call_tool("ours.sleep", seconds=30), finish(result="x")])
	agent = om.create_agent(name="A", model=model, integrations=["ours"])
	with anyio.move_on_after(1.5) as scope:
		await agent.run("sleep")
	assert scope.cancelled_caught
	assert len(children("stdio_server.py")) == 1
	with anyio.CancelScope() as outer:
		outer.cancel()  # even a cancelled aclose finishes stopping the server
		await om.aclose()
	assert not children("stdio_server.py") and not zombies()


async def test_a_server_that_dies_is_started_again_at_the_next_call() -> None:
	"""A killed server gives one retryable error; the next call runs on a new process."""
	import signal

	om = OpenMolt(entry_points=False)
	om.register_integration("ours", _ours())
	model = ScriptedModel(
		[
			call_tool("ours.whoami"),
			call_tool("ours.whoami"),
			call_tool("ours.whoami"),
			finish(result="ok"),
		]
	)

	def kill_first(event: Any) -> None:
		if event.tool == "ours.whoami" and not killed:
			killed.append(event.response["pid"])
			os.kill(event.response["pid"], signal.SIGKILL)

	killed: list[int] = []
	agent = om.create_agent(name="A", model=model, integrations=["ours"])
	agent.on("tool:response", kill_first)
	try:
		with anyio.fail_after(30):
			await agent.run("go")
	finally:
		await om.aclose()
	first, second, third = (results_at(model, i)[0] for i in (1, 2, 3))
	assert first["ok"] is True
	assert second["ok"] is False and "started again" in second["error"]
	assert third["ok"] is True and third["result"]["pid"] != killed[0]
	assert not children("stdio_server.py")


async def test_a_missing_command_is_an_integration_error_naming_the_server() -> None:
	"""A command that does not exist fails the run before any model call, with the fix."""
	om = OpenMolt(entry_points=False)
	om.register_integration("gone", MCP.stdio("/nonexistent/mcp-server", ["--flag"]))
	model = ScriptedModel([])
	agent = om.create_agent(name="A", model=model, integrations=["gone"])
	with pytest.raises(IntegrationError, match=r"^gone: the MCP server \(/nonexistent/mcp-server"):
		await agent.run("go")
	assert model.requests == []
	await om.aclose()


@pytest.mark.parametrize("servers", [1, 2])
async def test_a_server_that_exits_at_start_is_said_so_whatever_the_number_of_servers(
	servers: int,
) -> None:
	"""A crash at start names the server and says it exited, also when two servers fail at once.

	It was "ExceptionGroup: Connection closed", and with two servers "capabilities:tool-sources:
	its list_tools hook raised ExceptionGroup ... fix the capability 'tool-sources'".
	"""
	om = OpenMolt(entry_points=False)
	names = [f"crash{i}" for i in range(servers)]
	for name in names:
		om.register_integration(
			name, MCP.stdio(sys.executable, ["-c", "import sys; sys.exit('no config')"])
		)
	model = ScriptedModel([])
	agent = om.create_agent(name="A", model=model, integrations=names)
	with anyio.fail_after(15), pytest.raises(IntegrationError) as raised:
		await agent.run("go")
	said = str(raised.value)
	assert said.startswith(("crash0: the MCP server (", "crash1: the MCP server (")), said
	assert said.endswith(
		"could not be started: it exited before it answered (what it printed says why)"
	)
	assert "ExceptionGroup" not in said and "tool-sources" not in said
	assert model.requests == []
	await om.aclose()


async def test_a_server_that_never_answers_fails_within_the_startup_timeout() -> None:
	"""A process that speaks no MCP: the start gives up after startup_timeout, process stopped."""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"mute", MCP.stdio(sys.executable, ["-c", "import time; time.sleep(60)"], startup_timeout=1)
	)
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["mute"])
	with anyio.fail_after(15), pytest.raises(IntegrationError, match="within 1 s"):
		await agent.run("go")
	await om.aclose()
	assert not children("time.sleep(60)") and not zombies()


async def test_a_server_starts_when_this_process_stderr_is_no_file(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A notebook's or a captured test's sys.stderr has no descriptor for the child's stderr.

	The SDK's default was the stderr of the moment it was imported, so starting the server failed
	with 'UnsupportedOperation: fileno' (found by --dry-run run in process under capsys).
	"""
	import io

	monkeypatch.setattr(sys, "stderr", io.StringIO())
	om = OpenMolt(entry_points=False)
	om.register_integration("ours", MCP.stdio(sys.executable, [str(HERE / "stdio_server.py")]))
	model = ScriptedModel([call_tool("ours.whoami"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["ours"])
	try:
		result = await agent.run("who?")
	finally:
		await om.aclose()
	assert result.status == "success"
	assert "ours.whoami" in _tools(model) and results_at(model, 1)[0]["ok"]
	for stream in (None, io.StringIO()):  # no usable stream at all: the child's stderr is discarded
		monkeypatch.setattr(sys, "__stderr__", stream)
		from openmolt_mcp._source import _errlog

		with _errlog() as errlog:
			assert errlog.name == os.devnull


async def test_a_secret_the_server_prints_to_its_stderr_is_masked(
	capfd: pytest.CaptureFixture[str],
) -> None:
	"""A server's stderr is passed through to ours: the token it was given is masked in it."""
	script = (
		"import os, sys; sys.stderr.write('auth failed for ' + os.environ['DEMO_TOKEN'] + '\\n'); "
		"sys.stderr.flush(); sys.exit(1)"
	)
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"leaky", MCP.stdio(sys.executable, ["-c", script], env={"DEMO_TOKEN": SECRET})
	)
	agent = om.create_agent(name="A", model=ScriptedModel([]), integrations=["leaky"])
	with anyio.fail_after(15), pytest.raises(IntegrationError, match="exited before it answered"):
		await agent.run("go")
	await om.aclose()
	for _ in range(100):  # the relay writes what the server printed as it comes
		err = capfd.readouterr().err
		if "auth failed" in err:
			break
		await anyio.sleep(0.02)
	assert "auth failed for [redacted]" in err
	assert SECRET not in err


def test_the_stderr_relay_still_drains_when_this_process_stderr_fails() -> None:
	"""A closed sink stops the writing, not the reading: the server never blocks on its stderr."""
	import io
	import threading

	from openmolt_mcp._config import Masker
	from openmolt_mcp._source import _relay

	class Closed(io.StringIO):
		def write(self, text: str) -> int:
			raise ValueError("I/O operation on closed file")

	pipe = _relay(Closed(), Masker(frozenset({SECRET})), "test")
	failed: list[BaseException] = []

	def server() -> None:
		try:
			pipe.write(("x" * 1000 + "\n") * 1000)  # 1 MB: far more than a pipe holds
			pipe.close()
		except OSError as exc:  # a broken pipe: a server that is not Python dies of SIGPIPE
			failed.append(exc)

	writer = threading.Thread(target=server, daemon=True)
	writer.start()
	writer.join(10)
	assert not writer.is_alive() and failed == []


@pytest.mark.parametrize("env", [{}, {"DEMO_TOKEN": SECRET}], ids=["no-secrets", "secrets"])
async def test_what_a_server_prints_to_its_stderr_reaches_ours_with_controls_escaped(
	env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
	"""A server's stderr is outside text: escapes (a colour, OSC 52, a bidi override) show escaped.

	It reached this process's stderr (the operator's terminal) as it was: the terminal obeyed
	them, OSC 52 writing the clipboard; the relay masked secrets only, and only when the server
	had some.
	"""
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"h", MCP.stdio(sys.executable, [str(HERE / "hostile_stdio_server.py")], env=env)
	)
	model = ScriptedModel([call_tool("h.shout"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(60):
			await agent.run("go")
	finally:
		await om.aclose()
	err = ""
	for _ in range(100):  # the relay writes what the server printed as it comes
		err += capfd.readouterr().err
		if "done" in err:
			break
		await anyio.sleep(0.02)
	assert (
		"\\u001b[31mred\\u001b[0m \\u001b]52;c;cm0gLXJmIC8=\\u0007 \\u202eevil\\u202c done\n" in err
	)
	assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err and "\r" not in err


def test_a_flood_on_a_servers_stderr_reaches_ours_bounded_and_said_so() -> None:
	"""Past its budget in a window, what a server prints is drained but dropped, with one note;
	the next window shows its lines again, and the count dropped is said."""
	import io
	import threading

	from openmolt_mcp._config import Masker
	from openmolt_mcp._source import STDERR_BYTES, _relay

	now = [0.0]
	sink = io.StringIO()
	pipe = _relay(sink, Masker(frozenset()), "flood", clock=lambda: now[0])
	# Taken as the relay starts it: once the pipe is closed it may end before it is looked for.
	(pump,) = [t for t in threading.enumerate() if t.name == "openmolt-mcp-stderr-flood"]
	pipe.write(("x" * 999 + "\n") * 4096)  # 4 MB in one window
	pipe.flush()
	now[0] = 61.0
	pipe.write("later\n")
	pipe.close()
	pump.join(20)
	assert not pump.is_alive()
	out = sink.getvalue()
	assert len(out) < 2 * STDERR_BYTES + 1000  # the flood's first window, and what the pipe held
	assert "later\n" in out
	assert "the MCP server flood printed more than 256 KiB on its stderr within 60 s" in out
	assert "bytes the MCP server flood printed on its stderr were dropped]" in out


async def test_a_server_that_dies_mid_call_leaves_a_write_in_doubt_not_retried_blindly(
	tmp_path: Path,
) -> None:
	"""The server took the write's effect, then died: the model reads that the call may have
	taken effect and to check first, not only that the server is started again."""
	done = tmp_path / "rows.txt"
	om = OpenMolt(entry_points=False)
	om.register_integration("h", MCP.stdio(sys.executable, [str(HERE / "hostile_stdio_server.py")]))
	model = ScriptedModel([call_tool("h.crash", path=str(done)), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(30):
			await agent.run("go")
	finally:
		await om.aclose()
	(entry,) = results_at(model, 1)
	assert done.read_text() == "appended\n"
	assert entry["ok"] is False
	assert "may or may not have taken effect" in entry["error"]
	assert "check" in entry["error"]


async def test_a_stdio_server_gets_only_a_minimal_environment_and_its_own_env(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""This process's provider keys, OPENMOLT_* settings and cloud credentials are not passed on."""
	for name in ("OPENMOLT_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"):
		monkeypatch.setenv(name, "sk-parent-0123456789abcdef")
	om = OpenMolt(entry_points=False)
	om.register_integration(
		"h",
		MCP.stdio(sys.executable, [str(HERE / "hostile_stdio_server.py")], env={"GIVEN": "yes"}),
	)
	model = ScriptedModel([call_tool("h.environ"), finish(result="ok")])
	agent = om.create_agent(name="A", model=model, integrations=["h"])
	try:
		with anyio.fail_after(30):
			await agent.run("go")
	finally:
		await om.aclose()
	(entry,) = results_at(model, 1)
	names = set(entry["result"]["result"]) - {"LC_CTYPE"}  # Python may set it for itself
	assert "GIVEN" in names
	assert names <= {"GIVEN", "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}, names


def test_an_integration_registered_under_another_id_is_named_by_it() -> None:
	"""``MCP.stdio(...)`` made with the default id and registered as ``files``: its name, its
	source's messages and its repr say ``files``; a name given explicitly is kept."""
	om = OpenMolt(entry_points=False)
	om.register_integration("files", MCP.stdio("/nonexistent/mcp-server"))
	om.register_integration("docs", MCP.stdio("/nonexistent/mcp-server", name="Docs"))
	files, docs = om.plugins.integration("files"), om.plugins.integration("docs")
	assert (files.id, files.name, docs.id, docs.name) == ("files", "files", "docs", "Docs")
	assert repr(files.source).startswith("MCPToolSource('files'")
	assert getattr(files.source, "id", None) == "files"


def test_a_urls_login_a_server_prints_to_its_stderr_is_masked() -> None:
	"""A server's stderr is its log: a URL's password and ``?api_key=`` are masked as in a record.

	No source knows them (the server read its database URL from its own config): the relay
	masked the known secrets only.
	"""
	import io
	import threading

	from openmolt_mcp._config import Masker
	from openmolt_mcp._source import _relay

	sink = io.StringIO()
	pipe = _relay(sink, Masker(frozenset()), "urls")
	pipe.write("connecting to postgresql://app:Db-Passw0rd-9Q@db.local/app\n")
	pipe.write("GET https://api.example.com/v1?api_key=AK-12345678Zq&page=2 failed\n")
	pipe.close()
	(pump,) = [t for t in threading.enumerate() if t.name == "openmolt-mcp-stderr-urls"]
	pump.join(20)
	out = sink.getvalue()
	assert "postgresql://app:[redacted]@db.local/app" in out, out
	assert "Db-Passw0rd-9Q" not in out and "AK-12345678Zq" not in out, out
	assert "page=2" in out
