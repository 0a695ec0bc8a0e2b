"""OpenAI GPT-Image: generate and edit images with the current GPT image models.

Targets the OpenAI REST API v1 (``POST /v1/images/generations`` and ``/v1/images/edits``, as the
``openai`` Python package 3.57 sends them); ``config.baseUrl`` points it at a compatible service.

The Images API answers with base64 JSON (``data[].b64_json``), not with bytes. Pasting that into
the model's context would waste it, so both tools are Python functions: they call the API through
the shared HTTP client, decode the images and save them in the file store, and return file
references (``openmolt-file:<id>``) that other tools (Drive, Dropbox, S3...) can upload.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	ApiSetup,
	BearerCredential,
	FunctionTool,
	Integration,
)
from openmolt_integrations._support import file_store, require_config

if TYPE_CHECKING:
	import httpx

	from openmolt_core.plugins import IntegrationRegistrar
	from openmolt_core.tools import ToolContext

__all__ = [
	"DEFAULT_MODEL",
	"EDIT_PARAMS",
	"GENERATE_PARAMS",
	"INPUT_FIDELITY",
	"INTEGRATION",
	"MODELS",
	"register_integrations",
]

BASE_URL = "https://api.openai.com/v1"

MODELS = [
	"gpt-image-2",
	"gpt-image-2-2026-04-21",
	"gpt-image-2.5-sunburst",
	"gpt-image-2.5-sunburst-2026-09-08",
	"gpt-image-2.5-flare",
	"gpt-image-2.5-flare-2026-09-08",
	"gpt-image-2.6-sunburst",
	"gpt-image-2.6-flare",
	"gpt-image-1.5",
	"gpt-image-1-mini",
	"chatgpt-image-latest",
]
"""The GPT image models the API serves (``gpt-image-1`` and DALL·E are shut down)."""

DEFAULT_MODEL = "gpt-image-2"
"""The model used when the agent names none."""

_MEDIA_TYPES = {
	"png": "image/png",
	"jpeg": "image/jpeg",
	"webp": "image/webp",
	"gif": "image/gif",
	"svg": "image/svg+xml",
}
_EXTENSIONS = {"jpeg": "jpg"}

GENERATE_PARAMS = {
	"prompt": "prompt",
	"model": "model",
	"size": "size",
	"quality": "quality",
	"n": "n",
	"background": "background",
	"output_format": "output_format",
	"output_compression": "output_compression",
	"moderation": "moderation",
}
"""Tool input name → Images API parameter of ``POST /images/generations``."""

EDIT_PARAMS = {
	"prompt": "prompt",
	"model": "model",
	"size": "size",
	"quality": "quality",
	"n": "n",
	"background": "background",
	"output_format": "output_format",
	"output_compression": "output_compression",
	"input_fidelity": "input_fidelity",
}
"""Tool input name → form field of ``POST /images/edits`` (besides ``image`` and ``mask``)."""

INPUT_FIDELITY = {"gpt-image-1.5": ("high", "low"), "gpt-image-1-mini": ("low",)}
"""The models that take ``input_fidelity``, with the values each accepts.

The openai SDK's ``ImageEditParams`` says: "Supports `high` and `low` on `gpt-image-1.5`;
`gpt-image-1-mini` supports only `low`. For `gpt-image-2`, omit this parameter." Every other
model gets no ``input_fidelity`` field (it is dropped, not sent).
"""

_COMMON: dict[str, Any] = {
	"prompt": {
		"type": "string",
		"maxLength": 32000,
		"description": "What the image should show: subject, style, composition, text to render.",
	},
	"model": {
		"type": "string",
		"enum": MODELS,
		"default": DEFAULT_MODEL,
		"description": "The image model.",
	},
	"size": {
		"type": "string",
		"default": "auto",
		"description": (
			'"1024x1024", "1536x1024" (landscape), "1024x1536" (portrait) or "auto". The '
			'gpt-image-2 family also takes any "WIDTHxHEIGHT" in multiples of 16 with a ratio '
			"between 1:3 and 3:1, up to 3840x2160."
		),
	},
	"quality": {
		"type": "string",
		"enum": ["low", "medium", "high", "xhigh", "max", "auto"],
		"default": "auto",
		"description": "Rendering quality; xhigh and max only on the gpt-image-2.5 models.",
	},
	"n": {
		"type": "integer",
		"minimum": 1,
		"maximum": 10,
		"default": 1,
		"description": "How many images to make.",
	},
	"background": {
		"type": "string",
		"enum": ["transparent", "opaque", "auto"],
		"default": "auto",
		"description": "transparent needs output_format png or webp.",
	},
	"output_format": {
		"type": "string",
		"enum": ["png", "jpeg", "webp", "gif", "svg"],
		"default": "png",
		"description": "The saved file's format (gif and svg are previews on some models).",
	},
	"output_compression": {
		"type": "integer",
		"minimum": 0,
		"maximum": 100,
		"description": "Compression 0-100 for jpeg and webp (default 100).",
	},
	"file_name": {
		"type": "string",
		"description": 'Base name for the saved files ("logo" gives logo-1.png, logo-2.png...).',
	},
}

_OUTPUT = {
	"type": "object",
	"properties": {
		"images": {
			"type": "array",
			"items": {
				"type": "object",
				"properties": {
					"file": {"type": "string", "description": "openmolt-file:<id>"},
					"mediaType": {"type": "string"},
					"size": {"type": "integer"},
					"name": {"type": "string"},
				},
			},
		},
		"model": {"type": "string"},
		"size": {"type": "string"},
		"quality": {"type": "string"},
		"background": {"type": "string"},
		"output_format": {"type": "string"},
		"usage": {"type": "object"},
	},
}


def _headers(context: ToolContext, tool: str) -> dict[str, str]:
	key = require_config(context, "apiKey", integration="openaiImage", tool=tool)
	headers = {"Authorization": f"Bearer {key}"}
	if context.config.get("organization"):
		headers["OpenAI-Organization"] = str(context.config["organization"])
	if context.config.get("project"):
		headers["OpenAI-Project"] = str(context.config["project"])
	return headers


def _url(context: ToolContext, path: str) -> str:
	base = str(context.config.get("baseUrl") or BASE_URL).rstrip("/")
	return base + path


def _http(context: ToolContext, tool: str) -> httpx.AsyncClient:
	if context.http is None:
		raise ToolError("no HTTP client is available; run the tool through an agent", tool=tool)
	return context.http()


def _check(response: httpx.Response, tool: str) -> dict[str, Any]:
	try:
		payload = response.json()
	except ValueError:
		payload = None
	if response.is_success and isinstance(payload, dict):
		return payload
	message = ""
	if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
		message = str(payload["error"].get("message") or "")
	if not message:
		from openmolt_core.secrets import masked_excerpt

		message = masked_excerpt(response.text, 500) or response.reason_phrase
	raise ToolError(
		f"OpenAI Images API error {response.status_code}: {message}",
		tool=tool,
		status_code=response.status_code,
		details=payload.get("error") if isinstance(payload, dict) else None,
		retryable=response.status_code == 429 or response.status_code >= 500,
	)


async def _save_images(
	payload: dict[str, Any], input: dict[str, Any], context: ToolContext, tool: str
) -> dict[str, Any]:
	store = file_store(context, tool)
	fmt = payload.get("output_format") or input.get("output_format") or "png"
	media_type = _MEDIA_TYPES.get(fmt, "application/octet-stream")
	ext = _EXTENSIONS.get(fmt, fmt)
	stem = input.get("file_name") or "image"
	images = []
	for index, item in enumerate(payload.get("data") or [], start=1):
		encoded = item.get("b64_json")
		if not encoded:
			continue
		try:
			data = base64.b64decode(encoded, validate=True)
		except (binascii.Error, ValueError) as exc:
			raise ToolError(f"the API returned an undecodable image: {exc}", tool=tool) from exc
		images.append(await store.save(data, media_type=media_type, name=f"{stem}-{index}.{ext}"))
	if not images:
		raise ToolError("the API returned no image; try another prompt", tool=tool)
	out: dict[str, Any] = {"images": images, "model": input.get("model", DEFAULT_MODEL)}
	for key, name in (
		("size", "size"),
		("quality", "quality"),
		("background", "background"),
		("output_format", "output_format"),
		("usage", "usage"),
	):
		if payload.get(key) is not None:
			out[name] = payload[key]
	return out


def _params(input: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
	params = {api: input[name] for name, api in mapping.items() if input.get(name) is not None}
	params.setdefault("model", DEFAULT_MODEL)
	return params


async def _generate(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "generateImage"
	response = await _http(context, tool).post(
		_url(context, "/images/generations"),
		json=_params(input, GENERATE_PARAMS),
		headers=_headers(context, tool),
		timeout=300.0,
	)
	return await _save_images(_check(response, tool), input, context, tool)


async def _edit(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "editImage"
	store = file_store(context, tool)
	references = input.get("image") or []
	if not 1 <= len(references) <= 16:
		raise ToolError("give between 1 and 16 images to edit", tool=tool)
	field = "image" if len(references) == 1 else "image[]"
	files: list[tuple[str, tuple[str, bytes, str]]] = []
	for reference in references:
		stored = await store.open(reference)
		files.append((field, (stored.name, stored.data, stored.media_type)))
	if input.get("mask"):
		mask = await store.open(input["mask"])
		files.append(("mask", (mask.name, mask.data, mask.media_type)))
	params = _params(input, EDIT_PARAMS)
	fidelity = params.pop("input_fidelity", None)
	allowed = INPUT_FIDELITY.get(params["model"])
	if fidelity is not None and allowed is not None:
		if fidelity not in allowed:
			raise ToolError(
				f"input_fidelity {fidelity!r} is not accepted by {params['model']}; use "
				f"{' or '.join(repr(v) for v in allowed)}, or omit it",
				tool=tool,
			)
		params["input_fidelity"] = fidelity
	data = {key: str(value) for key, value in params.items()}
	response = await _http(context, tool).post(
		_url(context, "/images/edits"),
		data=data,
		files=files,
		headers=_headers(context, tool),
		timeout=300.0,
	)
	return await _save_images(_check(response, tool), input, context, tool)


_FILE_REF = (
	"A file reference: openmolt-file:<id> from an earlier tool, a data: URL, or a path from the "
	"fileSystem integration."
)

TOOLS = [
	FunctionTool(
		handle="generateImage",
		description=(
			"Create images from a text prompt. The images are saved as files; you get file "
			"references (openmolt-file:...) to pass to other tools, never the pixels."
		),
		function=_generate,
		scopes=["generate"],
		input_schema={
			"type": "object",
			"properties": {
				**_COMMON,
				"moderation": {
					"type": "string",
					"enum": ["low", "auto"],
					"default": "auto",
					"description": "Content filtering: auto, or low for less restrictive.",
				},
			},
			"required": ["prompt"],
			"additionalProperties": False,
		},
		output_schema=_OUTPUT,
	),
	FunctionTool(
		handle="editImage",
		description=(
			"Edit images or combine up to 16 of them following a prompt (e.g. put this product "
			"on that background). With a mask, only its transparent area is repainted. The "
			"results are saved as files."
		),
		function=_edit,
		scopes=["generate"],
		input_schema={
			"type": "object",
			"properties": {
				"image": {
					"type": "array",
					"items": {"type": "string", "description": _FILE_REF},
					"minItems": 1,
					"maxItems": 16,
					"description": "The source images (png, webp or jpg, under 50 MB each).",
				},
				"mask": {
					"type": "string",
					"description": (
						"A PNG as large as the first image whose transparent pixels mark where to "
						"edit. " + _FILE_REF
					),
				},
				**_COMMON,
				"input_fidelity": {
					"type": "string",
					"enum": ["high", "low"],
					"description": (
						"high keeps faces and logos of the inputs closer. Only gpt-image-1.5 "
						"(high or low) and gpt-image-1-mini (low) take it; it is left out for "
						"the other models, gpt-image-2 included."
					),
				},
			},
			"required": ["image", "prompt"],
			"additionalProperties": False,
		},
		output_schema=_OUTPUT,
	),
]

DOCS = """\
## Get a token

1. Sign in at [platform.openai.com](https://platform.openai.com) and open
   **Settings → API keys** (or a project's API keys page).
2. **Create new secret key**, give it a name, and copy it (it starts with `sk-`). GPT image
   models may need [organization verification](https://platform.openai.com/settings/organization/general).
3. Pass it as `apiKey` (optionally `organization` and `project`; `baseUrl` for a proxy):

```python
om = OpenMolt(integrations={"openaiImage": {"apiKey": "sk-..."}})
agent = om.create_agent(name="Designer", model="openai:gpt-5-mini",
                        integrations=["openaiImage", "dropbox"])
```

Generated images are saved in OpenMolt's file store and come back as `openmolt-file:` references
that upload tools (Dropbox, S3, Drive...) accept directly.
"""

INTEGRATION = Integration(
	# What each tool does with data (openmolt_core.taint): none of the three.
	labels={
		"generateImage": [],
		"editImage": [],
	},
	id="openaiImage",
	name="OpenAI GPT-Image",
	description="Generate and edit images with OpenAI's GPT image models; results saved as files.",
	api_version="v1",
	# The tools are Python (`_headers`, `_url`); the setup names the config they read, so that
	# `openmolt tools openaiImage` lists it and OPENMOLT_OPENAI_IMAGE_<KEY> fills it.
	api_setup=ApiSetup(
		base_url="{{ config.baseUrl | default: '" + BASE_URL + "' }}",
		headers={
			"OpenAI-Organization": "{{ config.organization }}",
			"OpenAI-Project": "{{ config.project }}",
		},
	),
	credential_setup=[
		BearerCredential(type="bearer", headers={"Authorization": "Bearer {{ config.apiKey }}"})
	],
	scopes={"generate": "Generate and edit images (billed per image)."},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the OpenAI GPT-Image integration."""
	register(INTEGRATION, id="openaiImage")
