"""A URL an OpenAPI import error quotes shows no password and no secret query value.

The document's server URLs, its ``$ref``s and the document's own name can carry credentials
(``https://u:PASSWORD@host``, ``?access_token=``): an error quoting one goes to a terminal, a log,
a CI report. Every error masks them as the refused server URLs already did (`_openapi_urls`).
"""

from __future__ import annotations

from typing import Any

import pytest

from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations.openapi import from_openapi

PASSWORD = "hunter2-Sup3rS3cret-pw"
TOKEN = "tok-0123456789abcdefSECRET"


def _simple(**changes: Any) -> dict[str, Any]:
	document: dict[str, Any] = {
		"openapi": "3.0.3",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/pets": {
				"get": {"operationId": "listPets", "responses": {"200": {"description": "ok"}}}
			}
		},
	}
	document.update(changes)
	return document


def _with_ref(ref: str) -> dict[str, Any]:
	document = _simple()
	schema = {"$ref": ref}
	document["paths"]["/pets"]["get"]["parameters"] = [
		{"name": "q", "in": "query", "schema": schema}
	]
	return document


CASES = {
	"liquid": _simple(servers=[{"url": f"https://u:{PASSWORD}@api.example.com/{{{{ x }}}}"}]),
	"variable": _simple(servers=[{"url": f"https://api.example.com/{{v}}?access_token={TOKEN}"}]),
	"ref": _with_ref(f"https://u:{PASSWORD}@schemas.example.com/s.json?token={TOKEN}#/x"),
	"document": f"https://u:{PASSWORD}@example.com/openapi.json?token={TOKEN}",
	"relative": _simple(servers=[{"url": f"//u:{PASSWORD}@api.example.com/?token={TOKEN}"}]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_import_error_masks_the_urls_credentials(case: str) -> None:
	"""Refused with the place named, and neither the password nor the token shown."""
	with pytest.raises(ConfigurationError) as caught:
		from_openapi(CASES[case], id="t")
	said = str(caught.value)
	assert PASSWORD not in said and TOKEN not in said, said
	assert "[redacted]" in said
