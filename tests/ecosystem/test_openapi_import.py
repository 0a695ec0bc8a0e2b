"""The OpenAPI importer on real published documents, and the requests its tools build."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from _ecosystem import ROOT

from openmolt import OpenMolt
from openmolt_core.cli import main
from openmolt_core.errors import ConfigurationError
from openmolt_core.integrations import Integration
from openmolt_core.integrations.openapi import (
	MAX_DESCRIPTION_CHARS,
	MAX_VARIANTS,
	from_openapi,
	to_json,
	to_module,
)
from openmolt_core.testing import ScriptedModel, call_tool, finish

REFS = ROOT / ".cache" / "refs"


def _tar(name: str) -> tarfile.TarFile:
	path = REFS / name
	if not path.is_file():
		pytest.fail(f"{path} is missing; run `uv run nox -s tests`", pytrace=False)
	return tarfile.open(path, "r:gz")


def _json(tarball: str, member: str) -> dict[str, Any]:
	with _tar(tarball) as tar:
		handle = tar.extractfile(member)
		assert handle is not None
		data: dict[str, Any] = json.loads(handle.read())
		return data


def petstore() -> dict[str, Any]:
	return _json("readme-oas-examples-8.2.2.tgz", "package/3.0/json/petstore.json")


def _walk(value: Any) -> list[Any]:
	out = [value]
	if isinstance(value, dict):
		for item in value.values():
			out += _walk(item)
	elif isinstance(value, list):
		for item in value:
			out += _walk(item)
	return out


WRITE_SCOPE_TEXT = (
	"Operations that change something (a method other than GET, HEAD or OPTIONS) whose "
	"document names only read scopes, or no scope"
)


def test_petstore_tools_endpoints_schemas_and_credentials() -> None:
	"""The Petstore 3.0 document gives 20 tools, resolved schemas and both credentials."""
	integration = from_openapi(petstore(), id="petstore")
	tools = {t.handle: t for t in integration.tools}
	assert len(tools) == 20 and integration.name == "Swagger Petstore"
	assert integration.api_setup.base_url == "http://petstore.swagger.io/v2"
	get = tools["getPetById"]
	assert (get.method, get.endpoint) == ("GET", "/pet/{{ input.petId }}")
	assert get.input_schema["required"] == ["petId"]
	assert get.input_schema["properties"]["petId"]["type"] == "integer"
	add = tools["addPet"]
	pet = add.input_schema["properties"]["body"]
	assert pet["required"] == ["name", "photoUrls"]
	assert pet["properties"]["category"]["properties"]["name"] == {"type": "string"}
	assert add.body == "{{ input.body }}" and add.scopes == ["read:pets", "write:pets"]
	status = tools["findPetsByStatus"].input_schema["properties"]["status"]
	assert status["type"] == "array" and status["items"]["enum"] == ["available", "pending", "sold"]
	upload = tools["uploadFile"]
	assert upload.request_format == "openapi-multipart"
	assert upload.files == {"file": "{{ input.body.file }}"}
	assert upload.body == {"additionalMetadata": "{{ input.body.additionalMetadata }}"}
	assert tools["updatePetWithForm"].request_format == "openapi-form"
	types = {c.type: c for c in integration.credential_setup}
	assert types["custom"].headers == {"api_key": "{{ config.apiKey }}"}
	assert types["oauth2"].auth_url == "http://petstore.swagger.io/oauth/dialog"
	assert types["oauth2"].scopes == ["read:pets", "write:pets"]
	assert integration.scopes == {
		"write:pets": "modify pets in your account",
		"read:pets": "read your pets",
		"write": WRITE_SCOPE_TEXT,
	}
	# The store's and the users' changes name no OAuth scope: a grant of read:pets lacks them.
	assert tools["deleteUser"].scopes == tools["placeOrder"].scopes == ["write"]
	assert tools["getOrderById"].scopes == []
	assert not any(
		isinstance(v, dict) and "$ref" in v for v in _walk([t.input_schema for t in tools.values()])
	)


def test_the_whole_github_api_imports_within_the_providers_limits() -> None:
	"""All ~1200 GitHub operations: no $ref, oneOf, allOf or discriminator left; short text."""
	document = _json("octokit-openapi-23.0.2.tgz", "package/generated/api.github.com.json")
	with pytest.raises(ConfigurationError, match=r"allow_hosts=\['uploads.github.com'\]"):
		from_openapi(document, id="github")  # its release uploads go to another host
	integration = from_openapi(document, id="github", allow_hosts=["uploads.github.com"])
	assert len(integration.tools) > 1000
	handles = [t.handle for t in integration.tools]
	assert len(set(handles)) == len(handles) and "reposGet" in handles
	nodes = _walk([t.input_schema for t in integration.tools])
	banned = {"$ref", "oneOf", "allOf", "discriminator", "not", "xml", "example", "readOnly"}
	bad = [sorted(banned & set(n)) for n in nodes if isinstance(n, dict) and banned & set(n)]
	assert bad == []
	assert (
		max(len(n["anyOf"]) for n in nodes if isinstance(n, dict) and "anyOf" in n) <= MAX_VARIANTS
	)
	assert max(len(t.description) for t in integration.tools) <= MAX_DESCRIPTION_CHARS
	get = next(t for t in integration.tools if t.handle == "reposGet")
	assert get.endpoint == "/repos/{{ input.owner }}/{{ input.repo }}"
	assert integration.credential_setup == []  # the document declares no security scheme


def test_tags_and_operations_select_and_unknown_names_get_a_hint() -> None:
	"""--tag and --operation choose tools; a misspelled operationId suggests the right one."""
	document = petstore()
	assert {t.handle for t in from_openapi(document, tags=["store"]).tools} == {
		"getInventory",
		"placeOrder",
		"getOrderById",
		"deleteOrder",
	}
	assert [t.handle for t in from_openapi(document, operations=["getPetById"]).tools] == [
		"getPetById"
	]
	with pytest.raises(ConfigurationError, match=r"getPetByld.*did you mean 'getPetById'"):
		from_openapi(document, operations=["getPetByld"])
	with pytest.raises(ConfigurationError, match=r"tag\(s\) \['pets'\]"):
		from_openapi(document, tags=["pets"])


def _other_hosts(document: dict[str, Any], base: str) -> list[str]:
	"""The hosts of a document's per-path and per-operation servers, other than ``base``."""
	found = []
	for item in document["paths"].values():
		for place in [item, *(v for v in item.values() if isinstance(v, dict))]:
			for server in place.get("servers") or ():
				url = server["url"]
				for name, spec in (server.get("variables") or {}).items():
					url = url.replace(f"{{{name}}}", str(spec["default"]))
				if url.startswith("http") and httpx.URL(url).host != base:
					found.append(httpx.URL(url).host)
	return found


def test_every_readme_example_document_imports() -> None:
	"""Dozens of edge-case documents (styles, forms, uploads, circular refs, security) import."""
	imported = 0
	with _tar("readme-oas-examples-8.2.2.tgz") as tar:
		for member in tar.getmembers():
			name = member.name
			if not (
				name.startswith(("package/3.0/json/", "package/3.1/json/"))
				and name.endswith(".json")
			):
				continue
			handle = tar.extractfile(member)
			assert handle is not None
			document = json.loads(handle.read())
			if not document.get("paths"):
				continue
			hosts = _other_hosts(document, "api.example.com")
			try:
				integration = from_openapi(
					document, base_url="https://api.example.com", allow_hosts=hosts
				)
			except ConfigurationError as exc:
				assert "external reference" in str(exc), f"{name}: {exc}"
				continue
			assert integration.tools, name
			imported += 1
	assert imported >= 50


def test_security_schemes_map_to_credentials() -> None:
	"""Bearer, basic, API keys in header, query and cookie, and OAuth2 client credentials."""
	document = {
		"openapi": "3.1.0",
		"info": {"title": "Sec", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"security": [{"bearer": []}],
		"components": {
			"securitySchemes": {
				"bearer": {"type": "http", "scheme": "bearer"},
				"basic": {"type": "http", "scheme": "basic"},
				"headerKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
				"queryKey": {"type": "apiKey", "in": "query", "name": "key"},
				"cookieKey": {"type": "apiKey", "in": "cookie", "name": "sid"},
				"oauth": {
					"type": "oauth2",
					"flows": {
						"clientCredentials": {
							"tokenUrl": "https://auth.example.com/token",
							"scopes": {"things:read": "Read things."},
						}
					},
				},
			}
		},
		"paths": {
			"/things": {
				"get": {
					"operationId": "listThings",
					"security": [{"oauth": ["things:read"]}],
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
	}
	integration = from_openapi(document, id="sec")
	creds = integration.credential_setup
	assert [c.type for c in creds] == ["bearer", "basic", "custom", "oauth2"]
	assert creds[0].headers == {"Authorization": "Bearer {{ config.token }}"}
	assert (creds[1].username, creds[1].password) == (
		"{{ config.username }}",
		"{{ config.password }}",
	)
	assert creds[2].headers == {
		"X-Api-Key": "{{ config.headerKey }}",
		"Cookie": "sid={{ config.cookieKey }}",
	}
	assert creds[2].query_params == {"key": "{{ config.queryKey }}"}
	assert creds[3].token_url == "https://auth.example.com/token"
	assert integration.tools[0].scopes == ["things:read"]
	assert integration.scopes == {"things:read": "Read things."}


def test_documents_that_cannot_be_imported_say_why() -> None:
	"""Swagger 2.0, a relative server URL and external references are refused with the fix."""
	with pytest.raises(ConfigurationError, match=r"swagger 2\.0"):
		from_openapi({"swagger": "2.0", "paths": {}})
	relative = {**petstore(), "servers": [{"url": "/v2"}]}
	with pytest.raises(ConfigurationError, match="base_url"):
		from_openapi(relative)
	external = {
		"openapi": "3.0.0",
		"info": {"title": "X", "version": "1"},
		"servers": [{"url": "https://x.example"}],
		"paths": {
			"/a": {
				"get": {
					"operationId": "a",
					"parameters": [{"$ref": "other.yaml#/p"}],
					"responses": {},
				}
			}
		},
	}
	with pytest.raises(ConfigurationError, match=r"operation 'a'.*bundle"):
		from_openapi(external)


STYLES = {
	"openapi": "3.0.3",
	"info": {"title": "Styles", "version": "1"},
	"servers": [{"url": "https://api.example.com/v1"}],
	"paths": {
		"/items/{item-id}": {
			"parameters": [
				{"name": "item-id", "in": "path", "required": True, "schema": {"type": "string"}}
			],
			"post": {
				"operationId": "items/update-one",
				"parameters": [
					{
						"name": "ids",
						"in": "query",
						"explode": False,
						"schema": {"type": "array", "items": {"type": "integer"}},
					},
					{
						"name": "tag",
						"in": "query",
						"schema": {"type": "array", "items": {"type": "string"}},
					},
					{
						"name": "filter",
						"in": "query",
						"style": "deepObject",
						"schema": {"type": "object", "properties": {"color": {"type": "string"}}},
					},
					{"name": "limit", "in": "query", "schema": {"type": "integer"}},
					{"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
				],
				"requestBody": {
					"required": True,
					"content": {
						"application/json": {
							"schema": {
								"allOf": [
									{
										"type": "object",
										"properties": {
											"name": {"type": "string"},
											"id": {"type": "integer", "readOnly": True},
										},
										"required": ["name"],
									},
									{
										"type": "object",
										"properties": {
											"note": {"type": "string", "nullable": True}
										},
									},
								]
							}
						}
					},
				},
				"responses": {
					"200": {
						"description": "ok",
						"content": {"application/json": {"schema": {"type": "object"}}},
					}
				},
			},
		}
	},
}


@pytest.mark.anyio
async def test_parameter_styles_become_the_request_the_document_describes() -> None:
	"""Path escapes, form explode=false, repeated keys, deepObject, headers and an allOf body."""
	integration = from_openapi(STYLES, id="styles")
	(tool,) = integration.tools
	assert tool.handle == "itemsUpdateOne"
	body = tool.input_schema["properties"]["body"]
	assert body["required"] == ["name"] and "id" not in body["properties"]
	assert body["properties"]["note"]["type"] == ["string", "null"]
	sent: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(200, json={"ok": True})

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("styles", integration)
	model = ScriptedModel(
		[
			call_tool(
				"styles.itemsUpdateOne",
				item_id="a/b c",
				ids=[1, 2],
				tag=["x", "y"],
				filter={"color": "red"},
				limit=5,
				X_Trace="t-1",
				body={"name": "N", "note": None},
			),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="A", model=model, integrations=["styles"])
	await agent.run("go")
	(request,) = sent
	assert request.url.raw_path.decode().startswith("/v1/items/a%2Fb%20c?")
	assert request.url.params.get_list("ids") == ["1,2"]
	assert request.url.params.get_list("tag") == ["x", "y"]
	assert request.url.params["filter[color]"] == "red"
	assert request.url.params["limit"] == "5"
	assert request.headers["X-Trace"] == "t-1"
	assert json.loads(request.content) == {"name": "N", "note": None}
	await om.aclose()


def test_the_module_and_json_outputs_rebuild_the_same_integration(tmp_path: Path) -> None:
	"""to_module is Python defining INTEGRATION; to_json is what register_integration reads."""
	integration = from_openapi(petstore(), id="petstore")
	namespace: dict[str, Any] = {}
	exec(
		compile(to_module(integration, source="petstore.json"), "petstore_module.py", "exec"),
		namespace,
	)
	assert namespace["INTEGRATION"] == integration
	assert callable(namespace["register_integrations"])
	rebuilt = Integration.model_validate(json.loads(to_json(integration)))
	assert rebuilt == integration
	assert "\t" in to_module(integration) and "    HttpTool" not in to_module(integration)


def test_integration_from_openapi_is_the_same_importer() -> None:
	"""Integration.from_openapi passes its options through."""
	assert Integration.from_openapi(petstore(), id="p", tags=["user"]) == from_openapi(
		petstore(), id="p", tags=["user"]
	)


def test_from_openapi_on_a_subclass_makes_the_subclass() -> None:
	"""The importer builds the class it is called on; the public function an `Integration`."""

	class Mine(Integration):
		pass

	made = Mine.from_openapi(petstore(), id="p", tags=["user"])
	assert type(made) is Mine
	assert type(from_openapi(petstore(), id="p", tags=["user"])) is Integration
	assert made.tools == from_openapi(petstore(), id="p", tags=["user"]).tools


def test_the_import_openapi_command_writes_a_module(
	tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
	"""openmolt import-openapi SPEC --id --tag -o FILE writes an importable module."""
	spec = tmp_path / "petstore.json"
	spec.write_text(json.dumps(petstore()), encoding="utf-8")
	out = tmp_path / "petstore_tools.py"
	code = main(
		["import-openapi", str(spec), "--id", "petstore", "--tag", "pet", "--output", str(out)]
	)
	assert code == 0
	assert "wrote 8 tools of 'Swagger Petstore'" in capsys.readouterr().err
	namespace: dict[str, Any] = {}
	exec(out.read_text(encoding="utf-8"), namespace)
	assert len(namespace["INTEGRATION"].tools) == 8
	assert (
		main(
			[
				"import-openapi",
				str(spec),
				"--id",
				"petstore",
				"--operation",
				"getPetById",
				"--format",
				"json",
			]
		)
		== 0
	)
	printed = json.loads(capsys.readouterr().out)
	assert [t["handle"] for t in printed["tools"]] == ["getPetById"]
	assert main(["import-openapi", str(spec), "--id", "x", "--operation", "nope"]) == 2
	assert "no operation 'nope'" in capsys.readouterr().err


def test_names_follow_input_name_and_descriptions_do_not_repeat_the_summary() -> None:
	"""Twilio's StartTime< and StartTime> are StartTimeBefore/After, sent under their own names."""
	document = {
		"openapi": "3.0.0",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/calls": {
				"get": {
					"operationId": "ListCall",
					"summary": "Retrieve a list of calls.",
					"description": "Retrieve a list of calls made to and from your account.",
					"parameters": [
						{"name": "StartTime<", "in": "query", "schema": {"type": "string"}},
						{"name": "StartTime>", "in": "query", "schema": {"type": "string"}},
						{"name": "page-size", "in": "query", "schema": {"type": "integer"}},
					],
					"responses": {"200": {"description": "ok"}},
				},
				"post": {
					"operationId": "CreateCall",
					"summary": "Create a call",
					"description": "Calls are billed per minute.",
					"responses": {"200": {"description": "ok"}},
				},
			}
		},
	}
	listing, create = from_openapi(document, id="t").tools
	assert listing.description == "Retrieve a list of calls made to and from your account."
	assert create.description == "Create a call. Calls are billed per minute."
	assert list(listing.input_schema["properties"]) == [
		"StartTimeBefore",
		"StartTimeAfter",
		"page_size",
	]
	assert listing.query_params == {
		"StartTime<": "{{ input.StartTimeBefore }}",
		"StartTime>": "{{ input.StartTimeAfter }}",
		"page-size": "{{ input.page_size }}",
	}


def test_every_comparison_suffix_has_its_own_name_and_the_plain_one_keeps_its_own() -> None:
	"""EndTime>= and EndTime<= do not become EndTime and EndTime_, pushing EndTime to EndTime__."""
	names = ["EndTime>=", "EndTime<=", "EndTime", "EndTime>", "EndTime<", "Status!=", "Status"]
	document = {
		"openapi": "3.0.0",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/calls": {
				"get": {
					"operationId": "ListCall",
					"parameters": [
						{"name": n, "in": "query", "schema": {"type": "string"}} for n in names
					],
					"responses": {"200": {"description": "ok"}},
				}
			}
		},
	}
	(listing,) = from_openapi(document, id="t").tools
	assert listing.query_params == {
		"EndTime>=": "{{ input.EndTimeOnOrAfter }}",
		"EndTime<=": "{{ input.EndTimeOnOrBefore }}",
		"EndTime": "{{ input.EndTime }}",
		"EndTime>": "{{ input.EndTimeAfter }}",
		"EndTime<": "{{ input.EndTimeBefore }}",
		"Status!=": "{{ input.StatusNot }}",
		"Status": "{{ input.Status }}",
	}


def _clashing() -> dict[str, Any]:
	ok = {"200": {"description": "ok"}}
	return {
		"openapi": "3.0.3",
		"info": {"title": "T", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/a": {"get": {"operationId": "get-a", "tags": ["one"], "responses": ok}},
			"/b": {"get": {"operationId": "getA", "tags": ["two"], "responses": ok}},
			"/c": {"get": {"operationId": "c" * 10_000, "responses": ok}},
		},
	}


def test_a_tool_s_handle_does_not_depend_on_which_operations_are_imported() -> None:
	"""Two operationIds that make one handle are told apart in document order whatever is
	selected: 'getA_' named in the full import selects that operation (it was 'no operation'),
	and importing tag 'two' alone keeps 'getA_' (it became 'getA', so rules and labels written
	for the full import named another tool)."""
	full = [t.handle for t in from_openapi(_clashing(), id="t").tools]
	assert full[:2] == ["getA", "getA_"]
	picked = from_openapi(_clashing(), id="t", operations=["getA_"]).tools
	assert [(t.handle, t.endpoint) for t in picked] == [("getA_", "/b")]
	assert [t.handle for t in from_openapi(_clashing(), id="t", tags=["two"]).tools] == ["getA_"]


def test_a_handle_is_at_most_64_characters() -> None:
	"""A 10,000-character operationId made a 10,000-character tool name."""
	handles = [t.handle for t in from_openapi(_clashing(), id="t").tools]
	assert max(len(h) for h in handles) == 64 and handles[2] == "c" * 64


def test_many_operations_making_one_handle_get_short_distinct_handles_quickly(
	monkeypatch: pytest.MonkeyPatch,
) -> None:
	"""3,000 operations named 'getA' took 1.9 s and made handles of up to 3,000 characters (one
	underscore more each, the whole list read again each time; 16,000 took 4 minutes). Counted
	in suffixes tried, not timed."""
	from openmolt_core.integrations import _openapi_build

	tried = 0
	suffixed = _openapi_build._suffixed

	def counted(base: str, extra: int) -> str:
		nonlocal tried
		tried += 1
		return suffixed(base, extra)

	monkeypatch.setattr(_openapi_build, "_suffixed", counted)
	monkeypatch.setattr(_openapi_build, "MAX_OPERATIONS", 3_000)  # past the import's bound
	ok = {"200": {"description": "ok"}}
	document = _clashing()
	document["paths"] = {
		f"/a{i}": {"get": {"operationId": "getA", "responses": ok}} for i in range(3_000)
	}
	handles = [t.handle for t in from_openapi(document, id="t").tools]
	assert tried <= 3 * 3_000  # one suffix or so per operation (quadratic: about 4.5 million)
	assert handles[:5] == ["getA", "getA_", "getA__", "getA___", "getA_4"]
	assert len(set(handles)) == 3_000 and max(len(h) for h in handles) <= 64
