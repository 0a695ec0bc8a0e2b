"""Airtable record tools against Airtable's official JavaScript client, ``airtable`` (npm 0.12.2).

Airtable publishes no OpenAPI document; airtable.js is its own client. The test reads the
client's source (nothing runs): every ``runAction(method, path, queryParams, body)`` it makes for
records (``table.js``, ``record.js``, ``query.js``), the URL base it builds (``base.js``:
``<endpointUrl>/v<major>/<baseId><path>``, with ``apiVersion`` 0.1.0), the list parameters it
validates (``query_params.js``'s ``paramValidators``, with the ``cellFormat`` and sort
``direction`` literals), the ``records`` query of a bulk delete and the ``records`` body of bulk
create and update. The six record tools are checked against those; the client takes other body
options (``typecast``, ``performUpsert``, ``returnFieldsByFieldId``) as an opaque object, so those
names stay pinned to the documentation (test_commerce_documented.py), as do the metadata,
comment and attachment-upload tools, which airtable.js does not call.
"""

from __future__ import annotations

import re

import pytest

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import input_name
from openmolt_integrations import airtable

# Each record tool and the airtable.js call it is: (method, path after /v0/{baseId}).
RECORD_CALLS = {
	"listRecords": ("post", "/{table}/listRecords"),
	"getRecord": ("get", "/{table}/{id}"),
	"createRecords": ("post", "/{table}/"),
	"updateRecords": ("patch", "/{table}/"),
	"upsertRecords": ("patch", "/{table}/"),
	"deleteRecords": ("delete", "/{table}"),
}


@pytest.fixture(scope="module")
def calls(airtable_js: dict[str, str]) -> set[tuple[str, str]]:
	"""(method, path shape) of every runAction the record classes make."""
	found: set[tuple[str, str]] = set()
	call = re.compile(r"runAction\((method|'\w+'), (path|\"/\" \+ [^,]+), ")
	for name in ("table.js", "record.js", "query.js"):
		src = airtable_js[name]
		for method, path in call.findall(src):
			shape = (
				path.replace('"/" + this._table._urlEncodedNameOrId()', "/{table}")
				.replace('"/" + this._urlEncodedNameOrId()', "/{table}")
				.replace(' + "/" + this.id', "/{id}")
				.replace(' + "/"', "/")
			)
			methods = [method.strip("'")]
			if method == "method":  # update: put or patch; list: get or post
				methods = re.findall(r"method = (?:\w+ \? )?'(\w+)'(?: : '(\w+)')?", src)
				methods = [m for pair in methods for m in pair if m]
			if path == "path":
				shapes = {
					p.replace('"/" + this._table._urlEncodedNameOrId()', "/{table}")
					.replace('"/" + this._urlEncodedNameOrId()', "/{table}")
					.replace(' + "/listRecords"', "/listRecords")
					.replace(' + "/"', "/")
					for p in re.findall(r"path = ([^;]+);", src)
				}
			else:
				shapes = {shape}
			found |= {(m, s) for m in methods for s in shapes}
	assert len(found) >= 6, found
	return found


@pytest.fixture(scope="module")
def list_params(airtable_js: dict[str, str]) -> dict[str, set[str] | None]:
	"""The list parameters airtable.js validates, with their allowed strings when it lists them."""
	src = airtable_js["query_params.js"]
	start = src.index("exports.paramValidators = {")
	body = src[start : src.index("\n};", start)] + "\n"
	out: dict[str, set[str] | None] = {}
	for name, rule in re.findall(r"^    (\w+): (.*?)(?=^    \w+: |\Z)", body, re.S | re.M):
		literals = re.findall(r"\[('[^\]]+')\]\.includes", rule)
		out[name] = set(re.findall(r"'(\w+)'", literals[0])) if literals else None
	assert {"fields", "sort", "cellFormat", "returnFieldsByFieldId"} <= set(out)
	return out


def _tool(handle: str) -> HttpTool:
	tool = next(t for t in airtable.INTEGRATION.tools if t.handle == handle)
	assert isinstance(tool, HttpTool)
	return tool


def _ours(tool: HttpTool) -> tuple[str, str]:
	path = tool.endpoint.removeprefix("/v0/{{ input.baseId }}")
	path = path.replace("{{ input.tableIdOrName }}", "{table}")
	path = path.replace("{{ input.recordId }}", "{id}")
	return tool.method.lower(), path


def test_the_client_targets_v0_under_the_base(airtable_js: dict[str, str]) -> None:
	"""airtable.js builds <endpointUrl>/v<major>/<baseId><path> with API version 0.x."""
	assert '"/v" + this._airtable._apiVersionMajor + "/" + this._id' in airtable_js["base.js"]
	assert "apiVersion: '0." in airtable_js["airtable.js"]
	assert airtable.INTEGRATION.api_setup.base_url == "https://api.airtable.com"
	assert "'https://api.airtable.com'" in airtable_js["airtable.js"]


@pytest.mark.parametrize("handle", sorted(RECORD_CALLS))
def test_airtable_record_tool_is_an_airtable_js_request(
	handle: str, calls: set[tuple[str, str]]
) -> None:
	"""Method and path of each record tool are a request airtable.js makes (a trailing slash,
	which the client adds to some, aside)."""
	method, path = _ours(_tool(handle))
	assert (method, path) in calls or (method, path + "/") in calls, (handle, method, path)
	assert (method, path.rstrip("/")) == (
		RECORD_CALLS[handle][0],
		RECORD_CALLS[handle][1].rstrip("/"),
	)


def test_list_records_parameters_are_the_clients(
	list_params: dict[str, set[str] | None], airtable_js: dict[str, str]
) -> None:
	"""listRecords's parameters are ones airtable.js validates, with its literals; like its POST
	form, only timeZone and userLocale go in the query, the others in the JSON body."""
	tool = _tool("listRecords")
	props = tool.input_schema["properties"]
	src = airtable_js["query_params.js"]
	assert "return paramName === 'timeZone' || paramName === 'userLocale';" in src
	assert set(tool.query_params) == {"timeZone", "userLocale"}
	assert not set(tool.query_params) & set(tool.body)
	for key in {**tool.query_params, **tool.body}:
		name = input_name(key)
		assert name in list_params, f"listRecords: {key} is not an airtable.js list parameter"
		allowed = list_params[name]
		if allowed and props.get(name, {}).get("type") == "string":
			assert set(props[name]["enum"]) <= allowed, (name, allowed)
	# sort's literals are its objects' direction values.
	direction = props["sort"]["items"]["properties"]["direction"]["enum"]
	assert set(direction) == list_params["sort"]


def test_bulk_writes_carry_records_as_the_client_sends_them(airtable_js: dict[str, str]) -> None:
	"""Create and update send {records: [...]}; a bulk delete sends records in the query."""
	table = airtable_js["table.js"]
	assert "__assign({ records: recordsData }, optionalParameters)" in table
	assert "__assign({ records: recordsData }, opts)" in table
	assert "var queryParams = { records: recordIdsOrId };" in table
	for handle in ("createRecords", "updateRecords", "upsertRecords"):
		assert "records" in _tool(handle).body, handle
	assert {input_name(k) for k in _tool("deleteRecords").query_params} == {"records"}


def test_a_wrong_airtable_record_request_fails_the_check(calls: set[tuple[str, str]]) -> None:
	"""A record tool on a path or method airtable.js does not use fails the check."""
	tool = _tool("getRecord")
	for change in (
		{"method": "POST"},
		{"endpoint": tool.endpoint.replace("{{ input.recordId }}", "records/{{ input.recordId }}")},
	):
		method, path = _ours(tool.model_copy(update=change))
		assert (method, path) not in calls and (method, path + "/") not in calls
