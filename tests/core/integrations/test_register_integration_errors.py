from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ConfigurationError


def _run(i: dict[str, Any], c: Any) -> str:
	return "ok"


@pytest.mark.parametrize(
	("tool", "expected"),
	[
		({"execute": _run}, r"tools\[1\]\.handle is missing"),
		("search", r"tools\[1\] must be a dict.*got str"),
		(5, r"tools\[1\] must be a dict.*got int"),
		(
			{"handle": "h", "execute": _run, "inputSchema": 5},
			r"tools\[1\]\.inputSchema \(tool 'h'\) must be a JSON Schema",
		),
		(
			{"handle": "h", "execute": _run, "outputSchema": "x"},
			r"tools\[1\]\.outputSchema \(tool 'h'\)",
		),
		(
			{"handle": "h", "execute": _run, "inputschema": {}},
			r"tools\[1\]: unknown key\(s\) \['inputschema'\].*allowed: .*inputSchema",
		),
		(
			{"handle": "h", "execute": "nope"},
			r"tools\[1\]\.execute \(tool 'h'\) must be a function",
		),
		({"handle": "h", "execute": _run, "scopes": "read"}, r"tools\[1\]\.scopes \(tool 'h'\)"),
		(
			{"handle": "h", "endpoint": 5, "description": "d"},
			r"(?s)tools\[1\] \(tool 'h'\).*endpoint",
		),
	],
)
def test_bad_tools_are_configuration_errors_naming_the_field(tool: Any, expected: str) -> None:
	"""A malformed tool is a ConfigurationError naming tools[i] and the field, never a KeyError/TypeError."""
	om = OpenMolt(entry_points=False)
	good = {"handle": "ok", "description": "fine", "execute": _run}
	with pytest.raises(ConfigurationError, match=expected):
		om.register_integration("svc", {"name": "Svc", "tools": [good, tool]})


def test_a_well_formed_execute_tool_still_registers() -> None:
	"""Both spellings of the schema keys are accepted."""
	om = OpenMolt(entry_points=False)
	schema = {"type": "object", "properties": {"q": {"type": "string"}}}
	om.register_integration(
		"svc",
		{
			"name": "Svc",
			"scopes": {"read": "r"},
			"tools": [
				{"handle": "a", "execute": _run, "inputSchema": schema, "scopes": ["read"]},
				{"handle": "b", "execute": _run, "input_schema": schema, "output_schema": schema},
			],
		},
	)
	tools = om.plugins.integration("svc").tools
	assert [t.input_schema for t in tools] == [schema, schema] and tools[1].output_schema == schema
