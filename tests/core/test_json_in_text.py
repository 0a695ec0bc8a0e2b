"""`json_in_text`: the one JSON value of a model's text, library code the reply parser calls."""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core._support.jsonsafe import NoJsonValue, UnsafeJson, json_in_text


def _objects(value: Any) -> bool:
	return isinstance(value, dict)


@pytest.mark.parametrize(
	("text", "value"),
	[
		('{"a": 1}', {"a": 1}),
		('<think>{"b": 2}</think> {"a": 1}', {"a": 1}),
		('```json\n{"a": 1}\n```', {"a": 1}),
		('Here it is: {"a": 1} as asked.', {"a": 1}),
		('{"a": "<think>kept</think>"}', {"a": "<think>kept</think>"}),
	],
)
def test_the_value_is_found_as_models_write_it(text: str, value: Any) -> None:
	assert json_in_text(text, 8, _objects) == value


@pytest.mark.parametrize(
	("text", "reason", "count"),
	[
		("  <think>only thinking</think> ", "empty", 0),
		('one {"a": 1} two {"b": 2}', "several", 2),
		("no JSON here", "invalid", 0),
		("[" * 5 + "]" * 5, "deep", 0),
		('prose {"a": [[[[[1]]]]]}', "deep", 0),
	],
)
def test_no_one_value_says_why(text: str, reason: str, count: int) -> None:
	with pytest.raises(NoJsonValue) as raised:
		json_in_text(text, 3, _objects)
	assert (raised.value.reason, raised.value.count) == (reason, count)


def test_a_value_not_wanted_is_passed_over_in_prose() -> None:
	with pytest.raises(NoJsonValue) as raised:
		json_in_text("a list [1, 2] is no object", 8, _objects)
	assert raised.value.reason == "invalid"


def test_invalid_json_says_where() -> None:
	with pytest.raises(NoJsonValue) as raised:
		json_in_text('{"a": }', 8, _objects)
	assert raised.value.error is not None and raised.value.error.colno == 7


def test_json_a_state_cannot_hold_is_refused_not_skipped() -> None:
	with pytest.raises(UnsafeJson):
		json_in_text('text {"a": 1, "a": 2} text', 8, _objects)
