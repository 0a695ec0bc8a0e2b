import importlib
import inspect
import pkgutil

import pytest

import openmolt_core

PUBLIC = [
	m.name
	for m in pkgutil.walk_packages(openmolt_core.__path__, "openmolt_core.")
	if not any(part.startswith("_") for part in m.name.split("."))
]


def _isort_key(name: str) -> tuple[int, str]:
	# ruff's RUF022 order: CONSTANTS, then Classes, then everything else
	if name.isupper() or (name.upper() == name and "_" in name):
		return (0, name)
	if name[:1].isupper():
		return (1, name)
	return (2, name)


@pytest.mark.parametrize("name", [*PUBLIC, "openmolt", "openmolt_core"])
def test_every_public_module_has_a_sorted_complete_all(name: str) -> None:
	"""__all__ is sorted and names every public class and function the module defines."""
	module = importlib.import_module(name)
	exported = getattr(module, "__all__", None)
	assert exported is not None, f"{name} has no __all__"
	assert list(exported) == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
	defined = {
		n
		for n, obj in vars(module).items()
		if not n.startswith("_")
		and (inspect.isclass(obj) or inspect.isfunction(obj))
		and getattr(obj, "__module__", None) == name
	}
	assert defined <= set(exported), f"{name} does not export {sorted(defined - set(exported))}"


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_item_has_a_docstring(name: str) -> None:
	"""Each exported class and function is documented (the API reference is built from them)."""
	module = importlib.import_module(name)
	for item in getattr(module, "__all__", []):
		obj = getattr(module, item)
		if inspect.isclass(obj) or inspect.isfunction(obj):
			assert inspect.getdoc(obj), f"{name}.{item} has no docstring"


def test_every_hookspec_is_documented() -> None:
	"""Every hook in hookspecs.py has a docstring saying when it runs."""
	from openmolt_core import hookspecs

	for name in ("register_providers", "register_integrations"):
		doc = inspect.getdoc(getattr(hookspecs, name)) or ""
		assert "Called once" in doc
