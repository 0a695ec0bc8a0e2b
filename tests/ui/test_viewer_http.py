"""The viewer's HTTP side without a browser: the token, the host check, bad input, the streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest

from openmolt import HumanInputUnavailable, OpenMolt
from openmolt_core.errors import ConfigurationError
from openmolt_core.guardrails.pii import pii_redaction
from openmolt_core.runstore import RunStore
from openmolt_core.testing import ScriptedModel, ask_human, call_tool, finish, mock_http
from openmolt_ui import Viewer
from openmolt_weather import weather

from .conftest import fallback_models

pytestmark = pytest.mark.anyio  # uvicorn serves on asyncio only: the default backend here

SECRET = "wx-secret-789"


def weather_api(request: httpx.Request) -> httpx.Response:
	return httpx.Response(200, json={"summary": "rain", "echo": request.headers["X-Api-Key"]})


def _om(store: Path | None) -> OpenMolt:
	om = OpenMolt(
		entry_points=False,
		run_store=store,
		http_client=mock_http(weather_api),
		integrations={"weather": {"apiKey": SECRET}},
	)
	om.register_integration("weather", weather.WEATHER)
	return om


def _base(viewer: Viewer) -> str:
	return f"http://127.0.0.1:{viewer.port}"


async def test_every_route_refuses_a_request_without_the_right_token(tmp_path: Path) -> None:
	"""403 without the token or with a wrong one; no cookie carries it (every port would get it)."""
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		base = _base(viewer)
		for path in ("/", "/api/state", "/api/stream", "/api/runs/x", "/static/app.js"):
			for query in ("", "?token=nope"):
				response = await http.get(base + path + query)
				assert response.status_code == 403, (path, query)
		assert (
			await http.post(f"{base}/api/questions/q1", json={"answer": "x"})
		).status_code == 403
		page = await http.get(viewer.url)
		assert page.status_code == 200
		assert "set-cookie" not in page.headers and not http.cookies
		assert f'content="{viewer.token}"' in page.text
		assert f'src="/static/app.js?token={viewer.token}"' in page.text
		assert page.headers["referrer-policy"] == "no-referrer"
		assert "default-src 'self'" in page.headers["content-security-policy"]
		assert page.headers["cache-control"] == "no-store"
		# a GET may name the token in its URL (EventSource cannot send headers); a POST may not
		assert (await http.get(f"{base}/api/state")).status_code == 403
		assert (await http.get(f"{base}/api/state?token={viewer.token}")).status_code == 200
		assert (await http.get(f"{base}/static/app.js?token={viewer.token}")).status_code == 200
		# a cookie named like the old one, or for this port, opens nothing
		for name in ("openmolt_ui_token", f"openmolt_ui_token_{viewer.port}"):
			cookie = {"cookie": f"{name}={viewer.token}"}
			assert (await http.get(f"{base}/api/state", headers=cookie)).status_code == 403
		posted = await http.post(
			f"{base}/api/questions/q1?token={viewer.token}", json={"answer": "x"}
		)
		assert posted.status_code == 403
		headers = {"x-openmolt-token": viewer.token}
		posted = await http.post(f"{base}/api/questions/q1", json={"answer": "x"}, headers=headers)
		assert posted.status_code == 404  # allowed through; there is no such question


async def test_a_foreign_host_name_is_refused(tmp_path: Path) -> None:
	"""Bound to loopback, a request naming another host (DNS rebinding) gets 400."""
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		response = await http.get(viewer.url, headers={"host": f"evil.example:{viewer.port}"})
		assert response.status_code == 400
		ok = await http.get(viewer.url, headers={"host": f"localhost:{viewer.port}"})
		assert ok.status_code == 200


async def test_bad_answers_and_decisions_get_clear_errors(tmp_path: Path) -> None:
	"""Each malformed body is refused with a message naming the field."""
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		base = _base(viewer)
		cases: list[tuple[str, Any, str]] = [
			("/api/questions/q1", {"answer": 3}, "answer"),
			("/api/questions/q1", [1], "answer"),
			("/api/approvals/a1", {"action": "maybe"}, "action must be"),
			("/api/approvals/a1", {"action": "deny"}, "needs a reason"),
			("/api/approvals/a1", {"action": "edit", "input": "x"}, "JSON object in 'input'"),
			("/api/approvals/a1", {"action": "approve", "reason": 1}, "reason must be a string"),
		]
		for path, body, text in cases:
			response = await http.post(base + path, json=body, headers=headers)
			assert response.status_code == 400, (path, body)
			assert text in response.json()["error"]
		not_json = await http.post(base + "/api/approvals/a1", content=b"{", headers=headers)
		assert not_json.status_code == 400
		unknown = await http.post(
			base + "/api/approvals/a1", json={"action": "approve"}, headers=headers
		)
		assert unknown.status_code == 404


async def test_runs_of_another_process_stream_from_the_store_redacted(tmp_path: Path) -> None:
	"""A viewer of the store alone follows a run made elsewhere; the API key never shows."""
	store = tmp_path / "runs.db"
	model = ScriptedModel([call_tool("weather.getForecast", city="Oslo"), finish(ok=True)])
	agent = _om(store).create_agent(name="Elsewhere", model=model, integrations=["weather"])
	result = await agent.run("Oslo?")
	run_id = result.state.run_id
	async with Viewer(store=RunStore(store), poll=0.1) as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		view = (await http.get(f"{_base(viewer)}/api/runs/{run_id}", headers=headers)).json()
		assert view["source"] == "store" and view["run"]["status"] == "success"
		response = next(e for e in view["events"] if e["name"] == "tool:response")
		assert response["data"]["response"]["echo"] == "[redacted]"
		assert SECRET not in json.dumps(view)
		lines: list[str] = []
		url = f"{_base(viewer)}/api/runs/{run_id}/stream?after={view['events'][2]['id']}"
		async with http.stream("GET", url, headers=headers) as stream:
			assert stream.headers["content-type"].startswith("text/event-stream")
			async for line in stream.aiter_lines():
				lines.append(line)
				if line.startswith("event: run"):
					break
		names = [line.split(": ", 1)[1] for line in lines if line.startswith("event: ")]
		assert names[:-1] == ["event"] * (len(view["events"]) - 3) and names[-1] == "run"
		gone = await http.get(f"{_base(viewer)}/api/runs/nope/stream", headers=headers)
		assert "event: gone" in gone.text
		assert (
			await http.get(f"{_base(viewer)}/api/runs/nope", headers=headers)
		).status_code == 404


async def test_live_runs_are_redacted_too(tmp_path: Path) -> None:
	"""Events a watched instance emits reach the page with secrets masked."""
	om = _om(tmp_path / "runs.db")
	model = ScriptedModel([call_tool("weather.getForecast", city="Oslo"), finish(ok=True)])
	agent = om.create_agent(name="Here", model=model, integrations=["weather"])
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		result = await agent.run("Oslo?")
		headers = {"x-openmolt-token": viewer.token}
		url = f"{_base(viewer)}/api/runs/{result.state.run_id}"
		view = (await http.get(url, headers=headers)).json()
		# the store holds every event of the run (across resumes): they come from there, the
		# summary from this process
		assert view["source"] == "store" and view["run"]["live"] is True
		ids = [e["id"] for e in view["events"]]
		assert ids == sorted(ids) and len(ids) == len(set(ids)) > 0
		assert SECRET not in json.dumps(view) and "[redacted]" in json.dumps(view)


async def test_without_a_store_live_runs_come_from_memory_redacted(tmp_path: Path) -> None:
	"""No run store: the run's events are the ones this process kept, numbered, masked."""
	om = _om(None)
	model = ScriptedModel([call_tool("weather.getForecast", city="Oslo"), finish(ok=True)])
	agent = om.create_agent(name="Here", model=model, integrations=["weather"])
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		result = await agent.run("Oslo?")
		headers = {"x-openmolt-token": viewer.token}
		url = f"{_base(viewer)}/api/runs/{result.state.run_id}"
		view = (await http.get(url, headers=headers)).json()
		assert view["source"] == "live"
		assert [e["id"] for e in view["events"]] == list(range(1, len(view["events"]) + 1))
		assert SECRET not in json.dumps(view) and "[redacted]" in json.dumps(view)


async def test_a_parked_run_of_an_agent_not_loaded_cannot_be_answered_here(tmp_path: Path) -> None:
	"""The page says which file to load; nothing resumes."""

	def nobody(question: str) -> str:
		raise HumanInputUnavailable("not now")

	store = tmp_path / "runs.db"
	model = ScriptedModel([ask_human("Which city?")])
	agent = _om(store).create_agent(name="Away", model=model, on_human_input_request=nobody)
	parked = await agent.run("go")
	async with Viewer(store=store) as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		state = (await http.get(f"{_base(viewer)}/api/state", headers=headers)).json()
		(question,) = state["questions"]
		assert question == {
			"id": f"parked:{parked.state.run_id}",
			"kind": "parked",
			"run_id": parked.state.run_id,
			"agent": "Away",
			"message": "Which city?",
			"asked": question["asked"],
			"can_answer": False,
			"origin": "api",
		}
		answer = await http.post(
			f"{_base(viewer)}/api/questions/{question['id']}",
			json={"answer": "Oslo"},
			headers=headers,
		)
		assert answer.status_code == 409 and "openmolt ui AGENT_FILE" in answer.json()["error"]


async def test_a_port_in_use_is_a_clear_configuration_error(tmp_path: Path) -> None:
	"""The second viewer on the same port says so and suggests another."""
	async with Viewer(store=tmp_path / "runs.db") as first:
		with pytest.raises(ConfigurationError, match="--port"):
			async with Viewer(store=tmp_path / "runs.db", port=first.port):
				pass


def _socket_to(viewer: Viewer) -> Any:
	import socket

	return socket.create_connection(("127.0.0.1", viewer.port), timeout=5)


def _said(sock: Any) -> tuple[bool, bytes]:
	"""Whether the server closed the socket, and what it sent first."""
	sock.settimeout(0.05)
	got = b""
	try:
		while True:
			chunk = sock.recv(4096)
			if not chunk:
				return True, got
			got += chunk
	except TimeoutError:
		return False, got
	except OSError:
		return True, got


async def test_the_viewer_has_the_slow_client_limits_of_serve(tmp_path: Path) -> None:
	"""Half-sent headers: 408 and closed; a half-sent body: 408; past the cap: 503."""
	import anyio

	store = tmp_path / "runs.db"
	async with Viewer(
		store=store, header_timeout=0.4, body_timeout=0.4, max_connections=4
	) as viewer:
		slow = _socket_to(viewer)
		slow.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		await anyio.sleep(1.0)
		closed, said = _said(slow)
		slow.close()
		assert closed and said.startswith(b"HTTP/1.1 408"), said
		half = _socket_to(viewer)
		half.sendall(
			b"POST /api/questions/q1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			+ f"x-openmolt-token: {viewer.token}\r\n".encode()
			+ b'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"answer": '
		)
		await anyio.sleep(1.0)
		_, said = _said(half)
		half.close()
		assert said.startswith(b"HTTP/1.1 408"), said
		held = [_socket_to(viewer) for _ in range(4)]
		await anyio.sleep(0.2)
		extra = _socket_to(viewer)
		await anyio.sleep(0.3)
		closed, said = _said(extra)
		assert closed and said.startswith(b"HTTP/1.1 503"), said
		for sock in (*held, extra):
			sock.close()


async def test_a_remote_host_needs_allow_remote_and_is_told_the_token_travels_in_clear(
	tmp_path: Path,
) -> None:
	"""Viewer(host=0.0.0.0) is refused; allowed, check_remote says the token is in clear."""
	from openmolt_ui._listen import check_remote

	with pytest.raises(ConfigurationError, match="allow-remote"):
		async with Viewer(store=tmp_path / "r.db", host="0.0.0.0"):
			pass
	assert check_remote("127.0.0.1", allow_remote=False, who="x") is None
	assert check_remote("::1", allow_remote=False, who="x") is None
	warning = check_remote("0.0.0.0", allow_remote=True, who="openmolt ui")
	assert warning is not None and "travels in clear" in warning and "TLS" in warning
	with pytest.raises(ConfigurationError, match="Viewer: max_connections must be more than 0"):
		Viewer(store=tmp_path / "r.db", max_connections=0)


async def test_list_filters_are_checked_and_an_empty_answer_is_refused(tmp_path: Path) -> None:
	"""Bad filters name the field and the fix; an empty answer is 400."""
	async with Viewer(store=tmp_path / "r.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		base = _base(viewer)
		for query, says in (
			("status=nope", "status must be one of"),
			("since=yesterday", "since must be an ISO 8601 time"),
			("limit=0", "limit must be a whole number from 1 to 500"),
		):
			bad = await http.get(f"{base}/api/runs?{query}", headers=headers)
			assert bad.status_code == 400 and says in bad.json()["error"], query
		ok = await http.get(f"{base}/api/runs?since=2026-01-01T00:00:00Z&limit=5", headers=headers)
		assert ok.status_code == 200 and ok.json() == {"runs": [], "more": False}
		days = await http.get(f"{base}/api/overview?days=0", headers=headers)
		assert days.status_code == 400 and "days must be" in days.json()["error"]
		empty = await http.post(f"{base}/api/questions/q1", json={"answer": "  "}, headers=headers)
		assert empty.status_code == 400 and "answer is empty" in empty.json()["error"]
		missing = await http.get(f"{base}/api/runs/nope/export", headers=headers)
		assert missing.status_code == 404


async def test_no_spelling_of_a_route_answers_without_the_token(tmp_path: Path) -> None:
	"""HEAD, OPTIONS, a trailing or doubled slash, another case, percent-encoded or dotted paths:
	403 without the token; only ``GET /auth/callback`` (however spelled) is open, and it shows
	only the consent page."""
	paths = ["/", "/api/state", "/api/stream", "/api/runs", "/api/runs/x", "/api/overview"]
	paths += ["/api/runs/x/export", "/static/app.js", "/api/questions/q1", "/api/approvals/a1"]
	variants = [*paths, *(p + "/" for p in paths), *("/" + p for p in paths)]
	variants += [p.upper() for p in paths]
	variants += ["/static/../api/state", "/static/%2e%2e/api/state", "/auth/callback/../api/state"]
	variants += ["/auth/callback/", "//auth/callback", "/AUTH/callback"]
	raw = [b"/api%2Fstate", b"/static/..%2Fapi%2Fstate", b"/auth/callback%2F..%2Fapi%2Fstate"]
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		base = _base(viewer)
		for path in variants:
			for method in ("GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE"):
				answer = await http.request(method, base + path, content=b'{"answer": "x"}')
				assert answer.status_code == 403, (method, path, answer.status_code)
		for target in raw:
			answer = await http.get(httpx.URL(base).copy_with(raw_path=target))
			assert answer.status_code == 403, (target, answer.status_code)
		for method in ("HEAD", "OPTIONS", "POST", "PUT", "DELETE"):
			answer = await http.request(method, base + "/auth/callback")
			assert answer.status_code == 403, method
		for target in (b"/auth/callback", b"/auth%2Fcallback"):
			page = await http.get(httpx.URL(base).copy_with(raw_path=target + b"?state=x"))
			assert page.status_code == 400 and "not connected" in page.text
			assert "runs" not in page.text.lower()


async def test_the_live_runs_keep_nothing_per_ended_run_past_keep() -> None:
	"""A server's viewer hears every run: past ``keep`` ended runs, nothing of one stays in memory
	(no per-run entry that never shrinks)."""
	from openmolt_ui._live import LiveRuns

	om = OpenMolt(entry_points=False)
	live = LiveRuns(keep=3)
	om.observers.append(live)
	agent = om.create_agent(name="A", model=ScriptedModel([finish("ok")] * 20))
	for _ in range(20):
		await agent.run("x")
	await om.aclose()
	assert len(live.runs) <= 4
	assert live._tokens == {} and live.questions == {} and live.approvals.pending == []


def slow_store(viewer: Viewer) -> None:
	"""Make the viewer's read of a parked run's state wait a moment (a slow store)."""
	read = viewer._parked_state

	async def slowly(run_id: str) -> Any:
		await anyio.sleep(0.2)
		return await read(run_id)

	viewer._parked_state = slowly  # type: ignore[method-assign]


async def test_answers_sent_at_once_to_a_parked_question_resume_its_run_once(
	tmp_path: Path,
) -> None:
	"""Three answers posted together (a double click, two tabs): one resumes the run, the others
	are refused; the run's tool runs once, not once per answer."""
	ran: list[int] = []

	def refund(amount: int) -> dict[str, Any]:
		"""Refund.

		Args:
			amount: Cents.
		"""
		ran.append(amount)
		return {"refunded": amount}

	def nobody(question: str) -> str:
		raise HumanInputUnavailable("not now")

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	step = [call_tool("local.refund", amount=5), finish("ok")]
	model = ScriptedModel([ask_human("How much?"), *step, *step, *step])
	agent = om.create_agent(name="Pay", model=model, tools=[refund], on_human_input_request=nobody)
	parked = await agent.run("refund")
	assert parked.status == "human_input_required"
	codes: list[int] = []
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		url = f"{_base(viewer)}/api/questions/parked:{parked.state.run_id}"
		headers = {"x-openmolt-token": viewer.token}
		slow_store(viewer)  # each request reads the store slowly: they overlap

		async def answer(text: str) -> None:
			codes.append((await http.post(url, json={"answer": text}, headers=headers)).status_code)

		async with anyio.create_task_group() as tg:
			for text in ("5", "6", "7"):
				tg.start_soon(answer, text)
		store = om.run_store
		assert store is not None
		with anyio.fail_after(15):
			while True:
				row = await store.run(parked.state.run_id)
				if row is not None and row.status == "success":
					break
				await anyio.sleep(0.05)
	await om.aclose()
	assert sorted(codes)[0] == 202 and codes.count(202) == 1, codes
	assert ran == [5]


async def test_a_body_nested_past_the_parser_is_a_400_not_a_500(tmp_path: Path) -> None:
	"""An answer or decision nested 200,000 levels deep (within the size cap) is refused as not
	JSON, never a RecursionError and a 500."""
	body = b"[" * 200_000 + b"]" * 200_000
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		for path in ("/api/questions/q1", "/api/approvals/a1"):
			response = await http.post(_base(viewer) + path, content=body, headers=headers)
			assert response.status_code == 400, (path, response.status_code)
			assert "send" in response.json()["error"]


async def test_an_old_run_is_served_masked_with_the_secrets_known_now(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
	"""A run stored before its secret was known is masked when served, as ``openmolt logs`` does."""
	late = "CANARY-late-key-4711abc"
	store = tmp_path / "runs.db"
	model = ScriptedModel([finish(said=f"the key is {late}")])
	agent = OpenMolt(entry_points=False, run_store=store).create_agent(name="Old", model=model)
	run_id = (await agent.run("go")).state.run_id
	assert late in repr(await RunStore(store).events(run_id, after=0, limit=100))
	monkeypatch.setenv("OPENMOLT_LATE_API_KEY", late)  # known now, not when it was stored
	async with Viewer(store=RunStore(store), poll=0.1) as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		base = _base(viewer)
		served = [
			(await http.get(f"{base}/api/runs/{run_id}", headers=headers)).text,
			(await http.get(f"{base}/api/runs", headers=headers)).text,
			(await http.get(f"{base}/api/runs/{run_id}/export", headers=headers)).text,
			(await http.get(f"{base}/api/state", headers=headers)).text,
		]
		async with http.stream("GET", f"{base}/api/runs/{run_id}/stream", headers=headers) as s:
			async for line in s.aiter_lines():
				served.append(line)
				if line.startswith("event: run"):
					break
	assert any("[redacted]" in text for text in served)
	for text in served:
		assert late not in text, text


@pytest.mark.parametrize("stored", [True, False])
async def test_a_failed_calls_error_event_names_the_call(tmp_path: Path, stored: bool) -> None:
	"""The page puts an ``error`` with the call its ``call`` key names, stored or live."""
	from openmolt_core.tools import tool

	@tool(labels=[])
	def broken() -> str:
		"""Fail."""
		raise RuntimeError("the disk is full")

	om = _om(tmp_path / "runs.db" if stored else None)
	model = ScriptedModel([call_tool("local.broken"), finish(ok=True)])
	agent = om.create_agent(name="Here", model=model, tools=[broken])
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		result = await agent.run("go")
		headers = {"x-openmolt-token": viewer.token}
		url = f"{_base(viewer)}/api/runs/{result.state.run_id}"
		view = (await http.get(url, headers=headers)).json()
		errors = [e["data"] for e in view["events"] if e["name"] == "error"]
		assert [(e["kind"], e["call"]) for e in errors] == [("tool", "tool:1:0:local.broken")]
		assert "the disk is full" in errors[0]["message"]


@pytest.mark.parametrize("where", ["store", "live", "memory"])
async def test_a_fallback_runs_summary_has_each_models_usage(
	tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
	"""Blocked by one model, answered by the next: the run's row says each model's part, masked.

	From the store's saved state (a run of another process), from this process's live run, and
	from memory without a store; the models add up to the run's usage.
	"""
	named = "CANARY-model-4711abc"  # a model id that is a secret known now: masked as any text
	monkeypatch.setenv("OPENMOLT_MODEL_API_KEY", named)
	store = tmp_path / "runs.db" if where != "memory" else None
	om = OpenMolt(entry_points=False, run_store=store)
	agent = om.create_agent(name="Fallback", model=fallback_models(named))
	viewer = Viewer(store=RunStore(store) if where == "store" else None, poll=0.1)
	if where != "store":
		viewer.watch(om)
	async with viewer, httpx.AsyncClient() as http:
		result = await agent.run("go")
		assert result.status == "success", result.error
		headers = {"x-openmolt-token": viewer.token}
		url = f"{_base(viewer)}/api/runs/{result.state.run_id}"
		response = await http.get(url, headers=headers)
		exported = await http.get(f"{url}/export", headers=headers)
	run = response.json()["run"]
	assert run["live"] is (where != "store")
	parts = run["usage_by_model"]
	assert {m: (u["input_tokens"], u["output_tokens"], u["calls"]) for m, u in parts.items()} == {
		"[redacted]:m": (900, 12, 1),
		"b:m": (100, 10, 1),
	}
	assert parts["[redacted]:m"]["cost_usd"] == pytest.approx(0.009)
	assert sum(u["input_tokens"] for u in parts.values()) == run["usage"]["input_tokens"]
	assert exported.json()["run"]["usage_by_model"] == parts
	assert named not in response.text and named not in exported.text
	await om.aclose()


@pytest.mark.parametrize("stored", [True, False])
async def test_a_verdict_on_a_question_or_a_reason_names_what_it_judged(
	tmp_path: Path, stored: bool
) -> None:
	"""The page reads which words a guardrail judged (``field``): a question's, a call's reason."""

	def refund(customer: str) -> str:
		"""Refund a customer.

		Args:
			customer: The customer id.
		"""
		return "refunded"

	def park(question: str) -> str:
		raise HumanInputUnavailable(question)

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db" if stored else None)
	guard = pii_redaction("output", kinds=["email"], message=True)
	reason = {**call_tool("local.refund", customer="c1"), "reason": "ada@example.com asked"}
	model = ScriptedModel([reason, ask_human("Is ada@example.com right?")])
	agent = om.create_agent(
		name="Guarded",
		model=model,
		tools=[refund],
		guardrails=[guard],
		requires_approval=["local.refund"],
		on_approval_request=lambda r: r.approve(),
		on_human_input_request=park,
	)
	async with Viewer(om) as viewer, httpx.AsyncClient() as http:
		result = await agent.run("go")
		assert result.status == "human_input_required", result.error
		url = f"{_base(viewer)}/api/runs/{result.state.run_id}"
		view = (await http.get(url, headers={"x-openmolt-token": viewer.token})).json()
	verdicts = [(e["step"], e["data"]) for e in view["events"] if e["name"] == "guardrail"]
	assert [(n, v["field"], v["action"], v["tool"]) for n, v in verdicts] == [
		(1, "reason", "rewrite", "local.refund"),
		(2, "message", "rewrite", ""),
	]
	verdicts_data = [v for _, v in verdicts]
	assert verdicts_data[0]["call"] == "tool:1:0:local.refund"
	request = next(e["data"]["request"] for e in view["events"] if e["name"] == "approval:request")
	assert request["reason"] == "[email] asked"
	assert view["run"]["pending"]["message"] == "Is [email] right?"
	await om.aclose()


async def test_a_refusal_and_a_wrong_host_carry_the_security_headers_too(tmp_path: Path) -> None:
	"""The 403 of a request without the token and the 400 of a foreign host are secured as pages."""
	from openmolt_core._support.webheaders import SECURITY_HEADERS

	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		base = _base(viewer)
		refused = [
			await http.get(f"{base}/api/state"),
			await http.post(f"{base}/api/questions/q1", json={"answer": "x"}),
			await http.get(f"{base}/api/state?token={viewer.token}", headers={"host": "evil.test"}),
		]
	assert [r.status_code for r in refused] == [403, 403, 400]
	for response in refused:
		for name, value in SECURITY_HEADERS:
			if name == "Content-Security-Policy":
				assert "frame-ancestors 'none'" in response.headers[name]
			else:
				assert response.headers.get(name) == value, (response.status_code, name)


@pytest.mark.parametrize(
	("path", "body", "said"),
	[
		("/api/approvals/a1", b'{"action": "edit", "input": {"amount": NaN}}', "NaN"),
		("/api/approvals/a1", b'{"action": "edit", "input": {"amount": -Infinity}}', "Infinity"),
		("/api/approvals/a1", b'{"action": "deny", "reason": "no", "action": "approve"}', "action"),
		("/api/questions/q1", b'{"answer": "5", "answer": "500"}', "answer"),
		("/api/questions/q1", b'{"answer": "half an emoji \\ud83d"}', "surrogate"),
	],
)
async def test_a_body_a_state_cannot_hold_or_that_says_two_things_is_refused(
	tmp_path: Path, path: str, body: bytes, said: str
) -> None:
	"""An answer or decision with NaN, a lone surrogate, or a key twice (which one was meant is a
	guess: a proxy may read the first, Python read the last) is a 400 that says why, as a
	model's reply with them runs nothing; it was read and acted on."""
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token, "content-type": "application/json"}
		response = await http.post(_base(viewer) + path, content=body, headers=headers)
		assert response.status_code == 400, (body, response.status_code, response.text)
		assert said in response.json()["error"], response.text


@pytest.mark.parametrize("query", ["/api/overview?days=\u00b2", "/api/runs?limit=\u2463"])
async def test_a_digit_int_cannot_read_is_a_400_that_names_the_field(
	tmp_path: Path, query: str
) -> None:
	"""``"²".isdigit()`` is true and ``int("²")`` fails: it was a 500."""
	async with Viewer(store=tmp_path / "runs.db") as viewer, httpx.AsyncClient() as http:
		headers = {"x-openmolt-token": viewer.token}
		response = await http.get(_base(viewer) + query, headers=headers)
		assert response.status_code == 400, response.status_code
		assert "whole number" in response.json()["error"]


@pytest.mark.parametrize("run_id", ["运行-1", "ünïcode\u202etxt.exe", 'a"b;c\\d'])
async def test_a_run_whose_id_is_not_latin_1_exports_with_a_safe_file_name(
	tmp_path: Path, run_id: str
) -> None:
	"""The export's ``content-disposition`` is ASCII: an id of other letters was a 500 (a
	header is Latin-1), and a bidi override or a quote never reaches the file name."""
	from openmolt import RunState

	om = OpenMolt(entry_points=False, run_store=tmp_path / "runs.db")
	agent = om.create_agent(name="A", model=ScriptedModel([finish("ok")]))
	await agent.run("go", history=RunState(run_id=run_id))
	async with Viewer(om, agents=[agent]) as viewer, httpx.AsyncClient() as http:
		url = f"{_base(viewer)}/api/runs/{quote(run_id, safe='')}/export"
		response = await http.get(url, headers={"x-openmolt-token": viewer.token})
		assert response.status_code == 200, response.text
		assert response.json()["run"]["run_id"] == run_id
		disposition = response.headers["content-disposition"]
		assert disposition.isascii() and disposition.count('"') == 2, disposition
	await om.aclose()
