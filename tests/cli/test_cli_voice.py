"""Every warning and provider error the command shows is said as an agent file (or -m) takes it."""

from __future__ import annotations

import importlib
import json
import socket
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from openmolt_core.cli._voice import FILE_ADVICE, for_the_command, show_warning
from openmolt_core.llm import ModelConfig, ModelRequest
from openmolt_core.taint import TaintPolicy, warn_trifecta

PYTHON_ONLY = (
	"TaintPolicy(",
	"OpenMolt(",
	"llm_providers",
	"@tool(",
	"FunctionTool(",
	"Integration(labels",
	"max_output_tokens",
	"top_p",
	"api_mode",
	"base_url",
	"is False",
	"is True",
)
"""Spellings only Python code takes: no message of the command to an agent file holds one."""

MODULES = (
	"openmolt_core.taint",
	"openmolt_core.plugins",
	"openmolt_core.scheduler",
	"openmolt_providers._common",
)
"""The modules that define OpenMolt's warning classes (a test checks the list is whole)."""


def _trifecta() -> list[warnings.WarningMessage]:
	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		held = {"private": ["p"], "untrusted": ["u"], "outbound": ["o", "local.lookup"]}
		warn_trifecta("a", held, TaintPolicy(), ["local.lookup"])
		warn_trifecta("a", held, TaintPolicy(on_outbound="allow"))
	return caught


def _conflict() -> list[warnings.WarningMessage]:
	from openmolt_core.plugins import _conflict

	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		_conflict("integration", "weather", "openmolt-weather", "weather-fork")
	return caught


def _model_config() -> list[warnings.WarningMessage]:
	"""The settings warnings of each built-in provider, from the bodies they build."""
	from openmolt_providers.anthropic import AnthropicProvider
	from openmolt_providers.openai import OpenAIProvider

	def build(provider: object, model: str, **config: object) -> None:
		request = ModelRequest(
			model=model, system="s", messages=[], config=ModelConfig.model_validate(config)
		)
		provider.build(request)  # type: ignore[attr-defined]

	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		claude = AnthropicProvider({"api_key": "k"}, lambda: None)  # type: ignore[arg-type,return-value]
		build(claude, "claude-sonnet-4-5", thinking="high", max_output_tokens=1000)
		build(claude, "claude-sonnet-4-5", temperature=0.3, top_p=0.5)
		gpt = OpenAIProvider({"api_key": "k"}, lambda: None)  # type: ignore[arg-type,return-value]
		build(gpt, "gpt-5-mini", stop=["x"], top_p=0.5)
		chat = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, lambda: None)  # type: ignore[arg-type,return-value]
		build(chat, "gpt-4o", search=True)
	return caught


def _held() -> list[warnings.WarningMessage]:
	"""Two instances serving one schedule on one store: the second says the first fires it."""
	import tempfile
	from datetime import UTC, datetime
	from pathlib import Path

	import anyio

	from openmolt import OpenMolt
	from openmolt_core.testing import FakeClock, ScriptedModel, finish

	async def serve_twice(store: Path) -> None:
		clock = FakeClock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
		instances = [
			OpenMolt(entry_points=False, clock=clock, schedule_store=store) for _ in range(2)
		]
		for om in instances:
			agent = om.create_agent(name="Digest", model=ScriptedModel([finish("x")]))
			agent.schedule({"type": "interval", "value": 60})

		async def until(condition: Callable[[], bool]) -> None:
			# The store works in threads: poll briefly for what they do.
			with anyio.fail_after(5):
				for _ in range(1000):
					if condition():
						return
					await anyio.sleep(0.005)

		async with instances[0]:
			await until(lambda: clock.sleeping >= 1)
			async with instances[1]:
				await until(lambda: instances[1].schedules[0].held_by is not None)

	with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		anyio.run(serve_twice, Path(folder) / "schedules.db")
	return [w for w in caught if w.category.__name__ == "ScheduleHeldWarning"]


def _store_failed() -> list[warnings.WarningMessage]:
	"""A schedule whose store cannot be used (its folder is a file): said once, with the fix."""
	import tempfile
	from datetime import UTC, datetime
	from pathlib import Path

	import anyio

	from openmolt import OpenMolt
	from openmolt_core.testing import FakeClock, ScriptedModel, finish

	async def serve(store: Path) -> None:
		clock = FakeClock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
		om = OpenMolt(entry_points=False, clock=clock, schedule_store=store)
		agent = om.create_agent(name="Digest", model=ScriptedModel([finish("x")]))
		agent.schedule({"type": "interval", "value": 60})
		async with om:
			with anyio.fail_after(5):
				for _ in range(1000):
					if clock.sleeping >= 1:
						return
					await anyio.sleep(0.005)

	with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		blocker = Path(folder) / "blocker"
		blocker.write_text("a file where a folder should be\n")
		anyio.run(serve, blocker / "schedules.db")
	return [w for w in caught if w.category.__name__ == "ScheduleStoreWarning"]


CASES: dict[str, Callable[[], list[warnings.WarningMessage]]] = {
	"LethalTrifectaWarning": _trifecta,
	"PluginConflictWarning": _conflict,
	"ModelConfigWarning": _model_config,
	"ScheduleHeldWarning": _held,
	"ScheduleStoreWarning": _store_failed,
}
SILENT = {"ScheduleWarning", "NotStreamingWarning"}
"""Warnings the command does not show (it serves the schedules; --verbose says the other)."""


def test_every_warning_class_of_openmolt_has_a_case_here() -> None:
	"""A new warning class fails this test until its messages are checked below."""
	found = set()
	for name in MODULES:
		module = importlib.import_module(name)
		for value in vars(module).values():
			if isinstance(value, type) and issubclass(value, Warning):
				if value.__module__ == name:
					found.add(value.__name__)
	assert found == {*CASES, *SILENT}


@pytest.mark.parametrize("category", sorted(CASES))
@pytest.mark.parametrize("mode", ["file", "prompt"])
def test_every_warning_is_one_line_without_python_advice(
	category: str, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
	"""Each of the package's warnings: `openmolt: warning: ...`, one line, no Python spelling."""
	caught = CASES[category]()
	assert caught and all(w.category.__name__ == category for w in caught)
	for warning in caught:
		show_warning(
			warning.message,
			warning.category,
			warning.filename,
			warning.lineno,
			prompt=mode == "prompt",
		)
		err = capsys.readouterr().err
		assert err.startswith("openmolt: warning: ") and err.count("\n") == 1, err
		assert warning.filename not in err
		# A -m run's --tool is a Python function: its labels are declared in Python.
		allowed = {"@tool("} if mode == "prompt" else set()
		assert not [p for p in PYTHON_ONLY if p in err and p not in allowed], err


def test_the_advice_for_agent_files_names_the_files_keys(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""The rewrites say what to write: the file's taintPolicy, an MCP server's labels, camelCase."""
	for warning in [*_trifecta(), *_model_config()]:
		show_warning(warning.message, warning.category, warning.filename, warning.lineno)
	err = capsys.readouterr().err
	assert '"taintPolicy": {"warn": false} in the agent file silences this' in err
	assert '("taintPolicy": {"onOutbound": "allow"})' in err
	assert 'an mcpServers entry\'s "labels"' in err
	assert "needs maxOutputTokens above 1024" in err
	assert "dropped (apiMode 'chat' has)" in err
	for warning in _trifecta():
		show_warning(
			warning.message, warning.category, warning.filename, warning.lineno, prompt=True
		)
	assert "a --tool function: @tool(labels=[...])" in capsys.readouterr().err


def test_an_agent_py_keeps_python_advice(capsys: pytest.CaptureFixture[str]) -> None:
	"""An agent.py is Python: its warnings keep the Python spelling."""
	warning = _trifecta()[0]
	show_warning(warning.message, warning.category, "x.py", 1, python=True)
	assert "TaintPolicy(warn=False) silences this" in capsys.readouterr().err


def test_each_rewrite_still_finds_its_python_text() -> None:
	"""If the core's wording changes, its rewrite must follow it: every key is found somewhere."""
	texts = " ".join(str(w.message) for w in [*_trifecta(), *_conflict()])
	texts += " " + _missing_integration()
	assert [python for python in FILE_ADVICE if python not in texts] == []


def _missing_integration() -> str:
	from openmolt_core._hints import missing_integration

	return missing_integration("nosuchthing", available=["slack"])


@pytest.mark.parametrize(
	("text", "file", "prompt"),
	[
		(
			"fix llm_providers['ollama']['base_url'] (or OPENMOLT_OLLAMA_BASE_URL) (docs)",
			"fix llmProviders.ollama.baseUrl in the agent file (or OPENMOLT_OLLAMA_BASE_URL) (docs)",
			"fix OPENMOLT_OLLAMA_BASE_URL (docs)",
		),
		(
			"set llm_providers['openai']['api_mode'] = 'chat' (x)",
			'set llmProviders.openai.apiMode to "chat" in the agent file (x)',
			'set llmProviders.openai.apiMode to "chat" in an agent file (a -m run has none: '
			"write one) (x)",
		),
		(
			"set a valid key in OPENMOLT_OPENAI_API_KEY or llm_providers['openai']['api_key']",
			"set a valid key in OPENMOLT_OPENAI_API_KEY or llmProviders.openai.apiKey in the "
			"agent file",
			"set a valid key in OPENMOLT_OPENAI_API_KEY",
		),
	],
)
def test_a_provider_setting_is_named_as_the_command_sets_it(
	text: str, file: str, prompt: str
) -> None:
	"""llm_providers['x']['key']: the agent file's llmProviders.x.key, or with -m its variable."""
	assert for_the_command(text) == file
	assert for_the_command(text, prompt=True) == prompt


def _nothing_listens() -> str:
	"""A base URL on 127.0.0.1 at a port nothing listens on."""
	with socket.socket() as sock:
		sock.bind(("127.0.0.1", 0))
		return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@pytest.mark.allow_model_requests  # to 127.0.0.1, where nothing listens
@pytest.mark.parametrize("prompt", [False, True])
def test_a_server_that_is_down_is_said_once_as_the_command_sets_its_url(
	tmp_path: Path, cli, prompt: bool
) -> None:
	"""Nothing listens: one line on the terminal, naming the setting an agent file or -m takes."""
	url = _nothing_listens()
	if prompt:
		env = cli.clean_env(OPENMOLT_OPENAI_BASE_URL=url)
		args = ["-m", "openai:llama", "hi"]
	else:
		local = {"provider": "openai", "baseUrl": url, "apiMode": "chat"}
		agent = {"name": "G", "model": "local:m", "llmProviders": {"local": local}}
		(tmp_path / "agent.json").write_text(json.dumps(agent))
		env, args = cli.clean_env(), ["agent.json", "--input", "hi"]
	done = cli.openmolt(*args, cwd=tmp_path, env=env, tty=True)
	assert done.returncode == 5, done.stderr
	terminal = done.stderr + done.stdout
	assert terminal.count("nothing listens") == 1, terminal
	assert "llm_providers" not in terminal and "base_url" not in terminal
	said = "OPENMOLT_OPENAI_BASE_URL" if prompt else "llmProviders.local.baseUrl in the agent file"
	assert said in done.stderr


@pytest.mark.allow_model_requests  # to 127.0.0.1, where nothing listens
@pytest.mark.parametrize("events", [False, True], ids=["piped", "json-events"])
def test_the_json_a_program_reads_says_the_error_as_the_command_sets_it(
	tmp_path: Path, cli, events: bool
) -> None:
	"""Piped or --json: the result's error and the events' messages name the agent file's setting."""
	url = _nothing_listens()
	local = {"provider": "openai", "baseUrl": url, "apiMode": "chat"}
	agent = {"name": "G", "model": "local:m", "llmProviders": {"local": local}}
	(tmp_path / "agent.json").write_text(json.dumps(agent))
	args = ["agent.json", "--input", "hi", *(["--json"] if events else [])]
	done = cli.openmolt(*args, cwd=tmp_path, env=cli.clean_env())
	assert done.returncode == 5, done.stderr
	result = json.loads(done.stdout)
	assert "nothing listens" in result["error"]
	assert "llmProviders.local.baseUrl in the agent file" in result["error"]
	said = [done.stdout, done.stderr]
	if events:
		lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
		said = [done.stdout, *(str(line.get("message", "")) for line in lines)]
		assert any("nothing listens" in str(line.get("message")) for line in lines), lines
	for text in said:
		assert not [word for word in PYTHON_ONLY if word in text], text


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize(
	("settings", "said"),
	[
		({"maxRetries": -1}, "maxRetries: Input should be greater than or equal to 0"),
		({"apiMode": "chatt"}, "apiMode: Input should be 'responses' or 'chat'"),
		({"bseUrl": "http://x"}, "unknown setting 'bseUrl'; did you mean 'baseUrl'?"),
	],
)
def test_a_wrong_provider_setting_is_said_once_as_the_agent_file_spells_it(
	tmp_path: Path, cli, settings: dict[str, object], said: str, dry_run: bool
) -> None:
	"""llmProviders.openai.maxRetries: not llm_providers['openai'] nor max_retries, and not twice."""
	agent = {"name": "G", "model": "openai:gpt-5-mini", "llmProviders": {"openai": settings}}
	(tmp_path / "agent.json").write_text(json.dumps(agent))
	done = cli.openmolt("agent.json", *(["--dry-run"] if dry_run else []), cwd=tmp_path)
	assert done.returncode == 2
	assert done.stderr == f"openmolt: llmProviders.openai: {said}\n"


@pytest.mark.allow_model_requests  # to 127.0.0.1, where nothing listens
def test_the_run_store_records_the_error_as_the_command_said_it(tmp_path: Path, cli) -> None:
	"""`openmolt logs RUN_ID` said "fix llm_providers['local']['base_url']" for a run whose own
	output said "llmProviders.local.baseUrl in the agent file": the record kept Python's advice."""
	url = _nothing_listens()
	local = {"provider": "openai", "baseUrl": url, "apiMode": "chat"}
	agent = {"name": "G", "model": "local:m", "llmProviders": {"local": local}}
	(tmp_path / "agent.json").write_text(json.dumps(agent))
	env = cli.clean_env(OPENMOLT_RUN_STORE=str(tmp_path / "runs.db"))
	done = cli.openmolt("agent.json", "--input", "hi", cwd=tmp_path, env=env)
	assert done.returncode == 5, done.stderr
	run_id = json.loads(done.stdout)["run_id"]
	shown = cli.openmolt("logs", run_id, "--json", cwd=tmp_path, env=env)
	assert shown.returncode == 0, shown.stderr
	record = json.loads(shown.stdout)
	said = [record["run"]["error"] if "run" in record else record["error"]]
	said += [e["data"]["message"] for e in record["events"] if e["name"] == "error"]
	assert len(said) == 2, record
	for text in said:
		assert "llmProviders.local.baseUrl in the agent file" in text, text
		assert not [word for word in PYTHON_ONLY if word in text], text
