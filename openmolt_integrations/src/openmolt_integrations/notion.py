"""Notion: pages (also as Markdown), databases and their data sources, blocks, comments, users, files.

Targets ``Notion-Version: 2026-03-11``, the data-source model: a database holds one or more data
sources, and rows are pages whose parent is a data source. Version 2026-03-11 uses ``in_trash``
(not ``archived``) and ``position`` (not ``after``) when appending blocks.
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
from openmolt_core.integrations.schema import array, boolean, nullable, obj, passthrough, string
from openmolt_integrations import _notion

__all__ = ["INTEGRATION", "NOTION_VERSION", "TOOLS", "register_integrations"]

NOTION_VERSION = "2026-03-11"
"""The ``Notion-Version`` header every request sends."""


TOOLS = [
	HttpTool(
		handle="search",
		description=(
			"Search pages and data sources shared with the integration by title. Use an empty query "
			"to list everything shared. Results are paginated."
		),
		scopes=["read"],
		method="POST",
		endpoint="/v1/search",
		body=passthrough("query", "filter", "sort", "start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {
				"query": string("Text to match against titles; omit to list everything."),
				"filter": obj(
					{
						"property": {"type": "string", "enum": ["object"]},
						"value": {"type": "string", "enum": ["page", "data_source"]},
					},
					["property", "value"],
					description='Limit to one kind of object: {"property": "object", "value": "page"} or '
					'{"property": "object", "value": "data_source"}.',
				),
				"sort": obj(
					{
						"direction": {"type": "string", "enum": ["ascending", "descending"]},
						"timestamp": {"type": "string", "enum": ["last_edited_time"]},
					},
					["direction", "timestamp"],
					description='Order: {"direction": "descending", "timestamp": "last_edited_time"}.',
				),
				"start_cursor": _notion.CURSOR,
				"page_size": _notion.PAGE_SIZE,
			},
		},
		output_schema=_notion.LIST_OUTPUT,
	),
	HttpTool(
		handle="getPage",
		description="Get a page's properties (not its content; use getPageMarkdown or listBlockChildren).",
		scopes=["read"],
		method="GET",
		endpoint="/v1/pages/{{ input.page_id }}",
		query_params=passthrough("filter_properties"),
		input_schema={
			"type": "object",
			"properties": {
				"page_id": _notion.object_id("page"),
				"filter_properties": array(
					{"type": "string"}, "Only return these property ids (default: all properties)."
				),
			},
			"required": ["page_id"],
		},
	),
	HttpTool(
		handle="getPageMarkdown",
		description="Get a page's content as Markdown (Notion-flavoured), the easiest way to read a page.",
		scopes=["read"],
		method="GET",
		endpoint="/v1/pages/{{ input.page_id }}/markdown",
		query_params=passthrough("include_transcript"),
		input_schema={
			"type": "object",
			"properties": {
				"page_id": _notion.object_id("page"),
				"include_transcript": boolean("Include meeting-note transcripts.", default=False),
			},
			"required": ["page_id"],
		},
	),
	HttpTool(
		handle="getPageProperty",
		description=(
			"Get one property value of a page in full, paginated: getPage and queryDataSource "
			"show at most 25 items of a title, rich_text, relation or people property and no "
			"rollup results. The property id is the `id` inside the page's property."
		),
		scopes=["read"],
		method="GET",
		# Notion shows property ids URL-encoded ("p%3Ax~"): decoded here, the path encodes once.
		endpoint="/v1/pages/{{ input.page_id }}/properties/{{ input.property_id | url_decode }}",
		query_params=passthrough("start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {
				"page_id": _notion.object_id("page"),
				"property_id": string(
					"The property's id: the `id` of the property in getPage's properties, e.g. "
					"'title' or 'p%3Ax~' (Notion shows ids URL-encoded; give it as shown)."
				),
				"start_cursor": _notion.CURSOR,
				"page_size": _notion.PAGE_SIZE,
			},
			"required": ["page_id", "property_id"],
		},
	),
	HttpTool(
		handle="createPage",
		description=(
			"Create a page under a page or as a row of a data source. Give the content either as "
			"`markdown` or as `children` blocks, not both. For a data-source row, `properties` must "
			"use that data source's property names."
		),
		scopes=["write"],
		method="POST",
		endpoint="/v1/pages",
		body=passthrough(
			"parent", "properties", "markdown", "children", "icon", "cover", "template", "position"
		),
		input_schema={
			"type": "object",
			"properties": {
				"parent": obj(
					{
						"type": {"type": "string", "enum": ["page_id", "data_source_id"]},
						"page_id": {"type": "string"},
						"data_source_id": {"type": "string"},
					},
					["type"],
					description='Where the page goes: {"type": "page_id", "page_id": "..."} or '
					'{"type": "data_source_id", "data_source_id": "..."}.',
				),
				"properties": _notion.PROPERTIES,
				"markdown": string("Page content as Markdown (instead of `children`)."),
				"children": _notion.BLOCKS,
				"icon": _notion.ICON,
				"cover": _notion.COVER,
				"template": obj(
					{},
					description='Apply a data source template: {"type": "default"} or '
					'{"type": "template_id", "template_id": "..."}. Leave content empty when used.',
				),
				"position": _notion.PAGE_POSITION,
			},
			"required": ["parent"],
		},
	),
	HttpTool(
		handle="updatePage",
		description=(
			"Update a page's properties, icon or cover, lock it, or move it to the trash "
			"(in_trash: true) and back."
		),
		scopes=["write"],
		method="PATCH",
		endpoint="/v1/pages/{{ input.page_id }}",
		body=passthrough("properties", "icon", "cover", "in_trash", "is_locked"),
		input_schema={
			"type": "object",
			"properties": {
				"page_id": _notion.object_id("page"),
				"properties": _notion.PROPERTIES,
				"icon": nullable(_notion.ICON, "null removes the icon."),
				"cover": nullable(_notion.COVER, "null removes the cover."),
				"in_trash": boolean("true moves the page to the trash, false restores it."),
				"is_locked": boolean("Lock the page against edits in the Notion app."),
			},
			"required": ["page_id"],
		},
	),
	HttpTool(
		handle="updatePageMarkdown",
		description=(
			"Edit a page's content with Markdown. Set `type` and give the object of the same name: "
			"insert_content (add Markdown at the start, end, or after a text snippet), "
			"replace_content_range (replace the range matching `content_range`), update_content "
			"(search-and-replace pairs) or replace_content (replace the whole page)."
		),
		scopes=["write"],
		method="PATCH",
		endpoint="/v1/pages/{{ input.page_id }}/markdown",
		body=passthrough(
			"type", "insert_content", "replace_content_range", "update_content", "replace_content"
		),
		input_schema={
			"type": "object",
			"properties": {
				"page_id": _notion.object_id("page"),
				"type": string(
					"Which edit to make; the object with this name must be given.",
					enum=[
						"insert_content",
						"replace_content_range",
						"update_content",
						"replace_content",
					],
				),
				"insert_content": obj(
					{
						"content": {"type": "string"},
						"after": {"type": "string"},
						"position": {
							"type": "object",
							"properties": {"type": {"type": "string", "enum": ["start", "end"]}},
						},
					},
					["content"],
					description='{"content": "<markdown>", "position": {"type": "end"}} or '
					'{"content": "...", "after": "<text snippet to insert after>"}.',
				),
				"replace_content_range": obj(
					{
						"content": {"type": "string"},
						"content_range": {"type": "string"},
						"allow_deleting_content": {"type": "boolean"},
					},
					["content", "content_range"],
					description='{"content": "<markdown>", "content_range": "<start text>...<end text>", '
					'"allow_deleting_content": false}.',
				),
				"update_content": obj(
					{
						"content_updates": {
							"type": "array",
							"items": {
								"type": "object",
								"properties": {
									"old_str": {"type": "string"},
									"new_str": {"type": "string"},
									"replace_all_matches": {"type": "boolean"},
								},
								"required": ["old_str", "new_str"],
							},
						},
						"allow_deleting_content": {"type": "boolean"},
					},
					["content_updates"],
					description='{"content_updates": [{"old_str": "...", "new_str": "...", "replace_all_matches": false}]}.',
				),
				"replace_content": obj(
					{
						"new_str": {"type": "string"},
						"allow_deleting_content": {"type": "boolean"},
					},
					["new_str"],
					description='{"new_str": "<markdown for the whole page>", "allow_deleting_content": true}.',
				),
			},
			"required": ["page_id", "type"],
		},
	),
	HttpTool(
		handle="getDatabase",
		description=(
			"Get a database: its title and its `data_sources` (id and name). Query rows with "
			"queryDataSource using one of those data source ids."
		),
		scopes=["read"],
		method="GET",
		endpoint="/v1/databases/{{ input.database_id }}",
		input_schema={
			"type": "object",
			"properties": {"database_id": _notion.object_id("database")},
			"required": ["database_id"],
		},
	),
	HttpTool(
		handle="getDataSource",
		description="Get a data source and its property schema (names, types, select options).",
		scopes=["read"],
		method="GET",
		endpoint="/v1/data_sources/{{ input.data_source_id }}",
		input_schema={
			"type": "object",
			"properties": {"data_source_id": _notion.object_id("data source")},
			"required": ["data_source_id"],
		},
	),
	HttpTool(
		handle="createDatabase",
		description=(
			"Create a database under a page, with its first data source's properties (columns). "
			"Rows are then pages created with createPage in that data source (its id is in the "
			"result's data_sources)."
		),
		scopes=["write"],
		method="POST",
		endpoint="/v1/databases",
		body={
			**passthrough("parent", "title", "description", "is_inline", "icon", "cover"),
			"initial_data_source": passthrough("properties"),
		},
		input_schema={
			"type": "object",
			"properties": {
				"parent": obj(
					{
						"type": {"type": "string", "enum": ["page_id"]},
						"page_id": {"type": "string"},
					},
					["type", "page_id"],
					description='The page that holds the database: {"type": "page_id", "page_id": "..."}.',
				),
				"title": _notion.RICH_TEXT,
				"description": _notion.RICH_TEXT,
				"is_inline": boolean(
					"Show the database inside the parent page's content (default: a full-page child)."
				),
				"properties": _notion.PROPERTY_SCHEMA,
				"icon": _notion.ICON,
				"cover": _notion.COVER,
			},
			"required": ["parent"],
		},
	),
	HttpTool(
		handle="queryDataSource",
		description=(
			"Query the rows (pages) of a data source with an optional filter and sorts. "
			"Results are paginated."
		),
		scopes=["read"],
		method="POST",
		endpoint="/v1/data_sources/{{ input.data_source_id }}/query",
		query_params=passthrough("filter_properties"),
		body=passthrough("filter", "sorts", "start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {
				"data_source_id": _notion.object_id("data source"),
				"filter": obj(
					{},
					description='A Notion filter, e.g. {"property": "Status", "status": {"equals": "Done"}} or '
					'{"and": [{...}, {...}]}.',
				),
				"sorts": array(
					{"type": "object"},
					'Sort criteria, e.g. [{"property": "Due", "direction": "ascending"}] or '
					'[{"timestamp": "created_time", "direction": "descending"}].',
				),
				"filter_properties": array(
					{"type": "string"}, "Only return these property ids in each row."
				),
				"start_cursor": _notion.CURSOR,
				"page_size": _notion.PAGE_SIZE,
			},
			"required": ["data_source_id"],
		},
		output_schema=_notion.LIST_OUTPUT,
	),
	HttpTool(
		handle="listBlockChildren",
		description="List the child blocks of a page or block (one level; paginated).",
		scopes=["read"],
		method="GET",
		endpoint="/v1/blocks/{{ input.block_id }}/children",
		query_params=passthrough("start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {
				"block_id": _notion.object_id("page or block"),
				"start_cursor": _notion.CURSOR,
				"page_size": _notion.PAGE_SIZE,
			},
			"required": ["block_id"],
		},
		output_schema=_notion.LIST_OUTPUT,
	),
	HttpTool(
		handle="appendBlockChildren",
		description="Append blocks to a page or block, at the end by default.",
		scopes=["write"],
		method="PATCH",
		endpoint="/v1/blocks/{{ input.block_id }}/children",
		body=passthrough("children", "position"),
		input_schema={
			"type": "object",
			"properties": {
				"block_id": _notion.object_id("page or block"),
				"children": _notion.BLOCKS,
				"position": _notion.POSITION,
			},
			"required": ["block_id", "children"],
		},
	),
	HttpTool(
		handle="updateBlock",
		description=(
			"Update one block: give the new content under the block's own type (e.g. `paragraph` "
			"for a paragraph block), or in_trash: true to delete it."
		),
		scopes=["write"],
		method="PATCH",
		endpoint="/v1/blocks/{{ input.block_id }}",
		body=passthrough(*_notion.BLOCK_TYPES, "in_trash"),
		input_schema={
			"type": "object",
			"properties": {
				"block_id": _notion.object_id("block"),
				**{kind: _notion.block_content(kind) for kind in _notion.BLOCK_TYPES},
				"in_trash": boolean("true deletes (trashes) the block, false restores it."),
			},
			"required": ["block_id"],
		},
	),
	HttpTool(
		handle="listComments",
		description="List the open comments on a page or block (paginated).",
		scopes=["read"],
		method="GET",
		endpoint="/v1/comments",
		query_params=passthrough("block_id", "start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {
				"block_id": _notion.object_id("page or block"),
				"start_cursor": _notion.CURSOR,
				"page_size": _notion.PAGE_SIZE,
			},
			"required": ["block_id"],
		},
		output_schema=_notion.LIST_OUTPUT,
	),
	HttpTool(
		handle="createComment",
		description=(
			"Comment on a page (parent) or reply in an existing discussion (discussion_id). Give the "
			"text as `markdown` or as `rich_text`."
		),
		scopes=["comment"],
		method="POST",
		endpoint="/v1/comments",
		body=passthrough("parent", "discussion_id", "markdown", "rich_text"),
		input_schema={
			"type": "object",
			"properties": {
				"parent": obj(
					{"page_id": {"type": "string"}, "block_id": {"type": "string"}},
					description='The page or block to comment on: {"page_id": "..."} or {"block_id": "..."}.',
				),
				"discussion_id": string("Reply in this discussion thread instead."),
				"markdown": string("The comment as Markdown."),
				"rich_text": _notion.RICH_TEXT,
			},
		},
	),
	HttpTool(
		handle="listUsers",
		description="List the people and bots of the workspace (paginated).",
		scopes=["read"],
		method="GET",
		endpoint="/v1/users",
		query_params=passthrough("start_cursor", "page_size"),
		input_schema={
			"type": "object",
			"properties": {"start_cursor": _notion.CURSOR, "page_size": _notion.PAGE_SIZE},
		},
		output_schema=_notion.LIST_OUTPUT,
	),
	HttpTool(
		handle="createFileUpload",
		description=(
			"Start a file upload. mode single_part (default, files up to 20 MB): then call "
			"sendFileUpload with the file. mode external_url: Notion fetches `external_url` itself. "
			'Use the returned id in a block or property as {"type": "file_upload", "file_upload": {"id": "..."}}.'
		),
		scopes=["write"],
		method="POST",
		endpoint="/v1/file_uploads",
		body=passthrough("mode", "filename", "content_type", "external_url"),
		input_schema={
			"type": "object",
			"properties": {
				"mode": string(
					"single_part (send the bytes next) or external_url (Notion downloads them).",
					enum=["single_part", "external_url"],
					default="single_part",
				),
				"filename": string("File name with extension, e.g. report.pdf."),
				"content_type": string("MIME type, e.g. image/png."),
				"external_url": string("Public HTTPS URL to import (mode external_url)."),
			},
		},
	),
	HttpTool(
		handle="sendFileUpload",
		description="Send the bytes of a file for a single_part upload created by createFileUpload.",
		scopes=["write"],
		method="POST",
		endpoint="/v1/file_uploads/{{ input.file_upload_id }}/send",
		request_format="multipart",
		files=passthrough("file"),
		input_schema={
			"type": "object",
			"properties": {
				"file_upload_id": string("The id returned by createFileUpload."),
				"file": string(
					"A file reference: openmolt-file:<id> from an earlier tool, or a data: URL."
				),
			},
			"required": ["file_upload_id", "file"],
		},
	),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"createPage": [],
		"updatePage": [],
		"updatePageMarkdown": [],
		"createDatabase": [],
		"appendBlockChildren": [],
		"updateBlock": [],
		"createComment": [],
		"sendFileUpload": [],
		"search": ["private", "untrusted"],
		"getPage": ["private", "untrusted"],
		"getPageMarkdown": ["private", "untrusted"],
		"getPageProperty": ["private", "untrusted"],
		"queryDataSource": ["private", "untrusted"],
		"listBlockChildren": ["private", "untrusted"],
		"listComments": ["private", "untrusted"],
		"createFileUpload": ["outbound"],
		# Others' words: titles, descriptions and options collaborators write; people's names.
		"getDatabase": ["untrusted"],
		"getDataSource": ["untrusted"],
		"listUsers": ["private", "untrusted"],
	},
	id="notion",
	name="Notion",
	description="Read and write Notion pages, databases and data sources, blocks and comments.",
	api_version=NOTION_VERSION,
	api_setup=ApiSetup(
		base_url="https://api.notion.com",
		headers={"Notion-Version": NOTION_VERSION},
	),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"}),
		OAuth2Credential(
			type="oauth2",
			auth_url="https://api.notion.com/v1/oauth/authorize",
			token_url="https://api.notion.com/v1/oauth/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			auth_params={"owner": "user", "response_type": "code"},
			token_auth="basic",
			token_format="json",  # the token endpoint documents a JSON body
		),
	],
	scopes={
		"read": "Search and read pages, databases, data sources, blocks, comments and users.",
		"write": "Create and edit pages and blocks, trash them, and upload files.",
		"comment": "Add comments to pages and discussions.",
	},
	tools=TOOLS,
	docs="""## Get a token

**Internal integration (one workspace).** Open <https://www.notion.so/profile/integrations>,
choose *New integration*, pick the workspace, and copy the *Internal Integration Secret*
(`ntn_…`). Under *Capabilities* enable read, update and insert content, and comments if the agent
should comment. Then share each page or database with the integration (page menu → *Connections*).

```python
om = OpenMolt(integrations={"notion": {"apiKey": "ntn_..."}})
```

**Public integration (OAuth 2.0).** Make the integration public, add your redirect URI, and send
users to `https://api.notion.com/v1/oauth/authorize?client_id=…&response_type=code&owner=user&redirect_uri=…`.
Exchange the code at `https://api.notion.com/v1/oauth/token` (HTTP Basic with client id and
secret). Pass `{"type": "oauth2", "config": {"accessToken", "refreshToken", "clientId",
"clientSecret"}}` as the agent's credential. Notion has no OAuth scopes: access is what the user
shares during authorization.

Every request sends `Notion-Version: 2026-03-11`.
""",
)


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Notion integration."""
	register(INTEGRATION)
