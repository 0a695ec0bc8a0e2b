"""Changing an agent's model configuration or summary model after creation is checked as
`create_agent` checks it, and a change refused leaves the agent as it was.

``agent.model_config`` was a plain attribute: ``provider_options`` set there after creation went
into every model's request body as they were, unkeyed options on models of several providers
included (Anthropic's ``top_k`` sent to OpenAI: a 400 on the very step the fallback was for). A
compactor set with no summary model routed its summary call under the provider name ``custom``,
which the provider-options check did not see: unkeyed options for the agent's provider reached
the summary model's, and options keyed for the summary model's provider were refused.
"""

from __future__ import annotations

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.llm import ModelConfig, Usage
from openmolt_core.testing import ScriptedModel, finish, update_memory

from .test_fallback import ANTHROPIC, OPENAI
from .test_fallback_provider_options import instance

pytestmark = pytest.mark.anyio


def _agent(**options):
	om = instance(lambda request: httpx.Response(500))
	return om.create_agent(name="Finder", model=[ANTHROPIC, OPENAI], **options)


def test_unkeyed_options_set_later_on_models_of_two_providers_are_refused() -> None:
	"""Unkeyed provider_options assigned after creation: refused, the agent unchanged."""
	agent = _agent()
	before = agent.model_config
	with pytest.raises(ConfigurationError, match=r"agent.model_config.*'top_k'.*anthropic, openai"):
		agent.model_config = ModelConfig(provider_options={"top_k": 5})
	assert agent.model_config is before
	assert agent.first_request().config.provider_options == {}


def test_options_keyed_for_a_provider_not_used_set_later_are_refused() -> None:
	"""A key naming a provider the agent does not use, assigned later: refused."""
	agent = _agent()
	with pytest.raises(ConfigurationError, match="'google'"):
		agent.model_config = {"provider_options": {"google": {"x": 1}}}
	assert agent.model_config.provider_options == {}


def test_a_model_config_set_later_is_read_as_create_agent_reads_it() -> None:
	"""A dict is read into a ModelConfig (a wrong key named); keyed options are taken."""
	agent = _agent()
	with pytest.raises(ConfigurationError, match=r"agent.model_config.*'temprature'"):
		agent.model_config = {"temprature": 0.2}
	with pytest.raises(ConfigurationError, match=r"agent\.model_config"):
		agent.model_config = 0.2  # type: ignore[assignment]
	agent.model_config = {
		"temperature": 0.2,
		"provider_options": {"anthropic": {"top_k": 5}, "openai": {"service_tier": "flex"}},
	}
	assert isinstance(agent.model_config, ModelConfig)
	assert agent.model_config.temperature == 0.2
	assert agent.first_request().config.provider_options == {"top_k": 5}


def _compacting(options: dict, summary: ScriptedModel):
	steps = ScriptedModel(
		[{"commands": [update_memory(f"note {i}")]} for i in range(4)]
		+ [{"commands": [finish({"answer": "Oslo"})]}],
		name="anthropic",
		usage=Usage(input_tokens=1_000, output_tokens=5),
	)
	om = OpenMolt()
	agent = om.create_agent(
		name="Finder",
		model=steps,
		compaction={"threshold_tokens": 300, "keep_steps": 1},
		model_config={"provider_options": options},
	)
	return agent, steps


def test_a_compactor_of_another_provider_set_later_refuses_unkeyed_options() -> None:
	"""A compactor (no summary model named) counts as its provider: unkeyed options refused."""
	summary = ScriptedModel(["the notes so far"] * 4, name="writer")
	agent, _ = _compacting({"top_k": 5}, summary)
	before = agent.compactor
	with pytest.raises(ConfigurationError, match=r"agent.compactor.*anthropic, writer"):
		agent.compactor = lambda: (summary, "scripted")
	assert agent.compactor is before


async def test_a_compactor_set_later_gets_its_own_part_of_keyed_options() -> None:
	"""Options keyed for the compactor's provider are taken, and its summary call gets that part."""
	summary = ScriptedModel(["the notes so far"] * 4, name="writer")
	options = {"anthropic": {"top_k": 5}}
	agent, steps = _compacting(options, summary)
	agent.compactor = lambda: (summary, "scripted")
	agent.model_config = {"provider_options": {**options, "writer": {"reasoning": "low"}}}
	result = await agent.run()
	assert result.status == "success", result.error
	assert summary.requests, "no summary was written"
	assert summary.requests[0].config.provider_options == {"reasoning": "low"}
	assert {r.config.provider_options["top_k"] for r in steps.requests} == {5}


async def test_a_summary_model_set_later_writes_the_summaries() -> None:
	"""``agent.compaction`` naming another summary model: that model writes them, its part sent.

	The compactor stayed the one the agent was created with (here: none, the agent's own
	models), so the summaries went to the agent's model while the check counted the new one.
	"""
	from openmolt_core.llm import CompactionConfig

	summary = ScriptedModel(["the notes so far"] * 4, name="writer")
	options = {"anthropic": {"top_k": 5}}
	agent, _ = _compacting(options, summary)
	agent.compaction = CompactionConfig(threshold_tokens=300, keep_steps=1, model=summary)
	agent.model_config = {"provider_options": {**options, "writer": {"reasoning": "low"}}}
	result = await agent.run()
	assert result.status == "success", result.error
	assert summary.requests, "no summary was written by the summary model"
	assert summary.requests[0].config.provider_options == {"reasoning": "low"}
	# Dropped again: the agent's own model writes them, and a key for "writer" is refused.
	with pytest.raises(ConfigurationError, match="'writer'"):
		agent.compaction = CompactionConfig(threshold_tokens=300, keep_steps=1)
	assert agent.compaction is not None and agent.compaction.model is summary
	agent.model_config = {"provider_options": options}
	agent.compaction = CompactionConfig(threshold_tokens=300, keep_steps=1)
	assert agent.compactor is None
