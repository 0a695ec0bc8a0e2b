"""An ``mcpServers`` entry whose args, env or headers have the wrong JSON type is named, not run.

Measured before: ``"args": 1`` raised ``TypeError: 'int' object is not iterable`` from the
loader, ``"args": "--port 3000"`` started the server with one argument per character, and a
``null`` environment value was passed to the server as the text ``None``.
"""

from __future__ import annotations

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_mcp._config import parse_server


@pytest.mark.parametrize(
	("entry", "said"),
	[
		({"command": "srv", "args": 1}, "mcpServers.fs.args must be a list of strings"),
		({"command": "srv", "args": "--port 3000"}, "mcpServers.fs.args must be a list of strings"),
		({"command": "srv", "args": {"a": "b"}}, "not an object"),
		(
			{"command": "srv", "args": ["ok", None]},
			"mcpServers.fs.args[1] must be a string, not null",
		),
		(
			{"command": "srv", "args": [["x"]]},
			"mcpServers.fs.args[0] must be a string, not an array",
		),
		({"command": "srv", "env": ["A=1"]}, "mcpServers.fs.env must be an object"),
		({"command": "srv", "env": "A=1"}, "mcpServers.fs.env must be an object"),
		({"command": "srv", "env": {"A": None}}, "mcpServers.fs.env.A must be a string, not null"),
		(
			{"command": "srv", "env": {"A": True}},
			"mcpServers.fs.env.A must be a string, not a boolean",
		),
		(
			{"url": "https://mcp.example", "headers": ["x"]},
			"mcpServers.fs.headers must be an object",
		),
		(
			{"url": "https://mcp.example", "headers": {"X-Key": {"v": 1}}},
			"mcpServers.fs.headers.X-Key must be a string, not an object",
		),
	],
)
def test_a_field_of_the_wrong_type_is_named(entry, said) -> None:
	"""The error names the field, the type it must have and the type it had."""
	with pytest.raises(ConfigurationError) as caught:
		parse_server("fs", entry)
	assert said in str(caught.value)


def test_a_secret_of_the_wrong_type_is_not_quoted() -> None:
	"""The message says which type a value had, never the value (it may be a key)."""
	with pytest.raises(ConfigurationError) as caught:
		parse_server(
			"fs", {"url": "https://mcp.example", "headers": {"Authorization": ["sk-live-1"]}}
		)
	assert "sk-live-1" not in str(caught.value)


def test_numbers_are_written_as_json_writes_them() -> None:
	"""A port given as a number is the argument or value ``3000``, as before."""
	config = parse_server("fs", {"command": "srv", "args": ["--port", 3000], "env": {"N": 1.5}})
	assert list(config.args) == ["--port", "3000"]
	assert dict(config.env)["N"] == "1.5"
