"""Two answers to one parked question: exactly one wins, the other is told "already answered"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from _harness import HERE

from openmolt import OpenMolt
from openmolt_core.agent import HumanInputUnavailable
from openmolt_core.testing import ScriptedModel, ask_human, finish
from openmolt_dbos import AlreadyAnsweredError
from openmolt_dbos._engine import reset_engine

pytestmark = pytest.mark.anyio

ROUNDS = 6


def park(question: str) -> str:
	raise HumanInputUnavailable(question)


async def test_of_two_answers_at_once_one_wins_and_the_other_is_told(url: str) -> None:
	"""Each round: two concurrent om.answer calls; one returns, one raises AlreadyAnsweredError."""
	om = OpenMolt(durability=url, entry_points=False)
	script = [ask_human(f"Question {n}?") for n in range(ROUNDS)] + [finish(result="done")]
	model = ScriptedModel(script)
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=park)
	try:
		parked = await agent.run("ask")
		run_id = parked.state.run_id
		used: list[str] = []
		steps: list[int] = []
		for n in range(ROUNDS):
			for _ in range(1000):  # the run parks on question n a moment after the last answer
				if asked := [p for p in await om.pending() if p.question == f"Question {n}?"]:
					break
				await anyio.sleep(0.02)
			step = asked[0].step  # both answer this question (a late one must not answer the next)
			steps.append(step)
			outcomes: dict[str, str] = {}

			async def answer(
				text: str, outcomes: dict[str, str] = outcomes, step: int = step
			) -> None:
				try:
					await om.answer(run_id, text, step=step)
					outcomes[text] = "won"
				except AlreadyAnsweredError as exc:
					assert "already answered" in str(exc)
					outcomes[text] = "lost"

			async with anyio.create_task_group() as tg:
				tg.start_soon(answer, f"a{n}")
				tg.start_soon(answer, f"b{n}")
			assert sorted(outcomes.values()) == ["lost", "won"], outcomes
			used.append(next(t for t, o in outcomes.items() if o == "won"))
		result = await om.result(run_id)
		assert result.ok
		with pytest.raises(AlreadyAnsweredError):  # the first question, answered long ago
			await om.answer(run_id, "late", step=steps[0])
		# The model saw exactly the winners' answers, in order.
		seen = [r.messages[-1].content for r in model.requests[1:]]
		assert all(w in s for w, s in zip(used, seen, strict=True))
	finally:
		await om.aclose()


def _cli(*args: str) -> subprocess.Popen[str]:
	env = {**os.environ, "PYTHONPATH": str(HERE)}
	env.pop("OPENMOLT_DURABILITY", None)
	return subprocess.Popen(
		[sys.executable, "-m", "openmolt", *args],
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		text=True,
		env=env,
		cwd=HERE,
	)


async def test_two_cli_answers_at_once_one_exits_non_zero_saying_already_answered(
	tmp_path: Path,
) -> None:
	"""`openmolt answer` twice at once: exit 0 for the winner, exit 1 "already answered"."""
	store = str(tmp_path / "runs.sqlite")
	om = OpenMolt(durability=store, entry_points=False)
	model = ScriptedModel([ask_human("Ship it?"), finish(result="shipped")])
	agent = om.create_agent(name="Asker", model=model, on_human_input_request=park)
	try:
		parked = await agent.run("ship")
		run_id = parked.state.run_id
		procs = [_cli("answer", run_id, text, "--durability", store) for text in ("yes", "no")]
		done = [
			await anyio.to_thread.run_sync(lambda p=p: p.communicate(timeout=120)) for p in procs
		]
		codes = sorted(p.returncode for p in procs)
		assert codes == [0, 1], done
		loser = done[[p.returncode for p in procs].index(1)]
		assert "already answered" in loser[1]
		result = await om.result(run_id)
		assert result.ok
	finally:
		await om.aclose()
		from dbos import DBOS

		DBOS.destroy()
		reset_engine()
