"""Long prompts cost what the price pages say: past a tier's threshold, the tier's prices."""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_providers._prices import PRICES, cost
from openmolt_providers.gemini import GeminiProvider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

SIZES = [199_999, 200_001, 272_001, 400_000]
"""Prompt sizes around the tiers' thresholds (Anthropic and Gemini 200k, OpenAI 272k)."""


def _theirs(provider: str, model: str, inp: int, out: int, read: int, write: int) -> float:
	from genai_prices import Usage, calc_price

	usage = Usage(
		input_tokens=inp, output_tokens=out, cache_read_tokens=read, cache_write_tokens=write
	)
	return float(calc_price(usage, model, provider_id=provider).total_price)


@pytest.mark.parametrize("inp", SIZES)
@pytest.mark.parametrize(("provider", "model"), [(p, m) for p, t in PRICES.items() for m in t])
def test_a_long_prompt_costs_what_genai_prices_says(provider, model, inp) -> None:
	"""Every model's cost of a long prompt, cached and written tokens included, is genai-prices'
	(the tier's prices past its threshold, not the base tier's: half the cost was reported)."""
	ours = cost(
		provider,
		model,
		input_tokens=inp,
		output_tokens=3_000,
		cached_tokens=50_000,
		cache_write_tokens=10_000,
	)
	assert ours == pytest.approx(_theirs(provider, model, inp, 3_000, 50_000, 10_000), rel=1e-6)


@pytest.mark.parametrize(
	("provider", "model", "priced_as"),
	[
		("google", "gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"),
		("google", "models/gemini-2.5-pro", "gemini-2.5-pro"),
		("google", "gemini-3.1-pro", "gemini-3.1-pro-preview"),
		("anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
		("anthropic", "claude-sonnet-4.5", "claude-sonnet-4-5"),
		("openai", "gpt-5.4-2026-03-05", "gpt-5.4"),
		("openai", "gpt-5-4", "gpt-5.4"),
	],
)
def test_a_long_prompt_to_another_spelling_costs_its_tier(provider, model, priced_as) -> None:
	"""A dated id, a prefixed one or a spelling found by genai-prices' match rules is tiered as
	the model it is priced as."""
	ours = cost(provider, model, input_tokens=300_000, output_tokens=1_000, cached_tokens=1_000)
	assert ours == pytest.approx(_theirs(provider, priced_as, 300_000, 1_000, 1_000, 0), rel=1e-6)
	short = cost(provider, model, input_tokens=150_000, output_tokens=1_000, cached_tokens=1_000)
	assert short == pytest.approx(_theirs(provider, priced_as, 150_000, 1_000, 1_000, 0), rel=1e-6)


async def test_a_gemini_reply_with_a_long_prompt_reports_the_tier_cost(server) -> None:
	"""A Gemini 2.5 Pro reply of 250k prompt tokens costs the >200k prices (2.50/15.00)."""
	body = {
		"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
		"usageMetadata": {"promptTokenCount": 250_000, "candidatesTokenCount": 1_000},
	}
	server.reply(body)
	provider = GeminiProvider({"api_key": "k"}, server.http, sleep=server.sleep)
	response = await provider.generate(make_request("gemini-2.5-pro"))
	assert response.usage.cost_usd == pytest.approx((250_000 * 2.5 + 1_000 * 15.0) / 1e6)


def _gemini_reply(commands: dict, prompt: int) -> dict:
	import json

	return {
		"candidates": [
			{"content": {"parts": [{"text": json.dumps(commands)}]}, "finishReason": "STOP"}
		],
		"usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": 100},
	}


async def _long_run(max_cost: float, replies: list[dict]) -> tuple[Any, list[dict]]:
	import json

	import httpx

	from openmolt import OpenMolt

	bodies: list[dict] = []

	def api(request: httpx.Request) -> httpx.Response:
		bodies.append(json.loads(request.content))
		return httpx.Response(200, json=replies[min(len(bodies), len(replies)) - 1])

	http = httpx.AsyncClient(transport=httpx.MockTransport(api))
	om = OpenMolt(llm_providers={"google": {"api_key": "AIza-c"}}, http_client=http)
	agent = om.create_agent(
		name="Reader",
		model="google:gemini-2.5-pro",
		max_cost=max_cost,
		model_config={"max_output_tokens": 1_000},
	)
	result = await agent.run("x" * 900_000)  # about 225k tokens: past the 200k tier
	await om.aclose()
	return result, bodies


@pytest.mark.anyio
async def test_a_run_past_the_tier_stops_at_its_budget_at_the_tier_price() -> None:
	"""A prompt past Gemini 2.5 Pro's 200k tier costs 2.50/15.00 a million, not 1.25/10.00. A run
	reading 225k tokens under a $1.00 budget spends $0.56 on its first call; the second is its
	last, as the tier's price says ($0.57 more), and the model is told so (at the base price it
	seemed $0.29 more, within the budget, and the model was not told); the run stops at its
	budget with the tier's cost."""
	from openmolt_core.testing import finish, update_plan

	replies = [_gemini_reply({"commands": [update_plan("a")]}, 225_000)] * 3
	replies.append(_gemini_reply({"commands": [finish("x")]}, 225_000))
	result, bodies = await _long_run(1.0, replies)
	assert result.status == "limit_reached", result
	assert len(bodies) == 2
	tier = (225_000 * 2.5 + 100 * 15.0) / 1e6
	assert result.usage.cost_usd == pytest.approx(2 * tier)
	told = bodies[1]["contents"][-1]["parts"][0]["text"]
	assert "last step" in told and "cost budget" in told
