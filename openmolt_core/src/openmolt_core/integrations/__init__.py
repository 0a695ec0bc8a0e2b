"""Integrations as data, and the engine that turns their HTTP tools into requests.

- `model`: the data model (`Integration`, `ApiSetup`, `Credential`, `HttpTool`);
- `templating`: Liquid rendering (type-preserving, bounded, cached; input is data);
- `http`: the executor of every `HttpTool` (`_encode` and `_decode` do the formats);
- `credentials`: each credential type as an ``httpx.Auth`` (OAuth2 refresh included);
- `extensions`: what an integration registers for itself (filters, encoders, checks, auths);
- `filesystem`: the FileSystem integration (``_sandbox`` confines its paths);
- `http_request`: the generic ``httpRequest`` integration (``_ssrf`` guards its addresses);
- `file_info`: the ``fileInfo`` tool integrations with chunked uploads add to their tools.
"""

from __future__ import annotations

from openmolt_core.integrations.file_info import file_info_tool
from openmolt_core.integrations.model import (
	ApiSetup,
	AuthCredential,
	BasicCredential,
	BearerCredential,
	Credential,
	CredentialType,
	CustomCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
	RequestFormat,
	ResponseFormat,
)
from openmolt_core.tools import FunctionTool

__all__ = [
	"ApiSetup",
	"AuthCredential",
	"BasicCredential",
	"BearerCredential",
	"Credential",
	"CredentialType",
	"CustomCredential",
	"FunctionTool",
	"HttpTool",
	"Integration",
	"OAuth2Credential",
	"RequestFormat",
	"ResponseFormat",
	"file_info_tool",
]
