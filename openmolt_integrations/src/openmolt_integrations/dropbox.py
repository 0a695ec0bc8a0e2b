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
from openmolt_core.integrations.schema import (
	array,
	boolean,
	integer,
	obj,
	passthrough,
	passthrough_of,
	string,
)

if TYPE_CHECKING:
	from openmolt_core.plugins import IntegrationRegistrar

__all__ = ["INTEGRATION", "register_integrations"]

API = "https://api.dropboxapi.com/2"
CONTENT = "https://content.dropboxapi.com/2"

# Path patterns of the routes' arguments, as the dropbox SDK's stone validators declare them
# (each anchored: stone matches the whole string). Routes differ in what they accept.
_ANY_PATH = r"(/(.|[\r\n])*|id:.*)|(rev:[0-9a-f]{9,})|(ns:[0-9]+(/(.|[\r\n])*)?)"
_FOLDER_PATH = r"(/(.|[\r\n])*)?|id:.*|(ns:[0-9]+(/(.|[\r\n])*)?)"
_WRITE_PATH = r"(/(.|[\r\n])*)|(ns:[0-9]+(/(.|[\r\n])*)?)|(id:.*)"
_NEW_PATH = r"(/(.|[\r\n])*)|(ns:[0-9]+(/(.|[\r\n])*)?)"
_SLASH_PATH = r"/(.|[\r\n])*"
_TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"
"""Stone's Timestamp format ``%Y-%m-%dT%H:%M:%SZ``: UTC, whole seconds."""


def _path(pattern: str, description: str) -> dict[str, Any]:
	return string(description, pattern=f"^(?:{pattern})$")


_PATH_TEXT = (
	'A Dropbox path starting with "/" (e.g. "/Reports/q3.pdf"), a file id ("id:abc123") or '
	'a revision ("rev:a1c10ce0dd78"). Paths are case-insensitive.'
)
_PATH = _path(_ANY_PATH, _PATH_TEXT)
_FILE = string(
	"A file reference: openmolt-file:<id> from an earlier tool, a data: URL, or a path from "
	"the fileSystem integration."
)
_MODE = string(
	'"add" never overwrites (with autorename a conflicting name gets a suffix); '
	'"overwrite" replaces an existing file at the path.',
	enum=["add", "overwrite"],
	default="add",
)
_AUTORENAME = boolean(
	"On a name conflict, let Dropbox pick a free name instead of failing.", default=False
)
_MUTE = boolean("Do not notify the user's devices about this change.", default=False)
_CURSOR = string("The cursor returned by the previous call.")
_CHUNK = (
	" For a chunk of a large file give the file with its byte range, "
	"'openmolt-file:<id>#bytes=<start>-<end>' (both inclusive): fileInfo with chunkSize lists "
	"each chunk's ranged reference."
)
_SESSION_ID = string("The session_id returned by uploadSessionStart.")
_OFFSET = integer(
	"Bytes uploaded so far in this session (the sum of all earlier chunks): the start byte "
	"of this chunk.",
	minimum=0,
)

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
_SESSION_CURSOR = (
	'"cursor": {"session_id": {{ input.session_id | json }}, '
	'"offset": {{ input["offset"] | json }}}'
)

_OCTET = {"Content-Type": "application/octet-stream"}


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
		input_schema=obj(properties, required, closed=True),
	)


_LIST_FOLDER = obj(
	{
		"path": _path(_FOLDER_PATH, 'The folder path; "" (empty) is the root of the Dropbox.')
		| {"default": ""},
		"recursive": boolean("Also list the contents of every subfolder.", default=False),
		"limit": integer(
			"Approximate maximum number of entries per page.", minimum=1, maximum=2000
		),
		"include_deleted": boolean(
			"Include entries for files and folders that were deleted.", default=False
		),
		"include_media_info": boolean(
			"Deprecated by Dropbox; has no effect on most accounts.", default=False
		),
	},
	["path"],
	closed=True,
)
_GET_METADATA = obj(
	{
		"path": _PATH,
		"include_deleted": boolean(
			"Return metadata even if the file or folder was deleted.", default=False
		),
	},
	["path"],
	closed=True,
)
_SEARCH = obj(
	{
		"query": string("The words to search for.", maxLength=1000),
		"path": _path(_FOLDER_PATH, 'Only search inside this folder (e.g. "/Projects").'),
		"max_results": integer("Maximum number of results (default 100).", minimum=1, maximum=1000),
		"file_extensions": array(
			string(), 'Only files with these extensions, without the dot (["pdf"]).'
		),
		"filename_only": boolean("Match file names only, not file contents.", default=False),
	},
	["query"],
	closed=True,
)


def _relocate(verb: str, target: str) -> dict[str, Any]:
	return obj(
		{
			"from_path": _path(_WRITE_PATH, f"What to {verb}. " + _PATH_TEXT),
			"to_path": _path(_WRITE_PATH, f"The {target} path, including the name."),
			"autorename": _AUTORENAME,
		},
		["from_path", "to_path"],
		closed=True,
	)


_SHARED_LINK = obj(
	{
		"path": _PATH,
		"requested_visibility": string(
			"Who can open the link (plans without teams only have public).",
			enum=["public", "team_only", "password"],
		),
		"audience": string(
			"Who the link is meant for (newer form of requested_visibility).",
			enum=["public", "team", "no_one"],
		),
		"expires": string(
			'Expiry as UTC "YYYY-MM-DDTHH:MM:SSZ" (paid plans only).',
			format="date-time",
			pattern=_TIMESTAMP,
		),
		"allow_download": boolean("Whether people with the link may download the file."),
	},
	["path"],
	closed=True,
)
_LIST_SHARED_LINKS = obj(
	{
		"path": _path(_ANY_PATH, "Only links to this item. " + _PATH_TEXT),
		"direct_only": boolean("Only links to this exact item, not to its parent folders."),
		"cursor": string("The cursor of the previous page, if any."),
	},
	closed=True,
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
		body=passthrough_of(_LIST_FOLDER),
		input_schema=_LIST_FOLDER,
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
		body=passthrough("cursor"),
		input_schema=obj({"cursor": _CURSOR | {"minLength": 1}}, ["cursor"], closed=True),
	),
	HttpTool(
		handle="getMetadata",
		description="Get the metadata of one file or folder (name, id, size, revision, dates).",
		scopes=["read"],
		method="POST",
		endpoint="/files/get_metadata",
		body=passthrough_of(_GET_METADATA),
		input_schema=_GET_METADATA,
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
			**passthrough("query"),
			"options": passthrough_of(_SEARCH, exclude=["query"]),
		},
		input_schema=_SEARCH,
	),
	HttpTool(
		handle="searchContinue",
		description="Get the next page of search results, using the cursor of search (while has_more).",
		scopes=["read"],
		method="POST",
		endpoint="/files/search/continue_v2",
		body=passthrough("cursor"),
		input_schema=obj({"cursor": _CURSOR | {"minLength": 1}}, ["cursor"], closed=True),
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
		input_schema=obj({"path": _PATH}, ["path"], closed=True),
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
			"path": _path(
				_WRITE_PATH, 'Where to save the file, including its name ("/Reports/q3.pdf").'
			),
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
			"close": boolean(
				"True if this chunk is the whole file (no more appends).", default=False
			),
		},
		["file"],
	),
	_content_upload(
		"uploadSessionAppend",
		"Append the next chunk to an upload session at the given offset.",
		"/files/upload_session/append_v2",
		"{" + _SESSION_CURSOR + ', "close": {{ input.close | default: false | json }}}',
		{
			"session_id": _SESSION_ID,
			"offset": _OFFSET,
			"file": {
				**_FILE,
				"description": "The next chunk, as a " + _FILE["description"] + _CHUNK,
			},
			"close": boolean("True if this is the last chunk.", default=False),
		},
		["session_id", "offset", "file"],
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
			"session_id": _SESSION_ID,
			"offset": _OFFSET,
			"file": {
				**_FILE,
				"description": "The last chunk, as a " + _FILE["description"] + _CHUNK,
			},
			"path": _path(
				_WRITE_PATH, 'Where to save the file, including its name ("/Videos/talk.mp4").'
			),
			"mode": _MODE,
			"autorename": _AUTORENAME,
			"mute": _MUTE,
		},
		["session_id", "offset", "file", "path"],
	),
	HttpTool(
		handle="saveUrl",
		description=(
			"Have Dropbox download a public URL straight into a file (up to 20 GB; the bytes "
			"never pass through the agent). Returns async_job_id: poll saveUrlStatus with it "
			"until complete (the file's metadata) or failed."
		),
		scopes=["write"],
		method="POST",
		endpoint="/files/save_url",
		body=passthrough("path", "url"),
		input_schema=obj(
			{
				"path": _path(
					_SLASH_PATH,
					'Where to save the file, including its name ("/Inbox/report.pdf").',
				),
				"url": string("The public http(s) URL Dropbox downloads."),
			},
			["path", "url"],
			closed=True,
		),
	),
	HttpTool(
		handle="saveUrlStatus",
		description=(
			"Status of a saveUrl job: '.tag' in_progress (poll again in a few seconds), "
			"complete (with the saved file's metadata) or failed (with the reason)."
		),
		scopes=["write"],
		method="POST",
		endpoint="/files/save_url/check_job_status",
		body=passthrough("async_job_id"),
		input_schema=obj(
			{"async_job_id": string("The async_job_id saveUrl returned.", minLength=1)},
			["async_job_id"],
			closed=True,
		),
	),
	HttpTool(
		handle="createFolder",
		description="Create a folder (parents are created as needed).",
		scopes=["write"],
		method="POST",
		endpoint="/files/create_folder_v2",
		body=passthrough("path", "autorename"),
		input_schema=obj(
			{
				"path": _path(_NEW_PATH, 'The new folder\'s path ("/Archive/2026").'),
				"autorename": _AUTORENAME,
			},
			["path"],
			closed=True,
		),
	),
	HttpTool(
		handle="delete",
		description="Delete a file or a folder with everything in it (recoverable for a while).",
		scopes=["delete"],
		method="POST",
		endpoint="/files/delete_v2",
		body=passthrough("path"),
		input_schema=obj({"path": _path(_WRITE_PATH, _PATH_TEXT)}, ["path"], closed=True),
	),
	HttpTool(
		handle="move",
		description="Move or rename a file or folder.",
		scopes=["write"],
		method="POST",
		endpoint="/files/move_v2",
		body=passthrough("from_path", "to_path", "autorename"),
		input_schema=_relocate("move", "new"),
	),
	HttpTool(
		handle="copy",
		description="Copy a file or folder to a new path.",
		scopes=["write"],
		method="POST",
		endpoint="/files/copy_v2",
		body=passthrough("from_path", "to_path", "autorename"),
		input_schema=_relocate("copy", "copy's"),
	),
	HttpTool(
		handle="getTemporaryLink",
		description="Get a direct download link to a file that works for 4 hours, without sign-in.",
		scopes=["share"],
		method="POST",
		endpoint="/files/get_temporary_link",
		body=passthrough("path"),
		input_schema=obj({"path": _PATH}, ["path"], closed=True),
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
			**passthrough("path"),
			"settings": passthrough_of(_SHARED_LINK, exclude=["path"]),
		},
		input_schema=_SHARED_LINK,
	),
	HttpTool(
		handle="listSharedLinks",
		description="List shared links, of one file or folder or of the whole account.",
		scopes=["share"],
		method="POST",
		endpoint="/sharing/list_shared_links",
		body=passthrough_of(_LIST_SHARED_LINKS),
		input_schema=_LIST_SHARED_LINKS,
	),
	HttpTool(
		handle="getCurrentAccount",
		description="Get the signed-in account: name, email, account id and root namespace.",
		scopes=["account"],
		method="POST",
		endpoint="/users/get_current_account",
		input_schema=obj({}, closed=True),
	),
	HttpTool(
		handle="getSpaceUsage",
		description=(
			"How much space the account uses and has: used bytes, and the allocation "
			"(individual, or the team's shared quota) with its allocated bytes."
		),
		scopes=["account"],
		method="POST",
		endpoint="/users/get_space_usage",
		input_schema=obj({}, closed=True),
		output_schema={
			"type": "object",
			"properties": {
				"used": {"type": "integer", "description": "Bytes used."},
				"allocation": {
					"type": "object",
					"description": "'.tag' individual or team; allocated is the quota in bytes.",
					"properties": {
						".tag": {"type": "string"},
						"allocated": {"type": "integer"},
					},
				},
			},
		},
	),
	file_info_tool(scopes=["write"]),
]

DOCS = """\
## Get a token

1. Open the [Dropbox App Console](https://www.dropbox.com/developers/apps) and create an app
   (Scoped access; "App folder" or "Full Dropbox").
2. On the **Permissions** tab tick the scopes the agent needs: `account_info.read`,
   `files.metadata.read`, `files.content.read`, `files.content.write`, `sharing.read`,
   `sharing.write`, then **Submit** (`openmolt auth dropbox --scopes read` asks only for the
   read scopes and `account_info.read`).
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
`offset` set to each chunk's start, and finish with the last chunk and the target path. Each
chunk is the file's reference with a byte range (`openmolt-file:<id>#bytes=8388608-16777215`),
so the file is never split by hand.

A file on the web goes into Dropbox without passing through the agent: `saveUrl` with the
target path and the URL, then `saveUrlStatus` with the returned `async_job_id` until its
`.tag` is `complete` or `failed`. Dropbox itself fetches the URL, so the tool counts as sending
data out (whatever the URL carries reaches its host).
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"upload": [],
		"uploadSessionStart": [],
		"uploadSessionAppend": [],
		"uploadSessionFinish": [],
		"createFolder": [],
		"saveUrlStatus": [],
		"delete": [],
		"move": [],
		"copy": [],
		"listSharedLinks": [],
		"fileInfo": [],
		"listFolder*": ["private"],
		"getMetadata": ["private"],
		"search*": ["private"],
		# A file's bytes: a shared folder's, a file request's, or a tainted run's upload.
		"download": ["private", "untrusted"],
		"getCurrentAccount": ["private"],
		"getSpaceUsage": ["private"],
		"createSharedLink": ["outbound"],
		"getTemporaryLink": ["outbound"],
		# Dropbox fetches the URL: whatever the URL carries reaches its host.
		"saveUrl": ["outbound"],
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
				"files.content.read",
				"files.content.write",
				"sharing.read",
				"sharing.write",
			],
			# Each tool scope asks for the scope attribute of its tools' routes (stone's route
			# attrs); account_info.read, which Dropbox requires of every user-linked app, is in
			# no entry, so it is asked always.
			scope_map={
				"read": ["files.metadata.read", "files.content.read"],
				"write": ["files.content.write"],
				"delete": ["files.content.write"],
				"share": ["files.content.read", "sharing.read", "sharing.write"],
				"account": [],
			},
			auth_params={"token_access_type": "offline"},
			# Dropbox: PKCE (S256) supported, and with it the app secret is optional.
			pkce="supported",
			client_secret_required=False,
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
		"account": "Read the signed-in account's profile and space usage.",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the Dropbox integration."""
	register(INTEGRATION, id="dropbox")
