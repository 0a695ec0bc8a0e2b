"""A chat run followed after a restart (`Conversations.recover`) that parks on a question.

The process that started the run is gone: the chat learns of the run from the store, without the
message that started it. Its question is still the asker's to answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from _serve_fakes import TOKEN, FakeTelegram, eventually
from _serve_fakes import local_server as fake_api

from openmolt import OpenMolt
from openmolt_core.observe import ObservedRun, RunObserver, RunOutcome
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_core.triggers import Triggers
from openmolt_serve import TriggerServer
from openmolt_serve.chats import park_questions

pytestmark = pytest.mark.anyio


class Ends(RunObserver):
	def __init__(self) -> None:
		self.runs: list[tuple[Any, str]] = []

	async def ended(self, run: ObservedRun, outcome: RunOutcome) -> None:
		self.runs.append((run.state, outcome.status))


async def test_a_followed_runs_question_is_answered_by_the_person_it_acts_for() -> None:
	"""The asker's next message resumes the followed run; another member's starts its own."""
	fake, ends = FakeTelegram(), Ends()
	model = ScriptedModel(
		[
			ask_human("Which invoice?"),  # the run a restart interrupted asks
			finish("hi", human_message="Hello 9."),  # 9's own run
			finish("paid", human_message="Paid INV-2."),  # 42's answer resumes the run
		]
	)
	async with fake_api(fake.app()) as base:
		om = OpenMolt(entry_points=False, observers=[ends])
		agent = om.create_agent(name="Helper", model=model, instructions="Help.")
		settings = {
			"type": "telegram",
			"token": TOKEN,
			"baseUrl": base,
			"pollTimeout": 1,
			"allowedChats": [-100],  # 42 and 9 are members the operator did not name
		}
		park_questions(agent)  # as the server does for a chat's agent
		parked = await agent.run(
			{"message": "pay it", "from": "42", "chat": "-100"}, user="telegram:42"
		)
		assert parked.status == "human_input_required"
		run_id = parked.state.run_id

		async def result(asked: str) -> Any:
			return parked if asked == run_id else None

		om.result = result  # type: ignore[method-assign]  # what the store gives after a restart
		triggers = Triggers.model_validate({"channels": [settings]})
		async with TriggerServer([(agent, triggers)], port=0) as server:
			(bot,) = server.telegram.values()
			await bot.conversations._follow(run_id)  # what recover() does for each run
			assert [m["text"] for m in fake.sent] == ["Which invoice?"]
			fake.message("INV-9", user=9, chat=-100)  # not the asker: a run of its own
			await eventually(lambda: len(fake.sent) == 2)
			fake.message("INV-2", user=42, chat=-100)
			await eventually(lambda: len(fake.sent) == 3)
		await om.aclose()
	assert [m["text"] for m in fake.sent] == ["Which invoice?", "Hello 9.", "Paid INV-2."]
	answered, status = ends.runs[-1]
	assert answered.run_id == run_id and status == "success"
	assert "INV-2" in model.requests[2].messages[-1].content
