"""An `Agent` built by hand, without what ``create_agent`` adds (its capabilities, safety among
them): for the tests of what the kernel does for an agent that has none."""

from __future__ import annotations

from typing import Any

from openmolt_core.agent import Agent


def bare_agent(built: Any, llm: Any, **options: Any) -> Agent:
	"""An agent named ``Bare`` on ``llm``, sharing ``built``'s instance and model config.

	Args:
		built: An agent ``create_agent`` made (its instance and model config are reused).
		llm: The model every step asks (a `ScriptedModel`, or any provider object).
		options: `Agent` keywords that differ from a plain agent's (``tools``, ``memory``,
			``capabilities``, ``name``...).
	"""
	plain: dict[str, Any] = {
		"name": "Bare",
		"provider": lambda: llm,
		"model": "scripted",
		"model_config": built.model_config,
		"instructions": "",
		"tools": [],
		"output_schema": None,
		"memory": None,
		"on_human_input_request": None,
		"config": None,
		"max_steps": 5,
		"max_tokens": None,
		"timeout": None,
	}
	return Agent(built.om, **{**plain, **options})
