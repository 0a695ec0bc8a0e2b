"""Airtable's shared input schemas and outputs (used by airtable.py)."""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations.schema import boolean, string

BASE = string("The base id (starts with `app`), from listBases or the base URL.")
TABLE = string(
	"The table id (starts with `tbl`, preferred: it survives renames) or the table name."
)
RECORD = string("The record id (starts with `rec`).")
OFFSET = string("The `offset` returned by the previous page; omit for the first page.")
TYPECAST = boolean(
	"Let Airtable convert values (e.g. create missing select options, parse strings).",
	default=False,
)
FIELDS_BY_ID = boolean("Key the returned fields by field id instead of field name.", default=False)
CELL_VALUES = {
	"type": "object",
	"description": (
		"Cell values keyed by field name (or id), e.g. "
		'{"Name": "Ada", "Status": "Done", "Tags": ["a", "b"], "Count": 3}.'
	),
}
_RECORD_LIST = {
	"type": "array",
	"items": {
		"type": "object",
		"properties": {
			"id": {"type": "string"},
			"createdTime": {"type": "string"},
			"fields": {"type": "object"},
		},
	},
}
RECORDS_OUTPUT = {
	"type": "object",
	"properties": {
		"records": _RECORD_LIST,
		"offset": {"type": "string", "description": "Present when more records exist."},
	},
}
WRITTEN_OUTPUT = {"type": "object", "properties": {"records": _RECORD_LIST}}
"""What create and update answer: the records written (no paging)."""


def description_text(what: str) -> dict[str, Any]:
	"""A table or field description: non-empty, at most 20,000 characters.

	https://airtable.com/developers/web/api/create-table (and create-field, update-table,
	update-field): "If present, must be a non-empty string no longer than 20,000 characters."

	Args:
		what: What the description is of, for the model.
	"""
	return string(f"{what} (1 to 20,000 characters).", minLength=1, maxLength=20000)
