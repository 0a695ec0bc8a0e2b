"""A webhook delivery retried by its sender to a second `openmolt serve` on the same durable store:
one run, and the second answer says ``duplicate``."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import pytest
from _durable import FakeServer
from _harness import Proc
from hook_agent import SECRET

from openmolt_serve._launch import run_id_for
from openmolt_serve.signatures import sign


def _serve(spawn: Any, store: str, name: str, env: dict[str, str]) -> tuple[Proc, str]:
	args = ["-m", "openmolt", "serve", "hook_agent.py", "--durability", store]
	args += ["--port", "0", "--no-ui"]
	proc: Proc = spawn(args, env, name=name)
	proc.wait_line("POST /hooks/Hook on ")
	found = re.search(r"POST /hooks/Hook on (http://\S+)", proc.output())
	assert found is not None, proc.output()
	return proc, found.group(1)


@pytest.mark.timeout(120)
def test_a_delivery_retried_to_a_second_server_runs_once(
	store: str, server: FakeServer, spawn: Any
) -> None:
	"""GitHub's redelivery (the same X-GitHub-Delivery) reaching another server: one run, one model
	call, the second answer ``200 duplicate`` with the same run id."""
	# The servers' run store (XDG state, where the replay guard keeps what it saw) outlives the
	# test: each case signs a body and names a delivery of its own.
	scenario = f"hook-{uuid.uuid4().hex}"
	server.scripts[scenario] = [{"type": "finish", "status": "success", "output": {"result": "ok"}}]
	env = {"OPENMOLT_TEST_SERVER": server.url}
	first, first_url = _serve(spawn, store, "serve-1", env)
	second, second_url = _serve(spawn, store, "serve-2", env)
	body = json.dumps(scenario).encode()
	delivery = f"d-{scenario}"
	headers = {
		**sign("github", SECRET, body),
		"X-GitHub-Delivery": delivery,
		"content-type": "application/json",
	}
	accepted = httpx.post(f"{first_url}/hooks/Hook", content=body, headers=headers, timeout=30)
	assert accepted.status_code == 202, accepted.text
	run_id = accepted.json()["run_id"]
	assert run_id == run_id_for("hook", "Hook", delivery)
	server.wait_for(lambda: server.entries("model", name=scenario), 30, "the run's model call")
	retried = httpx.post(f"{second_url}/hooks/Hook", content=body, headers=headers, timeout=30)
	assert retried.status_code == 200, retried.text
	assert retried.json() == {"run_id": run_id, "status": "duplicate"}
	first.stop()
	second.stop()
	assert len(server.entries("model", name=scenario)) == 1
