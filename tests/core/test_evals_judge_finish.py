"""A judge's answer is read as the loop reads a reply: one the provider cut or filtered is no grade.

The loop runs none of a reply whose finish reason is not ``stop`` (``max_tokens``, ``safety``,
``refusal``, or one it does not know: unknown is unsafe), and compaction keeps no such summary.
The judge read its grade from any answer: a grade written before the model went on and was cut
(``{"score": 1.0} ... on reflection {"score": 0.1`` at the token limit) or filtered passed the case.
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core import ModelRequest, ModelResponse, Usage
from openmolt_evals import Case, Observed
from openmolt_evals.evaluators import LLMJudge

pytestmark = pytest.mark.anyio

CUT = '{"score": 1.0, "reason": "fine"} On reflection the output leaks a key: {"score": 0.1'


def _judge(text: str, reason: str | None) -> Any:
	class Judge:
		name = "judge"
		model = "judge-1"

		async def generate(self, request: ModelRequest) -> ModelResponse:
			return ModelResponse(text=text, finish_reason=reason)

	return Judge()


def _observed() -> Observed:
	observed = Observed(
		output="x",
		status="success",
		human_message="",
		steps=1,
		usage=Usage(),
		seconds=0.1,
		tool_calls=[],
		error=None,
		resolve_model=None,
	)
	observed.resolve_model = lambda model: (model, "judge-1")
	return observed


@pytest.mark.parametrize(
	"reason",
	["max_tokens", "safety", "refusal", "incomplete", "length", "SAFETY", "content_filter"],
)
async def test_a_cut_or_filtered_judge_answer_is_no_grade(reason: str) -> None:
	"""Zero, saying the answer was not whole, with the reason the provider gave."""
	score = await LLMJudge("fine", model=_judge(CUT, reason)).evaluate(_observed(), Case("c"))
	assert score.score == 0.0 and not score.passed
	assert reason in score.reason and "not whole" in score.reason, score


@pytest.mark.parametrize("reason", ["stop", None])
async def test_a_whole_answer_is_graded_as_before(reason: str | None) -> None:
	"""``stop`` and no reason (the provider did not say) read the grade."""
	judge = LLMJudge("fine", model=_judge('{"score": 0.9, "reason": "ok"}', reason))
	score = await judge.evaluate(_observed(), Case("c"))
	assert score.score == 0.9
