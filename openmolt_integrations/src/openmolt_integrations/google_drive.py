"""Google Drive (API v3): search, read, upload (multipart, resumable, in chunks), download, export and share files."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, HttpTool, Integration, file_info_tool
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._google import (
	ENCODERS,
	PAGE_TOKEN,
	UPLOAD_ID,
	google_oauth2,
	resumable_session_tools,
	token_guide,
)

__all__ = ["INTEGRATION", "TOOLS", "register_integrations"]

_SCOPES = {"https://www.googleapis.com/auth/drive": "See, edit, create and delete all Drive files."}

_FILE_FIELDS = "id,name,mimeType,size,modifiedTime,createdTime,parents,webViewLink,trashed,owners(emailAddress,displayName)"
_FILE_ID = {
	"type": "string",
	"description": "The file or folder id (from listFiles, or the id in its Drive URL).",
}
_FIELDS = {
	"type": "string",
	"description": f"Which file fields to return, comma-separated (default '{_FILE_FIELDS}'). Add e.g. 'description,md5Checksum,capabilities' when needed.",
}
_SHARED = {
	"type": "boolean",
	"default": True,
	"description": "Whether shared drives are supported (default true).",
}
_PARENTS = array({"type": "string"}, "Ids of the folder(s) to put it in (default: My Drive root).")
_FILE_REF = {
	"type": "string",
	"description": "The file content as a file reference: 'openmolt-file:<id>' from an earlier tool, 'data:<type>;base64,<data>' or a 'fileSystem:<path>'.",
}
_FILE_OUT = obj(
	{
		"id": {"type": "string"},
		"name": {"type": "string"},
		"mimeType": {"type": "string"},
		"size": {"type": "string", "description": "Bytes (not set for Google Docs/Sheets/Slides)."},
		"modifiedTime": {"type": "string"},
		"createdTime": {"type": "string"},
		"parents": {"type": "array", "items": {"type": "string"}},
		"webViewLink": {"type": "string"},
		"trashed": {"type": "boolean"},
		"owners": {
			"type": "array",
			"items": obj({"emailAddress": {"type": "string"}, "displayName": {"type": "string"}}),
		},
	}
)
"""A file as Drive returns it for `_FILE_FIELDS` (the fields the tools ask for by default)."""
_BINARY_OUT = obj(
	{
		"file": {
			"type": "string",
			"description": "Reference of the saved file ('openmolt-file:<id>').",
		},
		"mediaType": {"type": "string"},
		"size": {"type": "integer"},
		"name": {"type": "string"},
	}
)
_METADATA: dict[str, Any] = {
	"name": {"type": "string", "description": "The file name, e.g. 'report.pdf'."},
	"mimeType": {
		"type": "string",
		"description": "The file's type, e.g. 'application/pdf'. To convert an upload to a Google Doc/Sheet/Slides give 'application/vnd.google-apps.document' / '.spreadsheet' / '.presentation'.",
	},
	"parents": _PARENTS,
	"description": {"type": "string", "description": "A description shown in Drive."},
}
_METADATA_BODY = {k: f"{{{{ input.{k} }}}}" for k in _METADATA}

TOOLS = [
	HttpTool(
		handle="listFiles",
		description="Search files and folders. q uses Drive query syntax: \"name contains 'budget' and trashed = false\", \"'<folderId>' in parents\", \"mimeType = 'application/vnd.google-apps.folder'\", \"modifiedTime > '2026-11-01T00:00:00'\", \"fullText contains 'invoice'\".",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/files",
		query_params=passthrough(
			"q",
			"pageToken",
			"orderBy",
			"corpora",
			"driveId",
			pageSize="{{ input.pageSize | default: 100 }}",
			fields=f"nextPageToken,files({{{{ input.fields | default: '{_FILE_FIELDS}' }}}})",
			supportsAllDrives="{% if input.supportsAllDrives == false %}false{% else %}true{% endif %}",
			includeItemsFromAllDrives="{% if input.supportsAllDrives == false %}false{% else %}true{% endif %}",
		),
		input_schema=obj(
			{
				"q": {
					"type": "string",
					"description": 'Drive search query (see the tool description). Add "trashed = false" to skip the trash.',
				},
				"pageSize": {
					"type": "integer",
					"minimum": 1,
					"maximum": 1000,
					"default": 100,
					"description": "Files per page (max 1000).",
				},
				"pageToken": PAGE_TOKEN,
				"orderBy": {
					"type": "string",
					"description": "Sort keys, e.g. 'modifiedTime desc', 'name', 'folder,name'.",
				},
				"fields": _FIELDS,
				"corpora": {
					"type": "string",
					"enum": ["user", "drive", "domain", "allDrives"],
					"description": "Where to search (default user; 'drive' needs driveId).",
				},
				"driveId": {
					"type": "string",
					"description": "Shared drive id, with corpora 'drive'.",
				},
				"supportsAllDrives": {
					**_SHARED,
					"description": "Include shared drives' items (default true).",
				},
			}
		),
		output_schema=obj(
			{"files": {"type": "array", "items": _FILE_OUT}, "nextPageToken": {"type": "string"}}
		),
	),
	HttpTool(
		handle="getFile",
		description="Get a file's metadata (name, type, size, folder, link).",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/files/{{ input.fileId }}",
		query_params={
			"fields": f"{{{{ input.fields | default: '{_FILE_FIELDS}' }}}}",
			"supportsAllDrives": "true",
		},
		input_schema=obj({"fileId": _FILE_ID, "fields": _FIELDS}, ["fileId"]),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="downloadFile",
		description="Download a binary file's content (PDF, image, CSV...). Google Docs, Sheets and Slides cannot be downloaded: use exportFile. Returns a file reference.",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/files/{{ input.fileId }}",
		query_params=passthrough("acknowledgeAbuse", alt="media", supportsAllDrives="true"),
		response_format="binary",
		input_schema=obj(
			{
				"fileId": _FILE_ID,
				"acknowledgeAbuse": {
					"type": "boolean",
					"description": "Download a file flagged as malware anyway (owner only).",
				},
			},
			["fileId"],
		),
		output_schema=_BINARY_OUT,
	),
	HttpTool(
		handle="exportFile",
		description="Export a Google Doc, Sheet, Slides or Drawing to a regular format (max 10 MB). Returns a file reference.",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/files/{{ input.fileId }}/export",
		query_params=passthrough("mimeType"),
		response_format="binary",
		input_schema=obj(
			{
				"fileId": _FILE_ID,
				"mimeType": {
					"type": "string",
					"enum": [
						"application/pdf",
						"text/plain",
						"text/markdown",
						"text/html",
						"text/csv",
						"text/tab-separated-values",
						"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
						"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
						"application/vnd.openxmlformats-officedocument.presentationml.presentation",
						"application/vnd.oasis.opendocument.text",
						"application/rtf",
						"application/epub+zip",
						"image/png",
						"image/jpeg",
						"image/svg+xml",
					],
					"description": "Target format. Docs: pdf, docx, txt, markdown, html, odt, rtf, epub. Sheets: xlsx, csv/tsv (first sheet), pdf. Slides: pptx, pdf, txt. Drawings: png, jpeg, svg, pdf.",
				},
			},
			["fileId", "mimeType"],
		),
		output_schema=_BINARY_OUT,
	),
	HttpTool(
		handle="createFolder",
		description="Create a folder.",
		scopes=["write"],
		method="POST",
		endpoint="/drive/v3/files",
		query_params={"supportsAllDrives": "true", "fields": _FILE_FIELDS},
		body=passthrough(
			"name", "parents", "description", mimeType="application/vnd.google-apps.folder"
		),
		input_schema=obj(
			{
				"name": {"type": "string", "description": "The folder name."},
				"parents": {
					**_PARENTS,
					"description": "Id of the parent folder (default: My Drive root).",
				},
				"description": {"type": "string", "description": "A description shown in Drive."},
			},
			["name"],
		),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="uploadFile",
		description="Upload a file (up to ~5 MB) in one request with its name and folder. For larger files use startResumableUpload then uploadResumableContent.",
		scopes=["write"],
		method="POST",
		endpoint="/upload/drive/v3/files",
		query_params={
			"uploadType": "multipart",
			"supportsAllDrives": "true",
			"fields": _FILE_FIELDS,
		},
		request_format="multipart-related",
		body={"metadata": _METADATA_BODY, "media": "{{ input.file }}"},
		input_schema=obj({**_METADATA, "file": _FILE_REF}, ["name", "file"]),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="startResumableUpload",
		description="Start a resumable upload for a large file: sends the metadata and returns the upload session URL in 'Location'. Then send the file with uploadResumableContent (one request), or in chunks with uploadResumableChunk (very large files; getResumableUploadStatus resumes after an interruption).",
		scopes=["write"],
		method="POST",
		endpoint="/upload/drive/v3/files",
		query_params={
			"uploadType": "resumable",
			"supportsAllDrives": "true",
			"fields": _FILE_FIELDS,
		},
		headers={
			"X-Upload-Content-Type": "{{ input.contentType }}",
			"X-Upload-Content-Length": "{{ input.size }}",
		},
		body=_METADATA_BODY,
		response_headers=["Location"],
		input_schema=obj(
			{
				**_METADATA,
				"contentType": {
					"type": "string",
					"description": "Media type of the content to upload, e.g. 'video/mp4'.",
				},
				"size": {
					"type": "integer",
					"description": "Size of the content in bytes, if known.",
				},
			},
			["name"],
		),
		output_schema=obj(
			{"Location": {"type": "string", "description": "The upload session URL."}}
		),
	),
	HttpTool(
		handle="uploadResumableContent",
		description="Send the file content to a resumable upload session started with startResumableUpload; returns the created file.",
		scopes=["write"],
		method="PUT",
		endpoint="/upload/drive/v3/files",
		query_params={"uploadType": "resumable", "upload_id": UPLOAD_ID},
		request_format="binary",
		body="{{ input.file }}",
		input_schema=obj(
			{
				"uploadUrl": {
					"type": "string",
					"description": "The Location URL returned by startResumableUpload (or just its upload_id).",
				},
				"file": _FILE_REF,
			},
			["uploadUrl", "file"],
		),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="updateFile",
		description="Rename a file, change its description, move it between folders (addParents/removeParents), star it, or move it to or from the trash.",
		scopes=["write"],
		method="PATCH",
		endpoint="/drive/v3/files/{{ input.fileId }}",
		query_params=passthrough(
			"addParents", "removeParents", supportsAllDrives="true", fields=_FILE_FIELDS
		),
		body=passthrough("name", "description", "starred", "trashed"),
		input_schema=obj(
			{
				"fileId": _FILE_ID,
				"name": {"type": "string", "description": "New name."},
				"description": {"type": "string", "description": "New description."},
				"starred": {"type": "boolean", "description": "Star or unstar."},
				"trashed": {
					"type": "boolean",
					"description": "true moves it to the trash, false restores it.",
				},
				"addParents": {
					"type": "string",
					"description": "Folder id(s) to add, comma-separated (to move: also removeParents).",
				},
				"removeParents": {
					"type": "string",
					"description": "Folder id(s) to remove, comma-separated.",
				},
			},
			["fileId"],
		),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="updateFileContent",
		description="Replace a file's content with new bytes (keeps its id, name and sharing; creates a new revision).",
		scopes=["write"],
		method="PATCH",
		endpoint="/upload/drive/v3/files/{{ input.fileId }}",
		query_params={"uploadType": "media", "supportsAllDrives": "true", "fields": _FILE_FIELDS},
		request_format="binary",
		body="{{ input.file }}",
		input_schema=obj({"fileId": _FILE_ID, "file": _FILE_REF}, ["fileId", "file"]),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="copyFile",
		description="Copy a file (not folders), optionally with a new name and folder.",
		scopes=["write"],
		method="POST",
		endpoint="/drive/v3/files/{{ input.fileId }}/copy",
		query_params={"supportsAllDrives": "true", "fields": _FILE_FIELDS},
		body=passthrough("name", "parents"),
		input_schema=obj(
			{
				"fileId": _FILE_ID,
				"name": {
					"type": "string",
					"description": "Name of the copy (default 'Copy of ...').",
				},
				"parents": _PARENTS,
			},
			["fileId"],
		),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="deleteFile",
		description="Permanently delete a file or folder, skipping the trash (cannot be undone; to trash instead use updateFile with trashed true).",
		scopes=["delete"],
		method="DELETE",
		endpoint="/drive/v3/files/{{ input.fileId }}",
		query_params={"supportsAllDrives": "true"},
		input_schema=obj({"fileId": _FILE_ID}, ["fileId"]),
	),
	HttpTool(
		handle="shareFile",
		description="Share a file or folder: give a person, group, domain or anyone with the link a role.",
		scopes=["share"],
		method="POST",
		endpoint="/drive/v3/files/{{ input.fileId }}/permissions",
		query_params=passthrough("sendNotificationEmail", "emailMessage", supportsAllDrives="true"),
		body=passthrough("role", "type", "emailAddress", "domain"),
		input_schema=obj(
			{
				"fileId": _FILE_ID,
				"role": {
					"type": "string",
					"enum": ["reader", "commenter", "writer", "fileOrganizer", "organizer"],
					"description": "The access to grant.",
				},
				"type": {
					"type": "string",
					"enum": ["user", "group", "domain", "anyone"],
					"description": "Who gets it; 'anyone' means anyone with the link.",
				},
				"emailAddress": {
					"type": "string",
					"description": "The person's or group's email (type user or group).",
				},
				"domain": {
					"type": "string",
					"description": "The domain, e.g. 'example.com' (type domain).",
				},
				"sendNotificationEmail": {
					"type": "boolean",
					"description": "Email the person (default true for users and groups).",
				},
				"emailMessage": {
					"type": "string",
					"description": "A message for the notification email.",
				},
			},
			["fileId", "role", "type"],
		),
		output_schema=obj(
			{"id": {"type": "string"}, "role": {"type": "string"}, "type": {"type": "string"}}
		),
	),
	HttpTool(
		handle="listPermissions",
		description="List who has access to a file or folder.",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/files/{{ input.fileId }}/permissions",
		query_params=passthrough(
			"pageToken",
			supportsAllDrives="true",
			fields="nextPageToken,permissions(id,type,role,emailAddress,domain,displayName)",
		),
		input_schema=obj({"fileId": _FILE_ID, "pageToken": PAGE_TOKEN}, ["fileId"]),
		output_schema=obj(
			{
				"permissions": {"type": "array", "items": {"type": "object"}},
				"nextPageToken": {"type": "string"},
			}
		),
	),
	HttpTool(
		handle="getAbout",
		description="The signed-in user and the storage quota (limit, usage, usage in trash).",
		scopes=["read"],
		method="GET",
		endpoint="/drive/v3/about",
		query_params={"fields": "user(displayName,emailAddress),storageQuota"},
		output_schema=obj({"user": {"type": "object"}, "storageQuota": {"type": "object"}}),
	),
	*resumable_session_tools(
		endpoint="/upload/drive/v3/files",
		scope="write",
		start_handle="startResumableUpload",
		chunk_handle="uploadResumableChunk",
		status_handle="getResumableUploadStatus",
		file_field="file",
		file_schema=_FILE_REF,
		done_schema=_FILE_OUT,
	),
	file_info_tool(scopes=["write"]),
]

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"createFolder": [],
		"uploadFile": [],
		"startResumableUpload": [],
		"uploadResumableContent": [],
		"updateFile": [],
		"updateFileContent": [],
		"copyFile": [],
		"deleteFile": [],
		"getAbout": [],
		"uploadResumableChunk": [],
		"getResumableUploadStatus": [],
		"fileInfo": [],
		"listFiles": ["private"],
		"getFile": ["private"],
		# Anyone can share a file with the user: its content is outside content.
		"downloadFile": ["private", "untrusted"],
		"exportFile": ["private", "untrusted"],
		"listPermissions": ["private"],
		"shareFile": ["outbound"],
	},
	encoders=ENCODERS,
	name="Google Drive",
	description="Search, read, upload, download, export, organize and share Google Drive files.",
	api_version="v3",
	api_setup=ApiSetup(base_url="https://www.googleapis.com"),
	credential_setup=[google_oauth2(*_SCOPES)],
	scopes={
		"read": "Search files, read metadata and permissions, download and export content.",
		"write": "Create folders, upload, update, move, copy and trash files.",
		"share": "Share files and folders with people or links.",
		"delete": "Delete files permanently.",
	},
	tools=TOOLS,
	docs=token_guide(
		"Google Drive",
		"Google Drive API",
		"googleDrive",
		_SCOPES,
		notes="""## Narrower access

`drive` is a *restricted* scope (apps used by others need verification). To keep an agent to the
files it creates or is given, authorize `https://www.googleapis.com/auth/drive.file` instead (a
per-file, non-restricted scope); search then only sees those files.

## Files

Uploads take a file reference (`openmolt-file:<id>` from another tool, a `data:` URL, or a
`fileSystem:` path). Downloads and exports are saved to OpenMolt's file store and returned as
`{"file": "openmolt-file:<id>", "mediaType", "size"}`. Use `uploadFile` up to about 5 MB and
`startResumableUpload` + `uploadResumableContent` beyond. For very large files, or an unreliable
network, send the content in chunks: `fileInfo` (with `chunkSize` a multiple of 256 KiB, e.g.
8388608) plans them, `uploadResumableChunk` sends each one (Drive answers `308` with the `Range`
received until the last chunk), and `getResumableUploadStatus` tells where to resume.""",
	),
)
"""The Google Drive integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Google Drive under the id ``googleDrive``."""
	register(INTEGRATION, id="googleDrive")
