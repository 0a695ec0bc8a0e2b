"""OpenMolt's own capabilities have no method named almost like a hook.

At run time the near-miss check (difflib) runs only for other distributions' capability classes,
so that a one-shot run never loads difflib; this test runs it on every built-in one instead.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import openmolt_core
from openmolt_core.hooks import Capability, _check_spelling

DISTRIBUTIONS = ("openmolt_mcp", "openmolt_otel", "openmolt_dbos", "openmolt_serve", "openmolt_ui")


def _ours() -> list[type[Capability]]:
	for info in pkgutil.walk_packages(openmolt_core.__path__, "openmolt_core."):
		if ".cli" not in info.name and "pytest_plugin" not in info.name:
			importlib.import_module(info.name)
	for dist in DISTRIBUTIONS:
		importlib.import_module(dist)
	found: list[type[Capability]] = []
	pending = list(Capability.__subclasses__())
	while pending:
		cls = pending.pop()
		pending.extend(cls.__subclasses__())
		if cls.__module__.startswith("openmolt") and cls not in found:
			found.append(cls)
	return found


def test_the_built_in_capabilities_are_found() -> None:
	"""The walk reaches the capabilities the assembly builds (a guard on the test itself)."""
	names = {cls.__name__ for cls in _ours()}
	assert {"Safety", "ApprovalRules", "Skills", "ToolCatalog", "Sources", "Observers"} <= names


def test_every_built_in_capability_spells_its_hooks() -> None:
	"""No public method of ours is a near miss of a hook (it would never be called)."""
	for cls in _ours():
		_check_spelling(cls, near=True)


def test_the_near_miss_check_is_kept_for_other_distributions() -> None:
	"""A class of another module is still compared (and refused for a near miss)."""
	from openmolt import ConfigurationError

	class Mine(Capability):
		name = "mine"

		async def before_tools(self, run: object) -> None:  # a near miss of before_tool
			return None

	Mine.__module__ = "someone_else.caps"
	with pytest.raises(ConfigurationError, match="did you mean 'before_tool'"):
		_check_spelling(Mine)


@pytest.mark.parametrize(
	("hook", "replaced_by"),
	[
		("gate_step", "answer Approve\\(rule\\) from before_tool"),
		("gate_reserve", "in reserve_steps"),
		("gate_tool", "decide the call in before_tool"),
	],
)
@pytest.mark.parametrize("module", ["someone_else.caps", "openmolt_core.mine"])
def test_a_capability_defining_a_retired_hook_is_refused_when_added(
	hook: str, replaced_by: str, module: str
) -> None:
	"""gate_step, gate_reserve and gate_tool are no longer called: an agent given a capability
	that still defines one is refused, naming the hook and what replaces it (ours too)."""
	from openmolt import ConfigurationError, OpenMolt
	from openmolt_core.testing import ScriptedModel

	def retired(self: Capability, *args: object) -> None:
		return None

	Old = type("Old", (Capability,), {"name": "old", hook: retired, "__module__": module})
	with pytest.raises(ConfigurationError, match=f"Old.{hook} is a retired hook.*{replaced_by}"):
		OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([]), capabilities=[Old()]
		)
