"""The providers' streams: deltas as they arrive, the same final response as generate, cut-offs.

The ``*_stream.sse`` files follow each vendor's documented stream (the Responses API and Chat
Completions streaming references, the Anthropic SDK's own fixture ``basic_response.txt``, Gemini's
``streamGenerateContent?alt=sse``); each ``*_streamed.json`` is the body the same reply has without
streaming. Every test reads them in chunks of several sizes, one byte at a time included, so they
are cut inside strings, escapes and multi-byte characters.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from openmolt import OpenMolt
from openmolt_core.errors import ProviderError
from openmolt_core.llm import ModelResponse
from openmolt_core.streaming import StreamingProvider, TextDelta
from openmolt_providers._sse import SSEvent, sse_events
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parent / "data"
TEXT = json.loads((DATA / "anthropic_streamed.json").read_text())["content"][1]["text"]


class Chunks(httpx.AsyncByteStream):
	"""A response body sent in chunks of a given size."""

	def __init__(self, body: bytes, size: int) -> None:
		self.body = body
		self.size = size

	async def __aiter__(self) -> AsyncIterator[bytes]:
		for i in range(0, len(self.body), self.size):
			yield self.body[i : i + self.size]


class Streams:
	"""A fake endpoint: streams ``body`` to requests that ask for a stream, else answers JSON."""

	def __init__(self, body: bytes, whole: dict[str, Any], size: int) -> None:
		self.requests: list[httpx.Request] = []
		self.body = body
		self.whole = whole
		self.size = size
		self.client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

	def handle(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		if request.headers.get("accept") == "text/event-stream":
			return httpx.Response(
				200,
				headers={"content-type": "text/event-stream"},
				stream=Chunks(self.body, self.size),
			)
		return httpx.Response(200, json=self.whole)

	def http(self) -> httpx.AsyncClient:
		return self.client

	async def sleep(self, seconds: float) -> None:
		return None


def _openai(server: Streams) -> OpenAIProvider:
	return OpenAIProvider({"apiKey": "sk-test-0000000000"}, server.http, sleep=server.sleep)


def _chat(server: Streams) -> OpenAIProvider:
	settings = {"base_url": "http://127.0.0.1:11434/v1", "api_mode": "chat"}
	return OpenAIProvider(settings, server.http, sleep=server.sleep)


def _anthropic(server: Streams) -> AnthropicProvider:
	return AnthropicProvider({"apiKey": "sk-ant-test-0000"}, server.http, sleep=server.sleep)


def _gemini(server: Streams) -> GeminiProvider:
	return GeminiProvider({"apiKey": "AIza-test-0000000000"}, server.http, sleep=server.sleep)


CASES: dict[str, tuple[Callable[[Streams], Any], str, str]] = {
	"openai-responses": (_openai, "gpt-5-mini", "openai_responses"),
	"openai-chat": (_chat, "llama3.2", "openai_chat"),
	"anthropic": (_anthropic, "claude-sonnet-4-5", "anthropic"),
	"gemini": (_gemini, "gemini-2.5-flash", "gemini"),
}


def _server(name: str, size: int, cut: int | None = None) -> tuple[Any, str, Streams]:
	make, model, stem = CASES[name]
	body = (DATA / f"{stem}_stream.sse").read_bytes()
	whole = json.loads((DATA / f"{stem}_streamed.json").read_text())
	server = Streams(body if cut is None else body[:cut], whole, size)
	return make(server), model, server


async def _collect(provider: Any, request: Any) -> tuple[list[str], list[ModelResponse]]:
	deltas: list[str] = []
	finals: list[ModelResponse] = []
	async for chunk in provider.stream(request):
		if isinstance(chunk, TextDelta):
			assert not finals, "a delta came after the response"
			deltas.append(chunk.text)
		else:
			finals.append(chunk)
	return deltas, finals


@pytest.mark.parametrize("size", [1, 2, 7, 64, 100_000])
@pytest.mark.parametrize("name", list(CASES))
async def test_the_stream_gives_deltas_and_the_generate_response(name, size, req) -> None:
	"""Deltas concatenate to the reply; the final response equals generate's for the same reply."""
	provider, model, server = _server(name, size)
	assert isinstance(provider, StreamingProvider)
	deltas, finals = await _collect(provider, req(model))
	assert "".join(deltas) == TEXT
	assert len(deltas) > 10
	[final] = finals
	plain = await provider.generate(req(model))
	assert (final.text, final.usage, final.finish_reason) == (
		plain.text,
		plain.usage,
		plain.finish_reason,
	)
	assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0
	streamed, generated = server.requests
	body = json.loads(streamed.content)
	if name == "gemini":
		assert streamed.url.path.endswith(":streamGenerateContent")
		assert streamed.url.params["alt"] == "sse"
		assert body == json.loads(generated.content)
	else:
		assert body.pop("stream") is True
		if name == "openai-chat":
			assert body.pop("stream_options") == {"include_usage": True}
		assert body == json.loads(generated.content)


@pytest.mark.parametrize("name", list(CASES))
async def test_a_stream_cut_anywhere_before_its_end_runs_nothing(name, req) -> None:
	"""A stream cut before its last event raises a retryable error after what it received."""
	full = (DATA / f"{CASES[name][2]}_stream.sse").read_bytes()
	last = full.rstrip().rfind(b"data:")
	if name == "openai-chat":  # the last event is [DONE]; the usage chunk before it counts
		last = full.rfind(b"data:", 0, last)
	for cut in sorted({1, len(full) // 3, len(full) // 2, last + 7, last + 20}):
		provider, model, _ = _server(name, 5, cut=cut)
		with pytest.raises(ProviderError) as caught:
			await _collect(provider, req(model))
		assert caught.value.retryable
		assert "before the reply was complete" in str(caught.value)


async def test_anthropic_error_event_is_the_http_error(req) -> None:
	"""An overloaded_error in the stream is a retryable 529, as over plain HTTP."""
	body = (
		b'event: message_start\ndata: {"type":"message_start","message":{"content":[],'
		b'"usage":{"input_tokens":3}}}\n\n'
		b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
		b'"message":"Overloaded"}}\n\n'
	)
	provider = _anthropic(Streams(body, {}, 10))
	with pytest.raises(ProviderError) as caught:
		await _collect(provider, req("claude-sonnet-4-5"))
	assert caught.value.status_code == 529 and caught.value.retryable


async def test_opening_the_stream_is_retried_like_a_call(req) -> None:
	"""A 503 before the stream starts is retried; the second attempt streams."""
	calls: list[int] = []
	body = (DATA / "anthropic_stream.sse").read_bytes()

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(1)
		if len(calls) == 1:
			return httpx.Response(503, json={"error": {"message": "busy"}})
		return httpx.Response(200, stream=Chunks(body, 50))

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))

	async def sleep(seconds: float) -> None:
		return None

	provider = AnthropicProvider({"apiKey": "sk-ant-test-0000"}, lambda: client, sleep=sleep)
	deltas, [final] = await _collect(provider, req("claude-sonnet-4-5"))
	assert len(calls) == 2 and final.text == TEXT == "".join(deltas)


async def test_a_refused_stream_is_the_providers_error(req) -> None:
	"""A 401 on the stream raises the same message as generate (no key in it)."""

	def handle(request: httpx.Request) -> httpx.Response:
		return httpx.Response(401, json={"error": {"message": "invalid x-api-key"}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	provider = AnthropicProvider({"apiKey": "sk-ant-test-0000"}, lambda: client)
	with pytest.raises(ProviderError, match="API key was rejected") as caught:
		await _collect(provider, req("claude-sonnet-4-5"))
	assert "sk-ant-test-0000" not in str(caught.value)


async def test_sse_framing() -> None:
	"""CR, LF and CRLF line ends, comments, multi-line data, a BOM, a cut multi-byte character."""
	raw = (
		"\ufeff: hi\r\nevent: a\rdata: 1\ndata: é\r\n\r\ndata: x\n\nevent: cut\ndata: lost".encode()
	)

	async def read(size: int) -> list[SSEvent]:
		return [event async for event in sse_events(Chunks(raw, size))]

	for size in (1, 2, 3, 100):
		assert await read(size) == [SSEvent("a", "1\né"), SSEvent("message", "x")]


async def test_an_agent_streams_over_a_provider(req) -> None:
	"""agent.stream() over Anthropic: the human message arrives in pieces, the result is the same."""
	server = Streams(
		(DATA / "anthropic_stream.sse").read_bytes(),
		json.loads((DATA / "anthropic_streamed.json").read_text()),
		3,
	)
	om = OpenMolt(
		llm_providers={"anthropic": {"apiKey": "sk-ant-test-0000"}},
		http_client=server.client,
	)
	agent = om.create_agent(name="Finder", model="anthropic:claude-sonnet-4-5")
	async with agent.stream("Capital of Norway?") as run:
		events = [event async for event in run]
		result = await run.result()
	message = "".join(
		e.text for e in events if e.name == "text:delta" and e.field == "humanMessage"
	)
	assert message == result.human_message == 'Done: "Oslo" 😀\nÅ\\ok'
	assert result.output == {"answer": "Oslo — «hovedstad»"}
	assert server.requests[0].headers["accept"] == "text/event-stream"
	await om.aclose()


async def test_a_server_of_unknown_api_answers_at_once_first(req) -> None:
	"""Without api_mode, a local server's first call is not streamed; once it answered, it is."""
	server = Streams(
		(DATA / "openai_responses_stream.sse").read_bytes(),
		json.loads((DATA / "openai_responses_streamed.json").read_text()),
		9,
	)
	provider = OpenAIProvider({"base_url": "http://127.0.0.1:8000/v1"}, server.http)
	first, [one] = await _collect(provider, req("local-model"))
	second, [two] = await _collect(provider, req("local-model"))
	assert first == [TEXT] and len(second) > 10
	assert one.text == two.text == TEXT
	assert [r.headers["accept"] for r in server.requests] == [
		"application/json",
		"text/event-stream",
	]


class NoStreams(Streams):
	"""A server that does not stream: it refuses ``stream`` (``status``) or answers it whole."""

	def __init__(self, whole: dict[str, Any], status: int | None) -> None:
		super().__init__(b"", whole, 1)
		self.status = status

	def handle(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		asked = request.headers.get("accept") == "text/event-stream"
		if asked and self.status is not None:
			return httpx.Response(
				self.status, json={"error": {"message": "stream is not supported"}}
			)
		return httpx.Response(200, json=self.whole)


@pytest.mark.parametrize("status", [None, 400, 405, 422])
@pytest.mark.parametrize("name", list(CASES))
async def test_a_server_that_does_not_stream_is_asked_once_without(name, status, req) -> None:
	"""A refused (or ignored) stream is asked for again without streaming, once, and remembered."""
	from openmolt_providers._common import NotStreamingWarning

	make, model, stem = CASES[name]
	server = NoStreams(json.loads((DATA / f"{stem}_streamed.json").read_text()), status)
	provider = make(server)
	with pytest.warns(NotStreamingWarning, match="does not stream") as warned:
		first, [one] = await _collect(provider, req(model))
	assert len(warned) == 1
	assert first == [TEXT] and one.text == TEXT
	asked = ["text/event-stream"]
	if status is not None:  # refused: asked again without streaming
		asked.append("application/json")
	# (a whole reply to the stream is the answer: not asked for again, a second paid call)
	assert [r.headers.get("accept") for r in server.requests] == asked
	second, [two] = await _collect(provider, req(model))  # remembered: one plain request
	assert second == [TEXT] and two.text == TEXT
	assert server.requests[-1].headers.get("accept") == "application/json"
	assert len(server.requests) == len(asked) + 1


class OddOnce(NoStreams):
	"""Answers the first stream with a 200 JSON body of another shape (what a proxy might send)."""

	def handle(self, request: httpx.Request) -> httpx.Response:
		if not self.requests and request.headers.get("accept") == "text/event-stream":
			self.requests.append(request)
			return httpx.Response(200, json={"object": "list", "data": []})
		return super().handle(request)


@pytest.mark.parametrize("name", list(CASES))
async def test_a_whole_body_that_is_no_reply_is_asked_for_again(name, req) -> None:
	"""A 200 JSON body of another shape than the API's replies is not taken for the answer."""
	from openmolt_providers._common import NotStreamingWarning

	make, model, stem = CASES[name]
	whole = json.loads((DATA / f"{stem}_streamed.json").read_text())
	server = OddOnce(whole, None)
	provider = make(server)
	with pytest.warns(NotStreamingWarning):
		first, [one] = await _collect(provider, req(model))
	assert first == [TEXT] and one.text == TEXT
	assert [r.headers.get("accept") for r in server.requests] == [
		"text/event-stream",
		"application/json",
	]


async def test_a_refusal_that_is_not_about_streaming_is_raised(req) -> None:
	"""A 400 about something else is the error it always was, with no second request."""
	calls: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return httpx.Response(400, json={"error": {"message": "max_tokens is too large"}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	provider = AnthropicProvider({"apiKey": "sk-ant-test-0000"}, lambda: client)
	with pytest.raises(ProviderError, match="max_tokens"):
		await _collect(provider, req("claude-sonnet-4-5"))
	assert len(calls) == 1


@pytest.mark.parametrize(
	"message", ["upstream model 'claude-x' not found", "no upstream for this route", "livestream"]
)
async def test_a_refusal_naming_a_word_that_ends_in_stream_is_raised(message, req) -> None:
	"""A gateway's 'upstream ...' error is not a refused stream: raised, one request, and the
	provider keeps streaming (it was taken for one, asked again and never streamed after)."""
	calls: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		calls.append(request)
		return httpx.Response(404, json={"error": {"message": message}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	provider = AnthropicProvider({"apiKey": "sk-ant-test-0000"}, lambda: client)
	with pytest.raises(ProviderError, match=message.split()[0]):
		await _collect(provider, req("claude-sonnet-4-5"))
	assert len(calls) == 1 and provider.streams
