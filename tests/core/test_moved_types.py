"""Types moved down to the layer that uses them stay importable from their old modules.

Each move removed an upward import from the kernel or the contract (importlinter.toml); the old
name is the same object, so code that imported it from its old home keeps working.
"""

from __future__ import annotations

from typing import get_args


def test_structured_mode_is_the_contracts() -> None:
	"""`StructuredMode` is part of the model contract (`ModelRequest.response_mode`)."""
	from openmolt_core import llm, structured

	assert structured.StructuredMode is llm.StructuredMode
	assert get_args(llm.StructuredMode) == ("strict", "partial", "off")
	assert "StructuredMode" in structured.__all__ and "StructuredMode" in llm.__all__


def test_the_run_record_is_a_result() -> None:
	"""`RunRecord` (what ``schedule:*`` events carry) lives with the results; old homes re-export it."""
	from openmolt_core import _history, result, scheduler

	assert _history.RunRecord is result.RunRecord is scheduler.RunRecord
	assert _history.RecordStatus is result.RecordStatus is scheduler.RecordStatus
	assert set(get_args(result.RunStatus)) < set(get_args(result.RecordStatus))


def test_the_model_chain_is_the_kernels() -> None:
	"""The model chain lives in the kernel (`_chain`: every model call uses it); fallback re-exports it."""
	from openmolt_core import _chain, fallback

	for name in fallback.__all__:
		assert getattr(fallback, name) is getattr(_chain, name), name
	assert set(fallback.__all__) == set(_chain.__all__)
	assert fallback.fallback_reason(TimeoutError()) == "timeout"


def test_the_schema_dialect_lives_with_the_fitter() -> None:
	"""`SchemaDialect` is described beside the fitter that reads it; structured re-exports it."""
	from openmolt_core import _fit, structured

	assert structured.SchemaDialect is _fit.SchemaDialect
	assert "SchemaDialect" in structured.__all__
	assert structured.SchemaDialect(name="x", max_size=10).violations({"type": "string"}) == (
		"17 bytes (the x limit is 10)",  # {"type":"string"}
	)


def test_the_registrars_are_part_of_the_hook_contract() -> None:
	"""What each hook is handed is specified with the hooks; plugins re-exports it."""
	import openmolt_core
	from openmolt_core import _markers, hookspecs, plugins

	for name in (
		"CapabilityFactory",
		"CapabilityRegistrar",
		"CommandRegistrar",
		"IntegrationRegistrar",
		"ProviderFactory",
		"ProviderRegistrar",
		"SkillRegistrar",
	):
		assert getattr(plugins, name) is getattr(hookspecs, name), name
		assert name in plugins.__all__ and name in hookspecs.__all__
	assert openmolt_core.hookimpl is hookspecs.hookimpl is _markers.hookimpl
	assert hookspecs.hookspec is _markers.hookspec
