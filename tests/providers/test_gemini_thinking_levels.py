"""Thinking off on Gemini 3 sends a level the model has: MINIMAL only where it exists.

Google's thinking page ("Supported thinking_level values" per model): Gemini 3.7 Flash and 3.8
Flash take LOW, MEDIUM and HIGH, and refuse MINIMAL with a 400 (as do the Pro models); Gemini 3
Flash, 3.5 and 3.6 Flash and the Flash-Lite models take MINIMAL. ``thinking: False`` sent MINIMAL
to every Flash model, so every call of such an agent on the current Flash failed.
"""

from __future__ import annotations

import warnings

import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.gemini import GeminiProvider

pytestmark = pytest.mark.anyio


def provider(server):
	return GeminiProvider({"api_key": "AIza-test"}, server.http, sleep=server.sleep)


@pytest.mark.parametrize(
	"model",
	[
		"gemini-3.7-flash",
		"gemini-3.8-flash",
		"models/gemini-3.8-flash",
		"gemini-3.8-flash-preview-09-2026",
		"gemini-3-pro-preview",
		"gemini-3.1-pro-preview",
	],
)
async def test_no_minimal_where_the_model_has_none(server, load, req, model) -> None:
	"""Thinking off on a model without MINIMAL: its lowest level, LOW, with a warning."""
	server.reply(load("gemini_text"))
	with pytest.warns(ModelConfigWarning, match="cannot stop thinking"):
		await provider(server).generate(req(model, thinking=False))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "LOW"}


@pytest.mark.parametrize(
	"model",
	[
		"gemini-3-flash-preview",
		"gemini-3.5-flash",
		"gemini-3.6-flash",
		"gemini-3.1-flash-lite",
		"gemini-3.5-flash-lite",
		"gemini-3.8-flash-lite",
	],
)
async def test_minimal_where_the_model_has_it(server, load, req, model) -> None:
	"""Thinking off on a model with MINIMAL: MINIMAL, no warning."""
	server.reply(load("gemini_text"))
	await provider(server).generate(req(model, thinking=False))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "MINIMAL"}


@pytest.mark.parametrize("model", ["gemini-4-argon", "gemini-4-neon", "models/gemini-4-argon"])
@pytest.mark.parametrize(
	("thinking", "level"), [(True, "HIGH"), ("low", "LOW"), ("medium", "MEDIUM"), ("high", "HIGH")]
)
async def test_gemini_4_thinks_in_levels(server, load, req, model, thinking, level) -> None:
	"""Gemini 4 takes thinking levels (low, medium, high), as Gemini 3 does: it was read as an
	old model that does not think, and thinking was dropped."""
	server.reply(load("gemini_text"))
	await provider(server).generate(req(model, thinking=thinking))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": level}


async def test_gemini_4_cannot_stop_thinking(server, load, req) -> None:
	"""Gemini 4 has no MINIMAL ("replace MINIMAL with LOW"): thinking off is LOW, with a warning."""
	server.reply(load("gemini_text"))
	with pytest.warns(ModelConfigWarning, match="cannot stop thinking"):
		await provider(server).generate(req("gemini-4-argon", thinking=False))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "LOW"}


@pytest.mark.parametrize(
	("model", "off"),
	[
		("gemini-flash-latest", "LOW"),  # genai-prices: Gemini 3.8 Flash, no MINIMAL
		("models/gemini-flash-latest", "LOW"),
		("gemini-pro-latest", "LOW"),  # Gemini 3.1 Pro
		("gemini-flash-lite-latest", "MINIMAL"),  # Gemini 3.5 Flash-Lite
		("gemini-ultra-latest", "LOW"),  # an alias nobody names: a Gemini 3 model's safe level
	],
)
async def test_an_alias_thinks_as_the_model_it_names(server, load, req, model, off) -> None:
	"""The unversioned aliases name a current Gemini 3 model (genai-prices says which): thinking
	is sent as levels, not dropped as for a model that does not think; off is the lowest level
	that model has (an alias no one names: LOW, which every Gemini 3 model takes)."""
	server.reply(load("gemini_text"))
	p = provider(server)
	await p.generate(req(model, thinking="high"))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "HIGH"}
	with warnings.catch_warnings():
		warnings.simplefilter("ignore", ModelConfigWarning)
		await p.generate(req(model, thinking=False))
	assert server.body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": off}
