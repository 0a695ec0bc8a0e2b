"""browser-use cloud (API v2): hand a web task to a cloud browser agent and collect its result.

A task runs asynchronously: ``createTask`` returns its id at once, ``getTaskStatus`` is the cheap
poll, and ``getTask`` returns the output (text, or JSON matching ``structuredOutput``), the steps
and the files the browser produced. Sessions keep one browser open across several tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmolt_core import hookimpl
from openmolt_core.integrations import (
	ApiSetup,
	CustomCredential,
	HttpTool,
	Integration,
)
from openmolt_core.integrations.schema import integer, obj, passthrough, string

if TYPE_CHECKING:
	from openmolt_core.plugins import IntegrationRegistrar

__all__ = ["INTEGRATION", "register_integrations"]

BASE_URL = "https://api.browser-use.com/api/v2"

# Ids are UUIDs (the SDK models' TaskView.id, SessionView.id, CreateTaskRequest.session_id...).
_TASK_ID = string("The task id returned by createTask.", format="uuid")
_SESSION_ID = string("The session id returned by createSession.", format="uuid")
# The API's SupportedLLMs enum (browser-use-sdk 3.12.1 generated/v2/models.py, from the
# service's OpenAPI); CreateTaskRequest.llm defaults to browser-use-2.0.
LLMS = [
	"browser-use-llm",
	"browser-use-2.0",
	"bu-2-0-mini-preview",
	"gpt-4.1",
	"gpt-4.1-mini",
	"o4-mini",
	"o3",
	"gpt-5.5",
	"gpt-5.6-sol",
	"gpt-5.6-terra",
	"gpt-5.6-luna",
	"gemini-2.5-flash",
	"gemini-2.5-pro",
	"gemini-3-pro-preview",
	"gemini-3.1-pro-preview",
	"gemini-3-flash-preview",
	"gemini-3.5-flash",
	"gemini-flash-latest",
	"gemini-flash-lite-latest",
	"claude-sonnet-4-20250514",
	"claude-sonnet-4-5-20250929",
	"claude-sonnet-5",
	"claude-opus-4-5-20251101",
	"claude-opus-4-7",
	"claude-opus-4-8",
	"claude-opus-5",
	"glm-5.2",
	"minimax-m3",
	"grok-4.6",
	"glm-5.3-flash",
	"deepseek-v4-flash-vision",
	"llama-4-maverick-17b-128e-instruct",
	"claude-3-7-sonnet-20250219",
]
_PAGE_SIZE = integer("Items per page (default 10).", minimum=1, maximum=100)
_PAGE_NUMBER = integer("Page number, from 1.", minimum=1)

_STATUS_OUT = {
	"type": "object",
	"properties": {
		"id": {"type": "string"},
		"status": {
			"type": "string",
			"enum": ["created", "started", "finished", "failed", "stopped"],
		},
		"output": {"type": ["string", "null"]},
		"isSuccess": {"type": ["boolean", "null"]},
		"cost": {"type": ["string", "null"]},
	},
}


TOOLS: list[HttpTool] = [
	HttpTool(
		handle="createTask",
		description=(
			"Start a browser agent on a task described in plain words (it browses, clicks, fills "
			"forms). Returns the task id and session id at once; poll getTaskStatus, then read "
			"the output with getTask. Give structuredOutput to get JSON back."
		),
		scopes=["run"],
		method="POST",
		endpoint="/tasks",
		body=passthrough(
			"task",
			"llm",
			"startUrl",
			"maxSteps",
			"structuredOutput",
			"sessionId",
			"metadata",
			"secrets",
			"allowedDomains",
			"flashMode",
			"thinking",
			"vision",
			"systemPromptExtension",
		),
		input_schema=obj(
			{
				"task": {
					"type": "string",
					"minLength": 1,
					"maxLength": 50000,
					"description": "What the browser agent must do, step by step if it matters.",
				},
				"llm": {
					"type": "string",
					"enum": LLMS,
					"description": 'The model driving the browser (default "browser-use-2.0").',
				},
				"startUrl": {"type": "string", "description": "The page to open first."},
				"maxSteps": {
					"type": "integer",
					"minimum": 1,
					"maximum": 10000,
					"description": "Stop after this many browser steps (default 100).",
				},
				"structuredOutput": {
					"type": "string",
					"description": (
						"A JSON Schema, written as a JSON string, that the task's output must "
						'match (e.g. "{\\"type\\":\\"object\\",\\"properties\\":{...}}").'
					),
				},
				"sessionId": {
					**_SESSION_ID,
					"description": "Run in this existing session (keeps cookies and open tabs).",
				},
				"metadata": {
					"type": "object",
					"additionalProperties": {"type": "string"},
					"maxProperties": 10,
					"description": "Up to 10 string labels of your own, returned with the task.",
				},
				"secrets": {
					"type": "object",
					"additionalProperties": {"type": "string"},
					"description": "Placeholder name → secret value; the agent types them without seeing them.",
				},
				"allowedDomains": {
					"type": "array",
					"items": {"type": "string"},
					"description": 'Only browse these domains ("example.com", "*.example.com").',
				},
				"flashMode": {
					"type": "boolean",
					"description": "Faster, cheaper mode for simple tasks.",
				},
				"thinking": {
					"type": "boolean",
					"description": "Let the agent reason before each step.",
				},
				"vision": {
					"type": "boolean",
					"description": "Let the agent look at screenshots (default true).",
				},
				"systemPromptExtension": {
					"type": "string",
					"maxLength": 10000,
					"description": "Extra instructions appended to the browser agent's system prompt.",
				},
			},
			["task"],
			closed=True,
		),
		output_schema={
			"type": "object",
			"properties": {"id": {"type": "string"}, "sessionId": {"type": "string"}},
		},
	),
	HttpTool(
		handle="getTaskStatus",
		description="Cheap poll of a task: status, and the output once it has finished.",
		scopes=["read"],
		method="GET",
		endpoint="/tasks/{{ input.task_id }}/status",
		input_schema=obj({"task_id": _TASK_ID}, ["task_id"], closed=True),
		output_schema=_STATUS_OUT,
	),
	HttpTool(
		handle="getTask",
		description=(
			"Full details of a task: status, output (JSON text when structuredOutput was "
			"given), steps taken, output files and cost."
		),
		scopes=["read"],
		method="GET",
		endpoint="/tasks/{{ input.task_id }}",
		input_schema=obj({"task_id": _TASK_ID}, ["task_id"], closed=True),
	),
	HttpTool(
		handle="listTasks",
		description="List tasks, newest first, optionally those of one session or status.",
		scopes=["read"],
		method="GET",
		endpoint="/tasks",
		query_params=passthrough("pageSize", "pageNumber", "sessionId", "filterBy"),
		input_schema=obj(
			{
				"pageSize": _PAGE_SIZE,
				"pageNumber": _PAGE_NUMBER,
				"sessionId": {**_SESSION_ID, "description": "Only tasks of this session."},
				"filterBy": {
					"type": "string",
					"enum": ["created", "started", "finished", "failed", "stopped"],
					"description": "Only tasks with this status.",
				},
			},
			closed=True,
		),
	),
	HttpTool(
		handle="stopTask",
		description="Stop a running task, and optionally its browser session too.",
		scopes=["control"],
		method="PATCH",
		endpoint="/tasks/{{ input.task_id }}",
		body={"action": "{{ input.action | default: 'stop' }}"},
		input_schema=obj(
			{
				"task_id": _TASK_ID,
				"action": {
					"type": "string",
					"enum": ["stop", "stop_task_and_session"],
					"default": "stop",
					"description": '"stop" the task only, or "stop_task_and_session" to close the browser too.',
				},
			},
			["task_id"],
			closed=True,
		),
	),
	HttpTool(
		handle="getTaskLogs",
		description="Get a download URL for a task's execution log.",
		scopes=["read"],
		method="GET",
		endpoint="/tasks/{{ input.task_id }}/logs",
		input_schema=obj({"task_id": _TASK_ID}, ["task_id"], closed=True),
	),
	HttpTool(
		handle="getTaskOutputFile",
		description="Get a download URL for one file a task produced (ids are in getTask's outputFiles).",
		scopes=["read"],
		method="GET",
		endpoint="/files/tasks/{{ input.task_id }}/output-files/{{ input.file_id }}",
		input_schema=obj(
			{
				"task_id": _TASK_ID,
				"file_id": string(
					"The output file's id (from getTask's outputFiles).", format="uuid"
				),
			},
			["task_id", "file_id"],
			closed=True,
		),
	),
	HttpTool(
		handle="createSession",
		description=(
			"Open a cloud browser session to run several tasks in a row in the same browser. "
			"Returns its id and a live URL to watch it."
		),
		scopes=["run"],
		method="POST",
		endpoint="/sessions",
		body=passthrough("profileId", "proxyCountryCode", "startUrl", "keepAlive"),
		input_schema=obj(
			{
				"profileId": {
					"type": "string",
					"format": "uuid",
					"description": "A saved browser profile (cookies, logins) to start from.",
				},
				"proxyCountryCode": {
					"type": "string",
					"pattern": "^[a-z]{2}$",
					"description": 'Two-letter country of the proxy, lowercase ("us", "de").',
				},
				"startUrl": {"type": "string", "description": "The page to open first."},
				"keepAlive": {
					"type": "boolean",
					"description": "Keep the browser open between tasks until stopSession.",
				},
			},
			closed=True,
		),
	),
	HttpTool(
		handle="getSession",
		description="Details of a session: status, live URL, and its tasks.",
		scopes=["read"],
		method="GET",
		endpoint="/sessions/{{ input.session_id }}",
		input_schema=obj({"session_id": _SESSION_ID}, ["session_id"], closed=True),
	),
	HttpTool(
		handle="listSessions",
		description="List browser sessions, newest first.",
		scopes=["read"],
		method="GET",
		endpoint="/sessions",
		query_params=passthrough("pageSize", "pageNumber", "filterBy"),
		input_schema=obj(
			{
				"pageSize": _PAGE_SIZE,
				"pageNumber": _PAGE_NUMBER,
				"filterBy": {
					"type": "string",
					"enum": ["active", "stopped"],
					"description": "Only sessions with this status.",
				},
			},
			closed=True,
		),
	),
	HttpTool(
		handle="stopSession",
		description="Stop a session and close its browser (running tasks stop too).",
		scopes=["control"],
		method="PATCH",
		endpoint="/sessions/{{ input.session_id }}",
		body={"action": "stop"},
		input_schema=obj({"session_id": _SESSION_ID}, ["session_id"], closed=True),
	),
]

DOCS = """\
## Get a token

1. Sign in at [cloud.browser-use.com](https://cloud.browser-use.com).
2. Open **Settings → API keys** and create a key (it starts with `bu_`).
3. Pass it as `apiKey`:

```python
om = OpenMolt(integrations={"browserUse": {"apiKey": "bu_..."}})
agent = om.create_agent(name="Researcher", model="openai:gpt-5-mini",
                        integrations=["browserUse"])
```

Tasks run asynchronously: the agent starts one with `createTask`, polls `getTaskStatus` (use
the `wait` command between polls), then reads the result with `getTask`. To get JSON back, pass
a JSON Schema string as `structuredOutput`. `config.baseUrl` overrides the API base URL (default
`https://api.browser-use.com/api/v2`).
"""

INTEGRATION = Integration(
	# What the tools do with data (openmolt_core.taint): see docs/integration-authoring.md.
	labels={
		# Reads no private data, returns nothing others wrote, sends nothing out.
		"stopTask": [],
		"getTaskLogs": [],
		"getTaskOutputFile": [],
		"createSession": [],
		"listSessions": [],
		"stopSession": [],
		"createTask": ["outbound"],
		"getTask": ["untrusted"],
		"getTaskStatus": ["untrusted"],
		"listTasks": ["untrusted"],
		# Others' words: its tasks, with their output, as listTasks.
		"getSession": ["untrusted"],
	},
	id="browserUse",
	name="browser-use",
	description="Cloud browser agents that carry out web tasks and return text or JSON.",
	api_version="v2",
	api_setup=ApiSetup(base_url="{{ config.baseUrl | default: '" + BASE_URL + "' }}"),
	credential_setup=[
		CustomCredential(type="custom", headers={"X-Browser-Use-API-Key": "{{ config.apiKey }}"})
	],
	scopes={
		"read": "Read tasks, sessions, logs and output files.",
		"run": "Start browser tasks and sessions (spends credits).",
		"control": "Stop tasks and sessions.",
	},
	tools=TOOLS,
	docs=DOCS,
)


@hookimpl
def register_integrations(register: IntegrationRegistrar) -> None:
	"""Register the browser-use integration."""
	register(INTEGRATION, id="browserUse")
