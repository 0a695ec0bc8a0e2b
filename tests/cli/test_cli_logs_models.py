"""`openmolt logs` (the recorded runs, searchable and prunable) and `openmolt models`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import OpenMolt
from openmolt_core.cli import main as openmolt_main
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, finish


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))

	async def record() -> None:
		om = OpenMolt(run_store=str(path))
		for word in ("apples", "pears", "plums"):
			agent = om.create_agent(
				name="Fruit", model=ScriptedModel([finish(result=f"about {word}")])
			)
			await agent.run(f"tell me about {word}")

	anyio.run(record)
	return path


def test_logs_lists_the_newest_runs_and_searches_them(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""-n limits, -q searches input and output, --json gives the rows."""
	assert openmolt_main(["logs", "-n", "2"]) == 0
	text = capsys.readouterr().out
	assert text.count("Fruit  success") == 2
	assert "input: tell me about plums" in text and "apples" not in text
	assert openmolt_main(["logs", "-q", "PEARS", "--json"]) == 0
	rows = json.loads(capsys.readouterr().out)
	assert [r["input"] for r in rows] == ["tell me about pears"]
	run_id = rows[0]["run_id"]
	assert openmolt_main(["logs", run_id]) == 0
	one = capsys.readouterr().out
	assert one.startswith(f"run {run_id}: Fruit with")
	events = one.split("events:\n")[1].splitlines()
	assert [line.split()[1] for line in events][-1] == "finish"
	assert "parent_run_id" not in one
	assert openmolt_main(["logs", "no-such-run"]) == 2


def test_a_run_asked_of_an_empty_store_is_not_found_either(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs abc` before any run exits 2 as it does once runs exist; a list is empty."""
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(tmp_path / "runs.db"))
	assert openmolt_main(["logs", "abc"]) == 2
	assert "no run 'abc': no runs recorded yet" in capsys.readouterr().err
	assert openmolt_main(["logs", "--json"]) == 0
	assert capsys.readouterr().out == "[]\n"


def test_logs_filters_that_match_nothing_are_not_an_empty_store(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A mistyped status is refused with the right one; a search without hits says so, not "no runs"."""
	with pytest.raises(SystemExit) as exit:
		openmolt_main(["logs", "--status", "sucess"])
	assert exit.value.code == 2
	assert "no such choice 'sucess'; did you mean 'success'?" in capsys.readouterr().err
	assert openmolt_main(["logs", "--status", "error"]) == 0
	said = capsys.readouterr()
	assert said.out == ""
	assert "no recorded run matches --status 'error'" in said.err
	assert "no runs recorded yet" not in said.err
	# A word where a run id goes: pointed to -q, which finds it.
	assert openmolt_main(["logs", "pears"]) == 2
	assert "`openmolt logs search pears` finds the runs" in capsys.readouterr().err
	assert openmolt_main(["logs", "-q", "pears"]) == 0
	assert "tell me about pears" in capsys.readouterr().out


def test_logs_of_a_mistyped_agent_names_the_agent_that_ran(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""--agent Friut (or fruit): nothing matches, and the agent that ran is offered."""
	for typed in ("Friut", "fruit"):
		assert openmolt_main(["logs", "--agent", typed]) == 0
		said = capsys.readouterr()
		assert said.out == ""
		assert f"--agent {typed!r}; did you mean --agent 'Fruit'?" in said.err, said.err
	assert openmolt_main(["logs", "--agent", "Vegetables"]) == 0
	assert "did you mean" not in capsys.readouterr().err


def test_logs_of_an_agent_s_name_points_to_agent(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs Fruit` (an agent's name where a run id goes) points to --agent 'Fruit'."""
	for typed in ("Fruit", "fruit"):
		assert openmolt_main(["logs", typed]) == 2
		err = capsys.readouterr().err
		assert "`openmolt logs --agent Fruit` lists that agent's runs" in err, err
	assert openmolt_main(["logs", "pears"]) == 2
	assert "--agent" not in capsys.readouterr().err


def test_logs_prune_deletes_old_runs_only(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""--prune DAYS removes runs started before the cut, with their events."""
	import sqlite3

	old = (datetime.now(UTC) - timedelta(days=40)).isoformat()
	with sqlite3.connect(store) as conn:
		conn.execute("UPDATE agent_runs SET started = ? WHERE input LIKE '%apples%'", (old,))
	assert openmolt_main(["logs", "--prune", "30"]) == 0
	assert "removed 1 run older" in capsys.readouterr().out
	left = anyio.run(lambda: RunStore(store).runs(10))
	assert sorted(r.input for r in left) == ["tell me about pears", "tell me about plums"]
	with sqlite3.connect(store) as conn:
		orphans = conn.execute(
			"SELECT COUNT(*) FROM run_events WHERE run_id NOT IN (SELECT run_id FROM agent_runs)"
		).fetchone()[0]
	assert orphans == 0


def test_logs_prune_takes_days_with_a_d(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""``--prune 30d`` is 30 days (it was "invalid float value"); a week count is refused clearly."""
	assert openmolt_main(["logs", "--prune", "30d"]) == 0
	assert "older than 30 days" in capsys.readouterr().out
	with pytest.raises(SystemExit):
		openmolt_main(["logs", "--prune", "3w"])
	assert "'3w' is not a number of days (30, 1.5 or 30d)" in capsys.readouterr().err


def test_logs_with_the_store_off_says_so(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""OPENMOLT_RUN_STORE=off: nothing recorded, and logs says why."""
	monkeypatch.setenv("OPENMOLT_RUN_STORE", "off")
	assert openmolt_main(["logs"]) == 2
	assert "the run store is off" in capsys.readouterr().err


def test_models_lists_prices_from_the_providers(capsys: pytest.CaptureFixture[str]) -> None:
	"""Each row's prices are the provider's own price(model)."""
	assert openmolt_main(["models", "gpt-5-mini", "--provider", "openai", "--json"]) == 0
	rows = json.loads(capsys.readouterr().out)
	row = next(r for r in rows if r["model"] == "openai:gpt-5-mini")
	price = OpenMolt().provider("openai").price("gpt-5-mini")  # type: ignore[attr-defined]
	assert (row["input"], row["cached"], row["output"]) == price[:3]
	assert all("gpt-5-mini" in r["model"] for r in rows)
	assert openmolt_main(["models", "haiku"]) == 0
	text = capsys.readouterr().out
	assert "anthropic:claude-haiku-4-5" in text and "$1" in text


def test_a_filter_that_matches_no_model_says_so(capsys) -> None:
	"""Not an empty table: one line naming what matched nothing."""
	from openmolt_core.cli import main as openmolt_main

	assert openmolt_main(["models", "zzz-no-such"]) == 1
	captured = capsys.readouterr()
	assert captured.out == ""
	assert "no model matches 'zzz-no-such'" in captured.err
	# and so with --json, which prints the empty list (it exited 0: a script saw no difference)
	assert openmolt_main(["models", "zzz-no-such", "--json"]) == 1
	captured = capsys.readouterr()
	assert json.loads(captured.out) == []
	assert "no model matches 'zzz-no-such'" in captured.err  # the exit code's reason, as without


def test_a_mistyped_provider_is_one_error_not_a_row(capsys) -> None:
	"""`models --provider opena`: a near miss named on stderr, no table, exit 2."""
	from openmolt_core.cli import main as openmolt_main

	assert openmolt_main(["models", "--provider", "opena"]) == 2
	captured = capsys.readouterr()
	assert captured.out == ""
	assert captured.err.startswith("openmolt: providers:opena: no such model provider")
	assert "did you mean 'openai'?" in captured.err
	assert "llm_providers=" not in captured.err  # the command's advice, not Python's


def test_logs_takes_a_unique_prefix_of_a_run_id(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs 3f2a` shows the one run whose id starts so; several matches are named."""
	import sqlite3

	with sqlite3.connect(store) as conn:
		ids = [r[0] for r in conn.execute("SELECT run_id FROM agent_runs ORDER BY started")]
		# two runs that share a prefix, one that does not
		conn.execute("UPDATE agent_runs SET run_id = 'abc1' || run_id WHERE run_id = ?", (ids[0],))
		conn.execute("UPDATE agent_runs SET run_id = 'abc2' || run_id WHERE run_id = ?", (ids[1],))
		conn.execute("UPDATE run_events SET run_id = 'abc1' || run_id WHERE run_id = ?", (ids[0],))
	assert openmolt_main(["logs", ids[2][:6]]) == 0
	assert capsys.readouterr().out.startswith(f"run {ids[2]}: Fruit with")
	assert openmolt_main(["logs", "abc1"]) == 0
	one = capsys.readouterr().out
	assert one.startswith(f"run abc1{ids[0]}: Fruit with") and "finish" in one
	assert openmolt_main(["logs", "abc"]) == 2
	err = capsys.readouterr().err
	assert "2 runs in " in err and "start with 'abc'" in err
	assert f"abc1{ids[0]}" in err and f"abc2{ids[1]}" in err and "give more of the id" in err
	assert openmolt_main(["logs", "zzz"]) == 2
	assert "no run 'zzz' in" in capsys.readouterr().err


def test_logs_search_text_is_q_text_and_a_run_id_prefix_still_works(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs search TEXT` (options around it, several words joined) is -q TEXT; a run
	whose id starts with `search` is still found by that prefix alone."""
	import sqlite3

	assert openmolt_main(["logs", "search", "PEARS", "--json"]) == 0
	assert [r["input"] for r in json.loads(capsys.readouterr().out)] == ["tell me about pears"]
	assert openmolt_main(["logs", "search", "-n", "5", "about", "plums"]) == 0
	out = capsys.readouterr().out
	assert "input: tell me about plums" in out and "pears" not in out
	with pytest.raises(SystemExit) as stop:
		openmolt_main(["logs", "search", "pears", "-q", "plums"])
	assert stop.value.code == 2
	assert "give the text once" in capsys.readouterr().err
	with pytest.raises(SystemExit) as stop:
		openmolt_main(["logs", "abc", "def"])
	assert stop.value.code == 2
	assert "give one run id, not 2 words; `openmolt logs search TEXT`" in capsys.readouterr().err
	with sqlite3.connect(store) as conn:
		(first,) = conn.execute("SELECT run_id FROM agent_runs ORDER BY started").fetchone()
		conn.execute("UPDATE agent_runs SET run_id = 'search' || run_id WHERE run_id = ?", (first,))
		conn.execute("UPDATE run_events SET run_id = 'search' || run_id WHERE run_id = ?", (first,))
	conn.close()
	assert openmolt_main(["logs", "search"]) == 0
	assert capsys.readouterr().out.startswith(f"run search{first}: Fruit with")


def test_logs_search_without_a_text_asks_for_the_text(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`openmolt logs search` alone (no run's id starts so) asks for the text, not `search search`."""
	assert openmolt_main(["logs", "search"]) == 2
	err = capsys.readouterr().err
	assert "`openmolt logs search` needs the text to find: `openmolt logs search TEXT`" in err
	assert "search search" not in err


def test_a_run_id_prefix_resolves_to_one_id() -> None:
	"""resolve: the whole id, a unique prefix, none, several (named, at most five)."""
	from openmolt_core.cli._runids import resolve_run_id as resolve
	from openmolt_core.errors import ConfigurationError

	ids = ["a1b2", "a1c3", "ff00"]
	assert resolve("a1b2", ids) == "a1b2"
	assert resolve("f", ids) == "ff00"
	with pytest.raises(ConfigurationError, match=r"2 runs start with 'a1' \(a1b2, a1c3\)"):
		resolve("a1", ids)
	with pytest.raises(ConfigurationError, match="no run ''"):
		resolve("", ids)
	with pytest.raises(ConfigurationError, match=r"\(x0, x1, x2, x3, x4, \.\.\.\)"):
		resolve("x", [f"x{i}" for i in range(7)])
	# `openmolt logs` passes the first six: the count is not theirs
	with pytest.raises(ConfigurationError, match=r"^more than 5 runs start with 'x' "):
		resolve("x", [f"x{i}" for i in range(6)])


def test_logs_mask_what_a_run_recorded_before_its_secret_was_known(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run recorded by a process that did not know the key: `logs` masks it now."""
	path = tmp_path / "runs.db"
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(path))
	key = "sk-live-Logged-Before-0042"

	async def record() -> None:
		om = OpenMolt(run_store=str(path), entry_points=False)
		agent = om.create_agent(name="K", model=ScriptedModel([finish(result="done")]))
		await agent.run(f"use {key}")

	anyio.run(record)
	monkeypatch.setenv("SOME_SERVICE_API_KEY", key)  # known now
	for args in (["logs"], ["logs", "--json"]):
		assert openmolt_main(args) == 0
		out = capsys.readouterr().out
		assert key not in out and "[redacted]" in out, out
	assert openmolt_main(["logs", "--json"]) == 0
	run_id = json.loads(capsys.readouterr().out)[0]["run_id"]
	for args in (["logs", run_id], ["logs", run_id, "--json"]):
		assert openmolt_main(args) == 0
		out = capsys.readouterr().out
		assert key not in out and "[redacted]" in out, out


def test_a_command_process_that_ends_has_recorded_its_run(
	tmp_path: Path,
	server: Any,
	cli: Any,
	capsys: pytest.CaptureFixture[str],
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""The command freezes the collector as it ends (its shutdown skips the last collection):
	what it opened is closed before that, so the run it made is in the store for the next one."""
	store = tmp_path / "runs.db"
	cli.agent_file(tmp_path, server)
	env = cli.clean_env(OPENMOLT_RUN_STORE=str(store), **{cli.KEY_VAR: "env-key"})
	done = cli.openmolt("agent.json", "--json", cwd=tmp_path, env=env, process=True)
	assert done.returncode == 0, done.stderr
	run_id = json.loads(done.stdout)["run_id"]
	monkeypatch.setenv("OPENMOLT_RUN_STORE", str(store))
	assert openmolt_main(["logs", "--json"]) == 0
	logged = capsys.readouterr().out
	assert run_id in logged and "Hello, Ada!" in logged


def test_a_provider_on_another_server_says_why_it_has_no_prices(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""OPENMOLT_OPENAI_BASE_URL points elsewhere (a proxy, a local server): `models` and
	`--dry-run` say where the calls go, not only that no price or model is known."""
	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-test-123456")
	monkeypatch.setenv("OPENMOLT_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	assert openmolt_main(["models", "openai"]) == 0
	assert "its calls go to http://127.0.0.1:9/v1, not the vendor's" in capsys.readouterr().out
	agent = {"name": "A", "model": "openai:gpt-5-mini", "instructions": "x"}
	(tmp_path / "agent.json").write_text(json.dumps(agent))
	assert openmolt_main(["agent.json", "--dry-run"]) == 0
	said = capsys.readouterr().out
	assert "set by OPENMOLT_OPENAI_BASE_URL, not the vendor's API" in said


def test_a_filter_matches_at_the_start_of_a_word_of_the_id(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`models mini` lists gpt-5-mini and o4-mini, not every gemini model ("ge-mini");
	a filter may still span words (`5-mini`) or start the id (`openai:gpt`)."""
	monkeypatch.delenv("OPENMOLT_OPENAI_BASE_URL", raising=False)
	assert openmolt_main(["models", "mini", "--json"]) == 0
	found = [r["model"] for r in json.loads(capsys.readouterr().out)]
	assert "openai:gpt-5-mini" in found and "openai:o4-mini" in found
	assert not [m for m in found if "gemini" in m]
	for word in ("5-mini", "openai:gpt-5-m", "GPT-5-MINI"):
		assert openmolt_main(["models", word, "--json"]) == 0
		assert "openai:gpt-5-mini" in [r["model"] for r in json.loads(capsys.readouterr().out)]


def test_a_filter_that_matches_nothing_names_providers_pointed_elsewhere(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""With OPENMOLT_OPENAI_BASE_URL set, `models gpt-5` finds nothing: the error says openai
	lists no models because its calls go to that server, not only that nothing matched."""
	monkeypatch.setenv("OPENMOLT_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	assert openmolt_main(["models", "gpt-5"]) == 1
	err = capsys.readouterr().err
	assert "no model matches 'gpt-5'" in err
	assert "openai lists no models: its calls go to http://127.0.0.1:9/v1" in err


def test_logs_show_each_run_s_tokens_and_say_when_its_cost_is_unknown(
	store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""A run without a list price reads "N tokens, cost unknown" as the run's summary says it,
	not a bare "-", in the list and in one run's head."""
	assert openmolt_main(["logs", "-n", "1"]) == 0
	first = capsys.readouterr().out.splitlines()[0]
	assert re.search(r"  1 step, \d+ tokens, cost unknown$", first), first
	run_id = first.split()[2]
	assert openmolt_main(["logs", run_id]) == 0
	assert re.search(r", 1 step, \d+ tokens, cost unknown\n", capsys.readouterr().out)


def test_a_run_that_used_no_token_has_no_cost_to_tell() -> None:
	"""A run that failed before any reply reads "0 tokens" (as its summary), not "cost unknown";
	one with tokens and no price still says so, and a priced one its cost."""
	from openmolt_core.cli._logs import _cost

	assert _cost({"input_tokens": 0, "output_tokens": 0, "cost_usd": None, "calls": 0}) == (
		"0 tokens"
	)
	assert _cost(None) == "0 tokens"
	assert _cost({"input_tokens": 800, "output_tokens": 20, "cost_usd": None}) == (
		"820 tokens, cost unknown"
	)
	assert _cost({"input_tokens": 800, "output_tokens": 20, "cost_usd": 0.0012}) == (
		"820 tokens, $0.0012"
	)


def test_logs_says_when_n_left_runs_out(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
	"""`openmolt logs -n 2` of three runs ends "(the 2 latest; -n 4 shows more)", as `sessions
	list` does; -n 3 shows all and says nothing more, and --json stays a bare list."""
	assert openmolt_main(["logs", "-n", "2"]) == 0
	out = capsys.readouterr().out
	assert out.endswith("(the 2 latest; -n 4 shows more)\n") and out.count("input:") == 2
	assert openmolt_main(["logs", "-n", "3"]) == 0
	assert "shows more" not in capsys.readouterr().out
	assert openmolt_main(["logs", "-n", "2", "--json"]) == 0
	assert len(json.loads(capsys.readouterr().out)) == 2


def test_a_filter_that_matches_nothing_says_nothing_of_the_local_servers(
	monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
	"""`models nope` said "no model matches" and then four lines, "ollama lists no models: its
	calls go to http://localhost:11434/v1, not the vendor's" and the same for lmstudio, vllm and
	llamacpp, whatever the word: a local server never lists models, so that is no reason. Only a
	vendor's provider pointed elsewhere is; the local servers' rows say where they are."""
	for name in ("OPENAI", "ANTHROPIC", "GOOGLE", "OLLAMA", "LMSTUDIO", "VLLM", "LLAMACPP"):
		monkeypatch.delenv(f"OPENMOLT_{name}_BASE_URL", raising=False)
	assert openmolt_main(["models", "nope"]) == 1
	assert capsys.readouterr().err.splitlines() == [
		"openmolt: no model matches 'nope' (`openmolt models` lists them all)"
	]
	monkeypatch.setenv("OPENMOLT_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	assert openmolt_main(["models", "nope"]) == 1
	assert len(capsys.readouterr().err.splitlines()) == 2  # and openai's reason
	assert openmolt_main(["models", "ollama"]) == 0
	row = capsys.readouterr().out.splitlines()[1]
	assert "the local server at http://localhost:11434/v1" in row and "vendor" not in row, row


def test_models_leaves_out_what_no_agent_converses_with_unless_all(capsys) -> None:
	"""`openmolt models` listed realtime, audio and image models (gpt-realtime, gpt-image-1...)
	among the models an agent can use: those genai-prices prices for audio or images apart from
	text are left out (the table's MEDIA, derived from its price fields), and --all lists them."""
	from openmolt_providers._price_table import MEDIA

	media = {f"{provider}:{m}" for provider, models in MEDIA.items() for m in models}
	assert len(media) >= 10  # realtime, audio and image models of two vendors
	assert openmolt_main(["models", "--json"]) == 0
	listed = {r["model"] for r in json.loads(capsys.readouterr().out)}
	assert "openai:gpt-5-mini" in listed and "anthropic:claude-haiku-4-5" in listed
	assert listed & media == set()
	assert openmolt_main(["models", "--all", "--json"]) == 0
	every = {r["model"] for r in json.loads(capsys.readouterr().out)}
	assert every == listed | media
	assert openmolt_main(["models"]) == 0
	assert "--all lists them" in capsys.readouterr().out
	realtime = next(m.split(":", 1)[1] for m in sorted(media) if "realtime" in m)
	assert openmolt_main(["models", realtime]) == 1
	assert "`openmolt models --all` lists the realtime" in capsys.readouterr().err


def test_models_leaves_out_the_speech_models_too(capsys) -> None:
	"""Text-to-speech and transcription models (gpt-4o-mini-tts, gpt-4o-transcribe,
	gemini-2.5-flash-tts) speak or listen, as the realtime models do, but genai-prices prices them
	in plain tokens, so the price fields did not tell them: `openmolt models` listed them among the
	models an agent can use. Their names do (``-tts``, ``transcribe``): left out unless --all."""
	assert openmolt_main(["models", "--json"]) == 0
	listed = {r["model"] for r in json.loads(capsys.readouterr().out)}
	speech = {m for m in listed if re.search(r"(^|[-:])tts($|-)|transcribe", m)}
	assert speech == set()
	assert openmolt_main(["models", "--all", "--json"]) == 0
	every = {r["model"] for r in json.loads(capsys.readouterr().out)}
	for model in (
		"openai:gpt-4o-mini-tts",
		"openai:gpt-4o-transcribe",
		"google:gemini-2.5-flash-tts",
	):
		assert model in every


def test_models_leaves_out_completion_and_computer_use_models(capsys) -> None:
	"""The legacy completion models (gpt-3.5-turbo-instruct, davinci-002, babbage-002: the openai
	SDK's Completions models, and the retired GPT-3 ids genai-prices keeps) are served on
	/v1/completions only, and computer-use-preview takes only the computer tool: no agent's
	request reaches them (a 404 or 400 at its first step), yet `openmolt models` listed them
	among the models an agent can use. Left out unless --all."""
	assert openmolt_main(["models", "--json"]) == 0
	listed = {r["model"] for r in json.loads(capsys.readouterr().out)}
	assert "openai:gpt-5-mini" in listed
	legacy = {
		m
		for m in listed
		if re.search(r":(ada|babbage|curie|davinci)(-\d+)?$|:text-|instruct|computer-use", m)
	}
	assert legacy == set()
	assert openmolt_main(["models", "--all", "--json"]) == 0
	every = {r["model"] for r in json.loads(capsys.readouterr().out)}
	for model in (
		"openai:gpt-3.5-turbo-instruct",
		"openai:davinci-002",
		"openai:babbage-002",
		"openai:text-davinci-003",
		"openai:computer-use",
	):
		assert model in every
