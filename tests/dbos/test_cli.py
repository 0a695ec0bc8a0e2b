"""The durable CLI: agent files' durability, --durability, openmolt runs / answer / worker errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _harness import HERE

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.cli._run import load
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_dbos import DBOSBackend
from openmolt_dbos._engine import reset_engine


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
	full = {**os.environ, "PYTHONPATH": str(HERE), **(env or {})}
	full.pop("OPENMOLT_DURABILITY", None)
	full.update(env or {})
	return subprocess.run(
		[sys.executable, "-m", "openmolt", *args],
		capture_output=True,
		text=True,
		timeout=180,
		env=full,
		cwd=HERE,
	)


def test_an_agent_file_s_durability_and_the_flag_make_its_runs_durable(tmp_path: Path) -> None:
	"""The file's "durability" makes the instance durable; --durability wins over it."""
	agent_file = tmp_path / "agent.json"
	agent_file.write_text(
		json.dumps(
			{
				"name": "Filed",
				"model": "openai:gpt-5-mini",
				"durability": {"url": str(tmp_path / "file.sqlite"), "workerId": "filed"},
			}
		)
	)
	try:
		loaded = load(str(agent_file), env_file=None, verbose=False)
		backend = loaded.om.durability
		assert isinstance(backend, DBOSBackend)
		assert backend.settings.url == f"sqlite:///{tmp_path / 'file.sqlite'}"
		assert backend.settings.executor_id() == "filed"
		assert backend.engine.agents["Filed"] is loaded.agent
	finally:
		reset_engine()
	try:
		flag = str(tmp_path / "flag.sqlite")
		loaded = load(str(agent_file), env_file=None, verbose=False, durability=flag)
		backend = loaded.om.durability
		assert isinstance(backend, DBOSBackend)
		assert backend.settings.url == f"sqlite:///{flag}"
	finally:
		reset_engine()


def test_a_python_agent_file_gets_the_flag_s_store(tmp_path: Path) -> None:
	"""A Python file's agent built by the command becomes durable with --durability."""
	agent_file = tmp_path / "agent.py"
	agent_file.write_text(
		"from openmolt_core.testing import ScriptedModel, finish\n"
		"def agent(om):\n"
		"    return om.create_agent(name='Py', model=ScriptedModel([finish(result='x')]))\n"
	)
	try:
		loaded = load(
			str(agent_file),
			env_file=None,
			verbose=False,
			durability=str(tmp_path / "py.sqlite"),
		)
		assert isinstance(loaded.om.durability, DBOSBackend)
		assert "Py" in loaded.om.durability.engine.agents
	finally:
		reset_engine()


def _park(question: str) -> str:
	raise HumanInputUnavailable(question)


QUESTION = "Ship it?\x1b]0;owned\x07"
"""A question whose escape sequence would set the terminal's title."""


@pytest.mark.anyio
@pytest.mark.timeout(300)  # a CLI process importing DBOS (five took over 120 s under load 9)
async def test_openmolt_runs_lists_and_openmolt_answer_answers_a_parked_run(
	tmp_path: Path, cli_in_process: Any
) -> None:
	"""A run parked here is listed by `openmolt runs` and answered by `openmolt answer`.

	The listed question is the model's: printed with the characters a terminal obeys escaped
	(the JSON means the same). The first listing is a command of its own (a fresh process); the
	others run in this process, beside the engine that runs the parked run, as an application
	that embeds the commands would (a fresh one imports DBOS first: 4 s or more each)."""
	import anyio

	def here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
		full = {k: v for k, v in os.environ.items() if k != "OPENMOLT_DURABILITY"}
		return cli_in_process(list(args), cwd=HERE, env={**full, **(env or {})})

	store = str(tmp_path / "runs.sqlite")
	om = OpenMolt(durability=store, entry_points=False)
	agent = om.create_agent(
		name="Asker",
		model=ScriptedModel([ask_human(QUESTION), finish(result="shipped")]),
		on_human_input_request=_park,
	)
	try:
		parked = await agent.run("ship")
		run_id = parked.state.run_id
		listed = await anyio.to_thread.run_sync(_cli, "runs", "--durability", store, "--json")
		assert listed.returncode == 0, listed.stderr
		rows = json.loads(listed.stdout)
		assert [(r["run_id"], r["agent"], r["question"]) for r in rows] == [
			(run_id, "Asker", QUESTION)
		]
		plain = await anyio.to_thread.run_sync(here, "runs", "--durability", store)
		assert "\x1b" not in listed.stdout + plain.stdout and "\x07" not in plain.stdout
		assert "Ship it?\\u001b]0;owned\\u0007" in plain.stdout
		env = {"OPENMOLT_DURABILITY": store}
		every = await anyio.to_thread.run_sync(lambda: here("runs", "--all", "--json", env=env))
		assert [(r["run_id"], r["status"]) for r in json.loads(every.stdout)] == [
			(run_id, "parked")
		]
		step = rows[0]["step"]
		# An answer for another question than the pending one (here: one not asked) is refused.
		stale = await anyio.to_thread.run_sync(
			lambda: here("answer", run_id, "no", "--step", str(step + 1), "--durability", store)
		)
		assert stale.returncode == 2, stale.stderr
		assert f"waits for no answer to the question of step {step + 1}" in stale.stderr
		answered = await anyio.to_thread.run_sync(  # a prefix is enough, as for `openmolt logs`
			lambda: here("answer", run_id[:7], "yes", "--step", str(step), "--durability", store)
		)
		assert answered.returncode == 0, answered.stderr
		assert f"answered run {run_id}" in answered.stderr
		result = await om.result(run_id)
		assert result.ok and result.output == {"result": "shipped"}
		again = await anyio.to_thread.run_sync(
			lambda: here("answer", run_id, "no", "--durability", store)
		)
		assert again.returncode == 1 and "already answered" in again.stderr
	finally:
		await om.aclose()
		from dbos import DBOS

		DBOS.destroy()
		reset_engine()


def test_the_worker_needs_a_store_and_unique_agent_names(tmp_path: Path, cli_in_process) -> None:
	"""Without a store, or with two agents of one name, the worker says what to fix (exit 2)."""
	env = {k: v for k, v in os.environ.items() if k != "OPENMOLT_DURABILITY"}

	def worker(*args: str) -> subprocess.CompletedProcess[str]:
		# In this process: each fails before a worker starts (a fresh one imports DBOS, 4 s).
		try:
			return cli_in_process(["worker", *args], cwd=HERE, env=env)
		finally:
			reset_engine()

	no_store = worker("crash_agents.py")
	assert no_store.returncode == 2
	assert "no durable store: pass --durability" in no_store.stderr
	twin = tmp_path / "twin.py"
	twin.write_text((HERE / "crash_agents.py").read_text())
	clash = worker("crash_agents.py", str(twin), "--durability", str(tmp_path / "r.sqlite"))
	assert clash.returncode == 2
	assert "another file already defines an agent named 'Crash'" in clash.stderr
	missing = worker(str(tmp_path / "nothing"), "--durability", str(tmp_path / "r.sqlite"))
	assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_a_worker_factory_that_fails_names_its_file_and_line(tmp_path: Path) -> None:
	"""An ``agent(om)`` factory that raises is reported as `openmolt run` reports it: file:line."""
	from openmolt_core.cli._agentfile import AgentFileError
	from openmolt_dbos.worker import load_agents

	broken = tmp_path / "broken.py"
	broken.write_text(
		"def agent(om):\n"
		"\tsettings = {}\n"
		"\treturn om.create_agent(name='Broken', model=settings['model'])\n"
	)
	try:
		with pytest.raises(AgentFileError) as caught:
			load_agents(
				[str(broken)],
				durability=str(tmp_path / "runs.sqlite"),
				env_file=None,
				verbose=False,
			)
	finally:
		reset_engine()
	assert str(caught.value) == f"{broken}:3: KeyError: 'model'"


def test_a_verbose_worker_prints_each_line_of_a_run_once() -> None:
	"""The worker's handler leaves a verbose run's lines to the core's verbose handler."""
	code = textwrap.dedent(
		"""
		import anyio
		from openmolt import OpenMolt
		from openmolt_core.durability import LOCAL_PORT
		from openmolt_core.testing import ScriptedModel, finish
		from openmolt_dbos.worker import _log_to_stderr

		_log_to_stderr(True)  # as `openmolt worker --verbose` does

		async def main():
			om = OpenMolt(entry_points=False, verbose=True)
			agent = om.create_agent(name="Durable", model=ScriptedModel([finish("ok")]))
			# a workflow of the worker runs it so: the observers mark it verbose there
			print((await agent.execute(None, port=LOCAL_PORT, input="x")).status)

		anyio.run(main)
		"""
	)
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
	)
	assert done.stdout.strip() == "success"
	lines = done.stderr.splitlines()
	assert lines.count("openmolt: Durable step 1: finish (success)") == 1, done.stderr


@pytest.mark.parametrize(
	("schedules", "problem"),
	[
		("[{'type': 'cron', 'expression': 'at nine'}]", "schedules[0]: "),
		("[{'type': 'interval', 'value': 60}, {'type': 'daily', 'hour': 25}]", "schedules[1]: "),
		("['every hour']", "schedules[0]: a schedule must be a dict"),
	],
)
def test_a_worker_refuses_an_agent_py_s_bad_schedule_at_load_naming_file_and_schedule(
	tmp_path: Path, schedules: str, problem: str
) -> None:
	"""An agent.py's invalid schedule fails load_agents, as `openmolt serve` and a run fail."""
	from openmolt_core.errors import ConfigurationError
	from openmolt_dbos.worker import load_agents

	path = tmp_path / "timed.py"
	path.write_text(
		"from openmolt import OpenMolt\n"
		"from openmolt_core.testing import ScriptedModel\n"
		"agent = OpenMolt(entry_points=False).create_agent(name='Timed', model=ScriptedModel([]))\n"
		f"schedules = {schedules}\n"
	)
	try:
		with pytest.raises(ConfigurationError) as caught:
			load_agents(
				[str(path)], durability=str(tmp_path / "runs.sqlite"), env_file=None, verbose=False
			)
	finally:
		reset_engine()
	assert str(caught.value).startswith(f"{path}: {problem}"), str(caught.value)


def test_a_worker_s_schedules_are_the_ids_the_other_programs_give_them(tmp_path: Path) -> None:
	"""A JSON and a Python file's schedules reach the worker checked, with the file's input."""
	from openmolt_core.agentfile import load, schedule_specs
	from openmolt_core.scheduler import _derived_id
	from openmolt_dbos.worker import load_agents

	path = tmp_path / "timed.py"
	path.write_text(
		"from openmolt import OpenMolt\n"
		"from openmolt_core.testing import ScriptedModel\n"
		"agent = OpenMolt(entry_points=False).create_agent(name='Timed', model=ScriptedModel([]))\n"
		"input = 'tick'\n"
		"schedules = [{'type': 'interval', 'value': 60}]\n"
	)
	try:
		loaded, _ = load_agents(
			[str(path)], durability=str(tmp_path / "runs.sqlite"), env_file=None, verbose=False
		)
		[(agent, spec)] = loaded.schedules
		assert spec.input == "tick"
	finally:
		reset_engine()
	one = load(str(path), env_file=None, verbose=False)  # as `openmolt serve` and a run load it
	[theirs] = schedule_specs(one, one.input)
	assert agent.name == "Timed" and _derived_id("Timed", spec) == _derived_id("Timed", theirs)
