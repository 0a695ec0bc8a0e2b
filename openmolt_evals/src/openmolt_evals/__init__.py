"""Evals: prove that an agent picks the right tools with the right arguments, and keeps doing so.

A `Dataset` is a list of `Case`s (an input, and what should happen: an output, tool calls, checks).
`evaluate` runs the agent on every case, concurrently up to a limit, and scores each run with the
evaluators (`openmolt_evals.evaluators`). The `Report` prints as a table, saves as JSON, and
compares with an earlier report (model A against model B, or last week's prompt against today's).

```python
dataset = Dataset.load("evals/support.json")
report = await evaluate(agent, dataset, concurrency=4)
print(report.table())
assert report.score >= 0.9
```

From the command line: ``openmolt eval evals/support.json agent.json --min-score 0.9`` exits 1
when the score is under the threshold, for CI. ``Dataset.record(results)`` turns real runs into
cases: their inputs, outputs and tool calls become the expectations.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openmolt_core.errors import ConfigurationError, RunError
from openmolt_core.llm import Usage
from openmolt_core.result import RunState
from openmolt_core.secrets import Redactor, masked_excerpt, redactor_for
from openmolt_evals.evaluators import (
	EVALUATORS,
	Evaluator,
	OutputEquals,
	Score,
	ToolCall,
	Trajectory,
	_shown,
)

if TYPE_CHECKING:
	from openmolt_core.agent import Agent
	from openmolt_core.events import ToolCallEvent
	from openmolt_core.llm import LLMProvider
	from openmolt_core.result import RunResult

__all__ = [
	"MAX_FILE_BYTES",
	"Case",
	"CaseReport",
	"Dataset",
	"Observed",
	"Report",
	"ToolCall",
	"check_report",
	"compare",
	"evaluate",
	"trajectory_of",
]

MAX_FILE_BYTES = 64 << 20
"""The largest dataset or ``--compare`` report read (one of a thousand cases is a few megabytes):
a larger file, or a path that names no regular file (a folder, a device such as ``/dev/zero``, a
named pipe), is refused before it is read."""


@dataclass(frozen=True, slots=True)
class Case:
	"""One case of a dataset.

	Args:
		name: How reports name it.
		input: The run's input.
		expected_output: The output the run should finish with (checked by `OutputEquals`).
		expected_tools: The tool calls it should make (checked by `Trajectory`).
		evaluators: Evaluators for this case only, besides the dataset's.
	"""

	name: str
	input: Any = None
	expected_output: Any = None
	expected_tools: tuple[ToolCall, ...] = ()
	evaluators: tuple[Evaluator, ...] = ()


def _evaluator(data: Any, where: str) -> Evaluator:
	if isinstance(data, Evaluator):
		return data
	if not isinstance(data, Mapping) or "type" not in data:
		raise ConfigurationError(
			f"{where}: an evaluator is {{'type': ..., ...}}; types: {', '.join(EVALUATORS)}"
		)
	cls = EVALUATORS.get(str(data["type"]))
	if cls is None:
		from openmolt_core._support.suggest import suggestion

		raise ConfigurationError(
			f"{where}: unknown evaluator {data['type']!r}; {suggestion(str(data['type']), EVALUATORS, noun='evaluators')}"
		)
	known = [spec.name for spec in fields(cls)]
	values = {k: v for k, v in data.items() if k != "type"}
	for key in values:
		if key not in known:  # not Python's "__init__() got an unexpected keyword argument"
			from openmolt_core._support.suggest import suggestion

			raise ConfigurationError(
				f"{where}: {data['type']}: unknown field {key!r}; "
				f"{suggestion(str(key), known, noun='fields')}"
			)
	try:
		if "expected" in values and cls is Trajectory and values["expected"] is not None:
			try:
				values["expected"] = _tool_calls(values["expected"])
			except ValueError as exc:
				raise ValueError(f"expected: {exc}") from None
		evaluator: Evaluator = cls(**values)
	except (TypeError, ValueError) as exc:
		raise ConfigurationError(f"{where}: {data['type']}: {exc}") from exc
	return evaluator


def _tool_calls(data: Any) -> tuple[ToolCall, ...]:
	"""Expected calls from their JSON form, a list of ``{"tool": ..., "input": {...}}``.

	Raises:
		ValueError: ``data`` is not a list of such objects.
	"""
	if not isinstance(data, list | tuple):
		raise ValueError(
			f"a list of calls [{{'tool': ..., 'input': {{...}}}}], not a {type(data).__name__}"
		)
	return tuple(_tool_call(call) for call in data)


def _tool_call(data: Any) -> ToolCall:
	"""An expected call from its JSON form, ``{"tool": ..., "input": {...}}``."""
	if not isinstance(data, Mapping) or set(data) - {"tool", "input"} or "tool" not in data:
		raise ValueError(
			f'an expected call is {{"tool": ..., "input": {{...}}}}, not {_shown(data)}'
		)
	given = data.get("input")
	return ToolCall(tool=data["tool"], input={} if given is None else given)


def _evaluator_list(data: Mapping[str, Any], where: str) -> list[Any] | None:
	"""The list under ``evaluators`` (None when absent), refusing another kind of value by name."""
	value = data.get("evaluators")
	if value is None or isinstance(value, list):
		return value
	raise ConfigurationError(
		f"{where}: a list of evaluators ([{{'type': ...}}, ...]), not a {type(value).__name__}"
	)


def _text(value: Any, where: str, default: str) -> str:
	"""A name from a dataset: text, or ``default`` when it gives none."""
	if value is None or value == "":
		return default
	if not isinstance(value, str):
		raise ConfigurationError(f"{where}: a name is text, not a {type(value).__name__}")
	return value


def _case(data: Any, index: int) -> Case:
	where = f"cases[{index}]"
	if not isinstance(data, Mapping):
		raise ConfigurationError(
			f'{where}: a case is an object ({{"input": ..., "expected_output": ...}}), not a '
			f"{type(data).__name__}"
		)
	known = {
		"name",
		"input",
		"expected_output",
		"expectedOutput",
		"expected_tools",
		"expectedTools",
		"evaluators",
	}
	unknown = sorted(set(data) - known)
	if unknown:
		raise ConfigurationError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(known)}")
	key = "expected_tools" if "expected_tools" in data else "expectedTools"
	try:
		expected = _tool_calls(data.get(key) or [])
	except ValueError as exc:
		raise ConfigurationError(f"{where}.expected_tools: {exc}") from exc
	evaluators = _evaluator_list(data, f"{where}.evaluators") or []
	return Case(
		name=_text(data.get("name"), f"{where}.name", f"case {index + 1}"),
		input=data.get("input"),
		expected_output=data.get("expected_output", data.get("expectedOutput")),
		expected_tools=expected,
		evaluators=tuple(
			_evaluator(e, f"{where}.evaluators[{i}]") for i, e in enumerate(evaluators)
		),
	)


@dataclass(frozen=True, slots=True)
class Dataset:
	"""Cases and the evaluators that score every one of them.

	Args:
		cases: The cases.
		evaluators: Evaluators for every case. None: `OutputEquals` for cases with an expected
			output and `Trajectory` (in order) for cases with expected tools.
		name: The dataset's name, for reports.
	"""

	cases: tuple[Case, ...]
	evaluators: tuple[Evaluator, ...] | None = None
	name: str = "dataset"

	@classmethod
	def from_dict(cls, data: Mapping[str, Any], *, name: str = "dataset") -> Dataset:
		"""Read a dataset from its JSON form (``{"cases": [...], "evaluators": [...]}``).

		Raises:
			ConfigurationError: The data is malformed; the message names the field.
		"""
		if not isinstance(data, Mapping):
			raise ConfigurationError(
				f'dataset: a dataset is a JSON object, {{"cases": [...]}}, not a '
				f'{type(data).__name__}; put the cases under "cases"'
			)
		cases = data.get("cases")
		if not isinstance(cases, list) or not cases:
			if "model" in data and "cases" not in data:  # the agent file, given first
				raise ConfigurationError(
					"dataset: this is an agent file, not a dataset: give the dataset first "
					"(openmolt eval DATASET AGENT_FILE)"
				)
			raise ConfigurationError("dataset: 'cases' must be a non-empty list")
		listed = _evaluator_list(data, "evaluators")
		return cls(
			cases=tuple(_case(c, i) for i, c in enumerate(cases)),
			evaluators=None
			if listed is None
			else tuple(_evaluator(e, f"evaluators[{i}]") for i, e in enumerate(listed)),
			name=_text(data.get("name"), "name", name),
		)

	@classmethod
	def load(cls, path: str | Path) -> Dataset:
		"""Read a dataset from a JSON file (UTF-8, a BOM allowed).

		Raises:
			ConfigurationError: The file cannot be read or is malformed; the message names the
				file, and the line where JSON says one.
		"""
		file = Path(path) if not isinstance(path, str) or "\x00" not in path else None
		if file is None:
			raise ConfigurationError(
				f"dataset: {path!r} cannot name a file (it holds a NUL character)"
			)
		data = _read_json(file, f"dataset {str(file)!r}")
		return cls.from_dict(data, name=file.stem)

	@classmethod
	def record(cls, runs: Iterable[RunResult | RunState], *, name: str = "recorded") -> Dataset:
		"""Cases from real runs: each run's input, final output and the tool calls that ran.

		Review the cases before you rely on them: they expect exactly what happened.
		"""
		cases = []
		for index, run in enumerate(runs):
			state = run if isinstance(run, RunState) else run.state
			output = None if isinstance(run, RunState) else _dump(run.output)
			first = _first_turn(state, index)
			cases.append(
				Case(
					name=f"{name} {index + 1}",
					input=first.get("input"),
					expected_output=output,
					expected_tools=tuple(trajectory_of(state)),
				)
			)
		return cls(cases=tuple(cases), name=name)

	def to_dict(self) -> dict[str, Any]:
		"""The dataset's JSON form, which `from_dict` reads back.

		Raises:
			ConfigurationError: An evaluator JSON cannot hold (not a built-in type, or with a
				Python function or a provider object); the message names it.
		"""
		data: dict[str, Any] = {"name": self.name}
		if self.evaluators is not None:
			data["evaluators"] = [
				_evaluator_dict(e, f"evaluators[{i}]") for i, e in enumerate(self.evaluators)
			]
		cases = []
		for index, c in enumerate(self.cases):
			case: dict[str, Any] = {
				"name": c.name,
				"input": c.input,
				"expected_output": c.expected_output,
				"expected_tools": [
					{"tool": t.tool, "input": dict(t.input)} for t in c.expected_tools
				],
			}
			if c.evaluators:
				case["evaluators"] = [
					_evaluator_dict(e, f"cases[{index}].evaluators[{i}]")
					for i, e in enumerate(c.evaluators)
				]
			cases.append(case)
		data["cases"] = cases
		return data


def _read_json(file: Path, name: str) -> Any:
	"""A JSON file's value, read as agent files are: UTF-8 with or without a BOM, strict JSON.

	Args:
		file: The file.
		name: How messages name it (``dataset 'cases.json'``, ``--compare 'old.json'``).

	Raises:
		ConfigurationError: The file cannot be read (missing, not a regular file, or larger
			than `MAX_FILE_BYTES`), is not UTF-8, is not JSON (the line and column), holds NaN
			or Infinity, gives a key twice in one object, or nests deeper than the parser reads.
	"""
	from openmolt_core._support.paths import read_text

	try:  # a BOM, as Notepad saves
		text = read_text(file, limit=MAX_FILE_BYTES, encoding="utf-8-sig")
	except OSError as exc:  # its reason ("it is a named pipe"), not "[Errno 2] ...: 'x'"
		raise ConfigurationError(f"{name}: cannot be read: {exc.strerror or exc}") from exc
	except UnicodeDecodeError as exc:
		from openmolt_core._support.textfile import not_utf8

		raise ConfigurationError(not_utf8(name, exc)) from None

	def constant(word: str) -> Any:
		raise json.JSONDecodeError(
			f"{word} is not valid JSON; write a number or a string", text, max(text.find(word), 0)
		)

	def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
		out: dict[str, Any] = {}
		for key, value in pairs:
			if key in out:  # json keeps the last: the first block would be dropped unseen
				raise ConfigurationError(
					f"{name}: {key!r} is given twice in one object; merge the two"
				)
			out[key] = value
		return out

	try:
		return json.loads(text, parse_constant=constant, object_pairs_hook=unique)
	except json.JSONDecodeError as exc:  # as an agent file's: the line, then the column
		raise ConfigurationError(
			f"{name}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
		) from exc
	except RecursionError:
		raise ConfigurationError(
			f"{name}: the JSON nests deeper than the parser reads; flatten it"
		) from None


def _evaluator_dict(evaluator: Evaluator, where: str) -> dict[str, Any]:
	"""A built-in evaluator's JSON form (``{"type": ..., fields that differ from defaults}``)."""
	kind = next((k for k, cls in EVALUATORS.items() if type(evaluator) is cls), None)
	name = getattr(evaluator, "name", type(evaluator).__name__)
	if kind is None:
		raise ConfigurationError(
			f"{where}: {name!r} is not a built-in evaluator; a dataset file cannot hold it"
		)
	data: dict[str, Any] = {"type": kind}
	for spec in fields(evaluator):  # type: ignore[arg-type]
		value = getattr(evaluator, spec.name)
		if value == (spec.default_factory() if callable(spec.default_factory) else spec.default):
			continue
		if isinstance(value, Mapping):
			value = dict(value)
		elif spec.name == "expected" and isinstance(evaluator, Trajectory):
			value = [{"tool": t.tool, "input": dict(t.input)} for t in value]
		try:
			json.dumps(value)
		except (TypeError, ValueError):
			raise ConfigurationError(
				f"{where}: {kind}'s {spec.name} ({type(value).__name__}) cannot be written as "
				"JSON; give it in Python, or a name a dataset file can hold"
			) from None
		data[spec.name] = value
	return data


def _dump(value: Any) -> Any:
	dump = getattr(value, "model_dump", None)
	return dump(mode="json") if callable(dump) else value


def trajectory_of(state: RunState) -> list[ToolCall]:
	"""The tool calls a run made that ran, in order, read from its history."""
	calls: list[ToolCall] = []
	messages = state.messages
	for index, message in enumerate(messages):
		if message.role != "assistant" or index + 1 >= len(messages):
			continue
		try:
			commands = json.loads(message.content).get("commands") or []
			results = json.loads(messages[index + 1].content).get("results") or []
		except (ValueError, AttributeError):
			continue
		tools = [r for r in results if isinstance(r, dict) and "tool" in r]
		asked = [c for c in commands if isinstance(c, dict) and c.get("type") == "callTool"]
		if len(tools) != len(asked):
			continue  # the reply did not run (its results are errors)
		calls.extend(ToolCall(str(c.get("tool")), c.get("input") or {}) for c in asked)
	return calls


@dataclass(slots=True)
class Observed:
	"""What one case's run did, as evaluators see it.

	Args:
		output: The validated output (None when the run did not finish).
		status: The run's status.
		human_message: The model's message for a person.
		steps: Model calls made.
		usage: Tokens and cost of the run.
		seconds: Wall-clock seconds.
		tool_calls: The tool calls that ran, in order.
		error: What went wrong, when the run failed.
		resolve_model: Turns a ``"provider:model"`` (or None) into a provider and a model name.
		judge_usage: Tokens the judges spent on this case.
		redact: Masks the secrets the agent's instance knows in a text; what an evaluator sends
			to a model goes through it, as everything the agent's model reads does.
	"""

	output: Any
	status: str
	human_message: str
	steps: int
	usage: Usage
	seconds: float
	tool_calls: list[ToolCall]
	error: str | None
	resolve_model: Any
	judge_usage: Usage = field(default_factory=Usage)
	redact: Callable[[str], str] = str


@dataclass(frozen=True, slots=True)
class CaseReport:
	"""One case's scores.

	Args:
		case: The case's name.
		status: The run's status.
		scores: One per evaluator.
		steps: Model calls.
		usage: The run's usage.
		seconds: Wall-clock seconds.
		error: What went wrong, when the run failed.
	"""

	case: str
	status: str
	scores: tuple[Score, ...]
	steps: int
	usage: Usage
	seconds: float
	error: str | None = None

	@property
	def score(self) -> float:
		"""The mean of the evaluators' scores, skipped ones aside.

		0 for a run that failed; 1 when nothing was checked.
		"""
		if self.status == "error":
			return 0.0
		scored = [s.score for s in self.scores if not s.skipped]
		return sum(scored) / len(scored) if scored else 1.0

	@property
	def passed(self) -> bool:
		"""Whether every evaluator passed it (full marks, or a judge's threshold)."""
		return self.status != "error" and all(s.passed for s in self.scores)

	def to_dict(self) -> dict[str, Any]:
		"""The case report as JSON-serializable data."""
		return {
			"case": self.case,
			"status": self.status,
			"score": self.score,
			"passed": self.passed,
			"scores": [s.to_dict() for s in self.scores],
			"steps": self.steps,
			"usage": self.usage.to_dict(),
			"seconds": round(self.seconds, 3),
			"error": self.error,
		}


@dataclass(frozen=True, slots=True)
class Report:
	"""A dataset's results: per case, and overall.

	Args:
		dataset: The dataset's name.
		agent: The agent's name and model.
		cases: One report per case, in the dataset's order.
	"""

	dataset: str
	agent: str
	cases: tuple[CaseReport, ...]

	@property
	def score(self) -> float:
		"""The mean case score, from 0 to 1."""
		return sum(c.score for c in self.cases) / len(self.cases) if self.cases else 0.0

	@property
	def passed(self) -> int:
		"""How many cases got full marks."""
		return sum(1 for c in self.cases if c.passed)

	def evaluator_means(self) -> dict[str, float]:
		"""The mean score of each evaluator over the cases it scored (not those it skipped)."""
		totals: dict[str, list[float]] = {}
		for case in self.cases:
			for s in case.scores:
				if not s.skipped:
					totals.setdefault(s.evaluator, []).append(s.score)
		return {k: sum(v) / len(v) for k, v in totals.items()}

	def to_dict(self) -> dict[str, Any]:
		"""The report as JSON-serializable data (the format `compare` and ``--compare`` read)."""
		usage = Usage()
		for case in self.cases:
			usage.add(case.usage)
		return {
			"dataset": self.dataset,
			"agent": self.agent,
			"score": self.score,
			"passed": self.passed,
			"total": len(self.cases),
			"evaluators": self.evaluator_means(),
			"usage": usage.to_dict(),
			"cases": [c.to_dict() for c in self.cases],
		}

	def table(self) -> str:
		"""The report as a plain-text table for a terminal."""
		rows = [("case", "status", "score", "steps", "tokens", "cost", "seconds", "why")]
		for c in self.cases:
			why = "; ".join(
				f"{s.evaluator}: {s.reason}" for s in c.scores if not s.passed and s.reason
			)
			cost = f"${c.usage.cost_usd:.4f}" if c.usage.cost_usd is not None else "-"
			cost += "+" if c.usage.cost_partial else ""  # some calls had no price
			rows.append(
				(
					_one_line(c.case),
					_one_line(c.status),
					f"{c.score:.2f}",
					str(c.steps),
					str(c.usage.total_tokens),
					cost,
					f"{c.seconds:.2f}",
					_one_line(masked_excerpt(c.error or why, 80)),
				)
			)
		widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
		lines = [
			"  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows
		]
		lines.insert(1, "  ".join("-" * w for w in widths))
		lines.append(
			f"\n{_one_line(self.dataset)} with {_one_line(self.agent)}: score {self.score:.2f}, "
			f"{self.passed}/{len(self.cases)} cases passed"
		)
		return "\n".join(lines)


def check_report(data: Any, name: str) -> dict[str, Any]:
	"""A report's JSON form (`Report.to_dict`, ``--json``), checked as far as `compare` reads it.

	Args:
		data: The report read from a file, or given.
		name: How messages name it (``--compare 'old.json'``).

	Raises:
		ConfigurationError: It is no object with a list of cases, each named by text with a
			number for its score (and a number for the overall score, if any); the message
			names the field.
	"""

	def number(value: Any) -> bool:
		return isinstance(value, int | float) and not isinstance(value, bool)

	hint = "write one with --json PATH"
	if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
		raise ConfigurationError(f"{name}: cases: not a report, whose cases are a list ({hint})")
	if "score" in data and not number(data["score"]):
		raise ConfigurationError(f"{name}: score: a number, not {_shown(data['score'])} ({hint})")
	for index, case in enumerate(data["cases"]):
		where = f"{name}: cases[{index}]"
		if not isinstance(case, Mapping):
			raise ConfigurationError(
				f"{where}: a case's report is an object, not a {type(case).__name__} ({hint})"
			)
		if not isinstance(case.get("case"), str):
			raise ConfigurationError(f"{where}.case: the case's name, as text ({hint})")
		if not number(case.get("score")):
			raise ConfigurationError(
				f"{where}.score: a number, not {_shown(case.get('score'))} ({hint})"
			)
	return dict(data)


def compare(before: Mapping[str, Any] | Report, after: Mapping[str, Any] | Report) -> str:
	"""How two reports of one dataset differ, per case and overall (``before`` → ``after``).

	Args:
		before: The earlier report (or its `Report.to_dict`).
		after: The later one.

	Raises:
		ConfigurationError: A mapping given is no report (`check_report`).
	"""
	a = before.to_dict() if isinstance(before, Report) else check_report(before, "before")
	b = after.to_dict() if isinstance(after, Report) else check_report(after, "after")
	old = {c["case"]: c["score"] for c in a.get("cases", [])}
	lines = [
		f"{_one_line(str(a.get('agent')))} → {_one_line(str(b.get('agent')))}: "
		f"score {a.get('score', 0):.2f} → {b.get('score', 0):.2f}"
	]
	for case in b.get("cases", []):
		prev = old.get(case["case"])
		name = _one_line(case["case"])
		if prev is None:
			lines.append(f"  {name}: new, {case['score']:.2f}")
		elif abs(prev - case["score"]) > 1e-9:
			lines.append(f"  {name}: {prev:.2f} → {case['score']:.2f}")
	now = {c["case"] for c in b.get("cases", [])}
	lines += [
		f"  {_one_line(name)}: gone (was {score:.2f})"
		for name, score in old.items()
		if name not in now
	]
	return "\n".join(lines)


_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _one_line(text: str) -> str:
	"""Text for one cell or line: a line break or tab shown as its escape.

	A case's name comes from the dataset, a reason from a model: a line break in either would
	start a row or a summary line of its own in the table.
	"""
	return text.translate(_BREAKS)


async def evaluate(
	agent: Agent,
	dataset: Dataset,
	*,
	concurrency: int = 4,
	evaluators: Sequence[Evaluator] | None = None,
) -> Report:
	"""Run the agent on every case and score the runs.

	Args:
		agent: The agent under test.
		dataset: The cases.
		concurrency: How many runs at once.
		evaluators: Overrides the dataset's evaluators.

	Returns:
		The report, cases in the dataset's order.

	Raises:
		ConfigurationError: ``concurrency`` is under 1, or a judge's model cannot be used (its
			provider is not installed or not configured, or has no API key): said before any
			case runs.
	"""
	if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
		raise ConfigurationError(
			f"evaluate: concurrency is how many runs at once, 1 or more, not {concurrency!r}"
		)
	limiter = anyio.CapacityLimiter(concurrency)
	reports: list[CaseReport | None] = [None] * len(dataset.cases)
	chosen = evaluators if evaluators is not None else dataset.evaluators
	_check_judges(agent, [*(chosen or ()), *(e for c in dataset.cases for e in c.evaluators)])

	async def one(index: int, case: Case) -> None:
		async with limiter:
			reports[index] = await _run_case(agent, case, chosen)

	async with anyio.create_task_group() as tg:
		for index, case in enumerate(dataset.cases):
			tg.start_soon(one, index, case)
	return Report(
		dataset=dataset.name,
		agent=f"{agent.name} ({agent.provider_name or 'custom'}:{agent.model})",
		cases=tuple(r for r in reports if r is not None),
	)


def _check_judges(agent: Agent, evaluators: Sequence[Evaluator]) -> None:
	"""Make each judge's provider, and check its key, before any case runs.

	A provider nobody installed or configured, or one without its API key, would otherwise fail
	each case's judge, after the agent's run (which costs money) had been made for nothing. The
	key is checked as the provider reads it (a provider that says it needs one, ``key_required``,
	is asked for it: ``api_key()``).

	Raises:
		ConfigurationError: A judge's model cannot be used; the message names it.
	"""
	from openmolt_core.errors import OpenMoltError
	from openmolt_evals.evaluators import LLMJudge

	models = sorted(
		{e.model for e in evaluators if isinstance(e, LLMJudge) and isinstance(e.model, str)}
	)
	if not models:
		return
	from openmolt_core.assembly import resolve_model
	from openmolt_core.openmolt import OpenMolt

	om = OpenMolt.of(agent)
	for model in models:
		try:
			provider = resolve_model(om, model)[2]()
			key = getattr(provider, "api_key", None)
			if getattr(provider, "key_required", False) and callable(key):
				key()  # no key: the provider's error names the variable to set
		except OpenMoltError as exc:
			raise ConfigurationError(f"llm_judge: model {model!r} cannot be used: {exc}") from exc


def _defaults(case: Case) -> list[Evaluator]:
	out: list[Evaluator] = []
	if case.expected_output is not None:
		out.append(OutputEquals())
	if case.expected_tools:
		out.append(Trajectory())
	return out


async def _run_case(agent: Agent, case: Case, chosen: Sequence[Evaluator] | None) -> CaseReport:
	# What a case reports passes through the agent's redactor: a failure's message, an
	# evaluator's reason, may quote a secret the instance knows.
	redact = redactor_for((), getattr(agent.om, "secrets", None))
	state = RunState()
	calls: list[ToolCall] = []

	def seen(event: ToolCallEvent) -> None:
		if event.run_id == state.run_id:
			calls.append(ToolCall(event.tool, dict(event.input)))

	agent.on("tool:call", seen)
	began = time.perf_counter()
	error: str | None = None
	try:
		result = await agent.run(case.input, history=state)
	except RunError as exc:
		result, error = exc.result, str(exc)
	except Exception as exc:
		# Whatever else a run raises ends this case, not the others' runs.
		error = redact(f"{type(exc).__name__}: {exc}")
		seconds = time.perf_counter() - began
		return CaseReport(case.name, "error", (), 0, Usage(), seconds, error)
	finally:
		agent.off("tool:call", seen)
	seconds = time.perf_counter() - began

	def resolve(model: Any) -> tuple[LLMProvider, str]:
		if model is None:
			return agent.provider(), agent.model
		from openmolt_core.assembly import resolve_model
		from openmolt_core.openmolt import OpenMolt

		_, name, factory = resolve_model(OpenMolt.of(agent), model)
		return factory(), name

	observed = Observed(
		output=result.output,
		status=result.status,
		human_message=result.human_message,
		steps=result.steps,
		usage=result.usage,
		seconds=seconds,
		tool_calls=calls,
		error=error or result.error,
		resolve_model=resolve,
		redact=redact,
	)
	evaluators = [*(chosen if chosen is not None else _defaults(case)), *case.evaluators]
	scores = _distinct([_masked(await _score(e, observed, case), redact) for e in evaluators])
	usage = Usage()
	usage.add(result.usage)
	if observed.judge_usage.calls:
		usage.add(observed.judge_usage)
	error = redact(error) if error is not None else None
	return CaseReport(case.name, result.status, scores, result.steps, usage, seconds, error)


async def _score(evaluator: Evaluator, observed: Observed, case: Case) -> Score:
	"""The evaluator's score; one that raises (a judge's model down) scores 0 with why."""
	try:
		return await evaluator.evaluate(observed, case)
	except Exception as exc:
		name = str(getattr(evaluator, "name", type(evaluator).__name__))
		return Score(name, 0.0, f"the evaluator failed: {type(exc).__name__}: {exc}")


def _distinct(scores: list[Score]) -> tuple[Score, ...]:
	"""The scores, each evaluator named once: a second of one name is ``<name> (2)``.

	Or the next number that no evaluator's own name takes.

	Two trajectory checks of different modes are both ``trajectory``; the report's means and
	``compare`` go by name, and would mix them.
	"""
	taken = {score.evaluator for score in scores}  # a name an evaluator gives is its own
	seen: set[str] = set()
	out = []
	for score in scores:
		name = score.evaluator
		if name in seen:
			count = 2
			while f"{name} ({count})" in taken:
				count += 1
			name = f"{name} ({count})"
			taken.add(name)
		seen.add(name)
		out.append(score if name == score.evaluator else replace(score, evaluator=name))
	return tuple(out)


def _masked(score: Score, redact: Redactor) -> Score:
	return replace(score, reason=redact(score.reason)) if score.reason else score


def _first_turn(state: RunState, index: int) -> dict[str, Any]:
	"""The first turn an agent wrote for a run (its input among it), as `Dataset.record` reads it.

	Raises:
		ConfigurationError: The state's first message is not such a turn (a state made by hand).
	"""
	if not state.messages:
		return {}
	try:
		first = json.loads(state.messages[0].content)
	except ValueError:
		first = None
	if not isinstance(first, dict):
		raise ConfigurationError(
			f"Dataset.record: runs[{index}]: its first message is not the JSON turn an agent "
			"writes (with the run's input); record the results or states of agent runs"
		)
	return first
