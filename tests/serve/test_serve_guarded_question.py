"""A chat's agent with an output PII redaction asks its questions redacted, as it replies redacted.

The question goes to the chat from the parked run's state (`openmolt_serve.chats`): the
guardrails that judge the humanMessage judged it before it was saved there.
"""

from __future__ import annotations

import pytest
from _serve_fakes import FakeTelegram, eventually, on_telegram

from openmolt import OpenMolt
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.testing import ScriptedModel, ask_human, finish

pytestmark = pytest.mark.anyio


async def test_the_chat_reads_the_question_as_the_guardrail_left_it() -> None:
	"""Neither the question nor the reply shows the address the model wrote."""
	fake = FakeTelegram()
	model = ScriptedModel(
		[
			ask_human("Is ada@example.com the right address?"),
			finish("ok", human_message="Written to ada@example.com."),
		]
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="Helper",
		model=model,
		instructions="Help.",
		guardrails=[pii_redaction("output", kinds=["email"])],
	)
	async with on_telegram(agent, fake):
		fake.message("write to Ada")
		await eventually(lambda: len(fake.sent) == 1)
		fake.message("yes")
		await eventually(lambda: len(fake.sent) == 2)
	assert [m["text"] for m in fake.sent] == [
		"Is [email] the right address?",
		"Written to [email].",
	]
