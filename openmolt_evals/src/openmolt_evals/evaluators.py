"""The evaluators: each looks at one case's run and gives a score from 0 to 1 with a reason.

| evaluator | checks |
| --- | --- |
| `OutputEquals` | the output equals the expected value (dicts compared as JSON) |
| `OutputSchema` | the output matches a JSON Schema |
| `Trajectory` | the tools called match the expected ones: ``exact``, ``in_order``, ``any_order`` or ``subset`` |
| `ToolArguments` | the arguments of a tool's calls: equal to values, or passing a check |
| `LLMJudge` | a model grades the output against a rubric |
| `Efficiency` | steps, tokens, cost and seconds within limits |

An evaluator is any object with ``name`` and ``async evaluate(observed, case) -> Score``; the
built-ins are small frozen dataclasses, so a dataset file can name them with their fields.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

import anyio

if TYPE_CHECKING:
	from openmolt_evals import Case, Observed

__all__ = [
	"JUDGE_TIMEOUT",
	"Efficiency",
	"Evaluator",
	"LLMJudge",
	"OutputEquals",
	"OutputSchema",
	"Score",
	"ToolArguments",
	"ToolCall",
	"Trajectory",
]


@dataclass(frozen=True, slots=True)
class Score:
	"""One evaluator's verdict on one case.

	Args:
		evaluator: The evaluator's name.
		score: From 0 (failed) to 1 (passed).
		reason: Why, in a few words.
		threshold: The score from which it counts as passed (1: full marks only; an
			`LLMJudge` gives its own).
		skipped: The evaluator had nothing to check in this case (`OutputEquals` without an
			expected output): the score counts in no mean, and the case is not failed for it.
	"""

	evaluator: str
	score: float
	reason: str = ""
	threshold: float = 1.0
	skipped: bool = False

	@classmethod
	def skip(cls, evaluator: str, reason: str) -> Score:
		"""A score for a case the evaluator has nothing to check in."""
		return cls(evaluator, 0.0, reason, skipped=True)

	@property
	def passed(self) -> bool:
		"""Whether the score reaches the threshold (a skipped score is not a failure)."""
		return self.skipped or self.score >= self.threshold

	def to_dict(self) -> dict[str, Any]:
		"""The score as JSON-serializable data (``score`` None when skipped)."""
		return {
			"evaluator": self.evaluator,
			"score": None if self.skipped else self.score,
			"passed": self.passed,
			"skipped": self.skipped,
			"reason": self.reason,
		}


@runtime_checkable
class Evaluator(Protocol):
	"""Scores one case's run."""

	@property
	def name(self) -> str:
		"""How reports name it."""
		...

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""Score what the agent did for the case."""
		...


@dataclass(frozen=True, slots=True)
class ToolCall:
	"""A tool call, expected or observed.

	Args:
		tool: The tool handle (``integration.tool``).
		input: Its input (for an expected call: the fields that must match; empty: any).
	"""

	tool: str
	input: Mapping[str, Any] = field(default_factory=dict)

	def __post_init__(self) -> None:
		"""Refuse a call that is not a tool handle and an object of arguments."""
		if not isinstance(self.tool, str) or not self.tool:
			raise ValueError(f"a tool call's 'tool' is a tool handle, not {_shown(self.tool)}")
		if not isinstance(self.input, Mapping):
			raise ValueError(
				f"{self.tool}: a tool call's 'input' is an object, not {_shown(self.input)}"
			)

	def matches(self, other: ToolCall) -> bool:
		"""Whether an observed call is this expected one: same tool, and the fields given here."""
		return self.tool == other.tool and all(
			_same(v, other.input.get(k)) for k, v in self.input.items()
		)


def _same(a: Any, b: Any) -> bool:
	"""Whether two values are the same JSON value (``1`` and ``1.0`` are one number)."""
	return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
	return json.dumps(_numbers(value), sort_keys=True, default=str)


def _numbers(value: Any) -> Any:
	# JSON has one kind of number: a whole float is written as the integer it equals.
	if isinstance(value, float) and value.is_integer():
		return int(value)
	if isinstance(value, Mapping):
		return {str(k): _numbers(v) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [_numbers(v) for v in value]
	return value


def _mismatches(expected: Sequence[ToolCall], calls: Sequence[ToolCall]) -> list[str]:
	"""For each expected call no observed call matches: missing, or which argument differs.

	The call of the same tool that differs least is compared, down to the nested argument
	(``filter.status``, ``items[1].id``) that is missing, extra or another value.
	"""
	out: list[str] = []
	for want in expected:
		if any(want.matches(c) for c in calls):
			continue
		same_tool = [c for c in calls if c.tool == want.tool]
		if not same_tool:
			out.append(f"{want.tool} was not called")
			continue
		diffs = min(
			(_differences(dict(want.input), dict(c.input), "", top=True) for c in same_tool),
			key=len,
		)
		out.append(f"{want.tool} was called with other arguments ({', '.join(diffs)})")
	return out


def _differences(want: Any, got: Any, path: str, *, top: bool = False) -> list[str]:
	"""Where ``got`` is not ``want``: each differing, missing or extra argument, by its path.

	At the top only the arguments the expected call names count (the others may be anything);
	inside an object, an argument the expected value does not have is an extra one.
	"""
	if isinstance(want, Mapping) and isinstance(got, Mapping):
		out: list[str] = []
		for key, value in want.items():
			where = f"{path}.{key}" if path else str(key)
			if key not in got:
				if value is not None or not top:  # an absent argument matches null (ToolCall)
					out.append(f"{where}: expected {_shown(value)}, missing")
				continue
			out += _differences(value, got[key], where)
		if not top:
			out += [
				f"{path}.{key}: not expected, got {_shown(value)}"
				for key, value in got.items()
				if key not in want
			]
		return out
	if isinstance(want, list | tuple) and isinstance(got, list | tuple):
		out = []
		for i, value in enumerate(want):
			where = f"{path}[{i}]"
			out += (
				_differences(value, got[i], where)
				if i < len(got)
				else [f"{where}: expected {_shown(value)}, missing"]
			)
		out += [
			f"{path}[{i}]: not expected, got {_shown(got[i])}" for i in range(len(want), len(got))
		]
		return out
	return [] if _same(want, got) else [f"{path}: expected {_shown(want)}, got {_shown(got)}"]


def _with_arguments(expected: Sequence[ToolCall], calls: Sequence[ToolCall]) -> list[str]:
	"""Each call with the arguments the expected calls of its tool name (``a.send(to="amy")``)."""
	keys: dict[str, list[str]] = {}
	for want in expected:
		keys.setdefault(want.tool, [])
		keys[want.tool] += [k for k in want.input if k not in keys[want.tool]]
	out = []
	for call in calls:
		named = [k for k in keys.get(call.tool, []) if k in call.input]  # a missing one: not shown
		arguments = ", ".join(f"{k}={_shown(call.input[k])}" for k in named)
		out.append(f"{call.tool}({arguments})")
	return out


def _plain(value: Any) -> Any:
	dump = getattr(value, "model_dump", None)
	return dump(mode="json") if callable(dump) else value


def _shown(value: Any) -> str:
	"""A value in a reason or an error as a dataset writes it: JSON (``true``, ``null``, ``"amy"``).

	A value JSON cannot hold (a Python object given in code) is shown as Python shows it.

	Args:
		value: What a run gave, or a case or an evaluator expects.
	"""
	try:
		return json.dumps(_plain(value), ensure_ascii=False, allow_nan=False)
	except (TypeError, ValueError):
		return repr(value)


def _check_name(name: Any) -> None:
	"""Refuse an evaluator name that is not text (reports key their means by it)."""
	if not isinstance(name, str) or not name:
		raise ValueError(
			f"name: how reports name the evaluator, a non-empty text, not {_shown(name)}"
		)


def _check_limit(field_name: str, value: Any, *, whole: bool) -> None:
	"""Refuse a limit that is not a number from 0 up (a count: a whole number)."""
	if value is None:
		return
	kinds = int if whole else int | float
	if (
		isinstance(value, bool)
		or not isinstance(value, kinds)
		or not math.isfinite(value)
		or value < 0
	):
		what = "a whole number" if whole else "a number"
		raise ValueError(
			f"{field_name}: {what} from 0 up, or null for no limit; not {_shown(value)}"
		)


@dataclass(frozen=True, slots=True)
class OutputEquals:
	"""The output equals the case's ``expected_output`` (or ``expected`` when given here).

	A case with neither is skipped (`Score.skipped`): a null output is checked with
	`OutputSchema` (``{"type": "null"}``).
	"""

	expected: Any = None
	name: str = "output_equals"

	def __post_init__(self) -> None:
		"""Refuse a name that is not text."""
		_check_name(self.name)

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""1 when equal (as JSON), else 0; skipped when no output is expected."""
		expected = self.expected if self.expected is not None else case.expected_output
		if expected is None:  # as for the default evaluators: None is no expectation
			return Score.skip(self.name, "the case names no expected output")
		got = _plain(observed.output)
		ok = _same(got, expected)
		return Score(
			self.name,
			1.0 if ok else 0.0,
			"" if ok else f"expected {_shown(expected)}, got {_shown(got)}",
		)


@dataclass(frozen=True, slots=True)
class OutputSchema:
	"""The output matches a JSON Schema.

	Args:
		schema: The JSON Schema (2020-12); one that breaks the metaschema is refused when the
			evaluator is made (and so when a dataset is read), not at each case it scores.
		name: Its name in reports.
	"""

	schema: Mapping[str, Any]
	name: str = "output_schema"

	def __post_init__(self) -> None:
		from openmolt_core._support.metaschema import check_schema

		_check_name(self.name)
		if not isinstance(self.schema, Mapping):
			raise ValueError("schema: must be a JSON Schema object")
		problems = check_schema(dict(self.schema))
		if problems:
			raise ValueError(f"schema: not a valid JSON Schema: {'; '.join(problems[:3])}")

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""1 when the output validates, else 0 with the first problems."""
		from openmolt_core._support.jsonschema import (
			JsonSchemaValidator,
			ValidationError,
			format_errors,
		)

		try:
			JsonSchemaValidator(dict(self.schema)).validate(_plain(observed.output))
		except ValidationError as exc:
			return Score(self.name, 0.0, format_errors(exc, limit=3))
		return Score(self.name, 1.0)


TrajectoryMode = Literal["exact", "in_order", "any_order", "subset"]
"""``exact``: the same calls, in order, nothing else. ``in_order``: the expected calls appear in
this order, others may come between. ``any_order``: the same calls, in any order. ``subset``: every
expected call appears somewhere."""

_MODES: tuple[str, ...] = get_args(TrajectoryMode)


def _in_order(expected: Sequence[ToolCall], calls: Sequence[ToolCall]) -> int:
	"""How many expected calls match calls in their order: the longest common subsequence."""
	previous = [0] * (len(calls) + 1)
	for want in expected:
		row = [0]
		for j, call in enumerate(calls):
			row.append(previous[j] + 1 if want.matches(call) else max(previous[j + 1], row[j]))
		previous = row
	return previous[-1]


def _paired(expected: Sequence[ToolCall], calls: Sequence[ToolCall]) -> int:
	"""How many expected calls match distinct calls, in any order: a maximum matching."""
	owner: dict[int, int] = {}  # call index -> expected index

	def place(e: int, seen: set[int]) -> bool:
		for c, call in enumerate(calls):
			if c in seen or not expected[e].matches(call):
				continue
			seen.add(c)
			if c not in owner or place(owner[c], seen):
				owner[c] = e
				return True
		return False

	return sum(1 for e in range(len(expected)) if place(e, set()))


@dataclass(frozen=True, slots=True)
class Trajectory:
	"""The tools the agent called, against the case's ``expected_tools``.

	Args:
		mode: How strictly to compare (see `TrajectoryMode`).
		expected: The expected calls (default: the case's).
	"""

	mode: TrajectoryMode = "in_order"
	expected: Sequence[ToolCall] | None = None
	name: str = "trajectory"

	def __post_init__(self) -> None:
		"""Refuse a mode that is not one of `TrajectoryMode`'s, or expected calls that are not calls."""
		_check_name(self.name)
		if self.mode not in _MODES:
			raise ValueError(f"mode {_shown(self.mode)} is not one of {', '.join(_MODES)}")
		if self.expected is not None and (
			isinstance(self.expected, str | Mapping)
			or not isinstance(self.expected, Sequence)
			or not all(isinstance(call, ToolCall) for call in self.expected)
		):
			raise ValueError(
				'expected: a list of calls (ToolCall, or {"tool": ..., "input": {...}} in a '
				f"dataset), not {_shown(self.expected)}"
			)

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""The share of expected calls matched (1 only when the mode's rule holds)."""
		expected = list(self.expected if self.expected is not None else case.expected_tools)
		calls = list(observed.tool_calls)
		if not expected:
			ok = not calls if self.mode in ("exact", "any_order") else True
			return Score(
				self.name, 1.0 if ok else 0.0, "" if ok else f"expected no calls, got {len(calls)}"
			)
		if self.mode in ("exact", "in_order"):
			matched = _in_order(expected, calls)
			ok = matched == len(expected)
			if self.mode == "exact":
				ok = len(calls) == len(expected) and all(
					e.matches(c) for e, c in zip(expected, calls, strict=True)
				)
		else:
			matched = _paired(expected, calls)
			ok = matched == len(expected) and (self.mode == "subset" or len(calls) == matched)
		# Partial credit: the expected calls found (in order, for the ordered modes), over the
		# longer of the two lists when extra calls count against the mode.
		strict = self.mode in ("exact", "any_order")
		score = 1.0 if ok else matched / max(len(expected), len(calls) if strict else 0, 1)
		if ok:
			return Score(self.name, score, "")
		details = _mismatches(expected, calls)
		want, seen = [e.tool for e in expected], [c.tool for c in calls]
		if want == seen:
			# The same tools, so the arguments tell the lists apart: another order, another value.
			want, seen = _with_arguments(expected, expected), _with_arguments(expected, calls)
		reason = f"{self.mode}: expected [{', '.join(want)}], got [{', '.join(seen)}]"
		return Score(self.name, score, reason + (f"; {'; '.join(details)}" if details else ""))


@dataclass(frozen=True, slots=True)
class ToolArguments:
	"""Checks on the arguments of every call of one tool.

	Args:
		tool: The tool handle.
		equals: Fields that must have these values (a dotted path reaches into objects).
		matches: Fields whose string value must match these regular expressions.
		check: A function of the input returning True when it is right (from Python only).
	"""

	tool: str
	equals: Mapping[str, Any] = field(default_factory=dict)
	matches: Mapping[str, str] = field(default_factory=dict)
	check: Callable[[Mapping[str, Any]], bool] | None = None
	name: str = "tool_arguments"

	def __post_init__(self) -> None:
		"""Refuse a field of the wrong type, or a pattern that does not compile, naming it."""
		_check_name(self.name)
		if not isinstance(self.tool, str) or not self.tool:
			raise ValueError(f"tool: the tool handle ('integration.tool'), not {_shown(self.tool)}")
		for label, given in (("equals", self.equals), ("matches", self.matches)):
			if not isinstance(given, Mapping):
				raise ValueError(
					f"{label}: an object of argument names (dotted paths) to "
					f"{'values' if label == 'equals' else 'regular expressions'}, not a "
					f"{type(given).__name__}"
				)
		if self.check is not None and not callable(self.check):
			raise ValueError(
				"check: a Python function of the input, given from Python (a dataset file "
				f"cannot hold one), not a {type(self.check).__name__}"
			)
		for key, pattern in self.matches.items():
			try:
				re.compile(pattern)
			except (re.error, TypeError) as exc:
				raise ValueError(
					f"matches[{key!r}]: {pattern!r} is not a regular expression ({exc})"
				) from None

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""The share of this tool's calls whose arguments pass (0 when it was never called)."""
		calls = [c for c in observed.tool_calls if c.tool == self.tool]
		if not calls:
			return Score(self.name, 0.0, f"{self.tool} was not called")
		problems: list[str] = []
		passed = 0
		for call in calls:
			bad = [
				f"{k}={_shown(_get(call.input, k))}"
				for k, v in self.equals.items()
				if not _same(_get(call.input, k), v)
			]
			bad += [
				f"{k}={_shown(_get(call.input, k))} !~ {rx}"
				for k, rx in self.matches.items()
				if not re.search(rx, str(_get(call.input, k) or ""))
			]
			if self.check is not None and not self.check(call.input):
				bad.append("check failed")
			if bad:
				problems.append(", ".join(bad))
			else:
				passed += 1
		return Score(self.name, passed / len(calls), "; ".join(problems))


def _get(data: Mapping[str, Any], path: str) -> Any:
	value: Any = data
	for part in path.split("."):
		if isinstance(value, Mapping):
			value = value.get(part)
		elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
			value = value[int(part)]
		else:
			return None
	return value


_JUDGE = """\
You grade the result of an AI agent against a rubric. You receive the task input, the agent's \
output and message, and the rubric. Answer with one JSON object and nothing else: \
{"score": <a number from 0 to 1>, "reason": "<one sentence>"}."""


JUDGE_TIMEOUT = 120.0
"""Seconds an `LLMJudge` waits for its model's answer by default (the provider's retries
included): a judge that does not answer scores 0 with the reason, and the evaluation goes on."""


@dataclass(frozen=True, slots=True)
class LLMJudge:
	"""A model grades the output against a rubric, with any configured provider.

	Args:
		rubric: What a good result is.
		model: A ``"provider:model"`` id, resolved with the evaluating `OpenMolt` instance, or a
			provider object.
		threshold: Scores at or above this count as passed in reports.
		timeout: Seconds the judge's answer may take, retries included (default
			`JUDGE_TIMEOUT`, 120); past it the case scores 0 for this judge, with the reason.
	"""

	rubric: str
	model: Any = None
	threshold: float = 0.5
	name: str = "llm_judge"
	timeout: float = JUDGE_TIMEOUT

	def __post_init__(self) -> None:
		"""Refuse a rubric, model or threshold of the wrong kind, naming the field."""
		_check_name(self.name)
		if not isinstance(self.rubric, str) or not self.rubric.strip():
			raise ValueError(f"rubric: what a good result is, in words; not {_shown(self.rubric)}")
		model = self.model
		if isinstance(model, str):
			provider, colon, name = model.partition(":")
			if not (colon and provider and name):
				raise ValueError(
					"model: a 'provider:model' id (e.g. 'openai:gpt-5-mini') or a provider "
					f"object, not {model!r}"
				)
		elif model is not None and not callable(getattr(model, "generate", None)):
			raise ValueError(
				"model: a 'provider:model' id (e.g. 'openai:gpt-5-mini') or a provider object, "
				f"not {model!r}"
			)
		if not _is_grade(self.threshold):
			raise ValueError(f"threshold is a score from 0 to 1, not {_shown(self.threshold)}")
		timeout = self.timeout
		if (
			isinstance(timeout, bool)
			or not isinstance(timeout, int | float)
			or not math.isfinite(timeout)
			or timeout <= 0
		):
			raise ValueError(
				f"timeout: the seconds the judge's answer may take, a number above 0 (default "
				f"{JUDGE_TIMEOUT:g}); not {_shown(timeout)}"
			)

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""The judge's score (0 when its answer cannot be read, or does not come in `timeout`)."""
		from openmolt_core.llm import Message, ModelRequest

		provider, model = observed.resolve_model(self.model)
		payload = {
			"input": case.input,
			"output": _plain(observed.output),
			"humanMessage": observed.human_message,
			"rubric": self.rubric,
		}
		# The judge reads what the agent's model read: masked (the case's input may hold a key).
		text = observed.redact(json.dumps(payload, default=str))
		request = ModelRequest(model=model, system=_JUDGE, messages=[Message("user", text)])
		with anyio.move_on_after(self.timeout) as waited:
			response = await provider.generate(request)
		if waited.cancelled_caught:
			return Score(
				self.name,
				0.0,
				f"the judge did not answer within {self.timeout:g} s (its timeout); give it "
				"more time with the judge's timeout, or a faster model",
				self.threshold,
			)
		observed.judge_usage.add(response.usage)
		from openmolt_core._parse import finish_read

		if finish_read(response.finish_reason) not in (None, "stop"):
			# Read as the loop reads a reply (unknown is unsafe): a grade written before the
			# answer was cut or filtered may be one the judge went on to take back.
			return Score(
				self.name,
				0.0,
				f"the judge's answer was not whole (finish reason {response.finish_reason!r}), so "
				"no grade is read from it; give the judge's model more output tokens, or another "
				"model",
				self.threshold,
			)
		data = _grade(response.text)
		score: Any = None if data is None else data["score"]
		if isinstance(score, str):  # "0.8" as a string
			try:
				score = float(score)
			except ValueError:
				score = None
		if data is None or not _is_grade(score):
			# Not a grade from 0 to 1 (NaN, a boolean, "8" out of ten): no score is guessed.
			from openmolt_core.secrets import masked_excerpt

			return Score(
				self.name,
				0.0,
				f"the judge's answer was not readable: {masked_excerpt(response.text, 200)!r}",
				self.threshold,
			)
		return Score(self.name, float(score), str(data.get("reason", "")), self.threshold)


def _is_grade(value: Any) -> bool:
	"""Whether a value is a number from 0 to 1 (a boolean is not; NaN is not)."""
	return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0


_TRIES = 32
"""How many of an answer's ``{`` are tried as the start of its grade (bounds the work)."""


def _grade(text: Any) -> dict[str, Any] | None:
	"""The first JSON object in a judge's answer that holds a ``score``; None when there is none.

	The answer may wrap it in prose or a code fence, with braces of its own around it
	(``Thinking {step 1}... {"score": 0.4}``).
	"""
	if not isinstance(text, str):
		return None
	decoder = json.JSONDecoder()
	start = text.find("{")
	for _ in range(_TRIES):
		if start < 0:
			return None
		try:
			data, _end = decoder.raw_decode(text, start)
		except (ValueError, RecursionError):
			data = None
		if isinstance(data, dict) and "score" in data:
			return data
		start = text.find("{", start + 1)
	return None


@dataclass(frozen=True, slots=True)
class Efficiency:
	"""Steps, tokens, cost and seconds within limits (None: not checked).

	An unknown cost (a model without a price) does not keep a cost limit.

	Args:
		max_steps: The most model calls.
		max_tokens: The most tokens (input + output).
		max_cost_usd: The most estimated cost.
		max_seconds: The most wall-clock seconds.
	"""

	max_steps: int | None = None
	max_tokens: int | None = None
	max_cost_usd: float | None = None
	max_seconds: float | None = None
	name: str = "efficiency"

	def __post_init__(self) -> None:
		"""Refuse a limit that is not a number from 0 up, naming it."""
		_check_name(self.name)
		_check_limit("max_steps", self.max_steps, whole=True)
		_check_limit("max_tokens", self.max_tokens, whole=True)
		_check_limit("max_cost_usd", self.max_cost_usd, whole=False)
		_check_limit("max_seconds", self.max_seconds, whole=False)

	async def evaluate(self, observed: Observed, case: Case) -> Score:
		"""The share of limits kept."""
		checks: list[tuple[str, float | None, float | None]] = [
			("steps", self.max_steps, observed.steps),
			("tokens", self.max_tokens, observed.usage.total_tokens),
			("cost", self.max_cost_usd, observed.usage.cost_usd),
			("seconds", self.max_seconds, observed.seconds),
		]
		active = [(n, limit, value) for n, limit, value in checks if limit is not None]
		if not active:
			return Score(self.name, 1.0)
		# A limit on what is not known (the cost of a model without a price) is not kept.
		over = [
			f"{n} unknown" if value is None else f"{n} {value:g} > {limit:g}"
			for n, limit, value in active
			if value is None or value > limit
		]
		# A cost of some calls only (others had no price) is a lower bound: under the limit, it
		# does not show the limit kept.
		usage = observed.usage
		if self.max_cost_usd is not None and usage.cost_partial:
			cost = usage.cost_usd or 0.0
			if cost <= self.max_cost_usd:
				over.append(f"cost partial ({usage.unpriced_calls} calls unpriced)")
		return Score(self.name, 1 - len(over) / len(active), "; ".join(over))


EVALUATORS: dict[str, type[Any]] = {
	"output_equals": OutputEquals,
	"output_schema": OutputSchema,
	"trajectory": Trajectory,
	"tool_arguments": ToolArguments,
	"llm_judge": LLMJudge,
	"efficiency": Efficiency,
}
"""The built-in evaluators by the name a dataset file uses (``{"type": "trajectory", ...}``)."""
