"""The budget's estimate of the coming call is not below what the call may cost.

It priced the request's text (characters / 4) at the input price. A prompt token written to the
cache costs more (Anthropic writes the new part of every prompt at 1.25 times the input price,
OpenAI's gpt-5.6 and later bill writes too); audio costs more where the model prices it apart
(Gemini Flash: 1.00 a million where text is 0.30); and what a prompt carries beside its text
(images, audio, documents) was not counted at all. Such a run was not told its last call and
spent past ``max_cost``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.llm import Attachment, Usage
from openmolt_core.testing import ScriptedModel, finish, update_plan

pytestmark = pytest.mark.anyio


def notices(model: ScriptedModel) -> list[str | None]:
	"""The notice each request's last user turn carries, if any."""
	out = []
	for request in model.requests:
		last = json.loads(request.messages[-1].content)
		out.append(last.get("notice") if isinstance(last, dict) else None)
	return out


def agent_on(model: ScriptedModel, max_cost: float) -> Any:
	om = OpenMolt(entry_points=False)
	return om.create_agent(
		name="Spender", model=model, max_cost=max_cost, model_config={"max_output_tokens": 1}
	)


async def test_a_prompt_written_to_the_cache_is_estimated_at_the_write_price() -> None:
	"""At the input price the first call is far below the budget; at the write price, which a
	prompt written to the cache pays, it reaches it: the call is told it is the last."""
	price = (1.0, 0.1, 0.0, 1000.0)  # USD per million: input, cached, output, cache write
	model = ScriptedModel([finish("x")], price=price)
	await agent_on(model, max_cost=0.01).run("Summarise the report.")
	prompt = model.requests[0]
	tokens = (len(prompt.system) + sum(len(m.content) for m in prompt.messages)) // 4
	assert tokens * price[0] / 1e6 < 0.01 <= tokens * price[3] / 1e6
	assert "cost budget" in (notices(model)[0] or "")


async def test_without_a_write_price_the_input_price_holds() -> None:
	"""No write price (None: writes cost the input price): the same call is not told."""
	model = ScriptedModel([finish("x")], price=(1.0, 0.1, 0.0, None))
	await agent_on(model, max_cost=0.01).run("Summarise the report.")
	assert notices(model)[0] is None


async def test_the_coming_prompt_is_at_least_the_last_one_the_provider_counted() -> None:
	"""The provider counted a million prompt tokens (an attachment's: no text shows them), $1.00
	at the input price: the second call, which sends that prompt again, is expected to cost
	as much and is told it is the last of a $1.50 budget (its text alone: $0.0005)."""
	model = ScriptedModel(
		[update_plan("a"), finish("x")],
		price=(1.0, 1.0, 0.0, None),
		usage=Usage(input_tokens=1_000_000, output_tokens=1),
	)
	result = await agent_on(model, max_cost=1.5).run("Transcribe the recording.")
	assert result.status == "success"
	told = notices(model)
	assert told[0] is None
	assert "cost budget" in (told[1] or "")


class Hearing(ScriptedModel):
	"""A scripted model whose audio input has its own price (as Gemini Flash's has)."""

	def audio_price(self, model: str) -> float | None:
		return 1000.0


@pytest.mark.parametrize(("media_type", "told"), [("audio/wav", True), ("image/png", False)])
async def test_a_prompt_holding_audio_is_estimated_at_the_audio_price(media_type, told) -> None:
	"""With audio attached the prompt is priced at the audio price (1000 a million, the input
	price 1): the call is told it is the last; with an image, not."""
	model = Hearing([finish("x")], price=(1.0, 1.0, 0.0, None))
	clip = Attachment(media_type, base64.b64encode(b"RIFF....WAVEfmt ").decode(), "a")
	await agent_on(model, max_cost=0.01).run("Transcribe the recording.", attachments=[clip])
	assert ("cost budget" in (notices(model)[0] or "")) is told


async def test_gemini_flash_names_its_audio_price() -> None:
	"""The providers give the price of audio where the model has one (Gemini 2.5 Flash: 1.00),
	none where audio costs the input price, and none behind another server."""
	import httpx

	from openmolt_providers.gemini import GeminiProvider
	from openmolt_providers.openai import OpenAIProvider

	gemini = GeminiProvider({"api_key": "k"}, httpx.AsyncClient)
	assert gemini.audio_price("gemini-2.5-flash") == pytest.approx(1.0)
	assert gemini.audio_price("gemini-2.5-pro") is None
	local = GeminiProvider({"api_key": "k", "base_url": "http://127.0.0.1:9/v1"}, httpx.AsyncClient)
	assert local.audio_price("gemini-2.5-flash") is None
	assert OpenAIProvider({"api_key": "k"}, httpx.AsyncClient).audio_price("gpt-5") is None


class Speaking(ScriptedModel):
	"""A scripted model whose spoken output has its own price (as ``gpt-audio``'s has)."""

	def spoken_price(self, model: str) -> float | None:
		return 1000.0


@pytest.mark.parametrize(("model_class", "told"), [(Speaking, True), (ScriptedModel, False)])
async def test_a_model_that_can_speak_has_its_output_estimated_at_the_spoken_price(
	model_class, told
) -> None:
	"""1,000 output tokens at the spoken price (1000 a million) is $1, past a $0.5 budget: the call
	is told it is the last; at the text output price (1 a million), $0.001, it is not."""
	model = model_class([finish("x")], price=(0.0, 0.0, 1.0, None))
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="Speaker", model=model, max_cost=0.5, model_config={"max_output_tokens": 1000}
	)
	await agent.run("Say hello.")
	assert ("cost budget" in (notices(model)[0] or "")) is told


def test_the_providers_name_the_spoken_price_of_the_models_that_speak() -> None:
	"""gpt-audio speaks at 64 a million (text output 10); gpt-5 and Gemini 2.5 Flash have no
	spoken price; behind another server, none."""
	import httpx

	from openmolt_providers.gemini import GeminiProvider
	from openmolt_providers.openai import OpenAIProvider

	openai = OpenAIProvider({"api_key": "k"}, httpx.AsyncClient)
	assert openai.spoken_price("gpt-audio") == pytest.approx(64.0)
	assert openai.spoken_price("gpt-4o-mini-audio-preview") == pytest.approx(20.0)
	assert openai.spoken_price("gpt-5") is None
	assert (
		GeminiProvider({"api_key": "k"}, httpx.AsyncClient).spoken_price("gemini-2.5-flash") is None
	)
	local = OpenAIProvider({"api_key": "k", "base_url": "http://127.0.0.1:9/v1"}, httpx.AsyncClient)
	assert local.spoken_price("gpt-audio") is None


def test_the_audio_prices_keep_their_old_names_in_cost() -> None:
	"""`_cost`'s old names of the audio prices give the budget's own functions, on first use."""
	from openmolt_core import _cost
	from openmolt_core.capabilities import budget

	assert _cost.audio_price_of is budget.audio_price_of
	assert _cost.spoken_price_of is budget.spoken_price_of
	assert _cost.audio_price_of.__module__ == budget.__name__  # defined once, in its home
