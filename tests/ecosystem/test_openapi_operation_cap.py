"""An OpenAPI document is someone else's text: how many tools it becomes is bounded.

Each operation becomes a tool (a few milliseconds and some kilobytes each, then a line of the
tool list every model request carries). A document of tens of thousands of operations took
minutes and hundreds of megabytes to import, all of it before anything said it was too many.
Past `MAX_OPERATIONS` chosen operations the import is refused at once, naming the selection
options; a selection (``operations=``, ``tags=``) below the bound imports as before.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations import Integration, _openapi_build
from openmolt_core.integrations.openapi import MAX_OPERATIONS, from_openapi


def _document(count: int) -> dict[str, Any]:
	paths = {
		f"/things{i}/{{id}}": {
			"get": {
				"operationId": f"getThing{i}",
				"tags": ["even" if i % 2 == 0 else "odd"],
				"parameters": [
					{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
				],
				"responses": {"200": {"description": "ok"}},
			}
		}
		for i in range(count)
	}
	return {
		"openapi": "3.0.3",
		"info": {"title": "Big", "version": "1"},
		"servers": [{"url": "https://api.example"}],
		"paths": paths,
	}


def test_a_document_past_the_bound_is_refused_before_any_tool_is_built() -> None:
	"""One operation too many: refused in well under the time its tools would take."""
	document = _document(MAX_OPERATIONS + 1)
	started = time.perf_counter()
	with pytest.raises(ConfigurationError, match=r"more than 2,000 operations") as caught:
		from_openapi(document, id="big")
	assert time.perf_counter() - started < 3.0
	assert "operations=" in str(caught.value) and "tags=" in str(caught.value)


def test_the_bound_counts_the_chosen_operations(monkeypatch: pytest.MonkeyPatch) -> None:
	"""At the bound it imports; a selection brings a larger document under it."""
	monkeypatch.setattr(_openapi_build, "MAX_OPERATIONS", 4)
	assert len(Integration.from_openapi(_document(4), id="big").tools) == 4
	with pytest.raises(ConfigurationError, match="more than 4 operations"):
		Integration.from_openapi(_document(5), id="big")
	chosen = Integration.from_openapi(_document(8), id="big", tags=["even"])
	assert [t.handle for t in chosen.tools] == [f"getThing{i}" for i in (0, 2, 4, 6)]
	picked = Integration.from_openapi(_document(8), id="big", operations=["getThing7"])
	assert [t.handle for t in picked.tools] == ["getThing7"]
