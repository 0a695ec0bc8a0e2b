"""Agent files name fallback models and tool search; the checks before a run cover every model."""

import io
import json
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.cli._agentfile import AgentFileError
from openmolt_core.cli._run import check_ready, load
from openmolt_core.errors import ConfigurationError
from openmolt_core.toolsearch import LOAD_TOOL, SEARCH_TOOL


def write(tmp_path: Path, **extra: object) -> Path:
	path = tmp_path / "a.json"
	spec = {"name": "A", "model": "openai:gpt-5-mini", "integrations": ["httpRequest"], **extra}
	path.write_text(json.dumps(spec))
	return path


@pytest.fixture
def only_openai(monkeypatch: pytest.MonkeyPatch) -> None:
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-openai-test")
	for name in ("OPENMOLT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"):
		monkeypatch.delenv(name, raising=False)


def test_fallback_models_and_tool_search_reach_the_agent(tmp_path: Path, only_openai: None) -> None:
	"""fallbackModels become the agent's chain; toolLoading 'search' lists a catalog."""
	path = write(
		tmp_path,
		fallbackModels=["anthropic:claude-sonnet-4-5"],
		toolLoading="search",
		config={"maxResultCharsPerTool": {"httpRequest.*": 4000}},
	)
	agent = load(str(path), env_file=None, verbose=False).agent
	assert agent.models == ["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"]
	first = json.loads(agent._static_prefix() + "}")
	assert [t["tool"] for t in first["tools"]] == [SEARCH_TOOL, LOAD_TOOL]
	assert first["catalog"][0].startswith("httpRequest (")
	assert agent.limits.max_result_chars_per_tool == {"httpRequest.*": 4000}


def test_a_list_of_models_is_the_model_then_its_fallbacks(
	tmp_path: Path, only_openai: None
) -> None:
	""" "model": [...] in a file is what Python accepts; fallbackModels still follow the list."""
	path = write(
		tmp_path,
		model=["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"],
		fallbackModels=["google:gemini-2.5-flash"],
	)
	loaded = load(str(path), env_file=None, verbose=False)
	assert loaded.agent.models == [
		"openai:gpt-5-mini",
		"anthropic:claude-sonnet-4-5",
		"google:gemini-2.5-flash",
	]
	assert loaded.model_id == "openai:gpt-5-mini"
	with pytest.raises(AgentFileError, match="at least one model"):
		load(str(write(tmp_path, model=[])), env_file=None, verbose=False)


def test_the_cli_reports_every_fallback() -> None:
	"""A model:fallback event is one line, even without --verbose."""
	import io

	from openmolt_core.cli._progress import Progress
	from openmolt_core.fallback import ModelFallbackEvent

	out = io.StringIO()
	progress = Progress("plain", out, verbose=False)
	progress.event(
		ModelFallbackEvent(
			agent="A",
			step=2,
			from_model="openai:gpt-5-mini",
			to_model="anthropic:claude-sonnet-4-5",
			reason="server_error",
			error="the server answered 503",
			status_code=503,
		)
	)
	assert out.getvalue().splitlines()[-1] == (
		"openmolt: A step 2: openai:gpt-5-mini failed (server_error 503: the server answered 503); "
		"trying anthropic:claude-sonnet-4-5"
	)


def test_a_fallback_models_missing_key_is_reported_before_the_run(
	tmp_path: Path, only_openai: None
) -> None:
	"""--dry-run lists the fallback provider's missing key; a real run refuses to start."""
	path = write(tmp_path, fallbackModels=["anthropic:claude-sonnet-4-5"])
	loaded = load(str(path), env_file=None, verbose=False)
	problems = check_ready(loaded, strict=False)
	assert problems == [
		"no API key for anthropic: set OPENMOLT_ANTHROPIC_API_KEY (in the environment, a .env "
		"file or `openmolt keys set anthropic`)"
	]
	with pytest.raises(ConfigurationError, match="OPENMOLT_ANTHROPIC_API_KEY"):
		check_ready(loaded, strict=True)


def test_a_wrong_tool_loading_names_its_line(tmp_path: Path) -> None:
	"""toolLoading takes 'all', 'search' or 'auto'."""
	path = write(tmp_path, toolLoading="lazy")
	with pytest.raises(AgentFileError, match="toolLoading") as caught:
		load(str(path), env_file=None, verbose=False)
	assert "search" in str(caught.value)


def test_a_dry_run_shows_the_models_and_that_the_agent_searches(
	tmp_path: Path, only_openai: None
) -> None:
	"""--dry-run --json names each model and the loading; its first message is the catalog's."""
	from openmolt_core.cli._info import dry_run

	path = write(tmp_path, fallbackModels=["anthropic:claude-sonnet-4-5"], toolLoading="search")
	loaded = load(str(path), env_file=None, verbose=False)
	out = io.StringIO()
	dry_run(loaded.agent, loaded.model_id, "hi", out, as_json=True)
	data = json.loads(out.getvalue())
	assert data["models"] == ["openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"]
	assert data["tool_loading"] == "search"
	assert '"catalog":' in data["first_message"]
	text = io.StringIO()
	dry_run(loaded.agent, loaded.model_id, "hi", text, as_json=False)
	assert "finds in its catalog and loads" in text.getvalue()
	assert "openai:gpt-5-mini, anthropic:claude-sonnet-4-5" in text.getvalue()


class _Terminal(io.StringIO):
	"""A text stream that says it is a terminal."""

	def isatty(self) -> bool:
		return True


def test_a_dry_run_on_a_terminal_indents_the_first_message(
	tmp_path: Path, only_openai: None
) -> None:
	"""On a terminal the first message is indented JSON (one line of every tool's schema is
	unreadable there); a pipe gets it as it is sent."""
	from openmolt_core.cli._info import dry_run

	path = write(tmp_path, toolLoading="all")
	loaded = load(str(path), env_file=None, verbose=False)
	piped, shown = io.StringIO(), _Terminal()
	dry_run(loaded.agent, loaded.model_id, "hi", piped, as_json=False)
	dry_run(loaded.agent, loaded.model_id, "hi", shown, as_json=False)
	sent = piped.getvalue().split("=== first message ===\n")[1].split("\n\n")[0]
	assert "\n" not in sent and json.loads(sent)["input"] == "hi"
	title = "=== first message (indented here; sent as one line) ===\n"
	block = shown.getvalue().split(title)[1].split("\n\n")[0]
	assert block == json.dumps(json.loads(sent), indent=2, ensure_ascii=False)
	assert max(len(line) for line in block.splitlines()) < max(200, len(sent) // 2)


FALLBACK_PY = """
from openmolt import OpenMolt

om = OpenMolt(llm_providers={{"{provider}": {{"base_url": "{url}", "max_retries": 0}}}})
agent = om.create_agent(
    name="Greeter",
    model=["{provider}:broken", "{provider}:greet"],
    instructions="Greet the person named in the input.",
)
input = "Ada"
"""


@pytest.mark.parametrize("form", ["list", "fallbackModels", "python"])
@pytest.mark.parametrize("flags", [[], ["--verbose"], ["--json"]])
def test_the_command_reports_a_fallback_of_a_real_run(
	tmp_path: Path, server: Any, cli: Any, form: str, flags: list[str]
) -> None:
	"""The first model answers 500: the run goes on with the next, and stderr says so."""
	provider = cli.PROVIDER
	if form == "python":
		path = tmp_path / "agent.py"
		path.write_text(FALLBACK_PY.format(provider=provider, url=server.url), encoding="utf-8")
	elif form == "list":
		path = cli.agent_file(tmp_path, server, model=[f"{provider}:broken", f"{provider}:greet"])
	else:
		path = cli.agent_file(tmp_path, server, "broken", fallbackModels=[f"{provider}:greet"])
	done = cli.openmolt(str(path), *flags, cwd=tmp_path)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout)["status"] == "success"
	if flags == ["--json"]:
		events = [json.loads(line) for line in done.stderr.splitlines()]
		(fell,) = [e for e in events if e["event"] == "model:fallback"]
		assert (
			fell["from_model"] == f"{provider}:broken" and fell["to_model"] == f"{provider}:greet"
		)
		assert fell["reason"] == "server_error" and fell["status_code"] == 500
	else:
		(line,) = [line for line in done.stderr.splitlines() if "trying" in line]
		assert line.startswith(
			f"openmolt: Greeter step 1: {provider}:broken failed (server_error 500"
		)
		assert line.endswith(f"; trying {provider}:greet")
