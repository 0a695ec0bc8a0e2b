"""Evals: datasets scored deterministically with a scripted model, reports, CLI for CI."""

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openmolt import ConfigurationError, OpenMolt, RunState
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.llm import Message
from openmolt_core.testing import call_tool, finish
from openmolt_evals import Case, Dataset, ToolCall, compare, evaluate, trajectory_of
from openmolt_evals.evaluators import (
	Efficiency,
	LLMJudge,
	OutputSchema,
	ToolArguments,
	Trajectory,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


def refund(order: str, amount: int, reason: str = "") -> str:
	"""Refund an order."""
	return f"refunded {amount} on {order}"


def lookup(order: str) -> dict[str, Any]:
	"""Look up an order."""
	return {"order": order, "paid": 30}


class Support:
	"""A scripted support agent: its answer depends on the input, so runs are deterministic."""

	name = "support"
	model = "support-1"

	async def generate(self, request: ModelRequest) -> ModelResponse:
		task = json.loads(request.messages[0].content)["input"]
		step = (len(request.messages) + 1) // 2
		if task == "refund A1":
			plan = [
				[call_tool("local.lookup", order="A1")],
				[call_tool("local.refund", order="A1", amount=30)],
				[finish("refunded")],
			]
		elif task == "refund B2":  # a bad agent: refunds the wrong amount, skips the lookup
			plan = [[call_tool("local.refund", order="B2", amount=99)], [finish("refunded")]]
		else:
			plan = [[finish("nothing to do")]]
		commands = plan[min(step, len(plan)) - 1]
		return ModelResponse(
			text=json.dumps({"commands": commands}), usage=Usage(100, 10, cost_usd=0.001, calls=1)
		)


def support_agent() -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(name="Support", model=Support(), tools=[lookup, refund])


DATASET = {
	"name": "refunds",
	"cases": [
		{
			"name": "good refund",
			"input": "refund A1",
			"expected_output": "refunded",
			"expected_tools": [
				{"tool": "local.lookup"},
				{"tool": "local.refund", "input": {"order": "A1", "amount": 30}},
			],
		},
		{
			"name": "wrong amount",
			"input": "refund B2",
			"expected_output": "refunded",
			"expected_tools": [
				{"tool": "local.lookup"},
				{"tool": "local.refund", "input": {"order": "B2", "amount": 30}},
			],
		},
		{
			"name": "nothing",
			"input": "hello",
			"expected_output": "nothing to do",
			"expected_tools": [],
		},
	],
}


async def test_a_dataset_scores_each_case_and_overall() -> None:
	"""Output and trajectory evaluators score each case; the report sums them up."""
	report = await evaluate(support_agent(), Dataset.from_dict(DATASET), concurrency=2)
	by = {c.case: c for c in report.cases}
	assert by["good refund"].passed and by["good refund"].score == 1.0
	assert not by["wrong amount"].passed
	trajectory = next(s for s in by["wrong amount"].scores if s.evaluator == "trajectory")
	assert trajectory.score == 0.0 and "local.lookup" in trajectory.reason
	# The tool lists are the same: the reason names the argument that differs.
	assert "local.refund was called with other arguments (amount: expected 30, got" in (
		trajectory.reason
	)
	assert by["nothing"].passed
	assert report.passed == 2 and report.score == pytest.approx((1 + 0.5 + 1) / 3)
	assert report.evaluator_means()["output_equals"] == 1.0
	data = report.to_dict()
	assert data["total"] == 3 and data["usage"]["calls"] == 6
	table = report.table()
	assert "wrong amount" in table and "2/3 cases passed" in table


@pytest.mark.parametrize(
	("mode", "expected", "score"),
	[
		("exact", ["local.lookup", "local.refund"], 1.0),
		("exact", ["local.refund"], 0.5),
		("in_order", ["local.lookup", "local.refund"], 1.0),
		("in_order", ["local.refund", "local.lookup"], 0.5),
		("any_order", ["local.refund", "local.lookup"], 1.0),
		("any_order", ["local.refund"], 0.5),
		("subset", ["local.refund"], 1.0),
		("subset", ["local.refund", "local.delete"], 0.5),
	],
)
async def test_trajectory_modes(mode: str, expected: list[str], score: float) -> None:
	"""exact, in_order, any_order and subset compare the calls as their names say."""
	case = Case(name="c", input="refund A1")
	evaluator = Trajectory(mode=mode, expected=tuple(ToolCall(t) for t in expected))  # type: ignore[arg-type]
	report = await evaluate(support_agent(), Dataset(cases=(case,), evaluators=(evaluator,)))
	[s] = report.cases[0].scores
	assert s.score == pytest.approx(score), s.reason


@pytest.mark.parametrize("mode", ["exact", "in_order"])
async def test_calls_in_another_order_are_told_apart_by_their_arguments(mode: str) -> None:
	"""Two sends in the wrong order: the reason shows whom each went to, not the same list twice."""
	from openmolt_evals import Observed

	calls = (ToolCall("a.send", {"to": "bob", "text": "x"}), ToolCall("a.send", {"to": "amy"}))
	observed = Observed(
		output=None,
		status="success",
		human_message="",
		steps=1,
		usage=Usage(),
		seconds=0.1,
		tool_calls=calls,
		error=None,
		resolve_model=None,
		judge_usage=Usage(),
	)
	expected = (ToolCall("a.send", {"to": "amy"}), ToolCall("a.send", {"to": "bob"}))
	score = await Trajectory(mode=mode, expected=expected).evaluate(  # type: ignore[arg-type]
		observed, Case(name="c", input="x")
	)
	assert score.score == 0.5
	assert score.reason == (
		f'{mode}: expected [a.send(to="amy"), a.send(to="bob")], '
		f'got [a.send(to="bob"), a.send(to="amy")]'
	)


async def test_argument_schema_efficiency_and_judge_evaluators() -> None:
	"""Per-argument checks, a JSON Schema on the output, efficiency limits and an LLM judge."""

	class Judge:
		name = "judge"

		def __init__(self) -> None:
			self.requests: list[ModelRequest] = []

		async def generate(self, request: ModelRequest) -> ModelResponse:
			self.requests.append(request)
			payload = json.loads(request.messages[0].content)
			good = payload["output"] == "refunded"
			return ModelResponse(
				text=json.dumps({"score": 0.9 if good else 0.1, "reason": "ok"}),
				usage=Usage(50, 5, calls=1),
			)

	judge = Judge()
	evaluators = (
		ToolArguments(tool="local.refund", equals={"amount": 30}, matches={"order": r"^[A-Z]\d$"}),
		OutputSchema(schema={"type": "string", "minLength": 3}),
		Efficiency(max_steps=2, max_tokens=1000),
		LLMJudge(rubric="Refunds must match what was paid.", model=judge),
	)
	case = Case(name="c", input="refund A1")
	report = await evaluate(support_agent(), Dataset(cases=(case,), evaluators=evaluators))
	scores = {s.evaluator: s for s in report.cases[0].scores}
	assert scores["tool_arguments"].score == 1.0
	assert scores["output_schema"].score == 1.0
	assert scores["efficiency"].score == 0.5 and "steps 3 > 2" in scores["efficiency"].reason
	assert scores["llm_judge"].score == 0.9
	assert "Refunds must match" in judge.requests[0].messages[0].content
	assert report.cases[0].usage.calls == 4  # three agent calls and one judge call
	bad = await evaluate(
		support_agent(),
		Dataset(cases=(Case(name="b", input="refund B2"),), evaluators=evaluators[:1]),
	)
	assert bad.cases[0].scores[0].score == 0.0 and "amount=99" in bad.cases[0].scores[0].reason


async def test_runs_are_recorded_as_a_dataset_and_reports_compare() -> None:
	"""Real runs become cases (input, output, tool calls); two reports compare case by case."""
	agent = support_agent()
	result = await agent.run("refund A1")
	recorded = Dataset.record([result], name="from prod")
	[case] = recorded.cases
	assert case.input == "refund A1" and case.expected_output == "refunded"
	assert [t.tool for t in case.expected_tools] == ["local.lookup", "local.refund"]
	assert trajectory_of(result.state) == list(case.expected_tools)
	round_trip = Dataset.from_dict(json.loads(json.dumps(recorded.to_dict())))
	assert round_trip.cases[0].expected_tools == case.expected_tools
	made = RunState(messages=[Message("user", "plain words, not a first turn")])
	with pytest.raises(ConfigurationError, match=r"runs\[1\]: its first message is not"):
		Dataset.record([result, made])
	before = await evaluate(agent, Dataset.from_dict(DATASET))
	changed = {
		**DATASET,
		"cases": [{**DATASET["cases"][1], "expected_tools": [{"tool": "local.refund"}]}],
	}
	after = await evaluate(agent, Dataset.from_dict(changed))
	text = compare(before, after)
	assert "wrong amount: 0.50 → 1.00" in text


def test_malformed_datasets_name_the_field() -> None:
	"""Unknown keys and evaluators are refused with the allowed names."""
	with pytest.raises(ConfigurationError, match="non-empty list"):
		Dataset.from_dict({"cases": []})
	with pytest.raises(ConfigurationError, match=r"cases\[0\]: unknown key"):
		Dataset.from_dict({"cases": [{"inputt": 1}]})
	with pytest.raises(ConfigurationError, match="did you mean 'trajectory'"):
		Dataset.from_dict({"cases": [{"input": 1}], "evaluators": [{"type": "trajectry"}]})


AGENT_FILE = """
import json
from openmolt import OpenMolt
from openmolt_core import ModelResponse, Usage
from openmolt_core.testing import finish

class Model:
	name = "fake"
	model = "fake-1"
	async def generate(self, request):
		task = json.loads(request.messages[0].content)["input"]
		return ModelResponse(text=json.dumps({"commands": [finish(task.upper())]}), usage=Usage(1, 1, calls=1))

om = OpenMolt(entry_points=False)
agent = om.create_agent(name="Upper", model=Model())
"""


def test_the_eval_command_exits_non_zero_under_the_threshold(
	tmp_path: Path, cli_in_process
) -> None:
	"""openmolt eval prints a table, writes JSON, and exits 1 below --min-score (0 at or above)."""
	(tmp_path / "agent.py").write_text(textwrap.dedent(AGENT_FILE))
	cases = [{"input": "a", "expected_output": "A"}, {"input": "b", "expected_output": "x"}]
	(tmp_path / "data.json").write_text(json.dumps({"cases": cases}))

	def run(*args: str) -> subprocess.CompletedProcess[str]:
		command = ["eval", "data.json", "agent.py", *args]
		return cli_in_process(command, cwd=tmp_path, env=dict(os.environ))

	low = run("--min-score", "0.9", "--json", "report.json")
	assert low.returncode == 1, low.stderr
	assert "1/2 cases passed" in low.stdout and "below --min-score 0.9" in low.stderr
	assert json.loads((tmp_path / "report.json").read_text())["score"] == 0.5
	ok = run("--min-score", "0.5", "--compare", "report.json")
	assert ok.returncode == 0, ok.stderr
	assert "score 0.50 → 0.50" in ok.stderr


def test_the_old_module_paths_are_the_distribution_s_objects() -> None:
	"""openmolt_core.evals moved to openmolt-evals; the old paths re-export it."""
	import openmolt_core.evals as old
	import openmolt_core.evals.evaluators as old_evaluators
	import openmolt_evals
	import openmolt_evals.evaluators

	assert old.Dataset is openmolt_evals.Dataset and old.evaluate is openmolt_evals.evaluate
	assert old_evaluators.OutputEquals is openmolt_evals.evaluators.OutputEquals
	assert sorted(old.__all__) == sorted(openmolt_evals.__all__)


async def test_two_evaluators_of_one_name_are_reported_apart() -> None:
	"""Two trajectory checks (two modes) keep a mean each: the second is 'trajectory (2)'."""
	case = Case(name="c", input="refund A1")
	strict = Trajectory(mode="exact", expected=(ToolCall("local.refund"),))
	loose = Trajectory(mode="subset", expected=(ToolCall("local.refund"),))
	report = await evaluate(support_agent(), Dataset(cases=(case,), evaluators=(strict, loose)))
	means = report.evaluator_means()
	assert means == {"trajectory": 0.5, "trajectory (2)": 1.0}
	assert report.to_dict()["evaluators"] == means


def test_an_output_schema_that_is_no_json_schema_is_refused_when_the_dataset_is_read() -> None:
	"""Before, it became each case's 0 when scored; now the dataset names the evaluator."""
	data = {**DATASET, "evaluators": [{"type": "output_schema", "schema": {"type": "strnig"}}]}
	with pytest.raises(ConfigurationError, match=r"evaluators\[0\].*not a valid JSON Schema"):
		Dataset.from_dict(data)
	with pytest.raises(ValueError, match="not a valid JSON Schema"):
		OutputSchema(schema={"properties": {"a": {"minLength": -1}}})
	OutputSchema(schema={"type": "object", "required": ["a"]})  # a valid one is taken


async def test_a_renamed_evaluator_never_takes_a_name_given_to_another() -> None:
	"""Names trajectory, trajectory, 'trajectory (2)': the second becomes 'trajectory (3)', so the
	third keeps its own name and each keeps a mean of its own."""
	case = Case(name="c", input="refund A1")
	strict = Trajectory(mode="exact", expected=(ToolCall("local.refund"),))
	loose = Trajectory(mode="subset", expected=(ToolCall("local.refund"),))
	named = Trajectory(mode="subset", expected=(ToolCall("local.refund"),))
	object.__setattr__(named, "name", "trajectory (2)")
	report = await evaluate(
		support_agent(), Dataset(cases=(case,), evaluators=(strict, loose, named))
	)
	means = report.evaluator_means()
	assert len(means) == 3 and means["trajectory"] == 0.5, means
	assert means["trajectory (2)"] == 1.0 and means["trajectory (3)"] == 1.0


def test_a_dataset_that_cannot_be_read_says_why_in_words(tmp_path: Path) -> None:
	"""A missing file, a folder, broken JSON: the reason and the line, not "[Errno 2] ...: 'x'"."""
	with pytest.raises(ConfigurationError) as missing:
		Dataset.load(tmp_path / "cases.json")
	assert str(missing.value) == (
		f"dataset {str(tmp_path / 'cases.json')!r}: cannot be read: No such file or directory"
	)
	with pytest.raises(ConfigurationError, match=r": cannot be read: it is a folder, not a file$"):
		Dataset.load(tmp_path)
	broken = tmp_path / "broken.json"
	broken.write_text('{"cases": [\n  {"input": 1,}\n]}')
	with pytest.raises(ConfigurationError) as invalid:
		Dataset.load(broken)
	assert str(invalid.value) == (
		f"dataset {str(broken)!r}:2: invalid JSON: Expecting property name enclosed in double "
		"quotes (column 15)"
	)


def test_a_dataset_of_the_wrong_shape_or_an_agent_file_given_first_is_named(
	tmp_path: Path,
) -> None:
	"""A list of cases (no object around it), an agent file given where the dataset goes, a file
	saved as UTF-16: each says what to do (a list was "unexpected error: AttributeError")."""
	listed = tmp_path / "cases.json"
	listed.write_text('[{"input": 1}]')
	with pytest.raises(
		ConfigurationError, match=r'a dataset is a JSON object, \{"cases": \[\.\.\.\]\}'
	):
		Dataset.load(listed)
	agent = tmp_path / "agent.json"
	agent.write_text('{"name": "a", "model": "openai:gpt-5-mini"}')
	with pytest.raises(ConfigurationError, match=r"this is an agent file, not a dataset: give the"):
		Dataset.load(agent)
	wide = tmp_path / "wide.json"
	wide.write_bytes('{"cases": [{"input": 1}]}'.encode("utf-16"))
	with pytest.raises(ConfigurationError, match=r"is not UTF-8 text.*UTF-16.*save it as UTF-8"):
		Dataset.load(wide)
