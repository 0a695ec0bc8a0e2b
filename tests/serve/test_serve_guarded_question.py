"""A chat's agent with an output PII redaction asks its questions redacted, as it replies redacted.

The question goes to the chat from the parked run's state (`openmolt_serve.chats`): the
guardrails that judge the humanMessage judged it before it was saved there.
"""

from __future__ import annotations

from typing import Any

import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually, local_server

from openmolt import OpenMolt
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer

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
	async with local_server(fake.app()) as base:
		om = OpenMolt(entry_points=False)
		agent = om.create_agent(
			name="Helper",
			model=model,
			instructions="Help.",
			guardrails=[pii_redaction("output", kinds=["email"])],
		)
		channel: dict[str, Any] = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedUsers": [42],
		}
		async with TriggerServer(
			[(agent, Triggers.model_validate({"channels": [channel]}))], port=0
		):
			fake.message("write to Ada")
			await eventually(lambda: len(fake.sent) == 1)
			fake.message("yes")
			await eventually(lambda: len(fake.sent) == 2)
		await om.aclose()
	assert [m["text"] for m in fake.sent] == [
		"Is [email] the right address?",
		"Written to [email].",
	]
