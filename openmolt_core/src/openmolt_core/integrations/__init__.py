"""Integrations as data, and the engine that turns their HTTP tools into requests.

- `model`: the data model (`Integration`, `ApiSetup`, `Credential`, `HttpTool`);
- `templating`: Liquid rendering (type-preserving, bounded, cached; input is data);
- `http`: the executor of every `HttpTool` (`_encode` and `_decode` do the formats);
- `credentials`: each credential type as an ``httpx.Auth`` (OAuth2 refresh included);
- `extensions`: what an integration registers for itself (filters, encoders, checks, auths);
- `filesystem`: the FileSystem integration (``_sandbox`` confines its paths);
- `http_request`: the generic ``httpRequest`` integration (``_ssrf`` guards its addresses);
- `file_info`: the ``fileInfo`` tool integrations with chunked uploads add to their tools;
- `openapi`: integrations imported from OpenAPI documents (``_openapi_*`` do the parts);
- `_client`: the shared ``httpx.AsyncClient`` and its transport (``_aiohttp`` the fast one).

The names below resolve on first use, so importing a module of this package (the shared
client, for one) loads neither pydantic nor the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openmolt_core._support import lazy_exports

if TYPE_CHECKING:
	from openmolt_core.functiontools import FunctionTool
	from openmolt_core.integrations.file_info import file_info_tool
	from openmolt_core.integrations.model import (
		ApiSetup,
		AuthCredential,
		BasicCredential,
		BearerCredential,
		Credential,
		CredentialType,
		CustomCredential,
		FieldEncoding,
		HttpTool,
		Integration,
		OAuth2Credential,
		RequestFormat,
		ResponseFormat,
	)

__all__ = [
	"ApiSetup",
	"AuthCredential",
	"BasicCredential",
	"BearerCredential",
	"Credential",
	"CredentialType",
	"CustomCredential",
	"FieldEncoding",
	"FunctionTool",
	"HttpTool",
	"Integration",
	"OAuth2Credential",
	"RequestFormat",
	"ResponseFormat",
	"file_info_tool",
]

_FROM: dict[str, str] = {
	**dict.fromkeys(__all__, "openmolt_core.integrations.model"),
	"FunctionTool": "openmolt_core.functiontools",
	"file_info_tool": "openmolt_core.integrations.file_info",
}

__getattr__: Callable[[str], Any]
__dir__: Callable[[], list[str]]
__getattr__, __dir__ = lazy_exports(globals(), _FROM)
