"""Every built-in integration has a scripted-agent test that runs at least two of its tools."""

from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

HERE = Path(__file__).parent


def _tools_called_per_test() -> list[set[str]]:
	"""For each test function of the agent test modules, the ``iid.tool`` names it scripts."""
	found: list[set[str]] = []
	for path in sorted(HERE.glob("*/test_*agents.py")):
		tree = ast.parse(path.read_text(encoding="utf-8"))
		for node in tree.body:
			if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
				continue
			if not node.name.startswith("test_"):
				continue
			calls = {
				call.args[0].value
				for call in ast.walk(node)
				if isinstance(call, ast.Call)
				and getattr(call.func, "id", None) == "call_tool"
				and call.args
				and isinstance(call.args[0], ast.Constant)
				and isinstance(call.args[0].value, str)
			}
			found.append(calls)
	return found


def test_each_integration_has_a_two_tool_scripted_agent_test() -> None:
	"""A test function calls two different tools of each integration through a scripted model."""
	ids = {
		e.name
		for e in entry_points(group="openmolt.integrations")
		if e.dist is not None and e.dist.name == "openmolt-integrations"
	}
	covered = {
		iid
		for calls in _tools_called_per_test()
		for iid in {c.split(".")[0] for c in calls}
		if len({c for c in calls if c.startswith(f"{iid}.")}) >= 2
	}
	assert len(ids) >= 29
	assert sorted(ids - covered) == []
