"""Nano Banana: Gemini native image generation and editing over the Gemini API (v1beta)."""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.schema import array, obj, passthrough
from openmolt_integrations._google import ENCODERS, GEMINI_API_KEY, gemini_list_models

__all__ = ["DEFAULT_MODEL", "INTEGRATION", "TOOLS", "register_integrations"]

DEFAULT_MODEL = "gemini-3.1-flash-image"
"""The default image model: Nano Banana 2 (Gemini 3.1 Flash Image)."""

_MODEL = {
	"type": "string",
	"default": DEFAULT_MODEL,
	"description": f"Gemini image model id (default '{DEFAULT_MODEL}', Nano Banana 2). Others: 'gemini-3-pro-image' (Nano Banana Pro, best text rendering and 4K), 'gemini-3.1-flash-lite-image' (Nano Banana 2 Lite, cheapest). listModels shows what the key can use.",
}
_ENDPOINT = f"/v1beta/models/{{{{ input.model | default: '{DEFAULT_MODEL}' }}}}:generateContent"
_ASPECT = {
	"type": "string",
	"enum": ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"],
	"description": "Aspect ratio of the image (default 1:1, or the input image's for edits).",
}
_SIZE = {
	"type": "string",
	"enum": ["1K", "2K", "4K"],
	"description": "Resolution tier (Gemini 3 image models; default 1K). 4K costs more.",
}
_GENERATION_CONFIG = {
	"responseModalities": ["TEXT", "IMAGE"],
	"imageConfig": passthrough("aspectRatio", "imageSize"),
	"candidateCount": 1,
}
_INLINE = "candidates[].content.parts[].inlineData"
_IMAGE_OUT = obj(
	{
		"candidates": {
			"type": "array",
			"description": "candidates[0].content.parts holds the result: text parts, and image parts whose inlineData is a saved file {file, mediaType, size}.",
			"items": obj(
				{
					"content": obj(
						{
							"parts": {
								"type": "array",
								"items": obj(
									{
										"text": {"type": "string"},
										"inlineData": obj(
											{
												"file": {
													"type": "string",
													"description": "Reference of the saved image ('openmolt-file:<id>').",
												},
												"mediaType": {"type": "string"},
												"size": {"type": "integer"},
											}
										),
									}
								),
							}
						}
					),
					"finishReason": {"type": "string"},
				}
			),
		},
		"usageMetadata": {"type": "object"},
	}
)
_PART = obj(
	{
		"text": {"type": "string", "description": "An instruction or description."},
		"fileData": obj(
			{
				"fileUri": {
					"type": "string",
					"description": "The file.uri returned by uploadFile.",
				},
				"mimeType": {
					"type": "string",
					"description": "The image's media type, e.g. 'image/png'.",
				},
			},
			["fileUri", "mimeType"],
			description="An input image uploaded with uploadFile.",
		),
	}
)
_FILE_OUT = obj(
	{
		"name": {"type": "string", "description": "'files/<id>'."},
		"uri": {"type": "string", "description": "Use as fileData.fileUri."},
		"mimeType": {"type": "string"},
		"sizeBytes": {"type": "string"},
		"state": {"type": "string", "description": "PROCESSING, ACTIVE or FAILED."},
		"expirationTime": {"type": "string"},
	}
)

TOOLS = [
	HttpTool(
		handle="generateImage",
		description="Generate an image from a text prompt. Describe subject, composition, style, lighting and any text to render. The image is saved and returned as a file reference.",
		scopes=["generate"],
		method="POST",
		endpoint=_ENDPOINT,
		body={
			"contents": [{"role": "user", "parts": [{"text": "{{ input.prompt }}"}]}],
			"generationConfig": _GENERATION_CONFIG,
		},
		response_files=[_INLINE],
		input_schema=obj(
			{
				"prompt": {
					"type": "string",
					"description": "What to draw, as a descriptive paragraph.",
				},
				"aspectRatio": _ASPECT,
				"imageSize": _SIZE,
				"model": _MODEL,
			},
			["prompt"],
		),
		output_schema=_IMAGE_OUT,
	),
	HttpTool(
		handle="editImage",
		description="Edit or combine images with an instruction ('replace the sky with a sunset', 'put the logo of image 2 on the mug of image 1'). Upload each input image with uploadFile first, then pass parts: the images as fileData and the instruction as text. The result is saved and returned as a file reference.",
		scopes=["generate"],
		method="POST",
		endpoint=_ENDPOINT,
		body={
			"contents": [passthrough("parts", role="user")],
			"generationConfig": _GENERATION_CONFIG,
		},
		response_files=[_INLINE],
		input_schema=obj(
			{
				"parts": array(
					_PART,
					"The request in order, e.g. [{'fileData': {'fileUri': '<uri>', 'mimeType': 'image/png'}}, {'text': 'Make it a watercolor'}]. Up to 14 images for Gemini 3 models.",
				),
				"aspectRatio": _ASPECT,
				"imageSize": _SIZE,
				"model": _MODEL,
			},
			["parts"],
		),
		output_schema=_IMAGE_OUT,
	),
	HttpTool(
		handle="uploadFile",
		description="Upload an image (or other media) to the Gemini Files API, to use it in editImage. Files are kept 48 hours.",
		scopes=["files"],
		method="POST",
		endpoint="/upload/v1beta/files",
		query_params={"uploadType": "multipart"},
		request_format="multipart-related",
		body={"metadata": {"file": passthrough("displayName")}, "media": "{{ input.file }}"},
		input_schema=obj(
			{
				"file": {
					"type": "string",
					"description": "The file as a reference: 'openmolt-file:<id>' (e.g. from generateImage or another tool), 'data:<type>;base64,<data>' or 'fileSystem:<path>'.",
				},
				"displayName": {"type": "string", "description": "A name for the file."},
			},
			["file"],
		),
		output_schema=obj({"file": _FILE_OUT}),
	),
	HttpTool(
		handle="getFile",
		description="Get an uploaded file's uri and state (wait until ACTIVE before using large files).",
		scopes=["files"],
		method="GET",
		endpoint="/v1beta/files/{{ input.name | split: 'files/' | last }}",
		input_schema=obj(
			{"name": {"type": "string", "description": "The file name 'files/<id>' (or its id)."}},
			["name"],
		),
		output_schema=_FILE_OUT,
	),
	HttpTool(
		handle="deleteFile",
		description="Delete an uploaded file before it expires.",
		scopes=["files"],
		method="DELETE",
		endpoint="/v1beta/files/{{ input.name | split: 'files/' | last }}",
		input_schema=obj(
			{"name": {"type": "string", "description": "The file name 'files/<id>' (or its id)."}},
			["name"],
		),
	),
	gemini_list_models(
		"List the Gemini models the API key can use (look for ids containing 'image')."
	),
]

INTEGRATION = Integration(
	# What each tool does with data (openmolt_core.taint): none of the three.
	labels={
		"generateImage": [],
		"editImage": [],
		"uploadFile": [],
		"getFile": [],
		"deleteFile": [],
		"listModels": [],
	},
	encoders=ENCODERS,
	name="Nano Banana",
	description="Generate and edit images with Gemini's native image models (Nano Banana).",
	api_version="v1beta",
	api_setup=ApiSetup(base_url="https://generativelanguage.googleapis.com", timeout=180.0),
	credential_setup=[GEMINI_API_KEY],
	scopes={
		"generate": "Generate and edit images; list models.",
		"files": "Upload, inspect and delete input files.",
	},
	tools=TOOLS,
	docs="""## Get a token

Nano Banana uses a Gemini API key:

1. Open [Google AI Studio](https://aistudio.google.com/apikey) and create an API key (it creates
   or picks a Google Cloud project). Image generation needs a project with billing enabled.
2. Give it to the agent:

```python
agent = om.create_agent(
    name="Designer",
    model="openai:gpt-5",
    integrations=[{"integration": "nanoBanana", "credential": {"type": "custom", "config": {"apiKey": "..."}}}],
)
```

The key is sent as the `x-goog-api-key` header. Model ids change often: every tool takes a
`model` input (default `gemini-3.1-flash-image`); `listModels` shows the ids your key can use.
Generated images come back as file references (`openmolt-file:<id>`) that other tools (Drive,
YouTube thumbnails...) accept. All generated images carry a SynthID watermark.

## Checked against

The test suite checks every tool's method, path, query and body names against the REST rules
and request messages of `google-ai-generativelanguage` (`imageConfig` against `google-genai`'s
`ImageConfig`, newer than the proto), the saved image path against `GenerateContentResponse`, and
every model id named here against `google-genai`'s model list. Not machine-checked: the `parts`
of `editImage`, which the model writes (their shape is only the tool's input schema), and which
models a given key can use (`listModels` tells).
""",
)
"""The Nano Banana integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register Nano Banana under the id ``nanoBanana``."""
	register(INTEGRATION, id="nanoBanana")
