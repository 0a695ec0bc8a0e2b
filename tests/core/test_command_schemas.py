"""The built-in commands' schemas are read from a generated file that agrees with the models."""

import subprocess
import sys
import textwrap

from openmolt_core.commands import COMMANDS, Finish
from openmolt_core.envelope import GENERATED, command_schema, derive_command_schema
from tests.core.update_command_schemas import text


def test_the_generated_file_is_what_the_command_models_give() -> None:
	"""After a change in commands.py or a pydantic update: run tests/core/update_command_schemas.py."""
	assert GENERATED.read_text(encoding="utf-8") == text(), (
		"command_schemas.json is out of date: uv run python tests/core/update_command_schemas.py"
	)
	for command in COMMANDS:
		assert command_schema(command) == derive_command_schema(command), command.__name__


def test_a_command_that_is_not_built_in_is_described_by_its_model() -> None:
	"""A subclass (or a plugin's command) is not in the file: pydantic describes it."""

	class LongFinish(Finish):
		"""Finish, with a summary."""

		summary: str = ""

	schema = command_schema(LongFinish)
	assert "summary" in schema["properties"]
	assert schema == derive_command_schema(LongFinish)


def test_describing_the_reply_schema_builds_no_command_model() -> None:
	"""A fresh process describes every command without building one: a run builds only those
	its replies hold (tests/providers/test_one_shot_builds.py)."""
	code = textwrap.dedent(
		"""
		from openmolt_core.commands import COMMANDS
		from openmolt_core.envelope import Envelope, ToolSchema

		tool = ToolSchema("local.add", {"type": "object", "properties": {}})
		schema = Envelope.build([tool], output_schema=None, human_input=True).schema()
		assert len(schema["properties"]["commands"]["items"]["anyOf"]) == len(COMMANDS)
		print(sorted(c.__name__ for c in COMMANDS if c.__pydantic_complete__))
		"""
	)
	out = subprocess.run(
		[sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
	)
	assert out.stdout.strip() == "[]"


def test_without_the_file_the_models_describe_the_commands(monkeypatch, tmp_path) -> None:
	"""A bundle that left the package's data files out still runs: pydantic describes them."""
	from openmolt_core import envelope

	monkeypatch.setattr(envelope, "GENERATED", tmp_path / "missing.json")
	envelope._generated.cache_clear()
	envelope.command_schema.cache_clear()
	try:
		for command in COMMANDS:
			assert command_schema(command) == derive_command_schema(command), command.__name__
	finally:
		envelope._generated.cache_clear()
		envelope.command_schema.cache_clear()
