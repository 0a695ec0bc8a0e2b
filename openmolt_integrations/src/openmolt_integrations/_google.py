"""What the Google integrations share: the OAuth2 credential, the token guide and upload tools.

Google Calendar, Gmail, Drive, Sheets, YouTube and Google Ads all use Google's OAuth2 endpoints.
A refresh token is only issued with ``access_type=offline``, and only reissued on a repeated
consent with ``prompt=consent``; both are set here so that an ``oauth2`` credential refreshes out
of the box.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	CustomCredential,
	HttpTool,
	OAuth2Credential,
)
from openmolt_core.integrations.extensions import EncodedBody, EncodeRequest, checked_media_type
from openmolt_core.integrations.schema import obj, passthrough

__all__ = [
	"CHUNK_MULTIPLE",
	"ENCODERS",
	"GEMINI_API_KEY",
	"GOOGLE_AUTH_URL",
	"GOOGLE_TOKEN_URL",
	"PAGE_TOKEN",
	"UPLOAD_ID",
	"gemini_list_models",
	"google_oauth2",
	"multipart_related",
	"resumable_session_tools",
	"token_guide",
]

GOOGLE_AUTH_URL = "https://accounts.google.com/o/oauth2/v2/auth"
"""Google's OAuth2 authorization endpoint."""

GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
"""Google's OAuth2 token endpoint (code exchange and refresh)."""

GEMINI_API_KEY = CustomCredential(type="custom", headers={"x-goog-api-key": "{{ config.apiKey }}"})
"""The Gemini API key credential (``config.apiKey``), sent as ``x-goog-api-key``."""


async def multipart_related(body: Any, request: EncodeRequest) -> EncodedBody:
	"""Google's ``multipart-related`` upload: JSON metadata, then the media, in one body.

	The ``uploadType=multipart`` form of Drive, YouTube and the Gemini Files API
	(https://developers.google.com/drive/api/guides/manage-uploads#multipart).

	Args:
		body: ``{"metadata": {...}, "media": <file reference>}``.
		request: The file store.

	Raises:
		ToolError: The body has no media, or the file cannot be read.
	"""
	if not isinstance(body, dict) or "media" not in body:
		raise ToolError('a multipart-related body needs {"metadata": {...}, "media": <file>}')
	media = await request.open(body["media"], "media")
	boundary = f"openmolt-{secrets.token_hex(12)}"
	content = (
		f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode()
		+ json.dumps(body.get("metadata") or {}, ensure_ascii=False).encode()
		+ f"\r\n--{boundary}\r\nContent-Type: {checked_media_type(media)}\r\n\r\n".encode()
		+ media.data
		+ f"\r\n--{boundary}--\r\n".encode()
	)
	return EncodedBody(content, f"multipart/related; boundary={boundary}")


ENCODERS = {"multipart-related": multipart_related}
"""The request formats of the Google integrations: ``multipart-related`` (`multipart_related`)."""

PAGE_TOKEN: dict[str, Any] = {
	"type": "string",
	"description": "The nextPageToken of a previous call, to fetch the next page. Omit for the first page.",
}
"""The ``pageToken`` input every paginated Google list tool takes."""


def google_oauth2(
	*scopes: str, scope_map: Mapping[str, list[str]] | None = None
) -> OAuth2Credential:
	"""The Google OAuth2 credential, asking for the given scope strings.

	The config holds ``clientId``, ``clientSecret``, ``refreshToken`` and optionally a current
	``accessToken`` with its ``expiryDate``; the engine refreshes the access token when needed.
	``openmolt auth`` runs Google's flow for installed apps: PKCE (S256), a loopback redirect,
	``access_type=offline`` and ``prompt=consent`` (so a refresh token comes back every time),
	space-separated scopes; the Desktop client's secret is sent with the code.

	Args:
		*scopes: OAuth2 scope strings (``https://www.googleapis.com/auth/drive.file``).
		scope_map: The OAuth scopes each tool scope needs, so that ``openmolt auth`` asks only
			for those the agent uses; their scopes join ``scopes``.
	"""
	return OAuth2Credential(
		type="oauth2",
		auth_url=GOOGLE_AUTH_URL,
		token_url=GOOGLE_TOKEN_URL,
		client_id="{{ config.clientId }}",
		client_secret="{{ config.clientSecret }}",
		refresh_token="{{ config.refreshToken }}",
		scopes=list(dict.fromkeys([*scopes, *(s for v in (scope_map or {}).values() for s in v)])),
		scope_map={k: list(v) for k, v in (scope_map or {}).items()},
		pkce="supported",
		client_secret_required=True,
		auth_params={
			"access_type": "offline",
			"prompt": "consent",
			"include_granted_scopes": "true",
		},
		token_auth="body",
	)


def token_guide(
	service: str,
	api: str,
	integration_id: str,
	scopes: dict[str, str],
	notes: str = "",
	more_config: tuple[str, ...] = (),
) -> str:
	"""The "get a token" Markdown guide for a Google OAuth2 integration.

	Args:
		service: The service name (``Google Drive``).
		api: The API to enable in the Cloud console (``Google Drive API``).
		integration_id: The OpenMolt integration id (``googleDrive``).
		scopes: OAuth2 scope string to what it allows.
		notes: Extra Markdown appended at the end (quotas, special headers).
		more_config: Config keys every request needs besides the OAuth2 ones (Google Ads'
			``developerToken``): the sample gives them too, so that it works as written.
	"""
	scope_lines = "\n".join(f"- `{scope}`: {what}" for scope, what in scopes.items())
	keys = ("clientId", "clientSecret", "refreshToken", *more_config)
	config = "{" + ", ".join(f'"{key}": "..."' for key in keys) + "}"
	text = f"""## Get a token

{service} uses Google OAuth2. You need an OAuth client and a refresh token:

1. In the [Google Cloud console](https://console.cloud.google.com/), create or pick a project and
   enable the **{api}** (APIs & Services → Library).
2. Configure the OAuth consent screen (APIs & Services → OAuth consent screen). While the app is in
   *Testing*, add your Google account as a test user; refresh tokens of apps in testing expire
   after 7 days, so publish the app for long-lived agents.
3. Create an OAuth client id (APIs & Services → Credentials → Create credentials → OAuth client
   ID, type *Desktop app* or *Web application*) and note its client id and secret.
4. Get a refresh token by authorizing once with `access_type=offline` and `prompt=consent` (the
   integration sets both), for example with the
   [OAuth 2.0 Playground](https://developers.google.com/oauthplayground/) (gear icon → *Use your
   own OAuth credentials*) or `google-auth-oauthlib`'s `InstalledAppFlow`. Request these scopes:

{scope_lines}

5. Give the agent the credential:

```python
agent = om.create_agent(
    name="Assistant",
    model="openai:gpt-5",
    integrations=[{{
        "integration": "{integration_id}",
        "credential": {{
            "type": "oauth2",
            "config": {config},
        }},
    }}],
)
```

OpenMolt exchanges the refresh token for an access token (`https://oauth2.googleapis.com/token`)
when none is given, when it has expired, and after a 401; pass `onTokenRefresh` to store the new one.
"""
	return text + ("\n" + notes.strip() + "\n" if notes else "")


def gemini_list_models(description: str) -> HttpTool:
	"""The Gemini API's ``models.list`` as a tool (Nano Banana and Veo both offer it).

	Args:
		description: What the model should look for in the list.
	"""
	return HttpTool(
		handle="listModels",
		description=description,
		scopes=["generate"],
		method="GET",
		endpoint="/v1beta/models",
		query_params=passthrough("pageToken", pageSize="{{ input.pageSize | default: 100 }}"),
		input_schema=obj(
			{
				"pageSize": {
					"type": "integer",
					"minimum": 1,
					"maximum": 1000,
					"default": 100,
					"description": "Models per page.",
				},
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=obj(
			{
				"models": {
					"type": "array",
					"items": obj(
						{
							"name": {"type": "string"},
							"displayName": {"type": "string"},
							"supportedGenerationMethods": {"type": "array"},
						}
					),
				},
				"nextPageToken": {"type": "string"},
			}
		),
	)


UPLOAD_ID = "{{ input.uploadUrl | split: 'upload_id=' | last | split: '&' | first }}"
"""The ``upload_id`` of a resumable session, from its Location URL (or the bare id)."""

CHUNK_MULTIPLE = 256 * 1024
"""Every chunk of a resumable upload but the last is a multiple of this many bytes (256 KiB)."""

_SESSION_URL = {
	"type": "string",
	"description": "The Location URL of the upload session (or just its upload_id).",
}
_TOTAL_SIZE = {
	"type": "integer",
	"minimum": 1,
	"description": "The whole file's size in bytes ('size' from fileInfo).",
}
_RANGE_OUT = obj(
	{
		"status": {
			"type": "integer",
			"description": "308 while the upload is incomplete.",
		},
		"headers": obj(
			{
				"Range": {
					"type": "string",
					"description": "'bytes=0-<last byte received>'; absent when nothing arrived yet.",
				}
			}
		),
	}
)


def resumable_session_tools(
	*,
	endpoint: str,
	scope: str,
	start_handle: str,
	chunk_handle: str,
	status_handle: str,
	file_field: str,
	file_schema: dict[str, Any],
	done_schema: dict[str, Any],
) -> list[HttpTool]:
	"""The chunk and status tools of a Google resumable upload session.

	Google's protocol: ``PUT`` each chunk to the session with ``Content-Range: bytes a-b/total``
	(every chunk but the last a multiple of 256 KiB); a non-final chunk is answered
	``308 Resume Incomplete`` with ``Range: bytes=0-<last byte received>``, the final one with
	the created resource. An empty ``PUT`` with ``Content-Range: bytes */total`` asks how much
	arrived, to resume after an interruption.

	Args:
		endpoint: The upload path (``/upload/drive/v3/files``).
		scope: The tool scope both tools need.
		start_handle: The tool that starts the session (named in descriptions).
		chunk_handle: The handle of the chunk tool.
		status_handle: The handle of the status tool.
		file_field: The input name of the whole file (``file``, ``video``).
		file_schema: Its schema (a file reference string).
		done_schema: The resource returned when the upload completes.
	"""
	query = {"uploadType": "resumable", "upload_id": UPLOAD_ID}
	done = {"description": "When complete: the created resource.", **done_schema}
	return [
		HttpTool(
			handle=chunk_handle,
			description=(
				f"Send one chunk of a large file to a resumable upload session from {start_handle}. "
				f"Give the whole file and the chunk's first and last byte (inclusive). Every chunk "
				f"but the last must be a multiple of {CHUNK_MULTIPLE} bytes (256 KiB; 8 MiB = "
				f"8388608 is a good size): plan them with fileInfo (chunkSize). Until the last "
				f"chunk the answer is status 308 with headers.Range 'bytes=0-<n>' (send the next "
				f"chunk from n+1); the last chunk returns the created resource."
			),
			scopes=[scope],
			method="PUT",
			endpoint=endpoint,
			query_params=query,
			headers={
				"Content-Range": ("bytes {{ input.start }}-{{ input.end }}/{{ input.totalSize }}")
			},
			request_format="binary",
			body=f"{{{{ input.{file_field} }}}}#bytes={{{{ input.start }}}}-{{{{ input.end }}}}",
			accept_statuses=[308],
			response_headers=["Range"],
			input_schema=obj(
				{
					"uploadUrl": _SESSION_URL,
					file_field: {
						**file_schema,
						"description": file_schema["description"]
						+ " The whole file, without a #bytes= range: the tool sends the range.",
					},
					"start": {
						"type": "integer",
						"minimum": 0,
						"description": "The chunk's first byte (0 for the first chunk).",
					},
					"end": {
						"type": "integer",
						"minimum": 0,
						"description": "The chunk's last byte, inclusive (totalSize - 1 for the last).",
					},
					"totalSize": _TOTAL_SIZE,
				},
				["uploadUrl", file_field, "start", "end", "totalSize"],
			),
			output_schema={"anyOf": [_RANGE_OUT, done]},
		),
		HttpTool(
			handle=status_handle,
			description=(
				f"Ask a resumable upload session from {start_handle} how much it has received, to "
				f"resume after an interruption or error. Status 308 with headers.Range "
				f"'bytes=0-<n>': continue with {chunk_handle} from byte n+1; 308 without Range: "
				f"nothing arrived, start at 0; a resource: the upload is complete. A 404 means "
				f"the session expired (after a week): start again."
			),
			scopes=[scope],
			method="PUT",
			endpoint=endpoint,
			query_params=query,
			headers={"Content-Range": "bytes */{{ input.totalSize }}"},
			accept_statuses=[308],
			response_headers=["Range"],
			input_schema=obj(
				{"uploadUrl": _SESSION_URL, "totalSize": _TOTAL_SIZE}, ["uploadUrl", "totalSize"]
			),
			output_schema={"anyOf": [_RANGE_OUT, done]},
		),
	]
