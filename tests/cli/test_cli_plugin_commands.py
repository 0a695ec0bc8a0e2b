"""Subcommands plugins register (register_commands), and the public agent-file API they use."""

import ast
from pathlib import Path

import pytest

from openmolt_core import agentfile
from openmolt_core.cli import _commands, main

ROOT = Path(__file__).resolve().parents[2]


def test_a_plugin_command_runs_with_the_arguments_after_its_name(
	capsys: pytest.CaptureFixture[str],
) -> None:
	assert main(["weather-report", "Lyon", "Oslo"]) == 0
	assert capsys.readouterr().out == "sunny in Lyon, Oslo\n"
	assert main(["weather-report"]) == 3  # its own exit code
	found = _commands.registered()["weather-report"]
	assert (found.distribution, found.summary) == (
		"openmolt-weather",
		"print a made-up weather report",
	)


def test_openmolt_s_own_plugin_commands_are_registered_by_their_distributions() -> None:
	found = _commands.registered()
	owners = {name: found[name].distribution for name in _commands.PLUGIN_COMMANDS}
	assert owners == {
		"serve": "openmolt-serve",
		"ui": "openmolt-ui",
		"worker": "openmolt-dbos",
		"runs": "openmolt-dbos",
		"answer": "openmolt-dbos",
		"mcp": "openmolt-mcp",
		"eval": "openmolt-evals",
	}


def test_a_missing_plugin_command_names_its_extra(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	monkeypatch.setattr(_commands, "_found", {})  # as if openmolt-serve were not installed
	assert main(["serve", "agent.json"]) == 2
	err = capsys.readouterr().err
	assert "openmolt serve needs the serve extension, which is not installed; run: " in err


def test_a_misspelt_command_is_not_looked_up_as_a_plugin(
	capsys: pytest.CaptureFixture[str],
) -> None:
	assert main(["wroker"]) == 2
	assert "did you mean 'worker'?" in capsys.readouterr().err


def test_the_agent_file_api_is_the_command_s_own_objects() -> None:
	from openmolt_core.cli import _agentfile, _keys, _progress, _run, _ui

	assert agentfile.load is _run.load and agentfile.check_ready is _run.check_ready
	assert agentfile.Loaded is _run.Loaded and agentfile.AgentFileError is _agentfile.AgentFileError
	assert agentfile.read_dotenv is _keys.read_dotenv and agentfile.to_json is _progress.to_json
	assert agentfile.record_runs is _ui.record_runs
	assert sorted(agentfile.__all__) == sorted(agentfile._EXPORTS)


def test_no_sibling_distribution_imports_the_command_s_private_modules() -> None:
	offenders = []
	for path in ROOT.glob("openmolt_*/src/**/*.py"):
		if "openmolt_core" in path.parts:
			continue
		for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
			if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
				"openmolt_core.cli"
			):
				offenders.append(f"{path.relative_to(ROOT)}: from {node.module} import ...")
	assert offenders == []
