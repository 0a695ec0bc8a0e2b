"""Veo 3: Gemini API video generation as a long-running operation, with status and download tools."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_integrations._google import GEMINI_API_KEY, PAGE_TOKEN, gemini_list_models, obj

__all__ = ["DEFAULT_MODEL", "INTEGRATION", "TOOLS", "register_integrations"]

DEFAULT_MODEL = "veo-3.1-generate-preview"
"""The default video model on the Gemini API: Veo 3.1."""

_OPERATION_NAME = {
	"type": "string",
	"description": "The operation name returned by generateVideo, e.g. 'models/veo-3.1-generate-preview/operations/abc123'.",
}
_OPERATION_OUT = obj(
	{
		"name": {"type": "string", "description": "The operation name, for getOperation."},
		"done": {"type": "boolean", "description": "true when finished (successfully or not)."},
		"error": obj({"code": {"type": "integer"}, "message": {"type": "string"}}),
		"response": obj(
			{
				"generateVideoResponse": obj(
					{
						"generatedSamples": {
							"type": "array",
							"items": obj(
								{
									"video": obj(
										{
											"uri": {
												"type": "string",
												"description": "Give to downloadVideo.",
											}
										}
									)
								}
							),
						},
						"raiMediaFilteredCount": {"type": "integer"},
						"raiMediaFilteredReasons": {"type": "array", "items": {"type": "string"}},
					}
				)
			}
		),
	}
)

TOOLS = [
	HttpTool(
		handle="generateVideo",
		description="Start generating a short video (with sound) from a prompt, optionally starting from an image (image-to-video). Takes 1 to 6 minutes: this returns an operation name at once; poll getOperation (wait about 15 seconds between calls) until done, then call downloadVideo with response.generateVideoResponse.generatedSamples[0].video.uri.",
		scopes=["generate"],
		method="POST",
		endpoint=f"/v1beta/models/{{{{ input.model | default: '{DEFAULT_MODEL}' }}}}:predictLongRunning",
		body={
			"instances": [
				{
					"prompt": "{{ input.prompt }}",
					"image": {
						"bytesBase64Encoded": "{{ input.image | file_base64 }}",
						"mimeType": "{{ input.image | file_media_type }}",
					},
					"lastFrame": {
						"bytesBase64Encoded": "{{ input.lastFrame | file_base64 }}",
						"mimeType": "{{ input.lastFrame | file_media_type }}",
					},
					"video": "{{ input.extendVideo }}",
				}
			],
			"parameters": {
				"aspectRatio": "{{ input.aspectRatio }}",
				"durationSeconds": "{{ input.durationSeconds }}",
				"resolution": "{{ input.resolution }}",
				"negativePrompt": "{{ input.negativePrompt }}",
				"personGeneration": "{{ input.personGeneration }}",
				"seed": "{{ input.seed }}",
			},
		},
		input_schema=obj(
			{
				"prompt": {
					"type": "string",
					"description": "The scene: subject, action, camera movement, style, and audio (dialogue in quotes, sound effects, ambience).",
				},
				"negativePrompt": {
					"type": "string",
					"description": "What not to show, e.g. 'cartoon, low quality'.",
				},
				"aspectRatio": {
					"type": "string",
					"enum": ["16:9", "9:16"],
					"description": "Landscape 16:9 (default) or portrait 9:16.",
				},
				"durationSeconds": {
					"type": "integer",
					"enum": [4, 6, 8],
					"description": "Length in seconds (default 8; 1080p and 4k need 8).",
				},
				"resolution": {
					"type": "string",
					"enum": ["720p", "1080p", "4k"],
					"description": "Resolution (default 720p; 4k on Veo 3.1 models only).",
				},
				"personGeneration": {
					"type": "string",
					"enum": ["allow_all", "allow_adult", "dont_allow"],
					"description": "Whether people may appear (regional limits apply).",
				},
				"seed": {"type": "integer", "description": "Seed for more repeatable results."},
				"image": {
					"type": "string",
					"description": "Optional first frame (image-to-video): a PNG or JPEG file reference (openmolt-file:<id> from e.g. Nano Banana, data:image/png;base64,..., or fileSystem:<path>), up to 20 MB. The prompt then describes the motion.",
				},
				"lastFrame": {
					"type": "string",
					"description": "Optional last frame (Veo 3.1, needs image): a PNG or JPEG file reference; the video moves from image to this frame.",
				},
				"extendVideo": obj(
					{
						"uri": {
							"type": "string",
							"description": "The earlier video's video.uri from getOperation.",
						}
					},
					"uri",
					description="To extend an earlier Veo video by about 7 seconds: {'uri': <its video.uri>} (Veo 3.1, 720p, within 2 days).",
				),
				"model": {
					"type": "string",
					"default": DEFAULT_MODEL,
					"description": f"Veo model id (default '{DEFAULT_MODEL}'). Others: 'veo-3.1-fast-generate-preview' (faster, cheaper), 'veo-3.0-generate-001', 'veo-3.0-fast-generate-001'. listModels shows what the key can use.",
				},
			},
			"prompt",
		),
		output_schema=obj(
			{"name": {"type": "string", "description": "The operation name, for getOperation."}}
		),
	),
	HttpTool(
		handle="getOperation",
		description="Check a video generation: done is false while it runs; when done, response.generateVideoResponse.generatedSamples[].video.uri holds the video (or error explains the failure).",
		scopes=["generate"],
		method="GET",
		endpoint="/v1beta/{{ input.operationName | path_segments }}",
		input_schema=obj({"operationName": _OPERATION_NAME}, "operationName"),
		output_schema=_OPERATION_OUT,
	),
	HttpTool(
		handle="listOperations",
		description="List recent video generation operations of a model.",
		scopes=["generate"],
		method="GET",
		endpoint=f"/v1beta/models/{{{{ input.model | default: '{DEFAULT_MODEL}' }}}}/operations",
		query_params={"pageSize": "{{ input.pageSize }}", "pageToken": "{{ input.pageToken }}"},
		input_schema=obj(
			{
				"model": {
					"type": "string",
					"default": DEFAULT_MODEL,
					"description": "The Veo model id.",
				},
				"pageSize": {
					"type": "integer",
					"minimum": 1,
					"description": "Operations per page.",
				},
				"pageToken": PAGE_TOKEN,
			}
		),
		output_schema=obj(
			{
				"operations": {"type": "array", "items": _OPERATION_OUT},
				"nextPageToken": {"type": "string"},
			}
		),
	),
	HttpTool(
		handle="downloadVideo",
		description="Download a generated video (MP4) and save it as a file; returns a file reference for other tools (Drive, YouTube upload). Generated videos are deleted by Google after 2 days.",
		scopes=["generate"],
		method="GET",
		endpoint="/v1beta/files/{{ input.videoUri | split: 'files/' | last | split: ':' | first }}:download",
		query_params={"alt": "media"},
		response_format="binary",
		# The file may redirect to Google's storage host: follow it, without the API key.
		follow_redirects="without-credentials",
		input_schema=obj(
			{
				"videoUri": {
					"type": "string",
					"description": "The video.uri from getOperation ('https://generativelanguage.googleapis.com/v1beta/files/<id>:download?alt=media'), or 'files/<id>'.",
				}
			},
			"videoUri",
		),
		output_schema=obj(
			{
				"file": {
					"type": "string",
					"description": "Reference of the saved video ('openmolt-file:<id>').",
				},
				"mediaType": {"type": "string"},
				"size": {"type": "integer"},
				"name": {"type": "string"},
			}
		),
	),
	gemini_list_models(
		"List the Gemini API models the key can use (Veo ids start with 'models/veo')."
	),
]

INTEGRATION = Integration(
	name="Veo",
	description="Generate videos with Google's Veo 3 models over the Gemini API.",
	api_version="v1beta",
	api_setup=ApiSetup(base_url="https://generativelanguage.googleapis.com", timeout=300.0),
	credential_setup=[GEMINI_API_KEY],
	scopes={
		"generate": "Generate videos, check and list operations, download videos, list models."
	},
	tools=TOOLS,
	docs="""## Get a token

Veo uses a Gemini API key from a project with billing enabled (Veo is a paid feature):

1. Open [Google AI Studio](https://aistudio.google.com/apikey), create an API key, and enable
   billing on its Google Cloud project.
2. Give it to the agent:

```python
agent = om.create_agent(
    name="Director",
    model="openai:gpt-5",
    integrations=[{"integration": "veo", "credential": {"type": "custom", "config": {"apiKey": "..."}}}],
)
```

The key is sent as the `x-goog-api-key` header. `generateVideo` also animates a still: pass a
file reference as `image` (the first frame; `lastFrame` too on Veo 3.1), e.g. an image made by the
Nano Banana integration. A video takes minutes: `generateVideo` returns an
operation, `getOperation` reports progress, `downloadVideo` saves the MP4 to OpenMolt's file store.
Model ids change often; every tool takes a `model` input (default `veo-3.1-generate-preview`).
Google keeps generated videos for 2 days, so download them promptly.
""",
)
"""The Veo integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Veo under the id ``veo``."""
	register(INTEGRATION, id="veo")
