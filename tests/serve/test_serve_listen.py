"""A taken port is a clear error naming the server and the fix, for the viewer and the trigger server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_ui import Viewer

pytestmark = pytest.mark.anyio


async def test_a_taken_port_names_the_server_and_the_fix(tmp_path: Path) -> None:
	"""Both servers refuse a port another socket holds, before anything serves."""
	taken = socket.socket()
	taken.bind(("127.0.0.1", 0))
	taken.listen()
	port = taken.getsockname()[1]
	om = OpenMolt(entry_points=False)
	try:
		viewer = Viewer(store=RunStore(tmp_path / "runs.db"), host="127.0.0.1", port=port)
		with pytest.raises(
			ConfigurationError,
			match=rf"the run viewer cannot listen on 127.0.0.1:{port}: .*choose another port",
		):
			async with viewer:
				pass
		agent = om.create_agent(name="Hooked", model=ScriptedModel([finish("x")]))
		triggers = Triggers.model_validate(
			{"webhook": {"secret": "whsec-listen-test", "scheme": "github"}}
		)
		server = TriggerServer([(agent, triggers)], host="127.0.0.1", port=port)
		with pytest.raises(
			ConfigurationError, match=rf"openmolt serve cannot listen on 127.0.0.1:{port}"
		):
			async with server:
				pass
	finally:
		taken.close()
		await om.aclose()


async def test_the_viewer_beside_serve_names_serve_s_options_and_a_bad_host_says_host(
	tmp_path: Path,
) -> None:
	"""A taken port names --ui-port when `openmolt serve` runs the viewer; a host that is no
	address of this machine says to give one (--host), not to choose another port."""
	from openmolt_ui._listen import listen

	taken = socket.socket()
	taken.bind(("127.0.0.1", 0))
	taken.listen()
	port = taken.getsockname()[1]
	try:
		viewer = Viewer(store=RunStore(tmp_path / "runs.db"), host="127.0.0.1", port=port)
		viewer.options = ("--ui-host", "--ui-port")
		with pytest.raises(ConfigurationError, match=r"; choose another port \(--ui-port\)$"):
			async with viewer:
				pass
	finally:
		taken.close()
	with pytest.raises(ConfigurationError) as raised:
		listen("192.0.2.1", 0, who="openmolt serve")  # TEST-NET-1: no address of this machine
	assert str(raised.value).startswith("openmolt serve cannot listen on 192.0.2.1:0: ")
	assert str(raised.value).endswith("; give a name or address of this machine (--host)")


async def test_serve_binds_the_viewer_before_its_schedules_fire(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""`openmolt serve` whose viewer cannot listen fails before any schedule fires a run.

	The schedulers were started before the viewer: a viewer slow to start (its run store) and
	then refused its port had already started a run, cancelled as the command failed.
	"""
	import json

	import anyio

	from openmolt_core.cli import _only_error
	from openmolt_serve import cli

	file = tmp_path / "ticker.json"
	spec = {"name": "Ticker", "model": "echo:v1", "schedules": [{"type": "interval", "value": 0.1}]}
	file.write_text(json.dumps(spec))
	monkeypatch.setenv("OPENMOLT_SCHEDULE_STORE", "off")
	[one] = cli._load([str(file)], env_file=None, verbose=False)
	fired: list[str] = []
	one.agent.on("schedule:run", lambda event: fired.append(event.schedule_id))
	enter = Viewer.__aenter__

	async def slow_enter(self: Viewer) -> Viewer:
		await anyio.sleep(0.5)  # five of the schedule's due times
		return await enter(self)

	monkeypatch.setattr(Viewer, "__aenter__", slow_enter)
	taken = socket.socket()
	taken.bind(("127.0.0.1", 0))
	taken.listen()
	try:
		with pytest.raises(Exception) as raised:  # in the trigger server's task group
			await cli.serve([one], port=0, ui_port=taken.getsockname()[1])
	finally:
		taken.close()
	error = raised.value
	error = _only_error(error) if isinstance(error, BaseExceptionGroup) else error
	assert isinstance(error, ConfigurationError) and "the run viewer cannot listen" in str(error)
	assert fired == []
