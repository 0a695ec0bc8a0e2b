"""openmolt-dbos's modules: a sorted, complete __all__ each, and docstrings on what they export."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import openmolt_dbos

MODULES = ["openmolt_dbos"] + [
	m.name for m in pkgutil.walk_packages(openmolt_dbos.__path__, "openmolt_dbos.")
]


def _key(name: str) -> tuple[int, str]:
	if name.isupper():
		return (0, name)
	return (1, name) if name[:1].isupper() else (2, name)


@pytest.mark.parametrize("name", MODULES)
def test_each_module_exports_what_it_defines_in_order_and_documents_it(name: str) -> None:
	"""__all__ is sorted, names every public class and function, and each has a docstring."""
	module = importlib.import_module(name)
	exported = list(getattr(module, "__all__", []))
	assert exported == sorted(exported, key=_key), name
	defined = {
		n
		for n, obj in vars(module).items()
		if not n.startswith("_")
		and (inspect.isclass(obj) or inspect.isfunction(obj))
		and getattr(obj, "__module__", None) == name
	}
	assert defined <= set(exported), f"{name} does not export {sorted(defined - set(exported))}"
	for item in exported:
		obj = getattr(module, item)
		if inspect.isclass(obj) or inspect.isfunction(obj):
			assert inspect.getdoc(obj), f"{name}.{item} has no docstring"
