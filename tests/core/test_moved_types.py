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
