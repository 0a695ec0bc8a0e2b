"""``-m MODEL "prompt"`` sets the agent-file model's options without building the model.

The model (with its trigger, schedule and OpenAPI models: about 10 ms of CPU in a fresh process)
is built only to word the error of an option it refuses (`openmolt_core.cli._run._prompt_spec`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openmolt_core.cli._agentfile import AgentFile, AgentFileError
from openmolt_core.cli._run import _prompt_spec

WHERE = Path("<command line>")


@pytest.mark.parametrize(
	("model", "instructions", "integrations"),
	[
		("openai:gpt-5-mini", "Do it.", []),
		("ollama:llama3.2", "", ["slack", "notion"]),
		("x", " ", [""]),
		("openai:gpt-5-mini", "é\u2028\x00", [" slack ", "S L A C K", "\u00e9t\u00e9"]),
		(":", "Do it.", ["slack", "slack"]),
	],
)
def test_the_options_are_what_validating_them_gives(
	model: str, instructions: str, integrations: list[str]
) -> None:
	"""Every value the command line can give is set as the model's validation would set it."""
	data = {
		"name": model,
		"model": model,
		"instructions": instructions,
		"integrations": integrations,
	}
	given = _prompt_spec(dict(data), WHERE)
	validated = AgentFile.model_validate(dict(data), strict=True)
	assert given == validated
	assert given.model_fields_set == validated.model_fields_set
	assert given.models == validated.models


def test_an_option_the_model_refuses_is_said_in_its_words() -> None:
	"""An empty model id (the agent's name) is refused as a file's key would be."""
	data = {"name": "", "model": "", "instructions": "Do it.", "integrations": []}
	with pytest.raises(AgentFileError) as caught:
		_prompt_spec(data, WHERE)
	assert str(caught.value) == "<command line>: String should have at least 1 character"


def test_a_prompt_run_builds_no_agent_file_model(tmp_path: Path) -> None:
	"""``-m``'s agent is made, in a fresh process, without building the agent-file model."""
	code = (
		"import json\n"
		"from openmolt_core.cli._agentfile import AgentFile\n"
		"from openmolt_core.cli._run import load_prompt\n"
		"loaded = load_prompt('openai:gpt-5-mini', instructions=None, integrations=[], tools=[],\n"
		"	env_file=None, verbose=False)\n"
		"print(json.dumps([loaded.agent.name, AgentFile.__pydantic_complete__]))\n"
	)
	env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENMOLT_OPENAI_API_KEY": "sk-test"}
	done = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
	)
	assert done.returncode == 0, done.stderr
	assert json.loads(done.stdout) == ["openai:gpt-5-mini", False]
