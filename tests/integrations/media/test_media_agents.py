"""Scripted agents call two tools of each media integration; the exact HTTP requests are checked."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.integrations._ssrf import unpinned_url
from openmolt_core.testing import ScriptedModel, call_tool, finish
from openmolt_integrations import browser_use, dropbox, fal, openai_image, s3

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PNG_DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


class Recorder:
	"""An httpx.MockTransport handler that answers from a route table and records requests."""

	def __init__(self, routes: dict[tuple[str, str], Callable[[httpx.Request], httpx.Response]]):
		self.routes = routes
		self.requests: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		path = request.url.raw_path.split(b"?")[0].decode()
		url = unpinned_url(request)  # bucket hosts come from the input: pinned by the guard
		key = (request.method, f"{url.scheme}://{url.host}{path}")
		if key not in self.routes:
			return httpx.Response(404, json={"error": {"message": f"no route {key}"}})
		return self.routes[key](request)


def _agent(
	module: Any, iid: str, recorder: Recorder, model: ScriptedModel, credential: dict[str, Any]
) -> tuple[OpenMolt, Any]:
	http = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
	om = OpenMolt(plugins=[module], entry_points=False, http_client=http)
	agent = om.create_agent(
		name="Tester",
		model=model,
		integrations=[{"integration": iid, "credential": credential}],
	)
	return om, agent


def _results(model: ScriptedModel) -> list[dict[str, Any]]:
	"""Every tool result the model was shown, in order."""
	out = []
	for message in model.requests[-1].messages:
		if message.role != "user":
			continue
		turn = json.loads(message.content)
		if isinstance(turn, dict):
			out.extend(turn.get("results", []))
	return out


async def test_dropbox_lists_a_folder_and_downloads_a_file() -> None:
	"""listFolder posts JSON to the RPC host; download sends Dropbox-API-Arg to the content host."""
	recorder = Recorder(
		{
			("POST", "https://api.dropboxapi.com/2/files/list_folder"): lambda r: httpx.Response(
				200,
				json={
					"entries": [
						{".tag": "file", "name": "Ünï.pdf", "path_display": "/Reports/Ünï.pdf"}
					],
					"cursor": "c1",
					"has_more": False,
				},
			),
			("POST", "https://content.dropboxapi.com/2/files/download"): lambda r: httpx.Response(
				200,
				content=b"%PDF-1.7 report",
				headers={
					"Content-Type": "application/octet-stream",
					"Dropbox-API-Result": json.dumps({"name": "Ünï.pdf", "size": 15}),
				},
			),
		}
	)
	model = ScriptedModel(
		[
			call_tool("dropbox.listFolder", path="/Reports", recursive=False),
			call_tool("dropbox.download", path="/Reports/Ünï.pdf"),
			finish(result="done"),
		]
	)
	om, agent = _agent(
		dropbox,
		"dropbox",
		recorder,
		model,
		{"type": "bearer", "config": {"accessToken": "sl.tok123"}},
	)
	async with om:
		result = await agent.run("Fetch the report")
		assert result.output == {"result": "done"}
		model.assert_consumed()
		listing, download = recorder.requests
		assert listing.headers["Authorization"] == "Bearer sl.tok123"
		assert listing.headers["Content-Type"] == "application/json"
		assert json.loads(listing.content) == {"path": "/Reports", "recursive": False}
		assert download.headers["Authorization"] == "Bearer sl.tok123"
		arg = download.headers["Dropbox-API-Arg"]
		assert arg.isascii() and "\\u00dc" in arg
		assert json.loads(arg) == {"path": "/Reports/Ünï.pdf"}
		assert download.content == b""
		listed, downloaded = _results(model)
		assert listed["result"]["entries"][0]["name"] == "Ünï.pdf"
		out = downloaded["result"]
		assert out["file"].startswith("openmolt-file:")
		assert out["size"] == 15
		assert out["headers"]["Dropbox-API-Result"] == {"name": "Ünï.pdf", "size": 15}
		assert "%PDF" not in json.dumps(_results(model))
		stored = await om.files.open(out["file"])
		assert stored.data == b"%PDF-1.7 report"


async def test_dropbox_space_usage_posts_no_argument_to_the_rpc_host() -> None:
	"""getSpaceUsage is users/get_space_usage (stone: rpc on the api host, a Void argument):
	a POST with no body and no Content-Type; the model sees used and the allocation."""
	usage = {"used": 314, "allocation": {".tag": "individual", "allocated": 2147483648}}
	recorder = Recorder(
		{
			(
				"POST",
				"https://api.dropboxapi.com/2/users/get_space_usage",
			): lambda r: httpx.Response(200, json=usage),
		}
	)
	model = ScriptedModel([call_tool("dropbox.getSpaceUsage"), finish(result="done")])
	om, agent = _agent(
		dropbox, "dropbox", recorder, model, {"type": "bearer", "config": {"accessToken": "t"}}
	)
	async with om:
		await agent.run("How full is my Dropbox?")
		(request,) = recorder.requests
		assert request.headers["Authorization"] == "Bearer t"
		assert request.content == b""
		assert "Content-Type" not in request.headers
		assert _results(model)[0]["result"] == usage


async def test_dropbox_saves_a_url_then_polls_its_job() -> None:
	"""saveUrl posts SaveUrlArg {path, url} to files/save_url; saveUrlStatus posts PollArg
	{async_job_id} to files/save_url/check_job_status (both rpc on the api host)."""
	api = "https://api.dropboxapi.com/2/files"
	recorder = Recorder(
		{
			("POST", f"{api}/save_url"): lambda r: httpx.Response(
				200, json={".tag": "async_job_id", "async_job_id": "job-7"}
			),
			("POST", f"{api}/save_url/check_job_status"): lambda r: httpx.Response(
				200, json={".tag": "complete", "name": "q3.pdf", "size": 1024}
			),
		}
	)
	model = ScriptedModel(
		[
			call_tool(
				"dropbox.saveUrl", path="/Inbox/q3.pdf", url="https://example.com/q3.pdf?x=1"
			),
			call_tool("dropbox.saveUrlStatus", async_job_id="job-7"),
			finish(result="done"),
		]
	)
	om, agent = _agent(
		dropbox, "dropbox", recorder, model, {"type": "bearer", "config": {"accessToken": "t"}}
	)
	async with om:
		await agent.run("Save the report")
		save, status = recorder.requests
		assert json.loads(save.content) == {
			"path": "/Inbox/q3.pdf",
			"url": "https://example.com/q3.pdf?x=1",
		}
		assert json.loads(status.content) == {"async_job_id": "job-7"}
		assert _results(model)[1]["result"][".tag"] == "complete"


async def test_dropbox_search_pages_on_with_its_cursor() -> None:
	"""search answers has_more and a cursor; searchContinue posts that cursor to continue_v2.

	Dropbox's own spec (dropbox/dropbox-api-spec files.stone, as the dropbox SDK generates it):
	route search/continue:2 on the api host, argument SearchV2ContinueArg {cursor}.
	"""
	recorder = Recorder(
		{
			("POST", "https://api.dropboxapi.com/2/files/search_v2"): lambda r: httpx.Response(
				200, json={"matches": [], "has_more": True, "cursor": "c-1"}
			),
			(
				"POST",
				"https://api.dropboxapi.com/2/files/search/continue_v2",
			): lambda r: httpx.Response(200, json={"matches": [], "has_more": False}),
		}
	)
	model = ScriptedModel(
		[
			call_tool("dropbox.search", query="invoice", max_results=2),
			call_tool("dropbox.searchContinue", cursor="c-1"),
			finish(result="done"),
		]
	)
	om, agent = _agent(
		dropbox,
		"dropbox",
		recorder,
		model,
		{"type": "bearer", "config": {"accessToken": "sl.tok123"}},
	)
	async with om:
		result = await agent.run("Find the invoices")
		assert result.output == {"result": "done"}
		first, second = recorder.requests
		assert json.loads(first.content) == {"query": "invoice", "options": {"max_results": 2}}
		assert json.loads(second.content) == {"cursor": "c-1"}


async def test_dropbox_upload_refreshes_an_offline_token_first() -> None:
	"""With only a refresh token, the OAuth2 credential refreshes, then upload sends raw bytes."""
	recorder = Recorder(
		{
			("POST", "https://api.dropboxapi.com/oauth2/token"): lambda r: httpx.Response(
				200, json={"access_token": "sl.fresh", "token_type": "bearer", "expires_in": 14400}
			),
			("POST", "https://content.dropboxapi.com/2/files/upload"): lambda r: httpx.Response(
				200, json={"name": "logo.png", "id": "id:1", "size": len(PNG)}
			),
			(
				"POST",
				"https://api.dropboxapi.com/2/sharing/create_shared_link_with_settings",
			): lambda r: httpx.Response(200, json={"url": "https://www.dropbox.com/s/x/logo.png"}),
		}
	)
	model = ScriptedModel(
		[
			call_tool(
				"dropbox.upload", path="/Brand/logo.png", file=PNG_DATA_URL, mode="overwrite"
			),
			call_tool("dropbox.createSharedLink", path="/Brand/logo.png", audience="public"),
			finish(result="shared"),
		]
	)
	config = {"clientId": "appkey", "clientSecret": "appsecret", "refreshToken": "refresh-abc"}
	om, agent = _agent(dropbox, "dropbox", recorder, model, {"type": "oauth2", "config": config})
	async with om:
		await agent.run("Upload the logo")
	token, upload, share = recorder.requests
	form = dict(httpx.QueryParams(token.content.decode()))
	assert form["grant_type"] == "refresh_token"
	assert form["refresh_token"] == "refresh-abc"
	assert upload.headers["Authorization"] == "Bearer sl.fresh"
	assert upload.headers["Content-Type"] == "application/octet-stream"
	assert upload.content == PNG
	assert json.loads(upload.headers["Dropbox-API-Arg"]) == {
		"path": "/Brand/logo.png",
		"mode": "overwrite",
		"autorename": False,
		"mute": False,
		"strict_conflict": False,
	}
	assert json.loads(share.content) == {
		"path": "/Brand/logo.png",
		"settings": {"audience": "public"},
	}


VIDEO = bytes(range(40))
VIDEO_URL = "data:video/mp4;base64," + base64.b64encode(VIDEO).decode()
BEARER = {"type": "bearer", "config": {"accessToken": "sl.token"}}


def _session_recorder(session_id: str = "sess-1") -> Recorder:
	content = "https://content.dropboxapi.com/2/files/upload_session"
	return Recorder(
		{
			("POST", f"{content}/start"): lambda r: httpx.Response(
				200, json={"session_id": session_id}
			),
			("POST", f"{content}/append_v2"): lambda r: httpx.Response(200, content=b"null"),
			("POST", f"{content}/finish"): lambda r: httpx.Response(
				200, json={"name": "talk.mp4", "size": len(VIDEO), "id": "id:9"}
			),
		}
	)


def _chunk_request(request: httpx.Request, route: str) -> dict[str, Any]:
	assert request.method == "POST"
	assert str(request.url) == f"https://content.dropboxapi.com/2/files/upload_session/{route}"
	assert request.headers["Authorization"] == "Bearer sl.token"
	assert request.headers["Content-Type"] == "application/octet-stream"
	return json.loads(request.headers["Dropbox-API-Arg"])


async def test_dropbox_uploads_a_large_file_in_two_chunks() -> None:
	"""Start sends bytes 0-19 of the file, finish sends 20-39 at offset 20 with the commit."""
	recorder = _session_recorder()
	model = ScriptedModel(
		[
			call_tool("dropbox.uploadSessionStart", file=f"{VIDEO_URL}#bytes=0-19"),
			call_tool(
				"dropbox.uploadSessionFinish",
				session_id="sess-1",
				offset=20,
				file=f"{VIDEO_URL}#bytes=20-39",
				path="/Videos/talk.mp4",
				mode="overwrite",
			),
			finish(result="uploaded"),
		]
	)
	om, agent = _agent(dropbox, "dropbox", recorder, model, BEARER)
	async with om:
		result = await agent.run("Upload the talk")
	assert result.output == {"result": "uploaded"}
	model.assert_consumed()
	start, done = recorder.requests
	assert _chunk_request(start, "start") == {"close": False}
	assert start.content == VIDEO[:20]
	assert _chunk_request(done, "finish") == {
		"cursor": {"session_id": "sess-1", "offset": 20},
		"commit": {
			"path": "/Videos/talk.mp4",
			"mode": "overwrite",
			"autorename": False,
			"mute": False,
		},
	}
	assert done.content == VIDEO[20:]
	assert _results(model)[-1]["result"] == {"name": "talk.mp4", "size": 40, "id": "id:9"}


async def test_dropbox_plans_chunks_then_starts_appends_and_finishes() -> None:
	"""fileInfo's ranged chunk references go through start, append_v2 and finish at their offsets."""
	recorder = _session_recorder("sess-2")
	model = ScriptedModel(
		[
			call_tool("dropbox.fileInfo", file=VIDEO_URL, chunkSize=16),
			call_tool("dropbox.uploadSessionStart", file=f"{VIDEO_URL}#bytes=0-15"),
			call_tool(
				"dropbox.uploadSessionAppend",
				session_id="sess-2",
				offset=16,
				file=f"{VIDEO_URL}#bytes=16-31",
			),
			call_tool(
				"dropbox.uploadSessionFinish",
				session_id="sess-2",
				offset=32,
				file=f"{VIDEO_URL}#bytes=32-39",
				path="/Videos/talk.mp4",
			),
			finish(result="uploaded"),
		]
	)
	om, agent = _agent(dropbox, "dropbox", recorder, model, BEARER)
	async with om:
		await agent.run("Upload the talk")
	model.assert_consumed()
	plan = _results(model)[0]["result"]
	assert [(c["start"], c["end"]) for c in plan["chunks"]] == [(0, 15), (16, 31), (32, 39)]
	assert plan["chunks"][1]["file"].endswith("#bytes=16-31")
	start, append, done = recorder.requests
	assert _chunk_request(start, "start") == {"close": False}
	assert _chunk_request(append, "append_v2") == {
		"cursor": {"session_id": "sess-2", "offset": 16},
		"close": False,
	}
	assert _chunk_request(done, "finish")["cursor"] == {"session_id": "sess-2", "offset": 32}
	assert [r.content for r in (start, append, done)] == [VIDEO[:16], VIDEO[16:32], VIDEO[32:]]


async def test_s3_lists_objects_and_puts_one_signed() -> None:
	"""listObjects and putObject go to the virtual-hosted bucket URL with a SigV4 signature."""
	listing_xml = (
		b'<?xml version="1.0" encoding="UTF-8"?>'
		b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
		b"<Name>my-bucket</Name><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>"
		b"<Contents><Key>reports/a.txt</Key><Size>3</Size></Contents></ListBucketResult>"
	)
	recorder = Recorder(
		{
			("GET", "https://my-bucket.s3.eu-west-1.amazonaws.com/"): lambda r: httpx.Response(
				200, content=listing_xml, headers={"Content-Type": "application/xml"}
			),
			(
				"PUT",
				"https://my-bucket.s3.eu-west-1.amazonaws.com/reports/q3%20summary.png",
			): lambda r: httpx.Response(200, headers={"ETag": '"abc"'}),
		}
	)
	model = ScriptedModel(
		[
			call_tool("s3.listObjects", Bucket="my-bucket", prefix="reports/", max_keys=50),
			call_tool(
				"s3.putObject", Bucket="my-bucket", Key="reports/q3 summary.png", file=PNG_DATA_URL
			),
			finish(result="ok"),
		]
	)
	config = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"region": "eu-west-1",
	}
	om, agent = _agent(s3, "s3", recorder, model, {"type": "aws_sigv4", "config": config})
	async with om:
		await agent.run("Archive the chart")
	listing, put = recorder.requests
	assert dict(listing.url.params) == {"list-type": "2", "prefix": "reports/", "max-keys": "50"}
	for request in (listing, put):
		auth = request.headers["Authorization"]
		assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
		assert "/eu-west-1/s3/aws4_request" in auth
		assert "x-amz-date" in request.headers
		assert "x-amz-content-sha256" in request.headers
		assert "wJalrXUtnFEMI" not in auth
	assert put.content == PNG
	assert put.headers["Content-Type"] == "image/png"
	listed, stored = _results(model)
	assert listed["result"]["ListBucketResult"]["Contents"]["Key"] == "reports/a.txt"
	assert stored.get("ok"), stored
	assert stored["result"]["headers"]["ETag"] == '"abc"'


async def test_s3_puts_with_metadata_then_deletes_objects_with_content_md5() -> None:
	"""Metadata become signed x-amz-meta-* headers; DeleteObjects sends XML with its Content-MD5."""
	import hashlib

	deleted_xml = (
		b'<?xml version="1.0" encoding="UTF-8"?>'
		b'<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
		b"<Deleted><Key>a.txt</Key></Deleted>"
		b"<Error><Key>b.txt</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
		b"</DeleteResult>"
	)
	bucket = "https://my-bucket.s3.eu-west-1.amazonaws.com"
	recorder = Recorder(
		{
			("PUT", f"{bucket}/a.txt"): lambda r: httpx.Response(200, headers={"ETag": '"e1"'}),
			("POST", f"{bucket}/"): lambda r: httpx.Response(
				200, content=deleted_xml, headers={"Content-Type": "application/xml"}
			),
		}
	)
	model = ScriptedModel(
		[
			call_tool(
				"s3.putObject",
				Bucket="my-bucket",
				Key="a.txt",
				file="data:text/plain;base64,aGk=",
				Metadata={"author": "Ana", "Project-Id": "42"},
			),
			call_tool(
				"s3.deleteObjects",
				Bucket="my-bucket",
				Objects=[{"Key": "a.txt"}, {"Key": "b.txt", "VersionId": "v&1"}],
			),
			finish(result="ok"),
		]
	)
	config = {
		"accessKeyId": "AKIDEXAMPLE",
		"secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"region": "eu-west-1",
	}
	om, agent = _agent(s3, "s3", recorder, model, {"type": "aws_sigv4", "config": config})
	async with om:
		await agent.run("Tidy the bucket")
	put, delete = recorder.requests
	assert put.headers["x-amz-meta-author"] == "Ana"
	assert put.headers["x-amz-meta-project-id"] == "42"
	assert put.content == b"hi"
	put_signed = put.headers["Authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
	assert {"x-amz-meta-author", "x-amz-meta-project-id"} <= set(put_signed)
	assert delete.method == "POST"
	assert str(unpinned_url(delete)) == f"{bucket}/?delete"
	assert delete.content == (
		b'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
		b"<Object><Key>a.txt</Key></Object>"
		b"<Object><Key>b.txt</Key><VersionId>v&amp;1</VersionId></Object></Delete>"
	)
	assert delete.headers["Content-Type"] == "application/xml"
	md5 = base64.b64encode(hashlib.md5(delete.content).digest()).decode()
	assert delete.headers["Content-MD5"] == md5
	auth = delete.headers["Authorization"]
	assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
	assert "content-md5" in auth.split("SignedHeaders=")[1].split(",")[0].split(";")
	stored, removed = _results(model)
	assert stored["result"]["headers"]["ETag"] == '"e1"'
	result = removed["result"]["DeleteResult"]
	assert result["Deleted"] == {"Key": "a.txt"}
	assert result["Error"]["Code"] == "AccessDenied"


TASK_ID = "3c90c3cc-0d44-4b50-8888-8dd25736052a"
SESSION_ID = "5d1f0a3e-7b2c-4e8f-9a61-2c4b8e0d9f17"


async def test_browser_use_creates_a_task_and_polls_it() -> None:
	"""createTask sends camelCase JSON with the API key header; getTaskStatus polls by id."""
	recorder = Recorder(
		{
			("POST", "https://api.browser-use.com/api/v2/tasks"): lambda r: httpx.Response(
				202, json={"id": TASK_ID, "sessionId": SESSION_ID}
			),
			("GET", f"https://api.browser-use.com/api/v2/tasks/{TASK_ID}/status"): lambda r: (
				httpx.Response(
					200,
					json={
						"id": TASK_ID,
						"status": "finished",
						"output": '{"price": 12}',
						"isSuccess": True,
					},
				)
			),
		}
	)
	schema = json.dumps({"type": "object", "properties": {"price": {"type": "number"}}})
	model = ScriptedModel(
		[
			call_tool(
				"browserUse.createTask",
				task="Find the price",
				startUrl="https://shop.example",
				structuredOutput=schema,
				maxSteps=20,
			),
			call_tool("browserUse.getTaskStatus", task_id=TASK_ID),
			finish(result="12"),
		]
	)
	om, agent = _agent(
		browser_use,
		"browserUse",
		recorder,
		model,
		{"type": "custom", "config": {"apiKey": "bu_key"}},
	)
	async with om:
		await agent.run("Price?")
	create, status = recorder.requests
	assert create.headers["X-Browser-Use-API-Key"] == "bu_key"
	assert json.loads(create.content) == {
		"task": "Find the price",
		"startUrl": "https://shop.example",
		"structuredOutput": schema,
		"maxSteps": 20,
	}
	assert status.headers["X-Browser-Use-API-Key"] == "bu_key"
	created, polled = _results(model)
	assert created["result"] == {"id": TASK_ID, "sessionId": SESSION_ID}
	assert json.loads(polled["result"]["output"]) == {"price": 12}


async def test_openai_image_generates_and_edits_into_files() -> None:
	"""Images come back as file references; edits send multipart image[] parts and a mask."""
	generated = base64.b64encode(PNG).decode()
	edited = base64.b64encode(b"EDITED-PNG").decode()
	recorder = Recorder(
		{
			("POST", "https://api.openai.com/v1/images/generations"): lambda r: httpx.Response(
				200,
				json={
					"created": 1,
					"data": [{"b64_json": generated}],
					"output_format": "png",
					"size": "1024x1024",
					"usage": {"input_tokens": 5, "output_tokens": 10, "total_tokens": 15},
				},
			),
			("POST", "https://api.openai.com/v1/images/edits"): lambda r: httpx.Response(
				200, json={"created": 2, "data": [{"b64_json": edited}], "output_format": "png"}
			),
		}
	)
	state: dict[str, str] = {}

	def edit_call(request: Any) -> dict[str, Any]:
		(generated_result,) = json.loads(request.messages[-1].content)["results"]
		state["ref"] = generated_result["result"]["images"][0]["file"]
		return call_tool(
			"openaiImage.editImage",
			image=[state["ref"], PNG_DATA_URL],
			mask=PNG_DATA_URL,
			prompt="Put the logo on the mug",
			input_fidelity="high",
		)

	model = ScriptedModel(
		[
			call_tool(
				"openaiImage.generateImage",
				prompt="A red fox logo",
				size="1024x1024",
				file_name="fox",
			),
			edit_call,
			finish(result="done"),
		]
	)
	om, agent = _agent(
		openai_image,
		"openaiImage",
		recorder,
		model,
		{"type": "bearer", "config": {"apiKey": "sk-test-123", "project": "proj_1"}},
	)
	async with om:
		await agent.run("Make a logo mug")
		gen, edit = recorder.requests
		assert gen.headers["Authorization"] == "Bearer sk-test-123"
		assert gen.headers["OpenAI-Project"] == "proj_1"
		assert json.loads(gen.content) == {
			"prompt": "A red fox logo",
			"size": "1024x1024",
			"model": "gpt-image-2",
		}
		first, second = _results(model)
		assert generated not in json.dumps(first)
		assert first["result"]["size"] == "1024x1024"
		assert first["result"]["usage"]["total_tokens"] == 15
		stored = await om.files.open(state["ref"])
		assert stored.data == PNG
		assert stored.name == "fox-1.png"
		assert stored.media_type == "image/png"
		assert edit.headers["Content-Type"].startswith("multipart/form-data; boundary=")
		body = edit.content
		assert body.count(b'name="image[]"') == 2
		assert body.count(b'name="mask"') == 1
		# gpt-image-2 takes no input_fidelity (openai SDK): it is left out.
		assert b'name="input_fidelity"' not in body
		assert b'name="model"\r\n\r\ngpt-image-2' in body
		assert body.count(PNG) == 3
		edited_ref = second["result"]["images"][0]["file"]
		assert (await om.files.open(edited_ref)).data == b"EDITED-PNG"


async def test_openai_image_sends_input_fidelity_only_to_models_that_take_it() -> None:
	"""gpt-image-1.5 gets input_fidelity=high; gpt-image-1-mini refuses high before sending."""
	edited = base64.b64encode(b"EDITED-PNG").decode()
	recorder = Recorder(
		{
			("POST", "https://api.openai.com/v1/images/edits"): lambda r: httpx.Response(
				200, json={"created": 2, "data": [{"b64_json": edited}], "output_format": "png"}
			),
		}
	)
	edit = {"image": [PNG_DATA_URL], "prompt": "Keep the face", "input_fidelity": "high"}
	model = ScriptedModel(
		[
			call_tool("openaiImage.editImage", model="gpt-image-1.5", **edit),
			call_tool("openaiImage.editImage", model="gpt-image-1-mini", **edit),
			finish(result="done"),
		]
	)
	om, agent = _agent(
		openai_image,
		"openaiImage",
		recorder,
		model,
		{"type": "bearer", "config": {"apiKey": "sk-1"}},
	)
	async with om:
		await agent.run("Edit")
	(sent,) = recorder.requests
	assert b'name="input_fidelity"\r\n\r\nhigh' in sent.content
	assert b'name="model"\r\n\r\ngpt-image-1.5' in sent.content
	first, second = _results(model)
	assert first["ok"] is True and second["ok"] is False
	assert "input_fidelity 'high' is not accepted by gpt-image-1-mini" in json.dumps(second)


async def test_openai_image_reports_api_errors_without_the_key() -> None:
	"""An API error reaches the model as a tool error with the service message, never the key."""
	recorder = Recorder(
		{
			("POST", "https://api.openai.com/v1/images/generations"): lambda r: httpx.Response(
				400,
				json={"error": {"message": "Invalid size 13x13", "type": "invalid_request_error"}},
			)
		}
	)
	model = ScriptedModel(
		[call_tool("openaiImage.generateImage", prompt="x", size="13x13"), finish(result="failed")]
	)
	om, agent = _agent(
		openai_image,
		"openaiImage",
		recorder,
		model,
		{"type": "bearer", "config": {"apiKey": "sk-secret-999"}},
	)
	async with om:
		await agent.run("Draw")
	(failed,) = _results(model)
	assert failed["ok"] is False
	assert "Invalid size 13x13" in json.dumps(failed)
	assert "sk-secret-999" not in json.dumps(model.requests[-1].messages[-1].content)


async def test_fal_submits_then_reads_the_result_through_the_sdk() -> None:
	"""submit and result use fal-client against the queue with the Key credential."""
	import respx

	with respx.mock(assert_all_called=True) as router:
		submit = router.post("https://queue.fal.run/fal-ai/flux/dev").respond(
			200,
			json={
				"request_id": "req-1",
				"response_url": "https://queue.fal.run/fal-ai/flux/requests/req-1",
				"status_url": "https://queue.fal.run/fal-ai/flux/requests/req-1/status",
				"cancel_url": "https://queue.fal.run/fal-ai/flux/requests/req-1/cancel",
			},
		)
		status = router.get("https://queue.fal.run/fal-ai/flux/requests/req-1/status").respond(
			200, json={"status": "COMPLETED", "logs": None, "metrics": {"inference_time": 1.2}}
		)
		result = router.get("https://queue.fal.run/fal-ai/flux/requests/req-1").respond(
			200, json={"images": [{"url": "https://v3.fal.media/files/fox.png"}]}
		)
		model = ScriptedModel(
			[
				call_tool(
					"fal.submit",
					model="fal-ai/flux/dev",
					arguments={"prompt": "a fox", "num_images": 1},
				),
				call_tool("fal.result", model="fal-ai/flux/dev", request_id="req-1"),
				finish(result="ok"),
			]
		)
		recorder = Recorder({})
		om, agent = _agent(
			fal, "fal", recorder, model, {"type": "custom", "config": {"apiKey": "kid:ksecret"}}
		)
		async with om:
			await agent.run("Draw a fox")
		sent = submit.calls.last.request
		assert sent.headers["Authorization"] == "Key kid:ksecret"
		assert json.loads(sent.content) == {"prompt": "a fox", "num_images": 1}
		assert status.calls.last.request.headers["Authorization"] == "Key kid:ksecret"
		assert result.called
		assert recorder.requests == []
		submitted, fetched = _results(model)
		assert submitted["result"]["request_id"] == "req-1"
		assert fetched["result"]["done"] is True
		assert (
			fetched["result"]["output"]["images"][0]["url"] == "https://v3.fal.media/files/fox.png"
		)


async def test_fal_uploads_a_file_from_the_store() -> None:
	"""uploadFile resolves a file reference and uploads its bytes with fal's CDN protocol."""
	import respx

	with respx.mock(assert_all_called=True) as router:
		token = router.post(
			"https://rest.fal.ai/storage/auth/token?storage_type=fal-cdn-v3"
		).respond(
			200,
			json={
				"token": "cdn-tok",
				"token_type": "Bearer",
				"base_url": "https://v3.fal.media",
				"expires_at": "2999-01-01T00:00:00+00:00",
			},
		)
		upload = router.post("https://v3.fal.media/files/upload").respond(
			200, json={"access_url": "https://v3.fal.media/files/abc/logo.png"}
		)
		model = ScriptedModel(
			[
				call_tool("fal.uploadFile", file=PNG_DATA_URL),
				call_tool(
					"fal.run",
					model="fal-ai/flux/dev/image-to-image",
					arguments={"image_url": "https://v3.fal.media/files/abc/logo.png"},
				),
				finish(result="ok"),
			]
		)
		run = router.post("https://fal.run/fal-ai/flux/dev/image-to-image").respond(
			200, json={"images": [{"url": "https://v3.fal.media/files/out.png"}]}
		)
		om, agent = _agent(
			fal, "fal", Recorder({}), model, {"type": "custom", "config": {"apiKey": "k1"}}
		)
		async with om:
			await agent.run("Restyle the logo")
		assert token.calls.last.request.headers["Authorization"] == "Key k1"
		sent = upload.calls.last.request
		assert sent.content == PNG
		assert sent.headers["Content-Type"] == "image/png"
		assert sent.headers["Authorization"] == "Bearer cdn-tok"
		assert json.loads(run.calls.last.request.content) == {
			"image_url": "https://v3.fal.media/files/abc/logo.png"
		}
		uploaded, ran = _results(model)
		assert uploaded["result"]["url"] == "https://v3.fal.media/files/abc/logo.png"
		assert ran["result"]["images"][0]["url"] == "https://v3.fal.media/files/out.png"
