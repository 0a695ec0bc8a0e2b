"""A missing provider key is said before the engine is imported, and only when it is certain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openmolt import OpenMolt
from openmolt_core.cli import _keystore
from openmolt_core.cli._early import KEYED_PROVIDERS, missing_provider_key


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
	for name in list(os.environ):
		if name.startswith("OPENMOLT_"):
			monkeypatch.delenv(name)
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(tmp_path / "keys.json"))
	monkeypatch.chdir(tmp_path)


def _file(tmp_path: Path, **extra: object) -> str:
	path = tmp_path / "agent.json"
	path.write_text(json.dumps({"name": "A", "model": "openai:gpt-5-mini", **extra}))
	return str(path)


def test_the_keyless_path_imports_no_engine(tmp_path: Path) -> None:
	"""`openmolt agent.json` without a key stops before the agent, httpx or liquid are imported."""
	path = _file(tmp_path)
	code = (
		"import sys\n"
		"from openmolt_core.cli import main\n"
		f"code = main([{path!r}])\n"
		"heavy = [m for m in ('openmolt_core.agent', 'httpx', 'liquid', 'pydantic', 'anyio')"
		" if m in sys.modules]\n"
		"print(code, heavy)\n"
	)
	env = {k: v for k, v in os.environ.items() if not k.startswith("OPENMOLT_")}
	env["OPENMOLT_KEYS_FILE"] = str(tmp_path / "keys.json")
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.stdout.strip() == "2 []", done.stderr
	assert done.stderr.strip() == (
		"openmolt: no API key for openai: set OPENMOLT_OPENAI_API_KEY (in the environment, a "
		".env file or `openmolt keys set openai`)"
	)


PY_TOOL_AGENT = """
from openmolt import FunctionTool

shout = FunctionTool("shout", "Upper-case a text.", lambda i, c: i["text"].upper())
input = "Ada"


def agent(om):
	om.llm_providers["{provider}"] = {{"base_url": "{url}", "max_retries": 0}}
	return om.create_agent(name="Greeter", model="{provider}:greet", tools=[shout])
"""


@pytest.mark.parametrize("kind", ["json", "python with a function tool"])
def test_a_run_without_integrations_imports_no_template_engine(
	tmp_path: Path, server, cli, kind: str
) -> None:
	"""A run without integrations reaches the model without them or liquid (~150 modules).

	Of `openmolt_core.integrations` it loads only the shared HTTP client, the FileSystem's taint
	record (``_taintmarks``: the agent file and the ``.env`` file are refused when a tainted run
	wrote them; it imports nothing the run has not) and the package's lazy ``__init__``: not the
	engine, the data model or the templates.
	"""
	path = cli.agent_file(tmp_path, server)
	if kind != "json":
		path = tmp_path / "agent.py"
		path.write_text(PY_TOOL_AGENT.format(provider=cli.PROVIDER, url=server.url))
	code = (
		"import sys\n"
		"from openmolt_core.cli import main\n"
		f"code = main([{str(path)!r}, '--json'])\n"
		"client = {'openmolt_core.integrations', 'openmolt_core.integrations._client',\n"
		"	'openmolt_core.integrations._taintmarks'}\n"
		"loaded = sorted(m for m in sys.modules if m == 'liquid' or (\n"
		"	m.startswith('openmolt_core.integrations') and m not in client))\n"
		"assert 'openmolt_core.integrations._client' in sys.modules\n"
		"print(code, loaded, file=sys.stderr)\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key"})
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.stderr.splitlines()[-1] == "0 []", done.stderr
	assert json.loads(done.stdout)["status"] == "success"
	assert len(server.requests) == 1


@pytest.mark.parametrize(
	"extra",
	[
		{"llmProviders": {"openai": {"apiKey": "sk-file"}}},
		{"llmProviders": {"openai": {"baseUrl": "http://localhost:11434/v1"}}},
		{"model": "ollama:llama3.2", "llmProviders": {"ollama": {"provider": "openai"}}},
		{"model": "someone:model"},
	],
)
def test_what_the_early_check_cannot_be_sure_of_is_left_to_the_full_check(
	tmp_path: Path, extra: dict[str, object]
) -> None:
	"""A key in the file, another server, another plugin: no early verdict."""
	assert missing_provider_key(_file(tmp_path, **extra), None) is None


def test_every_key_source_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	"""The environment, a .env file, the key store; and a fallback model's key too."""
	path = _file(tmp_path, fallbackModels=["anthropic:claude-haiku-4-5"])
	assert "OPENMOLT_OPENAI_API_KEY" in (missing_provider_key(path, None) or "")
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-env")
	assert "OPENMOLT_ANTHROPIC_API_KEY" in (missing_provider_key(path, None) or "")
	(tmp_path / ".env").write_text("OPENMOLT_ANTHROPIC_API_KEY=dot\n")
	assert missing_provider_key(path, None) is None
	(tmp_path / ".env").unlink()
	_keystore.save("OPENMOLT_ANTHROPIC_API_KEY", "stored")
	assert missing_provider_key(path, None) is None


def test_the_keyed_providers_are_the_built_ins_that_need_a_key() -> None:
	"""The early check's list agrees with the providers themselves (one fact, checked)."""
	om = OpenMolt()
	builtins = [
		p.name
		for p in om.plugins.installed()
		if p.group == "providers" and p.distribution == "openmolt-providers"
	]
	needing = sorted(n for n in builtins if getattr(om.provider(n), "key_required", False))
	assert tuple(needing) == KEYED_PROVIDERS


def test_completion_scripts_complete_commands_and_integrations(tmp_path: Path) -> None:
	"""The bash script completes subcommands and, after `tools`, the installed integration ids."""
	import shutil

	from openmolt_core.cli import _SUMMARY
	from openmolt_core.cli._completion import script

	for shell in ("bash", "zsh", "fish"):
		text = script(shell, list(_SUMMARY))
		option = "-l dry-run" if shell == "fish" else "--dry-run"
		assert "logs" in text and option in text and "completion --integrations" in text
	if shutil.which("bash") is None:
		pytest.skip("no bash here")
	(tmp_path / "c.bash").write_text(script("bash", list(_SUMMARY)))
	venv_bin = str(Path(sys.executable).parent)
	probe = (
		f"source {tmp_path / 'c.bash'}\n"
		'COMP_WORDS=(openmolt sche); COMP_CWORD=1; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt tools tele); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt keys set sla); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt keys set open); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt auth gm); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		f'cd {tmp_path}; COMP_WORDS=(openmolt tools a); COMP_CWORD=2; _openmolt; echo "${{COMPREPLY[@]}}"\n'
		'COMP_WORDS=(openmolt auth a); COMP_CWORD=2; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt tools slack postM); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
		'COMP_WORDS=(openmolt tools agent.json x); COMP_CWORD=3; _openmolt; echo "${COMPREPLY[@]}"\n'
	)
	(tmp_path / "agent.json").write_text("{}")
	(tmp_path / "a-note.txt").write_text("")
	env = {**os.environ, "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}"}
	done = subprocess.run(
		["bash", "-c", probe], capture_output=True, text=True, env=env, timeout=120
	)
	assert done.stdout.splitlines() == [
		"schedules schema",
		"telegram",
		"slack",  # `keys set` takes a provider or an integration
		"openai openaiImage",
		"gmail",
		"airtable agent.json",  # after tools: an integration or an agent file, no other file
		"airtable",  # auth takes an integration only
		"postMessage",  # `tools ID TOOL`: the integration's tool handles
		"",  # an agent file has no fixed tools to offer (and no file named x* here)
	], done.stderr
	for shell in ("zsh", "fish"):
		assert "completion --tools" in script(shell, list(_SUMMARY))


# Features a one-shot run of an agent file without integrations, rules or options does not use.
ONE_SHOT_UNUSED = [
	"difflib",  # the hints of a mistyped key or word
	"openmolt_core._approve",
	"openmolt_core._history",  # the schedules' store: a file with none
	"openmolt_core.capabilities.indoubt",
	"openmolt_core._suggest",
	"openmolt_core._support.suggest",
	"openmolt_core.accounts",
	"openmolt_core.capabilities.accounts",
	"openmolt_core.capabilities.skills",
	"openmolt_core.capabilities.sources",
	"openmolt_core.capabilities.toolsearch",
	"openmolt_core.cli._commands",  # the lookup of plugin commands: a file is none
	"openmolt_core.cli._info",  # --dry-run's listing
	"openmolt_core.guardrails",
	"openmolt_core.policy",
	"openmolt_core.schedule",  # the schedule models: the agent-file model loads them when built
	"openmolt_core.scheduler",
	"openmolt_core.sessions",
	"openmolt_core.skills",
	"openmolt_core.subagents",
	"openmolt_core.toolsearch",
	"openmolt_core.triggers",  # the trigger models: `openmolt serve`'s, or a file that gives some
]


def test_a_one_shot_run_does_not_import_the_capabilities_it_does_not_use(
	tmp_path: Path, server, cli
) -> None:
	"""`openmolt agent.json` (no integrations) runs without the features the agent does not turn on."""
	path = cli.agent_file(tmp_path, server)
	code = (
		"import json, sys\n"
		"from openmolt_core.cli import main\n"
		f"code = main([{str(path)!r}, '--json'])\n"
		"print(code, json.dumps(sorted(m for m in sys.modules if m.startswith('openmolt_core')\n"
		"	or m == 'difflib')), file=sys.stderr)\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key"})
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	code, _, modules = done.stderr.splitlines()[-1].partition(" ")
	assert code == "0", done.stderr
	loaded = set(json.loads(modules))
	assert "openmolt_core.capabilities.safety" in loaded  # the run did go through the loop
	assert loaded.isdisjoint(ONE_SHOT_UNUSED), sorted(loaded & set(ONE_SHOT_UNUSED))
	assert json.loads(done.stdout)["status"] == "success"


def test_a_prompt_run_does_not_look_up_commands_or_typos(tmp_path: Path, server, cli) -> None:
	"""``openmolt -m MODEL "prompt"``: options before a word are a run; nothing else is looked up.

	The first word of ``-m`` is an option, which no plugin's command or typo can be: the look-up
	of plugin commands (which imports ``importlib.metadata``) and the typo hints are not loaded,
	as for an agent file (`ONE_SHOT_UNUSED`).
	"""
	code = (
		"import json, sys\n"
		"from openmolt_core.cli import main\n"
		f"code = main(['-m', '{cli.PROVIDER}:greet', 'Ada', '--json'])\n"
		"print(code, json.dumps(sorted(m for m in sys.modules if m.startswith('openmolt_core'))),"
		" file=sys.stderr)\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_OPENAI_BASE_URL": server.url})
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	code, _, modules = done.stderr.splitlines()[-1].partition(" ")
	assert code == "0", done.stderr
	loaded = set(json.loads(modules))
	unused = {
		"openmolt_core.cli._commands",
		"openmolt_core._support.suggest",
		"openmolt_core.schedule",  # -m constructs the agent-file model, which builds no types
		"openmolt_core.triggers",
	}
	assert loaded.isdisjoint(unused), sorted(loaded & unused)


def test_the_collector_is_paused_during_start_up_and_given_back(
	tmp_path: Path, server, cli
) -> None:
	"""A run's start-up makes no collection; its objects are frozen; after it, all is as before.

	Counted with `gc.callbacks` in a fresh process: no collection from the command's start to the
	end of start-up (the agent built), the start-up objects frozen at the first model request,
	and after `main` returns the collector on again with nothing frozen.
	"""
	path = cli.agent_file(tmp_path, server)
	code = (
		"import gc, sys\n"
		"import httpx\n"
		"from openmolt_core import _startup\nfrom openmolt_core.cli import main\n"
		"seen = {'collections': 0}\n"
		"gc.callbacks.append(lambda phase, info: phase == 'start' and seen.update(\n"
		"	collections=seen['collections'] + 1))\n"
		"resume = _startup.StartupGC.resume\n"
		"def resumed(self):\n"
		"	seen.setdefault('start-up', seen['collections'])\n"
		"	resume(self)\n"
		"_startup.StartupGC.resume = resumed\n"
		"send = httpx.AsyncClient.send\n"
		"async def first(self, *args, **kwargs):\n"
		"	seen.setdefault('frozen', gc.isenabled() and gc.get_freeze_count() > 10_000)\n"
		"	return await send(self, *args, **kwargs)\n"
		"httpx.AsyncClient.send = first\n"
		"seen['collections'] = 0\n"
		f"code = main([{str(path)!r}, '--json'])\n"
		"print(code, seen['start-up'], seen['frozen'], gc.isenabled(), gc.get_freeze_count(),\n"
		"	file=sys.stderr)\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key"})
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.stderr.splitlines()[-1] == "0 0 True True 0", done.stderr
	assert json.loads(done.stdout)["status"] == "success"


@pytest.mark.parametrize("form", ["agent file", "prompt"])
def test_the_command_makes_no_collection_from_its_first_line_to_the_first_request(
	tmp_path: Path, server, cli, form: str
) -> None:
	"""The console script (`openmolt_core._main`) pauses the collector before it loads the command.

	Counted with `gc.callbacks` in a fresh process, from the console script's call of
	``openmolt_core._main.main`` to the end of start-up (the agent built): no collection, for an agent file and for
	``-m MODEL "prompt"`` (whose first word goes through the look-up of commands and typos). The
	run itself has the collector on.
	"""
	if form == "agent file":
		args = [str(cli.agent_file(tmp_path, server))]
	else:
		args = ["-m", f"{cli.PROVIDER}:greet", "Ada"]
	code = (
		"import gc, sys\n"
		"seen = {'collections': 0}\n"
		"gc.callbacks.append(lambda phase, info: phase == 'start' and seen.update(\n"
		"	collections=seen['collections'] + 1))\n"
		f"sys.argv = ['openmolt', *{args!r}]\n"
		"from importlib.machinery import PathFinder\n"
		"def watch(startup):\n"
		"	resume = startup.StartupGC.resume\n"
		"	def resumed(self):\n"
		"		seen.setdefault('start-up', seen['collections'])\n"
		"		seen.setdefault('on', gc.isenabled())\n"
		"		resume(self)\n"
		"		seen.setdefault('then', gc.isenabled())\n"
		"	startup.StartupGC.resume = resumed\n"
		"class Watch:  # patches _startup as the command imports it: nothing loaded before\n"
		"	def find_spec(self, name, path, target=None):\n"
		"		if name != 'openmolt_core._startup':\n"
		"			return None\n"
		"		spec = PathFinder.find_spec(name, path)\n"
		"		run = spec.loader.exec_module\n"
		"		spec.loader.exec_module = lambda module: (run(module), watch(module))\n"
		"		return spec\n"
		"sys.meta_path.insert(0, Watch())\n"
		"from openmolt_core import _main  # as the console script does, then its main:\n"
		"gc.collect()  # the allocation count at 0: no pass due on the way to main's first line\n"
		"seen['collections'] = 0\n"
		"code = _main.main()\n"
		"print(code, seen['start-up'], seen['on'], seen['then'], file=sys.stderr)\n"
	)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key", "OPENMOLT_OPENAI_BASE_URL": server.url})
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.stderr.splitlines()[-1] == "0 0 False True", done.stderr
	assert json.loads(done.stdout)["status"] == "success"  # the JSON result, stdout a pipe


@pytest.mark.parametrize("command", ["serve", "worker", "logs"])
def test_a_command_that_runs_on_gets_the_collector_on(tmp_path: Path, cli, command: str) -> None:
	"""The console script's pause ends before any other command runs (serve, worker, logs...).

	A long-running command keeps Python's collector as it is, on, with its usual thresholds and
	nothing frozen; only a run's start-up is paused (`openmolt_core._startup`). A plugin's
	command (`serve`, `worker`) is found after the pause for a run began: it is given back first.
	"""
	code = (
		"import gc, sys\n"
		"usual = gc.get_threshold()\n"
		"from types import SimpleNamespace\n"
		"from openmolt_core import _main\n"
		"from openmolt_core.cli import _commands, _logs\n"
		"def command(args):\n"
		"	print(gc.isenabled(), gc.get_freeze_count(), gc.get_threshold() == usual, file=sys.stderr)\n"
		"	return 0\n"
		"_logs.main = command\n"
		"_commands.find = lambda name: SimpleNamespace(main=command)\n"
		f"sys.argv = ['openmolt', {command!r}]\n"
		"print(_main.main(), file=sys.stderr)\n"
	)
	done = subprocess.run(
		[sys.executable, "-c", code],
		capture_output=True,
		text=True,
		env=cli.clean_env(),
		cwd=tmp_path,
	)
	assert done.stderr.splitlines()[-2:] == ["True 0 True", "0"], done.stderr


def test_a_one_shot_process_leaves_its_run_recorded_whole(tmp_path: Path, server, cli) -> None:
	"""The command's process, ended (the collector frozen at its end), left a complete record.

	The console script in a fresh process runs an agent file; once the process is gone, the run
	store holds the run, ended with its status and output, and every event of the run in order.
	"""
	path = cli.agent_file(tmp_path, server)
	env = cli.clean_env(**{cli.KEY_VAR: "env-key"}, HOME=str(tmp_path), XDG_STATE_HOME="")
	code = "import sys\nfrom openmolt_core._main import main\nsys.exit(main())\n"
	done = subprocess.run(
		[sys.executable, "-c", code, str(path)],
		capture_output=True,
		text=True,
		env=env,
		cwd=tmp_path,
		timeout=120,
	)
	assert done.returncode == 0, done.stderr
	run_id = json.loads(done.stdout)["run_id"]
	shown = cli.openmolt("logs", run_id, "--json", cwd=tmp_path, env=env)
	assert shown.returncode == 0, shown.stderr
	record = json.loads(shown.stdout)
	assert record["status"] == "success" and record["ended"] is not None
	assert record["output"] == {"greeting": "Hello, Ada!"}
	names = [event["name"] for event in record["events"]]
	assert names[-1] == "finish" and "llmOutput" in names, names
	seqs = [event["seq"] for event in record["events"]]
	assert seqs == sorted(seqs), seqs
	assert (tmp_path / ".local" / "state" / "openmolt" / "runs.db").is_file()


def test_importing_openmolt_leaves_the_collector_alone() -> None:
	"""The library leaves the collector of the program that imports it as it is while it runs.

	Only its exit is spared the passes over what it loaded (tests/core/test_exit_collector.py).
	"""
	code = (
		"import gc\n"
		"usual = gc.get_threshold()\n"
		"import openmolt\n"
		"from openmolt import OpenMolt\n"
		"OpenMolt().create_agent(name='a', model='openai:gpt-5-mini', instructions='x')\n"
		"print(gc.isenabled(), gc.get_freeze_count(), gc.get_threshold() == usual)\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.stdout.strip() == "True 0 True", done.stderr


def test_the_console_script_pauses_with_the_commands_rule_which_loads_nothing_else() -> None:
	"""The console script's pause is the run's class (`openmolt_core._startup`), which loads only `gc`.

	The console script (`openmolt_core._main`) imports it inside its Ctrl-C window, before the
	command: a module pulled in there would load with the collector still on and widen the window.
	"""
	code = (
		"import sys\n"
		"import openmolt_core\n"
		"before = set(sys.modules)\n"
		"from openmolt_core import _startup\n"
		"print(sorted(set(sys.modules) - before))\n"
		"made = []\n"
		"class Counted(_startup.StartupGC):\n"
		"	def __init__(self):\n"
		"		made.append(self)\n"
		"		super().__init__()\n"
		"_startup.StartupGC = Counted\n"
		"from openmolt_core import _main\n"
		"sys.argv = ['openmolt', '--version']\n"
		"print(_main.main(), len(made))\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
	assert done.returncode == 0, done.stderr
	loaded, ran = done.stdout.splitlines()[0], done.stdout.splitlines()[-1]
	assert loaded == "['gc', 'openmolt_core._startup']", done.stdout  # gc: built in
	assert ran == "0 1", done.stdout


def _freeze_again() -> None:
	"""Freeze what the test process holds again, as conftest did after collection (an unfreeze
	gave it back to the collector's walks for the rest of this worker's tests)."""
	import gc

	gc.collect()
	gc.freeze()


def test_the_start_up_pause_leaves_a_collector_that_was_off_alone() -> None:
	"""A process that turned the collector off keeps it off, and nothing is frozen."""
	import gc

	from openmolt_core._startup import StartupGC

	frozen = gc.get_freeze_count()  # what the test process froze after collection (conftest)
	gc.disable()
	try:
		startup = StartupGC()
		startup.resume()
		assert not gc.isenabled()
		assert gc.get_freeze_count() == frozen
		startup.close()
		assert not gc.isenabled()
	finally:
		gc.enable()


def test_the_start_up_pause_leaves_a_process_that_froze_objects_alone() -> None:
	"""An application that froze objects itself keeps them frozen and its collector running."""
	import gc

	from openmolt_core._startup import StartupGC

	gc.freeze()
	frozen = gc.get_freeze_count()
	try:
		startup = StartupGC()
		assert gc.isenabled()
		startup.resume()
		startup.close()
		# Still frozen (an unfreeze empties the permanent generation); a few frozen objects may
		# have been freed by reference counting meanwhile (another thread's), so not >= frozen.
		assert gc.isenabled() and gc.get_freeze_count() > frozen * 0.9 > 0
	finally:
		gc.unfreeze()
		_freeze_again()


def test_the_start_up_pause_resumes_once_and_unfreezes_on_close(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Paused until resume; resume freezes and turns it on; close gives the objects back."""
	import gc

	from openmolt_core import _startup
	from openmolt_core._startup import StartupGC

	assert gc.isenabled()
	gc.unfreeze()  # as a fresh command's process: nothing frozen yet
	monkeypatch.setattr(_startup, "_seen_frozen", False)  # nor seen so by an earlier test
	startup = StartupGC()
	try:
		assert not gc.isenabled()
		startup.resume()
		assert gc.isenabled()
		assert gc.get_freeze_count() > 0
		frozen = gc.get_freeze_count()
		startup.resume()  # once: nothing more is frozen (fewer, if some were freed meanwhile)
		assert gc.get_freeze_count() <= frozen
	finally:
		startup.close()
	assert gc.isenabled()
	assert gc.get_freeze_count() == 0
	_freeze_again()


def test_a_process_seen_holding_frozen_objects_is_not_walked_again(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""Seen once holding objects it froze, the process is not asked again at each command.

	Python 3.11 counts frozen objects by walking them all: 24 ms at each in-process command of
	a process that froze a large heap (this test process: conftest freezes after collection).
	"""
	import gc

	from openmolt_core import _startup
	from openmolt_core._startup import StartupGC

	monkeypatch.setattr(_startup, "_seen_frozen", False)
	gc.freeze()
	asked: list[int] = []
	count = gc.get_freeze_count

	def counted() -> int:
		asked.append(count())
		return asked[-1]

	monkeypatch.setattr(gc, "get_freeze_count", counted)
	for _ in range(3):
		startup = StartupGC()
		assert gc.isenabled()  # never paused: the process's frozen objects stay its own
		startup.resume()
		startup.close()
	assert len(asked) == 1 and asked[0] > 0
	assert count() > 0  # and left frozen


def test_a_pause_inside_another_does_not_take_its_freeze_for_the_process(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""A command run inside another's start-up (its freeze in place) does not stop later pauses."""
	import gc

	from openmolt_core import _startup
	from openmolt_core._startup import StartupGC

	gc.unfreeze()
	monkeypatch.setattr(_startup, "_seen_frozen", False)
	outer = StartupGC()
	try:
		outer.resume()  # start-up frozen: the process holds frozen objects, ours
		inner = StartupGC()
		assert gc.isenabled()  # not paused inside another pause
		inner.close()
	finally:
		outer.close()
	later = StartupGC()
	try:
		assert not gc.isenabled()  # paused: the outer freeze was not taken for the process's
	finally:
		later.close()
	assert gc.isenabled() and gc.get_freeze_count() == 0
	_freeze_again()


def test_completion_help_and_a_mistyped_shell_load_no_plugin_command(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt completion --help` (or `completion pwsh`) answers before any plugin is loaded."""
	from openmolt_core.cli import _commands, main

	def loaded() -> None:
		raise AssertionError("the plugins' commands were loaded")

	monkeypatch.setattr(_commands, "registered", loaded)
	with pytest.raises(SystemExit) as exited:
		main(["completion", "--help"])
	assert exited.value.code == 0
	assert "Print a shell completion script" in capsys.readouterr().out
	with pytest.raises(SystemExit) as exited:
		main(["completion", "pwsh"])
	assert exited.value.code == 2
	assert "no such shell 'pwsh'" in capsys.readouterr().err
