"""One set of typed option models for create_agent and the CLI's agent files (issue 16.15)."""

from __future__ import annotations

from pathlib import Path

import pytest

import openmolt
from openmolt_core import OpenMolt
from openmolt_core.cli._agentfile import AgentFile
from openmolt_core.errors import ConfigurationError
from openmolt_core.options import (
	AgentConfig,
	AgentMemory,
	IntegrationCredential,
	IntegrationEntry,
	MemoryPart,
	Options,
	parse_options,
)
from openmolt_core.testing import ScriptedModel, finish, update_memory

pytestmark = pytest.mark.anyio


def test_every_option_model_takes_both_spellings_through_one_generator() -> None:
	"""camelCase and snake_case validate alike; the two spellings at once must agree."""
	for model in (AgentConfig, AgentMemory, IntegrationCredential, IntegrationEntry, MemoryPart):
		assert issubclass(model, Options)
	assert AgentConfig.model_validate({"maxSteps": 4}) == AgentConfig(max_steps=4)
	assert AgentConfig.model_validate({"max_steps": 4}) == AgentConfig(max_steps=4)
	assert AgentConfig.model_validate({"maxSteps": 4, "max_steps": 4}).max_steps == 4
	with pytest.raises(ValueError, match="give maxSteps or max_steps, not both"):
		AgentConfig.model_validate({"maxSteps": 4, "max_steps": 5})
	memory = AgentMemory.model_validate({"longTerm": {"data": "x", "onUpdate": print}})
	assert isinstance(memory.long_term, MemoryPart) and memory.long_term.on_update is print


def test_the_options_are_exported() -> None:
	"""Applications import them from openmolt."""
	for name in ("AgentConfig", "AgentMemory", "IntegrationCredential", "IntegrationEntry"):
		assert getattr(openmolt, name) is globals()[name]
		assert name in openmolt.__all__


def test_the_agent_file_uses_the_same_models() -> None:
	"""The CLI's agent-file model holds the create_agent models themselves, not copies."""
	base = {"name": "A", "model": "openai:gpt-5-mini"}
	spec = AgentFile.model_validate(
		{
			**base,
			"config": {"maxSteps": 2},
			"integrations": [{"integration": "notion", "credential": {"config": {"apiKey": "k"}}}],
			"memory": {"longTerm": "notes"},
		}
	)
	assert isinstance(spec.config, AgentConfig) and spec.config.max_steps == 2
	assert isinstance(spec.integrations[0], IntegrationEntry)
	assert isinstance(spec.memory, AgentMemory) and spec.memory.long_term == "notes"


@pytest.mark.parametrize(
	("options", "message"),
	[
		({"config": {"maxStep": 3}}, "did you mean 'maxSteps'"),
		({"config": {"max_steps": "ten"}}, "must be a whole number >= 1"),
		({"config": {"verbose": "yes"}}, "must be True or False"),
		({"integrations": [{"integration": "x", "scope": ["a"]}]}, "did you mean 'scopes'"),
		({"integrations": [{"credential": {}}]}, "integration"),
		({"memory": {"longterm": "x"}}, "did you mean 'long_?[tT]erm'"),
	],
)
def test_create_agent_and_the_agent_file_refuse_the_same_options(
	options: dict[str, object], message: str
) -> None:
	"""The same bad option fails in create_agent and in an agent file."""
	om = OpenMolt(entry_points=False)
	with pytest.raises(ConfigurationError, match=message):
		om.create_agent(name="A", model=ScriptedModel([]), **options)  # type: ignore[arg-type]
	with pytest.raises(ValueError):
		AgentFile.model_validate({"name": "A", "model": "openai:gpt-5-mini", **options})


async def test_typed_options_work_in_create_agent() -> None:
	"""Model objects are accepted where dicts are, and behave the same."""
	updates: list[str] = []
	om = OpenMolt(entry_points=False)
	agent = om.create_agent(
		name="A",
		model=ScriptedModel(
			[update_memory("new", memory="longTerm", mode="replace"), finish(result="done")]
		),
		config=AgentConfig(max_steps=5, max_reply_chars=5000),
		memory=AgentMemory(long_term=MemoryPart(data="old", on_update=updates.append)),
	)
	assert agent.max_steps == 5 and agent.limits.max_reply_chars == 5000
	result = await agent.run("go")
	assert result.status == "success", result
	assert updates == ["new"]


def test_parse_options_names_where_the_option_was_given() -> None:
	"""The message starts with where the options came from."""
	with pytest.raises(ConfigurationError, match=r"^retry-like: unknown key 'x'"):
		parse_options(IntegrationCredential, {"x": 1}, "retry-like")


def test_dataclass_options_read_both_spellings_through_the_same_rule(tmp_path: Path) -> None:
	"""The taint policy and the durability settings take either spelling, never both differing."""
	from openmolt_core.errors import ConfigurationError
	from openmolt_core.taint import TaintPolicy
	from openmolt_dbos._settings import parse_settings

	assert TaintPolicy.of({"onOutbound": "refuse", "only_trifecta": False}) == TaintPolicy(
		on_outbound="refuse", only_trifecta=False
	)
	store = str(tmp_path / "runs.sqlite")
	assert parse_settings({"url": store, "workerId": "w1"}).worker_id == "w1"
	assert parse_settings({"url": store, "replay_events": True}).replay_events is True
	with pytest.raises(ConfigurationError, match="'onOutbound' or 'on_outbound', not both"):
		TaintPolicy.of({"onOutbound": "refuse", "on_outbound": "allow"})
	with pytest.raises(ConfigurationError, match="'workerId' or 'worker_id', not both"):
		parse_settings({"url": store, "workerId": "a", "worker_id": "b"})
	with pytest.raises(ConfigurationError, match="did you mean 'worker_id'"):
		parse_settings({"url": store, "wrkerId": "a"})
