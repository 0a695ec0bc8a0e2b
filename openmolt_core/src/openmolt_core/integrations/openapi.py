"""OpenAPI 3 documents as integrations: one `HttpTool` per operation, written as plain data.

```python
petstore = Integration.from_openapi("petstore.json", id="petstore", tags=["pet"])
om.register_integration("petstore", petstore)
```

``openmolt import-openapi SPEC --id NAME`` writes the same integration as a Python module (or
JSON) that a person can read and edit. What the importer does:

- **operations** become tools named after their ``operationId`` in camelCase (``repos/get`` is
  ``reposGet``; without one, method and path); ``operations=`` and ``tags=`` choose them (at
  most `MAX_OPERATIONS`: a larger document is refused before any tool is built);
- **parameters** (path, query, header, cookie) become top-level input fields; the request body is the
  ``body`` field, sent as JSON, a form, multipart (binary fields are file references) or raw bytes;
- **schemas** have every ``$ref`` resolved (recursion is cut at a few levels), ``allOf`` merged,
  ``oneOf`` written as ``anyOf`` (at most `MAX_VARIANTS` branches), OpenAPI 3.0's ``nullable``
  written as a JSON Schema type, and keywords the providers' strict modes refuse dropped
  (``discriminator``, ``not``, ``xml``, ``example``...); read-only fields are left out of
  request bodies, and nesting deeper than `MAX_DEPTH` becomes a free-form object;
- **security schemes** become credentials: HTTP bearer (``config.token``), HTTP basic
  (``config.username`` / ``config.password``), API keys in a header, the query or a cookie
  (``config.apiKey``, or one key per scheme), and OAuth2 with its URLs and scopes; OAuth2 scopes
  an operation requires become the tool's scopes, so agents can be granted part of an API; an
  operation whose method is not GET, HEAD or OPTIONS and whose scopes are all read scopes (or
  that names none, in a document that defines scopes) also needs ``write`` (the document's
  scope names are its word, the method is the request's);
- **descriptions** are shortened for the model (summary first, Markdown links and HTML dropped,
  at most `MAX_DESCRIPTION_CHARS` characters);
- **labels** (`openmolt_core.taint`) come from the method and whether the request carries
  model input (`default_labels`: a GET with a parameter is ``outbound`` too) unless ``labels=``
  names the tool.

The document is someone else's text (docs/security.md, "Imported OpenAPI documents"): it is read
within bounds (`_openapi_load`), its URLs are checked when it is imported and every request of
its tools goes through the SSRF guard (`_openapi_urls`, ``ApiSetup.guard_every_request``), schemas
are converted within bounds (`_openapi_schemas`), and the module `to_module` writes holds only
literals (`_openapi_write`); the four are modules of this package (`openmolt_core.integrations`).

No library does this translation for us: OpenAPI parsers (``openapi-pydantic``, ``prance``) give a
model of the document, and the work here is the mapping onto `HttpTool`. JSON needs nothing extra;
YAML documents need PyYAML (``pip install pyyaml``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openmolt_core.integrations._openapi_build import MAX_OPERATIONS, default_labels
from openmolt_core.integrations._openapi_load import load_document
from openmolt_core.integrations._openapi_schemas import (
	MAX_DEPTH,
	MAX_DESCRIPTION_CHARS,
	MAX_SCHEMA_NESTING,
	MAX_SCHEMA_PARTS,
	MAX_VARIANTS,
)
from openmolt_core.integrations._openapi_write import to_json, to_module
from openmolt_core.integrations.model import Integration

__all__ = [
	"MAX_DEPTH",
	"MAX_DESCRIPTION_CHARS",
	"MAX_OPERATIONS",
	"MAX_SCHEMA_NESTING",
	"MAX_SCHEMA_PARTS",
	"MAX_VARIANTS",
	"default_labels",
	"from_openapi",
	"load_document",
	"to_json",
	"to_module",
]


def from_openapi(
	document: str | Path | Mapping[str, Any],
	*,
	id: str | None = None,
	operations: Sequence[str] | None = None,
	tags: Sequence[str] | None = None,
	base_url: str | None = None,
	name: str | None = None,
	labels: Mapping[str, Sequence[str]] | None = None,
	allow_internal_hosts: Sequence[str] = (),
	allow_hosts: Sequence[str] = (),
) -> Integration:
	"""An integration with one `HttpTool` per operation of an OpenAPI 3 document.

	The document is someone else's text: its URLs are checked when it is imported, and every
	request of its tools goes through the SSRF guard (``guard_every_request``).

	Args:
		document: The document: a dict, or the path of a JSON or YAML file.
		id: The integration id (set again by ``register_integration``).
		operations: Only these operations: operationIds as the document writes them, or the
			tool handles they become (``reposGet``).
		tags: Only operations with one of these tags.
		base_url: The API's base URL (default: the document's first server).
		name: The display name (default: the document's title).
		labels: Taint labels by tool handle or pattern (``{"listPets": ["untrusted",
			"private"]}``); a tool a key names gets those instead of the ones its method and
			input give (`default_labels`).
		allow_internal_hosts: Internal hosts or networks the tools may reach (a self-hosted API,
			a local mock server): ``["127.0.0.1"]``, ``["api.corp.example", "10.20.0.0/16"]``.
			Loopback, private, link-local and metadata addresses are refused otherwise.
		allow_hosts: Hosts other than the base URL's that the document's operations may be
			served by (their own ``servers``): ``["upload.example.com"]``. Such an operation's
			requests carry the integration's credentials, so one whose servers name another
			scheme, host or port than the base URL is refused otherwise.

	Raises:
		ConfigurationError: The document cannot be read, an operation or tag is unknown, a URL
			points to an internal address, an operation is served by a host not allowed, or an
			operation cannot be expressed; the message names the place.
	"""
	return Integration.from_openapi(
		document,
		id=id,
		operations=operations,
		tags=tags,
		base_url=base_url,
		name=name,
		labels=labels,
		allow_internal_hosts=allow_internal_hosts,
		allow_hosts=allow_hosts,
	)
