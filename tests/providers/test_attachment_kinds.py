"""Attachments each API reads, in the form its SDK types take; the others refused before sending.

An attachment the API cannot read (audio on Anthropic or the Responses API, a HEIC image on
OpenAI, an image over Anthropic's 5 MB) was sent and refused with a 400 that said to check
model_config; it now fails before any request, naming its media type and what the API reads.
Text goes to Anthropic as a ``text`` document source (base64 is for PDF only), and WAV or
MP3 to Chat Completions as ``input_audio``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import TypeAdapter

from openmolt_core.errors import ProviderError
from openmolt_core.llm import Attachment
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers.test_sdk_conformance import materialize, strict_adapter

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = pytest.mark.xdist_group("sdk-types")

TEXT = Attachment("text/plain", base64.b64encode("Zoë's notes".encode()).decode(), "notes.txt")
WAV = Attachment("audio/wav", "UklGRg==", "hello.wav")
MP3 = Attachment("audio/mpeg", "SUQz", "hello.mp3")
OGG = Attachment("audio/ogg", "T2dnUw==", "hello.ogg")
HEIC = Attachment("image/heic", "AAAAGGZ0eXA=", "photo.heic")
VIDEO = Attachment("video/mp4", "AAAAIGZ0eXA=", "clip.mp4")


@pytest.fixture(scope="module")
def chat_params() -> TypeAdapter[Any]:
	from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

	return strict_adapter(CompletionCreateParamsNonStreaming)


@pytest.fixture(scope="module")
def anthropic_params() -> TypeAdapter[Any]:
	from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

	return strict_adapter(MessageCreateParamsNonStreaming)


def _never() -> None:
	raise AssertionError("nothing is sent")


def anthropic() -> AnthropicProvider:
	return AnthropicProvider({"api_key": "k"}, _never)


def openai(**settings) -> OpenAIProvider:
	return OpenAIProvider({"api_key": "k", **settings}, _never)


def test_anthropic_reads_plain_text_as_a_text_document(req, anthropic_params) -> None:
	"""``text/plain`` is a document with a ``text`` source holding the text itself."""
	body = anthropic().build(req("claude-sonnet-4-5", attachments=[TEXT]))
	block = body["messages"][0]["content"][0]
	assert block == {
		"type": "document",
		"source": {"type": "text", "media_type": "text/plain", "data": "Zoë's notes"},
	}
	materialize(anthropic_params.validate_python(body))


@pytest.mark.parametrize("attachment", [WAV, OGG, VIDEO, HEIC])
def test_anthropic_refuses_what_it_cannot_read_before_sending(req, attachment) -> None:
	with pytest.raises(ProviderError) as info:
		anthropic().build(req("claude-sonnet-4-5", attachments=[attachment]))
	message = str(info.value)
	assert attachment.media_type in message and "PDF and text files" in message
	assert not info.value.retryable and "model_config" not in message


def test_anthropic_refuses_an_image_over_5_mb(req) -> None:
	"""The API measures an image's 5 MB in its base64 text ("image.source.base64: image exceeds
	5 MB maximum: 6405384 bytes > 5242880 bytes" for a 4.6 MB GIF): 4.5 MB of image is 6 MB
	of base64, refused before it is sent; 5 MB of base64 (3.75 MB of image) is taken."""
	big = Attachment("image/png", "A" * (8 * 1024 * 1024), "big.png")  # 6 MB decoded
	with pytest.raises(ProviderError, match=r"at most 5 MB as base64.*this one is 8\.0 MB"):
		anthropic().build(req("claude-sonnet-4-5", attachments=[big]))
	over = Attachment("image/png", "A" * (6 * 1024 * 1024), "over.png")  # 4.5 MB decoded
	with pytest.raises(ProviderError, match=r"this one is 6\.0 MB \(4\.5 MB of image\)"):
		anthropic().build(req("claude-sonnet-4-5", attachments=[over]))
	small = Attachment("image/png", "A" * (5 * 1024 * 1024), "ok.png")  # 3.75 MB decoded
	anthropic().build(req("claude-sonnet-4-5", attachments=[small]))


@pytest.mark.parametrize(("attachment", "fmt"), [(WAV, "wav"), (MP3, "mp3")])
def test_chat_sends_wav_and_mp3_as_input_audio(req, chat_params, attachment, fmt) -> None:
	body = openai(api_mode="chat").build(req("gpt-4o-audio-preview", attachments=[attachment]))
	part = body["messages"][1]["content"][1]
	assert part == {"type": "input_audio", "input_audio": {"data": attachment.data, "format": fmt}}
	materialize(chat_params.validate_python(body))


@pytest.mark.parametrize(
	("settings", "attachment", "why"),
	[
		({"api_mode": "chat"}, OGG, "WAV and MP3"),
		({"api_mode": "chat"}, HEIC, "PNG, JPEG, WEBP and GIF"),
		({"api_mode": "chat"}, VIDEO, "no video"),
		({}, WAV, "Responses API takes no audio"),
		({}, HEIC, "PNG, JPEG, WEBP and GIF"),
		({}, VIDEO, "no video"),
	],
)
def test_openai_refuses_what_it_cannot_read_before_sending(req, settings, attachment, why) -> None:
	with pytest.raises(ProviderError, match=why) as info:
		openai(**settings).build(req("gpt-4o", attachments=[attachment]))
	assert attachment.media_type in str(info.value)


def test_another_server_decides_for_itself(req) -> None:
	"""A local server (vLLM, Ollama) gets any image as image_url and other audio as a file."""
	local = openai(api_mode="chat", base_url="http://localhost:8000/v1")
	body = local.build(req("qwen2.5-vl", attachments=[HEIC, WAV]))
	parts = body["messages"][1]["content"]
	assert parts[1]["type"] == "image_url" and parts[2]["type"] == "input_audio"


def test_gemini_reads_audio_video_and_text_inline(req) -> None:
	p = GeminiProvider({"api_key": "k"}, _never)
	body = p.build(req("gemini-2.5-flash", attachments=[WAV, VIDEO, TEXT]))
	kinds = [part["inlineData"]["mimeType"] for part in body["contents"][0]["parts"][1:]]
	assert kinds == ["audio/wav", "video/mp4", "text/plain"]


@pytest.fixture(scope="module")
def responses_params() -> TypeAdapter[Any]:
	from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

	return strict_adapter(ResponseCreateParamsNonStreaming)


@pytest.mark.parametrize(
	("attachment", "filename"),
	[
		(Attachment("text/plain", TEXT.data), "attachment.txt"),
		(Attachment("text/csv", "YSxi"), "attachment.csv"),
		(Attachment("application/pdf", "JVBERi0="), "attachment.pdf"),
		(Attachment("text/markdown", TEXT.data, "notes"), "notes.md"),
		(Attachment("text/plain; charset=utf-8", TEXT.data, "notes.txt"), "notes.txt"),
	],
)
def test_responses_names_a_file_by_its_media_type(
	req, responses_params, attachment, filename
) -> None:
	"""The API reads an ``input_file`` by its name's extension ("Expected context stuffing file
	type to be a supported format"): a file without a name (or an extension) was called
	``attachment.pdf`` whatever it held, so a text file was read as a PDF."""
	body = openai().build(req("gpt-5-mini", attachments=[attachment]))
	part = body["input"][0]["content"][1]
	assert part["type"] == "input_file" and part["filename"] == filename
	materialize(responses_params.validate_python(body))


@pytest.mark.parametrize("settings", [{}, {"base_url": "http://localhost:8000/v1"}])
def test_chat_sends_a_text_file_as_text(req, chat_params, settings) -> None:
	"""Chat Completions takes only PDF as a ``file`` part (OpenAI's file inputs guide: "read the
	file in your application and send its contents as a text content part"); a text file went
	as a ``file`` named ``attachment.pdf`` or as its own name, and the API refused it."""
	body = openai(api_mode="chat", **settings).build(req("gpt-4o", attachments=[TEXT]))
	part = body["messages"][1]["content"][1]
	assert part == {"type": "text", "text": "notes.txt (text/plain):\nZoë's notes"}
	materialize(chat_params.validate_python(body))


def test_chat_refuses_a_document_that_is_no_pdf_before_sending(req) -> None:
	"""A Word file on OpenAI's Chat Completions: refused, naming the API that reads it."""
	docx = Attachment(
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"UEsDBA==",
		"a.docx",
	)
	with pytest.raises(ProviderError, match="PDF") as info:
		openai(api_mode="chat").build(req("gpt-4o", attachments=[docx]))
	assert "api_mode" in str(info.value) and not info.value.retryable
	local = openai(api_mode="chat", base_url="http://localhost:8000/v1")
	part = local.build(req("qwen", attachments=[docx]))["messages"][1]["content"][1]
	assert part["type"] == "file"  # another server decides for itself


PNG = Attachment("image/png", base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode(), "a.png")
PDF = Attachment("application/pdf", base64.b64encode(b"%PDF-1.4\n%%EOF").decode(), "a.pdf")

TEXT_ONLY = [
	"gpt-3.5-turbo",
	"gpt-3.5-turbo-0125",
	"gpt-4",
	"gpt-4-0613",
	"gpt-4-32k",
	"gpt-4-turbo-preview",
	"gpt-4-0125-preview",
	"o1-mini",
	"o1-preview-2024-09-12",
	"o3-mini",
	"o3-mini-2025-01-31",
	"ft:gpt-3.5-turbo-0125:acme::x",
]
"""OpenAI's models without vision (the earlier mini reasoning models, GPT-3.5, GPT-4 before
GPT-4 Turbo with vision): the API refuses an image part, and a PDF file input, which the file
inputs guide says only the models that read images take."""


@pytest.mark.parametrize("settings", [{}, {"api_mode": "chat"}])
@pytest.mark.parametrize("model", TEXT_ONLY)
@pytest.mark.parametrize("attachment", [PNG, PDF])
def test_openai_refuses_images_and_pdfs_to_a_model_without_vision(
	req, settings, model, attachment
) -> None:
	"""Refused before anything is sent, naming the model's want of vision and not retried (a
	fallback model that reads images may answer)."""
	with pytest.raises(ProviderError, match="reads no images") as info:
		openai(**settings).build(req(model, attachments=[attachment]))
	assert attachment.media_type in str(info.value) and not info.value.retryable


@pytest.mark.parametrize(
	"model",
	[
		"gpt-4o",
		"gpt-4-turbo",
		"gpt-4-turbo-2024-04-09",
		"gpt-4.1-nano",
		"o1",
		"o3",
		"o4-mini",
		"gpt-5-mini",
		"gpt-4-vision-preview",
		"codex-mini-latest",
	],
)
def test_a_model_with_vision_is_sent_its_image_and_pdf(req, model) -> None:
	body = openai().build(req(model, attachments=[PNG, PDF]))
	kinds = [p["type"] for p in body["input"][0]["content"]]
	assert kinds == ["input_text", "input_image", "input_file"]


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-5", "gpt-4o-mini", "gpt-4.1"])
def test_chat_refuses_audio_to_a_model_that_does_not_hear(req, model) -> None:
	"""Chat Completions takes ``input_audio`` on its audio models only (gpt-4o-audio-preview,
	gpt-audio...): to gpt-4o it was sent and refused with a 400."""
	with pytest.raises(ProviderError, match="hears no audio") as info:
		openai(api_mode="chat").build(req(model, attachments=[WAV]))
	assert "audio/wav" in str(info.value) and not info.value.retryable


@pytest.mark.parametrize(
	"model", ["gpt-4o-audio-preview", "gpt-4o-mini-audio-preview", "gpt-audio", "gpt-audio-mini"]
)
def test_chat_sends_audio_to_its_audio_models(req, model) -> None:
	body = openai(api_mode="chat").build(req(model, attachments=[WAV]))
	assert body["messages"][1]["content"][1]["type"] == "input_audio"


def test_a_local_server_is_sent_images_whatever_the_models_name(req) -> None:
	"""Another server decides for itself: its gpt-3.5-turbo may be anything."""
	local = openai(api_mode="chat", base_url="http://localhost:8000/v1")
	body = local.build(req("gpt-3.5-turbo", attachments=[PNG, WAV]))
	kinds = [p["type"] for p in body["messages"][1]["content"]]
	assert kinds == ["text", "image_url", "input_audio"]


@pytest.mark.parametrize("settings", [{}, {"api_mode": "chat"}])
@pytest.mark.parametrize(
	"model",
	[
		"gpt-4o-audio-preview",
		"gpt-4o-audio-preview-2025-06-03",
		"gpt-4o-mini-audio-preview",
		"gpt-audio",
		"gpt-audio-1.5",
		"gpt-audio-mini",
	],
)
@pytest.mark.parametrize("attachment", [PNG, PDF])
@pytest.mark.filterwarnings("ignore:.*served by Chat Completions only")
def test_openai_refuses_images_and_pdfs_to_its_audio_models(
	req, settings, model, attachment
) -> None:
	"""The audio models read text and audio, no image (their model pages: "Image: Not
	supported"): an image or a PDF was sent them and refused with a 400; refused before sending,
	as to the other models without vision."""
	with pytest.raises(ProviderError, match="reads no images") as info:
		openai(**settings).build(req(model, attachments=[attachment]))
	assert attachment.media_type in str(info.value) and not info.value.retryable
