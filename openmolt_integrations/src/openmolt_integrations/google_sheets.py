"""Google Sheets (API v4): create spreadsheets, read and write cell values, manage sheets.

Every tool is one declarative request except ``lookupRows`` and ``appendOrUpdateRow``: they find
rows by a key column's value, so a small function (`openmolt_integrations._sheets_rows`) reads the
header row and the key column, then reads or writes the matching row. Each of its requests is
one of the declarative tools listed in `ROW_REQUESTS`, checked against the discovery document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import ApiSetup, FunctionTool, HttpTool, Integration
from openmolt_core.integrations.http import execute_http_tool
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._google import google_oauth2, token_guide
from openmolt_integrations._sheets_rows import Send, lookup_rows, upsert_row

if TYPE_CHECKING:
	from openmolt_core.tools import ToolContext

__all__ = ["INTEGRATION", "ROW_REQUESTS", "ROW_TOOLS", "TOOLS", "register_integrations"]

_SCOPES = {
	"https://www.googleapis.com/auth/spreadsheets": "See, edit, create and delete spreadsheets."
}

_BASE = "/v4/spreadsheets/{{ input.spreadsheetId }}"
_SPREADSHEET_ID = {
	"type": "string",
	"description": "The spreadsheet id: the part after /d/ in its URL (docs.google.com/spreadsheets/d/<id>/edit).",
}
_RANGE = {
	"type": "string",
	"description": "A1 notation: 'Sheet1!A1:D10', 'Sheet1!A:A', \"'My sheet'!B2\" (quote names with spaces), or just 'Sheet1' for the whole sheet.",
}
_CELL = {"type": ["string", "number", "boolean", "null"]}
_VALUES = {
	"type": "array",
	"items": {"type": "array", "items": _CELL},
	"description": "Rows of cell values, e.g. [['Name', 'Total'], ['Ana', 42]]. With USER_ENTERED, '=SUM(B2:B9)' is a formula and '2026-12-01' a date.",
}
_INPUT_OPTION = {
	"type": "string",
	"enum": ["USER_ENTERED", "RAW"],
	"default": "USER_ENTERED",
	"description": "USER_ENTERED parses values as if typed in the UI (formulas, numbers, dates); RAW stores them as given strings.",
}
_INPUT_OPTION_QUERY = "{{ input.valueInputOption | default: 'USER_ENTERED' }}"
_MAJOR = {
	"type": "string",
	"enum": ["ROWS", "COLUMNS"],
	"description": "Whether the inner lists are rows (default) or columns.",
}
_RENDER = {
	"type": "string",
	"enum": ["FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA"],
	"description": "How to render values: as displayed (default), as raw numbers, or the formulas.",
}
_DATE_RENDER = {
	"type": "string",
	"enum": ["SERIAL_NUMBER", "FORMATTED_STRING"],
	"description": "With UNFORMATTED_VALUE: dates as serial numbers (default) or formatted strings.",
}
_VALUE_RANGE_OUT = obj(
	{
		"range": {"type": "string"},
		"majorDimension": {"type": "string"},
		"values": {"type": "array", "items": {"type": "array"}},
	}
)
_UPDATE_OUT = obj(
	{
		"spreadsheetId": {"type": "string"},
		"updatedRange": {"type": "string"},
		"updatedRows": {"type": "integer"},
		"updatedColumns": {"type": "integer"},
		"updatedCells": {"type": "integer"},
	}
)

_SPREADSHEET_MASK = (
	"spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),"
	"sheets(properties(sheetId,title,index,gridProperties)"
)
"""getSpreadsheet's default field mask, its ``sheets(`` left open for ``,data``."""

TOOLS = [
	HttpTool(
		handle="createSpreadsheet",
		description="Create a spreadsheet with a title and optionally named sheets (tabs).",
		scopes=["write"],
		method="POST",
		endpoint="/v4/spreadsheets",
		body={"properties": passthrough("title", "locale", "timeZone"), **passthrough("sheets")},
		input_schema=obj(
			{
				"title": {"type": "string", "description": "The spreadsheet's title."},
				"locale": {
					"type": "string",
					"description": "Locale for number and date formats, e.g. 'en_US', 'fr_FR'.",
				},
				"timeZone": {
					"type": "string",
					"description": "IANA time zone for NOW() and dates, e.g. 'Europe/Paris'.",
				},
				"sheets": array(
					obj(
						{
							"properties": obj(
								{"title": {"type": "string", "description": "The tab name."}},
								["title"],
							)
						},
						["properties"],
					),
					"Tabs to create, e.g. [{'properties': {'title': 'Data'}}] (default one 'Sheet1').",
				),
			},
			["title"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"spreadsheetUrl": {"type": "string"},
				"sheets": {"type": "array"},
			}
		),
	),
	HttpTool(
		handle="getSpreadsheet",
		description="Get a spreadsheet's title and its sheets (tab names, sheetId, row and column counts). Use getValues to read cells.",
		scopes=["read"],
		method="GET",
		endpoint=_BASE,
		# Google returns only the masked fields and ignores includeGridData once a mask is set
		# (spreadsheets.get): the default mask names the grid data (sheets.data) only when
		# includeGridData asks for it, or every call would return every cell.
		query_params=passthrough(
			"ranges",
			"includeGridData",
			fields=(
				"{% if input.fields %}{{ input.fields }}{% else %}"
				f"{_SPREADSHEET_MASK}{{% if input.includeGridData %}},data{{% endif %}})"
				"{% endif %}"
			),
		),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"fields": {
					"type": "string",
					"description": "Field mask of what to return (default: title, sheet properties, and the grid data when includeGridData asks for it).",
				},
				"ranges": {
					"type": "array",
					"items": {"type": "string"},
					"description": "With includeGridData: only these A1 ranges.",
				},
				"includeGridData": {
					"type": "boolean",
					"description": "Include cell data and formatting in sheets[].data (large). Google ignores it when fields is given: a fields mask of your own must name sheets.data instead.",
				},
			},
			["spreadsheetId"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"spreadsheetUrl": {"type": "string"},
				"properties": {"type": "object"},
				"sheets": {"type": "array", "items": {"type": "object"}},
			}
		),
	),
	HttpTool(
		handle="getValues",
		description="Read the cell values of a range.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_BASE}/values/{{{{ input.range }}}}",
		query_params=passthrough("majorDimension", "valueRenderOption", "dateTimeRenderOption"),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"range": _RANGE,
				"majorDimension": _MAJOR,
				"valueRenderOption": _RENDER,
				"dateTimeRenderOption": _DATE_RENDER,
			},
			["spreadsheetId", "range"],
		),
		output_schema=_VALUE_RANGE_OUT,
	),
	HttpTool(
		handle="batchGetValues",
		description="Read several ranges at once.",
		scopes=["read"],
		method="GET",
		endpoint=f"{_BASE}/values:batchGet",
		query_params=passthrough(
			"ranges", "majorDimension", "valueRenderOption", "dateTimeRenderOption"
		),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"ranges": {
					"type": "array",
					"items": {"type": "string"},
					"minItems": 1,
					"description": "A1 ranges, e.g. ['Sheet1!A1:C5', 'Totals!B2'].",
				},
				"majorDimension": _MAJOR,
				"valueRenderOption": _RENDER,
				"dateTimeRenderOption": _DATE_RENDER,
			},
			["spreadsheetId", "ranges"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"valueRanges": {"type": "array", "items": _VALUE_RANGE_OUT},
			}
		),
	),
	HttpTool(
		handle="updateValues",
		description="Write values into a range, overwriting what is there (starting at the range's top-left cell).",
		scopes=["write"],
		method="PUT",
		endpoint=f"{_BASE}/values/{{{{ input.range }}}}",
		query_params={"valueInputOption": _INPUT_OPTION_QUERY},
		body=passthrough("range", "majorDimension", "values"),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"range": _RANGE,
				"values": _VALUES,
				"valueInputOption": _INPUT_OPTION,
				"majorDimension": _MAJOR,
			},
			["spreadsheetId", "range", "values"],
		),
		output_schema=_UPDATE_OUT,
	),
	HttpTool(
		handle="appendValues",
		description="Append rows after the last row of the table found in the range (e.g. range 'Sheet1!A1' appends to the table starting at A1).",
		scopes=["write"],
		method="POST",
		endpoint=f"{_BASE}/values/{{{{ input.range }}}}:append",
		query_params={
			"valueInputOption": _INPUT_OPTION_QUERY,
			"insertDataOption": "{{ input.insertDataOption | default: 'INSERT_ROWS' }}",
		},
		body=passthrough("range", "majorDimension", "values"),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"range": {
					**_RANGE,
					"description": "A range inside the table to append to, e.g. 'Sheet1!A1' or 'Sheet1!A:D'.",
				},
				"values": _VALUES,
				"valueInputOption": _INPUT_OPTION,
				"insertDataOption": {
					"type": "string",
					"enum": ["INSERT_ROWS", "OVERWRITE"],
					"default": "INSERT_ROWS",
					"description": "INSERT_ROWS inserts new rows; OVERWRITE writes into empty rows below the table.",
				},
				"majorDimension": _MAJOR,
			},
			["spreadsheetId", "range", "values"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"tableRange": {"type": "string"},
				"updates": _UPDATE_OUT,
			}
		),
	),
	HttpTool(
		handle="batchUpdateValues",
		description="Write several ranges at once.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_BASE}/values:batchUpdate",
		body=passthrough("data", valueInputOption=_INPUT_OPTION_QUERY),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"data": array(
					obj(
						{"range": _RANGE, "values": _VALUES, "majorDimension": _MAJOR},
						["range", "values"],
					),
					"The ranges and their values.",
				),
				"valueInputOption": _INPUT_OPTION,
			},
			["spreadsheetId", "data"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"totalUpdatedCells": {"type": "integer"},
				"responses": {"type": "array"},
			}
		),
	),
	HttpTool(
		handle="clearValues",
		description="Clear the values of a range (formatting stays).",
		scopes=["write"],
		method="POST",
		endpoint=f"{_BASE}/values/{{{{ input.range }}}}:clear",
		body={},
		input_schema=obj(
			{"spreadsheetId": _SPREADSHEET_ID, "range": _RANGE}, ["spreadsheetId", "range"]
		),
		output_schema=obj(
			{"spreadsheetId": {"type": "string"}, "clearedRange": {"type": "string"}}
		),
	),
	HttpTool(
		handle="addSheet",
		description="Add a sheet (tab) to a spreadsheet.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_BASE}:batchUpdate",
		body={
			"requests": [
				{
					"addSheet": {
						"properties": {
							"gridProperties": passthrough("rowCount", "columnCount"),
							**passthrough("title", "index"),
						}
					}
				}
			]
		},
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"title": {"type": "string", "description": "The new tab's name."},
				"index": {
					"type": "integer",
					"minimum": 0,
					"description": "Position among the tabs (0 = first; default last).",
				},
				"rowCount": {
					"type": "integer",
					"minimum": 1,
					"description": "Number of rows (default 1000).",
				},
				"columnCount": {
					"type": "integer",
					"minimum": 1,
					"description": "Number of columns (default 26).",
				},
			},
			["spreadsheetId", "title"],
		),
		output_schema=obj(
			{
				"spreadsheetId": {"type": "string"},
				"replies": {
					"type": "array",
					"description": "[{addSheet: {properties: {sheetId, title}}}]",
				},
			}
		),
	),
	HttpTool(
		handle="deleteSheet",
		description="Delete a sheet (tab) and its data, by its numeric sheetId (from getSpreadsheet).",
		scopes=["delete"],
		method="POST",
		endpoint=f"{_BASE}:batchUpdate",
		body={"requests": [{"deleteSheet": passthrough("sheetId")}]},
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"sheetId": {
					"type": "integer",
					"description": "The numeric sheetId (not the title).",
				},
			},
			["spreadsheetId", "sheetId"],
		),
		output_schema=obj({"spreadsheetId": {"type": "string"}, "replies": {"type": "array"}}),
	),
	HttpTool(
		handle="deleteRows",
		description=(
			"Delete whole rows of a sheet (the rows below move up), by numeric sheetId (from "
			"getSpreadsheet) and 0-based, end-exclusive indexes: sheet row 5 alone (the "
			"rowNumber lookupRows returns) is startIndex 4, endIndex 5."
		),
		scopes=["delete"],
		method="POST",
		endpoint=f"{_BASE}:batchUpdate",
		body={
			"requests": [
				{
					"deleteDimension": {
						"range": passthrough("sheetId", "startIndex", "endIndex", dimension="ROWS")
					}
				}
			]
		},
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"sheetId": {
					"type": "integer",
					"description": "The numeric sheetId of the tab (not its title).",
				},
				"startIndex": {
					"type": "integer",
					"minimum": 0,
					"description": "The first row to delete, 0-based (sheet row number - 1).",
				},
				"endIndex": {
					"type": "integer",
					"minimum": 1,
					"description": "The row after the last one to delete, 0-based (the last sheet row number).",
				},
			},
			["spreadsheetId", "sheetId", "startIndex", "endIndex"],
		),
		output_schema=obj({"spreadsheetId": {"type": "string"}, "replies": {"type": "array"}}),
	),
	HttpTool(
		handle="batchUpdateSpreadsheet",
		description="Apply structural or formatting requests from the Sheets API: renameSheet via updateSheetProperties, repeatCell (formatting), autoResizeDimensions, insertDimension, deleteDimension, sortRange, mergeCells, addConditionalFormatRule, addChart... Ranges use numeric sheetId and 0-based indexes.",
		scopes=["write"],
		method="POST",
		endpoint=f"{_BASE}:batchUpdate",
		body=passthrough("requests", "includeSpreadsheetInResponse"),
		input_schema=obj(
			{
				"spreadsheetId": _SPREADSHEET_ID,
				"requests": array(
					{"type": "object"},
					"Sheets API Request objects, each with one key, e.g. {'updateSheetProperties': {'properties': {'sheetId': 0, 'title': 'Data'}, 'fields': 'title'}}.",
				),
				"includeSpreadsheetInResponse": {
					"type": "boolean",
					"description": "Return the updated spreadsheet.",
				},
			},
			["spreadsheetId", "requests"],
		),
		output_schema=obj({"spreadsheetId": {"type": "string"}, "replies": {"type": "array"}}),
	),
]

ROW_REQUESTS = {
	"lookupRows": ("getValues", "batchGetValues"),
	"appendOrUpdateRow": ("getValues", "updateValues", "appendValues"),
}
"""The declarative tools each composed tool sends its requests through, by handle."""


def _sender(handle: str, context: ToolContext) -> Send:
	"""Runs the integration's declarative tools that ``handle`` may use, through the engine."""
	allowed = {t.handle: t for t in TOOLS if isinstance(t, HttpTool)}

	async def send(name: str, input: dict[str, Any]) -> Any:
		if name not in ROW_REQUESTS[handle]:
			raise ToolError(f"{handle} sends only {', '.join(ROW_REQUESTS[handle])}, not {name}")
		return await execute_http_tool(allowed[name], INTEGRATION, input, context)

	return send


async def _lookup_rows(input: dict[str, Any], context: ToolContext) -> Any:
	return await lookup_rows(input, _sender("lookupRows", context))


async def _append_or_update_row(input: dict[str, Any], context: ToolContext) -> Any:
	return await upsert_row(input, _sender("appendOrUpdateRow", context))


_SHEET_NAME = {
	"type": "string",
	"minLength": 1,
	"description": "The sheet (tab) title, e.g. 'Sheet1' or 'Leads 2026' (no quotes, no range).",
}
_HEADER_ROW = {
	"type": "integer",
	"minimum": 1,
	"default": 1,
	"description": "The row holding the column names (default 1); data rows are below it.",
}
_ROW_INPUTS: dict[str, Any] = {"spreadsheetId": _SPREADSHEET_ID, "sheetName": _SHEET_NAME}
_KEY_NOTE = (
	"Columns are named by their header text (exact, or case-insensitive when unambiguous); the "
	"key is compared with each cell as displayed (numbers without trailing .0, TRUE/FALSE)."
)
_ROW_OUT = obj(
	{
		"rowNumber": {"type": "integer", "description": "The sheet row number (1-based)."},
		"values": {"type": "object", "description": "Column name to cell value."},
	}
)

ROW_TOOLS = [
	FunctionTool(
		handle="lookupRows",
		description=(
			"Find the rows whose value in one column equals a given value (e.g. Email = "
			"ana@example.com) and return them as objects keyed by column name, without reading "
			f"the whole sheet. {_KEY_NOTE}"
		),
		scopes=["read"],
		function=_lookup_rows,
		input_schema=obj(
			{
				**_ROW_INPUTS,
				"lookupColumn": {
					"type": "string",
					"minLength": 1,
					"description": "The header of the column to search, e.g. 'Email'.",
				},
				"lookupValue": {
					"type": ["string", "number", "boolean"],
					"minLength": 1,
					"description": "The value to find in that column (not empty).",
				},
				"headerRow": _HEADER_ROW,
				"maxRows": {
					"type": "integer",
					"minimum": 1,
					"maximum": 100,
					"default": 50,
					"description": "Most matching rows to return (matchCount counts them all).",
				},
				"valueRenderOption": _RENDER,
			},
			["spreadsheetId", "sheetName", "lookupColumn", "lookupValue"],
		),
		output_schema=obj(
			{
				"rows": {"type": "array", "items": _ROW_OUT},
				"matchCount": {"type": "integer"},
				"columns": {"type": "array", "items": {"type": "string"}},
			}
		),
	),
	FunctionTool(
		handle="appendOrUpdateRow",
		description=(
			"Upsert one row by a key column: if a row's keyColumn cell equals row[keyColumn], "
			"update that row (the first match; columns not given keep their values), else append "
			f"the row below the table. {_KEY_NOTE}"
		),
		scopes=["read", "write"],
		function=_append_or_update_row,
		input_schema=obj(
			{
				**_ROW_INPUTS,
				"keyColumn": {
					"type": "string",
					"minLength": 1,
					"description": "The header of the column that identifies a row, e.g. 'Email'.",
				},
				"row": {
					"type": "object",
					"additionalProperties": _CELL,
					"minProperties": 1,
					"description": (
						"Column name to value, the key column included, e.g. {'Email': "
						"'ana@example.com', 'Status': 'paid'}. '' clears a cell."
					),
				},
				"headerRow": _HEADER_ROW,
				"valueInputOption": _INPUT_OPTION,
			},
			["spreadsheetId", "sheetName", "keyColumn", "row"],
		),
		output_schema=obj(
			{
				"action": {"type": "string", "enum": ["updated", "appended"]},
				"rowNumber": {"type": ["integer", "null"]},
				"updatedRange": {"type": ["string", "null"]},
				"matchedRows": {"type": "array", "items": {"type": "integer"}},
			}
		),
	),
]
"""The composed tools: rows found by a key column's value (see `ROW_REQUESTS`)."""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"createSpreadsheet": [],
		"updateValues": [],
		"appendValues": [],
		"batchUpdateValues": [],
		"clearValues": [],
		"addSheet": [],
		"deleteSheet": [],
		"deleteRows": [],
		"batchUpdateSpreadsheet": [],
		"getSpreadsheet": ["private"],
		# Cells: a collaborator's, a form's answers, or a tainted run's earlier write.
		"getValues": ["private", "untrusted"],
		"batchGetValues": ["private", "untrusted"],
		"lookupRows": ["private", "untrusted"],
		# Reads the header row and the key column before it writes.
		"appendOrUpdateRow": ["private"],
	},
	name="Google Sheets",
	description="Create Google Sheets spreadsheets, read and write cell values, add and format sheets.",
	api_version="v4",
	api_setup=ApiSetup(base_url="https://sheets.googleapis.com"),
	credential_setup=[google_oauth2(*_SCOPES)],
	scopes={
		"read": "Read spreadsheets and cell values; look rows up by a column's value.",
		"write": "Create spreadsheets, write, append, upsert and clear values, add sheets and format.",
		"delete": "Delete sheets (tabs) and rows.",
	},
	tools=[*TOOLS, *ROW_TOOLS],
	docs=token_guide(
		"Google Sheets",
		"Google Sheets API",
		"googleSheets",
		_SCOPES,
		notes="""## Writing values

Writes use `valueInputOption`: `USER_ENTERED` (default here) parses input like the Sheets UI
(formulas, numbers, dates), `RAW` stores strings as given. Ranges are A1 notation
(`'My sheet'!A1:C10`). For read-only agents `spreadsheets.readonly` is enough; to reach only the
spreadsheets the app creates or opens, use `drive.file`.

## Rows by a key column

`lookupRows` and `appendOrUpdateRow` treat a sheet as a table whose first row (or `headerRow`)
names the columns. They read that row and the key column (`values.get`), then read the matching
rows (`values.batchGet`), update the first match (`values.update`, only the columns given) or
append the row (`values.append`), so the agent never reads the whole sheet or writes A1 ranges.
`appendOrUpdateRow` needs both the `read` and `write` scopes. To remove a row found this way,
`deleteRows` takes the tab's numeric `sheetId` and 0-based indexes: `startIndex` rowNumber - 1,
`endIndex` rowNumber.""",
	),
)
"""The Google Sheets integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Google Sheets under the id ``googleSheets``."""
	register(INTEGRATION, id="googleSheets")
