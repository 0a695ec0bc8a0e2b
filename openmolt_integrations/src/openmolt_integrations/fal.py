"""Fal.ai: run any model hosted on fal (image, video, audio, LLM...) through the official SDK.

The tools use ``fal_client.AsyncClient`` created with the key from the credential config, so
queueing, retries and the CDN upload protocol are the SDK's. The model is an input
(``"fal-ai/flux/dev"``); its arguments are the model's own JSON input. Long jobs go through the
queue: ``submit``, then ``status`` until COMPLETED, then ``result``. ``fal-client`` runs on asyncio.

Targets fal's queue API (``https://queue.fal.run``, sync runs on ``https://fal.run``, uploads
through ``https://rest.fal.ai`` storage tokens), which carries no version: the contract is the
one ``fal-client`` 1.x implements (https://docs.fal.ai/documentation/model-apis/inference/queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openmolt_core import hookimpl
from openmolt_core.errors import ToolError
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	FunctionTool,
	Integration,
)
from openmolt_core.integrations.schema import obj
from openmolt_integrations._support import file_store, require_config

if TYPE_CHECKING:
	from openmolt_core.plugins import IntegrationRegistrar
	from openmolt_core.tools import ToolContext

__all__ = ["INTEGRATION", "register_integrations"]

_CLIENT_KEY = "fal.client"

_MODEL = {
	"type": "string",
	# fal-client writes the id into its queue URLs as it is: no segment may be "." or ".."
	# (a client resolves them, and the request would reach another app).
	"pattern": "^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+$",
	"description": (
		'The fal model (endpoint) id, as on its fal.ai page: "fal-ai/flux/dev", '
		'"fal-ai/kling-video/v2.1/standard/image-to-video", "fal-ai/whisper".'
	),
}
_ARGUMENTS = {
	"type": "object",
	"description": (
		'The model\'s own input, as on its API page (e.g. {"prompt": "...", "image_size": '
		'"landscape_4_3"}). Pass images and media as URLs, e.g. from uploadFile.'
	),
}
_REQUEST_ID = {
	"type": "string",
	# fal-client writes it unencoded into .../requests/{request_id}: one plain segment only.
	"pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$",
	"description": "The request_id returned by submit (a UUID).",
}


def _client(context: ToolContext, tool: str) -> Any:
	key = require_config(context, "apiKey", integration="fal", tool=tool)
	cached = context.extras.get(_CLIENT_KEY)
	if cached is not None and cached[0] == key:
		return cached[1]
	try:
		import fal_client
	except ImportError as exc:
		from openmolt_core._hints import install_command

		raise ToolError(
			"the fal integration needs fal-client, which is not installed; run: "
			f"{install_command('openmolt[fal]')}",
			tool=tool,
		) from exc
	client = fal_client.AsyncClient(key=key)
	context.extras[_CLIENT_KEY] = (key, client)
	return client


def _tool_error(exc: Exception, tool: str) -> ToolError:
	status = getattr(exc, "status_code", None)
	message = str(getattr(exc, "message", "") or exc) or type(exc).__name__
	return ToolError(
		f"fal: {message}",
		tool=tool,
		status_code=status if isinstance(status, int) else None,
		retryable=isinstance(status, int) and (status == 429 or status >= 500),
	)


def _status_dict(status: Any) -> dict[str, Any]:
	import fal_client

	if isinstance(status, fal_client.Queued):
		return {"status": "IN_QUEUE", "queue_position": status.position}
	if isinstance(status, fal_client.InProgress):
		return {"status": "IN_PROGRESS", "logs": status.logs}
	if isinstance(status, fal_client.Completed):
		out: dict[str, Any] = {
			"status": "COMPLETED",
			"logs": status.logs,
			"metrics": status.metrics,
		}
		if status.error:
			out["error"] = status.error
			out["errorType"] = status.error_type
		return out
	return {"status": type(status).__name__.upper()}


async def _run(input: dict[str, Any], context: ToolContext) -> Any:
	tool = "run"
	client = _client(context, tool)
	try:
		return await client.run(
			input["model"],
			input.get("arguments") or {},
			path=input.get("path") or "",
			timeout=input.get("timeout"),
		)
	except Exception as exc:
		raise _tool_error(exc, tool) from exc


async def _submit(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "submit"
	client = _client(context, tool)
	try:
		handle = await client.submit(
			input["model"],
			input.get("arguments") or {},
			path=input.get("path") or "",
			webhook_url=input.get("webhook_url"),
		)
	except Exception as exc:
		raise _tool_error(exc, tool) from exc
	return {"request_id": handle.request_id, "model": input["model"], "status": "IN_QUEUE"}


async def _status(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "status"
	client = _client(context, tool)
	try:
		status = await client.status(
			input["model"], input["request_id"], with_logs=bool(input.get("with_logs"))
		)
	except Exception as exc:
		raise _tool_error(exc, tool) from exc
	return {"request_id": input["request_id"], **_status_dict(status)}


async def _result(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "result"
	client = _client(context, tool)
	import fal_client

	try:
		status = await client.status(input["model"], input["request_id"])
		if not isinstance(status, fal_client.Completed):
			return {"request_id": input["request_id"], "done": False, **_status_dict(status)}
		output = await client.result(input["model"], input["request_id"])
	except Exception as exc:
		raise _tool_error(exc, tool) from exc
	return {"request_id": input["request_id"], "done": True, "output": output}


async def _cancel(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "cancel"
	client = _client(context, tool)
	try:
		await client.cancel(input["model"], input["request_id"])
	except Exception as exc:
		raise _tool_error(exc, tool) from exc
	return {"request_id": input["request_id"], "cancelled": True}


async def _upload(input: dict[str, Any], context: ToolContext) -> dict[str, Any]:
	tool = "uploadFile"
	client = _client(context, tool)
	stored = await file_store(context, tool).open(input["file"])
	try:
		url = await client.upload(stored.data, stored.media_type, stored.name)
	except Exception as exc:
		raise _tool_error(exc, tool) from exc
	return {"url": url, "mediaType": stored.media_type, "size": len(stored.data)}


_PATH = {
	"type": "string",
	"description": "A sub-path of the model's endpoint, for models that have several.",
}

TOOLS = [
	FunctionTool(
		handle="run",
		description=(
			"Run a model and wait for its output (for fast models, under a minute). For "
			"video or other slow jobs use submit and poll status instead."
		),
		function=_run,
		scopes=["run"],
		input_schema=obj(
			{
				"model": _MODEL,
				"arguments": _ARGUMENTS,
				"path": _PATH,
				"timeout": {
					"type": "number",
					"minimum": 1,
					"description": "Seconds to wait for the output before giving up.",
				},
			},
			["model", "arguments"],
			closed=True,
		),
	),
	FunctionTool(
		handle="submit",
		description="Queue a model request and return its request_id at once (for slow jobs).",
		function=_submit,
		scopes=["run"],
		input_schema=obj(
			{
				"model": _MODEL,
				"arguments": _ARGUMENTS,
				"path": _PATH,
				"webhook_url": {
					"type": "string",
					"description": "A URL fal calls with the result when the request finishes.",
				},
			},
			["model", "arguments"],
			closed=True,
		),
		output_schema={
			"type": "object",
			"properties": {"request_id": {"type": "string"}, "status": {"type": "string"}},
		},
	),
	FunctionTool(
		handle="status",
		description=(
			"Check a queued request: IN_QUEUE (with queue_position), IN_PROGRESS or COMPLETED."
		),
		function=_status,
		scopes=["read"],
		input_schema=obj(
			{
				"model": _MODEL,
				"request_id": _REQUEST_ID,
				"with_logs": {
					"type": "boolean",
					"default": False,
					"description": "Include the model's logs.",
				},
			},
			["model", "request_id"],
			closed=True,
		),
	),
	FunctionTool(
		handle="result",
		description=(
			"Get the output of a queued request. If it has not finished yet, returns done=false "
			"and its status: wait and try again."
		),
		function=_result,
		scopes=["read"],
		input_schema=obj(
			{"model": _MODEL, "request_id": _REQUEST_ID}, ["model", "request_id"], closed=True
		),
	),
	FunctionTool(
		handle="cancel",
		description="Cancel a queued request that has not started yet.",
		function=_cancel,
		scopes=["run"],
		input_schema=obj(
			{"model": _MODEL, "request_id": _REQUEST_ID}, ["model", "request_id"], closed=True
		),
	),
	FunctionTool(
		handle="uploadFile",
		description=(
			"Upload a file to fal's CDN and get a public URL to pass as a model input "
			"(image_url, audio_url, video_url...)."
		),
		function=_upload,
		scopes=["upload"],
		input_schema=obj(
			{
				"file": {
					"type": "string",
					"description": (
						"A file reference: openmolt-file:<id> from an earlier tool, a data: URL, "
						"or a path from the fileSystem integration."
					),
				}
			},
			["file"],
			closed=True,
		),
		output_schema={"type": "object", "properties": {"url": {"type": "string"}}},
	),
]

DOCS = """\
## Get a token

1. Sign in at [fal.ai](https://fal.ai) and open the [API keys](https://fal.ai/dashboard/keys)
   page of your dashboard.
2. **Add key** with the API scope and copy it (it looks like `key_id:key_secret`).
3. Install the SDK with `pip install 'openmolt[fal]'` and pass the key as `apiKey`:

```python
om = OpenMolt(integrations={"fal": {"apiKey": "..."}})
agent = om.create_agent(name="Studio", model="openai:gpt-5-mini", integrations=["fal"])
```

Find model ids and their inputs on each model's page at [fal.ai/models](https://fal.ai/models).
The tools use fal's Python SDK, which runs on asyncio (not trio).
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"run": [],
		"submit": [],
		"status": [],
		"result": [],
		"cancel": [],
		"uploadFile": ["outbound"],
	},
	id="fal",
	name="Fal.ai",
	description="Run generative models hosted on fal.ai (images, video, audio) by model id.",
	api_version="queue",
	api_setup=ApiSetup(base_url="https://queue.fal.run"),
	credential_setup=[
		CustomCredential(type="custom", headers={"Authorization": "Key {{ config.apiKey }}"})
	],
	scopes={
		"run": "Run, queue and cancel model requests (billed by fal).",
		"read": "Read the status and output of queued requests.",
		"upload": "Upload files to fal's CDN (they get a public URL).",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the Fal.ai integration."""
	register(INTEGRATION, id="fal")
