"""Evals under review: failures stay in their case, scores are the right maths, secrets stay out."""

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from openmolt import ConfigurationError, OpenMolt
from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_core.errors import OpenMoltError
from openmolt_core.testing import finish
from openmolt_evals import Case, Dataset, Observed, ToolCall, evaluate
from openmolt_evals.evaluators import LLMJudge, OutputEquals, Score, ToolArguments, Trajectory

pytestmark = pytest.mark.anyio

SECRET = "sk-evals-secret-9931"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
	return str(request.param)


class Echo:
	"""Finishes with its input (``output`` as given); ``"boom"`` raises; waits ``delay`` first."""

	name = "echo"
	model = "echo-1"

	def __init__(self, delays: dict[str, float] | None = None) -> None:
		self.delays = delays or {}
		self.running = 0
		self.most = 0

	async def generate(self, request: ModelRequest) -> ModelResponse:
		task = json.loads(request.messages[0].content)["input"]
		self.running += 1
		self.most = max(self.most, self.running)
		try:
			await anyio.sleep(self.delays.get(str(task), 0.01))
		finally:
			self.running -= 1
		return ModelResponse(text=json.dumps({"commands": [finish(task)]}), usage=Usage(1, 1))


def _agent(model: Any = None) -> Any:
	om = OpenMolt(entry_points=False, secrets=[SECRET])
	return om.create_agent(name="Echo", model=model or Echo())


def _observed(calls: list[ToolCall], output: Any = None) -> Observed:
	return Observed(
		output=output,
		status="success",
		human_message="",
		steps=1,
		usage=Usage(),
		seconds=0.1,
		tool_calls=calls,
		error=None,
		resolve_model=None,
	)


class Raising:
	"""An evaluator that fails, its message carrying a secret."""

	name = "raising"

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		raise ValueError(f"cannot score, key {SECRET}")


async def test_an_evaluator_that_raises_scores_zero_in_its_case_and_the_eval_goes_on() -> None:
	"""One evaluator failing on one case: the others still score, every case is reported."""
	cases = (Case("a", "a", expected_output="a"), Case("b", "b", expected_output="b"))
	dataset = Dataset(cases=cases, evaluators=(OutputEquals(), Raising()))
	report = await evaluate(_agent(), dataset)
	assert [c.case for c in report.cases] == ["a", "b"]
	for case in report.cases:
		scores = {s.evaluator: s for s in case.scores}
		assert scores["output_equals"].score == 1.0
		assert scores["raising"].score == 0.0
		assert "ValueError" in scores["raising"].reason
		assert not case.passed
	assert SECRET not in json.dumps(report.to_dict()) and SECRET not in report.table()


async def test_a_judge_whose_model_fails_scores_zero_and_the_eval_goes_on() -> None:
	"""A judge's provider raising (down, rate-limited) is that judge's zero, not a crashed eval."""

	class Down:
		name = "down"
		model = "down-1"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			raise RuntimeError(f"503 from judge, key {SECRET}")

	dataset = Dataset(cases=(Case("a", "a"),), evaluators=(LLMJudge("is fine", model=Down()),))
	report = await evaluate(_agent(), dataset)
	[score] = report.cases[0].scores
	assert score.score == 0.0 and "RuntimeError" in score.reason
	assert SECRET not in json.dumps(report.to_dict())


async def test_a_run_that_raises_anything_is_an_error_case_not_a_crashed_eval() -> None:
	"""An exception other than RunError from a run ends that case only, masked, in its place."""
	real = _agent()

	class Flaky:
		"""The agent, except that one input raises what a broken run store would."""

		def __getattr__(self, name: str) -> Any:
			return getattr(real, name)

		async def run(self, input: Any, **kwargs: Any) -> Any:
			if input == "lost":
				raise LookupError(f"the store is gone, key {SECRET}")
			return await real.run(input, **kwargs)

	cases = (Case("one", "x", expected_output="x"), Case("two", "lost"), Case("three", "y"))
	report = await evaluate(Flaky(), Dataset(cases=cases))  # type: ignore[arg-type]
	assert [c.case for c in report.cases] == ["one", "two", "three"]
	two = report.cases[1]
	assert two.status == "error" and two.score == 0.0 and not two.passed
	assert two.error is not None and "LookupError" in two.error and SECRET not in two.error
	assert report.cases[0].passed and report.cases[2].passed
	assert report.score == pytest.approx(2 / 3)


@pytest.mark.parametrize(
	("expected", "calls", "score"),
	[
		# A missing call in the middle costs that call only, not every call after it.
		(["a", "b", "c"], ["a", "c"], 2 / 3),
		(["a", "b", "c", "d"], ["a", "d"], 2 / 4),
		(["x", "a", "b"], ["a", "b"], 2 / 3),
	],
)
async def test_in_order_partial_credit_counts_the_longest_ordered_match(
	expected: list[str], calls: list[str], score: float
) -> None:
	"""in_order's partial credit is the longest run of expected calls found in order."""
	evaluator = Trajectory(mode="in_order", expected=tuple(ToolCall(t) for t in expected))
	got = await evaluator.evaluate(_observed([ToolCall(t) for t in calls]), Case("c"))
	assert got.score == pytest.approx(score), got.reason


async def test_any_order_pairs_calls_so_that_most_expected_calls_match() -> None:
	"""A loose expectation must not take the call a precise one needs (a maximum matching)."""
	expected = (ToolCall("a.send"), ToolCall("a.send", {"to": "amy"}))
	calls = [ToolCall("a.send", {"to": "amy"}), ToolCall("a.send", {"to": "bob"})]
	for mode in ("any_order", "subset"):
		got = await Trajectory(mode=mode, expected=expected).evaluate(_observed(calls), Case("c"))
		assert got.score == 1.0, (mode, got.reason)


@pytest.mark.parametrize(
	("want", "got", "said"),
	[
		({"to": "amy"}, {"to": "bob"}, 'to: expected "amy", got "bob"'),
		({"to": "amy"}, {}, 'to: expected "amy", missing'),
		({"q": {"a": 1, "b": 2}}, {"q": {"a": 1, "b": 3}}, "q.b: expected 2, got 3"),
		({"q": {"a": 1, "b": 2}}, {"q": {"a": 1}}, "q.b: expected 2, missing"),
		({"q": {"a": 1}}, {"q": {"a": 1, "extra": 3}}, "q.extra: not expected, got 3"),
		({"q": {"a": None}}, {"q": {}}, "q.a: expected null, missing"),
		({"q": {"deep": {"x": [1]}}}, {"q": {"deep": {"x": [2]}}}, "q.deep.x[0]: expected 1, got 2"),
		({"ids": [1, 2]}, {"ids": [1]}, "ids[1]: expected 2, missing"),
		({"ids": [1]}, {"ids": [1, 5]}, "ids[1]: not expected, got 5"),
		({"items": [{"id": 1}]}, {"items": [{"id": 2}]}, "items[0].id: expected 1, got 2"),
		({"n": 1}, {"n": "1"}, 'n: expected 1, got "1"'),
		({"q": {"a": 1}}, {"q": "a=1"}, 'q: expected {"a": 1}, got "a=1"'),
	],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["exact", "in_order", "any_order", "subset"])
async def test_a_call_with_another_argument_names_that_argument(
	mode: str, want: dict[str, Any], got: dict[str, Any], said: str
) -> None:
	"""The same tool list: the reason shows the arguments and the one that differs, nested too."""
	evaluator = Trajectory(mode=mode, expected=(ToolCall("a.send", want),))  # type: ignore[arg-type]
	score = await evaluator.evaluate(_observed([ToolCall("a.send", got)]), Case("c"))
	assert score.score == 0.0
	head, _, details = score.reason.partition("; ")
	assert details == f"a.send was called with other arguments ({said})"
	expected_list, _, observed_list = head.removeprefix(f"{mode}: expected ").partition(", got ")
	assert expected_list != observed_list  # the lists no longer read the same


async def test_the_closest_call_of_the_tool_is_the_one_compared() -> None:
	"""Two sends, the second nearly right: its one wrong argument is named, not the first's."""
	expected = (ToolCall("a.send", {"to": "amy", "text": "hi", "cc": ["bo"]}),)
	calls = [
		ToolCall("a.send", {"to": "zed", "text": "yo", "cc": []}),
		ToolCall("a.send", {"to": "amy", "text": "hi", "cc": ["bob"]}),
	]
	score = await Trajectory(mode="subset", expected=expected).evaluate(_observed(calls), Case("c"))
	assert score.reason.endswith(
		'a.send was called with other arguments (cc[0]: expected "bo", got "bob")'
	)


async def test_numbers_equal_as_json_are_equal() -> None:
	"""1 and 1.0 are one JSON number: an output model's float field matches an integer."""
	score = await OutputEquals({"total": 30, "items": [1, 2]}).evaluate(
		_observed([], output={"total": 30.0, "items": [1.0, 2]}), Case("c")
	)
	assert score.score == 1.0, score.reason
	call = ToolCall("a.refund", {"amount": 30})
	assert call.matches(ToolCall("a.refund", {"amount": 30.0}))
	# but a boolean is not a number
	assert not ToolCall("a.t", {"on": 1}).matches(ToolCall("a.t", {"on": True}))


def _judge(text: str) -> Any:
	class Judge:
		name = "judge"
		model = "judge-1"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			return ModelResponse(text=text)

	return Judge()


@pytest.mark.parametrize(
	"text",
	[
		'{"score": NaN, "reason": "?"}',
		'{"score": Infinity, "reason": "?"}',
		'{"score": true, "reason": "?"}',
		'{"score": 8, "reason": "out of ten"}',
		'{"score": -0.5, "reason": "?"}',
		'{"score": null}',
		'["score", 1]',
	],
)
async def test_a_judge_answer_that_is_not_a_score_from_0_to_1_is_unreadable(text: str) -> None:
	"""NaN, booleans and scores out of range are not read as a grade: 0, with the answer shown."""
	judge = LLMJudge("fine", model=_judge(text))
	observed = _observed([], output="x")
	observed.resolve_model = lambda model: (model, "judge-1")
	score = await judge.evaluate(observed, Case("c"))
	assert score.score == 0.0 and "not readable" in score.reason, score


async def test_a_judge_s_threshold_decides_whether_the_case_passed() -> None:
	"""A 0.8 from a judge whose threshold is 0.7 passes the case (and a 0.6 does not)."""
	for grade, passed in ((0.8, True), (0.6, False)):
		judge = LLMJudge("fine", model=_judge(json.dumps({"score": grade})), threshold=0.7)
		report = await evaluate(_agent(), Dataset(cases=(Case("c", "x"),), evaluators=(judge,)))
		assert report.cases[0].passed is passed
		assert report.to_dict()["cases"][0]["scores"][0]["passed"] is passed


async def test_concurrency_is_honoured_and_results_keep_the_dataset_order() -> None:
	"""At most `concurrency` runs at once; cases that finish first still report in order."""
	delays = {"slow": 0.2, "mid": 0.1, "fast": 0.0, "a": 0.05, "b": 0.05}
	model = Echo(delays)
	cases = tuple(Case(n, n, expected_output=n) for n in delays)
	report = await evaluate(_agent(model), Dataset(cases=cases), concurrency=2)
	assert model.most == 2
	assert [c.case for c in report.cases] == list(delays)
	assert report.passed == 5
	with pytest.raises(ConfigurationError, match="concurrency"):
		await evaluate(_agent(model), Dataset(cases=cases), concurrency=0)


def test_evaluator_fields_are_checked_when_the_dataset_is_read() -> None:
	"""A wrong trajectory mode or expected call shape names the field, as a ConfigurationError."""
	with pytest.raises(
		ConfigurationError, match=r'evaluators.*mode "strict" is not one of.*in_order'
	):
		Dataset.from_dict(
			{"cases": [{"input": 1}], "evaluators": [{"type": "trajectory", "mode": "strict"}]}
		)
	with pytest.raises(ConfigurationError, match=r"evaluators.*expected"):
		Dataset.from_dict(
			{
				"cases": [{"input": 1}],
				"evaluators": [{"type": "trajectory", "expected": [{"tol": "x"}]}],
			}
		)
	with pytest.raises(ConfigurationError, match="threshold"):
		Dataset.from_dict(
			{
				"cases": [{"input": 1}],
				"evaluators": [{"type": "llm_judge", "rubric": "r", "threshold": 2}],
			}
		)


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


@pytest.mark.parametrize(
	("args", "says"),
	[
		(["--concurrency", "0"], "--concurrency"),
		(["--compare", "missing.json"], "missing.json"),
		(["--compare", "garbage.json"], "garbage.json"),
		(["--json", "no-such-folder/report.json"], "no-such-folder"),
	],
)
def test_the_eval_command_refuses_bad_options_before_running(
	tmp_path: Path, cli_in_process: Any, args: list[str], says: str
) -> None:
	"""Exit 2 with the option named, and no case run, for options that cannot work."""
	(tmp_path / "agent.py").write_text(textwrap.dedent(AGENT_FILE))
	(tmp_path / "data.json").write_text(json.dumps({"cases": [{"input": "a"}]}))
	(tmp_path / "garbage.json").write_text("not json")
	done: subprocess.CompletedProcess[str] = cli_in_process(
		["eval", "data.json", "agent.py", *args], cwd=tmp_path, env=dict(os.environ)
	)
	assert done.returncode == 2, (done.stdout, done.stderr)
	assert says in done.stderr and "cases passed" not in done.stdout


def test_the_eval_command_exits_2_on_a_bad_evaluator(tmp_path: Path, cli_in_process: Any) -> None:
	"""A dataset whose evaluator is malformed is a configuration error (2), not a crash (70)."""
	(tmp_path / "agent.py").write_text(textwrap.dedent(AGENT_FILE))
	bad = {
		"cases": [{"input": "a"}],
		"evaluators": [{"type": "trajectory", "expected": [{"x": 1}]}],
	}
	(tmp_path / "data.json").write_text(json.dumps(bad))
	done = cli_in_process(["eval", "data.json", "agent.py"], cwd=tmp_path, env=dict(os.environ))
	assert done.returncode == 2, done.stderr
	assert "expected" in done.stderr


async def test_a_cost_limit_on_a_run_of_unknown_cost_is_not_kept() -> None:
	"""Fail closed: with max_cost_usd set and no price known, the limit is not counted as kept."""
	from openmolt_evals.evaluators import Efficiency

	observed = _observed([])  # Usage() has cost_usd None: the price is unknown
	score = await Efficiency(max_cost_usd=0.01, max_steps=5).evaluate(observed, Case("c"))
	assert score.score == 0.5 and "cost unknown" in score.reason


def test_a_tool_arguments_pattern_that_does_not_compile_is_refused_when_read() -> None:
	"""A bad regular expression names the field when the dataset is read, not mid-eval."""
	with pytest.raises(ConfigurationError, match=r"matches.*order"):
		Dataset.from_dict(
			{
				"cases": [{"input": 1}],
				"evaluators": [
					{"type": "tool_arguments", "tool": "a.b", "matches": {"order": "(["}}
				],
			}
		)


def test_compare_names_cases_that_are_gone() -> None:
	"""A case in the earlier report but not the later one is listed, not silently dropped."""
	from openmolt_evals import compare

	before = {
		"agent": "a",
		"score": 1.0,
		"cases": [{"case": "x", "score": 1.0}, {"case": "y", "score": 1.0}],
	}
	after = {"agent": "b", "score": 1.0, "cases": [{"case": "x", "score": 1.0}]}
	assert "  y: gone (was 1.00)" in compare(before, after).splitlines()


async def test_output_equals_skips_a_case_without_an_expected_output() -> None:
	"""Dataset-wide output_equals and trajectory: a case that expects only tool calls is scored on
	them, not failed for an output it never named; skipped scores stay out of every mean."""
	data = {
		"evaluators": [{"type": "output_equals"}, {"type": "efficiency", "max_steps": 5}],
		"cases": [
			{"name": "named", "input": "a", "expected_output": "a"},
			{"name": "unnamed", "input": "b"},
		],
	}
	report = await evaluate(_agent(), Dataset.from_dict(data))
	named, unnamed = report.cases
	assert named.passed and named.score == 1.0
	[skipped] = [s for s in unnamed.scores if s.evaluator == "output_equals"]
	assert skipped.skipped and skipped.passed
	assert unnamed.passed and unnamed.score == 1.0
	assert report.evaluator_means() == {"output_equals": 1.0, "efficiency": 1.0}
	entry = report.to_dict()["cases"][1]["scores"][0]
	assert entry["skipped"] is True and entry["score"] is None
	assert report.passed == 2


def test_a_dataset_s_evaluators_survive_a_round_trip_through_json() -> None:
	"""to_dict writes the dataset's and each case's built-in evaluators; from_dict reads them back."""
	data = {
		"name": "d",
		"evaluators": [
			{
				"type": "trajectory",
				"mode": "any_order",
				"expected": [{"tool": "a.b", "input": {"x": 1}}],
			},
			{"type": "llm_judge", "rubric": "kind", "model": "openai:gpt-x", "threshold": 0.7},
		],
		"cases": [
			{
				"name": "c",
				"input": "i",
				"evaluators": [{"type": "tool_arguments", "tool": "a.b", "matches": {"x": "^1$"}}],
			}
		],
	}
	dataset = Dataset.from_dict(data)
	again = Dataset.from_dict(json.loads(json.dumps(dataset.to_dict())))
	assert again == dataset


def test_an_evaluator_json_cannot_hold_is_refused_by_to_dict() -> None:
	"""A Python check function (or a custom evaluator) is named, not silently dropped."""
	from openmolt_evals.evaluators import ToolArguments

	dataset = Dataset(cases=(Case("c", "i"),), evaluators=(ToolArguments("a.b", check=bool),))
	with pytest.raises(ConfigurationError, match=r"tool_arguments.*check"):
		dataset.to_dict()
	with pytest.raises(ConfigurationError, match="raising"):
		Dataset(cases=(Case("c", "i", evaluators=(Raising(),)),)).to_dict()


async def test_the_judge_never_reads_a_secret_the_agent_s_model_never_read() -> None:
	"""The case's input and the run's words reach the judge masked, as they reach the agent."""
	asked: list[str] = []

	class Judge:
		name = "judge"
		model = "judge-1"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			asked.append(request.messages[0].content)
			return ModelResponse(text='{"score": 1, "reason": "fine"}')

	case = Case("c", f"use the key {SECRET}")
	report = await evaluate(
		_agent(), Dataset(cases=(case,), evaluators=(LLMJudge("fine", model=Judge()),))
	)
	assert report.cases[0].passed
	assert asked and SECRET not in asked[0] and "use the key" in asked[0]


@pytest.mark.parametrize(
	("text", "grade"),
	[
		('I would say {"score": 0.8, "reason": "good"}. Note: {x} was odd.', 0.8),
		('Thinking {step 1}... then {"score": 0.4, "reason": "weak"}', 0.4),
		('```json\n{"score": "0.9", "reason": "fine {really}"}\n```', 0.9),
	],
)
async def test_a_judge_s_grade_is_read_from_prose_around_it(text: str, grade: float) -> None:
	"""The first JSON object with a score is the grade (braces in the prose around it made the
	answer unreadable)."""
	judge = LLMJudge("fine", model=_judge(text))
	observed = _observed([], output="x")
	observed.resolve_model = lambda model: (model, "judge-1")
	score = await judge.evaluate(observed, Case("c"))
	assert score.score == grade, score


async def test_a_judge_model_that_cannot_be_used_is_refused_before_any_case_runs() -> None:
	"""A judge naming a provider nobody installed fails the evaluation at once, not each case's
	judge after every agent run (the runs cost money)."""
	model = Echo()
	dataset = Dataset(
		cases=(Case("a", "a", evaluators=(LLMJudge("fine", model="nobody:judge-1"),)),),
	)
	with pytest.raises(OpenMoltError, match="nobody"):
		await evaluate(_agent(model), dataset)
	assert model.most == 0  # no run started


@pytest.mark.timeout(30)  # without its own timeout the judge waited forever, and so did the eval
async def test_a_judge_that_does_not_answer_in_its_timeout_scores_zero_and_the_eval_goes_on() -> (
	None
):
	"""A judge's model that never answers: that judge's zero, with why, after its timeout."""

	class Silent:
		name = "silent"
		model = "silent-1"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			await anyio.sleep_forever()
			raise AssertionError("unreachable")

	judge = LLMJudge("is fine", model=Silent(), timeout=0.2)
	cases = (Case("a", "a", expected_output="a"), Case("b", "b", expected_output="b"))
	with anyio.fail_after(20):
		report = await evaluate(_agent(), Dataset(cases=cases, evaluators=(OutputEquals(), judge)))
	for case in report.cases:
		scores = {s.evaluator: s for s in case.scores}
		assert scores["output_equals"].score == 1.0
		assert scores["llm_judge"].score == 0.0
		assert "did not answer within 0.2 s" in scores["llm_judge"].reason


def test_the_judge_s_timeout_has_a_default_is_checked_and_survives_json() -> None:
	"""120 s unless given; a timeout that is no number above 0 is refused by name."""
	from openmolt_evals.evaluators import JUDGE_TIMEOUT

	assert LLMJudge("fine").timeout == JUDGE_TIMEOUT == 120.0
	for bad in (0, -1, True, "30", float("inf"), None):
		with pytest.raises(ValueError, match=r"^timeout: the seconds the judge's answer may take"):
			LLMJudge("fine", timeout=bad)
	data = {
		"cases": [{"input": "i"}],
		"evaluators": [{"type": "llm_judge", "rubric": "r", "timeout": -1}],
	}
	with pytest.raises(ConfigurationError, match=r"evaluators\[0\]: llm_judge: timeout: "):
		Dataset.from_dict(data)
	data["evaluators"] = [{"type": "llm_judge", "rubric": "r", "timeout": 30}]
	dataset = Dataset.from_dict(data)
	assert dataset.evaluators is not None and dataset.evaluators[0].timeout == 30
	assert Dataset.from_dict(json.loads(json.dumps(dataset.to_dict()))) == dataset


async def test_a_judge_without_its_provider_s_key_is_refused_before_any_case_runs(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""The judge's key is checked as its provider reads it, before the first (paid) run; it
	failed each case's judge after the agent had run."""
	import openmolt_providers.openai

	monkeypatch.delenv("OPENMOLT_OPENAI_API_KEY", raising=False)
	model = Echo()
	om = OpenMolt(entry_points=False, plugins=[openmolt_providers.openai])
	agent = om.create_agent(name="Echo", model=model)
	judge = LLMJudge("fine", model="openai:gpt-5-mini")
	dataset = Dataset(cases=(Case("a", "a"),), evaluators=(judge,))
	with pytest.raises(
		ConfigurationError,
		match=r"llm_judge: model 'openai:gpt-5-mini' cannot be used: .*OPENMOLT_OPENAI_API_KEY",
	):
		await evaluate(agent, dataset)
	assert model.most == 0  # no run started


JUDGED_AGENT = """
import json
from openmolt import OpenMolt
from openmolt_core import ModelResponse
from openmolt_core.testing import finish

class Model:
	name = "fake"
	model = "fake-1"
	async def generate(self, request):
		raise AssertionError("a case ran")

agent = OpenMolt().create_agent(name="Judged", model=Model())
"""


def test_the_eval_command_refuses_a_judge_without_its_key_before_any_case_runs(
	tmp_path: Path, cli_in_process: Any
) -> None:
	"""``openmolt eval`` checks a judge's provider key as it checks the agent's: exit 2, the
	variable named, no case run."""
	(tmp_path / "agent.py").write_text(textwrap.dedent(JUDGED_AGENT))
	judge = {"type": "llm_judge", "rubric": "fine", "model": "openai:gpt-5-mini"}
	(tmp_path / "data.json").write_text(
		json.dumps({"cases": [{"input": "a"}], "evaluators": [judge]})
	)
	env = {k: v for k, v in os.environ.items() if k != "OPENMOLT_OPENAI_API_KEY"}
	env["OPENMOLT_KEYS_FILE"] = str(tmp_path / "keys.json")  # none stored
	done = cli_in_process(["eval", "data.json", "agent.py"], cwd=tmp_path, env=env)
	assert done.returncode == 2, (done.stdout, done.stderr)
	assert "no API key for openai: set OPENMOLT_OPENAI_API_KEY" in done.stderr, done.stderr
	assert "cases passed" not in done.stdout


@pytest.mark.parametrize("stored", [True, False])
def test_a_judge_s_key_comes_from_the_agent_s_sources_and_is_checked_with_its_key(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: bool
) -> None:
	"""A JSON agent file's judges get their keys as the agent's model does (here the key store),
	and `check_ready` says a missing one as it says the agent's."""
	from openmolt_core.agentfile import check_ready, load
	from openmolt_core.assembly import resolve_model

	monkeypatch.chdir(tmp_path)
	monkeypatch.setenv("OPENMOLT_OPENAI_API_KEY", "sk-agent-test-1")
	monkeypatch.delenv("OPENMOLT_ANTHROPIC_API_KEY", raising=False)
	keys = tmp_path / "keys.json"
	keys.write_text(json.dumps({"OPENMOLT_ANTHROPIC_API_KEY": "sk-judge-test-1"} if stored else {}))
	monkeypatch.setenv("OPENMOLT_KEYS_FILE", str(keys))
	(tmp_path / "agent.json").write_text(json.dumps({"name": "A", "model": "openai:gpt-5-mini"}))
	loaded = load("agent.json", env_file=None, verbose=False, models=["anthropic:claude-x"])
	if stored:
		check_ready(loaded, strict=True)
		provider = resolve_model(loaded.om, "anthropic:claude-x")[2]()
		assert provider.api_key() == "sk-judge-test-1"  # type: ignore[attr-defined]
	else:
		with pytest.raises(
			ConfigurationError, match=r"no API key for anthropic: set OPENMOLT_ANTHROPIC_API_KEY"
		):
			check_ready(loaded, strict=True)


async def test_efficiency_does_not_keep_a_cost_limit_on_a_partial_cost() -> None:
	"""A cost under the limit that leaves out unpriced calls does not show the limit kept."""
	from dataclasses import replace

	from openmolt_evals.evaluators import Efficiency

	usage = Usage(cost_usd=0.001, calls=2, unpriced_calls=1)
	observed = replace(_observed([]), usage=usage)
	score = await Efficiency(max_cost_usd=0.01).evaluate(observed, Case("c"))
	assert score.score < 1 and "cost partial" in score.reason


async def test_a_reason_shows_values_as_the_dataset_writes_them() -> None:
	"""JSON, not Python: `true`, `null` and "text" (a dataset file says `true`, never `True`)."""
	expected = {"ok": True, "note": None, "who": "it's"}
	score = await OutputEquals(expected).evaluate(
		_observed([], output={"ok": False, "note": "x"}), Case("c")
	)
	assert score.reason == (
		'expected {"ok": true, "note": null, "who": "it\'s"}, got {"ok": false, "note": "x"}'
	)
	calls = [ToolCall("a.send", {"to": "bob", "cc": None})]
	tools = await ToolArguments(tool="a.send", equals={"to": "amy", "cc": []}).evaluate(
		_observed(calls), Case("c")
	)
	assert tools.reason == 'to="bob", cc=null'
	order = await Trajectory(
		mode="exact", expected=(ToolCall("a.look"), ToolCall("a.send", {"to": "amy"}))
	).evaluate(_observed(calls), Case("c"))
	assert order.reason.startswith("exact: expected [a.look, a.send], got [a.send]; ")
