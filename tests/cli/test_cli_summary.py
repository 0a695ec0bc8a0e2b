"""The result a person reads on a terminal, and warnings in the command's own voice."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from openmolt_core.cli import _show_warning
from openmolt_core.cli._summary import summary
from openmolt_core.llm import Usage
from openmolt_core.result import RunResult, RunState
from openmolt_core.scheduler import ScheduleWarning
from openmolt_core.taint import LethalTrifectaWarning


def _result(**fields: object) -> RunResult:
	state = RunState()
	state.run_id = "run-1"
	base: dict[str, object] = {
		"output": {"greeting": "Hello, Zoë", "items": ["a", "b"], "note": "two\nlines"},
		"status": "success",
		"human_message": "I greeted Zoë.",
		"plan": [],
		"steps": 2,
		"usage": Usage(input_tokens=1200, output_tokens=34, cost_usd=0.0012),
		"state": state,
	}
	base.update(fields)
	return RunResult(**base)  # type: ignore[arg-type]


def test_the_summary_puts_the_status_message_and_output_first() -> None:
	"""Status, steps, tokens and cost on one line; the message and output readable, non-ASCII as is."""
	text = summary(_result(), store=Path("/tmp/runs.db"))
	lines = text.splitlines()
	assert lines[0] == "success · 2 steps · 1,234 tokens · $0.0012"  # the status as --json says it
	assert "message:\n  I greeted Zoë." in text
	assert "  greeting: Hello, Zoë" in lines
	assert "  items:" in lines and "    - a" in lines
	assert "  note: |" in lines and "    lines" in lines
	assert lines[-1].startswith("run run-1 (recorded in /tmp/runs.db; `openmolt logs run-1` shows")
	assert "{" not in text  # no JSON dump


def test_a_failed_run_says_why() -> None:
	"""The error is the second line; an empty output is left out."""
	text = summary(_result(status="limit_reached", error="max_steps (2) reached", output=None))
	assert text.splitlines()[:2] == [
		"limit_reached (stopped at a limit) · 2 steps · 1,234 tokens · $0.0012",
		"error: max_steps (2) reached",
	]
	assert "output:" not in text


def test_a_run_without_a_price_says_its_cost_is_unknown() -> None:
	"""A local model's run has tokens but no list price: the cost is said unknown, not left out."""
	text = summary(_result(usage=Usage(input_tokens=100, output_tokens=20)))
	assert text.splitlines()[0] == "success · 2 steps · 120 tokens · cost unknown"
	nothing = summary(_result(status="error", usage=Usage(), steps=0, output=None))
	assert nothing.splitlines()[0] == "error (the model provider failed) · 0 steps · 0 tokens"


def test_a_run_priced_in_part_says_its_cost_is_a_lower_bound() -> None:
	"""Some calls without a price: the summary and `openmolt logs` say `$0.2500+ (1 call unpriced)`."""
	from openmolt_core.cli._logs import _cost

	usage = Usage(input_tokens=100, output_tokens=20, cost_usd=0.25, calls=3, unpriced_calls=1)
	text = summary(_result(usage=usage))
	assert text.splitlines()[0] == "success · 2 steps · 120 tokens · $0.2500+ (1 call unpriced)"
	assert _cost(usage.to_dict()) == "120 tokens, $0.2500+ (1 call unpriced)"
	none_priced = Usage(input_tokens=100, output_tokens=20, calls=2, unpriced_calls=2)
	assert summary(_result(usage=none_priced)).splitlines()[0].endswith("· cost unknown")


def test_warnings_are_one_line_with_advice_for_agent_files(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""No file path or source line; TaintPolicy(warn=False) becomes the agent file's key."""
	message = LethalTrifectaWarning(
		"agent 'a' combines private data (x), untrusted content (y) and an outbound channel (z):"
		" content someone else wrote could make it send private data out; its outbound calls"
		" after untrusted content wait for approval. See docs/guides/safety.md;"
		" TaintPolicy(warn=False) silences this"
	)
	_show_warning(message, LethalTrifectaWarning, "/x/openmolt_core/taint.py", 338)
	err = capsys.readouterr().err
	assert err.count("\n") == 1
	assert err.startswith("openmolt: warning: agent 'a' combines")
	assert '"taintPolicy": {"warn": false} in the agent file silences this' in err
	assert "taint.py" not in err and "TaintPolicy(" not in err
	_show_warning("never ran", ScheduleWarning, "/x/scheduler.py", 87)
	assert capsys.readouterr().err == ""


def test_a_plugin_conflict_is_said_without_python_advice(
	capsys: pytest.CaptureFixture[str],
) -> None:
	"""Two plugins with one id: the command says to uninstall one, not to call OpenMolt(...)."""
	from openmolt_core.plugins import PluginConflictWarning, _conflict

	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		_conflict("integration", "weather", "openmolt-weather", "weather-fork")
	warning = caught[0]
	_show_warning(warning.message, PluginConflictWarning, warning.filename, warning.lineno)
	err = capsys.readouterr().err
	assert "uninstall one of them)" in err
	assert "OpenMolt(" not in err and "entry_points" not in err


def test_the_trifecta_advice_the_cli_rewrites_is_still_what_the_core_says() -> None:
	"""If the core's wording changes, the CLI's rewrite must follow it (one test, not a silent miss)."""
	from openmolt_core.cli import _FILE_ADVICE
	from openmolt_core.taint import TaintPolicy, warn_trifecta

	with warnings.catch_warnings(record=True) as caught:
		warnings.simplefilter("always")
		warn_trifecta("a", {"private": ["p"], "untrusted": ["u"], "outbound": ["o"]}, TaintPolicy())
	text = str(caught[0].message)
	assert any(python in text for python in _FILE_ADVICE)


@pytest.mark.anyio
@pytest.mark.allow_model_requests  # to 127.0.0.1, where nothing listens
async def test_an_error_said_on_the_terminal_is_not_repeated_by_the_summary(
	tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""Nothing listens at a local server's URL: one line says so; the summary does not again."""
	import io
	import json
	import socket

	from openmolt_core.cli._progress import Progress
	from openmolt_core.cli._run import load, run_once

	with socket.socket() as sock:  # a port nothing listens on
		sock.bind(("127.0.0.1", 0))
		port = sock.getsockname()[1]
	path = tmp_path / "agent.json"
	url = f"http://127.0.0.1:{port}/v1"
	local = {"provider": "openai", "baseUrl": url, "apiMode": "chat", "maxRetries": 0}
	path.write_text(
		json.dumps(
			{"name": "G", "model": "local:m", "instructions": "x", "llmProviders": {"local": local}}
		)
	)
	monkeypatch.chdir(tmp_path)
	loaded = load(str(path), env_file=None, verbose=False)
	err = io.StringIO()
	await run_once(loaded, "hi", Progress("plain", err), readable=True)
	out = capsys.readouterr().out
	terminal = err.getvalue() + out  # both reach the same terminal
	assert terminal.count("nothing listens") == 1, terminal
	assert out.startswith("error (the model provider failed) · 0 steps")


def test_listing_schedules_does_not_warn_as_a_run_does(tmp_path, cli) -> None:
	"""`openmolt schedules` of an agent holding the trifecta: no warning; a --dry-run says it once."""
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "Mailer",
				"model": "openai:gpt-5-mini",
				"instructions": "Sort mail.",
				"integrations": ["gmail"],
				"schedules": [{"type": "daily", "hour": 9, "minute": 0}],
			}
		)
	)
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-x", OPENMOLT_GMAIL_ACCESS_TOKEN="t")
	listed = cli.openmolt("schedules", str(path), cwd=tmp_path, env=env)
	assert listed.returncode == 0, listed.stderr
	assert "daily at 09:00" in listed.stdout
	assert listed.stderr == ""
	previewed = cli.openmolt(str(path), "--dry-run", "--once", cwd=tmp_path, env=env)
	assert previewed.returncode == 0, previewed.stderr
	assert previewed.stderr.count("combines private data") == 1


def test_a_run_stopped_before_it_starts_does_not_warn_of_the_trifecta(tmp_path, cli) -> None:
	"""A missing key stops the run with its one line; the run's warning waits for a real run."""
	path = tmp_path / "agent.json"
	path.write_text(
		json.dumps(
			{
				"name": "Mailer",
				"model": "openai:gpt-5-mini",
				"instructions": "Sort mail.",
				"integrations": ["gmail"],
			}
		)
	)
	env = cli.clean_env(OPENMOLT_OPENAI_API_KEY="sk-x")
	stopped = cli.openmolt(str(path), cwd=tmp_path, env=env)
	assert stopped.returncode == 2
	assert stopped.stderr.startswith("openmolt: gmail needs config")
	assert "combines private data" not in stopped.stderr


def test_a_huge_multi_line_error_is_summarised_in_a_few_bounded_lines() -> None:
	"""An error of 3,000 long lines: its first lines, each bounded, and where the whole is."""
	error = "ToolError: the page said\n" + "\n".join("z" * 900 for _ in range(3000))
	text = summary(_result(status="error", error=error, output=None))
	lines = text.split("\n\n")[0].splitlines()
	assert lines[1] == "error: ToolError: the page said"
	assert lines[2].startswith("  zzz") and lines[2].endswith("…") and len(lines[2]) <= 302
	assert len(lines) <= 25 and "more lines" in lines[-1] and "--json" in lines[-1]
	assert len(text) < 4000


@pytest.mark.anyio
async def test_scheduled_runs_are_summaries_on_a_terminal_and_json_lines_in_a_pipe(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt agent.json` serving schedules prints each record as a summary on a terminal
	(the schedule, its due time, then the run's status, output and id), a JSON line otherwise."""
	import io

	import anyio

	from openmolt import OpenMolt
	from openmolt_core.cli import _run
	from openmolt_core.cli._progress import Progress
	from openmolt_core.testing import ScriptedModel, finish

	monkeypatch.setenv("OPENMOLT_SCHEDULE_STORE", "off")
	for readable in (True, False):
		model = ScriptedModel([finish(result="tick")] * 20)
		agent = OpenMolt(entry_points=False).create_agent(name="Ticker", model=model)
		loaded = _run.Loaded(
			agent, "scripted", None, schedules=[{"type": "interval", "value": 0.1}]
		)
		with anyio.move_on_after(0.35):
			await _run.serve(
				loaded, None, Progress("plain", io.StringIO()), on_stop="finish", readable=readable
			)
		out = capsys.readouterr().out
		first = out.splitlines()[0]
		if readable:
			assert first.startswith("Ticker: schedule ticker-") and ", due 20" in first, out
			assert first.endswith(":"), out  # the run's summary follows
			assert "\nsuccess · 1 step" in out and "output:\n  result: tick\n" in out, out
			assert '"schedule_id"' not in out
		else:
			assert json.loads(first)["status"] == "success" and "·" not in out


def test_a_record_without_a_result_is_one_line_with_its_note() -> None:
	"""A skipped due time prints its schedule, due time, status and why, on a terminal."""
	import io
	from contextlib import redirect_stdout
	from datetime import UTC, datetime

	from openmolt_core._history import RunRecord
	from openmolt_core.cli import _run
	from openmolt_core.schedule import parse_schedule

	due = datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
	record = RunRecord(
		"digest-1", "Digest", due, due, due, "skipped", note="overlap: a run goes on"
	)
	spec = {"type": "daily", "hour": 9, "minute": 0, "timeZone": "Europe/Paris"}
	out = io.StringIO()
	with redirect_stdout(out):
		_run._print_record(record, None, None, parse_schedule(spec))  # type: ignore[arg-type]
	assert out.getvalue() == (
		"Digest: schedule digest-1, due 2026-12-07 09:00:00 CET: skipped\n"
		"note: overlap: a run goes on\n\n"
	)
