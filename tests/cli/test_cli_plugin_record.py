"""An id whose third-party distribution was uninstalled since is told which one provided it."""

import json

from openmolt_core.cli._ecosystem import plugin_record_path


def _record(tmp_path, cli, *args: str) -> dict:
	env = cli.clean_env(XDG_STATE_HOME=str(tmp_path / "state"))
	done = cli.openmolt(*args, cwd=tmp_path, env=env)
	assert done.returncode == 0, done.stderr
	path = tmp_path / "state" / "openmolt" / "plugins.json"
	assert (path.stat().st_mode & 0o777) == 0o600
	return json.loads(path.read_text())


def test_listing_and_running_remember_third_party_plugins_only(tmp_path, server, cli) -> None:
	"""`openmolt tools` records every third-party plugin; a run records those its agent used."""
	record = _record(tmp_path, cli, "tools", "--json")
	assert record["integrations:weather"]["distribution"] == "openmolt-weather"
	assert record["integrations:weather"]["version"]
	assert not any(key.endswith((":notion", ":openai")) for key in record)  # built-ins: extras
	(tmp_path / "state" / "openmolt" / "plugins.json").unlink()
	path = cli.agent_file(tmp_path, server, integrations=["weather"])
	record = _record(tmp_path, cli, str(path), "--dry-run")
	assert set(record) == {"integrations:weather"}


def test_an_uninstalled_distribution_is_named_with_the_command_that_installs_it(
	tmp_path, server, cli
) -> None:
	"""The record names openmolt-gone for `gone`: the error says so; an installed one says nothing."""
	env = cli.clean_env(XDG_STATE_HOME=str(tmp_path / "state"), **{cli.KEY_VAR: "k"})
	path = tmp_path / "state" / "openmolt" / "plugins.json"
	assert plugin_record_path() != path  # the record follows XDG_STATE_HOME
	path.parent.mkdir(parents=True)
	path.write_text(
		json.dumps(
			{
				"integrations:gone": {"distribution": "openmolt-gone", "version": "1.2.0"},
				"integrations:moved": {"distribution": "openmolt-weather", "version": "0.1.0"},
			}
		)
	)
	agent = cli.agent_file(tmp_path, server, integrations=["gone"])
	done = cli.openmolt(str(agent), cwd=tmp_path, env=env)
	assert done.returncode == 2
	hint = done.stderr.splitlines()[-1]
	assert hint.startswith(
		"openmolt: integrations:gone was provided by openmolt-gone 1.2.0, which is no longer "
		"installed; run: "
	)
	assert "'openmolt-gone'" in hint
	assert server.requests == []
	agent = cli.agent_file(tmp_path, server, integrations=["moved"])
	done = cli.openmolt(str(agent), cwd=tmp_path, env=env)
	assert done.returncode == 2 and "integrations:moved" in done.stderr
	assert "was provided by" not in done.stderr  # openmolt-weather is installed: not the cause
