"""Notion's shared input schemas and outputs (used by notion.py)."""

from __future__ import annotations

from typing import Any

from openmolt_core.integrations.schema import array, integer, obj, string


def object_id(what: str) -> dict[str, Any]:
	"""A Notion object id input.

	Args:
		what: What the id is of.
	"""
	return string(f"The {what} id (a UUID, with or without dashes, as found in its URL).")


CURSOR = string("Cursor from a previous response's `next_cursor`, to get the next page.")
PAGE_SIZE = integer("How many results to return (1-100).", minimum=1, maximum=100, default=100)
LIST_OUTPUT = {
	"type": "object",
	"properties": {
		"results": {"type": "array", "items": {"type": "object"}},
		"has_more": {"type": "boolean", "description": "Whether more results exist."},
		"next_cursor": {"type": ["string", "null"], "description": "Pass as start_cursor."},
	},
}
# https://developers.notion.com/reference/request-limits: any array of rich text objects holds
# at most 100 elements, each text.content at most 2000 characters.
RICH_TEXT = array(
	{"type": "object"},
	'Rich text items (at most 100, each text.content up to 2000 characters), e.g. [{"type": '
	'"text", "text": {"content": "Hello"}}].',
	maxItems=100,
)
ICON = obj(
	{},
	description='Page icon: {"type": "emoji", "emoji": "🚀"} or {"type": "external", "external": {"url": "https://..."}} '
	'or {"type": "file_upload", "file_upload": {"id": "..."}}.',
)
COVER = obj(
	{},
	description='Cover image: {"type": "external", "external": {"url": "https://..."}} or '
	'{"type": "file_upload", "file_upload": {"id": "..."}}.',
)
PROPERTIES = obj(
	{},
	description="Property values keyed by property name or id, in Notion's property value format, e.g. "
	'{"Name": {"title": [{"text": {"content": "Task"}}]}, "Status": {"status": {"name": "Done"}}, '
	'"Due": {"date": {"start": "2026-12-01"}}}. Read the data source first to learn its properties.',
)
PROPERTY_SCHEMA = obj(
	{},
	description="Property definitions keyed by property name, each its type with the type's options, "
	'e.g. {"Name": {"title": {}}, "Status": {"select": {"options": [{"name": "Todo"}, '
	'{"name": "Done"}]}}, "Due": {"date": {}}, "Estimate": {"number": {"format": "number"}}}. '
	"A database has exactly one title property.",
)
"""The properties (columns) of a new data source, as createDatabase takes them."""
BLOCKS = array(
	{"type": "object"},
	"Block objects, e.g. "
	'[{"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": "Hi"}}]}}]. '
	'Attach an uploaded file with {"type": "image", "image": {"type": "file_upload", "file_upload": {"id": "..."}}}. '
	"At most 100 blocks per request.",
	maxItems=100,
)
POSITION = obj(
	{
		"type": {"type": "string", "enum": ["end", "start", "after_block"]},
		"after_block": {"type": "object", "properties": {"id": {"type": "string"}}},
	},
	["type"],
	description='Where to insert: {"type": "end"} (default), {"type": "start"}, or '
	'{"type": "after_block", "after_block": {"id": "<block id>"}}.',
)
"""Where appended blocks go (``ContentPositionSchema``: end, start, after_block)."""
PAGE_POSITION = obj(
	{
		"type": {"type": "string", "enum": ["page_end", "page_start", "after_block"]},
		"after_block": {"type": "object", "properties": {"id": {"type": "string"}}},
	},
	["type"],
	description='Where the new page goes in its parent page: {"type": "page_end"} (default), '
	'{"type": "page_start"}, or {"type": "after_block", "after_block": {"id": "<block id>"}}.',
)
"""Where a created page goes (``PagePositionSchema``: page_end, page_start, after_block).

Checked against @notionhq/client 5.26.0 (Notion-Version 2026-03-11): pages.create takes
``page_start``/``page_end`` where blocks.children.append takes ``start``/``end``.
"""


def block_content(kind: str) -> dict[str, Any]:
	"""The input carrying new content of one block type (updateBlock).

	Args:
		kind: The block type, e.g. ``paragraph``.
	"""
	return obj(
		{},
		description=f"New content of a `{kind}` block (only for a block of that type), e.g. "
		'{"rich_text": [{"type": "text", "text": {"content": "..."}}]}.',
	)


BLOCK_TYPES = [
	"paragraph",
	"heading_1",
	"heading_2",
	"heading_3",
	"bulleted_list_item",
	"numbered_list_item",
	"to_do",
	"toggle",
	"quote",
	"callout",
	"code",
]
