"""An agent file's ``openapi`` key: each OpenAPI document becomes an integration of the agent.

```json
{"openapi": {"petstore": "petstore.json",
             "github": {"document": "github.json", "operations": ["repos/get"]}}}
```

A document is imported as `openmolt_core.integrations.openapi.from_openapi` imports it, with the
entry's options. A JSON file without an ``openapi`` key is taken as an integration already
imported (``openmolt import-openapi --format json``, perhaps edited since) and registered as it
is. Paths are relative to the agent file. The agent uses each id as it uses an integration it
names in ``integrations`` (where an entry may give its credential or scopes); its keys come from
``OPENMOLT_<ID>_<KEY>`` like any integration's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openmolt_core.cli._agentfile import AgentFileError, OpenApiSource
from openmolt_core.errors import ConfigurationError

if TYPE_CHECKING:
	from openmolt_core.openmolt import OpenMolt

__all__ = ["register_openapi"]

_OPTIONS = ("operations", "tags", "base_url", "name", "labels")
_HOSTS = ("allow_internal_hosts", "allow_hosts")


def register_openapi(
	om: OpenMolt, path: Path, sources: Mapping[str, str | OpenApiSource], listed: Set[str]
) -> list[str]:
	"""Register each source under its id; return the ids ``integrations`` does not name yet.

	Args:
		om: The agent's instance.
		path: The agent file (paths are relative to its folder).
		sources: The file's ``openapi`` entries.
		listed: The ids the file's ``integrations`` names (with their own entries).

	Raises:
		AgentFileError: A file is missing or unreadable, the document cannot be imported, or
			importer options are given for an integration already imported.
	"""
	for iid, source in sources.items():
		entry = source if isinstance(source, OpenApiSource) else OpenApiSource(document=source)
		where = f"{path}: openapi.{iid}"
		file = Path(entry.document)
		if not file.is_absolute():
			file = path.parent / file
		try:
			om.register_integration(iid, _integration(file, entry, iid, where))
		except AgentFileError:
			raise
		except ConfigurationError as exc:
			raise AgentFileError(f"{where}: {exc}") from None
	return [iid for iid in sources if iid not in listed]


def _integration(file: Path, entry: OpenApiSource, iid: str, where: str) -> Any:
	"""The integration of one entry: imported from its document, or the imported JSON itself."""
	from openmolt_core.integrations.model import Integration

	if entry.document.lower().startswith(("http://", "https://")):
		Integration.from_openapi(entry.document)  # raises: it names the URL and the fix
	if not file.exists():
		raise AgentFileError(
			f"{where}: no such file {entry.document!r} ({file}; a path is relative to the agent "
			"file)"
		)
	if file.suffix.lower() == ".json":
		from openmolt_core._support.paths import read_text
		from openmolt_core.integrations._openapi_load import MAX_DOCUMENT_BYTES

		try:
			text = read_text(file, limit=MAX_DOCUMENT_BYTES, encoding="utf-8-sig")
		except OSError as exc:
			raise AgentFileError(f"{where}: cannot read {file}: {exc.strerror or exc}") from None
		try:
			data = json.loads(text)
		except (ValueError, RecursionError) as exc:
			raise AgentFileError(f"{where}: {file} cannot be read as JSON: {exc}") from None
		if isinstance(data, dict) and "openapi" not in data and "swagger" not in data:
			given = [_camel(k) for k in _OPTIONS if getattr(entry, k) is not None]
			given += [_camel(k) for k in _HOSTS if getattr(entry, k)]
			if given:
				raise AgentFileError(
					f"{where}: {file.name} holds an integration already imported (it has no "
					f"'openapi' key), so {', '.join(given)} do not apply; import the document "
					"again with them (openmolt import-openapi), or edit the integration's tools"
				)
			return data  # register_integration checks it, naming the field
	return Integration.from_openapi(
		file,  # read again within the importer's bounds
		id=iid,
		operations=entry.operations,
		tags=entry.tags,
		base_url=entry.base_url,
		name=entry.name,
		labels=entry.labels,
		allow_internal_hosts=entry.allow_internal_hosts,
		allow_hosts=entry.allow_hosts,
	)


def _camel(name: str) -> str:
	head, *rest = name.split("_")
	return head + "".join(w.title() for w in rest)
