"""provider_options on an agent whose models are of several providers: each gets its own part."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError

from .test_fallback import ANTHROPIC, GOOGLE, OPENAI, Providers, status

pytestmark = pytest.mark.anyio


def instance(handler: Any) -> OpenMolt:
	return OpenMolt(
		llm_providers={
			"openai": {"api_key": "sk-test-openai-key", "max_retries": 0},
			"anthropic": {"api_key": "sk-ant-test-key", "max_retries": 0},
			"google": {"api_key": "AIza-test-google-key", "max_retries": 0},
		},
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
	)


def test_options_for_one_provider_on_a_chain_of_several_are_refused_at_creation() -> None:
	"""Unkeyed provider_options on models of two providers: refused, naming the keyed form."""
	om = instance(lambda request: httpx.Response(500))
	with pytest.raises(ConfigurationError) as caught:
		om.create_agent(
			name="Finder",
			model=[ANTHROPIC, OPENAI],
			model_config={"provider_options": {"top_k": 5}},
		)
	said = str(caught.value)
	assert "provider_options" in said and "'top_k'" in said
	assert "anthropic, openai" in said and "{'anthropic': {...}, 'openai': {...}}" in said


def test_a_summary_model_of_another_provider_counts_too() -> None:
	"""Unkeyed options with a summary model of another provider: refused as well."""
	om = instance(lambda request: httpx.Response(500))
	with pytest.raises(ConfigurationError, match="anthropic, google"):
		om.create_agent(
			name="Finder",
			model=ANTHROPIC,
			compaction={"model": GOOGLE},
			model_config={"provider_options": {"top_k": 5}},
		)


def test_one_provider_takes_unkeyed_options_as_before() -> None:
	"""An agent of one provider (two of its models) still takes options as they are."""
	om = instance(lambda request: httpx.Response(500))
	agent = om.create_agent(
		name="Finder",
		model=[ANTHROPIC, "anthropic:claude-haiku-4-5"],
		model_config={"provider_options": {"top_k": 5}},
	)
	assert agent.first_request().config.provider_options == {"top_k": 5}


async def test_keyed_options_go_only_to_their_provider_when_the_step_falls_back() -> None:
	"""Anthropic's top_k reaches Anthropic only; the OpenAI fallback gets its own part."""
	api = Providers("anthropic", status(529))
	bodies: list[tuple[str, dict[str, Any]]] = []

	def handler(request: httpx.Request) -> httpx.Response:
		bodies.append((request.url.host, json.loads(request.content)))
		return api(request)

	agent = instance(handler).create_agent(
		name="Finder",
		model=[ANTHROPIC, OPENAI],
		instructions="Capital of Norway?",
		model_config={
			"provider_options": {"anthropic": {"top_k": 5}, "openai": {"service_tier": "flex"}}
		},
	)
	result = await agent.run()
	assert result.status == "success", result.error
	sent = {host: body for host, body in bodies}
	assert sent["api.anthropic.com"]["top_k"] == 5
	assert "service_tier" not in sent["api.anthropic.com"]
	assert "anthropic" not in sent["api.anthropic.com"]
	assert sent["api.openai.com"]["service_tier"] == "flex"
	assert "top_k" not in sent["api.openai.com"] and "openai" not in sent["api.openai.com"]


async def test_a_summary_model_of_another_provider_gets_its_own_part() -> None:
	"""The summary call carries the summary provider's part of keyed options, steps the agent's."""
	from openmolt_core.llm import Usage
	from openmolt_core.testing import ScriptedModel, finish, update_memory

	steps = ScriptedModel(
		[{"commands": [update_memory(f"note {i}")]} for i in range(4)]
		+ [{"commands": [finish({"answer": "Oslo"})]}],
		name="anthropic",
		usage=Usage(input_tokens=1_000, output_tokens=5),
	)
	summary = ScriptedModel(["the notes so far"] * 4, name="writer")
	om = OpenMolt()
	agent = om.create_agent(
		name="Finder",
		model=steps,
		compaction={"model": summary, "threshold_tokens": 300, "keep_steps": 1},
		model_config={
			"provider_options": {"anthropic": {"top_k": 5}, "writer": {"reasoning": "low"}}
		},
	)
	result = await agent.run()
	assert result.status == "success", result.error
	assert summary.requests, "no summary was written"
	assert summary.requests[0].config.provider_options == {"reasoning": "low"}
	assert {r.config.provider_options["top_k"] for r in steps.requests} == {5}
	assert all("writer" not in r.config.provider_options for r in steps.requests)


def test_dropping_the_summary_model_refuses_options_keyed_for_its_provider() -> None:
	"""Setting compaction without its other-provider model leaves a key for no provider: refused.

	Keyed options naming a provider the agent no longer uses were sent as they are (a body field
	``google``), as ``scoped_options`` no longer recognised them as keyed.
	"""
	from openmolt_core.llm import CompactionConfig

	om = instance(lambda request: httpx.Response(500))
	agent = om.create_agent(
		name="Finder",
		model=ANTHROPIC,
		compaction={"model": GOOGLE},
		model_config={"provider_options": {"anthropic": {"top_k": 5}, "google": {"x": 1}}},
	)
	before = agent.compaction
	with pytest.raises(ConfigurationError, match=r"agent.compaction.*'google'.*no longer|'google'"):
		agent.compaction = CompactionConfig()
	assert agent.compaction == before  # the agent is left as it was
	assert agent.first_request().config.provider_options == {"top_k": 5}


def test_a_summary_model_of_another_provider_set_later_refuses_unkeyed_options() -> None:
	"""Setting a summary model of another provider on an agent with unkeyed options: refused."""
	from openmolt_core.llm import CompactionConfig

	om = instance(lambda request: httpx.Response(500))
	agent = om.create_agent(
		name="Finder", model=ANTHROPIC, model_config={"provider_options": {"top_k": 5}}
	)
	with pytest.raises(ConfigurationError, match="anthropic, google"):
		agent.compaction = CompactionConfig(model=GOOGLE)
	assert agent.compaction is not None and agent.compaction.model is None


def test_a_compactor_without_a_price_set_later_is_refused_under_max_cost() -> None:
	"""Setting the compactor re-checks max_cost: a summary model without a price is refused."""
	from openmolt_core.testing import ScriptedModel

	om = OpenMolt(entry_points=False)
	priced = ScriptedModel([], price=(1.0, 0.1, 2.0, None))
	agent = om.create_agent(name="Finder", model=priced, max_cost=1.0, compaction=True)
	before = agent.compactor
	unpriced = ScriptedModel([])
	with pytest.raises(ConfigurationError, match=r"agent.compactor.*unknown"):
		agent.compactor = lambda: (unpriced, "scripted")
	assert agent.compactor is before


def test_options_keyed_for_a_provider_the_agent_does_not_use_are_refused_at_creation() -> None:
	"""A key naming a provider none of the agent's models use: refused, not sent as a field."""
	om = instance(lambda request: httpx.Response(500))
	with pytest.raises(ConfigurationError, match="'openai'"):
		om.create_agent(
			name="Finder",
			model=ANTHROPIC,
			model_config={"provider_options": {"openai": {"service_tier": "flex"}}},
		)
