"""A URL a log record shows carries its secrets masked, though no source knows them.

A key the model read in its instructions and put in ``httpRequest``'s URL (``?api_key=``), a
signed link a tool returned (``?sig=``), a password in a URL's userinfo: the run keeps them as
the model wrote them (it needs them for its next call), but the HTTP client's request line,
``HTTP Request: GET https://...?api_key=... "HTTP/1.1 200 OK"``, is a log, and a log shows no
secret. A URL in a record (its message or an argument: httpx passes its ``URL``) has its
password and its query values named like secrets (`url_secrets`, ``hinted_only``) masked; a
search's words stay readable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.core._logs import Keep, httpx_kept

KEY = "k3y-7f3a9e21c4d8b6a0"


@pytest.fixture
def kept() -> Iterator[Keep]:
	with httpx_kept() as handler:
		yield handler


@pytest.mark.parametrize(
	"url",
	[
		f"https://api.example/v1/x?api_key={KEY}",
		f"https://api.example/v1/x?page=2&token={KEY}",
		f"https://bucket.example/file.pdf?X-Amz-Signature={KEY}&X-Amz-Expires=300",
		f"https://user:{KEY}@api.example/v1",
	],
)
def test_the_request_line_of_a_url_with_a_secret_is_masked(kept: Keep, url: str) -> None:
	log = logging.getLogger("httpx")
	log.info('HTTP Request: %s %s "%s %d %s"', "GET", httpx.URL(url), "HTTP/1.1", 200, "OK")
	log.info("calling %s", url)
	log.info(f"calling {url} now")
	assert len(kept.messages) == 3
	for message in kept.messages:
		assert KEY not in message, message
		assert "[redacted]" in message
		assert "api.example" in message or "bucket.example" in message


@pytest.mark.parametrize(
	"url",
	[
		"https://api.example/v1/items?page=2&limit=50",
		"https://api.example/search?q=weather+in+oslo&lang=en",
		"https://api.example/v1/items",
	],
)
def test_a_url_without_secrets_is_left_as_it_is(kept: Keep, url: str) -> None:
	"""Paging, a search's words, a plain address: a log a person reads stays readable."""
	log = logging.getLogger("httpx")
	log.info('HTTP Request: %s %s "%s %d %s"', "GET", httpx.URL(url), "HTTP/1.1", 200, "OK")
	assert kept.messages == [f'HTTP Request: GET {url} "HTTP/1.1 200 OK"']


@pytest.mark.anyio
async def test_the_events_observers_keep_mask_a_url_s_secrets_the_model_still_has(
	tmp_path: Any,
) -> None:
	"""The run store's events: the key the model wrote in its call is masked there; the model
	read it in its instructions and called with it (the run needs it: its state keeps it)."""
	from openmolt import OpenMolt
	from openmolt_core.runstore import RunStore
	from openmolt_core.testing import ScriptedModel, call_tool, finish

	url = f"https://93.184.216.34/v1/x?api_key={KEY}"
	sent: list[str] = []

	def answer(request: httpx.Request) -> httpx.Response:
		sent.append(str(request.url))
		return httpx.Response(200, json={"ok": True, "next": f"{url}&page=2"})

	om = OpenMolt(
		http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
		integrations={"httpRequest": {"allowInternalHosts": ["93.184.216.34"]}},
		run_store=tmp_path / "runs.db",
	)
	model = ScriptedModel([call_tool("httpRequest.request", url=url), finish(result="done")])
	agent = om.create_agent(
		name="H", model=model, integrations=["httpRequest"], instructions=f"Call {url}"
	)
	result = await agent.run("go")
	await om.aclose()
	assert result.status == "success"
	assert sent == [url]  # the call went out as the model wrote it
	assert KEY in model.requests[0].messages[0].content  # the model read it
	store = RunStore(tmp_path / "runs.db")
	(row,) = await store.runs()
	events = await store.events(row.run_id)
	assert {e.name for e in events} >= {"tool:call", "tool:response", "llmOutput", "finish"}
	kept = json.dumps([e.data for e in events])
	assert KEY not in kept
	assert "api_key=[redacted]" in kept
