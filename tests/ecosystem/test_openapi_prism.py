"""Imported tools send their requests to a Prism mock server that validates each one.

Prism (``@stoplight/prism-cli``, installed by the nox tests session) serves the same OpenAPI
document on 127.0.0.1 with ``--errors``: a request that breaks the document (a missing or wrong
parameter, a body off its schema, missing credentials) is answered with a problem report instead
of a mock response. Every call of every selected operation must get no such report.
"""

from __future__ import annotations

import json
import re
import socket
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _ecosystem import ROOT, node_bin

from openmolt import OpenMolt
from openmolt_core.integrations.openapi import from_openapi
from openmolt_core.retry import RetryPolicy
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

REFS = ROOT / ".cache" / "refs"
PRISM_ERRORS = re.compile(r"stoplight\.io/prism/errors#(\w+)")

GITHUB_OPERATIONS = [
	"repos/get",
	"repos/list-for-org",
	"repos/create-for-authenticated-user",
	"repos/update",
	"repos/delete",
	"repos/list-commits",
	"repos/create-or-update-file-contents",
	"issues/list-for-repo",
	"issues/create",
	"issues/update",
	"issues/add-labels",
	"issues/create-comment",
	"pulls/create",
	"pulls/list",
	"search/repos",
	"search/issues-and-pull-requests",
	"git/create-tree",
	"git/create-ref",
	"gists/create",
	"reactions/create-for-issue",
	"users/get-by-username",
	"orgs/list-members",
	"actions/list-workflow-runs-for-repo",
	"actions/create-workflow-dispatch",
	"checks/create",
	"markdown/render",
]


def _member(tarball: str, member: str) -> bytes:
	path = REFS / tarball
	if not path.is_file():
		pytest.fail(f"{path} is missing; run `uv run nox -s tests`", pytrace=False)
	with tarfile.open(path, "r:gz") as tar:
		handle = tar.extractfile(member)
		assert handle is not None
		return handle.read()


def petstore() -> dict[str, Any]:
	data: dict[str, Any] = json.loads(
		_member("readme-oas-examples-8.2.2.tgz", "package/3.0/json/petstore.json")
	)
	return data


def github() -> dict[str, Any]:
	data: dict[str, Any] = json.loads(
		_member("octokit-openapi-23.0.2.tgz", "package/generated/api.github.com.json")
	)
	return data


def _refs(value: Any) -> set[str]:
	if isinstance(value, dict):
		out = {value["$ref"]} if isinstance(value.get("$ref"), str) else set()
		for item in value.values():
			out |= _refs(item)
		return out
	if isinstance(value, list):
		return set().union(*(_refs(v) for v in value)) if value else set()
	return set()


def reduced(document: dict[str, Any], operation_ids: list[str]) -> dict[str, Any]:
	"""The document with only these operations and the components they reach (Prism starts fast)."""
	paths: dict[str, Any] = {}
	for path, item in document["paths"].items():
		kept = {
			k: v
			for k, v in item.items()
			if not isinstance(v, dict) or v.get("operationId") in operation_ids or k == "parameters"
		}
		if any(isinstance(v, dict) and "operationId" in v for v in kept.values()):
			paths[path] = kept
	out = {k: v for k, v in document.items() if k in ("openapi", "info", "servers", "security")}
	out["paths"] = paths
	components: dict[str, dict[str, Any]] = {}
	todo = list(_refs(paths))
	seen: set[str] = set()
	while todo:
		ref = todo.pop()
		if ref in seen:
			continue
		seen.add(ref)
		_, _, section, name = ref.split("/", 3)
		value = document["components"][section][name]
		components.setdefault(section, {})[name] = value
		todo += list(_refs(value))
	out["components"] = {
		**components,
		"securitySchemes": document["components"].get("securitySchemes", {}),
	}
	return out


# valid inputs from a schema ---------------------------------------------------------------

_FORMATS = {
	"date-time": "2024-05-01T12:00:00Z",
	"date": "2024-05-01",
	"email": "octo@example.com",
	"uri": "https://example.com/x",
	"url": "https://example.com/x",
	"uuid": "123e4567-e89b-12d3-a456-426614174000",
	"int64": 1,
}


def example(schema: dict[str, Any], name: str = "") -> Any:
	"""A small value valid against an imported input schema (required fields only)."""
	if "const" in schema:
		return schema["const"]
	if schema.get("enum"):
		return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
	if "default" in schema and schema["default"] is not None:
		return schema["default"]
	if "anyOf" in schema:
		# A string branch first: in a URL path "1" matches both branches of GitHub's
		# workflow_id oneOf [integer, string], which Prism rightly refuses as ambiguous.
		choices = [c for c in schema["anyOf"] if c.get("type") != "null"]
		choices.sort(key=lambda c: c.get("type") != "string")
		return example(choices[0], name)
	kind = schema.get("type")
	if isinstance(kind, list):
		kind = next(k for k in kind if k != "null")
	if kind == "object" or "properties" in schema:
		props = schema.get("properties", {})
		return {k: example(props[k], k) for k in schema.get("required", []) if k in props}
	if kind == "array":
		return [example(schema.get("items") or {"type": "string"}, name)] * max(
			schema.get("minItems", 1), 1
		)
	if kind == "integer":
		return max(int(schema.get("minimum", 1)), 1)
	if kind == "number":
		return max(float(schema.get("minimum", 1)), 1.0)
	if kind == "boolean":
		return True
	if "file reference" in schema.get("description", ""):
		return "data:text/plain;base64,aGVsbG8="
	text = _FORMATS.get(schema.get("format", ""), "octocat" if "sha" not in name else "a" * 40)
	pattern = schema.get("pattern")
	if pattern and not re.search(pattern, text):
		for candidate in ("a", "1", "a1", "main", "refs/heads/main", "A" * 40, "a" * 40):
			if re.search(pattern, candidate):
				return candidate
	return text[: schema.get("maxLength", len(text))]


# the Prism server -------------------------------------------------------------------------


@pytest.fixture
async def prism(tmp_path: Path) -> AsyncIterator[Any]:
	"""Start Prism for a document: ``url = await prism(document)``; stopped at the end."""
	processes: list[Any] = []

	async def start(document: dict[str, Any]) -> str:
		spec = tmp_path / f"spec{len(processes)}.json"
		spec.write_text(json.dumps(document), encoding="utf-8")
		with socket.socket() as sock:
			sock.bind(("127.0.0.1", 0))
			port = sock.getsockname()[1]
		process = await anyio.open_process(
			[node_bin("prism"), "mock", str(spec), "-h", "127.0.0.1", "-p", str(port), "--errors"],
		)
		processes.append(process)
		assert process.stdout is not None
		seen = b""
		with anyio.fail_after(120):
			async for chunk in process.stdout:
				seen += chunk
				if b"Prism is listening" in seen:
					break
			else:
				pytest.fail(f"Prism did not start: {seen.decode()[-2000:]}")

		async def drain() -> None:
			assert process.stdout is not None
			async for _ in process.stdout:
				pass

		tg.start_soon(drain)
		return f"http://127.0.0.1:{port}"

	async with anyio.create_task_group() as tg:
		yield start
		for process in processes:
			try:
				process.terminate()
			except ProcessLookupError:  # it died (Prism throws on some malformed requests)
				pass
			with anyio.move_on_after(10):
				await process.wait()
			if process.returncode is None:
				process.kill()
				await process.wait()
		tg.cancel_scope.cancel()


async def _drive(
	url: str,
	integration: Any,
	config: dict[str, Any],
	credential: str | None = None,
	cookies: list[str] | None = None,
) -> list[dict[str, Any]]:
	"""Call every tool once through an agent; return what Prism answered to each request.

	``cookies``, when given, gets the Cookie header of each request sent.
	"""
	seen: list[dict[str, Any]] = []

	async def sending(request: httpx.Request) -> None:
		if cookies is not None:
			cookies.append(request.headers.get("cookie", ""))

	async def record(response: httpx.Response) -> None:
		await response.aread()
		found = json.loads(response.headers.get("sl-violations") or "[]")
		problems = PRISM_ERRORS.findall(response.text) if response.status_code >= 400 else []
		if problems:
			found += json.loads(response.text).get("validation") or []
		seen.append(
			{
				"request": f"{response.request.method} {response.request.url}",
				"status": response.status_code,
				"problems": problems,
				# Prism also checks its own mock responses; only the request's findings count.
				"violations": [v for v in found if v.get("location", [""])[0] == "request"],
				"body": response.text[:600] if problems else "",
			}
		)

	http = httpx.AsyncClient(event_hooks={"request": [sending], "response": [record]})
	# A 5xx answer is retried as ever (below), without the backoff's waits: 3.5 s for each
	# operation whose mock answer Prism fails, which are not what this checks.
	no_waits = RetryPolicy(backoff=0)
	om = OpenMolt(
		entry_points=False, http_client=http, integrations={"api": config}, retry=no_waits
	)
	om.register_integration("api", integration)
	calls = [call_tool(f"api.{t.handle}", **example(t.input_schema)) for t in integration.tools]
	model = ScriptedModel([*calls, finish(result="done")])
	binding: dict[str, Any] = {"integration": "api"}
	if credential:
		binding["credential"] = {"type": credential}
	agent = om.create_agent(
		name="Prober", model=model, integrations=[binding], max_steps=len(calls) + 2
	)
	await agent.run("call everything")
	errors = [
		r
		for m in model.requests[1:]
		for r in json.loads(m.messages[-1].content)["results"]
		if not r["ok"] and "status" not in r.get("details", {}) and "answered 5" not in r["error"]
	]
	assert not errors, errors
	await http.aclose()
	await om.aclose()
	# A 5xx mock answer (Prism failing its own response example) is retried for idempotent
	# methods, so some requests are sent more than once.
	assert len({s["request"] for s in seen}) >= len(calls) - 1 and len(seen) >= len(calls)
	return seen


_REQUEST_PROBLEMS = {
	"UNPROCESSABLE_ENTITY",
	"UNAUTHORIZED",
	"NO_PATH_MATCHED_ERROR",
	"NO_METHOD_MATCHED_ERROR",
	"INVALID_CONTENT_TYPE",
	"NOT_ACCEPTABLE",
}


def _violations(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
	return [s for s in seen if set(s["problems"]) & _REQUEST_PROBLEMS or s["violations"]]


async def test_every_petstore_operation_passes_prisms_request_validation(prism: Any) -> None:
	"""All 20 operations of the Petstore 3.0 document, with an API key: no violation."""
	document = petstore()
	url = await prism(document)
	integration = from_openapi(
		document, id="petstore", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	assert len(integration.tools) == 20
	# Operations that need OAuth2 (their tools carry its scopes) get a token, the others the key
	# (an unscoped operation that changes something carries the tool scope `write`, no OAuth one).
	flows = document["components"]["securitySchemes"]["petstore_auth"]["flows"]
	granted = {scope for flow in flows.values() for scope in flow["scopes"]}
	oauth = integration.model_copy(
		update={"tools": [t for t in integration.tools if granted & set(t.scopes)]}
	)
	keyed = integration.model_copy(
		update={"tools": [t for t in integration.tools if not granted & set(t.scopes)]}
	)
	assert len(oauth.tools) == 7 and len(keyed.tools) == 13
	seen = await _drive(url, keyed, {"apiKey": "special-key"}, "custom")
	seen += await _drive(url, oauth, {"accessToken": "token-for-prism"}, "oauth2")
	assert len(seen) == 20
	assert _violations(seen) == [], seen
	assert all(s["status"] < 500 for s in seen), seen


async def test_prism_does_report_a_wrong_request_so_the_check_can_fail(prism: Any) -> None:
	"""Negative control: dropping the required body of addPet is a violation Prism reports."""
	document = petstore()
	url = await prism(document)
	integration = from_openapi(
		document,
		id="petstore",
		operations=["addPet"],
		base_url=url,
		allow_internal_hosts=["127.0.0.1"],
	)
	broken = integration.tools[0].model_copy(update={"body": {"name": 5}})
	integration = integration.model_copy(update={"tools": [broken]})
	seen = await _drive(url, integration, {"apiKey": "special-key"}, "custom")
	assert _violations(seen), seen


async def test_missing_credentials_are_a_violation_prism_reports(prism: Any) -> None:
	"""Negative control: without the API key Prism answers 401 UNAUTHORIZED for getPetById."""
	document = petstore()
	url = await prism(document)
	integration = from_openapi(
		document,
		id="petstore",
		operations=["getPetById"],
		base_url=url,
		allow_internal_hosts=["127.0.0.1"],
	)
	integration = integration.model_copy(update={"credential_setup": []})
	seen = await _drive(url, integration, {})
	assert seen[0]["status"] == 401 and _violations(seen), seen


async def test_github_operations_pass_prisms_request_validation(prism: Any) -> None:
	"""26 varied GitHub REST operations (bodies, oneOf, arrays, PUT/PATCH/DELETE): no violation."""
	document = reduced(github(), GITHUB_OPERATIONS)
	url = await prism(document)
	integration = from_openapi(
		document, id="github", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	assert len(integration.tools) == len(GITHUB_OPERATIONS)
	seen = await _drive(url, integration, {"token": "ghp_example"})
	assert _violations(seen) == [], json.dumps(_violations(seen), indent=1)[:4000]


def _named(name: str, where: str, kind: str = "string") -> dict[str, Any]:
	return {"name": name, "in": where, "required": True, "schema": {"type": kind}}


def odd_names() -> dict[str, Any]:
	"""Parameters and form fields no property may be named: each required, so a name the request
	does not send as the document spells it is a violation Prism reports."""
	form = {
		"type": "object",
		"additionalProperties": False,  # a field sent under another name is reported too
		"required": ["StartTime>", "filter[name]", "filter_name", "Status-Callback"],
		"properties": {
			"StartTime>": {"type": "string"},
			"filter[name]": {"type": "string"},
			"filter_name": {"type": "string"},
			"Status-Callback": {"type": "string"},
		},
	}
	ok = {"200": {"description": "ok", "content": {"application/json": {"example": {}}}}}
	# Prism 5.16 looks a query parameter up by its name passed through encodeURI, in the decoded
	# query: it cannot find one whose name holds <, >, [, ] or a space however it is sent, so
	# those are checked in the form body here and in the query by test_openapi_names.
	query = ["page-size", "page_size", "filter.name", "id", "body", "@type", "1st", "$top"]
	return {
		"openapi": "3.0.3",
		"info": {"title": "Odd names", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/calls/{Call-Sid}": {
				"post": {
					"operationId": "UpdateCall",
					"parameters": [
						_named("Call-Sid", "path"),
						*(_named(n, "query") for n in query),
						_named("id", "header"),
						_named("X-Request-ID", "header"),
					],
					"requestBody": {
						"required": True,
						"content": {"application/x-www-form-urlencoded": {"schema": form}},
					},
					"responses": ok,
				},
				"put": {
					"operationId": "ReplaceCall",
					"parameters": [_named("Call-Sid", "path"), _named("dry.run", "query")],
					"requestBody": {
						"required": True,
						"content": {"application/json": {"schema": form}},
					},
					"responses": ok,
				},
			}
		},
	}


async def test_renamed_parameters_and_fields_reach_prism_under_the_documents_names(
	prism: Any,
) -> None:
	"""page-size beside page_size, @type, X-Request-ID, a form's StartTime> and filter[name]..."""
	document = odd_names()
	url = await prism(document)
	integration = from_openapi(document, id="odd", base_url=url, allow_internal_hosts=["127.0.0.1"])
	update = next(t for t in integration.tools if t.handle == "updateCall")
	props = update.input_schema["properties"]
	assert {"page_size_2", "filter_name", "type", "id_header", "requestBody"} <= set(props)
	fields = props["requestBody"]["properties"]
	assert list(fields) == ["StartTimeAfter", "filter_name_2", "filter_name", "Status_Callback"]
	assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", p) for p in props)
	seen = await _drive(url, integration, {})
	assert len(seen) == 2
	assert _violations(seen) == [], json.dumps(seen, indent=1)[:4000]
	assert all(s["status"] == 200 for s in seen), seen


async def test_prism_reports_a_field_sent_under_its_input_name(prism: Any) -> None:
	"""Negative control: the form field sent as filter_name_2 (the input's name) is a violation."""
	document = odd_names()
	url = await prism(document)
	integration = from_openapi(
		document,
		id="odd",
		operations=["UpdateCall"],
		base_url=url,
		allow_internal_hosts=["127.0.0.1"],
	)
	(tool,) = integration.tools
	wrong = {("filter_name_2" if k == "filter[name]" else k): v for k, v in dict(tool.body).items()}
	integration = integration.model_copy(
		update={"tools": [tool.model_copy(update={"body": wrong})]}
	)
	seen = await _drive(url, integration, {})
	assert _violations(seen), seen


def styles() -> dict[str, Any]:
	"""Arrays in a header and in the query, label and matrix path parameters (integers, so Prism
	checks each item; two items, so a wrong delimiter shows)."""
	ints = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
	ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}}

	def param(name: str, where: str, schema: dict[str, Any], **style: Any) -> dict[str, Any]:
		return {"name": name, "in": where, "required": True, "schema": schema, **style}

	return {
		"openapi": "3.0.3",
		"info": {"title": "Styles", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/label/{id}": {
				"get": {
					"operationId": "labelled",
					"parameters": [
						param("id", "path", {"type": "integer"}, style="label"),
						param("X-Ids", "header", ints),
						param("ids", "query", ints, explode=False),
					],
					"responses": ok,
				}
			},
			"/matrix/{ids}": {
				"get": {
					"operationId": "matrixed",
					"parameters": [param("ids", "path", ints, style="matrix", explode=True)],
					"responses": ok,
				}
			},
		},
	}


async def test_parameter_styles_reach_prism_as_the_document_describes_them(prism: Any) -> None:
	"""A label and a matrix path parameter, a header and an unexploded query array: no violation
	(the header was sent as '[1, 1]', which Prism refuses; label and matrix values without their
	'.' and ';' made Prism's own deserialiser throw)."""
	document = styles()
	url = await prism(document)
	integration = from_openapi(
		document, id="styles", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	seen = await _drive(url, integration, {})
	assert len(seen) == 2
	assert _violations(seen) == [], json.dumps(seen, indent=1)[:4000]
	assert all(s["status"] == 200 for s in seen), seen


async def test_prism_reports_an_array_header_sent_as_json_text(prism: Any) -> None:
	"""Negative control: the header sent as JSON text ('[1,1]') is a violation."""
	document = styles()
	url = await prism(document)
	integration = from_openapi(
		document,
		id="styles",
		operations=["labelled"],
		base_url=url,
		allow_internal_hosts=["127.0.0.1"],
	)
	(tool,) = integration.tools
	plain = tool.model_copy(update={"headers": {"X-Ids": "{{ input.X_Ids | json }}"}})
	seen = await _drive(url, integration.model_copy(update={"tools": [plain]}), {})
	assert _violations(seen), seen


def form_bodies() -> dict[str, Any]:
	"""A form body with the encodings Prism 5.16 deserialises: deepObject, an exploded form
	object, a pipe-delimited array (integers, so Prism checks each item), and a plain field.

	Prism cannot check the rest, so tests/core/integrations/test_form_encoding.py compares those
	bytes with the specification's examples instead. Tried against Prism 5.16.0: it reads a
	repeated key as its last value, so ``tags=x&tags=y`` fails "must be array" with or without
	an encoding (stoplightio/prism#2473, open); it does not parse a JSON-valued form field or a
	JSON multipart part, so both fail "must be object" (stoplightio/prism#1622, open); and it
	refuses the literal comma of ``style: form, explode: false`` ("Reserved characters used in
	request body"), which the specification's style table writes bare.
	"""
	ints = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
	point = {
		"type": "object",
		"additionalProperties": False,
		"required": ["x"],
		"properties": {"x": {"type": "integer"}},
	}
	schema = {
		"type": "object",
		"additionalProperties": False,
		"required": ["name", "meta", "ids", "at"],
		"properties": {"name": {"type": "string"}, "meta": point, "ids": ints, "at": point},
	}
	encoding = {
		"meta": {"style": "deepObject", "explode": True},
		"ids": {"style": "pipeDelimited", "explode": False},
		"at": {"style": "form", "explode": True},
	}
	ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}}
	return {
		"openapi": "3.0.3",
		"info": {"title": "Forms", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"paths": {
			"/forms": {
				"post": {
					"operationId": "sendForm",
					"requestBody": {
						"required": True,
						"content": {
							"application/x-www-form-urlencoded": {
								"schema": schema,
								"encoding": encoding,
							}
						},
					},
					"responses": ok,
				}
			}
		},
	}


async def test_form_body_encodings_reach_prism_as_the_document_describes_them(prism: Any) -> None:
	"""meta[x]=1, ids=1|1 and the form object's own key: no violation (meta was sent as
	meta[x], but ids as ids[0]=1&ids[1]=1, which Prism reports as a missing field)."""
	document = form_bodies()
	url = await prism(document)
	integration = from_openapi(
		document, id="forms", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	(tool,) = integration.tools
	assert tool.request_format == "openapi-form"
	seen = await _drive(url, integration, {})
	assert len(seen) == 1
	assert _violations(seen) == [], json.dumps(seen, indent=1)[:4000]
	assert seen[0]["status"] == 200, seen


async def test_prism_reports_a_deep_object_field_sent_as_json_text(prism: Any) -> None:
	"""Negative control: without its encoding, meta is JSON text, which the document does not
	describe and Prism reports."""
	document = form_bodies()
	url = await prism(document)
	integration = from_openapi(
		document, id="forms", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	(tool,) = integration.tools
	plain = tool.model_copy(
		update={"encoding": {k: v for k, v in tool.encoding.items() if k != "meta"}}
	)
	seen = await _drive(url, integration.model_copy(update={"tools": [plain]}), {})
	assert _violations(seen), seen


def cookies_document() -> dict[str, Any]:
	"""An operation with cookie parameters (required and optional, an array, an object) whose
	API key is a cookie too, and a header parameter beside them."""
	ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}}
	ints = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
	return {
		"openapi": "3.0.3",
		"info": {"title": "Cookies", "version": "1"},
		"servers": [{"url": "https://api.example.com"}],
		"security": [{"session": []}],
		"components": {
			"securitySchemes": {"session": {"type": "apiKey", "in": "cookie", "name": "sid"}}
		},
		"paths": {
			"/prefs": {
				"get": {
					"operationId": "getPrefs",
					"parameters": [
						{
							"name": "csrf",
							"in": "cookie",
							"required": True,
							"schema": {"type": "string"},
						},
						{
							"name": "ids",
							"in": "cookie",
							"required": True,
							"explode": False,
							"schema": ints,
						},
						{"name": "theme", "in": "cookie", "schema": {"type": "string"}},
						{
							"name": "X-Trace",
							"in": "header",
							"required": True,
							"schema": {"type": "string"},
						},
					],
					"responses": ok,
				}
			}
		},
	}


async def test_cookie_parameters_and_a_cookie_api_key_reach_prism_together(prism: Any) -> None:
	"""The tool's cookies (csrf, ids=1,1) and the credential's key cookie in one header: Prism
	finds the key among them (it answers 401 when the key cookie is missing) and reports no
	violation. Prism 5.16 validates no cookie parameter itself; test_openapi_cookies.py reads
	the exact header a local server received."""
	document = cookies_document()
	url = await prism(document)
	integration = from_openapi(
		document, id="cookies", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	(tool,) = integration.tools
	assert set(tool.cookies) == {"csrf", "ids", "theme"}
	sent: list[str] = []
	seen = await _drive(url, integration, {"apiKey": "special-key"}, "custom", sent)
	assert _violations(seen) == [], json.dumps(seen, indent=1)[:4000]
	assert [s["status"] for s in seen] == [200], seen
	assert sent == ["sid=special-key; csrf=octocat; ids=1,1"]


async def test_prism_answers_401_when_the_key_cookie_is_missing(prism: Any) -> None:
	"""Negative control: the tool's cookies without the credential's: 401 UNAUTHORIZED."""
	document = cookies_document()
	url = await prism(document)
	integration = from_openapi(
		document, id="cookies", base_url=url, allow_internal_hosts=["127.0.0.1"]
	)
	integration = integration.model_copy(update={"credential_setup": []})
	seen = await _drive(url, integration, {})
	assert seen[0]["status"] == 401 and _violations(seen), seen
