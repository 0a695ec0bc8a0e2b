"""Airtable Web API v0: bases and their schema, tables and fields, records, attachments, comments.

Airtable writes at most 10 records per request (create, update, upsert, delete); the input
schemas say so with ``maxItems: 10``. Query arrays use Airtable's bracket form (``records[]=rec1``);
records are listed with ``POST .../listRecords`` and a JSON body, so no URL grows past Airtable's
16,000-character limit.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	HttpTool,
	Integration,
	OAuth2Credential,
)
from openmolt_core.integrations.schema import array, integer, passthrough, string
from openmolt_integrations import _airtable

__all__ = [
	"CONTENT_URL",
	"INTEGRATION",
	"MAX_RECORDS_PER_REQUEST",
	"MAX_UPLOAD_BYTES",
	"TOOLS",
	"register_integrations",
]

MAX_RECORDS_PER_REQUEST = 10
"""Airtable's limit on records created, updated or deleted by one request."""

CONTENT_URL = "https://content.airtable.com"
"""The host of Airtable's upload endpoint (uploadAttachment), separate from the API host."""

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
"""Airtable's limit on a file sent to uploadAttachment (larger files go by public URL)."""


def _batch(description: str, item: dict[str, Any]) -> dict[str, Any]:
	return array(
		item,
		f"{description} At most {MAX_RECORDS_PER_REQUEST} per call; split larger batches.",
		minItems=1,
		maxItems=MAX_RECORDS_PER_REQUEST,
	)


TOOLS = [
	HttpTool(
		handle="whoami",
		description="Get the user id and the scopes of the current token.",
		scopes=["schemaRead"],
		method="GET",
		endpoint="/v0/meta/whoami",
	),
	HttpTool(
		handle="listBases",
		description="List the bases the token can access, with their ids and permission levels.",
		scopes=["schemaRead"],
		method="GET",
		endpoint="/v0/meta/bases",
		query_params=passthrough("offset"),
		input_schema={"type": "object", "properties": {"offset": _airtable.OFFSET}},
	),
	HttpTool(
		handle="getBaseSchema",
		description=(
			"Get every table of a base with its fields (names, ids, types, options) and views. "
			"Read this before writing records."
		),
		scopes=["schemaRead"],
		method="GET",
		endpoint="/v0/meta/bases/{{ input.baseId }}/tables",
		query_params={"include[]": "{{ input.include }}"},
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"include": array(
					{"type": "string", "enum": ["visibleFieldIds"]},
					"Extra data to include: visibleFieldIds lists each view's visible fields.",
				),
			},
			"required": ["baseId"],
		},
	),
	HttpTool(
		handle="listRecords",
		description=(
			"List records of a table, optionally filtered with a formula, sorted, limited to some "
			"fields or to a view. Paginated: pass the returned `offset` to get the next page."
		),
		scopes=["read"],
		# https://airtable.com/developers/web/api/list-records: a request URL must stay under
		# 16,000 characters, so the list goes as POST .../listRecords with the options in a JSON
		# body (a long filterByFormula or field list cannot overflow it); timeZone and
		# userLocale stay in the query, as airtable.js sends them.
		method="POST",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}/listRecords",
		query_params=passthrough("timeZone", "userLocale"),
		body=passthrough(
			"fields",
			"sort",
			"filterByFormula",
			"view",
			"maxRecords",
			"pageSize",
			"offset",
			"cellFormat",
			"returnFieldsByFieldId",
		),
		in_doubt="retry",
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"fields": array(
					{"type": "string"},
					"Only return these fields (names or ids); default: all non-empty fields.",
				),
				"sort": array(
					{
						"type": "object",
						"properties": {
							"field": {"type": "string"},
							"direction": {"type": "string", "enum": ["asc", "desc"]},
						},
						"required": ["field"],
					},
					'Sort order, e.g. [{"field": "Due", "direction": "asc"}]. Overrides the view order.',
				),
				"filterByFormula": string(
					"An Airtable formula; records where it is truthy are returned, e.g. "
					"AND({Status} = 'Done', {Count} > 3)."
				),
				"view": string("A view name or id: its filters and order apply."),
				"maxRecords": integer("Stop after this many records in total.", minimum=1),
				"pageSize": integer(
					"Records per page (1-100).", minimum=1, maximum=100, default=100
				),
				"offset": _airtable.OFFSET,
				"cellFormat": string(
					"json (default, typed values) or string (as shown in the UI; needs timeZone "
					"and userLocale).",
					enum=["json", "string"],
				),
				"timeZone": string("Time zone for cellFormat string, e.g. Europe/Paris."),
				"userLocale": string("Locale for cellFormat string, e.g. en-gb."),
				"returnFieldsByFieldId": _airtable.FIELDS_BY_ID,
			},
			"required": ["baseId", "tableIdOrName"],
		},
		output_schema=_airtable.RECORDS_OUTPUT,
	),
	HttpTool(
		handle="getRecord",
		description="Get one record by id.",
		scopes=["read"],
		method="GET",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}/{{ input.recordId }}",
		query_params=passthrough("returnFieldsByFieldId"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"recordId": _airtable.RECORD,
				"returnFieldsByFieldId": _airtable.FIELDS_BY_ID,
			},
			"required": ["baseId", "tableIdOrName", "recordId"],
		},
	),
	HttpTool(
		handle="createRecords",
		description=f"Create up to {MAX_RECORDS_PER_REQUEST} records in a table.",
		scopes=["write"],
		method="POST",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}",
		body=passthrough("records", "typecast", "returnFieldsByFieldId"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"records": _batch(
					'The records to create, each {"fields": {...}}.',
					{
						"type": "object",
						"properties": {"fields": _airtable.CELL_VALUES},
						"required": ["fields"],
					},
				),
				"typecast": _airtable.TYPECAST,
				"returnFieldsByFieldId": _airtable.FIELDS_BY_ID,
			},
			"required": ["baseId", "tableIdOrName", "records"],
		},
		output_schema=_airtable.WRITTEN_OUTPUT,
	),
	HttpTool(
		handle="updateRecords",
		description=(
			f"Update up to {MAX_RECORDS_PER_REQUEST} records by id; only the given fields change "
			"(other fields keep their values)."
		),
		scopes=["write"],
		method="PATCH",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}",
		body=passthrough("records", "typecast", "returnFieldsByFieldId"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"records": _batch(
					'The changes, each {"id": "rec...", "fields": {...}}.',
					{
						"type": "object",
						"properties": {"id": _airtable.RECORD, "fields": _airtable.CELL_VALUES},
						"required": ["id", "fields"],
					},
				),
				"typecast": _airtable.TYPECAST,
				"returnFieldsByFieldId": _airtable.FIELDS_BY_ID,
			},
			"required": ["baseId", "tableIdOrName", "records"],
		},
		output_schema=_airtable.WRITTEN_OUTPUT,
	),
	HttpTool(
		handle="upsertRecords",
		description=(
			f"Create or update up to {MAX_RECORDS_PER_REQUEST} records, matching existing ones on "
			"fieldsToMergeOn: a record whose merge fields match is updated, otherwise one is "
			"created. The result lists createdRecords and updatedRecords ids."
		),
		scopes=["write"],
		method="PATCH",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}",
		body={
			**passthrough("records", "typecast", "returnFieldsByFieldId"),
			"performUpsert": passthrough("fieldsToMergeOn"),
		},
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"fieldsToMergeOn": array(
					{"type": "string"},
					'1 to 3 field names or ids whose values identify a record, e.g. ["Email"].',
					minItems=1,
					maxItems=3,
				),
				"records": _batch(
					'The records, each {"fields": {...}} including the merge fields.',
					{
						"type": "object",
						"properties": {"fields": _airtable.CELL_VALUES},
						"required": ["fields"],
					},
				),
				"typecast": _airtable.TYPECAST,
				"returnFieldsByFieldId": _airtable.FIELDS_BY_ID,
			},
			"required": ["baseId", "tableIdOrName", "fieldsToMergeOn", "records"],
		},
	),
	HttpTool(
		handle="deleteRecords",
		description=f"Delete up to {MAX_RECORDS_PER_REQUEST} records by id.",
		scopes=["delete"],
		method="DELETE",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}",
		query_params={"records[]": "{{ input.records }}"},
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"records": _batch("Ids of the records to delete.", _airtable.RECORD),
			},
			"required": ["baseId", "tableIdOrName", "records"],
		},
	),
	HttpTool(
		handle="createTable",
		description="Create a table in a base. The first field becomes the primary field.",
		scopes=["schemaWrite"],
		method="POST",
		endpoint="/v0/meta/bases/{{ input.baseId }}/tables",
		body=passthrough("name", "description", "fields"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"name": string("The table name, unique in the base."),
				"description": _airtable.description_text("What the table holds"),
				"fields": array(
					{
						"type": "object",
						"properties": {
							"name": {"type": "string"},
							"type": {"type": "string"},
							"description": _airtable.description_text("What the field holds"),
							"options": {"type": "object"},
						},
						"required": ["name", "type"],
					},
					'Field definitions, e.g. [{"name": "Name", "type": "singleLineText"}, '
					'{"name": "Status", "type": "singleSelect", "options": {"choices": [{"name": "Todo"}]}}].',
					minItems=1,
				),
			},
			"required": ["baseId", "name", "fields"],
		},
	),
	HttpTool(
		handle="createField",
		description="Add a field (column) to a table.",
		scopes=["schemaWrite"],
		method="POST",
		endpoint="/v0/meta/bases/{{ input.baseId }}/tables/{{ input.tableId }}/fields",
		body=passthrough("name", "type", "description", "options"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableId": string("The table id (starts with `tbl`)."),
				"name": string("The field name."),
				"type": string(
					"The field type, e.g. singleLineText, multilineText, number, checkbox, date, "
					"singleSelect, multipleSelects, email, url, currency, multipleRecordLinks."
				),
				"description": _airtable.description_text("What the field holds"),
				"options": {
					"type": "object",
					"description": (
						'Type options, e.g. {"precision": 2} for number or '
						'{"choices": [{"name": "Todo"}]} for singleSelect.'
					),
				},
			},
			"required": ["baseId", "tableId", "name", "type"],
		},
	),
	HttpTool(
		handle="updateTable",
		description="Rename a table or change its description.",
		scopes=["schemaWrite"],
		method="PATCH",
		endpoint="/v0/meta/bases/{{ input.baseId }}/tables/{{ input.tableIdOrName }}",
		body=passthrough("name", "description"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"name": string("The new table name, unique in the base."),
				"description": _airtable.description_text("The new description"),
			},
			"required": ["baseId", "tableIdOrName"],
		},
	),
	HttpTool(
		handle="updateField",
		description="Rename a field (column) or change its description. Its type and options cannot be changed through the API.",
		scopes=["schemaWrite"],
		method="PATCH",
		endpoint="/v0/meta/bases/{{ input.baseId }}/tables/{{ input.tableId }}/fields/{{ input.columnId }}",
		body=passthrough("name", "description"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableId": string("The table id (starts with `tbl`)."),
				"columnId": string("The field id (starts with `fld`), from getBaseSchema."),
				"name": string("The new field name."),
				"description": _airtable.description_text("The new description"),
			},
			"required": ["baseId", "tableId", "columnId"],
		},
	),
	HttpTool(
		handle="uploadAttachment",
		description=(
			"Upload a file (up to 5 MB) into an attachment field of an existing record; it is "
			"added to the field's attachments. For larger files, write a public URL into the "
			'field instead (createRecords/updateRecords with [{"url": ...}]).'
		),
		scopes=["write"],
		method="POST",
		base_url=CONTENT_URL,
		endpoint="/v0/{{ input.baseId }}/{{ input.recordId }}/{{ input.attachmentFieldIdOrName }}/uploadAttachment",
		body={
			**passthrough("filename", contentType="{{ input.file | file_media_type }}"),
			"file": f"{{{{ input.file | file_base64: {MAX_UPLOAD_BYTES} }}}}",
		},
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"recordId": _airtable.RECORD,
				"attachmentFieldIdOrName": string(
					"The attachment field's id (starts with `fld`) or name."
				),
				"file": string(
					"The file as a reference: 'openmolt-file:<id>' (from another tool), "
					"'data:<type>;base64,<data>' or 'fileSystem:<path>'. Its media type is sent "
					"as contentType."
				),
				"filename": string("The attachment's file name, e.g. 'invoice.pdf'."),
			},
			"required": ["baseId", "recordId", "attachmentFieldIdOrName", "file", "filename"],
		},
		output_schema={
			"type": "object",
			"properties": {
				"id": {"type": "string"},
				"createdTime": {"type": "string"},
				"fields": {
					"type": "object",
					"description": "The attachment field (by field id) with every attachment.",
				},
			},
		},
	),
	HttpTool(
		handle="listComments",
		description="List the comments on a record, newest first (paginated with offset).",
		scopes=["commentsRead"],
		method="GET",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}/{{ input.recordId }}/comments",
		query_params=passthrough("pageSize", "offset"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"recordId": _airtable.RECORD,
				"pageSize": integer(
					"Comments per page (1-100).", minimum=1, maximum=100, default=100
				),
				"offset": _airtable.OFFSET,
			},
			"required": ["baseId", "tableIdOrName", "recordId"],
		},
	),
	HttpTool(
		handle="createComment",
		description="Comment on a record. Mention a user with @[usrXXXXXXXXXXXXXX] in the text.",
		scopes=["commentsWrite"],
		method="POST",
		endpoint="/v0/{{ input.baseId }}/{{ input.tableIdOrName }}/{{ input.recordId }}/comments",
		body=passthrough("text"),
		input_schema={
			"type": "object",
			"properties": {
				"baseId": _airtable.BASE,
				"tableIdOrName": _airtable.TABLE,
				"recordId": _airtable.RECORD,
				"text": string("The comment text."),
			},
			"required": ["baseId", "tableIdOrName", "recordId", "text"],
		},
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"whoami": [],
		"listBases": [],
		"createRecords": [],
		"updateRecords": [],
		"upsertRecords": [],
		"deleteRecords": [],
		"createTable": [],
		"createField": [],
		"updateTable": [],
		"updateField": [],
		"uploadAttachment": [],
		"createComment": [],
		# Records: a collaborator's, a form's, or a tainted run's earlier write.
		"listRecords": ["private", "untrusted"],
		"getRecord": ["private", "untrusted"],
		"listComments": ["private", "untrusted"],  # collaborators of a shared base
		# Others' words: table and field names and descriptions collaborators write.
		"getBaseSchema": ["untrusted"],
	},
	id="airtable",
	name="Airtable",
	description="Read and write Airtable records, tables, fields and record comments.",
	api_version="v0",
	api_setup=ApiSetup(base_url="https://api.airtable.com"),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://airtable.com/oauth2/v1/authorize",
			token_url="https://airtable.com/oauth2/v1/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=[
				"data.records:read",
				"data.records:write",
				"data.recordComments:read",
				"data.recordComments:write",
				"schema.bases:read",
				"schema.bases:write",
			],
			# Airtable refuses a scope not selected for the integration
			# (https://airtable.com/developers/web/api/oauth-reference), so the consent asks
			# only for those the agent's tool scopes need.
			scope_map={
				"read": ["data.records:read"],
				"write": ["data.records:write"],
				"delete": ["data.records:write"],
				"schemaRead": ["schema.bases:read"],
				"schemaWrite": ["schema.bases:write"],
				"commentsRead": ["data.recordComments:read"],
				"commentsWrite": ["data.recordComments:write"],
			},
			token_auth="basic",
			pkce="required",  # Airtable requires PKCE (S256); a public client sends no secret
			client_secret_required=False,
		),
	],
	scopes={
		"read": "Read records (token scope data.records:read).",
		"write": "Create, update and upsert records, upload attachments (data.records:write).",
		"delete": "Delete records (data.records:write).",
		"schemaRead": "List bases and read table schemas (schema.bases:read).",
		"schemaWrite": "Create and update tables and fields (schema.bases:write).",
		"commentsRead": "Read record comments (data.recordComments:read).",
		"commentsWrite": "Comment on records (data.recordComments:write).",
	},
	tools=TOOLS,
	docs="""## Get a token

**Personal access token.** Open <https://airtable.com/create/tokens>, choose *Create token*, add
the scopes the agent needs (`data.records:read`, `data.records:write`, `schema.bases:read`, and
`schema.bases:write` or `data.recordComments:*` if used) and the bases it may access, then copy the
token (`pat…`).

```python
om = OpenMolt(integrations={"airtable": {"apiKey": "pat..."}})
```

**OAuth 2.0 (with PKCE).** Register an integration at <https://airtable.com/create/oauth>,
authorize users at `https://airtable.com/oauth2/v1/authorize` with a PKCE `code_challenge`, and
exchange the code at `https://airtable.com/oauth2/v1/token` (HTTP Basic with client id and secret
for confidential clients). Give the agent `{"type": "oauth2", "config": {"accessToken",
"refreshToken", "clientId", "clientSecret"}}`; refresh tokens last 60 days. A public integration
(no client secret) leaves `clientSecret` out: its refreshes send `client_id` in the body and no
`Authorization` header, as Airtable's OAuth reference shows. `openmolt auth airtable --scopes
read,write` asks only for the OAuth scopes those tool scopes need (`data.records:read
data.records:write`): Airtable refuses a scope the integration was not registered with.

Writes take at most 10 records per call. Airtable allows 5 requests per second per base.

## Checked against

Airtable publishes no OpenAPI document. The record tools (list, get, create, update, upsert,
delete) are checked by the test suite against Airtable's official client, `airtable` on npm
(0.12.2): its record requests, list parameters and their literals. The metadata, comment and
attachment-upload tools, which that client does not call, are pinned to their documentation
pages.
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Airtable integration."""
	register(INTEGRATION)
