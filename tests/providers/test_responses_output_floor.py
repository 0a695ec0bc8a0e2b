"""The Responses API takes ``max_output_tokens`` of 16 or more.

A smaller one is refused with 400 ``integer_below_min_value`` ("Invalid 'max_output_tokens':
integer below minimum value. Expected a value >= 16, but got 5 instead."), at every step. It is
sent as 16, the least the API takes, with a warning; Chat Completions takes any positive
``max_completion_tokens`` and is sent the value as it is.
"""

from __future__ import annotations

import httpx
import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.openai import OpenAIProvider


def _never() -> httpx.AsyncClient:
	raise AssertionError("nothing is sent")


@pytest.mark.parametrize("asked", [1, 5, 15])
def test_responses_is_sent_at_least_16_output_tokens(req, asked) -> None:
	openai = OpenAIProvider({"api_key": "k"}, _never)
	with pytest.warns(ModelConfigWarning, match="16"):
		body = openai.build(req("gpt-4.1-mini", max_output_tokens=asked))
	assert body["max_output_tokens"] == 16


@pytest.mark.filterwarnings("error")
def test_16_and_more_are_sent_as_asked(req) -> None:
	openai = OpenAIProvider({"api_key": "k"}, _never)
	assert openai.build(req("gpt-4.1-mini", max_output_tokens=16))["max_output_tokens"] == 16
	assert openai.build(req("gpt-4.1-mini", max_output_tokens=500))["max_output_tokens"] == 500


@pytest.mark.filterwarnings("error")
def test_chat_takes_a_small_limit_as_it_is(req) -> None:
	chat = OpenAIProvider({"api_key": "k", "api_mode": "chat"}, _never)
	assert chat.build(req("gpt-4.1-mini", max_output_tokens=5))["max_completion_tokens"] == 5
