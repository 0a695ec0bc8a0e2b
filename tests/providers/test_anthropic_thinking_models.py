"""Thinking goes only to the Claude models that have it: Claude 3.7 Sonnet and Claude 4 and later.

The extended thinking page lists them; the Claude 3 and 3.5 models answer ``thinking`` with a 400,
and the budget's room (``max_tokens`` of budget + 8,192) passed their output limits (4,096 and
8,192) as well: every call of an agent with ``thinking`` on such a model was refused.
"""

from __future__ import annotations

import pytest

from openmolt_providers import ModelConfigWarning
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.anthropic._models import default_max_tokens

pytestmark = pytest.mark.anyio

OLDER = [
	"claude-3-5-haiku-latest",
	"claude-3-5-haiku-20241022",
	"claude-3-5-sonnet-20241022",
	"claude-3-haiku-20240307",
	"claude-3-opus-latest",
]


def provider(server):
	return AnthropicProvider({"api_key": "sk-ant-test"}, server.http, sleep=server.sleep)


@pytest.mark.parametrize("thinking", [True, "low", "high"])
@pytest.mark.parametrize("model", OLDER)
async def test_no_thinking_on_a_model_without_it(server, load, req, model, thinking) -> None:
	"""The body has no ``thinking`` and the model's own ``max_tokens``; a warning says why."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="no extended thinking"):
		await provider(server).generate(req(model, thinking=thinking))
	assert "thinking" not in server.body and "output_config" not in server.body
	assert server.body["max_tokens"] == default_max_tokens(model)


async def test_temperature_stays_when_thinking_is_dropped(server, load, req) -> None:
	"""Thinking that is not sent does not cost the temperature (it forbids only real thinking)."""
	server.reply(load("anthropic_text"))
	with pytest.warns(ModelConfigWarning, match="no extended thinking"):
		await provider(server).generate(
			req("claude-3-5-haiku-latest", thinking=True, temperature=0.4)
		)
	assert server.body["temperature"] == 0.4


@pytest.mark.parametrize(
	("model", "kind"),
	[
		("claude-3-7-sonnet-20250219", "enabled"),
		("claude-sonnet-4-20250514", "enabled"),
		("claude-haiku-4-5", "enabled"),
		("claude-opus-4-6", "adaptive"),
		("claude-fable-5", "adaptive"),
	],
)
async def test_thinking_on_the_models_that_have_it(server, load, req, model, kind) -> None:
	"""Claude 3.7 Sonnet and every Claude 4 and later model still think."""
	server.reply(load("anthropic_text"))
	await provider(server).generate(req(model, thinking=True))
	assert server.body["thinking"]["type"] == kind
