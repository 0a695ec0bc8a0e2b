"""Gemini's ``inlineData`` carries a media type Gemini reads, within its inline size limit.

The attachment's media type went as given, parameters and all (``text/plain; charset=utf-8``),
and any type or size went out, for the API to refuse with a 400 that said to check model_config.
Now the bare type goes, in the spelling Gemini's pages list (``audio/mpeg`` is ``audio/mp3``);
a text file of another text type goes as ``text/plain`` (Gemini reads any non-PDF document as
plain text); and a type Gemini does not read, or inline data past its limit (100 MB in a request,
PDFs 50 MB) once older images are left out (`test_image_limits`), is refused before anything is
sent, naming the attachment and what Gemini reads.
The types: Gemini API docs, image understanding (PNG, JPEG, WEBP, HEIC, HEIF), audio
understanding (WAV, MP3, AIFF, AAC, OGG Vorbis, FLAC), video understanding (MP4, MPEG, MOV, AVI,
FLV, MPG, WEBM, WMV, 3GPP), document understanding (PDF; other documents read as text); the
limit: "Increased file size limits" (Google, 2026-01: inline data from 20 MB to 100 MB) and the
file input methods page ("PDFs are limited to 50MB for this method").
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from openmolt_core.errors import ProviderError
from openmolt_core.llm import Attachment
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers.conftest import make_request

pytestmark = pytest.mark.anyio

NOTES = base64.b64encode("Zoë's notes".encode()).decode()
REPLY = {"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}


class Api:
	"""Answers every call with a plain reply; keeps the requests."""

	def __init__(self, reply: dict[str, Any] | None = None) -> None:
		self.reply = reply or REPLY
		self.requests: list[httpx.Request] = []

	def __call__(self, request: httpx.Request) -> httpx.Response:
		self.requests.append(request)
		return httpx.Response(200, json=self.reply)

	def parts(self) -> list[dict[str, Any]]:
		body = json.loads(self.requests[-1].content)
		parts: list[dict[str, Any]] = body["contents"][0]["parts"][1:]
		return parts


def gemini(api: Api, **settings: Any) -> GeminiProvider:
	client = httpx.AsyncClient(transport=httpx.MockTransport(api))
	return GeminiProvider({"api_key": "AIza-test", **settings}, lambda: client)


async def _sent(*attachments: Attachment, **settings: Any) -> list[dict[str, Any]]:
	api = Api()
	await gemini(api, **settings).generate(
		make_request("gemini-2.5-flash", attachments=list(attachments))
	)
	return api.parts()


@pytest.mark.parametrize(
	("given", "sent"),
	[
		("text/plain; charset=utf-8", "text/plain"),
		("Text/CSV; header=present", "text/csv"),
		("image/png", "image/png"),
		("image/jpg", "image/jpeg"),
		("audio/mpeg", "audio/mp3"),
		("audio/x-wav", "audio/wav"),
		("audio/x-aiff", "audio/aiff"),
		("audio/x-flac", "audio/flac"),
		("video/quicktime", "video/mov"),
		("video/x-msvideo", "video/avi"),
		("video/x-ms-wmv", "video/wmv"),
		("video/mp4; codecs=avc1", "video/mp4"),
		("application/pdf", "application/pdf"),
		("text/markdown", "text/markdown"),
		("application/json", "text/plain"),
		("application/x-yaml; charset=utf-8", "text/plain"),
		("text/x-rust", "text/plain"),
		("image/svg+xml", "text/plain"),  # XML: its markup is read
	],
)
async def test_inline_data_goes_with_the_type_gemini_reads(given: str, sent: str) -> None:
	"""The bare type, in Gemini's spelling; other text as plain text; the data as given."""
	[part] = await _sent(Attachment(given, NOTES, "a"))
	assert part == {"inlineData": {"mimeType": sent, "data": NOTES}}


@pytest.mark.parametrize(
	"kind",
	[
		"image/gif",
		"image/bmp",
		"audio/midi",
		"video/x-matroska",
		"application/zip",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	],
)
async def test_a_type_gemini_does_not_read_is_refused_before_sending(kind: str) -> None:
	"""Named, with what Gemini reads; no request goes out, and it is not retried."""
	api = Api()
	request = make_request(
		"gemini-2.5-flash",
		attachments=[
			Attachment("text/plain", NOTES, "ok.txt"),
			Attachment(kind, "AAAA", "file.bin"),
		],
	)
	with pytest.raises(ProviderError) as caught:
		await gemini(api).generate(request)
	message = str(caught.value)
	assert api.requests == [] and not caught.value.retryable
	assert "'file.bin'" in message and kind in message and "ok.txt" not in message
	for accepted in ("PNG, JPEG, WEBP, HEIC and HEIF images", "WAV, MP3", "MP4", "PDF", "text"):
		assert accepted in message
	assert "a Gemini model reads" not in message  # the hint is another model's, not Gemini's


def _b64(size: int) -> str:
	"""Base64 text that decodes to ``size`` bytes."""
	return "A" * (size // 3 * 4)


async def test_inline_data_past_gemini_limit_is_refused_before_sending() -> None:
	"""The request's inline data, base64, over 100 MB in all: refused, naming what crossed it."""
	half = 40 * 1024 * 1024  # base64 characters: 30 MB of PDF each
	first, second, third = (
		Attachment("application/pdf", "A" * half, f"{n}.pdf") for n in ("one", "two", "three")
	)
	api = Api()
	with pytest.raises(ProviderError) as caught:
		request = make_request("gemini-2.5-flash", attachments=[first, second, third])
		await gemini(api).generate(request)
	assert api.requests == []
	message = str(caught.value)
	assert "'three.pdf'" in message and "100 MB" in message and "120.0 MB" in message
	assert await _sent(first)  # one alone is within the limit


async def test_older_images_past_the_inline_limit_are_left_out() -> None:
	"""Images past 100 MB together: the newest that fit go, the older one becomes a note."""
	half = 60 * 1024 * 1024  # base64 characters
	first = Attachment("image/png", "A" * half, "one.png")
	second = Attachment("image/png", "B" * half, "two.png")
	api = Api()
	await gemini(api).generate(make_request("gemini-2.5-flash", attachments=[first, second]))
	[sent] = api.requests
	parts = json.loads(sent.content)["contents"][0]["parts"]
	assert parts[1] == {"text": "[image of the input left out: the request holds the newest image]"}
	assert parts[2]["inlineData"]["data"][:1] == "B" and len(parts) == 3


async def test_a_pdf_past_50_mb_is_refused() -> None:
	"""A PDF over 50 MB (its bytes) is refused; one under it goes."""
	big = Attachment("application/pdf", _b64(51 * 1024 * 1024), "big.pdf")
	api = Api()
	with pytest.raises(ProviderError, match=r"PDFs of at most 50 MB, and this one is 51\.0 MB"):
		await gemini(api).generate(make_request("gemini-2.5-flash", attachments=[big]))
	assert api.requests == []
	small = Attachment("application/pdf", _b64(49 * 1024 * 1024), "small.pdf")
	[part] = await _sent(small)
	assert part["inlineData"]["mimeType"] == "application/pdf"


async def test_another_server_decides_for_itself() -> None:
	"""A proxy at another base URL gets the bare type as given; it decides what it reads."""
	sent = await _sent(
		Attachment("image/gif; x=1", "R0lG", "a.gif"), base_url="http://localhost:4000/v1beta"
	)
	assert sent == [{"inlineData": {"mimeType": "image/gif", "data": "R0lG"}}]


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
async def test_openai_data_urls_carry_the_bare_type(api_mode: str) -> None:
	"""The same on OpenAI: a ``data:`` URL with ``; charset=...`` in it is no URL the API reads."""
	sent: list[httpx.Request] = []

	def handle(request: httpx.Request) -> httpx.Response:
		sent.append(request)
		return httpx.Response(400, json={"error": {"message": "stop here"}})

	client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
	p = OpenAIProvider({"api_key": "sk-test", "api_mode": api_mode}, lambda: client)
	pdf = Attachment("application/pdf; name=x", "JVBERi0=", "x.pdf")
	image = Attachment("image/png; x=1", "iVBO", "x.png")
	with pytest.raises(ProviderError):
		await p.generate(make_request("gpt-5-mini", attachments=[pdf, image]))
	body = sent[0].content.decode()
	assert "data:application/pdf;base64,JVBERi0=" in body
	assert "data:image/png;base64,iVBO" in body
	assert "name=x" not in body and "x=1" not in body
