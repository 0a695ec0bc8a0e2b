"""Large results are stored, previewed with their shape, and read back in slices."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import FunctionTool, HumanInputUnavailable, OpenMolt
from openmolt_core.errors import ToolError
from openmolt_core.llm import ModelRequest
from openmolt_core.offload import READ_TOOL, resolve_pointer, select_path, shape
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish

from ._many import CONFIG

pytestmark = pytest.mark.anyio


# fixtures the size of real responses --------------------------------------------------------


def gmail_list(n: int = 500) -> dict[str, Any]:
	"""users.messages.list (https://developers.google.com/gmail/api/reference/rest/v1/users.messages/list)."""
	return {
		"messages": [{"id": f"18c{i:013x}", "threadId": f"18c{i // 3:013x}"} for i in range(n)],
		"nextPageToken": "09876543210987654321",
		"resultSizeEstimate": n,
	}


def gmail_message(body_chars: int = 60_000) -> dict[str, Any]:
	"""users.messages.get, format=full: a multipart message with a large HTML part."""
	html = ("<p>" + "Quarterly numbers attached. " * 40 + "</p>\n") * (body_chars // 1200)

	def part(pid: str, mime: str, text: str) -> dict[str, Any]:
		data = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
		return {
			"partId": pid,
			"mimeType": mime,
			"filename": "",
			"headers": [{"name": "Content-Type", "value": f"{mime}; charset=UTF-8"}],
			"body": {"size": len(text), "data": data},
		}

	return {
		"id": "18c0000000000001",
		"threadId": "18c0000000000001",
		"labelIds": ["INBOX", "IMPORTANT", "CATEGORY_UPDATES"],
		"snippet": "Quarterly numbers attached.",
		"historyId": "123456",
		"internalDate": "1700000000000",
		"payload": {
			"partId": "",
			"mimeType": "multipart/alternative",
			"filename": "",
			"headers": [
				{"name": "From", "value": "Finance <finance@example.com>"},
				{"name": "To", "value": "me@example.com"},
				{"name": "Subject", "value": "Q3 report"},
			],
			"body": {"size": 0},
			"parts": [
				part("0", "text/plain", "Quarterly numbers attached."),
				part("1", "text/html", html),
			],
		},
		"sizeEstimate": body_chars,
	}


def sheet_values(rows: int = 2000, cols: int = 12) -> dict[str, Any]:
	"""spreadsheets.values.get (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/get)."""
	header = [f"Column {c}" for c in range(cols)]
	body = [[f"r{r}c{c}" for c in range(cols)] for r in range(1, rows)]
	return {"range": f"Sheet1!A1:L{rows}", "majorDimension": "ROWS", "values": [header, *body]}


def notion_query(pages: int = 100) -> dict[str, Any]:
	"""Query a data source (https://developers.notion.com/reference/query-a-data-source)."""

	def page(i: int) -> dict[str, Any]:
		return {
			"object": "page",
			"id": f"1a2b3c4d-0000-0000-0000-{i:012d}",
			"created_time": "2025-01-01T00:00:00.000Z",
			"last_edited_time": "2025-01-02T00:00:00.000Z",
			"archived": False,
			"in_trash": False,
			"url": f"https://www.notion.so/Task-{i}",
			"parent": {"type": "data_source_id", "data_source_id": "ds-1"},
			"properties": {
				"Name": {
					"id": "title",
					"type": "title",
					"title": [
						{
							"type": "text",
							"text": {"content": f"Task {i}", "link": None},
							"plain_text": f"Task {i}",
							"href": None,
						}
					],
				},
				"Status": {
					"id": "s1",
					"type": "status",
					"status": {"name": "Done", "color": "green"},
				},
				"Due": {"id": "d1", "type": "date", "date": {"start": "2025-02-01", "end": None}},
			},
		}

	return {
		"object": "list",
		"results": [page(i) for i in range(pages)],
		"next_cursor": None,
		"has_more": False,
		"type": "page_or_data_source",
		"page_or_data_source": {},
	}


# helpers ------------------------------------------------------------------------------------


def results(model: ScriptedModel, request: int) -> list[dict[str, Any]]:
	return json.loads(model.requests[request].messages[-1].content)["results"]


def stored_handle(request: ModelRequest) -> str:
	"""The handle of the last result stored, as the model read it."""
	for message in reversed(request.messages):
		if message.role != "user" or '"results"' not in message.content:
			continue
		for entry in json.loads(message.content)["results"]:
			stored = (entry.get("result") or {}).get("stored") if entry.get("ok") else None
			if isinstance(stored, str):
				return stored
	raise AssertionError("no stored result in the conversation")


def read(**selector: Any) -> Callable[[ModelRequest], dict[str, Any]]:
	"""A scripted reply that reads the result stored at the previous step."""
	return lambda request: call_tool(READ_TOOL, result=stored_handle(request), **selector)


def routes(table: dict[str, Any]) -> Callable[[httpx.Request], httpx.Response]:
	def handler(request: httpx.Request) -> httpx.Response:
		for path, body in table.items():
			if request.url.path == path:
				return httpx.Response(200, json=body)
		return httpx.Response(404, json={"error": {"message": f"no route {request.url.path}"}})

	return handler


def google_om(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> OpenMolt:
	http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
	return OpenMolt(integrations=CONFIG, http_client=http, **options)


# the three services -------------------------------------------------------------------------


async def test_a_gmail_listing_is_stored_previewed_and_read_by_pointer_and_path() -> None:
	"""500 message ids: the model sees the shape and reads ids by pointer and by JSONPath."""
	listing = gmail_list()
	om = google_om(routes({"/gmail/v1/users/me/messages": listing}))
	model = ScriptedModel(
		[
			call_tool("gmail.listMessages", maxResults=500),
			read(pointer="/messages/499/id"),
			read(path="$.messages[0:3].id"),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="Mail", model=model, integrations=["gmail"])
	result = await agent.run("Latest mail")
	assert result.status == "success", result.error
	preview = results(model, 1)[0]["result"]
	assert preview["mediaType"] == "application/json"
	assert preview["chars"] == len(json.dumps(listing, separators=(",", ":")))
	assert preview["shape"] == {
		"messages": [{"id": "string", "threadId": "string"}, "… 500 items"],
		"nextPageToken": "string",
		"resultSizeEstimate": "integer",
	}
	assert len(json.dumps(preview)) < 3_000
	assert results(model, 2)[0]["result"]["value"] == listing["messages"][499]["id"]
	assert results(model, 3)[0]["result"]["value"] == [m["id"] for m in listing["messages"][:3]]
	assert result.state.loaded == [READ_TOOL]
	[record] = result.state.stored
	assert record["tool"] == "gmail.listMessages" and record["step"] == 1
	stored = om.files.read(record["file"])  # the handle is a file reference too
	assert json.loads(stored.data) == listing


async def test_a_large_gmail_message_shows_where_its_bulk_is() -> None:
	"""A full message's shape names the long base64 part; reading it whole is refused, by bytes works."""
	message = gmail_message()
	om = google_om(routes({"/gmail/v1/users/me/messages/18c0000000000001": message}))
	model = ScriptedModel(
		[
			call_tool("gmail.getMessage", id="18c0000000000001"),
			read(pointer="/payload/parts/1/body/data"),
			read(path="$.payload.headers[?(@.name=='Subject')]"),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="Mail", model=model, integrations=["gmail"])
	await agent.run("Read it")
	preview = results(model, 1)[0]["result"]
	part = preview["shape"]["payload"]["parts"][0]
	assert part["body"]["data"].startswith("string(") and "chars)" in part["body"]["data"]
	too_large = results(model, 2)[0]["result"]
	assert too_large["tooLarge"] is True and too_large["shape"].startswith("string(")
	refused = results(model, 3)[0]
	assert refused["ok"] is False and "filters are not supported" in refused["error"]


async def test_sheets_values_too_large_to_select_at_once_then_a_slice() -> None:
	"""2,000 rows: a column is still too large, a slice of rows and a line range are not."""
	values = sheet_values()
	om = google_om(routes({"/v4/spreadsheets/S1/values/Sheet1!A1:L2000": values}))
	model = ScriptedModel(
		[
			call_tool("googleSheets.getValues", spreadsheetId="S1", range="Sheet1!A1:L2000"),
			read(path="$.values[*][0]"),
			read(path="$.values[0:3]"),
			read(lines="1-6"),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(name="Sheets", model=model, integrations=["googleSheets"])
	result = await agent.run("Sum it")
	assert result.status == "success", result.error
	shape_seen = results(model, 1)[0]["result"]["shape"]
	assert shape_seen["values"] == [["string", "… 12 items"], "… 2000 items"]
	column = results(model, 2)[0]["result"]
	assert column["tooLarge"] is True and column["shape"] == ["string", "… 2000 items"]
	assert results(model, 3)[0]["result"]["value"] == values["values"][:3]
	lines = results(model, 4)[0]["result"]
	assert lines["lines"] == "1-6" and lines["text"].startswith('{\n "range"')
	assert lines["of"] > 20_000


async def test_a_notion_query_read_by_pointer_and_recursive_path() -> None:
	"""100 pages: a title by pointer, every id by ..name (too large), the first five by slice."""
	body = notion_query()
	om = google_om(routes({"/v1/data_sources/ds-1/query": body}))
	model = ScriptedModel(
		[
			call_tool("notion.queryDataSource", data_source_id="ds-1"),
			read(pointer="/results/42/properties/Name/title/0/plain_text"),
			read(path="$..id"),
			read(path="$.results[0:5].properties.Status.status.name"),
			finish(result="ok"),
		]
	)
	agent = om.create_agent(
		name="Notes", model=model, integrations=["notion"], config={"max_result_chars": 1_000}
	)
	await agent.run("Tasks?")
	assert results(model, 1)[0]["result"]["shape"]["results"][1] == "… 100 items"
	assert results(model, 2)[0]["result"]["value"] == "Task 42"
	every = results(model, 3)[0]["result"]
	assert every["tooLarge"] is True and every["shape"] == ["string", "… 400 items"]
	assert results(model, 4)[0]["result"]["value"] == ["Done"] * 5


# thresholds ---------------------------------------------------------------------------------


async def test_thresholds_per_agent_and_per_tool() -> None:
	"""The agent's threshold applies, a tool's own (exact or pattern) wins."""
	om = google_om(
		routes(
			{
				"/v1/data_sources/ds-1/query": notion_query(30),
				"/gmail/v1/users/me/messages": gmail_list(40),
			}
		)
	)
	model = ScriptedModel(
		[
			[
				call_tool("notion.queryDataSource", data_source_id="ds-1"),
				call_tool("gmail.listMessages"),
			],
			finish(result="ok"),
		]
	)
	agent = om.create_agent(
		name="A",
		model=model,
		integrations=["notion", "gmail"],
		config={"max_result_chars": 1_000, "maxResultCharsPerTool": {"notion.*": 200_000}},
	)
	await agent.run("go")
	notion, gmail = results(model, 1)
	assert notion["result"]["object"] == "list"  # inline: the pattern's threshold
	assert gmail["result"]["stored"].startswith("openmolt-file:")  # the agent's


def test_a_bad_per_tool_threshold_is_refused_clearly() -> None:
	"""The config key names its shape when the value is wrong."""
	from openmolt import ConfigurationError

	with pytest.raises(ConfigurationError, match="max_result_chars_per_tool"):
		OpenMolt(entry_points=False).create_agent(
			name="A", model=ScriptedModel([]), config={"max_result_chars_per_tool": {"x": "big"}}
		)


def test_a_per_tool_threshold_that_selects_nothing_is_refused() -> None:
	"""A threshold for a tool the agent does not have (a bare name, a typo) is an error."""
	from openmolt import ConfigurationError

	om = OpenMolt(entry_points=False)
	for key, message in [("get", "'get' is a tool: did you mean 'local.get'"), ("lokal.*", "none")]:
		with pytest.raises(
			ConfigurationError, match=f"max_result_chars_per_tool: '{key}'.*{message}"
		):
			om.create_agent(
				name="A",
				model=ScriptedModel([]),
				tools=[returning(1)],
				config={"max_result_chars_per_tool": {key: 10}},
			)
	# The built-in tools' (openmolt.readResult's slices) are taken: capabilities add them later.
	om.create_agent(
		name="A",
		model=ScriptedModel([]),
		tools=[returning(1)],
		config={"max_result_chars_per_tool": {"openmolt.readResult": 10, "local.*": 5}},
	)


# text, binary, errors -----------------------------------------------------------------------


def returning(value: Any) -> FunctionTool:
	return FunctionTool(handle="get", description="Get it.", function=lambda i, c: value)


async def test_a_long_text_is_read_in_pages_of_lines() -> None:
	"""A text result shows its line count; a line range that does not fit says where to go on."""
	text = "\n".join(f"line {i}: " + "x" * 90 for i in range(1, 1001))
	model = ScriptedModel(
		[call_tool("local.get"), read(lines="10-"), read(lines="5"), finish(result="ok")]
	)
	agent = OpenMolt(entry_points=False).create_agent(
		name="T", model=model, tools=[returning(text)], config={"max_result_chars": 2_000}
	)
	await agent.run("go")
	preview = results(model, 1)[0]["result"]
	assert preview["mediaType"] == "text/plain" and preview["lines"] == 1000
	assert preview["preview"].startswith("line 1: ")
	page = results(model, 2)[0]["result"]
	assert page["lines"].startswith("10-") and page["next"].endswith("-")
	assert page["text"].startswith("line 10: ")
	assert results(model, 3)[0]["result"]["text"].startswith("line 5: ")


async def test_bytes_are_stored_and_read_as_base64() -> None:
	"""A bytes result is stored as binary; a byte range comes back base64-encoded."""
	blob = bytes(range(256)) * 200
	model = ScriptedModel([call_tool("local.get"), read(bytes="256-511"), finish(result="ok")])
	agent = OpenMolt(entry_points=False).create_agent(
		name="B", model=model, tools=[returning(blob)]
	)
	await agent.run("go")
	preview = results(model, 1)[0]["result"]
	assert preview["mediaType"] == "application/octet-stream" and preview["size"] == len(blob)
	part = results(model, 2)[0]["result"]
	assert base64.b64decode(part["base64"]) == blob[256:512]


async def test_read_result_before_anything_was_stored_is_refused() -> None:
	"""readResult is offered only once a result was stored in the run."""
	model = ScriptedModel(
		[call_tool(READ_TOOL, result="openmolt-file:abcdefgh12345678"), finish(result="x")]
	)
	agent = OpenMolt(entry_points=False).create_agent(name="R", model=model)
	assert READ_TOOL not in agent.first_message("go", __import__("openmolt").RunState())
	await agent.run("go")
	[refused] = results(model, 1)
	assert "no result of this run was stored yet" in refused["error"]


async def test_an_unknown_handle_says_how_long_results_last() -> None:
	"""A stored handle the store no longer has gets an error naming files_dir and the way out."""
	om = OpenMolt(entry_points=False)

	def gone(request: ModelRequest) -> dict[str, Any]:
		handle = stored_handle(request)
		om.files.path_of(handle).unlink()  # as in another process without files_dir
		return call_tool(READ_TOOL, result=handle, pointer="/0")

	model = ScriptedModel([call_tool("local.get"), gone, finish(result="x")])
	agent = om.create_agent(name="R", model=model, tools=[returning(["y" * 100] * 300)])
	await agent.run("go")
	[error] = results(model, 2)
	assert "files_dir" in error["error"] and "call the tool again" in error["error"]


async def test_a_handle_stays_valid_when_the_run_resumes_in_another_instance(
	tmp_path: Path,
) -> None:
	"""With files_dir, a run parked after storing a result resumes elsewhere and reads it."""
	listing = gmail_list()

	def park(question: str) -> str:
		raise HumanInputUnavailable("later")

	def make(model: ScriptedModel) -> Any:
		om = google_om(routes({"/gmail/v1/users/me/messages": listing}), files_dir=tmp_path)
		return om.create_agent(
			name="Mail", model=model, integrations=["gmail"], on_human_input_request=park
		)

	first = ScriptedModel([[call_tool("gmail.listMessages"), ask_human("Which one?")]])
	parked = await make(first).run("go")
	assert parked.status == "human_input_required"
	saved = json.loads(json.dumps(parked.state.to_dict()))
	handle = saved["stored"][0]["file"]
	second = ScriptedModel(
		[call_tool(READ_TOOL, result=handle, pointer="/messages/7/id"), finish(result="ok")]
	)
	result = await make(second).resume(saved, answer="the 8th")
	assert result.status == "success", result.error
	assert results(second, 1)[0]["result"]["value"] == listing["messages"][7]["id"]


# shape, pointer and path --------------------------------------------------------------------


def test_shape_summarizes_nested_values() -> None:
	"""Objects keep keys, arrays show one item's shape and their length, long strings their size."""
	value = {"a": [{"b": 1, "c": "x" * 200}, {"b": 2, "d": None}], "e": [], "f": True, "g": 1.5}
	assert shape(value) == {
		"a": [{"b": "integer", "c": "string(200 chars)", "d": "null"}, "… 2 items"],
		"e": [],
		"f": "boolean",
		"g": "number",
	}
	assert shape({"k": {"k": {"k": 1}}}, depth=2) == {"k": {"k": "object(1 keys)"}}
	assert shape([1, "a"]) == ["mixed: integer, string", "… 2 items"]


def test_pointer_errors_say_what_is_there() -> None:
	"""A pointer that names nothing says which keys or how many items there are."""
	doc = {"a": [1, 2], "b/c": {"~": 3}}
	assert resolve_pointer(doc, "/b~1c/~0") == 3
	assert resolve_pointer(doc, "") == doc
	with pytest.raises(ToolError, match="index 5 is outside /a, which has 2 items"):
		resolve_pointer(doc, "/a/5")
	with pytest.raises(ToolError, match=r"no key 'z'.*its keys are 'a', 'b/c'"):
		resolve_pointer(doc, "/z")
	with pytest.raises(ToolError, match="must start with '/'"):
		resolve_pointer(doc, "a")


def test_paths_select_one_value_or_lists() -> None:
	"""Names, indexes, slices, wildcards, lists and descent; one value unless the path branches."""
	doc = {"items": [{"id": 1, "tags": ["x"]}, {"id": 2, "tags": []}, {"id": 3}], "n": 3}
	assert select_path(doc, "$.items[1].id") == 2
	assert select_path(doc, "items[-1]['id']") == 3
	assert select_path(doc, "$.items[*].id") == [1, 2, 3]
	assert select_path(doc, "$.items[0:2].id") == [1, 2]
	assert select_path(doc, "$.items[::2].id") == [1, 3]
	assert select_path(doc, "$.items[0,2].id") == [1, 3]
	assert select_path(doc, "$..id") == [1, 2, 3]
	assert select_path(doc, "$.*") == [doc["items"], 3]
	with pytest.raises(ToolError, match="no key 'nope'"):
		select_path(doc, "$.nope")
	with pytest.raises(ToolError, match="filters are not supported"):
		select_path(doc, "$.items[?(@.id>1)]")


async def test_a_replayed_run_gets_the_same_handle_and_record() -> None:
	"""The store is written inside the journaled call: a replay reads the same handle back."""
	from ._journal import Journal, drive

	def make() -> Any:
		model = ScriptedModel([call_tool("local.get"), read(pointer="/3"), finish(result="ok")])
		return OpenMolt(entry_points=False).create_agent(
			name="R", model=model, tools=[returning(["z" * 100] * 300)]
		)

	journal = Journal()
	live = await drive(make(), journal, "run-1")
	replayed = await drive(make(), Journal(replay=journal.values), "run-1")
	assert replayed.stored == live.stored and len(live.stored) == 1
	assert replayed.loaded == [READ_TOOL]
	assert replayed.to_dict() == live.to_dict()


async def test_compaction_keeps_the_handle_of_a_summarised_result_readable() -> None:
	"""The step that stored a result is summarised away; its handle stays in the block and reads."""
	from openmolt_core.compaction import CompactionConfig
	from openmolt_core.llm import ModelResponse, Usage

	class Summariser:
		name = "summariser"

		async def generate(self, request: Any) -> ModelResponse:
			return ModelResponse(text="summary", usage=Usage(10, 5, calls=1))

	listing = gmail_list()

	def read_from_block(request: ModelRequest) -> dict[str, Any]:
		# The model reads the handle where compaction left it: the block's files.
		block = json.loads(request.messages[0].content)["compacted"]
		[handle] = block["files"]
		return call_tool(READ_TOOL, result=handle, pointer="/messages/42/id")

	ping = FunctionTool(handle="ping", description="Ping.", function=lambda i, c: "pong")
	steps = [call_tool("local.get"), *[call_tool("local.ping") for _ in range(8)]]
	# Each call reports a prompt over the threshold, so every step that can compacts.
	model = ScriptedModel([*steps, read_from_block, finish(result="ok")], usage=Usage(5_000, 5))
	agent = OpenMolt(entry_points=False).create_agent(
		name="C",
		model=model,
		tools=[returning(listing), ping],
		max_steps=20,
		compaction=CompactionConfig(threshold_tokens=4_000, keep_steps=2),
	)
	agent.compactor = lambda: (Summariser(), "cheap")
	result = await agent.run("go")
	assert result.status == "success", result.error
	[record] = result.state.stored
	# The preview that carried the handle was summarised away...
	assert not any('"stored":"openmolt-file:' in m.content for m in result.state.messages)
	assert json.loads(result.state.messages[0].content)["compacted"]["files"] == [record["file"]]
	# ...and the handle still reads, with readResult still callable.
	[entry] = results(model, len(model.requests) - 1)
	assert entry["ok"], entry
	assert entry["result"]["value"] == listing["messages"][42]["id"]
	assert READ_TOOL in result.state.loaded
