"""A chat message shaped like a sign-in's code is taken for one only when it can be one.

A chat's sign-in is confirmed by sending the code its callback page shows
(`openmolt_core.accounts.is_code`); the check came before everything else a message may be, so
an ordinary answer of the same shape (an order or phone number: ``4567-8923-4567``) was eaten
as a wrong code: the run parked on the question never got it, and the user's tries went down.
"""

from __future__ import annotations

import json

import pytest
from _serve_fakes import FakeTelegram, eventually, on_telegram

from openmolt import OpenMolt
from openmolt_core.accounts import is_code
from openmolt_core.testing import ScriptedModel, ask_human, finish

pytestmark = pytest.mark.anyio

NUMBER = "4567-8923-4567"


@pytest.mark.parametrize("text", [NUMBER, " 2345-6789-2345 ", "9999-9999-9999"])
def test_a_number_is_never_a_code(text: str) -> None:
	"""Digits alone, in the code's groups, are no code: a code holds letters too."""
	assert not is_code(text)


def test_a_code_is_still_a_code() -> None:
	"""A code as the page shows it, in any case, with spaces around it, is one."""
	assert is_code("7KQ2-M9XF-H4TB") and is_code(" 7kq2-m9xf-h4tb ")


async def test_an_answer_shaped_like_a_code_answers_the_question() -> None:
	"""The run parked on its question gets the number as its answer, and the chat its reply."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[ask_human("What is your order number?"), finish("ok", human_message="Found it.")]
	)
	agent = OpenMolt(entry_points=False).create_agent(name="Helper", model=model)
	async with on_telegram(agent, fake):
		fake.message("where is my order?")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message(NUMBER)
		await eventually(lambda: len(fake.sent) == 2)
	assert [m["text"] for m in fake.sent] == ["What is your order number?", "Found it."]
	results = json.loads(model.requests[1].messages[-1].content)["results"]
	assert results[0]["result"] == NUMBER
