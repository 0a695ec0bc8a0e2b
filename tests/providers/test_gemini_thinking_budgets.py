"""The ``thinkingBudget`` sent to each Gemini 2.5 model is within the range it takes.

The thinking guide (ai.google.dev/gemini-api/docs/thinking, "Set budgets", read 2026-12): 2.5 Pro
takes 128 to 32,768 and cannot turn thinking off; 2.5 Flash 0 to 24,576 (0 turns it off); 2.5
Flash-Lite 512 to 24,576 (0 turns it off); -1 is dynamic thinking on all three. A budget outside
is refused with a 400 at every step.
"""

from __future__ import annotations

import httpx
import pytest

from openmolt_providers.gemini import GeminiProvider

RANGES = {
	"gemini-2.5-pro": (128, 32_768, False),
	"gemini-2.5-flash": (0, 24_576, True),
	"gemini-2.5-flash-lite": (512, 24_576, True),
}


def _never() -> httpx.AsyncClient:
	raise AssertionError("nothing is sent")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("model", list(RANGES))
@pytest.mark.parametrize("thinking", [True, False, "low", "medium", "high"])
def test_the_budget_is_one_the_model_takes(req, model: str, thinking) -> None:
	least, most, stops = RANGES[model]
	body = GeminiProvider({"api_key": "k"}, _never).build(req(model, thinking=thinking))
	budget = body["generationConfig"]["thinkingConfig"]["thinkingBudget"]
	if budget == -1:
		return  # dynamic, on all three
	if budget == 0:
		assert stops, f"{model} cannot stop thinking"
	else:
		assert least <= budget <= most
