"""Dropbox API v2: files, folders, uploads (with upload sessions), downloads and shared links.

RPC routes live on ``api.dropboxapi.com`` and take a JSON body. Content routes (upload, download)
live on ``content.dropboxapi.com``: their arguments travel as JSON in the ``Dropbox-API-Arg``
header, built with the ``json`` filter, and their payload is the raw file bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	FunctionTool,
	HttpTool,
	Integration,
	OAuth2Credential,
	file_info_tool,
)
from openmolt_core.integrations.schema import obj

if TYPE_CHECKING:
	from openmolt_core.plugins import IntegrationRegistrar

__all__ = ["INTEGRATION", "register_integrations"]

API = "https://api.dropboxapi.com/2"
CONTENT = "https://content.dropboxapi.com/2"

_PATH = {
	"type": "string",
	"description": (
		'A Dropbox path starting with "/" (e.g. "/Reports/q3.pdf"), a file id ("id:abc123") or '
		'a revision ("rev:a1c10ce0dd78"). Paths are case-insensitive.'
	),
}
_FILE = {
	"type": "string",
	"description": (
		"A file reference: openmolt-file:<id> from an earlier tool, a data: URL, or a path from "
		"the fileSystem integration."
	),
}
_MODE = {
	"type": "string",
	"enum": ["add", "overwrite"],
	"default": "add",
	"description": (
		'"add" never overwrites (with autorename a conflicting name gets a suffix); '
		'"overwrite" replaces an existing file at the path.'
	),
}
_AUTORENAME = {
	"type": "boolean",
	"default": False,
	"description": "On a name conflict, let Dropbox pick a free name instead of failing.",
}
_MUTE = {
	"type": "boolean",
	"default": False,
	"description": "Do not notify the user's devices about this change.",
}
_CURSOR = {"type": "string", "description": "The cursor returned by the previous call."}
_CHUNK = (
	" For a chunk of a large file give the file with its byte range, "
	"'openmolt-file:<id>#bytes=<start>-<end>' (both inclusive): fileInfo with chunkSize lists "
	"each chunk's ranged reference."
)
_SESSION_ID = {
	"type": "string",
	"description": "The session_id returned by uploadSessionStart.",
}
_OFFSET = {
	"type": "integer",
	"minimum": 0,
	"description": (
		"Bytes uploaded so far in this session (the sum of all earlier chunks): the start byte "
		"of this chunk."
	),
}

_METADATA_OUT: dict[str, Any] = {
	"type": "object",
	"description": "File or folder metadata; '.tag' is 'file', 'folder' or 'deleted'.",
	"properties": {
		".tag": {"type": "string"},
		"id": {"type": "string"},
		"name": {"type": "string"},
		"path_display": {"type": "string"},
		"size": {"type": "integer"},
		"rev": {"type": "string"},
		"server_modified": {"type": "string"},
	},
}

_COMMIT = (
	'"commit": {"path": {{ input.path | json }}, '
	'"mode": {{ input.mode | default: "add" | json }}, '
	'"autorename": {{ input.autorename | default: false | json }}, '
	'"mute": {{ input.mute | default: false | json }}}'
)
_SESSION_CURSOR = '"cursor": {"session_id": {{ input.sessionId | json }}, "offset": {{ input.byteOffset | json }}}'

_OCTET = {"Content-Type": "application/octet-stream"}


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
	return obj(properties, required or (), closed=True)


def _content_upload(
	handle: str,
	description: str,
	route: str,
	arg: str,
	properties: dict[str, Any],
	required: list[str],
) -> HttpTool:
	return HttpTool(
		handle=handle,
		description=description,
		scopes=["write"],
		method="POST",
		base_url=CONTENT,
		endpoint=route,
		headers={"Dropbox-API-Arg": arg, **_OCTET},
		request_format="binary",
		body="{{ input.file }}",
		input_schema=_schema(properties, required),
	)


TOOLS: list[HttpTool | FunctionTool] = [
	HttpTool(
		handle="listFolder",
		description=(
			"List the files and folders in a folder. Returns entries, a cursor and has_more; "
			"when has_more is true call listFolderContinue with the cursor."
		),
		scopes=["read"],
		method="POST",
		endpoint="/files/list_folder",
		body={
			"path": "{{ input.path }}",
			"recursive": "{{ input.recursive }}",
			"limit": "{{ input.maxEntries }}",
			"include_deleted": "{{ input.includeDeleted }}",
			"include_media_info": "{{ input.includeMediaInfo }}",
		},
		input_schema=_schema(
			{
				"path": {
					"type": "string",
					"default": "",
					"description": 'The folder path; "" (empty) is the root of the Dropbox.',
				},
				"recursive": {
					"type": "boolean",
					"default": False,
					"description": "Also list the contents of every subfolder.",
				},
				"maxEntries": {
					"type": "integer",
					"minimum": 1,
					"maximum": 2000,
					"description": "Approximate maximum number of entries per page.",
				},
				"includeDeleted": {
					"type": "boolean",
					"default": False,
					"description": "Include entries for files and folders that were deleted.",
				},
				"includeMediaInfo": {
					"type": "boolean",
					"default": False,
					"description": "Deprecated by Dropbox; has no effect on most accounts.",
				},
			},
			["path"],
		),
		output_schema={
			"type": "object",
			"properties": {
				"entries": {"type": "array", "items": _METADATA_OUT},
				"cursor": {"type": "string"},
				"has_more": {"type": "boolean"},
			},
		},
	),
	HttpTool(
		handle="listFolderContinue",
		description="Get the next page of a folder listing, using the cursor of listFolder.",
		scopes=["read"],
		method="POST",
		endpoint="/files/list_folder/continue",
		body={"cursor": "{{ input.cursor }}"},
		input_schema=_schema({"cursor": _CURSOR}, ["cursor"]),
	),
	HttpTool(
		handle="getMetadata",
		description="Get the metadata of one file or folder (name, id, size, revision, dates).",
		scopes=["read"],
		method="POST",
		endpoint="/files/get_metadata",
		body={"path": "{{ input.path }}", "include_deleted": "{{ input.includeDeleted }}"},
		input_schema=_schema(
			{
				"path": _PATH,
				"includeDeleted": {
					"type": "boolean",
					"default": False,
					"description": "Return metadata even if the file or folder was deleted.",
				},
			},
			["path"],
		),
		output_schema=_METADATA_OUT,
	),
	HttpTool(
		handle="search",
		description=(
			"Search files and folders by name and content. Returns matches (each with metadata), "
			"has_more and a cursor."
		),
		scopes=["read"],
		method="POST",
		endpoint="/files/search_v2",
		body={
			"query": "{{ input.query }}",
			"options": {
				"path": "{{ input.path }}",
				"max_results": "{{ input.maxResults }}",
				"file_extensions": "{{ input.fileExtensions }}",
				"filename_only": "{{ input.filenameOnly }}",
			},
		},
		input_schema=_schema(
			{
				"query": {"type": "string", "description": "The words to search for."},
				"path": {
					"type": "string",
					"description": 'Only search inside this folder (e.g. "/Projects").',
				},
				"maxResults": {
					"type": "integer",
					"minimum": 1,
					"maximum": 1000,
					"description": "Maximum number of results (default 100).",
				},
				"fileExtensions": {
					"type": "array",
					"items": {"type": "string"},
					"description": 'Only files with these extensions, without the dot (["pdf"]).',
				},
				"filenameOnly": {
					"type": "boolean",
					"default": False,
					"description": "Match file names only, not file contents.",
				},
			},
			["query"],
		),
	),
	HttpTool(
		handle="download",
		description=(
			"Download a file. The bytes are saved as a file reference (never shown inline); "
			"the file's Dropbox metadata is in Dropbox-API-Result."
		),
		scopes=["read"],
		method="POST",
		base_url=CONTENT,
		endpoint="/files/download",
		headers={"Dropbox-API-Arg": '{"path": {{ input.path | json }}}'},
		response_format="binary",
		response_headers=["Dropbox-API-Result"],
		input_schema=_schema({"path": _PATH}, ["path"]),
		output_schema={
			"type": "object",
			"properties": {
				"file": {"type": "string", "description": "openmolt-file:<id> of the bytes."},
				"mediaType": {"type": "string"},
				"size": {"type": "integer"},
				"name": {"type": "string"},
				"headers": {
					"type": "object",
					"properties": {"Dropbox-API-Result": _METADATA_OUT},
				},
			},
		},
	),
	_content_upload(
		"upload",
		"Upload a file of up to 150 MiB in one request. For larger files use the upload session tools.",
		"/files/upload",
		'{"path": {{ input.path | json }}, "mode": {{ input.mode | default: "add" | json }}, '
		'"autorename": {{ input.autorename | default: false | json }}, '
		'"mute": {{ input.mute | default: false | json }}, "strict_conflict": false}',
		{
			"path": {
				"type": "string",
				"description": 'Where to save the file, including its name ("/Reports/q3.pdf").',
			},
			"file": _FILE,
			"mode": _MODE,
			"autorename": _AUTORENAME,
			"mute": _MUTE,
		},
		["path", "file"],
	),
	_content_upload(
		"uploadSessionStart",
		(
			"Start an upload session for a file larger than 150 MiB, sending its first chunk "
			"(each chunk up to 150 MiB, all but the last a multiple of 4 MiB). Returns session_id."
		),
		"/files/upload_session/start",
		'{"close": {{ input.close | default: false | json }}}',
		{
			"file": {
				**_FILE,
				"description": "The first chunk, as a " + _FILE["description"] + _CHUNK,
			},
			"close": {
				"type": "boolean",
				"default": False,
				"description": "True if this chunk is the whole file (no more appends).",
			},
		},
		["file"],
	),
	_content_upload(
		"uploadSessionAppend",
		"Append the next chunk to an upload session at the given offset.",
		"/files/upload_session/append_v2",
		"{" + _SESSION_CURSOR + ', "close": {{ input.close | default: false | json }}}',
		{
			"sessionId": _SESSION_ID,
			"byteOffset": _OFFSET,
			"file": {
				**_FILE,
				"description": "The next chunk, as a " + _FILE["description"] + _CHUNK,
			},
			"close": {
				"type": "boolean",
				"default": False,
				"description": "True if this is the last chunk.",
			},
		},
		["sessionId", "byteOffset", "file"],
	),
	_content_upload(
		"uploadSessionFinish",
		(
			"Finish an upload session: send the last chunk (may be an empty file) and save the "
			"whole file at a path. Returns the file's metadata."
		),
		"/files/upload_session/finish",
		"{" + _SESSION_CURSOR + ", " + _COMMIT + "}",
		{
			"sessionId": _SESSION_ID,
			"byteOffset": _OFFSET,
			"file": {
				**_FILE,
				"description": "The last chunk, as a " + _FILE["description"] + _CHUNK,
			},
			"path": {
				"type": "string",
				"description": 'Where to save the file, including its name ("/Videos/talk.mp4").',
			},
			"mode": _MODE,
			"autorename": _AUTORENAME,
			"mute": _MUTE,
		},
		["sessionId", "byteOffset", "file", "path"],
	),
	HttpTool(
		handle="createFolder",
		description="Create a folder (parents are created as needed).",
		scopes=["write"],
		method="POST",
		endpoint="/files/create_folder_v2",
		body={"path": "{{ input.path }}", "autorename": "{{ input.autorename }}"},
		input_schema=_schema(
			{
				"path": {
					"type": "string",
					"description": 'The new folder\'s path ("/Archive/2026").',
				},
				"autorename": _AUTORENAME,
			},
			["path"],
		),
	),
	HttpTool(
		handle="delete",
		description="Delete a file or a folder with everything in it (recoverable for a while).",
		scopes=["delete"],
		method="POST",
		endpoint="/files/delete_v2",
		body={"path": "{{ input.path }}"},
		input_schema=_schema({"path": _PATH}, ["path"]),
	),
	HttpTool(
		handle="move",
		description="Move or rename a file or folder.",
		scopes=["write"],
		method="POST",
		endpoint="/files/move_v2",
		body={
			"from_path": "{{ input.fromPath }}",
			"to_path": "{{ input.toPath }}",
			"autorename": "{{ input.autorename }}",
		},
		input_schema=_schema(
			{
				"fromPath": {**_PATH, "description": "What to move. " + _PATH["description"]},
				"toPath": {"type": "string", "description": "The new path, including the name."},
				"autorename": _AUTORENAME,
			},
			["fromPath", "toPath"],
		),
	),
	HttpTool(
		handle="copy",
		description="Copy a file or folder to a new path.",
		scopes=["write"],
		method="POST",
		endpoint="/files/copy_v2",
		body={
			"from_path": "{{ input.fromPath }}",
			"to_path": "{{ input.toPath }}",
			"autorename": "{{ input.autorename }}",
		},
		input_schema=_schema(
			{
				"fromPath": {**_PATH, "description": "What to copy. " + _PATH["description"]},
				"toPath": {"type": "string", "description": "The copy's path, including the name."},
				"autorename": _AUTORENAME,
			},
			["fromPath", "toPath"],
		),
	),
	HttpTool(
		handle="getTemporaryLink",
		description="Get a direct download link to a file that works for 4 hours, without sign-in.",
		scopes=["share"],
		method="POST",
		endpoint="/files/get_temporary_link",
		body={"path": "{{ input.path }}"},
		input_schema=_schema({"path": _PATH}, ["path"]),
	),
	HttpTool(
		handle="createSharedLink",
		description=(
			"Create a shared link to a file or folder. Fails with shared_link_already_exists if "
			"one exists: then use listSharedLinks."
		),
		scopes=["share"],
		method="POST",
		endpoint="/sharing/create_shared_link_with_settings",
		body={
			"path": "{{ input.path }}",
			"settings": {
				"requested_visibility": "{{ input.visibility }}",
				"audience": "{{ input.audience }}",
				"expires": "{{ input.expires }}",
				"allow_download": "{{ input.allowDownload }}",
			},
		},
		input_schema=_schema(
			{
				"path": _PATH,
				"visibility": {
					"type": "string",
					"enum": ["public", "team_only", "password"],
					"description": "Who can open the link (plans without teams only have public).",
				},
				"audience": {
					"type": "string",
					"enum": ["public", "team", "no_one"],
					"description": "Who the link is meant for (newer form of visibility).",
				},
				"expires": {
					"type": "string",
					"description": 'Expiry as UTC "YYYY-MM-DDTHH:MM:SSZ" (paid plans only).',
				},
				"allowDownload": {
					"type": "boolean",
					"description": "Whether people with the link may download the file.",
				},
			},
			["path"],
		),
	),
	HttpTool(
		handle="listSharedLinks",
		description="List shared links, of one file or folder or of the whole account.",
		scopes=["share"],
		method="POST",
		endpoint="/sharing/list_shared_links",
		body={
			"path": "{{ input.path }}",
			"direct_only": "{{ input.directOnly }}",
			"cursor": "{{ input.cursor }}",
		},
		input_schema=_schema(
			{
				"path": {
					**_PATH,
					"description": "Only links to this item. " + _PATH["description"],
				},
				"directOnly": {
					"type": "boolean",
					"description": "Only links to this exact item, not to its parent folders.",
				},
				"cursor": {**_CURSOR, "description": "The cursor of the previous page, if any."},
			}
		),
	),
	HttpTool(
		handle="getCurrentAccount",
		description="Get the signed-in account: name, email, account id and root namespace.",
		scopes=["account"],
		method="POST",
		endpoint="/users/get_current_account",
		input_schema=_schema({}),
	),
	file_info_tool(scopes=["write"]),
]

DOCS = """\
## Get a token

1. Open the [Dropbox App Console](https://www.dropbox.com/developers/apps) and create an app
   (Scoped access; "App folder" or "Full Dropbox").
2. On the **Permissions** tab tick the scopes the agent needs: `account_info.read`,
   `files.metadata.read`, `files.metadata.write`, `files.content.read`, `files.content.write`,
   `sharing.read`, `sharing.write`, then **Submit**.
3. For a quick test, **Generate** an access token on the **Settings** tab and pass it as
   `config.accessToken` with `credential={"type": "bearer", ...}` (it expires after 4 hours).
4. For a long-lived setup use OAuth2 with a refresh token: send the user to
   `https://www.dropbox.com/oauth2/authorize?client_id=APP_KEY&response_type=code&token_access_type=offline`,
   exchange the code at `https://api.dropboxapi.com/oauth2/token`, and give OpenMolt
   `clientId` (app key), `clientSecret` (app secret) and `refreshToken`. OpenMolt refreshes the
   access token when it expires.

```python
agent = om.create_agent(
    name="Filer",
    model="openai:gpt-5-mini",
    integrations=[{
        "integration": "dropbox",
        "credential": {"type": "oauth2", "config": {
            "clientId": "...", "clientSecret": "...", "refreshToken": "...",
        }},
        "scopes": ["read", "write"],
    }],
)
```

Large files (over 150 MiB): plan the chunks with `fileInfo` (`chunkSize` a multiple of 4 MiB,
e.g. 8388608), start an upload session with the first chunk, append the following chunks with
`byteOffset` set to each chunk's start, and finish with the last chunk and the target path. Each
chunk is the file's reference with a byte range (`openmolt-file:<id>#bytes=8388608-16777215`),
so the file is never split by hand.
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		"listFolder*": ["private"],
		"getMetadata": ["private"],
		"search": ["private"],
		"download": ["private"],
		"getCurrentAccount": ["private"],
		"createSharedLink": ["outbound"],
		"getTemporaryLink": ["outbound"],
	},
	id="dropbox",
	name="Dropbox",
	description="Files and folders in Dropbox: list, search, upload, download, move, share.",
	api_version="2",
	api_setup=ApiSetup(base_url=API),
	credential_setup=[
		OAuth2Credential(
			type="oauth2",
			auth_url="https://www.dropbox.com/oauth2/authorize",
			token_url="https://api.dropboxapi.com/oauth2/token",
			client_id="{{ config.clientId }}",
			client_secret="{{ config.clientSecret }}",
			refresh_token="{{ config.refreshToken }}",
			scopes=[
				"account_info.read",
				"files.metadata.read",
				"files.metadata.write",
				"files.content.read",
				"files.content.write",
				"sharing.read",
				"sharing.write",
			],
			auth_params={"token_access_type": "offline"},
		),
		BearerCredential(
			type="bearer", headers={"Authorization": "Bearer {{ config.accessToken }}"}
		),
	],
	scopes={
		"read": "List, search and download files and read their metadata.",
		"write": "Upload files, create folders, move and copy.",
		"delete": "Delete files and folders.",
		"share": "Create and list shared links and temporary download links.",
		"account": "Read the signed-in account's profile.",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the Dropbox integration."""
	register(INTEGRATION, id="dropbox")
