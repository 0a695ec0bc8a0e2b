"""A request keeps the newest images within its API's limits; each older one becomes a note.

A screenshot agent's results turns keep every image in the run's history, so each later request
carried them all and, past the API's limits per request, was refused (400 or 413), and so was
every later one. The limits (`openmolt_providers._images`): Anthropic's vision guide (100 images
a request, 2000x2000 px once a request holds more than 20) and API overview (32 MB a request);
OpenAI's images guide (500 images, 50 MB of images a request); Gemini's 100 MB of inline data.
"""

from __future__ import annotations

import base64
import struct
import warnings
import zlib
from typing import Any

import httpx
import pytest

from openmolt_core.errors import UnreadableAttachment
from openmolt_core.llm import Attachment, Message, ModelRequest
from openmolt_providers._images import pixels
from openmolt_providers.anthropic import AnthropicProvider
from openmolt_providers.gemini import GeminiProvider
from openmolt_providers.openai import OpenAIProvider
from tests.providers.test_sdk_conformance import materialize, strict_adapter

# The official SDKs' types (anthropic, google-genai, google-ads) are imported by these tests
# only: in one xdist group, one worker imports them, not each of the four (noxfile.py).
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("sdk-types")]


def _noop() -> httpx.AsyncClient:
	raise AssertionError("no HTTP in these tests")


def png(width: int, height: int, size: int = 0) -> str:
	"""A PNG's base64 whose header says ``width`` x ``height``, padded to ``size`` characters."""
	ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
	chunk = b"IHDR" + ihdr
	head = (
		b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
	)
	data = base64.b64encode(head).decode()
	return data + "A" * (max(size - len(data), 0) // 4 * 4)


def run_of(images: list[str], first: str = '{"input":"look"}') -> ModelRequest:
	"""A request after one step per image: each step's results turn carries its screenshot."""
	messages = [Message("user", first)]
	for step, data in enumerate(images, 1):
		messages.append(Message("assistant", f'{{"commands":[{{"step":{step}}}]}}'))
		messages.append(Message("user", '{"results":[]}', [Attachment("image/png", data)]))
	return ModelRequest(model="", system="You browse.", messages=messages)


def _anthropic(model: str = "claude-sonnet-4-5") -> AnthropicProvider:
	return AnthropicProvider({"api_key": "k"}, _noop)


def _kinds(body: dict[str, Any]) -> list[str]:
	"""Per results turn: ``image``, or the note that stands in its place."""
	out = []
	for message in body["messages"][1:]:
		content = message["content"]
		if isinstance(content, list):
			first = content[0]
			out.append("image" if first["type"] == "image" else first["text"])
	return out


def test_anthropic_keeps_the_newest_20_images_over_2000_px() -> None:
	"""25 screenshots of 2100 px: the newest 20 go, the 5 older ones are notes naming their step."""
	request = run_of([png(2100, 1000) for _ in range(25)])
	request.model = "claude-sonnet-4-5"
	body = _anthropic().build(request)
	kinds = _kinds(body)
	assert kinds[5:] == ["image"] * 20
	assert kinds[:5] == [
		f"[image of step {n} left out: the request holds the newest 20 images]" for n in range(1, 6)
	]
	from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

	adapter = strict_adapter(MessageCreateParamsNonStreaming)  # alive while its iterators run
	materialize(adapter.validate_python(body))
	# The run's state keeps every image: only the request is cut.
	assert sum(len(m.attachments) for m in request.messages) == 25


def test_anthropic_keeps_100_small_images() -> None:
	"""105 small screenshots: the newest 100 go (the 2000 px rule does not bite)."""
	request = run_of([png(1280, 800) for _ in range(105)])
	request.model = "claude-sonnet-4-5"
	kinds = _kinds(_anthropic().build(request))
	assert kinds.count("image") == 100 and kinds[5:] == ["image"] * 100
	assert kinds[0] == "[image of step 1 left out: the request holds the newest 100 images]"


def test_anthropic_keeps_the_request_under_32_mb() -> None:
	"""Ten 4 MB screenshots (40 MB): the newest seven go, under the 32 MB a request takes."""
	request = run_of([png(1280, 800, 4_000_000) for _ in range(10)])
	request.model = "claude-sonnet-4-5"
	kinds = _kinds(_anthropic().build(request))
	assert kinds[3:] == ["image"] * 7
	assert kinds[0] == "[image of step 1 left out: the request holds the newest 7 images]"


def test_a_request_where_not_even_the_newest_image_fits_is_refused() -> None:
	"""A 31.9 MB conversation and a 1 MB image: refused before sending, naming the limit."""
	request = run_of([png(100, 100, 1_000_000)], first='{"input":"' + "x" * 31_900_000 + '"}')
	request.model = "claude-sonnet-4-5"
	with pytest.raises(
		UnreadableAttachment,
		match=r"the newest image fits the request: .*at most 32 MB in a request",
	):
		_anthropic().build(request)


def test_one_newest_image_over_5_mb_keeps_its_own_error() -> None:
	"""The newest image over Anthropic's 5 MB: the per-image error, as before."""
	request = run_of([png(100, 100), png(100, 100, 6 * 1024 * 1024)])
	request.model = "claude-sonnet-4-5"
	with pytest.raises(UnreadableAttachment, match=r"at most 5 MB as base64"):
		_anthropic().build(request)


def test_an_older_image_over_5_mb_is_left_out() -> None:
	"""An older image over 5 MB stops the count: it and the ones before it are notes."""
	request = run_of([png(100, 100), png(100, 100, 6 * 1024 * 1024), png(100, 100)])
	request.model = "claude-sonnet-4-5"
	kinds = _kinds(_anthropic().build(request))
	assert kinds == [
		"[image of step 1 left out: the request holds the newest image]",
		"[image of step 2 left out: the request holds the newest image]",
		"image",
	]


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
def test_openai_keeps_the_newest_500_images(api_mode: str) -> None:
	"""502 screenshots: the newest 500 go; the bodies still match the SDK's types."""
	request = run_of([png(64, 64) for _ in range(502)])
	request.model = "gpt-4.1"
	provider = OpenAIProvider({"api_key": "k", "api_mode": api_mode}, _noop)
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = provider.build(request)
	turns = body["input"] if api_mode == "responses" else body["messages"][1:]
	image = "input_image" if api_mode == "responses" else "image_url"
	note = "input_text" if api_mode == "responses" else "text"
	results = [t["content"][1] for t in turns[2::2]]
	assert [r["type"] for r in results] == [note, note] + [image] * 500
	assert (
		results[0]["text"] == "[image of step 1 left out: the request holds the newest 500 images]"
	)
	if api_mode == "responses":
		from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

		adapter = strict_adapter(ResponseCreateParamsNonStreaming)
	else:
		from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

		adapter = strict_adapter(CompletionCreateParamsNonStreaming)
	materialize(adapter.validate_python(body))


def test_openai_keeps_50_mb_of_images() -> None:
	"""Six 10 MB screenshots: the newest five go, within OpenAI's 50 MB of images a request."""
	request = run_of([png(1280, 800, 9_900_000) for _ in range(6)])
	request.model = "gpt-4.1"
	body = OpenAIProvider({"api_key": "k"}, _noop).build(request)
	kinds = [t["content"][1]["type"] for t in body["input"][2::2]]
	assert kinds == ["input_text"] + ["input_image"] * 5


def test_another_openai_compatible_server_gets_every_image() -> None:
	"""A server at another base URL has limits of its own: it gets what the run holds."""
	request = run_of([png(64, 64) for _ in range(502)])
	request.model = "llava"
	provider = OpenAIProvider({"api_key": "k", "base_url": "http://localhost:8000/v1"}, _noop)
	body = provider.build(request)
	assert all(t["content"][1]["type"] == "input_image" for t in body["input"][2::2])


@pytest.mark.parametrize("api_mode", ["responses", "chat"])
@pytest.mark.parametrize(
	"base_url",
	[
		"https://my-res.openai.azure.com/openai/v1",
		"https://my-res.cognitiveservices.azure.com/openai/v1",
	],
)
def test_azure_openai_keeps_the_newest_10_images(api_mode: str, base_url: str) -> None:
	"""Azure OpenAI takes 10 images a chat call ('Image chat restriction', its vision-enabled
	chat concepts): 12 screenshots went whole to it (OpenAI's 500 held at api.openai.com only)
	and every later request of the run was refused; the newest 10 go."""
	request = run_of([png(64, 64) for _ in range(12)])
	request.model = "gpt-4.1"
	config = {"api_key": "k", "api_mode": api_mode, "base_url": base_url}
	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		body = OpenAIProvider(config, _noop).build(request)
	turns = body["input"] if api_mode == "responses" else body["messages"][1:]
	image = "input_image" if api_mode == "responses" else "image_url"
	note = "input_text" if api_mode == "responses" else "text"
	results = [t["content"][1] for t in turns[2::2]]
	assert [r["type"] for r in results] == [note, note] + [image] * 10
	assert (
		results[0]["text"] == "[image of step 1 left out: the request holds the newest 10 images]"
	)


def test_azure_openai_leaves_out_an_older_image_over_20_mb() -> None:
	"""Azure OpenAI takes no input image over 20 MB: an older one is left out, not sent."""
	request = run_of([png(1280, 800, 28_000_000), png(64, 64)])
	request.model = "gpt-4.1"
	config = {"api_key": "k", "base_url": "https://my-res.openai.azure.com/openai/v1"}
	body = OpenAIProvider(config, _noop).build(request)
	kinds = [t["content"][1]["type"] for t in body["input"][2::2]]
	assert kinds == ["input_text", "input_image"]


def test_gemini_keeps_the_newest_900_images() -> None:
	"""901 screenshots on Gemini: the newest 900 go; the contents match google-genai's types."""
	from google.genai import types

	request = run_of([png(64, 64) for _ in range(901)])
	request.model = "gemini-2.5-flash"
	body = GeminiProvider({"api_key": "k"}, _noop).build(request)
	turns = body["contents"][2::2]
	assert turns[0]["parts"][1] == {
		"text": "[image of step 1 left out: the request holds the newest 900 images]"
	}
	assert all("inlineData" in t["parts"][1] for t in turns[1:])
	for content in body["contents"][:6]:
		types.Content.model_validate(content)


def test_steps_are_counted_after_a_compacted_first_turn() -> None:
	"""After compaction summarised steps 1-7, the first results turn kept is step 8's."""
	first = (
		'{"input":"look","compacted":{"note":"steps 1-7 of this run, summarised; the steps after '
		'it follow verbatim","summary":"..."}}'
	)
	request = run_of([png(2100, 100) for _ in range(21)], first=first)
	request.model = "claude-sonnet-4-5"
	kinds = _kinds(_anthropic().build(request))
	assert kinds[0] == "[image of step 8 left out: the request holds the newest 20 images]"


def test_the_input_image_is_named_as_the_input() -> None:
	"""An image attached to the run's input, left out, is named as the input's."""
	request = run_of([png(2100, 100) for _ in range(20)])
	request.messages[0].attachments.append(Attachment("image/png", png(2100, 100)))
	request.model = "claude-sonnet-4-5"
	body = _anthropic().build(request)
	assert body["messages"][0]["content"][0] == {
		"type": "text",
		"text": "[image of the input left out: the request holds the newest 20 images]",
	}


def _jpeg(width: int, height: int) -> str:
	app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
	sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
	return base64.b64encode(b"\xff\xd8" + app0 + sof + b"\xff\xd9").decode()


def test_image_sizes_are_read_from_their_headers() -> None:
	"""PNG, GIF, WebP and JPEG sizes come from their first bytes; anything else is unknown."""
	assert pixels(png(2100, 30)) == (2100, 30)
	gif = base64.b64encode(b"GIF89a" + struct.pack("<HH", 640, 2400) + b"\x00" * 8).decode()
	assert pixels(gif) == (640, 2400)
	vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4 + (2999).to_bytes(3, "little")
	webp = b"RIFF" + struct.pack("<I", 30) + b"WEBP" + vp8x + (99).to_bytes(3, "little")
	assert pixels(base64.b64encode(webp).decode()) == (3000, 100)
	assert pixels(_jpeg(4000, 3000)) == (4000, 3000)
	assert pixels(base64.b64encode(b"not an image").decode()) is None
	assert pixels("%%%") is None


def test_the_request_size_counts_text_as_its_utf8_bytes() -> None:
	"""10.5 million CJK characters are 31.5 MB of UTF-8: with a 1 MB image, over 32 MB."""
	request = run_of([png(100, 100, 1_000_000)], first='{"input":"' + "漢" * 10_500_000 + '"}')
	request.model = "claude-sonnet-4-5"
	with pytest.raises(UnreadableAttachment, match=r"would hold 32\.\d MB"):
		_anthropic().build(request)
	request.messages[0].content = '{"input":"' + "漢" * 10_000_000 + '"}'  # 30 MB: it fits
	assert _kinds(_anthropic().build(request)) == ["image"]


def test_an_image_over_8000_px_is_left_out_or_refused() -> None:
	"""Anthropic refuses an image over 8000 px: an older one is a note, the newest is refused."""
	request = run_of([png(9000, 100), png(100, 100)])
	request.model = "claude-sonnet-4-5"
	kinds = _kinds(_anthropic().build(request))
	assert kinds == ["[image of step 1 left out: the request holds the newest image]", "image"]
	request = run_of([png(100, 100), png(9000, 100)])
	request.model = "claude-sonnet-4-5"
	with pytest.raises(UnreadableAttachment, match=r"at most 8000x8000 px"):
		_anthropic().build(request)


async def test_step_numbers_agree_with_the_loop_across_compactions() -> None:
	"""Each request's last turn is the results of the step before it, compacted runs included."""
	from openmolt_providers._images import _steps
	from tests.core.test_compaction import Counting, Summariser, agent_for, script

	model = Counting(script(120))
	agent = agent_for(model, compaction={"threshold_tokens": 5000, "keep_steps": 3})
	agent.compactor = lambda: (Summariser(), "cheap")
	compacted: list[int] = []
	agent.on("compaction", lambda e: compacted.append(e.step))
	await agent.run("go")
	assert compacted
	for number, request in enumerate(model.requests[1:], 2):
		assert _steps(request.messages)[-1] == number - 1, number
