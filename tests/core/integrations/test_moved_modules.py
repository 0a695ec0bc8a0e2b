"""The HTTP engine's helpers and the OpenAPI importer live in `openmolt_core.integrations`.

Their old paths stay importable: each is a one-line re-export of the same objects. The shared
client is imported without the engine: importing it loads neither pydantic nor the data model.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

MOVED = {
	"openmolt_core.openapi": "openmolt_core.integrations.openapi",
	"openmolt_core._openapi_load": "openmolt_core.integrations._openapi_load",
	"openmolt_core._openapi_schemas": "openmolt_core.integrations._openapi_schemas",
	"openmolt_core._openapi_urls": "openmolt_core.integrations._openapi_urls",
	"openmolt_core._openapi_write": "openmolt_core.integrations._openapi_write",
	"openmolt_core._http": "openmolt_core.integrations._client",
	"openmolt_core._aiohttp": "openmolt_core.integrations._aiohttp",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_path_re_exports_the_same_objects(old: str, new: str) -> None:
	old_module, new_module = importlib.import_module(old), importlib.import_module(new)
	assert old_module.__all__ == new_module.__all__
	assert new_module.__all__
	for name in new_module.__all__:
		assert getattr(old_module, name) is getattr(new_module, name), (old, name)


def test_the_shared_client_loads_no_engine() -> None:
	"""`OpenMolt` builds its client from `integrations._client`: no pydantic, no data model."""
	code = (
		"import json, sys\n"
		"from openmolt_core.integrations._client import new_client\n"
		"print(json.dumps(sorted(sys.modules)))\n"
	)
	out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
	loaded = set(json.loads(out.stdout))
	assert "openmolt_core.integrations._client" in loaded
	assert not loaded & {"pydantic", "openmolt_core.integrations.model", "openmolt_core.tools"}


def test_the_package_names_resolve_on_first_use() -> None:
	"""`from openmolt_core.integrations import HttpTool` still works (the lazy names)."""
	import openmolt_core.integrations as package
	from openmolt_core.integrations import file_info, model
	from openmolt_core.tools import FunctionTool

	assert package.HttpTool is model.HttpTool and package.Integration is model.Integration
	assert (
		package.FunctionTool is FunctionTool and package.file_info_tool is file_info.file_info_tool
	)
	assert set(package.__all__) <= set(dir(package))
	with pytest.raises(AttributeError):
		package.nothing_of_that_name  # noqa: B018


def test_the_integrations_reader_of_schemas_keeps_its_old_name_in_tools() -> None:
	"""`schema_of` lives with the HTTP tool; `openmolt_core.tools` gives the same function."""
	from pydantic import BaseModel

	from openmolt_core import tools
	from openmolt_core.integrations import _httptool

	class City(BaseModel):
		name: str

	assert tools.schema_of is _httptool.schema_of
	given = {"type": "object"}
	assert _httptool.schema_of(given) is given
	assert _httptool.schema_of(None) is None
	assert _httptool.schema_of(City)["properties"]["name"]["type"] == "string"
	with pytest.raises(TypeError, match="pydantic model class or a JSON Schema dict"):
		_httptool.schema_of("city")  # type: ignore[arg-type]
