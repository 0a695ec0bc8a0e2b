"""Video generation over the Gemini API: Gemini Omni Flash through the Interactions API.

Google shut the Veo 3.1 preview models down on the Gemini API (``google-genai`` refuses
``generate_videos`` outside Vertex), and its video guide names Gemini Omni Flash
(``gemini-omni-1.1-flash``) as the model for video generation, called with
``POST /v1beta/interactions``. The integration keeps its ``veo`` id. One interaction turns a text
prompt, images (a first frame, reference images) or a video (to edit or extend) into a video with
sound; ``previous_interaction_id`` edits the last result by conversation.

The video comes back inline (base64, saved to the file store by ``response_files``) or, for large
outputs or ``delivery: "uri"``, as a Files API URI that ``downloadVideo`` saves. With
``background: true`` the call returns at once and ``getInteraction`` polls it. Input images and
videos go in as Files API URIs (``uploadFile``). Request and response names are the Interactions
API's own (snake_case), as ``google-genai``'s interaction types define them.
"""

from __future__ import annotations

from typing import Any

from openmolt_core import hookimpl
from openmolt_core.integrations import ApiSetup, HttpTool, Integration
from openmolt_core.integrations.schema import obj, passthrough
from openmolt_integrations._google import ENCODERS, GEMINI_API_KEY, gemini_list_models

__all__ = ["DEFAULT_MODEL", "INTEGRATION", "TOOLS", "register_integrations"]

DEFAULT_MODEL = "gemini-omni-1.1-flash"
"""The default video model: Gemini Omni Flash, the Gemini API's video model (Veo's successor)."""

_VIDEO_FILES = ["steps[].content[]", "output_video"]
"""Where an interaction holds generated media: each step's content (and the SDK's shortcut)."""

_CONTENT = obj(
	{
		"type": {
			"type": "string",
			"enum": ["text", "image", "video"],
			"description": "What the block holds.",
		},
		"text": {"type": "string", "description": "For type text: the prompt or instruction."},
		"uri": {
			"type": "string",
			"description": "For image and video: the file.uri returned by uploadFile (or a video uri of an earlier result).",
		},
		"mime_type": {
			"type": "string",
			"description": "For image and video: the media type, e.g. 'image/png', 'video/mp4'.",
		},
	},
	["type"],
)
_INTERACTION_OUT = obj(
	{
		"id": {
			"type": "string",
			"description": "The interaction id, for getInteraction and edits.",
		},
		"status": {
			"type": "string",
			"description": "in_progress while it runs (background), completed, failed...",
		},
		"steps": {
			"type": "array",
			"description": "The timeline: user_input steps, then model_output steps whose content holds the video (type video, saved as {file, mediaType, size} when inline, or a uri for downloadVideo).",
			"items": obj(
				{
					"type": {"type": "string"},
					"content": {"type": "array", "items": {"type": "object"}},
				}
			),
		},
		"errors": {"type": "array", "items": {"type": "object"}},
		"usage": {"type": "object"},
	}
)
_INTERACTION_ID = {
	"type": "string",
	"description": "The interaction id returned by generateVideo.",
}

TOOLS = [
	HttpTool(
		handle="generateVideo",
		description=(
			"Generate a short video with sound from a prompt, optionally from images (a first "
			"frame; up to 3 reference images of a character or product to keep) or a video to "
			"edit or extend. Upload images and videos with uploadFile first and pass them as "
			"input blocks. Returns the interaction: the video is saved as a file "
			"(steps[].content[] of type video) or given as a uri for downloadVideo. To change "
			"the result, call again with previous_interaction_id and an instruction. To continue "
			"a scene (what Veo 3.1's video extension did), give the earlier video as input with "
			"task extend. A last frame (Veo 3.1's first-to-last-frame interpolation) has no "
			"successor on the Gemini API: give only a first frame and describe how it ends."
		),
		scopes=["generate"],
		method="POST",
		endpoint="/v1beta/interactions",
		body={
			"model": f"{{{{ input.model | default: '{DEFAULT_MODEL}' }}}}",
			"response_format": passthrough(
				"aspect_ratio", "resolution", "duration", "delivery", type="video"
			),
			"generation_config": {"video_config": passthrough("task")},
			**passthrough("input", "previous_interaction_id", "background"),
		},
		response_files=_VIDEO_FILES,
		input_schema=obj(
			{
				"input": {
					"type": "array",
					"minItems": 1,
					"items": _CONTENT,
					"description": (
						"The request in order, e.g. [{'type': 'text', 'text': 'A red fox runs "
						"through snow at dawn, slow dolly shot'}], or an image first: "
						"[{'type': 'image', 'uri': '<file.uri>', 'mime_type': 'image/png'}, "
						"{'type': 'text', 'text': 'The fox starts to run'}]. Describe scene, "
						"camera, lighting and sound (dialogue in quotes)."
					),
				},
				"task": {
					"type": "string",
					"enum": [
						"text_to_video",
						"image_to_video",
						"reference_to_video",
						"edit",
						"extend",
						"upscale",
					],
					"description": "Optional: what to do with the input media (image_to_video: the image is the first frame; reference_to_video: keep the look of the images; edit a video; extend: continue a video's scene, replacing Veo 3.1's video extension; upscale a video). The model infers it when omitted.",
				},
				"aspect_ratio": {
					"type": "string",
					"enum": ["16:9", "9:16"],
					"description": "Landscape 16:9 or portrait 9:16.",
				},
				"resolution": {
					"type": "string",
					"enum": ["360p", "720p", "1080p", "4k"],
					"description": "Output resolution (default 720p).",
				},
				"duration": {
					"type": "string",
					"description": "Requested length, e.g. '8s' (the model may choose its own).",
				},
				"delivery": {
					"type": "string",
					"enum": ["inline", "uri"],
					"description": "inline returns the video in the answer (saved as a file); uri returns a link for downloadVideo (large videos always come as uri).",
				},
				"previous_interaction_id": {
					"type": "string",
					"description": "The id of an earlier generateVideo result, to edit that video by instruction.",
				},
				"background": {
					"type": "boolean",
					"description": "Return at once with status in_progress; poll getInteraction (about every 15 seconds) until completed.",
				},
				"model": {
					"type": "string",
					"default": DEFAULT_MODEL,
					"description": f"Video model id (default '{DEFAULT_MODEL}'; also 'gemini-omni-1.2-flash'). listModels shows what the key can use.",
				},
			},
			["input"],
		),
		output_schema=_INTERACTION_OUT,
	),
	HttpTool(
		handle="getInteraction",
		description="Get a video interaction: status in_progress while a background generation runs; when completed, the video is in steps[].content[] (saved as a file, or a uri for downloadVideo).",
		scopes=["generate"],
		method="GET",
		endpoint="/v1beta/interactions/{{ input.id }}",
		response_files=_VIDEO_FILES,
		input_schema=obj({"id": _INTERACTION_ID}, ["id"]),
		output_schema=_INTERACTION_OUT,
	),
	HttpTool(
		handle="uploadFile",
		description="Upload an image or video to the Gemini Files API, to use it in generateVideo (as a block with its file.uri and mime_type). Files are kept 48 hours.",
		scopes=["generate"],
		method="POST",
		endpoint="/upload/v1beta/files",
		query_params={"uploadType": "multipart"},
		request_format="multipart-related",
		body={"metadata": {"file": passthrough("displayName")}, "media": "{{ input.file }}"},
		input_schema=obj(
			{
				"file": {
					"type": "string",
					"description": "The file as a reference: 'openmolt-file:<id>' (e.g. an image from Nano Banana), 'data:<type>;base64,<data>' or 'fileSystem:<path>'.",
				},
				"displayName": {"type": "string", "description": "A name for the file."},
			},
			["file"],
		),
		output_schema=obj(
			{
				"file": obj(
					{
						"name": {"type": "string", "description": "'files/<id>'."},
						"uri": {"type": "string", "description": "Use as the block's uri."},
						"mimeType": {"type": "string"},
						"state": {"type": "string"},
					}
				)
			}
		),
	),
	HttpTool(
		handle="downloadVideo",
		description="Download a generated video (MP4) given as a uri and save it as a file; returns a file reference for other tools (Drive, YouTube upload). Google deletes generated files after 2 days.",
		scopes=["generate"],
		method="GET",
		# The input is the video block's uri (VideoContent.uri); the path takes the file's name.
		endpoint="/v1beta/files/{{ input.uri | split: 'files/' | last | split: ':' | first }}:download",
		query_params={"alt": "media"},
		response_format="binary",
		# The file may redirect to Google's storage host: follow it, without the API key.
		follow_redirects="without-credentials",
		input_schema=obj(
			{
				"uri": {
					"type": "string",
					"description": "The uri of the video block ('https://generativelanguage.googleapis.com/v1beta/files/<id>:download?alt=media'), or 'files/<id>'.",
				}
			},
			["uri"],
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
		"List the Gemini API models the key can use (video models: ids containing 'omni')."
	),
]

INTEGRATION = Integration(
	# What each tool does with data (openmolt_core.taint): none of the three.
	labels={
		"generateVideo": [],
		"getInteraction": [],
		"uploadFile": [],
		"downloadVideo": [],
		"listModels": [],
	},
	encoders=ENCODERS,
	name="Veo",
	description="Generate and edit videos over the Gemini API with Gemini Omni Flash, Veo's successor.",
	api_version="v1beta",
	api_setup=ApiSetup(base_url="https://generativelanguage.googleapis.com", timeout=300.0),
	credential_setup=[GEMINI_API_KEY],
	scopes={
		"generate": "Generate, poll and download videos, upload input media, list models (billed per second of video).",
	},
	tools=TOOLS,
	docs="""## Get a token

Video generation uses a Gemini API key from a project with billing enabled (it has no free tier):

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

The key is sent as the `x-goog-api-key` header.

## Models

The Veo 3.1 preview models (`veo-3.1-generate-preview` and its fast and lite variants) were shut
down on the Gemini API, and `google-genai` sends `generate_videos` only to Vertex AI. Google's
video guide names **Gemini Omni Flash** (`gemini-omni-1.1-flash`, the default here) as the Gemini
API's video model, called through the Interactions API (`POST /v1beta/interactions`). Every tool
that generates takes a `model` input; `listModels` shows what your key can use.

## Images, reference images and videos

Upload media with `uploadFile` and pass it as input blocks (`{"type": "image", "uri": ...,
"mime_type": ...}`): one image as the first frame (`task: image_to_video`), up to three images
of a character or product to keep (`task: reference_to_video`), or a video to edit (`task:
edit`), upscale (`task: upscale`) or extend.

**What replaced Veo 3.1's extension and last-frame tools.** Scene extension (Veo 3.1's video
extension) is `generateVideo` with the earlier video as an input block and `task: extend`.
First-to-last-frame interpolation (Veo's `lastFrame`) has no Gemini API successor: Gemini Omni
Flash takes a first frame only (`task: image_to_video`), so describe the ending in the prompt;
Veo's `lastFrame` remains only on Vertex AI.
Images made by the Nano Banana integration work directly as `uploadFile` input.

A video arrives inline (saved to OpenMolt's file store; the tool returns a file reference) or as
a uri that `downloadVideo` saves. Long generations can run with `background: true` and be polled
with `getInteraction`. Google keeps generated files for 2 days.

## Checked against

The test suite checks `generateVideo` and `getInteraction` (method, path, every body name, and a
full rendered request) against `google-genai`'s Interactions client and its pydantic types, and
`uploadFile`, `downloadVideo` and `listModels` against `google-ai-generativelanguage`'s REST rules
and request messages. Not machine-checked, and why: `google-ai-generativelanguage` has no
Interactions service, so `google-genai` (generated from the API definition) is the only
machine-readable reference; the format of `duration` is not documented there; what the model puts
in its `input` blocks is its input (only the block's field names are checked); and the URI of a
video delivered by `uri` follows the Files API download path that the docs show.
""",
)
"""The Veo (Gemini API video generation) integration."""


@hookimpl
def register_integrations(register: Any) -> None:
	"""Register the Gemini API video integration under the id ``veo``."""
	register(INTEGRATION, id="veo")
