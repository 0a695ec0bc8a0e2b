import json
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.files import FileStore
from openmolt_core.testing import ScriptedModel, call_tool, finish

pytestmark = pytest.mark.anyio

API_KEY = "mci-key-0123456789"


def my_custom_integration(execute: Any = None) -> dict[str, Any]:
	"""The spec's registerIntegration example, in Python (camelCase kept)."""
	tool: dict[str, Any] = {
		"handle": "myCustomTool",
		"description": "A tool for doing something specific with my custom integration.",
		"scopes": ["read", "write"],
		"inputSchema": {
			"type": "object",
			"properties": {
				"param1": {"type": "string", "description": "Description for param1"},
				"param2": {"type": "string", "description": "Description for param2"},
			},
			"required": ["param1", "param2"],
		},
		"outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}},
	}
	if execute is None:
		tool.update(
			method="POST",
			endpoint="/do-something",
			queryParams={},
			body={"param1": "{{ input.param1 }}", "param2": "{{ input.param2 }}"},
		)
	else:
		tool["execute"] = execute
	return {
		"name": "My Custom Integration",
		"apiSetup": {
			"baseUrl": "https://api.mycustomintegration.com",
			"headers": {
				"Authorization": "Bearer {{ config.apiKey }}",
				"Content-Type": "application/json",
			},
			"requestFormat": "json",
			"responseFormat": "json",
		},
		"credentialSetup": [
			{"type": "bearer", "headers": {"Authorization": "Bearer {{ config.apiKey }}"}},
			{
				"type": "custom",
				"headers": {"X-API-Key": "{{ config.apiKey }}"},
				"queryParams": {"api_key": "{{ config.apiKey }}"},
			},
			{
				"type": "oauth2",
				"authUrl": "https://api.mycustomintegration.com/oauth2/authorize",
				"tokenUrl": "https://api.mycustomintegration.com/oauth2/token",
				"clientId": "{{ config.clientId }}",
				"clientSecret": "{{ config.clientSecret }}",
				"refreshToken": "{{ config.refreshToken }}",
				"scopes": ["read", "write"],
			},
		],
		"scopes": {
			"read": "Allows the agent to read data from the custom integration.",
			"write": "Allows the agent to write data to the custom integration.",
		},
		"tools": [
			tool,
			{
				"handle": "readThing",
				"description": "Read a thing.",
				"scopes": ["read"],
				"method": "GET",
				"endpoint": "/things/{{ input.id }}",
				"inputSchema": {
					"type": "object",
					"properties": {"id": {"type": "string"}},
					"required": ["id"],
				},
			},
		],
	}


async def test_spec_example_http_form_end_to_end() -> None:
	"""The agent calls myCustomTool; the request carries the body, the key, and the result comes back."""
	seen: list[httpx.Request] = []

	def api(request: httpx.Request) -> httpx.Response:
		seen.append(request)
		return httpx.Response(200, json={"result": f"did {json.loads(request.content)['param1']}"})

	om = OpenMolt(
		integrations={"myCustomIntegration": {"apiKey": API_KEY}},
		entry_points=False,
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(api)),
	)
	om.register_integration("myCustomIntegration", my_custom_integration())
	model = ScriptedModel(
		[
			call_tool("myCustomIntegration.myCustomTool", param1="a", param2="b"),
			finish(result="done"),
		]
	)
	agent = om.create_agent(name="My Agent", model=model, integrations=["myCustomIntegration"])
	responses: list[Any] = []
	agent.on("tool:response", lambda e: responses.append(e.response))
	result = await agent.run("Initial input")
	assert result.output == {"result": "done"}
	assert str(seen[0].url) == "https://api.mycustomintegration.com/do-something"
	assert json.loads(seen[0].content) == {"param1": "a", "param2": "b"}
	assert seen[0].headers["authorization"] == f"Bearer {API_KEY}"
	assert responses == [{"result": "did a"}]
	model.assert_consumed()


async def test_spec_example_execute_form_end_to_end() -> None:
	"""The execute form runs the function with the input and a context holding the config."""
	seen: list[Any] = []

	async def execute(input: dict[str, Any], context: Any) -> dict[str, Any]:
		seen.append((input, context.config["apiKey"], context.integration))
		return {"result": input["param1"] + input["param2"]}

	om = OpenMolt(entry_points=False)
	om.register_integration("myCustomIntegration", my_custom_integration(execute))
	model = ScriptedModel(
		[call_tool("myCustomIntegration.myCustomTool", param1="x", param2="y"), finish(result="ok")]
	)
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{
				"integration": "myCustomIntegration",
				"credential": {"type": "bearer", "config": {"apiKey": API_KEY}},
			}
		],
	)
	await agent.run()
	assert seen == [({"param1": "x", "param2": "y"}, API_KEY, "myCustomIntegration")]
	results = [json.loads(m.content) for m in model.requests[1].messages if m.role == "user"][1][
		"results"
	]
	# The spec's example declares no labels: its tool counts as untrusted (fail closed).
	assert results == [
		{
			"tool": "myCustomIntegration.myCustomTool",
			"ok": True,
			"result": {"result": "xy"},
			"untrusted": True,
		}
	]


async def test_per_agent_credential_wins_and_custom_type_is_used() -> None:
	"""The agent's credential config overrides the instance's; the custom type adds header and query."""
	seen: list[httpx.Request] = []
	om = OpenMolt(
		integrations={"myCustomIntegration": {"apiKey": "instance-key-xyz"}},
		entry_points=False,
		http_client=httpx.AsyncClient(
			transport=httpx.MockTransport(lambda r: seen.append(r) or httpx.Response(200, json={}))
		),
	)
	om.register_integration("myCustomIntegration", my_custom_integration())
	model = ScriptedModel(
		[call_tool("myCustomIntegration.readThing", id="t/1"), finish(result="ok")]
	)
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{
				"integration": "myCustomIntegration",
				"credential": {"type": "custom", "config": {"apiKey": API_KEY}},
				"scopes": ["read"],
			}
		],
	)
	await agent.run()
	assert seen[0].url.raw_path == f"/things/t%2F1?api_key={API_KEY}".encode()
	assert seen[0].headers["x-api-key"] == API_KEY


async def test_scopes_hide_tools_and_refuse_calls() -> None:
	"""An agent granted only 'read' does not see myCustomTool, and calling it is refused."""
	om = OpenMolt(
		entry_points=False,
		http_client=httpx.AsyncClient(
			transport=httpx.MockTransport(lambda r: pytest.fail("no request expected"))
		),
	)
	om.register_integration("myCustomIntegration", my_custom_integration())
	model = ScriptedModel(
		[call_tool("myCustomIntegration.myCustomTool", param1="a", param2="b"), finish(result="ok")]
	)
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{
				"integration": "myCustomIntegration",
				"credential": {"config": {"apiKey": API_KEY}},
				"scopes": ["read"],
			}
		],
	)
	assert agent.tools == ["myCustomIntegration.readThing"]
	tools_listed = json.loads(agent.first_message(None, _state()))["tools"]
	assert [t["tool"] for t in tools_listed] == ["myCustomIntegration.readThing"]
	await agent.run()
	results = [json.loads(m.content) for m in model.requests[1].messages if m.role == "user"][1][
		"results"
	]
	assert results[0]["ok"] is False and "scope" in results[0]["error"]
	all_scopes = om.create_agent(
		name="B",
		model=model,
		integrations=[{"integration": "myCustomIntegration", "scopes": "all"}],
	)
	assert len(all_scopes.tools) == 2


def _state() -> Any:
	from openmolt_core.result import RunState

	return RunState(memory={"longTerm": "", "shortTerm": ""})


async def test_secrets_never_reach_events_errors_or_the_model() -> None:
	"""A service echoing the key: events, error events and model messages show it redacted."""

	def api(request: httpx.Request) -> httpx.Response:
		return httpx.Response(
			403,
			json={
				"message": f"key {request.headers['authorization']} lacks access",
				"echo": request.url.params.get("api_key"),
			},
		)

	om = OpenMolt(
		entry_points=False, http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
	)
	om.register_integration("myCustomIntegration", my_custom_integration())
	model = ScriptedModel([call_tool("myCustomIntegration.readThing", id="1"), finish(result="ok")])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{
				"integration": "myCustomIntegration",
				"credential": {"type": "custom", "config": {"apiKey": API_KEY}},
			}
		],
	)
	events: list[str] = []
	for name in ("tool:call", "tool:response", "error", "finish"):
		agent.on(name, lambda e: events.append(repr(e)))
	result = await agent.run()
	everything = (
		"\n".join(events)
		+ "\n".join(m.content for r in model.requests for m in r.messages)
		+ json.dumps(result.state.to_dict() if hasattr(result.state, "to_dict") else "")
	)
	assert API_KEY not in everything
	assert "[redacted]" in everything
	assert "403" in everything


async def test_binary_response_goes_to_the_file_store(tmp_path: Any) -> None:
	"""A binary response reaches the model as a file reference, never as bytes."""
	spec = my_custom_integration()
	spec["tools"].append(
		{
			"handle": "download",
			"description": "d",
			"method": "GET",
			"endpoint": "/file",
			"responseFormat": "binary",
			"scopes": ["read"],
		}
	)
	payload = bytes(range(256)) * 4000
	om = OpenMolt(
		entry_points=False,
		files_dir=tmp_path,
		http_client=httpx.AsyncClient(
			transport=httpx.MockTransport(
				lambda r: httpx.Response(
					200, content=payload, headers={"content-type": "video/mp4"}
				)
			)
		),
	)
	om.register_integration("myCustomIntegration", spec)
	model = ScriptedModel([call_tool("myCustomIntegration.download"), finish(result="ok")])
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=[
			{"integration": "myCustomIntegration", "credential": {"config": {"apiKey": API_KEY}}}
		],
	)
	await agent.run()
	turn = [m.content for m in model.requests[1].messages if m.role == "user"][1]
	assert len(turn) < 1000
	ref = json.loads(turn)["results"][0]["result"]
	assert ref["mediaType"] == "video/mp4" and ref["size"] == len(payload)
	assert (await om.files.open(ref["file"])).data == payload


async def test_file_store_references() -> None:
	"""data: URLs decode; unknown or malformed references are refused."""
	store = FileStore()
	assert (await store.open("data:text/plain;base64,aGk=")).data == b"hi"
	assert (await store.open("data:,a%20b")).data == b"a b"
	for bad in (
		"openmolt-file:../../etc/passwd",
		"openmolt-file:nope",
		"file:///etc/passwd",
		"fileSystem:x",
		"data:;base64,@@",
	):
		with pytest.raises(ToolError):
			await store.open(bad)
	saved = await store.save(b"x", media_type="text/plain", name="a.txt")
	root = store.path_of(saved["file"]).parent
	store.close()
	assert not root.exists()
