"""Evals given bad input: datasets, reports and output paths are refused by name, before any run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openmolt import ConfigurationError
from openmolt_evals import Dataset

ONE = [{"input": "a"}]


@pytest.mark.parametrize(
	("data", "says"),
	[
		({"cases": ["refund A1"]}, r"cases\[0\]: a case is an object .*not a str"),
		({"cases": [5]}, r"cases\[0\]: a case is an object .*not a int"),
		({"cases": [None]}, r"cases\[0\]: a case is an object .*not a NoneType"),
		(
			{"cases": [{"input": 1, "expected_tools": {"tool": "a.b"}}]},
			r"cases\[0\]\.expected_tools: a list of calls .*not a dict",
		),
		(
			{"cases": [{"input": 1, "expected_tools": "a.b"}]},
			r"cases\[0\]\.expected_tools: a list of calls .*not a str",
		),
		(
			{"cases": [{"input": 1, "expected_tools": [{"tool": "a.b", "input": 0}]}]},
			r"cases\[0\]\.expected_tools: a\.b: a tool call's 'input' is an object, not 0",
		),
		(
			{"cases": [{"input": 1, "evaluators": {"type": "trajectory"}}]},
			r"cases\[0\]\.evaluators: a list of evaluators .*not a dict",
		),
		(
			{"cases": ONE, "evaluators": "output_equals"},
			r"^evaluators: a list of evaluators .*not a str",
		),
		({"cases": [{"input": 1, "name": {"x": 1}}]}, r"cases\[0\]\.name: .*text, not a dict"),
		({"cases": ONE, "name": ["x"]}, r"^name: .*text, not a list"),
		(
			{"cases": ONE, "evaluators": [{"type": "efficiency", "max_steps": "3"}]},
			r"evaluators\[0\]: efficiency: max_steps: .*number.*not \"3\"",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "efficiency", "max_cost_usd": True}]},
			r"evaluators\[0\]: efficiency: max_cost_usd: .*not true$",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "efficiency", "max_seconds": -1}]},
			r"evaluators\[0\]: efficiency: max_seconds: .*not -1",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "efficiency", "mx_steps": 3}]},
			r"evaluators\[0\]: efficiency: unknown field 'mx_steps'; did you mean 'max_steps'",
		),
		(
			{
				"cases": ONE,
				"evaluators": [{"type": "tool_arguments", "tool": "a.b", "matches": ["x"]}],
			},
			r"evaluators\[0\]: tool_arguments: matches: .*not a list",
		),
		(
			{
				"cases": ONE,
				"evaluators": [{"type": "tool_arguments", "tool": "a.b", "equals": ["x"]}],
			},
			r"evaluators\[0\]: tool_arguments: equals: .*not a list",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "tool_arguments", "tool": 5}]},
			r"evaluators\[0\]: tool_arguments: tool: .*not 5",
		),
		(
			{
				"cases": ONE,
				"evaluators": [{"type": "tool_arguments", "tool": "a.b", "check": "lambda c: 1"}],
			},
			r"evaluators\[0\]: tool_arguments: check: .*Python function.*not a str",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "llm_judge", "rubric": 5}]},
			r"evaluators\[0\]: llm_judge: rubric: .*not 5",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "llm_judge", "rubric": "r", "model": 5}]},
			r"evaluators\[0\]: llm_judge: model: .*'provider:model'.*not 5",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "llm_judge", "rubric": "r", "model": "gpt-5"}]},
			r"evaluators\[0\]: llm_judge: model: .*'provider:model'.*not 'gpt-5'",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "trajectory", "name": 5}]},
			r"evaluators\[0\]: trajectory: name: .*not 5",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "trajectory", "expected": {"tool": "a.b"}}]},
			r"evaluators\[0\]: trajectory: expected: a list of calls .*not a dict",
		),
	],
)
def test_values_of_the_wrong_type_are_named_when_the_dataset_is_read(
	data: dict[str, Any], says: str
) -> None:
	"""Each wrong value names its field and what it should be (was accepted, or a TypeError)."""
	with pytest.raises(ConfigurationError, match=says):
		Dataset.from_dict(data)


def test_a_dataset_file_is_read_as_an_agent_file_is(tmp_path: Path) -> None:
	"""A BOM (Notepad) is read; nesting past the parser, NaN, a NUL in the path are named errors."""
	bom = tmp_path / "bom.json"
	bom.write_text(json.dumps({"cases": ONE}), encoding="utf-8-sig")
	assert Dataset.load(bom).cases[0].input == "a"  # was "invalid JSON: Unexpected UTF-8 BOM"
	deep = tmp_path / "deep.json"
	deep.write_text('{"cases": [{"input": ' + "[" * 100_000 + "]" * 100_000 + "}]}")
	with pytest.raises(ConfigurationError, match=r"deep\.json.*nests deeper"):  # RecursionError
		Dataset.load(deep)
	nan = tmp_path / "nan.json"
	nan.write_text('{"cases": [{"input": 1, "expected_output": NaN}]}')
	with pytest.raises(ConfigurationError, match=r"nan\.json':1: .*NaN is not valid JSON"):
		Dataset.load(nan)
	twice = tmp_path / "twice.json"
	twice.write_text('{"cases": [{"input": 1}],\n "cases": [{"input": 2}]}')
	with pytest.raises(ConfigurationError, match=r"twice\.json': 'cases' is given twice"):
		Dataset.load(twice)
	with pytest.raises(ConfigurationError, match=r"dataset: .*NUL"):  # was "embedded null byte"
		Dataset.load("cases\x00.json")
	wide = tmp_path / "wide.json"
	wide.write_bytes(json.dumps({"cases": ONE}).encode("utf-16"))
	with pytest.raises(ConfigurationError, match="UTF-16"):
		Dataset.load(wide)


AGENT_FILE = """
import json
from openmolt import OpenMolt
from openmolt_core import ModelResponse
from openmolt_core.testing import finish

class Model:
	name = "fake"
	model = "fake-1"
	async def generate(self, request):
		task = json.loads(request.messages[0].content)["input"]
		return ModelResponse(text=json.dumps({"commands": [finish(task)]}))

om = OpenMolt(entry_points=False)
agent = om.create_agent(name="Same", model=Model())
"""


def _eval(
	tmp_path: Path, cli: Any, *args: str, cases: list[dict[str, Any]] | None = None
) -> subprocess.CompletedProcess[str]:
	(tmp_path / "agent.py").write_text(textwrap.dedent(AGENT_FILE))
	if not (tmp_path / "data.json").exists():
		(tmp_path / "data.json").write_text(json.dumps({"cases": cases or ONE}))
	done: subprocess.CompletedProcess[str] = cli(
		["eval", "data.json", "agent.py", *args], cwd=tmp_path, env=dict(os.environ)
	)
	return done


@pytest.mark.parametrize(
	("report", "says"),
	[
		({"cases": [1]}, r"cases\[0\]: .*not a int"),
		({"cases": [{"case": "a"}]}, r"cases\[0\]\.score: .*number"),
		({"cases": [{"case": 5, "score": 1}]}, r"cases\[0\]\.case: .*text"),
		({"cases": [], "score": "x"}, r"score: .*number"),
		({"cases": [{"case": "a", "score": True}]}, r"cases\[0\]\.score: .*number"),
	],
)
def test_a_compare_file_that_is_no_report_is_refused_before_any_case_runs(
	tmp_path: Path, cli_in_process: Any, report: dict[str, Any], says: str
) -> None:
	"""Exit 2 naming the field (these crashed with 70 after every case had run)."""
	(tmp_path / "old.json").write_text(json.dumps(report))
	done = _eval(tmp_path, cli_in_process, "--compare", "old.json")
	assert done.returncode == 2, (done.stdout, done.stderr)
	assert "--compare 'old.json'" in done.stderr, done.stderr
	assert re.search(says, done.stderr), done.stderr
	assert "cases passed" not in done.stdout


def test_compare_names_what_is_wrong_with_a_report_given_in_python() -> None:
	"""compare() of a dict that is no report says which field, not a KeyError."""
	from openmolt_evals import compare

	good = {"agent": "a", "score": 1.0, "cases": [{"case": "c", "score": 1.0}]}
	assert "score 1.00 → 1.00" in compare(good, good)
	with pytest.raises(ConfigurationError, match=r"before: cases\[0\]\.score"):
		compare({"cases": [{"case": "c"}]}, good)
	with pytest.raises(ConfigurationError, match=r"after: cases: .*list"):
		compare(good, {"cases": "c"})


@pytest.mark.parametrize(
	("target", "says"),
	[
		("outdir", "--json 'outdir': is a folder"),
		("data.json", "--json 'data.json': is the dataset"),
		("agent.py", "--json 'agent.py': is the agent file"),
		("./data.json", "--json './data.json': is the dataset"),
	],
)
def test_a_json_path_the_report_cannot_replace_is_refused_before_any_case_runs(
	tmp_path: Path, cli_in_process: Any, target: str, says: str
) -> None:
	"""A folder (crashed with 70 after the runs), the dataset or the agent file (overwritten)."""
	(tmp_path / "outdir").mkdir()
	(tmp_path / "data.json").write_text(json.dumps({"cases": ONE}))
	before = (tmp_path / "data.json").read_text()
	done = _eval(tmp_path, cli_in_process, "--json", target)
	assert done.returncode == 2, (done.stdout, done.stderr)
	assert says in done.stderr and "cases passed" not in done.stdout
	assert (tmp_path / "data.json").read_text() == before
	assert (tmp_path / "agent.py").read_text() == textwrap.dedent(AGENT_FILE)


def test_the_report_is_written_whole_and_for_its_owner_only(
	tmp_path: Path, cli_in_process: Any
) -> None:
	"""0600 whatever the umask (it holds what the runs said), and a link there is replaced, not
	followed."""
	elsewhere = tmp_path / "elsewhere.txt"
	elsewhere.write_text("keep me")
	(tmp_path / "report.json").symlink_to(elsewhere)
	old = os.umask(0o022)
	try:
		done = _eval(tmp_path, cli_in_process, "--json", "report.json")
	finally:
		os.umask(old)
	assert done.returncode == 0, done.stderr
	report = tmp_path / "report.json"
	assert not report.is_symlink() and json.loads(report.read_text())["total"] == 1
	assert elsewhere.read_text() == "keep me"
	assert report.stat().st_mode & 0o777 == 0o600
	assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []


def test_the_table_and_the_comparison_keep_each_case_on_its_own_line() -> None:
	"""A line break in a case's name or a judge's reason cannot add a row or a summary line."""
	from openmolt_core.llm import Usage
	from openmolt_evals import CaseReport, Report, compare
	from openmolt_evals.evaluators import Score

	forged = "\nrefunds with Support: score 1.00, 9/9 cases passed"
	case = CaseReport(
		"a\nfake  success  1.00",
		"success",
		(Score("llm_judge", 0.0, f"bad{forged}", 0.5),),
		1,
		Usage(),
		0.1,
	)
	report = Report("refunds\r", "Support\tx", (case,))
	lines = report.table().splitlines()
	assert len(lines) == 5, lines  # header, rule, one row, blank, summary
	assert lines[2].startswith("a\\nfake  success  1.00")
	assert lines[-1] == "refunds\\r with Support\\tx: score 0.00, 0/1 cases passed"
	text = compare(report, {"agent": "b\nc", "score": 0.0, "cases": [{"case": "x\ny", "score": 1}]})
	assert text.splitlines() == [
		"Support\\tx → b\\nc: score 0.00 → 0.00",
		"  x\\ny: new, 1.00",
		"  a\\nfake  success  1.00: gone (was 0.00)",
	]
