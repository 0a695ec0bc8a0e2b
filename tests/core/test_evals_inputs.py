"""Evals given bad input: datasets, reports and output paths are refused by name, before any run."""

from __future__ import annotations

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
			r"evaluators\[0\]: efficiency: max_steps: .*number.*not '3'",
		),
		(
			{"cases": ONE, "evaluators": [{"type": "efficiency", "max_cost_usd": True}]},
			r"evaluators\[0\]: efficiency: max_cost_usd: .*not True",
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
